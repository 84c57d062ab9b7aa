"""Metrics, comparisons and derived values computed from the tidy tables."""

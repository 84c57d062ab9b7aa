"""Error rates from counts: Wilson confidence intervals and Fisher's exact test.

Seed 003 compares tool-call error rates of 5.6 %, 10.2 % and 12.0 % measured on 128-161
calls each. Whether such gaps are more than noise is a question about two proportions
from small samples, which these two classic tools answer without large-sample shortcuts.
(scipy is not a dependency of the book; both fit in a few lines of exact arithmetic.)
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials (fractions 0-1)."""
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return lo, hi


def _hypergeom_pmf(x: int, row1: int, col1: int, total: int) -> float:
    """P(X = x) for the top-left cell of a 2x2 table with fixed margins."""
    return math.comb(col1, x) * math.comb(total - col1, row1 - x) / math.comb(total, row1)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test for the table [[a, b], [c, d]].

    Sums the probabilities of every table with the same margins that is no more likely
    than the observed one (the usual two-sided definition, as in R and scipy).
    """
    if min(a, b, c, d) < 0:
        raise ValueError("counts must be >= 0")
    row1, col1, total = a + b, a + c, a + b + c + d
    if total == 0:
        return 1.0
    lo, hi = max(0, row1 + col1 - total), min(row1, col1)
    observed = _hypergeom_pmf(a, row1, col1, total)
    p = sum(q for x in range(lo, hi + 1) if (q := _hypergeom_pmf(x, row1, col1, total)) <= observed * (1 + 1e-7))
    return min(1.0, p)


def compare_rates(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95) -> dict:
    """Two error rates side by side: rates, Wilson intervals, difference, Fisher p-value."""
    lo1, hi1 = wilson(k1, n1, confidence)
    lo2, hi2 = wilson(k2, n2, confidence)
    return {
        "rate_1": k1 / n1, "low_1": lo1, "high_1": hi1,
        "rate_2": k2 / n2, "low_2": lo2, "high_2": hi2,
        "difference": k1 / n1 - k2 / n2,
        "ratio": (k1 / n1) / (k2 / n2) if k2 else math.inf,
        "p_fisher": fisher_exact(k1, n1 - k1, k2, n2 - k2),
        "intervals_overlap": lo1 <= hi2 and lo2 <= hi1,
    }


def holm(pvalues: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given) for several comparisons."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out

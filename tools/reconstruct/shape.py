"""Monotone reshaping of random samples so chosen percentiles land exactly on targets.

Published tables give a median and sometimes a P99, nothing else. We draw a sensible
skewed sample, then push it through a piecewise-linear, strictly increasing map whose
knots sit on the sample's own order statistics. Because numpy's default percentile is a
linear interpolation between two order statistics, putting a pair of knots either side
of that interpolation point (weighted by its fraction) makes `np.median` and
`np.percentile(x, 99)` of the result equal the targets up to float rounding, while the
rest of the sample keeps its random shape.
"""

from __future__ import annotations

import math

import numpy as np


class ShapeError(ValueError):
    """The requested knots cannot be made strictly increasing."""


def _position(q: float, n: int) -> tuple[int, float]:
    """Order-statistic index and fraction numpy's linear percentile uses for quantile q."""
    pos = q * (n - 1)
    k = math.floor(pos)
    return k, pos - k


def shape(raw: np.ndarray, quantiles: dict[float, float], lo: float, hi: float) -> np.ndarray:
    """Map `raw` monotonically so its q-quantiles equal `quantiles[q]`, min -> lo, max -> hi.

    `quantiles` maps fractions (0.5 for the median, 0.99 for P99) to target values.
    The knot pairs around each target are spread like the raw sample is locally, scaled
    to the target; if that would break monotonicity the pair is narrowed.
    """
    raw = np.asarray(raw, dtype=float)
    n = len(raw)
    xs = np.sort(raw)
    if n == 1:
        (value,) = quantiles.values() or (lo,)
        return np.array([value])
    knots: dict[int, float] = {0: lo, n - 1: hi}
    pinned: set[int] = set()
    for q, target in sorted(quantiles.items()):
        k, f = _position(q, n)
        if f == 0.0:
            knots[k] = target
            pinned.add(k)
            continue
        scale = target / float(np.percentile(xs, 100 * q))
        width = (xs[k + 1] - xs[k]) * scale
        for _ in range(60):  # narrow the pair until it fits between its neighbours
            left, right = target - f * width, target + (1 - f) * width
            below = max((v for i, v in knots.items() if i < k and (i in pinned or i == 0)), default=-math.inf)
            above = min((v for i, v in knots.items() if i > k + 1 and (i in pinned or i == n - 1)), default=math.inf)
            if below < left and right < above:
                break
            width /= 2
        knots[k], knots[k + 1] = left, right
        pinned.update((k, k + 1))
    idx = sorted(knots)
    values = [knots[i] for i in idx]
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ShapeError(f"knots not increasing: {list(zip(idx, values))}")
    return np.interp(raw, xs[idx], values)


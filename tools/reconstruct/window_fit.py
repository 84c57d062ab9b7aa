"""Build sets of 10-second window values whose summaries print like published cells.

A live-log write-up publishes, per concurrency cell, a window count and the mean, median
and peak of the windows' throughput, and per power limit pooled statistics over all
cells (mean, median, P95) plus means over ranges of cells. This module constructs one
multiset of values per cell that meets all of them at once:

1. pins: each cell's median (one or two middle values) and peak are fixed inside their
   printed intervals; the other values form a lower group (<= median) and an upper group
   (between median and peak), so the cell's median and peak hold whatever they become;
2. cell sums: every cell's mean is chosen inside its interval so that the nested range
   means (cells 1-3, 1-6, all) land in theirs; a range that cannot is reported as a
   conflict and gets the nearest feasible value;
3. free values: natural right-skewed draws, shifted inside their bounds to the cell sum;
4. pooled quantiles: the values at the ranks of the pooled median and P95 are placed on
   target, moving as few values across them as needed (each move keeps its cell's sum
   reachable), then every cell is shifted back to its sum inside its new bounds.

Values are tenths (vLLM prints throughputs with one decimal), so what the log shows is
exactly what was fitted. Everything random comes from the caller's numpy Generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

TENTH = 0.1


class FitError(ValueError):
    """Published targets that no set of windows can meet together."""


def tenths(x: float) -> float:
    return round(x * 10) / 10


def fmt_like(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def check_band(band) -> None:
    """A band is a part of an interval of numbers that print like a published cell (0 its
    lower end, 1 its upper): one reaching outside [0, 1] would place values that print unlike
    the write-up, which is no reconstruction of it."""
    if len(band) != 2 or not all(0.0 <= float(b) <= 1.0 for b in band):
        raise ValueError(f"band {list(band)}: both ends must lie within [0, 1], the interval of "
                         "numbers that print like the published cell")


@dataclass
class Interval:
    """A value that must print like a published cell: [lo, hi) plus how it is printed."""

    lo: float
    hi: float
    decimals: int = 0
    text: str = ""

    def admits(self, v: float) -> bool:
        if self.text:
            return fmt_like(v, self.decimals) == fmt_like(float(self.text), self.decimals)
        return self.lo <= v < self.hi

    @property
    def middle(self) -> float:
        """Where a published number is aimed: the printed value, or the middle of the values
        that print like every cell pinning it."""
        return (self.lo + self.hi) / 2

    def pick(self, rng: np.random.Generator, band=(0.2, 0.8)) -> float:
        check_band(band)
        return self.lo + (self.hi - self.lo) * (band[0] + (band[1] - band[0]) * rng.random())

    def scaled(self, k: float) -> Interval:
        return Interval(self.lo * k, self.hi * k)

    def intersect(self, other: Interval | None) -> Interval | None:
        if other is None:
            return self
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        if lo >= hi:
            return None
        keep = self if (self.lo, self.hi) == (lo, hi) else other if (other.lo, other.hi) == (lo, hi) else None
        return Interval(lo, hi, keep.decimals if keep else 0, keep.text if keep else "")


@dataclass
class CellSpec:
    """What is published about one concurrency cell (None: not published)."""

    c: int
    n: int
    mean: Interval | None = None
    median: Interval | None = None
    peak: Interval | None = None
    natural_mean: float | None = None  # where an unpublished mean would naturally sit


@dataclass
class RangeTarget:
    """A published mean over the windows of several cells."""

    name: str
    cells: tuple[int, ...]
    interval: Interval
    priority: int  # lower is kept first
    scale: float = 1.0  # interval = published interval x scale (for reporting in published units)


@dataclass
class Conflict:
    name: str
    published: str
    reason: str
    reproduced: float | None = None


@dataclass
class _Value:
    x: float
    lb: float
    ub: float
    cell: int
    pinned: bool = False


@dataclass
class FitResult:
    values: dict[int, np.ndarray]  # cell -> values in tenths, as floats
    conflicts: list[Conflict] = field(default_factory=list)


# ---------------------------------------------------------------- cell means


def chain_sums(boxes: dict[int, tuple[float, float]], counts: dict[int, int],
               ranges: list[RangeTarget], rng: np.random.Generator,
               natural: dict[int, float]) -> tuple[dict[int, float], list[Conflict]]:
    """Cell sums inside their boxes whose range means land in the range intervals.

    Ranges are nested (cells 1-3 within 1-6 within all). They are honoured in priority
    order; one that cannot be met together with those already kept becomes a conflict,
    reported with the span of means the data could have given it.
    """
    conflicts: list[Conflict] = []
    kept: list[RangeTarget] = []
    for r in sorted(ranges, key=lambda r: r.priority):
        if _reachable(boxes, counts, kept + [r], r) is not None:
            kept.append(r)
            continue
        span = _reachable(boxes, counts, kept + [RangeTarget(r.name, r.cells, Interval(-1e18, 1e18), 99)], r)
        n = sum(counts[c] for c in r.cells if c in boxes) or 1
        lo, hi = (span[0] / n, span[1] / n) if span else (math.nan, math.nan)
        k = r.scale or 1.0
        conflicts.append(Conflict(r.name, r.interval.text, (
            f"needs {r.interval.lo / k:.2f}-{r.interval.hi / k:.2f}; the published cells and the "
            f"targets kept before it allow only {lo / k:.2f}-{hi / k:.2f}"), None))
    chain = _chain(boxes, kept)
    back = _backward(boxes, chain, counts)
    sums = {c: min(max(natural[c], boxes[c][0]), boxes[c][1]) for c in boxes}
    prev_total, prev_cells = 0.0, set()
    for level, (cells_j, _interval) in enumerate(chain):
        new = [c for c in cells_j if c not in prev_cells]
        lo_d = sum(boxes[c][0] for c in new)
        hi_d = sum(boxes[c][1] for c in new)
        feas = back[level]
        lo, hi = max(feas[0], prev_total + lo_d), min(feas[1], prev_total + hi_d)
        if lo > hi:
            raise FitError("cell sums: nested targets became infeasible")
        natural_total = prev_total + sum(sums[c] for c in new)
        aim = min(max(natural_total, lo + 0.3 * (hi - lo)), lo + 0.7 * (hi - lo)) if hi > lo else lo
        _shift(sums, boxes, new, aim - natural_total)
        prev_total += sum(sums[c] for c in new)
        prev_cells |= set(new)
    return sums, conflicts


def _chain(boxes, ranges) -> list[tuple[list[int], RangeTarget | None]]:
    """The ranges from the narrowest to the widest, each with its cells; a last level
    holding every cell (with no target) closes the chain."""
    out: list[tuple[list[int], RangeTarget | None]] = []
    seen: set[int] = set()
    for r in sorted(ranges, key=lambda r: len([c for c in r.cells if c in boxes])):
        cells = [c for c in r.cells if c in boxes]
        if not seen <= set(cells):
            raise FitError(f"range targets are not nested: {r.name}")
        out.append((cells, r))
        seen = set(cells)
    if not out or set(out[-1][0]) != set(boxes):
        out.append((list(boxes), None))
    return out


def _sum_interval(r, cells, counts_total) -> tuple[float, float]:
    """A target's interval on the sum, shrunk a hair: the printed interval is half-open, so
    two targets that only touch cannot both hold."""
    if r is None:
        return (-1e18, 1e18)
    eps = 1e-6 * max(counts_total, 1)
    return (r.interval.lo * counts_total + eps, r.interval.hi * counts_total - eps)


def _backward(boxes, chain, counts):
    feas = [None] * len(chain)
    nxt = None
    for j in range(len(chain) - 1, -1, -1):
        cells, r = chain[j]
        n = sum(counts[c] for c in cells)
        lo, hi = _sum_interval(r, cells, n)
        lo = max(lo, sum(boxes[c][0] for c in cells))
        hi = min(hi, sum(boxes[c][1] for c in cells))
        if nxt is not None:
            ncells, (nlo, nhi) = nxt
            new = [c for c in ncells if c not in cells]
            lo = max(lo, nlo - sum(boxes[c][1] for c in new))
            hi = min(hi, nhi - sum(boxes[c][0] for c in new))
        feas[j] = (lo, hi)
        nxt = (cells, (lo, hi))
    return feas


def _reachable(boxes, counts, ranges, r):
    """The achievable sum interval of range r given the ranges (None if any is infeasible)."""
    chain = _chain(boxes, ranges)
    back = _backward(boxes, chain, counts)
    if any(lo > hi for lo, hi in back):
        return None
    # forward pass: reachable interval at each level
    prev, prev_cells = (0.0, 0.0), set()
    for j, (cells, rr) in enumerate(chain):
        new = [c for c in cells if c not in prev_cells]
        lo = max(back[j][0], prev[0] + sum(boxes[c][0] for c in new))
        hi = min(back[j][1], prev[1] + sum(boxes[c][1] for c in new))
        if lo > hi:
            return None
        if rr is r or (rr is not None and rr.name == r.name and tuple(rr.cells) == tuple(r.cells)):
            return (lo, hi)
        prev, prev_cells = (lo, hi), set(cells)
    return (0.0, 0.0)


def _shift(sums, boxes, members, delta):
    """Move the members' sums by delta in total, each within its box, proportionally to room."""
    if not members or abs(delta) < 1e-12:
        return
    if delta > 0:
        room = {c: boxes[c][1] - sums[c] for c in members}
    else:
        room = {c: sums[c] - boxes[c][0] for c in members}
    total = sum(max(v, 0.0) for v in room.values())
    if total <= 0:
        return
    frac = min(1.0, abs(delta) / total)
    for c in members:
        sums[c] += math.copysign(max(room[c], 0.0) * frac, delta)


# ---------------------------------------------------------------- one cell's shape


@dataclass
class CellShape:
    c: int
    pins: list[float]  # fixed values (median or middle pair, peak)
    lower: list[_Value]
    upper: list[_Value]

    @property
    def free(self) -> list[_Value]:
        return self.lower + self.upper

    def sum_range(self) -> tuple[float, float]:
        base = sum(self.pins)
        return base + sum(v.lb for v in self.free), base + sum(v.ub for v in self.free)


def cell_pins(spec: CellSpec, rng: np.random.Generator, floor: float, cap: float) -> CellShape:
    """Fix a cell's median and peak; the remaining positions get bounds from them."""
    n = spec.n
    if spec.median is None or spec.peak is None:  # unpublished shape: all values free
        return CellShape(spec.c, [], [_Value(0.0, floor, cap, spec.c) for _ in range(n)], [])
    P = tenths(spec.peak.pick(rng))
    if n == 1:
        iv = spec.median.intersect(spec.peak)
        iv = iv.intersect(spec.mean) if iv else None
        if iv is None:
            raise FitError(f"cell c={spec.c}: one window cannot print as the published mean, median and peak")
        v = _tenth_inside(iv, rng)
        return CellShape(spec.c, [v], [], [])
    if n == 2:
        m_iv = spec.median.intersect(spec.mean) or spec.median
        for _ in range(200):
            m = m_iv.pick(rng)
            a = tenths(2 * m - P)
            if floor <= a <= P and m_iv.admits((a + P) / 2):
                return CellShape(spec.c, [a, P], [], [])
            P = tenths(spec.peak.pick(rng))
        raise FitError(f"cell c={spec.c}: two windows cannot give the published median and peak")
    if n % 2:
        M = _tenth_inside(spec.median, rng)
        pins = [M, P]
        lo_top, hi_bottom = M, M
        n_low, n_up = (n - 1) // 2, (n - 1) // 2 - 1
    else:
        mid = spec.median.pick(rng)
        gap = tenths(min(3.0, 0.04 * mid) * rng.random())
        M1 = tenths(mid - gap / 2)
        M2 = tenths(2 * mid - M1)
        while not spec.median.admits((M1 + M2) / 2):
            M2 = tenths(M2 - TENTH) if (M1 + M2) / 2 >= spec.median.hi else tenths(M2 + TENTH)
        if M2 < M1:
            M1, M2 = M2, M1
        pins = [M1, M2, P]
        lo_top, hi_bottom = M1, M2
        n_low, n_up = n // 2 - 1, n // 2 - 2
    if P < hi_bottom:
        raise FitError(f"cell c={spec.c}: peak {P} below median {hi_bottom}")
    lower = [_Value(0.0, floor, lo_top, spec.c) for _ in range(n_low)]
    upper = [_Value(0.0, hi_bottom, P, spec.c) for _ in range(n_up)]
    return CellShape(spec.c, pins, lower, upper)


def _tenth_inside(iv: Interval, rng) -> float:
    for _ in range(100):
        v = tenths(iv.pick(rng))
        if iv.admits(v):
            return v
    v = tenths((iv.lo + iv.hi) / 2)
    if not iv.admits(v):
        raise FitError(f"no one-decimal value prints like {iv.text or iv}")
    return v


def natural_draws(shape: CellShape, rng: np.random.Generator, skew: float = 1.0,
                  center: float | None = None, sigma: float = 0.6) -> None:
    """Starting values. Pinned cells: lower group bunched below the median, upper group
    thinning out toward the peak. Cells without a published shape: log-normal around
    `center`, clipped to the bounds."""
    if not shape.pins:
        mu = math.log(max(center or 1.0, 1e-3)) - sigma ** 2 / 2
        for v in shape.free:
            v.x = min(max(math.exp(mu + sigma * rng.standard_normal()), v.lb), v.ub)
        return
    for v in shape.lower:
        u = rng.beta(2.2, 1.2)
        v.x = v.lb + (v.ub - v.lb) * u
    for v in shape.upper:
        u = rng.beta(1.2, 2.4 * skew)
        v.x = v.lb + (v.ub - v.lb) * u


def settle(values: list[_Value], target: float) -> bool:
    """Shift free values toward their bounds so they sum to `target`; False if out of reach."""
    free = [v for v in values if not v.pinned]
    fixed = sum(v.x for v in values if v.pinned)
    need = target - fixed
    lo, hi = sum(v.lb for v in free), sum(v.ub for v in free)
    if not (lo - 1e-6 <= need <= hi + 1e-6):
        return False
    for v in free:
        v.x = min(max(v.x, v.lb), v.ub)
    cur = sum(v.x for v in free)
    if need > cur:
        room = sum(v.ub - v.x for v in free)
        lam = 0.0 if room <= 0 else (need - cur) / room
        for v in free:
            v.x += lam * (v.ub - v.x)
    elif need < cur:
        room = sum(v.x - v.lb for v in free)
        lam = 0.0 if room <= 0 else (cur - need) / room
        for v in free:
            v.x -= lam * (v.x - v.lb)
    return True


# ---------------------------------------------------------------- pooled quantiles


def place_quantile(cells: dict[int, list[_Value]], pins: list[float], free_sums: dict[int, float],
                   q: float, target: Interval, rng: np.random.Generator,
                   max_gap: float = 2.0, label: str = "", method: str = "linear") -> tuple[float, float]:
    """Put the pooled q-quantile (numpy's `method`: linear or lower) on target.

    The values at the quantile's rank(s) become anchors (a free value, or a fixed one
    such as a cell's peak when it sits there anyway); the fewest values move across them
    so that exactly the right number lie below; every value then keeps to its side (its
    bounds shrink) and each cell is settled back on its sum. `cells` holds each cell's
    free values, `pins` every fixed value, `free_sums` what each cell's free values must
    add up to.
    """
    pool = [v for vs in cells.values() for v in vs]
    N = len(pool) + len(pins)
    h = q * (N - 1)
    k = int(math.floor(h + 1e-9))
    f = h - k if method == "linear" else 0.0
    two = f > 1e-9
    for attempt in range(300):
        band = (0.25, 0.75) if attempt < 200 else (0.02, 0.98)
        T = target.pick(rng, band)
        for a, b, pa, pb in _anchor_options(T, f, two, pins, rng, max_gap, attempt):
            if not target.admits(a + f * (b - a)) or any(a < p < b for p in pins):
                continue
            plan = _plan(cells, pins, free_sums, k, a, b, two, pa, pb)
            if plan is None:
                continue
            anchors, side = plan
            for v, val in anchors:
                v.x = v.lb = v.ub = val
                v.pinned = True
            for v in pool:
                if v.pinned:
                    continue
                if side[id(v)] == "low":
                    v.ub = min(v.ub, a)
                else:
                    v.lb = max(v.lb, b)
                v.x = min(max(v.x, v.lb), v.ub)
            for c, vs in cells.items():
                if not settle(vs, free_sums[c]):
                    raise FitError(f"{label} cell c={c}: sum out of reach after placing the pooled quantile")
            return a, b
    raise FitError(f"{label}: cannot place the pooled {q:.0%} quantile on {target.text or target}")


def _anchor_options(T, f, two, pins, rng, max_gap, attempt):
    """Candidate (a, b, a_is_pin, b_is_pin): two free values close together, or a fixed
    value at one rank and a free value placed to make the interpolation land on T."""
    g = tenths(max_gap * rng.random()) if two and attempt % 3 else 0.0
    a = tenths(T - f * g)
    yield a, tenths(a + g) if two else a, False, False
    near = sorted(set(pins), key=lambda p: abs(p - T))[:6]
    for p in near:
        if two and p >= T and f < 1:
            a2 = tenths((T - f * p) / (1 - f))
            if a2 <= p:
                yield a2, p, False, True
        if p <= T:
            if two:
                b2 = tenths(p + (T - p) / f)
                yield p, b2, True, False
            else:
                yield p, p, True, True


def _reach(vs: list[_Value], bounds: dict[int, tuple[float, float]], need: float) -> bool:
    lo = hi = 0.0
    for v in vs:
        lb, ub = (v.x, v.x) if v.pinned else bounds.get(id(v), (v.lb, v.ub))
        lo += lb
        hi += ub
    return lo - 1e-6 <= need <= hi + 1e-6


def _plan(cells, pins, free_sums, k, a, b, two, pin_a=False, pin_b=False):
    """Anchors and sides for every free value so that exactly k values lie below rank k."""
    wanted = [(a, pin_a)] + ([(b, pin_b)] if two else [])
    picked = _pick_anchors(cells, free_sums, wanted)
    if picked is None:
        return None
    bounds, anchors = picked
    side = _sides(cells, bounds, a, b)
    if side is None:
        return None
    fixed = list(pins) + [v.x for vs in cells.values() for v in vs if v.pinned]
    # fixed values at or below a are below rank k, except the one serving as anchor a
    count_low = sum(1 for p in fixed if p <= a) - (1 if pin_a else 0)
    count_low += sum(1 for s in side.values() if s == "low")
    if pin_b and b <= a:
        count_low -= 1
    bounds = _balance(cells, free_sums, bounds, side, count_low, k, a, b)
    if bounds is None or not all(_reach(vs, bounds, free_sums[c]) for c, vs in cells.items()):
        return None
    return anchors, side


def _pick_anchors(cells, free_sums, wanted):
    """(bounds, anchors): a free value fixed at each wanted anchor that is not a pin, the closest
    whose cell can still reach its sum; None when an anchor finds none."""
    bounds: dict[int, tuple[float, float]] = {}
    anchors = []
    for val, is_pin in wanted:
        if is_pin:
            continue
        cands = [(c, v) for c, vs in cells.items() for v in vs
                 if not v.pinned and id(v) not in bounds and v.lb <= val <= v.ub]
        cands.sort(key=lambda cv: abs(cv[1].x - val))
        for c, v in cands[:50]:
            trial = {**bounds, id(v): (val, val)}
            if _reach(cells[c], trial, free_sums[c]):
                bounds, pick = trial, v
                break
        else:
            return None
        anchors.append((pick, val))
    return bounds, anchors


def _side_bounds(v, side: str, a: float, b: float) -> tuple[float, float]:
    """A free value's bounds on its side: at most a when low, at least b when high."""
    return (v.lb, min(v.ub, a)) if side == "low" else (max(v.lb, b), v.ub)


def _sides(cells, bounds, a, b):
    """Each other free value's side (the nearer one, else the one its bounds allow), its bounds
    narrowed to it in `bounds`; None when a value fits neither side."""
    side = {}
    for vs in cells.values():
        for v in vs:
            if v.pinned or id(v) in bounds:
                continue
            side[id(v)] = "low" if v.x <= (a + b) / 2 else "high"
            lb, ub = _side_bounds(v, side[id(v)], a, b)
            if lb > ub:
                side[id(v)] = "high" if side[id(v)] == "low" else "low"
                lb, ub = _side_bounds(v, side[id(v)], a, b)
                if lb > ub:
                    return None
            bounds[id(v)] = (lb, ub)
    return side


def _balance(cells, free_sums, bounds, side, count_low, k, a, b):
    """Move free values across, one at a time (the nearest whose cell still reaches its sum),
    until k lie below rank k; the bounds then (sides updated in place), or None when stuck."""
    owner = {id(v): c for c, vs in cells.items() for v in vs}
    byid = {id(v): v for vs in cells.values() for v in vs}
    while count_low != k:
        to = "high" if count_low > k else "low"
        if to == "high":
            cands = [byid[i] for i, s in side.items() if s == "low" and byid[i].ub >= b]
            cands.sort(key=lambda v: b - v.x)
        else:
            cands = [byid[i] for i, s in side.items() if s == "high" and byid[i].lb <= a]
            cands.sort(key=lambda v: v.x - a)
        for v in cands[:80]:
            trial = dict(bounds)
            trial[id(v)] = _side_bounds(v, to, a, b)
            if _reach(cells[owner[id(v)]], trial, free_sums[owner[id(v)]]):
                bounds, side[id(v)] = trial, to
                count_low += -1 if to == "high" else 1
                break
        else:
            return None
    return bounds


# ---------------------------------------------------------------- a whole group


@dataclass
class GroupSpec:
    """One model at one power limit: its cells and pooled targets."""

    label: str
    cells: dict[int, CellSpec]
    pooled_mean: Interval | None = None
    pooled_median: Interval | None = None
    pooled_p95: Interval | None = None
    ranges: list[RangeTarget] = field(default_factory=list)
    median_q: float = 0.5  # quantile of these values that the pooled median target sits at
    pooled_name: str = "pooled mean"
    pooled_scale: float = 1.0
    floor: float = 0.0
    cap: float = 1e9
    extra_pins: dict[int, float] = field(default_factory=dict)  # cell -> a value that must occur
    skew: float = 1.0
    p95_method: str = "linear"  # numpy percentile method of the pooled P95
    sigma: float = 0.6  # spread of cells without a published shape (log-normal)


def fit_group(spec: GroupSpec, rng: np.random.Generator) -> FitResult:
    """Values per cell meeting the cell targets, the range means and the pooled quantiles."""
    shapes = {c: cell_pins(cs, rng, spec.floor, spec.cap) for c, cs in spec.cells.items()}
    for c, val in spec.extra_pins.items():
        sh = shapes[c]
        if not sh.free:
            raise FitError(f"{spec.label} c={c}: no free window to carry {val}")
        victim = (sh.upper or sh.lower)[-1]
        (sh.upper if victim in sh.upper else sh.lower).remove(victim)
        sh.pins.append(tenths(val))
    counts = {c: cs.n for c, cs in spec.cells.items()}
    boxes, natural = {}, {}
    for c, cs in spec.cells.items():
        lo, hi = shapes[c].sum_range()
        if cs.mean is not None:
            lo, hi = max(lo, cs.mean.lo * cs.n), min(hi, cs.mean.hi * cs.n)
            if lo > hi + 1e-9:
                raise FitError(f"{spec.label} c={c}: mean {cs.mean.text} not reachable with its median and peak")
            natural[c] = lo + (hi - lo) * (0.3 + 0.4 * rng.random())
        else:
            nat = (cs.natural_mean if cs.natural_mean is not None else (lo + hi) / 2 / cs.n) * cs.n
            natural[c] = min(max(nat, lo), hi)
        margin = min(0.02 * cs.n, 0.1 * (hi - lo))  # room for rounding to tenths
        boxes[c] = (lo + margin, hi - margin)
    ranges = list(spec.ranges)
    if spec.pooled_mean is not None:
        ranges.append(RangeTarget(spec.pooled_name, tuple(spec.cells), spec.pooled_mean, 0, spec.pooled_scale))
    sums, conflicts = chain_sums(boxes, counts, ranges, rng, natural)

    cells, pins, free_sums = {}, [], {}
    for c, sh in shapes.items():
        natural_draws(sh, rng, spec.skew, center=sums[c] / max(spec.cells[c].n, 1), sigma=spec.sigma)
        cells[c] = sh.free
        pins += sh.pins
        free_sums[c] = sums[c] - sum(sh.pins)
        if not settle(sh.free, free_sums[c]):
            raise FitError(f"{spec.label} c={c}: cell sum {sums[c]:.1f} out of reach")
    if spec.pooled_median is not None:
        place_quantile(cells, pins, free_sums, spec.median_q, spec.pooled_median, rng, label=spec.label)
    if spec.pooled_p95 is not None:
        place_quantile(cells, pins, free_sums, 0.95, spec.pooled_p95, rng, label=spec.label,
                       method=spec.p95_method)
    for vs in cells.values():
        for v in vs:
            v.x = tenths(v.x)
    dropped = {c.name for c in conflicts}
    _fix_rounding(cells, shapes, spec, [r for r in ranges if r.name not in dropped])
    values = {c: np.array([v.x for v in cells[c]] + list(shapes[c].pins), dtype=float) for c in shapes}
    return FitResult(values, conflicts)


def _fix_rounding(cells: dict[int, list[_Value]], shapes, spec: GroupSpec, kept: list[RangeTarget]) -> None:
    """Rounding to tenths moves sums a little: nudge free values back inside every kept
    target (cell means first, then the range and pooled means)."""
    def total(cs):
        vals = [v.x for c in cs for v in cells[c]] + [p for c in cs for p in shapes[c].pins]
        return sum(vals), len(vals)

    targets = [((c,), spec.cells[c].mean) for c in cells if spec.cells[c].mean is not None]
    targets += [(tuple(c for c in r.cells if c in cells), r.interval) for r in kept]

    def bad():
        for cs, iv in targets:
            s, n = total(cs)
            if n and not iv.admits(s / n):
                return cs, iv, s / n
        return None

    for _ in range(20000):
        b = bad()
        if b is None:
            return
        cs, iv, mean = b
        step = TENTH if mean < (iv.lo + iv.hi) / 2 else -TENTH
        before = sum(1 for t in targets if not t[1].admits(total(t[0])[0] / max(total(t[0])[1], 1)))
        moved = False
        for c in sorted(cs, key=lambda c: -len(cells[c])):
            for v in cells[c]:
                if v.pinned:
                    continue
                nv = tenths(v.x + step)
                if v.lb - 1e-9 <= nv <= v.ub + 1e-9:
                    old, v.x = v.x, nv
                    after = sum(1 for t in targets if not t[1].admits(total(t[0])[0] / max(total(t[0])[1], 1)))
                    if after < before or (after == before and _closer(total(cs), iv, mean)):
                        moved = True
                        break
                    v.x = old
            if moved:
                break
        if not moved:
            raise FitError(f"{spec.label}: cannot round to tenths inside the targets")
    raise FitError(f"{spec.label}: rounding repair did not converge")


def _closer(tot, iv, mean) -> bool:
    s, n = tot
    mid = (iv.lo + iv.hi) / 2
    return abs(s / n - mid) < abs(mean - mid)

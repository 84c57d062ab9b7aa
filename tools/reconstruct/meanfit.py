"""Per-request arrays of a closed-loop `vllm bench serve` run that hit published MEANS.

`fit.py` shapes medians and P99s; some write-ups publish mean TTFT and mean TPOT instead
(vLLM's own summary), plus a P95/P99 here and there. This module builds a run whose
means are exact by construction (multiplicative scaling, then zero-sum adjustments), pins
the few published percentiles with knots on order statistics, and lays the requests on
c client slots that finish together (requests dealt largest first, then each slot's
TPOTs nudged by a zero-sum amount so the slots end at the same moment: a real run of
thousands of requests has no drain tail, and our 16-64 requests should not invent one).

Inter-token gaps are a per-step noise plus a stall in every decoding request at the moment
another request's prefill completes (the prefill shares that engine step), so the long
gaps sit where the schedule puts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fit import deal, timeline
from .mtp_steps import StepPlan
from .mtp_steps import plan as step_plan
from .shape import shape


class MeanFitError(ValueError):
    """A run's targets cannot be met with the allowed shaping."""


@dataclass
class RunPlan:
    """Everything one run needs; times in seconds."""

    name: str
    n: int
    c: int
    input_len: int
    output_len: int
    key: tuple  # RNG key: the same key gives the same run
    tpot_mean: float
    tpot_sigma: float
    ttft_mean: float | None = None  # c > 1: exact mean TTFT
    ttft_sigma: float = 0.35
    first_wave: tuple[float, float] = (1.0, 2.0)  # first-wave TTFT multipliers (queued prefills)
    ttft_single: dict | None = None  # c == 1: {"median", "sigma", "second", "top", "cold"}
    tpot_p99: float | None = None
    cold_tpot: bool = False  # request 0 has the largest TPOT (cold path, c == 1)
    gap: float = 0.0
    gap_jitter: float = 0.0004
    stagger: float = 0.00015
    overhead: tuple[float, float] = (0.0009, 0.0011)
    step_cv: float = 0.06
    stall_s: float = 0.0
    stall_range: tuple[float, float] = (0.8, 1.2)
    mtp: dict | None = None  # {"drafts", "acc0", "acc1", "spread"}
    itl_p99: float | None = None  # pinned on the stall gaps


@dataclass
class Run:
    plan: RunPlan
    ttfts: np.ndarray
    tpots: np.ndarray
    starts: np.ndarray  # relative to the first request
    itls: list[np.ndarray]
    stalls: list[np.ndarray]  # bool per gap: a prefill stall
    steps: StepPlan | None
    duration: float
    extra: dict = field(default_factory=dict)

    @property
    def output_tps(self) -> float:
        return self.plan.n * self.plan.output_len / self.duration

    def chunk_sizes(self, i: int) -> np.ndarray:
        if self.steps is None:
            return np.ones(len(self.itls[i]), dtype=np.int64)
        return self.steps.sizes(i)


def _single_ttft(rng, p: RunPlan) -> np.ndarray:
    """c == 1: a tight body below `second`, the largest at request 0 if `cold`."""
    s = p.ttft_single
    n = p.n
    body = s["median"] * np.exp(rng.normal(0.0, s["sigma"], n - 2))
    body = shape(body, {0.5: s["median"]}, s["median"] * (1 - 3 * s["sigma"]), s["second"] * 0.997)
    out = np.empty(n)
    top_at = 0 if s["cold"] else int(rng.integers(n))
    rest = [i for i in range(n) if i != top_at]
    second_at = int(rng.choice(rest))
    out[top_at], out[second_at] = s["top"], s["second"]
    out[[i for i in rest if i != second_at]] = rng.permutation(body)
    return out


def _pin_top_two(values: np.ndarray, mean: float, p99: float, top_at: int | None) -> np.ndarray:
    """Keep the mean and make the linear P99 equal p99: all values but the largest move by
    one constant, and the largest sits where the P99 interpolation needs it.

    `top_at` fixes which request is the largest (a cold first request); otherwise the
    sample's own largest. With n values the P99 lies a fraction f = 0.99(n-1) - (n-2)
    of the way from the second largest to the largest.
    """
    n = len(values)
    v = values * (mean / values.mean())
    top_at = int(np.argmax(v)) if top_at is None else top_at
    body = np.delete(np.arange(n), top_at)
    b0 = float(v[body].max())
    f = 0.99 * (n - 1) - (n - 2)
    shift = (mean * n - v[body].sum() - b0 * (1 - 1 / f) - p99 / f) / (n - 1 / f)
    out = v.copy()
    out[body] = v[body] + shift
    second = b0 + shift
    out[top_at] = second + (p99 - second) / f
    if out[top_at] <= second or out.min() <= 0:
        raise MeanFitError(f"cannot pin P99 {p99:.6g} with mean {mean:.6g}: the largest value "
                           "would not stay above the rest")
    return out


def _gaps(rng, decode: float, steps: int, stall_at: list[int], stall_s: list[float], cv: float):
    """`steps` gaps summing to `decode`: gamma noise plus absolute stall extras."""
    w = rng.gamma(1 / cv**2, cv**2, steps)
    extra = np.zeros(steps)
    for j, s in zip(stall_at, stall_s):
        extra[j] += s
    if extra.sum() > 0.6 * decode:
        extra *= 0.6 * decode / extra.sum()
    unit = (decode - extra.sum()) / w.sum()
    return unit * w + extra, extra > 0


def _pin_itl_p99(itls: list[np.ndarray], stalls: list[np.ndarray], target: float, name: str) -> None:
    """Make the linear P99 of all gaps equal `target` by a monotone map of the stall gaps;
    each request's normal gaps absorb the change so its sum (its TPOT) is unchanged."""
    flat = np.concatenate(itls)
    is_stall = np.concatenate(stalls)
    m = len(flat)
    pos = 0.99 * (m - 1)
    k, f = int(np.floor(pos)), pos - np.floor(pos)
    order = np.argsort(flat, kind="stable")
    if not (is_stall[order[k]] and is_stall[order[k + 1]]):
        raise MeanFitError(f"{name}: the P99 gap is not a prefill stall ({int(is_stall.sum())} stalls of {m} gaps)")
    sv = np.sort(flat[is_stall])
    a, b = flat[order[k]], flat[order[k + 1]]
    width = max(b - a, 1e-4)
    lo_t, hi_t = target - f * width, target + (1 - f) * width
    xs = [sv[0] * 0.999, a, b, max(sv[-1], b) + 1e-9]
    ys = [min(sv[0] * 0.999, lo_t * 0.5), lo_t, hi_t, max(sv[-1], hi_t * 1.05, b)]
    if any(y2 <= y1 for y1, y2 in zip(ys, ys[1:])) or any(x2 <= x1 for x1, x2 in zip(xs, xs[1:])):
        raise MeanFitError(f"{name}: cannot place the P99 gap at {target:.4f} s")
    for row, st in zip(itls, stalls):
        if not st.any():
            continue
        new = np.interp(row[st], xs, ys)
        delta = float(new.sum() - row[st].sum())
        normal = ~st
        row[st] = new
        row[normal] *= (row[normal].sum() - delta) / row[normal].sum()
    flat = np.concatenate(itls)
    got = float(np.percentile(flat, 99))
    if abs(got - target) > 1e-9 * max(1.0, target) or min(r.min() for r in itls) <= 0:
        raise MeanFitError(f"{name}: P99 ITL pin landed at {got!r}, wanted {target!r}")


def build(p: RunPlan) -> Run:
    """The run: TTFT and TPOT arrays with exact means, a schedule, and the ITL lists."""
    rng = np.random.Generator(np.random.PCG64(list(p.key)))
    n, c, out = p.n, p.c, p.output_len
    tokens = out - 1
    steps = None
    if p.mtp:
        steps = step_plan(rng, [tokens] * n, p.mtp["drafts"], p.mtp["acc0"], p.mtp["acc1"],
                          p.mtp.get("spread", 0.04), what=p.name)
        per_req = steps.steps().astype(float)
        raw_tpot = per_req / per_req.mean() * rng.lognormal(0.0, p.tpot_sigma, n)
    else:
        per_req = np.full(n, float(tokens))
        raw_tpot = rng.lognormal(0.0, p.tpot_sigma, n)
    jitter = rng.exponential(p.gap_jitter, n)
    if c == 1:
        ttft = _single_ttft(rng, p)
        if p.tpot_p99 is not None:
            tpot = _pin_top_two(raw_tpot, p.tpot_mean, p.tpot_p99, 0 if p.cold_tpot else None)
        else:
            tpot = raw_tpot * (p.tpot_mean / raw_tpot.mean())
        lat = ttft + tpot * tokens
        starts = np.zeros(n)
        for i in range(1, n):
            starts[i] = starts[i - 1] + lat[i - 1] + p.gap + jitter[i]
        order = np.arange(n)
    else:
        if n % c:
            raise MeanFitError(f"{p.name}: {n} requests do not fill {c} slots evenly")
        tpot = raw_tpot * (p.tpot_mean / raw_tpot.mean())
        keys = rng.random(n)
        stagger = np.cumsum(rng.exponential(p.stagger, c))
        first = rng.uniform(*p.first_wave, c) * rng.lognormal(0.0, p.ttft_sigma / 3, c)
        later = rng.lognormal(0.0, p.ttft_sigma, n - c)
        slots = deal(tpot * tokens + p.ttft_mean, c, keys)
        ttft = np.empty(n)
        heads = [ids[0] for ids in slots]
        tails = [i for ids in slots for i in ids[1:]]
        ttft[heads] = rng.permutation(first)
        ttft[tails] = rng.permutation(later)
        ttft *= p.ttft_mean / ttft.mean()
        gaps = p.gap + jitter
        k = n // c
        ends = np.array([stagger[s] + sum(ttft[i] + tpot[i] * tokens for i in ids) + gaps[ids[1:]].sum()
                         for s, ids in enumerate(slots)])
        for s, ids in enumerate(slots):  # zero-sum: every slot ends at the mean end
            tpot[ids] += (ends.mean() - ends[s]) / (k * tokens)
        if tpot.min() <= 0:
            raise MeanFitError(f"{p.name}: balancing the slots needs a negative TPOT")
        lat = ttft + tpot * tokens
        starts = timeline(lat, slots, gaps, stagger)
        order = np.argsort(starts, kind="stable")
        ttft, tpot, starts, per_req = ttft[order], tpot[order], starts[order], per_req[order]
        if steps is not None:
            steps = steps.reorder(order)
    decode = tpot * tokens
    first_tok = starts + ttft
    end = first_tok + decode
    stall_at: list[list[int]] = [[] for _ in range(n)]
    stall_s: list[list[float]] = [[] for _ in range(n)]
    if p.stall_s > 0 and c > 1:
        for j in range(n):
            t = first_tok[j]
            for i in np.flatnonzero((first_tok < t) & (t < end)):
                if i == j:
                    continue
                at = int((t - first_tok[i]) / decode[i] * per_req[i])
                stall_at[i].append(min(at, int(per_req[i]) - 1))
                stall_s[i].append(p.stall_s * rng.uniform(*p.stall_range))
    itls, stalls = [], []
    for i in range(n):
        g, st = _gaps(rng, float(decode[i]), int(per_req[i]), stall_at[i], stall_s[i], p.step_cv)
        itls.append(g)
        stalls.append(st)
    if p.itl_p99 is not None:
        _pin_itl_p99(itls, stalls, p.itl_p99, p.name)
    end = starts + ttft + np.array([r.sum() for r in itls])
    duration = float(end.max() - starts.min()) + sum(p.overhead)
    return Run(p, ttft, tpot, starts - starts.min(), itls, stalls, steps, duration,
               extra={"order": order})

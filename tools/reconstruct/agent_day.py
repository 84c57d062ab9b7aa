"""Arrange fitted 10-second windows into a plausible day of live agent traffic.

The fitted windows say how many windows each concurrency level had; a real log also
has an order: bursts that ramp up and down, idle gaps, and requests that arrive and
finish consistently with the Running count. Between two stats lines

    running_now = running_before + arrivals - completions,   arrivals >= 0,

and a window without prompt throughput cannot have had a new request (every arrival
needs at least some prefill). The walk below places windows one by one under those
rules and under each level's completion budget (the published completions per minute
fix how many HTTP 200 lines fall into that level's windows), so the access lines, the
request log and the stats lines tell one story.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class ArrangeError(ValueError):
    """No arrangement met the budgets; the caller may retry with another stream."""


@dataclass
class Slot:
    running: int
    active: bool  # prompt throughput > 0 in this window
    completions: int = 0
    arrivals: int = 0
    kind: str = "window"  # window | tail | zero


@dataclass
class Burst:
    slots: list[Slot] = field(default_factory=list)
    end: str = "tail"  # tail (then one all-zero line) | crash


@dataclass
class DayPlan:
    bursts: list[Burst]

    def windows(self) -> list[Slot]:
        return [s for b in self.bursts for s in b.slots if s.kind == "window"]


def arrange(counts: dict[int, int], budgets: dict[int, int], inactive: dict[int, tuple[int, int]],
            rng: np.random.Generator, *, mean_burst: float = 10.0, crash_level: int | None = None,
            attempts: int = 400) -> DayPlan:
    """Bursts covering every window once.

    counts[c] windows at Running == c; budgets[c] HTTP 200 completions that fall in those
    windows; inactive[c] = (least, most) windows at c without prompt throughput. With
    crash_level, one burst ends in an engine crash at that level instead of a tail.
    """
    for _ in range(attempts):
        plan = _walk(counts, budgets, inactive, rng, mean_burst, crash_level)
        if plan is not None:
            return plan
    raise ArrangeError(f"no arrangement of {counts} within completion budgets {budgets}")


def _walk(counts, budgets, inactive, rng, mean_burst, crash_level):
    R = {c: n for c, n in counts.items() if n > 0}
    B = dict(budgets)
    q_min = {c: inactive.get(c, (0, 0))[0] for c in R}
    q_max = {c: inactive.get(c, (0, counts[c]))[1] for c in R}
    idle_used = {c: 0 for c in R}
    total = sum(R.values())
    placed = 0
    crashed = crash_level is None
    bursts: list[Burst] = []
    top = max(R)
    while sum(R.values()):
        burst = Burst()
        prev = 0
        length = 2 + int(rng.geometric(1.0 / max(mean_burst - 2, 1.0)))
        while True:
            options = []
            for c in (range(max(1, prev - 2), min(top, prev + 2) + 1) if prev else list(R)):
                if R.get(c, 0) <= 0:
                    continue
                need_idle = _must_be_idle(c, prev, R, q_min, idle_used, counts)
                choice = _state(c, prev, B, q_max, idle_used, need_idle, rng, R, q_min)
                if choice is None:
                    continue
                w = R[c] * (2.5 if c == prev else 1.0) / (1 + abs(c - prev)) ** 2
                if not prev:
                    w *= 1.0 / c
                options.append((c, choice, w))
            done = len(burst.slots) >= length and (prev <= 2 or rng.random() < 0.15)
            if not options or (done and burst.slots):
                break
            ws = np.array([o[2] for o in options], dtype=float)
            c, active, _ = options[int(rng.choice(len(options), p=ws / ws.sum()))]
            comp = _min_completions(c, prev, active)
            B[c] -= comp
            R[c] -= 1
            if not active:
                idle_used[c] += 1
            burst.slots.append(Slot(c, active, comp, c - prev + comp))
            prev = c
            placed += 1
            if not crashed and c == crash_level and placed > 0.45 * total:
                burst.end = "crash"
                crashed = True
                break
        if not burst.slots:
            return None
        if burst.end == "tail":
            burst.slots.append(Slot(0, False, prev, 0, "tail"))
            burst.slots.append(Slot(0, False, 0, 0, "zero"))
        bursts.append(burst)
    if not crashed or any(idle_used[c] < q_min[c] for c in idle_used) or any(v < 0 for v in B.values()):
        return None
    if not _spread(bursts, B, rng):
        return None
    return DayPlan(bursts)


def _min_completions(c, prev, active) -> int:
    if not active:
        return prev - c  # no arrival: only finished requests lower the count
    if prev == 0 or c > prev:
        return 0
    return prev - c + 1  # an arrival in a window that did not grow: someone finished first


def _must_be_idle(c, prev, R, q_min, idle_used, counts) -> bool:
    """True when the remaining windows at c are all needed as windows without prefill."""
    return q_min[c] - idle_used[c] >= R[c]


def _state(c, prev, B, q_max, idle_used, need_idle, rng, R, q_min):
    """Whether the window is active (True), idle (False) or impossible here (None)."""
    can_idle = prev and c <= prev and idle_used[c] < q_max[c] and B.get(c, 0) >= prev - c
    can_active = not need_idle and B.get(c, 0) >= _min_completions(c, prev, True)
    if can_idle and can_active:
        left = max(q_min[c] - idle_used[c], 0)
        p_idle = min(1.0, max(left / max(R[c], 1), (q_max[c] - idle_used[c]) / max(R[c], 1) * 0.5))
        return not (rng.random() < p_idle)
    if can_active:
        return True
    if can_idle:
        return False
    return None


def _spread(bursts, left, rng) -> bool:
    """Hand each level's remaining completions to its active windows at random."""
    by_level: dict[int, list[Slot]] = {}
    for b in bursts:
        for s in b.slots:
            if s.kind == "window" and s.active:
                by_level.setdefault(s.running, []).append(s)
    if any(left.get(c, 0) > 0 and c not in by_level for c in left):
        return False
    for c, slots in by_level.items():
        extra = left.get(c, 0)
        if extra <= 0:
            continue
        w = rng.gamma(1.5, size=len(slots))
        share = rng.multinomial(extra, w / w.sum())
        for s, k in zip(slots, share):
            s.completions += int(k)
            s.arrivals += int(k)
    return True

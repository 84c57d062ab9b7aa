"""Speculative-decoding step plans whose counters equal published totals exactly.

With MTP and k = 2 draft tokens, every decode step after the first token verifies one draft:
position 0 is accepted or not, position 1 only if position 0 was; the step streams
1 + accepted tokens as one chunk. vLLM counts the draft and its accepted tokens before the
request's `max_tokens` cuts the last chunk short, so over a request
    steps + accepted = tokens after the first + overshoot (0-2, in the last step only).
Given published totals (drafts, accepted per position) and the token budget of each
request, `plan` deals steps and acceptances to requests and orders them at random, so the
written files reproduce the counters to the token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class StepPlanError(ValueError):
    """The totals cannot be met by any sequence of steps (named by the caller)."""


@dataclass
class StepPlan:
    """Per request and step: accepted at position 0 (a0) and 1 (a1); per request overshoot."""

    a0: list[np.ndarray]
    a1: list[np.ndarray]
    overshoot: np.ndarray

    def sizes(self, i: int) -> np.ndarray:
        """Tokens of each streamed chunk after the first token of request i."""
        s = 1 + self.a0[i] + self.a1[i]
        s = s.copy()
        s[-1] -= int(self.overshoot[i])
        return s

    def steps(self) -> np.ndarray:
        return np.array([len(x) for x in self.a0])

    def totals(self) -> tuple[int, int, int]:
        """(drafts, accepted at position 0, accepted at position 1)."""
        return (int(sum(len(x) for x in self.a0)), int(sum(int(x.sum()) for x in self.a0)),
                int(sum(int(x.sum()) for x in self.a1)))

    def reorder(self, order) -> StepPlan:
        return StepPlan([self.a0[i] for i in order], [self.a1[i] for i in order], self.overshoot[list(order)])

    @staticmethod
    def concat(plans: list[StepPlan]) -> StepPlan:
        return StepPlan([x for p in plans for x in p.a0], [x for p in plans for x in p.a1],
                        np.concatenate([p.overshoot for p in plans]) if plans else np.zeros(0, int))


def _fix_sum(rng, values: np.ndarray, target: int, lo: np.ndarray, hi: np.ndarray, what: str) -> np.ndarray:
    """Move integer `values` by ±1 steps, inside [lo, hi], until they sum to `target`."""
    v = np.clip(values, lo, hi).astype(np.int64)
    if not (lo.sum() <= target <= hi.sum()):
        raise StepPlanError(f"{what}: total {target} outside the feasible range [{lo.sum()}, {hi.sum()}]")
    while (d := target - int(v.sum())) != 0:
        room = np.flatnonzero(v < hi) if d > 0 else np.flatnonzero(v > lo)
        pick = rng.choice(room, size=min(abs(d), len(room)), replace=False)
        v[pick] += 1 if d > 0 else -1
    return v


def plan(rng: np.random.Generator, tokens, drafts: int, acc0: int, acc1: int,
         spread: float = 0.04, what: str = "run") -> StepPlan:
    """Steps for requests needing `tokens[i]` tokens after the first, meeting the totals.

    `spread` is the log-normal sigma of the requests' steps per token (some requests are
    easier to predict than others).
    """
    t = np.asarray(tokens, dtype=np.int64)
    n = len(t)
    over = drafts + acc0 + acc1 - int(t.sum())
    if not 0 <= acc1 <= acc0 <= drafts:
        raise StepPlanError(f"{what}: need 0 <= accepted at position 1 ({acc1}) <= position 0 ({acc0}) "
                            f"<= drafts ({drafts})")
    if not 0 <= over <= 2 * n:
        raise StepPlanError(f"{what}: drafts + accepted - tokens = {over}; the last steps can only overshoot 0-{2 * n}")
    slots = rng.choice(2 * n, size=over, replace=False)  # two overshoot slots per request
    o = np.bincount(slots // 2, minlength=n).astype(np.int64)
    yield_ = t + o  # tokens the steps produce, overshoot included
    weight = yield_ * rng.lognormal(0.0, spread, n)
    raw = drafts * weight / weight.sum()
    lo = np.ceil(yield_ / 3).astype(np.int64)
    hi = yield_ - o  # the last step yields at least 1 + o
    steps = _fix_sum(rng, np.floor(raw + rng.random(n)).astype(np.int64), drafts, lo, hi, f"{what}: drafts")
    acc = yield_ - steps
    share = acc0 / (acc0 + acc1) if acc0 + acc1 else 1.0
    lo0 = np.maximum((acc + 1) // 2, o.clip(max=1))  # a1 <= a0; an overshoot needs a0 in the last step
    hi0 = np.minimum(steps, acc)
    a0n = _fix_sum(rng, np.round(acc * share).astype(np.int64), acc0, lo0, hi0, f"{what}: position 0")
    a1n = acc - a0n
    a0s, a1s = [], []
    for i in range(n):
        kinds = np.array([2] * int(a1n[i]) + [1] * int(a0n[i] - a1n[i]) + [0] * int(steps[i] - a0n[i]))
        kinds = rng.permutation(kinds)
        if kinds[-1] < o[i]:  # the last step must carry the overshoot
            j = int(rng.choice(np.flatnonzero(kinds >= o[i])))
            kinds[-1], kinds[j] = kinds[j], kinds[-1]
        a0s.append((kinds >= 1).astype(np.int64))
        a1s.append((kinds == 2).astype(np.int64))
    out = StepPlan(a0s, a1s, o)
    got = out.totals()
    if got != (drafts, acc0, acc1) or any(int(out.sizes(i).sum()) != t[i] for i in range(n)):
        raise StepPlanError(f"{what}: plan missed its totals: {got} vs {(drafts, acc0, acc1)}")
    return out


def retarget(plan_: StepPlan, i: int, inside: np.ndarray, want: int) -> int:
    """Swap steps of request i between the positions `inside` (a window) and the rest so the
    accepted tokens inside sum to `want`; the last step stays put. Returns what was reached."""
    a0, a1 = plan_.a0[i], plan_.a1[i]
    kind = a0 + a1
    last = len(kind) - 1
    fixed = int(kind[last]) if last in {int(x) for x in inside} else 0  # the last step stays put
    want -= fixed
    inside = np.asarray(sorted(set(int(x) for x in inside) - {last}), dtype=int)
    outside = np.setdiff1d(np.arange(len(kind) - 1), inside)
    for _ in range(4 * len(kind)):
        cur = int(kind[inside].sum()) if len(inside) else 0
        d = want - cur
        if d == 0 or not len(inside) or not len(outside):
            break
        step = 1 if d > 0 else -1
        pairs = [(s, t) for s in inside for t in outside if kind[t] == kind[s] + step]
        if not pairs:
            break
        s, t = pairs[0]
        kind[s], kind[t] = kind[t], kind[s]
    a0[:] = (kind >= 1).astype(np.int64)
    a1[:] = (kind == 2).astype(np.int64)
    return (int(kind[inside].sum()) if len(inside) else 0) + fixed

"""What the reconstructed files must reproduce, read only from published.yml.

Every published cell or claim whose expression is a single value name (for example
``h100_dense_c16_median_ttft_s``) constrains that value to the interval of numbers that
print the same way. Cells that restate a value another way (per-agent = aggregate / c,
€/M = price / aggregate) constrain the run's aggregate too. Constraints are intersected
in priority order (the sweep tables first, because they are the primary record of each
run); one that would empty the intersection is kept aside as a conflict: that is a
published inconsistency, and the reconstruction reports it rather than hides it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from benchbook.ledger.published import Published, Quantity, parse_quantity

METRICS = ("output_tps", "per_agent_tps", "median_ttft_s", "p99_ttft_s", "median_tpot_s",
           "prefill_tps", "cost_per_m")
# Tables that are the primary record of each run, consulted before any restatement.
PRIMARY_TABLES = ("dense-concurrency", "moe-concurrency")
# Claims that restate a value although their `recompute` compares stated numbers
# (claim id -> the value name they restate).
RESTATED = {"dense-p99-c32-stated-twice": "h100_dense_c32_p99_ttft_s"}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PRICE = re.compile(r"([\d.]+)\s*€/h")
_CONC = re.compile(r"_c(\d+)$")


def split_name(name: str) -> tuple[str, str]:
    """('h100_dense_c16', 'median_ttft_s') from 'h100_dense_c16_median_ttft_s'."""
    m = re.match(r"^strix_best_(\w+?)_tps$", name)
    if m:
        return f"strix_best_{m.group(1)}", "tps"
    for metric in METRICS:
        if name.endswith("_" + metric):
            return name[: -len(metric) - 1], metric
    raise ValueError(f"value name {name!r} ends in no known metric ({', '.join(METRICS)})")


def fitted(name: str) -> bool:
    """True for a value name the fit aims at (a run metric of METRICS, a llama-bench best)."""
    try:
        split_name(name)
    except ValueError:
        return False
    return True


@dataclass
class Constraint:
    """One published number about one value, as an interval on the canonical value."""

    name: str  # canonical value name (per-agent and cost folded into <run>_output_tps)
    printed_name: str  # the expression as published.yml writes it
    quantity: Quantity
    where: str  # "table dense-concurrency" / "claim dense-p99-c16"
    source: str
    interval: tuple[float, float] | None  # None: approximate, checked only
    price: float | None = None  # €/h, for €/M cells

    def printed(self, value: float) -> float:
        """Our canonical value in the form this constraint was printed (per agent, €/M)."""
        run, metric = split_name(self.printed_name)
        if metric == "per_agent_tps":
            return value / int(_CONC.search(run).group(1))
        if metric == "cost_per_m":
            return self.price * 1e6 / 3600.0 / value
        return value

    @property
    def text(self) -> str:
        return self.quantity.text


@dataclass
class Target:
    name: str
    lo: float = -math.inf
    hi: float = math.inf
    used: list[Constraint] = field(default_factory=list)
    conflicts: list[Constraint] = field(default_factory=list)
    approximate: list[Constraint] = field(default_factory=list)

    @property
    def value(self) -> float:
        """The middle of the interval every used constraint allows: where one published cell
        pins a value, the printed number itself. A file aims there, not at a seeded point of
        the interval: digits below the write-up's are no finding, and a seeded point was a
        generator's choice (`target_band`) that every value computed from a published cell
        then rested on (`make marks`: H100 148 marked places no move of it moved)."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            raise ValueError(f"{self.name}: published numbers give only a bound ({self.lo}, {self.hi})")
        return off_halfway((self.lo + self.hi) / 2)

    def admits(self, value: float) -> bool:
        return self.lo <= value < self.hi


def off_halfway(v: float, places: int = 6) -> float:
    """`v`, moved up by a billionth of itself when it lies half-way between two numbers of up to
    `places` decimals. The middle of an interval several published cells allow often does (a
    throughput printed as "441" and as 8 × "55.1" is 440.85), and the last bit of a float sum
    then decides whether a page prints 440.8 or 440.9 (`make marks`: a chart's tooltip flipped
    with no choice moving the value)."""
    for d in range(places + 1):
        scaled = abs(v) * 10 ** d
        if abs(scaled - math.floor(scaled) - 0.5) < 1e-7:
            return v * (1 + 1e-9) if v else v
    return v


def _printed(q: Quantity) -> tuple[float, float] | None:
    if q.bound == "under":
        return -math.inf, q.value
    if q.bound == "over":
        return q.value, math.inf
    if q.approx:
        return None
    return q.value - q.step / 2, q.value + q.step / 2


def _canonical(name: str, q: Quantity, price: float | None):
    """(canonical name, interval on it) for a printed value of `name`."""
    run, metric = split_name(name)
    iv = _printed(q)
    if metric == "per_agent_tps":
        c = int(_CONC.search(run).group(1))
        return f"{run}_output_tps", None if iv is None else (iv[0] * c, iv[1] * c)
    if metric == "cost_per_m":
        if price is None:
            return None, None
        k = price * 1e6 / 3600.0  # €/M output tokens = k / tokens per second
        if iv is None:
            return f"{run}_output_tps", None
        lo, hi = iv
        return f"{run}_output_tps", (k / hi if hi > 0 else 0.0, k / lo if lo > 0 else math.inf)
    return name, iv


def _single_price(published: Published) -> float | None:
    prices = {float(m.group(1)) for t in published.tables if (m := _PRICE.search(t.title))}
    return prices.pop() if len(prices) == 1 else None


def constraints(published: Published) -> list[Constraint]:
    """Every single-value cell and claim, sweep tables first, then other tables, then claims."""
    tables = sorted(published.tables, key=lambda t: (t.id not in PRIMARY_TABLES,
                                                      published.tables.index(t)))
    default_price = _single_price(published)
    out = []
    for t in tables:
        m = _PRICE.search(t.title)
        price = float(m.group(1)) if m else default_price
        for cells, exprs in zip(t.rows, t.values):
            for cell, expr in zip(cells, exprs):
                if expr and _NAME.match(expr):
                    out.append(_make(expr, cell, f"table {t.id}", t.source, price))
    for c in published.claims:
        if c.get("kind", "data") in ("not-derivable",):
            continue
        expr = RESTATED.get(c["id"])
        if expr is None and c.get("kind", "data") == "data" and _NAME.match(str(c.get("recompute", ""))):
            expr = c["recompute"]
        if expr and not fitted(expr):
            continue  # e.g. an acceptance length: set by an assumption, checked by the claims ledger
        if expr:
            q = parse_quantity(c["published"], c["id"])
            if c.get("approx"):
                q = Quantity(q.text, q.value, q.unit, True, q.bound, q.currency, q.step)
            out.append(_make(expr, q, f"claim {c['id']}", c["source"], default_price))
    return [c for c in out if c is not None]


def _make(expr: str, cell, where: str, source: str, price: float | None) -> Constraint | None:
    q = cell if isinstance(cell, Quantity) else parse_quantity(cell, where)
    name, iv = _canonical(expr, q, price)
    if name is None:
        return None
    return Constraint(name, expr, q, where, source, iv, price)


def targets(published: Published, prefix: str = "") -> dict[str, Target]:
    """Target interval per canonical value name (optionally only names with `prefix`)."""
    out: dict[str, Target] = {}
    for c in constraints(published):
        if not c.name.startswith(prefix):
            continue
        t = out.setdefault(c.name, Target(c.name))
        if c.interval is None:
            t.approximate.append(c)
            continue
        lo, hi = max(t.lo, c.interval[0]), min(t.hi, c.interval[1])
        if lo < hi:
            t.lo, t.hi = lo, hi
            t.used.append(c)
        else:
            t.conflicts.append(c)
    for t in out.values():  # only "~" numbers: fit their printed digits, check with their tolerance
        if not t.used and t.approximate:
            q = t.approximate[0].quantity
            t.lo, t.hi = q.value - q.step / 2, q.value + q.step / 2
    return out

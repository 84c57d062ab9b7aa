"""What the power-sweep logs must reproduce, read only from its published.yml.

Every published cell whose expression is one value name, a name divided by the
concurrency (per-request t/s), or a name divided by the GPU power (tokens per kW),
constrains that value to the numbers that print like the cell. Constraints on one name
are intersected, direct cells before derived ones; one that would empty the interval is
a published inconsistency and is kept aside as a conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchbook.ledger.published import Published, parse_quantity

from .window_fit import Interval

NAME = re.compile(
    r"^(?P<m>q\d+_\d+b)_(?P<p>\d+)W(?:_(?P<scope>c\d+|c1to3|c1to6|c6to8))?_(?P<metric>"
    r"gen_n|gen_mean|gen_median|gen_p95|gen_max|prefill_sustained_mean|prefill_active_mean|"
    r"prefill_active_n|prefill_active_median|completions_per_min|per_request_mean)$")
_SINGLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PER_C = re.compile(r"^(?P<name>\w+) / (?P<c>\d+)$")
_PER_KW = re.compile(r"^(?P<name>\w+) / (?P<kw>(?P<m>q\d+_\d+b)_(?P<p>\d+)W_gpu_kw)$")


@dataclass
class Constraint:
    name: str
    text: str
    where: str
    interval: Interval
    derived: str = ""  # how the cell relates to the value ("/ 3", "/ 0.8 kW")


@dataclass
class Target:
    name: str
    interval: Interval | None = None
    direct: Interval | None = None  # from cells that print the value itself
    used: list[Constraint] = field(default_factory=list)
    conflicts: list[Constraint] = field(default_factory=list)
    checked: list[Constraint] = field(default_factory=list)  # claims restating a table cell


def printed_interval(text: str, approx_band: float) -> Interval:
    """The values that print like `text` (or, for '~' numbers, lie within approx_band)."""
    q = parse_quantity(text)
    decimals = len(re.search(r"(\d[\d,]*)(?:\.(\d+))?", str(text)).group(2) or "")
    if q.approx:
        return Interval(q.value * (1 - approx_band), q.value * (1 + approx_band))
    return Interval(q.value - q.step / 2, q.value + q.step / 2, decimals, str(q.value) if not decimals
                    else f"{q.value:.{decimals}f}")


def constraints(published: Published, cards: int, approx_band: float) -> list[Constraint]:
    """Every single-value constraint: direct table cells, then derived cells, then claims."""
    direct, derived = [], []
    for t in published.tables:
        for cells, exprs in zip(t.rows, t.values):
            for col, text, expr in zip(t.columns, cells, exprs):
                if not expr:
                    continue
                where = f"table {t.id}, {' '.join(c for c, e in zip(cells, exprs) if e is None)}, {col}"
                iv = printed_interval(text, approx_band)
                if _SINGLE.match(expr):
                    direct.append(Constraint(expr, text, where, iv))
                elif m := _PER_C.match(expr):
                    c = int(m.group("c"))
                    derived.append(Constraint(m.group("name"), text, where, iv.scaled(c), f"/ {c}"))
                elif m := _PER_KW.match(expr):
                    kw = cards * int(m.group("p")) / 1000
                    derived.append(Constraint(m.group("name"), text, where, iv.scaled(kw), f"/ {kw:g} kW"))
    claims = []
    for c in published.claims:
        expr = str(c.get("recompute", ""))
        if c.get("kind", "data") != "data" or not _SINGLE.match(expr):
            continue
        claims.append(Constraint(expr, str(c["published"]), f"claim {c['id']}",
                                 printed_interval(c["published"], approx_band)))
    return direct + derived + claims


def targets(published: Published, cards: int = 4, approx_band: float = 0.02) -> dict[str, Target]:
    """Intervals per value name. A claim about a value some table prints is only checked
    (the ledger judges it); claims about values no table prints (peaks, the stats
    interval) are targets like cells."""
    out: dict[str, Target] = {}
    for con in constraints(published, cards, approx_band):
        t = out.setdefault(con.name, Target(con.name))
        if con.where.startswith("claim ") and any(not u.where.startswith("claim ") for u in t.used):
            t.checked.append(con)
            continue
        if t.interval is None:
            t.interval = con.interval
            if not con.derived:
                t.direct = con.interval
            t.used.append(con)
            continue
        both = t.interval.intersect(con.interval)
        if both is None:
            t.conflicts.append(con)
        else:
            t.interval = both
            t.used.append(con)
            if not con.derived:
                t.direct = both
    return out


def split(name: str) -> dict | None:
    m = NAME.match(name)
    return m.groupdict() if m else None

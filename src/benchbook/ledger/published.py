"""What a write-up published: its table cells and claims, as printed, with their units.

Cells are copied verbatim from the source text ("1.31 s", "~8.2×", "€0.43") so anyone can
check them against the seed; `parse_quantity` turns them into values in canonical units
(seconds, tokens/s, a currency) and remembers how precisely they were printed, which sets
the tolerance they are compared with.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..ingest.textio import load_yaml
from .comparable import FIELDS

# Canonical unit for each printed unit, and the factor to get there.
UNITS = {
    "ms": ("s", 1e-3),
    "s": ("s", 1.0),
    "sec": ("s", 1.0),
    "seconds": ("s", 1.0),
    "min": ("s", 60.0),
    "minutes": ("s", 60.0),
    "t/s": ("tok/s", 1.0),
    "tok/s": ("tok/s", 1.0),
    "tokens/s": ("tok/s", 1.0),
    "×": ("×", 1.0),
    "x": ("×", 1.0),
    "%": ("%", 1.0),
    "GB/s": ("GB/s", 1.0),
    "GB": ("GB", 1.0),
    "W": ("W", 1.0),
    "tokens": ("tokens", 1.0),
    "k tokens": ("tokens", 1000.0),
    "tokens per draft": ("tokens/draft", 1.0),
    "GiB": ("GiB", 1.0),
    "MB": ("MB", 1.0),
    "agents": ("agents", 1.0),
    "": ("", 1.0),
}
CURRENCIES = {"€": "EUR", "$": "USD", "£": "GBP"}
APPROX_WORDS = ("~", "≈", "roughly", "about", "around", "approximately", "under", "over")
_NUM = re.compile(
    r"^(?P<approx>(?:~|≈|roughly|about|around|approximately|under|over)\s*)?"
    r"(?P<cur>[€$£])?\s*(?P<num>[-+]?\d[\d,]*(?:\.\d+)?)\s*(?P<unit>[^\d\s].*)?$",
    re.IGNORECASE,
)

MAGNITUDE = "order of magnitude"  # a bound kind: within a factor of √10 of 10^n times
_MAGNITUDE = re.compile(r"^(?:(?:~|≈|roughly|about|around|approximately)\s*)?(?P<n>an?\s+|one\s+|two\s+|three\s+)?"
                        r"orders?\s+of\s+magnitude(?:\s*(?:×|x|times))?$", re.IGNORECASE)
_ORDERS = {"": 1, "a": 1, "an": 1, "one": 1, "two": 2, "three": 3}

# Tolerances (relative), documented in book/methods.md.
EXACT_FLOOR = 0.01  # a number printed without qualifier: rounding + 1 %
APPROX_FLOOR = 0.10  # "~", "roughly": 10 %


@dataclass(frozen=True)
class Quantity:
    """A printed number: its value in canonical units and how it was printed."""

    text: str
    value: float  # in `unit`
    unit: str  # canonical unit
    approx: bool = False
    bound: str | None = None  # "under" / "over": a one-sided claim
    currency: str | None = None
    step: float = 0.0  # one unit of the last printed digit, in canonical units
    kilo: float = 1000.0  # what a printed "k" multiplies by (a write-up may mean 1,024)

    @property
    def tolerance(self) -> float:
        """Relative tolerance: half a printed step, plus 1 % (exact) or 10 % (approximate)."""
        rounding = (self.step / 2) / abs(self.value) if self.value else 0.0
        return rounding + (APPROX_FLOOR if self.approx else EXACT_FLOOR)

    def display(self, value: float) -> str:
        """Format another value the way this one was printed (same unit and decimals)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        if self.bound == MAGNITUDE:
            return f"{value:,.1f}×"
        printed_unit, factor = self._printed_unit()
        shown = value / factor
        decimals = _decimals(self.text)
        # A number printed with one significant digit ("€1", "~2 s") would hide the
        # difference we want to show: give the recomputed value three.
        if shown and _significant(self.text) < 2:
            decimals = max(decimals, 2 - int(math.floor(math.log10(abs(shown)))))
        signed = bool(m := _NUM.match(_clean(self.text))) and m.group("num")[0] in "+-"
        body = f"{shown:{'+' if signed else ''},.{decimals}f}"  # "+2.4%" stays signed
        symbol = {v: k for k, v in CURRENCIES.items()}.get(self.currency or "", "")
        sep = "" if printed_unit in ("×", "%", "") or printed_unit.startswith("k ") else " "
        return f"{symbol}{body}{sep}{printed_unit}".strip()

    def _printed_unit(self) -> tuple[str, float]:
        m = _NUM.match(_clean(self.text))
        unit = (m.group("unit") or "").strip() if m else ""
        key = _unit_key(unit)
        if key is None:
            return "", 1.0
        return unit, UNITS[key][1] * (self.kilo / 1000.0 if key.startswith("k ") else 1.0)

    def with_kilo(self, kilo: float) -> Quantity:
        """The same printed number where "k" means `kilo` (1,024 in a write-up's "2k" prompt)."""
        from dataclasses import replace

        key = _unit_key(self._printed_unit()[0]) or ""
        scale = kilo / self.kilo if key.startswith("k ") else 1.0
        return replace(self, value=self.value * scale, step=self.step * scale, kilo=kilo)


def _clean(text: str) -> str:
    # U+2212 (the typographic minus of "−19.5%") reads as an ASCII minus
    return str(text).strip().replace("\u2009", " ").replace("\u00a0", " ").replace("\u2212", "-")


def _unit_key(unit: str) -> str | None:
    unit = unit.strip().rstrip(".")
    if unit in UNITS:
        return unit
    low = unit.lower()
    for key in UNITS:
        if key.lower() == low:
            return key
    return None


def _significant(text: str) -> int:
    m = _NUM.match(_clean(text))
    digits = m.group("num").replace(",", "").replace(".", "").lstrip("-0") if m else ""
    return len(digits)


def _decimals(text: str) -> int:
    m = _NUM.match(_clean(text))
    if not m or "." not in m.group("num"):
        return 0
    return len(m.group("num").split(".")[1])


class PublishedError(ValueError):
    """A published value or table that cannot be understood."""


def parse_quantity(text: str | float | int, where: str = "") -> Quantity:
    """Parse a printed number such as '1,163', '243 ms', '~8.2×', '€0.43' or '$14'."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = str(text)
    cleaned = _clean(text)
    if m := _MAGNITUDE.match(cleaned):  # "n orders of magnitude": 10^n times, within a factor of √10
        orders = _ORDERS[(m.group("n") or "").strip().lower()]
        return Quantity(text=str(text), value=10.0 ** orders, unit="×", approx=True, bound=MAGNITUDE)
    m = _NUM.match(cleaned)
    if not m:
        raise PublishedError(f"{where}: cannot read a number in {text!r}; expected e.g. '243 ms', '~8.2×', '€0.43'")
    unit_text = (m.group("unit") or "").strip()
    key = _unit_key(unit_text)
    if key is None:
        raise PublishedError(f"{where}: unknown unit {unit_text!r} in {text!r}; "
                             f"known: {', '.join(k for k in UNITS if k)}")
    unit, factor = UNITS[key]
    num = m.group("num").replace(",", "")
    value = float(num) * factor
    decimals = len(num.split(".")[1]) if "." in num else 0
    qualifier = (m.group("approx") or "").strip().lower()
    bound = qualifier if qualifier in ("under", "over") else None
    currency = CURRENCIES.get(m.group("cur") or "")
    return Quantity(
        text=str(text),
        value=value,
        unit="" if currency else unit,
        approx=bool(qualifier) and bound is None,
        bound=bound,
        currency=currency,
        step=10.0 ** (-decimals) * factor,
    )


@dataclass
class PublishedTable:
    """A table as the write-up printed it, with an expression per cell for our value."""

    id: str
    source: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    values: list[list[str | None]]  # expression per cell; None for label cells
    note: str = ""


@dataclass
class Published:
    study: str
    sources: dict
    tables: list[PublishedTable] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)
    caveats: list[dict] = field(default_factory=list)
    path: Path | None = None
    setup: dict = field(default_factory=dict)  # role -> the write-up's setup (benchbook.ledger.comparable)
    # The write-up's own settings (e.g. the hourly price it assumed), each with its source:
    # a chapter uses them only on data of the write-up's setup.
    parameters: dict = field(default_factory=dict)
    # name -> {low, high, source}: the values a parameter can plausibly take (an exchange
    # rate's historical range); a claim that holds only outside it does not hold.
    plausible: dict = field(default_factory=dict)


def load_published(path: str | Path) -> Published:
    """Read a study's published.yml (tables, claims, the authors' caveats)."""
    path = Path(path)
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishedError(f"{path}: missing; expected the study's published values (published.yml)")
    except yaml.YAMLError as exc:
        raise PublishedError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(doc, dict):
        raise PublishedError(f"{path}: expected a mapping with 'study', 'sources', 'tables', 'claims'")
    sources = doc.get("sources") or {}
    tables = [_parse_table(t, i, path, sources) for i, t in enumerate(doc.get("tables") or [])]
    claims = doc.get("claims") or []
    for i, c in enumerate(claims):
        for key in ("id", "source", "claim", "published"):
            if key not in c:
                raise PublishedError(f"{path}: claims[{i}] ({c.get('id', '?')}): missing key '{key}'")
        if c["source"] not in sources:
            raise PublishedError(f"{path}: claims[{i}] ({c['id']}): unknown source '{c['source']}'")
        if "same_as" in c and not re.fullmatch(r"[a-z0-9][a-z0-9-]*:[A-Za-z0-9_.-]+", str(c["same_as"])):
            raise PublishedError(f"{path}: claims[{i}] ({c['id']}): same_as '{c['same_as']}'; expected "
                                 "'<chapter id>:<claim id>' of the chapter that checks the same statement")
    ids = [c["id"] for c in claims]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise PublishedError(f"{path}: claim ids used twice: {', '.join(dupes)}")
    return Published(
        study=str(doc.get("study", "")),
        sources=sources,
        tables=tables,
        claims=claims,
        caveats=doc.get("caveats") or [],
        path=path,
        setup=_parse_setup(doc.get("setup"), path),
        parameters=_parse_parameters(doc.get("parameters"), path, sources),
        plausible=_parse_plausible(doc.get("plausible"), path, sources),
    )


def _cited(items, section: str, noun: str, keys: tuple[str, ...], path: Path, sources: dict) -> dict:
    """A mapping name -> {keys...}, each entry citing one of the listed sources."""
    if items is None:
        return {}
    if not isinstance(items, dict):
        raise PublishedError(f"{path}: {section}: expected a mapping of {noun} -> {{{', '.join(keys)}}}")
    need = ", ".join(f"'{k}'" for k in keys[:-1]) + f" and '{keys[-1]}'"
    for name, item in items.items():
        if not isinstance(item, dict) or not set(keys) <= set(item):
            raise PublishedError(f"{path}: {section}.{name}: expected a mapping with {need}")
        if item["source"] not in sources:
            raise PublishedError(f"{path}: {section}.{name}: unknown source '{item['source']}'")
    return items


def _parse_parameters(params, path: Path, sources: dict) -> dict:
    """name -> {value, source, ...}: a setting the write-up used, with where it says so."""
    return _cited(params, "parameters", "name", ("value", "source"), path, sources)


def _parse_plausible(ranges, path: Path, sources: dict) -> dict:
    """name -> {low, high, source}: each a cited range with low below high."""
    ranges = _cited(ranges, "plausible", "parameter", ("low", "high", "source"), path, sources)
    for name, r in ranges.items():
        if not all(isinstance(r[k], (int, float)) and not isinstance(r[k], bool) for k in ("low", "high")) \
                or not r["low"] < r["high"]:
            raise PublishedError(f"{path}: plausible.{name}: expected numbers with low below high, "
                                 f"got low {r['low']!r}, high {r['high']!r}")
    return ranges


def _parse_setup(setup, path: Path) -> dict:
    """The write-up's setup per role: a mapping (or a list of them) of known fields."""

    if setup is None:
        return {}
    if not isinstance(setup, dict):
        raise PublishedError(f"{path}: setup: expected a mapping of role -> platform, model, quantisation")
    for role, entries in setup.items():
        for j, entry in enumerate(entries if isinstance(entries, list) else [entries]):
            if not isinstance(entry, dict):
                raise PublishedError(f"{path}: setup.{role}[{j}]: expected a mapping with {', '.join(FIELDS)}")
            unknown = sorted(set(entry) - set(FIELDS))
            if unknown:
                raise PublishedError(f"{path}: setup.{role}[{j}]: unknown key(s) {', '.join(unknown)}; "
                                     f"known: {', '.join(FIELDS)}")
    return setup


def _parse_table(t: dict, i: int, path: Path, sources: dict) -> PublishedTable:
    where = f"{path}: tables[{i}] ({t.get('id', '?')})"
    for key in ("id", "source", "title", "columns", "rows"):
        if key not in t:
            raise PublishedError(f"{where}: missing key '{key}'")
    if t["source"] not in sources:
        raise PublishedError(f"{where}: unknown source '{t['source']}'")
    columns = list(t["columns"])
    rows, values = [], []
    template = t.get("template")
    for j, row in enumerate(t["rows"]):
        cells = row["cells"] if isinstance(row, dict) else row
        cells = [str(c) for c in cells]
        if len(cells) != len(columns):
            raise PublishedError(f"{where}: rows[{j}] has {len(cells)} cells, expected {len(columns)}")
        exprs = row.get("values") if isinstance(row, dict) else None
        if exprs is None:
            if template is None:
                raise PublishedError(f"{where}: rows[{j}] has no 'values' and the table no 'template'")
            exprs = [None if e is None else str(e).format(*cells) for e in template]
        if len(exprs) != len(columns):
            raise PublishedError(f"{where}: rows[{j}] values has {len(exprs)} entries, expected {len(columns)}")
        rows.append(cells)
        values.append(exprs)
    return PublishedTable(
        id=t["id"], source=t["source"], title=t["title"], columns=columns,
        rows=rows, values=values, note=t.get("note", ""),
    )

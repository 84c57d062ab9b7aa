"""The facts registry (data/facts/*.yml): hardware, model and price values, each cited.

The synthesis chapter sets measured results against physical limits and prices, so every
number it takes from outside the raw files must say where it comes from. A value is a
mapping with `value` and `unit`, and either `source` (an id in sources.yml) and `date`,
or `assumed: true` with its `reasoning` (arithmetic on a source, or no source at all).
Loading checks every value and reports all problems at once, each naming the file and
the key, so a registry that cannot be trusted never reaches a page.

independent.yml is the exception in form, not in rigour: its measurements are records
(platform, model, workload, value, comparable ...) each with its own inline source (a link,
and for a repository file the commit and path) and date, checked by their own rules.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ..ingest.textio import load_yaml

FILES = {  # file -> the sections it may hold (entry key -> mapping)
    "platforms.yml": ("platforms",),
    "models.yml": ("models",),
    "quantisation.yml": ("quantisations", "kv_cache"),
    "prices.yml": ("hourly", "api"),
    "fx.yml": ("rates",),
    "independent.yml": ("headlines", "measurements", "searches"),
}
SOURCES_FILE = "sources.yml"
SOURCE_KINDS = ("primary", "secondary", "write-up")
FACT_KEYS = {"value", "unit", "source", "date", "assumed", "reasoning", "note", "low", "high", "basis"}
METADATA = {"name", "short", "aliases", "compute", "note", "basis", "architecture", "same_layout_as",
            "layout_note", "platform", "vendor", "attribution_note"}
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
# Independent measurements (independent.yml) are records, not cited values: each carries its
# own source inline and is checked by the rules below instead of the Fact rules.
COMPARABLE = ("same", "close", "different")
MEASUREMENT_KEYS = ("headline", "platform", "model", "quantisation", "engine", "workload", "metric",
                    "value", "unit", "source", "date", "comparable", "why")
WORKLOAD_KEYS = ("test", "input_tokens", "output_tokens", "concurrency")
HEADLINE_KEYS = ("title", "setup", "unit", "published", "chapters", "ledger")
SEARCH_KEYS = ("tool", "query", "found")


class FactsError(ValueError):
    """The registry has problems; each line names the file, the key and what was expected."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("facts registry: " + ("\n  " + "\n  ".join(problems) if len(problems) > 1 else problems[0]))


@dataclass(frozen=True)
class Fact:
    """One cited (or assumed) value; `where` is 'file: key.path' for messages."""

    value: Any
    unit: str
    where: str
    source: str | None = None
    date: str | None = None
    assumed: bool = False
    reasoning: str = ""
    note: str = ""
    low: float | None = None
    high: float | None = None
    basis: str = ""


@dataclass
class Facts:
    folder: Path
    sources: dict[str, dict]
    sections: dict[str, dict[str, dict]] = field(default_factory=dict)  # section -> key -> entry

    # ---- lookup ------------------------------------------------------------------
    def entry(self, section: str, key: str) -> dict:
        """An entry with what it inherits through `same_layout_as` (its own values win)."""
        entries = self.sections.get(section, {})
        if key not in entries:
            raise FactsError([f"{_file_of(section)}: {section}.{key}: no such entry; known: "
                              f"{', '.join(entries) or 'none'}"])
        own = entries[key]
        base = own.get("same_layout_as")
        return {**self.entry(section, base), **own} if base else dict(own)

    def get(self, section: str, key: str, path: str) -> Fact | None:
        """The fact at `path` (dotted, e.g. 'peak_dense.fp8') of an entry, or None."""
        node: Any = self.entry(section, key)
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node if isinstance(node, Fact) else None

    def fact(self, section: str, key: str, path: str) -> Fact:
        """Like get, but a missing value is an error naming the file and key."""
        got = self.get(section, key, path)
        if got is None:
            raise FactsError([f"{_file_of(section)}: {section}.{key}.{path}: no value recorded"])
        return got

    def value(self, section: str, key: str, path: str, default=None):
        got = self.get(section, key, path)
        return default if got is None else got.value

    def identify(self, section: str, text: str | None) -> str | None:
        """The entry whose key is `text`, or whose `aliases` (regular expressions) match it longest."""
        if not isinstance(text, str) or not text:
            return None
        entries = self.sections.get(section, {})
        if text in entries:
            return text
        best, length = None, 0
        for key, entry in entries.items():  # the longest match wins: 'INT8' over 'AWQ' in 'AWQ-BF16-INT8'
            for alias in entry.get("aliases", []):
                m = re.search(alias, text, re.IGNORECASE)
                if m and len(m.group(0)) > length:
                    best, length = key, len(m.group(0))
        return best

    def cite(self, fact: Fact) -> str:
        """'title (url), date' or 'assumed: reasoning' for a fact."""
        parts = []
        if fact.source:
            s = self.sources[fact.source]
            parts.append(f"{s['title']} ({s.get('url') or s.get('file')})" + (f", {fact.date}" if fact.date else ""))
        if fact.assumed:
            parts.append(f"assumed: {fact.reasoning}")
        return "; ".join(parts)

    def table(self) -> pd.DataFrame:
        """Every value of the registry, one row each, with its citation."""
        rows = []
        for section, entries in self.sections.items():
            if section in _RECORDS:  # records with inline sources: benchbook.ledger.independent shows them
                continue
            for key, entry in entries.items():
                for path, f in _walk(entry):
                    s = self.sources.get(f.source or "", {})
                    rows.append(dict(
                        file=_file_of(section), section=section, entry=key, field=path, value=f.value,
                        low=f.low, high=f.high, unit=f.unit, source=s.get("title", ""),
                        url=s.get("url", s.get("file", "")), date=f.date or "", assumed=f.assumed,
                        reasoning=f.reasoning, note=f.note or f.basis,
                    ))
        return pd.DataFrame(rows, columns=["file", "section", "entry", "field", "value", "low", "high", "unit",
                                           "source", "url", "date", "assumed", "reasoning", "note"])


def _file_of(section: str) -> str:
    return next((f for f, secs in FILES.items() if section in secs), "?")


def _walk(node: dict, prefix: str = ""):
    for k, v in node.items():
        if isinstance(v, Fact):
            yield prefix + k, v
        elif isinstance(v, dict):
            yield from _walk(v, prefix + k + ".")


# ---- loading and validation ---------------------------------------------------------

def load_facts(folder: str | Path) -> Facts:
    """Read and check every file of the registry; raise FactsError listing all problems."""
    folder = Path(folder)
    problems: list[str] = []
    if not folder.is_dir():
        raise FactsError([f"{folder}: no such folder (expected {SOURCES_FILE} and {', '.join(FILES)})"])
    sources = _load_sources(folder / SOURCES_FILE, problems)
    facts = Facts(folder, sources)
    for name, sections in FILES.items():
        path = folder / name
        doc = _read_yaml(path, problems)
        if doc is None:
            continue
        unknown = sorted(set(doc) - set(sections))
        if unknown:
            problems.append(f"{name}: unknown top-level key(s) {', '.join(map(str, unknown))}; "
                            f"expected {', '.join(sections)}")
        for section in sections:
            entries = doc.get(section) or {}
            if not isinstance(entries, dict):
                problems.append(f"{name}: {section}: expected a mapping of entries, got {type(entries).__name__}")
                continue
            check = _RECORDS.get(section)
            facts.sections[section] = {
                str(key): check(name, f"{section}.{key}", body, problems) if check
                else _entry(name, f"{section}.{key}", body, sources, problems)
                for key, body in entries.items()
            }
        if "measurements" in sections:
            _check_headline_refs(name, facts.sections, problems)
        for section in sections:
            if section in _RECORDS:
                continue
            for key, entry in facts.sections.get(section, {}).items():
                base = entry.get("same_layout_as")
                if base is not None and base not in facts.sections[section]:
                    problems.append(f"{name}: {section}.{key}.same_layout_as: {base!r} is not an entry of {section}")
    if problems:
        raise FactsError(problems)
    return facts


def _read_yaml(path: Path, problems: list[str]) -> dict | None:
    if not path.is_file():
        problems.append(f"{path.name}: missing from {path.parent}")
        return None
    try:
        doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        problems.append(f"{path.name}: not valid YAML: {exc}")
        return None
    if not isinstance(doc, dict):
        problems.append(f"{path.name}: expected a mapping at the top level")
        return None
    return doc


def _load_sources(path: Path, problems: list[str]) -> dict[str, dict]:
    doc = _read_yaml(path, problems)
    if doc is None:
        return {}
    out = {}
    for sid, s in (doc.get("sources") or {}).items():
        where = f"{SOURCES_FILE}: sources.{sid}"
        if not isinstance(s, dict) or not s.get("title"):
            problems.append(f"{where}: expected a mapping with a 'title'")
            continue
        if not (s.get("url") or s.get("file")):
            problems.append(f"{where}: give a 'url' (or the seed 'file')")
        if s.get("kind") not in SOURCE_KINDS:
            problems.append(f"{where}.kind: {s.get('kind')!r}; expected one of {', '.join(SOURCE_KINDS)}")
        if "date" in s and _date(s["date"]) is None:
            problems.append(f"{where}.date: {s['date']!r} is not a date (YYYY-MM or YYYY-MM-DD)")
        out[str(sid)] = {**s, "date": _date(s.get("date"))} if "date" in s else dict(s)
    if not out:
        problems.append(f"{SOURCES_FILE}: no sources defined")
    return out


def _entry(file: str, where: str, body, sources: dict, problems: list[str]) -> dict:
    if not isinstance(body, dict):
        problems.append(f"{file}: {where}: expected a mapping, got {type(body).__name__}")
        return {}
    return _group(file, where, body, sources, problems)


def _group(file: str, where: str, body: dict, sources: dict, problems: list[str]) -> dict:
    out: dict[str, Any] = {}
    for key, v in body.items():
        key = str(key)
        here = f"{where}.{key}"
        if isinstance(v, dict) and "value" in v:
            fact = _fact(file, here, v, sources, problems)
            if fact is not None:
                out[key] = fact
        elif isinstance(v, dict):
            if not v:
                problems.append(f"{file}: {here}: empty mapping; give values or remove it")
                continue
            out[key] = _group(file, here, v, sources, problems)
        elif key in METADATA:
            if key == "aliases":
                _check_aliases(file, here, v, problems)
            out[key] = v
        else:
            problems.append(
                f"{file}: {here}: {v!r} is a bare value; write it as "
                "{value: ..., unit: ..., source: <id>, date: YYYY-MM[-DD]} or mark it "
                "{value: ..., unit: ..., assumed: true, reasoning: ...}")
    return out


def _fact(file: str, where: str, v: dict, sources: dict, problems: list[str]) -> Fact | None:
    at = f"{file}: {where}"
    found = _value_problems(at, v) + _citation_problems(at, v, sources) + _range_problems(at, v)
    problems.extend(found)
    if found:
        return None
    source, low, high = v.get("source"), v.get("low"), v.get("high")
    return Fact(value=v.get("value"), unit=v.get("unit"), where=at, source=None if source is None else str(source),
                date=_date(v.get("date")), assumed=v.get("assumed", False),
                reasoning=str(v.get("reasoning") or "").strip(), note=str(v.get("note") or ""), low=low, high=high,
                basis=str(v.get("basis") or ""))


def _value_problems(at: str, v: dict) -> list[str]:
    """Known fields only, and a value of the kind its unit says (a flag is a bool, else a number)."""
    out = []
    extra = sorted(set(map(str, v)) - FACT_KEYS)
    if extra:
        out.append(f"{at}: unknown field(s) {', '.join(extra)}; allowed: {', '.join(sorted(FACT_KEYS))}")
    value, unit = v.get("value"), v.get("unit")
    if value is None:
        out.append(f"{at}.value: empty; leave the value out instead of recording nothing")
    elif unit == "flag":
        if not isinstance(value, bool):
            out.append(f"{at}.value: a flag must be true or false, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        out.append(f"{at}.value: expected a number, got {value!r}")
    if not isinstance(unit, str) or not unit:
        out.append(f"{at}.unit: missing; every value needs its unit")
    return out


def _citation_problems(at: str, v: dict, sources: dict) -> list[str]:
    """A value is cited (a known source and a date) or assumed with its reasoning."""
    out = []
    assumed = v.get("assumed", False)
    if not isinstance(assumed, bool):
        out.append(f"{at}.assumed: expected true or false, got {assumed!r}")
        assumed = False
    source, date = v.get("source"), v.get("date")
    if source is not None and str(source) not in sources:
        out.append(f"{at}.source: {source!r} is not defined in {SOURCES_FILE}")
    out += _date_problems(at, date)
    if assumed:
        if not str(v.get("reasoning") or "").strip():
            out.append(f"{at}: assumed values need their 'reasoning'")
    elif source is None:
        out.append(f"{at}: no source; give 'source' (an id in {SOURCES_FILE}) and "
                   "'date', or mark it 'assumed: true' with its 'reasoning'")
    elif date is None:
        out.append(f"{at}: cited from {source!r} without a 'date'")
    return out


def _date_problems(at: str, date) -> list[str]:
    """A date, when given, is YYYY-MM or YYYY-MM-DD."""
    if date is None or _date(date) is not None:
        return []
    return [f"{at}.date: {date!r} is not a date (YYYY-MM or YYYY-MM-DD)"]


def _range_problems(at: str, v: dict) -> list[str]:
    value, low, high = v.get("value"), v.get("low"), v.get("high")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if (low is not None and low > value) or (high is not None and high < value):
            return [f"{at}: value {value} lies outside its range [{low}, {high}]"]
    return []


def _measurement(file: str, where: str, body, problems: list[str]) -> dict:
    """One independent measurement: every key present, a number, a linked and dated source,
    and how comparable it is, so no entry reaches a page without its citation."""
    if not isinstance(body, dict):
        problems.append(f"{file}: {where}: expected a mapping, got {type(body).__name__}")
        return {}
    missing = [k for k in MEASUREMENT_KEYS if body.get(k) in (None, "")]
    if missing:
        problems.append(f"{file}: {where}: missing {', '.join(missing)}; every measurement needs "
                        f"{', '.join(MEASUREMENT_KEYS)}")
    extra = sorted(set(map(str, body)) - set(MEASUREMENT_KEYS) - {"date_note"})
    if extra:
        problems.append(f"{file}: {where}: unknown field(s) {', '.join(extra)}")
    value = body.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        problems.append(f"{file}: {where}.value: expected a number, got {value!r}")
    if "comparable" in body and body["comparable"] not in COMPARABLE:
        problems.append(f"{file}: {where}.comparable: {body['comparable']!r}; expected one of {', '.join(COMPARABLE)}")
    problems += _date_problems(f"{file}: {where}", body.get("date"))
    workload = body.get("workload")
    if workload is not None:
        if not isinstance(workload, dict):
            problems.append(f"{file}: {where}.workload: expected a mapping with {', '.join(WORKLOAD_KEYS)}")
        elif absent := [k for k in WORKLOAD_KEYS if k not in workload]:
            problems.append(f"{file}: {where}.workload: missing {', '.join(absent)} (write null where the "
                            "source does not say)")
    source = body.get("source")
    if source is not None:
        _check_source(file, f"{where}.source", source, problems)
    return {**body, "date": _date(body.get("date"))} if "date" in body else dict(body)


def _check_source(file: str, where: str, source, problems: list[str]) -> None:
    if not isinstance(source, dict) or not source.get("title"):
        problems.append(f"{file}: {where}: expected a mapping with a 'title' and a 'url'")
        return
    url = str(source.get("url") or "")
    if not re.match(r"https?://\S+$", url):
        problems.append(f"{file}: {where}.url: {url!r}; expected an http(s) link to the source")
    if "repo" in source:  # a repository file: the commit and path pin what was read
        if not re.fullmatch(r"[0-9a-f]{40}", str(source.get("commit") or "")):
            problems.append(f"{file}: {where}.commit: a repository source needs the 40-hex commit read")
        if not source.get("path"):
            problems.append(f"{file}: {where}.path: a repository source needs the file's path")


def _headline(file: str, where: str, body, problems: list[str]) -> dict:
    """A write-up figure set beside independent ones: where its printed value is, and which
    pages and ledger rows show it."""
    if not isinstance(body, dict):
        problems.append(f"{file}: {where}: expected a mapping, got {type(body).__name__}")
        return {}
    missing = [k for k in HEADLINE_KEYS if not body.get(k)]
    if missing:
        problems.append(f"{file}: {where}: missing {', '.join(missing)}")
    pub = body.get("published")
    if isinstance(pub, dict):
        if not pub.get("chapter") or not (pub.get("claim") or all(pub.get(k) for k in ("table", "row", "column"))):
            problems.append(f"{file}: {where}.published: expected chapter and claim, or chapter, table, row "
                            "and column")
    elif pub is not None:
        problems.append(f"{file}: {where}.published: expected a mapping")
    if "chapters" in body and not (isinstance(body["chapters"], list) and body["chapters"]):
        problems.append(f"{file}: {where}.chapters: expected a list of chapter ids")
    ledger = body.get("ledger")
    if ledger is not None and not (isinstance(ledger, dict)
                                   and all(isinstance(v, list) for v in ledger.values())):
        problems.append(f"{file}: {where}.ledger: expected chapter id -> list of claim ids")
    return dict(body)


def _searches(file: str, where: str, body, problems: list[str]) -> list:
    """What was searched for one chapter: each entry a tool, a query and what it found."""
    if not isinstance(body, list) or not body:
        problems.append(f"{file}: {where}: expected a list of {{tool, query, found}}")
        return []
    for i, entry in enumerate(body):
        if not isinstance(entry, dict) or any(not entry.get(k) for k in SEARCH_KEYS):
            problems.append(f"{file}: {where}[{i}]: expected {', '.join(SEARCH_KEYS)}")
    return body


def _check_headline_refs(file: str, sections: dict, problems: list[str]) -> None:
    heads = sections.get("headlines", {})
    for key, m in sections.get("measurements", {}).items():
        h = m.get("headline")
        if h is not None and h not in heads:
            problems.append(f"{file}: measurements.{key}.headline: {h!r} is not an entry of headlines "
                            f"({', '.join(heads) or 'none'})")


_RECORDS = {"headlines": _headline, "measurements": _measurement, "searches": _searches}


def _check_aliases(file: str, where: str, aliases, problems: list[str]) -> None:
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        problems.append(f"{file}: {where}: expected a list of regular expressions")
        return
    for a in aliases:
        try:
            re.compile(a)
        except re.error as exc:
            problems.append(f"{file}: {where}: {a!r} is not a regular expression ({exc})")


def _date(v) -> str | None:
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, str) and _DATE.match(v):
        return v
    return None

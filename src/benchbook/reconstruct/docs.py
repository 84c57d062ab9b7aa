"""The bookkeeping files of a reconstructed data folder: study.yml, PROVENANCE.md, SHA256SUMS.

Nothing here depends on where the folder is written, so two runs with the same seed give
the same bytes wherever they land.
"""

from __future__ import annotations

import shutil
from datetime import date, datetime
from pathlib import Path

import yaml

from ..study import CHECKSUMS, MANIFEST, write_checksums
from .targets import Target

PROVENANCE = "PROVENANCE.md"
ASSUMPTIONS_FILE = "assumptions.yml"


def reset(out_dir: Path) -> None:
    """Remove what a previous run wrote (raw/ and the three bookkeeping files), nothing else."""
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / "raw", ignore_errors=True)
    for name in (MANIFEST, CHECKSUMS, PROVENANCE, ASSUMPTIONS_FILE):
        (out_dir / name).unlink(missing_ok=True)


def sources(published, ids) -> dict:
    """The seeds a study draws on, copied from published.yml (dates as plain strings)."""
    out = {}
    for sid in ids:
        s = dict(published.sources[sid])
        out[sid] = {k: (v.isoformat() if isinstance(v, (date, datetime)) else v) for k, v in s.items()}
    return out


def write_study(out_dir: Path, doc: dict) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    (out_dir / MANIFEST).write_text(text, encoding="utf-8")


def finish(out_dir: Path, provenance: str, assumed: dict | None = None, shows_in: dict | None = None,
           rows: dict | None = None) -> None:
    """PROVENANCE.md, assumptions.yml (the generator's choices as data) and SHA256SUMS."""
    (out_dir / PROVENANCE).write_text(provenance, encoding="utf-8")
    if assumed is not None:
        write_assumptions(out_dir, assumed, shows_in or {}, rows or {})
    write_checksums(out_dir)


def write_assumptions(out_dir: Path, assumed: dict, shows_in: dict, rows: dict | None = None) -> None:
    """One entry per ASSUMPTIONS key: its value, why, the tidy columns it lands in and, where
    it covers only some of their rows, which (`rows`, benchbook.assumptions)."""
    rows = rows or {}
    unknown = sorted(set(shows_in) - set(assumed)) + sorted(set(rows) - set(shows_in))
    if unknown:
        raise ValueError(f"SHOWS_IN or ROWS names no assumption with columns: {', '.join(unknown)}")
    entries = [{"id": k, "value": _plain(v), "why": why, "columns": list(shows_in.get(k, ())),
                **({"rows": _plain(rows[k])} if k in rows else {})}
               for k, (v, why) in assumed.items()]
    head = ("# What the generator chose where the write-up printed no number (benchbook.assumptions).\n"
            "# `columns`: the tidy-table columns each choice lands in; `rows`, when given, the rows of\n"
            "# those columns it covers (column: values it matches; a list: any of them). A page marks\n"
            "# every cell, series, number and claim computed from such a cell, and the sections that\n"
            "# read one. Written by the generator; do not edit.\n")
    text = yaml.safe_dump({"assumptions": entries}, sort_keys=False, allow_unicode=True, width=100)
    (out_dir / ASSUMPTIONS_FILE).write_text(head + text, encoding="utf-8")


def _plain(v):
    """YAML-safe: tuples as lists, mapping keys as they are."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def assumptions(assumed: dict) -> str:
    """One bullet per ASSUMPTIONS entry: name, value, why."""
    return "".join(f"- `{k}` = `{v!r}`: {why}\n" for k, (v, why) in assumed.items())


def target_rows(targets: dict[str, Target], fitted: dict[str, float], run_of) -> list[list]:
    """Published number | source | table/claim | value name | run shaped | our value."""
    rows = []
    for name, t in targets.items():
        for c in t.used + t.approximate:
            shown = c.quantity.display(_printed_value(c, fitted.get(name), name))
            rows.append([c.text, c.source, c.where, c.printed_name, run_of(name), shown])
    return rows


def conflict_rows(targets: dict[str, Target], fitted: dict[str, float]) -> list[list]:
    rows = []
    for name, t in targets.items():
        for c in t.conflicts:
            ours = c.quantity.display(_printed_value(c, fitted.get(name), name))
            kept = ", ".join(f"{u.text} ({u.where})" for u in t.used)
            rows.append([c.text, c.source, c.where, c.printed_name, ours, kept])
    return rows


def _printed_value(c, value, name):
    return None if value is None else c.printed(value)

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


def reset(out_dir: Path) -> None:
    """Remove what a previous run wrote (raw/ and the three bookkeeping files), nothing else."""
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / "raw", ignore_errors=True)
    for name in (MANIFEST, CHECKSUMS, PROVENANCE):
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


def finish(out_dir: Path, provenance: str) -> None:
    (out_dir / PROVENANCE).write_text(provenance, encoding="utf-8")
    write_checksums(out_dir)


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

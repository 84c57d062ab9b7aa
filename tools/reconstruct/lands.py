"""Where each generator choice lands, as tools/marks_check.py found it by moving the choice:
lands/<folder>.yml maps a choice id to the tidy `columns` (and `rows`) that moved, or to
`moves: nothing`. docs.write_assumptions writes these into assumptions.yml in place of a
generator's hand-kept SHOWS_IN/ROWS, so the marks rest on the check, not on a list."""

from __future__ import annotations

from pathlib import Path

import yaml

FOLDER = Path(__file__).parent / "lands"
HEAD = ("# Where each generator choice lands in the tidy tables, found by moving it (make marks):\n"
        "# written by `python -m tools.marks_check --write`; do not edit.\n")


def path(study: str) -> Path:
    return FOLDER / f"{study}.yml"


def load(study: str) -> dict:
    """Choice id -> {columns, rows} or {moves: nothing}; empty before the check has run."""
    p = path(study)
    return (yaml.safe_load(p.read_text(encoding="utf-8")) or {}) if p.is_file() else {}


def record(study: str, found: dict, choices=None) -> None:
    """Keep what the check found for these choices beside what it found before for others;
    `choices`, when given, the generator's choices today: an entry for one it no longer makes
    (a value found to be the write-up's) goes."""
    merged = {k: v for k, v in {**load(study), **found}.items() if choices is None or k in choices}
    FOLDER.mkdir(exist_ok=True)
    text = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    path(study).write_text(HEAD + text, encoding="utf-8")

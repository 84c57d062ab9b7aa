"""What a data generator assumed: the values a reconstructed folder holds that the write-up
never published.

A reconstructed data folder carries `assumptions.yml`, written by its generator: one entry
per choice (`id`, `value`, `why`) and the tidy-table columns the choice lands in
(`columns`, as `table.column`). A chapter section whose declared columns meet an entry's
rests on that choice: its page marks it, so an assumption never reads as a finding. A
measured folder has no such file, and nothing of it is marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

FILE = "assumptions.yml"


class AssumptionsError(ValueError):
    pass


@dataclass(frozen=True)
class Assumption:
    id: str
    value: object
    why: str
    columns: tuple[str, ...] = ()  # table.column the value lands in; empty: only the files' texture


def load_assumptions(root: str | Path) -> list[Assumption]:
    """The folder's assumptions (none when it has no assumptions.yml)."""
    path = Path(root) / FILE
    if not path.is_file():
        return []
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise AssumptionsError(f"{path}: not valid YAML ({exc})") from exc
    entries = (doc or {}).get("assumptions") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise AssumptionsError(f"{path}: expected a mapping with an 'assumptions' list")
    out = []
    for i, e in enumerate(entries):
        where = f"{path}: assumptions[{i}]"
        if not isinstance(e, dict) or not {"id", "value", "why"} <= set(e):
            raise AssumptionsError(f"{where}: expected a mapping with id, value and why")
        cols = e.get("columns") or []
        bad = [c for c in cols if not isinstance(c, str) or c.count(".") != 1]
        if bad:
            raise AssumptionsError(f"{where} ({e['id']}): columns {bad}; expected 'table.column'")
        out.append(Assumption(str(e["id"]), e["value"], str(e["why"]), tuple(cols)))
    return out


def resting_on(assumed: list[Assumption], columns) -> list[Assumption]:
    """The assumptions whose columns meet these (a section's declared columns)."""
    wanted = set(columns)
    return [a for a in assumed if wanted & set(a.columns)]

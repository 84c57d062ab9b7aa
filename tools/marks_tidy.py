"""Where a moved generator choice lands in a folder's tidy tables (tools/marks_check.py).

`tidy_diff` compares two folders' tables cell by cell, exact inequality (a missing value equals
a missing value); `landing` turns the cells that moved into an assumptions.yml entry's `columns`
and, when only some rows of one table moved, `rows` (benchbook.study.assumptions), or says that
the choice moves nothing."""

from __future__ import annotations

import pandas as pd

NOTHING = {"moves": "nothing"}
KEYS = ("config", "name", "run", "file")  # selector columns tried first, in this order


def tidy_diff(base: dict[str, pd.DataFrame], moved: dict[str, pd.DataFrame]) -> dict[str, dict[str, pd.Series]]:
    """table -> {column: mask over the base table's rows of the cells that moved}; a table whose
    rows came or went moved in every cell."""
    out = {}
    for name in sorted(base.keys() | moved.keys()):
        a, b = base.get(name, pd.DataFrame()), moved.get(name, pd.DataFrame())
        cols = {c: _column_moved(a, b, c) for c in dict.fromkeys([*a.columns, *b.columns])}
        cols = {c: m for c, m in cols.items() if m.any()}
        if cols:
            out[name] = cols
    return out


def _column_moved(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.Series:
    if len(a) != len(b) or column not in a or column not in b:
        return pd.Series(True, index=a.index if len(a) else pd.RangeIndex(max(len(b), 1)))
    x, y = a[column].astype(object).to_numpy(), b[column].astype(object).to_numpy()
    return pd.Series([not _same(u, v) for u, v in zip(x, y)], index=a.index)


def _same(u, v) -> bool:
    if _missing(u) and _missing(v):
        return True
    try:
        return bool(u == v)
    except (TypeError, ValueError):
        return repr(u) == repr(v)


def _missing(v) -> bool:
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def landing(base: dict[str, pd.DataFrame], moved: dict[str, dict[str, pd.Series]]) -> dict:
    """{columns: [table.column, ...], rows: selector} where the choice lands, or NOTHING."""
    if not moved:
        return dict(NOTHING)
    columns = [f"{t}.{c}" for t, cols in moved.items() for c in cols]
    out = {"columns": columns}
    if len(moved) == 1:
        (table, cols), = moved.items()
        rows = _selector(base.get(table, pd.DataFrame()), cols)
        if rows:
            out["rows"] = rows
    return out


def _selector(df: pd.DataFrame, cols: dict[str, pd.Series]) -> dict | None:
    """The fewest values of one unmoved column that pick exactly the rows that moved; None when
    every row moved or no column tells them apart (then the entry covers all rows)."""
    if not len(df) or any(len(m) != len(df) for m in cols.values()):
        return None
    hit = pd.concat(list(cols.values()), axis=1).any(axis=1).to_numpy()
    if hit.all():
        return None
    best = None
    for c in sorted(set(df.columns) - set(cols), key=lambda c: (c not in KEYS, KEYS.index(c) if c in KEYS else 0, c)):
        values = _plain_values(df[c][hit])
        if values is None or set(values) & set(_plain_values(df[c][~hit]) or ()):
            continue
        if best is None or len(values) < len(best[1]):
            best = (c, values)
    return {best[0]: sorted(best[1], key=str)} if best else None


def _plain_values(s: pd.Series) -> list | None:
    """The distinct values of a column as YAML integers or text; None if any is neither."""
    out = []
    for v in s.drop_duplicates():
        if _missing(v) or isinstance(v, (list, dict, tuple)):
            return None
        v = v.item() if hasattr(v, "item") else v
        if not isinstance(v, (str, int)) or isinstance(v, bool):  # measured numbers select no rows
            return None
        out.append(v)
    return out

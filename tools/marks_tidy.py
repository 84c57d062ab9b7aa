"""Where a moved generator choice lands in a folder's tidy tables (tools/marks_check.py).

`tidy_diff` compares two folders' tables cell by cell, exact inequality (a missing value equals
a missing value); `landing` turns the cells that moved into an assumptions.yml entry's `columns`
and, when only some rows of one table moved, `rows` (benchbook.study.assumptions), or says that
the choice moves nothing."""

from __future__ import annotations

import pandas as pd

NOTHING = {"moves": "nothing"}
KEYS = ("config", "name", "run", "file")  # selector columns tried first, in this order
ROW_KEYS = ("config", "name", "run_id", "request_index", "fact", "test_name")  # what names a row


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
    a, b = _in_order(a), _in_order(b)
    x, y = a[column].astype(object).to_numpy(), b[column].astype(object).to_numpy()
    return pd.Series([not _same(u, v) for u, v in zip(x, y)], index=a.index).sort_index()


def _in_order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows ordered by what names them (configuration, run, fact), else as read: a log line
    that moves earlier does not make every row after it read as moved."""
    keys = [c for c in ROW_KEYS if c in df]
    return df.sort_values(keys, kind="stable", key=lambda s: s.astype(str)) if keys else df


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
    """{columns: [table.column, ...], rows or rows_of: selectors} where the choice lands, or
    NOTHING. Rows are given per table, or per column where a table's columns moved in different
    rows (a rate in some rows, the clock of every later row)."""
    if not moved:
        return dict(NOTHING)
    out = {"columns": [f"{t}.{c}" for t, cols in moved.items() for c in cols]}
    rows = {}
    for t, cols in moved.items():
        rows.update(_table_rows(t, base.get(t, pd.DataFrame()), cols))
    if list(rows) == list(moved) and len(moved) == 1:
        out["rows"] = next(iter(rows.values()))
    elif rows:
        out["rows_of"] = rows
    return out


def _table_rows(table: str, df: pd.DataFrame, cols: dict[str, pd.Series]) -> dict:
    """{table: selector} when its columns moved in the same rows, else {table.column: selector}
    for each column whose moved rows a selector picks (the others: every row)."""
    masks = {c: m.to_numpy() for c, m in cols.items()}
    first = next(iter(masks.values()))
    if all(len(m) == len(first) and (m == first).all() for m in masks.values()):
        sel = _selector(df, cols)
        return {table: sel} if sel else {}
    found = {f"{table}.{c}": _selector(df, {c: m}, exclude=set(cols)) for c, m in cols.items()}
    return {k: v for k, v in found.items() if v}


def _selector(df: pd.DataFrame, cols: dict[str, pd.Series], exclude: set = frozenset()):
    """The rows that moved as selectors: the fewest values of one unmoved column that pick
    exactly them, else a list of (value, values) pairs of two columns; None when every row
    moved or no such columns tell them apart (then the entry covers all rows)."""
    if not len(df) or any(len(m) != len(df) for m in cols.values()):
        return None
    hit = pd.concat(list(cols.values()), axis=1).any(axis=1).to_numpy()
    if hit.all():
        return None
    keys = sorted((c for c in set(df.columns) - set(cols) - set(exclude) if _plain_values(df[c]) is not None),
                  key=lambda c: (c not in KEYS, KEYS.index(c) if c in KEYS else 0, c))
    single = [(c, v) for c in keys if (v := _apart(df[c], hit)) is not None]
    if single:
        c, values = min(single, key=lambda cv: len(cv[1]))
        return {c: values}
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            pairs = _pairs_apart(df[a], df[b], hit)
            if pairs is not None:
                return [{a: [x], b: ys} for x, ys in pairs]
    return None


def _apart(s: pd.Series, hit) -> list | None:
    """The values of `s` in the moved rows, when none of them is in an unmoved row."""
    inside, outside = _plain_values(s[hit]), _plain_values(s[~hit])
    return None if inside is None or set(inside) & set(outside or ()) else sorted(inside, key=str)


def _pairs_apart(a: pd.Series, b: pd.Series, hit, limit: int = 40) -> list | None:
    """[(value of a, [values of b])] of the moved rows, when no unmoved row has such a pair."""
    def pairs(mask) -> set:
        return {(_item(x), _item(y)) for x, y in zip(a[mask].tolist(), b[mask].tolist())}

    inside = pairs(hit)
    if len(inside) > limit or inside & pairs(~hit):
        return None
    grouped = {}
    for x, y in sorted(inside, key=str):
        grouped.setdefault(x, []).append(y)
    return list(grouped.items())


def _item(v):
    return v.item() if hasattr(v, "item") else v


def _plain_values(s: pd.Series) -> list | None:
    """The distinct values of a column as YAML integers or text; None if any is neither."""
    out = []
    for v in s.drop_duplicates():
        if _missing(v) or isinstance(v, (list, dict, tuple)):
            return None
        v = _item(v)
        if not isinstance(v, (str, int)) or isinstance(v, bool):  # measured numbers select no rows
            return None
        out.append(v)
    return out

"""Where a moved generator choice lands in a folder's tidy tables (tools/marks_check.py).

`tidy_diff` compares two folders' tables cell by cell (a missing value equals a missing value,
a fractional number one within a hundred-millionth of itself: `same`); `landing` turns the
cells that moved into an assumptions.yml entry's `columns` and, when only some rows of one table
moved, `rows` (benchbook.study.assumptions), or says that the choice moves nothing."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from benchbook.study.assumptions import ALL, ORDERED, order_groups, ordered_values, positions_text

NOTHING = {"moves": "nothing"}
KEYS = ("config", "name", "run", "file")  # selector columns tried first, in this order
LIMIT = 40  # values (or pairs) one selector lists before it gives way to a cover
GROUPS = ("config", "name", "kind", "run_date", "power_limit_w", "concurrency", "source_file", "gpu_index",
          "fact", "test_name", "origin", "process", "engine")  # what a cover may select on
ROW_KEYS = ("config", "name", "run_id", "request_index", "fact", "test_name")  # what names a row
PLACE_KEYS = ("request_index", "line")  # a row's place among its run's rows, or in its file
UNNAMING = ("serve_args",)  # a configuration's argument line: its configuration selects the same rows


def tidy_diff(base: dict[str, pd.DataFrame], moved: dict[str, pd.DataFrame]) -> dict[str, dict[str, pd.Series]]:
    """table -> {column: mask over the base table's rows of the cells that moved}. In a table whose
    rows came or went, rows are matched by what names them (`_matched`); a base row with no match
    moved in every cell, and so does every row of a table with nothing naming its rows."""
    out = {}
    for name in sorted(base.keys() | moved.keys()):
        a, b = base.get(name, pd.DataFrame()), moved.get(name, pd.DataFrame())
        cols = {c: _column_moved(a, b, c) for c in dict.fromkeys([*a.columns, *b.columns])}
        cols = {c: m for c, m in cols.items() if m.any()}
        if cols:
            out[name] = cols
    return out


def _column_moved(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.Series:
    """A table empty before and after has no cell to move (the 3090 folder has no stats lines);
    rows that came to an empty table, or that all went, moved in every cell."""
    if not len(a) and not len(b):
        return pd.Series(False, index=a.index)
    if column not in a or column not in b or not len(a) or not len(b):
        return pd.Series(True, index=a.index if len(a) else pd.RangeIndex(len(b)))
    if len(a) != len(b):
        return _matched(a, b, column)
    keys = _keys(a, b)
    a, b = _in_order(a, keys), _in_order(b, keys)
    x, y = a[column].astype(object).to_numpy(), b[column].astype(object).to_numpy()
    spread = _spread(a[column])
    return pd.Series([not same(u, v, spread) for u, v in zip(x, y)], index=a.index).sort_index()


def _matched(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.Series:
    """Cells of `column` that moved when rows came or went: each base row is matched to the moved
    table's row of the same name (ROW_KEYS) and the same place among the rows of that name, so a
    restart the move added to one log moves the rows it added, not every row of every log. A base
    row without a match moved; with no column naming rows, every row did."""
    keys = _keys(a, b)
    if not keys:
        return pd.Series(True, index=a.index)

    def named(df: pd.DataFrame) -> pd.Series:
        parts = df[keys].astype(str)
        place = parts.groupby(keys, sort=False).cumcount().astype(str)
        return parts.agg("\x1f".join, axis=1) + "\x1f" + place

    owners = [k for k in keys if k not in PLACE_KEYS] or keys  # what a row belongs to: its run, not its place

    def group(df: pd.DataFrame) -> pd.Series:
        return df[owners].astype(str).agg("\x1f".join, axis=1)

    there = dict(zip(named(b).tolist(), b[column].astype(object).tolist()))
    # a row that went away moved in the cells that differ within its group, not in those its group
    # holds alike (`make marks`: one prompt fewer took a Strix Halo request, and its engine and
    # serve arguments, the configuration's own, read as moved)
    values = b[column].astype(object)
    alike = {g: v.iloc[0] for g, v in values.groupby(group(b), sort=False) if v.astype(str).nunique(dropna=False) == 1}
    missing, spread = object(), _spread(a[column])

    def moved(k: str, g: str, u) -> bool:
        v = there.get(k, missing)
        if v is missing:
            return g not in alike or not same(u, alike[g], spread)
        return not same(u, v, spread)
    out = pd.Series([moved(k, g, u) for k, g, u in zip(named(a).tolist(), group(a).tolist(),
                                                      a[column].astype(object).tolist())], index=a.index)
    return out | _recounted(a, b, column) if column in PLACE_KEYS else out


def _recounted(a: pd.DataFrame, b: pd.DataFrame, column: str = "request_index") -> pd.Series:
    """A row's place in its run (its request index) or its file (its line) moves when rows came to
    or went from that run or file: the row still matches, but the count of rows is what a page's
    ingest report prints (`make marks`: ten prompts per client more took an H100 file from 81
    records read to 89, unmarked; a longer run added six samples at the end of a 3090 GPU log,
    740 lines read to 746, and moved no earlier line)."""
    order = ("source_file", "run_id", "config") if column == "line" else ("run_id", "source_file", "config")
    group = next((c for c in order if c in a and c in b), None)
    if group is None:
        return pd.Series(True, index=a.index)
    before, after = a[group].astype(str), b[group].astype(str).value_counts()
    counts = before.map(before.value_counts())
    return pd.Series((counts != before.map(after).fillna(0)).to_numpy(), index=a.index)


def _keys(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """The columns that name a row in both tables (ROW_KEYS); a run id only where the others do
    not tell rows apart (llama-bench's tests of one build): a bench run's id is its file's name,
    which carries its concurrency and time, so moving those renamed every request, and every
    cell of them read as moved (`make marks`: Strix Halo's server run covered the engine's name)."""
    keys = [c for c in ROW_KEYS if c in a and c in b]
    if "run_id" in keys and len(keys) > 1:
        rest = [c for c in keys if c != "run_id"]
        if a[rest].astype(str).duplicated().sum() == a[keys].astype(str).duplicated().sum():
            return rest
    return keys


def _in_order(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows ordered by what names them (configuration, run, fact), else as read: a log line
    that moves earlier does not make every row after it read as moved."""
    return df.sort_values(keys, kind="stable", key=lambda s: s.astype(str)) if keys else df


NOISE = 1e-8  # relative: a fractional value moved by less than this is the rounding of the file it came from


def same(u, v, spread: float | None = None) -> bool:
    """Equal; fractional numbers within NOISE of each other. A generated file prints its numbers
    to a few decimals, so regenerating it moves a mean of rounded repetitions in its tenth
    significant digit (Strix Halo's `rep_cv` moved the winning pp512 rate from 1387.740928 to
    1387.740929): no page prints that, and counting it marked every best-of figure with a choice
    that cannot move it. Whole numbers (counters, token counts) compare exactly.

    `spread`, the range of the column's values, bounds the scale: a clock read from a large offset
    (request starts near 106,936 s, 20 s apart) moves by a client gap's tenth, 0.2 ms, which is
    two billionths of the clock but a hundred-thousandth of the run."""
    if _missing(u) and _missing(v):
        return True
    if (_fraction(u) or _fraction(v)) and _float(u) and _float(v):
        scale = abs(float(u)) if not spread else min(abs(float(u)), spread)
        return abs(float(u) - float(v)) <= NOISE * scale
    try:
        return bool(u == v)
    except (TypeError, ValueError):
        return repr(u) == repr(v)


def _spread(column: pd.Series) -> float:
    """The range of a column's finite numbers (0 for none or one value)."""
    x = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    x = x[np.isfinite(x)]
    return float(x.max() - x.min()) if len(x) > 1 else 0.0


def _float(v) -> bool:
    return isinstance(v, (float, np.floating)) and math.isfinite(v)


def _fraction(v) -> bool:
    """A finite float that is not a whole number (one side of a comparison is enough: a rate
    written to six decimals regenerates as 1387.999999 or as 1388.0)."""
    return _float(v) and not float(v).is_integer()


def _missing(v) -> bool:
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def landing(base: dict[str, pd.DataFrame], moved: dict[str, dict[str, pd.Series]], ordered: dict | None = None) -> dict:
    """{columns: [table.column, ...], rows or rows_of: selectors, sorted} where the choice lands,
    or NOTHING. Rows are given per table, or per column where a table's columns moved in different
    rows (a rate in some rows, the clock of every later row). `ordered` (sorted_diff) gives where
    it moved sorted values (a run's request latencies, a test's llama-bench rates); it is written
    whenever the choice moves an ORDERED table, empty when it moved no position."""
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
    if ordered is not None and set(ORDERED) & set(moved):
        out["sorted"] = {c: {g: positions_text(p) for g, p in runs.items()} for c, runs in ordered.items()}
    return out


def sorted_diff(base: dict[str, pd.DataFrame], moved: dict[str, pd.DataFrame]) -> dict:
    """table.column -> {distribution: positions moved (or ALL)} of each distribution's values in
    sorted order (ORDERED, order_groups, ordered_values): a quantile rests on a choice when its own
    positions moved, however many rows the choice dealt other values to. A distribution whose
    count of values changed moved ALL."""
    out: dict = {}
    for table in ORDERED:
        a, b = base.get(table, pd.DataFrame()), moved.get(table, pd.DataFrame())
        ga, gb = order_groups(table, a), order_groups(table, b)
        if ga is None or gb is None:
            continue
        vb = ordered_values(table, b)
        for column, x in ordered_values(table, a).items():
            y = vb.get(column, pd.Series(dtype=float))
            spread, key = _spread(x), f"{table}.{column}"
            after = {str(g): np.sort(v.to_numpy(dtype=float)) for g, v in y.groupby(gb[y.index])}
            for group, v in x.groupby(ga[x.index]):
                before, now = np.sort(v.to_numpy(dtype=float)), after.pop(str(group), None)
                if now is None or len(now) != len(before):
                    moved_at = ALL
                else:
                    moved_at = frozenset(i for i, (u, w) in enumerate(zip(before, now)) if not same(u, w, spread))
                if moved_at:
                    out.setdefault(key, {})[str(group)] = moved_at
            for group in after:  # a distribution only the moved folder has
                out.setdefault(key, {})[group] = ALL
    return out


def merged_sorted(a: dict, b: dict) -> dict:
    """Two sorted_diff results as one: a position moved when it moved in either."""
    out = {c: dict(runs) for c, runs in a.items()}
    for c, runs in b.items():
        for g, p in runs.items():
            have = out.setdefault(c, {}).get(g)
            out[c][g] = ALL if ALL in (p, have) else (p | (have or frozenset()))
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
    """The rows that moved as selectors, read on the base table (where the marks are read, so
    a moved column selects as well as any): the fewest values of one column that pick exactly
    them, else (value, values) pairs of two columns; when neither fits in LIMIT values (a
    choice that shifts later random draws moves rows scattered over a run), the rows of the
    fewest runs, configurations or files holding every moved row (`_cover`). None when that
    is every row. `exclude` is kept for callers; every column may select."""
    if not len(df) or any(len(m) != len(df) for m in cols.values()):
        return None
    hit = pd.concat(list(cols.values()), axis=1).any(axis=1).to_numpy()
    if hit.all():
        return None
    keys = sorted((c for c in df.columns if c not in UNNAMING and _plain_values(df[c]) is not None),
                  key=_key_order)
    single = [(c, v) for c in keys if (v := _apart(df[c], hit)) is not None and len(v) <= LIMIT]
    if single:
        c, values = min(single, key=lambda cv: len(cv[1]))
        return {c: values}
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            pairs = _pairs_apart(df[a], df[b], hit)
            if pairs is not None:
                return [{a: [x], b: ys} for x, ys in pairs]
    return _cover(df, hit, [c for c in keys if c in GROUPS])


def _key_order(column: str) -> tuple:
    """KEYS first, then what names a run's kind and place in the write-up (GROUPS), then the
    rest. A tie goes to the earlier: `kind: [sweep]` selects the H100 sweep as well as
    `input_len: [4096]`, but another choice (`sweep_lengths`) moves the input length, and with
    it every mark that selected by it (make marks: the small-samples caveat lost
    `prompts_per_slot` when `sweep_lengths` moved)."""
    return (column not in KEYS, column not in GROUPS,
            KEYS.index(column) if column in KEYS else GROUPS.index(column) if column in GROUPS else 0, column)


def _cover(df: pd.DataFrame, hit, groups: list[str]):
    """The selector of one or two group columns whose rows hold every moved row and the
    fewest others; None when every such cover is the whole table."""
    best, extra = None, int((~hit).sum())
    for i, a in enumerate(groups):
        for b in [None, *groups[i + 1:]]:
            picked = _group_rows(df, hit, a, b)
            more = int((picked & ~hit).sum())
            if more < extra:
                best, extra = (a, b), more
    if best is None:
        return None
    a, b = best
    if b is None:
        return {a: sorted(_plain_values(df[a][hit]), key=str)}
    pairs = _grouped({(_item(x), _item(y)) for x, y in zip(df[a][hit].tolist(), df[b][hit].tolist())})
    return [{a: [x], b: ys} for x, ys in pairs]


def _group_rows(df: pd.DataFrame, hit, a: str, b: str | None):
    """Rows sharing a moved row's value of `a` (and of `b`)."""
    if b is None:
        return df[a].isin(set(df[a][hit].tolist())).to_numpy()
    keys = pd.Series(list(zip(df[a].tolist(), df[b].tolist())))
    return keys.isin(set(keys[hit].tolist())).to_numpy()


def _apart(s: pd.Series, hit) -> list | None:
    """The values of `s` in the moved rows, when none of them is in an unmoved row."""
    inside, outside = _plain_values(s[hit]), _plain_values(s[~hit])
    return None if inside is None or set(inside) & set(outside or ()) else sorted(inside, key=str)


def _pairs_apart(a: pd.Series, b: pd.Series, hit, limit: int = LIMIT) -> list | None:
    """[(value of a, [values of b])] of the moved rows, when no unmoved row has such a pair."""
    def pairs(mask) -> set:
        return {(_item(x), _item(y)) for x, y in zip(a[mask].tolist(), b[mask].tolist())}

    inside = pairs(hit)
    if len(inside) > limit or inside & pairs(~hit):
        return None
    return _grouped(inside)


def _grouped(pairs: set) -> list:
    """[(a, [b, ...])] of (a, b) pairs, in order."""
    grouped = {}
    for x, y in sorted(pairs, key=str):
        grouped.setdefault(_item(x), []).append(_item(y))
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


def relanded(base: dict[str, pd.DataFrame], choice: str, entry: dict) -> dict:
    """A recorded landing with its rows written again by the current selectors: the cells its
    old selectors pick on the base tables are taken as the cells that moved (no choice is moved
    again), so a change to how rows are written needs no new run of the check."""
    from benchbook.study.assumptions import _entry, row_mask

    if not entry.get("columns"):
        return dict(entry)
    a = _entry({"id": choice, "value": None, "why": "", **entry}, choice)
    moved: dict = {}
    for column in a.columns:
        table, col = column.split(".", 1)
        df = base.get(table, pd.DataFrame())
        mask = row_mask(df, a, table, col) if len(df) else pd.Series(True, index=pd.RangeIndex(1))
        moved.setdefault(table, {})[col] = mask
    out = landing(base, moved)
    if "sorted" in entry and set(ORDERED) & set(moved):  # where it moves sorted values is kept as found
        out["sorted"] = entry["sorted"]
    return out

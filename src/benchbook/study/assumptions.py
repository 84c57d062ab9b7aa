"""What a data generator assumed: the values a reconstructed folder holds that the write-up
never published.

A reconstructed data folder carries `assumptions.yml`, written by its generator: one entry
per choice (`id`, `value`, `why`), the tidy-table columns the choice lands in (`columns`,
as `table.column`) and, when it covers only some rows of them, which (`rows`: a mapping
from a column of the same table to the values it matches, or a list of such mappings, any
of which may match; all rows when absent; `rows_of`: such rows per table or per
`table.column`, for an entry whose columns span several tables or whose columns moved in
different rows, a table or column it does not name covered in every row; `sorted`: for a
distribution a page reads order statistics of, such as a run's request TTFTs, the positions of
each run's sorted values the choice moved). A chapter
section whose declared columns meet an entry's rests on that choice, and every displayed
cell, figure series, glued number and claim computed from a cell it covers is marked
(`assumed_ids`), so an assumption never reads as a finding. A measured folder has no such
file, and nothing of it is marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..ingest.llama_bench import test_name
from ..ingest.textio import load_yaml
from .marks import union

FILE = "assumptions.yml"
Selector = tuple[tuple[str, tuple], ...]  # ((column, (value, ...)), ...): every column matches


class AssumptionsError(ValueError):
    pass


@dataclass(frozen=True)
class Assumption:
    id: str
    value: object
    why: str
    columns: tuple[str, ...] = ()  # table.column the value lands in; empty: only the files' texture
    rows: tuple[Selector, ...] = ()  # the rows of those columns it covers (any selector); empty: all
    rows_of: tuple[tuple[str, tuple[Selector, ...]], ...] = ()  # (table or table.column, its rows), over `rows`
    # (table.column, ((run, sorted positions moved or ALL), ...)): where it moves a distribution's order;
    # None where the check did not say (a column it does not name then moved no position)
    sorted_of: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] | None = None

    def tables(self) -> set[str]:
        return {c.split(".", 1)[0] for c in self.columns}


def load_assumptions(root: str | Path) -> list[Assumption]:
    """The folder's assumptions (none when it has no assumptions.yml)."""
    path = Path(root) / FILE
    if not path.is_file():
        return []
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise AssumptionsError(f"{path}: not valid YAML ({exc})") from exc
    entries = (doc or {}).get("assumptions") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise AssumptionsError(f"{path}: expected a mapping with an 'assumptions' list")
    return [_entry(e, f"{path}: assumptions[{i}]") for i, e in enumerate(entries)]


def _entry(e, where: str) -> Assumption:
    if not isinstance(e, dict) or not {"id", "value", "why"} <= set(e):
        raise AssumptionsError(f"{where}: expected a mapping with id, value and why")
    where = f"{where} ({e['id']})"
    cols = e.get("columns") or []
    if not isinstance(cols, list):
        raise AssumptionsError(f"{where}: columns: expected a list of 'table.column', got {cols!r}")
    bad = [c for c in cols if not isinstance(c, str) or c.count(".") != 1]
    if bad:
        raise AssumptionsError(f"{where}: columns {bad}; expected 'table.column'")
    rows = parse_rows(e.get("rows"), tuple(cols), where)
    return Assumption(str(e["id"]), e["value"], str(e["why"]), tuple(cols), rows, _rows_of(e, tuple(cols), where),
                      _sorted_of(e.get("sorted"), where))


# ---- where a choice moves a distribution's order ---------------------------------------

# Order statistics a page prints (a run's P95 TTFT or median per-request rate, a test's best and
# worst llama.cpp build) rest on the values at their own positions of the sorted values, not on
# every row. A choice can move many rows and leave those positions alone: the H100 generator's
# extreme jitter moves the fastest and slowest requests and deals the other latencies to other
# requests, so every request's TTFT moved and no P95 did; which Strix Halo build wins a test swaps
# rates between builds and moves neither the best rate nor the worst. `sorted` in an entry says
# which positions moved, per table.column and distribution (order_groups).
ORDERED = ("requests", "llama_bench")
ALL = "all"  # every position: the distribution gained or lost values


def order_groups(table: str, df: pd.DataFrame) -> pd.Series | None:
    """Which distribution each row of an ORDERED table is in: a request's run (its `name`), a
    llama-bench row's test ('pp512', 'tg128 @ d4096'); None where the frame cannot say."""
    if table == "requests" and "name" in df:
        return df["name"].astype(str)
    if table == "llama_bench" and {"n_prompt", "n_gen"} <= set(df.columns):
        return df.apply(test_name, axis=1).astype(str) if len(df) else pd.Series(dtype=str)
    return None


def ordered_values(table: str, df: pd.DataFrame) -> dict[str, pd.Series]:
    """Column -> the values a page takes order statistics of (indexed like the table): a requests
    table's successful requests' TTFT, TPOT, end-to-end latency and per-request rate (output
    tokens ÷ end-to-end latency); a llama-bench table's measured rates."""
    if not len(df):
        return {}
    if table == "llama_bench" and "avg_ts" in df:
        measured = df["status"].astype(object).ne("failed") if "status" in df else pd.Series(True, index=df.index)
        return {"avg_ts": pd.to_numeric(df.loc[measured, "avg_ts"], errors="coerce").dropna()}
    if table != "requests" or "ok" not in df:
        return {}
    ok = df[df["ok"].fillna(False).astype(bool)]
    out = {c: pd.to_numeric(ok[c], errors="coerce").dropna() for c in ("ttft_s", "tpot_s", "e2el_s") if c in ok}
    if {"output_tokens", "e2el_s"} <= set(ok.columns):
        timed = ok[pd.to_numeric(ok["e2el_s"], errors="coerce") > 0]
        out["per_request_tps"] = (timed["output_tokens"] / timed["e2el_s"]).astype("float64").dropna()
    return out


def _sorted_of(found, where: str) -> tuple | None:
    if found is None:
        return None
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise AssumptionsError(f"{where}: sorted: expected table.column -> run -> positions ('0-2 157')")
    return tuple((str(col), tuple((str(g), parse_positions(t, f"{where}: sorted.{col}.{g}")) for g, t in runs.items()))
                 for col, runs in found.items())


def parse_positions(text, where: str = "positions"):
    """'0-2 157 159' -> frozenset({0, 1, 2, 157, 159}); 'all' -> ALL."""
    if str(text).strip() == ALL:
        return ALL
    out = set()
    for part in str(text).split():
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise AssumptionsError(f"{where}: {text!r}: expected positions such as '0-2 157' or 'all'")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def positions_text(positions) -> str:
    """The inverse of parse_positions: runs of consecutive positions as 'a-b'."""
    if positions == ALL:
        return ALL
    out, run = [], []
    for p in sorted(positions):
        if run and p != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(p)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return " ".join(out)


def order_ids(assumed: list[Assumption], key: str, group, n: int, q: float, rows: tuple = ()) -> tuple:
    """The ids the q-quantile (numpy's linear, pandas' median; 0 the least, 1 the greatest) of a
    distribution's n values of `key` (table.column of an ORDERED table) rests on: an entry that
    says where it moves sorted values counts when one of the quantile's two positions moved (a
    key or distribution it does not name moved none); one that does not say falls back on the
    distribution's rows (`rows`: the ids they hold)."""
    if n <= 0:
        return ()
    at = q * (n - 1)
    mine = {int(np.floor(at)), int(np.ceil(at))}
    out = []
    for a in assumed:
        if a.sorted_of is None:
            if a.id in rows:
                out.append(a.id)
            continue
        moved = dict(dict(a.sorted_of).get(key, ())).get(str(group))
        if moved is not None and (moved == ALL or moved & mine):
            out.append(a.id)
    return union(tuple(out))


def _rows_of(e: dict, columns: tuple[str, ...], where: str) -> tuple:
    """`rows_of`: table or table.column -> the rows of it the entry covers."""
    found = e.get("rows_of")
    if found is None:
        return ()
    if "rows" in e or not isinstance(found, dict):
        raise AssumptionsError(f"{where}: rows_of: expected a mapping from a table to its rows, without rows")
    tables = {c.split(".", 1)[0] for c in columns}
    stray = sorted(k for k in found if k not in tables and k not in columns)
    if stray:
        raise AssumptionsError(f"{where}: rows_of names {', '.join(map(str, stray))}, "
                               "a table none of its columns is in")
    return tuple((t, parse_rows(rows, tuple(c for c in columns if c == t or c.startswith(f"{t}.")),
                                f"{where}: rows_of.{t}")) for t, rows in found.items())


def parse_rows(rows, columns: tuple[str, ...], where: str) -> tuple[Selector, ...]:
    """An entry's `rows` as selectors; a clear error naming the entry and the key otherwise.

    Rows are matched on one table, so an entry with `rows` names columns of one table only."""
    if rows is None:
        return ()
    if not columns:
        raise AssumptionsError(f"{where}: rows given but no columns: rows select cells of the columns")
    tables = sorted({c.split(".", 1)[0] for c in columns})
    if len(tables) > 1:
        raise AssumptionsError(f"{where}: rows select rows of one table, but columns name {', '.join(tables)}")
    items = rows if isinstance(rows, list) else [rows]
    if not items:
        raise AssumptionsError(f"{where}: rows: an empty list selects nothing; leave rows out for all rows")
    return tuple(_selector(s, f"{where}: rows" + (f"[{i}]" if isinstance(rows, list) else ""))
                 for i, s in enumerate(items))


def _selector(sel, where: str) -> Selector:
    if not isinstance(sel, dict) or not sel:
        raise AssumptionsError(f"{where}: expected a mapping from a column to the list of values it matches, "
                               f"got {sel!r}")
    out = []
    for col, values in sel.items():
        if not isinstance(col, str) or not col:
            raise AssumptionsError(f"{where}: key {col!r}: expected a column name")
        if not isinstance(values, list) or not values:
            raise AssumptionsError(f"{where}.{col}: expected a non-empty list of values, got {values!r}")
        odd = [v for v in values if isinstance(v, (list, dict)) or v is None]
        if odd:
            raise AssumptionsError(f"{where}.{col}: values must be numbers or text, got {odd!r}")
        out.append((col, tuple(values)))
    return tuple(out)


def resting_on(assumed: list[Assumption], columns) -> list[Assumption]:
    """The assumptions whose columns meet these (a section's declared columns)."""
    wanted = set(columns)
    return [a for a in assumed if wanted & set(a.columns)]


# ---- which cells of a table an assumption covers ------------------------------------


class _Rows:
    """Masks of one frame's rows, kept per selector: the entries of a folder select on a few
    columns with the same values over and over (one entry per model, per power limit), and
    a power-sweep GPU log has 100,000 rows, so each column is read as text and as numbers
    once and each selector matched once."""

    def __init__(self, df: pd.DataFrame):
        self.df = df
        self._text: dict = {}
        self._numbers: dict = {}
        self._masks: dict = {}  # (column, values) -> rows matching
        self._selected: dict = {}  # selectors -> rows any of them selects

    def matches(self, column: str, values: tuple) -> np.ndarray:
        """Rows whose value is one of these: numbers compare as numbers (1 matches 1.0), text as text."""
        key = (column, values)
        if key not in self._masks:
            series = self.df[column]
            if column not in self._text:
                self._text[column] = series.astype(str)
            hit = self._text[column].isin([str(v) for v in values]).to_numpy(dtype=bool, na_value=False)
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if numbers:
                if column not in self._numbers:
                    self._numbers[column] = pd.to_numeric(series, errors="coerce")
                hit = hit | self._numbers[column].isin(numbers).to_numpy(dtype=bool, na_value=False)
            self._masks[key] = hit
        return self._masks[key]

    def any_of(self, selectors: tuple[Selector, ...], a: Assumption, table: str) -> np.ndarray:
        if selectors not in self._selected:
            out = np.zeros(len(self.df), dtype=bool)
            for sel in selectors:
                missing = [c for c, _ in sel if c not in self.df.columns]
                if missing:
                    if not len(self.df):
                        continue
                    raise AssumptionsError(
                        f"assumption {a.id}: rows select on {', '.join(missing)}, which the {table} frame "
                        f"given has no column for (it has {', '.join(map(str, self.df.columns))})")
                hit = np.ones(len(self.df), dtype=bool)
                for col, values in sel:
                    hit &= self.matches(col, values)
                out |= hit
            self._selected[selectors] = out
        return self._selected[selectors]


def _selectors(a: Assumption, table: str, column: str | None) -> tuple[Selector, ...]:
    per = dict(a.rows_of)
    return per.get(f"{table}.{column}", per.get(table, a.rows))


def row_mask(df: pd.DataFrame, a: Assumption, table: str, column: str | None = None) -> pd.Series:
    """The rows of `df` (a frame of tidy table `table`) that assumption `a` covers (in `column`,
    when its rows are given per column)."""
    selectors = _selectors(a, table, column)
    if not selectors:
        return pd.Series(True, index=df.index)
    return pd.Series(_Rows(df).any_of(selectors, a, table), index=df.index)


def assumed_ids(df: pd.DataFrame, table: str, assumed: list[Assumption], derived: dict | None = None,
                columns=None) -> pd.DataFrame:
    """Per cell of `df` (a frame of tidy table `table`), the ids of the assumptions it holds
    (a sorted tuple, empty for none), aligned with `df`. `derived` maps a
    column computed from others of the same row to those columns: it holds what they hold.
    `columns`: only these of `df`'s columns (all by default).

    Which assumptions cover a cell is kept as one boolean per (row, assumption) and turned into
    id tuples once per distinct pattern: a frame has many rows and few patterns."""
    hits: dict[str, dict[int, np.ndarray]] = {c: {} for c in df.columns}
    rows = _Rows(df)
    for k, a in enumerate(assumed if len(df) else ()):
        for c in _columns_in(a, table):
            if c in hits:
                selectors = _selectors(a, table, c)
                hits[c][k] = rows.any_of(selectors, a, table) if selectors else np.ones(len(df), dtype=bool)
    for col, sources in (derived or {}).items():
        found = [hits[s] for s in sources if s in hits]
        if col in hits and found:
            merged: dict[int, np.ndarray] = {}
            for f in found:
                for k, hit in f.items():
                    merged[k] = merged[k] | hit if k in merged else hit
            hits[col] = merged
    wanted = list(df.columns) if columns is None else [c for c in columns if c in hits]
    cells = {c: _tuples(hits[c], assumed, len(df)) for c in wanted}
    return pd.DataFrame(cells, index=df.index, columns=wanted, dtype=object)


def _tuples(hits: dict[int, np.ndarray], assumed: list[Assumption], n: int) -> list:
    """Each row's ids from its (row, assumption) booleans."""
    if not hits:
        return [()] * n
    order = sorted(hits)
    matrix = np.column_stack([hits[k] for k in order])
    if len(order) < 63:  # each row's pattern as one integer: a 1-d unique is many times faster
        codes, inverse = np.unique(matrix.astype(np.int64) @ (np.int64(1) << np.arange(len(order))),
                                   return_inverse=True)
        patterns = [[bool(int(c) >> j & 1) for j in range(len(order))] for c in codes]
    else:
        patterns, inverse = np.unique(matrix, axis=0, return_inverse=True)
    ids = [union(tuple(assumed[order[j]].id for j in np.flatnonzero(p))) for p in patterns]
    return [ids[i] for i in inverse.reshape(-1)]


def _columns_in(a: Assumption, table: str) -> list[str]:
    """The columns of `table` an assumption lands in, each once."""
    return list(dict.fromkeys(c.split(".", 1)[1] for c in a.columns if c.split(".", 1)[0] == table))


def assumed_cells(df: pd.DataFrame, table: str, assumed: list[Assumption], derived: dict | None = None) -> pd.DataFrame:
    """A boolean mask aligned with `df`: True where a cell holds a generator's choice."""
    return assumed_ids(df, table, assumed, derived).map(bool).astype(bool)

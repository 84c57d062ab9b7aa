"""Marking what rests on a data generator's assumption, cell by cell.

A reconstructed folder's `assumptions.yml` says which cells of its tidy tables hold a value
the generator chose (benchbook.study.assumptions). Everything a page shows is computed from those
cells, so the marks follow the computation rather than a hand-kept list:

- `Cells`: the assumption ids each cell of a frame holds, and what each id means (from
  `ChapterResults.cells`); empty on measured data, so nothing there is ever marked;
- `Col` and `table`: a displayed table built column by column from tidy columns (source
  column(s) + formatter), carrying each shown cell's ids to `report.html`, which puts the
  marker in the cell and the legend under the table; a value computed from several cells
  (a mean over seeds, a ratio) holds what any of them holds (`Cells.group`, `union`);
- `values`: the same for named values (`run_values`), which claims, glued numbers and
  value tables read;
- `Glued`: glued numbers with the ids of the cells each was computed from.

The marker is a small raised 'ᵃ' whose title names the assumptions, kept on one line with
the end of its value (`marked_html`); the legend line reads "ᵃ assumed: not in the
write-up" followed by each id and the first clause of its reason. A page shows one legend
per section (`legend_items`, `merge_legends`, `replace_legends`, applied by
benchbook.site.runner), listing every assumption marked in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

import pandas as pd

SYMBOL = "ᵃ"
LEGEND = "assumed: not in the write-up"
TITLE = "assumed"  # a marker's title: 'assumed: id; id'
MARKS = "benchbook_assumed"  # DataFrame.attrs key: {column: {index label: [ids]}}
WHY = "benchbook_assumed_why"  # DataFrame.attrs key: {id: why}
SERIES = " (assumed)"  # a figure series drawn from assumed cells only
SERIES_PART = " (partly assumed)"  # a figure series some of whose points are assumed

Ids = tuple  # assumption ids, each once, sorted


def union(*groups) -> Ids:
    """Ids of several cells, each once, sorted: the order the computation met them in depends
    on set iteration (a claim's value names), which changes from run to run, and the
    downloads must be the same bytes every run."""
    return tuple(sorted({i for g in groups if g for i in g}))


def short(why: str, limit: int = 110) -> str:
    """The first clause of an assumption's reason, for a one-line legend."""
    head = re.split(r"[:;(]", why, maxsplit=1)[0].strip()
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


@dataclass
class Cells:
    """Per cell of a frame, the ids of the assumptions it holds (aligned by index label)."""

    ids: pd.DataFrame = field(default_factory=pd.DataFrame)
    why: dict = field(default_factory=dict)

    def _column(self, column: str) -> pd.Series | None:
        return self.ids[column] if column in self.ids.columns else None

    def at(self, label, column: str) -> Ids:
        col = self._column(column)
        if col is None or label not in col.index:
            return ()
        return col.loc[label] if not isinstance(col.loc[label], pd.Series) else union(*col.loc[label])

    def union(self, columns, rows=None) -> Ids:
        """Ids held by any of these columns' cells in `rows` (index labels; all rows if None)."""
        out = []
        for c in [columns] if isinstance(columns, str) else columns:
            col = self._column(c)
            if col is not None:
                out += list(col if rows is None else col.reindex(list(rows)).dropna())
        return union(*out)

    def row(self, label, columns) -> Ids:
        """Ids of these columns in one row."""
        return union(*(self.at(label, c) for c in ([columns] if isinstance(columns, str) else columns)))

    def group(self, frame: pd.DataFrame, by) -> Cells:
        """Cells of `frame.groupby(by)`'s result: each group holds what any of its rows holds."""
        if not len(frame) or self.ids.empty:
            return Cells(pd.DataFrame(), self.why)
        keys = frame[by] if isinstance(by, str) else [frame[b] for b in by]
        ids = self.ids.reindex(frame.index)
        ids = ids.map(lambda v: v if isinstance(v, tuple) else ())
        out = ids.groupby(keys, sort=False).agg(lambda s: union(*s))
        return Cells(out, self.why)

    def per_group(self, frame: pd.DataFrame, by, columns) -> dict:
        """Index label -> ids of `columns` over the label's whole group (a value computed
        from its group, e.g. a share of the group's best, holds what the group holds)."""
        if not self:
            return {}
        grouped = self.group(frame, by)
        keys = frame[by] if isinstance(by, str) else list(zip(*(frame[b] for b in by)))
        return {label: grouped.row(key, columns) for label, key in zip(frame.index, keys)}

    def assign(self, column: str, ids: dict) -> Cells:
        """These cells with `column` holding the given ids (label -> ids), e.g. for a column
        computed from a group of rows."""
        if not ids and column not in self.ids.columns:
            return self
        out = self.ids.copy() if len(self.ids) else pd.DataFrame(index=list(ids), dtype=object)
        out[column] = [tuple(ids.get(label, ())) for label in out.index]
        return Cells(out, self.why)

    def __bool__(self) -> bool:
        return bool(len(self.ids)) and bool(self.ids.map(bool).to_numpy().any())


NONE = Cells()


@dataclass(frozen=True)
class Col:
    """A displayed column: the tidy column(s) its value reads and how it is shown. With
    several sources `fmt` gets the row's values in order; without `fmt` the value is shown
    as it is. `reads` are further columns of the row the value rests on."""

    source: str | tuple[str, ...]
    fmt: Callable | None = None
    reads: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        return (self.source,) if isinstance(self.source, str) else tuple(self.source)


def as_int(v):
    """A count shown as an integer ('–' when missing)."""
    return "–" if v is None or pd.isna(v) else int(v)


def table(frame: pd.DataFrame, cols: dict[str, Col], cells: Cells | None = None) -> pd.DataFrame:
    """A displayed table built from `frame` column by column; each shown cell carries the
    ids of the source cells it was computed from (attrs, read by report.html)."""
    cells = cells or NONE
    out, marks = {}, {}
    for header, col in cols.items():
        src = [frame[s].tolist() for s in col.sources]
        if len(src) == 1:
            out[header] = [col.fmt(v) if col.fmt else v for v in src[0]]
        else:
            out[header] = [col.fmt(*vals) if col.fmt else vals for vals in zip(*src)]
        marks[header] = {i: cells.row(label, col.sources + col.reads) for i, label in enumerate(frame.index)}
    df = pd.DataFrame(out, index=pd.RangeIndex(len(frame)), columns=list(cols))
    return with_marks(df, marks, cells.why)


@dataclass(frozen=True)
class Shown:
    """A value of a table built row by row, with the ids of the cells it was computed from."""

    value: object
    ids: Ids = ()


def rows_table(rows: list[dict], why: dict, columns=None) -> pd.DataFrame:
    """A displayed table from rows of values, some of them `Shown` (marked where they hold ids)."""
    plain = [{k: v.value if isinstance(v, Shown) else v for k, v in row.items()} for row in rows]
    df = pd.DataFrame(plain, columns=columns)
    marks = {}
    for i, row in enumerate(rows):
        for k, v in row.items():
            if isinstance(v, Shown) and v.ids:
                marks.setdefault(k, {})[i] = v.ids
    return with_marks(df, marks, why)


class Shared(dict):
    """A frame's marks, shared by every frame computed from it rather than copied: pandas
    deep-copies `attrs` on every operation (DataFrame.__finalize__), which cost the synthesis
    page a third of its run. Marks are never changed in place, only replaced."""

    def __deepcopy__(self, memo):
        return self


def with_marks(df: pd.DataFrame, marks: dict, why: dict) -> pd.DataFrame:
    """`df` with per-cell ids ({column: {index label: ids}}) for report.html; cells with none
    are left out, and so is everything on data without assumptions."""
    kept = {c: {k: list(union(v)) for k, v in m.items() if v} for c, m in marks.items()}
    kept = {c: m for c, m in kept.items() if m}
    used = {i for m in kept.values() for v in m.values() for i in v}
    df.attrs[MARKS] = Shared(kept)
    df.attrs[WHY] = Shared({i: w for i, w in why.items() if i in used})
    return df


def tagged(frame: pd.DataFrame, cells: Cells) -> pd.DataFrame:
    """`frame` with a fresh RangeIndex, each cell carrying its ids (for figures and tables
    built from it later)."""
    out = frame.reset_index(drop=True)
    marks = {c: {i: cells.at(label, c) for i, label in enumerate(frame.index)} for c in frame.columns}
    return with_marks(out, marks, cells.why)


def series(data: pd.DataFrame, by, columns) -> dict:
    """Per series of a figure (a group of `data` by `by`), (ids, every point assumed) of the
    cells its points were drawn from (`columns`); series without any are left out."""
    found = cell_ids(data)
    if not found or not len(data):
        return {}
    out = {}
    for key, g in data.groupby(by, sort=False):
        points = [union(*(found.get((label, c), ()) for c in columns)) for label in g.index]
        if any(points):
            out[key] = (union(*points), all(points))
    return out


def carried(df: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    """`df` with the marks of `source` (after an operation that drops attrs, e.g. concat
    with unmarked rows; index labels and column names must be the same)."""
    df.attrs[MARKS] = Shared(source.attrs.get(MARKS, {}))
    df.attrs[WHY] = Shared(source.attrs.get(WHY, {}))
    return df


def cell_ids(df: pd.DataFrame) -> dict:
    """(index label, column) -> ids of a display frame's marked cells."""
    return {(label, c): tuple(v) for c, m in (df.attrs.get(MARKS) or {}).items() for label, v in m.items()}


# ---- named values -------------------------------------------------------------------


def run_value_ids(runs: pd.DataFrame, cells: Cells, metrics) -> dict[str, Ids]:
    """Ids behind each `<key>_<metric>` value (benchbook.analysis.serving.run_values)."""
    by = "key" if "key" in runs else "name"
    out = {}
    for label, name in zip(runs.index, runs[by] if by in runs else []):
        if name is None or name is pd.NA or (isinstance(name, float) and name != name):
            continue
        for metric in metrics:
            ids = cells.at(label, metric)
            if ids:
                out[f"{name}_{metric}"] = ids
    return out


def value_ids(values: dict, names) -> Ids:
    """Ids behind any of these value names (a ratio of two values holds what either holds)."""
    return union(*(values.get(n, ()) for n in names))


# ---- glued numbers ------------------------------------------------------------------


class Glued(dict):
    """A chapter's glued values, with the ids of the cells each was computed from.

    `cell(key, value, ids)` records a value read from cells; `of(key, value, *keys)` one
    computed from other glued values. report.glue_all puts the ids beside the glued
    output, and the build marks each `{glue:text}` reference to such a key."""

    def __init__(self, why: dict | None = None):
        super().__init__()
        self.assumed: dict[str, Ids] = {}
        self.why: dict[str, str] = dict(why or {})

    def cell(self, key: str, value, ids: Ids = ()):
        self[key] = value
        if ids:
            self.assumed[key] = union(self.assumed.get(key, ()), ids)
        return value

    def of(self, key: str, value, *keys: str):
        return self.cell(key, value, union(*(self.assumed.get(k, ()) for k in keys)))

    def update(self, other=(), **kw):
        super().update(other, **kw)
        if isinstance(other, Glued):
            self.assumed.update(other.assumed)
            self.why.update(other.why)

    def payload(self, key: str) -> list[dict]:
        """[{id, why}] of the assumptions behind a key (empty: none)."""
        return [{"id": i, "why": self.why.get(i, "")} for i in union(self.assumed.get(key, ()))]


# ---- HTML ---------------------------------------------------------------------------


def marker_html(ids, why: dict | None = None) -> str:
    """The raised marker after a value, as short as it can be (a page marks hundreds of values
    and must stay light on a phone): its title names the assumptions, 'assumed: id; id'; what
    each means is said once, in the legend of its part of the page (`why` is read there)."""
    return (f'<span class="benchbook-assumed-mark" title="{TITLE}: {escape("; ".join(union(ids)))}">'
            f"{SYMBOL}</span>")


def title_ids(title: str) -> tuple:
    """The ids a marker's title names (marker_html)."""
    return tuple(i.strip() for i in title.removeprefix(f"{TITLE}:").split(";") if i.strip())


def marked_html(value_html: str, ids, why: dict | None = None) -> str:
    """A value (HTML or Markdown) followed by its marker, the marker never on a line of its
    own: the value's last word and the marker share a no-wrap span (a long value still
    wraps before that word). A last word inside markup (a link, code) cannot be split
    from it: a word joiner (U+2060) then holds the marker to it. Without ids the value is
    returned as it is."""
    value_html = str(value_html)
    if not ids:
        return value_html
    head, sep, last = value_html.rpartition(" ")
    # markup, a code span or a glue role (whose pasted text may be a whole phrase) is not split:
    # a no-wrap span around it would keep a long phrase on one line, wider than a phone
    if any(c in last for c in "<>`*_"):
        return f"{value_html}\u2060{marker_html(ids, why)}"
    return f'{head}{sep}<span class="benchbook-marked">{last}{marker_html(ids, why)}</span>'


def _items(ids, why: dict, name=str, text=str) -> str:
    """Each assumption once, with the first clause of its reason: 'id (why); id (why)'
    (`name` and `text` shape the id and the clause, e.g. as HTML)."""
    return "; ".join(name(i) + (f" ({text(short(why[i]))})" if why.get(i) else "") for i in dict.fromkeys(ids))


def figure_legend_text(ids, why: dict) -> str:
    """The caption line of a figure with series drawn from assumed cells."""
    return (f"{SYMBOL} {LEGEND}: series labelled (assumed) or (partly assumed) are drawn from values the "
            f"data generator chose where the write-up printed none: {_items(ids, why)}. They are not a finding.")


def legend_html(ids, why: dict) -> str:
    """The line under a table or paragraph with a marked value: what the marker means and
    which assumptions it stands for."""
    def code(i) -> str:
        return f"<code>{escape(str(i))}</code>"

    return _legend_paragraph([_items([i], why, code, escape) for i in dict.fromkeys(ids)])


def _legend_paragraph(items: list[str]) -> str:
    return (f'<p class="benchbook-assumed-legend"><span class="benchbook-assumed-mark">{SYMBOL}</span> '
            f"{escape(LEGEND)}. A value so marked was computed from values the data generator chose where the "
            f"write-up printed none: {'; '.join(items)}. It is not a finding.</p>")


LEGEND_PARAGRAPH = re.compile(r'\n*<p class="benchbook-assumed-legend">.*?</p>', re.S)
_ITEM = re.compile(r"<code>.*?(?=; <code>|\. It is not a finding\.</p>)", re.S)  # '<code>id</code> (why)'


def legend_items(text: str) -> list[str]:
    """The items (one per assumption, as HTML) of every legend line in `text`: each starts with
    its id's <code> (no wrapping element: a page carries many legends and must stay light)."""
    return [item for p in LEGEND_PARAGRAPH.findall(text) for item in _ITEM.findall(p)]


def replace_legends(text: str, legend: str = "") -> str:
    """`text` with its first legend line replaced by `legend` and the others taken out."""
    first = iter([True])
    return LEGEND_PARAGRAPH.sub(lambda m: ("\n\n" + legend if legend else "") if next(first, False) else "", text)


def merge_legends(items: list[str]) -> str:
    """One legend line for all these items (each once, in first-seen order); '' for none."""
    return _legend_paragraph(list(dict.fromkeys(items))) if items else ""

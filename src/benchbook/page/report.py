"""Showing tables in a chapter: readable units, no index, and CSV downloads."""

from __future__ import annotations

import re
import zipfile
from base64 import b64encode
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from pandas.io.formats.style import Styler

from ..book.headlines import key_results as rows
from ..book.paths import find_repo
from ..format import fmt_cell, fmt_pct, is_missing, is_numeric_text
from ..ingest.parquet import to_polars
from ..ledger.claims import (
    BY_CONSTRUCTION,
    GENERATOR,
    HOLDS,
    INDEPENDENT,
    MEASURED,
    SELF,
    basis_counts,
    published_layout,
)
from ..study import marks, untrusted
from ..study.assumptions import load_assumptions
from ..study.contract import open_roles
from ..study.provenance import folder_links, repository
from .render import renderings

if TYPE_CHECKING:
    from IPython.display import HTML


SHORT = 12  # characters: a table cell this short is never wrapped
POSITION_CLASSES = re.compile(r'class="data row\d+ col\d+')  # the Styler's, on each data cell
FOLD_ROWS = 30  # a table with more rows is folded (about three phone screens of rows)


def _visible_text(v):
    """A text cell with control and direction characters shown (numbers are left alone)."""
    return untrusted.visible(v) if isinstance(v, str) else v


def html(df: pd.DataFrame, caption: str | None = None, wide: tuple[str, ...] = (),
         markup: tuple[str, ...] = (), collapsed: bool | None = None, filterable: bool = False):
    """A DataFrame as an HTML table without the index.

    Cell text is HTML-escaped (data can hold `<<EOF` or worse); columns named in `markup`
    hold HTML the library built itself (links) and are left as they are. `wide` columns get
    room for prose. A table without rows is never shown empty: a line says there is
    nothing of that kind in this data. `collapsed` folds the table under a line that says
    what it is and how many rows it has (reference tables a reader opens on purpose). By
    default a table of more than FOLD_ROWS rows is folded so, keeping its caption inside the
    fold: a page of 500 rows is 50 phone screens. A `filterable` table (a claims ledger, whose
    rows links point at) is never folded by default: its search box and filters shorten it.
    `filterable` lets DataTables sort, search and filter it (benchbook-enhance.js).
    """
    import hashlib

    from IPython.display import HTML

    if not len(df):
        return HTML(f'<p class="benchbook-empty"><em>{untrusted.html(caption or "Table")}: none in this data.</em></p>')
    folded = len(df) > FOLD_ROWS and not filterable if collapsed is None else collapsed
    marked = _marked_cells(df)
    uid = hashlib.sha1(f"{caption}{list(df.columns)}".encode()).hexdigest()[:8]
    # headers can be configuration labels from data: shown like cells, escaped by the Styler
    names = {c: _visible_text(c) for c in df.columns}
    plain = [c for c in df.columns if c not in markup]
    shown = pd.concat([df.iloc[:, i].map(_visible_text) if c in plain else df.iloc[:, i]
                       for i, c in enumerate(df.columns)], axis=1, ignore_index=True)
    shown.columns = [names[c] for c in df.columns]
    plain, wide = [names[c] for c in plain], tuple(names.get(c, c) for c in wide)
    classes_attr = "benchbook-table benchbook-filterable" if filterable else "benchbook-table"
    # numbers and short words stay on one line (a hyphen or a space in "q36-mtp" or
    # "306.1 ms" is no place to break); long text wraps in its column
    classes = shown.apply(lambda col: col.map(lambda v: "benchbook-nowrap" if not isinstance(v, str) or len(v) <= SHORT
                                              else ""))
    # a verdict is marked by colour, a symbol and weight (benchbook.css), its text unchanged
    for col in [c for c in shown.columns if c == "verdict"]:
        classes[col] = classes[col] + shown[col].map(
            lambda v: f" benchbook-verdict benchbook-verdict-{re.sub(r'[^a-z]+', '-', str(v).lower()).strip('-')}")
    for col in [c for c in wide if c in shown.columns]:  # long text: a column wide enough to read (benchbook.css)
        classes[col] = classes[col] + " benchbook-wide"
    numeric = _numeric_columns(shown)
    for col in numeric:  # right-aligned in tabular figures (benchbook.css)
        classes[col] = classes[col] + " benchbook-num"
    shown, classes, marked_cols = _with_markers(shown, classes, marked, df.attrs.get(marks.WHY) or {}, plain)
    styler = (
        Styler(shown, cell_ids=False).hide(axis="index")  # an id only on a cell a style names
        .set_table_attributes(f'class="{classes_attr}"')
        .format(fmt_cell, na_rep="–", escape="html", subset=plain)
        .format_index(escape="html", axis=1)
    )
    styler = _format_marked(styler, marked_cols, plain)
    heads = [f"col{j}" for j, c in enumerate(shown.columns) if c in numeric]
    if heads:  # their headers above the numbers' right edge
        styler = styler.set_table_styles([{"selector": ", ".join(f"th.col_heading.{h}" for h in heads),
                                           "props": "text-align: right"}], overwrite=False)
    if shown.columns.is_unique and shown.index.is_unique:  # the Styler's own condition
        styler.set_td_classes(classes)
    styler.set_uuid(uid)
    if caption and not collapsed:
        styler = styler.set_caption(untrusted.html(caption))
    table = _light(styler.to_html()) + _legend(marked, df)
    if folded:
        rows = f"{len(df):,} row{'s' if len(df) != 1 else ''}"
        table = (f'<details class="benchbook-details"><summary>{untrusted.html(caption or "Table")} '
                 f'<span class="benchbook-rows">({rows})</span></summary>\n{table}</details>')
    return HTML(table)


def _light(table: str) -> str:
    """The Styler's table without its position classes on data cells ('data row12 col3'):
    nothing styles or reads them, and they were half the bytes of a long table's rows."""
    return POSITION_CLASSES.sub('class="data', table)


def _numeric_columns(shown: pd.DataFrame) -> list:
    """Columns whose every shown cell is one number (a missing one aside)."""
    def numeric(col: pd.Series) -> bool:
        cells = [v for v in col if not (is_missing(v) or v == "–")]
        return bool(cells) and all(is_numeric_text(v) if isinstance(v, str)
                                   else pd.api.types.is_number(v) and not isinstance(v, bool) for v in cells)
    return [c for j, c in enumerate(shown.columns) if numeric(shown.iloc[:, j])]


def _marked_cells(df: pd.DataFrame) -> dict:
    """(row position, column position) -> assumption ids of the cells a display frame marks."""
    ids = marks.cell_ids(df)
    if not ids:
        return {}
    pos = {label: i for i, label in enumerate(df.index)}
    cols = {c: j for j, c in enumerate(df.columns)}
    return {(pos[label], cols[c]): v for (label, c), v in ids.items() if label in pos and c in cols and v}


class _Marked:
    """A cell value resting on an assumed cell: shown escaped (when its column is), then the marker."""

    def __init__(self, value, ids, why, escaped: bool):
        self.value, self.ids, self.why, self.escaped = value, ids, why, escaped

    @staticmethod
    def render(v) -> str:
        if not isinstance(v, _Marked):  # an unmarked cell of a marked column, as the default format shows it
            return fmt_cell(v)
        inner = _Marked.render(v.value)
        if v.escaped and isinstance(v.value, str):
            inner = escape(inner)
        return marks.marked_html(inner, v.ids, v.why)


def _format_marked(styler, columns: list, plain: list):
    """Marked columns are shown by _Marked.render: a marked cell escapes its own value (in a
    plain column) and appends the marker, which is HTML the library built."""
    for col in columns:
        styler = styler.format(_Marked.render, escape="html" if col in plain else None, subset=[col])
    return styler


def _legend(marked: dict, df: pd.DataFrame) -> str:
    """The legend line under a table with marked cells (empty without)."""
    ids = [i for found in marked.values() for i in found]
    return marks.legend_html(ids, df.attrs.get(marks.WHY) or {}) if ids else ""


def _with_markers(shown: pd.DataFrame, classes: pd.DataFrame, marked: dict, why: dict, plain: list):
    """Wrap each marked cell (so the Styler formats it with its marker) and give it a class."""
    if not marked:
        return shown, classes, []
    shown, classes = shown.copy(), classes.copy()
    for j in {j for _, j in marked}:  # text columns of pandas' string dtype hold only text
        shown.isetitem(j, shown.iloc[:, j].astype(object))
    for (i, j), ids in marked.items():
        shown.iat[i, j] = _Marked(shown.iat[i, j], ids, why, escaped=shown.columns[j] in plain)
        classes.iat[i, j] = (classes.iat[i, j] + " benchbook-assumed-cell").strip()
    return shown, classes, list(dict.fromkeys(shown.columns[j] for _, j in marked))


def anchor(claim_id: str) -> str:
    """The HTML id of a claim's ledger row, for links from key results and other pages."""
    return "claim-" + (re.sub(r"[^a-z0-9]+", "-", str(claim_id).lower()).strip("-") or "x")


def ledger_table(ledger: pd.DataFrame, caption: str = "Claims ledger", extra: tuple[str, ...] = (),
                 links: dict[str, str] | None = None):
    """The claims ledger as a sortable, filterable table whose rows can be linked to
    (each claim id carries its `anchor`); `links` as for ledger_display."""
    df = ledger_display(ledger, extra, links=links)
    df["claim id"] = df["claim id"].map(
        lambda c: f'<span id="{anchor(c)}">{untrusted.html(untrusted.visible(str(c)))}</span>')
    return html(df, caption, wide=("claim", "note"), markup=("claim id", "independent"), filterable=True)


def key_results(r):
    """The box that opens a chapter: the headline numbers on this data beside the write-up's,
    each with the ledger's verdict and what it rests on, and the data in one line."""
    from IPython.display import HTML

    df = rows(r)
    ids = {label: r.claim_ids.get(c, ()) for label, c in zip(df.index, df["claim"])}
    df = marks.with_marks(df, {"this data": ids, "verdict": ids}, r.assumed_why)  # as in the ledger
    data = "; ".join(p.label if p.status in str(p.label) else f"{p.label} ({p.status})"
                     for p in r.provenance.itertuples())
    notes = []
    if not r.comparable:
        notes.append("Not the write-up's setup: its numbers are shown beside this data's, not judged.")
    apart = [r.read_side(p) for p in r.spec.reads if r.kept_apart(p)]
    if apart:
        notes.append(f"Results that rest on the {' and '.join(apart)} write-up's reconstructed data are left "
                     "out: this page's data is measured.")
    if len(df) and (df["basis"] == BY_CONSTRUCTION).any():
        notes.append("<em>By construction</em>: the reconstructed files were fit to the write-up's "
                     "numbers, so their agreement confirms nothing.")
    line = (f'<p class="benchbook-key-data"><strong>Data:</strong> {untrusted.html(untrusted.visible(data))}. '
            + " ".join(notes) + "</p>")
    if len(df):
        df = df.assign(result=[f'<a href="#{anchor(c)}">{untrusted.html(untrusted.visible(t))}</a>'
                               for t, c in zip(df["result"], df["claim"])])
        shown = df.drop(columns=["claim"]).rename(columns={"basis": "rests on"})
        body = cell_labels(html(shown, None, markup=("result",)).data, list(shown.columns))
    elif r.sections and all(m is not None for m in r.sections.values()):
        body = ("<p>This data holds none of the write-up's headline numbers, and none of the chapter's "
                "analyses can be made from it: each section below says what it would need.</p>")
    else:
        body = ("<p>This data holds none of the write-up's headline numbers; the sections "
                "below show its own results.</p>")
    return HTML(f'<div class="admonition tip benchbook-key-results"><p class="admonition-title">Key results</p>'
                f"{line}{body}</div>")


def cell_labels(table_html: str, columns: list[str]) -> str:
    """Each body cell of a table html() made names its column (`data-label`), so a phone can
    show the rows one under another, each value under its label (benchbook.css)."""
    labels = [f' data-label="{untrusted.html(str(c))}"' for c in columns]

    def row(m: re.Match) -> str:
        cells = iter(labels)  # the body's cells in column order (the index is hidden)
        return re.sub(r"<td\b", lambda td: td.group(0) + next(cells, ""), m.group(0))

    head, sep, body = table_html.partition("<tbody>")
    return head + sep + re.sub(r"<tr>.*?</tr>", row, body, flags=re.S)


# The verdict, what it rests on and the claim come first, so they are in view before a wide
# ledger scrolls sideways; the numbers behind the verdict follow.
LEDGER_COLUMNS = ["verdict", "basis", "claim", "id", "published", "recomputed", "difference", "tolerance", "kind",
                  "note"]
LEDGER_LEAD = 6  # the columns before a caller's `extra` ones


def comparison_tables(published, comparison: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Each published table in its own layout, every cell 'published → reproduced'."""

    return [(f"{t.title} [{t.source}]", published_layout(published, comparison, t.id)) for t in published.tables]


def mismatches(comparison: pd.DataFrame) -> pd.DataFrame:
    """Published cells outside their tolerance, with the difference and what it rests on
    (claims.cell_basis: on files fit to the write-up, its own numbers disagreeing)."""
    c = comparison[comparison["within"] == False]  # noqa: E712
    return pd.DataFrame({"table": c["table"], "row": c["row"], "column": c["column"],
                         "published": c["published"], "reproduced": c["reproduced"],
                         "difference": c["difference"].map(fmt_pct),
                         "rests on": c["basis"], "note": c["note"]})


def ledger_display(ledger: pd.DataFrame, extra: tuple[str, ...] = (),
                   links: dict[str, str] | None = None) -> pd.DataFrame:
    """The claims ledger as shown: the verdict, what it rests on (its basis, ledger_basis_note),
    the claim and the numbers behind the verdict; `extra` columns after them, then the rest.

    `links` (claim id -> anchor on the page, benchbook.ledger.independent.ledger_links) adds an
    'independent' column whose rows link to where others' measurements of that figure are;
    show it with html(..., markup=("independent",))."""
    cols = LEDGER_COLUMNS[:LEDGER_LEAD] + list(extra) + LEDGER_COLUMNS[LEDGER_LEAD:]
    out = ledger[cols].rename(columns={"id": "claim id"}).fillna("")
    if links:
        out.insert(LEDGER_LEAD + len(extra), "independent", ledger["id"].map(
            lambda cid: f'<a href="{untrusted.html(links[cid])}">compare</a>' if cid in links else "").values)
    return out


def ledger_basis_note(ledger: pd.DataFrame):
    """What the verdicts rest on, in a sentence each: which could have failed (and that a data
    claim failing on files fit to the write-up rests on its own numbers), which hold by
    construction on reconstructed files, which rest on a value the generator chose."""
    from IPython.display import Markdown

    n = basis_counts(ledger)
    parts = []
    checks = n[MEASURED] + n[SELF]
    if checks:
        held = int(((ledger["basis"].isin(INDEPENDENT)) & (ledger["verdict"] == HOLDS)).sum())
        what = " and ".join(x for x in (f"{n[SELF]} against the write-up's own numbers" if n[SELF] else "",
                                        f"{n[MEASURED]} against measured data" if n[MEASURED] else "") if x)
        parts.append(f"**{checks}** verdicts are checks that could have failed ({what}); {held} of them hold.")
        if ((ledger["basis"] == SELF) & (ledger["kind"] == "data")).any():
            parts.append("A claim that fails on reconstructed files fit to the write-up's own numbers shows the "
                         "write-up disagreeing with itself, and rests on those numbers: its note names both.")
    if n[BY_CONSTRUCTION]:
        parts.append(f"**{n[BY_CONSTRUCTION]}** hold only because the reconstructed files were fit to the "
                     "published numbers: they confirm nothing.")
    if n[GENERATOR]:
        parts.append(f"**{n[GENERATOR]}** rest on values the generator chose where the write-up printed none: "
                     "they show what the rule gives on such data, not a finding.")
    return Markdown("The *basis* column says what each verdict rests on. " + " ".join(parts)) if parts else None


def write_downloads(tables: dict[str, pd.DataFrame], folder: str | Path, bundle: str) -> dict[str, Path]:
    """Write each tidy table as CSV plus one zip of all of them, and the same tables as
    Parquet in a second zip (`<bundle>-parquet.zip`, written by polars: typed columns, for
    DuckDB, polars or Spark); return the paths. Text that a spreadsheet would run as a
    formula is neutralised in the CSV files (untrusted.cell); Parquet, which no spreadsheet
    opens as text, keeps the values as they are."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {name: assumed_flags(df) for name, df in tables.items()}
    paths = {}
    for name, df in tables.items():
        path = folder / f"{name}.csv"
        safe = df.rename(columns=untrusted.cell)
        text = [c for c in safe.columns if not pd.api.types.is_numeric_dtype(safe[c])]
        safe[text] = safe[text].apply(lambda col: col.map(untrusted.cell))
        safe.to_csv(path, index=False)
        paths[name] = path
    zpath = folder / f"{bundle}.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for name, path in paths.items():
            _zip_member(zf, path.name, path.read_bytes(), zipfile.ZIP_DEFLATED)
    paths["zip"] = zpath
    paths["parquet_zip"] = _parquet_zip(tables, folder / f"{bundle}-parquet.zip")
    return paths


ASSUMED_FLAG = "assumed_by_generator"


def assumed_flags(df: pd.DataFrame) -> pd.DataFrame:
    """A table with the cells a page marks as assumed (marks.with_marks) gains a column saying,
    per row, which of its columns rest on which generator choice ('col: folder/id, ...; col2:
    ...'; empty for a row resting on none), so a download says what the page's raised 'ᵃ' says."""
    ids = marks.cell_ids(df)
    if not ids:
        return df
    rows: dict = {}
    for (label, col), found in ids.items():
        rows.setdefault(label, {})[col] = found
    flags = ["; ".join(f"{c}: {', '.join(v)}" for c, v in rows.get(label, {}).items()) for label in df.index]
    return df.assign(**{ASSUMED_FLAG: flags})


def _parquet_zip(tables: dict[str, pd.DataFrame], zpath: Path) -> Path:
    """Every table as `<name>.parquet` in one zip (stored: Parquet is compressed already)."""
    import io

    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_STORED) as zf:
        for name, df in tables.items():
            buf = io.BytesIO()
            to_polars(df.reset_index(drop=True)).write_parquet(buf)
            _zip_member(zf, f"{name}.parquet", buf.getvalue(), zipfile.ZIP_STORED)
    return zpath


ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: the same tables give the same bytes


def _zip_member(zf: zipfile.ZipFile, name: str, data: bytes, compress: int) -> None:
    """One file of a download zip, dated ZIP_DATE rather than when it was written, so a rerun
    on the same data gives a byte-identical zip (its checksum can be compared)."""
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = compress
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


# ---- text from data, the page's opening note, absent sections, declared outputs -----

def _admonition(title: str, body: str, kind: str = "note", classes: str = "") -> str:
    return f":::{{admonition}} {title}\n:class: {kind}{' ' + classes if classes else ''}\n{body}\n:::"


def glue_all(values: dict) -> None:
    """Glue a chapter's values for its prose. Text glues as a text node (data cannot inject
    markup) with control and direction characters shown; keys ending in `_md` / `_html` hold
    Markdown / HTML the library built, with every name from data already escaped. A value
    computed from assumed cells (marks.Glued) carries their ids, and the build marks it."""
    from IPython.display import HTML, Markdown

    payload = getattr(values, "payload", lambda key: [])
    for key, value in values.items():
        if key.endswith("_md"):
            value = Markdown(value)
        elif key.endswith("_html"):
            value = HTML(value)
        elif isinstance(value, str):
            value = untrusted.visible(value)
        glue(key, value, payload(key))


def glue(key: str, value, assumed: list | None = None) -> None:
    """myst_nb's glue (not displayed), with the assumptions behind the value in the output's
    metadata (`benchbook.assumed`: [{id, why}]), where the build looks for them."""
    import IPython

    bundle, metadata = IPython.core.formatters.format_display_data(value)
    _glue_bundle(key, bundle, metadata, {"assumed": list(assumed)} if assumed else {})


def _glue_bundle(key: str, bundle: dict, metadata: dict, ours: dict) -> None:
    import IPython
    from myst_nb.ext.glue import GLUE_PREFIX

    metadata["scrapbook"] = dict(name=key, mime_prefix=GLUE_PREFIX)
    if ours:
        metadata["benchbook"] = ours
    IPython.display.display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def glue_figure(key: str, fig) -> None:
    """Glue a figure as two PNGs: the desktop one is the output's image, the one laid out
    for a phone rides in its metadata (`benchbook.figure`, with each image's size and
    smallest text in pixels), and the build serves each reader the one that fits
    (benchbook.site.picture). Series drawn from assumed cells (plots.mark_series) are named
    in the metadata too, so the build adds a line to the figure's caption."""
    found = getattr(fig, "benchbook_assumed", None) or {}
    shown = renderings(fig)
    desktop, phone = shown["desktop"], shown["phone"]
    bundle = {"image/png": b64encode(desktop.png).decode("ascii"),
              "text/plain": f"<Figure size {desktop.width}x{desktop.height}>"}
    figure = {**_size(desktop), "phone": {"png": b64encode(phone.png).decode("ascii"), **_size(phone)}}
    ours = {"figure": figure, **({"assumed": [{"id": i, "why": w} for i, w in sorted(found.items())]} if found else {})}
    _glue_bundle(key, bundle, {}, ours)


def _size(r) -> dict:
    return {"width": r.width, "height": r.height, "font_px": round(r.font_px, 2)}


def note(title: str, text: str, kind: str = "note"):
    """A note box whose body is plain text (data names in it are escaped, never markup)."""
    from IPython.display import Markdown

    return Markdown(_admonition(untrusted.md(title), untrusted.md(text), kind))


def banner(r) -> str:
    """The page's opening note (Markdown): which data folders, reconstructed or measured, and
    whether the data is the write-up's setup, so every result below is read in that light."""
    rows = list(r.provenance.itertuples())
    folders = "; ".join(f"**{untrusted.md(p.label)}** ({p.status}, `{p.data_hash}`)" for p in rows)
    statuses = {p.status for p in rows}
    if statuses == {"reconstructed"}:
        title, kind = "Data: reconstructed", "warning"
        body = (f"This page was computed from {folders}. These raw files were reconstructed from the "
                "published tables by a seeded generator; they are not the authors' measurements, so "
                "agreement with the write-up is by construction. See the provenance section below.")
    elif "reconstructed" in statuses:
        title, kind = "Data: measured and reconstructed", "warning"
        body = (f"This page mixes data folders: {folders}. Figures from a reconstructed folder were made "
                "by a seeded generator from the published tables, not measured; the tables name the "
                "folder each row comes from.")
        if any(r.kept_apart(p) for p in r.reads):
            body += (" Nothing that rests on the reconstructed folder counts as a finding of the measured "
                     "one: such numbers get no verdict and no key result, and are shown only under a note "
                     "that names both folders.")
    else:
        title, kind = "Data: measured", "note"
        body = f"This page was computed from {folders}."
    notes = [_admonition(title, body, kind)]
    if r.spec.writeup:  # a page that checks no write-up has no setup to compare with
        notes.append(comparability_note(r))
    notes.append(open_items_note(r))
    return "\n\n".join(n for n in notes if n)


def open_items_note(r) -> str:
    """What the data folder leaves open and so leaves off the page: to-dos `benchbook new`
    wrote (a configuration without a role, a run without a kind), failed runs, files no
    reader knows. Empty when nothing is open."""

    study = r.data.study
    lines = []
    roleless = open_roles(study)
    if roleless:
        lines.append(f"- {len(roleless)} configuration(s) without a role, so not shown: "
                     + ", ".join(untrusted.md(c) for c in roleless))
    kindless = [run.where for run in study.run_entries() if run.context.get("kind") is None]
    if kindless:
        lines.append(f"- {len(kindless)} run(s) without a kind, so not used")
    failed = [(run.path, run.context["failed"]) for run in study.run_entries() if run.context.get("failed")]
    lines += [f"- failed, so not used: {untrusted.md(p)} ({untrusted.md(str(why))})" for p, why in failed]
    skipped = study.manifest.get("skipped") or []
    if skipped:
        lines.append(f"- {len(skipped)} file(s) given to `benchbook new` that no reader knows (study.yml `skipped`)")
    if not lines and not study.todo:
        return ""
    head = (f"The data folder's `study.yml` lists {len(study.todo)} open to-do item(s); `benchbook validate` "
            "prints them." if study.todo else "")
    return _admonition("Left open in this data folder", "\n".join([head, ""] + lines).strip(), "note")


def comparability_note(r) -> str:
    """Whether the write-up's numbers apply to this data; empty when they plainly do."""
    differing = [(r.spec.id, m) for m in r.comparability.differing()]
    for param, setup in r.read_setups.items():
        differing += [(r.reads[param].study.id, m) for m in setup.differing()]
    if differing:
        lines = "\n".join(f"- {untrusted.md(role.role)}: this data is {untrusted.md(role.data)}; the write-up measured "
                          f"{untrusted.md(role.claim)}" for _, role in differing)
        matching = [m for m in r.comparability.roles.values() if m.comparable and m.data != "absent"]
        matching += [m for param, setup in r.read_setups.items() if not r.kept_apart(param)
                     for m in setup.roles.values() if m.comparable and m.data != "absent"]
        if matching:  # some roles are the write-up's setup: their cells and claims keep verdicts
            return _admonition("Partly not the write-up's setup", (
                "Where this data is not the write-up's setup (below), the write-up's published cells "
                "and claims about it are listed as *not comparable*, without verdicts; those about "
                "the rest of the data are checked as usual."
                + ("" if r.comparability.comparable else " The authors' caveats are left out.")
                + f"\n\n{lines}"), "important")
        return _admonition("Not the write-up's setup", (
            "The write-up's published tables, claims and caveats describe another setup, so they are "
            "listed below as *not comparable*, without verdicts; the page shows this data's own "
            f"results.\n\n{lines}"), "important")
    if not r.comparability.declared:
        return _admonition("Setup not declared", (
            "The published values this page compares with (`published.yml`) do not say which setup "
            "they describe, so they are compared with this data as given."), "note")
    if not r.data.study.reconstructed:
        return _admonition("The write-up's setup", (
            "This data was measured on the write-up's setup (platform, model and weight format per "
            "configuration), so the comparison with its published numbers below is an independent "
            "replication."), "tip")
    return ""


def absent(r, section: str):
    """A short note in place of a section the data cannot fill: what it lacks, how to add it."""
    from IPython.display import Markdown

    missing = r.missing(section)
    if missing is None:
        return None
    # the class names the section, so a test (and a reader's tool) can tell which one is absent
    return Markdown(_admonition("Not in this data", untrusted.md_code(missing.text()), "note",
                                f"benchbook-absent benchbook-absent-{section}"))


def _assumed_columns(r) -> list[str]:
    """Tidy columns of the chapter's own folder that hold a generator's choice (none if measured)."""

    if not r.data.study.reconstructed:
        return []
    return sorted({c for a in load_assumptions(r.data.study.root) for c in a.columns})


def _assumed_cells(tables: dict[str, pd.DataFrame]) -> dict:
    """Per download table, the cells resting on a generator's choice: {column: {row number:
    ids}} (marks.with_marks), so a page reading the CSV marks what it shows from them."""
    out = {}
    for name, df in tables.items():
        pos = {label: i for i, label in enumerate(df.index)}
        found = {}
        for (label, col), ids in marks.cell_ids(df).items():
            if label in pos:
                found.setdefault(col, {})[str(pos[label])] = list(ids)
        if found:
            out[name] = found
    return out


PROSE_TAGS = ("comparable", "other-setup", "like-data", "kept-apart", "harness")  # prose_conditions' tags


def prose_conditions(r) -> dict[str, str]:
    """Tags of prose that holds only for some data, each absent here with why: the runner
    drops markdown cells tagged `needs-<tag>` for them, as for a section the data lacks.

    - comparable: about the write-up's own results (the data is its setup);
    - other-setup: about data of another setup (it is not);
    - like-data: sets this page's data against a folder it reads as one finding;
    - kept-apart: says that such a folder is kept apart (pipeline.ChapterResults.kept_apart);
    - harness: checks a benchmark harness's own sweep summary (rate_sweep.against_harness).
    """
    out = {}
    rates = getattr(r, "rates", None)
    if rates is None or not len(rates.harness):
        out["harness"] = "the data holds no harness summary of a request-rate sweep"
    if r.comparable:
        out["other-setup"] = "the data is the write-up's setup"
    else:
        out["comparable"] = "the data is not the write-up's setup"
    if r.spec.reads:
        apart = [p for p in r.spec.reads if r.kept_apart(p)]
        if apart:
            out["like-data"] = "; ".join(r.kept_apart(p) for p in apart)
        else:
            out["kept-apart"] = "no folder this page reads is kept apart from its data"
    return out


def kept_apart_note(r, param: str, *tables):
    """The note over numbers of a folder kept apart from this page's data (a reconstructed
    folder beside measured files): which data each side is, then the tables (report.html
    outputs) it holds. None when the folder may be compared with this data."""
    from IPython.display import HTML

    why = r.kept_apart(param)
    if not why:
        return None
    body = "".join(t.data if hasattr(t, "data") else str(t) for t in tables)
    return HTML(f'<div class="admonition warning benchbook-kept-apart"><p class="admonition-title">'
                f"Beside the write-up's reconstructed data, not a finding of this data</p>"
                f"<p>{untrusted.html(untrusted.visible(why))}.</p>{body}</div>")


def write_outputs(r, tables: dict[str, pd.DataFrame], folder: str | Path, bundle: str) -> dict[str, Path]:
    """The chapter's downloads, and `chapter.json`: what other pages and the build read from it
    (sections the data could not fill, comparability, data folders, declared output tables)."""
    import json

    paths = write_downloads(tables, folder, bundle)
    absent = {s: m.text() for s, m in r.sections.items() if m is not None}
    absent.update(prose_conditions(r))
    assumed = {s: [{"id": a.id, "why": a.why} for a in hits] for s, hits in r.assumed.items()
               if r.sections.get(s) is None}
    doc = {
        "chapter": Path(folder).name,  # the page (a notebook may make more than one page)
        "module": r.spec.folder,  # the chapter folder (benchbook/chapters/<folder>/)
        "absent_sections": absent,
        "assumed_sections": assumed,  # shown sections resting on a generator's assumption
        "assumed_columns": _assumed_columns(r),  # for pages that read this one's outputs
        "assumed_cells": _assumed_cells(tables),  # {table: {column: {row: ids}}} of the downloads
        "assumed_claims": {k: list(v) for k, v in r.claim_ids.items()},
        "assumed_why": r.assumed_why,
        "comparable": bool(r.comparable),
        "setup_declared": bool(r.comparability.declared),
        "data": r.provenance.astype(object).where(r.provenance.notna(), None).to_dict(orient="records"),
        "outputs": {name: f"{name}.csv" for name in r.spec.outputs if name in tables},
    }
    out = Path(folder) / "chapter.json"
    out.write_text(json.dumps(doc, indent=2, default=str), encoding="utf-8")
    paths["chapter"] = out
    return paths


def mismatch_display(comparison: pd.DataFrame):
    """The published cells outside their tolerance, or one line saying there are none."""
    from IPython.display import Markdown

    bad = mismatches(comparison)
    if not len(bad):
        judged = int(comparison["within"].notna().sum()) if len(comparison) else 0
        return Markdown(f"No published cell is outside its tolerance ({judged} compared)." if judged else
                        "No published cell could be compared with this data.")
    return html(bad, "Published cells outside their tolerance", wide=("note",))


def caveats_display(r):
    """The page's caveats as a list; says so when the write-up's own are left out."""
    from IPython.display import Markdown

    found = marks.cell_ids(r.caveats)
    items = [f"- **{untrusted.md(c.origin)}**: "
             + marks.marked_html(untrusted.md_code(c.caveat), found.get((label, "caveat")), r.assumed_why)
             for label, c in zip(r.caveats.index, r.caveats.itertuples())]
    ids = [i for v in found.values() for i in v]
    if ids:
        items.append("\n" + marks.legend_html(ids, r.assumed_why))
    if not r.comparable and r.published.caveats:
        items.insert(0, f"- The write-up's own {len(r.published.caveats)} caveats are about its setup, "
                        "not this data's, and are not repeated here.")
    return Markdown("\n".join(items) if items else "No caveat applies to this data.")


def software(versions: dict):
    """The tool versions the data names (engine builds, llama.cpp commits), as one line."""
    from IPython.display import Markdown

    return Markdown("Software: " + ", ".join(f"{untrusted.md(k)} {untrusted.md(v)}" for k, v in versions.items()) + ".")


def download_links(page: str, files: dict[str, str], tables: dict[str, pd.DataFrame] | None = None):
    """The chapter's download links (MyST `{download}` roles), for the page's own folder; with
    `tables` (the downloads), a CSV whose table has no row on this data is not offered."""
    from IPython.display import Markdown

    empty = {f"{k}.csv" for k, df in (tables or {}).items() if df is not None and not len(df)}
    links = ", ".join(f"{{download}}`{untrusted.md(label)} <{page}/{name}>`" for label, name in files.items()
                      if name not in empty)
    return Markdown(f"The chapter's tidy tables: {links}.")


def figure(key: str, name: str, alt: str, caption: str):
    """A glued figure placed by code (for figures whose number depends on the data): the
    same `{glue:figure}` directive a markdown cell would hold, as MyST output."""
    from IPython.display import Markdown

    return Markdown(f"```{{glue:figure}} {key}\n:width: 100%\n:alt: {untrusted.md(alt)}\n:name: {name}\n\n"
                    f"{untrusted.md(caption)}\n```")


def sources_html(r) -> HTML:
    """The provenance a reader can follow: each write-up the page checks, named and linked;
    each data folder with its hash and links to it and its PROVENANCE.md; the repository and
    how to cite the book."""
    from IPython.display import HTML

    def link(url, text):
        safe = untrusted.url(url)
        shown = escape(untrusted.visible(str(text)))
        return f'<a href="{escape(safe, quote=True)}">{shown}</a>' if safe else shown

    repo = find_repo()
    items = []
    sources = getattr(getattr(r, "published", None), "sources", None) or {}  # the synthesis has none
    others = [(sid, src) for sid, src in sources.items() if not src.get("file")]  # not a write-up
    for sid, src in sources.items():
        if not src.get("file"):
            continue
        title = src.get("title") or sid
        who = ", ".join(escape(untrusted.visible(str(v))) for v in (src.get("author"), src.get("date")) if v)
        items.append(f"<li>[{escape(untrusted.visible(str(sid)))}] <em>"
                     f"{link(src.get('url'), title) if src.get('url') else escape(untrusted.visible(str(title)))}</em>"
                     + (f", {who}" if who else "") + ("" if src.get("url") else " (no address published)") + "</li>")
    writeups = f"<p><strong>Write-ups checked on this page:</strong></p><ul>{''.join(items)}</ul>" if items else ""
    if others:
        cited = "".join(f"<li>[{escape(untrusted.visible(str(sid)))}] "
                        f"{link(src.get('url'), src.get('title') or sid)}"
                        + (f", {escape(str(src['date']))}" if src.get("date") else "") + "</li>" for sid, src in others)
        writeups += f"<p><strong>Other sources cited:</strong></p><ul>{cited}</ul>"
    rows = []
    for p in r.provenance.itertuples():
        links = folder_links(repo, p.folder)
        more = " · ".join(link(u, name) for name, u in links.items())
        rows.append(f"<li><code>{escape(untrusted.visible(str(p.folder)))}</code> ({escape(str(p.status))}, "
                    f"hash <code>{escape(str(p.data_hash))}</code>)" + (f": {more}" if more else "") + "</li>")
    where = repository(repo)
    code = (f"<p>Code, data and notebooks: {link(where[0], where[0])}; to cite this book, see "
            f"{link(f'{where[0]}/blob/{where[1]}/CITATION.cff', 'CITATION.cff')}.</p>") if where else ""
    return HTML(f'<div class="benchbook-sources">{writeups}<p><strong>Data folders:</strong></p>'
                f"<ul>{''.join(rows)}</ul>{code}</div>")

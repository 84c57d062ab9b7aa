"""What a page shows, place by place, with the marks on each (tools/marks_check.py).

A page is run in-process from its notebook (benchbook.site.runner.Chapter.read_source), as the
build runs it, on chosen data folders; every output it displays or glues is captured from an
IPython shell's display publisher. A place is one HTML table cell, one line of text, one glued
value or one figure; its text is what a reader sees with the marks (ᵃ) taken out, and its ids
are the assumption ids those marks name (a glued value's from its metadata). Legend lines,
which only explain the marks, are not places.
"""

from __future__ import annotations

import ast
import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

from benchbook.book.pipeline import CAVEAT_ASSUMED
from benchbook.book.registry import chapters
from benchbook.format import exact_numbers
from benchbook.site.runner import Chapter
from benchbook.study.marks import title_ids

from .folders import FOLDERS, REPO

GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::([^`]*))?`")  # {glue:text}`name:format` in prose
GLUE_BLOCK = re.compile(r"^(?:```|:::)\{glue(?::\w+)?\}[ \t]+(\S+)", re.M)  # ```{glue:figure} name
GLUE_PREFIX = "application/papermill.record/"  # myst_nb's glue outputs
MARK_CLASS = "benchbook-assumed-mark"
LEGEND_CLASS = "benchbook-assumed-legend"
MARK = re.compile(r'<span class="benchbook-assumed-mark" title="([^"]*)"[^>]*>[^<]*</span>')
LEGEND_LINE = re.compile(r'<p class="benchbook-assumed-legend">.*?</p>', re.S)


@dataclass(frozen=True)
class Page:
    """A page that reads a data folder: its id, and the parameters naming data folders."""

    id: str
    folders: dict  # parameter -> data folder name it names by default

    @staticmethod
    def reading(repo: Path, folder: str) -> list[Page]:
        """Every page whose default parameters name data/<folder> (its own data or a read)."""
        out = []
        for spec in chapters():
            params = Chapter(repo, spec.id).effective_parameters({})
            named = {k: _folder_of(v) for k, v in params.items() if _folder_of(v) and k.endswith("data_dir")}
            if folder in named.values() and named.get("data_dir") in FOLDERS:
                out.append(Page(spec.id, named))
        return out


def _folder_of(value) -> str | None:
    """The data folder a parameter names ('data/<folder>' or a file in it)."""
    if isinstance(value, str) and value.startswith("data/") and value.count("/") >= 1:
        return value.split("/")[1]
    return None


def ids_of_title(title: str) -> tuple:
    """The ids a marker's title names: 'assumed: id; id' (benchbook.study.marks.marker_html)."""
    return title_ids(unescape(title))


def page_places(pages: list[Page], moved: Path, base: Path, out: Path, moved_folder: str | None = None) -> dict:
    """Place -> (text, ids) of these pages, each data folder parameter pointed at `base`'s copy,
    except those naming `moved_folder` (all when None), which point at `moved`'s."""
    found = {}
    for page in pages:
        params = {k: str(_path(v, page, k, moved, base, moved_folder)) for k, v in _defaults(page).items()
                  if k in page.folders}
        try:
            shown = run(page.id, params, out)
        except Exception as exc:  # noqa: BLE001 - a page that fails on the data is a page that moved
            shown = {("error",): (f"{type(exc).__name__}: {exc}", ())}
        for key, value in shown.items():
            found[(page.id, *key)] = value
    return found


def _defaults(page: Page) -> dict:
    return Chapter(REPO, page.id).effective_parameters({})


def _path(value: str, page: Page, param: str, moved: Path, base: Path, moved_folder: str | None) -> Path:
    root = moved if moved_folder in (None, page.folders[param]) else base
    return root / value.removeprefix("data/")


# ---- running a notebook in-process -----------------------------------------------------


def run(page_id: str, params: dict, out: Path) -> dict:
    """(output number, ...) -> (text, ids) of everything the page displays or glues."""
    chapter = Chapter(REPO, page_id)
    cells = [c for c in chapter.read_source().cells if c.cell_type == "code"]
    ns = {**chapter.effective_parameters(params), "page": page_id}
    published = []
    # every number in full: a place moved when the value it shows moved, not only its printed digits
    with _shell(published), _project(REPO, out), exact_numbers():
        for cell in cells:
            if "parameters" in cell.get("metadata", {}).get("tags", []):
                continue
            exec(compile(_displaying_last(cell.source), f"<{page_id}>", "exec"), ns)  # noqa: S102
            _close_figures()
    formats = glue_formats(chapter.read_source(), _absent(out, page_id))
    found = {}
    for n, (data, metadata) in enumerate(published):
        for key, value in places(data, metadata).items():
            if key[:1] == ("glue",) and key[1] not in formats:  # pasted by no prose the page keeps
                continue
            found[(n, *key)] = value
    return found


def _absent(out: Path, page_id: str) -> set:
    """The sections and prose conditions this run left out (the page's chapter.json), whose
    `needs-` prose the build drops (benchbook.site.runner)."""
    info = out / "project" / "book" / "studies" / page_id / "chapter.json"
    return set(json.loads(info.read_text(encoding="utf-8")).get("absent_sections", {})) if info.is_file() else set()


def glue_formats(nb, absent=frozenset()) -> dict[str, tuple]:
    """Glued name -> the format specs the page's prose pastes it with ('' for as it is), over the
    prose the page keeps: a markdown cell tagged `needs-<x>` for an absent x is dropped by the
    build (the opening's words about another setup's runs, on the write-up's own setup)."""
    out: dict[str, tuple] = {}
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type != "markdown" or any(t.startswith("needs-") and t[6:] in absent for t in tags):
            continue
        refs = GLUE_REF.findall(cell.source) + [(name, "") for name in GLUE_BLOCK.findall(cell.source)]
        for name, spec in refs:
            out[name] = tuple(dict.fromkeys((*out.get(name, ()), spec)))
    return out


def _displaying_last(source: str) -> ast.Module:
    """A cell's code whose last expression is displayed, as IPython displays it."""
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1].value
        call = ast.Call(ast.Name("__display_last__", ast.Load()), [last], [])
        tree.body[-1] = ast.Expr(call)
    return ast.fix_missing_locations(tree)


@contextmanager
def _shell(published: list):
    """An IPython shell whose display publisher keeps (data, metadata) of every output."""
    import builtins

    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    class Keep(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kw):
            published.append((dict(data), dict(metadata or {})))

    shell = InteractiveShell.instance()
    kept = shell.display_pub
    shell.display_pub = Keep(shell=shell)
    _figures_as_data(shell)
    from benchbook.page import report

    glue_figure = report.glue_figure

    def glue_figure_as_data(key, fig):  # a glued figure's place is what it draws, not its PNG
        drawn = figure_data(fig)
        glue_figure(key, fig)
        data = published[-1][0]
        for k in [k for k in data if k.endswith("image/png")]:
            data[k.replace("image/png", "text/plain")] = drawn
            del data[k]

    report.glue_figure = glue_figure_as_data

    def display_last(value):
        if value is not None:
            from IPython.display import display

            display(value)

    builtins.__display_last__ = display_last
    try:
        yield shell
    finally:
        shell.display_pub = kept
        report.glue_figure = glue_figure
        del builtins.__display_last__


def _figures_as_data(shell) -> None:
    """A figure (displayed or glued) is published as what it draws (figure_data), compared like
    any text: by its repr ('<Figure size 770x440 ...>') no figure would ever move, and by its
    pixels a value moved below a pixel would not either."""
    from matplotlib.figure import Figure

    shell.display_formatter.formatters["text/plain"].for_type(Figure, lambda fig, p, cycle: p.text(figure_data(fig)))


def figure_data(fig) -> str:
    """Every number and word a figure draws, in full, in a stable order: each axes' limits, scales
    and texts, each line's points, each collection's offsets, each patch's box (bars, candles)."""
    import numpy as np

    def numbers(a) -> str:
        a = np.asarray(a, dtype=float).ravel()
        return " ".join(repr(float(v)) for v in a)

    out = ["figure"]
    for ax in fig.get_axes():
        out.append(f"axes {ax.get_xscale()} {ax.get_yscale()} {numbers([*ax.get_xlim(), *ax.get_ylim()])}")
        out += [f"text {t.get_text()}" for t in ax.texts + [ax.title, ax.xaxis.label, ax.yaxis.label]
                if t.get_text()]
        out += [f"tick {t.get_text()}" for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
        out += [f"line {numbers(line.get_xydata())}" for line in ax.get_lines()]
        out += [f"points {numbers(c.get_offsets())}" for c in ax.collections]
        out += [f"patch {numbers(p.get_bbox().bounds)}" for p in ax.patches]
        legend = ax.get_legend()
        if legend is not None:
            out += [f"legend {t.get_text()}" for t in legend.get_texts()]
    out += [f"text {t.get_text()}" for t in fig.texts if t.get_text()]
    return "\n".join(out)


@contextmanager
def _project(repo: Path, out: Path):
    """The working folder a project root whose book/studies/ (where pages write their
    downloads) is `out`'s: every other entry is the repository's own."""
    root = out / "project"
    if not root.exists():
        (root / "book" / "studies").mkdir(parents=True)
        for entry in repo.iterdir():
            if entry.name not in ("book", ".git"):
                (root / entry.name).symlink_to(entry)
        for entry in (repo / "book").iterdir():
            if entry.name != "studies":
                (root / "book" / entry.name).symlink_to(entry)
    here = Path.cwd()
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(here)


def _close_figures() -> None:
    import matplotlib.pyplot as plt

    plt.close("all")


# ---- an output's places ----------------------------------------------------------------


def places(data: dict, metadata: dict) -> dict:
    """(kind, ...) -> (text, ids) of one displayed or glued output."""
    glued = (metadata.get("scrapbook") or {}).get("name")
    if glued:
        data = {k.removeprefix(GLUE_PREFIX): v for k, v in data.items()}
        ids = tuple(a["id"] for a in (metadata.get("benchbook") or {}).get("assumed", []))
        return {("glue", glued, *k): (t, union(i, ids) if k else ids)
                for k, (t, i) in _content(data).items()}
    return _content(data)


def union(*groups) -> tuple:
    return tuple(dict.fromkeys(i for g in groups for i in g))


def _content(data: dict) -> dict:
    if "text/html" in data:
        return html_places(data["text/html"])
    if "text/markdown" in data:
        return markdown_places(data["text/markdown"])
    return {(): (str(data.get("text/plain", "")), ())}


ITEM = re.compile(r"^- \*\*(.+?)\*\*:")  # a labelled list item: a caveat's origin


# A caveat's opening words naming its choices are its mark, not its value: another choice's
# rows, selected again on a moved folder, changed them (make marks: `prompts_per_slot` left the
# H100 small-samples caveat when `sweep_lengths` moved). The caveat's mark still names them.
ASSUMED_FIRST = re.compile(re.escape(CAVEAT_ASSUMED).replace(re.escape("{ids}"), r"[^)]*"))


def markdown_places(text: str) -> dict:
    """('line', n) -> (the line without its marks, the ids they name); legends left out. A
    labelled item (a caveat, '- **data rule: x**: …') is keyed by its label and its rank among
    items of that label, not by its line: a caveat that a move brings in shifts every line after
    it, which are the same caveats (`make marks`: the 3090 client-idle caveat)."""
    text = LEGEND_LINE.sub("", text)
    out, seen = {}, {}
    for n, line in enumerate(text.splitlines()):
        ids = union(*(ids_of_title(t) for t in MARK.findall(line)))
        plain = ASSUMED_FIRST.sub("", MARK.sub("", line)).strip()
        if plain or ids:
            item = ITEM.match(plain)
            if item:
                seen[item.group(1)] = seen.get(item.group(1), -1) + 1
            key = ("item", item.group(1), seen[item.group(1)]) if item else ("line", n)
            out[key] = (plain, ids)
    return out


def chart_ids(text: str) -> tuple:
    """The ids an interactive chart's JSON names (benchbook.page.interactive keeps them in its
    spec's `assumed`, and each point's tooltip says which it rests on); () for other text."""
    if not text.startswith('{"kind"') or '"assumed"' not in text:
        return ()
    try:
        assumed = json.loads(text).get("assumed") or {}
    except ValueError:
        return ()
    return tuple(assumed)


def html_places(text: str) -> dict:
    parser = _Places()
    parser.feed(text)
    parser.close()
    return parser.found


class _Places(HTMLParser):
    """Table cells ('cell', table, row, header) and other text blocks ('text', n) of HTML, each
    with the ids of the marks inside it; legends and marks' own text left out."""

    BLOCKS = {"p", "li", "caption", "summary", "div", "h1", "h2", "h3", "h4", "pre", "script"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.stack, self.skip = {}, [], 0
        self.table, self.row, self.col, self.headers = -1, -1, 0, []
        self.text, self.ids, self.blocks = [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        cls = attrs.get("class") or ""
        if self.skip or LEGEND_CLASS in cls or MARK_CLASS in cls:
            if MARK_CLASS in cls and not self.skip:
                self.ids.extend(ids_of_title(attrs.get("title") or ""))
            self.skip += tag not in ("br", "img")
            self.stack.append(("skip", tag))
            return
        self._flush_if(tag)
        if tag == "table":
            self.table, self.row, self.headers = self.table + 1, -1, []
        elif tag == "tr":
            self.row, self.col = self.row + 1, 0
        self.stack.append(("open", tag))

    def handle_endtag(self, tag):
        while self.stack:
            kind, open_tag = self.stack.pop()
            if kind == "skip":
                self.skip -= open_tag not in ("br", "img")
            if open_tag == tag:
                break
        if self.skip:
            return
        if tag in ("td", "th"):
            self._cell(tag)
        elif tag in self.BLOCKS:
            self._block()

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)

    def _flush_if(self, tag):
        if tag in self.BLOCKS | {"table", "td", "th"}:
            self._block()

    def _cell(self, tag):
        text = " ".join("".join(self.text).split())
        if tag == "th" and self.row <= 0:
            self.headers.append(text)
        else:
            header = self.headers[self.col] if self.col < len(self.headers) else str(self.col)
            self.found[("cell", self.table, self.row, header)] = (text, union(self.ids))
        self.col += 1
        self.text, self.ids = [], []

    def _block(self):
        text = " ".join("".join(self.text).split())
        self.ids.extend(chart_ids(text))
        if text or self.ids:
            self.blocks += 1
            self.found[("text", self.blocks)] = (text, union(self.ids))
        self.text, self.ids = [], []

    def close(self):
        super().close()
        self._block()

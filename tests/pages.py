"""Reading what a chapter produced: glued values of an executed notebook, HTML tables, and
where each glued key is written out."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pandas as pd


def glued(nb) -> dict:
    """Values the notebook glued, by name (numbers as numbers, text as text)."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if not name:
                continue
            data = o["data"]
            text = data.get("application/papermill.record/text/markdown") or \
                data.get("application/papermill.record/text/plain")
            try:
                out[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                out[name] = text
    return out


MARK = "benchbook-assumed-mark"  # the marker of a value resting on a generator's choice (benchbook.study.marks)


def without_marks(element):
    """The element with every assumed-value marker taken out (the value's own text kept)."""
    for mark in element.find_class(MARK):
        mark.drop_tree()
    return element


def html_tables(html_text: str) -> dict[str, pd.DataFrame]:
    """Tables of an HTML fragment or page, by caption; cells kept as printed, markers of
    assumed values aside (tests of the markers read them from the HTML itself)."""
    import lxml.html

    out = {}
    for table in without_marks(lxml.html.fromstring(html_text)).iter("table"):
        caption = table.find("caption")
        if caption is not None:
            snippet = lxml.html.tostring(table, encoding="unicode")
            out[caption.text_content().strip()] = pd.read_html(io.StringIO(snippet), keep_default_na=False)[0]
    return out


def nb_tables(nb) -> dict[str, pd.DataFrame]:
    """Captioned HTML tables among an executed notebook's outputs."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if "text/html" in o.get("data", {}) and "<caption" in o["data"]["text/html"]:
                out.update(html_tables(o["data"]["text/html"]))
    return out


# ---- where a glued number comes from (issue 20: every key greppable where it is computed) ----

GLUE_REFERENCE = re.compile(r"\{glue(?::\w+)?\}(?:`|[ \t]+)(?:[\w./-]+\.ipynb::)?([A-Za-z_]\w*)")
# the ledger counts, the independent section, the request-rate sections and the opening on
# data of another setup
SHARED_GLUE_MODULES = ("ledger/claims", "ledger/independent", "analysis/rate_sweep", "analysis/energy",
                       "analysis/closed_loop", "page/opening")


def glue_references(markdown: str) -> set[str]:
    """Keys the prose quotes: `{glue:text}` roles, `{glue:figure}` / `{glue:md}` directives."""
    return set(GLUE_REFERENCE.findall(markdown))


def _literals(source: str) -> tuple[set[str], list[re.Pattern]]:
    """String constants and keyword names of a Python source, and the families of keys an
    f-string names as the key of a glue call (its constant parts, anything between)."""
    tree = ast.parse(source)
    words, families, inside = set(), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside.update(id(v) for v in node.values)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")).startswith("glue") \
                and node.args and isinstance(node.args[0], ast.JoinedStr):
            families.append(re.compile("".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+"
                                               for v in node.args[0].values) + r"\Z"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside:
            words.add(node.value)
        elif isinstance(node, ast.keyword) and node.arg:
            words.add(node.arg)
    return words, families


def declared_glue_keys(notebook: Path):
    """A predicate: is this glue key written out as a literal where it is computed? That is
    the chapter module(s) the notebook imports, the shared ledger / independent modules, or
    the notebook's own code (where an f-string may name a family of figures, one per model,
    placed by the same code; a chapter module's f-strings declare nothing)."""
    import jupytext

    import benchbook

    nb = jupytext.read(notebook)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    root = Path(benchbook.__file__).parent
    chapters = re.findall(r"from benchbook\.chapters\.(\w+) import ([\w, ]+)", code)
    names = [(folder, n.split(" as ")[0].strip()) for folder, line in chapters for n in line.split(",")]
    words = set()
    for path in [root / "chapters" / f / f"{n}.py" for f, n in names] + [root / f"{m}.py" for m in SHARED_GLUE_MODULES]:
        words |= _literals(path.read_text(encoding="utf-8"))[0]
    nb_words, nb_families = _literals(code)
    return lambda key: key in words or key in nb_words or any(f.match(key) for f in nb_families)


def measured_pages() -> set[str]:
    """Pages that run a chapter's notebook a second time, on measured files of another setup
    (the registry's specs whose notebook is another page's); the synthesis reads none of them."""
    from benchbook.book.registry import chapters

    return {s.id for s in chapters() if s.notebook_name != s.id}


def chapter_pages(html: Path) -> list[str]:
    """The chapter pages of a built site (its html folder), by name; the synthesis aside."""
    return [p.stem for p in sorted((html / "studies").glob("*.html")) if p.stem != "synthesis"]

"""Reading what a chapter produced: glued values of an executed notebook, HTML tables."""

from __future__ import annotations

import ast
import io

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


MARK = "benchbook-assumed-mark"  # the marker of a value resting on a generator's choice (benchbook.marks)


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

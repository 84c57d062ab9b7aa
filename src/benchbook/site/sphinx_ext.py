"""Sphinx extension: bring stale chapters up to date before Jupyter Book reads them.

Listed in _config.yml (`sphinx: extra_extensions`), it makes `jupyter-book build book`
alone produce the whole book: at `config-inited` it executes, with papermill, every
chapter whose cache key changed; myst-nb then renders the executed notebooks without
executing them again (`execute_notebooks: "off"`). It also sets every number glued into
prose in the book's number style (benchbook.format.typeset): a glue format spec such as
`:+.1f` prints a hyphen-minus.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from .. import __version__
from ..book.paths import ChapterError, find_repo
from ..format import typeset
from .runner import refresh

log = logging.getLogger(__name__)


def _refresh(app, config) -> None:
    if os.environ.get("BENCHBOOK_SKIP_EXECUTE") == "1":
        log.info("[benchbook] BENCHBOOK_SKIP_EXECUTE=1: chapters not refreshed")
        return
    repo = find_repo(Path(app.srcdir))
    try:
        refresh(repo, log=lambda msg: log.info(f"[benchbook] {msg}"))
    except ChapterError as exc:
        raise ExtensionError(str(exc)) from None


_CROSS_GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+\.ipynb)::")


def _glue_dependencies(app, docname, source) -> None:
    """A page that quotes another page's glued numbers (the intro quotes the synthesis) is
    rebuilt when that page's executed notebook changes, so it never shows stale numbers."""
    doc_dir = Path(app.env.doc2path(docname)).parent
    for target in set(_CROSS_GLUE.findall(source[0])):
        app.env.note_dependency(str((doc_dir / target).resolve()))


def _typeset_glued(app, doctree, docname) -> None:
    """Numbers glued into prose ({glue:text}, myst-nb's 'pasted-text' spans, from this page
    or another) in the number style of tables: true minus, no negative zero, '×' ratios."""
    from docutils import nodes

    for span in doctree.findall(nodes.inline):
        if "pasted-text" in span.get("classes", ()):
            for text in list(span.findall(nodes.Text)):
                text.parent.replace(text, nodes.Text(typeset(text.astext())))


def setup(app):
    app.connect("config-inited", _refresh, priority=100)
    app.connect("source-read", _glue_dependencies)
    app.connect("doctree-resolved", _typeset_glued)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

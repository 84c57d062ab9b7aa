"""Sphinx extension: bring stale chapters up to date before Jupyter Book reads them.

Listed in _config.yml (`sphinx: extra_extensions`), it makes `jupyter-book build book`
alone produce the whole book: at `config-inited` it executes, with papermill, every
chapter whose cache key changed; myst-nb then renders the executed notebooks without
executing them again (`execute_notebooks: "off"`).
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from . import __version__
from .runner import ChapterError, find_repo, refresh

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


def setup(app):
    app.connect("config-inited", _refresh, priority=100)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

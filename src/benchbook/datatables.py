"""Sphinx extension: sortable, searchable, filterable long tables, offline.

Tables that `report.html(..., filterable=True)` marks get DataTables, from the bundle
that the itables package ships for offline use (DataTables 2 with its ColumnControl
extension, one ES module and one stylesheet). The bundle is copied into the site's
_static folder, so nothing is fetched from elsewhere, and `static/benchbook-tables.js`
(shipped here, not in book/_static, where Jupyter Book would add it a second time as a
classic script) loads it only on pages that have such a table. The table is plain HTML first: without JavaScript
every row is still there, and the Content-Security-Policy needs no inline script.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import __version__

BUNDLE = {"dt_bundle.js": "datatables.js", "dt_bundle.css": "datatables.css"}
SCRIPT = "benchbook-tables.js"


def _bundle_dir() -> Path:
    import itables

    return Path(itables.__file__).parent / "html"


def _add_bundle(app) -> None:
    """Copy the bundle to a folder Sphinx copies into _static with the book's own files."""
    out = Path(app.doctreedir).parent / "benchbook-static"
    out.mkdir(parents=True, exist_ok=True)
    for src, dest in BUNDLE.items():
        shutil.copyfile(_bundle_dir() / src, out / dest)
    shutil.copyfile(Path(__file__).parent / "static" / SCRIPT, out / SCRIPT)
    app.config.html_static_path.append(str(out))


def setup(app):
    app.connect("builder-inited", _add_bundle)
    app.add_js_file(SCRIPT, type="module")
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

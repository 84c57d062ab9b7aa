"""Sphinx extension: the site's offline JavaScript libraries, and the one script that uses them.

- Long tables that `report.html(..., filterable=True)` marks get DataTables (2.x with its
  ColumnControl extension), from the offline bundle the itables package ships.
- Charts that `benchbook.page.interactive` writes get plotly.js, from the bundle the plotly
  package ships (`plotly.offline.get_plotlyjs()`).

Both are copied into the site's _static folder, so nothing is fetched from elsewhere.
`static/benchbook-enhance.js` (shipped here, not in book/_static, where Jupyter Book would
add it a second time as a classic script) loads each library only on pages that need it.
The tables and the charts' data are plain HTML first: without JavaScript every row is
still there and the static figure stays, and the Content-Security-Policy needs no inline
script.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .. import __version__

SCRIPT = "benchbook-enhance.js"
DATATABLES = {"dt_bundle.js": "datatables.js", "dt_bundle.css": "datatables.css"}
PLOTLY = "plotly.min.js"


def _copy_libraries(out: Path) -> None:
    import itables
    from plotly.offline import get_plotlyjs

    bundle = Path(itables.__file__).parent / "html"
    for src, dest in DATATABLES.items():
        shutil.copyfile(bundle / src, out / dest)
    (out / PLOTLY).write_text(get_plotlyjs(), encoding="utf-8")
    shutil.copyfile(Path(__file__).parent / "static" / SCRIPT, out / SCRIPT)


def _add_assets(app) -> None:
    """Copy the libraries to a folder Sphinx copies into _static with the book's own files."""
    out = Path(app.doctreedir).parent / "benchbook-static"
    out.mkdir(parents=True, exist_ok=True)
    _copy_libraries(out)
    app.config.html_static_path.append(str(out))


def setup(app):
    app.connect("builder-inited", _add_assets)
    app.add_js_file(SCRIPT, type="module")
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

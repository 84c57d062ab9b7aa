"""Sphinx extension: the site's offline JavaScript libraries, and the one script that uses them.

- Long tables that `report.html(..., filterable=True)` marks get DataTables (2.x with its
  ColumnControl extension), from the offline bundle the itables package ships.
- Charts that `benchbook.page.interactive` writes get plotly.js's "basic" bundle (scatter,
  bar and pie traces: 1.2 MB, where the full bundle the plotly package ships is 4.8 MB),
  vendored in `static/vendor/` at the version of the plotly.js that package pairs with
  (`static/vendor/README.md` says where it came from and how to update it).

Both are copied into the site's _static folder, so nothing is fetched from elsewhere, and
each is fetched only when a reader reaches what needs it (a ledger, an opened chart). The
theme's FontAwesome script, which nothing here uses, is taken off every page.
`static/benchbook-enhance.js` (shipped with the library, so every book built with it has it)
loads each library only on pages that need it. All of them are classic scripts, which a page
opened from disk (file://) runs: Chromium blocks module scripts there.
The tables and the charts' data are plain HTML first: without JavaScript every row is
still there and the static figure stays, and the Content-Security-Policy needs no inline
script.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sphinx.errors import ExtensionError

from .. import __version__

SCRIPT = "benchbook-enhance.js"
DATATABLES = {"dt_bundle.js": "datatables.js", "dt_bundle.css": "datatables.css"}
PLOTLY = "plotly-basic.min.js"
VENDOR = Path(__file__).parent / "static" / "vendor"


# The bundle's last statement, `export{A as DateTime, ..., B as default, ...}`, then its
# licence comments.
_EXPORTS = re.compile(r"export\s*\{([^}]*)\}\s*;?(\s*/\*.*?\*/)*\s*\Z", re.DOTALL)
GLOBAL = "BenchbookDataTable"  # the name the classic script gives DataTables (benchbook-enhance.js)


def classic_script(module: str, source: str) -> str:
    """The itables DataTables bundle (an ES module) as a classic script that sets
    window.BenchbookDataTable. A page opened from disk (file://) may run classic scripts
    but no module: Chromium blocks module loads from a file:// page (origin 'null')."""
    m = _EXPORTS.search(module)
    names = dict(reversed(part.split(" as ")) for part in (m.group(1).split(",") if m else []) if " as " in part)
    body = module[: m.start()] + (m.group(2) or "") if m else module
    if "default" not in names or "import.meta" in body or re.search(r"(?:^|[;}])\s*import\s*[{*\"'\w]", body):
        raise ExtensionError(f"{source}: expected an ES module bundle without imports that ends in "
                             "`export{... as default ...}` (itables' DataTables bundle); found another layout")
    return f'(function () {{\n"use strict";\n{body}\nwindow.{GLOBAL} = {names["default"]};\n}})();\n'


def _copy_libraries(out: Path) -> None:
    import itables

    bundle = Path(itables.__file__).parent / "html"
    for src, dest in DATATABLES.items():
        if src.endswith(".js"):
            text = (bundle / src).read_text(encoding="utf-8")
            (out / dest).write_text(classic_script(text, str(bundle / src)), encoding="utf-8")
        else:
            shutil.copyfile(bundle / src, out / dest)
    shutil.copyfile(VENDOR / PLOTLY, out / PLOTLY)
    shutil.copyfile(Path(__file__).parent / "static" / SCRIPT, out / SCRIPT)


def _add_assets(app) -> None:
    """Copy the libraries to a folder Sphinx copies into _static with the book's own files."""
    out = Path(app.doctreedir).parent / "benchbook-static"
    out.mkdir(parents=True, exist_ok=True)
    _copy_libraries(out)
    app.config.html_static_path.append(str(out))


# pydata-sphinx-theme's FontAwesome SVG framework, "so that users can add custom icons".
_ICON_SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')


def _drop_icon_script(app, exc) -> None:
    """Take FontAwesome's SVG framework (1.5 MB, the heaviest file of every page) off the pages.

    The book adds no custom icon; the theme's stylesheet already draws every icon its pages
    use (menu, search, outline, download, light/dark) from FontAwesome's webfont. The pages
    this build wrote are looked at (a build that wrote none reads none); the others were
    looked at by the build that wrote them."""
    if exc is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for name in getattr(app, "benchbook_written", ()):  # the pages this build wrote (_written)
        page = out / app.builder.get_target_uri(name)
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        kept = _ICON_SCRIPT.sub("", text)
        if kept != text:
            page.write_text(kept, encoding="utf-8")
    for f in (out / "_static" / "scripts").glob("fontawesome.js*"):
        f.unlink()


def _written(app, pagename, templatename, context, doctree) -> None:
    app.benchbook_written = getattr(app, "benchbook_written", set()) | {pagename}


def setup(app):
    app.connect("builder-inited", _add_assets)
    app.connect("html-page-context", _written)
    app.connect("build-finished", _drop_icon_script)
    app.add_js_file(SCRIPT, loading_method="defer")  # a classic script: a page from disk runs it
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

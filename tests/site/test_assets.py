"""The DataTables bundle becomes a classic script, or the build stops saying why."""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.errors import ExtensionError

from benchbook.site.assets import GLOBAL, classic_script


def test_the_bundle_s_default_export_becomes_a_global_of_a_classic_script():
    out = classic_script('var a=1;function f(){return a}var d=f;export{a as one,d as default};/* licence */', "b.js")
    assert "export" not in out.replace("/* licence */", "")
    assert out.rstrip().endswith(f"window.{GLOBAL} = d;\n}})();".rstrip())
    assert "/* licence */" in out


def test_the_real_bundle_converts():
    import itables

    bundle = Path(itables.__file__).parent / "html/dt_bundle.js"
    out = classic_script(bundle.read_text(encoding="utf-8"), str(bundle))
    assert f"window.{GLOBAL} = " in out and "export{" not in out


@pytest.mark.parametrize("module", [
    'import{x}from"./y.js";var d=1;export{d as default};',  # a module that imports another
    "var d=1;export{d as named};",  # no default export
    "var d=import.meta.url;export{d as default};",  # a module-only expression
    "var d=1;",  # not a module at all
])
def test_another_layout_stops_the_build_naming_the_file(module):
    with pytest.raises(ExtensionError, match="b.js: expected an ES module bundle"):
        classic_script(module, "b.js")


def test_the_vendored_plotly_is_the_basic_bundle_of_the_plotly_js_the_locked_plotly_ships():
    """The charts' JSON is made by the plotly package for its plotly.js; the vendored basic
    bundle is that version, listed with its licence and where it came from."""
    import re

    import plotly

    from benchbook.site.assets import PLOTLY, VENDOR

    def version(text: str) -> str:
        return re.search(r"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)", text[:300]).group(1)

    full = (Path(plotly.__file__).parent / "package_data/plotly.min.js").read_text(encoding="utf-8")[:300]
    basic = (VENDOR / PLOTLY).read_text(encoding="utf-8")
    assert "(basic - minified)" in basic[:200]
    assert version(basic) == version(full)
    assert len(basic.encode()) < 1_300_000  # not the full 4.8 MB bundle
    listed = (VENDOR / "README.md").read_text(encoding="utf-8")
    assert f"plotly.js-basic-dist-min@{version(basic)}" in listed
    assert "MIT License" in (VENDOR / "plotly-basic.LICENSE").read_text(encoding="utf-8")

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


def test_the_vendored_chart_js_is_the_listed_release_with_its_licence():
    """The charts' library is the Chart.js release the vendor README names (version and sha256),
    with its MIT licence; light enough to load with every page that has a chart, and free of
    eval, which the pages' Content-Security-Policy forbids."""
    import hashlib
    import re

    from benchbook.site.assets import CHARTJS, VENDOR

    data = (VENDOR / CHARTJS).read_bytes()
    version = re.search(r"Chart\.js v(\d+\.\d+\.\d+)", data[:200].decode()).group(1)
    listed = (VENDOR / "README.md").read_text(encoding="utf-8")
    assert f"chart.js@{version}" in listed and f"| {version} |" in listed
    assert hashlib.sha256(data).hexdigest() in listed
    assert len(data) < 250_000
    text = data.decode()
    assert "eval(" not in text and "new Function" not in text
    assert "MIT License" in (VENDOR / "chart.js.LICENSE.md").read_text(encoding="utf-8")

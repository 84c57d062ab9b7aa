"""Text from data reaching a page: MyST prose, HTML, links, plain text, and what validate says."""

from __future__ import annotations

import lxml.html
import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin
from mdit_py_plugins.substitution import substitution_plugin

from benchbook.study import untrusted

HOSTILE = [
    '<img src=x onerror="alert(1)">', "<script>alert(1)</script>", "[x](javascript:alert(1))",
    "{download}`passwd <../../etc/passwd>`", "$\\frac{a}{b}$", "{{ sub }}", "**bold** _it_ ~~s~~",
    "```{raw} html\n<script>x</script>\n```", ":::{note}\nx\n:::", "# heading", "1. list", "- item", "+ item",
    "![i](x.png)", "see (a) [b] (c)",
    "| a | b |", "    indented", "a\\*b", "R&D &amp; &lt;b&gt;", "<https://example.org>", "a`b``c", "trailing \\",
]


def render(markdown: str):
    """MyST's syntax as the book enables it (raw HTML on, roles, directives, math, substitutions)."""
    md = (MarkdownIt("commonmark", {"html": True}).use(myst_role_plugin).use(myst_block_plugin)
          .use(colon_fence_plugin).use(dollarmath_plugin).use(substitution_plugin).enable("table"))
    tokens = md.parse(markdown)
    return tokens, md.render(markdown)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_renders_every_string_as_its_own_text_in_one_paragraph(text):
    tokens, html = render(untrusted.md(text))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert {c.type for c in tokens[1].children} <= {"text"}, tokens[1].children
    assert lxml.html.fromstring(html).text_content() == untrusted.visible(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_md_code_keeps_the_library_s_code_spans_and_nothing_else(text):
    prose = f"Run `--ignore-eos` on {text} please."
    tokens, html = render(untrusted.md_code(prose))
    kinds = {c.type for c in tokens[1].children}
    assert kinds <= {"text", "code_inline"}, tokens[1].children
    assert "--ignore-eos" in [c.content for c in tokens[1].children if c.type == "code_inline"]
    assert lxml.html.fromstring(html).text_content() == untrusted.visible(prose).replace("`", "") or \
        "`" in text  # a backtick in the data may pair with another; it never leaves the text


def test_direction_and_control_characters_are_shown_not_obeyed():
    assert untrusted.visible("a\u202eb\x07c\nd") == "a<U+202E>b<U+0007>c d"
    assert "\u202e" not in untrusted.html("x\u202ey") and "&lt;U+202E&gt;" in untrusted.html("x\u202ey")


def test_html_escapes_attribute_quotes():
    assert untrusted.html('"><script>') == "&quot;&gt;&lt;script&gt;"


@pytest.mark.parametrize("value,ok", [
    ("https://example.org/a?b=1", True), ("http://x.y", True), ("javascript:alert(1)", False),
    ("JaVaScRiPt:alert(1)", False), ("data:text/html,<script>", False), ("//evil.org", False),
    ("https://exa mple.org", False), ("https://x.org/\u202e", False), ("", False), (None, False)])
def test_only_http_links(value, ok):
    assert (untrusted.url(value) is not None) == ok


def test_scan_warns_on_names_and_refuses_links_that_are_not_http():
    import pandas as pd

    manifest = {"title": "ok", "description": "d" * 500, "sources": {"s": {"url": "javascript:x", "title": "<b>t"}},
                "configs": {"a": {"label": "L" * 300, "model": "m\u202e"}}}
    tables = {"runs": pd.DataFrame({"model_id": ["fine", "<svg onload=x>"], "n": [1, 2]})}
    warnings, errors = untrusted.scan(manifest, tables)
    text = "\n".join(warnings)
    assert "description" not in text  # prose may be long
    assert "sources.s.title: markup" in text and "configs.a.label: 300 characters" in text
    assert "configs.a.model: Unicode direction controls" in text
    assert "raw files, column model_id (table runs): markup" in text
    assert errors == ["study.yml: sources.s.url: 'javascript:x' is not an http(s) address; "
                      "links are built only to http:// or https://"]
    assert untrusted.scan({"title": "H100 80GB: dense 27B (vLLM 0.21)"}, {}) == ([], [])


def test_downloads_never_hand_a_spreadsheet_a_formula(tmp_path):
    import pandas as pd

    from benchbook.page.report import write_downloads

    df = pd.DataFrame({"model": ['=HYPERLINK("http://x")', "--ignore-eos", "@SUM(1)", "+cmd|' /C calc'!A0", None],
                       "=cmd|x!A": [1, 2, 3, 4, 5], "tps": [1.5, -2.0, 3.0, 4.0, 5.0]})
    write_downloads({"t": df}, tmp_path, "bundle")
    back = pd.read_csv(tmp_path / "t.csv")
    assert list(back.columns) == ["model", "'=cmd|x!A", "tps"]
    assert back["model"].tolist()[:4] == ["'=HYPERLINK(\"http://x\")", "--ignore-eos", "'@SUM(1)",
                                          "'+cmd|' /C calc'!A0"]
    assert back["tps"].tolist() == [1.5, -2.0, 3.0, 4.0, 5.0]  # numbers untouched

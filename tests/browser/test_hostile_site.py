"""Hostile text in every free-text field of every chapter's data, built into a strict book and
opened in Debian's chromium: nothing planted may run, render as markup or become a link, and
the text must show literally (see tests/hostile.py for the corpus)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import hostile
import projects
from benchbook.book.registry import chapters
from browser import serve

BIN = Path(sys.executable).parent
CHAPTERS = [c.id for c in chapters() if c.contract is not None and not c.notebook]  # one page per notebook
pytestmark = pytest.mark.build

# What a page must not contain if the data's text was trusted anywhere.
PLANTED = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  img: document.querySelectorAll('img[src="x"]').length,
  handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(
      a => a.name.startsWith('on') && a.value.includes('pwned'))).length,
  scripts: [...document.querySelectorAll('script:not([type="application/json"])')].filter(
      s => s.textContent.includes('pwned')).length,
  svg_links: document.querySelectorAll('svg a').length,
  js_links: [...document.querySelectorAll('a[href]')].filter(
      a => a.getAttribute('href').trim().toLowerCase().startsWith('javascript')).length,
  passwd_links: document.querySelectorAll('a[href*="passwd"]').length,
  bold: [...document.querySelectorAll('b, strong')].filter(b => b.textContent === 'bold').length,
  math: document.querySelectorAll('.math, mjx-container').length,
})"""


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A book of every chapter and the synthesis on hostile copies of their data, built strictly."""
    project = projects.copy_project(tmp_path_factory.mktemp("hostile"), chapters=CHAPTERS + ["synthesis"])
    planted = {c: hostile.plant(project / "data" / c) for c in CHAPTERS}
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return project, planted


def test_the_corpus_reaches_every_chapter(book):
    _, planted = book
    assert set(planted) == set(CHAPTERS) and CHAPTERS
    for chapter, fields in planted.items():
        assert any(f.startswith("study.yml: configs.") for f in fields), chapter
        assert any(f.startswith("raw/") for f in fields), (chapter, fields)


def test_validate_warns_about_every_hostile_name_and_still_accepts_the_folder(book):
    project, _ = book
    proc = subprocess.run([str(BIN / "benchbook"), "validate", "data/h100-dense-vs-moe-mtp"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stdout.splitlines() if line.strip().startswith("warning:")]
    text = "\n".join(warnings)
    for where in ("study.yml: title", "configs.h100-dense.label", "raw files, column model_id"):
        assert where in text, (where, text)
    assert "markup" in text and "direction controls" in text and "more than 200" in text


@pytest.mark.browser
def test_nothing_planted_runs_or_renders_and_the_text_shows_literally(book, browser):
    project, _ = book
    site = project / "book" / "_build" / "html"
    pages = sorted((site / "studies").glob("*.html"))
    assert {p.stem for p in pages} >= set(CHAPTERS) | {"synthesis"}
    with serve(site) as server:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path in pages:
            page.goto(f"{server}/studies/{path.name}", wait_until="load")
            # interactive charts are drawn as they near the screen: their labels are inert text as well
            for box in page.locator("div.benchbook-chart").all():
                box.scroll_into_view_if_needed()
            if page.locator("div.benchbook-chart").count():
                page.locator("div.benchbook-chart[data-drawn]").first.wait_for(timeout=15000)
                legend = " ".join(page.locator("ul.benchbook-chart-legend button").all_text_contents())
                if "Evil" in legend:  # a planted label reached the legend: shown as written
                    assert "<b>bold</b>" in legend, (path.name, legend[:300])
            found = page.evaluate(PLANTED)
            assert found == {k: (None if k == "pwned" else 0) for k in found}, (path.name, found)
            if path.stem in CHAPTERS:  # the synthesis shows labels only where a figure is made
                body = page.inner_text("article")
                for literal in hostile.LITERALS:
                    assert literal in body, (path.name, literal)
                assert "<U+202E>RLO<U+202C>" in body and "\u202e" not in body, path.name
        # search results quote the pages: the planted text is found, shown, and inert
        page.goto(f"{server}/search.html?q=Evil", wait_until="load")
        page.locator("#search-results ul.search li").first.wait_for(timeout=15000)
        page.wait_for_timeout(1000)  # summaries are fetched after the list appears
        found = page.evaluate(PLANTED)
        assert found == {k: (None if k == "pwned" else 0) for k in found}, ("search", found)
        context.close()
    assert dialogs == []


@pytest.mark.browser
def test_the_page_policy_stops_a_script_that_reaches_the_content_and_lets_the_theme_run(book, browser):
    """The second wall: a script or handler planted inside a built page's article (as if an
    escape were forgotten) does not run; the theme's own inline script does."""
    project, _ = book
    site = project / "book" / "_build" / "html"
    page_html = (site / "studies" / "h100-dense-vs-moe-mtp.html").read_text(encoding="utf-8")
    assert 'http-equiv="Content-Security-Policy"' in page_html
    planted = page_html.replace('<article class="bd-article">', '<article class="bd-article">'
                                '<script>window.__csp=1</script><img src=x onerror="window.__csp=2">', 1)
    assert planted != page_html
    (site / "studies" / "planted.html").write_text(planted, encoding="utf-8")
    with serve(site) as server:
        page = browser.new_page()
        violations = []
        page.on("console", lambda m: "Content Security Policy" in m.text and violations.append(m.text))
        page.goto(f"{server}/studies/planted.html", wait_until="load")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__csp === undefined")
        assert page.evaluate("document.documentElement.dataset.mode") == "auto"  # the theme's inline script
        assert page.locator("img[src='x']").count() == 1  # present, but its handler was refused
        assert len(violations) >= 2, violations
        page.close()

"""The published site in a real browser: Debian's chromium driven by Playwright.

One session fixture publishes two versions from a copy of the project with the real
command (`benchbook publish`): v0.1.0 with the H100 chapter's hourly price raised, then
v0.2.0 with the defaults, so v0.2.0's "changes since" section has numbers to show that
differ from its own. The tree is served by http.server on 127.0.0.1. Screenshots of
the chapter pages go to test-artifacts/. The offline checks (links, stamps) need no
browser and are marked `build` only.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest
import yaml

from benchbook.book.registry import chapters
from benchbook.ledger.published import load_published
from benchbook.site import changes
from benchbook.site.runner import Chapter
from browser import load_every_figure, serve
from pages import chapter_pages, measured_pages
from projects import ignore_generated

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "h100-dense-vs-moe-mtp"
OLD, NEW = "v0.1.0", "v0.2.0"
OLD_PRICE = 2.5  # v0.1.0's hourly price; v0.2.0 uses the notebook's default
ARTIFACTS = ROOT / "test-artifacts"
# Full-page screenshots of every chapter page, to look at: BENCHBOOK_SCREENSHOTS=1 make test
SCREENSHOTS = bool(os.environ.get("BENCHBOOK_SCREENSHOTS"))
pytestmark = pytest.mark.build


# ---------------------------------------------------------------- the published tree

# A notebook's second pages (the same notebook on measured files: Strix Halo and DGX Spark on
# real runs) are left out of the published book: its two versions execute every page twice, and
# those pages are the chapters' own HTML on other data, built strictly in tests/e2e/test_build.py.
SECOND_PAGES = {f"studies/{c.id}" for c in chapters() if c.notebook_name != c.id}


def copy_project(dest: Path) -> Path:
    """The project's book inputs, with book/publish.md added to the table of contents and a
    notebook's second pages left out (SECOND_PAGES)."""
    for name in ("_config.yml", "_toc.yml", "notebooks", "data"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / name)
    shutil.copytree(ROOT / "book", dest / "book", symlinks=True, ignore=ignore_generated)  # as a fresh clone
    toc = yaml.safe_load((dest / "_toc.yml").read_text())
    for part in toc["parts"]:
        part["chapters"] = [c for c in part["chapters"] if c.get("file") not in SECOND_PAGES]
    files = [c.get("file") for part in toc["parts"] for c in part["chapters"]]
    if "publish" not in files:
        toc["parts"][-1]["chapters"].append({"file": "publish"})
    (dest / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    intro = dest / "book" / "intro.md"  # its table of studies, without the pages left out
    lines = intro.read_text(encoding="utf-8").splitlines(keepends=True)
    intro.write_text("".join(ln for ln in lines if not any(f"{{doc}}`{p}`" in ln for p in SECOND_PAGES)),
                     encoding="utf-8")
    return dest


def tag(project: Path, version: str) -> None:
    """Commit the project as it is and tag it: a release is published from its tag."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    if not (project / ".git").exists():
        subprocess.run(git + ["init", "-q"], cwd=project, check=True)
        (project / ".gitignore").write_text("site/\n_build/\n")
    subprocess.run(git + ["add", "-A"], cwd=project, check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", version], cwd=project, check=True)
    subprocess.run(git + ["tag", version], cwd=project, check=True)


def publish(project: Path, site: Path, version: str) -> str:
    tag(project, version)
    proc = subprocess.run([str(BIN / "benchbook"), "publish", "--version", version, "--site", str(site)],
                          cwd=project, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-4000:]
    return proc.stdout


@pytest.fixture(scope="session")
def published(tmp_path_factory):
    """(project, site, what each publish printed, remembered parameters after each)."""
    project = copy_project(tmp_path_factory.mktemp("project"))
    site = project / "site"
    chapter = Chapter(project, STUDY)
    chapter.remember({"price_per_hour": OLD_PRICE})  # as `benchbook run -p price_per_hour 2.5` leaves it
    logs = {OLD: publish(project, site, OLD)}
    remembered = {OLD: chapter.overrides()}
    chapter.remember({})
    logs[NEW] = publish(project, site, NEW)
    remembered[NEW] = chapter.overrides()
    return project, site, logs, remembered


@pytest.fixture(scope="session")
def site(published) -> Path:
    return published[1]


def html_pages(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.html")
                  if not {"_sources", "_static", "_downloads", "_images"} & set(p.relative_to(folder).parts))


# ---------------------------------------------------------------- offline checks

def test_publish_builds_the_tree_and_restores_run_parameters(published):
    _, site, logs, remembered = published
    assert "latest/ is now a copy of v0.1.0" in logs[OLD]
    assert f"changes since {OLD}" in logs[NEW] and "latest/ is now a copy of v0.2.0" in logs[NEW]
    assert {p.name for p in site.iterdir()} >= {OLD, NEW, "latest", "switcher.json", ".nojekyll", "index.html"}
    entries = json.loads((site / "switcher.json").read_text())
    assert [(e["version"], e["url"], e["preferred"]) for e in entries] == [
        (NEW, f"/{NEW}/", True), (OLD, f"/{OLD}/", False)]
    assert remembered == {OLD: {"price_per_hour": OLD_PRICE}, NEW: {}}  # previous_site not left behind


def test_no_internal_link_is_broken(site):
    """Every href/src of every page (and each redirect) resolves to a file, and each
    #fragment to an element id of the target page."""
    import lxml.html

    ids: dict[Path, set[str]] = {}

    def anchors(page: Path) -> set[str]:
        if page not in ids:
            doc = lxml.html.parse(str(page)).getroot()
            ids[page] = {e.get("id") for e in doc.iter() if e.get("id")} | \
                        {e.get("name") for e in doc.iter("a") if e.get("name")}
        return ids[page]

    broken, checked = [], 0
    for page in html_pages(site):
        doc = lxml.html.parse(str(page)).getroot()
        refs = [(el.tag, el.get(attr)) for el in doc.iter() if isinstance(el.tag, str)
                for attr in ("href", "src") if el.get(attr)]
        for meta in doc.iter("meta"):
            m = re.match(r"\s*\d+\s*;\s*url=(.+)", meta.get("content", ""), re.I)
            if (meta.get("http-equiv") or "").lower() == "refresh" and m:
                refs.append(("meta", m.group(1).strip()))
        for tag, ref in refs:
            parts = urlsplit(ref)
            if parts.scheme or ref.startswith("//"):
                continue  # external, data: and mailto: links are not ours to check
            path = unquote(parts.path)
            target = page if not path else (site / path.lstrip("/") if path.startswith("/") else page.parent / path)
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: <{tag}> {ref} (no such file)")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in anchors(target):
                broken.append(f"{page.relative_to(site)}: <{tag}> {ref} (no such anchor)")
    assert checked > 500
    assert not broken, "\n".join(broken)


def stamp(page: Path) -> str:
    import lxml.html

    found = lxml.html.parse(str(page)).getroot().find_class("benchbook-stamp")
    assert found, f"{page}: no version stamp in the footer"
    return found[0].text_content()


def test_every_page_carries_version_date_code_and_data_hash(site):
    hashes = {}
    for version in (OLD, NEW, "latest"):
        for page in html_pages(site / version):
            if page.name == "index.html":
                continue  # the redirect to the root document
            text = stamp(page)
            expected = NEW if version == "latest" else version
            m = re.fullmatch(rf"Version {re.escape(expected)} · built \d{{4}}-\d\d-\d\d \d\d:\d\d UTC · "
                             r"code (\S+.*) · data (.+)", text)
            assert m, (page, text)
            hashes[(version, page.name)] = dict(re.findall(r"([\w.-]+) ([0-9a-f]{16})", m.group(2)))
    chapter = hashes[(NEW, f"{STUDY}.html")]
    assert set(chapter) == {STUDY, "strix-halo-baseline"}
    provenance = pd.read_html(io.StringIO((site / NEW / "studies" / f"{STUDY}.html").read_text()),
                              match="Data folders used by this page")[0]
    assert dict(zip(provenance["study"], provenance["data_hash"])) == chapter


# ---------------------------------------------------------------- the browser

@pytest.fixture(scope="session")
def server(site):
    with serve(site) as url:
        yield url


class Tab:
    """A page that records console errors, uncaught exceptions and failed requests."""

    def __init__(self, page):
        self.page, self.errors = page, []
        page.on("console", lambda m: m.type == "error"
                and self.errors.append(f"console: {m.text} ({m.location.get('url')})"))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        page.on("requestfailed", lambda r: r.failure != "net::ERR_ABORTED"  # cancelled by a navigation
                and self.errors.append(f"request failed: {r.url} {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status}: {r.url}"))

    def open(self, url: str):
        """Load a page and wait until its scripts are done: the version menu filled in from
        switcher.json (the last thing a page fetches), or the network quiet for redirects."""
        self.errors.clear()
        redirect = urlsplit(url).path.endswith("/") or url.endswith("index.html")
        self.page.goto(url, wait_until="networkidle" if redirect else "load")
        if not redirect and self.page.locator(".version-switcher__button").count():
            # a locator wait: wait_for_function evaluates a string, which the pages' CSP forbids
            self.page.locator(".version-switcher__menu a").first.wait_for(state="attached")
        return self.page


@contextmanager
def tab_at(browser, width: int, height: int = 900):
    """A Tab in a fresh context of the given viewport, closed even when the test fails."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        yield Tab(context.new_page())
    finally:
        context.close()


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield Tab(context.new_page())
    context.close()


def chapter_url(server: str, version: str) -> str:
    return f"{server}/{version}/studies/{STUDY}.html"


@pytest.mark.browser
def test_every_page_loads_without_console_errors(site, server, tab):
    pages = [(v, p.relative_to(site / v).as_posix()) for v in (OLD, NEW) for p in html_pages(site / v)]
    pages += [("", "index.html"), ("latest", "index.html")]
    assert len(pages) > 12
    problems = []
    for version, rel in pages:
        page = tab.open(f"{server}/{version + '/' if version else ''}{rel}")
        problems += [f"{version}/{rel}: {e}" for e in tab.errors]
        if SCREENSHOTS and rel.startswith("studies/"):
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"site-{version}-{Path(rel).stem}.png"), full_page=True)
    assert not problems, "\n".join(problems)


@pytest.mark.browser
def test_switcher_lists_both_versions_and_navigates_between_them(server, tab):
    from playwright.sync_api import expect

    page = tab.open(chapter_url(server, NEW))
    button = page.locator(".version-switcher__button:visible")
    expect(button).to_have_text(f"{NEW} (latest)")
    button.click()
    items = page.locator(".version-switcher__menu:visible a")
    expect(items).to_have_text([f"{NEW} (latest)", OLD])
    items.filter(has_text=OLD).click()
    page.wait_for_url(chapter_url(server, OLD))  # the same chapter, in the other version
    expect(page.locator(".benchbook-stamp .benchbook-version")).to_have_text(OLD)
    expect(page.locator(".version-switcher__button:visible")).to_have_text(OLD)

    page.locator(".version-switcher__button:visible").click()
    page.locator(".version-switcher__menu:visible a").filter(has_text=NEW).click()
    page.wait_for_url(chapter_url(server, NEW))
    expect(page.locator(".benchbook-stamp .benchbook-version")).to_have_text(NEW)
    assert not tab.errors, tab.errors


@pytest.mark.browser
def test_root_and_latest_reach_the_newest_release(server, tab):
    from playwright.sync_api import expect

    for start in ("/", "/latest/"):
        page = tab.open(server + start)
        page.wait_for_url(f"{server}/latest/intro.html")
        expect(page.locator(".benchbook-stamp .benchbook-version")).to_have_text(NEW)
        expect(page.locator(".version-switcher__button:visible")).to_have_text(f"{NEW} (latest)")
        assert not tab.errors, tab.errors


@pytest.mark.browser
@pytest.mark.parametrize("version", [OLD, NEW])
def test_figures_load_and_carry_alt_text(server, tab, version):
    page = tab.open(chapter_url(server, version))
    load_every_figure(page)
    images = page.locator("article img").evaluate_all(
        "els => els.map(e => ({src: e.getAttribute('src'), width: e.naturalWidth, alt: e.alt, done: e.complete}))")
    assert len(images) >= 4, images
    for img in images:
        assert img["done"] and img["width"] > 0, img
        assert len(img["alt"].strip()) > 20, img  # a description, not a file name


@pytest.mark.browser
@pytest.mark.parametrize("version", [OLD, NEW])
def test_every_tidy_data_download_returns_its_file(server, tab, version):
    page = tab.open(chapter_url(server, version))
    links = page.locator("article a.download").evaluate_all("els => els.map(e => e.href)")
    names = {Path(urlsplit(u).path).name for u in links}
    assert {"runs.csv", "requests.csv", "claims.csv", "published_vs_reproduced.csv"} <= names
    for url in links:
        response = page.request.get(url)
        assert response.status == 200, url
        body = response.body()
        if url.endswith(".csv"):
            df = pd.read_csv(io.BytesIO(body))
            assert len(df) > 0 and len(df.columns) > 1, url
        elif url.endswith("-parquet.zip"):
            import polars as pl

            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                assert "runs.parquet" in zf.namelist()
                assert pl.read_parquet(io.BytesIO(zf.read("runs.parquet"))).height > 0, url
        elif url.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                assert "runs.csv" in zf.namelist()
                pd.read_csv(zf.open("runs.csv"))


@pytest.mark.browser
@pytest.mark.parametrize("term", ["Strix", "TTFT"])
def test_search_finds_the_chapter(server, tab, term):
    from playwright.sync_api import expect

    page = tab.open(f"{server}/{NEW}/search.html?q={term}")
    results = page.locator("#search-results ul.search li")
    expect(results.first).to_be_visible(timeout=15000)
    hrefs = results.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert any(f"studies/{STUDY}.html" in h for h in hrefs), hrefs
    assert not tab.errors, tab.errors


def table_rows(page, caption: str) -> list[list[str]]:
    table = page.locator("table", has=page.locator("caption", has_text=caption))
    return table.evaluate("t => Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText.trim()))")


@pytest.mark.browser
def test_changes_section_shows_the_previous_versions_published_numbers(published, server, tab):
    # the notebook's default (None) means the write-up's own price, from its published.yml
    default_price = Chapter(published[0], STUDY).effective_parameters({})["price_per_hour"] or \
        load_published(published[0] / "data" / STUDY / "published.yml").parameters["price_per_hour"]["value"]
    page = tab.open(chapter_url(server, OLD))
    section = page.locator("section#changes-since-the-previous-version")
    assert "no earlier published version" in section.inner_text()

    link = page.locator("article a.download", has_text="runs").first.evaluate("e => e.href")
    old_runs = pd.read_csv(io.BytesIO(page.request.get(link).body())).set_index("run_id")

    page = tab.open(chapter_url(server, NEW))
    link = page.locator("article a.download", has_text="runs").first.evaluate("e => e.href")
    new_runs = pd.read_csv(io.BytesIO(page.request.get(link).body())).set_index("run_id")
    section = page.locator("section#changes-since-the-previous-version")
    assert f"Since {OLD}:" in section.inner_text()
    header, *rows = table_rows(page, f"Changes since {OLD}: runs")
    assert header[0] == "run" and len(rows) == len(new_runs)  # every run's cost changed
    col = {name: i for i, name in enumerate(header)}
    for row in rows:
        run = row[0]
        for q, name in (("cost_per_m", "cost per M tokens"), ("output_tps", "output t/s")):
            if f"{name} ({OLD})" in col:
                assert row[col[f"{name} ({OLD})"]] == changes.rounded(old_runs.loc[run, q]), (run, q)
                assert row[col[f"{name} (now)"]] == changes.rounded(new_runs.loc[run, q]), (run, q)
        # v0.1.0 was published at a higher hourly price: its costs differ, its rates do not
        assert row[col[f"cost per M tokens ({OLD})"]] != row[col["cost per M tokens (now)"]]
        assert row[col["output t/s (now)"]] == row[col[f"output t/s ({OLD})"]]
        assert row[col["status"]] == "changed"
        old_cost = float(row[col[f"cost per M tokens ({OLD})"]])
        assert old_cost == pytest.approx(float(row[col["cost per M tokens (now)"]]) * OLD_PRICE / default_price,
                                         rel=6e-3)
    # numbers are rounded for reading: no more than three significant digits below 100
    assert all(len(re.sub(r"[^0-9]", "", c.lstrip("0.").split("e")[0])) <= 3
               for row in rows for c in row[1:-1] if re.fullmatch(r"[0-9.]+", c) and float(c) < 100)


@pytest.mark.browser
def test_every_chapter_of_the_newest_version_has_its_changes_and_the_older_one_a_banner(site, server, browser):
    with tab_at(browser, 1400) as tab:
        for name in chapter_pages(site / NEW):
            page = tab.open(f"{server}/{NEW}/studies/{name}.html")
            text = page.locator("section#changes-since-the-previous-version").inner_text()
            assert f"Since {OLD}:" in text, (name, text[:200])
            assert page.locator("#bd-header-version-warning").is_hidden(), name  # the newest: no banner
        page = tab.open(f"{server}/{OLD}/studies/{STUDY}.html")
        banner = page.locator("#bd-header-version-warning")
        banner.wait_for(state="visible")
        assert OLD in banner.inner_text()
        link = banner.locator("a", has_text="stable").get_attribute("href")
        assert link.endswith(f"/{NEW}/studies/{STUDY}.html"), link


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 900])
def test_on_a_phone_the_menu_opens_the_chapters_and_contents_the_outline(server, browser, width):
    """Below the theme's 960 px breakpoint the sidebars are dialogs behind two buttons
    (benchbook-nav.js works around pydata-sphinx-theme issue 2451)."""
    from playwright.sync_api import expect

    with tab_at(browser, width, 844) as tab:
        page = tab.open(chapter_url(server, NEW))
        for button, dialog, link in (("primary-toggle", "pst-primary-sidebar-modal", f"{STUDY}.html"),
                                     ("secondary-toggle", "pst-secondary-sidebar-modal", "#")):
            page.locator(f".{button}:visible").first.click()
            shown = page.locator(f"#{dialog}")
            expect(shown).to_be_visible(timeout=5000)
            hrefs = shown.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
            assert len(hrefs) >= 5 and any(link in (h or "") for h in hrefs), (button, hrefs)
            page.keyboard.press("Escape")
            expect(shown).to_be_hidden(timeout=5000)
        # a tap on an entry of the outline takes the reader there and closes the drawer
        page.locator(".secondary-toggle:visible").first.click()
        outline = page.locator("#pst-secondary-sidebar-modal")
        expect(outline).to_be_visible(timeout=5000)
        entry = outline.locator("a[href^='#']").nth(3)
        target = entry.get_attribute("href")
        entry.click()
        expect(outline).to_be_hidden(timeout=5000)
        assert page.evaluate("() => location.hash") == target
        assert not tab.errors, tab.errors


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1400])
def test_one_search_entry_at_every_width_and_it_opens_the_search(server, browser, width):
    from playwright.sync_api import expect

    with tab_at(browser, width) as tab:
        page = tab.open(chapter_url(server, NEW))
        entries = page.locator(".search-button-field:visible, .search-button__button:visible")
        assert entries.count() == 1, entries.count()
        entries.first.click()
        expect(page.get_by_role("searchbox", name="Search this book...")).to_be_visible(timeout=5000)
        assert not tab.errors, tab.errors


SHORT_CELLS_BROKEN = """() => [...document.querySelectorAll('table.benchbook-table td, table.benchbook-table th')]
  .filter(c => { const t = c.textContent.trim(); if (!t || t.length > 8) return false;
                 const r = document.createRange(); r.selectNodeContents(c);
                 // a raised marker (ᵃ) sits higher on the same line: lines differ by a line height
                 const tops = [...r.getClientRects()].map(x => x.top).sort((a, b) => a - b);
                 const fs = parseFloat(getComputedStyle(c).fontSize);
                 return tops.some((t, i) => i > 0 && t - tops[i - 1] > 0.8 * fs); })
  .map(c => c.textContent.trim())"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1400])
def test_no_short_table_cell_is_broken_over_two_lines(server, browser, width):
    with tab_at(browser, width) as tab:
        page = tab.open(chapter_url(server, NEW))
        assert page.locator("table.benchbook-table").count() >= 10
        assert page.evaluate(SHORT_CELLS_BROKEN) == []


VERDICT_STYLE = """() => Object.fromEntries(['holds', 'does not hold'].map(v => {
  const c = [...document.querySelectorAll('td.benchbook-verdict')].find(e => e.textContent.trim() === v);
  if (!c) return [v, null];
  const s = getComputedStyle(c), b = getComputedStyle(c, '::before');
  return [v, {color: s.color, weight: s.fontWeight, symbol: b.content}]; }))"""


@pytest.mark.browser
def test_verdicts_differ_by_colour_symbol_and_weight_not_colour_alone(server, tab):
    page = tab.open(chapter_url(server, NEW))
    style = page.evaluate(VERDICT_STYLE)
    holds, fails = style["holds"], style["does not hold"]
    assert holds and fails, style
    assert holds["color"] != fails["color"]
    assert "✓" in holds["symbol"] and "✗" in fails["symbol"]
    assert int(fails["weight"]) >= 700 > int(holds["weight"])


# ---------------------------------------------------------------- key results, ledgers

@pytest.mark.browser
def test_every_chapter_opens_with_its_key_results_in_the_first_screen(site, server, browser):
    pages = chapter_pages(site / NEW)
    assert len(pages) >= 5
    with tab_at(browser, 1400, 900) as tab:
        for name in pages:
            page = tab.open(f"{server}/{NEW}/studies/{name}.html")
            box = page.locator(".benchbook-key-results")
            assert box.count() == 1, name
            rows = box.locator("tbody tr")
            # a page on measured runs of another setup shows the headlines its data holds (the
            # Strix Halo one two of three: the third would rest on the H100 write-up's
            # reconstructed folder, kept apart), or says it holds none
            if name in measured_pages():
                assert rows.count() >= 2 or "holds none of the write-up's headline numbers" in box.inner_text(), name
            else:
                assert rows.count() >= 3, name
            # the heading, the data line and the first three headlines (or all, if fewer) are on
            # screen unscrolled
            last = rows.nth(min(rows.count(), 3) - 1) if rows.count() else box
            bottom = last.evaluate("e => e.getBoundingClientRect().bottom")
            assert bottom <= 900, (name, bottom)
            # each headline links to its row of the ledger on the same page
            for href in rows.locator("a").evaluate_all("els => els.map(e => e.getAttribute('href'))"):
                assert page.locator(f"[id='{href[1:]}']").count() == 1, (name, href)


# the verdict as read, without an assumed-value marker ("does not holdᵃ" is "does not hold")
VISIBLE_VERDICTS = """t => [...t.tBodies[0].rows].map(r => {
  const c = r.querySelector('td.benchbook-verdict').cloneNode(true);
  c.querySelectorAll('.benchbook-assumed-mark').forEach(m => m.remove());
  return c.textContent.trim(); })"""


@pytest.mark.browser
def test_the_verdict_filter_leaves_only_the_chosen_verdict(server, tab):
    page = tab.open(chapter_url(server, NEW))
    ledger = page.locator("table.benchbook-filterable").first
    ledger.scroll_into_view_if_needed()  # DataTables is fetched when a ledger comes near the screen
    page.wait_for_selector("div.dt-container table.benchbook-filterable")
    before = ledger.evaluate(VISIBLE_VERDICTS)
    assert {"holds", "does not hold"} <= set(before)
    ledger.locator("thead th", has_text="verdict").locator("button.dtcc-button_dropdown").click()
    page.locator(".dtcc-dropdown button.dtcc-button", has_text="does not hold").click()
    after = ledger.evaluate(VISIBLE_VERDICTS)
    assert after and set(after) == {"does not hold"}
    assert len(after) == before.count("does not hold")
    page.locator("div.dt-search input").fill("zzz-no-such-claim")  # the search box filters too
    assert ledger.locator("tbody td.benchbook-verdict").count() == 0
    assert not tab.errors, tab.errors


def test_the_synthesis_lists_every_claim_that_does_not_hold_with_a_link_to_its_row(site):
    import lxml.html

    failing = 0
    for name in chapter_pages(site / NEW):
        if name in measured_pages():  # a second page of a notebook: not in the synthesis
            continue
        doc = lxml.html.parse(str(site / NEW / "studies" / f"{name}.html")).getroot()
        failing += len(doc.xpath("//table[contains(@class,'benchbook-filterable')]"
                                 "//td[contains(@class,'benchbook-verdict-does-not-hold')]"))
    doc = lxml.html.parse(str(site / NEW / "studies" / "synthesis.html")).getroot()
    table = doc.xpath("//table[caption[contains(., 'do not hold')]] | "
                      "//details[summary[contains(., 'do not hold')]]//table")
    assert table, "no table of the claims that do not hold"
    links = [a.get("href") for a in table[0].iter("a")]
    assert failing > 5 and len(links) == failing
    assert all(re.match(r"[\w.-]+\.html#claim-[a-z0-9-]+$", h) for h in links), links[:5]


# Each figure as the reader sees it: the image the browser chose (a <picture>'s phone <source> or
# its <img>), that image's smallest text in its own pixels (data-font-px, from matplotlib's
# text artists: benchbook.page.render), its natural and its displayed width.
FIGURES = """() => [...document.querySelectorAll('article figure img')].map(i => {
  const source = [...(i.closest('picture') ? i.closest('picture').querySelectorAll('source') : [])]
    .find(s => i.currentSrc.endsWith(s.getAttribute('srcset').split('/').pop()));
  return {src: i.getAttribute('src'), phone: !!source, font: parseFloat((source || i).dataset.fontPx),
          shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
          link: i.closest('a') ? i.closest('a').getAttribute('href') : null}; })"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1000, 1240, 1400])
def test_figure_text_shows_at_nine_pixels_or_more_at_every_width_and_a_figure_opens_full_size(
        site, server, browser, width):
    """A phone (390 px) gets each figure laid out for it; the narrowest desktop columns (a
    1000 px window with the chapter list, 1240 px with the outline too) and a wide one get
    the desktop figure. Smallest text as shown = its size in the image x shown / natural width."""
    with tab_at(browser, width) as tab:
        seen = 0
        for name in chapter_pages(site / NEW):
            page = tab.open(f"{server}/{NEW}/studies/{name}.html")
            load_every_figure(page)
            for fig in page.evaluate(FIGURES):
                seen += 1
                assert fig["natural"] and fig["font"] > 0, (name, fig)
                assert fig["phone"] == (width == 390), (name, fig)
                smallest = fig["font"] * fig["shown"] / fig["natural"]
                assert smallest >= 9, (name, width, fig, smallest)
                assert fig["link"] and fig["link"].split("/")[-1] == fig["src"].split("/")[-1], (name, fig)
        assert seen >= 15


# The page's first chart as Chart.js drew it (benchbook-enhance.js): how many of its canvas's
# pixels are painted and a digest of them, where point i of series s lies on the screen, the
# colour its axis labels were drawn in, which series show, and the canvas's box.
CHART = """([s, i]) => {
  const canvas = document.querySelector('div.benchbook-chart canvas');
  const chart = Chart.getChart(canvas);
  const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0, digest = 0;
  for (let k = 0; k < px.length; k += 4) {
    if (px[k + 3]) painted++;
    digest = (digest * 31 + px[k] + 7 * px[k + 1] + 13 * px[k + 2] + 17 * px[k + 3]) % 1000000007;
  }
  const r = canvas.getBoundingClientRect(), p = chart.getDatasetMeta(s).data[i];
  return {painted, pixels: px.length / 4, digest, x: r.left + p.x, y: r.top + p.y,
          text: chart.scales.x.options.ticks.color, font: chart.scales.x.options.ticks.font.size,
          shown: chart.data.datasets.map((d, k) => chart.isDatasetVisible(k)),
          box: {x: r.left, y: r.top, width: r.width, height: r.height},
          page: getComputedStyle(canvas.closest('div.benchbook-chart')).color};
}"""


def drawn_chart(page):
    """Scroll to the page's first chart and wait until it is drawn (it draws as it nears the screen)."""
    page.locator("div.benchbook-chart").first.scroll_into_view_if_needed()
    page.locator("div.benchbook-chart[data-drawn]").first.wait_for(timeout=30000)
    return page.locator("div.benchbook-interactive").first


@pytest.mark.browser
def test_an_interactive_chart_draws_inline_shows_values_on_hover_hides_a_series_and_follows_dark_mode(
        server, tab):
    """The H100 sweep's chart, unfolded: its canvas is drawn; hovering a point shows its values
    and the choices they rest on as page text; a legend entry hides its series; when the
    theme turns dark the chart is drawn again with the theme's text colour. No script is refused
    by the page's Content-Security-Policy (Chromium reports a refusal as a console error)."""
    page = tab.open(chapter_url(server, NEW))
    assert not page.locator("details.benchbook-interactive").count()  # nothing folded
    block = drawn_chart(page)
    # the dense model at 4 clients: its P99 was a generator's choice (the write-up printed none
    # below 16 clients), so the series is "(assumed)", or "(partly assumed)" where its points at
    # 16 and 32 clients rest on published numbers only, and the tip names the choice
    chart = page.evaluate(CHART, [0, 1])
    assert chart["painted"] > 0.02 * chart["pixels"], chart  # drawn, not blank
    page.mouse.move(chart["x"], chart["y"])
    tip = block.locator("div.benchbook-chart-tip")
    tip.wait_for(state="visible", timeout=5000)
    text = tip.inner_text()
    assert re.search(r"output tokens/s: [0-9][0-9,.]*\n", text) and "median TTFT: " in text, text
    assert re.search(r" \((partly )?assumed\)$", text.split("\n")[0]), text
    assert "ᵃ assumed: not in the write-up: " in text, text
    assert "dense_p99_ttft_s" in text, text
    box = tip.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1400

    legend = block.locator("ul.benchbook-chart-legend button")
    assert legend.count() == len(chart["shown"]) and all(chart["shown"])
    legend.first.click()
    assert legend.first.get_attribute("aria-pressed") == "false"
    hidden = page.evaluate(CHART, [1, 0])
    assert hidden["shown"][0] is False and all(hidden["shown"][1:]) and hidden["digest"] != chart["digest"]
    legend.first.click()
    assert all(page.evaluate(CHART, [0, 0])["shown"])

    light = page.evaluate(CHART, [0, 0])
    page.emulate_media(color_scheme="dark")  # the theme's auto mode follows it: html[data-theme="dark"]
    page.locator("html[data-theme='dark']").wait_for(state="attached")
    page.wait_for_timeout(200)
    dark = page.evaluate(CHART, [0, 0])
    assert dark["text"] == dark["page"] != light["text"] == light["page"], (light, dark)
    assert dark["digest"] != light["digest"]  # drawn again
    assert not tab.errors, tab.errors


@pytest.mark.browser
def test_an_interactive_chart_s_points_are_reached_by_keyboard(server, tab):
    """Tab reaches the chart; Right and Left step through one series' points, Down moves to the
    next shown series, End jumps to its last point, each showing the values the hover shows (and
    a screen reader hears them: the values are a live region); a hidden series is skipped;
    Escape and leaving the chart hide the values."""
    page = tab.open(chapter_url(server, NEW))
    block = drawn_chart(page)
    spec = json.loads(block.locator("div.benchbook-chart script[type='application/json']").text_content())
    series = spec["series"]
    canvas = block.locator("div.benchbook-chart canvas")
    assert canvas.get_attribute("tabindex") == "0" and "Arrow keys" in canvas.get_attribute("aria-label")
    tip = block.locator("div.benchbook-chart-tip")
    assert tip.get_attribute("aria-live") == "polite"

    def shows(s, i):
        tip.wait_for(state="visible", timeout=5000)
        lines = tip.inner_text().split("\n")
        assert lines[0] == series[s]["name"] and series[s]["tips"][i][0] in lines[1], (s, i, lines)

    block.locator("ul.benchbook-chart-legend button").first.focus()
    page.keyboard.press("Shift+Tab")  # the chart comes before its legend in the tab order
    assert canvas.evaluate("c => document.activeElement === c")
    page.keyboard.press("ArrowRight")
    shows(0, 0)
    page.keyboard.press("ArrowRight")
    shows(0, 1)
    page.keyboard.press("ArrowLeft")
    shows(0, 0)
    page.keyboard.press("ArrowDown")
    shows(1, 0)
    page.keyboard.press("End")
    shows(1, len(series[1]["x"]) - 1)
    page.keyboard.press("Escape")
    tip.wait_for(state="hidden", timeout=5000)

    block.locator("ul.benchbook-chart-legend button").first.click()  # hides the first group's series
    hidden = {i for i, s in enumerate(series) if s["group"] == spec["legend"][0]["group"]}
    canvas.focus()
    page.keyboard.press("ArrowRight")
    first = min(set(range(len(series))) - hidden)
    shows(first, 0)
    page.keyboard.press("Tab")  # leaving the chart hides its values
    tip.wait_for(state="hidden", timeout=5000)
    assert not tab.errors, tab.errors


@pytest.mark.browser
def test_an_interactive_chart_on_a_phone_fills_the_column_and_loads_little(server, browser):
    """At 390 px the chart keeps the column's width with its legend under it and its text at 12 px;
    a tap on a point shows its values inside the screen; the one chart library fetched is Chart.js
    (0.2 MB), and only once a chart comes near the screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        tab = Tab(context.new_page())
        fetched: dict[str, int] = {}
        tab.page.on("response", lambda r: fetched.__setitem__(r.url, len(r.body())))
        page = tab.open(chapter_url(server, NEW))
        page.wait_for_load_state("networkidle")
        assert not [u for u in fetched if u.endswith("chart.umd.js")]  # not with the page: the chart is far down
        block = drawn_chart(page)
        chart = page.evaluate(CHART, [1, 2])
        column = block.evaluate("b => b.getBoundingClientRect().width")
        assert chart["box"]["width"] >= 0.95 * column and chart["box"]["x"] + chart["box"]["width"] <= 390, chart
        assert chart["painted"] > 0.02 * chart["pixels"] and chart["font"] >= 9, chart
        legend = block.locator("ul.benchbook-chart-legend").bounding_box()
        assert legend["y"] >= chart["box"]["y"] + chart["box"]["height"]  # under the plot
        buttons = block.locator("ul.benchbook-chart-legend button").all()
        assert all(b.bounding_box()["height"] >= 44 for b in buttons)  # a thumb can hit them
        page.touchscreen.tap(chart["x"], chart["y"])
        tip = block.locator("div.benchbook-chart-tip")
        tip.wait_for(state="visible", timeout=5000)
        assert re.search(r"output tokens/s: [0-9]", tip.inner_text())
        box = tip.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        libraries = {u.rsplit("/", 1)[-1]: n for u, n in fetched.items() if re.search(r"(plotly|chart)[^/]*\.js", u)}
        assert list(libraries) == ["chart.umd.js"] and libraries["chart.umd.js"] <= 250_000, libraries
        assert not tab.errors, tab.errors
    finally:
        context.close()


# ---------------------------------------------------------------- assumed marks

# Each raised ᵃ outside a legend whose value shows (folds opened), and whether it sits on the
# line of its value's last character (its box overlaps that character's line box). With
# `squeeze` the block holding the mark is first narrowed to nothing and allowed to break any
# word (overflow-wrap: anywhere): the narrowest a column or a phone can make it.
MARKS_OFF_THEIR_LINE = """(squeeze) => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const marks = [...document.querySelectorAll('.benchbook-assumed-mark')]
    .filter(m => !m.closest('.benchbook-assumed-legend') && m.getClientRects().length);
  if (squeeze) marks.forEach(m => { const b = m.closest('td, li, p') || m.parentElement;
                                    b.style.width = '0'; b.style.minWidth = '0'; b.style.overflowWrap = 'anywhere'; });
  const off = [];
  for (const m of marks) {
    const box = m.closest('td, li, p, dd') || m.parentElement;
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    let last = null, n;
    while ((n = walk.nextNode())) {
      if (m.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING) break;
      if (!m.contains(n) && n.textContent.replace(/[\\s\\u2060]/g, '')) last = n;
    }
    if (!last) continue;
    const text = last.textContent.replace(/[\\s\\u2060]+$/, '');
    const r = document.createRange();
    r.setStart(last, text.length - 1); r.setEnd(last, text.length);
    const v = [...r.getClientRects()].pop(), k = m.getBoundingClientRect();
    if (!(k.bottom > v.top && k.top < v.bottom)) off.push(box.textContent.trim().slice(0, 80));
  }
  return {checked: marks.length, off};
}"""


def reconstructed_chapter_pages(site: Path) -> list[str]:
    return [name for name in chapter_pages(site / NEW) if name not in measured_pages()] + ["synthesis"]


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1400])
def test_a_mark_stays_on_its_value_s_line(site, server, browser, width):
    """The raised ᵃ never wraps onto a line of its own, at the page's width or squeezed."""
    checked = 0
    with tab_at(browser, width, 844) as tab:
        for name in reconstructed_chapter_pages(site):
            for squeeze in (False, True):
                page = tab.open(f"{server}/{NEW}/studies/{name}.html")
                found = page.evaluate(MARKS_OFF_THEIR_LINE, squeeze)
                assert found["off"] == [], (name, squeeze, found["off"][:5])
                checked += found["checked"]
    assert checked > 100


def test_each_part_of_a_page_has_at_most_one_assumed_legend_and_one_assumed_line(site):
    """One legend per section (a level-2 heading, or the title's part before the first), in
    every section with a mark; one 'Assumed, not measured' line at most."""
    import lxml.html

    for name in reconstructed_chapter_pages(site):
        doc = lxml.html.parse(str(site / NEW / "studies" / f"{name}.html")).getroot()
        title = doc.xpath("//article//section[h1]")[0]
        parts = [title, *title.xpath("./section[h2]")]
        for part in parts:
            own = ("[not(ancestor::section[h2])]" if part is title else "")
            legends = part.xpath(f".//p[contains(@class, 'benchbook-assumed-legend')]{own}")
            lines = part.xpath(f".//span[contains(concat(' ', @class, ' '), ' benchbook-assumed ')]{own}")
            heading = part.xpath("./h1|./h2")[0].text_content()
            assert len(legends) <= 1 and len(lines) <= 1, (name, heading, len(legends), len(lines))
            marks = part.xpath(".//span[contains(@class, 'benchbook-assumed-mark')]"
                               "[not(ancestor::p[contains(@class, 'benchbook-assumed-legend')])]" + own)
            assert len(legends) == bool(marks), (name, heading)  # a part with marks explains them
        assert doc.xpath("//p[contains(@class, 'benchbook-assumed-legend')]"), name

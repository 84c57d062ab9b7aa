"""End to end: a real `jupyter-book build book` of a copy of the project.

One module-scoped build serves several checks; a second part reruns the H100 chapter on
a changed copy of its data with `benchbook run --data` and rebuilds.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchbook.book import registry
from benchbook.study.folder import write_checksums
from benchbook.study.marks import title_ids
from pages import chapter_pages, measured_pages
from projects import copy_project

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "h100-dense-vs-moe-mtp"
pytestmark = pytest.mark.build


def build(project: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
        cwd=project, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def page(project: Path) -> str:
    return (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")


def tables(html: str) -> dict[str, pd.DataFrame]:
    """Tables of a page by caption (markers of assumed values aside)."""
    import lxml.html

    from pages import without_marks

    out = {}
    for table in without_marks(lxml.html.fromstring(html)).iter("table"):
        caption = table.find("caption")
        if caption is not None:
            snippet = lxml.html.tostring(table, encoding="unicode")
            out[caption.text_content().strip()] = pd.read_html(io.StringIO(snippet))[0]
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("book"))
    proc = build(project)
    return project, proc


def test_build_executes_the_chapter_and_writes_the_site(built):
    project, proc = built
    log = proc.stdout + proc.stderr
    # executed here, or restored from the session's store where another build executed it to the same key
    assert f"executed {STUDY}" in log or f"restored {STUDY}" in log
    for path in ("index.html", "intro.html", "methods.html", "reproduce.html", f"studies/{STUDY}.html"):
        assert (project / "book/_build/html" / path).is_file(), path


def test_chapter_tables_in_html_match_the_published_sweep(built):
    project, _ = built
    t = tables(page(project))
    dense, moe = t["H100, 27B dense FP8"], t["H100, 35B-A3B FP8 + MTP"]
    assert list(dense["concurrency"]) == [1, 4, 8, 16, 32]
    assert list(moe["aggregate t/s"]) == [236, 653, 1163, 1654, 2229]
    assert list(dense["TTFT p50"])[:2] == ["243.0 ms", "876.0 ms"]  # "243 ms" and "876 ms", at the printed value
    cost = t["Cost per million output tokens"]
    assert "€2.11" in set(cost["EUR/M output tokens"])


def test_every_published_cell_and_claim_is_on_the_page(built):
    project, _ = built
    import yaml

    published = yaml.safe_load((project / "data" / STUDY / "published.yml").read_text())
    t = tables(page(project))
    for tb in published["tables"]:  # each published table appears in its own layout
        shown = next(v for k, v in t.items() if k.startswith(tb["title"]))
        assert list(shown.columns) == tb["columns"]
        cells = [r["cells"] if isinstance(r, dict) else r for r in tb["rows"]]
        assert len(shown) == len(cells)
        for row, got in zip(cells, shown.astype(str).values.tolist()):
            for pub, text in zip(row[1:], got[1:]):
                assert text.startswith(pub + " → "), (tb["id"], pub, text)
    ledger = t["Claims ledger"]
    assert list(ledger["claim id"]) == [c["id"] for c in published["claims"]]
    assert set(ledger["verdict"]) <= {"holds", "does not hold", "not derivable"}
    assert {"holds", "does not hold", "not derivable"} <= set(ledger["verdict"])


def test_every_ledger_shows_what_each_verdict_rests_on(built):
    """Each page's ledger has the basis column its note explains, beside the verdict; only
    verdicts have a basis, and none is 'does not hold' by construction (book/methods.md)."""
    from benchbook.ledger.claims import BASES, BY_CONSTRUCTION, FAILS, HOLDS

    project, _ = built
    pages = sorted((project / "book/_build/html/studies").glob("*.html"))
    ledgers = {p.name: tables(p.read_text(encoding="utf-8")).get("Claims ledger") for p in pages}
    ledgers = {name: t for name, t in ledgers.items() if t is not None}
    assert f"{STUDY}.html" in ledgers
    for name, ledger in ledgers.items():
        cols = list(ledger.columns)
        assert cols[cols.index("verdict") + 1] == "basis", name
        basis = ledger["basis"].fillna("")
        judged = ledger["verdict"].isin([HOLDS, FAILS])
        assert set(basis[judged]) <= set(BASES) and not basis[~judged].any(), name
        assert not ((ledger["verdict"] == FAILS) & (basis == BY_CONSTRUCTION)).any(), name


def test_page_carries_provenance_banner_glue_and_downloads(built):
    project, _ = built
    html = page(project)
    assert "Data: reconstructed" in html
    prov = tables(html)["Data folders used by this page"]
    assert set(prov["status"]) == {"reconstructed"}
    assert re.search(r"\(reconstructed, <code[^>]*>(<span[^>]*>)?" + prov["data_hash"].iloc[0], html)
    assert "{glue" not in html  # every glue reference resolved
    downloads = list((project / "book/_build/html/_downloads").rglob("*.csv"))
    assert {"runs.csv", "claims.csv", "published_vs_reproduced.csv"} <= {p.name for p in downloads}
    assert 'alt="Two line charts' in html


def test_every_chapter_page_has_the_independent_section_with_working_links(built):
    """The section is on every chapter page (and the synthesis), its source links are the
    registry's own, and the ledger rows of headline figures link to it."""
    import lxml.html

    from benchbook.analysis.facts import load_facts
    from benchbook.ledger import independent

    project, _ = built
    facts = load_facts(project / "data/facts")
    urls = {m["source"]["url"] for m in facts.sections["measurements"].values()}
    for spec in registry.chapters():
        html = (project / "book/_build/html/studies" / f"{spec.id}.html").read_text(encoding="utf-8")
        doc = lxml.html.fromstring(html)
        section = doc.xpath('//section[@id="independent-measurements"]')
        assert len(section) == 1, spec.id
        captions = {c.text_content().strip() for c in section[0].iter("caption")}
        hrefs = [a.get("href") for a in section[0].iter("a") if a.get("href", "").startswith("http")]
        if spec.id == "synthesis":
            book = tables(html)["Headline figures against the median of independent measurements"]
            assert len(book) == len(facts.sections["headlines"])
            continue
        assert {"Headline figures beside independent measurements", "Independent measurements",
                "What was searched"} <= captions, spec.id
        assert hrefs and set(hrefs) <= urls, spec.id
        ledger_rows = doc.xpath('//table[caption[normalize-space()="Claims ledger"]]//a[@href]')
        linked = {a.get("href") for a in ledger_rows if a.text_content() == "compare"}
        assert linked == {independent.ANCHOR}, spec.id
        expected = set(independent.ledger_links(spec.notebook_name, facts=facts))
        shown = set(tables(html)["Claims ledger"].query("independent == 'compare'")["claim id"])
        assert shown == expected, spec.id
        assert ("not the write-up's setup" in section[0].text_content()) == (spec.id in measured_pages())


def test_noop_rebuild_executes_nothing_and_new_data_shows_up(built, tmp_path):
    project, _ = built
    proc = subprocess.run([str(BIN / "benchbook"), "build", "--strict"], cwd=project,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "build succeeded" in proc.stdout
    assert "executed" not in proc.stdout.replace("not re-executed", "")
    assert f"{STUDY}: up to date" in proc.stdout

    before = tables(page(project))
    changed = tmp_path / "my-data"
    shutil.copytree(project / "data" / STUDY, changed)
    run = next(changed.glob("raw/h100-moe-mtp/*concurrency16-*.json"))
    doc = json.loads(run.read_text())
    doc["ttfts"] = [t * 2 for t in doc["ttfts"]]
    run.write_text(json.dumps(doc))
    write_checksums(changed)

    proc = subprocess.run([str(BIN / "benchbook"), "run", STUDY, "--data", str(changed)],
                          cwd=project, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = build(project)
    executed = {a or b for a, b in re.findall(r"executed (\S+) in|restored (\S+) from", proc.stdout)}
    # run already executed this chapter; the build executes the pages that read its data or outputs
    readers = {c.id for c in registry.chapters() if STUDY in c.reads.values() or STUDY in c.uses}
    assert readers >= {"strix-halo-baseline", "strix-halo-qwen3-30b-lhl", "synthesis"}
    assert executed == readers, proc.stdout[-3000:]
    after = tables(page(project))
    old = before["H100, 35B-A3B FP8 + MTP"].set_index("concurrency")["TTFT p50"]
    new = after["H100, 35B-A3B FP8 + MTP"].set_index("concurrency")["TTFT p50"]
    assert new[16] != old[16] and new[8] == old[8]
    assert float(new[16].split()[0]) == pytest.approx(2 * float(old[16].split()[0]), rel=0.01)
    old_hash = before["Data folders used by this page"]["data_hash"].iloc[0]
    new_hash = after["Data folders used by this page"]["data_hash"].iloc[0]
    assert new_hash != old_hash
    assert after["Data folders used by this page"]["folder"].iloc[0] == "my-data (outside the project)"
    assert str(tmp_path) not in page(project)  # a user's own path is not published


def test_prose_resting_on_a_generator_s_assumption_is_marked_and_nothing_else(built):
    """Derived from each reconstructed folder's assumptions.yml and the sections' declared
    columns: the first prose cell of such a section in each part of the page (a level-1 or -2
    heading) carries the mark on the built page, once; prose of other sections and every
    page of measured data carry none."""
    import lxml.html
    import nbformat

    from benchbook.site.runner import ASSUMED_MARK, _page_sections
    from benchbook.study.assumptions import load_assumptions

    project, _ = built
    marked_somewhere = set()
    for spec in registry.chapters():
        if spec.contract is None:
            continue
        folder = project / "data" / spec.id
        assumed = load_assumptions(folder)
        columns = {c for a in assumed for c in a.columns}
        info = json.loads((project / "book/studies" / spec.id / "chapter.json").read_text())
        expect = {s.id for s in spec.contract.sections if columns & set(s.columns)} - set(info["absent_sections"])
        if spec.id in measured_pages():
            assert not assumed and not expect  # measured data
        nb = nbformat.read(project / "book/studies" / f"{spec.id}.ipynb", as_version=4)
        n_marked = 0
        for cells in _page_sections(nb):  # one line per part of the page, in its first such cell
            sections = [{t[len("needs-"):] for t in c.metadata.get("tags", []) if t.startswith("needs-")}
                        if c.cell_type == "markdown" else set() for c in cells]
            should = [bool(s & expect) for s in sections]
            carries = [ASSUMED_MARK in c.source for c in cells]
            assert carries == [k == should.index(True) if any(should) else False for k in range(len(cells))], \
                (spec.id, sections, cells[0].source[:200])
            n_marked += any(should)
            marked_somewhere |= {spec.id} if any(should) else set()
        html = (project / "book/_build/html/studies" / f"{spec.id}.html").read_text(encoding="utf-8")
        assert len(lxml.html.fromstring(html).find_class("benchbook-assumed")) == n_marked, spec.id
    # the draw of the power sweep and the spread between llama.cpp builds are marked
    assert {"power-sweep", "strix-halo-baseline", "gb10-mtp"} <= marked_somewhere


# ---- values resting on a generator's choice, marked where the page shows them -----------

CELL_TABLES = ("runs", "llama_bench", "boot")  # tidy tables whose cells pages show one by one
# Where a row sits in its raw file: no page prints it as a value, as the marks check reads a raw
# file's name as no value. A choice that adds log lines moves the power sweep's start-up facts'
# line numbers (383, 389 in the 122B's 200 W log), and pages print other numbers that read alike
# (lines read from the 35B's log, the 35B's P95 and peak generation at 300 W), which moving those
# choices leaves unmoved (make marks).
POSITION_COLUMNS = ("line",)
MARK = "benchbook-assumed-mark"


def _renderings(v: float, column: str) -> set[str]:
    """How a page may print a number of this column (the book's formats: times as times),
    each with three significant digits or more, so a coincidence with another number is
    unlikely."""
    from benchbook.format import fmt_seconds

    if column.endswith("_s"):
        out = {fmt_seconds(v), f"{v * 1000:,.0f} ms", f"{v * 1000:,.1f} ms"}
    else:
        out = {f"{v:,.0f}", f"{v:,.1f}", f"{v:,.2f}", f"{v:.3f}", f"{v:.1%}", f"{v:.2%}"}
    return {t for t in out if _digits(t) >= 3}


def _digits(text: str) -> int:
    """Significant digits of a printed number: no leading zeros, no trailing decimal zeros."""
    number = re.sub(r"[^\d.]", "", text)
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return len(number.replace(".", "").lstrip("0"))


def _assumed_texts(project: Path, spec) -> dict[str, set[str]]:
    """Assumption id -> every way the page may print a cell it covers, from the folder's
    assumptions.yml (columns and rows) and its tidy tables: nothing of the chapter's code.
    A text that also prints a cell no assumption covers (a TPOT equal to an ITL) is left
    out: it would not say which of the two a page shows."""
    from benchbook.book import pipeline
    from benchbook.study.assumptions import assumed_cells, load_assumptions, row_mask

    folder = project / "data" / spec.id
    data = pipeline.load(folder, spec.contract)
    assumed = load_assumptions(folder)
    out: dict[str, set[str]] = {}
    for a in assumed:
        for column in a.columns:
            table, name = column.split(".")
            df = data.tables.get(table)
            if table not in CELL_TABLES or df is None or name not in df or name in POSITION_COLUMNS:
                continue
            values = pd.to_numeric(df.loc[row_mask(df, a, table).to_numpy(), name], errors="coerce").dropna()
            out.setdefault(a.id, set()).update(t for v in values for t in _renderings(float(v), name))
    plain = set()
    for table in CELL_TABLES:
        df = data.tables.get(table)
        if df is None or not len(df):
            continue
        mask = assumed_cells(df, table, assumed)
        for name in [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])  # not a number's text
                     and c not in POSITION_COLUMNS]:
            values = pd.to_numeric(df.loc[~mask[name].to_numpy(), name], errors="coerce").dropna()
            plain.update(t for v in values for t in _renderings(float(v), str(name)))
    # the page's own parameters (prompt lengths of the serving model, limits) are the reader's,
    # never the generator's: Strix Halo's caveat "Sequential times with 4,096-token prompts" prints
    # its prompt_tokens parameter, which reads like its 4k TTFT run's chosen input length
    from benchbook.site.runner import Chapter

    params = Chapter(project, spec.id).effective_parameters({})
    plain.update(t for v in params.values() if isinstance(v, (int, float)) and not isinstance(v, bool)
                 for t in _renderings(float(v), ""))
    # a number the page glues that prints like a covered cell but is another value (the 3090
    # prefill rate, 3,525 tokens over the published median TTFT, 12,634.41, beside the bench
    # file's own 12,634.43, which rests on the TTFT spread) is the page's, not the cell's
    import numpy as np

    covered = [np.asarray([], dtype=float)]
    for a in assumed:
        for column in a.columns:
            table, name = column.split(".")
            df = data.tables.get(table)
            if table in CELL_TABLES and df is not None and name in df:
                cells = pd.to_numeric(df.loc[row_mask(df, a, table).to_numpy(), name], errors="coerce")
                covered.append(cells.dropna().to_numpy(dtype=float))
    values = np.unique(np.concatenate(covered))
    for g in _glued_numbers(project / "book" / "studies" / f"{spec.id}.ipynb"):
        if not np.isclose(values, g, rtol=1e-9, atol=0.0).any():
            plain.update(_renderings(g, ""))
    return {i: t - plain for i, t in out.items()}


def _glued_numbers(notebook: Path) -> list[float]:
    """The numbers an executed chapter notebook glues, in full."""
    import nbformat

    if not notebook.is_file():
        return []
    out = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for o in cell.get("outputs", []):
            if (o.get("metadata") or {}).get("scrapbook"):
                text = next((v for k, v in (o.get("data") or {}).items() if k.endswith("text/plain")), "")
                try:
                    out.append(float(text))
                except ValueError:
                    continue
    return out


def _known_ids(project: Path, spec) -> set[str]:
    """The ids a page may name: its own folder's, and those of the folders it reads (with
    their study), or for the synthesis every chapter's."""
    from benchbook.study.assumptions import load_assumptions

    own = {a.id for a in load_assumptions(project / "data" / spec.id)}
    others = spec.uses if spec.contract is None else tuple(spec.reads.values())
    return own | {f"{o}/{a.id}" for o in others for a in load_assumptions(project / "data" / o)}


def _title_ids(mark) -> set[str]:
    """The ids a marker's title names ('assumed: id; id')."""
    return set(title_ids(mark.get("title", "")))


def _cell_text(td) -> str:
    import copy

    from pages import without_marks

    return without_marks(copy.deepcopy(td)).text_content().strip()


def _write_up_numbers(project: Path, study: str) -> set[tuple]:
    """The numbers the write-up printed (its tables' cells and its claims), each as value,
    digits and unit: a page cell printing one of them at the write-up's digits shows the
    write-up's number, which carries no mark ("not in the write-up" would be false; a claim
    that holds by construction and prints it is unmarked, and moving a choice moves no such
    digit, make marks). GB10's headline 54.92 tok/s and P99 ITL 1,063 ms print like run
    values the generator placed inside those printed intervals."""
    from benchbook.ledger.published import load_published

    path = project / "data" / study / "published.yml"
    if not path.exists():
        return set()
    pub = load_published(path)
    texts = [c.get("published") for c in pub.claims] + [t for table in pub.tables for row in table.rows for t in row]
    found = {q for t in texts if (q := _quantity(t)) is not None}
    return found | {(v, step, "", None) for v, step, _, _ in found}  # a table cell may leave the unit to its head


def _quantity(text) -> tuple | None:
    from benchbook.ledger.published import PublishedError, parse_quantity

    try:
        q = parse_quantity(str(text).replace("\u2212", "-"))
    except (PublishedError, ValueError):
        return None
    return None if q.bound else (round(q.value, 9), round(q.step, 12), q.unit, q.currency)


def _check_cells(study: str, doc, texts: dict[str, set[str]], write_up: set = frozenset()) -> set[str]:
    """Every table cell printing a value of a covered cell with four significant digits or
    more is marked with that choice; of the shorter ones (which other numbers on the page
    may print too: a mean over seeds equal to one run's ITL), each is marked somewhere.
    Returns the ids whose values the tables show."""
    shown, marked_somewhere = set(), set()
    cells = [(td, _cell_text(td)) for td in doc.iter("td")]  # each cell read once: a page has thousands
    for td, text in cells:
        hit = {i for i, t in texts.items() if text in t}
        if not hit or _quantity(text) in write_up:
            continue
        titles = set().union(*(_title_ids(m) for m in td.find_class(MARK))) if td.find_class(MARK) else set()
        if _digits(text) >= 4:
            assert hit & titles, (study, text, hit)
        shown |= hit
        marked_somewhere |= {(i, text) for i in hit & titles}
    # a covered value printed in a table is marked somewhere, by one of the choices covering it:
    # which of them moves it at the printed digits is for `make marks` to prove (a spread may move
    # a median only below them, and the check finds it unmoved)
    covering = {}
    for i, t in texts.items():
        for text in t:
            covering.setdefault(text, set()).add(i)
    printed = {text for _, text in cells}
    for text, ids in covering.items():
        if text in printed and _quantity(text) not in write_up:
            assert any((i, text) in marked_somewhere for i in ids), (study, ids, text)
    return shown


def _check_prose(study: str, doc, texts: dict[str, set[str]]) -> None:
    """A paragraph quoting a value of a covered cell (four significant digits or more)
    carries the marker."""
    long = {x for t in texts.values() for x in t if _digits(x) >= 4}
    for p in doc.iter("p"):
        if p.xpath("ancestor::table") or "assumed" in (p.get("class") or "") or \
                "assumed: not in the write-up" in p.text_content():
            continue
        text = p.text_content()
        quoted = {x for x in long if x in text and re.search(rf"(?<![\d.,]){re.escape(x)}(?![\d])", text)}
        assert not quoted or p.find_class(MARK), (study, sorted(quoted), text[:300])


def _check_one_legend_per_part(study: str, doc) -> None:
    """Each part of the page (a level-2 section, or the title's part before the first) with
    a marker has one legend, naming every choice its markers name."""
    title = doc.xpath("//section[h1]")[0]
    for part in [title, *title.xpath("./section[h2]")]:
        own = "[not(ancestor::section[h2])]" if part is title else ""
        legends = part.xpath(f".//p[contains(@class, 'benchbook-assumed-legend')]{own}")
        marks = [m for m in part.xpath(f".//span[contains(@class, '{MARK}')]{own}") if m.get("title")]
        heading = part.xpath("./h1|./h2")[0].text_content()
        assert len(legends) == bool(marks), (study, heading, len(legends))
        named = {c.text_content() for legend in legends for c in legend.iter("code")}
        assert {i for m in marks for i in _title_ids(m)} <= named, (study, heading)


def test_every_value_resting_on_an_assumption_is_marked_where_the_page_shows_it(built):
    """Derived from each reconstructed folder's assumptions.yml and its tidy tables: a table
    cell or a sentence printing a value of a covered cell carries the marker naming that
    choice; every marker names a choice of a folder the page reads; each part of a page with
    a marker has one legend naming its choices; a page of measured data marks nothing of its own
    (only values it shows from a reconstructed folder it reads)."""
    import lxml.html

    from benchbook.study.assumptions import load_assumptions

    project, _ = built
    found = {}
    for spec in registry.chapters():
        html = (project / "book/_build/html/studies" / f"{spec.id}.html").read_text(encoding="utf-8")
        doc = lxml.html.fromstring(html)
        marks = doc.find_class(MARK)
        if spec.contract is not None and not load_assumptions(project / "data" / spec.id):
            # measured data: nothing of its own is marked; values it shows from a reconstructed
            # folder it reads (kept apart, under a note naming both) carry that folder's choices,
            # as moving them moves those values (the real-data Strix Halo page's sequential against
            # batched table prints the H100 folder's times)
            read = _known_ids(project, spec)
            assert all(_title_ids(m) <= read and all("/" in i for i in _title_ids(m))
                       for m in marks if m.get("title")), spec.id
            if marks:
                _check_one_legend_per_part(spec.id, doc)
            else:
                assert not doc.find_class("benchbook-assumed-legend"), spec.id
            continue
        known = _known_ids(project, spec)
        for m in marks:
            if m.get("title"):
                assert _title_ids(m) <= known, (spec.id, m.get("title"))
        legends = doc.find_class("benchbook-assumed-legend")
        _check_one_legend_per_part(spec.id, doc)
        texts = _assumed_texts(project, spec) if spec.contract is not None else {}
        shown = _check_cells(spec.id, doc, texts, _write_up_numbers(project, spec.id))
        _check_prose(spec.id, doc, texts)
        if marks:
            assert legends, spec.id
        found[spec.id] = (shown, {i for m in marks if m.get("title") for i in _title_ids(m)})
    # each reconstructed chapter shows some of its choices, marked
    assert {"dense_p99_ttft_s", "mtp_acceptance"} <= found[STUDY][0] | found[STUDY][1]
    assert {"winners", "losing_ratios", "rep_cv"} <= found["strix-halo-baseline"][1]  # who wins, each rate ± its spread
    assert {"seed_spread", "old_d_ttft_s", "load_s", "weights_gib"} <= found["gb10-mtp"][0]
    assert {"mtp_acceptance", "unpublished_ttft_s"} <= found["3090-dense-vs-sparse"][0]
    assert {"gpu_host", "crash"} <= found["power-sweep"][1]  # the logged draw, the restart
    assert {"power-sweep/gpu_host", "h100-dense-vs-moe-mtp/mtp_acceptance"} <= found["synthesis"][1]


def test_the_h100_page_marks_the_unpublished_tails_and_the_digits_beyond_the_published(built):
    """The dense P99 TTFT at 1, 4 and 8 clients was chosen: the sweep table marks them with that
    choice. At 16 and 32 the write-up printed its own P99s, which the files hold at the printed
    value (they once sat at a seeded point of the printing interval, a choice every such value
    rested on): those cells carry no mark. The TTFT figure names the dense line in its caption,
    the interactive chart names it partly assumed; the throughput figure does not name the tails."""
    import lxml.html

    project, _ = built
    doc = lxml.html.fromstring(page(project))
    dense = next(t for t in doc.iter("table") if t.find("caption") is not None
                 and t.find("caption").text_content().strip() == "H100, 27B dense FP8")
    heads = [th.text_content() for th in dense.iter("th")]
    col = heads.index("TTFT p99")
    marked = [set().union(*map(_title_ids, tr.findall("td")[col].find_class(MARK)))
              for tr in dense.xpath(".//tbody/tr")]
    assert ["dense_p99_ttft_s" in m for m in marked] == [True, True, True, False, False]
    assert marked[3:] == [set(), set()]  # the write-up's own numbers
    p50 = heads.index("TTFT p50")  # the tails' choice reaches no median
    assert not any("dense_p99_ttft_s" in _title_ids(m) for tr in dense.xpath(".//tbody/tr")
                   for m in tr.findall("td")[p50].find_class(MARK))
    captions = {f.get("id"): f.text_content() for f in doc.iter("figure")}
    assert "dense_p99_ttft_s" in captions["fig-h100-ttft"] and "series labelled (assumed)" in captions["fig-h100-ttft"]
    # the throughput points are the write-up's; the tails' choice is not drawn there
    assert "dense_p99_ttft_s" not in captions["fig-h100-throughput"]
    data = next(s.text for s in doc.iter("script")
                if s.get("type") == "application/json" and "Aggregate output" in s.text)
    chart = json.loads(data)
    names = [t["name"] for t in chart["series"]]
    # the throughput points are the write-up's; each point's tooltip names what its other values rest on
    assert names[0].endswith("assumed)") and "dense_p99_ttft_s" in chart["assumed"]


# ---------------------------------------------------------------- the built book in a browser

PHONE = (390, 844)  # width and height of one phone screen
BUSY = 60_000  # ms a lazily loaded script may take on a machine busy with other tests


@pytest.mark.browser
def test_on_a_phone_every_headline_and_its_verdict_is_within_the_first_two_screens(built, browser):
    project, _ = built
    width, height = PHONE
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        cut = 0
        for name in chapter_pages(project / "book/_build/html"):
            page.goto((project / "book/_build/html/studies" / f"{name}.html").as_uri())
            rows = page.locator(".benchbook-key-results tbody tr")
            if name not in measured_pages():
                assert rows.count() >= 3, name
            for i in range(rows.count()):
                row = rows.nth(i)
                verdict, result = row.locator("td.benchbook-verdict"), row.locator("td").first
                box = verdict.bounding_box()
                # the whole card, verdict first, inside the viewport's width and the first two screens
                assert box["y"] < result.bounding_box()["y"], (name, i)
                card, frame = row.bounding_box(), page.locator(".benchbook-key-results").bounding_box()
                assert card["x"] >= frame["x"] and card["x"] + card["width"] <= frame["x"] + frame["width"], \
                    (name, i, card, frame)
                assert frame["x"] + frame["width"] <= width, (name, frame)
                assert card["y"] + card["height"] <= 2 * height, (name, i, card)
                for label in ("this data", "write-up"):  # each value shown under its column's name
                    cell = row.locator(f'td[data-label="{label}"]')
                    assert cell.evaluate("td => getComputedStyle(td, '::before').content") not in ("none", ""), \
                        (name, i, label)
                for cell in row.locator("td[data-label]").all():  # an empty cell shows no bare label
                    if not (cell.text_content() or "").strip():
                        assert not cell.is_visible(), (name, i, cell.get_attribute("data-label"))
            assert page.evaluate("document.documentElement.scrollWidth") <= width, name
            button = page.locator("button.benchbook-intro-toggle")
            if button.count():  # a long introduction is cut behind a button that shows it whole
                cut += 1
                intro = page.locator("p.benchbook-intro")
                clipped = intro.first.evaluate("p => p.scrollHeight > p.clientHeight + 1")
                assert clipped or not intro.last.is_visible(), name
                button.click()
                assert button.get_attribute("aria-expanded") == "true"
                assert intro.last.is_visible()
                assert intro.first.evaluate("p => p.scrollHeight <= p.clientHeight + 1"), name
                assert button.bounding_box()["height"] >= 44  # a tap target
        assert cut >= 3  # the reconstructed chapters' introductions are longer than a phone screen's third
        # the synthesis opens with its own key results: its first findings within the first two screens
        page.goto((project / "book/_build/html/studies/synthesis.html").as_uri())
        findings = page.locator(".benchbook-key-results li")
        assert findings.count() >= 3
        for i in range(3):
            box = findings.nth(i).bounding_box()
            assert box["y"] + box["height"] <= 2 * height and box["x"] + box["width"] <= width, (i, box)
    finally:
        context.close()


@pytest.mark.browser
def test_a_page_opened_from_disk_runs_its_scripts(built, browser):
    """The README's first way to look at the book is to open index.html: the ledger's sorting and
    filtering and the interactive charts must work from file://, where Chromium runs no module."""
    project, _ = built
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    errors = []
    try:
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((project / "book/_build/html/studies" / f"{STUDY}.html").as_uri())
        assert not page.locator("div.dt-container").count()  # not fetched before a ledger is near
        page.locator("table.benchbook-filterable").first.scroll_into_view_if_needed()
        page.wait_for_selector("div.dt-container table.benchbook-filterable", timeout=BUSY)
        # the verdict, its basis and the claim are in view before the wide ledger scrolls sideways
        lead = page.evaluate("""() => { const t = document.querySelector('table.benchbook-filterable');
          const edge = t.closest('.cell_output').getBoundingClientRect().right;
          return [...t.tHead.rows[0].cells].slice(0, 3).map(h => [h.textContent.trim().split('Toggle')[0],
                                                                   h.getBoundingClientRect().right <= edge]); }""")
        assert lead == [["verdict", True], ["basis", True], ["claim", True]], lead
        page.goto((project / "book/_build/html/studies/power-sweep.html").as_uri())
        page.locator("div.benchbook-chart").first.scroll_into_view_if_needed()
        page.locator("div.benchbook-chart[data-drawn]").first.wait_for(timeout=BUSY)  # Chart.js, a classic script
        assert page.evaluate(PAINTED) > 0.02, "the chart's canvas is blank"
        assert not errors, errors
    finally:
        context.close()


def _site_pages(html: Path) -> list[str]:
    """Every page a reader reaches (the front page redirects; search and index are the theme's)."""
    return sorted(p.relative_to(html).as_posix() for p in [*html.glob("*.html"), *html.glob("studies/*.html")]
                  if p.name not in ("index.html", "search.html", "genindex.html"))


@pytest.mark.browser
@pytest.mark.parametrize("width,scheme", [(390, "light"), (1400, "dark")])
def test_axe_finds_no_serious_accessibility_violation_on_any_page(built, browser, width, scheme):
    """axe-core (Deque's rules, WCAG 2.x A and AA among them) on every page: every rule on a
    phone in light mode (contrast, names, labels, structure); on a wide screen in dark mode,
    which changes colours only, the contrast rule (every rule on every page takes a minute). Each
    page's interactive charts are scrolled to first, so their legends and text are drawn."""
    from axe_playwright_python.sync_playwright import Axe

    from browser import serve, settle

    project, _ = built
    html = project / "book/_build/html"
    axe, found = Axe(), {}
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    try:
        with serve(html) as url:
            page = context.new_page()
            for rel in _site_pages(html):
                page.goto(f"{url}/{rel}", wait_until="networkidle")
                for box in page.locator("div.benchbook-chart").all():  # its legend and text checked too
                    box.scroll_into_view_if_needed()
                    box.and_(page.locator("[data-drawn]")).wait_for(timeout=BUSY)
                settle(page)
                only = {"runOnly": ["color-contrast"]} if scheme == "dark" else {}
                options = {"resultTypes": ["violations"]} | only
                found_now = axe.run(page, options=options).response["violations"]
                bad = [v for v in found_now if v["impact"] in ("serious", "critical")]
                if bad:
                    found[rel] = {v["id"]: [n["target"] for n in v["nodes"][:3]] for v in bad}
    finally:
        context.close()
    assert not found, found


@pytest.mark.browser
def test_every_page_weighs_at_most_two_megabytes_on_a_phone(built, browser):
    """What a phone downloads to show a page, served as a host would serve it (bytes before any
    compression the host may add); libraries a reader has not reached yet (a ledger's DataTables,
    a chart's Chart.js, each fetched as what needs it nears the screen) are not part of it. A page
    with a chart draws it, inline, once scrolled to, fetching 0.25 MB at most for it."""
    from browser import serve

    project, _ = built
    html = project / "book/_build/html"
    pages = _site_pages(html)
    assert len(pages) >= 10
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    heavy, chart = {}, {}
    try:
        with serve(html) as url:
            for rel in pages:
                page, sizes = context.new_page(), {}
                page.on("response", lambda r, sizes=sizes: sizes.__setitem__(r.url, len(r.body())))
                page.goto(f"{url}/{rel}", wait_until="networkidle")
                assert not [u for u in sizes if "fontawesome.js" in u], rel  # the unused icon script is gone
                heavy[rel] = sum(sizes.values())
                if page.locator("div.benchbook-chart").count():
                    before = set(sizes)
                    page.locator("div.benchbook-chart").first.scroll_into_view_if_needed()
                    page.locator("div.benchbook-chart[data-drawn]").first.wait_for(timeout=BUSY)
                    assert page.evaluate(PAINTED) > 0.02, rel
                    chart[rel] = {u.rsplit("/", 1)[-1]: sizes[u] for u in set(sizes) - before if u.endswith(".js")}
                page.close()
    finally:
        context.close()
    assert max(heavy.values()) <= 2_000_000, heavy
    assert {"studies/synthesis.html", f"studies/{STUDY}.html", "studies/power-sweep.html"} <= set(chart), chart
    assert all(list(js) == ["chart.umd.js"] and js["chart.umd.js"] <= 250_000 for js in chart.values()), chart


# A closed fold's content keeps its layout box in Chromium (details::details-content is
# content-visibility: hidden), so it is found by checkVisibility, not by a zero height.
PRINT_LAYOUT = """() => ({
  clipped: [...document.querySelectorAll('table.benchbook-table')].filter(t => {
    const box = t.closest('div.cell_output') || t.parentElement;
    return t.getBoundingClientRect().right > box.getBoundingClientRect().right + 1;
  }).map(t => t.caption ? t.caption.textContent : t.id),
  closed: [...document.querySelectorAll('details')].filter(d => getComputedStyle(d).display !== 'none'
    && [...d.children].some(k => k.tagName !== 'SUMMARY' && k.tagName !== 'STYLE' && !k.checkVisibility()))
    .map(d => d.querySelector('summary').textContent.trim()),
})"""


@pytest.mark.browser
def test_a_printed_page_opens_every_fold_and_fits_every_table_to_the_paper(built, browser):
    """Printed (A4 less margins is about 700 CSS px), no table is cut off at the page's edge and
    no folded table is left out; the interactive charts are not printed (their figure is)."""
    project, _ = built
    context = browser.new_context(viewport={"width": 700, "height": 1000})
    try:
        page = context.new_page()
        for name in chapter_pages(project / "book/_build/html"):
            page.goto((project / "book/_build/html/studies" / f"{name}.html").as_uri())
            page.emulate_media(media="screen")
            on_screen = page.evaluate(PRINT_LAYOUT)
            page.emulate_media(media="print")
            printed = page.evaluate(PRINT_LAYOUT)
            assert printed == {"clipped": [], "closed": []}, (name, printed)
            if name == STUDY:  # on a screen the same page scrolls wide tables and folds long ones
                assert on_screen["clipped"] and on_screen["closed"], on_screen
                # figures load as a reader nears them; printing loads every one first
                assert page.evaluate("[...document.images].some(i => i.loading === 'lazy' && !i.complete)")
                page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
                page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)",
                                       timeout=BUSY)
    finally:
        context.close()


SORTED_VALUES = """(t, col) => [...t.tBodies[0].rows].map(r => {
  const c = r.cells[col].cloneNode(true);
  c.querySelectorAll('.benchbook-assumed-mark').forEach(m => m.remove());
  const m = c.textContent.replace(/\\u2060/g, '').match(/([−-]?[\\d,]*\\.?\\d+)\\s*(ms|s)?/);
  return m ? parseFloat(m[1].replace('−', '-').replace(/,/g, '')) * (m[2] === 'ms' ? 1e-3 : 1) : null; })"""


@pytest.mark.browser
def test_the_cross_platform_table_sorts_each_column_by_its_values(built, browser):
    """The synthesis's table of every configuration sorts like a spreadsheet: '2,229 at c=32'
    after '929 at c=32', '1.28 s' after '675.6 ms', a dash first."""
    project, _ = built
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto((project / "book/_build/html/studies/synthesis.html").as_uri())
        table = page.locator("table.benchbook-filterable").first
        table.scroll_into_view_if_needed()
        page.wait_for_selector("div.dt-container table.benchbook-filterable", timeout=BUSY)
        heads = [h.split("\n")[0] for h in table.locator("thead th").all_inner_texts()]
        for name in ("best aggregate t/s", "TTFT (input)", "decode t/s (1 stream)"):
            col = heads.index(name)
            table.locator("thead th").nth(col).locator("button.dtcc-button_order").click()
            values = [v for v in table.evaluate(SORTED_VALUES, col) if v is not None]
            assert len(values) >= 5 and values == sorted(values), (name, values)
    finally:
        context.close()


CROSS_STUDY = "#throughput-per-accelerator-against-throughput-per-user"
# The cross-study chart as Chart.js drew it: how many points show, and where the first shown one is.
SHOWN = """() => {
  const canvas = document.querySelector('#throughput-per-accelerator-against-throughput-per-user canvas');
  const chart = Chart.getChart(canvas), r = canvas.getBoundingClientRect(), a = chart.chartArea;
  const shown = chart.data.datasets.map((d, k) => k).filter(k => chart.isDatasetVisible(k));
  const points = shown.flatMap(k => chart.getDatasetMeta(k).data);
  const inside = points.filter(p => p.x >= a.left && p.x <= a.right && p.y >= a.top && p.y <= a.bottom);
  return {count: points.length, inside: inside.length, x: r.left + points[0].x, y: r.top + points[0].y};
}"""
# Of the page's first chart canvas, the share of pixels painted (0 for a blank canvas).
PAINTED = """() => { const c = document.querySelector('div.benchbook-chart canvas');
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0; for (let k = 3; k < px.length; k += 4) if (px[k]) n++; return n / (px.length / 4); }"""


@pytest.mark.browser
@pytest.mark.parametrize("width, how", [(1400, "mouse"), (1400, "keyboard"), (390, "touch")])
def test_the_cross_study_chart_draws_filters_and_links_each_point_to_its_chapter(built, browser, width, how):
    """The synthesis's chart of every serving point, opened from disk: inline, drawn as it nears
    the screen, one marker per point its count line announces, every one inside the plot;
    choosing a platform leaves only that platform's points (the count says how many); the
    filters are labelled selects a thumb can hit; a click on a point opens its chapter's section
    (on a phone's touch screen the first tap shows its values and says a second opens it; by
    keyboard the arrow keys step to a shown point and Enter opens it)."""
    project, _ = built
    phone = how == "touch"
    context = browser.new_context(viewport={"width": width, "height": 900}, has_touch=phone, is_mobile=phone)
    errors = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((project / "book/_build/html/studies/synthesis.html").as_uri())
        section = page.locator(CROSS_STUDY)
        assert not section.locator("details.benchbook-interactive").count()  # not folded
        section.locator("div.benchbook-chart").scroll_into_view_if_needed()
        section.locator("div.benchbook-chart[data-drawn]").wait_for(timeout=BUSY)
        count = section.locator(".benchbook-chart-count")
        total = int(re.match(r"All (\d+) points shown", count.inner_text()).group(1))
        shown = page.evaluate(SHOWN)
        assert total >= 50 and shown["count"] == shown["inside"] == total, (total, shown)

        select = section.locator("select[data-benchbook-filter='platform_name']")
        for s in section.locator("select").all():
            box = s.bounding_box()
            assert box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= width, box
            assert s.evaluate("s => s.closest('label').textContent.trim().length > 0")
        h100 = next(o for o in select.locator("option").all() if o.get_attribute("value").startswith("H100"))
        n = int(re.search(r"\((\d+)\)$", h100.inner_text()).group(1))
        select.select_option(h100.get_attribute("value"))
        section.locator(".benchbook-chart-count", has_text=f"{n} of {total} points shown.").wait_for(timeout=10000)
        shown = page.evaluate(SHOWN)
        assert 0 < n < total and shown["count"] == shown["inside"] == n, (n, shown)

        section.locator("div.benchbook-chart").scroll_into_view_if_needed()
        point = page.evaluate(SHOWN)
        if phone:
            page.touchscreen.tap(point["x"], point["y"])
            tip = section.locator("div.benchbook-chart-tip")
            tip.wait_for(state="visible", timeout=5000)
            assert "H100" in tip.inner_text() and "tap again: open its chapter" in tip.inner_text()
            assert "synthesis.html" in page.url  # the first tap only shows the values
            page.touchscreen.tap(point["x"], point["y"])
        elif how == "keyboard":
            canvas = section.locator("div.benchbook-chart canvas")
            canvas.focus()
            page.keyboard.press("ArrowRight")  # the first shown series' first point: an H100 one
            tip = section.locator("div.benchbook-chart-tip")
            tip.wait_for(state="visible", timeout=5000)
            assert "H100" in tip.inner_text() and "Enter: open its chapter" in tip.inner_text(), tip.inner_text()
            page.keyboard.press("Enter")
        else:
            page.mouse.move(point["x"], point["y"])
            page.mouse.click(point["x"], point["y"])
        page.wait_for_url(re.compile(r"studies/h100-dense-vs-moe-mtp\.html#[\w-]+$"), timeout=10000)
        assert page.locator(f"#{page.url.rsplit('#', 1)[1]}").count() == 1  # the section it names is there
        assert not errors, errors
    finally:
        context.close()

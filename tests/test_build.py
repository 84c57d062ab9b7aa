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

from benchbook import registry
from benchbook.study import write_checksums
from projects import copy_project

ROOT = Path(__file__).parents[1]
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
    assert f"executed {STUDY}" in log
    for path in ("index.html", "intro.html", "methods.html", "reproduce.html", f"studies/{STUDY}.html"):
        assert (project / "book/_build/html" / path).is_file(), path


def test_chapter_tables_in_html_match_the_published_sweep(built):
    project, _ = built
    t = tables(page(project))
    dense, moe = t["H100, 27B dense FP8"], t["H100, 35B-A3B FP8 + MTP"]
    assert list(dense["concurrency"]) == [1, 4, 8, 16, 32]
    assert list(moe["aggregate t/s"]) == [236, 653, 1163, 1654, 2229]
    assert list(dense["TTFT p50"])[:2] == ["243.0 ms", "876.2 ms"]
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

    from benchbook import independent
    from benchbook.facts import load_facts

    project, _ = built
    facts = load_facts(project / "data/facts")
    urls = {m["source"]["url"] for m in facts.sections["measurements"].values()}
    for spec in registry.CHAPTERS:
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
        assert ("not the write-up's setup" in section[0].text_content()) == (spec.id == "strix-halo-qwen3-30b-lhl")


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
    executed = set(re.findall(r"executed (\S+) in", proc.stdout))
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
    columns: every prose cell of such a section carries the mark on the built page; prose of
    other sections and every page of measured data carry none."""
    import lxml.html
    import nbformat

    from benchbook.assumptions import load_assumptions
    from benchbook.runner import ASSUMED_MARK

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
        if spec.id == "strix-halo-qwen3-30b-lhl":
            assert not assumed and not expect  # measured data
        nb = nbformat.read(project / "book/studies" / f"{spec.id}.ipynb", as_version=4)
        n_marked = 0
        for cell in nb.cells:
            sections = {t[len("needs-"):] for t in cell.metadata.get("tags", []) if t.startswith("needs-")}
            if cell.cell_type != "markdown" or not sections:
                continue
            should = bool(sections & expect)
            assert (ASSUMED_MARK in cell.source) == should, (spec.id, sections, cell.source[:200])
            n_marked += should
            marked_somewhere |= sections & expect and {spec.id} or set()
        html = (project / "book/_build/html/studies" / f"{spec.id}.html").read_text(encoding="utf-8")
        assert len(lxml.html.fromstring(html).find_class("benchbook-assumed")) == n_marked, spec.id
    # the draw of the power sweep and the spread between llama.cpp builds are marked
    assert {"power-sweep", "strix-halo-baseline", "gb10-mtp"} <= marked_somewhere

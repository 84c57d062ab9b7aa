"""Every chapter on real files: folders made with `benchbook new` from files the tools wrote on
other people's machines (tests/realdata.py), validated, executed and built with warnings as
errors, once with folders as close to the write-ups' shape as the files allow and once with
clearly different ones. The pages must build without a traceback, show no empty table, say
'not comparable' where the setup differs, and carry the files' own numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import lxml.html
import nbformat
import pytest

from benchbook.cli import main as cli
from benchbook.site.runner import Chapter
from pages import declared_glue_keys, glued
from projects import copy_project
from realdata import FOLDERS, LHL, REAL, files_in, make, needs_shared

BIN = Path(sys.executable).parent
pytestmark = [needs_shared, pytest.mark.build]
VERDICTS = {"holds", "does not hold", "not derivable", "not comparable"}


@pytest.fixture(scope="module", params=["close", "other", "harness"])
def built(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"real-{request.param}")
    # the chapters these folders are for, the book's Strix Halo page on real runs (it reads the
    # H100 folder) and the synthesis; not the DGX Spark pages, whose data these folders do not touch
    project = copy_project(root, chapters=[*FOLDERS, "strix-halo-qwen3-30b-lhl", "synthesis"])
    folders = {c: make(c, request.param, root / "mydata") for c in FOLDERS}
    for chapter, folder in folders.items():
        # the contract only: the build below runs each chapter's analysis on the folder, and
        # tests/scaffold/test_real_new_validate.py checks the full validate on these files
        assert cli(["validate", "--quick", str(folder)]) == 0, (chapter, folder)
        Chapter(project, chapter).remember({"data_dir": str(folder)})
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=1200)
    return request.param, project, folders, proc


def page(project: Path, chapter: str) -> lxml.html.HtmlElement:
    html = (project / "book/_build/html/studies" / f"{chapter}.html").read_text(encoding="utf-8")
    return lxml.html.fromstring(html).find_class("bd-article")[0]


def text(article) -> str:
    return re.sub(r"\s+", " ", article.text_content())


def test_the_book_builds_strictly_without_a_traceback(built):
    _, project, _, proc = built
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "build succeeded" in proc.stdout, log[-4000:]
    assert "Traceback" not in log


def test_every_key_glued_on_real_data_is_declared_where_it_is_computed(built):
    """Other data glues other keys only if a key is named after the data (a model, a run):
    none may be, so grep finds every number of these pages too (issue 20)."""
    _, project, folders, _ = built
    for chapter in folders:
        c = Chapter(project, chapter)
        declared = declared_glue_keys(c.source)
        keys = glued(nbformat.read(c.output, as_version=4))
        assert len(keys) > 5, chapter
        assert sorted(k for k in keys if not declared(k)) == [], chapter


def test_no_page_shows_a_python_object_repr(built):
    """An empty note (display(Markdown(""))) would render as its repr; every page of the book."""
    _, project, _, _ = built
    for path in (project / "book/_build/html").rglob("*.html"):
        if "_sources" in path.parts:
            continue
        body = path.read_text(encoding="utf-8")
        assert not re.search(r"&lt;[\w.]+ object( at 0x[0-9a-f]+)?&gt;", body), path


def test_every_page_says_the_data_is_not_the_write_ups_setup(built):
    _, project, folders, _ = built
    for chapter in folders:
        body = text(page(project, chapter))
        assert re.search(r"(Partly n|N)ot the write-up's setup", body), chapter
        assert "Data: measured" in body, chapter
        assert "(measured, " in body and str(project) not in body


def test_no_data_claim_gets_a_verdict_on_other_data(built):
    """A data claim gets a verdict only from roles that are the write-up's setup: none on a
    page that is not its setup; on one that is partly (the write-up's model beside others),
    only a claim whose values all belong to a role the page does not list as differing."""
    from benchbook.book.registry import get
    from benchbook.ledger.expr import names_in
    from benchbook.ledger.published import load_published

    _, project, folders, _ = built
    for chapter in folders:
        article = page(project, chapter)
        ledger = next(t for t in article.iter("table")
                      if t.find("caption") is not None and t.find("caption").text_content().strip() == "Claims ledger")
        heads = [th.text_content().strip() for th in ledger.iter("th")]
        v, k, i = heads.index("verdict"), heads.index("kind"), heads.index("claim id")
        partly = "Partly not the write-up's setup" in text(article)
        differing = set(re.findall(r"^- ([\w-]+): this data is", _banner(article), re.MULTILINE)) if partly else None
        keys = tuple(f"{r.key}_" for r in get(chapter).contract.roles if differing is not None
                     and r.name not in differing and "{" not in r.key)
        claims = {c["id"]: c for c in load_published(project / "data" / chapter / "published.yml").claims}
        for row in ledger.find("tbody").iter("tr"):
            cells = [td.text_content().strip() for td in row.iter("td")]
            assert cells[v] in VERDICTS, (chapter, cells)
            if cells[k] == "data" and cells[v] not in ("not comparable", "not derivable"):
                names = names_in(str(claims[cells[i]].get("recompute", "")))
                assert partly and names and all(n.startswith(keys) for n in names), (chapter, cells)


def _banner(article) -> str:
    """The opening note on the setup, one line per differing role ('- other: this data is ...')."""
    note = next(d for d in article.iter("div") if "Partly not the write-up" in d.text_content()
                and "admonition" in (d.get("class") or ""))
    return "\n".join("- " + li.text_content().strip() for li in note.iter("li"))


def test_no_table_is_empty_and_no_number_is_nan(built):
    _, project, folders, _ = built
    for chapter in [*folders, "synthesis"]:
        article = page(project, chapter)
        for table in article.iter("table"):
            caption = table.find("caption")
            rows = table.findall(".//tbody/tr")
            assert rows, (chapter, caption.text_content() if caption is not None else "?")
        prose = " ".join(p.text_content() for p in article.iter("p"))
        assert not re.search(r"\bnan\b|\bNone\b|\binf\b", prose), (
            chapter, re.findall(r".{40}\b(?:nan|None|inf)\b.{20}", prose))



def test_every_download_has_a_header(built):
    """A table the data has no rows for is still offered with its columns."""
    _, project, folders, _ = built
    for chapter in [*folders, "synthesis"]:
        files = sorted((project / "book/studies" / chapter).glob("*.csv"))
        assert files, chapter
        for path in files:
            assert path.read_text(encoding="utf-8").partition("\n")[0].strip(), (chapter, path.name)

def test_sections_the_data_cannot_fill_say_so(built):
    variant, project, folders, _ = built
    body = text(page(project, "h100-dense-vs-moe-mtp"))
    needs = ("This section needs a sweep run at concurrency 1" if variant == "harness"  # open-loop sweeps only
             else "This section needs sweep runs at two or more concurrencies")
    assert "Not in this data" in body and needs in body
    body = text(page(project, "gb10-mtp"))
    assert "This section needs runs of the vanilla configuration" in body


def _numbers(article) -> str:
    return text(article).replace(",", "")


def test_the_files_own_numbers_are_on_the_pages(built):
    variant, project, folders, _ = built
    # h100: the aggregate throughput of the bench runs (nerdalert's JSONL, the harness's JSON)
    body = _numbers(page(project, "h100-dense-vs-moe-mtp"))
    files, _ = FOLDERS["h100-dense-vs-moe-mtp"][variant]
    for f in files_in(files):
        if f.suffix not in (".json", ".jsonl") or f.name in ("meta.json", "11-rate-sweep.json"):
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            d = json.loads(line) if line.strip().startswith("{") else {}
            if "output_throughput" in d and d.get("completed"):
                assert f"{d['output_throughput']:.1f}" in body or f"{d['output_throughput']:.0f}" in body, f.name
    # strix: the best avg_ts of every test, from the llama-bench files themselves
    body = _numbers(page(project, "strix-halo-baseline"))
    files, _ = FOLDERS["strix-halo-baseline"][variant]
    rates = _llama_rates(files_in(files))
    assert rates and all(f"{v:.1f}" in body for v in rates.values()), rates
    # power sweep and gb10: stats lines and SpecDecoding lines of the logs
    body = _numbers(page(project, "power-sweep"))
    files, _ = FOLDERS["power-sweep"][variant]
    for f in files_in(files):
        if f.suffix == ".log":
            gens = re.findall(r"Avg generation throughput: ([\d.]+)", f.read_text(encoding="utf-8"))
            running = re.findall(r"Running: (\d+) reqs", f.read_text(encoding="utf-8"))
            busy = [float(g) for g, n in zip(gens, running) if int(n) >= 1]
            if busy:
                assert f"{max(busy):.0f}" in body, (f.name, max(busy))
    body = _numbers(page(project, "gb10-mtp"))
    files, _ = FOLDERS["gb10-mtp"][variant]
    spec = [f for f in files_in(files)
            if f.suffix == ".log" and "SpecDecoding metrics" in f.read_text(encoding="utf-8")]
    if spec:
        lines = spec[0].read_text(encoding="utf-8").count("SpecDecoding metrics")
        assert f"Across the {lines} SpecDecoding lines" in text(page(project, "gb10-mtp"))


def _llama_rates(files) -> dict:
    """Best avg_ts per depth-0 test of llama-bench JSONL or markdown files, read here."""
    best: dict = {}
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                d = json.loads(line)
                if d.get("n_depth", 0):
                    continue
                name = "+".join(p for p in (f"pp{d['n_prompt']}" if d["n_prompt"] else "",
                                            f"tg{d['n_gen']}" if d["n_gen"] else "") if p)
                best[name] = max(best.get(name, 0.0), float(d["avg_ts"]))
            elif line.startswith("|") and "±" in line:
                cells = [c.strip() for c in line.strip("|").split("|")]
                test, ts = cells[-2], float(cells[-1].split("±")[0])
                best[test] = max(best.get(test, 0.0), ts)
    return best


def test_power_logs_and_a_gpu_log_that_joins_no_window_are_reported(built):
    variant, project, folders, _ = built
    if variant != "other":
        pytest.skip("the different folder pairs a server log with another machine's nvidia-smi log")
    body = text(page(project, "power-sweep"))
    assert "This section needs GPU power draw joined to the windows" in body
    assert "joins 0 of" in body and "windows joined" in body  # said in the caveats and the files table


def test_the_book_s_own_real_data_page_runs_on_the_lhl_files(built):
    _, project, _, _ = built
    body = text(page(project, "strix-halo-qwen3-30b-lhl"))
    assert "Strix Halo on real runs" in body and "Not the write-up's setup" in body
    raw = next((project / "data" / "strix-halo-qwen3-30b-lhl" / "raw").glob("*.jsonl"))
    rates = _llama_rates([raw])
    assert f"{rates['pp512']:.1f}" in _numbers(page(project, "strix-halo-qwen3-30b-lhl"))
    assert LHL.is_dir() and REAL.is_dir()
    info = json.loads((project / "book" / "studies" / "strix-halo-qwen3-30b-lhl" / "chapter.json").read_text())
    assert info["chapter"] == "strix-halo-qwen3-30b-lhl" and info["module"] == "strix"
    assert {d["study"]: d["status"] for d in info["data"]}["strix-halo-baseline"] == "measured"

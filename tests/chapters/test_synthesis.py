"""The synthesis chapter, executed for real on copies of the project.

The synthesis reads what each chapter page computed (its declared outputs beside the
executed notebook), so the fixtures execute the whole book first. Its claims summary is
compared with each chapter's own ledger (the chapter's analyse run here, on the same data);
its key figures with values recomputed from the raw JSON with json and numpy, and its
ceilings with the facts YAML read directly. Chapters whose outputs are missing or broken are
listed as missing or failed, never filled in. One real `jupyter-book build` (marked `build`)
checks the rendered page, its links to the chapters' sections, and the intro's glued summary.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import yaml

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.analysis.cost import CurrencyError
from benchbook.analysis.facts import FactsError
from benchbook.book import registry
from benchbook.book.paths import STUDIES_DIR
from benchbook.chapters.synthesis import analysis as synthesis
from benchbook.ledger import claims as claims_mod
from benchbook.site.runner import Chapter, refresh
from pages import glued, html_tables  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "synthesis"
H100 = "h100-dense-vs-moe-mtp"
STRIX = "strix-halo-baseline"
DENSE_SPARSE = "3090-dense-vs-sparse"
CHAPTERS = registry.get(STUDY).uses


# ---------------------------------------------------------------- project copies


def copy_project(dest: Path) -> Path:
    """The real book, whose TOC and intro include this page (see tests/projects.py)."""
    return projects.copy_project(dest)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("synthesis-book"))


@pytest.fixture(scope="module")
def executed(project):
    refresh(project, log=lambda msg: None)  # every chapter, then the synthesis that reads them
    return nbformat.read(Chapter(project, STUDY).output, as_version=4)


@pytest.fixture(scope="module")
def outputs(project, executed):
    """The folder the chapters wrote their declared outputs to."""
    return project / STUDIES_DIR


def nb_html(nb) -> str:
    return "\n".join(o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
                     if "text/html" in o.get("data", {}))


def own_ledger(project: Path, study: str):
    """The chapter's own analysis, run here with the page's parameters on the project's data."""
    import importlib
    import inspect

    module = importlib.import_module(registry.get(study).module)
    params = Chapter(project, study).effective_parameters({})
    params = {k: (str(project / v) if isinstance(v, str) and v.startswith("data/") else v) for k, v in params.items()}
    accepted = inspect.signature(module.analyse).parameters
    return module.analyse(**{k: v for k, v in params.items() if k in accepted}).ledger


def run_in(outputs: Path, **kw):
    return synthesis.analyse(ROOT / "data" / "facts", studies_dir=outputs, **kw)


# ---------------------------------------------------------------- the executed page


def test_claims_summary_equals_each_chapters_own_ledger(project, executed):
    table = html_tables(nb_html(executed))["Claims by chapter"].set_index("chapter")
    g = glued(executed)
    ran = 0
    for study in CHAPTERS:
        if study not in table.index:
            continue
        row = table.loc[study]
        if row["status"] != "ok":
            assert row["note"].startswith("no ") or row["status"] == "failed"
            continue
        counts = claims_mod.verdict_counts(own_ledger(project, study))
        for verdict, n in counts.items():
            assert int(row[verdict]) == n, (study, verdict)
        assert int(row["total"]) == sum(counts.values())
        ran += 1
    assert ran >= 2  # the H100 and Strix Halo chapters at least
    ok = [s for s in CHAPTERS if s in table.index and table.loc[s, "status"] == "ok"]
    assert g["claims_total"] == sum(int(table.loc[s, "total"]) for s in ok)
    assert g["claims_holds"] == sum(int(table.loc[s, "holds"]) for s in ok)
    assert g["chapters_present"] == len(ok)


def test_h100_key_figures_match_the_raw_json(executed, outputs):
    """Decode as 1 / median TPOT and MTP acceptance length, from the bench arrays."""
    study = yaml.safe_load((ROOT / "data" / H100 / "study.yml").read_text(encoding="utf-8"))
    want = {}
    for f in study["files"]:
        if f["kind"] == "sweep" and f["concurrency"] == 1:
            d = json.loads((ROOT / "data" / H100 / f["path"]).read_text(encoding="utf-8"))
            tpot = [sum(itl) / (n - 1) for itl, n in zip(d["itls"], d["output_lens"]) if n > 1]
            al = 1 + d["spec_decode_accepted_tokens"] / d["spec_decode_num_drafts"] \
                if d.get("spec_decode_num_drafts") else math.nan
            want[f["config"]] = (1 / float(np.median(tpot)), al, float(np.median(d["ttfts"])))
    r = run_in(outputs)
    kf = r.key_figures.set_index("config")
    for config, (decode, al, ttft) in want.items():
        assert kf.loc[config, "single_stream_decode_tps"] == pytest.approx(decode, rel=1e-9)
        assert kf.loc[config, "ttft_s"] == pytest.approx(ttft, rel=1e-9)
        if math.isnan(al):
            assert math.isnan(kf.loc[config, "acceptance_length"])
        else:
            assert kf.loc[config, "acceptance_length"] == pytest.approx(al, rel=1e-9)
    g = glued(executed)
    assert g["decode_max_tps"] == pytest.approx(max(v[0] for v in want.values()), rel=1e-9)


def test_h100_share_of_ceiling_from_the_yaml_by_hand(executed, outputs):
    facts = {n: yaml.safe_load((ROOT / "data/facts" / n).read_text(encoding="utf-8"))
             for n in ("platforms.yml", "models.yml", "quantisation.yml")}
    h100 = facts["platforms.yml"]["platforms"]["h100-sxm5-80gb"]
    m = facts["models.yml"]["models"]["qwen3.5-27b"]  # Qwen3.6-27B has its layout
    q = facts["quantisation.yml"]["quantisations"]["fp8"]
    table = m["vocab_size"]["value"] * m["hidden_size"]["value"]
    body = m["active_params"]["value"] - 2 * table
    kv = 2 * m["full_attention_layers"]["value"] * m["kv_heads"]["value"] * m["head_dim"]["value"] * 2  # BF16 KV
    bytes_ = body * q["bytes_per_weight"]["value"] + table * q["head_bytes_per_weight"]["value"] + kv * (4096 + 511 / 2)
    ceiling = h100["memory_bandwidth"]["value"] * 1e9 / bytes_
    r = run_in(outputs)
    decode = r.key_figures.set_index("config").loc["h100-dense", "single_stream_decode_tps"]
    lim = r.limits.set_index("config")  # the page's table and its download (key_figures_and_limits)
    assert 100 * lim.loc["h100-dense", "pct_decode_ceiling"] == pytest.approx(100 * decode / ceiling, rel=1e-9)
    # MTP: the measured acceptance length multiplies the ceiling; the plain ratio is shown beside it
    moe = lim.loc["h100-moe-mtp"]
    assert moe["pct_decode_ceiling"] == pytest.approx(moe["plain_ratio"] / moe["tokens_per_pass"], rel=1e-9)


def test_every_key_figures_row_resolves_to_facts(executed, outputs):
    """Each chapter's platform, model, weight format and KV type strings map to registry entries."""
    r = run_in(outputs)
    with_rows = {x.study for x in r.runs if x.has_key_figures and len(x.key_figures)}
    assert {H100, STRIX} <= with_rows
    for _, row in r.limits.iterrows():
        assert isinstance(row["platform_key"], str) and isinstance(row["model_key"], str), row["label"]
        assert isinstance(row["quant_key"], str) and isinstance(row["kv_key"], str), row["label"]
        assert row["issues"] in ("", "decode context unknown: KV reads left out of the decode bytes"), row["label"]
        # no single stream beats its ceiling by far (a page without a one-stream run has no ratio)
        assert pd.isna(row["single_stream_decode_tps"]) or 0 < row["plain_ratio"] < 1.5, row["label"]
        assert row["anchor"], row["label"]


def test_overview_cells_link_to_chapter_sections(executed):
    import lxml.html

    page = nb_html(executed)
    tree = lxml.html.fromstring(page)
    table = next(t for t in tree.iter("table") if t.find("caption").text_content().strip() == "All configurations")
    hrefs = [a.get("href") for a in table.iter("a")]
    assert hrefs, "no links in the overview table"
    rows = len(table.findall(".//tbody/tr"))
    assert len(hrefs) == rows * 9  # every cell of every row
    studies = {h.split(".html")[0] for h in hrefs}
    assert studies <= set(CHAPTERS) and H100 in studies
    assert all("#" in h for h in hrefs)
    # each row says whose data it is: the pages on measured files, and only they, read "measured"
    from pages import measured_pages

    rows = table.findall(".//tbody/tr")
    data = [tr.findall("td")[1].text_content().strip() for tr in rows]
    pages = [tr.find(".//a").get("href").split(".html")[0] for tr in rows]
    assert set(data) <= {"measured", "reconstructed"} and "reconstructed" in data
    assert {p for p, d in zip(pages, data) if d == "measured"} == measured_pages() & set(pages)


def test_cache_key_covers_every_input_folder_and_the_outputs_it_reads(project, outputs):
    """Its own inputs (the write-ups, the facts) and what it reads from each chapter (its
    declared outputs), not how a chapter made them: touching the H100 notebook reruns the
    H100 chapter, and this page only if that chapter's outputs then differ."""
    chapter = Chapter(project, STUDY)
    before = chapter.cache_key({})
    for path in (project / "data" / H100 / "published.yml", project / "data" / "facts" / "platforms.yml",
                 outputs / H100 / "key_figures.csv", outputs / STRIX / "chapter.json"):
        original = path.read_text(encoding="utf-8")
        path.write_text(original + "\n# touched\n", encoding="utf-8")
        try:
            assert chapter.cache_key({}) != before, path
        finally:
            path.write_text(original, encoding="utf-8")
    assert chapter.cache_key({}) == before
    notebook = project / "notebooks" / f"{H100}.md"
    original = notebook.read_text(encoding="utf-8")
    notebook.write_text(original + "\n<!-- touched -->\n", encoding="utf-8")
    try:
        assert chapter.cache_key({}) == before and Chapter(project, H100).is_stale()
    finally:
        notebook.write_text(original, encoding="utf-8")


# ---------------------------------------------------------------- missing and failing chapters


@pytest.fixture
def bare(outputs, tmp_path):
    """A copy of the chapters' outputs, to take apart."""
    shutil.copytree(outputs, tmp_path / "studies", ignore=shutil.ignore_patterns("*.ipynb"))
    return tmp_path / "studies"


def test_a_chapter_without_outputs_is_listed_as_missing_not_faked(project, bare):
    shutil.rmtree(bare / STRIX)
    r = run_in(bare)
    strix = r.run(STRIX)
    assert strix.status == "missing" and "has not been executed" in strix.detail
    assert not (r.key_figures["study"] == STRIX).any()
    claims = r.claims.set_index("study")
    assert claims.loc[STRIX, "status"] == "missing" and pd.isna(claims.loc[STRIX, "total"])
    assert STRIX in synthesis.glue_values(r)["chapters_missing_names"]
    # the H100 chapter's counts are its own
    counts = claims_mod.verdict_counts(own_ledger(project, H100))
    assert {v: int(claims.loc[H100, v]) for v in counts} == counts
    assert any("Not included" in c and STRIX in c for c in r.own_caveats["caveat"])


def test_a_chapter_in_the_registry_without_a_page_is_missing(bare, monkeypatch):
    from dataclasses import replace

    pages = tuple(replace(c, uses=c.uses + ("imaginary-study",)) if c.id == STUDY else c for c in registry.chapters())
    monkeypatch.setattr(registry, "chapters", lambda: pages)
    r = run_in(bare)
    run = r.run("imaginary-study")
    assert run.status == "missing" and "has not been executed" in run.detail


def test_a_chapter_whose_outputs_cannot_be_read_is_listed_as_failed(bare):
    (bare / H100 / "chapter.json").write_text("{ not json", encoding="utf-8")
    r = run_in(bare)
    run = r.run(H100)
    assert run.status == "failed" and "chapter.json" in run.detail
    assert not (r.key_figures["study"] == H100).any()
    assert r.claims.set_index("study").loc[H100, "status"] == "failed"
    assert r.run(STRIX).status == "ok"  # the others are read as they are


def test_a_chapter_whose_data_gives_no_key_figures_is_read_not_failed(bare, tmp_path):
    """The 3090 chapter on a log of serving lines only has no configuration with a decode
    run: it writes an empty key_figures table with its header, and the synthesis includes
    its claims and says why it has no row, instead of failing on a file without columns."""
    from benchbook.chapters.dense_sparse import analysis as dense_sparse
    from benchbook.page import report
    from files import serving_only_folder

    folder = serving_only_folder(tmp_path, DENSE_SPARSE, "dense")
    r = dense_sparse.analyse(folder, ROOT / "data" / DENSE_SPARSE / "published.yml")
    shutil.rmtree(bare / DENSE_SPARSE)
    report.write_outputs(r, dense_sparse.downloads(r), bare / DENSE_SPARSE, "tables")
    header = (bare / DENSE_SPARSE / "key_figures.csv").read_text(encoding="utf-8").splitlines()
    assert header and header[0].startswith("study,platform,config") and len(header) == 1

    run = run_in(bare).run(DENSE_SPARSE)
    assert run.status == "ok" and run.has_key_figures and not len(run.key_figures)
    assert "no configuration of its data has the runs its key figures need" in run.detail
    assert len(run.ledger) == len(r.ledger)


def test_the_synthesis_reads_what_a_chapter_computed_on_other_data(project, outputs, tmp_path):
    """A chapter rerun on other data reaches the synthesis: its key figures come from the chapter's
    outputs, and the synthesis is stale once the chapter's key changes."""
    before = Chapter(project, STUDY).cache_key({})
    changed = tmp_path / "h100"
    shutil.copytree(project / "data" / H100, changed)
    study = yaml.safe_load((changed / "study.yml").read_text(encoding="utf-8"))
    dropped = [f["path"] for f in study["files"] if f["config"] == "h100-moe-mtp"]
    for rel in dropped:
        (changed / rel).unlink()
    study["files"] = [f for f in study["files"] if f["path"] not in dropped]
    del study["configs"]["h100-moe-mtp"]
    (changed / "study.yml").write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    from benchbook.study.folder import write_checksums

    write_checksums(changed)
    h100 = Chapter(project, H100)
    try:
        h100.execute({"data_dir": str(changed)}, log=lambda m: None)
        assert Chapter(project, STUDY).cache_key({}) != before
        r = run_in(outputs)
        assert set(r.key_figures.loc[r.key_figures["study"] == H100, "config"]) == {"h100-dense"}
    finally:
        h100.execute({}, log=lambda m: None)
    assert Chapter(project, STUDY).cache_key({}) == before


# ---------------------------------------------------------------- currency


def test_api_comparison_needs_a_dated_rate(outputs):
    bare = outputs
    r = run_in(bare)
    lim = r.limits.set_index("config")
    assert lim.loc["h100-moe-mtp", "api_note"].startswith("not derivable")
    assert pd.isna(lim.loc["h100-moe-mtp", "api_ratio"])
    r = run_in(bare, usd_per_eur=1.25, fx_date="2026-06-05")
    lim = r.limits.set_index("config")
    cost = lim.loc["h100-moe-mtp", "cost_per_m"]  # EUR
    assert lim.loc["h100-moe-mtp", "api_ratio"] == pytest.approx(14.0 / (cost * 1.25))
    assert "1.25 USD/EUR on 2026-06-05" in lim.loc["h100-moe-mtp", "api_note"]
    with pytest.raises(CurrencyError):
        run_in(bare, fx_date="2026-06-05")
    with pytest.raises(CurrencyError):
        run_in(bare, usd_per_eur=1.25)
    with pytest.raises(FactsError, match=r"prices.yml: api.anthropic-gpt-5.2: no such API price"):
        run_in(bare, api_price="anthropic-gpt-5.2")


def test_usd_cloud_scenarios_divide_without_a_rate(outputs):
    r = run_in(outputs)
    cs = synthesis.cloud_scenarios(r)
    assert set(cs["currency"]) == {"USD"} and list(cs.columns) == synthesis.CLOUD_COLUMNS
    row = cs[(cs["config"] == "h100-moe-mtp") & (cs["price"] == "2.7 USD/h")].iloc[0]
    # $2.70 / (aggregate x 3,600) x 1e6, then $14 / that
    assert row["cost_per_m"] == pytest.approx(2.7 / (row["aggregate_tps"] * 3600) * 1e6)
    assert row["api_over_ours"] == pytest.approx(14.0 / row["cost_per_m"])



def test_with_no_chapter_output_every_download_keeps_its_header(bare, tmp_path):
    """No chapter has been executed: the tables are empty, and each is written with its
    columns (no CSV file without a header for a reader's script to trip on)."""
    from benchbook.page.report import write_downloads

    for folder in [p for p in bare.iterdir() if p.is_dir()]:
        shutil.rmtree(folder)
    tables = synthesis.downloads(run_in(bare))
    assert not len(tables["cloud_scenarios"]) and not len(tables["key_figures_and_limits"])
    for name, path in write_downloads(tables, tmp_path / "out", "t").items():
        if path.suffix == ".csv":
            header = path.read_text(encoding="utf-8").partition("\n")[0]
            assert header and header.split(",") == [str(c) for c in tables[name].columns], name


# ---------------------------------------------------------------- the built book


@pytest.mark.build
def test_book_builds_with_the_synthesis_page_links_and_intro_summary(project, executed):
    import lxml.html

    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    site = project / "book" / "_build" / "html"
    page = (site / "studies" / "synthesis.html").read_text(encoding="utf-8")
    assert "{glue" not in page
    assert 'alt="Horizontal bar chart of single-stream decode speed' in page
    # every link to a chapter lands on a page and a section that exist
    for a in lxml.html.fromstring(page).iter("a"):
        href = a.get("href") or ""
        study = href.split(".html")[0]
        if study in CHAPTERS and "#" in href:
            target = site / "studies" / f"{study}.html"
            assert target.is_file(), href
            assert f'id="{href.split("#")[1]}"' in target.read_text(encoding="utf-8"), href
    t = html_tables(page)
    assert {"All configurations", "Claims by chapter", "Decode roofline per configuration"} <= set(t)
    g = glued(executed)
    intro = (site / "intro.html").read_text(encoding="utf-8")
    assert "{glue" not in intro
    if "synthesis.ipynb::" in (ROOT / "book" / "intro.md").read_text(encoding="utf-8"):
        text = lxml.html.fromstring(intro).text_content()
        assert f"{g['claims_total']}" in text and f"{g['pct_ceiling_max']:.0f}" in text


def test_the_banner_classes_a_chapter_by_its_own_folder_and_names_what_it_reads():
    """A chapter on measured data that reads a reconstructed folder is measured, and says so."""
    from types import SimpleNamespace

    from benchbook.chapters.synthesis.analysis import ChapterRun, banner

    rec = {"status": "reconstructed"}
    runs = [ChapterRun(STRIX, "ok", data=[{"study": STRIX, "status": "measured"}, {"study": H100, **rec}],
                       comparable=False),
            ChapterRun(H100, "ok", data=[{"study": H100, **rec}, {"study": STRIX, "status": "measured"}]),
            ChapterRun("gb10-mtp", "missing")]
    assert not runs[0].reconstructed and runs[0].reads_reconstructed
    assert runs[1].reconstructed and not runs[1].reads_reconstructed
    text = banner(SimpleNamespace(runs=runs))
    assert "Data: reconstructed and measured" in text
    assert f"Measured data: {STRIX} (it also reads reconstructed data of another chapter)" in text.replace("\\", "")
    assert f"not all, the write-up's setup, so the claims about the data that differs are not compared: {STRIX}." \
        in text.replace("\\", "")
    assert "gb10" not in text


def test_book_counts_are_of_distinct_statements_and_say_which_could_have_failed():
    from benchbook.chapters.synthesis.analysis import ChapterRun, distinct_claim_counts
    from benchbook.ledger import claims as cl

    def ledger(rows):
        return pd.DataFrame([dict(zip(("id", "verdict", "basis", "same_as"), r)) for r in rows])

    h100 = ledger([("gap", cl.HOLDS, cl.BY_CONSTRUCTION, ""), ("gap-stated", cl.FAILS, cl.SELF, ""),
                   ("cost", cl.HOLDS, cl.MEASURED, ""), ("kv", cl.UNKNOWN, "", "")])
    strix = ledger([("strix-gap", cl.HOLDS, cl.BY_CONSTRUCTION, f"{H100}:gap"),
                    ("spread", cl.HOLDS, cl.GENERATOR, ""), ("other", cl.NOT_COMPARABLE, "", "")])
    runs = [ChapterRun(H100, "ok", ledger=h100), ChapterRun(STRIX, "ok", ledger=strix),
            ChapterRun("gb10-mtp", "missing")]
    n = distinct_claim_counts(runs)
    assert n["claims_distinct"] == 5  # gap (3 rows), cost, kv, spread, other
    assert n["claims_checked"] == 2 and n["claims_checked_hold"] == 1  # gap's own twin does not hold
    assert n["claims_generator"] == 1 and n["claims_distinct_not_derivable"] == 1
    assert n["claims_distinct_not_comparable"] == 1
    # counted by basis: a statement resting only on files fit to the write-up is not one resting
    # on a generator's choice
    lone = ledger([("fit", cl.HOLDS, cl.BY_CONSTRUCTION, ""), ("chosen", cl.HOLDS, cl.GENERATOR, ""),
                   ("chosen-too", cl.FAILS, cl.GENERATOR, "")])
    n = distinct_claim_counts([ChapterRun(H100, "ok", ledger=lone)])
    assert (n["claims_by_construction"], n["claims_generator"]) == (1, 2)


def test_a_configuration_two_pages_computed_from_the_same_runs_is_listed_once():
    """The DGX Spark runs feed the H100 and the GB10 notebooks: the 27B FP8 measured once is
    one row; the same model with other numbers (another run) stays."""
    from benchbook.book.key_figures import conform_key_figures
    from benchbook.chapters.synthesis.analysis import once

    row = dict(study="dgx-spark-dense-vs-moe", platform="DGX Spark", config="a", model="Qwen/Qwen3.6-27B-FP8",
               quantisation="FP8", single_stream_decode_tps=7.8, ttft_s=1.9, ttft_input_tokens=1024.0,
               best_aggregate_tps=49.0, best_aggregate_concurrency=25.0, acceptance_length=float("nan"),
               cost_per_m=float("nan"), currency="", power_w=float("nan"), power_kind="", anchor="x")
    kf = conform_key_figures(pd.DataFrame([row, {**row, "study": "dgx-spark-measured", "config": "b"},
                                           {**row, "study": "dgx-spark-measured", "config": "c",
                                            "single_stream_decode_tps": 7.9}]), "t")
    got = once(kf)
    assert list(got["study"]) == ["dgx-spark-dense-vs-moe", "dgx-spark-measured"]
    assert list(got["config"]) == ["a", "c"]


# ---- the cross-study chart: every chapter's serving points -----------------------------------

def _bench_run(name, conc, tpot, tps, **kw):
    return dict(name=name, run_id=name, config="a", kind="sweep", load="single-stream" if conc == 1 else "concurrency",
                max_concurrency=conc, request_rate=float("inf"), median_tpot_s=tpot, output_tps=tps, output_len=512,
                input_len=1024, completed=10) | kw


def _points_folder(root: Path, study: str, runs: list[dict], platform="NVIDIA H100 80GB SXM", declare=True,
                   assumed=None, kind="reconstructed", edit=None) -> Path:
    """A chapter's outputs holding only its serving points (benchbook.book.serving_points)."""
    from benchbook.book import serving_points as sp
    from benchbook.study.marks import Cells

    folder = root / study
    folder.mkdir(parents=True)
    c = {"platform": platform, "model": "Qwen/Qwen3.6-27B-FP8", "quantisation": "FP8", "accelerators": "1x GPU"}
    table = sp.points_table(sp.bench_points(study, pd.DataFrame(runs), Cells(), {"a": c}, labels={"a": "A"},
                                            anchor="concurrency", kind=kind), {})
    (edit or (lambda t: t))(table).to_csv(folder / "serving_points.csv", index=False)
    doc = {"data": [{"study": study, "status": kind}],
           "outputs": {"serving_points": "serving_points.csv"} if declare else {},
           "assumed_cells": {"serving_points": assumed or {}}, "assumed_why": {"tpot": "the generator chose TPOTs"}}
    (folder / "chapter.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def _gathered(root: Path, studies: list[str]):
    from benchbook.analysis.facts import load_facts
    from benchbook.chapters.synthesis import points

    runs = [synthesis.read_chapter(s, root / s) for s in studies]
    return runs, points.mark_duplicates(points.name(load_facts(ROOT / "data/facts"), points.gather(runs)))


def test_the_chart_draws_each_chapter_s_points_and_says_what_was_left_out_and_why(tmp_path):
    from benchbook.chapters.synthesis import points

    _points_folder(tmp_path, "one", [_bench_run("c1", 1, 0.01, 90.0), _bench_run("c8", 8, 0.02, 350.0),
                                     _bench_run("open", None, 0.02, 50.0, load="request-rate", request_rate=0.5)])
    _points_folder(tmp_path, "two", [_bench_run("c4", 4, 0.05, 70.0), _bench_run("pre", 1, float("nan"), 1.0,
                                                                                  output_len=1)],
                   platform="NVIDIA DGX Spark (GB10)", kind="measured")
    runs, df = _gathered(tmp_path, ["one", "two"])
    shown = points.shown(df)
    assert list(shown["run"]) == ["c1", "c8", "c4"]
    assert list(shown["platform_name"]) == ["H100 SXM5 80GB"] * 2 + ["DGX Spark (GB10)"]  # the facts' names
    assert list(shown["link"]) == ["one.html#concurrency", "one.html#concurrency", "two.html#concurrency"]
    g = points.glue(df)
    assert (g["serving_points_shown"], g["serving_points_left_out"], g["serving_points_measured"]) == (3, 2, 1)
    assert g["serving_points_left_out_reasons"] == 2
    lo = points.left_out(df)
    assert lo.values.tolist() == [["one", sp_reason("OPEN_LOOP"), 1], ["two", sp_reason("NO_DECODE"), 1]]
    by = points.per_chapter(df, runs)
    assert by["chapter"].tolist() == ['<a href="one.html">one</a>', '<a href="two.html">two</a>']
    assert by[["points", "left out"]].values.tolist() == [[2, 1], [1, 1]] and by.loc[1, "data"] == "measured"
    html_ = points.chart_html(df)
    assert html_.count("<select") == 4 and "All 3 points shown." in html_


def sp_reason(name: str) -> str:
    from benchbook.book import serving_points as sp

    return getattr(sp, name)


def test_a_chapter_whose_point_pairs_a_single_stream_with_another_run_s_aggregate_is_failed(tmp_path):
    def mix(t):  # the c=1 decode rate beside the c=32 run's aggregate: a point no server reached
        t.loc[0, ["aggregate_tps", "per_device_tps"]] = 2229.0
        return t

    _points_folder(tmp_path, "mixed", [_bench_run("c1", 1, 0.0036, 236.0)], edit=mix)
    run = synthesis.read_chapter("mixed", tmp_path / "mixed")
    assert run.status == "failed" and "serving_points.csv" in run.detail and "not from one measurement" in run.detail


def test_a_point_two_pages_computed_from_the_same_files_is_drawn_once(tmp_path):
    from benchbook.chapters.synthesis import points

    same = [_bench_run("c1", 1, 0.01, 90.0), _bench_run("c8", 8, 0.02, 350.0)]
    _points_folder(tmp_path, "first", same)
    _points_folder(tmp_path, "second", [*same, _bench_run("c16", 16, 0.03, 500.0)])
    runs, df = _gathered(tmp_path, ["first", "second"])
    assert list(points.shown(df)["run"]) == ["c1", "c8", "c16"]
    assert list(df.loc[df["study"] == "second", "duplicate_of"]) == ["first", "first", ""]
    assert points.glue(df)["serving_points_duplicates"] == 2
    assert points.per_chapter(df, runs).loc[1, "already another page's"] == 2


def test_a_generator_s_choice_in_a_chapter_s_points_is_marked_on_the_chart_and_in_the_table(tmp_path):
    from benchbook.chapters.synthesis import points
    from benchbook.study.marks import MARKS

    _points_folder(tmp_path, "one", [_bench_run("c1", 1, 0.01, 90.0), _bench_run("c8", 8, 0.02, 350.0)],
                   assumed={"per_user_tps": {"1": ["tpot"]}})
    _, df = _gathered(tmp_path, ["one"])
    assert df.attrs[MARKS] == {"per_user_tps": {1: ["one/tpot"]}}
    assert points.table(df).attrs[MARKS] == {"t/s per user": {1: ["one/tpot"]}}
    assert "one/tpot" in points.chart_html(df)  # the hover line and the legend under the chart


def test_a_chapter_that_declares_no_points_is_listed_with_none(tmp_path):
    from benchbook.chapters.synthesis import points

    _points_folder(tmp_path, "old", [_bench_run("c1", 1, 0.01, 90.0)], declare=False)
    runs, df = _gathered(tmp_path, ["old"])
    assert runs[0].status == "ok" and runs[0].points is None and not len(df)
    assert points.per_chapter(df, runs).loc[0, "note"] == "the chapter declares no serving_points output"
    assert points.chart_html(df) == ""


def test_a_platform_the_facts_do_not_know_is_named_by_its_whole_text():
    """Two setups that differ only after a bracket or a comma stay two filter values."""
    from benchbook.analysis.facts import load_facts
    from benchbook.chapters.synthesis import points

    facts = load_facts(ROOT / "data/facts")
    df = pd.DataFrame({"platform": ["Lab box (NVLink), 350 W", "Lab box (PCIe), 350 W"], "model": ["m", "m"],
                       "quantisation": ["FP8", "FP8"], "study": ["s", "s"], "anchor": ["", ""]})
    assert list(points.name(facts, df)["platform_name"]) == ["Lab box (NVLink), 350 W", "Lab box (PCIe), 350 W"]

"""The GB10 MTP chapter: executed for real in a copy of the project, glue values checked
against numbers computed here from published.yml and the raw files; one real book build.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.chapters.gb10 import analysis as gb10
from benchbook.ledger.published import load_published, parse_quantity
from benchbook.site.runner import Chapter
from benchbook.study.folder import write_checksums
from pages import glued  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STUDY = "gb10-mtp"
DATA = ROOT / "data" / STUDY
BIN = Path(sys.executable).parent


def copy_project(dest: Path) -> Path:
    """A book of this chapter only (see tests/projects.py)."""
    return projects.copy_project(dest, chapters=[STUDY])


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("gb10book"))
    out = Chapter(project, STUDY).execute(log=lambda m: None)
    return project, glued(nbformat.read(out, as_version=4))


def _published():
    return load_published(DATA / "published.yml")


def test_every_published_cell_is_reproduced_on_the_page(executed):
    _, g = executed
    pub = _published()
    cells = sum(1 for t in pub.tables for exprs in t.values for e in exprs if e)
    assert g["cells_total"] == cells
    assert g["cells_within"] == cells


def test_ledger_counts_add_up(executed):
    _, g = executed
    pub = _published()
    assert g["claims_total"] == len(pub.claims)
    assert g["claims_holds"] + g["claims_does_not_hold"] + g["claims_not_derivable"] == len(pub.claims)
    assert g["claims_not_derivable"] >= sum(c.get("kind") == "not-derivable" for c in pub.claims)
    assert g["consistency_total"] == sum(c.get("kind") == "consistency" for c in pub.claims)
    assert 0 < g["consistency_fail_rounding"] < g["consistency_total"]


def test_glued_numbers_equal_the_published_ones(executed, results):
    _, g = executed

    def prints_as(text, value):
        q = parse_quantity(text)
        return q.value - q.step / 2 <= value < q.value + q.step / 2

    c = gb10.compare(results, "van", "mtp").set_index(["_test", "_metric"])["_delta"] * 100
    assert prints_as("+24.2%", c["c", "output_tps"]) and prints_as("−56.7%", c["c", "mean_ttft_s"])
    assert prints_as("−7.2%", c["b", "output_tps"]) and prints_as("+30.7%", c["b", "mean_tpot_s"])
    assert prints_as("+8.7%", c["a", "output_tps"]) and prints_as("+5.0%", c["d", "output_tps"])
    # the prose names the tests where MTP helps most and least, as this data ran them
    assert g["mtp_best_test"] == "C: 2048/512, 16 clients" and g["mtp_worst_test"] == "B: 8192/256, 4 clients"
    assert g["mtp_best_output_pct"] == pytest.approx(c["c", "output_tps"], rel=1e-12)
    assert g["mtp_worst_mean_tpot_s_pct"] == pytest.approx(c["b", "mean_tpot_s"], rel=1e-12)
    assert g["prom_num_drafts"] == 41568 and g["prom_accepted_tokens"] == 60298
    assert g["global_per_draft"] == pytest.approx(60298 / 41568)
    assert g["global_length"] == pytest.approx(1 + 60298 / 41568)
    assert g["a_length"] == pytest.approx(1 + 6033 / 4211)
    assert g["line_time"] == "05:00:39" and g["line_length"] == pytest.approx(2.50)
    assert g["line_rate_pct"] == pytest.approx(74.9)
    assert g["mtp_graph_change"] == "FULL_AND_PIECEWISE → PIECEWISE"
    assert g["mtp_cost_kv_cache_tokens"] == 323456 - json_kv("van")
    assert g["decisions_agree"] == g["decisions_total"] == 4
    assert g["within_total"] == 24 and g["within_count"] < 24
    assert g["mtp_runs"] == 7 and g["bench_drafts"] < g["prom_delta_drafts"] < g["prom_num_drafts"]


def json_kv(cfg: str) -> int:
    text = (DATA / "raw" / gb10_config(cfg) / "vllm-serve.log").read_text(encoding="utf-8")
    return int(re.search(r"GPU KV cache size: ([\d,]+) tokens", text).group(1).replace(",", ""))


def gb10_config(cfg: str) -> str:
    study = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))
    return next(e["config"] for e in study["files"] if e["name"] == f"{cfg}_log")


def test_downloads_are_written(executed):
    project, _ = executed
    folder = project / "book" / "studies" / STUDY
    for name in ("runs", "seed_groups", "spec_decode", "boot", "claims", "published_vs_reproduced"):
        df = pd.read_csv(folder / f"{name}.csv")
        assert len(df), name
    assert (folder / "gb10-mtp-tables.zip").is_file()


# ---------------------------------------------------------------- behaviour on changed data


@pytest.fixture(scope="module")
def results():
    return gb10.analyse(DATA)


def test_rule_judges_changes_against_the_seed_spread(results):
    c = gb10.compare(results, "van", "mtp")
    beyond = c[c["verdict"].str.startswith("beyond")]
    assert (beyond["_delta"].abs() > beyond["_band"]).all()
    within = c[c["verdict"] == "within noise"]
    assert (within["_delta"].abs() <= within["_band"]).all()
    doubled = gb10.Results(**{**results.__dict__, "params": {**results.params, "noise_factor": 1e6}})
    assert not gb10.compare(doubled, "van", "mtp")["verdict"].str.startswith("beyond").any()


def test_decision_follows_the_data(tmp_path, results):
    """Make test C's MTP runs 30 % slower: the rule must turn MTP off there."""
    data = tmp_path / STUDY
    shutil.copytree(DATA, data)
    study = yaml.safe_load((data / "study.yml").read_text(encoding="utf-8"))
    for e in study["files"]:
        if e["name"].startswith("mtp_c_"):
            path = data / e["path"]
            d = json.loads(path.read_text(encoding="utf-8"))
            d["duration"] *= 1.3
            path.write_text(json.dumps(d), encoding="utf-8")
    write_checksums(data)
    before = gb10.decision(results).set_index("test")["our call"]
    after = gb10.decision(gb10.analyse(data, DATA / "published.yml")).set_index("test")["our call"]
    c = results.test_label("c")
    assert before[c] == "strongly on" and after[c] == "off"
    assert (before.drop(c) == after.drop(c)).all()


def test_within_rounding_is_computed_from_the_stated_numbers():
    claims = {c["id"]: c for c in _published().claims}
    assert gb10.within_rounding(claims["kv-shrink-stated"]) == "yes"  # −2.3 % needs unrounded pools
    assert gb10.within_rounding(claims["c-length-vs-rate-stated"]) == "no"
    assert gb10.within_rounding(claims["c-draft-tokens-stated"]) == "no"
    assert gb10.within_rounding(claims["prom-rate-stated"]) == "yes"
    assert gb10.within_rounding(claims["kv-fresh"]) == ""  # data claims are judged on the data


def test_three_acceptance_figures_share_one_yardstick(results):
    t = gb10.three_figures(results).set_index("printed value")
    assert list(t.index) == ["2.43", "2.50", "1.45"]
    assert float(t.loc["1.45", "with bonus"]) == pytest.approx(1 + 60298 / 41568, abs=5e-4)
    assert float(t.loc["2.43", "without bonus"]) == pytest.approx(6033 / 4211, abs=5e-4)


# ---------------------------------------------------------------- one real build


@pytest.mark.build
def test_book_builds_with_the_chapter(tmp_path):
    project = copy_project(tmp_path)
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=900)
    log = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), log[-3000:]
    mine = [line for line in log.splitlines() if "WARNING" in line and STUDY in line]
    assert not mine, mine
    html = (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")
    assert "{glue" not in html and "Data: reconstructed" in html
    from pages import html_tables

    tables = html_tables(html)  # markers of assumed values aside
    pub = yaml.safe_load((DATA / "published.yml").read_text(encoding="utf-8"))
    for tb in pub["tables"]:
        shown = next(v for k, v in tables.items() if k.startswith(tb["title"]))
        assert list(shown.columns) == tb["columns"]
        for row, got in zip([r["cells"] for r in tb["rows"]], shown.astype(str).values.tolist()):
            for cell, expr, text in zip(row, next(r["values"] for r in tb["rows"] if r["cells"] == row), got):
                if expr:
                    assert text.startswith(f"{cell} → ") and "✗" not in text, (tb["id"], cell, text)
    assert list(tables["Claims ledger"]["claim id"]) == [c["id"] for c in pub["claims"]]
    calls = tables["MTP per workload: our call by the rule"]
    assert list(calls["our call"]) == ["on", "off", "strongly on", "on"]
    assert html.count('alt="') >= 3 and "05:00:39" in html
    downloads = {p.name for p in (project / "book/_build/html/_downloads").rglob("*.csv")}
    assert {"runs.csv", "claims.csv", "spec_decode.csv", "boot.csv"} <= downloads


def test_rate_sweeps_of_the_dgx_spark_harness(tmp_path):
    """Whole DGX Spark harness folders: `new` makes the FP8 35B-A3B the vanilla configuration
    (the write-up's setup for it); the user gives the 27B the role control and leaves the
    NVFP4 folder's role open, so its runs wait. The section shows the two configurations'
    sweeps, and the capacity of each main sweep is the harness's own (11-rate-sweep.json,
    read here as plain JSON)."""
    from realdata import DGX, REAL, dgx

    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    folders = ("qwen-3.6-35b-a3b/fp8", "qwen-3.6-27b/fp8", "qwen-3.6-35b-a3b/nvfp4")
    data = dgx(STUDY, tmp_path, folders, {"qwen-3.6-27b/fp8": "control", "qwen-3.6-35b-a3b/nvfp4": None})
    r = gb10.analyse(data, DATA / "published.yml")
    assert r.has("rate") and not r.has("mtp")
    labels = list(r.rates.labels)
    assert labels == [r.roles.first("control"), r.roles.first("vanilla")]
    assert set(r.rates.steps["config"]) == set(labels)  # the NVFP4 runs wait for their role
    assert "35B-A3B-FP8" in r.config(r.roles.first("vanilla"))["model"]
    cap = r.rates.capacity
    for cid, folder in zip(labels, folders[1::-1]):
        main = cap[(cap["config"] == cid) & (cap["steps"] == 7)].set_index("limit_s")
        theirs = json.loads((DGX / folder / "11-rate-sweep.json").read_text())["capacity_by_slo_ms"]
        for ms, h in theirs.items():
            got = main.loc[int(ms) / 1000, "capacity_rps"]
            assert (got == h["configured_rps"]) if h else pd.isna(got), (folder, ms)
    assert gb10.glue_values(r)["rate_configs"] == 2
    assert set(gb10.downloads(r)) >= {"rate_steps", "rate_capacity"}
    # the runs table lists every run of a configuration with a role, rate runs too, with its load
    shown = gb10.runs_display(r)
    steps = r.rates.steps
    assert len(shown[shown["test"] == "rate"]) == len(steps) and set(shown["config"]) == set(labels)
    assert shown.loc[shown["test"] == "rate", "load"].str.startswith("open loop at ").all()


def test_the_write_up_s_data_has_no_rate_runs_and_says_so():
    r = gb10.analyse(DATA, DATA / "published.yml")
    assert not r.has("rate") and "--request-rate" in r.missing("rate").text()
    assert "rate_steps" not in gb10.glue_values(r)


def test_energy_and_llama_benchy_of_whole_harness_folders(tmp_path):
    """Whole DGX Spark harness folders through `new`: the GB10 chapter shows energy per token
    for every bench run a power log of its test covers, and llama-benchy's decode points, one
    per raw `tgN (cK)` line of the .md tables (their .log copies shown once)."""
    from realdata import DGX, REAL, dgx

    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    folders = ("qwen-3.6-35b-a3b/fp8", "qwen-3.6-27b/fp8")
    data = dgx(STUDY, tmp_path, folders)  # the 35B-A3B FP8 vanilla (the write-up's setup), the 27B other
    r = gb10.analyse(data, DATA / "published.yml")
    assert r.has("energy") and r.has("closed-loop")
    results = [p for f in folders for p in (DGX / f).glob("[01][0-9]-*.json")
               if "date" in json.loads(p.read_text(encoding="utf-8"))]
    assert len(r.energy) == len(results) == 20 and r.energy["covered"].all()
    tg = sum(1 for f in folders for p in (DGX / f).glob("0[1-6]-*.md")
             for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("|") and " tg" in ln.split("|")[2])
    assert int((r.closed["kind"] == "tg").sum()) == tg and r.closed["source_file"].str.endswith(".md").all()
    glued = gb10.glue_values(r)
    assert glued["energy_runs"] == 20 and glued["closed_points"] == tg
    assert {"energy", "closed_loop"} <= set(gb10.downloads(r))


# ---- the book's page on measured DGX Spark runs (data/dgx-spark-measured, CC-BY-4.0)

MEASURED = ROOT / "data" / "dgx-spark-measured"


def _benchy_cells(path: Path, test: str) -> list[str]:
    """The cells of the row of `test` ('tg1024 (c1)') in a llama-benchy markdown table, read here."""
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) > 2 and cells[1] == test:
            return cells
    raise AssertionError(f"{path.name}: no row {test}")


def test_the_measured_dgx_spark_page_s_numbers_are_its_raw_files():
    """The five Qwen3.6 folders: the write-up's model without MTP is the vanilla configuration,
    the rest are shown where every configuration is; every number the rate, llama-benchy,
    energy and beside sections show equals the raw files read here with json and a split."""
    import csv

    r = gb10.analyse(MEASURED, DATA / "published.yml")
    assert r.comparability.role_ok("vanilla") and not r.comparability.role_ok("other") and not r.comparable
    assert not r.assumed and not r.has("mtp") and not r.has("control")
    assert all(r.has(s) for s in ("rate", "closed-loop", "energy", "beside"))
    raw = MEASURED / "raw"
    meta = {p.parent.relative_to(raw).as_posix(): json.loads(p.read_text()) for p in raw.glob("*/*/meta.json")}
    assert len(meta) == 5
    for cid in r.data.study.configs:
        folder = next(f for f, m in meta.items() if m["model"] == r.config(cid)["model"])
        assert r.config(cid)["engine_version"] == meta[folder]["vllm_version_reported"]
        assert r.roles.of_config[cid] == ("vanilla" if folder == "qwen-3.6-35b-a3b/fp8" else "other")
    for _, step in r.rates.steps.iterrows():
        obj = json.loads((MEASURED / step["source_file"]).read_text())
        assert step["output_tps"] == pytest.approx(obj["output_throughput"], rel=1e-12)
    tg_lines = sum(1 for p in raw.glob("*/*/0[1-6]-*.md") for ln in p.read_text(encoding="utf-8").splitlines()
                   if ln.startswith("|") and " tg" in ln.split("|")[2])
    assert int((r.closed["kind"] == "tg").sum()) == tg_lines == 125
    e = r.energy
    assert len(e) == 50 and e["covered"].all()  # tests 07-11 of five configurations, six sweep steps each
    for _, row in e.iterrows():
        obj = json.loads((MEASURED / row["source_file"]).read_text())
        assert row["output_tokens"] == obj["total_output_tokens"]
        with open(MEASURED / row["series_file"], newline="") as fh:
            watts = [float(x["power_w"]) for x in csv.DictReader(fh)]
        assert min(watts) <= row["mean_power_w"] <= max(watts)
    # the write-up's test A beside the vanilla folder's one-request chat test, never judged
    a = r.beside.set_index("test").loc["A"]
    chat = raw / "qwen-3.6-35b-a3b" / "fp8" / "01-chat.md"
    assert a["decode_tps_total"] == float(_benchy_cells(chat, "tg1024 (c1)")[2].split("±")[0])
    assert a["ttfr_s"] * 1000 == pytest.approx(float(_benchy_cells(chat, "pp1024 (c1)")[6].split("±")[0]))
    mtp_table = next(t for t in load_published(DATA / "published.yml").tables if t.id == "mtp")
    assert a["published_output_tps"] == mtp_table.rows[0][1]  # "A: Output tok/s", the vanilla column
    assert r.beside["comparable"].str.startswith("not comparable: ").all()
    assert "prompts of 1,024 tokens against 512" in a["comparable"]


def test_the_write_up_s_runs_are_set_beside_only_on_its_setup(tmp_path):
    """On the write-up's own folder (tests A-D, no llama-benchy) and on a folder whose vanilla
    configuration is another model, the beside section is absent and says why."""
    r = gb10.analyse(DATA, DATA / "published.yml")
    assert not r.has("beside") and "llama-benchy" in r.missing("beside").text()
    from realdata import REAL, dgx

    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    other = dgx(STUDY, tmp_path, ("qwen-3.6-27b/fp8",), {"qwen-3.6-27b/fp8": "vanilla"})
    r = gb10.analyse(other, DATA / "published.yml")
    assert not r.has("beside") and "Qwen3.6-27B-FP8" in r.missing("beside").text()


def test_the_experts_read_per_token_is_a_claim_the_data_cannot_check():
    """Seed 004 explains test C by the kernel reading 8 experts per token; no file in the folder
    records the routing, so the ledger lists the claim as not derivable, saying why."""
    r = gb10.analyse(DATA, DATA / "published.yml")
    row = r.ledger.set_index("id").loc["experts-per-token"]
    assert (row["published"], row["verdict"]) == ("8", "not derivable") and "config.json" in row["note"]


def test_each_seed_s_run_is_its_own_serving_point(results):
    """Tests A-D of every configuration: each run (each seed) pairs its own 1 / median TPOT with
    its own output rate; a mean over seeds would pair rates no run measured together."""
    from benchbook.book.serving_points import conform_points

    p = conform_points(gb10.serving_points(results), STUDY)
    runs = results.data["runs"].set_index("name")
    assert (p["left_out"] == "").all() and len(p) == len(runs) and p["run"].is_unique
    for _, x in p.iterrows():
        run = runs.loc[x["run"]]
        assert x["per_user_tps"] == pytest.approx(1 / run["median_tpot_s"], rel=1e-12)
        assert (x["aggregate_tps"], x["concurrency"]) == (run["output_tps"], run["max_concurrency"])


def test_the_stall_gaps_and_the_acceptance_swing_carry_the_choices_they_rest_on():
    """Issue 34 / make marks: "24 gaps longer than half a second among 4,080" and the
    acceptance swing between the SpecDecoding lines explained a published P99 with values the
    generator chose, unmarked; the seed spread moved them."""
    from benchbook.chapters.gb10 import analysis as G

    r = G.analyse(ROOT / "data" / "gb10-mtp")
    g = G.glue_values(r)
    for key in ("b_long_van", "b_long_mtp", "b_share_mtp", "lines_rate_min", "lines_rate_max"):
        assert "seed_spread" in g.assumed.get(key, ()), key
    marks = G.long_gaps_display(r).attrs["benchbook_assumed"]
    assert all("seed_spread" in ids for ids in marks["gaps > 0.5 s"].values()) and len(marks["gaps > 0.5 s"]) == 4
    # the vanilla gaps' count follows the prompts and answer lengths only: no spread moves it
    assert "seed_spread" not in g.assumed.get("b_gaps_van", ())

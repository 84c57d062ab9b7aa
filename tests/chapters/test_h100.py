"""The H100 chapter's module (benchbook.chapters.h100.analysis) on its data folder, without running its
notebook (the book builds in test_build.py and test_real_data.py run it): the sweep numbers
its prose quotes come from the raw `vllm bench serve` files by role, stay right on a sweep at
other concurrencies, and its key figures carry each configuration's own facts."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml

from benchbook.book.key_figures import KEY_FIGURES, KEY_FIGURES_OPTIONAL, key_figure_row
from benchbook.chapters.h100 import analysis as h100
from benchbook.study.folder import write_checksums

ROOT = Path(__file__).parents[2]
DATA = ROOT / "data" / "h100-dense-vs-moe-mtp"
STRIX = ROOT / "data" / "strix-halo-baseline"


def analyse(data: Path = DATA, **kw):
    return h100.analyse(data, STRIX, data / "published.yml", **kw)


def raw_sweep(config: str, data: Path = DATA) -> dict[int, dict]:
    """concurrency -> the bench JSON of a configuration's sweep runs, read without benchbook."""
    files = yaml.safe_load((data / "study.yml").read_text(encoding="utf-8"))["files"]
    return {f["concurrency"]: json.loads((data / f["path"]).read_text(encoding="utf-8"))
            for f in files if f["config"] == config and f["kind"] == "sweep"}


def test_sweep_numbers_come_from_the_raw_runs_by_role():
    g = h100.glue_values(analyse())
    base, cand = raw_sweep("h100-dense"), raw_sweep("h100-moe-mtp")
    lo, hi = min(base), max(base)
    assert (g["base_lo_concurrency"], g["base_hi_concurrency"]) == (lo, hi)
    assert g["base_lo_output_tps"] == pytest.approx(base[lo]["output_throughput"], rel=1e-12)
    assert g["base_hi_p99_ttft_s"] == pytest.approx(base[hi]["p99_ttft_ms"] / 1000, rel=1e-12)
    assert g["base_scaling"] == pytest.approx(base[hi]["output_throughput"] / base[lo]["output_throughput"])
    assert g["cand_hi_p99_ttft_s"] == pytest.approx(cand[max(cand)]["p99_ttft_ms"] / 1000, rel=1e-12)
    top, one = cand[max(cand)], cand[min(cand)]
    assert g["cand_scaling"] == pytest.approx(top["output_throughput"] / one["output_throughput"])
    assert g["base_at_concurrency"] == min(base, key=lambda c: (abs(c - 16), c))  # nearest the 16 agents
    assert g["cand_uplift_lo"] == pytest.approx(cand[min(cand)]["output_throughput"] / base[lo]["output_throughput"])
    assert g["where"] == "on the same platform"
    assert g["sweep_input_len"] == "4,096" and g["sweep_output_len"] == "512"


def test_the_agents_parameter_moves_the_point_the_prose_quotes():
    base = raw_sweep("h100-dense")
    g = h100.glue_values(analyse(agents=5))
    assert g["base_at_concurrency"] == min(base, key=lambda c: (abs(c - 5), c)) == 4


def test_a_sweep_at_other_concurrencies_moves_the_roles_not_the_prose(tmp_path):
    """Without the dense model's one-client run its lowest point is the next one, and the
    uplift at one client (which needs both models at the same lowest point) is not glued."""
    data = tmp_path / "h100"
    shutil.copytree(DATA, data)
    study = yaml.safe_load((data / "study.yml").read_text(encoding="utf-8"))
    drop = [f for f in study["files"] if f["config"] == "h100-dense" and f["kind"] == "sweep"
            and f["concurrency"] == 1]
    assert len(drop) == 1
    study["files"].remove(drop[0])
    (data / drop[0]["path"]).unlink()
    (data / "study.yml").write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    write_checksums(data)
    base = raw_sweep("h100-dense", data)
    g = h100.glue_values(analyse(data))
    assert g["base_lo_concurrency"] == min(base) == 4
    assert g["base_lo_output_tps"] == pytest.approx(base[4]["output_throughput"], rel=1e-12)
    assert "cand_uplift_lo" not in g and "where" not in g
    assert g["cand_lo_concurrency"] == 1


def test_key_figures_carry_each_configuration_s_own_facts():
    frame = h100.key_figures(analyse())
    kf = frame.set_index("config")
    configs = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))["configs"]
    for cid, c in configs.items():
        row = kf.loc[cid]
        assert (row["platform"], row["model"], row["quantisation"]) == (c["platform"], c["model"], c["quantisation"])
        assert row["accelerators"] == 1 and row["kv_dtype"] == c["kv_dtype"]
    assert kf.loc["h100-dense", "speculative"] == "" and math.isnan(float(kf.loc["h100-dense", "acceptance_length"]))
    assert kf.loc["h100-moe-mtp", "speculative"] == configs["h100-moe-mtp"]["speculative"]
    assert float(kf.loc["h100-moe-mtp", "acceptance_length"]) > 1
    assert list(frame.columns[:len(KEY_FIGURES)]) == list(KEY_FIGURES)


def test_key_figure_row_lets_the_chapter_s_values_win_and_keeps_the_contract_order():
    c = {"platform": "p", "model": "m", "quantisation": "q", "accelerators": "4x GPU", "speculative": "None"}
    row = key_figure_row("s", "cfg", c, notes="n", best_aggregate_tps=3.0, extra=1, speculative="MTP")
    order = [k for k in [*KEY_FIGURES, *KEY_FIGURES_OPTIONAL] if k in row]
    assert list(row)[:len(order)] == order and list(row)[-1] == "extra"
    assert row["accelerators"] == 4 and row["speculative"] == "MTP" and row["best_aggregate_tps"] == 3.0
    assert math.isnan(row["cost_per_m"]) and row["currency"] == ""  # not measured: the contract's defaults
    assert key_figure_row("s", "cfg", c)["speculative"] == ""  # "None" in study.yml: no speculative decoding


# ---- request rate: the DGX Spark harness's rate sweeps of two models -------------------

DGX_FOLDERS = ("qwen-3.6-35b-a3b/fp8", "qwen-3.6-27b/fp8")


@pytest.fixture(scope="module")
def dgx_folder(tmp_path_factory):
    from realdata import REAL, dgx

    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    return dgx("h100-dense-vs-moe-mtp", tmp_path_factory.mktemp("dgx"), DGX_FOLDERS)


def _harness(folder: str) -> dict:
    from realdata import DGX

    return json.loads((DGX / folder / "11-rate-sweep.json").read_text(encoding="utf-8"))


def test_rate_section_shows_each_sweep_and_the_harness_s_capacity(dgx_folder):
    """`new` makes the 35B-A3B the baseline and the 27B the candidate (the order given); each
    has the six-step sweep plus the office baseline at 0.3 req/s in one workload, and the
    ShareGPT and reasoning runs as sweeps of their own. The capacity of the main sweep is the
    harness's own, limit by limit."""
    r = h100.analyse(dgx_folder, None, DATA / "published.yml")
    assert r.has("rate") and r.has("common-points")
    steps = r.rates.steps
    assert len(steps) == 18 and steps.groupby(["config", "workload"]).ngroups == 6
    cap = r.rates.capacity
    for cid, folder in ((r.baseline, DGX_FOLDERS[0]), (r.candidate, DGX_FOLDERS[1])):
        main = cap[(cap["config"] == cid) & (cap["steps"] == 7)].set_index("limit_s")
        for ms, theirs in _harness(folder)["capacity_by_slo_ms"].items():
            got = main.loc[int(ms) / 1000, "capacity_rps"]
            assert (got == theirs["configured_rps"]) if theirs else math.isnan(got), (folder, ms)
    shown = h100.rate_display(r)
    assert list(shown.columns[:3]) == ["configuration", "sweep (workload)", "offered req/s"]
    assert len(shown) == 18 and not shown["TTFT p50 / p95 / p99"].str.contains("unknown").any()
    g = h100.glue_values(r)
    assert (g["rate_steps"], g["rate_sweeps"], g["rate_configs"], g["rate_pairs"]) == (18, 6, 2, 18)
    assert g["rate_limits"] == "2, 5 and 10 s"


def test_the_limits_are_parameters(dgx_folder):
    r = h100.analyse(dgx_folder, None, DATA / "published.yml", ttft_limits_s=[4.0])
    cap = r.rates.capacity
    main = cap[(cap["config"] == r.baseline) & (cap["steps"] == 7)]
    assert list(main["limit_s"]) == [4.0]
    assert main["capacity_rps"].iloc[0] == 0.2  # p95 TTFT 3.48 s at 0.2 req/s, 4.40 s at 0.3
    assert h100.glue_values(r)["rate_limits"] == "4 s"


def test_baseline_and_candidate_meet_at_their_common_points(dgx_folder):
    """Every rate both ran with the same prompts is a row (the two runs at 0.3 req/s of the
    main workload, 100 and 200 prompts, are two rows), and the capped run at 25 clients too;
    each ratio is candidate ÷ baseline from the two raw files."""
    from realdata import DGX

    r = h100.analyse(dgx_folder, None, DATA / "published.yml")
    com = r.common
    per_point = com.drop_duplicates(["workload", "family", "point", "request_rate", "num_prompts"])
    assert (per_point["measured"] == "both").all() and len(per_point) == 10
    row = com[(com["point"] == 0.5) & (com["metric"] == "output_tps")].iloc[0]
    base, cand = (json.loads((DGX / f / "11-rate-sweep-0.5.json").read_text()) for f in DGX_FOLDERS)
    assert row["ratio"] == pytest.approx(cand["output_throughput"] / base["output_throughput"], rel=1e-12)
    shown = h100.common_display(r)
    assert len(shown) == 10 and shown["measured"].eq("both").all()
    assert h100.glue_values(r)["common_points"] == 10


def test_common_points_on_the_write_up_s_data_list_one_sided_runs():
    """The reconstructed folder has no rate runs (the section says so) but both sweeps ran at
    1-32 clients: five common points; the baseline's prefill and short-prompt runs have no
    counterpart and are listed as the baseline's alone."""
    r = analyse()
    assert not r.has("rate") and r.has("common-points")
    shown = h100.common_display(r)
    assert sorted(shown["measured"]) == ["baseline only"] * 2 + ["both"] * 5
    # a one-token prefill run has no decode step: its TPOT is not shown as vLLM's 0
    prefill = shown[shown["workload"].str.contains("→ 1 tokens")]
    assert len(prefill) == 1 and set(prefill[["TPOT p50", "TPOT p99"]].iloc[0]) == {"– (one output token)"}
    assert not shown.isin(["0.0 ms"]).any().any()
    g = h100.glue_values(r)
    assert (g["common_points"], g["common_one_sided"]) == (5, 2) and "rate_steps" not in g


# ---------------------------------------------------------------- measured data beside a reconstructed Strix folder


def _measured_copy(tmp_path: Path) -> Path:
    """This folder as a user's measured one: the same files, `reconstructed: false`. The rule
    that keeps a reconstructed folder apart follows the folders' own flags."""
    data = tmp_path / "h100-measured"
    shutil.copytree(DATA, data)
    study = yaml.safe_load((data / "study.yml").read_text(encoding="utf-8"))
    study["reconstructed"], study["label"] = False, "my H100 runs (measured)"
    (data / "study.yml").write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    write_checksums(data)
    return data


def test_measured_h100_data_keeps_the_reconstructed_strix_folder_apart(tmp_path):
    """The reverse of the Strix Halo page on real runs: every claim or key result that reads a
    Strix Halo value gets no verdict and no place, with a note naming both folders, and the
    Strix Halo columns of the comparison tables say whose numbers they are."""
    from benchbook.book.headlines import key_results
    from benchbook.ledger.expr import names_in
    from benchbook.page.report import kept_apart_note

    r = analyse(_measured_copy(tmp_path))
    why = r.kept_apart("strix_data_dir")
    assert why and "my H100 runs (measured)" in why and "tools.reconstruct.strix" in why
    ledger = r.ledger.set_index("id")
    on_strix = [c["id"] for c in r.published.claims if c.get("kind", "data") == "data" and c.get("recompute")
                and any(n.startswith("strix") for n in names_in(c["recompute"]))]
    assert {"dense-prefill-ratio", "moe-gen-ratio", "moe-serving-24x"} <= set(on_strix)
    assert all(ledger.loc[c, "verdict"] == "not comparable" and why in ledger.loc[c, "note"] for c in on_strix)
    assert not set(key_results(r)["claim"]) & set(on_strix)
    assert set(key_results(r)["claim"]) >= {"moe-uplift-315", "moe-ceiling-2200"}  # its own stay
    for caption, table in h100.against_strix(r):
        assert any("(the write-up's reconstructed data)" in str(c) for c in table.columns), caption
    assert any("the write-up's reconstructed data" in c for c in h100.serving_model(r).columns)
    assert "tools.reconstruct.strix" in kept_apart_note(r, "strix_data_dir").data
    # the write-up's two reconstructed folders together: compared as before
    both = analyse()
    assert both.kept_apart("strix_data_dir") is None and "moe-gen-ratio" in set(key_results(both)["claim"])


# ---- the book's page on measured DGX Spark runs (data/dgx-spark-dense-vs-moe, CC-BY-4.0)

DGX_PAGE = ROOT / "data" / "dgx-spark-dense-vs-moe"


def test_the_dgx_spark_page_s_numbers_are_its_raw_files():
    """Every number the page's rate, harness and energy sections show, against the raw files
    read here with json and csv only: the steps' output rates, the harness summaries' capacity,
    each run's output tokens; no section rests on a reconstructed folder."""
    import csv

    r = h100.analyse(DGX_PAGE, None, DATA / "published.yml")
    assert not r.comparable and r.strix is None and not r.assumed
    assert r.has("rate") and r.has("energy") and not r.has("strix")
    raw = DGX_PAGE / "raw"
    for _, step in r.rates.steps.iterrows():
        obj = json.loads((DGX_PAGE / step["source_file"]).read_text())
        assert step["output_tps"] == pytest.approx(obj["output_throughput"], rel=1e-12)
        assert step["request_rate"] == obj["request_rate"]
    checked = r.rates.harness
    assert len(checked) == 6 and set(checked["verdict"]) == {"agrees"}
    for _, row in checked.iterrows():
        summary = json.loads((DGX_PAGE / row["source_file"]).read_text())
        theirs = summary["capacity_by_slo_ms"][f"{row['limit_s'] * 1000:.0f}"]
        assert (row["harness_rps"] == theirs["configured_rps"]) if theirs else math.isnan(row["harness_rps"])
    e = r.energy
    assert len(e) == 20 and e["covered"].all()  # tests 07-11 of both models, the sweep's six steps each
    for _, row in e.iterrows():
        obj = json.loads((DGX_PAGE / row["source_file"]).read_text())
        assert row["output_tokens"] == obj["total_output_tokens"] and row["window_s"] == pytest.approx(obj["duration"])
        with open(DGX_PAGE / row["series_file"], newline="") as fh:
            watts = [float(x["power_w"]) for x in csv.DictReader(fh)]
        assert min(watts) <= row["mean_power_w"] <= max(watts)
    glued = h100.glue_values(r)
    assert glued["energy_runs"] == 20 and glued["harness_agree"] == glued["harness_checked"] == 6
    # llama-benchy's tests 01-06 of both models: one generation row per raw `| ... | tgN (cK) |` line
    tg_lines = sum(1 for p in raw.glob("*/fp8/0[1-6]-*.md") for ln in p.read_text(encoding="utf-8").splitlines()
                   if ln.startswith("|") and " tg" in ln.split("|")[2])
    assert glued["closed_points"] == tg_lines == int((r.closed["kind"] == "tg").sum()) > 0
    meta = {m: json.loads((raw / m / "fp8" / "meta.json").read_text()) for m in ("qwen-3.6-27b", "qwen-3.6-35b-a3b")}
    for cid in r.configs_in_order():
        c = r.config(cid)
        folder = "qwen-3.6-35b-a3b" if "35b" in cid else "qwen-3.6-27b"
        assert c["engine_version"] == meta[folder]["vllm_version_reported"] and c["model"] == meta[folder]["model"]


def test_no_single_stream_figure_comes_from_a_busier_run():
    """The DGX Spark runs have no concurrency-1 bench run: the key figures take one stream from
    llama-benchy's concurrency-1 tests (its generation rate, time to first response and prompt
    rate, read here from the markdown table) and never from the concurrency-25 run."""
    r = h100.analyse(DGX_PAGE, None, DATA / "published.yml")
    k = h100.key_figures(r)
    assert len(k) == 2 and k["best_aggregate_tps"].notna().all()
    assert k["decode_basis"].str.startswith("llama-benchy's generation rate, one request").all()
    assert not k["decode_basis"].str.contains("concurrency 25").any()
    for _, row in k.iterrows():
        folder = "qwen-3.6-35b-a3b" if "35b" in row["config"] else "qwen-3.6-27b"
        table = (DGX_PAGE / "raw" / folder / "fp8" / "01-chat.md").read_text(encoding="utf-8").splitlines()
        cells = {c[1]: c for c in ([x.strip() for x in ln.strip().strip("|").split("|")] for ln in table
                                   if ln.startswith("| qwen"))}
        assert row["single_stream_decode_tps"] == float(cells["tg1024 (c1)"][3].split("±")[0])
        assert row["ttft_s"] * 1000 == pytest.approx(float(cells["pp1024 (c1)"][6].split("±")[0]))
        assert row["prefill_tps"] == float(cells["pp1024 (c1)"][2].split("±")[0]) and row["ttft_input_tokens"] == 1024


def test_each_side_of_the_single_request_comparison_names_the_tool_that_measured_it():
    """The H100 rows come from `vllm bench serve` runs, the Strix Halo ones from llama-bench: no
    row calls the H100's prefill run a llama-bench test."""
    tables = h100.against_strix(analyse())
    assert len(tables) == 2
    for _, table in tables:
        for label in table["metric"]:
            if "rate" in label:
                assert "H100: vllm bench serve" in label and "Strix Halo: llama-bench" in label, label
                assert not label.split(";")[0].count("llama-bench"), label


def test_the_first_sweep_s_ten_tests_are_in_the_ledger_without_a_count_the_data_cannot_give():
    row = analyse().ledger.set_index("id").loc["first-sweep-ten-tests"]
    assert (row["published"], row["verdict"]) == ("10", "not derivable") and "ten" in row["note"]


def test_each_serving_point_pairs_one_raw_run_s_own_rates():
    """The cross-study chart's points: per user 1 / median TPOT and the aggregate of the same
    bench JSON, at its own concurrency; a single stream's decode rate is never set beside the
    best aggregate of the sweep. The prefill run (one output token) is left out, and says why."""
    from benchbook.book.serving_points import NO_DECODE, conform_points

    p = conform_points(h100.serving_points(analyse()), h100.STUDY)
    pts = p[p["left_out"] == ""]
    for config in ("h100-dense", "h100-moe-mtp"):
        raw = raw_sweep(config)
        mine = pts[(pts["config"] == config) & pts["run"].str.match(r"h100_\w+_c\d+$")].set_index("concurrency")
        assert sorted(mine.index) == sorted(raw)
        for c, js in raw.items():
            assert mine.loc[c, "per_user_tps"] == pytest.approx(1000 / js["median_tpot_ms"], rel=1e-9)
            assert mine.loc[c, "aggregate_tps"] == pytest.approx(js["output_throughput"], rel=1e-9)
            assert mine.loc[c, "per_device_tps"] == mine.loc[c, "aggregate_tps"]  # one H100
    one = pts[(pts["config"] == "h100-moe-mtp") & (pts["concurrency"] == 1)].iloc[0]
    assert one["aggregate_tps"] < one["per_user_tps"]  # its own run's, not the c=32 run's 2,229 t/s
    assert p.loc[p["left_out"] != "", ["run", "left_out"]].values.tolist() == [["h100_dense_prefill", NO_DECODE]]
    assert set(p["data_kind"]) == {"reconstructed"} and set(pts["study"]) == {h100.STUDY}


def test_the_dgx_spark_page_draws_its_closed_loop_tests_and_leaves_its_rate_runs_out():
    """On the real DGX Spark runs: llama-benchy's generation tests are points (per request and
    in total of one test); the open-loop request-rate runs and the paced run are left out."""
    from benchbook.book.serving_points import OPEN_LOOP, PACED, conform_points

    folder = ROOT / "data" / "dgx-spark-dense-vs-moe"
    r = h100.analyse(folder, None, DATA / "published.yml")
    p = conform_points(h100.serving_points(r), "dgx-spark-dense-vs-moe")
    pts = p[p["left_out"] == ""]
    tg = r.closed[r.closed["kind"] == "tg"]
    assert len(pts) == len(tg) and set(p["data_kind"]) == {"measured"}
    assert sorted(zip(pts["per_user_tps"], pts["aggregate_tps"])) == sorted(zip(tg["tps_req"], tg["tps_total"]))
    rate = r.runs[r.runs["kind"] == "rate"]
    assert (p["left_out"] == OPEN_LOOP).sum() == len(rate) > 0
    assert (p["left_out"] == PACED).sum() == len(r.runs) - len(rate) > 0  # capped, but paced at 1.5 requests/s

"""Request-rate sweeps (benchbook.analysis.rate_sweep) on real `vllm bench serve` files.

The DGX Spark harness (../shared/samples/real/dgx-spark-djangodevreng) swept five model and
precision folders at 0.1-1.0 req/s and wrote its own summary beside the steps,
`11-rate-sweep.json`, with the capacity by p95-TTFT limit. That summary is read here as plain
JSON, to check the module's numbers against the harness's own independently of the book's
reader for it (ingest.bench_spark), which `against_harness` uses. Where the module goes
beyond it (unknown percentiles, failed requests, repeats, workloads), the tests build the
case from real runs and say what they change.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbook.analysis import rate_sweep as rs
from realdata import REAL, needs_shared, read_runs

DGX = REAL / "dgx-spark-djangodevreng" / "results" / "qwen-3.6"
FOLDERS = ("qwen-3.6-27b/bf16", "qwen-3.6-27b/fp8", "qwen-3.6-35b-a3b/bf16", "qwen-3.6-35b-a3b/fp8",
           "qwen-3.6-35b-a3b/nvfp4")
ROOT = Path(__file__).parents[2]




def sweep_files(folder: str) -> list[Path]:
    return sorted((DGX / folder).glob("11-rate-sweep-*.json"))


@pytest.fixture(scope="module")
def dgx():
    runs, stats = read_runs({f: sweep_files(f) for f in FOLDERS})
    return rs.steps(runs, stats)


@needs_shared
@pytest.mark.parametrize("folder", FOLDERS)
def test_each_step_is_the_harness_s_own_step(dgx, folder):
    """Configured and achieved rate, completions, TTFT percentiles, output rate and peak in
    flight per step equal what the harness printed (it rounds to 0.1 ms and 0.001 req/s)."""
    theirs = json.loads((DGX / folder / "11-rate-sweep.json").read_text())["steps"]
    mine = dgx[dgx["config"] == folder].sort_values("request_rate")
    assert len(mine) == len(theirs) == 6
    for (_, step), h in zip(mine.iterrows(), theirs):
        assert step["request_rate"] == h["configured_rps"]
        assert round(step["achieved_rps"], 3) == pytest.approx(h["achieved_rps"], abs=1e-9)
        assert step["completed"] == h["completed"] and step["failed"] == 0
        for q in (50, 95, 99):
            assert step[f"ttft_p{q}_s"] * 1000 == pytest.approx(h[f"ttft_p{q}_ms"], abs=0.051)
        assert step["output_tps"] == pytest.approx(h["output_tps"], abs=0.051)
        assert step["peak_in_flight"] == h["peak_concurrent"]
        assert step["unknown"] == ""  # the harness asked for p50, p90, p95 and p99


@needs_shared
@pytest.mark.parametrize("folder", FOLDERS)
def test_capacity_by_p95_ttft_agrees_with_the_harness(dgx, folder):
    """For every limit the harness used (2, 5 and 10 s), the same step, or none."""
    theirs = json.loads((DGX / folder / "11-rate-sweep.json").read_text())["capacity_by_slo_ms"]
    cap = rs.capacity(dgx[dgx["config"] == folder], limits_s=(2, 5, 10)).set_index("limit_s")
    assert sorted(cap.index) == [2.0, 5.0, 10.0]
    for ms, h in theirs.items():
        row = cap.loc[int(ms) / 1000]
        if h is None:
            assert row["status"] == "not met at any step" and math.isnan(row["capacity_rps"])
            assert row["note"].startswith("lowest step 0.1 req/s: p95 TTFT")
        else:
            assert row["status"] == "met"
            assert row["capacity_rps"] == h["configured_rps"]
            assert round(row["achieved_rps"], 3) == pytest.approx(h["achieved_rps"])
            assert row["ttft_p95_s"] * 1000 == pytest.approx(h["ttft_p95_ms"], abs=0.051)
            assert row["ttft_p95_s"] <= int(ms) / 1000
            assert row["peak_in_flight"] == h["peak_concurrent"]


@needs_shared
def test_total_throughput_is_vllm_s_input_plus_output_over_duration(dgx):
    """The runs table keeps no total throughput; the module computes it as vLLM does, and it
    equals the file's own `total_token_throughput`."""
    step = dgx[dgx["config"] == "qwen-3.6-35b-a3b/fp8"].sort_values("request_rate").iloc[3]
    raw = json.loads((DGX / "qwen-3.6-35b-a3b/fp8/11-rate-sweep-0.5.json").read_text())
    assert step["total_tps"] == pytest.approx(raw["total_token_throughput"], rel=1e-12)
    assert step["achieved_rps"] == pytest.approx(raw["completed"] / raw["duration"], rel=1e-12)
    assert step["itl_p95_s"] == pytest.approx(raw["p95_itl_ms"] / 1000, rel=1e-12)
    assert step["tpot_p95_s"] == pytest.approx(raw["p95_tpot_ms"] / 1000, rel=1e-12)


@needs_shared
def test_one_sweep_per_workload_named_for_what_differs():
    """The harness's other open-loop tests of the same server (ShareGPT prompts, long
    reasoning answers at burstiness 1) are sweeps of their own; the office baseline (same
    random 4000/500 setting, 200 prompts) joins the sweep as a second run at 0.3 req/s."""
    folder = "qwen-3.6-35b-a3b/fp8"
    extra = [DGX / folder / f"{n}.json" for n in ("07-office-baseline", "08-sharegpt", "09-reasoning")]
    runs, stats = read_runs({folder: sweep_files(folder) + extra})
    st = rs.steps(runs, stats)
    by_name = st.set_index("name")
    main = by_name.loc["11-rate-sweep-0.1", "workload"]
    assert by_name.loc["07-office-baseline", "workload"] == main
    assert by_name.loc["08-sharegpt", "workload"] != main
    assert st["workload"].nunique() == 3
    names = dict(zip(by_name.index, by_name["sweep"]))
    assert names["11-rate-sweep-0.1"] == names["07-office-baseline"] == "4,058–4,202 → 485–492 tokens, burstiness 0.7"
    assert names["09-reasoning"].startswith("1,110 → 4,186 tokens") and names["09-reasoning"].endswith("burstiness 1")
    cap = rs.capacity(st, limits_s=(5,))
    at = cap[cap["workload"] == main].iloc[0]
    assert at["steps"] == 7 and at["capacity_rps"] == 0.3  # both runs at 0.3 req/s met 5 s
    assert sorted(at["run"].split(", ")) == ["07-office-baseline", "11-rate-sweep-0.3"]


def test_workloads_match_lengths_within_the_tolerance_and_nothing_else_loosely():
    pts = pd.DataFrame({"input_len": [4202, 4058, 3700, 4100, 4100, 4100], "output_len": [491, 492, 490, 490, 490, 490],
                        "dataset": [pd.NA, pd.NA, pd.NA, "random", pd.NA, pd.NA],
                        "ignore_eos": [pd.NA] * 6, "burstiness": [0.7, 0.7, 0.7, 0.7, 0.7, 1.0]})
    w = rs.workloads(pts).tolist()
    assert w[0] == w[1] == w[4]  # 3.5 % apart: one setting's means
    assert w[2] != w[0]  # 12 % below the first: another workload
    assert w[3] != w[0]  # a stated dataset never joins an unstated one
    assert w[5] != w[4]  # nor another burstiness


def _one_sweep(p95s, failed=None, p99s=None):
    """A sweep of one configuration at 0.1, 0.2, ... req/s with these p95 TTFTs."""
    n = len(p95s)
    return pd.DataFrame({
        "config": "x", "workload": 1, "sweep": "w", "family": rs.OPEN, "run_id": [f"r{i}" for i in range(n)],
        "name": [f"r{i}" for i in range(n)], "request_rate": [0.1 * (i + 1) for i in range(n)],
        "achieved_rps": [0.1 * (i + 1) for i in range(n)], "output_tps": 1.0, "peak_in_flight": 3,
        "failed": failed or [0] * n, "completed": 100, "duration_s": 100.0, "ttft_p95_s": p95s,
        "ttft_p50_s": [v / 2 if v == v else 0.5 for v in p95s], "ttft_p99_s": p99s or [v * 1.2 for v in p95s],
    })


def test_capacity_is_the_highest_step_met_and_says_what_bounds_it():
    cap = rs.capacity(_one_sweep([1.0, 3.0, 1.5, 8.0]), limits_s=(2,)).iloc[0]
    assert cap["capacity_rps"] == pytest.approx(0.3)  # the highest, though 0.2 missed it
    assert "next step 0.4 req/s: p95 TTFT 8.00 s" in cap["note"]
    assert "lower step(s) 0.2 req/s" in cap["note"]
    top = rs.capacity(_one_sweep([1.0, 1.5]), limits_s=(2,)).iloc[0]
    assert top["capacity_rps"] == pytest.approx(0.2) and "at least this" in top["note"]
    edge = rs.capacity(_one_sweep([2.0, 2.0000001]), limits_s=(2,)).iloc[0]
    assert edge["capacity_rps"] == pytest.approx(0.1)  # at the limit meets it (vLLM: s >= r)


def test_an_unknown_p95_is_unknown_unless_another_percentile_bounds_it():
    nan = math.nan
    # p99 under the limit bounds p95 under it; p50 over bounds it over; else unknown
    cap = rs.capacity(_one_sweep([nan, nan, nan], p99s=[1.0, 3.0, 9.0]), limits_s=(2,)).iloc[0]
    assert cap["status"] == "met" and cap["capacity_rps"] == pytest.approx(0.1)
    assert "p95 TTFT not in the file; p95 TTFT within the limit, since the p99 is 1.00 s" in cap["note"]
    assert "next step 0.2 req/s unknown" in cap["note"] and "(p50 500.0 ms, p99 3.00 s)" in cap["note"]
    none = rs.capacity(_one_sweep([nan], p99s=[3.0]), limits_s=(2,)).iloc[0]
    assert none["status"] == "unknown" and "no percentile the file gives decides it" in none["note"]
    over = rs.capacity(_one_sweep([nan, nan], p99s=[3.0, 9.0]), limits_s=(0.4,)).iloc[0]
    assert over["status"] == "not met at any step" and "since the p50 is 500.0 ms" in over["note"]


def test_failed_requests_count_as_never_answering():
    """Without per-request data a step with failures is unknown unless already over the
    limit; with it, the p95 is taken over every request with the failed ones at infinity."""
    # 2 of 102 failed: the p95 over all is the completed ones' p96.9, so their p99 bounds it
    met = rs.capacity(_one_sweep([1.0, 1.0, 3.0], failed=[0, 2, 0]), limits_s=(2,)).iloc[0]
    assert met["capacity_rps"] == pytest.approx(0.2)
    assert "2 request(s) failed, so the p95 over every request is the completed ones' p96.9" in met["note"]
    unsure = rs.capacity(_one_sweep([1.0, 1.0], failed=[0, 2], p99s=[1.2, 2.5]), limits_s=(2,)).iloc[0]
    assert unsure["capacity_rps"] == pytest.approx(0.1) and "next step 0.2 req/s unknown" in unsure["note"]
    lost = rs.capacity(_one_sweep([1.0, 1.0], failed=[0, 10]), limits_s=(2,)).iloc[0]
    assert "10 of 110 requests failed: more than the 5 %" in lost["note"]
    ok = pd.DataFrame({"ttft_s": np.arange(1, 21, dtype=float) / 10, "ok": [True] * 19 + [False]})
    assert rs.p95_counting_failures(ok, "ttft_s") == math.inf  # 1 of 20: the 95th percentile reaches it
    many = pd.DataFrame({"ttft_s": np.linspace(0.1, 1.0, 100), "ok": [True] * 99 + [False]})
    expected = np.percentile(np.concatenate([np.linspace(0.1, 1.0, 100)[:99], [1e9]]), 95)
    assert rs.p95_counting_failures(many, "ttft_s") == pytest.approx(expected)  # 1 of 100: it does not


def test_percentiles_come_from_per_request_data_when_the_file_reports_none():
    """The reconstructed H100 runs keep their per-request arrays and report no p95: TTFT and
    TPOT p95 are computed from them as vLLM does; ITL's single gaps are not kept, so its p95
    is unknown."""
    from benchbook.study.load import ingest_study

    data = ingest_study(ROOT / "data" / "h100-dense-vs-moe-mtp")
    pts = rs.points(data["runs"], data["run_stats"], data["requests"], loads=("single-stream", "concurrency"))
    row = pts[pts["name"] == "h100_moe_c16"].iloc[0]
    req = data["requests"]
    ttft = req.loc[(req["run_id"] == row["run_id"]) & req["ok"], "ttft_s"].to_numpy(float)
    assert row["ttft_p95_s"] == pytest.approx(np.percentile(ttft, 95), rel=1e-12)
    assert math.isnan(row["itl_p95_s"]) and "p95 ITL" in row["unknown"]
    assert "p95 TTFT" in row["computed"] and "p95 TTFT" not in row["unknown"]


def test_goodput_follows_vllm_every_objective_at_or_under_its_limit():
    req = pd.DataFrame({"run_id": "r0", "ok": [True, True, True, False], "ttft_s": [0.5, 1.0, 1.5, math.nan],
                        "tpot_s": [0.01, math.nan, 0.03, math.nan]})
    step = pd.Series({"run_id": "r0", "duration_s": 10.0})
    assert rs._goodput(step, {"ttft": 1.0}, req) == pytest.approx(0.2)  # 0.5 and 1.0 s; the failed one never
    # a one-token answer (no TPOT) counts as TPOT 0, as vLLM does for goodput
    assert rs._goodput(step, {"ttft": 2.0, "tpot": 0.02}, req) == pytest.approx(0.2)


def test_common_points_pair_like_with_like_only():
    """The reconstructed H100 sweeps at 1-32 concurrent requests: five common points; the
    prefill and short-prompt runs exist for the baseline only; a run with another number of
    prompts is not paired."""
    from benchbook.chapters.h100 import analysis as h100

    r = h100.analyse(ROOT / "data" / "h100-dense-vs-moe-mtp", None, ROOT / "data/h100-dense-vs-moe-mtp/published.yml")
    pts = rs.points(r.runs, r.data["run_stats"], r.data["requests"], loads=("single-stream", "concurrency"))
    com = rs.common_points(pts, "h100-dense", "h100-moe-mtp")
    per_point = com.drop_duplicates(list(rs.POINT_KEYS))
    both = per_point[per_point["measured"] == "both"]
    assert sorted(both["point"]) == [1, 4, 8, 16, 32]
    assert sorted(per_point.loc[per_point["measured"] != "both", "measured"]) == ["baseline only"] * 2
    out = com[(com["point"] == 16) & (com["metric"] == "output_tps")].iloc[0]
    tps = r.runs.set_index("name")["output_tps"]
    assert out["ratio"] == pytest.approx(tps["h100_moe_c16"] / tps["h100_dense_c16"])
    shifted = pts.copy()
    shifted.loc[shifted["name"] == "h100_moe_c16", "num_prompts"] = 99
    again = rs.common_points(shifted, "h100-dense", "h100-moe-mtp").drop_duplicates(list(rs.POINT_KEYS))
    assert sorted(again.loc[again["point"] == 16, "measured"]) == ["baseline only", "candidate only"]
    assert rs.common_glue(com) == {"common_points": 5, "common_one_sided": 2}


def test_a_request_rate_of_full_length_answers_rests_on_the_output_rate_and_length():
    """make marks: ten prompts per client more moved the H100 runs' counts and durations in step
    and never their ratio, which the published output rate and the 512-token answers fix; a run
    whose answers stop early (no --ignore-eos) rests on its count and duration."""
    runs = pd.DataFrame({"config": ["a", "b"], "run_id": ["a1", "b1"], "name": ["a1", "b1"], "concurrency": [4, 4],
                         "completed": [40, 40], "duration_s": [20.0, 10.0], "output_len": [512, 512],
                         "total_output_tokens": [40 * 512, 40 * 300], "output_tps": [1024.0, 1200.0],
                         "num_prompts": [40, 40], "load": "concurrency"})
    pts = rs.points(runs, None, None, loads=("concurrency",))
    assert list(pts["whole_answers"]) == [True, False]
    com = rs.common_points(pts, "a", "b").set_index("metric")
    assert com.loc["achieved_rps", "reads"] == rs.READS["achieved_rps"]  # one side stopped early
    alone = rs.common_points(pts.assign(config=["a", "a"], num_prompts=[40, 41]), "a", "b")
    assert {tuple(x) for x in alone.loc[alone["metric"] == "achieved_rps", "reads"]} == {
        ("output_tps", "output_len"), rs.READS["achieved_rps"]}


def test_a_tpot_limit_must_hold_too_as_goodput_asks_every_objective():
    sweep = _one_sweep([1.0, 1.5, 1.8]).assign(tpot_p95_s=[0.05, 0.2, 0.05], tpot_p50_s=0.01, tpot_p99_s=0.3)
    assert rs.capacity(sweep, limits_s=(2,)).iloc[0]["capacity_rps"] == pytest.approx(0.3)
    both = rs.capacity(sweep, limits_s=(2,), tpot_limit_s=0.1).iloc[0]
    assert both["capacity_rps"] == pytest.approx(0.3) and "lower step(s) 0.2 req/s" in both["note"]
    strict = rs.capacity(sweep, limits_s=(2,), tpot_limit_s=0.04).iloc[0]
    assert strict["status"] == "not met at any step" and "p95 TPOT 50.0 ms" in strict["note"]


def _harness_tables(folders: dict[str, Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The book's reader on each summary, with the configuration it belongs to."""
    from benchbook import ingest

    steps, caps = [], []
    for cfg, path in folders.items():
        res = ingest.read(path)
        steps.append(res.tables["harness_steps"].assign(config=cfg))
        caps.append(res.tables["harness_capacity"].assign(config=cfg))
    return pd.concat(steps, ignore_index=True), pd.concat(caps, ignore_index=True)


def _sweeps(folders) -> rs.RateSweeps:
    runs, stats = read_runs({f: sweep_files(f) for f in folders})
    return rs.analyse(runs, stats, None, {f: f for f in folders})


@needs_shared
def test_the_harness_s_summary_is_checked_against_the_steps():
    """against_harness: every limit of every summary, with the summary's own capacity (read
    here with json) beside the steps', all agreeing on these files."""
    sweeps = _sweeps(FOLDERS)
    steps, caps = _harness_tables({f: DGX / f / "11-rate-sweep.json" for f in FOLDERS})
    checked = rs.against_harness(sweeps, steps, caps)
    assert len(checked) == 3 * len(FOLDERS)
    for f in FOLDERS:
        theirs = json.loads((DGX / f / "11-rate-sweep.json").read_text())["capacity_by_slo_ms"]
        mine = checked[checked["config"] == f].set_index("limit_s")
        for ms, h in theirs.items():
            row = mine.loc[int(ms) / 1000]
            assert (row["harness_rps"] == h["configured_rps"]) if h else pd.isna(row["harness_rps"])
            assert row["verdict"] == "agrees" and row["harness_steps"] == row["steps"] == 6
    shown = rs.harness_display(sweeps, checked)
    assert set(shown["verdict"]) == {"agrees"} and "no step" in set(shown["the harness's summary says"])


@needs_shared
def test_a_summary_that_names_another_step_differs(tmp_path):
    """A summary edited to claim 0.5 req/s under 5 s for the FP8 35B-A3B (its steps give 0.3)
    is shown as differing, and the other limits still agree."""
    folder = "qwen-3.6-35b-a3b/fp8"
    doc = json.loads((DGX / folder / "11-rate-sweep.json").read_text())
    doc["capacity_by_slo_ms"]["5000"] = dict(doc["steps"][3])
    edited = tmp_path / "11-rate-sweep.json"
    edited.write_text(json.dumps(doc))
    sweeps = _sweeps([folder])
    checked = rs.against_harness(sweeps, *_harness_tables({folder: edited})).set_index("limit_s")
    assert checked.loc[5.0, "verdict"] == "differs" and checked.loc[5.0, "harness_rps"] == 0.5
    assert checked.loc[5.0, "capacity_rps"] == 0.3
    assert (checked.drop(index=5.0)["verdict"] == "agrees").all()


def test_no_summary_no_check():
    assert rs.against_harness(rs.RateSweeps(), pd.DataFrame(), pd.DataFrame()).empty

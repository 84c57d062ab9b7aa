"""The DGX Spark harness's own files (bench-spark): meta.json and the rate sweep's summary.

Every real file of ../shared/samples/real/dgx-spark-djangodevreng is read and checked against
the same file parsed here with the json module alone."""

from __future__ import annotations

import json

import pytest

from benchbook import ingest
from benchbook.ingest import IngestError, bench_spark
from files import assert_detect_picks_it_for_no_other_format, assert_sniffs_no_other_format, write
from realdata import DGX, needs_shared

META = sorted(DGX.glob("*/*/meta.json")) if DGX.is_dir() else []
SWEEPS = sorted(DGX.glob("*/*/11-rate-sweep.json")) if DGX.is_dir() else []


def _leaves(doc, prefix=""):
    out = {}
    for k, v in doc.items():
        out.update(_leaves(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


@needs_shared
@pytest.mark.parametrize("path", META, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_every_meta_json_value_is_one_row(path):
    res = ingest.read(path)
    assert res.format == "bench-spark-meta" and res.ignored == 0
    theirs = _leaves(json.loads(path.read_text(encoding="utf-8")))
    rows = dict(zip(res.tables["run_meta"]["key"], res.tables["run_meta"]["value"]))
    assert res.read == len(theirs) == len(rows)
    for key, value in theirs.items():
        assert rows[key] == ("" if value is None else str(value)), key


@needs_shared
@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_the_sweep_summary_steps_and_capacities_are_the_file_s(path):
    res = ingest.read(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    steps, cap = res.tables["harness_steps"], res.tables["harness_capacity"]
    assert res.format == "bench-spark-capacity" and res.read == len(doc["steps"]) + len(doc["capacity_by_slo_ms"])
    for (_, row), step in zip(steps.iterrows(), doc["steps"]):
        assert row["configured_rps"] == step["configured_rps"] and row["completed"] == step["completed"]
        assert row["ttft_p95_s"] == pytest.approx(step["ttft_p95_ms"] / 1000)
        assert row["peak_in_flight"] == step["peak_concurrent"]
    for ms, step in doc["capacity_by_slo_ms"].items():
        row = cap[cap["limit_s"] == int(ms) / 1000].iloc[0]
        assert bool(row["met"]) is (step is not None)
        if step:
            assert row["configured_rps"] == step["configured_rps"] and row["output_tps"] == step["output_tps"]


def test_it_claims_no_other_format(tmp_path):
    assert_sniffs_no_other_format(bench_spark, "bench-spark-meta")
    assert_detect_picks_it_for_no_other_format(bench_spark, "bench-spark-meta", tmp_path)


def test_a_bench_result_is_never_taken_for_the_harness_s_files():
    bench = '{"num_prompts": 10, "completed": 10, "server_config": {}, "vllm_version_reported": "x"}'
    assert not bench_spark.sniff(bench)


def test_a_value_that_is_not_a_number_is_ignored_with_its_key(tmp_path):
    path = write(tmp_path, "11-rate-sweep.json", json.dumps({
        "model": "m", "capacity_by_slo_ms": {"2000": None, "5000": {"configured_rps": "fast"}},
        "steps": [{"configured_rps": 0.1, "ttft_p95_ms": 900}, {"configured_rps": 0.2, "ttft_p95_ms": "n/a"}]}))
    res = ingest.read(path)
    assert res.read == 2 and res.ignored == 2
    assert "steps[1].ttft_p95_ms: 'n/a' is not a number" in res.reasons
    assert "capacity_by_slo_ms.5000.configured_rps: 'fast' is not a number" in res.reasons


def test_broken_json_names_the_line(tmp_path):
    path = write(tmp_path, "meta.json", '{"vllm_version_reported": "0.26.0",\n "server_config": {,}}')
    with pytest.raises(IngestError, match=r"line 2: not valid JSON"):
        ingest.read(path)


LOGS = sorted(DGX.glob("*/*/_runner.log")) if DGX.is_dir() else []


@needs_shared
@pytest.mark.parametrize("path", LOGS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_every_start_end_and_step_line_of_a_runner_log_is_an_event(path):
    res = ingest.read(path)
    ev = res.tables["harness_events"]
    lines = path.read_text(encoding="utf-8").splitlines()
    theirs = [(n, ln) for n, ln in enumerate(lines, 1) if "── START" in ln or "── END" in ln or "K: rate" in ln]
    assert res.format == "bench-spark-runner-log" and list(ev["line"]) == [n for n, _ in theirs]
    assert res.read + res.ignored == sum(1 for ln in lines if ln.strip())
    for (_, row), (_, ln) in zip(ev.iterrows(), theirs):
        assert ln.startswith(f"[{row['clock']}]")
        if row["event"] == "end":
            assert ln.endswith(f"({int(row['duration_s'])}s) ──")
    # seconds between a test's START and END are the duration its END line prints
    for test, g in ev[ev["event"].isin(["start", "end"])].groupby("test"):
        start, end = g.set_index("event").loc[["start", "end"], "elapsed_s"]
        assert end - start == g.loc[g["event"] == "end", "duration_s"].iloc[0], test
    assert ev["elapsed_s"].is_monotonic_increasing
    wrapped = any(a > b for a, b in zip(ev["clock"], ev["clock"][1:]))
    assert wrapped == any("midnight" in n for n in res.notes)


def test_a_runner_log_line_without_its_clock_is_ignored_with_a_reason(tmp_path):
    path = write(tmp_path, "_runner.log", "[23:59:50] === bench-spark run ===\n[23:59:55] ── START 01 ──\n"
                 "stray text\n[00:00:05] ── END 01 (15s) ──\n")
    res = ingest.read(path)
    ev = res.tables["harness_events"]
    assert list(ev["elapsed_s"]) == [5.0, 15.0] and res.reasons["line without the runner's [HH:MM:SS] clock"] == 1
    assert any("midnight 1 time" in n for n in res.notes)

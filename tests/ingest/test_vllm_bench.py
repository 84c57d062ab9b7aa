"""Tests for the `vllm bench serve --save-result` reader, on hand-made files.

Files are written the way vLLM writes them: `json.dump` on one line, keys in vLLM's order.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import benchbook.ingest as ingest
from benchbook.ingest import IngestError, vllm_bench

# ---------------------------------------------------------------- builders

INPUT_LENS = [100, 200, 150, 120]
OUTPUT_LENS = [5, 4, 0, 3]
TTFTS = [0.10, 0.25, 0.0, 0.40]
ITLS = [[0.02, 0.03, 0.02, 0.05], [0.04, 0.04, 0.06], [], [0.01, 0.09]]
START_TIMES = [1000.0, 1000.1, 1000.2, 1000.3]
ERRORS = ["", "", "Internal Server Error", ""]
OK = [True, True, False, True]


def header(**over) -> dict:
    """The leading keys of a 0.19 result, in vLLM's order."""
    d = {
        "date": "20260722-060114",
        "endpoint_type": "openai",
        "backend": "openai",
        "label": None,
        "model_id": "Qwen/Qwen3-8B",
        "tokenizer_id": "Qwen/Qwen3-8B",
        "num_prompts": 4,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 8,
        "duration": 2.0,
        "completed": 3,
        "failed": 1,
        "total_input_tokens": 420,  # successful requests only, as vLLM sums
        "total_output_tokens": 12,
        "request_throughput": 1.5,
        "request_goodput": None,
        "output_throughput": 6.0,
        "total_token_throughput": 216.0,
    }
    d.update(over)
    return d


def detailed(**over) -> dict:
    """The `--save-detailed` per-request lists (one failed request)."""
    d = {
        "input_lens": list(INPUT_LENS),
        "output_lens": list(OUTPUT_LENS),
        "ttfts": list(TTFTS),
        "itls": [list(x) for x in ITLS],
        "start_times": list(START_TIMES),
        "generated_texts": ["a", "b", "", "c"],
        "errors": list(ERRORS),
    }
    d.update(over)
    return d


def tail(**over) -> dict:
    """The trailing keys: peak counters then the percentile stats (ms)."""
    d = {
        "max_output_tokens_per_s": 8.0,
        "max_concurrent_requests": 4,
        "rtfx": 0.0,
        "mean_ttft_ms": 250.0,
        "median_ttft_ms": 260.0,  # deliberately not the computed 250 ms
        "std_ttft_ms": 122.5,
        "p99_ttft_ms": 397.0,
        "mean_tpot_ms": 42.0,
        "median_tpot_ms": 46.0,
        "std_tpot_ms": 8.2,
        "p99_tpot_ms": 49.9,
        "mean_itl_ms": 40.0,
        "median_itl_ms": 40.0,
        "std_itl_ms": 22.0,
        "p99_itl_ms": 89.0,
    }
    d.update(over)
    return d


def result_019(**over) -> dict:
    return {**header(), **detailed(), **tail(), **over}


def write(path, *objects) -> object:
    """json.dump each object on one line; several objects as `--append-result` does."""
    path.write_text("\n".join(json.dumps(o) for o in objects), encoding="utf-8")
    return path


def read(path, **kw):
    return vllm_bench.read(path, **kw)


# ---------------------------------------------------------------- detailed run


@pytest.fixture
def detailed_result(tmp_path):
    return read(write(tmp_path / "openai-infqps-concurrency8-Qwen3-8B-20260722-060114.json", result_019()))


def test_detailed_run_computes_metrics_from_successful_requests(detailed_result):
    run = detailed_result.tables["runs"].iloc[0]
    ok_ttft = np.array(TTFTS)[OK]
    assert run["run_id"] == "openai-infqps-concurrency8-Qwen3-8B-20260722-060114"
    assert run["format"] == "vllm-bench-serve"
    assert not run["summary_only"]
    # failed request (ttft 0.0) excluded: with it the median would be 0.175
    assert run["median_ttft_s"] == pytest.approx(0.25)
    assert run["median_ttft_s"] == pytest.approx(np.median(ok_ttft))
    assert run["p99_ttft_s"] == pytest.approx(np.percentile(ok_ttft, 99))
    assert run["mean_ttft_s"] == pytest.approx(0.25)
    itl_ok = np.concatenate([ITLS[i] for i in range(4) if OK[i]])
    assert run["median_itl_s"] == pytest.approx(np.median(itl_ok))
    assert run["p99_itl_s"] == pytest.approx(np.percentile(itl_ok, 99))
    e2el_ok = np.array([0.22, 0.39, 0.50])
    assert run["median_e2el_s"] == pytest.approx(0.39)
    assert run["p99_e2el_s"] == pytest.approx(np.percentile(e2el_ok, 99))
    tpot_ok = np.array([0.12 / 4, 0.14 / 3, 0.10 / 2])
    assert run["mean_tpot_s"] == pytest.approx(tpot_ok.mean())
    assert run["p99_tpot_s"] == pytest.approx(np.percentile(tpot_ok, 99))
    assert run["output_tps"] == pytest.approx(12 / 2.0)
    assert run["request_tps"] == pytest.approx(3 / 2.0)
    assert run["prefill_tps"] == pytest.approx(800.0)  # median(1000, 800, 300)
    assert run["total_input_tokens"] == 420  # failed request's 150 excluded
    assert run["total_output_tokens"] == 12
    assert (run["completed"], run["failed"], run["num_prompts"]) == (3, 1, 4)
    assert run["max_concurrency"] == 8
    assert math.isinf(run["request_rate"])
    assert run["duration_s"] == 2.0
    assert run["backend"] == "openai"
    assert run["model_id"] == "Qwen/Qwen3-8B"


def test_detailed_run_requests_table(detailed_result):
    req = detailed_result.tables["requests"]
    assert list(req["request_index"]) == [0, 1, 2, 3]
    assert list(req["ok"]) == OK
    assert req.loc[2, "error"] == "Internal Server Error"
    assert req.loc[2, "output_tokens"] == 0  # failed request kept
    assert list(req["n_chunks"]) == [4, 3, 0, 2]
    assert req.loc[0, "e2el_s"] == pytest.approx(0.22)
    assert req.loc[1, "tpot_s"] == pytest.approx((0.39 - 0.25) / (4 - 1))
    assert req.loc[3, "itl_mean_s"] == pytest.approx(0.05)
    assert req.loc[3, "itl_max_s"] == pytest.approx(0.09)
    assert req.loc[1, "start_s"] == pytest.approx(1000.1)
    assert detailed_result.read == 1 + 4
    assert detailed_result.ignored == 0


def test_detailed_run_stats_reported_and_computed(detailed_result):
    stats = detailed_result.tables["run_stats"].set_index(["origin", "metric", "stat"])["value_s"]
    assert stats[("reported", "ttft", "median")] == pytest.approx(0.260)
    assert stats[("computed", "ttft", "median")] == pytest.approx(0.250)
    assert stats[("reported", "ttft", "std")] == pytest.approx(0.1225)
    assert ("computed", "e2el", "p99") in stats.index
    assert len(stats.xs("reported")) == 12
    assert len(stats.xs("computed")) == 12


# ---------------------------------------------------------------- summary-only


def test_summary_only_run_uses_reported_values(tmp_path):
    obj = {**header(), **tail(), "mean_e2el_ms": 900.0, "median_e2el_ms": 850.0,
           "std_e2el_ms": 10.0, "p99_e2el_ms": 1500.0, "p99.9_e2el_ms": 5123.0, "p50_itl_ms": 38.0}
    res = read(write(tmp_path / "summary.json", obj))
    run = res.tables["runs"].iloc[0]
    assert run["summary_only"]
    assert run["median_ttft_s"] == pytest.approx(0.260)
    assert run["p99_itl_s"] == pytest.approx(0.089)
    assert run["p99_e2el_s"] == pytest.approx(1.5)
    assert run["output_tps"] == 6.0
    assert run["request_tps"] == 1.5
    assert run["total_output_tokens"] == 12
    assert math.isnan(run["prefill_tps"])
    assert len(res.tables["requests"]) == 0
    stats = res.tables["run_stats"]
    assert set(stats["origin"]) == {"reported"}
    assert len(stats) == 12 + 4 + 2
    row = stats[(stats["metric"] == "e2el") & (stats["stat"] == "p99.9")]
    assert row["value_s"].tolist() == [pytest.approx(5.123)]
    row = stats[(stats["metric"] == "itl") & (stats["stat"] == "p50")]
    assert row["value_s"].tolist() == [pytest.approx(0.038)]
    assert res.read == 1


# ---------------------------------------------------------------- schema history


def test_old_benchmark_serving_format(tmp_path):
    obj = {"date": "20250101-120000", "backend": "vllm", "model_id": "m", "tokenizer_id": "m",
           "num_prompts": 4, "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": None,
           "duration": 4.0, "completed": 3, "total_input_tokens": 420, "total_output_tokens": 12,
           "request_throughput": 0.75, "request_goodput:": None, "output_throughput": 3.0,
           "total_token_throughput": 108.0, **detailed(), **tail()}
    del obj["start_times"]
    res = read(write(tmp_path / "old.json", obj))
    run = res.tables["runs"].iloc[0]
    assert run["format"] == "vllm-bench-serve"
    assert run["backend"] == "vllm"
    assert run["failed"] == 1  # num_prompts - completed
    assert pd.isna(run["label"])
    assert run["request_rate"] == 2.0
    assert run["output_tps"] == pytest.approx(12 / 4.0)
    assert not run["summary_only"]
    assert list(res.tables["requests"]["ok"]) == OK
    assert res.tables["requests"]["start_s"].isna().all()


def test_092_endpoint_type_without_backend(tmp_path):
    obj = {**header(label="my-label", endpoint_type="openai-chat"), **tail()}
    del obj["backend"], obj["failed"]
    run = read(write(tmp_path / "v092.json", obj)).tables["runs"].iloc[0]
    assert run["backend"] == "openai-chat"
    assert run["label"] == "my-label"
    assert run["failed"] == 1


def test_append_result_two_objects(tmp_path):
    path = write(tmp_path / "sweep.json", result_019(), {**header(duration=4.0), **tail()})
    res = read(path)
    runs = res.tables["runs"]
    assert list(runs["run_id"]) == ["sweep#1", "sweep#2"]
    assert list(runs["summary_only"]) == [False, True]
    assert set(res.tables["requests"]["run_id"]) == {"sweep#1"}
    assert res.read == 2 + 4


def test_run_prefix_overrides_stem(tmp_path):
    res = read(write(tmp_path / "x.json", result_019()), run_prefix="h100-tp1")
    assert res.tables["runs"]["run_id"].tolist() == ["h100-tp1"]
    assert set(res.tables["requests"]["run_id"]) == {"h100-tp1"}


def test_spec_decode_block(tmp_path):
    spec = {"spec_decode_acceptance_rate": 72.03703703703704, "spec_decode_acceptance_length": 3.161111111111111,
            "spec_decode_num_drafts": 1260, "spec_decode_draft_tokens": 3780, "spec_decode_accepted_tokens": 2723,
            "spec_decode_per_position_acceptance_rates": [0.85, 0.7166666666666667, 0.5944444444444444]}
    obj = {**header(), "max_output_tokens_per_s": 8.0, **spec, **tail()}
    res = read(write(tmp_path / "mtp.json", obj))
    run = res.tables["runs"].iloc[0]
    assert run["spec_acceptance_rate"] == pytest.approx(0.7203703703703704)
    assert run["spec_acceptance_length"] == pytest.approx(3.161111111111111)
    assert (run["spec_num_drafts"], run["spec_draft_tokens"], run["spec_accepted_tokens"]) == (1260, 3780, 2723)
    stats = res.tables["run_stats"]
    pos = stats[stats["metric"].str.startswith("spec_accept_pos")]
    assert pos["metric"].tolist() == ["spec_accept_pos0", "spec_accept_pos1", "spec_accept_pos2"]
    assert set(pos["stat"]) == {"rate"}
    assert pos["value_s"].tolist() == pytest.approx([0.85, 0.7166666666666667, 0.5944444444444444])


def test_no_spec_block_gives_missing_values(detailed_result):
    run = detailed_result.tables["runs"].iloc[0]
    assert math.isnan(run["spec_acceptance_rate"])
    assert pd.isna(run["spec_num_drafts"])


# ---------------------------------------------------------------- file shapes


def test_gzip_file(tmp_path):
    path = tmp_path / "run.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(result_019(), fh)
    res = read(path)
    assert res.tables["runs"]["run_id"].tolist() == ["run"]
    assert res.tables["runs"]["median_ttft_s"].tolist() == [pytest.approx(0.25)]
    assert len(res.tables["requests"]) == 4


def test_indented_sweep_output(tmp_path):
    path = tmp_path / "run=0.json"
    path.write_text(json.dumps({**header(), **tail(), "run_number": 0}, indent=4), encoding="utf-8")
    res = read(path)
    assert res.tables["runs"]["run_id"].tolist() == ["run=0"]
    assert res.tables["runs"]["median_tpot_s"].tolist() == [pytest.approx(0.046)]


# ---------------------------------------------------------------- errors and bad values


def test_truncated_json_names_file_and_line(tmp_path):
    path = tmp_path / "cut.json"
    text = json.dumps(result_019(), indent=1)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(IngestError) as err:
        read(path)
    msg = str(err.value)
    assert "cut.json" in msg
    assert "line " in msg and "column" in msg
    assert "vllm bench serve --save-result" in msg


def test_not_an_object_or_missing_core_keys(tmp_path):
    with pytest.raises(IngestError, match="expected a `vllm bench serve"):
        read(write(tmp_path / "list.json", [1, 2]))
    obj = header()
    del obj["completed"], obj["duration"]
    with pytest.raises(IngestError, match="'completed'.*'duration'"):
        read(write(tmp_path / "nokeys.json", obj))


def test_unequal_array_lengths_name_the_key(tmp_path):
    obj = result_019(ttfts=TTFTS[:3])
    with pytest.raises(IngestError) as err:
        read(write(tmp_path / "short.json", obj))
    msg = str(err.value)
    assert "'ttfts'" in msg
    assert "has 3 entries; expected 4" in msg


def test_negative_reported_value_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="'p99_ttft_ms'.*negative"):
        read(write(tmp_path / "neg.json", {**header(), **tail(p99_ttft_ms=-3.0)}))


def test_negative_ttft_is_flagged_and_counted(tmp_path):
    ttfts = list(TTFTS)
    ttfts[1] = -0.2
    res = read(write(tmp_path / "bad.json", result_019(ttfts=ttfts)))
    req = res.tables["requests"]
    assert list(req["ok"]) == [True, False, False, True]
    assert req.loc[1, "error"] == "ttft negative (-0.2 s)"
    assert res.ignored == 1
    assert res.reasons["request excluded from metrics: ttft negative"] == 1
    assert res.read == 1 + 4
    run = res.tables["runs"].iloc[0]
    assert run["median_ttft_s"] == pytest.approx(np.median([0.10, 0.40]))
    assert run["total_output_tokens"] == 5 + 3


def test_nan_itl_is_flagged(tmp_path):
    itls = [list(x) for x in ITLS]
    itls[0][1] = float("nan")  # json.dump writes NaN
    res = read(write(tmp_path / "nan.json", result_019(itls=itls)))
    assert list(res.tables["requests"]["ok"]) == [False, True, False, True]
    assert res.tables["requests"].loc[0, "error"] == "itl not a number"
    assert res.reasons["request excluded from metrics: itl not a number"] == 1


# ---------------------------------------------------------------- detection


def test_sniff_accepts_bench_serve_json():
    assert vllm_bench.sniff(json.dumps(result_019())[:8192], None)
    assert vllm_bench.sniff(json.dumps({**header(), **tail()}, indent=4), None)


def test_sniff_rejects_llama_bench_and_bench_throughput():
    llama = ('[\n  {\n    "build_commit": "0253fb21f",\n    "build_number": 9187,\n'
             '    "n_prompt": 512,\n    "n_gen": 0,\n    "avg_ts": 1234.5\n  }\n]\n')
    assert not vllm_bench.sniff(llama, None)
    throughput = json.dumps({"elapsed_time": 81.2, "num_requests": 1000, "total_num_tokens": 1200000,
                             "requests_per_second": 12.3, "tokens_per_second": 14777.6})
    assert not vllm_bench.sniff(throughput, None)


def test_detect_picks_this_reader(tmp_path, monkeypatch):
    if importlib.util.find_spec("benchbook.ingest.llama_bench") is None:
        # the sibling reader is written separately; detect() must still pick this one
        monkeypatch.setattr(ingest, "_READER_MODULES", ("vllm_bench",))
    path = write(tmp_path / "detect.json", result_019())
    assert ingest.detect(path) is vllm_bench
    assert ingest.read(path).format == "vllm-bench-serve"


# ---------------------------------------------------------------- several runs, their own settings

REAL = Path(__file__).resolve().parents[3] / "shared" / "samples" / "real" / "vllm-bench-serve"
NERDALERT = REAL / "nerdalert_results.jsonl"


def test_keys_no_column_holds_go_to_extra_in_file_order(tmp_path):
    obj = {**header(), "deployment": "kvcache", "gpu": "4xL40S", "replicas": 4, "flag": True,
           "note": None, **tail(), "shape": {"a": 1}}
    run = read(write(tmp_path / "x.json", obj)).tables["runs"].iloc[0]
    extra = json.loads(run["extra"])
    assert list(extra.items()) == [
        ("endpoint_type", "openai"),  # kept: `backend` names the client here (see test_092_...)
        ("tokenizer_id", "Qwen/Qwen3-8B"), ("request_goodput", None),
        ("total_token_throughput", 216.0), ("deployment", "kvcache"), ("gpu", "4xL40S"), ("replicas", 4),
        ("flag", True), ("note", None), ("max_output_tokens_per_s", 8.0),
        ("rtfx", 0.0), ("shape", "<object of 1, not kept>")]
    assert (run["burstiness"], run["peak_in_flight"]) == (1.0, 4)  # columns of their own
    assert '"gpu":"4xL40S","replicas":4' in run["extra"]  # compact
    v092 = {k: v for k, v in obj.items() if k != "backend"}
    assert "endpoint_type" not in json.loads(read(write(tmp_path / "y.json", v092)).tables["runs"]["extra"][0])
    only = {k: v for k, v in {**header(), **tail()}.items() if k not in ("tokenizer_id", "burstiness",
            "request_goodput", "total_token_throughput", "endpoint_type", "max_output_tokens_per_s",
            "max_concurrent_requests", "rtfx")}
    assert pd.isna(read(write(tmp_path / "z.json", only)).tables["runs"]["extra"][0])


def test_extra_text_is_redacted(tmp_path):
    obj = {**header(), "server": "http://10.1.2.3:8000/v1", **tail()}
    extra = json.loads(read(write(tmp_path / "x.json", obj)).tables["runs"]["extra"][0])
    assert extra["server"] == "http://[private-ip]/v1"


def test_run_ids_come_from_position_not_from_labels(tmp_path):
    """Two objects with the same label (or name) are two runs; ids are stable."""
    objs = [{**header(label="sweep", request_rate=r), "run_name": "same", **tail()} for r in (1.0, 2.0, 1.0)]
    path = write(tmp_path / "labels.json", *objs)
    first, again = read(path).tables["runs"], read(path).tables["runs"]
    assert list(first["run_id"]) == ["labels#1", "labels#2", "labels#3"] == list(again["run_id"])
    assert list(first["label"]) == ["sweep"] * 3 and list(first["request_rate"]) == [1.0, 2.0, 1.0]
    assert [json.loads(e)["run_name"] for e in first["extra"]] == ["same"] * 3


def nerdalert_objects() -> list[dict]:
    if not NERDALERT.is_file():
        pytest.skip(f"real samples not present at {REAL}")
    return [json.loads(line) for line in NERDALERT.read_text().splitlines() if line.strip()]


def test_real_multi_run_jsonl_keeps_each_runs_settings():
    """nerdalert: 9 `benchmark_serving.py --save-result` objects, one per line."""
    objs = nerdalert_objects()
    res = ingest.read(NERDALERT)
    runs = res.tables["runs"]
    assert len(objs) == len(runs) == res.read == 9 and res.ignored == 0
    assert list(runs["run_id"]) == [f"nerdalert_results#{k}" for k in range(1, 10)]
    assert runs["run_id"].is_unique and list(ingest.read(NERDALERT).tables["runs"]["run_id"]) == list(runs["run_id"])
    assert list(runs["request_rate"]) == [float(o["request_rate"]) for o in objs]  # "inf" -> inf
    assert [None if pd.isna(v) else v for v in runs["max_concurrency"]] == [o["max_concurrency"] for o in objs]
    for key in ("model_id", "date", "label", "backend"):
        assert [None if pd.isna(v) else v for v in runs[key]] == [o.get(key) for o in objs], key
    assert list(runs["num_prompts"]) == [o["num_prompts"] for o in objs]
    assert list(runs["duration_s"]) == [o["duration"] for o in objs]
    for obj, extra in zip(objs, runs["extra"]):  # the script's own keys, line by line
        held = json.loads(extra)
        assert held["deployment"] == obj["deployment"] and held["gpu"] == obj["gpu"]
        unknown = {k: v for k, v in obj.items() if k not in vllm_bench._HELD and not vllm_bench._STAT_KEY.match(k)}
        assert held == unknown
    assert len({e for e in runs["extra"]}) == 9  # every run's own values, not the first line's
    stats = res.tables["run_stats"]
    p99 = stats[(stats["metric"] == "ttft") & (stats["stat"] == "p99")].set_index("run_id")["value_s"]
    assert list(p99[runs["run_id"]]) == pytest.approx([o["p99_ttft_ms"] / 1000 for o in objs])


@pytest.mark.parametrize(("fields", "load"), [
    ({"max_concurrency": 1, "request_rate": "inf"}, "single-stream"),
    ({"max_concurrency": 16, "request_rate": "inf"}, "concurrency"),
    ({"max_concurrency": 16, "request_rate": 2.0}, "concurrency"),  # the cap binds: still closed loop
    ({"max_concurrency": None, "request_rate": 0.5}, "request-rate"),
    ({"max_concurrency": None, "request_rate": "inf"}, "all-at-once"),
    ({"request_rate": 0.5}, "unknown"),  # an old client wrote no max_concurrency key: not known to be uncapped
])
def test_the_load_pattern_is_read_from_the_file_s_own_fields(tmp_path, fields, load):
    obj = {k: v for k, v in {**header(), **tail()}.items() if k not in ("max_concurrency", "request_rate")}
    run = read(write(tmp_path / "x.json", {**obj, **fields})).tables["runs"].iloc[0]
    assert run["load"] == load

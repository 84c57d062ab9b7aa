"""Serving points: both rates from one run at one concurrency, or left out with the reason;
a file that pairs rates of two runs is refused."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchbook.book import serving_points as sp
from benchbook.study.marks import MARKS, Cells

CONFIG = {"platform": "H100", "model": "Qwen/Qwen3.6-27B-FP8", "quantisation": "FP8",
          "accelerators": "2x NVIDIA H100"}


def run(name, conc, tpot, tps, *, load=None, rate=math.inf, out=512, completed=10):
    return dict(name=name, run_id=name, config="dense", kind="sweep", load=load or ("single-stream" if conc == 1
                else "concurrency"), max_concurrency=conc, request_rate=rate, median_tpot_s=tpot, output_tps=tps,
                output_len=out, input_len=1024, completed=completed)


def points(runs, cells=None):
    df = pd.DataFrame(runs)
    rows = sp.bench_points("s", df, cells or Cells(), {"dense": CONFIG}, labels={}, anchor="a", kind="measured")
    return sp.conform_points(sp.points_table(rows, {}), "s")


def test_each_point_pairs_the_rates_of_its_own_run():
    # a single stream that decodes fast, and a busy run with a high aggregate: each point keeps its own
    p = points([run("c1", 1, 0.01, 90.0), run("c32", 32, 0.05, 600.0)]).set_index("run")
    assert p.loc["c1", "per_user_tps"] == pytest.approx(100.0) and p.loc["c1", "aggregate_tps"] == 90.0
    assert p.loc["c32", "per_user_tps"] == pytest.approx(20.0) and p.loc["c32", "aggregate_tps"] == 600.0
    assert list(p["concurrency"]) == [1, 32] and list(p["load"]) == ["single-stream", "concurrency"]
    assert list(p["per_device_tps"]) == [45.0, 300.0]  # two devices
    assert (p["left_out"] == "").all()


def test_runs_without_a_fixed_number_in_flight_or_without_decode_are_left_out_with_why():
    p = points([run("open", None, 0.02, 50.0, load="request-rate", rate=0.5),
                run("paced", 25, 0.02, 50.0, rate=1.5),
                run("prefill", 1, math.nan, 1.0, out=1),
                run("none", 4, 0.02, 50.0, completed=0),
                run("old", 4, 0.02, 50.0, load="unknown")]).set_index("run")
    assert p["left_out"].to_dict() == {"open": sp.OPEN_LOOP, "paced": sp.PACED, "prefill": sp.NO_DECODE,
                                       "none": sp.NONE_COMPLETED, "old": sp.UNKNOWN_LOAD}
    assert p["per_user_tps"].isna().all()


def test_a_single_stream_rate_beside_a_busier_run_s_aggregate_is_refused():
    good = points([run("c1", 1, 0.01, 90.0)])
    mixed = good.copy()
    mixed.loc[0, ["aggregate_tps", "per_device_tps"]] = [2229.0, 2229.0 / 2]  # c=1 decode, best aggregate of c=32
    with pytest.raises(ValueError, match="not from one measurement"):
        sp.conform_points(mixed, "h100")


@pytest.mark.parametrize("change, message", [
    ({"per_device_tps": 90.0}, "is not aggregate_tps"),
    ({"concurrency": 2.5}, "whole number"),
    ({"load": "request-rate"}, "closed loop"),
    ({"load": "concurrency"}, "closed loop"),  # a single stream's concurrency of 1 called a busier load
    ({"data_kind": "real-ish"}, "data_kind"),
    ({"per_user_tps": -1.0}, "positive"),
])
def test_a_wrong_point_is_an_error_naming_chapter_and_row(change, message):
    bad = points([run("c1", 1, 0.01, 90.0)])
    for k, v in change.items():
        bad[k] = bad[k].astype(object)
        bad.loc[0, k] = v
    with pytest.raises(ValueError, match=rf"h100: serving_points row 0 \(dense, c1\).*{message}"):
        sp.conform_points(bad, "h100")


def test_a_table_without_a_column_is_an_error_naming_it():
    with pytest.raises(ValueError, match="lacks column.*per_user_tps"):
        sp.conform_points(points([run("c1", 1, 0.01, 90.0)]).drop(columns="per_user_tps"), "x")


def test_llama_bench_generation_is_one_stream_prefill_and_mixed_tests_are_left_out():
    lb = pd.DataFrame([
        dict(config="dense", source_file="a.jsonl", test_name="tg128", n_prompt=0, n_gen=128, n_depth=0, avg_ts=50.0),
        dict(config="dense", source_file="a.jsonl", test_name="pp512", n_prompt=512, n_gen=0, n_depth=0, avg_ts=900.0),
        dict(config="dense", source_file="a.jsonl", test_name="pp512+tg128", n_prompt=512, n_gen=128, n_depth=0,
             avg_ts=40.0)])
    rows = sp.llama_bench_points("s", lb, Cells(), {"dense": CONFIG}, labels={}, anchor="a", kind="reconstructed")
    p = sp.conform_points(sp.points_table(rows, {}), "s")
    assert list(p["left_out"]) == ["", sp.NO_DECODE, sp.MIXED_TEST]
    one = p.iloc[0]
    assert (one["concurrency"], one["per_user_tps"], one["aggregate_tps"], one["per_device_tps"]) == (1, 50, 50, 25)


def test_llama_benchy_pairs_per_request_and_total_of_one_test_and_its_prefill_rows_are_not_points():
    closed = pd.DataFrame([
        dict(config="dense", source_file="f.md", test="pp1024 (c5)", kind="pp", prompt_tokens=1024, gen_tokens=256,
             depth=0, concurrency=5, tps_total=3000.0, tps_req=700.0),
        dict(config="dense", source_file="f.md", test="tg256 (c5)", kind="tg", prompt_tokens=1024, gen_tokens=256,
             depth=4096, concurrency=5, tps_total=100.0, tps_req=21.0)])
    rows = sp.benchy_points("s", closed, {"dense": {**CONFIG, "accelerators": "1x GB10"}}, labels={}, anchor="a",
                            kind="measured")
    p = sp.conform_points(sp.points_table(rows, {}), "s")
    assert len(p) == 1
    assert (p.at[0, "per_user_tps"], p.at[0, "aggregate_tps"], p.at[0, "concurrency"]) == (21.0, 100.0, 5)
    assert p.at[0, "input_tokens"] == 1024 + 4096 and "4,096 tokens of context" in p.at[0, "run"]


def test_a_generator_s_choice_marks_only_the_rate_read_from_it():
    runs = pd.DataFrame([run("c4", 4, 0.02, 150.0)])
    ids = pd.DataFrame({"median_tpot_s": [("tpot-shape",)], "output_tps": [()]}, index=runs.index)
    rows = sp.bench_points("s", runs, Cells(ids, {"tpot-shape": "why"}), {"dense": CONFIG}, labels={}, anchor="a",
                           kind="reconstructed")
    p = sp.points_table(rows, {"tpot-shape": "why"})
    assert p.attrs[MARKS] == {"per_user_tps": {0: ["tpot-shape"]}}

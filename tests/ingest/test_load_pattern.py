"""benchbook.ingest.load_pattern: one answer to 'how did this run send its requests?'."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchbook.ingest import load_pattern as lp


@pytest.mark.parametrize(("cap", "rate", "recorded", "want"), [
    (1, math.inf, True, lp.SINGLE), (1, 0.5, True, lp.SINGLE),
    (16, math.inf, True, lp.CONCURRENCY), (16, 2.0, True, lp.CONCURRENCY),
    (None, 0.5, True, lp.RATE), (pd.NA, 0.5, True, lp.RATE), (None, math.inf, True, lp.ALL_AT_ONCE),
    (None, 0.5, False, lp.UNKNOWN), (None, None, True, lp.UNKNOWN), (float("nan"), float("nan"), True, lp.UNKNOWN),
])
def test_pattern_from_a_bench_result_s_fields(cap, rate, recorded, want):
    assert lp.pattern(cap, rate, cap_recorded=recorded) == want


@pytest.mark.parametrize(("context", "want"), [
    ({"concurrency": 1}, lp.SINGLE), ({"concurrency": 8}, lp.CONCURRENCY),
    ({"request_rate": 2}, lp.RATE), ({"request_rate": float("inf")}, lp.ALL_AT_ONCE), ({}, lp.UNKNOWN),
    ({"concurrency": 4, "request_rate": 2}, lp.CONCURRENCY),  # a cap binds whatever the rate
])
def test_pattern_a_study_yml_entry_states(context, want):
    assert lp.of_context(context) == want


def test_a_hand_set_concurrency_contradicting_an_open_loop_file_is_a_conflict():
    assert "no concurrency cap" in lp.conflict(lp.RATE, {"concurrency": 1})
    assert "every prompt sent at once" in lp.conflict(lp.ALL_AT_ONCE, {"concurrency": 16})
    assert "its load is set by the cap" in lp.conflict(lp.CONCURRENCY, {"request_rate": 2})
    assert lp.conflict(lp.RATE, {"request_rate": 2}) is None
    assert lp.conflict(lp.UNKNOWN, {"concurrency": 1}) is None  # the file does not say: the user's word
    assert lp.conflict(lp.CONCURRENCY, {}) is None


def test_the_pattern_in_words_says_what_the_file_records_and_nothing_else():
    row = {"load": lp.RATE, "request_rate": 0.5, "burstiness": 0.7, "peak_in_flight": 66}
    assert lp.text(row) == "open loop at 0.5 req/s (burstiness 0.7), up to 66 in flight"
    assert lp.text({**row, "burstiness": 1.0, "peak_in_flight": pd.NA}) == "open loop at 0.5 req/s"
    assert lp.text({"load": lp.SINGLE, "max_concurrency": 1}) == "one request at a time"
    assert lp.text({"load": lp.CONCURRENCY, "max_concurrency": 16}) == "16 concurrent requests (closed loop)"
    assert lp.text({"load": lp.ALL_AT_ONCE, "num_prompts": 900}) == "all 900 prompts sent at once"
    assert lp.text({"load": None}) == "load pattern not recorded in the file"
    assert lp.text(pd.Series(row)) == lp.text(row)

"""Recompute the published metrics from written raw files, to prove the fit landed.

The numbers come from the book's own readers (benchbook.ingest.vllm_bench and
benchbook.ingest.llama_bench), so a generated file passes only if the chapters will
read the published values from it: TTFT median/P99 and per-request TPOT
((e2el - TTFT) / (output - 1)) over successful requests, aggregate = output tokens /
duration, prefill rate = median of input / TTFT, a llama-bench rate = the row's avg_ts.
"""

from __future__ import annotations

from pathlib import Path

from benchbook.analysis.llama import ok_rows, with_test_names
from benchbook.ingest import llama_bench, vllm_bench

from .targets import Target

RUN_METRICS = ("output_tps", "median_ttft_s", "p99_ttft_s", "median_tpot_s", "prefill_tps")


def vllm_values(path: Path) -> dict[str, float]:
    """The run's metrics as the reader computes them, and how much of `duration` the
    requests leave uncovered (a generator check: the benchmark timer spans them all)."""
    tables = vllm_bench.read(Path(path)).tables
    run, req = tables["runs"].iloc[0], tables["requests"]
    span = float((req["start_s"] + req["e2el_s"]).max() - req["start_s"].min())
    out = {m: float(run[m]) for m in RUN_METRICS}
    out["duration_minus_span_s"] = float(run["duration_s"]) - span
    return out


def llama_values(path: Path) -> dict[str, float]:
    """avg_ts per test name (pp512, tg128) of one llama-bench JSONL file."""
    rows = with_test_names(ok_rows(llama_bench.read(Path(path)).tables["llama_bench"]))
    return {name: float(v) for name, v in zip(rows["test_name"], rows["avg_ts"])}


def problems(values: dict[str, float], targets: dict[str, Target]) -> list[str]:
    """Targets the computed values miss (a value missing counts as a miss)."""
    out = []
    for name, t in sorted(targets.items()):
        v = values.get(name)
        if v is None or not t.admits(v):
            out.append(f"{name}: computed {v!r}, published interval [{t.lo}, {t.hi})")
    return out

"""Run kinds and section texts that several chapters' contracts share (`vllm bench serve` runs)."""

from __future__ import annotations

from ..ingest import load_pattern
from ..study.contract import Kind

SERVE = ("runs",)  # the tables of a `vllm bench serve` result
BENCH = ("vllm-bench-serve",)
ONE_STREAM = (("concurrency", 1),)
ONE, CLOSED, OPEN = (load_pattern.SINGLE,), load_pattern.CLOSED, load_pattern.OPEN


def rate_kind() -> Kind:
    """Open-loop runs (`--request-rate R`, no `--max-concurrency`): every vLLM chapter reads them."""
    return Kind("rate", "a run at a fixed request rate (no concurrency cap)", SERVE,
                needs=("request_rate",), key="r{request_rate}", formats=BENCH, loads=OPEN)


RATE_HOW = ("Run `vllm bench serve --request-rate R` at several R with the same prompts, without "
            "--max-concurrency (kind: rate); add --percentile-metrics ttft,tpot,itl --metric-percentiles "
            "50,95,99 for the p95 the capacity table reads.")


def harness_kinds() -> tuple[Kind, ...]:
    """A benchmark harness's own files beside its runs (bench-spark, benchbook.ingest.bench_spark):
    its record of the server, which `benchbook new` lends to the runs beside it, and its summary
    of a request-rate sweep, which a chapter checks like a claim."""
    return (
        Kind("harness-meta", "the harness's record of the server it measured (bench-spark meta.json)",
             ("run_meta",), formats=("bench-spark-meta",)),
        Kind("harness-summary", "the harness's own summary of a request-rate sweep (bench-spark "
             "11-rate-sweep.json)", ("harness_steps", "harness_capacity"), formats=("bench-spark-capacity",)),
    )

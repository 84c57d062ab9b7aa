"""Run kinds and section texts that several chapters' contracts share (`vllm bench serve` runs)."""

from __future__ import annotations

from ..analysis import closed_loop, energy, rate_sweep
from ..ingest import load_pattern
from ..study.contract import Kind, Need, Section

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
        Kind("harness-log", "the harness runner's log of when each test ran (bench-spark _runner.log)",
             ("harness_events",), formats=("bench-spark-runner-log",)),
        Kind("power", "a power time series logged while the runs ran (a CSV of elapsed seconds or times and "
             "watts)", ("power_samples",), formats=("power-series-csv",)),
    )


def energy_section() -> Section:
    """Energy per token (benchbook.analysis.energy): runs, a power series over them, and a
    record that puts both on one clock."""
    return Section("energy", "Energy per token", (
        Need(("power",), "a power series logged while the runs ran"),
        Need(("harness-log",), "the runner's log of when each test ran")),
        how="Add the power CSV the harness logged per test (kind: power) and its runner log (kind: harness-log) "
            "beside the bench results.")


def closed_loop_kind() -> Kind:
    """llama-benchy's pp/tg tests at fixed concurrencies against a server (ingest.llama_benchy)."""
    return Kind("closed-loop", "llama-benchy's prefill and generation tests at fixed concurrencies",
                ("llama_benchy",), formats=("benchy-",))


def closed_loop_section() -> Section:
    """Decode and prefill by concurrency from closed-loop tests (benchbook.analysis.closed_loop)."""
    return Section("closed-loop", "Decode and prefill by concurrency (llama-benchy)", (
        Need(("closed-loop",), "llama-benchy tests"),),
        how="Add llama-benchy's output (its markdown table, a .md or the console .log, or --format json) "
            "beside the bench results (kind: closed-loop).")


def shared_glue(r) -> dict:
    """The numbers of the sections the vLLM chapters share (request-rate sweeps, energy per
    token, llama-benchy's closed loop), each when the data shows it (`r`: a chapter's results
    with `rates`, `energy` and `closed`)."""
    out = {}
    if r.has("rate"):
        out.update(rate_sweep.glue_values(r.rates))
    if r.has("energy"):
        out.update(energy.glue_values(r.energy))
    if r.has("closed-loop"):
        out.update(closed_loop.glue_values(r.closed))
    return out

"""The H100 chapter: dense Qwen3.6-27B FP8 against 35B-A3B FP8 with MTP under vLLM, set against Strix Halo.

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.kinds import (
    BENCH,
    CLOSED,
    ONE_STREAM,
    RATE_HOW,
    SERVE,
    closed_loop_kind,
    closed_loop_section,
    energy_section,
    harness_kinds,
    rate_kind,
)
from ...book.spec import VERDICTS, ChapterSpec, Headline, resting_on
from ...study.contract import Contract, KeyNumbers, Kind, Need, Role, Section

CONTRACT = Contract(
    roles=(
        Role("baseline", "h100_dense", "the configuration the others are measured against "
             "(the write-up: dense Qwen3.6-27B FP8 on one H100)", min=1, pick=("first",)),
        Role("candidate", "h100_moe", "the configuration set against the baseline "
             "(the write-up: Qwen3.6-35B-A3B FP8 with MTP on the same H100)", pick=("second",)),
        Role("other", "{config}", "further configurations, shown in the tables only", max=None, pick=("rest",)),
    ),
    kinds=(
        Kind("prefill", "a one-output-token run that measures prefill", SERVE, needs=("input_len",),
             formats=BENCH, when=(("output_len", "eq", 1),), loads=CLOSED),
        Kind("sweep", "a fixed-concurrency run of a concurrency sweep", SERVE,
             needs=("concurrency", "input_len", "output_len"), key="c{concurrency}",
             formats=BENCH, when=(("concurrency", "set", None),), loads=CLOSED),
        Kind("short-prompts", "a fixed-concurrency run with short prompts", SERVE,
             needs=("concurrency",), key="short{concurrency}", loads=CLOSED),
        rate_kind(), *harness_kinds(), closed_loop_kind(),
    ),
    sections=(
        Section("single-request", "Single request", (
            Need(("sweep",), "a sweep run at concurrency 1", where=ONE_STREAM),
            Need(("prefill",), "a prefill run")), any_of=True,
            how="Add a `vllm bench serve` run with `--max-concurrency 1` (kind: sweep) or one with "
                "`--random-output-len 1` (kind: prefill)."),
        Section("head-to-head", "Baseline against candidate", (
            Need(("sweep",), "a baseline sweep run at concurrency 1", roles=("baseline",), where=ONE_STREAM),
            Need(("sweep",), "a candidate sweep run at concurrency 1", roles=("candidate",), where=ONE_STREAM)),
            how="Add a configuration with role candidate, with a sweep run at concurrency 1."),
        Section("strix", "Against Strix Halo", (
            Need(("sweep",), "a sweep run at concurrency 1", where=ONE_STREAM),
            Need(("prefill",), "a prefill run")), any_of=True, reads=("strix_data_dir",),
            how="The Strix Halo chapter's data folder holds the other side of this comparison."),
        Section("concurrency", "Concurrency", (
            Need(("sweep",), "sweep runs at two or more concurrencies", min_runs=2),),
            how="Run `vllm bench serve --max-concurrency N` at several N with the same prompt "
                "lengths (kind: sweep, with concurrency, input_len and output_len)."),
        Section("rate", "Request rate", (Need(("rate",), "runs at a fixed request rate"),), how=RATE_HOW),
        closed_loop_section(),
        energy_section(),
        Section("common-points", "Baseline against candidate at common load points", (
            Need(("sweep", "rate", "short-prompts", "prefill"), "bench runs of the baseline", roles=("baseline",)),
            Need(("sweep", "rate", "short-prompts", "prefill"), "bench runs of the candidate", roles=("candidate",))),
            how="Run the candidate at the request rates or concurrencies the baseline ran, with the "
                "same prompts (kinds sweep, rate, short-prompts or prefill)."),
        Section("serving", "Serving many agents", (Need(("sweep",), "sweep runs"),),
                reads=("strix_data_dir",),
                how="Needs sweep runs here and llama-bench runs in the Strix Halo chapter's data."),
        Section("cost", "Cost", (Need(("sweep", "rate"), "sweep or rate runs"),),
                how="Needs sweep or rate runs."),
    ),
)


# What each section's numbers rest on, as tidy columns (benchbook.book.spec.resting_on).
CONTRACT = resting_on(CONTRACT, {"concurrency": ("runs.p99_ttft_s",), "cost": ("runs.output_tps",),
                          "strix": ("llama_bench.avg_ts",)})


HEADLINES = (
    Headline("dense-prefill-ratio", "Prefill of a short prompt, {baseline} ÷ Strix Halo"),
    Headline("moe-gen-ratio", "Single-request generation, {candidate} ÷ Strix Halo"),
    Headline("moe-uplift-315", "Single-request output, {candidate} ÷ {baseline}"),
    Headline("moe-ceiling-2200", "Top aggregate output of the sweep, {candidate}"),
    Headline("moe-serving-24x", "16 agents batched on {candidate} against Strix Halo one by one"),
    Headline("moe-cost-c16", "Output cost at 16 agents, {candidate}"),
)


PAGES = (
    ChapterSpec("h100-dense-vs-moe-mtp", "h100", "H100: dense 27B against MoE 35B-A3B with MTP", CONTRACT,
        reads={"strix_data_dir": "strix-halo-baseline"},
        key_numbers=(KeyNumbers("runs", ("run_id",),
                                ("output_tps", "median_ttft_s", "p99_ttft_s", "cost_per_m")),
                     VERDICTS),
        headlines=HEADLINES, order=1),
    # The H100 chapter's notebook on real DGX Spark runs (CC-BY-4.0, data/dgx-spark-dense-vs-moe):
    # the write-ups' dense-against-MoE comparison on another platform, measured.
    ChapterSpec("dgx-spark-dense-vs-moe", "h100", "DGX Spark on real runs: dense 27B against MoE 35B-A3B", CONTRACT,
        notebook="h100-dense-vs-moe-mtp",
        # no Strix Halo folder: the book's is reconstructed, and measured runs are not set beside it
        parameters={"data_dir": "data/dgx-spark-dense-vs-moe", "page": "dgx-spark-dense-vs-moe",
                    "strix_data_dir": None},
        key_numbers=(KeyNumbers("runs", ("run_id",),
                                ("output_tps", "median_ttft_s", "p99_ttft_s", "cost_per_m")),
                     VERDICTS),
        headlines=HEADLINES, order=7),
)

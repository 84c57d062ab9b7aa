"""The DGX Spark (GB10) chapter: the control model, Qwen3.6 without and with MTP, and MTP's acceptance.

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.kinds import (
    BENCH,
    CLOSED,
    RATE_HOW,
    SERVE,
    closed_loop_kind,
    closed_loop_section,
    energy_section,
    harness_kinds,
    rate_kind,
)
from ...book.spec import KEY_FIGURE_NUMBERS, VERDICTS, ChapterSpec, Headline, resting_on
from ...study.contract import Contract, Kind, Need, Role, Section

CONTRACT = Contract(
    roles=(
        Role("old-stack", "old", "the control model on the earlier software stack (the write-up: "
             "Qwen3.5-35B-A3B FP8 on a two-week-old vLLM nightly, DGX Spark)", pick=("model-of:control",)),
        Role("control", "fresh", "the control model on the current stack (the write-up: Qwen3.5-35B-A3B "
             "FP8 on a fresh nightly)", pick=("setup+plain", "plain+not-model-of:mtp")),
        Role("vanilla", "van", "the model under test without speculative decoding (the write-up: "
             "Qwen3.6-35B-A3B FP8)", pick=("model-of:mtp+plain", "setup+plain")),
        Role("mtp", "mtp", "the model under test with MTP speculative decoding", pick=("speculative",)),
        Role("other", "{config}", "further configurations, shown in the tables of the sections every "
             "configuration has (request-rate sweeps, llama-benchy, energy per token)", max=None, pick=("rest",)),
    ),
    kinds=tuple(
        Kind(f"test-{t}", f"workload {t.upper()} of `vllm bench serve` ({i}/{o}, {c} client"
             f"{'s' if c > 1 else ''} in the write-up)", SERVE,
             needs=("concurrency", "input_len", "output_len"), key=t, formats=BENCH,
             when=(("input_len", "eq", i), ("output_len", "eq", o), ("concurrency", "eq", c)), loads=CLOSED)
        for t, (i, o, c) in zip("abcd", ((512, 512, 1), (8192, 256, 4), (2048, 512, 16), (2048, 256, 2)))
    ) + (
        rate_kind(),
        Kind("other-bench", "a fixed-concurrency `vllm bench serve` run of another workload than tests A-D "
             "(listed with the runs, and under energy per token where a power log covers it)", SERVE,
             needs=("concurrency",), key="c{concurrency}", formats=BENCH, when=(("concurrency", "set", None),),
             loads=CLOSED),
        *harness_kinds(), closed_loop_kind(),
        Kind("server-log", "the server's log", ("boot", "windows", "spec_decode"), key="log",
             formats=("vllm-server-log",)),
        Kind("metrics", "dumps of the server's /metrics", ("prom_samples",), key="metrics",
             formats=("prometheus",)),
    ),
    sections=(
        Section("control", "Control: the stack alone", (
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the old-stack configuration", roles=("old-stack",)),
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the control configuration", roles=("control",))),
            how="Add runs of the same model on both stacks (roles old-stack and control)."),
        Section("model", "Control model against the model under test", (
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the control configuration", roles=("control",)),
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the vanilla configuration", roles=("vanilla",))),
            how="Add runs with roles control and vanilla."),
        Section("mtp", "Without and with MTP", (
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the vanilla configuration", roles=("vanilla",)),
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the MTP configuration", roles=("mtp",))),
            how="Add runs of the model without (role vanilla) and with MTP (role mtp)."),
        Section("acceptance", "Acceptance anatomy", (
            Need(("server-log", "metrics") + tuple(f"test-{t}" for t in "abcd"),
                 "runs, logs or /metrics dumps of the MTP configuration", roles=("mtp",)),),
            how="Add the MTP server's log (SpecDecoding lines) or its /metrics dumps."),
        Section("acceptance-bench", "Acceptance in the bench runs", (
            Need(("test-a",), "a test A run of the MTP configuration", roles=("mtp",)),),
            how="Run test A against the MTP server with a vLLM that writes the spec-decode block."),
        Section("acceptance-log", "Acceptance per log interval", (
            Need(("server-log",), "the MTP server's log", roles=("mtp",)),),
            how="Add the MTP server's log (kind: server-log); it prints SpecDecoding lines."),
        Section("acceptance-metrics", "Acceptance counters", (
            Need(("metrics",), "dumps of the MTP server's /metrics", roles=("mtp",)),),
            how="Save `curl SERVER/metrics` before and after the runs (kind: metrics)."),
        Section("quoted-line", "The log line the write-up quotes", (
            Need(("server-log",), "the MTP server's log", roles=("mtp",)),)),
        Section("tpot-itl", "TPOT and ITL", (
            Need(tuple(f"test-{t}" for t in "abcd"), "runs of the vanilla or MTP configuration",
                 roles=("vanilla", "mtp")),),
            how="Add bench runs of the vanilla or MTP configuration."),
        Section("long-gaps", "Long gaps in test B", (
            Need(("test-b",), "a test B run of the vanilla configuration", roles=("vanilla",)),
            Need(("test-b",), "a test B run of the MTP configuration", roles=("mtp",))),
            how="Run test B with `--save-detailed` (per-request inter-token gaps) on both configurations."),
        Section("boot", "Start-up", (Need(("server-log",), "server logs with start-up lines"),),
                how="Add each server's log from start-up (kind: server-log)."),
        Section("mtp-boot", "What MTP costs at start-up", (
            Need(("server-log",), "the vanilla server's log", roles=("vanilla",)),
            Need(("server-log",), "the MTP server's log", roles=("mtp",))),
            how="Add the start-up logs of both the vanilla and the MTP server."),
        Section("rate", "Request-rate sweeps", (Need(("rate",), "runs at a fixed request rate"),), how=RATE_HOW),
        closed_loop_section(),
        energy_section(),
        Section("beside", "The write-up's runs beside this data", (
            Need(("closed-loop",), "llama-benchy tests of the vanilla configuration", roles=("vanilla",)),),
            how="Add llama-benchy tests of the write-up's model without MTP (role vanilla), on its platform "
                "and weights."),
    ),
)


# What each section's numbers rest on, as tidy columns (benchbook.book.spec.resting_on).
CONTRACT = resting_on(CONTRACT, {s: ("runs.output_tps", "runs.mean_ttft_s") for s in ("control", "model", "mtp")} | {
    "acceptance": ("spec_decode.per_position",), "acceptance-metrics": ("spec_decode.per_position",),
    "boot": ("boot.value_num",), "mtp-boot": ("boot.value_num",)})


HEADLINES = (
    Headline("headline-c-throughput", "Output throughput, 16 clients (test C), {mtp} against {vanilla}"),
    Headline("headline-c-ttft", "Mean time to first token, test C, {mtp} against {vanilla}"),
    Headline("a-gain-prose", "Output throughput, one client (test A), {mtp} against {vanilla}"),
    Headline("b-throughput-prose", "Output throughput, long prompts (test B), {mtp} against {vanilla}"),
    Headline("kv-growth", "KV pool, {control} ÷ {old-stack}"),
    Headline("mtp-kv-drop", "KV pool, {mtp} against {vanilla}"),
)


PAGES = (
    ChapterSpec("gb10-mtp", "gb10", "DGX Spark (GB10): Qwen3.6 and MTP", CONTRACT,
        key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS), headlines=HEADLINES, order=4),
    # The chapter's notebook on real DGX Spark runs (CC-BY-4.0, data/dgx-spark-measured): the
    # write-up's model without MTP (role vanilla) beside four other Qwen3.6 weight formats.
    ChapterSpec("dgx-spark-measured", "gb10", "DGX Spark on measured runs: Qwen3.6 in five weight formats",
        CONTRACT, notebook="gb10-mtp",
        parameters={"data_dir": "data/dgx-spark-measured", "page": "dgx-spark-measured"},
        key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS), headlines=HEADLINES, order=8),
)

"""The RTX 3090 chapter: a dense and a sparse model on two cards, speed, memory, a gauntlet and tool-call reliability.

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.kinds import (
    BENCH,
    CLOSED,
    ONE,
    RATE_HOW,
    SERVE,
    closed_loop_kind,
    closed_loop_section,
    energy_section,
    harness_kinds,
    rate_kind,
)
from ...book.spec import KEY_FIGURE_NUMBERS, VERDICTS, ChapterSpec, Headline, resting_on
from ...ingest import load_pattern
from ...study.contract import Contract, Kind, Need, Role, Section

_SPEED = ("ttft-short", "decode-single", "prefill", "decode-long", "concurrent")

CONTRACT = Contract(
    roles=(
        Role("dense", "dense", "the dense model (the write-up: Qwen3.6-27B INT4 with MTP on 2x RTX 3090)",
             pick=("dense",)),
        Role("sparse", "moe", "the mixture-of-experts model (the write-up: Qwen3.6-35B-A3B AWQ on "
             "the same two cards)", pick=("moe",)),
        Role("gauntlet", "gauntlet", "a hand-graded task gauntlet run on both servers", pick=("kind:gauntlet",)),
        Role("agent", "{name}", "a model whose agents' tool calls were logged", max=None,
             pick=("kind:tool-calls",)),
    ),
    kinds=(
        Kind("prefill", "a long-prompt prefill run", SERVE, needs=("input_len",), key="prefill_{input_len}",
             formats=BENCH, when=(("output_len", "eq", 1),), loads=CLOSED),
        Kind("concurrent", "a run at fixed concurrency", SERVE, needs=("concurrency",), key="c{concurrency}",
             formats=BENCH, when=(("concurrency", "gt", 1),), loads=(load_pattern.CONCURRENCY,)),
        Kind("ttft-short", "a short-prompt TTFT run", SERVE, needs=("concurrency",),
             formats=BENCH, when=(("output_len", "le", 32),), loads=ONE),
        Kind("decode-long", "a single-stream decode run at long context", SERVE, needs=("concurrency",),
             formats=BENCH, when=(("input_len", "ge", 1024),), loads=ONE),
        Kind("decode-single", "a single-stream decode run", SERVE, needs=("concurrency",), formats=BENCH,
             loads=ONE),
        rate_kind(), *harness_kinds(), closed_loop_kind(),
        Kind("server-log", "the server's log (start-up facts)", ("boot", "windows"), key="boot",
             formats=("vllm-server-log",)),
        Kind("gpu-memory", "an nvidia-smi log of memory use", ("gpu_samples",), key="gpu", formats=("nvidia-smi",)),
        Kind("gauntlet", "the gauntlet CSV", ("gauntlet",), key=None, formats=("gauntlet",)),
        Kind("tool-calls", "an agent tool-call log", ("tool_calls",), key=None, formats=("tool-call-log",)),
    ),
    sections=(
        Section("speed", "Speed", (
            Need(_SPEED, "speed runs of the dense or the sparse configuration", roles=("dense", "sparse")),),
            how="Add `vllm bench serve` runs of kinds ttft-short, decode-single, prefill, decode-long or "
                "concurrent, for configurations with role dense or sparse."),
        Section("head-to-head", "Dense against sparse", (
            Need(_SPEED, "speed runs of the dense configuration", roles=("dense",)),
            Need(_SPEED, "speed runs of the sparse configuration", roles=("sparse",))),
            how="Add speed runs of both a dense and a sparse configuration."),
        Section("prefill", "Prefill", (Need(("prefill",), "a prefill run", roles=("dense", "sparse")),),
                how="Add a long-prompt run with one output token (kind: prefill, with input_len)."),
        Section("memory", "Memory and KV cache", (
            Need(("server-log",), "a server log with start-up lines", roles=("dense", "sparse")),),
            how="Add each server's log from start-up (kind: server-log)."),
        Section("memory-both", "KV cache of both models", (
            Need(("server-log",), "the dense server's log", roles=("dense",)),
            Need(("server-log",), "the sparse server's log", roles=("sparse",))),
            how="Add the start-up logs of both servers."),
        Section("kv-check", "KV capacity against the architecture", (
            Need(("server-log",), "a server log with start-up lines", roles=("dense", "sparse")),),
            how="Add the models' layout to architecture.yml (full-attention layers, KV heads, head dim)."),
        Section("gauntlet", "Task gauntlet", (Need(("gauntlet",), "a gauntlet CSV"),),
                how="Add the gauntlet CSV (kind: gauntlet)."),
        Section("reliability", "Tool-call reliability", (Need(("tool-calls",), "tool-call logs"),),
                how="Add orchestrator tool-call logs (kind: tool-calls), one configuration per model."),
        Section("pairwise", "Pairwise comparison", (
            Need(("tool-calls",), "tool-call logs of two or more models", min_configs=2),),
            how="Add tool-call logs of a second model."),
        Section("rate", "Request-rate sweeps", (Need(("rate",), "runs at a fixed request rate"),), how=RATE_HOW),
        closed_loop_section(),
        energy_section(),
    ),
)


# What each section's numbers rest on, as tidy columns (benchbook.book.spec.resting_on).
CONTRACT = resting_on(CONTRACT, {"speed": ("runs.spec_acceptance_length",),
                                          "prefill": ("runs.median_ttft_s",)})


PAGES = (
    ChapterSpec("3090-dense-vs-sparse", "dense_sparse", "Two RTX 3090s: dense against sparse", CONTRACT,
        key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS), headlines=(
            Headline("decode-single-ratio", "Single-stream decode, {sparse} ÷ {dense}"),
            Headline("prefill-ratio", "Long-prompt prefill, {sparse} ÷ {dense}"),
            Headline("c4-ratio", "Aggregate throughput with concurrent requests, {sparse} ÷ {dense}"),
            Headline("everywhere-2x", "Smallest speed-up over the five speed tests, {sparse} ÷ {dense}"),
            Headline("kv-ratio", "KV cache tokens, {sparse} ÷ {dense}"),
        ), order=2),
)

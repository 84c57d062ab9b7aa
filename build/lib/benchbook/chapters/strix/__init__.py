"""The Strix Halo chapter: llama.cpp builds and backends with llama-bench (two pages: the
write-up's data and real runs).

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.kinds import BENCH, ONE, SERVE
from ...book.spec import KEY_FIGURE_NUMBERS, VERDICTS, ChapterSpec, Headline, resting_on
from ...study.contract import Contract, Kind, Need, Role, Section

CONTRACT = Contract(
    roles=(
        Role("backend", "{config}", "a llama.cpp build and backend measured with llama-bench "
             "(the write-up: three builds, ROCm and Vulkan, on a Ryzen AI Max+ 395)", max=None,
             aggregate="strix", pick=("kind:llama-bench",)),
        Role("server", "strix_server", "a single-client `vllm bench serve` run against llama-server",
             pick=("kind:ttft-4k",)),
    ),
    kinds=(
        Kind("llama-bench", "llama-bench output of one build", ("llama_bench",), key=None,
             formats=("llama-bench",)),
        Kind("ttft-4k", "a bench run against llama-server with long prompts", SERVE,
             needs=("concurrency", "input_len", "output_len"), key="c{concurrency}", formats=BENCH,
             when=(("concurrency", "eq", 1),), loads=ONE),
    ),
    sections=(
        Section("backends", "llama-bench across backends", (Need(("llama-bench",), "llama-bench output"),),
                how="Add llama-bench output (`-o jsonl`, `-o json`, `-o csv` or the markdown table) "
                    "with kind: llama-bench and one configuration per build."),
        Section("pp", "A prefill test", (Need(("llama-bench",), "llama-bench output"),),
                how="Run llama-bench with a prompt test (`-p 512`)."),
        Section("tg", "A generation test", (Need(("llama-bench",), "llama-bench output"),),
                how="Run llama-bench with a generation test (`-n 128`)."),
        Section("spread", "How far apart the backends are", (
            Need(("llama-bench",), "llama-bench output of two or more builds", min_configs=2),),
            how="Add llama-bench output of another build or backend as its own configuration."),
        Section("server", "Time to first token and decode step", (
            Need(("ttft-4k",), "a bench run against llama-server"),),
            how="Run `vllm bench serve --backend openai` against llama-server with one client "
                "(kind: ttft-4k)."),
        Section("serving", "Serving many agents", (Need(("llama-bench",), "llama-bench output"),),
                reads=("h100_data_dir",),
                how="Needs llama-bench output here and sweep runs in the H100 chapter's data."),
    ),
)


# What each section's numbers rest on, as tidy columns (benchbook.book.spec.resting_on).
CONTRACT = resting_on(CONTRACT, {"backends": ("llama_bench.avg_ts", "llama_bench.stddev_ts"),
                            "spread": ("llama_bench.avg_ts", "llama_bench.stddev_ts"),
                            "server": ("runs.p99_ttft_s", "runs.p99_tpot_s")})


HEADLINES = (
    Headline("strix-prefill-rate", "Prefill, pp512, best build"),
    Headline("strix-gen-rate", "Generation, tg128, best build"),
    Headline("strix-ttft-4k", "Median time to first token, 4k prompt, {server}"),
    Headline("strix-tpot", "Median decode step, {server}"),
    Headline("strix-moe-gen-ratio", "Single-request generation, H100 MoE + MTP ÷ Strix Halo"),
)


PAGES = (
    ChapterSpec("strix-halo-baseline", "strix", "Strix Halo: llama.cpp backends", CONTRACT,
        reads={"h100_data_dir": "h100-dense-vs-moe-mtp"}, key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS),
        headlines=HEADLINES, order=5),
    # The Strix Halo chapter's notebook run a second time, on real public llama-bench runs:
    # the proof that the notebooks run unchanged on real files.
    ChapterSpec("strix-halo-qwen3-30b-lhl", "strix", "Strix Halo on real runs: Qwen3-30B-A3B across llama.cpp builds",
        CONTRACT, notebook="strix-halo-baseline",
        parameters={"data_dir": "data/strix-halo-qwen3-30b-lhl", "page": "strix-halo-qwen3-30b-lhl"},
        reads={"h100_data_dir": "h100-dense-vs-moe-mtp"}, key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS),
        headlines=HEADLINES, order=6),
)

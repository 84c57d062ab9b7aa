"""The power-sweep chapter: 4x RTX 3090 at several power limits, from the server's periodic stats lines.

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.spec import KEY_FIGURE_NUMBERS, VERDICTS, ChapterSpec, Headline, resting_on
from ...study.contract import Contract, Kind, Need, Role, Section

CONTRACT = Contract(
    roles=(
        Role("model", "{config}", "a model served under each power limit (the write-up: Qwen3.5-27B, "
             "Qwen3.5-122B-A10B and Qwen3.6-35B-A3B on 4x RTX 3090)", min=1, max=None,
             pick=("kind:server-log", "kind:gpu-log")),
    ),
    kinds=(
        Kind("server-log", "a vLLM server log with periodic stats lines", ("windows",), key="log",
             tiebreak="{power_limit_w}W", formats=("vllm-server-log",)),
        Kind("gpu-log", "an nvidia-smi log beside the server log", ("gpu_samples",), key="gpu",
             tiebreak="{power_limit_w}W", formats=("nvidia-smi",)),
    ),
    sections=(
        Section("power", "Power against performance", (
            Need(("server-log",), "server logs at two or more power limits", min_runs=2),),
            how="Add a server log per power limit, each with power_limit_w (or an nvidia-smi log "
                "beside it that records the limit)."),
        Section("concurrency", "Generation by concurrency", (Need(("server-log",), "a server log"),)),
        Section("energy", "Tokens per kW", (Need(("server-log",), "a server log"),)),
        Section("draw", "Measured power draw", (Need(("gpu-log",), "an nvidia-smi log"),),
                how="Log the GPUs beside the server: `nvidia-smi --query-gpu=timestamp,index,name,power.draw,"
                    "power.limit --format=csv -l 1` (kind: gpu-log), and give study.yml a date for the log."),
        Section("models", "Models side by side", (
            Need(("server-log",), "server logs of two or more models", min_configs=2),),
            how="Add the logs of a second model as its own configuration."),
    ),
)


# What each section's numbers rest on, as tidy columns (benchbook.book.spec.resting_on).
CONTRACT = resting_on(CONTRACT, {"draw": ("gpu_samples.power_draw_w",),
                            "energy": ("gpu_samples.power_draw_w",)})


PAGES = (
    ChapterSpec("power-sweep", "power_sweep", "4x RTX 3090: power limits", CONTRACT,
        key_numbers=(KEY_FIGURE_NUMBERS, VERDICTS), headlines=(
            Headline("q27-250-vs-200", "Qwen3.5-27B mean generation, 250 W ÷ 200 W"),
            Headline("q36-300-vs-250", "Qwen3.6-35B-A3B generation, 300 W against 250 W"),
            Headline("q122-prefill-vs-q27-250", "Prefill under load at 250 W, 122B-A10B ÷ 27B"),
            Headline("q27-peak-gen", "Qwen3.5-27B peak generation (busiest window)"),
            Headline("cpm-q36-c4-vs-q27", "Completions per minute at four requests, 35B-A3B ÷ 27B"),
        ), order=3),
)

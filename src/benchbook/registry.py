"""The book's chapters: one registry entry each, with its contract.

An entry names the page (book/studies/<id>), the chapter module that computes it, the
notebook that shows it, the parameters that differ from the notebook's defaults (a second
page from one notebook, on other data), the parameters that name another chapter's data
folder (`reads`), the chapters whose outputs it reads (`uses`), and the contract its data
folder must meet (benchbook.contract). A new chapter is a notebook, a module and one entry
here; the runner, `benchbook new`, `validate` and the synthesis read this list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from . import load_pattern
from .contract import Contract, KeyNumbers, Kind, Need, Role, Section
from .headlines import Headline


@dataclass(frozen=True)
class ChapterSpec:
    id: str  # page id: book/studies/<id>.ipynb, and its default data folder data/<id>/
    module: str  # benchbook.chapters.<module>
    title: str
    contract: Contract | None = None
    notebook: str = ""  # notebooks/<notebook>.md (default: the id)
    parameters: dict = field(default_factory=dict)  # overrides of the notebook's defaults
    reads: dict = field(default_factory=dict)  # parameter -> chapter id whose data folder it names
    uses: tuple[str, ...] = ()  # chapters whose declared outputs it reads
    outputs: tuple[str, ...] = ("key_figures", "claims", "caveats")  # tables it writes for others
    key_numbers: tuple[KeyNumbers, ...] = ()  # set beside the previous published version's
    headlines: tuple[Headline, ...] = ()  # the page's key results, first on the page

    @property
    def notebook_name(self) -> str:
        return self.notebook or self.id


_SERVE = ("runs",)  # a `vllm bench serve` result
_BENCH = ("vllm-bench-serve",)
_ONE_STREAM = (("concurrency", 1),)
_ONE, _CLOSED, _OPEN = (load_pattern.SINGLE,), load_pattern.CLOSED, load_pattern.OPEN


def _rate_kind() -> Kind:
    """Open-loop runs (`--request-rate R`, no `--max-concurrency`): every vLLM chapter reads them."""
    return Kind("rate", "a run at a fixed request rate (no concurrency cap)", _SERVE,
                needs=("request_rate",), key="r{request_rate}", formats=_BENCH, loads=_OPEN)


_RATE_HOW = ("Run `vllm bench serve --request-rate R` at several R with the same prompts, without "
             "--max-concurrency (kind: rate); add --percentile-metrics ttft,tpot,itl --metric-percentiles "
             "50,95,99 for the p95 the capacity table reads.")


H100 = Contract(
    roles=(
        Role("baseline", "h100_dense", "the configuration the others are measured against "
             "(the write-up: dense Qwen3.6-27B FP8 on one H100)", min=1, pick=("first",)),
        Role("candidate", "h100_moe", "the configuration set against the baseline "
             "(the write-up: Qwen3.6-35B-A3B FP8 with MTP on the same H100)", pick=("second",)),
        Role("other", "{config}", "further configurations, shown in the tables only", max=None, pick=("rest",)),
    ),
    kinds=(
        Kind("prefill", "a one-output-token run that measures prefill", _SERVE, needs=("input_len",),
             formats=_BENCH, when=(("output_len", "eq", 1),), loads=_CLOSED),
        Kind("sweep", "a fixed-concurrency run of a concurrency sweep", _SERVE,
             needs=("concurrency", "input_len", "output_len"), key="c{concurrency}",
             formats=_BENCH, when=(("concurrency", "set", None),), loads=_CLOSED),
        Kind("short-prompts", "a fixed-concurrency run with short prompts", _SERVE,
             needs=("concurrency",), key="short{concurrency}", loads=_CLOSED),
        _rate_kind(),
    ),
    sections=(
        Section("single-request", "Single request", (
            Need(("sweep",), "a sweep run at concurrency 1", where=_ONE_STREAM),
            Need(("prefill",), "a prefill run")), any_of=True,
            how="Add a `vllm bench serve` run with `--max-concurrency 1` (kind: sweep) or one with "
                "`--random-output-len 1` (kind: prefill)."),
        Section("head-to-head", "Baseline against candidate", (
            Need(("sweep",), "a baseline sweep run at concurrency 1", roles=("baseline",), where=_ONE_STREAM),
            Need(("sweep",), "a candidate sweep run at concurrency 1", roles=("candidate",), where=_ONE_STREAM)),
            how="Add a configuration with role candidate, with a sweep run at concurrency 1."),
        Section("strix", "Against Strix Halo", (
            Need(("sweep",), "a sweep run at concurrency 1", where=_ONE_STREAM),
            Need(("prefill",), "a prefill run")), any_of=True, reads=("strix_data_dir",),
            how="The Strix Halo chapter's data folder holds the other side of this comparison."),
        Section("concurrency", "Concurrency", (
            Need(("sweep",), "sweep runs at two or more concurrencies", min_runs=2),),
            how="Run `vllm bench serve --max-concurrency N` at several N with the same prompt "
                "lengths (kind: sweep, with concurrency, input_len and output_len)."),
        Section("rate", "Request rate", (Need(("rate",), "runs at a fixed request rate"),), how=_RATE_HOW),
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

STRIX = Contract(
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
        Kind("ttft-4k", "a bench run against llama-server with long prompts", _SERVE,
             needs=("concurrency", "input_len", "output_len"), key="c{concurrency}", formats=_BENCH,
             when=(("concurrency", "eq", 1),), loads=_ONE),
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

_SPEED = ("ttft-short", "decode-single", "prefill", "decode-long", "concurrent")

DENSE_SPARSE = Contract(
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
        Kind("prefill", "a long-prompt prefill run", _SERVE, needs=("input_len",), key="prefill_{input_len}",
             formats=_BENCH, when=(("output_len", "eq", 1),), loads=_CLOSED),
        Kind("concurrent", "a run at fixed concurrency", _SERVE, needs=("concurrency",), key="c{concurrency}",
             formats=_BENCH, when=(("concurrency", "gt", 1),), loads=(load_pattern.CONCURRENCY,)),
        Kind("ttft-short", "a short-prompt TTFT run", _SERVE, needs=("concurrency",),
             formats=_BENCH, when=(("output_len", "le", 32),), loads=_ONE),
        Kind("decode-long", "a single-stream decode run at long context", _SERVE, needs=("concurrency",),
             formats=_BENCH, when=(("input_len", "ge", 1024),), loads=_ONE),
        Kind("decode-single", "a single-stream decode run", _SERVE, needs=("concurrency",), formats=_BENCH,
             loads=_ONE),
        _rate_kind(),
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
        Section("rate", "Request-rate sweeps", (Need(("rate",), "runs at a fixed request rate"),), how=_RATE_HOW),
    ),
)

POWER = Contract(
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

GB10 = Contract(
    roles=(
        Role("old-stack", "old", "the control model on the earlier software stack (the write-up: "
             "Qwen3.5-35B-A3B FP8 on a two-week-old vLLM nightly, DGX Spark)", pick=("model-of:control",)),
        Role("control", "fresh", "the control model on the current stack (the write-up: Qwen3.5-35B-A3B "
             "FP8 on a fresh nightly)", pick=("plain",)),
        Role("vanilla", "van", "the model under test without speculative decoding (the write-up: "
             "Qwen3.6-35B-A3B FP8)", pick=("model-of:mtp",)),
        Role("mtp", "mtp", "the model under test with MTP speculative decoding", pick=("speculative",)),
    ),
    kinds=tuple(
        Kind(f"test-{t}", f"workload {t.upper()} of `vllm bench serve` ({i}/{o}, {c} client"
             f"{'s' if c > 1 else ''} in the write-up)", _SERVE,
             needs=("concurrency", "input_len", "output_len"), key=t, formats=_BENCH,
             when=(("input_len", "eq", i), ("output_len", "eq", o), ("concurrency", "eq", c)), loads=_CLOSED)
        for t, (i, o, c) in zip("abcd", ((512, 512, 1), (8192, 256, 4), (2048, 512, 16), (2048, 256, 2)))
    ) + (
        _rate_kind(),
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
        Section("rate", "Request-rate sweeps", (Need(("rate",), "runs at a fixed request rate"),), how=_RATE_HOW),
    ),
)

def _resting_on(contract: Contract, columns: dict[str, tuple[str, ...]]) -> Contract:
    """The contract with each named section's tidy columns (`table.column`) declared."""
    unknown = sorted(set(columns) - {s.id for s in contract.sections})
    if unknown:
        raise KeyError(f"no section {', '.join(unknown)}")
    return replace(contract, sections=tuple(replace(s, columns=columns.get(s.id, s.columns))
                                            for s in contract.sections))


# What each section's numbers rest on, as tidy columns: a data generator's assumption about
# one of them (a reconstructed folder's assumptions.yml) marks the section on the page.
H100 = _resting_on(H100, {"concurrency": ("runs.p99_ttft_s",), "cost": ("runs.output_tps",),
                          "strix": ("llama_bench.avg_ts",)})
STRIX = _resting_on(STRIX, {"backends": ("llama_bench.avg_ts", "llama_bench.stddev_ts"),
                            "spread": ("llama_bench.avg_ts", "llama_bench.stddev_ts"),
                            "server": ("runs.p99_ttft_s", "runs.p99_tpot_s")})
DENSE_SPARSE = _resting_on(DENSE_SPARSE, {"speed": ("runs.spec_acceptance_length",),
                                          "prefill": ("runs.median_ttft_s",)})
POWER = _resting_on(POWER, {"draw": ("gpu_samples.power_draw_w",),
                            "energy": ("gpu_samples.power_draw_w",)})
GB10 = _resting_on(GB10, {s: ("runs.output_tps", "runs.mean_ttft_s") for s in ("control", "model", "mtp")} | {
    "acceptance": ("spec_decode.per_position",), "acceptance-metrics": ("spec_decode.per_position",),
    "boot": ("boot.value_num",), "mtp-boot": ("boot.value_num",)})

# Set beside the previous published version's in every chapter's "Changes" section.
KEY_FIGURES = KeyNumbers("key_figures", ("config",), ("single_stream_decode_tps", "ttft_s", "prefill_tps",
                                                       "best_aggregate_tps", "cost_per_m", "power_w"))
VERDICTS = KeyNumbers("claims", ("id",), ("verdict",))

# Key results: claims of the write-ups whose numbers a reader looks for first (labels name
# roles in braces; the page puts the configuration of that role in their place).
H100_HEADLINES = (
    Headline("dense-prefill-ratio", "Prefill of a short prompt, {baseline} ÷ Strix Halo"),
    Headline("moe-gen-ratio", "Single-request generation, {candidate} ÷ Strix Halo"),
    Headline("moe-uplift-315", "Single-request output, {candidate} ÷ {baseline}"),
    Headline("moe-ceiling-2200", "Top aggregate output of the sweep, {candidate}"),
    Headline("moe-serving-24x", "16 agents batched on {candidate} against Strix Halo one by one"),
    Headline("moe-cost-c16", "Output cost at 16 agents, {candidate}"),
)
STRIX_HEADLINES = (
    Headline("strix-prefill-rate", "Prefill, pp512, best build"),
    Headline("strix-gen-rate", "Generation, tg128, best build"),
    Headline("strix-ttft-4k", "Median time to first token, 4k prompt, {server}"),
    Headline("strix-tpot", "Median decode step, {server}"),
    Headline("strix-moe-gen-ratio", "Single-request generation, H100 MoE + MTP ÷ Strix Halo"),
)

CHAPTERS: tuple[ChapterSpec, ...] = (
    ChapterSpec("h100-dense-vs-moe-mtp", "h100", "H100: dense 27B against MoE 35B-A3B with MTP", H100,
                reads={"strix_data_dir": "strix-halo-baseline"},
                key_numbers=(KeyNumbers("runs", ("run_id",),
                                        ("output_tps", "median_ttft_s", "p99_ttft_s", "cost_per_m")),
                             VERDICTS),
                headlines=H100_HEADLINES),
    ChapterSpec("3090-dense-vs-sparse", "dense_sparse", "Two RTX 3090s: dense against sparse", DENSE_SPARSE,
                key_numbers=(KEY_FIGURES, VERDICTS), headlines=(
                    Headline("decode-single-ratio", "Single-stream decode, {sparse} ÷ {dense}"),
                    Headline("prefill-ratio", "Long-prompt prefill, {sparse} ÷ {dense}"),
                    Headline("c4-ratio", "Aggregate throughput with concurrent requests, {sparse} ÷ {dense}"),
                    Headline("everywhere-2x", "Smallest speed-up over the five speed tests, {sparse} ÷ {dense}"),
                    Headline("kv-ratio", "KV cache tokens, {sparse} ÷ {dense}"),
                )),
    ChapterSpec("power-sweep", "power_sweep", "4x RTX 3090: power limits", POWER,
                key_numbers=(KEY_FIGURES, VERDICTS), headlines=(
                    Headline("q27-250-vs-200", "Qwen3.5-27B mean generation, 250 W ÷ 200 W"),
                    Headline("q36-300-vs-250", "Qwen3.6-35B-A3B generation, 300 W against 250 W"),
                    Headline("q122-prefill-vs-q27-250", "Prefill under load at 250 W, 122B-A10B ÷ 27B"),
                    Headline("q27-peak-gen", "Qwen3.5-27B peak generation (busiest window)"),
                    Headline("cpm-q36-c4-vs-q27", "Completions per minute at four requests, 35B-A3B ÷ 27B"),
                )),
    ChapterSpec("gb10-mtp", "gb10", "DGX Spark (GB10): Qwen3.6 and MTP", GB10,
                key_numbers=(KEY_FIGURES, VERDICTS), headlines=(
                    Headline("headline-c-throughput",
                             "Output throughput, 16 clients (test C), {mtp} against {vanilla}"),
                    Headline("headline-c-ttft", "Mean time to first token, test C, {mtp} against {vanilla}"),
                    Headline("a-gain-prose", "Output throughput, one client (test A), {mtp} against {vanilla}"),
                    Headline("b-throughput-prose", "Output throughput, long prompts (test B), {mtp} against {vanilla}"),
                    Headline("kv-growth", "KV pool, {control} ÷ {old-stack}"),
                    Headline("mtp-kv-drop", "KV pool, {mtp} against {vanilla}"),
                )),
    ChapterSpec("strix-halo-baseline", "strix", "Strix Halo: llama.cpp backends", STRIX,
                reads={"h100_data_dir": "h100-dense-vs-moe-mtp"}, key_numbers=(KEY_FIGURES, VERDICTS),
                headlines=STRIX_HEADLINES),
    # The Strix Halo chapter's notebook run a second time, on real public llama-bench runs:
    # the proof that the notebooks run unchanged on real files.
    ChapterSpec("strix-halo-qwen3-30b-lhl", "strix", "Strix Halo on real runs: Qwen3-30B-A3B across llama.cpp builds",
                STRIX, notebook="strix-halo-baseline",
                parameters={"data_dir": "data/strix-halo-qwen3-30b-lhl", "page": "strix-halo-qwen3-30b-lhl"},
                reads={"h100_data_dir": "h100-dense-vs-moe-mtp"}, key_numbers=(KEY_FIGURES, VERDICTS),
                headlines=STRIX_HEADLINES),
    ChapterSpec("synthesis", "synthesis", "Synthesis", None,
                uses=("h100-dense-vs-moe-mtp", "3090-dense-vs-sparse", "power-sweep", "gb10-mtp",
                      "strix-halo-baseline"), outputs=()),
)


def chapters() -> tuple[ChapterSpec, ...]:
    return CHAPTERS


def get(chapter_id: str) -> ChapterSpec:
    hit = next((c for c in CHAPTERS if c.id == chapter_id), None)
    if hit is None:
        raise KeyError(f"no chapter {chapter_id!r}; known: {', '.join(c.id for c in CHAPTERS)}")
    return hit


def studies() -> list[str]:
    """Chapters that have a data folder of their own (not the synthesis)."""
    return [c.id for c in CHAPTERS if c.contract is not None]

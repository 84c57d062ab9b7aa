"""Reconstruct the Strix Halo baseline the H100 write-ups compare against.

Seeds 001 and 000 quote Strix Halo numbers (llama.cpp, Qwen3.6-35B-A3B Q8_0, best of
three backends) from the author's own notes, never published raw. We rebuild them as
`llama-bench -o jsonl` files, one per backend, plus one `vllm bench serve` result against
llama-server for the 4k-prompt TTFT/TPOT figures that llama-bench cannot produce.
Targets come from the H100 study's published.yml; this study's own published.yml holds the
same Strix Halo cells and gives the same bytes (tests/test_chapter_strix.py checks it).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from benchbook.ledger.published import load_published

from . import bench_json, check, docs, llama_jsonl
from .fit import FitError, Plan, fit
from .targets import split_name, targets

SEED = 20260605
STUDY = "strix-halo-baseline"
# study.yml: the folder's title, what it holds, and the write-ups it rebuilds (published.yml's sources).
TITLE = "Strix Halo baseline: Qwen3.6-35B-A3B Q8_0 on llama.cpp (ROCm and Vulkan)"
DESCRIPTION = (
    "The Strix Halo (Ryzen AI Max+ 395, Radeon 8060S, 128 GB) numbers that the H100 "
    "write-ups compare against: llama-bench prefill (pp512) and generation (tg128) on "
    "three llama.cpp backends, whose best-of the seeds quote, and a single-client "
    "llama-server run for the 4k-prompt TTFT and TPOT. The raw files are reconstructed "
    "from the published figures, not measured; see PROVENANCE.md.")
SOURCES = ("seed-001", "seed-000")
GGUF = "Qwen3.6-35B-A3B-Q8_0.gguf"
BACKENDS = ("strix-rocm-pr21344", "strix-vulkan-radv", "strix-rocm-723")
TESTS = {"pp512": {"n_prompt": 512, "n_gen": 0}, "tg128": {"n_prompt": 0, "n_gen": 128}}

# Everything below is our choice, not a published number. (value, why)
ASSUMPTIONS = {
    "winners": ({"pp512": "strix-rocm-pr21344", "tg128": "strix-vulkan-radv"},
                "which backend gives the published best-of figure: ROCm (PR 21344 build) "
                "for prefill, Vulkan RADV for generation, the usual split on gfx1151"),
    "losing_ratios": ({"pp512": {"strix-vulkan-radv": 0.84, "strix-rocm-723": 0.92},
                       "tg128": {"strix-rocm-pr21344": 0.95, "strix-rocm-723": 0.93}},
                      "the other backends' rates as fractions of the winner's"),
    "repetitions": (5, "llama-bench -r 5 (its default)"),
    "rep_cv": ({"pp512": 0.004, "tg128": 0.002}, "run-to-run coefficient of variation of one repetition"),
    "builds": ({"strix-rocm-pr21344": 9263, "strix-vulkan-radv": 9187, "strix-rocm-723": 9201},
               "llama.cpp build numbers (a May 2026 build range); commits are seeded random hex"),
    "engine_versions": ({"strix-rocm-pr21344": "ROCm, llama.cpp PR #21344 applied",
                         "strix-vulkan-radv": "Vulkan, Mesa RADV", "strix-rocm-723": "ROCm 7.2.3"},
                        "how we label each backend build (the seeds name "
                        "only 'ROCm pr21344', 'Vulkan RADV' and 'ROCm 7.2.3')"),
    "llama_bench_args": ({"n_gpu_layers": 99, "flash_attn": 1, "use_mmap": False, "n_threads": 16,
                          "n_batch": 2048, "n_ubatch": 512},
                         "llama-bench -ngl 99 -fa 1 --mmap 0 with default "
                         "batch sizes; 16 threads = the 16 Zen 5 cores"),
    "model_file": ({"path": "/models/" + GGUF, "model_type": "qwen3moe 35B.A3B Q8_0",
                    "model_size": 36829423616, "model_n_params": 34660610688},
                   "GGUF path, llama.cpp's model description, size in "
                   "bytes (Q8_0 ~ 8.5 bits per weight) and parameter count"),
    "bench_date_local": ("2026-05-29T21:14:05",
                         "llama-bench runs: an evening before the first H100 sweep, backends one after another"),
    "utc_offset_h": (3, "the author's local time is EEST (UTC+3); llama-bench writes UTC"),
    "between_backends_s": (95.0,
                           "time between one backend's last test and the next "
                           "backend's first (switching toolbox, loading 34 GiB)"),
    "test_overhead_s": (6.0, "per test: model load or warm-up run before the timed repetitions"),
    "server_backend": ("strix-vulkan-radv", "llama-server built on the generation winner (Vulkan RADV)"),
    "server_date_local": ("2026-06-04T16:41:27",
                          "the llama-server run: between the two H100 "
                          "write-ups (its numbers first appear in seed 000)"),
    "server_run": ({"input_len": 4096, "num_prompts": 10},
                   "vllm bench serve --backend openai against llama-server: random dataset, the "
                   "write-up's '4k' prompts read as 4,096 tokens, 10 prompts (one client, as its c=1 "
                   "figures say, and its 512-token answers are no choice)"),
    "server_tokenizer": ("Qwen/Qwen3.6-35B-A3B",
                         "the Hugging Face tokenizer given to vllm bench serve (llama-server has none to offer)"),
    "server_args": ({"n_gpu_layers": 99, "flash_attn": "on", "ctx_size": 8192, "parallel": 1},
                    "llama-server flags: full offload, flash attention, one slot"),
    "server_ttft_p99_ratio": (1.04, "P99/median TTFT of the server run"),
    "server_spread": ({"ttft_sigma": 0.03, "ttft_min_ratio": 0.97, "ttft_tail": 0.15, "tpot_sigma": 0.01,
                       "tpot_range": (0.99, 1.015), "step_cv": 0.05},
                      "spreads of the single-client server run (TTFT, TPOT, per-token steps)"),
    "client_gap_s": (0.0021, "client idle between one response and the next request (nothing published pins it)"),
    "gap_jitter_s": (0.0004, "exponential jitter on that gap"),
    "bench_overhead_s": ((0.0009, 0.0011), "timer start -> first request and last response -> timer stop"),
    "perf_counter_at_run_s": (97214.5521, "client time.perf_counter() at the server run's first request"),
    "extreme_jitter": (0.03,
                       "the fastest/slowest request moves by up to this fraction, so extremes are not round ratios"),
}

# Which tidy columns each assumption lands in (assumptions.yml; a chapter section reading one is marked).
SHOWS_IN = {
    "winners": ("llama_bench.avg_ts",),
    "losing_ratios": ("llama_bench.avg_ts",),
    "rep_cv": ("llama_bench.stddev_ts",),
    "server_ttft_p99_ratio": ("runs.p99_ttft_s",),
    "server_spread": ("runs.p99_ttft_s", "runs.p99_tpot_s"),
}


def a(name: str):
    return ASSUMPTIONS[name][0]


def _test_rows(test: str) -> dict:
    return {k: [v] for k, v in TESTS[test].items()}


# Which rows of those columns an assumption covers, where not all (benchbook.study.assumptions):
# the winner's cell of each test, and the other backends' cells.
ROWS = {
    "winners": [{"config": [b], **_test_rows(t)} for t, b in a("winners").items()],
    "losing_ratios": [{"config": list(losers), **_test_rows(t)} for t, losers in a("losing_ratios").items()],
}


_PLATFORM = "AMD Ryzen AI Max+ 395 (Strix Halo), Radeon 8060S iGPU (gfx1151), 128 GB unified memory"
_BASE = {
    "platform": _PLATFORM, "accelerators": "1x Radeon 8060S (gfx1151, integrated)",
    "engine": "llama.cpp (llama-bench)", "engine_version": None, "model": GGUF,
    "model_arch": "MoE, 35B total / 3B active parameters", "quantisation": "Q8_0 (GGUF)",
    "speculative": "none", "kv_dtype": "f16", "serve_args": None, "source": "seed-001",
}
_GPU = {"strix-rocm-pr21344": ("ROCm", "AMD Radeon 8060S Graphics"),
        "strix-vulkan-radv": ("Vulkan", "AMD Radeon 8060S Graphics (RADV GFX1151)"),
        "strix-rocm-723": ("ROCm", "AMD Radeon 8060S Graphics")}
_NAMES = {"strix-rocm-pr21344": "strix_rocm_pr21344", "strix-vulkan-radv": "strix_vulkan_radv",
          "strix-rocm-723": "strix_rocm_723"}


def configs() -> dict:
    out = {}
    for b in BACKENDS:
        out[b] = {"role": "backend", **_BASE, "engine_version": f"b{a('builds')[b]} ({a('engine_versions')[b]})",
                  "serve_args": {"backend": _GPU[b][0], **a("llama_bench_args")}}
    sb = a("server_backend")
    out["strix-llama-server"] = {
        "role": "server", **_BASE, "engine": "llama.cpp (llama-server)",
        "engine_version": f"b{a('builds')[sb]} ({a('engine_versions')[sb]})",
        "serve_args": {"backend": _GPU[sb][0], **a("server_args")}, "source": "seed-000",
    }
    return out


def _llama_rows(rng, rates: dict[str, float], backend: str, start: datetime) -> tuple[str, datetime]:
    """Both tests of one backend as JSONL lines; returns the text and when it finished."""
    args, model = a("llama_bench_args"), a("model_file")
    commit = f"{int(rng.integers(0, 2**32)):08x}"
    lines, t = [], start
    for test, lens in TESTS.items():
        ns = llama_jsonl.samples_for(rng, rates[test], sum(lens.values()), a("repetitions"), a("rep_cv")[test])
        t += timedelta(seconds=a("test_overhead_s"))
        fields = {
            "build_commit": commit, "build_number": a("builds")[backend],
            "cpu_info": "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", "gpu_info": _GPU[backend][1],
            "backends": _GPU[backend][0], "model_filename": model["path"], "model_type": model["model_type"],
            "model_size": model["model_size"], "model_n_params": model["model_n_params"],
            "n_batch": args["n_batch"], "n_ubatch": args["n_ubatch"], "n_threads": args["n_threads"],
            "cpu_mask": "0x0", "cpu_strict": False, "poll": 50, "type_k": "f16", "type_v": "f16",
            "n_gpu_layers": args["n_gpu_layers"], "n_cpu_moe": 0, "split_mode": "layer", "main_gpu": 0,
            "no_kv_offload": False, "flash_attn": args["flash_attn"], "devices": "auto",
            "tensor_split": "0.00", "tensor_buft_overrides": "none", "use_mmap": args["use_mmap"],
            "embeddings": False, "no_op_offload": 0, "no_host": False, **lens, "n_depth": 0,
            "test_time": (t - timedelta(hours=a("utc_offset_h"))).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        lines.append(llama_jsonl.line(fields, ns))
        t += timedelta(seconds=sum(ns) / 1e9)
    return "".join(lines), t


def _ratios(test: str) -> dict[str, float]:
    """Each losing backend's rate as a fraction of the winner's. `losing_ratios` names the losers
    of the recorded winners; when `winners` names another (`make marks` moves it), the backend it
    displaced takes the new winner's ratio, so the order below the winner stays as chosen."""
    ratios, win = dict(a("losing_ratios")[test]), a("winners")[test]
    if win not in BACKENDS:
        raise ValueError(f"winners.{test}: {win!r} is none of the backends ({', '.join(BACKENDS)})")
    if win in ratios:
        displaced = next(b for b in BACKENDS if b not in ratios and b != win)
        ratios[displaced] = ratios.pop(win)
    return ratios


SERVER_OUTPUT_LEN = 512  # the write-up's "512 output" of the serving comparison, as on the H100


def _server_plan(T, seed: int) -> Plan:
    r, sp = a("server_run"), a("server_spread")
    med = T["strix_server_c1_median_ttft_s"].value
    return Plan(
        name="strix_server_c1", concurrency=1, input_len=r["input_len"],  # the write-up's figures are c=1
        output_len=SERVER_OUTPUT_LEN, num_prompts=r["num_prompts"], ttft_median=med,
        ttft_p99=med * a("server_ttft_p99_ratio"), ttft_min=med * sp["ttft_min_ratio"],
        ttft_sigma=sp["ttft_sigma"], ttft_tail=sp["ttft_tail"],
        tpot_median=T["strix_server_c1_median_tpot_s"].value,
        tpot_sigma=sp["tpot_sigma"], tpot_range=sp["tpot_range"], client_gap=a("client_gap_s"),
        gap_jitter=a("gap_jitter_s"), overhead=a("bench_overhead_s"), step_cv=sp["step_cv"],
        extreme_jitter=a("extreme_jitter"),
    )


def generate(out_dir: Path, published_path: Path, seed: int = SEED) -> None:
    """Write raw/, study.yml, PROVENANCE.md and SHA256SUMS into out_dir."""
    out_dir, published = Path(out_dir), load_published(published_path)
    T = targets(published, "strix_")
    docs.reset(out_dir)
    entries, values, rates_by = [], {}, {}
    t = datetime.fromisoformat(a("bench_date_local"))
    for k, backend in enumerate(BACKENDS):
        rng = np.random.Generator(np.random.PCG64([seed, k]))
        rates = {}
        for test in TESTS:
            best = T[f"strix_best_{test}_tps"].value
            ratio = _ratios(test).get(backend)
            rates[test] = best if ratio is None else best * ratio
        text, t_end = _llama_rows(rng, rates, backend, t)
        rel = f"raw/llama-bench/{backend.removeprefix('strix-')}.jsonl"
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / rel).write_text(text, encoding="utf-8")
        entries.append({"path": rel, "config": backend, "name": _NAMES[backend], "kind": "llama-bench",
                        "concurrency": 1, "date": t.date().isoformat(),
                        "notes": f"llama-bench -o jsonl: pp512 and tg128, {a('repetitions')} repetitions each"})
        rates_by[backend] = check.llama_values(out_dir / rel)
        t = t_end + timedelta(seconds=a("between_backends_s"))
    for test in TESTS:
        values[f"strix_best_{test}_tps"] = max(r[test] for r in rates_by.values())
    plan = _server_plan(T, seed)
    f = fit(plan, np.random.Generator(np.random.PCG64([seed, len(BACKENDS)])))
    start = datetime.fromisoformat(a("server_date_local"))
    stamp = (start + timedelta(seconds=f.duration)).strftime("%Y%m%d-%H%M%S")
    res = bench_json.result(
        date=stamp, model_id=GGUF, tokenizer_id=a("server_tokenizer"), max_concurrency=plan.concurrency,
        duration=f.duration, input_lens=[plan.input_len] * plan.num_prompts,
        output_lens=[plan.output_len] * plan.num_prompts, ttfts=[float(x) for x in f.ttfts],
        itls=f.itls, start_times=[float(a("perf_counter_at_run_s") + s) for s in f.starts])
    rel = f"raw/llama-server/{bench_json.file_name(GGUF, plan.concurrency, stamp)}"
    bench_json.dump(res, out_dir / rel)
    entries.append({"path": rel, "config": "strix-llama-server", "name": plan.name, "kind": "ttft-4k",
                    "concurrency": plan.concurrency, "input_len": plan.input_len,
                    "output_len": plan.output_len, "dataset": "random", "ignore_eos": True, "seed": 0,
                    "date": start.date().isoformat(),
                    "notes": "vllm bench serve --backend openai against llama-server (our representation "
                             "of the published 4k-prompt TTFT and TPOT; see PROVENANCE.md)"})
    for metric, v in check.vllm_values(out_dir / rel).items():
        values[f"strix_server_c1_{metric}"] = v
    missed = check.problems(values, T)
    if missed:
        raise FitError("reconstruction misses published numbers:\n" + "\n".join(missed))
    docs.write_study(out_dir, docs.study(STUDY, TITLE, DESCRIPTION, generator=__name__, seed=seed,
                                         sources=docs.sources(published, SOURCES), configs=configs(), files=entries))
    docs.finish(out_dir, _provenance(seed, T, values, rates_by), ASSUMPTIONS, SHOWS_IN, ROWS)


def _provenance(seed: int, T, values, rates_by) -> docs.Provenance:
    ttft, pp = T["strix_server_c1_median_ttft_s"].value, T["strix_best_pp512_tps"].value
    tpot, tg = T["strix_server_c1_median_tpot_s"].value, T["strix_best_tg128_tps"].value
    n_in = a("server_run")["input_len"]
    bench_rows = [[b, test, f"{rates_by[b][test]:.2f}",
                   "best (published)" if a("winners")[test] == b else
                   f"{_ratios(test)[b]:.2f} x best (assumed)"]
                  for b in BACKENDS for test in TESTS]
    return docs.Provenance(
        study=STUDY,
        summary="Seeds 001 and 000 quote Strix Halo figures from the author's private benchmark notes; "
        "no raw output was published. We rebuilt native files that reproduce those figures so the book "
        "can compute them from raw data like any other study.",
        generator=__name__, helpers=["llama_jsonl", "fit", "shape", "targets", "bench_json"],
        command=docs.command("strix", STUDY, seed, "data/h100-dense-vs-moe-mtp/published.yml"), seed=seed,
        made=["Targets: the Strix Halo cells of the H100 study's `published.yml`. This folder's "
              "`published.yml` holds the same cells (for the Strix Halo chapter) and yields the same "
              "raw files.",
              "`raw/llama-bench/*.jsonl`: `llama-bench -o jsonl` lines laid out like llama.cpp's JSONL "
              "printer (field order of a recent build, uint64 nanosecond statistics, 6-decimal rates).",
              "`raw/llama-server/*.json`: a `vllm bench serve --save-result --save-detailed` result."],
        sections=[
            docs.Section("Published numbers used as targets", [
                docs.Table(["Published", "Source", "Where", "Value", "Run shaped", "Ours, printed alike"],
                           docs.target_rows(T, values, lambda n: split_name(n)[0])),
                "\n`strix_best_<test>` is the best `avg_ts` over the three llama-bench files. Per backend:\n\n",
                docs.Table(["Backend config", "Test", "avg_ts", "Role"], bench_rows)]),
            docs.Section("Our representation of the 4k-prompt figures", [
                "The like-for-like table of seed 000 gives Strix Halo a median TTFT at 4k input and a "
                "median TPOT. llama-bench measures neither, so we represent them as a single-client "
                "`vllm bench serve --backend openai` run against llama-server (config "
                "`strix-llama-server`, run `strix_server_c1`). That the author measured them this way "
                "is our assumption; the seeds do not say.\n"]),
            docs.Section("Inconsistencies found while fitting", [
                f"- A median TTFT of {ttft * 1000:.0f} ms for a {n_in:,}-token prompt means prefill at "
                f"about {n_in / ttft:,.0f} t/s, {n_in / ttft / pp:.1f} x the published pp512 rate of "
                f"{pp:,.0f} t/s. At {pp:,.0f} t/s the same prompt would take {n_in / pp:.2f} s, and a "
                f"7,000-token prompt {7000 / pp:.2f} s (seed 001 says only \"over 400 ms\"). Both "
                "figures are reproduced as published; the book's claims ledger reports the conflict.\n"
                f"- The median TPOT of {tpot * 1000:.1f} ms is {1 / tpot:.1f} t/s of decode, in line "
                f"with the best tg128 of {tg:.0f} t/s.\n"]),
        ],
        after=[docs.Section("What was synthesised", [
            "- llama-bench: five repetitions per test around each backend's rate (seeded noise, "
            "integer nanoseconds; avg/stddev recomputed exactly as llama-bench does). Which backend "
            "wins each test and by how much the others lose are assumptions (table above). Build "
            "commits, build numbers, test times, model size and parameter count are assumptions.\n"
            "- llama-server run: per-request TTFT and TPOT shaped so the medians print as published, "
            "511 one-token ITLs per request with per-step noise, timestamps from an assumed clock, "
            "a small client gap (no aggregate was published for it), empty `generated_texts`.\n"])],
        hand_written=["published.yml"],
    )

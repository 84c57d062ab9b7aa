"""2x RTX 3090, dense 27B vs sparse 35B-A3B (seed 002), with tool-call reliability (seed 003).

Everything the chapter shows is computed here from the study's tidy tables: the five speed
measurements and the MoE's advantage, the start-up logs' KV figures checked against each
other and against the models' architecture, GPU memory, the gauntlet, tool-call error
rates with Wilson intervals and Fisher's exact tests, the failure-class breakdown and the
recovery behaviour after a denial.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...analysis import closed_loop, energy, rate_sweep
from ...analysis.proportions import compare_rates, holm, wilson
from ...analysis.serving import add_serving_metrics, run_value_ids, run_values
from ...book import pipeline
from ...book import serving_points as points
from ...book.key_figures import accelerator_count, decode_context, key_figure_row, key_figures_table, speculative
from ...book.kinds import shared_glue
from ...format import config_label, fmt_rate, fmt_ratio, fmt_unit, platform_short
from ...ingest.textio import load_yaml
from ...ingest.tool_failures import CLASS_IDS, LABELS
from ...ledger import claims as claims_mod
from ...ledger.caveats import data_caveats, rule
from ...page import plots
from ...page.opening import opening_words
from ...page.palette import model_colour
from ...study.contract import Missing
from ...study.marks import Col, Glued, Shown, rows_table, table, union, value_ids, with_marks

STUDY = "3090-dense-vs-sparse"
MIB_TO_GB = 1.048576e-3
GIB = 1 << 30
SPEED_ROWS = (  # (run kind, metric, label as a template over the run's context, lower is better)
    ("ttft-short", "median_ttft_s", "TTFT (short prompt)", True),
    ("decode-single", "decode_tps", "Decode (single stream)", False),
    ("prefill", "median_ttft_s", "Prefill TTFT ({input_len:,}-token prompt)", True),
    ("decode-long", "decode_tps", "Decode (long context)", False),
    ("concurrent", "output_tps", "Throughput @ {concurrency} concurrent", False),
)
# The run settings each row's name quotes (its label's fields): the name rests on those cells.
QUOTES = {kind: [f for _, f, _, _ in string.Formatter().parse(label) if f] for kind, _, label, _ in SPEED_ROWS}
# Glue keys of each speed row: column of speed_table -> key.
SPEED_GLUE = {
    "ttft-short": {"dense": "dense_ttft_short", "moe": "moe_ttft_short", "advantage": "adv_ttft_short"},
    "decode-single": {"dense": "dense_decode_single", "moe": "moe_decode_single", "advantage": "adv_decode_single"},
    "prefill": {"dense": "dense_prefill", "moe": "moe_prefill", "advantage": "adv_prefill"},
    "decode-long": {"dense": "dense_decode_long", "moe": "moe_decode_long", "advantage": "adv_decode_long"},
    "concurrent": {"dense": "dense_concurrent", "moe": "moe_concurrent", "advantage": "adv_concurrent"},
}
SPEED_ROLES = {"dense": "dense", "sparse": "moe"}  # role -> its value-name key (this folder's CONTRACT)
HANDSHAKE = ("update-attempt-outcome", "update-stage-status", "ralf_spawn.py step_evaluator")


@dataclass
class Results(pipeline.ChapterResults):
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    arch: dict = field(default_factory=dict)
    reference: list = field(default_factory=list)
    rates: rate_sweep.RateSweeps = field(default_factory=rate_sweep.RateSweeps)  # the request-rate sweeps
    energy: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=energy.COLUMNS))  # per token
    closed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=closed_loop.COLUMNS))  # llama-benchy

    @property
    def configs(self) -> dict:
        return self.data.study.configs

    def short_of(self, config: str) -> str | None:
        """'dense' or 'moe' (the value-name key) for a configuration of the speed roles."""
        return SPEED_ROLES.get(self.roles.of_config.get(config, ""))

    def speed_configs(self) -> dict[str, str]:
        """short name (dense, moe) -> config id, for the configurations of the speed roles."""
        return {short: cid for role, short in SPEED_ROLES.items() if (cid := self.roles.first(role))}

    def label_of(self, short: str) -> str:
        cid = self.speed_configs().get(short)
        return config_label(cid, self.configs.get(cid, {})) if cid else short


def analyse(data_dir, published_file=None, architecture_file=None, confidence: float = 0.95,
            ttft_limits_s=rate_sweep.LIMITS_S, tpot_limit_s=None) -> Results:
    params = dict(confidence=confidence, ttft_limits_s=tuple(ttft_limits_s), tpot_limit_s=tpot_limit_s)
    published_file = published_file or Path(data_dir) / "published.yml"
    r = pipeline.start(STUDY, data_dir, published_file, params, results=Results)
    r.runs = add_serving_metrics(r.data["runs"], r.data["requests"], None)
    r.runs["decode_tps"] = 1.0 / r.runs["median_tpot_s"]
    r.values = run_values(r.runs)
    r.values.update({f"{k}_decode_tps": float(v) for k, v in zip(r.runs["key"], r.runs["decode_tps"])
                     if pd.notna(v) and isinstance(k, str)})
    cells = run_cells(r)
    r.value_ids = run_value_ids(r.runs, cells)
    r.value_ids.update({f"{k}_decode_tps": cells.at(i, "decode_tps") for i, k in zip(r.runs.index, r.runs["key"])
                        if isinstance(k, str) and cells.at(i, "decode_tps")})
    r.arch = load_architecture(architecture_file or Path(data_dir) / "architecture.yml")
    r.values.update(boot_values(r))
    r.values.update(gpu_values(r))
    r.value_ids.update(memory_value_ids(r))
    r.values.update(gauntlet_values(r))
    r.values.update(reliability_values(r))
    r.values.update(arch_values(r.arch))
    r.reference = (load_yaml(Path(published_file).read_text(encoding="utf-8")) or {}).get("reference") or []
    r.rates = rate_sweep.of_chapter(r, r.runs[r.runs["kind"] == "rate"])
    r.energy = energy.of_chapter(r)
    r.closed = closed_loop.points(r.data["llama_benchy"], list(r.rates.labels))
    _refine_sections(r)
    pipeline.finish(r, caveats=_caveats)
    return r


def _refine_sections(r: Results) -> None:
    """Sections the files allow but their contents do not fill (a log without start-up lines)."""
    def lacks(section, why):
        if r.sections.get(section) is None:
            r.sections[section] = Missing(r.spec.contract.section(section), [why])

    v = r.values
    facts = ("kv_cache_tokens", "max_concurrency", "max_model_len")
    have = {short: all(f"{short}_{f}" in v for f in facts) for short in ("dense", "moe")}
    if not any(have.values()):
        lacks("memory", "the KV cache size and maximum concurrency in a server's start-up lines")
    if not all(have.values()):
        lacks("memory-both", "the KV cache size and maximum concurrency in the start-up lines of both servers")
    k = kv_check(r)
    if not (len(k) and {"printed concurrency / (tokens / max len)", "reserved / needed"} <= set(k.columns)
            and k[["printed concurrency / (tokens / max len)", "reserved / needed"]].notna().all().all()):
        lacks("kv-check", "the layout of the dense or sparse model in architecture.yml, and the KV memory and "
                          "concurrency in their start-up lines")


# ---------------------------------------------------------------- architecture


def load_architecture(path) -> dict:
    """architecture.yml: per model layout values (with sources) and serving facts."""
    path = Path(path)
    if not path.is_file():
        return {"models": {}, "serving": {}, "sources": {}}
    doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    return {"models": doc.get("models") or {}, "serving": doc.get("serving") or {}, "sources": doc.get("sources") or {}}


def _v(entry):
    return entry["value"] if isinstance(entry, dict) else entry


def kv_bytes_per_token(model: dict, kv_bytes: float) -> float:
    """2 (K and V) x full-attention layers x KV heads x head dim x bytes per element."""
    return 2 * _v(model["full_attention_layers"]) * _v(model["kv_heads"]) * _v(model["head_dim"]) * kv_bytes


def arch_values(arch: dict) -> dict:
    out = {}
    kv_bytes = _v(arch["serving"].get("kv_bytes", math.nan))
    for short, m in arch["models"].items():
        for key in ("layers", "full_attention_layers", "kv_heads", "head_dim"):
            if key in m:
                out[f"arch_{short}_{key}"] = float(_v(m[key]))
        if all(k in m for k in ("full_attention_layers", "kv_heads", "head_dim")):
            out[f"arch_{short}_kv_bytes_per_token"] = kv_bytes_per_token(m, kv_bytes)
    return out


def hybrid_block_size(m: dict, serving: dict) -> int | None:
    """Attention block size vLLM picks so one page holds a linear-attention state (assumed dtype)."""
    need = ("kv_heads", "head_dim", "linear_key_heads", "linear_value_heads", "linear_key_head_dim",
            "linear_value_head_dim", "conv_kernel")
    if not all(k in m for k in need) or "state_bytes" not in serving:
        return None
    tp, kvb, sb = _v(serving["tensor_parallel"]), _v(serving["kv_bytes"]), _v(serving["state_bytes"])
    attn = 2 * (_v(m["kv_heads"]) // tp) * _v(m["head_dim"]) * kvb
    ssm = (_v(m["linear_value_heads"]) // tp) * _v(m["linear_key_head_dim"]) * _v(m["linear_value_head_dim"])
    conv = (2 * _v(m["linear_key_heads"]) * _v(m["linear_key_head_dim"])
            + _v(m["linear_value_heads"]) * _v(m["linear_value_head_dim"])) // tp
    page = (ssm + conv * (_v(m["conv_kernel"]) - 1)) * sb
    return int(16 * math.ceil(page / (16 * attn)))


# ---------------------------------------------------------------- start-up logs and GPU memory


def boot_facts(r: Results) -> pd.DataFrame:
    """One row per config and fact: the last value per process, summed over workers where per GPU."""
    boot = r.data["boot"]
    if not len(boot):
        return pd.DataFrame(columns=["short", "fact", "value", "per_worker", "workers"])
    rows = []
    proc = boot["process"] if "process" in boot else pd.Series("", index=boot.index)
    boot = boot.assign(process=proc.fillna(""))
    for (config, fact), g in boot.groupby(["config", "fact"], sort=False):
        short = r.short_of(config)
        if short is None:
            continue
        last = g.sort_values("line").groupby("process").tail(1)
        nums = last["value_num"].dropna()
        workers = last["process"].str.startswith("Worker")
        rows.append(dict(short=short, fact=fact, value=float(nums.iloc[-1]) if len(nums) else math.nan,
                         total=float(nums.sum()) if len(nums) else math.nan,
                         workers=int(workers.sum()), text=str(last["value"].iloc[-1])))
    return pd.DataFrame(rows)


def boot_values(r: Results) -> dict:
    out = {}
    facts = boot_facts(r)
    for row in facts.itertuples():
        if math.isnan(row.value):
            continue
        out[f"{row.short}_{row.fact}"] = row.value
        if row.workers > 1:
            out[f"{row.short}_{row.fact}_all_gpus"] = row.total
    return out


def memory_value_ids(r: Results) -> dict:
    """The assumption ids behind boot_values (the start-up lines each fact's value was read from)
    and gpu_values (every nvidia-smi sample of the configuration): `make marks` moved the log's
    weights per GPU and KV memory, and the card's size, unmarked in the memory tables."""
    out = {}
    boot = r.data["boot"]
    if len(boot):
        cells = r.cells(boot, "boot")
        for (config, fact), g in boot.groupby(["config", "fact"], sort=False):
            short = r.short_of(config)
            if short is not None:
                ids = cells.union(["value", "value_num"], g.index)
                out[f"{short}_{fact}"] = out[f"{short}_{fact}_all_gpus"] = ids
    gpu = r.data["gpu_samples"]
    if len(gpu):
        cells = r.cells(gpu, "gpu_samples")
        for config, g in gpu.groupby("config"):
            short = r.short_of(config)
            if short is not None:
                used, total = cells.union("memory_used_mib", g.index), cells.union("memory_total_mib", g.index)
                out.update({f"{short}_vram_per_card_gb": used, f"{short}_vram_total_gb": used,
                            f"{short}_vram_cards": cells.union("gpu_index", g.index), f"{short}_card_total_gb": total})
    # a value the write-up published (the memory per card and on both cards, 2 cards) is its number
    # on files fit to it: a median of samples a choice moves around it (`make marks`: the GPU log's
    # timing moved samples, never the median) carries no choice
    pinned = claims_mod.pinned_names(r.published) if r.data.study.reconstructed else set()
    return {k: v for k, v in out.items() if v and k not in pinned}


def gpu_values(r: Results) -> dict:
    """Median memory used per card while serving; per card (mean of cards) and both cards, in GB."""
    gpu = r.data["gpu_samples"]
    out = {}
    if not len(gpu):
        return out
    for config, g in gpu.groupby("config"):
        short = r.short_of(config)
        if short is None:
            continue
        med = g.groupby("gpu_index")["memory_used_mib"].median()
        out[f"{short}_vram_per_card_gb"] = float(med.mean()) * MIB_TO_GB
        out[f"{short}_vram_total_gb"] = float(med.sum()) * MIB_TO_GB
        out[f"{short}_vram_cards"] = float(len(med))
        total = g.groupby("gpu_index")["memory_total_mib"].median()
        out[f"{short}_card_total_gb"] = float(total.mean()) * MIB_TO_GB
    return out


def memory_table(r: Results) -> pd.DataFrame:
    """The memory section: the log's KV figures, what they imply, and nvidia-smi."""
    v = r.values
    rows = []
    for short, cid in r.speed_configs().items():
        c = r.configs[cid]
        util = (c.get("serve_args") or {}).get("gpu_memory_utilization")
        tokens, conc, ctx = (v.get(f"{short}_kv_cache_tokens"), v.get(f"{short}_max_concurrency"),
                             v.get(f"{short}_max_model_len"))

        def shown(text, *names):  # a cell with what the values it is computed from rest on
            return Shown(text, value_ids(r.value_ids, [f"{short}_{n}" for n in names]))
        rows.append({
            "model": c.get("model"),
            "KV cache (log), tokens": shown(fmt_rate(tokens), "kv_cache_tokens"),
            f"max concurrency at {fmt_rate(ctx)} tokens (log)": shown(fmt_ratio(conc), "max_concurrency"),
            "KV tokens / max model len": shown(fmt_ratio(tokens / ctx if tokens and ctx else None),
                                               "kv_cache_tokens", "max_model_len"),
            "KV cache memory (log, all GPUs)": shown(fmt_unit(v.get(f"{short}_kv_cache_gib_all_gpus"), "GiB", 2),
                                                     "kv_cache_gib_all_gpus"),
            "weights per GPU (log)": shown(fmt_unit(v.get(f"{short}_weights_gib"), "GiB", 2), "weights_gib"),
            "memory used per card (nvidia-smi)": shown(fmt_unit(v.get(f"{short}_vram_per_card_gb"), "GB", 1),
                                                       "vram_per_card_gb"),
            "both cards": shown(fmt_unit(v.get(f"{short}_vram_total_gb"), "GB", 1), "vram_total_gb"),
            "utilisation budget per card": shown(fmt_unit(util * v[f"{short}_card_total_gb"], "GB", 1)
                                                 if util and v.get(f"{short}_card_total_gb") else "–",
                                                 "card_total_gb"),
        })
    return rows_table(rows, r.assumed_why)


def kv_check(r: Results) -> pd.DataFrame:
    """KV capacity against the architecture: bytes per token, memory implied, and the log's own numbers."""
    rows = []
    kv_bytes = _v(r.arch["serving"].get("kv_bytes", math.nan))
    for short, cid in r.speed_configs().items():
        m = r.arch["models"].get(short)
        v = r.values
        tokens, conc, ctx = (v.get(f"{short}_kv_cache_tokens"), v.get(f"{short}_max_concurrency"),
                             v.get(f"{short}_max_model_len"))
        reserved = v.get(f"{short}_kv_cache_gib_all_gpus")
        row = {"short": short, "model": (m or {}).get("model", r.configs[cid].get("model"))}
        if m:
            bpt = kv_bytes_per_token(m, kv_bytes)
            row.update({
                "full-attention layers": _v(m["full_attention_layers"]), "KV heads": _v(m["kv_heads"]),
                "head dim": _v(m["head_dim"]), "KV bytes": kv_bytes, "KV bytes per token": bpt,
            })
            if tokens:
                row["GiB the printed tokens need"] = tokens * bpt / GIB
            if reserved:
                row["tokens the reserved memory holds"] = reserved * GIB / bpt
            block = hybrid_block_size(m, r.arch["serving"])
            row["block size (assumed state dtype)"] = block
            row["tokens are whole blocks"] = None if not (block and tokens) else bool(tokens % block == 0)
        row.update({"printed KV tokens": tokens, "KV GiB reserved (log)": reserved, "max model len": ctx,
                    "printed concurrency": conc,
                    "tokens / max model len": tokens / ctx if tokens and ctx else None})
        if reserved and "GiB the printed tokens need" in row:
            row["reserved / needed"] = reserved / row["GiB the printed tokens need"]
            row["concurrency the reserved memory allows"] = (row["tokens the reserved memory holds"] / ctx
                                                             if ctx else None)
        if conc and row["tokens / max model len"]:
            row["printed concurrency / (tokens / max len)"] = conc / row["tokens / max model len"]
        rows.append(row)
    return pd.DataFrame(rows)


def kv_check_display(r: Results) -> pd.DataFrame:
    k = kv_check(r)
    if not len(k):
        return k
    out = pd.DataFrame({
        "model": k["model"],
        "full-attn layers × KV heads × head dim": [
            f"{a} × {b} × {c}"
            for a, b, c in zip(k.get("full-attention layers"), k.get("KV heads"), k.get("head dim"))],
        "KV per token": [f"{x / 1024:.0f} KiB" if pd.notna(x) else "–" for x in k.get("KV bytes per token")],
        **{shown: k[source].map(fmt) for shown, (source, fmt) in KV_SHOWN.items()},
    })
    marks = {shown: {i: kv_ids(r, short, source) for i, short in enumerate(k["short"])}
             for shown, (source, _) in KV_SHOWN.items()}
    return with_marks(out, marks, r.assumed_why)


# The KV table's columns from the log's figures: heading -> (kv_check column, format).
KV_SHOWN = {
    "printed KV tokens": ("printed KV tokens", fmt_rate),
    "memory those tokens need": ("GiB the printed tokens need", lambda v: fmt_unit(v, "GiB", 2)),
    "KV memory the log reserves": ("KV GiB reserved (log)", lambda v: fmt_unit(v, "GiB", 2)),
    "reserved / needed": ("reserved / needed", fmt_ratio),
    "tokens / max len": ("tokens / max model len", fmt_ratio),
    "printed concurrency": ("printed concurrency", fmt_ratio),
    "concurrency the reserved memory allows": ("concurrency the reserved memory allows", fmt_ratio),
}
# The start-up values each kv_check figure reads (the log's figures are start-up facts a
# generator wrote: `make marks` moved "20.74 GiB"); the architecture's numbers are published facts.
KV_READS = {"printed KV tokens": ["kv_cache_tokens"], "GiB the printed tokens need": ["kv_cache_tokens"],
            "KV GiB reserved (log)": ["kv_cache_gib_all_gpus"],
            "reserved / needed": ["kv_cache_gib_all_gpus", "kv_cache_tokens"],
            "tokens / max model len": ["kv_cache_tokens", "max_model_len"], "printed concurrency": ["max_concurrency"],
            "concurrency the reserved memory allows": ["kv_cache_gib_all_gpus", "max_model_len"],
            "printed concurrency / (tokens / max len)": ["max_concurrency", "kv_cache_tokens", "max_model_len"]}


def kv_ids(r: Results, short: str, *columns: str) -> tuple:
    """The choices one model's KV figures (kv_check columns) rest on."""
    return union(*(value_ids(r.value_ids, [f"{short}_{n}" for n in KV_READS.get(c, ())]) for c in columns))


# ---------------------------------------------------------------- speed


DERIVED = {"decode_tps": ("median_tpot_s",)}  # r.runs columns this chapter computes, from which


def run_cells(r: Results):
    """The assumption ids of every cell of r.runs."""
    return r.cells(r.runs, "runs", derived=DERIVED)


def _speed_run(r: Results, short: str, kind: str) -> pd.Series | None:
    cid = r.speed_configs().get(short)
    hit = r.runs[(r.runs["config"] == cid) & (r.runs["kind"] == kind)] if cid else r.runs.iloc[:0]
    return hit.iloc[0] if len(hit) else None


def speed_table(r: Results) -> pd.DataFrame:
    """The speed measurements per model and the sparse model's advantage (dense/sparse for
    times, sparse/dense for rates); a row only for kinds the data has."""
    rows = []
    for kind, metric, label, lower in SPEED_ROWS:
        d, m = _speed_run(r, "dense", kind), _speed_run(r, "moe", kind)
        if d is None and m is None:
            continue
        ref = d if d is not None else m
        ctx = {k: int(ref[k]) if pd.notna(ref.get(k)) else 0 for k in ("input_len", "concurrency")}
        dv = float(d[metric]) if d is not None and pd.notna(d[metric]) else None
        mv = float(m[metric]) if m is not None and pd.notna(m[metric]) else None
        adv = (dv / mv if lower else mv / dv) if dv and mv else None
        rows.append(dict(kind=kind, metric=label.format(**ctx), dense=dv, moe=mv, advantage=adv,
                         lower_is_better=lower, unit=metric))
    return pd.DataFrame(rows, columns=["kind", "metric", "dense", "moe", "advantage", "lower_is_better", "unit"])


def speed_ids(r: Results, kind: str, unit: str) -> dict[str, tuple]:
    """dense / moe / advantage -> the assumption ids of a speed row's values."""
    cells = run_cells(r)
    out = {}
    for short in ("dense", "moe"):
        run = _speed_run(r, short, kind)
        out[short] = cells.at(run.name, unit) if run is not None else ()
    out["advantage"] = union(out["dense"], out["moe"])
    return out


def speed_display(r: Results) -> pd.DataFrame:
    s = speed_table(r)

    def show(v, unit):
        if v is None or pd.isna(v):
            return "–"
        return f"{v * 1000:,.0f} ms" if unit.endswith("_s") else f"{v:,.1f} tok/s"

    rows = []
    for row in s.itertuples():
        ids = speed_ids(r, row.kind, row.unit)
        out = {"metric": row.metric}
        for short in ("dense", "moe"):
            if short in r.speed_configs():
                out[r.label_of(short)] = Shown(show(getattr(row, short), row.unit), ids[short])
        if r.has("head-to-head"):
            a = row.advantage
            out[f"advantage of {r.label_of('moe')}"] = Shown(
                "–" if pd.isna(a) else f"{a:.2f}× " + ("lower" if row.lower_is_better else "higher"), ids["advantage"])
        rows.append(out)
    return rows_table(rows, r.assumed_why)


def runs_table(r: Results) -> pd.DataFrame:
    shown = {c: Col(c) for c in ("name", "config", "kind", "concurrency", "input_len", "output_len", "completed")}
    shown.update({
        "TTFT p50": Col("median_ttft_s", lambda v: f"{fmt_rate(v * 1000, 1)} ms" if pd.notna(v) else "–"),
        "TPOT p50": Col("median_tpot_s", lambda v: f"{fmt_rate(v * 1000, 2)} ms" if pd.notna(v) else "–"),
        "output t/s": Col("output_tps", lambda v: fmt_rate(v, 1)),
        "MTP acceptance length": Col("spec_acceptance_length", lambda v: fmt_rate(v, 2)),
    })
    return table(r.runs, {k: c for k, c in shown.items() if set(c.sources) <= set(r.runs.columns)}, run_cells(r))


def speed_figure(r: Results) -> plt.Figure:
    s = speed_table(r)
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.9))
    s = s.astype({"lower_is_better": bool})
    times, rates = s[s["lower_is_better"]], s[~s["lower_is_better"]]
    names = {short: r.label_of(short) for short in ("dense", "moe") if short in r.speed_configs()}
    colours = plots.config_colours({names[short]: r.configs[r.speed_configs()[short]].get("model") for short in names})
    for ax, part, xlabel, scale, fmt in ((axes[0], times, "milliseconds (lower is better)", 1000.0, "{:,.0f} ms"),
                                         (axes[1], rates, "tokens/s (higher is better)", 1.0, "{:,.0f}")):
        if not len(part):
            ax.set_axis_off()
            continue
        long = part.melt(id_vars=["metric"], value_vars=list(names), var_name="model",
                         value_name="v").dropna(subset=["v"])
        long["v"] = long["v"] * scale
        long["model"] = long["model"].map(names)
        sns.barplot(data=long, y="metric", x="v", hue="model", hue_order=list(names.values()), ax=ax,
                    orient="h", legend=False, saturation=1, palette=colours)
        for container in ax.containers:
            ax.bar_label(container, labels=[fmt.format(b.get_width()) for b in container], padding=3,
                         fontsize=plots.MIN_FONT_PT)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("")
        ax.set_xlim(0, long["v"].max() * 1.25)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[n]) for n in names.values()]
    legend = fig.legend(handles, list(names.values()), loc="lower center", ncol=2, frameon=False)
    plots.mark_series(fig, legend, _speed_series(r, s, names), r.assumed_why)
    platforms = {platform_short(r.configs[c]) for c in r.speed_configs().values()}
    fig.suptitle(f"Speed measurements on {' / '.join(sorted(platforms))}", fontweight="bold")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def _speed_series(r: Results, s: pd.DataFrame, names: dict) -> dict:
    """Per model of the speed figure: (ids, every bar assumed) of the cells its bars read."""
    rows = [speed_ids(r, k, u) for k, u in zip(s["kind"], s["unit"])]
    out = {names[short]: (union(*(x[short] for x in rows)), all(x[short] for x in rows)) for short in names}
    return {k: v for k, v in out.items() if v[0]}


# ---------------------------------------------------------------- gauntlet


def _served(r: Results) -> dict[str, str]:
    """The gauntlet's model names (servers' served_model_name) -> dense / moe."""
    return {r.configs[cid]["served_model_name"]: short for short, cid in r.speed_configs().items()
            if r.configs[cid].get("served_model_name")}


def gauntlet_values(r: Results) -> dict:
    g = r.data["gauntlet"]
    out = {}
    served = _served(r)
    for row in g.itertuples():
        short = served.get(row.model, row.model)
        task = row.task_id if isinstance(row.task_id, str) and row.task_id else None
        if task is None:
            continue
        if pd.notna(row.seconds):
            out[f"{short}_{task}_seconds"] = float(row.seconds)
        if pd.notna(row.checks_met):
            out[f"{short}_{task}_checks_met"] = float(row.checks_met)
        if isinstance(row.answer, str):
            try:
                out[f"{short}_{task}_answer"] = float(row.answer)
            except ValueError:
                pass
    return out


def gauntlet_table(r: Results) -> pd.DataFrame:
    g = r.data["gauntlet"]
    served = _served(r)
    rows = []
    for task, part in g.groupby("task_id", sort=False):
        row = {"task": part["task"].iloc[0]}
        secs = {}
        for p in part.itertuples():
            short = served.get(p.model, p.model)
            label = r.label_of(short) if short in ("dense", "moe") else p.model
            met = ("–" if pd.isna(p.checks_met)
                   else f"{int(p.checks_met)}/{int(p.checks_total) if pd.notna(p.checks_total) else '?'}")
            verified = {True: ", self-verified", False: ", not self-verified"}.get(
                None if pd.isna(p.self_verified) else bool(p.self_verified), "")
            answer = f", answer {p.answer}" if isinstance(p.answer, str) else ""
            row[label] = f"{met} checks{verified}{answer}, {p.seconds:.1f} s"
            secs[short] = p.seconds
        if {"dense", "moe"} <= set(secs):
            row[f"time advantage of {r.label_of('moe')}"] = fmt_ratio(secs["dense"] / secs["moe"])
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- reliability


def _tool_names(r: Results) -> list[str]:
    """The tool-call logs' value-name keys (one per model), in file order."""
    tc = r.data["tool_calls"]
    return list(dict.fromkeys(tc["key"].dropna())) if len(tc) else []


def reliability_values(r: Results) -> dict:
    tc = r.data["tool_calls"]
    out = {}
    for name in _tool_names(r):
        t = tc[tc["key"] == name]
        n, denied = len(t), t[~t["allowed"].astype(bool)]
        out[f"{name}_sessions"] = float(t["session"].nunique())
        out[f"{name}_messages"] = float(t[["session", "message"]].drop_duplicates().shape[0])
        out[f"{name}_tool_calls"] = float(n)
        out[f"{name}_errors"] = float(len(denied))
        out[f"{name}_error_pct"] = 100.0 * len(denied) / n if n else math.nan
        counts = denied["failure_class"].value_counts()
        for cls in CLASS_IDS:
            out[f"{name}_per100_{cls.replace('-', '_')}"] = 100.0 * counts.get(cls, 0) / n if n else math.nan
        out[f"{name}_per100_total"] = out[f"{name}_error_pct"]
        stages, closed = ralf_stages(t)
        if stages:
            out[f"{name}_ralf_stages"] = float(stages)
            out[f"{name}_ralf_closed"] = float(closed)
            out[f"{name}_ralf_closed_pct"] = 100.0 * closed / stages
    return out


def ralf_stages(t: pd.DataFrame) -> tuple[int, int]:
    """(ralf stage sessions, those that emitted all three handshake calls) in one model's calls."""
    if "agent" not in t:
        return 0, 0
    ralf = t[t["agent"].fillna("").str.startswith("ralf/") & t["allowed"].astype(bool)]
    everyone = t[t["agent"].fillna("").str.startswith("ralf/")]
    closed = sum(all(s["target"].fillna("").str.contains(h, regex=False).any() for h in HANDSHAKE)
                 for _, s in ralf.groupby("session"))
    return int(everyone["session"].nunique()), int(closed)


def _label(r: Results, name: str) -> str:
    tc = r.data["tool_calls"]
    config = tc.loc[tc["key"] == name, "config"].iloc[0]
    return config_label(config, r.configs.get(config, {}))


def reliability_table(r: Results) -> pd.DataFrame:
    conf = r.params["confidence"]
    rows = []
    for name in _tool_names(r):
        n, k = int(r.values[f"{name}_tool_calls"]), int(r.values[f"{name}_errors"])
        lo, hi = wilson(k, n, conf)
        rows.append({"model": _label(r, name), "name": name, "sessions": int(r.values[f"{name}_sessions"]),
                     "messages": int(r.values[f"{name}_messages"]), "tool calls": n, "errors": k,
                     "error rate": k / n, "low": lo, "high": hi})
    return pd.DataFrame(rows, columns=["model", "name", "sessions", "messages", "tool calls", "errors",
                                       "error rate", "low", "high"])


def reliability_display(r: Results) -> pd.DataFrame:
    t = reliability_table(r)
    conf = f"{r.params['confidence']:.0%}"
    return pd.DataFrame({
        "model": t["model"], "sessions": t["sessions"], "messages": t["messages"], "tool calls": t["tool calls"],
        "errors": t["errors"], "error rate": t["error rate"].map(lambda v: f"{v:.1%}"),
        f"{conf} Wilson interval": [f"{lo:.1%} – {hi:.1%}" for lo, hi in zip(t["low"], t["high"])],
    })


def pairwise_tests(r: Results) -> pd.DataFrame:
    t = reliability_table(r).set_index("name")
    rows = []
    if len(t) < 2:
        return pd.DataFrame(columns=["pair", "a", "b", "rate_1", "rate_2", "difference", "ratio", "p_fisher",
                                     "p_holm", "intervals_overlap"])
    for a, b in combinations(t.index, 2):
        c = compare_rates(int(t.loc[a, "errors"]), int(t.loc[a, "tool calls"]),
                          int(t.loc[b, "errors"]), int(t.loc[b, "tool calls"]), r.params["confidence"])
        rows.append({"pair": f"{t.loc[a, 'model']} vs {t.loc[b, 'model']}", "a": a, "b": b, **c})
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = holm(list(out["p_fisher"]))
    return out


def pairwise_display(r: Results) -> pd.DataFrame:
    p = pairwise_tests(r)
    return pd.DataFrame({
        "pair": p["pair"],
        "error rates": [f"{x:.1%} vs {y:.1%}" for x, y in zip(p["rate_1"], p["rate_2"])],
        "difference": p["difference"].map(lambda v: f"{v * 100:+.1f} points"),
        "rate ratio": p["ratio"].map(fmt_ratio),
        "Fisher exact p": p["p_fisher"].map(lambda v: f"{v:.3f}"),
        f"Holm-adjusted p ({len(p)} pairs)": p["p_holm"].map(lambda v: f"{v:.3f}"),
        "intervals overlap": p["intervals_overlap"].map({True: "yes", False: "no"}),
    })


BREAKDOWN_COLUMNS = ["model", "name", "class", "label", "per100"]


def breakdown(r: Results) -> pd.DataFrame:
    """Errors per 100 tool calls by failure class (long form); its columns even without
    tool-call logs, so that the download keeps its header."""
    rows = []
    for name in _tool_names(r):
        for cls in CLASS_IDS:
            rows.append({"model": _label(r, name), "name": name, "class": cls, "label": LABELS[cls],
                         "per100": r.values[f"{name}_per100_{cls.replace('-', '_')}"]})
    return pd.DataFrame(rows, columns=None if rows else BREAKDOWN_COLUMNS)


def breakdown_display(r: Results) -> pd.DataFrame:
    b = breakdown(r)
    if not len(b):
        return b
    wide = b.pivot(index="label", columns="model", values="per100").reindex([LABELS[c] for c in CLASS_IDS])
    wide = wide[[_label(r, n) for n in _tool_names(r)]]
    total = wide.sum().to_frame().T
    total.index = ["Total"]
    wide = pd.concat([wide, total]).map(lambda v: f"{v:.2f}")
    return (wide.reset_index().rename(columns={"index": "failure class"}))


def breakdown_figure(r: Results) -> plt.Figure:
    b = breakdown(r)
    fig, ax = plt.subplots(figsize=(9, 4.6))
    if not len(b):
        ax.text(0.5, 0.5, "no tool-call logs in this data", ha="center", va="center", transform=ax.transAxes)
        return fig
    b = b[b.groupby("class")["per100"].transform("max") > 0]
    sns.barplot(data=b, y="label", x="per100", hue="model", ax=ax, orient="h", saturation=1,
                palette={m: model_colour(m) for m in b["model"].unique()})
    ax.set_xlabel("denied tool calls per 100 calls")
    ax.set_ylabel("")
    ax.legend(title=None, fontsize=plots.MIN_FONT_PT, loc="lower right")
    ax.set_title("Failure classes of denied tool calls")
    fig.tight_layout()
    return fig


def rates_figure(r: Results) -> plt.Figure:
    t = reliability_table(r)
    fig, ax = plt.subplots(figsize=(7, 2.8))
    y = np.arange(len(t))
    for yi, model, rate, lo, hi in zip(y, t["model"], t["error rate"], t["low"], t["high"]):  # in its book colour
        ax.errorbar(rate * 100, yi, xerr=[[(rate - lo) * 100], [(hi - rate) * 100]], fmt="o", capsize=4,
                    color=model_colour(model))
    ax.set_yticks(y, t["model"])
    ax.set_xlabel(f"tool-call error rate, % ({r.params['confidence']:.0%} Wilson interval)")
    ax.set_xlim(left=0)
    ax.invert_yaxis()
    fig.tight_layout()
    return fig


def recovery(r: Results) -> pd.DataFrame:
    """What each model did right after a denied call, and whether ralf stages closed properly."""
    tc = r.data["tool_calls"]
    rows = []
    for name in _tool_names(r):
        t = tc[tc["key"] == name].sort_values(["session", "line"])
        nxt_denied = nxt_allowed = ended = pivot = 0
        longest = 0
        for _, s in t.groupby("session", sort=False):
            allowed = s["allowed"].astype(bool).tolist()
            targets = s["target"].fillna("").tolist()
            run = 0
            for i, ok in enumerate(allowed):
                run = 0 if ok else run + 1
                longest = max(longest, run)
                if ok:
                    continue
                if i + 1 == len(allowed):
                    ended += 1
                elif allowed[i + 1]:
                    nxt_allowed += 1
                    pivot += _script(targets[i + 1]) != _script(targets[i])
                else:
                    nxt_denied += 1
        stages, closed = ralf_stages(t)
        denied = nxt_denied + nxt_allowed + ended
        rows.append({"model": _label(r, name), "name": name, "denied calls": denied,
                     "next call denied again": nxt_denied, "next call allowed": nxt_allowed,
                     "of which another script or tool": pivot, "session ended on a denial": ended,
                     "longest run of denials": longest, "ralf stage sessions": stages,
                     "closed with all 3 handshake calls": closed})
    return pd.DataFrame(rows, columns=["model", "name", "denied calls", "next call denied again", "next call allowed",
                                       "of which another script or tool", "session ended on a denial",
                                       "longest run of denials", "ralf stage sessions",
                                       "closed with all 3 handshake calls"])


def recovery_display(r: Results) -> pd.DataFrame:
    rec = recovery(r)

    def share(k, n):
        return f"{k} ({k / n:.0%})" if n else "–"

    out = pd.DataFrame({
        "model": rec["model"], "denied calls": rec["denied calls"],
        "next call denied again (retry)": [
            share(k, n) for k, n in zip(rec["next call denied again"], rec["denied calls"])],
        "next call allowed": [share(k, n) for k, n in zip(rec["next call allowed"], rec["denied calls"])],
        "…with another script or tool (pivot)": [
            share(k, n) for k, n in zip(rec["of which another script or tool"], rec["denied calls"])],
        "longest run of denials": rec["longest run of denials"],
        "ralf stages closed with all 3 handshake calls": [
            f"{c} of {s}" for c, s in zip(rec["closed with all 3 handshake calls"], rec["ralf stage sessions"])],
    })
    # every count reads the model's calls in order: what was called, whether it was allowed, in which
    # session (`make marks`: the tool-call logs a generator wrote moved every count, unmarked)
    tc = r.data["tool_calls"]
    cells = r.cells(tc, "tool_calls")
    read = [c for c in ("allowed", "target", "session", "line", "tool") if c in tc.columns]
    ids = {i: cells.union(read, tc.index[tc["key"] == name]) for i, name in enumerate(rec["name"])}
    # a count the write-up published (the errors of the reliability table, the ralf claims) is the
    # write-up's number on files fit to it, whatever a generator chose around it (pipeline.finish)
    fitted = claims_mod.pinned_names(r.published) | pipeline.fitted_names(r) if r.data.study.reconstructed else set()
    published = {"denied calls": ("_errors",), "ralf stages closed with all 3 handshake calls": ("_ralf_closed",
                                                                                                 "_ralf_closed_pct")}
    return with_marks(out, {c: {i: v for i, v in ids.items()
                                if not any(f"{rec['name'].iat[i]}{end}" in fitted for end in published.get(c, ()))}
                            for c in out.columns if c != "model"}, r.assumed_why)


def _script(target: str) -> str:
    """What a call runs: the script of a uv run command, else the first word."""
    words = str(target).split()
    for w in words:
        if w.endswith(".py"):
            return w.rsplit("/", 1)[-1]
    return words[0] if words else ""


# ---------------------------------------------------------------- published, reference, claims


def reference_tables(r: Results) -> list[tuple[str, pd.DataFrame]]:
    out = []
    for ref in r.reference:
        df = pd.DataFrame(ref["rows"], columns=ref["columns"])
        out.append((f"{ref['label']} [{ref['source']}]", df))
    return out


def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    for cid, c in r.configs.items():
        rows.append(dict(config=cid, role=r.roles.of_config.get(cid), source=c.get("source"),
                         platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"), speculative=c.get("speculative"),
                         kv_dtype=c.get("kv_dtype"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip()))
    return pd.DataFrame(rows)


def ingest_table(r: Results) -> pd.DataFrame:
    return r.ingest_report(["file", "format", "read", "ignored", "reasons"])


# ---------------------------------------------------------------- caveats


def _caveats(r: Results) -> list[dict]:
    speed = r.speed_configs()
    compared = [(speed["dense"], speed["moe"])] if {"dense", "moe"} <= set(speed) else []
    out = [c for c in data_caveats(r.data, r.runs, r.ledger, compared=compared)
           if c["origin"] != "data rule: small-samples"]  # no P99 is shown here
    return out + _kv_caveats(r) + _vram_caveat(r) + _decode_caveat(r) + _reliability_caveats(r) + _gauntlet_caveat(r)


def _off_one(ratio, tolerance: float) -> bool:
    """A ratio that should be 1 and is further from it than `tolerance` (absent: no)."""
    return ratio is not None and not math.isnan(ratio) and abs(ratio - 1) > tolerance


def _kv_caveats(r: Results) -> list[dict]:
    out = []
    k = kv_check(r)
    for row in k.to_dict("records"):
        ratio, rn = row.get("printed concurrency / (tokens / max len)"), row.get("reserved / needed")
        short = row["short"]
        if _off_one(ratio, 0.02):
            out.append(rule("start-up-log-disagrees", (
                f"{row['model']}: the start-up log prints a KV cache of {row['printed KV tokens']:,.0f} tokens, enough "
                f"for {row['tokens / max model len']:.2f} requests of {row['max model len']:,.0f} tokens, but a "
                f"maximum concurrency of {fmt_ratio(row['printed concurrency'])}, {ratio:.2f} times more. For hybrid "
                "models vLLM divides its shared block pool by the number of KV-cache groups when it prints the "
                "token count, but not when it computes the concurrency (vLLM issue #40691); the concurrency is the "
                "figure the scheduler uses."), ids=kv_ids(r, short, "tokens / max model len", "printed concurrency")))
        if _off_one(rn, 0.05):
            out.append(rule("kv-arithmetic", (
                f"{row['model']}: by the architecture ({row['full-attention layers']} full-attention layers × "
                f"{row['KV heads']} KV heads × {row['head dim']} × 2 × {row['KV bytes']:g} byte = "
                f"{row['KV bytes per token'] / 1024:.0f} KiB per token) the printed {row['printed KV tokens']:,.0f} "
                f"tokens need {row['GiB the printed tokens need']:.2f} GiB, while the log reserves "
                f"{row['KV GiB reserved (log)']:.2f} GiB across the GPUs ({rn:.2f}×). That memory would hold "
                f"{row['concurrency the reserved memory allows']:.2f} full-length requests, close to the printed "
                "concurrency; the token count understates the capacity."),
                ids=kv_ids(r, short, "reserved / needed", "concurrency the reserved memory allows")))
        if row.get("tokens are whole blocks") is False:
            out.append(rule("kv-block-size", (
                f"{row['model']}: the printed token count is not a whole number of "
                f"{row['block size (assumed state dtype)']}"
                "-token blocks under the assumed state dtype (architecture.yml); the assumed layout may be wrong."),
                ids=kv_ids(r, short, "printed KV tokens")))
    return out


def _vram_caveat(r: Results) -> list[dict]:
    v, speed = r.values, r.speed_configs()
    if not {"dense", "moe"} <= set(speed):
        return []
    utils = {s: (r.configs[c].get("serve_args") or {}).get("gpu_memory_utilization") for s, c in speed.items()}
    d, m = v.get("dense_vram_per_card_gb"), v.get("moe_vram_per_card_gb")
    if not (d and m) or utils["dense"] != utils["moe"] or not utils["dense"] or abs(d - m) < 0.5:
        return []
    budget = utils["dense"] * v["dense_card_total_gb"]
    return [rule("vram-vs-utilisation", (
        f"Both servers ran with `--gpu-memory-utilization {utils['dense']}` (about {budget:.1f} GB of each card), and "
        "vLLM sizes the KV cache to fill that budget whatever the model; yet nvidia-smi shows "
        f"{d:.1f} GB per card for the dense model and {m:.1f} GB for the MoE ({d - m:.1f} GB apart). The smaller "
        "footprint is not a property of the model at a fixed utilisation: the two readings were probably taken "
        "differently (or other processes shared the cards).")), ]


def _decode_caveat(r: Results) -> list[dict]:
    out = []
    for short, cid in r.speed_configs().items():
        single, long_ = (r.values.get(f"{short}_decode_single_decode_tps"),
                         r.values.get(f"{short}_decode_long_decode_tps"))
        if single and long_ and long_ > single * 1.02:
            spec = speculative(r.configs[cid])
            why = (f"With speculative decoding ({spec}) a higher draft acceptance on the long prompt could explain it."
                   if spec else
                   "This server ran without speculative decoding, so nothing in the published setup explains it; "
                   "the two rows were probably measured with different prompts or output lengths.")
            out.append(rule("decode-long-faster", (
                f"{r.configs[cid].get('model')}: decode at long context ({long_:.0f} tok/s) is faster than "
                f"single-stream decode ({single:.0f} tok/s). Decode normally slows as the context grows. {why}")))
    return out


def _reliability_caveats(r: Results) -> list[dict]:
    out = []
    tc = r.data["tool_calls"]
    if not len(tc):
        return out
    speed = {cid: r.configs[cid] for cid in r.speed_configs().values()}
    rel_configs = {c: r.configs[c] for c in tc["config"].unique()}
    rigs = {c.get("platform") for c in rel_configs.values()}
    if speed and (rigs != {c.get("platform") for c in speed.values()}
                  or {c.get("model") for c in rel_configs.values()} != {c.get("model") for c in speed.values()}):
        versions = {c.get("engine_version") for c in rel_configs.values()}
        out.append(rule("reliability-models-differ", (
            "The reliability logs come from other servers than the speed runs: "
            + ", ".join(f"{c.get('model')} ({c.get('quantisation')})" for c in rel_configs.values())
            + f" on {', '.join(sorted(str(x) for x in rigs))}, "
            f"vLLM {', '.join(sorted(str(v) for v in versions if v))}; "
            f"the speed runs used {', '.join(sorted(str(c.get('model')) for c in speed.values()))}. A model's error "
            "rate and its speed here are not measurements of the same deployment.")))
    p = pairwise_tests(r)
    if len(p):
        sig = p[p["p_fisher"] < 0.05]
        sig_holm = p[p["p_holm"] < 0.05]
        t = reliability_table(r)
        n = t["tool calls"]
        overlap = "overlap" if p["intervals_overlap"].all() else "do not all overlap"
        text = (f"With {n.min()}-{n.max()} tool calls per model, the {r.params['confidence']:.0%} Wilson intervals of "
                f"the {len(t)} error rates {overlap}. ")
        if len(sig):
            text += ("Fisher's exact test puts "
                     + "; ".join(f"{row.pair} at p = {row.p_fisher:.3f}" for row in sig.itertuples())
                     + " below 0.05 on its own, " + ("and it stays there" if len(sig_holm) else
                                                    f"but not after a Holm correction for the {len(p)} comparisons")
                     + ". ")
        others = p[p["p_fisher"] >= 0.05]
        if len(others):
            text += ("The other differences ("
                     + "; ".join(f"{row.pair}: p = {row.p_fisher:.2f}" for row in others.itertuples())
                     + ") are within what chance gives at these sample sizes.")
        out.append(rule("small-error-counts", text))
    return out


def _gauntlet_caveat(r: Results) -> list[dict]:
    g = r.data["gauntlet"]
    if not len(g):
        return []
    runs = g.groupby(["task_id", "model"]).size()
    return [rule("gauntlet-single-runs", (
        f"The gauntlet has {g['task_id'].nunique()} tasks with {int(runs.max())} graded answer per task and model, "
        "hand-timed: a tie on correctness and the time ratios are single observations, not rates.")),
    ] if runs.max() == 1 else []


# ---------------------------------------------------------------- glue and downloads


def glue_values(r: Results) -> dict:
    """Numbers and words quoted in the prose, each only when its data is there (the prose is
    tagged with its section and dropped without it)."""
    out = Glued(r.assumed_why)
    out.update({"dense_label": r.label_of("dense"), "moe_label": r.label_of("moe")})
    out.update(opening_words(r))  # the opening on data of another setup
    _glue_speed(r, out)
    _glue_prefill(r, out)
    _glue_kv(r, out)
    _glue_reliability(r, out)
    out.update(shared_glue(r))
    out["confidence_pct"] = int(round(r.params["confidence"] * 100))
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison, r.claim_ids))
    return out


def _glue_speed(r: Results, out: Glued) -> None:
    """Each speed row's dense, MoE and advantage figures, and the smallest and largest advantage."""
    s = speed_table(r)
    advantage = {}  # each metric's advantage ids: the smallest and largest rest on their own row
    cells, labels = run_cells(r), {}
    for row in s.itertuples():
        ids = speed_ids(r, row.kind, row.unit)
        advantage[row.metric] = ids["advantage"]
        # a metric's name may quote its runs' settings ("3,525-token prompt"): it rests on those it quotes
        labels[row.metric] = cells.union(QUOTES[row.kind], r.runs.index[r.runs["kind"] == row.kind])
        for col, key in SPEED_GLUE[row.kind].items():
            v = getattr(row, col)
            if v is not None and pd.notna(v):
                out.cell(key, float(v), ids[col])
    adv = s.set_index("metric")["advantage"].astype(float).dropna()
    if len(adv):  # which metric is smallest rests on the row that is, as a best build does (a margin:
        for key, name, metric in (("adv_min", "adv_min_metric", adv.idxmin()),  # make marks proves it)
                                  ("adv_max", "adv_max_metric", adv.idxmax())):
            own = advantage.get(metric, ())
            out.cell(key, float(adv[metric]), own)
            out.cell(name, str(metric), union(own, labels.get(metric, ())))


def _glue_prefill(r: Results, out: Glued) -> None:
    """Each model's prefill time and rate at the prefill run's prompt."""
    cells = run_cells(r)
    for short, ms, rate in (("dense", "dense_prefill_ms", "dense_prefill_rate"),
                            ("moe", "moe_prefill_ms", "moe_prefill_rate")):
        pre = _speed_run(r, short, "prefill")
        if pre is not None and pd.notna(pre["median_ttft_s"]):
            ids, prompt = cells.at(pre.name, "median_ttft_s"), cells.at(pre.name, "input_len")
            out.cell(ms, float(pre["median_ttft_s"]) * 1000, ids)
            out.cell(rate, float(pre["input_len"]) / float(pre["median_ttft_s"]), union(ids, prompt))
            out.cell("prefill_prompt", int(pre["input_len"]), prompt)  # the prompt length a generator chose


# Start-up facts per model (run values the log reader and nvidia-smi give), glued as they are.
KV_GLUE = ("dense_kv_cache_tokens", "dense_max_concurrency", "dense_max_model_len", "dense_vram_per_card_gb",
           "dense_vram_total_gb", "moe_kv_cache_tokens", "moe_max_concurrency", "moe_max_model_len",
           "moe_vram_per_card_gb", "moe_vram_total_gb")
# The KV check per model: column of kv_check -> glue key, by model.
KV_CHECK_GLUE = {
    "dense": {"KV bytes per token": "dense_kv_bytes_per_token", "reserved / needed": "dense_reserved_over_needed",
              "printed concurrency / (tokens / max len)": "dense_conc_over_tokens"},
    "moe": {"KV bytes per token": "moe_kv_bytes_per_token", "reserved / needed": "moe_reserved_over_needed",
            "printed concurrency / (tokens / max len)": "moe_conc_over_tokens"},
}


def _glue_kv(r: Results, out: Glued) -> None:
    """Start-up KV cache facts, their ratios and the KV bytes per token check."""
    for key in KV_GLUE:
        if key in r.values:
            out.cell(key, float(r.values[key]), value_ids(r.value_ids, [key]))
    if "moe_kv_cache_tokens" in out and "dense_kv_cache_tokens" in out:
        out.of("kv_ratio", out["moe_kv_cache_tokens"] / out["dense_kv_cache_tokens"],
               "moe_kv_cache_tokens", "dense_kv_cache_tokens")
        if "moe_max_concurrency" in out and "dense_max_concurrency" in out:
            out.of("conc_ratio", out["moe_max_concurrency"] / out["dense_max_concurrency"],
                   "moe_max_concurrency", "dense_max_concurrency")
    k = kv_check(r)
    k = k.set_index("short") if len(k) else pd.DataFrame()
    for short in k.index:
        for col, key in KV_CHECK_GLUE.get(short, {}).items():
            if col in k and pd.notna(k.loc[short, col]):
                out.cell(key, float(k.loc[short, col]), kv_ids(r, short, col))
    if "dense_kv_bytes_per_token" in out and "moe_kv_bytes_per_token" in out:
        out["kv_bytes_ratio"] = out["dense_kv_bytes_per_token"] / out["moe_kv_bytes_per_token"]
        out["dense_kv_kib"] = out["dense_kv_bytes_per_token"] / 1024
        out["moe_kv_kib"] = out["moe_kv_bytes_per_token"] / 1024


def _glue_reliability(r: Results, out: Glued) -> None:
    """The smallest p of the pairwise tests between the models. Each model's own rates are in
    the reliability table, not glued: a key named after a model could not be quoted by prose."""
    out["reliability_models"] = len(reliability_table(r))
    p = pairwise_tests(r)
    if len(p):
        out["p_min"] = float(p["p_fisher"].min())
        out["p_min_pair"] = str(p.loc[p["p_fisher"].idxmin(), "pair"])
        out["p_min_holm"] = float(p.loc[p["p_fisher"].idxmin(), "p_holm"])
        out["pairs"] = len(p)


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    return {
        "runs": r.runs, "requests": r.data["requests"], "boot": r.data["boot"], "gpu_samples": r.data["gpu_samples"],
        "gauntlet": r.data["gauntlet"], "tool_calls": r.data["tool_calls"],
        "reliability": reliability_table(r), "pairwise_tests": pairwise_tests(r), "failure_classes": breakdown(r),
        "recovery": recovery(r), "kv_check": kv_check(r),
        "published_vs_reproduced": r.comparison, "claims": r.ledger, "caveats": r.caveats,
        "key_figures": key_figures(r), "rate_steps": r.rates.steps, "rate_capacity": r.rates.capacity,
        "energy": r.energy, "closed_loop": r.closed, "serving_points": serving_points(r),
    }


# ---------------------------------------------------------------- formatting helpers


def _cell(cells, row: pd.Series | None, column: str) -> Shown:
    """A run's value as a number with the ids of its cell (NaN and none without the run)."""
    return Shown(float("nan"), ()) if row is None else Shown(float(row[column]), cells.at(row.name, column))


# ---- key figures for the synthesis chapter (benchbook.book.key_figures.KEY_FIGURES) ---------

# ---- serving points for the synthesis's cross-study chart (benchbook.book.serving_points) ----

def serving_points(r: Results) -> pd.DataFrame:
    """Each bench run and llama-benchy generation test as a point (both rates from that one
    run), or left out with the reason."""
    kind = points.data_kind(r.data.study.reconstructed)
    labels, cells = dict(r.rates.labels), run_cells(r)
    rows = points.bench_points(STUDY, r.runs, cells, r.data.study.configs, labels=labels, kind=kind,
                               anchor={"rate": "request-rate-sweeps", "": "speed"})
    rows += points.benchy_points(STUDY, r.closed, r.data.study.configs, labels=labels, anchor=closed_loop.ANCHOR,
                                 kind=kind)
    return points.points_table(rows, cells.why)


def key_figures(r: Results) -> pd.DataFrame:
    """One row per benchmarked server: single-stream decode, TTFT, throughput at 4 clients.

    Decode is 1 / median TPOT of the single-stream decode run (short prompt); with MTP the
    run's acceptance length says how many tokens each step yields. TTFT is the single
    request at the longest prompt measured (closest to the 4k the other chapters use). The
    best aggregate is the highest output t/s of any run, with its concurrency.
    """

    rows, cells = [], run_cells(r)
    for short, cid in r.speed_configs().items():
        c = r.configs[cid]
        runs = r.runs[r.runs["config"] == cid]
        dec = runs[(runs["kind"] == "decode-single") & runs["decode_tps"].notna()]
        if not len(dec):
            continue
        d = dec.iloc[0]
        single = runs[(runs["concurrency"] == 1) & runs["median_ttft_s"].notna()]
        t = single.loc[(single["input_len"] - 4096).abs().idxmin()] if len(single) else None
        pre = runs[runs["kind"] == "prefill"]
        best = runs.loc[runs["output_tps"].idxmax()]
        rows.append(key_figure_row(
            STUDY, cid, c,
            single_stream_decode_tps=Shown(float(d["decode_tps"]), cells.at(d.name, "decode_tps")),
            acceptance_length=_cell(cells, d if speculative(c) else None, "spec_acceptance_length"),
            ttft_s=_cell(cells, t, "median_ttft_s"),
            ttft_input_tokens=float(t["input_len"]) if t is not None else float("nan"),
            best_aggregate_tps=Shown(float(best["output_tps"]), cells.union("output_tps", runs.index)),
            best_aggregate_concurrency=Shown(float(best["concurrency"]), cells.union("output_tps", runs.index)),
            anchor="speed", label=f"{platform_short(c)}, {r.label_of(short)}", decode_context_tokens=decode_context(d),
            decode_basis=f"1 / median TPOT, one client, {int(d['input_len']):,}-token prompts",
            prefill_tps=_cell(cells, pre.iloc[0] if len(pre) else None, "prefill_tps"),
            prefill_tokens=float(pre["input_len"].iloc[0]) if len(pre) else float("nan"),
            notes="prefill as input / median TTFT of the one-token prefill run"
                  + (f"; tensor parallel over {accelerator_count(c.get('accelerators'))} cards"
                     if accelerator_count(c.get("accelerators")) > 1 else ""),
        ))
    return key_figures_table(rows, cells.why)

"""Recompute every value name of the GB10 study's published.yml from the written files.

Bench JSON goes through the book's reader, so the fit is proven on the numbers the
chapter will compute; the start-up facts, SpecDecoding lines and /metrics counters are
read back with patterns of the text the generator itself wrote.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from benchbook.ingest import vllm_bench

_RUN = re.compile(r"_s\d+$")
_BOOT = {
    "kv_cache_tokens": (re.compile(r"GPU KV cache size: ([\d,]+) tokens"), 1),
    "max_model_len": (re.compile(r"Maximum concurrency for ([\d,]+) tokens per request"), 1),
    "max_concurrency": (re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x"), 1),
    "weights_load_s": (re.compile(r"Loading weights took ([\d.]+) seconds"), 1),
    "weights_gib": (re.compile(r"Model loading took ([\d.]+) GiB"), 1),
    "checkpoint_shards": (re.compile(r"Loading safetensors checkpoint shards: 100% Completed \| (\d+)/"), 1),
    "graphs_piecewise": (re.compile(r"Capturing CUDA graphs \([^)]*PIECEWISE\): 100%\|[^|]*\| (\d+)/"), 1),
    "graphs_full": (re.compile(r"Capturing CUDA graphs \([^)]*FULL\): 100%\|[^|]*\| (\d+)/"), 1),
    "moe_experts": (re.compile(r"/E=(\d+),N=\d+,"), 1),
}
_SPEC_LINE = re.compile(r" (\d\d):(\d\d):(\d\d) \[[^\]]+\] SpecDecoding metrics: Mean acceptance length: ([\d.]+),"
                        r".* Accepted: (\d+) tokens, Drafted: (\d+) tokens,")
_PROM = re.compile(r"^(vllm:spec_decode_num_(?:drafts|draft_tokens|accepted_tokens|accepted_tokens_per_pos)_total)"
                   r"\{([^}]*)\} ([\d.e+]+)$", re.M)


def run_metrics(path: Path) -> dict[str, float]:
    """One bench JSON's values as the book's reader computes them (benchbook.ingest.vllm_bench:
    TPOT = (e2el - TTFT) / (output - 1)), plus the write-up's P95 TTFT and TTFT outliers."""
    tables = vllm_bench.read(path).tables
    run, req = tables["runs"].iloc[0], tables["requests"]
    ttft = req["ttft_s"].to_numpy(dtype=float)
    starts = req["start_s"].to_numpy(dtype=float)
    stat = {name: float(run[name]) for name in ("mean_ttft_s", "p99_ttft_s", "mean_tpot_s", "p99_tpot_s",
                                                "mean_itl_s", "p99_itl_s")}
    m = {
        "output_tps": float(run["output_tps"]), "mean_ttft_s": stat["mean_ttft_s"],
        "p95_ttft_s": float(np.percentile(ttft, 95)), "p99_ttft_s": stat["p99_ttft_s"],
        "mean_tpot_s": stat["mean_tpot_s"], "p99_tpot_s": stat["p99_tpot_s"],
        "mean_itl_s": stat["mean_itl_s"], "p99_itl_s": stat["p99_itl_s"],
        "ttft_outliers": float((ttft > 2 * np.median(ttft)).sum()),
        "first_start_s": float(starts.min()), "last_end_s": float((starts + req["e2el_s"].to_numpy(dtype=float)).max()),
    }
    if pd.notna(run["spec_num_drafts"]):
        pos = tables["run_stats"].set_index("metric")["value_s"]
        m.update(spec_acceptance_rate=float(run["spec_acceptance_rate"]),
                 spec_acceptance_length=float(run["spec_acceptance_length"]),
                 spec_num_drafts=int(run["spec_num_drafts"]), spec_draft_tokens=int(run["spec_draft_tokens"]),
                 spec_accepted_tokens=int(run["spec_accepted_tokens"]),
                 spec_pos0=float(pos["spec_accept_pos0"]), spec_pos1=float(pos["spec_accept_pos1"]))
    return m


def file_values(out_dir: Path, entries: list[dict]) -> dict[str, float]:
    """Every value name published.yml uses, recomputed from the written files."""
    vals: dict[str, float] = {}
    groups: dict[str, dict[str, list]] = {}
    for e in entries:
        path = Path(out_dir) / e["path"]
        cfg = e["name"].split("_")[0]
        if e["kind"].startswith("test-"):
            group = _RUN.sub("", e["name"])
            for k, v in run_metrics(path).items():
                vals[f"{e['name']}_{k}"] = v
                groups.setdefault(group, {}).setdefault(k, []).append(v)
        elif e["kind"] == "server-log":
            text = path.read_text(encoding="utf-8")
            for fact, (rx, grp) in _BOOT.items():
                m = rx.search(text)
                if m:
                    vals[f"{cfg}_{fact}"] = float(m.group(grp).replace(",", ""))
            for m in _SPEC_LINE.finditer(text):
                key = f"specline_{m.group(1)}{m.group(2)}{m.group(3)}"
                vals[f"{key}_mean_acceptance_length"] = float(m.group(4))
                vals[f"{key}_acceptance_rate"] = int(m.group(5)) / int(m.group(6))
        elif e["kind"] == "metrics":
            last = path.read_text(encoding="utf-8").split("# dump ")[-1]
            c = {}
            for m in _PROM.finditer(last):
                pos = re.search(r'position="(\d+)"', m.group(2))
                c[(m.group(1), pos.group(1) if pos else None)] = float(m.group(3))
            vals["prom_num_drafts"] = c[("vllm:spec_decode_num_drafts_total", None)]
            vals["prom_draft_tokens"] = c[("vllm:spec_decode_num_draft_tokens_total", None)]
            vals["prom_accepted_tokens"] = c[("vllm:spec_decode_num_accepted_tokens_total", None)]
            vals["prom_accepted_pos0"] = c[("vllm:spec_decode_num_accepted_tokens_per_pos_total", "0")]
            vals["prom_accepted_pos1"] = c[("vllm:spec_decode_num_accepted_tokens_per_pos_total", "1")]
    for group, ms in groups.items():
        for k, v in ms.items():
            vals[f"{group}_{k}"] = float(np.mean(v))
    fresh = [k for k in groups if k.startswith("fresh_")]
    vals["fresh_session_s"] = (max(max(groups[g]["last_end_s"]) for g in fresh)
                               - min(min(groups[g]["first_start_s"]) for g in fresh))
    return vals

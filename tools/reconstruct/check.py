"""Recompute the published metrics from written raw files, to prove the fit landed.

The definitions are the book's (plain numpy, successful requests only): median/P99 TTFT
over `ttfts`; per-request TPOT = sum(itls)/(output-1); aggregate = sum(output)/duration;
prefill rate = median of input/TTFT; llama-bench rate = the row's avg_ts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .targets import Target


def vllm_values(path: Path) -> dict[str, float]:
    d = json.loads(Path(path).read_text(encoding="utf-8"))
    ttft = np.asarray(d["ttfts"], dtype=float)
    inp = np.asarray(d["input_lens"], dtype=float)
    out = np.asarray(d["output_lens"], dtype=float)
    itl_sum = np.array([float(np.sum(r)) if r else 0.0 for r in d["itls"]])
    tpot = itl_sum[out > 1] / (out[out > 1] - 1)
    starts = np.asarray(d["start_times"], dtype=float)
    span = float(np.max(starts + ttft + itl_sum) - np.min(starts))
    return {
        "output_tps": float(out.sum() / d["duration"]),
        "median_ttft_s": float(np.median(ttft)),
        "p99_ttft_s": float(np.percentile(ttft, 99)),
        "median_tpot_s": float(np.median(tpot)) if len(tpot) else math.nan,
        "prefill_tps": float(np.median(inp / ttft)),
        "duration_minus_span_s": float(d["duration"] - span),
    }


def llama_values(path: Path) -> dict[str, float]:
    """avg_ts per test name (pp512, tg128) of one llama-bench JSONL file."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            test = f"pp{r['n_prompt']}" if r["n_gen"] == 0 else f"tg{r['n_gen']}"
            out[test] = float(r["avg_ts"])
    return out


def problems(values: dict[str, float], targets: dict[str, Target]) -> list[str]:
    """Targets the computed values miss (a value missing counts as a miss)."""
    out = []
    for name, t in sorted(targets.items()):
        v = values.get(name)
        if v is None or not t.admits(v):
            out.append(f"{name}: computed {v!r}, published interval [{t.lo}, {t.hi})")
    return out

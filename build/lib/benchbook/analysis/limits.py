"""Each configuration's measured rates set against its platform's physical ceilings.

Joins the chapters' key figures with the facts registry: which platform, model, weight
format and KV type a configuration ran, what bandwidth and peak that platform has, and
from those the decode roofline and the prefill compute ceiling (benchbook.analysis.roofline).
A configuration whose platform, model or format the registry does not know keeps its
measurements and says which fact is missing; nothing is guessed.
"""

from __future__ import annotations

import math

import pandas as pd

from . import roofline as rl
from .facts import Facts

LIMIT_COLUMNS = [
    "platform_key", "model_key", "quant_key", "kv_key", "bandwidth_gbs", "devices",
    "gb_weights", "gb_head", "gb_kv", "gb_per_pass",
    "decode_ceiling_tps", "tokens_per_pass", "mtp_status", "decode_ceiling_mtp_tps",
    "plain_ratio", "pct_decode_ceiling", "prefill_dtype", "prefill_peak_tflops", "prefill_peak_assumed",
    "prefill_ceiling_tps", "pct_prefill_ceiling", "issues",
]


def identify(facts: Facts, kf: pd.DataFrame) -> pd.DataFrame:
    """Facts keys for each row's platform, model, weight format and KV type (None if unknown)."""
    out = kf.copy()
    out["platform_key"] = [facts.identify("platforms", v) for v in kf["platform"]]
    out["model_key"] = [facts.identify("models", v) for v in kf["model"]]
    out["quant_key"] = [facts.identify("quantisations", v) for v in kf["quantisation"]]
    out["kv_key"] = [facts.identify("kv_cache", v) for v in kf["kv_dtype"].fillna("")]
    return out


def decode_bytes(facts: Facts, model: str, quant: str, kv: str | None, context: float) -> rl.DecodeBytes:
    """Bytes one single-stream forward pass reads, from the registry (see models.yml)."""
    active = facts.value("models", model, "active_params_exact") or facts.fact("models", model, "active_params").value
    body, head = rl.split_params(active, facts.fact("models", model, "vocab_size").value,
                                 facts.fact("models", model, "hidden_size").value,
                                 bool(facts.fact("models", model, "tied_embeddings").value))
    kv_per_token = 0.0
    if kv is not None and context and not math.isnan(context):
        kv_per_token = rl.kv_bytes_per_context_token(
            facts.fact("models", model, "full_attention_layers").value, facts.fact("models", model, "kv_heads").value,
            facts.fact("models", model, "head_dim").value, facts.fact("kv_cache", kv, "bytes").value)
    return rl.DecodeBytes(
        body_params=body, body_bytes_per_weight=facts.fact("quantisations", quant, "bytes_per_weight").value,
        head_params=head, head_bytes_per_weight=facts.fact("quantisations", quant, "head_bytes_per_weight").value,
        kv_bytes_per_context_token=kv_per_token, context_tokens=0.0 if not kv_per_token else float(context),
    )


def matmul_params(facts: Facts, model: str) -> float:
    """Parameters in matrix products per token: active minus an untied input embedding table."""
    active = facts.value("models", model, "active_params_exact") or facts.fact("models", model, "active_params").value
    body, head = rl.split_params(active, facts.fact("models", model, "vocab_size").value,
                                 facts.fact("models", model, "hidden_size").value,
                                 bool(facts.fact("models", model, "tied_embeddings").value))
    return body + head


def prefill_peak(facts: Facts, platform: str, quant: str) -> tuple[str | None, float | None, bool]:
    """(dtype, peak FLOP/s, assumed?) of the first compute type of `quant` the platform lists."""
    for dtype in facts.entry("quantisations", quant).get("compute", []):
        f = facts.get("platforms", platform, f"peak_dense.{dtype}")
        if f is not None:
            return dtype, f.value * rl.TFLOPS, f.assumed
    return None, None, False


def limits(facts: Facts, kf: pd.DataFrame) -> pd.DataFrame:
    """Key figures plus ceilings and shares (LIMIT_COLUMNS); one row per key-figures row."""
    rows = []
    ident = identify(facts, kf)
    for _, r in ident.iterrows():
        rows.append(_row(facts, r))
    return pd.concat([ident.reset_index(drop=True), pd.DataFrame(rows, columns=[
        c for c in LIMIT_COLUMNS if c not in ("platform_key", "model_key", "quant_key", "kv_key")])], axis=1)


def _row(facts: Facts, r: pd.Series) -> dict:
    out = {c: None for c in LIMIT_COLUMNS}
    issues = [f"no facts entry for {what} {r[col]!r}" for what, col, key in (
        ("platform", "platform", "platform_key"), ("model", "model", "model_key"),
        ("weight format", "quantisation", "quant_key")) if _missing(r[key])]
    if _missing(r["kv_key"]):
        issues.append(f"KV type {r['kv_dtype']!r} unknown: KV reads left out of the decode bytes")
    elif pd.isna(r["decode_context_tokens"]):
        issues.append("decode context unknown: KV reads left out of the decode bytes")
    out["devices"] = int(r["accelerators"]) if pd.notna(r["accelerators"]) else 1
    if not issues or all(i.startswith(("KV type", "decode context")) for i in issues):
        p, m, q = r["platform_key"], r["model_key"], r["quant_key"]
        bw = facts.fact("platforms", p, "memory_bandwidth").value
        out["bandwidth_gbs"] = bw
        b = decode_bytes(facts, m, q, None if _missing(r["kv_key"]) else r["kv_key"], r["decode_context_tokens"])
        out.update(gb_weights=b.weights / rl.GB, gb_head=b.head / rl.GB, gb_kv=b.kv / rl.GB,
                   gb_per_pass=b.total / rl.GB)
        plain = rl.decode_ceiling_tps(bw * rl.GB, b.total, out["devices"])
        out["decode_ceiling_tps"] = plain
        measured = r["single_stream_decode_tps"]
        out["plain_ratio"] = rl.share(measured, plain)
        if r["speculative"]:
            al = r["acceptance_length"]
            if pd.notna(al):
                out.update(tokens_per_pass=al, mtp_status="acceptance length from the data",
                           decode_ceiling_mtp_tps=plain * al)
                out["pct_decode_ceiling"] = rl.share(measured, plain * al)
            else:
                out.update(tokens_per_pass=None, mtp_status="not derivable: no acceptance length in the data")
        else:
            out.update(tokens_per_pass=1.0, mtp_status="", pct_decode_ceiling=out["plain_ratio"])
        dtype, peak, assumed = prefill_peak(facts, p, q)
        if peak is None:
            issues.append(f"no dense peak for {q} compute on {p}")
        else:
            ceiling = rl.prefill_ceiling_tps(peak, matmul_params(facts, m), out["devices"])
            out.update(prefill_dtype=dtype, prefill_peak_tflops=peak / rl.TFLOPS, prefill_peak_assumed=assumed,
                       prefill_ceiling_tps=ceiling, pct_prefill_ceiling=rl.share(r["prefill_tps"], ceiling))
    out["issues"] = "; ".join(issues)
    return {k: v for k, v in out.items() if k not in ("platform_key", "model_key", "quant_key", "kv_key")}


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def bandwidth_sensitivity(facts: Facts, lim: pd.DataFrame, platform: str) -> pd.DataFrame:
    """A platform's decode shares under each bandwidth figure the registry holds for it."""
    figures = [(path, facts.get("platforms", platform, path)) for path in
               ("memory_bandwidth", "memory_bandwidth_measured", "memory_bandwidth_as_written")]
    rows = []
    for _, r in lim[lim["platform_key"] == platform].iterrows():
        if r["gb_per_pass"] is None or pd.isna(r["gb_per_pass"]):
            continue
        for path, f in figures:
            if f is None:
                continue
            ceiling = rl.decode_ceiling_tps(f.value * rl.GB, r["gb_per_pass"] * rl.GB, int(r["devices"]),
                                            r["tokens_per_pass"] if pd.notna(r["tokens_per_pass"]) else 1.0)
            rows.append(dict(config=r["config"], label=r["label"], bandwidth=path, gbs=f.value,
                             note=f.note, ceiling_tps=ceiling,
                             pct=rl.share(r["single_stream_decode_tps"], ceiling)))
    return pd.DataFrame(rows, columns=["config", "label", "bandwidth", "gbs", "note", "ceiling_tps", "pct"])

"""Serving metrics derived from runs: per-agent rate, cost, sweeps, and the named values.

Named values are how published cells and claims refer to the data:
``<run name>_<metric>`` for every numeric run metric (e.g. ``h100_moe_c16_p99_ttft_s``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..study.assumptions import ordered_values
from ..study.marks import run_value_ids as ids

RUN_METRICS = (
    "output_tps", "per_agent_tps", "request_tps", "prefill_tps",
    "mean_ttft_s", "median_ttft_s", "p99_ttft_s",
    "mean_tpot_s", "median_tpot_s", "p99_tpot_s",
    "median_itl_s", "p99_itl_s", "median_e2el_s", "p99_e2el_s",
    "per_request_tps", "cost_per_m", "spec_acceptance_rate", "spec_acceptance_length",
)


# Columns add_serving_metrics computes, and the run columns each is computed from: a cell
# of one holds the assumptions its sources hold (benchbook.study.marks).
DERIVED = {"per_agent_tps": ("output_tps",), "cost_per_m": ("output_tps",)}


def add_serving_metrics(runs: pd.DataFrame, requests: pd.DataFrame,
                        price_per_hour: float | None = None) -> pd.DataFrame:
    """Add per-agent t/s (aggregate / concurrency), per-request t/s and cost per M tokens.

    Per-request t/s is the median over requests of output tokens / end-to-end latency:
    what one client sees, as opposed to aggregate / concurrency, which also counts the
    time a client spends between requests.
    """
    out = runs.copy()
    conc = out["concurrency"].astype("Float64") if "concurrency" in out else out["max_concurrency"].astype("Float64")
    conc = conc.fillna(out["max_concurrency"].astype("Float64"))
    out["per_agent_tps"] = (out["output_tps"] / conc).astype("float64")
    rates = ordered_values("requests", requests).get("per_request_tps")
    if rates is not None and len(rates):
        rate = rates.groupby(requests.loc[rates.index, "run_id"]).median()
        out["per_request_tps"] = out["run_id"].map(rate).astype("float64")
    else:
        out["per_request_tps"] = np.nan
    out["cost_per_m"] = cost_per_million(out["output_tps"], price_per_hour)
    return out


def cost_per_million(tps, price_per_hour: float | None):
    """Price of one million output tokens at a sustained rate, in the price's currency."""
    if price_per_hour is None:
        return np.nan
    tps = pd.to_numeric(tps, errors="coerce")
    return price_per_hour / (tps * 3600.0 / 1e6)


def run_values(runs: pd.DataFrame) -> dict[str, float]:
    """``<key>_<metric>`` for every run and numeric metric present.

    The key is the run's key under its chapter's contract (benchbook.study.contract: role and
    run context, e.g. ``h100_dense_c16``), so value names do not depend on the names a
    user gave the runs; without a contract, the run's name.
    """
    values = {}
    by = "key" if "key" in runs else "name"
    for _, row in runs.iterrows():
        name = row.get(by)
        if name is None or (isinstance(name, float) and math.isnan(name)) or name is pd.NA:
            continue
        for metric in RUN_METRICS:
            if metric in row and pd.notna(row[metric]):
                values[f"{name}_{metric}"] = float(row[metric])
    return values


def run_value_ids(runs: pd.DataFrame, cells) -> dict[str, tuple]:
    """The assumption ids behind each value run_values names (benchbook.study.marks.Cells)."""

    return ids(runs, cells, RUN_METRICS)


def sweep_table(runs: pd.DataFrame, kind: str = "sweep") -> pd.DataFrame:
    """One row per configuration and concurrency of the concurrency sweeps."""
    cols = ["config", "concurrency", "output_tps", "per_agent_tps", "per_request_tps",
            "median_ttft_s", "p99_ttft_s", "median_tpot_s", "p99_tpot_s", "cost_per_m", "completed"]
    sweep = runs[runs["kind"] == kind] if "kind" in runs else runs
    return sweep[cols].sort_values(["config", "concurrency"]).reset_index(drop=True)


def sequential_vs_batched(n_agents: int, answer_tokens: int, sequential_tps: float,
                          batched_per_agent_tps: float, batched_ttft_s: float | None = None) -> dict:
    """Time to serve n agents one after another vs all at once on a batching server."""
    seq = n_agents * answer_tokens / sequential_tps
    batched = answer_tokens / batched_per_agent_tps + (batched_ttft_s or 0.0)
    return {"sequential_s": seq, "batched_s": batched, "advantage": seq / batched}

"""H100 dense 27B vs MoE 35B-A3B + MTP, against Strix Halo: everything the chapter computes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import claims as claims_mod
from ..analysis.llama import best_of, llama_values
from ..analysis.serving import add_serving_metrics, run_values, sequential_vs_batched, sweep_table
from ..caveats import authors_caveats, data_caveats
from ..load import StudyData, ingest_study
from ..provenance import code_version, data_record, package_versions
from ..published import load_published
from ..report import fmt_args, fmt_money, fmt_rate, fmt_ratio, fmt_seconds

STUDY = "h100-dense-vs-moe-mtp"
DENSE, MOE = "h100-dense", "h100-moe-mtp"


@dataclass
class Results:
    params: dict
    published: object
    data: StudyData
    strix: StudyData | None
    runs: pd.DataFrame
    values: dict
    currencies: dict
    ledger: pd.DataFrame
    comparison: pd.DataFrame
    caveats: pd.DataFrame
    provenance: pd.DataFrame
    versions: dict
    extra: dict = field(default_factory=dict)

    def config(self, cid: str) -> dict:
        return self.data.study.configs.get(cid, {})


def analyse(data_dir, strix_data_dir=None, published_file=None, price_per_hour=1.79,
            currency="EUR", usd_per_eur=None, agents=16, answer_tokens=200) -> Results:
    params = dict(price_per_hour=price_per_hour, currency=currency, usd_per_eur=usd_per_eur,
                  agents=agents, answer_tokens=answer_tokens)
    data = ingest_study(data_dir)
    runs = add_serving_metrics(data["runs"], data["requests"], price_per_hour)
    values = run_values(runs)
    currencies = {k: currency for k in values if k.endswith("_cost_per_m")}

    strix = None
    if strix_data_dir and Path(strix_data_dir).is_dir():
        strix = ingest_study(strix_data_dir)
        values.update(llama_values(strix["llama_bench"], "strix"))
        strix_runs = add_serving_metrics(strix["runs"], strix["requests"], None)
        values.update(run_values(strix_runs))
    values.update({k: v for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})

    published = load_published(published_file or Path(data_dir) / "published.yml")
    ledger = claims_mod.check_claims(published, values, params, currencies)
    comparison = claims_mod.compare_published(published, values, currencies)

    strix_configs = strix.study.configs if strix else {}
    compared = [(DENSE, "strix-llama-server"), (MOE, "strix-llama-server"), (DENSE, MOE)]
    cav = authors_caveats(published) + data_caveats(
        data, runs, ledger, compared=[c for c in compared if c[1] in data.study.configs or c[1] in strix_configs],
        extra_configs=strix_configs,
    )
    if strix is not None:
        for c in data_caveats(strix, add_serving_metrics(strix["runs"], strix["requests"], None)):
            if c["origin"] == "data rule: reconstructed" and data.study.reconstructed:
                continue  # said once already
            cav.append(dict(origin=f"{c['origin']} ({strix.study.id})", caveat=c["caveat"]))
    prov = pd.DataFrame([data_record(data.study)] + ([data_record(strix.study)] if strix else []))
    versions = {"code": code_version(), **package_versions()}
    return Results(params, published, data, strix, runs, values, currencies, ledger, comparison,
                   pd.DataFrame(cav, columns=["origin", "caveat"]), prov, versions)


# ---- tables shown in the chapter -------------------------------------------------

def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    configs = {**r.data.study.configs, **(r.strix.study.configs if r.strix else {})}
    for cid, c in configs.items():
        rows.append(dict(config=cid, platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"), speculative=c.get("speculative"),
                         kv_dtype=c.get("kv_dtype"), engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         serve_args=fmt_args(c.get("serve_args"))))
    return pd.DataFrame(rows)


def runs_table(r: Results) -> pd.DataFrame:
    cols = ["name", "config", "kind", "concurrency", "input_len", "output_len", "completed", "failed", "source_file"]
    runs = r.runs[cols]
    if r.strix is not None:
        runs = pd.concat([runs, r.strix["runs"][[c for c in cols if c in r.strix["runs"]]]], ignore_index=True)
    return runs.assign(source_file=runs["source_file"].map(lambda p: Path(str(p)).name))


def ingest_table(r: Results) -> pd.DataFrame:
    reports = [r.data.report.assign(study=r.data.study.id)]
    if r.strix is not None:
        reports.append(r.strix.report.assign(study=r.strix.study.id))
    return pd.concat(reports, ignore_index=True)[["study", "file", "format", "read", "ignored", "reasons"]]


def single_request(r: Results, rows: list[tuple[str, str, str, str, bool]], labels: tuple[str, str]) -> pd.DataFrame:
    """Side-by-side rows (label, value a, value b, kind, lower_is_better) with the ratio."""
    out = []
    for label, a, b, kind, lower_better in rows:
        va, vb = r.values.get(a), r.values.get(b)
        ratio = None
        if va and vb:
            ratio = vb / va if lower_better else va / vb
        show = fmt_seconds if kind == "s" else (lambda v: f"{fmt_rate(v)} t/s" if v else "–")
        out.append({"metric": label, labels[0]: show(va), labels[1]: show(vb), "H100 advantage": fmt_ratio(ratio)})
    return pd.DataFrame(out)


def sweep_display(r: Results, config: str) -> pd.DataFrame:
    s = sweep_table(r.runs)
    s = s[s["config"] == config]
    return pd.DataFrame({
        "concurrency": s["concurrency"].astype(int),
        "aggregate t/s": s["output_tps"].map(fmt_rate),
        "per agent": s["per_agent_tps"].map(lambda v: fmt_rate(v, 1)),
        "per request": s["per_request_tps"].map(lambda v: fmt_rate(v, 1)),
        "TTFT p50": s["median_ttft_s"].map(fmt_seconds),
        "TTFT p99": s["p99_ttft_s"].map(fmt_seconds),
        "TPOT p50": s["median_tpot_s"].map(fmt_seconds),
        "TPOT p99": s["p99_tpot_s"].map(fmt_seconds),
        "n": s["completed"].astype(int),
    })


def cost_display(r: Results) -> pd.DataFrame:
    runs = r.runs.sort_values(["config", "kind", "concurrency"])
    return pd.DataFrame({
        "config": runs["config"],
        "run": runs["name"],
        "concurrency": runs["concurrency"].astype(int),
        "output t/s": runs["output_tps"].map(fmt_rate),
        f"{r.params['currency']}/M output tokens": runs["cost_per_m"].map(lambda v: fmt_money(v, r.params["currency"])),
    })


def serving_model(r: Results) -> pd.DataFrame:
    """N agents served one after another on Strix Halo vs batched on the H100."""
    n, tokens = r.params["agents"], r.params["answer_tokens"]
    tg = r.values.get("strix_best_tg128_tps")
    rows = []
    for cid, label in ((DENSE, "H100 dense 27B"), (MOE, "H100 35B-A3B + MTP")):
        per_agent = r.values.get(f"{_name(r, cid, n)}_per_agent_tps")
        ttft = r.values.get(f"{_name(r, cid, n)}_median_ttft_s")
        if not (tg and per_agent):
            continue
        plain = sequential_vs_batched(n, tokens, tg, per_agent)
        with_ttft = sequential_vs_batched(n, tokens, tg, per_agent, ttft)
        rows.append({
            "batched server": label,
            "Strix Halo, sequential": fmt_seconds(plain["sequential_s"]),
            "H100, generation only": fmt_seconds(plain["batched_s"]),
            "advantage": fmt_ratio(plain["advantage"]),
            "H100, with median TTFT": fmt_seconds(with_ttft["batched_s"]),
            "advantage with TTFT": fmt_ratio(with_ttft["advantage"]),
        })
    return pd.DataFrame(rows)


def _name(r: Results, config: str, concurrency: int) -> str | None:
    hit = r.runs[(r.runs["config"] == config) & (r.runs["kind"] == "sweep") & (r.runs["concurrency"] == concurrency)]
    return hit["name"].iloc[0] if len(hit) else None


def strix_backends(r: Results) -> pd.DataFrame:
    if r.strix is None or not len(r.strix["llama_bench"]):
        return pd.DataFrame()
    best = best_of(r.strix["llama_bench"])
    return pd.DataFrame({
        "test": best["test_name"], "best backend": best["best_config"],
        "best t/s": best["avg_ts"].map(lambda v: fmt_rate(v, 1)),
        "best / worst backend": best["spread"].map(fmt_ratio),
    })


def glue_values(r: Results) -> dict:
    """Numbers quoted in the chapter's prose, keyed by role rather than by run name.

    `dense_lo_*` / `dense_hi_*` are the sweep's lowest and highest concurrency,
    `dense_at_*` the point nearest the `agents` parameter (likewise `moe_*`), so the
    prose stays true on data swept at other concurrencies.
    """
    out = {}
    sweeps = r.runs[r.runs["kind"] == "sweep"]
    for short, cid in (("dense", DENSE), ("moe", MOE)):
        s = sweeps[sweeps["config"] == cid].sort_values("concurrency")
        if not len(s):
            continue
        at = s.iloc[(s["concurrency"] - r.params["agents"]).abs().argmin()]
        for role, row in (("lo", s.iloc[0]), ("hi", s.iloc[-1]), ("at", at)):
            out[f"{short}_{role}_concurrency"] = int(row["concurrency"])
            for metric in ("output_tps", "per_agent_tps", "median_ttft_s", "p99_ttft_s", "cost_per_m"):
                out[f"{short}_{role}_{metric}"] = float(row[metric])
        out[f"{short}_scaling"] = out[f"{short}_hi_output_tps"] / out[f"{short}_lo_output_tps"]
    if "dense_lo_output_tps" in out and "moe_lo_output_tps" in out:
        out["moe_uplift_lo"] = out["moe_lo_output_tps"] / out["dense_lo_output_tps"]
    for col in ("input_len", "output_len"):
        out[f"sweep_{col}"] = int(sweeps[col].median())
    counts = claims_mod.verdict_counts(r.ledger)
    out.update({f"claims_{k.replace(' ', '_')}": n for k, n in counts.items()})
    out["claims_total"] = len(r.ledger)
    out["cells_total"] = int(r.comparison["within"].notna().sum())
    out["cells_within"] = int((r.comparison["within"] == True).sum())  # noqa: E712
    out["agents"] = r.params["agents"]
    out["answer_tokens"] = r.params["answer_tokens"]
    out["price_per_hour"] = r.params["price_per_hour"]
    out["currency"] = r.params["currency"]
    return out


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    """The chapter's tidy tables, as offered for download."""
    out = {"runs": r.runs, "requests": r.data["requests"], "run_stats": r.data["run_stats"],
           "published_vs_reproduced": r.comparison, "claims": r.ledger, "caveats": r.caveats}
    if r.strix is not None:
        out["strix_llama_bench"] = r.strix["llama_bench"]
        out["strix_runs"] = r.strix["runs"]
    return out


# ---- key figures for the synthesis chapter (benchbook.chapters.KEY_FIGURES) ---------

def key_figures(r: Results) -> pd.DataFrame:
    """One row per H100 configuration: single-stream decode, TTFT, best aggregate, cost.

    Decode is 1 / median TPOT of the concurrency-1 sweep run (decode only, without the
    TTFT that output t/s includes); with MTP it is already several tokens per step, and
    the run's acceptance length says how many. The best aggregate is over the sweep runs
    (4k prompts), not the short-prompt run.
    """
    from . import accelerator_count

    rows = []
    for cid in (DENSE, MOE):
        runs = r.runs[r.runs["config"] == cid]
        sweep = runs[runs["kind"] == "sweep"].sort_values("concurrency")
        if not len(sweep):
            continue
        c = r.config(cid)
        one = sweep.iloc[0]
        best = sweep.loc[sweep["output_tps"].idxmax()]
        pre = runs[runs["kind"] == "prefill"]
        if len(pre):
            prefill, prefill_tokens, pre_note = float(pre["prefill_tps"].iloc[0]), float(pre["input_len"].iloc[0]), \
                "prefill from the one-token prefill run"
        else:
            prefill, prefill_tokens, pre_note = float(one["prefill_tps"]), float(one["input_len"]), \
                f"prefill as input / TTFT of the concurrency-{int(one['concurrency'])} sweep run (no prefill run)"
        spec = c.get("speculative") or ""
        rows.append(dict(
            study=STUDY, platform=c.get("platform"), config=cid, model=c.get("model"),
            quantisation=c.get("quantisation"),
            single_stream_decode_tps=1.0 / float(one["median_tpot_s"]),
            acceptance_length=float(one["spec_acceptance_length"]) if spec not in ("", "none") else float("nan"),
            ttft_s=float(one["median_ttft_s"]), ttft_input_tokens=float(one["input_len"]),
            best_aggregate_tps=float(best["output_tps"]), best_aggregate_concurrency=float(best["concurrency"]),
            cost_per_m=float(best["cost_per_m"]), currency=r.params["currency"],
            power_w=float("nan"), power_kind="", anchor="concurrency",
            label={DENSE: "H100, 27B dense FP8", MOE: "H100, 35B-A3B FP8 + MTP"}[cid],
            accelerators=accelerator_count(c.get("accelerators")), kv_dtype=c.get("kv_dtype") or "",
            speculative="" if spec == "none" else spec,
            decode_context_tokens=float(one["input_len"]) + (float(one["output_len"]) - 1) / 2,
            decode_basis=f"1 / median TPOT, concurrency {int(one['concurrency'])}, "
                         f"{int(one['input_len']):,}-token prompts",
            prefill_tps=prefill, prefill_tokens=prefill_tokens,
            notes=pre_note + f"; best aggregate over the sweep runs; cost at {r.params['price_per_hour']} "
                             f"{r.params['currency']}/h",
        ))
    return pd.DataFrame(rows)

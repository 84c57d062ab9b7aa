"""Strix Halo baseline: llama-bench across backends, and agents served one at a time.

Everything the chapter shows is computed here from the raw files of
data/strix-halo-baseline/ (llama-bench per backend, one llama-server bench run) and, for
the serving comparison, from the H100 study's measured concurrency sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import claims as claims_mod
from ..analysis.llama import llama_values, ok_rows, with_test_names
from ..analysis.serving import add_serving_metrics, run_values
from ..caveats import authors_caveats, data_caveats
from ..load import StudyData, ingest_study
from ..provenance import code_version, data_record, package_versions
from ..published import load_published
from ..report import fmt_args, fmt_rate, fmt_ratio, fmt_seconds

STUDY = "strix-halo-baseline"
SERVER = "strix-llama-server"
# The H100 configurations the serving model compares against: config -> (short, label).
H100_CONFIGS = {"h100-dense": ("dense", "H100 dense 27B"),
                "h100-moe-mtp": ("moe", "H100 35B-A3B + MTP")}
STRIX_LABEL = "Strix Halo (sequential)"


@dataclass
class Results:
    params: dict
    published: object
    data: StudyData
    h100: StudyData | None
    llama: pd.DataFrame  # llama_bench rows with test_name
    server: pd.DataFrame  # runs of the llama-server bench, with serving metrics
    h100_runs: pd.DataFrame | None
    values: dict
    ledger: pd.DataFrame
    comparison: pd.DataFrame
    caveats: pd.DataFrame
    provenance: pd.DataFrame
    versions: dict


def analyse(data_dir, h100_data_dir=None, published_file=None, agents=16, answer_tokens=200,
            prompt_tokens=0, long_prompt_tokens=4096) -> Results:
    params = dict(agents=agents, answer_tokens=answer_tokens, prompt_tokens=prompt_tokens,
                  long_prompt_tokens=long_prompt_tokens)
    data = ingest_study(data_dir)
    llama = with_test_names(ok_rows(data["llama_bench"]))  # failed runs: data["llama_bench"]
    server = add_serving_metrics(data["runs"], data["requests"], None)
    values = {**llama_values(llama, "strix"), **run_values(server), **backend_counts(llama)}

    h100 = h100_runs = None
    if h100_data_dir and Path(h100_data_dir).is_dir():
        h100 = ingest_study(h100_data_dir)
        h100_runs = add_serving_metrics(h100["runs"], h100["requests"], None)
        values.update(run_values(h100_runs))
        values.update(batched_values(h100_runs, agents))
    values.update({k: v for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})

    published = load_published(published_file or Path(data_dir) / "published.yml")
    ledger = claims_mod.check_claims(published, values, params)
    comparison = claims_mod.compare_published(published, values)
    r = Results(params, published, data, h100, llama, server, h100_runs, values, ledger, comparison,
                pd.DataFrame(), pd.DataFrame(), {"code": code_version(), **package_versions()})
    r.caveats = _caveats(r)
    r.provenance = pd.DataFrame([data_record(data.study)] + ([data_record(h100.study)] if h100 else []))
    return r


# ---- what was measured -------------------------------------------------------------

def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    for cid, c in r.data.study.configs.items():
        rows.append(dict(config=cid, platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         arguments=fmt_args(c.get("serve_args"))))
    return pd.DataFrame(rows)


def files_table(r: Results) -> pd.DataFrame:
    """Each raw file with what the reader took from it, and what it skipped and why."""
    rep = r.data.report.assign(study=r.data.study.id)
    if r.h100 is not None:
        rep = pd.concat([rep, r.h100.report.assign(study=r.h100.study.id)], ignore_index=True)
    return rep[["study", "file", "format", "read", "ignored", "reasons"]]


# ---- llama-bench: backends, best of, spread ---------------------------------------

def backend_counts(llama: pd.DataFrame) -> dict[str, float]:
    """``strix_<test>_backends``: how many backends ran each depth-0 test."""
    llama = ok_rows(llama)
    flat = llama[~llama["test_name"].str.contains("@", na=False)]
    return {f"strix_{t}_backends": float(n) for t, n in flat.groupby("test_name")["config"].nunique().items()}


def _tests_in_order(llama: pd.DataFrame) -> list[str]:
    """Prefill tests before generation tests, shallow before deep, as llama-bench orders them."""
    keys = llama.drop_duplicates("test_name")
    keys = keys.assign(_k=keys["test"].map({"pp": 0, "tg": 1, "pp+tg": 2}).fillna(3))
    return list(keys.sort_values(["_k", "n_depth", "n_prompt", "n_gen"])["test_name"])


def per_test(llama: pd.DataFrame) -> pd.DataFrame:
    """One row per test: best and worst backend, with their rates and the spread."""
    rows = []
    llama = ok_rows(llama)
    for test in _tests_in_order(llama):
        g = llama[llama["test_name"] == test].sort_values("avg_ts", ascending=False)
        best, worst = g.iloc[0], g.iloc[-1]
        rows.append(dict(
            test=test, backends=int(g["config"].nunique()),
            best_config=best["config"], best_backend=best["backend"], best_build=int(best["build_number"]),
            best_tps=float(best["avg_ts"]), best_stddev=float(best["stddev_ts"]),
            worst_config=worst["config"], worst_tps=float(worst["avg_ts"]),
            spread=float(best["avg_ts"] / worst["avg_ts"]),
        ))
    return pd.DataFrame(rows)


def with_share_of_best(llama: pd.DataFrame) -> pd.DataFrame:
    llama = ok_rows(llama)
    best = llama.groupby("test_name")["avg_ts"].transform("max")
    return llama.assign(share_of_best=llama["avg_ts"] / best)


def backend_table(r: Results) -> pd.DataFrame:
    """Every llama-bench test of every backend, with its share of the best."""
    lb = with_share_of_best(r.llama)
    order = {t: i for i, t in enumerate(_tests_in_order(lb))}
    lb = lb.assign(_o=lb["test_name"].map(order)).sort_values(["_o", "avg_ts"], ascending=[True, False])
    return pd.DataFrame({
        "test": lb["test_name"],
        "config": lb["config"],
        "backend": lb["backend"],
        "build": [f"b{int(n)} ({c})" for n, c in zip(lb["build_number"], lb["build_commit"])],
        "t/s (mean ± sd)": [f"{a:,.2f} ± {s:.2f}" for a, s in zip(lb["avg_ts"], lb["stddev_ts"].fillna(0))],
        "samples": lb["n_samples"].astype("Int64"),
        "of best": lb["share_of_best"].map(lambda v: f"{v:.1%}"),
    })


def best_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama)
    return pd.DataFrame({
        "test": t["test"],
        "best t/s (mean ± sd)": [f"{a:,.2f} ± {s:.2f}" for a, s in zip(t["best_tps"], t["best_stddev"])],
        "winning config": t["best_config"],
        "backend": t["best_backend"],
        "build": t["best_build"].map(lambda n: f"b{n}"),
        "backends tried": t["backends"],
    })


def spread_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama)
    return pd.DataFrame({
        "test": t["test"],
        "best": [f"{c} ({v:,.1f} t/s)" for c, v in zip(t["best_config"], t["best_tps"])],
        "worst": [f"{c} ({v:,.1f} t/s)" for c, v in zip(t["worst_config"], t["worst_tps"])],
        "best / worst": t["spread"].map(fmt_ratio),
        "worst is below best by": (1 - 1 / t["spread"]).map(lambda v: f"{v:.1%}"),
    })


def single_build_table(r: Results) -> pd.DataFrame:
    """What each backend alone reaches, as a share of the best-of envelope, per test."""
    lb = with_share_of_best(r.llama)
    wide = lb.pivot_table(index="config", columns="test_name", values="share_of_best")
    wide = wide[[t for t in _tests_in_order(lb) if t in wide.columns]]
    out = wide.map(lambda v: f"{v:.1%}").reset_index()
    out["lowest share"] = wide.min(axis=1).map(lambda v: f"{v:.1%}").values
    return out


def spread_figure(r: Results) -> plt.Figure:
    """Each backend's rate as a share of the best per test, with ±1 sd error bars."""
    lb = with_share_of_best(r.llama)
    tests = _tests_in_order(lb)
    configs = sorted(lb["config"].unique())
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.8 / max(len(configs), 1)
    colors = sns.color_palette(n_colors=len(configs))
    for k, (cfg, color) in enumerate(zip(configs, colors)):
        g = lb[lb["config"] == cfg].set_index("test_name").reindex(tests)
        x = np.arange(len(tests)) + (k - (len(configs) - 1) / 2) * width
        share = 100 * g["share_of_best"].to_numpy(dtype=float)
        err = 100 * (g["stddev_ts"] / g["avg_ts"] * g["share_of_best"]).to_numpy(dtype=float)
        bars = ax.bar(x, share, width, yerr=err, capsize=3, label=cfg, color=color)
        ax.bar_label(bars, labels=[f"{v:.0f}%" if np.isfinite(v) else "" for v in share],
                     padding=3, fontsize="x-small")
    ax.set_xticks(np.arange(len(tests)), tests)
    ax.set_ylim(0, 112)  # bars start at zero, so their lengths compare honestly
    ax.set_ylabel("% of the best backend's t/s")
    ax.set_xlabel("llama-bench test")
    ax.set_title("Spread between llama.cpp backends")
    ax.legend(title="backend build", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


# ---- the llama-server run (4k-prompt TTFT and TPOT) ---------------------------------

def server_table(r: Results) -> pd.DataFrame:
    s = r.server
    if not len(s):
        return pd.DataFrame()
    return pd.DataFrame({
        "run": s["name"], "input tokens": s["input_len"].astype("Int64"),
        "output tokens": s["output_len"].astype("Int64"), "requests": s["completed"].astype("Int64"),
        "TTFT p50": s["median_ttft_s"].map(fmt_seconds), "TTFT p99": s["p99_ttft_s"].map(fmt_seconds),
        "TPOT p50": s["median_tpot_s"].map(fmt_seconds),
        "decode t/s (1 / TPOT)": (1 / s["median_tpot_s"]).map(lambda v: fmt_rate(v, 1)),
        "prefill t/s (input / TTFT)": s["prefill_tps"].map(fmt_rate),
        "per-request t/s": s["per_request_tps"].map(lambda v: fmt_rate(v, 1)),
    })


def prefill_two_ways(r: Results, prompts=(4096, 7000)) -> pd.DataFrame:
    """The prefill rate from llama-bench and the one the server's TTFT implies, side by side."""
    rows = []
    pp = r.values.get("strix_best_pp512_tps")
    if pp:
        rows.append(("llama-bench, best pp512", pp))
    sv = r.values.get("strix_server_c1_prefill_tps")
    if sv:
        rows.append(("llama-server run, median input / TTFT", sv))
    return pd.DataFrame([
        {"source of the rate": src, "prefill t/s": fmt_rate(rate),
         **{f"TTFT at {n:,} tokens": fmt_seconds(n / rate) for n in prompts}}
        for src, rate in rows
    ])


# ---- sequential (Strix Halo) against batched (H100) serving ------------------------

def sequential_s(agents: int, answer_tokens: int, gen_tps: float, prompt_tokens: int = 0,
                 prefill_tps: float | None = None) -> float:
    """A server that does not batch: each agent's prompt and answer wait for the previous one."""
    t = agents * answer_tokens / gen_tps
    if prompt_tokens:
        t += agents * prompt_tokens / prefill_tps
    return t


def batched_s(answer_tokens: int, per_agent_tps: float, prompt_tokens: int = 0,
              ttft_s: float | None = None, ttft_input_len: float | None = None) -> float:
    """All agents at once on a batching server, at the per-agent rate measured at that load.

    With prompts, the measured median TTFT (scaled to the prompt length) is added on top,
    although the per-agent rate was measured with prompts already: conservative for the H100.
    """
    t = answer_tokens / per_agent_tps
    if prompt_tokens and ttft_s is not None:
        t += ttft_s * prompt_tokens / (ttft_input_len or prompt_tokens)
    return t


def nearest_sweep(h100_runs: pd.DataFrame, config: str, agents: int) -> pd.Series | None:
    """The H100 sweep run at the measured concurrency nearest `agents` (the lower on a tie)."""
    s = h100_runs[(h100_runs["config"] == config) & (h100_runs["kind"] == "sweep")]
    if not len(s):
        return None
    s = s.sort_values("concurrency")
    return s.iloc[int(np.argmin((s["concurrency"] - agents).abs().to_numpy()))]


def batched_values(h100_runs: pd.DataFrame, agents: int) -> dict[str, float]:
    """``h100_<short>_batched_per_agent_tps`` (and its concurrency) nearest `agents`."""
    out = {}
    for cfg, (short, _) in H100_CONFIGS.items():
        row = nearest_sweep(h100_runs, cfg, agents)
        if row is not None:
            out[f"h100_{short}_batched_per_agent_tps"] = float(row["per_agent_tps"])
            out[f"h100_{short}_batched_concurrency"] = float(row["concurrency"])
    return out


def _scenarios(r: Results) -> list[tuple[str, int, str]]:
    """(label, prompt tokens, Strix prefill source) of each serving scenario."""
    out = []
    for p in dict.fromkeys([int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"])]):
        out.append((f"{p:,}-token prompts" if p else "no prompt (as the write-ups count)", p, "llama-bench"))
        if p and r.values.get("strix_server_c1_prefill_tps"):
            out.append((f"{p:,}-token prompts, Strix prefill at the llama-server rate", p, "llama-server"))
    return out


def _strix_time(r: Results, n: int, prompt: int, source: str) -> float | None:
    gen = r.values.get("strix_best_tg128_tps")
    pre = r.values.get("strix_best_pp512_tps" if source == "llama-bench" else "strix_server_c1_prefill_tps")
    if not gen or (prompt and not pre):
        return None
    return sequential_s(n, r.params["answer_tokens"], gen, prompt, pre)


def _h100_time(r: Results, cfg: str, n: int, prompt: int) -> tuple[float | None, int | None]:
    if r.h100_runs is None:
        return None, None
    row = nearest_sweep(r.h100_runs, cfg, n)
    if row is None:
        return None, None
    t = batched_s(r.params["answer_tokens"], float(row["per_agent_tps"]), prompt,
                  float(row["median_ttft_s"]), float(row["input_len"]))
    return t, int(row["concurrency"])


def serving(r: Results) -> pd.DataFrame:
    """Time to serve `agents` agents, per scenario, with the H100's advantage (numbers)."""
    n, rows = int(r.params["agents"]), []
    for label, prompt, source in _scenarios(r):
        row = dict(scenario=label, agents=n, prompt_tokens=prompt, answer_tokens=r.params["answer_tokens"],
                   strix_prefill=source if prompt else "", strix_s=_strix_time(r, n, prompt, source))
        for cfg, (short, _) in H100_CONFIGS.items():
            t, c = _h100_time(r, cfg, n, prompt)
            row[f"{short}_s"], row[f"{short}_concurrency"] = t, c
            row[f"{short}_advantage"] = row["strix_s"] / t if t and row["strix_s"] else None
        rows.append(row)
    return pd.DataFrame(rows)


def serving_display(r: Results) -> pd.DataFrame:
    s = serving(r)
    out = pd.DataFrame({"scenario": s["scenario"], STRIX_LABEL: s["strix_s"].map(fmt_seconds)})
    for cfg, (short, label) in H100_CONFIGS.items():
        conc = s[f"{short}_concurrency"].dropna()
        at = f" (c={int(conc.iloc[0])})" if len(conc) else ""
        out[f"{label}, batched{at}: time (advantage)"] = [
            f"{fmt_seconds(t)} ({fmt_ratio(a)})" for t, a in zip(s[f"{short}_s"], s[f"{short}_advantage"])]
    return out


def serving_curve(r: Results) -> pd.DataFrame:
    """Time to serve N = 1 … max(measured concurrency, agents) agents, per scenario and server."""
    top = int(r.params["agents"])
    if r.h100_runs is not None and len(r.h100_runs):
        top = max(top, int(r.h100_runs.loc[r.h100_runs["kind"] == "sweep", "concurrency"].max()))
    rows = []
    for label, prompt, source in _scenarios(r):
        for n in range(1, top + 1):
            strix = _strix_time(r, n, prompt, source)
            if source == "llama-bench" or prompt:
                name = STRIX_LABEL if source == "llama-bench" else f"{STRIX_LABEL}, llama-server prefill"
                rows.append(dict(prompt_tokens=prompt, agents=n, server=name, seconds=strix, measured_at=None))
            if source != "llama-bench":
                continue
            for cfg, (_, lab) in H100_CONFIGS.items():
                t, c = _h100_time(r, cfg, n, prompt)
                if t is not None:
                    rows.append(dict(prompt_tokens=prompt, agents=n, server=f"{lab} (batched)",
                                     seconds=t, measured_at=c))
    return pd.DataFrame(rows, columns=["prompt_tokens", "agents", "server", "seconds", "measured_at"])


def serving_figure(curve: pd.DataFrame) -> plt.Figure:
    """Time to serve N agents: a straight line for sequential, steps for batched."""
    prompts = list(dict.fromkeys(curve["prompt_tokens"]))
    fig, axes = plt.subplots(1, len(prompts), figsize=(5.2 * len(prompts), 4.2), sharey=True, squeeze=False)
    servers = [n for n in dict.fromkeys(curve["server"]) if "llama-server" not in n]
    colors = dict(zip(servers, sns.color_palette(n_colors=len(servers))))
    for name in curve["server"].unique():  # the same Strix Halo line, other prefill: same colour, dashed
        colors.setdefault(name, colors.get(STRIX_LABEL, "grey"))
    for ax, p in zip(axes[0], prompts):
        sub = curve[curve["prompt_tokens"] == p].dropna(subset=["seconds"])
        for name, g in sub.groupby("server", sort=False):
            dashed = "llama-server" in name
            ax.plot(g["agents"], g["seconds"], color=colors[name], label=name,
                    linestyle="--" if dashed else "-", drawstyle="default" if name.startswith("Strix") else "steps-mid")
            measured = g[g["agents"] == g["measured_at"]]
            if len(measured):
                ax.plot(measured["agents"], measured["seconds"], "o", color=colors[name])
        ax.set_yscale("log")
        ax.set_xlabel("agents served (N)")
        ax.set_title(f"{p:,}-token prompts" if p else "answers only, no prompt")
    axes[0][0].set_ylabel("time to serve all agents (s)")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# ---- comparison, ledger, caveats ---------------------------------------------------

def _ours(text: str) -> dict:
    return dict(origin="this chapter", caveat=text)


def _caveats(r: Results) -> pd.DataFrame:
    h100_configs = r.h100.study.configs if r.h100 else {}
    compared = [(SERVER, cfg) for cfg in H100_CONFIGS if cfg in h100_configs and SERVER in r.data.study.configs]
    cav = authors_caveats(r.published) + data_caveats(r.data, r.server, r.ledger, compared=compared,
                                                      extra_configs=h100_configs)
    if r.h100 is not None:
        for c in data_caveats(r.h100, r.h100_runs):
            if c["origin"] == "data rule: reconstructed" and r.data.study.reconstructed:
                continue  # said once already
            cav.append(dict(origin=f"{c['origin']} ({r.h100.study.id})", caveat=c["caveat"]))
    cav.append(_ours(
        "The Strix Halo figures are the author's own, from private benchmark notes; no one else "
        "measured them and no raw output was published, so nothing here checks them independently."))
    cav.append(_ours(
        "The serving model assumes a server that takes one request at a time, as the write-ups "
        "describe llama.cpp. llama-server can run several slots in parallel; with them, Strix "
        "Halo would serve agents faster than this model says."))
    cav.append(_ours(
        "Generation on Strix Halo is fast enough only because the model is a mixture of experts "
        "that reads about 3B of its 35B weights per token: the model was chosen to suit the "
        "memory bandwidth, and a dense model of similar size would not fare the same."))
    n_pp = r.llama.loc[r.llama["test"] == "pp", "n_prompt"]
    longest = max(int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"]))
    if len(n_pp) and longest > int(n_pp.max()):
        cav.append(_ours(
            f"Sequential times with {longest:,}-token prompts use the pp{int(n_pp.max())} rate for "
            "prefill; llama.cpp's prefill slows as the context grows, so these times flatter Strix "
            "Halo. The H100 side adds its measured median TTFT on top of a per-agent rate that "
            "already includes prefill, which flatters Strix Halo as well."))
    if len(r.server):
        cav.append(_ours(
            "The write-ups do not say how the 4k-input TTFT and the TPOT were measured. We represent "
            "them as a single-client `vllm bench serve` run against llama-server; that is our "
            "assumption (PROVENANCE.md), and its implied prefill rate disagrees with llama-bench's."))
    return pd.DataFrame(cav, columns=["origin", "caveat"])


# ---- prose numbers and downloads ---------------------------------------------------

def glue_values(r: Results) -> dict:
    """Numbers and names quoted in the chapter's prose, keyed by role."""
    out = {}
    t = per_test(r.llama)
    flat = t[~t["test"].str.contains("@")]
    for role, kind in (("pp", "pp"), ("tg", "tg")):
        hit = flat[flat["test"].str.fullmatch(rf"{kind}\d+")]
        if len(hit):
            row = hit.iloc[0]
            out[f"{role}_test"] = row["test"]
            out[f"{role}_best_tps"] = row["best_tps"]
            out[f"{role}_best_config"] = row["best_config"]
            out[f"{role}_worst_config"] = row["worst_config"]
            out[f"{role}_worst_tps"] = row["worst_tps"]
            out[f"{role}_spread"] = row["spread"]
    out["backends"] = int(r.llama["config"].nunique())
    out["tests"] = int(r.llama["test_name"].nunique())
    out["winners"] = int(t["best_config"].nunique())
    out["envelope_note"] = (
        f"The {out['tests']} tests are won by {out['winners']} different builds, so the best-of "
        "figures describe no single build: each build alone reaches only the shares below."
        if out["winners"] > 1 else
        "One build wins every test, so the best-of figures are that build's own; the others "
        "reach the shares below.")
    if len(r.server):
        s = r.server.iloc[0]
        out["server_input_len"] = int(s["input_len"])
        out["server_requests"] = int(s["completed"])
        out["server_ttft_ms"] = float(s["median_ttft_s"]) * 1000
        out["server_tpot_ms"] = float(s["median_tpot_s"]) * 1000
        out["server_decode_tps"] = 1 / float(s["median_tpot_s"])
        out["server_prefill_tps"] = float(s["prefill_tps"])
        if "pp_best_tps" in out:
            out["prefill_ratio"] = out["server_prefill_tps"] / out["pp_best_tps"]
            out["ttft_at_pp_rate_s"] = out["server_input_len"] / out["pp_best_tps"]
    sv = serving(r)
    for i, key in enumerate(("", "long_")):
        rows = sv[(sv["prompt_tokens"] == [r.params["prompt_tokens"], r.params["long_prompt_tokens"]][i])
                  & (sv["strix_prefill"].isin(["", "llama-bench"]))]
        if not len(rows):
            continue
        row = rows.iloc[0]
        for col in ("strix_s", "dense_s", "moe_s", "dense_advantage", "moe_advantage"):
            if pd.notna(row[col]):
                out[f"{key}{col}"] = float(row[col])
    for cfg, (short, _) in H100_CONFIGS.items():
        row = nearest_sweep(r.h100_runs, cfg, int(r.params["agents"])) if r.h100_runs is not None else None
        if row is None:
            continue
        out[f"{short}_concurrency"] = int(row["concurrency"])
        out[f"{short}_ttft_s"] = float(row["median_ttft_s"])
        if "strix_s" in out:  # the write-ups' count plus the H100's median TTFT at that load
            out[f"{short}_s_ttft"] = out[f"{short}_s"] + out[f"{short}_ttft_s"]
            out[f"{short}_advantage_ttft"] = out["strix_s"] / out[f"{short}_s_ttft"]
    counts = claims_mod.verdict_counts(r.ledger)
    out.update({f"claims_{k.replace(' ', '_')}": n for k, n in counts.items()})
    out["claims_total"] = len(r.ledger)
    out["cells_total"] = int(r.comparison["within"].notna().sum())
    out["cells_within"] = int((r.comparison["within"] == True).sum())  # noqa: E712
    out.update({k: r.params[k] for k in ("agents", "answer_tokens", "prompt_tokens", "long_prompt_tokens")})
    for key in _PROSE_NUMBERS:  # absent data (e.g. no H100 folder) shows as nan, not a broken page
        out.setdefault(key, float("nan"))
    return {k: (float(v) if isinstance(v, np.floating) else v) for k, v in out.items()}


_PROSE_NUMBERS = (
    "pp_best_tps", "pp_spread", "tg_best_tps", "tg_spread", "server_requests", "server_input_len",
    "server_ttft_ms", "server_tpot_ms", "server_decode_tps", "server_prefill_tps", "prefill_ratio",
    "ttft_at_pp_rate_s", "strix_s", "dense_s", "moe_s", "dense_advantage", "moe_advantage",
    "moe_concurrency", "moe_s_ttft", "moe_advantage_ttft", "long_strix_s",
)


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    """The chapter's tidy tables, as offered for download."""
    return {
        "llama_bench": with_share_of_best(r.llama), "best_of": per_test(r.llama),
        "server_runs": r.server, "server_requests": r.data["requests"],
        "serving": serving(r), "serving_curve": serving_curve(r),
        "published_vs_reproduced": r.comparison, "claims": r.ledger, "caveats": r.caveats,
    }


# ---- key figures for the synthesis chapter (benchbook.chapters.KEY_FIGURES) ---------

def key_figures(r: Results) -> pd.DataFrame:
    """Strix Halo's rows: the best-of-backends llama-bench figures, and the llama-server run.

    llama-bench's tg test decodes at almost no context and its figure is the best of the
    backends per test (an envelope no single build reaches on every test); the llama-server
    run decodes after a 4k prompt, so its 1 / median TPOT includes the KV reads of that
    context. llama.cpp serves one request at a time here, so the best aggregate is the
    single stream.
    """
    from . import accelerator_count

    rows = []
    t = per_test(r.llama) if len(r.llama) else pd.DataFrame()
    flat = t[~t["test"].str.contains("@")] if len(t) else t
    tg = flat[flat["test"].str.fullmatch(r"tg\d+")] if len(flat) else flat
    pp = flat[flat["test"].str.fullmatch(r"pp\d+")] if len(flat) else flat
    if len(tg):
        best = tg.iloc[0]
        c = r.data.study.configs.get(best["best_config"], {})
        n_gen = int(best["test"][2:])
        pre = pp.iloc[0] if len(pp) else None
        rows.append(dict(
            study=STUDY, platform=c.get("platform"), config=best["best_config"], model=c.get("model"),
            quantisation=c.get("quantisation"), single_stream_decode_tps=float(best["best_tps"]),
            acceptance_length=float("nan"), ttft_s=float("nan"), ttft_input_tokens=float("nan"),
            best_aggregate_tps=float(best["best_tps"]), best_aggregate_concurrency=1.0,
            cost_per_m=float("nan"), currency="", power_w=float("nan"), power_kind="",
            anchor="llama-bench-across-backends",
            label="Strix Halo, 35B-A3B Q8_0, llama-bench (best of backends)",
            accelerators=accelerator_count(c.get("accelerators")), kv_dtype=c.get("kv_dtype") or "",
            speculative="", decode_context_tokens=(n_gen - 1) / 2,
            decode_basis=f"llama-bench {best['test']}, best of {int(best['backends'])} backends",
            prefill_tps=float(pre["best_tps"]) if pre is not None else float("nan"),
            prefill_tokens=float(pre["test"][2:]) if pre is not None else float("nan"),
            notes=(f"prefill: llama-bench {pre['test']}, best of backends ({pre['best_config']})"
                   if pre is not None else "") + "; llama.cpp serves one request at a time",
        ))
    if len(r.server):
        s = r.server.iloc[0]
        c = r.data.study.configs.get(s["config"], {})
        rows.append(dict(
            study=STUDY, platform=c.get("platform"), config=s["config"], model=c.get("model"),
            quantisation=c.get("quantisation"), single_stream_decode_tps=1.0 / float(s["median_tpot_s"]),
            acceptance_length=float("nan"), ttft_s=float(s["median_ttft_s"]), ttft_input_tokens=float(s["input_len"]),
            best_aggregate_tps=float(s["output_tps"]), best_aggregate_concurrency=float(s["concurrency"]),
            cost_per_m=float("nan"), currency="", power_w=float("nan"), power_kind="",
            anchor="time-to-first-token-and-decode-step-at-4k-input",
            label="Strix Halo, 35B-A3B Q8_0, llama-server",
            accelerators=accelerator_count(c.get("accelerators")), kv_dtype=c.get("kv_dtype") or "",
            speculative="", decode_context_tokens=float(s["input_len"]) + (float(s["output_len"]) - 1) / 2,
            decode_basis=f"1 / median TPOT, one client, {int(s['input_len']):,}-token prompts",
            prefill_tps=float(s["prefill_tps"]), prefill_tokens=float(s["input_len"]),
            notes="prefill as input / TTFT of the llama-server run",
        ))
    return pd.DataFrame(rows)

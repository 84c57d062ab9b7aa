"""Figures of the power-sweep chapter (seaborn style of benchbook.page.plots).

Candles summarise the stats windows of one cell: the body spans mean ± one standard
deviation (clipped to the windows' range), the wick the lowest to the highest window, the
dot is the mean.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...page import interactive
from ...page.palette import model_colour, power_colour
from ...page.plots import MIN_FONT_PT
from ...study.marks import MARKS
from .analysis import Results, busy_configs, limits_order, per_minute, tokens_per_kw_table, window_mix


def _model_palette(r: Results) -> dict:
    """Model label -> its colour in every figure of the book."""
    return {label: model_colour(label) for label in r.models["label"]}


def _cells(busy: pd.DataFrame, col: str) -> pd.DataFrame:
    g = busy.groupby("running")[col]
    return pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1).fillna(0.0), "min": g.min(), "max": g.max(),
                         "n": g.size()}).reset_index()


def _candles(ax, stats: pd.DataFrame, x_offset: float, width: float, colour, label=None) -> None:
    x = stats["running"].to_numpy(dtype=float) + x_offset
    ax.vlines(x, stats["min"], stats["max"], color=colour, linewidth=1)
    # the body is mean ± 1 std, clipped to the windows' range (no negative throughput)
    lo = np.maximum((stats["mean"] - stats["std"]).to_numpy(), stats["min"].to_numpy())
    hi = np.minimum((stats["mean"] + stats["std"]).to_numpy(), stats["max"].to_numpy())
    ax.bar(x, hi - lo, bottom=lo, width=width, color=colour, alpha=0.45, edgecolor=colour, label=label)
    ax.plot(x, stats["mean"], "o", color=colour, markersize=3.5)


def candles_by_model(r: Results, config: str) -> plt.Figure:
    """One model: aggregate (top) and per-request (bottom) generation by concurrency, per limit."""
    keys = limits_order(r)
    fig, axes = plt.subplots(2, len(keys), figsize=(3.6 * len(keys), 6.2), sharex=True, sharey="row", squeeze=False)
    colour = model_colour(r.models.set_index("config")["label"][config])
    busy = r.busy[r.busy["config"] == config]
    for j, key in enumerate(keys):
        w = busy[busy["power_key"] == key]
        for i, col in enumerate(("generation_tps", "per_request_tps")):
            ax = axes[i, j]
            if len(w):
                _candles(ax, _cells(w, col), 0.0, 0.55, colour)
            ax.set_title(f"{key}" if i == 0 else "")
            ax.set_xlabel("requests running" if i == 1 else "")
        axes[0, j].set_xticks(sorted(busy["running"].unique()))
    axes[0, 0].set_ylabel("aggregate generation, t/s")
    axes[1, 0].set_ylabel("per request, t/s")
    label = r.models.set_index("config")["label"][config]
    fig.suptitle(f"{label}: generation per stats window by concurrency", fontweight="bold")
    fig.tight_layout()
    return fig


def threeway(r: Results) -> plt.Figure:
    """Each limit, the models side by side: aggregate and per-request generation candles."""
    keys = limits_order(r)
    configs = busy_configs(r)
    fig, axes = plt.subplots(2, len(keys), figsize=(3.8 * len(keys), 6.4), sharex=True, sharey="row", squeeze=False)
    width = 0.8 / max(len(configs), 1)
    labels = r.models.set_index("config")["label"]
    for j, key in enumerate(keys):
        w = r.busy[r.busy["power_key"] == key]
        for i, col in enumerate(("generation_tps", "per_request_tps")):
            ax = axes[i, j]
            for k, cid in enumerate(configs):
                mine = w[w["config"] == cid]
                if len(mine):
                    label = r.models.set_index("config")["label"][cid] if (i, j) == (0, 0) else None
                    _candles(ax, _cells(mine, col), (k - (len(configs) - 1) / 2) * width, width * 0.9,
                             model_colour(labels[cid]), label)
            ax.set_title(key if i == 0 else "")
            ax.set_xlabel("requests running" if i == 1 else "")
        axes[1, j].set_xticks(sorted(r.busy["running"].unique()))
    axes[0, 0].set_ylabel("aggregate generation, t/s")
    axes[1, 0].set_ylabel("per request, t/s")
    axes[0, 0].legend(loc="upper left")
    fig.suptitle("Three models at each power limit", fontweight="bold")
    fig.tight_layout()
    return fig


def prefill(r: Results) -> plt.Figure:
    """Prefill by concurrency: over all windows (dashed) and over windows with prefill (solid)."""
    keys = limits_order(r)
    fig, axes = plt.subplots(1, len(keys), figsize=(3.8 * len(keys), 3.6), sharey=True, squeeze=False)
    rows = []
    for (cid, key, c), g in r.busy.groupby(["config", "power_key", "running"]):
        act = g[g["prompt_tps"] > 0]["prompt_tps"]
        label = r.models.set_index("config")["label"][cid]
        rows.append(dict(model=label, power=key, running=c, view="all windows", tps=g["prompt_tps"].mean()))
        if len(act):
            rows.append(dict(model=label, power=key, running=c, view="windows with prefill", tps=act.mean()))
    df = pd.DataFrame(rows)
    for j, key in enumerate(keys):
        ax = axes[0, j]
        sns.lineplot(data=df[df["power"] == key], x="running", y="tps", hue="model", style="view",
                     hue_order=list(r.models.set_index("config")["label"][busy_configs(r)]),
                     palette=_model_palette(r),
                     markers=True, dashes={"all windows": (3, 2), "windows with prefill": ""}, ax=ax,
                     legend=(j == len(keys) - 1))
        ax.set_title(key)
        ax.set_xlabel("requests running")
        ax.set_ylabel("prompt tokens/s")
    if len(keys):
        axes[0, -1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Prefill by concurrency", fontweight="bold")
    fig.tight_layout()
    return fig


def completions(r: Results) -> plt.Figure:
    """Completions per minute (over the windows' measured length): concurrency (rows) by model
    and limit (columns)."""
    busy = r.busy
    labels = r.models.set_index("config")["label"]
    tab = busy.groupby(["config", "power_key", "running"]).apply(per_minute).rename("per_min").to_frame()
    wide = tab["per_min"].unstack(["config", "power_key"])
    order = [(c, k) for c in r.models["config"] for k in limits_order(r) if (c, k) in wide.columns]
    wide = wide[order]
    wide.columns = [f"{labels[c].replace('Qwen', '')}\n{k}" for c, k in order]
    fig, ax = plt.subplots(figsize=(1.15 * len(order) + 2, 0.55 * len(wide) + 1.8))
    sns.heatmap(wide, annot=True, fmt=".1f", cmap="viridis", cbar_kws={"label": "completions per minute"}, ax=ax)
    ax.set_ylabel("requests running")
    ax.set_xlabel("")
    ax.tick_params(axis="x", labelsize=MIN_FONT_PT, rotation=0)
    ax.set_title("Completions per minute by concurrency", fontweight="bold")
    fig.tight_layout()
    return fig


def tokens_per_kw(r: Results) -> plt.Figure:
    """Generated tokens per kW (nominal cards x limit) and per kWh (logged draw)."""
    t = tokens_per_kw_table(r)
    if t.empty:
        return plt.figure()
    num = lambda s: pd.to_numeric(s.str.replace(",", ""), errors="coerce")  # noqa: E731
    df = pd.DataFrame({"model": t["model"], "power": t["power limit"], "range": t["concurrent"] + " requests",
                       "nominal": num(t["gen t/kW (nominal)"]),
                       "measured": num(t["gen tokens/kWh (logged draw)"]) / 3600})
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for ax, rng in zip(axes, sorted(df["range"].unique())):
        d = df[df["range"] == rng]
        sns.barplot(data=d, x="model", y="nominal", hue="power", ax=ax, alpha=0.85, legend=ax is axes[-1], saturation=1,
                    palette={p: power_colour(p) for p in d["power"].unique()})
        xs = {m: i for i, m in enumerate(d["model"].unique())}
        powers = list(d["power"].unique())
        for row in d.itertuples():
            off = (powers.index(row.power) - (len(powers) - 1) / 2) * 0.8 / len(powers)
            ax.plot(xs[row.model] + off, row.measured, "kD", markersize=4)
        ax.set_title(rng)
        ax.set_xlabel("")
        ax.set_ylabel("generated tokens/s per kW")
        ax.tick_params(axis="x", labelsize=MIN_FONT_PT)
    # the diamonds read the logged draw: say so in the legend when it holds a generator's choice
    ids = {i for c in ("measured GPU kW", "gen tokens/kWh (logged draw)") for i in _marked(t, c)}
    axes[-1].legend(title="limit (bars: 4 x limit; ◆: logged draw" + (", assumed)" if ids else ")"))
    if ids:
        fig.benchbook_assumed = {i: r.assumed_why.get(i, "") for i in ids}
    fig.suptitle("Generation per kW of GPU power", fontweight="bold")
    fig.tight_layout()
    return fig


def _marked(t: pd.DataFrame, column: str) -> set:
    """Assumption ids a display table marks anywhere in one column."""

    return {i for ids in (t.attrs.get(MARKS) or {}).get(column, {}).values() for i in ids}


def mix(r: Results) -> plt.Figure:
    """How each model's busy windows spread over concurrency, per limit."""
    m = window_mix(r)
    g = sns.catplot(data=m, x="running", y="share", hue="model", col="power_key", kind="bar",
                    palette=_model_palette(r), saturation=1,
                    col_order=limits_order(r), height=3.2, aspect=1.1)
    g.set_axis_labels("requests running", "share of the model's windows")
    g.set_titles("{col_name}")
    g.figure.suptitle("Where each model spent its windows", fontweight="bold", y=1.03)
    return g.figure


def interactive_generation(r: Results):
    """Mean generation by requests running, every model at every limit, as one interactive
    chart (colour: model; dash: power limit), with per-request rate and window count on hover."""

    order = {k: i for i, k in enumerate(limits_order(r))}
    g = (r.busy.groupby(["config", "power_key", "running"])
         .agg(tps=("generation_tps", "mean"), per_request=("per_request_tps", "mean"), n=("generation_tps", "size"))
         .reset_index())
    g = g.assign(model=g["config"].map(r.models.set_index("config")["label"]), _o=g["power_key"].map(order))
    g = g.sort_values(["_o", "running"]).assign(per_req=lambda d: d["per_request"].map(lambda v: f"{v:,.1f}"),
                                                 windows=lambda d: d["n"].astype(str))
    return interactive.lines(g, "running", "tps", "model", "Mean generation by concurrency, every model at every limit",
                             "requests running", "generation t/s (mean of windows)", dash="power_key",
                             hover={"per_req": "per request t/s", "windows": "stats windows"})

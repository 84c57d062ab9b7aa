"""Figures with one consistent look. Each function returns a matplotlib Figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

PALETTE = "colorblind"


def set_theme() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    # Labels and legends hold names from data: never parsed as math ('$' is a character, and a
    # malformed formula cannot stop a chapter). Log axes get plain tick labels (log_scale).
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold",
                         "text.parse_math": False})


def log_scale(ax, which: str = "y", base: float = 10) -> None:
    """A log axis labelled in plain numbers (0.4, 1, 20; never 10^k math): minor ticks are
    labelled too when the axis spans too few decades for the major ones to say much."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):  # matplotlib picks which ticks to label; the text is plain
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:g}"

    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log", base=base)
    axis.set_major_formatter(Plain(base=base, labelOnlyBase=False, minor_thresholds=(1.5, 0.5)))
    axis.set_minor_formatter(Plain(base=base, labelOnlyBase=False, minor_thresholds=(1.5, 0.5)))


def _concurrency_axis(ax, sweep: pd.DataFrame) -> None:
    log_scale(ax, "x", base=2)
    ticks = sorted(sweep["concurrency"].dropna().unique())
    ax.set_xticks(ticks, [str(int(t)) for t in ticks])
    ax.set_xlabel("concurrent requests")


def throughput(sweep: pd.DataFrame) -> plt.Figure:
    """Aggregate and per-agent output t/s against concurrency, one line per config."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, col, title in zip(axes, ["output_tps", "per_agent_tps"], ["Aggregate output", "Per agent"]):
        sns.lineplot(data=sweep, x="concurrency", y=col, hue="config", marker="o", ax=ax)
        _concurrency_axis(ax, sweep)
        ax.set_ylabel("tokens/s")
        ax.set_title(title)
    fig.tight_layout()
    return fig


def ttft(sweep: pd.DataFrame) -> plt.Figure:
    """Median and P99 TTFT against concurrency."""
    long = sweep.melt(id_vars=["config", "concurrency"], value_vars=["median_ttft_s", "p99_ttft_s"],
                      var_name="statistic", value_name="ttft_s")
    long["statistic"] = long["statistic"].map({"median_ttft_s": "median", "p99_ttft_s": "P99"})
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=long, x="concurrency", y="ttft_s", hue="config", style="statistic", marker="o", ax=ax)
    _concurrency_axis(ax, sweep)
    ax.set_ylabel("time to first token (s)")
    ax.set_title("TTFT under load")
    fig.tight_layout()
    return fig


def tpot(sweep: pd.DataFrame) -> plt.Figure:
    """Median TPOT against concurrency, in milliseconds."""
    data = sweep.assign(tpot_ms=sweep["median_tpot_s"] * 1000)
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=data, x="concurrency", y="tpot_ms", hue="config", marker="o", ax=ax)
    _concurrency_axis(ax, sweep)
    ax.set_ylabel("median time per output token (ms)")
    ax.set_title("Decode step under load")
    fig.tight_layout()
    return fig


def cost(sweep: pd.DataFrame, currency: str) -> plt.Figure:
    """Cost per million output tokens against concurrency."""
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=sweep, x="concurrency", y="cost_per_m", hue="config", marker="o", ax=ax)
    _concurrency_axis(ax, sweep)
    log_scale(ax, "y")
    ax.set_ylabel(f"{currency} per million output tokens")
    ax.set_title("Cost at a fixed hourly price")
    fig.tight_layout()
    return fig

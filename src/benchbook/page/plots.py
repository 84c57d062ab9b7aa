"""Figures with one consistent look. Each function returns a matplotlib Figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.text import Text

from ..study.marks import SERIES, SERIES_PART, WHY, series
from .palette import NEUTRAL, model_colour, variant_colours

MIN_FONT_PT = 10  # no text smaller
# A figure is shown as wide as the article column, which is narrowest on a desktop at a
# 1200 px wide window (both sidebars shown): 608 px. Text of MIN_FONT_PT points in a figure
# W inches wide then shows at MIN_FONT_PT * 608 / (72 * W) px, so figures wider than this
# (saved with their padding) are scaled to it when they are rendered (fit_width), keeping
# every label at 9 px or more at every window width from 656 px up; below that, a phone
# gets the figure laid out again for its width (page.phone; both saved by page.render).
MAX_WIDTH_IN = 9.3
DESKTOP_DPI = 110  # the figures' dpi (set_theme): 1,023 px wide at MAX_WIDTH_IN


def set_theme() -> None:
    # a series no palette of benchbook.page.palette colours is drawn in grey, never in a
    # colour that means a model elsewhere
    sns.set_theme(context="notebook", style="whitegrid", palette=list(NEUTRAL))
    # Labels and legends hold names from data: never parsed as math ('$' is a character, and a
    # malformed formula cannot stop a chapter). Log axes get plain tick labels (log_scale).
    plt.rcParams.update({"figure.dpi": DESKTOP_DPI, "savefig.bbox": "tight", "axes.titleweight": "bold",
                         "text.parse_math": False, "font.size": 11, "axes.labelsize": 11,
                         "xtick.labelsize": MIN_FONT_PT, "ytick.labelsize": MIN_FONT_PT,
                         "legend.fontsize": MIN_FONT_PT, "legend.title_fontsize": MIN_FONT_PT})
    _fit_figures_when_rendered()


def fit_width(fig: plt.Figure, max_width_in: float = MAX_WIDTH_IN) -> plt.Figure:
    """Scale a figure whose drawn area (tight box) is wider than `max_width_in` down to it,
    text sizes unchanged, so its text is not shrunk below 9 px on the page. Text (a legend
    beside the axes) keeps its width when the figure shrinks, so one scaling can fall
    short: the figure is scaled again until it fits or stops narrowing."""
    pad = plt.rcParams["savefig.pad_inches"]
    pad = 2 * pad if isinstance(pad, (int, float)) else 0.2
    target = max_width_in - pad  # the saved image adds the padding on both sides
    last = float("inf")
    for _ in range(6):
        try:
            width = fig.get_tightbbox(fig.canvas.get_renderer()).width
        except Exception:  # noqa: BLE001 - a figure that cannot lay out is drawn as it is
            return fig
        if width <= target * 1.001 or width >= last * 0.999:
            break
        last = width
        w, h = fig.get_size_inches()
        scale = max(target / width, 0.3)
        fig.set_size_inches(w * scale, h * scale)
    return fig


def smallest_font_pt(fig: plt.Figure, drawn: bool = False) -> float:
    """The size in points of the smallest text the figure draws (visible, not blank); laid
    out first, as tick labels are made when a figure is drawn, unless it was just `drawn`
    (saved: a second layout would only repeat that work)."""
    if not drawn:
        fig.draw_without_rendering()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
             and (t.axes is None or t.axes.get_visible())]
    return min(sizes, default=MIN_FONT_PT)


def _fit_figures_when_rendered() -> None:
    """In a notebook kernel, every figure shown or glued passes through fit_width first.

    The inline backend registers its PNG printer late (with the first figure, or after the
    cell that first imports pyplot), so the wrapper is also (re)applied before and after
    every cell; it wraps whatever printer is registered, once."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    # pyplot loads its backend, and the inline backend registers its printer, with the
    # first figure: make one now so the printer exists before any chapter figure is glued
    plt.close(plt.figure())
    _wrap_png_printer(shell)
    for event in ("pre_run_cell", "post_run_cell"):
        callbacks = shell.events.callbacks.get(event, [])
        if _wrap_on_event not in callbacks:
            shell.events.register(event, _wrap_on_event)


def _wrap_on_event(*_args) -> None:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        _wrap_png_printer(shell)


def _wrap_png_printer(shell) -> None:
    from matplotlib.figure import Figure

    png = shell.display_formatter.formatters["image/png"]
    try:
        render = png.lookup_by_type(Figure)
    except KeyError:
        return
    if getattr(render, "_benchbook_fit", False):
        return

    def fitted(fig, *args, **kwargs):
        return render(fit_width(fig), *args, **kwargs)

    fitted._benchbook_fit = True
    png.for_type(Figure, fitted)


def mark_series(fig: plt.Figure, legend, marked: dict, why: dict, what: str = "") -> None:
    """Name the series drawn from assumed cells in the legend ('… (assumed)', or '(partly
    assumed)' when only some points are; `what` says which of a series' lines, e.g. 'P99'),
    and keep their ids on the figure for its caption (report.glue_figure)."""

    if not marked or legend is None:
        return
    for text in legend.get_texts():
        hit = marked.get(text.get_text())
        if hit:
            suffix = (SERIES if hit[1] else SERIES_PART).strip()
            text.set_text(f"{text.get_text()} ({what + ' ' if what else ''}{suffix[1:-1]})")
    found = getattr(fig, "benchbook_assumed", {})
    found.update({i: why.get(i, "") for ids, _ in marked.values() for i in ids})
    fig.benchbook_assumed = found


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


def sweep_palette(sweep: pd.DataFrame) -> dict:
    """Each configuration in its model's colour (its `model` column; shades of it for
    configurations of one model); a configuration of an unnamed model in the colour kept
    for models the book does not know."""
    first = sweep.drop_duplicates("config")
    models = first["model"] if "model" in first else pd.Series(None, index=first.index)
    return config_colours({c: m if isinstance(m, str) else None for c, m in zip(first["config"], models)})


def throughput(sweep: pd.DataFrame) -> plt.Figure:
    """Aggregate and per-agent output t/s against concurrency, one line per config."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, col, title in zip(axes, ["output_tps", "per_agent_tps"], ["Aggregate output", "Per agent"]):
        sns.lineplot(data=sweep, x="concurrency", y=col, hue="config", marker="o", ax=ax, palette=sweep_palette(sweep))
        _concurrency_axis(ax, sweep)
        ax.set_ylabel("tokens/s")
        ax.set_title(title)
        _mark(fig, ax, sweep, [col])
    fig.tight_layout()
    return fig


def _mark(fig, ax, sweep: pd.DataFrame, columns: list[str], what: str = "") -> None:
    """Mark the configurations whose points in `columns` rest on assumed cells."""

    mark_series(fig, ax.get_legend(), series(sweep, "config", columns), sweep.attrs.get(WHY) or {}, what)


def ttft(sweep: pd.DataFrame) -> plt.Figure:
    """Median and P99 TTFT against concurrency."""
    long = sweep.melt(id_vars=["config", "concurrency"], value_vars=["median_ttft_s", "p99_ttft_s"],
                      var_name="statistic", value_name="ttft_s")
    long["statistic"] = long["statistic"].map({"median_ttft_s": "median", "p99_ttft_s": "P99"})
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=long, x="concurrency", y="ttft_s", hue="config", style="statistic", marker="o", ax=ax,
                 palette=sweep_palette(sweep))
    _concurrency_axis(ax, sweep)
    _mark(fig, ax, sweep, ["median_ttft_s"], "median")
    _mark(fig, ax, sweep, ["p99_ttft_s"], "P99")
    ax.set_ylabel("time to first token (s)")
    ax.set_title("TTFT under load")
    fig.tight_layout()
    return fig


def tpot(sweep: pd.DataFrame) -> plt.Figure:
    """Median TPOT against concurrency, in milliseconds."""
    data = sweep.assign(tpot_ms=sweep["median_tpot_s"] * 1000)
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=data, x="concurrency", y="tpot_ms", hue="config", marker="o", ax=ax, palette=sweep_palette(sweep))
    _concurrency_axis(ax, sweep)
    _mark(fig, ax, sweep, ["median_tpot_s"])
    ax.set_ylabel("median time per output token (ms)")
    ax.set_title("Decode step under load")
    fig.tight_layout()
    return fig


def cost(sweep: pd.DataFrame, currency: str) -> plt.Figure:
    """Cost per million output tokens against concurrency."""
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=sweep, x="concurrency", y="cost_per_m", hue="config", marker="o", ax=ax,
                 palette=sweep_palette(sweep))
    _concurrency_axis(ax, sweep)
    _mark(fig, ax, sweep, ["cost_per_m"])
    log_scale(ax, "y")
    ax.set_ylabel(f"{currency} per million output tokens")
    ax.set_title("Cost at a fixed hourly price")
    fig.tight_layout()
    return fig


def config_colours(configs: dict) -> dict:
    """Label -> colour, one per configuration, each in its model's colour: configurations
    of one model (two precisions, MTP on and off) in shades of it, so they stay told apart
    without borrowing another model's colour. `configs`: label -> model (None when unknown)."""
    by_model: dict = {}
    for label, model in configs.items():
        by_model.setdefault(model_colour(model), []).append(label)
    colours = {}
    for labels in by_model.values():
        colours.update(zip(labels, variant_colours(configs[labels[0]], len(labels))))
    return {label: colours[label] for label in configs}


_PERCENTILE_STYLE = {50: "-", 95: "--", 99: ":"}
_LIMIT_STYLE = (0, (6, 2, 1, 2))  # dash-dot: not one of the percentiles' styles


def rate_sweep(rs) -> plt.Figure | None:
    """Request-rate sweeps (benchbook.analysis.rate_sweep.RateSweeps): TTFT and TPOT p50 /
    p95 / p99 and output t/s against the achieved request rate, one row of panels per
    workload with two or more rates, one colour per configuration, latencies on log axes
    (they span orders of magnitude once a server falls behind). A percentile the file
    does not give leaves a gap in its line, never a line drawn across it. None when no
    workload was swept at two rates."""
    from matplotlib.lines import Line2D

    s = rs.steps
    swept = [w for w, g in s.groupby("workload", sort=False) if g.groupby("config")["request_rate"].nunique().max() > 1]
    if not swept:
        return None
    colours = config_colours({rs.labels[c]: rs.models.get(c) for c in rs.labels if (s["config"] == c).any()})
    fig, axes = plt.subplots(len(swept), 3, figsize=(10, 3.4 * len(swept) + 0.6), squeeze=False)
    for row, w in zip(axes, swept):
        g = s[s["workload"] == w]
        for cid, mine in g.groupby("config", sort=False):
            mine = mine.sort_values("request_rate")
            x, colour = mine["achieved_rps"].astype(float), colours[rs.labels[cid]]
            for ax, metric, scale in ((row[0], "ttft", 1.0), (row[1], "tpot", 1000.0)):
                for q, style in _PERCENTILE_STYLE.items():
                    ax.plot(x, mine[f"{metric}_p{q}_s"].astype(float) * scale, style, color=colour, marker="o",
                            markersize=3.5)
            row[2].plot(x, mine["output_tps"].astype(float), "-", color=colour, marker="o", markersize=3.5)
        for limit in rs.limits_s:
            row[0].axhline(limit, color="0.65", linewidth=0.9, linestyle=_LIMIT_STYLE)
        log_scale(row[0], "y")
        log_scale(row[1], "y")
        for ax, title, unit in zip(row, ("Time to first token", "Time per output token", "Output throughput"),
                                   ("s", "ms", "tokens/s")):
            ax.set_title(title)
            ax.set_ylabel(unit)
            ax.set_xlabel("achieved requests/s")
        row[1].text(0.5, 1.16, g["sweep"].iloc[0], transform=row[1].transAxes, ha="center", fontsize=MIN_FONT_PT)
    handles = [Line2D([], [], color=c, marker="o", label=label) for label, c in colours.items()]
    handles += [Line2D([], [], color="0.3", linestyle=style, label=f"p{q}") for q, style in _PERCENTILE_STYLE.items()]
    handles.append(Line2D([], [], color="0.65", linestyle=_LIMIT_STYLE, label="TTFT limits"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.06 + 0.04 * (len(handles) > 4), 1, 1))
    return fig

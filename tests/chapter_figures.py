"""Every figure function of the chapters, drawn on the reconstructed data (shared by the
figure tests: tests/page/test_plots.py, tests/page/test_phone.py)."""

from __future__ import annotations

import functools
from pathlib import Path

from benchbook.page import plots

DATA = Path(__file__).parents[1] / "data"


@functools.cache
def _analysed() -> dict:
    """Each chapter's analysis of the reconstructed data, once per test process (the figure
    tests draw every figure again from it; analysing took most of their time)."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.chapters.gb10 import analysis as gb10
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.power_sweep import analysis as power_sweep
    from benchbook.chapters.strix import analysis as strix

    return {"h100": h100.analyse(DATA / "h100-dense-vs-moe-mtp", DATA / "strix-halo-baseline"),
            "3090": ds.analyse(DATA / "3090-dense-vs-sparse"),
            "power": power_sweep.analyse(DATA / "power-sweep"),
            "gb10": gb10.analyse(DATA / "gb10-mtp"),
            "strix": strix.analyse(DATA / "strix-halo-baseline", DATA / "h100-dense-vs-moe-mtp")}


def chapter_figures():
    """Every figure function of the chapters, on the reconstructed data: new figures each
    call, drawn from one analysis per process."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.chapters.gb10 import analysis as gb10
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.power_sweep import figures as pf
    from benchbook.chapters.strix import analysis as strix

    a = _analysed()
    sweep = h100.sweeps(a["h100"])
    yield "h100", [plots.throughput(sweep), plots.ttft(sweep), plots.tpot(sweep), plots.cost(sweep, a["h100"].currency)]
    r = a["3090"]
    yield "3090", [ds.speed_figure(r), ds.breakdown_figure(r), ds.rates_figure(r)]
    r = a["power"]
    yield "power", [pf.candles_by_model(r, r.models["config"].iloc[0]), pf.prefill(r), pf.completions(r),
                    pf.mix(r), pf.threeway(r), pf.tokens_per_kw(r)]
    r = a["gb10"]
    yield "gb10", [gb10.fig_deltas(r), gb10.fig_acceptance(r), gb10.fig_itl(r)]
    r = a["strix"]
    yield "strix", [strix.spread_figure(r), strix.serving_figure(strix.serving_curve(r))]


def panels_with_legends(n: int, width: float, label: str = "a series"):
    """A figure of `n` panels side by side, each with one line and its legend: the layout a
    phone rendering has to stack (tests of page.phone, page.render and site.picture)."""
    import matplotlib.pyplot as plt

    plots.set_theme()
    fig, axes = plt.subplots(1, n, figsize=(width, 4))
    for ax in axes:
        ax.plot([1, 2], [1, 2], label=label)
        ax.legend()
    return fig, axes

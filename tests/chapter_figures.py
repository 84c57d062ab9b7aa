"""Every figure function of the chapters, drawn on the reconstructed data (shared by the
figure tests: tests/page/test_plots.py, tests/page/test_phone.py)."""

from __future__ import annotations

from pathlib import Path

from benchbook.page import plots

DATA = Path(__file__).parents[1] / "data"


def chapter_figures():
    """Every figure function of the chapters, on the reconstructed data."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.chapters.gb10 import analysis as gb10
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.power_sweep import analysis as power_sweep
    from benchbook.chapters.power_sweep import figures as pf
    from benchbook.chapters.strix import analysis as strix

    r = h100.analyse(DATA / "h100-dense-vs-moe-mtp", DATA / "strix-halo-baseline")
    sweep = h100.sweeps(r)
    yield "h100", [plots.throughput(sweep), plots.ttft(sweep), plots.tpot(sweep), plots.cost(sweep, r.currency)]
    r = ds.analyse(DATA / "3090-dense-vs-sparse")
    yield "3090", [ds.speed_figure(r), ds.breakdown_figure(r), ds.rates_figure(r)]
    r = power_sweep.analyse(DATA / "power-sweep")
    yield "power", [pf.candles_by_model(r, r.models["config"].iloc[0]), pf.prefill(r), pf.completions(r),
                    pf.mix(r), pf.threeway(r), pf.tokens_per_kw(r)]
    r = gb10.analyse(DATA / "gb10-mtp")
    yield "gb10", [gb10.fig_deltas(r), gb10.fig_acceptance(r), gb10.fig_itl(r)]
    r = strix.analyse(DATA / "strix-halo-baseline", DATA / "h100-dense-vs-moe-mtp")
    yield "strix", [strix.spread_figure(r), strix.serving_figure(strix.serving_curve(r))]

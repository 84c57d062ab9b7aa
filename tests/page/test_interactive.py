"""Interactive charts: the page's data block cannot be closed by text from data, and a
series keeps its model's colour."""

from __future__ import annotations

import html
import json
import re

import pandas as pd

from benchbook.page import interactive, palette


def frame(name: str) -> pd.DataFrame:
    return pd.DataFrame({"c": [1, 2, 4], "tps": [10.0, 18.0, 30.0], "series": [name] * 3,
                         "model": ["Qwen/Qwen3.6-35B-A3B-FP8"] * 3, "note": ["a", "b", "c"]})


def test_a_name_from_data_cannot_close_the_data_block():
    hostile = '</script><script>alert(1)</script>'
    fig = interactive.lines(frame(hostile), "c", "tps", "series", "t", "x", "y")
    out = interactive.block(fig, "Interactive version")
    inner = re.search(r'<script type="application/json">(.*)</script></div></details>$', out, re.S).group(1)
    assert "</script" not in inner and "<" not in inner
    spec = json.loads(inner)  # still the chart's JSON
    # escaped for plotly, which reads <b> and <a href> in names: the legend shows the text
    assert spec["data"][0]["name"] == html.escape(hostile)


def test_series_take_their_model_colour_and_hover_shows_the_extra_columns():
    fig = interactive.lines(frame("H100, 35B"), "c", "tps", "series", "t", "x", "y",
                            colour_of={"H100, 35B": "Qwen3.6-35B-A3B-FP8"}, hover={"note": "why"})
    trace = fig.data[0]
    assert trace.line.color == palette.model_colour("Qwen3.6-35B-A3B")
    assert "why: %{customdata[0]}" in trace.hovertemplate
    assert list(trace.customdata[:, 0]) == ["a", "b", "c"]


def test_a_dash_column_gives_one_line_per_value_with_its_own_dash():
    df = pd.concat([frame("m").assign(limit="200W"), frame("m").assign(limit="300W")])
    fig = interactive.lines(df, "c", "tps", "series", "t", "x", "y", dash="limit", colour_by="model")
    assert [t.name for t in fig.data] == ["m (200W)", "m (300W)"]
    assert fig.data[0].line.dash != fig.data[1].line.dash


# ---- the filtered scatter (the synthesis's cross-study chart) ---------------------------

def points_frame(platform: str = "RTX 3090") -> pd.DataFrame:
    return pd.DataFrame({
        "per_user_tps": [80.0, 30.0, 50.0, 12.0], "per_device_tps": [75.0, 900.0, 50.0, 60.0],
        "platform_name": ["H100 SXM5 80GB", "H100 SXM5 80GB", platform, platform],
        "model_name": ["Qwen3.6-27B", "Qwen3.6-27B", "Qwen3.6-27B", "Qwen3.6-35B-A3B"],
        "precision": ["FP8", "FP8", "INT4-AWQ", "INT4-AWQ"],
        "data_kind": ["reconstructed", "reconstructed", "measured", "measured"],
        "link": ["h100.html#concurrency", "h100.html#concurrency", "3090.html#speed", "3090.html#speed#2"],
        "concurrency": [1, 32, 1, 4]})


FILTERS = {"platform_name": "Platform", "model_name": "Model", "precision": "Precision", "data_kind": "Data"}


def scatter(df: pd.DataFrame):
    return interactive.scatter(df, "per_user_tps", "per_device_tps", "t", "per user", "per device",
                               colour="platform_name", symbol="data_kind", filters=FILTERS, link="link",
                               hover={"concurrency": "concurrency"})


def test_scatter_has_a_trace_per_filter_combination_each_point_with_its_own_link():
    fig = scatter(points_frame())
    assert len(fig.data) == 3  # H100/27B/FP8, 3090/27B/INT4, 3090/35B/INT4
    got = {(t.meta["filter"]["platform_name"], t.meta["filter"]["model_name"]): (list(t.x), list(t.y), t.meta["links"])
           for t in fig.data}
    assert got[("H100 SXM5 80GB", "Qwen3.6-27B")] == ([80.0, 30.0], [75.0, 900.0], ["h100.html#concurrency"] * 2)
    assert got[("RTX 3090", "Qwen3.6-35B-A3B")] == ([12.0], [60.0], ["3090.html#speed#2"])
    # one legend entry per platform and data kind; colour by platform, shape by data kind
    assert [t.showlegend for t in fig.data].count(True) == 2
    assert fig.data[0].marker.color == palette.platform_colour("H100 SXM5 80GB")
    assert len({t.marker.symbol for t in fig.data}) == 2
    assert "concurrency: %{customdata[0]}" in fig.data[0].hovertemplate
    assert fig.layout.xaxis.type == "log" and fig.layout.meta["benchbook_filters"] == FILTERS
    assert fig.layout.xaxis.dtick == fig.layout.yaxis.dtick == 1  # powers of ten only, no bare 2 and 5


def test_filter_controls_list_every_value_with_its_count_and_escape_names_from_data():
    hostile = '<img src=x onerror=alert(1)>'
    df = points_frame(hostile)
    controls = interactive.filter_controls(df, FILTERS)
    assert "<img" not in controls and html.escape(hostile, quote=True) in controls
    assert controls.count("<select") == 4 and 'data-benchbook-filter="precision"' in controls
    assert ">INT4-AWQ (2)</option>" in controls and ">all (4)</option>" in controls
    assert "All 4 points shown." in controls
    # the value a select sends is the value the trace carries
    fig = scatter(df)
    carried = {t.meta["filter"]["platform_name"] for t in fig.data}
    offered = set(re.findall(r'<option value="([^"]+)">', controls))
    assert {html.unescape(v) for v in offered} >= carried


def test_the_filtered_block_is_folded_with_its_controls_before_the_chart_data():
    fig = scatter(points_frame())
    out = interactive.filtered_block(fig, "Every point", interactive.filter_controls(points_frame(), FILTERS))
    assert out.startswith('<details class="benchbook-details benchbook-interactive">')  # plotly.js loads when opened
    assert interactive.filtered_block(fig, "Every point", "", open_=True).startswith("<details open ")
    assert out.index("</summary>") < out.index("<form") < out.index('<div class="benchbook-plotly">')
    spec = json.loads(re.search(r'<script type="application/json">(.*)</script>', out, re.S).group(1))
    assert spec["data"][0]["meta"]["links"][0] == "h100.html#concurrency"

"""Interactive charts: the page's data block cannot be closed by text from data, labels stay
text, a series keeps its palette colour, and each point's tooltip says its values."""

from __future__ import annotations

import html
import json
import re

import pandas as pd

from benchbook.format import fmt_significant
from benchbook.page import interactive, palette
from benchbook.study.marks import LEGEND, SYMBOL, WHY


def frame(name: str) -> pd.DataFrame:
    return pd.DataFrame({"c": [1, 2, 4], "tps": [10.0, 18.0, 30.0], "series": [name] * 3,
                         "model": ["Qwen/Qwen3.6-35B-A3B-FP8"] * 3, "note": ["a", "b", "c"]})


def spec_of(out: str) -> dict:
    inner = re.search(r'<script type="application/json">(.*?)</script></div>', out, re.S).group(1)
    assert "</script" not in inner and "<" not in inner and ">" not in inner
    return json.loads(inner)


def test_a_name_from_data_cannot_close_the_data_block_and_stays_text():
    hostile = '</script><script>alert(1)</script>\u202e'
    chart = interactive.lines(frame(hostile), "c", "tps", "series", "t", "x", "y")
    out = interactive.block(chart, "Interactive version")
    spec = spec_of(out)  # still the chart's JSON
    # the page sets it as text (canvas, textContent), so it is kept as written, not escaped;
    # a direction control is shown, not obeyed
    assert spec["series"][0]["name"] == "</script><script>alert(1)</script><U+202E>"
    assert spec["legend"][0]["name"] == spec["series"][0]["name"]
    assert out.startswith('<div class="benchbook-interactive">')  # inline, never folded


def test_series_take_their_model_colour_and_hover_shows_the_values_and_extra_columns():
    chart = interactive.lines(frame("H100, 35B"), "c", "tps", "series", "t", "concurrency", "t/s",
                              colour_of={"H100, 35B": "Qwen3.6-35B-A3B-FP8"}, hover={"note": "why"}, log_x=True)
    s = chart.series[0]
    assert s["colour"] == palette.model_colour("Qwen3.6-35B-A3B")
    assert s["x"] == [1, 2, 4] and s["y"] == [10.0, 18.0, 30.0]
    assert interactive.tooltip_lines(chart, 0, 1) == ["concurrency: 2", "t/s: 18", "why: b"]
    assert s["tips"][1] == ["2", "18", "b"] and chart.spec["tip"] == ["concurrency", "t/s", "why"]  # labels once
    assert chart.spec["x"] == {"label": "concurrency", "log": True, "ticks": [1.0, 2.0, 4.0]}  # labelled at its values
    assert chart.spec["y"] == {"label": "t/s", "log": False}


def test_a_dash_column_gives_one_line_per_value_with_its_own_dash():
    df = pd.concat([frame("m").assign(limit="200W"), frame("m").assign(limit="300W")])
    chart = interactive.lines(df, "c", "tps", "series", "t", "x", "y", dash="limit", colour_by="model")
    assert [s["name"] for s in chart.series] == ["m (200W)", "m (300W)"]
    assert chart.series[0]["dash"] != chart.series[1]["dash"]
    assert [e["dash"] for e in chart.spec["legend"]] == [s["dash"] for s in chart.series]  # the legend shows it


def test_a_missing_or_infinite_value_is_a_gap_and_the_spec_stays_json():
    df = frame("m").assign(tps=[10.0, float("inf"), float("nan")])
    chart = interactive.lines(df, "c", "tps", "series", "t", "x", "y")
    assert chart.series[0]["y"] == [10.0, None, None]
    assert spec_of(interactive.block(chart, "s"))["series"][0]["tips"][1][1] == "–"


def test_numbers_in_a_tooltip_read_as_the_book_writes_them():
    assert [fmt_significant(v) for v in (12345.6, 123.456, 0.012345, 5.0, -2.5, None, float("nan"))] == \
        ["12,346", "123.5", "0.01235", "5", "\u22122.5", "–", "–"]


def test_an_assumed_point_says_so_in_its_tooltip_and_its_series_name():
    df = frame("m")
    df.attrs["benchbook_assumed"] = {"tps": {1: ["dense_tps"]}}
    df.attrs[WHY] = {"dense_tps": "chosen by the generator"}
    chart = interactive.lines(df, "c", "tps", "series", "t", "x", "y")
    s = chart.series[0]
    assert s["name"].endswith("(partly assumed)")
    assert interactive.tooltip_lines(chart, 0, 1)[-1] == f"{SYMBOL} {LEGEND}: dense_tps"
    assert not interactive.tooltip_lines(chart, 0, 0)[-1].startswith(SYMBOL)
    assert chart.assumed == {"dense_tps": "chosen by the generator"}
    assert "benchbook-assumed-legend" in interactive.show(chart).data


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
                               hover={"concurrency": "concurrency"},
                               symbols={"measured": "circle", "reconstructed": "circle-open"})


def test_scatter_has_a_series_per_filter_combination_each_point_with_its_own_link():
    chart = scatter(points_frame())
    assert len(chart.series) == 3  # H100/27B/FP8, 3090/27B/INT4, 3090/35B/INT4
    got = {(s["filter"]["platform_name"], s["filter"]["model_name"]): (s["x"], s["y"], s["links"])
           for s in chart.series}
    assert got[("H100 SXM5 80GB", "Qwen3.6-27B")] == ([80.0, 30.0], [75.0, 900.0], ["h100.html#concurrency"] * 2)
    assert got[("RTX 3090", "Qwen3.6-35B-A3B")] == ([12.0], [60.0], ["3090.html#speed#2"])
    # one legend entry per platform and data kind; colour by platform, shape by data kind
    assert [e["name"] for e in chart.spec["legend"]] == ["H100 SXM5 80GB (reconstructed)", "RTX 3090 (measured)"]
    assert chart.series[0]["colour"] == palette.platform_colour("H100 SXM5 80GB")
    assert {s["group"]: s["symbol"] for s in chart.series} == {"H100 SXM5 80GB (reconstructed)": "circle-open",
                                                                "RTX 3090 (measured)": "circle"}
    assert interactive.tooltip_lines(chart, 0, 1) == ["per user: 30", "per device: 900", "concurrency: 32"]
    assert chart.spec["filters"] == FILTERS
    # log axes labelled at powers of ten only, no bare 2 and 5 between them
    assert chart.spec["x"]["log"] and chart.spec["x"]["ticks"] == chart.spec["y"]["ticks"] == "decades"


def test_filter_controls_list_every_value_with_its_count_and_escape_names_from_data():
    hostile = '<img src=x onerror=alert(1)>'
    df = points_frame(hostile)
    controls = interactive.filter_controls(df, FILTERS)
    assert "<img" not in controls and html.escape(hostile, quote=True) in controls
    assert controls.count("<select") == 4 and 'data-benchbook-filter="precision"' in controls
    assert ">INT4-AWQ (2)</option>" in controls and ">all (4)</option>" in controls
    assert "All 4 points shown." in controls
    # the value a select sends is the value the series carries
    carried = {s["filter"]["platform_name"] for s in scatter(df).series}
    offered = set(re.findall(r'<option value="([^"]+)">', controls))
    assert {html.unescape(v) for v in offered} >= carried


def test_the_filtered_block_is_inline_with_its_controls_before_the_chart_data():
    chart = scatter(points_frame())
    out = interactive.filtered_block(chart, "Every point", interactive.filter_controls(points_frame(), FILTERS))
    assert out.startswith('<div class="benchbook-interactive">') and "<details" not in out
    chart_at = out.index('<div class="benchbook-chart benchbook-chart-scatter">')
    assert out.index("Every point") < out.index("<form") < chart_at
    assert spec_of(out)["series"][0]["links"][0] == "h100.html#concurrency"


def test_a_point_is_placed_to_what_is_drawn_and_its_tooltip_keeps_the_printed_digits():
    """make marks: the H100 chart's spec carried each throughput to the last bit of its float, so a
    sum's last bit moving (929.10233526592 against 929.1023352659203) moved the chart. A point is
    placed to at most a 2,000th of its axis (four significant digits on a log axis), below a
    pixel; its tooltip still prints its value."""
    df = pd.DataFrame({"model": ["a"] * 3, "c": [1, 16, 32], "tps": [75.04, 929.10233526592, 2229.2772607810393]})
    chart = interactive.lines(df, "c", "tps", "model", "t", "concurrency", "t/s", log_x=True)
    assert chart.series[0]["y"] == [75.0, 929.0, 2229.0] and chart.series[0]["x"] == [1.0, 16.0, 32.0]
    moved = df.assign(tps=[75.04, 929.1023352659203, 2229.277260781039])
    assert interactive.lines(moved, "c", "tps", "model", "t", "concurrency", "t/s", log_x=True).spec == chart.spec
    logged = interactive.lines(df, "c", "tps", "model", "t", "concurrency", "t/s", log_y=True)
    assert logged.series[0]["y"] == [75.04, 929.1, 2229.0]
    assert "929" in " ".join(chart.series[0]["tips"][1])

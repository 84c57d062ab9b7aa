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

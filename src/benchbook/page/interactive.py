"""Interactive versions of the figures where readers compare many series.

A static figure stays the figure of record (it prints, and it shows without JavaScript).
Under it, inline, the same data as a chart the browser draws: hovering (or tapping) a point
shows its values, a legend entry hides or shows its series, a scatter's points open their
chapters and its filters choose what is shown. The chart is described here as the book's
own small JSON spec (`Chart.spec`: series with the palette registry's colours, as the
static figures have them, their points, and each point's tooltip lines already written in
the book's number style); the page holds it in a data block (`<script
type="application/json">`, which browsers never run), and the site's `benchbook-enhance.js`
draws it with Chart.js (0.2 MB, vendored: benchbook.site.assets) on a canvas at the column's
width, in the theme's colours (light or dark). Every text from data reaches the reader as
text: drawn on the canvas, or set as a legend's or tooltip's `textContent`, never parsed as
HTML. Nothing is fetched from elsewhere, and the pages' Content-Security-Policy needs
neither inline scripts nor eval (checked in tests/browser/test_site_browser.py).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass

import pandas as pd

from ..format import exact, fmt_significant, is_missing
from ..study import untrusted
from ..study.marks import LEGEND, SERIES, SERIES_PART, SYMBOL, WHY, cell_ids, legend_html, short, union
from .palette import model_colour, platform_colour, power_colour

# a line's dash (Chart.js borderDash, in px), one per value of a `dash` column in turn
DASHES = ([], [8, 4], [2, 3], [8, 3, 2, 3])
# marker shapes, one per value of a scatter's `symbol` column in turn ('-open': outline only)
SYMBOLS = ("circle", "circle-open", "square", "diamond", "triangle")
LOG_TICKS_AT_VALUES = 12  # a log axis with at most this many distinct values is labelled at them


@dataclass
class Chart:
    """An interactive chart: `spec` is what the page holds (see the module's docstring)."""
    spec: dict

    @property
    def series(self) -> list[dict]:
        return self.spec["series"]

    @property
    def assumed(self) -> dict:
        """{assumption id: why} of every assumption a point of the chart rests on."""
        return self.spec.get("assumed") or {}


def series_colour(name: str, by: str = "model") -> str:
    """A series' colour as in the static figures: by model name, or by power limit."""
    return power_colour(name) if by == "power" else model_colour(name)


def _text(v) -> str:
    return "–" if is_missing(v) else untrusted.visible(str(v))


def _axis(label: str, log: bool, values=None) -> dict:
    """An axis: its title, linear or log; a log axis is labelled at each power of ten, or at
    its values when they are few (concurrencies 1, 4, 8, 16, 32)."""
    out = {"label": label, "log": bool(log)}
    if log:
        distinct = sorted({float(v) for v in (values if values is not None else []) if not is_missing(v) and v > 0})
        out["ticks"] = distinct if 0 < len(distinct) <= LOG_TICKS_AT_VALUES else "decades"
    return out


DRAWN = 2_000  # a point is placed to at most a 2,000th of its axis: below a pixel of the widest canvas


def _placer(whole: pd.Series, log: bool = False):
    """A column's numbers for the spec, as a function of a series' values; none (a gap) where a
    value is missing or infinite.

    Each is rounded to what is drawn, the power of ten at most a 2,000th of the axis (`whole`: the
    column over every series, so the rounding is worked out once per axis; four significant digits
    on a log axis), and its tooltip gives its printed digits: a digit no reader can see is no
    finding either, and the spec carried every bit of the float (`make marks` counted a published
    throughput's fifth digit, which the files hold only to the write-up's rounding, as the chart
    moving)."""
    finite = [float(v) for v in whole if not is_missing(v) and math.isfinite(float(v))]
    span = (max(finite) - min(finite)) if finite else 0.0
    scale = span or max((abs(v) for v in finite), default=0.0)
    digits = -math.floor(math.log10(scale / DRAWN)) if scale > 0 else 0

    def drawn(v: float) -> float:
        if exact():  # (tools.marks_check: whether the value moved, not whether its pixel did)
            return v
        if log and v > 0:
            return float(f"{v:.4g}")
        return float(round(v, digits))

    return lambda s: [drawn(float(v)) if not is_missing(v) and math.isfinite(float(v)) else None for v in s]


def lines(df: pd.DataFrame, x: str, y: str, series: str, title: str, xlabel: str, ylabel: str,
          colour_by: str = "model", dash: str | None = None, log_x: bool = False, log_y: bool = False,
          hover: dict[str, str] | None = None, colour_of: dict | None = None, reads: dict | None = None) -> Chart:
    """One line per `series` (and per `dash` value, dashed), hover showing x, y and the
    `hover` columns ({column: label}). A series is coloured as the static figures colour
    its model (`colour_of` maps a series to its model's name when the series is not one).
    A series drawn from assumed cells (marks in `df.attrs`; `reads` maps a hover column to
    the column its marks come from) says so in its name and at each such point."""
    dashes = list(dict.fromkeys(df[dash])) if dash else [None]
    hover = hover or {}
    notes, found = _assumed_notes(df, [y, *hover], reads or {})
    out, xs, ys = [], _placer(df[x], log_x), _placer(df[y], log_y)
    for name, g in df.groupby(series, sort=False):
        for k, d in enumerate(dashes):
            part = g if d is None else g[g[dash] == d]
            if not len(part):
                continue
            part = part.sort_values(x)
            note = notes.reindex(part.index).fillna("")
            label = untrusted.visible(str(name) if d is None else f"{name} ({d})") + _suffix(note)
            tips = _tips(part, x, y, hover, note)
            out.append({"name": label, "group": label,
                        "colour": series_colour(str((colour_of or {}).get(name, name)), colour_by),
                        "dash": DASHES[k % len(DASHES)], "symbol": "circle",
                        "x": xs(part[x]), "y": ys(part[y]), "tips": tips})
    spec = {"kind": "lines", "title": untrusted.visible(title), "tip": [xlabel, ylabel, *hover.values()],
            "x": _axis(xlabel, log_x, df[x]), "y": _axis(ylabel, log_y, df[y]), "series": out,
            "legend": [_entry(s) for s in out]}
    if found:
        spec["assumed"] = found
    return Chart(spec)


def _tips(part: pd.DataFrame, x: str, y: str, hover: dict[str, str], notes: pd.Series) -> list[list[str]]:
    """Each point's tooltip: its values, in the order of the spec's `tip` labels (x, y, then the
    `hover` columns), and the line naming the assumptions it rests on, if any."""
    columns = [part[x].tolist(), part[y].tolist(), *(part[col].tolist() for col in hover)]
    return [[fmt_significant(vx), fmt_significant(vy), *(_text(v) for v in rest), *([n] if n else [])]
            for (vx, vy, *rest), n in zip(zip(*columns), notes)]


def tooltip_lines(chart: Chart, series: int, point: int) -> list[str]:
    """A point's tooltip as the page shows it under its series' name (benchbook-enhance.js)."""
    labels, values = chart.spec["tip"], chart.series[series]["tips"][point]
    return [f"{lab}: {v}" for lab, v in zip(labels, values)] + values[len(labels):]


def _entry(s: dict, name: str | None = None) -> dict:
    """A legend entry: what it is called and how its series look."""
    return {"group": s["group"], "name": name or s["name"], "colour": s["colour"], "dash": s["dash"],
            "symbol": s["symbol"]}


def _assumed_notes(df: pd.DataFrame, columns: list[str], reads: dict) -> tuple[pd.Series, dict]:
    """Per point, the tooltip line naming the assumptions its values rest on ('' for none),
    and {id: why} of all of them."""

    cells, why = cell_ids(df), df.attrs.get(WHY) or {}
    sources = [reads.get(c, c) for c in columns]
    ids = {label: union(*(cells.get((label, c), ()) for c in sources)) for label in df.index}
    notes = pd.Series({label: (f"{SYMBOL} {LEGEND}: " + "; ".join(v) if v else "") for label, v in ids.items()},
                      dtype=object)
    found = {i: short(why.get(i, "")) for v in ids.values() for i in v}
    return notes, found


def _suffix(notes: pd.Series) -> str:
    """A series name's mark: all its points assumed, or some."""

    hit = notes.astype(bool)
    return "" if not hit.any() else SERIES if hit.all() else SERIES_PART


def _data_block(chart: Chart) -> str:
    """The spec in a data block. '<', '>' and '&' are written as \\u escapes, so no text from
    data can close the block early."""
    spec = json.dumps(chart.spec, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    spec = spec.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    kind = chart.spec["kind"]
    return f'<div class="benchbook-chart benchbook-chart-{kind}"><script type="application/json">{spec}</script></div>'


def block(chart: Chart, summary: str, controls: str = "") -> str:
    """The chart as page HTML, inline: a line saying what it offers (`summary`), any filter
    `controls`, then the chart's data block, which benchbook-enhance.js draws as it comes
    near the screen. Without JavaScript, and in print, the whole block is hidden: the static
    figure and the tables beside it show the same data."""
    return (f'<div class="benchbook-interactive"><p class="benchbook-chart-summary">{html.escape(summary)}</p>'
            f"{controls}{_data_block(chart)}</div>")


def show(chart: Chart, summary: str = "Interactive version: hover over or tap a point for its values; "
                                      "tap a legend entry to hide or show that series"):
    """Display the interactive chart in a notebook (an HTML output), with the legend of any
    assumption its points rest on."""
    from IPython.display import HTML

    found = chart.assumed
    return HTML(block(chart, summary) + (legend_html(list(found), found) if found else ""))


# ---- a scatter whose points the page filters -----------------------------------------


def scatter(df: pd.DataFrame, x: str, y: str, title: str, xlabel: str, ylabel: str, *, colour: str,
            symbol: str, filters: dict[str, str], link: str, hover: dict[str, str] | None = None,
            symbols: dict[str, str] | None = None, log: bool = True, reads: dict | None = None) -> Chart:
    """One marker per row at (`x`, `y`), coloured by platform (`colour` names the column) and
    shaped by `symbol` (e.g. measured or reconstructed; `symbols` maps its values to SYMBOLS,
    the others take the rest in turn), each a link to `link` (a click opens it).

    There is one series per combination of the `filters` columns ({column: what the filter
    is called}), each holding its value of every filter column, so the page's filter controls
    (filter_controls) show and hide whole series (benchbook-enhance.js). The legend has one
    entry per colour and symbol, which shows or hides all their series. A log axis is
    labelled at each power of ten only. A point drawn from assumed cells (marks in
    `df.attrs`) says so where it is hovered, as in `lines`."""
    hover = hover or {}
    keys = list(dict.fromkeys([colour, symbol, *filters]))
    others = [s for s in SYMBOLS if s not in (symbols or {}).values()]
    shapes = {v: (symbols or {}).get(v) or others[i % len(others)] for i, v in enumerate(sorted(set(df[symbol])))}
    notes, found = _assumed_notes(df, [x, y], reads or {})
    out, groups, xs, ys = [], {}, _placer(df[x], log), _placer(df[y], log)
    for values, part in df.groupby(keys, sort=True):
        at = dict(zip(keys, values))
        group = f"{untrusted.visible(str(at[colour]))} ({untrusted.visible(str(at[symbol]))})"
        note = notes.reindex(part.index).fillna("")
        tips = _tips(part, x, y, hover, note)
        out.append({"name": group, "group": group, "colour": platform_colour(at[colour]), "dash": [],
                    "symbol": shapes[at[symbol]], "filter": {k: untrusted.visible(str(at[k])) for k in filters},
                    "x": xs(part[x]), "y": ys(part[y]), "tips": tips,
                    "links": [str(v) for v in part[link]]})
        groups.setdefault(group, []).append(note)
    spec = {"kind": "scatter", "title": untrusted.visible(title), "tip": [xlabel, ylabel, *hover.values()],
            "x": _axis(xlabel, False) | ({"log": True, "ticks": "decades"} if log else {}),
            "y": _axis(ylabel, False) | ({"log": True, "ticks": "decades"} if log else {}),
            "series": out, "filters": filters,
            "legend": [_entry(s, s["group"] + _suffix(pd.concat(groups.pop(s["group"]))))
                       for s in out if s["group"] in groups]}
    if found:
        spec["assumed"] = found
    return Chart(spec)


def filter_controls(df: pd.DataFrame, filters: dict[str, str], noun: str = "points") -> str:
    """The chart's filters as HTML: one labelled select per filter column ({column: what it
    is called}), "all" first, each value with its count; and a line saying how many `noun`
    are shown, which benchbook-enhance.js keeps true. Values from data are escaped."""
    fields = []
    for col, what in filters.items():
        counts = df[col].astype(str).value_counts().sort_index()
        options = "".join(f'<option value="{html.escape(untrusted.visible(v), quote=True)}">'
                          f"{html.escape(untrusted.visible(v))} ({n})</option>" for v, n in counts.items())
        fields.append(f'<label class="benchbook-chart-filter"><span>{html.escape(what)}</span>'
                      f'<select data-benchbook-filter="{html.escape(col, quote=True)}">'
                      f'<option value="">all ({len(df)})</option>{options}</select></label>')
    return (f'<form class="benchbook-chart-filters" aria-label="Filter the chart">{"".join(fields)}</form>'
            f'<p class="benchbook-chart-count" aria-live="polite">All {len(df)} {html.escape(noun)} shown.</p>')


def filtered_block(chart: Chart, summary: str, controls: str) -> str:
    """The chart as page HTML (`block`) with its filter controls above it."""
    return block(chart, summary, controls)

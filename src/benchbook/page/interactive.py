"""Interactive versions of the figures where readers compare many series.

A static PNG stays the figure of record (it prints, and it shows without JavaScript).
Beside it, folded under a line that says what it offers, the same data as a plotly.js
chart: hovering a point shows its values, clicking a legend entry hides or shows that
series. plotly builds the chart's JSON here; the page holds it in a data block
(`<script type="application/json">`, which browsers never run), and the site's own
`benchbook-enhance.js` draws it with the plotly.js bundle the plotly package ships, copied
into the site (benchbook.site.assets). Nothing is fetched from elsewhere, and the pages'
Content-Security-Policy needs neither inline scripts nor eval: plotly.js draws SVG
traces without them (checked in tests/test_site_browser.py).
"""

from __future__ import annotations

import html

import pandas as pd

from ..study import untrusted
from ..study.marks import LEGEND, SERIES, SERIES_PART, SYMBOL, WHY, cell_ids, legend_html, short, union
from .palette import model_colour, platform_colour, power_colour


def series_colour(name: str, by: str = "model") -> str:
    """A series' colour as in the static figures: by model name, or by power limit."""
    return power_colour(name) if by == "power" else model_colour(name)


def lines(df: pd.DataFrame, x: str, y: str, series: str, title: str, xlabel: str, ylabel: str,
          colour_by: str = "model", dash: str | None = None, log_x: bool = False, log_y: bool = False,
          hover: dict[str, str] | None = None, colour_of: dict | None = None, reads: dict | None = None):
    """One line per `series` (and per `dash` value, dashed), hover showing x, y and the
    `hover` columns ({column: label}). A series is coloured as the static figures colour
    its model (`colour_of` maps a series to its model's name when the series is not one).
    A series drawn from assumed cells (marks in `df.attrs`; `reads` maps a hover column to
    the column its marks come from) says so in its name and at each such point.
    Every text is escaped: plotly reads a little HTML (<b>, <a href>) in names and titles,
    and a label from data must show as written."""
    import plotly.graph_objects as go

    fig = go.Figure()
    styles = ["solid", "dash", "dot", "dashdot"]
    dashes = list(dict.fromkeys(df[dash])) if dash else [None]
    hover = hover or {}
    notes, found = _assumed_notes(df, [y, *hover], reads or {})
    for name, g in df.groupby(series, sort=False):
        for k, d in enumerate(dashes):
            part = g if d is None else g[g[dash] == d]
            if not len(part):
                continue
            part = part.sort_values(x)
            note = notes.reindex(part.index).fillna("")
            label = html.escape(untrusted.visible(str(name) if d is None else f"{name} ({d})")) + _suffix(note)
            extra = "".join(f"<br>{html.escape(lab)}: %{{customdata[{i}]}}" for i, lab in enumerate(hover.values()))
            fig.add_trace(go.Scatter(
                x=part[x], y=part[y], mode="lines+markers", name=label,
                line={"color": series_colour(str((colour_of or {}).get(name, name)), colour_by),
                      "dash": styles[k % len(styles)]},
                customdata=part[list(hover)].assign(_note=note).to_numpy(),
                hovertemplate=(f"<b>{label}</b><br>{html.escape(xlabel)}: %{{x}}"
                               f"<br>{html.escape(ylabel)}: %{{y:,.4~g}}{extra}%{{customdata[{len(hover)}]}}"
                               "<extra></extra>"),
            ))
    if found:
        fig.update_layout(meta={"benchbook_assumed": found})
    fig.update_layout(title={"text": html.escape(title)}, hovermode="closest", template="plotly_white",
                      font={"size": 13}, legend={"title": {"text": ""}}, margin={"l": 60, "r": 20, "t": 60, "b": 50},
                      xaxis={"title": {"text": html.escape(xlabel)}, "type": "log" if log_x else "linear"},
                      yaxis={"title": {"text": html.escape(ylabel)}, "type": "log" if log_y else "linear"})
    return fig


def _assumed_notes(df: pd.DataFrame, columns: list[str], reads: dict) -> tuple[pd.Series, dict]:
    """Per point, the hover line naming the assumptions its values rest on ('' for none),
    and {id: why} of all of them."""

    cells, why = cell_ids(df), df.attrs.get(WHY) or {}
    sources = [reads.get(c, c) for c in columns]
    ids = {label: union(*(cells.get((label, c), ()) for c in sources)) for label in df.index}
    notes = pd.Series({label: (f"<br>{SYMBOL} {html.escape(LEGEND)}: " + html.escape("; ".join(v)) if v else "")
                       for label, v in ids.items()}, dtype=object)
    found = {i: short(why.get(i, "")) for v in ids.values() for i in v}
    return notes, found


def _suffix(notes: pd.Series) -> str:
    """A series name's mark: all its points assumed, or some."""

    hit = notes.astype(bool)
    return "" if not hit.any() else SERIES if hit.all() else SERIES_PART


def block(fig, summary: str) -> str:
    """The chart as page HTML: folded under `summary`, its JSON in a data block. '<' is
    written as \\u003c, so no text from data can close the block early."""
    spec = fig.to_json().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (f'<details class="benchbook-details benchbook-interactive"><summary>{html.escape(summary)}</summary>'
            f'<div class="benchbook-plotly"><script type="application/json">{spec}</script></div></details>')


def show(fig, summary: str = "Interactive version: hover over a point for its values; "
                                "click a legend entry to hide or show that series"):
    """Display the folded interactive chart in a notebook (an HTML output)."""
    from IPython.display import HTML

    found = (fig.layout.meta or {}).get("benchbook_assumed") if isinstance(fig.layout.meta, dict) else None
    legend = legend_html(list(found), found) if found else ""
    return HTML(block(fig, summary) + legend)


# ---- a scatter whose points the page filters -----------------------------------------

SYMBOLS = ("circle", "circle-open", "square", "diamond", "triangle-up")


def scatter(df: pd.DataFrame, x: str, y: str, title: str, xlabel: str, ylabel: str, *, colour: str,
            symbol: str, filters: dict[str, str], link: str, hover: dict[str, str] | None = None,
            symbols: dict[str, str] | None = None, log: bool = True, reads: dict | None = None):
    """One marker per row at (`x`, `y`), coloured by platform (`colour` names the column) and
    shaped by `symbol` (e.g. measured or reconstructed; `symbols` maps its values to plotly
    marker symbols, the others take SYMBOLS in turn), each a link to `link` (a click opens it).

    There is one trace per combination of the `filters` columns ({column: what the filter
    is called}), each trace's `meta` holding its value of every filter column, so the page's
    filter controls (filter_controls) show and hide whole traces (benchbook-enhance.js). The
    legend has one entry per colour and symbol, which shows or hides all their traces. A point
    drawn from assumed cells (marks in `df.attrs`) says so where it is hovered, as in `lines`."""
    import plotly.graph_objects as go

    fig = go.Figure()
    hover = hover or {}
    keys = list(dict.fromkeys([colour, symbol, *filters]))
    others = [s for s in SYMBOLS if s not in (symbols or {}).values()]
    shapes = {v: (symbols or {}).get(v) or others[i % len(others)] for i, v in enumerate(sorted(set(df[symbol])))}
    notes, found = _assumed_notes(df, [x, y], reads or {})
    seen = set()
    for values, part in df.groupby(keys, sort=True):
        at = dict(zip(keys, values))
        group = f"{at[colour]} ({at[symbol]})"
        note = notes.reindex(part.index).fillna("")
        # a long entry in two lines: a phone's legend clips a line wider than the chart
        name = html.escape(untrusted.visible(str(at[colour]))) + ("<br>" if len(group) > 30 else " ") \
            + f"({html.escape(untrusted.visible(str(at[symbol])))})" + _suffix(note)
        extra = "".join(f"<br>{html.escape(lab)}: %{{customdata[{i}]}}" for i, lab in enumerate(hover.values()))
        fig.add_trace(go.Scatter(
            x=part[x], y=part[y], mode="markers", name=name, legendgroup=group, showlegend=group not in seen,
            marker={"color": platform_colour(at[colour]), "symbol": shapes[at[symbol]], "size": 9,
                    "line": {"width": 1.5, "color": platform_colour(at[colour])}},
            meta={"filter": {k: untrusted.visible(str(at[k])) for k in filters}, "links": [str(v) for v in part[link]]},
            customdata=part[list(hover)].astype(str).map(lambda v: html.escape(untrusted.visible(v)))
                           .assign(_note=note).to_numpy(),
            hovertemplate=(f"{html.escape(xlabel)}: %{{x:,.4~g}}<br>{html.escape(ylabel)}: %{{y:,.4~g}}{extra}"
                           f"%{{customdata[{len(hover)}]}}<br><i>click: open its chapter</i><extra></extra>"),
        ))
        seen.add(group)
    meta = {"benchbook_filters": filters}
    if found:
        meta["benchbook_assumed"] = found
    # a log axis labels each power of ten only: plotly's default also prints the 2 and 5
    # between them as bare digits, which read as values
    axis = {"type": "log", "dtick": 1} if log else {"type": "linear"}
    fig.update_layout(meta=meta, title={"text": html.escape(title)}, hovermode="closest", template="plotly_white",
                      font={"size": 13}, height=560, margin={"l": 60, "r": 20, "t": 60 if title else 20, "b": 50},
                      legend={"orientation": "h", "y": -0.18, "title": {"text": ""}},
                      xaxis={"title": {"text": html.escape(xlabel)}, **axis},
                      yaxis={"title": {"text": html.escape(ylabel)}, **axis})
    return fig


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


def filtered_block(fig, summary: str, controls: str, open_: bool = False) -> str:
    """The chart as page HTML (`block`) with its filter controls above it; folded unless
    `open_`, as every chart is: plotly.js (1.2 MB) then loads only for a reader who opens it,
    which keeps a page under 2 MB on a phone."""
    page = block(fig, summary).replace("</summary>", "</summary>" + controls, 1)
    return page.replace("<details ", "<details open ", 1) if open_ else page

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
from .palette import model_colour, power_colour


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

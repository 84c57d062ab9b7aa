"""A figure laid out again for a phone's column.

A desktop figure about 9 inches wide, shown in a 342 px phone column (a 390 px screen), would
draw 10 pt text at 5 px. The same figure, with its panels stacked in one column, its legends
under what they explain and long labels wrapped, fits PHONE_WIDTH_IN with the text sizes it
had, so the phone shows that text at about 10 px (page.plots.renderings serves each reader
the layout that fits their screen)."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
from matplotlib.gridspec import GridSpec

# Saved width, padding included, so that text of plots.MIN_FONT_PT points shows at 9 px or
# more in a column of 312 px (a 360 px phone): 10 pt * 312 px / (72 * 9 px) = 4.8 in.
PHONE_WIDTH_IN = 4.8
PHONE_DPI = 150  # 720 px for a 342 px phone column: sharp at two device pixels a CSS pixel
PANEL_HEIGHT_IN = 2.7  # one stacked panel, its title and tick labels included
WRAP_LEGEND, WRAP_TITLE, WRAP_TICK = 40, 30, 26  # characters a line, at 10-11 pt in that width


def phone_layout(fig: plt.Figure) -> plt.Figure:
    """Lay `fig` out for a phone, in place: one column of panels, legends below, labels
    wrapped, PHONE_WIDTH_IN wide once saved. Text sizes are kept: only positions and line
    breaks change."""
    fig.set_dpi(PHONE_DPI)  # measured at the dpi it is saved at: text widths differ a little with it
    panels = [ax for ax in fig.axes if ax.get_subplotspec() is not None and not hasattr(ax, "_colorbar")]
    stacked = _stack(fig, panels)
    _wrap_texts(fig)
    width = _drawn_width()
    fig.set_size_inches(width, PANEL_HEIGHT_IN * len(stacked) if stacked else fig.get_size_inches()[1])
    legends = _legends_below(fig)
    fig.tight_layout()
    _room_for_rows(fig)
    _room_for_names(fig, max(len(stacked), 1))
    _fit(fig, legends)
    return fig


def _drawn_width() -> float:
    """The figure's width that saves (with bbox 'tight' and its padding) at PHONE_WIDTH_IN."""
    pad = plt.rcParams["savefig.pad_inches"]
    return PHONE_WIDTH_IN - (2 * pad if isinstance(pad, (int, float)) else 0.2)


def _fit(fig: plt.Figure, legends: list) -> None:
    """Everything inside the figure's width: laid out, the legends placed under the panels,
    and, while something still sticks out (a legend wider than the panels), the panels
    narrowed by as much and laid out again."""
    width = _drawn_width()
    for _ in range(4):
        fig.tight_layout()
        _clear_colorbars(fig)
        _place_legends(fig, legends)
        drawn = _saved_width(fig)
        if drawn <= width * 1.005:
            return
        if _narrower_titles(fig):
            continue
        fig.set_size_inches(max(fig.get_figwidth() - (drawn - width), 1.5), fig.get_figheight())


def _saved_width(fig: plt.Figure) -> float:
    """The drawn width savefig's bbox 'tight' keeps, in inches (it counts every artist),
    drawn first: a title finds its place when drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return fig.get_tightbbox(renderer, bbox_extra_artists=fig.get_default_bbox_extra_artists()).width


def _narrower_titles(fig: plt.Figure) -> bool:
    """A panel's title centred over a panel that long category names pushed right runs off
    the figure: it is wrapped shorter, in proportion. True if any was."""
    renderer, changed = fig.canvas.get_renderer(), False
    for ax in fig.axes:
        box = ax.title.get_window_extent(renderer)
        if ax.title.get_text() and (box.x1 > fig.bbox.x1 + 1 or box.x0 < -1):
            room = 2 * min(box.x1, fig.bbox.x1) - 2 * (box.x0 + box.x1) / 2 if box.x1 > fig.bbox.x1 else box.width
            longest = max(len(line) for line in ax.title.get_text().split("\n"))
            chars = max(int(longest * abs(room) / box.width) - 1, 8)
            if chars < longest:
                ax.title.set_text(_wrap(ax.title.get_text().replace("\n", " "), chars))
                changed = True
    return changed


def _room_for_names(fig: plt.Figure, rows: int) -> None:
    """Category names under the panels, wrapped or turned upright (_untangle_ticks), take
    their height from the figure, not from the panels."""
    tall = {ax: ax.get_position().height * fig.get_figheight() for ax in fig.axes}
    if not [ax for ax in list(fig.axes) if _untangle_ticks(ax)]:  # every panel, not the first only
        return
    fig.tight_layout()
    lost = max(tall[ax] - ax.get_position().height * fig.get_figheight() for ax in tall)
    if lost > 0.05:
        fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() + lost * rows)
        fig.tight_layout()


def _room_for_rows(fig: plt.Figure) -> None:
    """Category names beside horizontal bars, now on two or three lines, would run into the
    next bar's: the figure grows until each row holds its name (a few passes: the layout's
    margins do not grow with it)."""
    for _ in range(4):
        fig.canvas.draw()
        need = 1.0
        for ax in fig.axes:
            boxes = sorted((t.get_window_extent() for t in ax.get_yticklabels() if t.get_text()), key=lambda b: b.y0)
            for a, b in zip(boxes, boxes[1:]):
                apart = (b.y0 + b.y1) / 2 - (a.y0 + a.y1) / 2
                if apart > 0:
                    need = max(need, ((a.height + b.height) / 2 + 3) / apart)
        if need <= 1.01:
            return
        fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() * min(need, 3.0))
        fig.tight_layout()


def _clear_colorbars(fig: plt.Figure) -> None:
    """A colour bar the layout left over its panel's right edge: the panel narrows to clear it."""
    renderer = fig.canvas.get_renderer()
    for cax in [a for a in fig.axes if hasattr(a, "_colorbar")]:
        left = cax.get_tightbbox(renderer).x0 / fig.bbox.width - 0.01
        for ax in fig.axes:
            box = ax.get_position()
            if ax is not cax and not hasattr(ax, "_colorbar") and box.x0 < left < box.x1:
                ax.set_position([box.x0, box.y0, left - box.x0, box.height])


def _untangle_ticks(ax) -> bool:
    """Category names under a narrow panel that run into each other: broken at their hyphens
    and spaces, and turned upright if they still do. True if anything changed."""
    renderer = ax.figure.canvas.get_renderer()

    def overlap() -> bool:
        ax.figure.canvas.draw()  # tick labels take their text and place when drawn
        boxes = sorted((t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()),
                       key=lambda b: b.x0)
        return any(a.x1 > b.x0 - 2 for a, b in zip(boxes, boxes[1:]))

    if not overlap():
        return False
    labels = [t.get_text() for t in ax.get_xticklabels()]
    longest = max((len(line) for t in labels for line in t.split("\n")), default=0)
    ax.set_xticks(ax.get_xticks(), [_wrap(t, max(6, longest // 2)) for t in labels])
    if overlap():
        ax.tick_params(axis="x", labelrotation=90)
    return True


def _stack(fig: plt.Figure, panels: list) -> list:
    """Panels of a grid of several columns, one under the other (row by row); each keeps or
    borrows the tick labels and axis labels a shared axis had shown on a neighbour only."""
    grids = {id(ax.get_subplotspec().get_gridspec()) for ax in panels}
    if len(grids) != 1 or panels[0].get_subplotspec().get_gridspec().ncols < 2:
        return []
    order = sorted(panels, key=lambda ax: (ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start))
    order = [ax for ax in order if ax.get_visible() and ax.axison]
    for ax in panels:
        if ax not in order:
            ax.set_visible(False)
    for ax in order:  # the column each panel had, for the titles a column showed once
        ax._benchbook_column = ax.get_subplotspec().colspan.start
    grid = GridSpec(len(order), 1, figure=fig)
    for i, ax in enumerate(order):
        ax.set_subplotspec(grid[i, 0])
        ax.tick_params(labelbottom=True, labelleft=True)
        ax.xaxis.label.set_visible(True)
        ax.yaxis.label.set_visible(True)
        _borrow_label(ax, "x")
        _borrow_label(ax, "y")
        _borrow_title(ax, order)
    return order


def _borrow_title(ax, panels: list) -> None:
    """A panel without a title takes its column's (a grid titles its columns once, on top)."""
    if ax.get_title():
        return
    for other in panels:
        if other is not ax and other.get_title() and other._benchbook_column == ax._benchbook_column:
            ax.set_title(other.get_title())
            return


def _borrow_label(ax, which: str) -> None:
    """An axis label a shared axis showed on another panel only (the bottom row's x label, the
    first column's y label), copied to this panel: stacked, each panel stands alone."""
    get = ax.get_xlabel if which == "x" else ax.get_ylabel
    if get():
        return
    siblings = (ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()).get_siblings(ax)
    for other in siblings:
        label = other.get_xlabel() if which == "x" else other.get_ylabel()
        if label:
            (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)
            return


def _wrap(text: str, width: int) -> str:
    """Lines of at most `width` characters where possible, broken after a space or a hyphen
    ('Qwen3.5-' / '122B-A10B': textwrap breaks no hyphen after a digit); a longer word stays whole."""
    out = []
    for line in text.split("\n"):
        row = ""
        for piece in re.split(r"(?<=[\s-])", line):
            if row and len(row.rstrip()) + len(piece.rstrip()) > width:
                out.append(row.rstrip())
                row = ""
            row += piece
        out.append(row.rstrip())
    return "\n".join(out)


def _wrap_texts(fig: plt.Figure) -> None:
    """Titles, legend entries and category labels broken into lines that fit the width."""
    if fig._suptitle is not None:
        fig._suptitle.set_text(_wrap(fig._suptitle.get_text(), WRAP_TITLE))
    for ax in fig.axes:
        for title in (ax.title, ax._left_title, ax._right_title):
            title.set_text(_wrap(title.get_text(), WRAP_TITLE))
        for axis in (ax.xaxis, ax.yaxis):
            axis.label.set_text(_wrap(axis.label.get_text(), WRAP_TITLE))
            labels = [t.get_text() for t in axis.get_ticklabels()]
            if any(len(t) > WRAP_TICK for t in labels):  # category names; numbers are short
                axis.set_ticks(axis.get_ticklocs(), [_wrap(t, WRAP_TICK) for t in labels])
    for legend in _legends(fig):
        for text in legend.get_texts():
            text.set_text(_wrap(text.get_text(), WRAP_LEGEND))
        legend.get_title().set_text(_wrap(legend.get_title().get_text(), WRAP_LEGEND))


def _legends(fig: plt.Figure) -> list:
    return [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)


def _legends_below(fig: plt.Figure) -> list:
    """Every legend becomes the figure's, to go under its panels (place_legends): inside a
    panel a phone's width wide it would hide the data, and under a panel in a stack it
    would push the panels apart. One legend repeated by several panels (the same entries)
    is kept once. A panel kept for its legend alone (the Strix figures) stays as it is."""
    seen, out = set(), []
    for legend in _legends(fig):
        ax = legend.axes if legend in (a.get_legend() for a in fig.axes) else None
        if ax is not None and not ax.axison:
            continue
        entries = tuple(t.get_text() for t in legend.get_texts())
        legend.remove()
        if entries in seen:
            continue
        seen.add(entries)
        longest = max((len(line) for e in entries for line in e.split("\n")), default=0)
        title = legend.get_title().get_text()
        out.append(fig.legend(handles=legend.legend_handles, labels=list(entries), title=title or None,
                              loc="upper center", ncols=1 if longest > 18 else 2, frameon=False))
    return out


def _place_legends(fig: plt.Figure, legends: list) -> None:
    """The legends one under another, under the lowest panel (outside the figure's box:
    saved with bbox 'tight', the image grows to hold them)."""
    renderer = fig.canvas.get_renderer()
    panels = [a for a in fig.axes if a.get_visible()]
    y = min((a.get_tightbbox(renderer).y0 for a in panels), default=0.0) - 6
    for legend in legends:
        legend.set_bbox_to_anchor((0.5, y / fig.bbox.height), transform=fig.transFigure)
        y = legend.get_window_extent(renderer).y0 - 6

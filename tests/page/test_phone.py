"""A figure laid out for a phone: one column of panels, legends under them, labels wrapped,
no wider than PHONE_WIDTH_IN, and every text at the size it had."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from benchbook.page import phone, plots  # noqa: E402
from benchbook.page.render import render  # noqa: E402
from chapter_figures import chapter_figures  # noqa: E402

PHONE_COLUMN_PX = 390 - 48  # the article column on a 390 px screen


def _grid():
    """A desktop figure: two panels side by side sharing y, one legend beside the right one."""
    plots.set_theme()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, title in zip(axes, ("Aggregate output", "Per agent")):
        for k in range(3):
            ax.plot([1, 2, 4], [k, k + 1, k + 3], marker="o", label=f"configuration number {k} with a long name")
        ax.set_title(title)
        ax.set_xlabel("concurrent requests")
    axes[0].set_ylabel("tokens/s")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    return fig, axes


def test_panels_side_by_side_are_stacked_and_each_reads_alone():
    fig, (left, right) = _grid()
    before = plots.smallest_font_pt(fig)
    phone.phone_layout(fig)
    a, b = left.get_position(), right.get_position()
    assert a.x0 == pytest.approx(b.x0) and a.y0 > b.y1  # one column, in reading order
    assert right.get_ylabel() == "tokens/s" and right.yaxis.label.get_visible()  # borrowed from its row
    assert any(t.get_text() for t in right.get_yticklabels())  # the shared axis shows its numbers
    assert plots.smallest_font_pt(fig) == before  # text keeps its size: only the layout changed
    plt.close(fig)


def test_a_legend_beside_the_panels_goes_under_them_wrapped_to_the_width():
    fig, axes = _grid()
    phone.phone_layout(fig)
    renderer = fig.canvas.get_renderer()
    [legend] = fig.legends
    assert not any(ax.get_legend() for ax in axes)
    lowest = min(ax.get_tightbbox(renderer).y0 for ax in axes)
    assert legend.get_window_extent(renderer).y1 <= lowest + 1
    shown = render(fig, phone.PHONE_DPI)
    assert shown.width <= phone.PHONE_WIDTH_IN * phone.PHONE_DPI * 1.01
    assert shown.font_px * PHONE_COLUMN_PX / shown.width >= 9  # legible on a 390 px phone
    plt.close(fig)


def test_one_legend_repeated_by_two_panels_is_kept_once():
    plots.set_theme()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax in axes:
        ax.plot([1, 2], [1, 2], label="dense")
        ax.plot([1, 2], [2, 1], label="MoE")
        ax.legend()
    phone.phone_layout(fig)
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["dense", "MoE"]
    plt.close(fig)


def test_category_names_that_run_into_each_other_are_broken_at_their_hyphens():
    plots.set_theme()
    fig, ax = plt.subplots(figsize=(9, 3))
    names = ["Qwen3.5-27B", "Qwen3.5-122B-A10B", "Qwen3.6-35B-A3B", "Qwen3.6-27B-FP8", "Qwen3.5-397B-A17B"]
    ax.bar(names, [1, 2, 3, 4, 5])
    phone.phone_layout(fig)
    fig.canvas.draw()
    boxes = sorted((t.get_window_extent() for t in ax.get_xticklabels()), key=lambda b: b.x0)
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:]))
    assert any("\n" in t.get_text() for t in ax.get_xticklabels())
    plt.close(fig)


@pytest.mark.parametrize("text,width,lines", [
    ("Qwen3.5-122B-A10B", 8, ["Qwen3.5-", "122B-", "A10B"]),  # textwrap breaks no hyphen after a digit
    ("limit (bars: 4 x limit)", 12, ["limit (bars:", "4 x limit)"]),
    ("unbreakable_long_name", 5, ["unbreakable_long_name"]),  # a word longer than the line stays whole
    ("two\nlines", 20, ["two", "lines"]),
])
def test_wrap_breaks_after_spaces_and_hyphens(text, width, lines):
    assert phone._wrap(text, width).split("\n") == lines


@pytest.mark.slow
def test_every_chapter_figure_laid_out_for_a_phone_shows_its_text_at_nine_pixels_or_more():
    """At 390 px (a 342 px column) and at 360 px (312 px), every chapter's figure."""
    plots.set_theme()
    small = []
    for chapter, figures in chapter_figures():
        for i, fig in enumerate(figures):
            shown = render(phone.phone_layout(fig), phone.PHONE_DPI)
            for column in (PHONE_COLUMN_PX, 360 - 48):
                px = shown.font_px * column / shown.width
                if px < 9:
                    small.append(f"{chapter} figure {i}: {px:.1f} px in a {column} px column ({shown.width} px wide)")
        plt.close("all")
    assert not small, "\n".join(small)

"""A figure saved for a desktop column and for a phone's, each with its size and smallest text."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from benchbook.page import phone, plots  # noqa: E402
from benchbook.page.render import render, renderings  # noqa: E402
from chapter_figures import panels_with_legends  # noqa: E402


def test_a_rendering_knows_its_pixel_size_and_its_smallest_text_in_pixels():
    plots.set_theme()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "small", fontsize=12)
    shown = render(fig, 200)
    assert (shown.width, shown.height) == Image.open(io.BytesIO(shown.png)).size
    assert shown.font_px == pytest.approx(plots.MIN_FONT_PT * 200 / 72)  # the tick labels
    plt.close(fig)


def test_renderings_are_a_desktop_column_s_and_a_phone_s_and_close_the_figure():
    fig, _ = panels_with_legends(3, 14)
    shown = renderings(fig)
    desktop, small = shown["desktop"], shown["phone"]
    assert desktop.width <= plots.MAX_WIDTH_IN * plots.DESKTOP_DPI * 1.01
    assert small.width <= phone.PHONE_WIDTH_IN * phone.PHONE_DPI * 1.01
    assert small.height > desktop.height  # the three panels, one under another
    assert not plt.fignum_exists(fig.number)


def test_a_rendering_is_a_palette_png_a_third_of_the_bytes_with_the_figure_s_colours():
    plots.set_theme()
    fig, ax = plt.subplots(figsize=(6, 3))
    for k, colour in enumerate(("#0072b2", "#d55e00", "#009e73")):
        ax.plot(range(50), [(i * (k + 1)) % 17 for i in range(50)], color=colour, marker="o")
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=150, bbox_inches="tight")
    shown = render(fig, 150)
    image = Image.open(io.BytesIO(shown.png))
    assert image.mode == "P" and image.size == Image.open(full).size
    assert len(shown.png) < 0.6 * len(full.getvalue())
    colours = {c for _, c in image.convert("RGB").getcolors(256)}
    assert {(0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00), (0x00, 0x9E, 0x73)} <= colours  # the series keep theirs
    plt.close(fig)

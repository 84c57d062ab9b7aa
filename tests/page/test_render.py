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


def _bars(hidden: str = "", line_beyond: float = 10, dot_beyond: float = 10):
    plots.set_theme()
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar(["a", "b", "c"], (3, 5, 4))
    ax.plot([0, 1, 2, line_beyond], (3, 5, 4, 4), marker="o")  # a point outside the axes' limits
    ax.scatter([dot_beyond], [1])
    ax.set_xlim(-0.5, 2.5)
    ax.set_title("bars")
    ax.text(0, 0, hidden, visible=False)
    return fig


def test_a_figure_rendered_again_comes_from_the_cache_with_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path))
    first = renderings(_bars())
    assert len(list((tmp_path / "figures").glob("*.json"))) == 1
    assert renderings(_bars(), cache=False) == first  # what rendering it anew makes
    monkeypatch.setattr("benchbook.page.render.phone_layout", lambda fig: pytest.fail("laid out again"))
    assert renderings(_bars()) == first


def test_a_figure_that_differs_in_a_hidden_text_or_its_data_is_rendered_anew(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path))
    renderings(_bars())
    renderings(_bars(hidden="shown on a phone"))  # the same pixels on a desktop
    renderings(_bars(line_beyond=11))  # the same pixels too, other data
    renderings(_bars(dot_beyond=11))
    assert len(list((tmp_path / "figures").glob("*.json"))) == 4


def test_an_unreadable_cache_entry_is_rendered_again_and_an_unwritable_folder_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path))
    first = renderings(_bars())
    (entry,) = (tmp_path / "figures").glob("*.json")
    entry.write_text("{not json")
    assert renderings(_bars()) == first
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(blocked))  # its figures/ can never be made
    assert renderings(_bars()) == first

"""A figure saved twice: for a desktop column and laid out again for a phone's.

Each PNG comes with its size and its smallest text in its own pixels, so the page can say
(and a test can check) how large that text shows once the image is scaled to the column.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

import matplotlib.pyplot as plt
from PIL import Image

from .phone import PHONE_DPI, phone_layout
from .plots import DESKTOP_DPI, fit_width, smallest_font_pt


@dataclass(frozen=True)
class Rendering:
    """A figure saved as PNG, with what a page needs to show its text at a known size."""

    png: bytes
    width: int  # pixels
    height: int
    font_px: float  # the smallest text's size, in the image's own pixels


def render(fig: plt.Figure, dpi: float) -> Rendering:
    """`fig` as a PNG at `dpi`, saved as the notebook shows figures (bbox 'tight'), in 256
    colours (compact)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    png = compact(buf.getvalue())
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    return Rendering(png, width, height, smallest_font_pt(fig, drawn=True) * dpi / 72)


def compact(png: bytes) -> bytes:
    """A figure's PNG in a palette of 256 colours, about a third of its bytes: a figure
    drawn on white has a few flat colours and their anti-aliased edges, and a phone loads
    every figure of a page within its 2 MB (tests/e2e/test_build.py)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, format="PNG", optimize=True)
    return out.getvalue()


def renderings(fig: plt.Figure) -> dict[str, Rendering]:
    """The figure for a desktop column (fit_width) and laid out again for a phone's
    (page.phone). The phone's is drawn last, as it rearranges the figure, which is then
    closed: a notebook would otherwise show it again, in its phone layout."""
    desktop = render(fit_width(fig), DESKTOP_DPI)
    phone = render(phone_layout(fig), PHONE_DPI)
    plt.close(fig)
    return {"desktop": desktop, "phone": phone}

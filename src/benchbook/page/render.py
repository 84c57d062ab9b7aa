"""A figure saved twice: for a desktop column and laid out again for a phone's.

Each PNG comes with its size and its smallest text in its own pixels, so the page can say
(and a test can check) how large that text shows once the image is scaled to the column.

Laying a figure out for a phone takes most of a figure's time (about a second: it draws the
figure several times), and a rerun of one chapter re-executes the pages that read it, whose
figures mostly did not change. So both PNGs are kept in the user's cache folder
(benchbook.cache, `figures/`), keyed by the desktop image's pixels, every
text of the figure (shown or hidden: a phone's layout shows the tick labels a shared axis
hid), the data of every line and marker set, the code of this module, page.phone and
page.plots, and the versions of matplotlib and Pillow. A figure that differs in anything
drawn, or in any text, misses; a hit is what the same code made of the same figure.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import struct
from dataclasses import asdict, dataclass
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import PIL
from matplotlib.collections import Collection
from matplotlib.lines import Line2D
from matplotlib.text import Text
from PIL import Image

from ..cache import folder as cache_folder
from . import phone as _phone
from . import plots as _plots
from .phone import PHONE_DPI, phone_layout
from .plots import DESKTOP_DPI, fit_width, smallest_font_pt

KEEP = 800  # figures kept in the cache (about 100 KB each); the least recently used go first


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
    return _rendering(fig, _png(fig, dpi), dpi)


def _png(fig: plt.Figure, dpi: float) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def _rendering(fig: plt.Figure, raw: bytes, dpi: float) -> Rendering:
    """The Rendering of the PNG `fig` was just saved as (its text sizes read from that layout)."""
    png = compact(raw)
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


def renderings(fig: plt.Figure, cache: bool = True) -> dict[str, Rendering]:
    """The figure for a desktop column (fit_width) and laid out again for a phone's
    (page.phone), from the cache when this figure was rendered before (`cache`). The phone's
    is drawn last, as it rearranges the figure, which is then closed: a notebook would
    otherwise show it again, in its phone layout."""
    raw = _png(fit_width(fig), DESKTOP_DPI)
    key = figure_key(fig, raw) if cache else None
    kept = _recall(key) if key else None
    if kept is None:
        kept = {"desktop": _rendering(fig, raw, DESKTOP_DPI), "phone": render(phone_layout(fig), PHONE_DPI)}
        if key:
            _keep(key, kept)
    plt.close(fig)
    return kept


def _code() -> str:
    sources = b"".join(Path(m.__file__).read_bytes() for m in (_phone, _plots))
    return hashlib.sha256(Path(__file__).read_bytes() + sources).hexdigest()


_CODE = _code()


def figure_key(fig: plt.Figure, desktop_png: bytes) -> str:
    """What the figure's two renderings depend on, hashed (see the module's docstring):
    called just after the desktop PNG was saved, so every tick label has its text."""
    h = hashlib.sha256(f"{_CODE}\0{matplotlib.__version__}\0{PIL.__version__}\0".encode())
    h.update(desktop_png)
    h.update(repr(tuple(fig.get_size_inches())).encode())
    for artist in fig.findobj():
        h.update(f"\0{type(artist).__name__}:{artist.get_visible():d}".encode())
        if isinstance(artist, Text):
            h.update(f"{artist.get_text()}\0{artist.get_fontsize()}\0{artist.get_fontweight()}".encode())
        elif isinstance(artist, Line2D):
            h.update(np.ascontiguousarray(artist.get_xydata(), dtype=float).tobytes())
        elif isinstance(artist, Collection):
            h.update(np.ascontiguousarray(artist.get_offsets(), dtype=float).tobytes())
    return h.hexdigest()


def _folder() -> Path:
    return cache_folder() / "figures"


def _recall(key: str) -> dict[str, Rendering] | None:
    path = _folder() / f"{key}.json"
    try:
        doc = json.loads(path.read_bytes())
        shown = {name: Rendering(**{**r, "png": base64.b64decode(r["png"])}) for name, r in doc.items()}
    except (OSError, ValueError, TypeError, KeyError):  # absent, or unreadable: render again
        return None
    try:
        os.utime(path)  # recently used: kept when older entries are dropped
    except OSError:
        pass
    return shown if set(shown) == {"desktop", "phone"} else None


def _keep(key: str, shown: dict[str, Rendering]) -> None:
    """Written beside its place and moved in (two kernels writing one key: the last wins);
    past KEEP entries the least recently used go. A folder that cannot be written is not used."""
    folder = _folder()
    doc = {name: {**asdict(r), "png": base64.b64encode(r.png).decode("ascii")} for name, r in shown.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}.{os.getpid()}"
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, folder / f"{key}.json")
        entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in entries[: max(len(entries) - KEEP, 0)]:
            old.unlink(missing_ok=True)
    except OSError:
        pass

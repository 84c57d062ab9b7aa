"""The book's colours: the one place a figure or an interactive chart gets a colour from.

Each kind of thing a series can stand for has its own palette, and no two palettes share a
colour, so a colour that means a model in one figure never means a platform, a build, a
power limit or a seed in another:

- a **model** keeps one colour in every figure of the book, whatever its organisation,
  weight format, file type or the label a chapter gives it (`model_colour`);
- **platforms** (`platform_colour`: the book's platforms in a fixed order, another by a
  stable hash of its name), **backend builds** (`build_colours`, a figure's builds in
  order) and **seeds** (`seed_colour`, in order) take their own categorical palettes;
- a **power limit** sits on one sequential scale, higher limits darker (`power_colour`);
- what is none of these (metrics side by side, one plain series) is drawn in `NEUTRAL` greys.

The model palette is Okabe and Ito's colour-blind-safe set, its orange darkened (and its
sky blue and yellow left out) so every colour keeps a contrast of 3:1 or more on the white
page (WCAG's figure for graphics); the other palettes keep that contrast too.
"""

from __future__ import annotations

import re
import zlib

import matplotlib as mpl
from matplotlib.colors import to_hex, to_rgb

from ..ledger.comparable import model_core

# The book's models first, in a fixed order, each with its colour; another model gets one of
# the spare colours from a hash of its name's core words (stable from run to run).
BOOK_MODELS = ("Qwen3.6-35B-A3B", "Qwen3.6-27B", "Qwen3.5-27B", "Qwen3.5-122B-A10B", "Qwen3.5-35B-A3B")
MODELS = ("#0072b2", "#b86e00", "#009e73", "#d55e00", "#cc79a7",  # blue, dark orange, bluish green,
          "#000000", "#6a5f00")  # vermillion, reddish purple; spares: black, dark yellow
# indigo, wine, brown, slate for the book's platforms; green and violet for others (Strix Halo,
# drawn beside the H100's models in its chapter, in a grey far from their blue and orange)
PLATFORMS = ("#332288", "#882255", "#7f4f24", "#5a6470", "#117733", "#6b4e9b")
BOOK_PLATFORMS = (("h100",), ("3090",), ("gb10", "dgx spark"), ("strix halo", "ryzen ai max"))
# teal, moss, purple, grey first (hues the models leave free), then ochre and rose
BUILDS = ("#1b6f8a", "#3d5a1e", "#8e3b9e", "#4d4d4d", "#9a6324", "#c0305a")
SEEDS = ("#1a1a1a", "#4f4f4f", "#7a7a7a", "#2f4858", "#5c3a58")  # near-black and greys, then two dark tints
NEUTRAL = ("#404040", "#767676", "#a3a3a3")  # metrics side by side: dark to light grey
POWER_MAP = "cividis"  # the power-limit scale: colour-blind safe, dark (high limits) to light
POWER_SPAN = (0.0, 0.6)  # the part of POWER_MAP used: its lightest end keeps 3:1 on white
POWER_RANGE_W = (150.0, 350.0)  # the power limits a card of the book runs at
_ACTIVE = re.compile(r"^a\d+(\.\d+)?b$")  # an active-parameter word ('a10b') of a mixture of experts


def book_model(name) -> str | None:
    """The book model a name stands for, or None: the same for every name of it
    ('QuantTrio/Qwen3.5-122B-A10B-AWQ', 'qwen3.5-122b (MoE)'). A name that gives no
    active-parameter word matches on family and size alone."""
    core = model_core(name)
    for known in BOOK_MODELS:
        wanted = model_core(known)
        if wanted <= core:
            return known
        if not any(_ACTIVE.match(w) for w in core) and {w for w in wanted if not _ACTIVE.match(w)} <= core:
            return known
    return None


def model_colour(name) -> str:
    """The colour of a model in every figure (a hex string)."""
    known = book_model(name)
    if known:
        return MODELS[BOOK_MODELS.index(known)]
    return _hashed(MODELS[len(BOOK_MODELS):], " ".join(sorted(model_core(name))))


def variant_colours(name, n: int) -> list[str]:
    """`n` colours for `n` configurations of one model in one figure (two precisions, MTP on
    and off): the model's colour, then darker shades of it (lighter ones of a colour too dark
    to darken, up to a grey that keeps 3:1 on white), so each stays its model's hue."""
    base = to_rgb(model_colour(name))
    towards = 0.0 if sum(base) > 0.6 else 1.0
    return [to_hex(tuple(c + (towards - c) * 0.45 * k / max(n - 1, 1) for c in base)) for k in range(n)]


def platform_colour(name) -> str:
    """The colour of a platform in every figure, however many of its devices a
    configuration uses ('4× RTX 3090' is 'RTX 3090 24GB')."""
    text = str(name).strip().lower()
    for i, words in enumerate(BOOK_PLATFORMS):
        if any(w in text for w in words):
            return PLATFORMS[i]
    return _hashed(PLATFORMS[len(BOOK_PLATFORMS):], re.sub(r"^\d+\s*[x×]\s*", "", text))


def build_colours(names) -> dict[str, str]:
    """Backend build ('ROCm b6077') -> its colour, the builds of one figure in sorted order."""
    names = sorted(dict.fromkeys(names))
    return {n: BUILDS[i % len(BUILDS)] for i, n in enumerate(names)}


def seed_colour(index: int) -> str:
    """The colour of the `index`-th seed (or repeat) of a figure."""
    return SEEDS[index % len(SEEDS)]


def power_colour(limit) -> str:
    """The colour of a power limit ('250W' or 250) on one scale for the whole book."""
    watts = float(re.sub(r"[^0-9.]", "", str(limit)) or "nan")
    lo, hi = POWER_RANGE_W
    share = min(max((watts - lo) / (hi - lo), 0.0), 1.0) if watts == watts else 0.5
    start, end = POWER_SPAN
    return to_hex(mpl.colormaps[POWER_MAP](end - share * (end - start)))


def _hashed(palette: tuple[str, ...], key: str) -> str:
    return palette[zlib.crc32(key.encode()) % len(palette)]

"""The one palette registry: a model has one colour whatever its name says beside the model,
and no colour stands for two kinds of thing (models, platforms, builds, seeds, power limits)."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_rgb

from benchbook.page import palette


def contrast_on_white(colour) -> float:
    """WCAG 2 contrast ratio of a colour against white."""
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def test_a_model_has_one_colour_whatever_its_organisation_format_file_or_label():
    names = ["Qwen/Qwen3.6-35B-A3B-FP8", "Qwen3.6-35B-A3B-Q8_0.gguf", "cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit"]
    assert len({palette.model_colour(n) for n in names}) == 1
    # a chapter's label without the active-parameter word is still the model
    assert palette.model_colour("qwen3.5-122b (MoE)") == palette.model_colour("QuantTrio/Qwen3.5-122B-A10B-AWQ")
    assert palette.model_colour("qwen3.5-27b (dense)") == palette.model_colour("Qwen3.5-27B")
    assert palette.model_colour("Qwen3.5-27B") != palette.model_colour("Qwen3.6-27B")
    # an active-parameter word that differs is another model
    assert palette.book_model("Qwen3.5-35B-A22B") is None
    book = [palette.model_colour(m) for m in palette.BOOK_MODELS]
    assert len(set(book)) == len(book)  # the book's models never share a colour
    other = palette.model_colour("meta-llama/Llama-3.3-70B-Instruct")
    assert other == palette.model_colour("Llama-3.3-70B-Instruct-Q4_K_M.gguf") and other not in book


def test_a_power_limit_has_one_colour_and_higher_limits_are_darker():
    assert palette.power_colour("250W") == palette.power_colour(250)
    lightness = [sum(to_rgb(palette.power_colour(w))) for w in (200, 250, 300)]
    assert lightness == sorted(lightness, reverse=True)


def _power_scale() -> set[str]:
    lo, hi = palette.POWER_RANGE_W
    return {palette.power_colour(lo + (hi - lo) * k / 20) for k in range(21)}


def test_no_colour_means_two_kinds_of_thing():
    kinds = {"models": set(palette.MODELS), "platforms": set(palette.PLATFORMS), "builds": set(palette.BUILDS),
             "seeds": set(palette.SEEDS), "neutral": set(palette.NEUTRAL), "power": _power_scale()}
    for a in kinds:
        for b in kinds:
            if a < b:
                shared = {to_rgb(c) for c in kinds[a]} & {to_rgb(c) for c in kinds[b]}
                assert not shared, f"{a} and {b} share {shared}"


@pytest.mark.parametrize("colours", [palette.MODELS, palette.PLATFORMS, palette.BUILDS, palette.SEEDS,
                                     palette.NEUTRAL[:2], sorted(_power_scale())])
def test_every_series_colour_stands_out_on_the_white_page(colours):
    weak = {c: round(contrast_on_white(c), 2) for c in colours if contrast_on_white(c) < 3.0}
    assert not weak, weak


def test_a_platform_keeps_its_colour_whatever_its_device_count():
    assert palette.platform_colour("2× RTX 3090") == palette.platform_colour("4x RTX 3090 24GB")
    book = [palette.platform_colour(p) for p in ("NVIDIA H100", "RTX 3090", "DGX Spark", "Strix Halo")]
    assert len(set(book)) == 4


def test_configurations_of_one_model_get_shades_of_its_colour():
    from benchbook.page import plots

    colours = plots.config_colours({"FP8": "Qwen/Qwen3.6-35B-A3B-FP8", "NVFP4": "RedHatAI/Qwen3.6-35B-A3B-NVFP4",
                                    "dense": "Qwen/Qwen3.6-27B-FP8"})
    assert colours["FP8"] == palette.model_colour("Qwen3.6-35B-A3B") != colours["NVFP4"]
    assert colours["dense"] == palette.model_colour("Qwen3.6-27B")
    assert colours["NVFP4"] not in palette.MODELS
    r, g, b = to_rgb(colours["NVFP4"])  # a darker shade of the same hue
    assert sum((r, g, b)) < sum(to_rgb(colours["FP8"]))


def test_configurations_of_a_model_the_book_does_not_know_are_still_told_apart():
    from benchbook.page import plots

    dark = next(m for m in ("a-model", "b-model", "c-model", "d-model", "e-model", "f-model")
                if palette.model_colour(m) == "#000000")
    colours = plots.config_colours({"one": dark, "two": dark})
    assert len(set(colours.values())) == 2
    assert all(contrast_on_white(c) >= 3.0 for c in colours.values())

"""A glued figure with a phone layout becomes a <picture> in a real myst-nb build."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from base64 import b64encode
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from benchbook.page.render import renderings  # noqa: E402
from benchbook.site.picture import PHONE_MEDIA  # noqa: E402
from chapter_figures import panels_with_legends  # noqa: E402

CONF = """extensions = ["myst_nb"{extra}]
nb_execution_mode = "off"
"""


def _notebook(tmp: Path) -> dict:
    """One code cell holding what report.glue_figure displays, and a page that pastes it."""
    fig, _ = panels_with_legends(2, 10)
    shown = renderings(fig)
    size = {k: getattr(shown["phone"], k) for k in ("width", "height")}
    meta = {"scrapbook": {"name": "fig", "mime_prefix": "application/papermill.record/"},
            "benchbook": {"figure": {"width": shown["desktop"].width, "height": shown["desktop"].height,
                                     "font_px": shown["desktop"].font_px,
                                     "phone": {"png": b64encode(shown["phone"].png).decode(), **size,
                                               "font_px": shown["phone"].font_px}}}}
    output = {"output_type": "display_data", "metadata": meta,
              "data": {"application/papermill.record/image/png": b64encode(shown["desktop"].png).decode(),
                       "application/papermill.record/text/plain": "<Figure>"}}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3", "display_name": "p"}},
            "cells": [{"cell_type": "markdown", "id": "a", "metadata": {},
                       "source": "# Page\n\n```{glue:figure} fig\n:width: 100%\n:alt: two panels\n\nA caption.\n```\n"},
                      {"cell_type": "code", "id": "b", "metadata": {}, "execution_count": 1, "source": "glue()",
                       "outputs": [output]}]}, shown


def _build(tmp: Path, extension: bool) -> tuple[str, Path, dict]:
    src = tmp / "src"
    src.mkdir()
    nb, shown = _notebook(tmp)
    (src / "index.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (src / "conf.py").write_text(CONF.format(extra=', "benchbook.site.picture"' if extension else ""))
    out = tmp / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return (out / "index.html").read_text(encoding="utf-8"), out, shown


def test_the_figure_is_a_picture_whose_phone_source_and_desktop_image_carry_their_sizes(tmp_path):
    page, out, shown = _build(tmp_path, extension=True)
    m = re.search(r'<a class="reference internal image-reference" href="([^"]+)"><picture>'
                  r'<source media="([^"]+)" srcset="([^"]+)" width="(\d+)" height="(\d+)" data-font-px="([\d.]+)">'
                  r'<img width="(\d+)" height="(\d+)" data-font-px="([\d.]+)" alt="two panels" src="([^"]+)"', page)
    assert m, page[page.find("<figure"):page.find("</figure>")]
    link, media, phone_src, pw, ph, pfont, w, h, font, src = m.groups()
    assert media == PHONE_MEDIA
    assert (int(pw), int(ph)) == (shown["phone"].width, shown["phone"].height)
    assert (int(w), int(h)) == (shown["desktop"].width, shown["desktop"].height)
    assert abs(float(pfont) - shown["phone"].font_px) < 0.01
    assert abs(float(font) - shown["desktop"].font_px) < 0.01
    assert link == src  # a tap opens the desktop figure at full size
    assert (out / phone_src).read_bytes() == shown["phone"].png
    assert (out / src).read_bytes() == shown["desktop"].png


def test_without_the_extension_the_figure_is_the_plain_desktop_image(tmp_path):
    page, _, _ = _build(tmp_path, extension=False)
    assert "<picture>" not in page and "<source" not in page and '<img alt="two panels"' in page

"""The synthesis: every study's key figures against physical limits, prices and power.

The chapter's pages (PAGES: benchbook.book.spec.ChapterSpec), the contract its data folder
meets and its headlines; analysis.py computes the page."""

from __future__ import annotations

from ...book.spec import ChapterSpec

PAGES = (
    ChapterSpec("synthesis", "synthesis", "Synthesis", None,
        uses=("h100-dense-vs-moe-mtp", "3090-dense-vs-sparse", "power-sweep", "gb10-mtp",
              "strix-halo-baseline", "dgx-spark-dense-vs-moe", "dgx-spark-measured",
              "strix-halo-qwen3-30b-lhl"),  # the last three: measured files
        outputs=(), writeup=False, order=90,
        files=("data/*/published.yml",)),  # the write-ups' headline numbers, for the second-opinion table
)

"""Every number on a page can be traced with grep: each glue key the prose quotes, and each
key a chapter glues, is written out as a literal in the module that computes it (issue 20).
An f-string key (`f"{short}_{metric}"`) would pass every other test and fail here."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.chapters import dense_sparse, gb10, h100, power_sweep, strix, synthesis
from pages import declared_glue_keys, glue_references

ROOT = Path(__file__).parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))
DATA = ROOT / "data"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_key_the_prose_quotes_is_declared_where_it_is_computed(notebook):
    declared = declared_glue_keys(notebook)
    quoted = glue_references(notebook.read_text(encoding="utf-8"))
    assert quoted, notebook  # the pattern finds the prose's references at all
    assert sorted(k for k in quoted if not declared(k)) == []


def test_the_book_pages_quote_only_declared_keys():
    """The intro and methods pages may quote a chapter's numbers (`{glue:text}`x.ipynb::key``)."""
    for page in (ROOT / "book").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for notebook in NOTEBOOKS:
            if f"{notebook.stem}.ipynb::" in text:
                declared = declared_glue_keys(notebook)
                quoted = glue_references(text.replace(f"{notebook.stem}.ipynb::", ""))
                assert sorted(k for k in quoted if not declared(k)) == [], page


def test_an_undeclared_key_is_found(tmp_path):
    """The check itself: a key built with an f-string in the module is not declared; a key
    only the notebook's prose names is not either."""
    nb = tmp_path / "x.md"
    nb.write_text("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n---\n\n"
                  "```{code-cell} ipython3\nfrom benchbook.chapters import h100\n"
                  "report.glue_figure(f\"fig_row_{i}\", fig)\n```\n\n"
                  "Text {glue:text}`base_lo_concurrency` and {glue:text}`nowhere_at_all:.1f`.\n", encoding="utf-8")
    declared = declared_glue_keys(nb)
    assert glue_references(nb.read_text()) == {"base_lo_concurrency", "nowhere_at_all"}
    assert not declared("nowhere_at_all")
    assert declared("fig_row_3") and declared("claims_total") and declared("agents")


CHAPTERS = {
    "h100-dense-vs-moe-mtp": (h100, lambda: h100.analyse(DATA / "h100-dense-vs-moe-mtp", DATA / "strix-halo-baseline",
                                                         DATA / "h100-dense-vs-moe-mtp/published.yml")),
    "strix-halo-baseline": (strix, lambda: strix.analyse(DATA / "strix-halo-baseline", DATA / "h100-dense-vs-moe-mtp",
                                                         DATA / "strix-halo-baseline/published.yml")),
    "power-sweep": (power_sweep, lambda: power_sweep.analyse(DATA / "power-sweep", DATA / "power-sweep/published.yml")),
    "3090-dense-vs-sparse": (dense_sparse, lambda: dense_sparse.analyse(
        DATA / "3090-dense-vs-sparse", DATA / "3090-dense-vs-sparse/published.yml",
        DATA / "3090-dense-vs-sparse/architecture.yml")),
    "gb10-mtp": (gb10, lambda: gb10.analyse(DATA / "gb10-mtp", DATA / "gb10-mtp/published.yml")),
    "synthesis": (synthesis, lambda: synthesis.analyse(DATA / "facts")),
}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_key_a_chapter_glues_is_declared(chapter):
    """On the committed data every glue_values key is a literal of the chapter (a key named
    after the data, such as a model's name, could never be quoted by prose that must stay
    true on other data)."""
    module, analyse = CHAPTERS[chapter]
    declared = declared_glue_keys(ROOT / "notebooks" / f"{chapter}.md")
    keys = module.glue_values(analyse())
    assert len(keys) > 10
    assert sorted(k for k in keys if not declared(k)) == []

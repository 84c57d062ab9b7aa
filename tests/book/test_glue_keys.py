"""Every number on a page can be traced with grep: each glue key the prose quotes, and each
key a chapter glues, is written out as a literal in the module that computes it (issue 20).
An f-string key (`f"{short}_{metric}"`) would pass every other test and fail here."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import pytest

from benchbook.book.registry import chapters
from benchbook.site.runner import Chapter
from pages import declared_glue_keys, glue_references

ROOT = Path(__file__).parents[2]
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
                  "```{code-cell} ipython3\nfrom benchbook.chapters.h100 import analysis as h100\n"
                  "report.glue_figure(f\"fig_row_{i}\", fig)\n```\n\n"
                  "Text {glue:text}`base_lo_concurrency` and {glue:text}`nowhere_at_all:.1f`.\n", encoding="utf-8")
    declared = declared_glue_keys(nb)
    assert glue_references(nb.read_text()) == {"base_lo_concurrency", "nowhere_at_all"}
    assert not declared("nowhere_at_all")
    assert declared("fig_row_3") and declared("claims_total") and declared("agents")


@pytest.mark.slow
@pytest.mark.parametrize("spec", chapters(), ids=lambda s: s.id)
def test_every_key_a_chapter_glues_is_declared(spec):
    """On the committed data every glue_values key is a literal of the chapter (a key named
    after the data, such as a model's name, could never be quoted by prose that must stay
    true on other data). Every page of the registry is checked, with the parameters its
    notebook runs with: a new chapter is covered without an edit here."""
    module = import_module(spec.module)
    declared = declared_glue_keys(ROOT / "notebooks" / f"{spec.notebook_name}.md")
    keys = module.glue_values(Chapter(ROOT, spec.id).analysed())
    assert len(keys) > 10
    assert sorted(k for k in keys if not declared(k)) == []

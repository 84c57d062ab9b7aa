"""Copies of the project for tests that execute chapters or build the book.

One helper so every test builds the same way: `copy_project(dest)` copies the real book;
`copy_project(dest, chapters=[...])` makes a book of just those chapters, so a chapter's
own build test does not execute every other chapter too; `one_chapter_book(study)` gives a
chapter test its module fixtures (that book, and its notebook executed once).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[1]
PAGES = ("methods", "reproduce")


def ignore_generated(folder: str, names: list[str]) -> list[str]:
    if Path(folder).name == "studies":  # executed notebooks and their downloads
        return [n for n in names if n != ".gitkeep"]
    return [n for n in names if n in ("_build", ".ipynb_checkpoints") or n.endswith((".lock", ".run.json"))]


def copy_project(dest: Path, chapters: list[str] | None = None, pages: tuple[str, ...] = PAGES) -> Path:
    """Config, book sources, every notebook and every data folder; the TOC decides what builds.

    With `chapters`, the TOC lists only those chapters (and `pages`), and the intro is a
    stub: the real one quotes numbers glued from the synthesis page.
    """
    dest = Path(dest)
    shutil.copy2(ROOT / "_config.yml", dest / "_config.yml")
    shutil.copytree(ROOT / "notebooks", dest / "notebooks")
    shutil.copytree(ROOT / "data", dest / "data")
    shutil.copytree(ROOT / "book", dest / "book", symlinks=True, ignore=ignore_generated)
    if chapters is None:
        shutil.copy2(ROOT / "_toc.yml", dest / "_toc.yml")
        return dest
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [
            {"caption": "Studies", "chapters": [{"file": f"studies/{c}"} for c in chapters]},
            {"caption": "About", "chapters": [{"file": p} for p in pages]},
        ],
    }
    (dest / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False), encoding="utf-8")
    (dest / "book" / "intro.md").write_text(
        "# Test book\n\n" + "\n".join(f"- {{doc}}`studies/{c}`" for c in chapters) + "\n",
        encoding="utf-8",
    )
    return dest


def mini_notebook(parameters: str, body: str, tags: str = "parameters") -> str:
    """A one-chapter MyST notebook: a parameters cell (`tags`) and one code cell, for tests
    of the runner that need a chapter of their own."""
    return ("---\njupytext:\n  text_representation: {extension: .md, format_name: myst}\n"
            "kernelspec: {display_name: Python 3, language: python, name: python3}\n---\n\n# Mini\n\n"
            f"```{{code-cell}} ipython3\n:tags: [{tags}]\n\n{parameters.strip()}\n```\n\n"
            f"```{{code-cell}} ipython3\n{body.strip()}\n```\n")


def demo_manifest(raw: str) -> str:
    """study.yml of a one-file, one-configuration measured folder (`raw`: its path)."""
    return ("study: demo\ntitle: Demo\nlabel: demo data v1\nreconstructed: false\n"
            f"configs:\n  a: {{platform: X}}\nfiles:\n  - {{path: {raw}, config: a, name: one}}\n")


def one_chapter_book(study: str):
    """Module fixtures `project` (a book of this chapter only) and `executed` (its notebook,
    run once): `project, executed = one_chapter_book(STUDY)` in a chapter's test module."""
    @pytest.fixture(scope="module")
    def project(tmp_path_factory):
        return copy_project(tmp_path_factory.mktemp(f"{study}-book"), chapters=[study])

    @pytest.fixture(scope="module")
    def executed(project):
        import nbformat

        from benchbook.site.runner import Chapter

        return nbformat.read(Chapter(project, study).execute(log=lambda msg: None), as_version=4)

    return project, executed

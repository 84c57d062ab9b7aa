"""The book's chapters, found at run time: every folder of benchbook/chapters/ with `PAGES`.

A chapter is a folder (benchbook/chapters/<name>/): its `__init__.py` declares its pages
(benchbook.book.spec.ChapterSpec) and `analysis.py` computes them. Adding or editing one
touches no shared file, and since the runner hashes the code a page imports, no other
page re-executes. The runner, `benchbook new`, `validate` and the synthesis read this list.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from .spec import ChapterSpec

CHAPTERS_PACKAGE = "benchbook.chapters"


class RegistryError(RuntimeError):
    """A chapter folder that does not declare its pages as the registry expects."""


@functools.cache
def chapters() -> tuple[ChapterSpec, ...]:
    """Every page of every chapter folder, in the order they declare (`order`, then id)."""
    package = importlib.import_module(CHAPTERS_PACKAGE)  # found at run time, imported by no module
    found: dict[str, ChapterSpec] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{CHAPTERS_PACKAGE}.{info.name}")
        pages = getattr(module, "PAGES", None)
        where = f"benchbook/chapters/{info.name}/__init__.py"
        if not isinstance(pages, tuple) or not pages or not all(isinstance(p, ChapterSpec) for p in pages):
            raise RegistryError(f"{where}: expected PAGES, a non-empty tuple of benchbook.book.spec.ChapterSpec")
        for page in pages:
            if page.folder != info.name:
                raise RegistryError(f"{where}: page {page.id!r} names folder {page.folder!r}; expected {info.name!r}")
            if page.id in found:
                raise RegistryError(f"{where}: page id {page.id!r} is declared by folder "
                                    f"{found[page.id].folder!r} too")
            found[page.id] = page
    return tuple(sorted(found.values(), key=lambda c: (c.order, c.id)))


def get(chapter_id: str) -> ChapterSpec:
    hit = next((c for c in chapters() if c.id == chapter_id), None)
    if hit is None:
        raise KeyError(f"no chapter {chapter_id!r}; known: {', '.join(c.id for c in chapters())}")
    return hit


def studies() -> list[str]:
    """Chapters that have a data folder of their own (not the synthesis)."""
    return [c.id for c in chapters() if c.contract is not None]

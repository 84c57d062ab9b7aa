"""The registry finds chapter folders at run time; every page it finds has a module that
provides the chapter interface (benchbook.book.spec.ChapterModule), and a folder that does
not declare its pages as expected is named in a clear error."""

from __future__ import annotations

import inspect
from importlib import import_module

import pytest

import benchbook.chapters
from benchbook.book import registry
from benchbook.book.paths import find_repo
from benchbook.book.spec import ChapterModule
from benchbook.site.runner import Chapter


@pytest.fixture
def extra_folder(tmp_path, monkeypatch):
    """A second folder of chapters on the package's path, and a registry that looks again."""
    monkeypatch.setattr(benchbook.chapters, "__path__", [*benchbook.chapters.__path__, str(tmp_path)])
    registry.chapters.cache_clear()
    yield tmp_path
    registry.chapters.cache_clear()


def _write(folder, name: str, body: str) -> None:
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text(
        "from benchbook.book.spec import ChapterSpec\n" + body, encoding="utf-8")


@pytest.mark.parametrize("spec", registry.chapters(), ids=lambda s: s.id)
def test_every_page_s_module_provides_the_chapter_interface(spec):
    module = import_module(spec.module)
    assert isinstance(module, ChapterModule), spec.module
    params = Chapter(find_repo(), spec.id).defaults()
    required = [p for p, v in inspect.signature(module.analyse).parameters.items()
                if v.default is inspect.Parameter.empty]
    taken = [p for p in required if p not in params]
    assert taken == [], f"{spec.module}.analyse takes arguments the notebook has no parameter for: {taken}"


def test_a_new_folder_is_found_without_editing_any_shared_file(extra_folder):
    _write(extra_folder, "demo", 'PAGES = (ChapterSpec("demo-page", "demo", "Demo", writeup=False, order=7),)\n')
    ids = [c.id for c in registry.chapters()]
    assert "demo-page" in ids and registry.get("demo-page").module == "benchbook.chapters.demo.analysis"
    orders = [c.order for c in registry.chapters()]
    assert orders == sorted(orders)


@pytest.mark.parametrize("name, body, expected", [
    ("nopages", "X = 1\n", "nopages/__init__.py: expected PAGES"),
    ("wrongname", 'PAGES = (ChapterSpec("demo-page", "other", "Demo"),)\n',
     "names folder 'other'; expected 'wrongname'"),
    ("taken", 'PAGES = (ChapterSpec("gb10-mtp", "taken", "Demo"),)\n', "page id 'gb10-mtp' is declared by folder"),
])
def test_a_folder_that_does_not_declare_its_pages_is_named(extra_folder, name, body, expected):
    _write(extra_folder, name, body)
    with pytest.raises(registry.RegistryError, match=expected.replace("(", r"\(")):
        registry.chapters()


def test_an_unknown_page_lists_the_known_ones():
    with pytest.raises(KeyError, match="no chapter 'nope'; known: h100-dense-vs-moe-mtp"):
        registry.get("nope")

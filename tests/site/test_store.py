"""The store of executed chapters (BENCHBOOK_STORE): a second copy of the project restores
what the first executed to the same cache key, executes anything else, and nothing is
stored without the variable. A real kernel runs."""

from __future__ import annotations

import re
import shutil

import nbformat
import pytest

import projects
from benchbook.site import store
from benchbook.site.runner import Chapter

pytestmark = pytest.mark.slow  # executes chapter notebooks (make test-fast leaves it out)

NOTEBOOK = projects.mini_notebook('data_dir = "data/mini"', """\
import uuid
from pathlib import Path
from benchbook.book.paths import downloads_dir

out = downloads_dir("mini")
out.mkdir(parents=True, exist_ok=True)
(out / "value.csv").write_text(Path(data_dir, "value.txt").read_text())
print("run", uuid.uuid4().hex)
""")


def _project(root):
    (root / "notebooks").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: studies/mini\n")
    (root / "notebooks/mini.md").write_text(NOTEBOOK)
    (root / "data/mini").mkdir(parents=True)
    (root / "data/mini/value.txt").write_text("21")
    return root


def _run(root) -> tuple[str, list[str]]:
    """(the run's random id as the page shows it, the runner's log)"""
    logs = []
    out = Chapter(root, "mini").execute({}, log=logs.append)
    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells
                   for o in c.get("outputs", []))
    return re.search(r"run (\w+)", text).group(1), logs


@pytest.fixture
def two(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENV, str(tmp_path / "store"))
    return _project(tmp_path / "a"), _project(tmp_path / "b")


def test_a_second_copy_restores_what_the_first_executed(two):
    a, b = two
    first, logs = _run(a)
    assert any(m.startswith("executing mini") for m in logs)
    again, logs = _run(b)
    assert again == first and any(m.startswith("restored mini") for m in logs)
    assert (b / "book/studies/mini/value.csv").read_text() == "21"
    assert not Chapter(b, "mini").is_stale()  # a restored page is up to date like an executed one


def test_another_key_executes(two):
    a, b = two
    first, _ = _run(a)
    (b / "data/mini/value.txt").write_text("22")
    other, logs = _run(b)
    assert other != first and any(m.startswith("executing mini") for m in logs)
    assert (b / "book/studies/mini/value.csv").read_text() == "22"


def test_a_restore_replaces_the_downloads_of_an_earlier_run(two):
    a, b = two
    _run(a)
    stale = b / "book/studies/mini/left-over.csv"
    stale.parent.mkdir(parents=True)
    stale.write_text("x")
    _run(b)
    assert not stale.exists()


def test_without_the_variable_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.delenv(store.ENV, raising=False)
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    assert _run(a)[0] != _run(b)[0]
    shutil.rmtree(a)
    assert not (tmp_path / "store").exists()


def test_two_copies_running_one_key_at_once_execute_it_once(two):
    """Two processes (parallel test workers, two builds) wanting the same key at the same time:
    one executes, the other waits for it and restores, rather than running the same chapter
    beside it on the same cores."""
    import threading

    results, start = {}, threading.Barrier(2)

    def go(root):
        start.wait()
        results[root.name] = _run(root)

    threads = [threading.Thread(target=go, args=(root,)) for root in two]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (ra, la), (rb, lb) = results["a"], results["b"]
    said = [m.split()[0] for m in la + lb if m.startswith(("executing", "restored"))]
    assert ra == rb and sorted(said) == ["executing", "restored"], la + lb

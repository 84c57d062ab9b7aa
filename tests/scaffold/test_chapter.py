"""`benchbook new-chapter`: the template makes a working chapter in four new files and one
TOC line, edits no shared file, changes no other page's cache key, and its page builds
strictly from one data folder made by `benchbook new`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchbook.book.paths import ChapterError
from benchbook.scaffold.chapter import add_to_toc, new_chapter
from files import tree_bytes
from projects import ROOT, copy_project

NEW = "my-machine"
LLAMA = ROOT / "data/strix-halo-qwen3-30b-lhl/raw/jsonl_rocm+vulkan_b5921-6077_qwen3-30b-a3b_raw_runs.jsonl"
BENCH = ROOT / "data/h100-dense-vs-moe-mtp/raw/h100-moe-mtp"


def test_the_toc_line_goes_after_the_last_study_and_keeps_the_comments(tmp_path):
    toc = tmp_path / "_toc.yml"
    shutil.copy(ROOT / "_toc.yml", toc)
    before = toc.read_text().splitlines()
    add_to_toc(toc, NEW)
    after = toc.read_text().splitlines()
    assert len(after) == len(before) + 1 and after[0] == before[0]  # the comment line stays
    last = max(i for i, line in enumerate(before) if "studies/" in line and "synthesis" not in line)
    assert after[last + 1] == before[last].split("- file:")[0] + f"- file: studies/{NEW}"


@pytest.mark.parametrize("chapter_id, expected", [
    ("My_Machine", "expected lower-case letters, digits and hyphens"),
    ("3090-again", "starting with a letter"),
    ("gb10-mtp", "'gb10-mtp' is taken"),
])
def test_an_id_that_cannot_name_a_chapter_is_refused(tmp_path, chapter_id, expected):
    with pytest.raises(ChapterError, match=expected):
        new_chapter(tmp_path, chapter_id)
    assert not any(tmp_path.iterdir())


def test_a_checkout_other_than_the_imported_one_is_refused(tmp_path):
    (tmp_path / "src/benchbook/chapters").mkdir(parents=True)
    with pytest.raises(ChapterError, match="pip install -e"):
        new_chapter(tmp_path, NEW)


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    """A command in the project, with the project's own src/ first on the import path."""
    env = dict(os.environ, PYTHONPATH=str(project / "src"))
    proc = subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


KEYS = ("import json; from pathlib import Path; from benchbook.site.runner import Chapter, toc_studies; "
        "print(json.dumps({s: Chapter(Path('.'), s).cache_key({}) for s in toc_studies(Path('.'))}))")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A copy of the project (its source too), before and after `new-chapter`."""
    project = copy_project(tmp_path_factory.mktemp("template"))
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (project / "tests").mkdir()
    before, keys = tree_bytes(project), json.loads(_run(project, sys.executable, "-c", KEYS).stdout)
    _run(project, sys.executable, "-m", "benchbook.cli", "new-chapter", NEW, "--title", "My machine: first runs")
    return project, before, keys


@pytest.mark.build
def test_a_chapter_is_four_new_files_and_one_toc_line(made):
    project, before, _ = made
    after = tree_bytes(project)
    new = sorted(set(after) - set(before))
    assert new == ["notebooks/my-machine.md", "src/benchbook/chapters/my_machine/__init__.py",
                   "src/benchbook/chapters/my_machine/analysis.py", "tests/chapters/test_my_machine.py"]
    changed = sorted(p for p in before if after.get(p) != before[p] and not (project / p).is_symlink())
    assert changed == ["_toc.yml"]  # (book/_toc.yml is a link to it)
    # the new files pass the project's lint as they are
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    _run(project, str(Path(sys.executable).parent / "ruff"), "check", *new)


@pytest.mark.build
def test_adding_a_chapter_re_executes_no_other(made):
    project, _, keys = made
    now = json.loads(_run(project, sys.executable, "-c", KEYS).stdout)
    assert set(now) == set(keys) | {NEW}
    assert {s: now[s] for s in keys} == keys


@pytest.mark.build
def test_the_template_chapter_builds_from_one_data_folder(made):
    project, _, _ = made
    files = [str(LLAMA), *sorted(str(p) for p in BENCH.glob("*.json"))[:3]]
    _run(project, sys.executable, "-m", "benchbook.cli", "new", NEW, f"data/{NEW}", *files)
    _run(project, sys.executable, "-m", "benchbook.cli", "validate", NEW)
    test = _run(project, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(project),
                f"tests/chapters/test_{NEW.replace('-', '_')}.py")
    assert "2 passed" in test.stdout
    # a book of the new chapter alone, built as CI builds it: warnings are errors
    (project / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n  - file: studies/{NEW}\n")
    (project / "book/intro.md").write_text("# Test book\n")
    _run(project, str(Path(sys.executable).parent / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going")
    page = (project / f"book/_build/html/studies/{NEW}.html").read_text(encoding="utf-8")
    for heading in ("What was measured", "llama-bench results", "Serving runs", "Caveats", "Provenance"):
        assert heading in page
    assert "My machine: first runs" in page and "llama-bench tests" in page and "Serving runs</" in page
    out = project / f"book/studies/{NEW}"
    assert sorted(p.name for p in out.glob("*.csv")) == ["caveats.csv", "llama_bench.csv", "runs.csv"]
    # the page shows every build apart, so no caveat calls its figures a best of builds
    assert "best-of-backends" not in (out / "caveats.csv").read_text(encoding="utf-8")
    assert "Setup not declared" not in page  # no write-up, no setup to compare with

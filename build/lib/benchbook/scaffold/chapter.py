"""`benchbook new-chapter NAME`: a working chapter from the template, in four files and one TOC line.

The files are the chapter folder's `__init__.py` (its page and contract) and `analysis.py`
(what the page computes), the notebook (notebooks/<id>.md) and a test
(tests/chapters/test_<folder>.py); the TOC gets one line. No shared file is edited, so no
other page re-executes (the runner hashes only the code a page imports). The chapter builds
from one data folder made by `benchbook new <id> data/<id> FILES`: llama-bench output
or `vllm bench serve` results. docs/contributing.md says what to change next.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from string import Template

from ..book.paths import ChapterError
from ..book.registry import CHAPTERS_PACKAGE, chapters

TEMPLATE = "chapter_template"
ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _template(name: str) -> Template:
    return Template(resources.files(__package__).joinpath(TEMPLATE, name).read_text(encoding="utf-8"))


def targets(repo: Path, chapter_id: str) -> dict[str, Path]:
    """Template file -> where the chapter's copy goes."""
    folder = chapter_id.replace("-", "_")
    return {"init.py.txt": repo / "src" / "benchbook" / "chapters" / folder / "__init__.py",
            "analysis.py.txt": repo / "src" / "benchbook" / "chapters" / folder / "analysis.py",
            "notebook.md.txt": repo / "notebooks" / f"{chapter_id}.md",
            "test.py.txt": repo / "tests" / "chapters" / f"test_{folder}.py"}


def _check(repo: Path, chapter_id: str, out: dict[str, Path]) -> None:
    if not ID.fullmatch(chapter_id):
        raise ChapterError(f"chapter id {chapter_id!r}: expected lower-case letters, digits and hyphens, "
                           "starting with a letter (it names the page, its data folder and its module)")
    if chapter_id in {c.id for c in chapters()}:
        raise ChapterError(f"chapter id {chapter_id!r} is taken")
    package = repo / "src" / "benchbook" / "chapters"
    installed = Path(find_spec(CHAPTERS_PACKAGE).submodule_search_locations[0])
    if not package.is_dir() or installed.resolve() != package.resolve():
        raise ChapterError(f"{package}: the chapters this Python imports are in {installed}; "
                           "run new-chapter in a source checkout installed with `pip install -e .` "
                           "(`make book` does this), so the registry finds the new folder")
    taken = [str(p.relative_to(repo)) for p in out.values() if p.exists()]
    if taken:
        raise ChapterError(f"chapter {chapter_id!r}: {', '.join(taken)} exist already")


def add_to_toc(toc: Path, chapter_id: str) -> None:
    """One line after the last study in _toc.yml (comments and layout kept)."""
    lines = toc.read_text(encoding="utf-8").splitlines(keepends=True)
    studies = [i for i, line in enumerate(lines)
               if re.match(r"\s*- file: studies/", line) and "studies/synthesis" not in line]
    if not studies:
        raise ChapterError(f"{toc}: no `- file: studies/<id>` entry to add `studies/{chapter_id}` after; "
                           "add it by hand")
    last = lines[studies[-1]]
    lines.insert(studies[-1] + 1, f"{last[:len(last) - len(last.lstrip())]}- file: studies/{chapter_id}\n")
    toc.write_text("".join(lines), encoding="utf-8")


def new_chapter(repo: Path, chapter_id: str, title: str | None = None, log=print) -> list[Path]:
    """Write the chapter's four files and its TOC line; return the files written."""
    repo = Path(repo)
    out = targets(repo, chapter_id)
    _check(repo, chapter_id, out)
    names = dict(id=chapter_id, folder=chapter_id.replace("-", "_"),
                 title=(title or chapter_id.replace("-", " ").capitalize()).replace('"', "'"))
    for template, path in out.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_template(template).substitute(names), encoding="utf-8")
        log(f"wrote {path.relative_to(repo)}")
    add_to_toc(repo / "_toc.yml", chapter_id)
    log(f"added studies/{chapter_id} to _toc.yml")
    log(f"next: benchbook new {chapter_id} data/{chapter_id} FILES..., then "
        f"benchbook run {chapter_id} (or jupyter-book build book); docs/contributing.md says what to change")
    return list(out.values())

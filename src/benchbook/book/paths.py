"""Where things are in a project: its root, the executed pages and their downloads.

Low in the layers so that pages, the pipeline and the runner agree on one answer.
"""

from __future__ import annotations

from pathlib import Path

BOOK_DIR = "book"
STUDIES_DIR = "book/studies"
NOTEBOOKS_DIR = "notebooks"


class ChapterError(RuntimeError):
    """A chapter could not be executed; the message carries the failing cell's error."""


def find_repo(start: Path | None = None) -> Path:
    """The project root: the nearest folder with _toc.yml and notebooks/ above `start`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / NOTEBOOKS_DIR).is_dir():
            return folder
    raise ChapterError(f"no project root (a folder with _toc.yml and {NOTEBOOKS_DIR}/) at or above {here}")


def downloads_dir(study: str, repo: Path | None = None) -> Path:
    """Where a chapter writes its CSV downloads: beside its executed notebook.

    An output, never a parameter: parameters that name paths are inputs and are hashed.
    """
    return (repo or find_repo()) / STUDIES_DIR / study


def writeup_file(chapter: str, folder) -> Path | None:
    """The write-up's published.yml for a folder of `chapter`: the folder's own if it has one,
    else the one of that chapter's data in this project (a user's folder rarely carries the
    write-up's numbers, but its comparability, and `benchbook new`'s roles, are judged
    against them); None outside a project."""
    own = Path(folder) / "published.yml"
    if own.is_file():
        return own
    try:
        repo = find_repo()
    except ChapterError:
        return None
    path = repo / "data" / chapter / "published.yml"
    return path if path.is_file() else None

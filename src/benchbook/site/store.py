"""Executed chapters kept by cache key, so a second copy of the project never runs them again.

A chapter's cache key hashes everything its page depends on (benchbook.site.runner), so two
copies of the project whose chapter has the same key would execute it to the same notebook and
the same downloads. With BENCHBOOK_STORE set to a folder, the runner saves each execution
there under its key and restores it instead of executing when the key is already there: the
test suite shares one execution of each chapter between its many book builds, and CI can keep
the folder between runs. Unset (the default), nothing is stored.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

ENV = "BENCHBOOK_STORE"
NOTEBOOK, DOWNLOADS, DONE = "notebook.ipynb", "downloads", "complete"


def root() -> Path | None:
    folder = os.environ.get(ENV)
    return Path(folder) if folder else None


def lookup(key: str) -> Path | None:
    """The stored execution of this key, or None (no store, or not stored yet)."""
    base = root()
    entry = base / key if base else None
    return entry if entry is not None and (entry / DONE).is_file() else None


@contextmanager
def claim(key: str):
    """Hold a key while executing it: a second process (a parallel test worker, a second
    build) that wants the same key waits, then finds it stored, instead of executing the same
    chapter beside it on the same cores. Without a store, nothing to hold."""
    base = root()
    if base is None:
        yield
        return
    from filelock import FileLock

    base.mkdir(parents=True, exist_ok=True)
    with FileLock(str(base / f".{key}.lock")):
        yield


def save(key: str, notebook: Path, downloads: Path) -> None:
    """Keep an execution: written beside its place, then moved in whole, so a reader never
    sees half of one (two processes saving one key: the first to finish wins)."""
    base = root()
    if base is None or lookup(key) is not None:
        return
    tmp = base / f".{key}.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(notebook, tmp / NOTEBOOK)
    if downloads.is_dir():
        shutil.copytree(downloads, tmp / DOWNLOADS)
    (tmp / DONE).touch()
    try:
        tmp.rename(base / key)
    except OSError:  # another process stored it first
        shutil.rmtree(tmp, ignore_errors=True)


def restore(entry: Path, notebook: Path, downloads: Path) -> None:
    """Put a stored execution in place of the chapter's notebook and downloads."""
    shutil.rmtree(downloads, ignore_errors=True)
    if (entry / DOWNLOADS).is_dir():
        shutil.copytree(entry / DOWNLOADS, downloads)
    tmp = notebook.with_name(f".{notebook.stem}.{os.getpid()}.restore.ipynb")
    shutil.copy2(entry / NOTEBOOK, tmp)
    os.replace(tmp, notebook)

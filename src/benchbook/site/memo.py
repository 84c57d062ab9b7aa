"""What each source file imports, and what a build needs of each notebook, remembered
between processes by the file's content.

Every build checks each chapter's cache key, which follows the imports of the library's
modules and reads each notebook's parameters; parsing them all took a third of a build that
changed nothing. A result is keyed by a hash of the source (and the module's name, or the
notebook's format), so it can never be stale. It is kept in the user's cache folder
(benchbook.cache); a folder that cannot be written is simply not used.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading

from ..cache import folder

FILE = "imports.json"
KEEP = 4000  # entries: every version of every module of a few checkouts
_LOCK = threading.Lock()
_memo: dict | None = None
_dirty = False


def key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _load() -> dict:
    global _memo
    if _memo is None:
        try:
            _memo = json.loads((folder() / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _memo = {}
    return _memo


def get(k: str):
    with _LOCK:
        return _load().get(k)


def put(k: str, value) -> None:
    global _dirty
    with _LOCK:
        memo = _load()
        memo[k] = value
        while len(memo) > KEEP:
            memo.pop(next(iter(memo)))
        _dirty = True


def save() -> None:
    """Write what was learnt (atomically; when two processes write, the last one wins)."""
    global _dirty
    with _LOCK:
        if not _dirty:
            return
        try:
            folder().mkdir(parents=True, exist_ok=True)
            tmp = folder() / f".{FILE}.{os.getpid()}"
            tmp.write_text(json.dumps(_load()), encoding="utf-8")
            os.replace(tmp, folder() / FILE)
        except OSError:  # a read-only home: the next process parses again
            pass
        _dirty = False

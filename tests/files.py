"""Small file helpers the tests share: write a fixture file, read a folder back as bytes."""

from __future__ import annotations

import gzip
from pathlib import Path


def write(tmp_path: Path, name: str, text: str, *, gz: bool = False) -> Path:
    """A UTF-8 text file (gzip-compressed when `gz`) named `name` under `tmp_path`."""
    path = tmp_path / name
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative path: equal dicts mean byte-identical folders."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

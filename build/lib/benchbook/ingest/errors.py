"""Errors that say which file, where in it, and what was expected."""

from __future__ import annotations

from pathlib import Path


class IngestError(ValueError):
    """Bad input: names the file, the line or key, and what was expected."""

    def __init__(self, path: str | Path, where: str | None, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        loc = f"{self.path}:{where}" if where else self.path
        super().__init__(f"{loc}: {problem}")

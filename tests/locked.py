"""The project's requirements.lock, read by the library's own reader (benchbook.study.provenance)."""

from __future__ import annotations

from pathlib import Path

from benchbook.study.provenance import LOCK as NAME
from benchbook.study.provenance import lock_drift, lock_entries

LOCK = Path(__file__).parents[1] / NAME


def entries():
    return lock_entries(LOCK)


def drift() -> list[str]:
    return lock_drift(LOCK)

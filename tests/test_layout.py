"""The test tree mirrors the source tree (tests/README.md): every module of src/benchbook has
a test module of its name or a line in the README saying where it is tested, and every test
module the README names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "benchbook"
README = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")


def mirror(module: Path) -> Path:
    """The test module named after a source module."""
    rel = module.relative_to(SRC)
    prefix = {"ingest": "test_ingest_", "chapters": "test_chapter_"}.get(rel.parent.as_posix(), "test_")
    return ROOT / "tests" / f"{prefix}{rel.stem}.py"


def listed() -> set[str]:
    """Modules named in the README's second table (first cell of each row)."""
    rows = re.findall(r"^\| (`[^|]+`) \|", README, flags=re.M)
    return {name for row in rows for name in re.findall(r"`([\w/]+\.py)`", row)}


def test_every_module_is_mirrored_or_mapped():
    modules = [p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent.name == "chapters"]
    assert len(modules) > 40
    missing = [p.relative_to(SRC).as_posix() for p in modules
               if not mirror(p).exists() and p.relative_to(SRC).as_posix() not in listed()]
    assert missing == [], "add a test module of this name, or a line to tests/README.md"


def test_every_test_module_the_map_names_exists():
    named = set(re.findall(r"`(test_[\w*]+\.py)`", README))
    assert named
    for name in named:
        assert list((ROOT / "tests").glob(name)), name


def test_a_mapped_module_that_gains_its_own_test_module_leaves_the_map():
    """One place per module: the map lists only modules without a test of their name."""
    both = [m for m in listed() if (SRC / m).exists() and mirror(SRC / m).exists()]
    assert both == []

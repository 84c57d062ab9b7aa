"""The test tree mirrors the source tree (tests/README.md): every module of src/benchbook has
a test module at its mirrored path or a line in the README saying where it is tested, and
every test module the README names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "benchbook"
TESTS = ROOT / "tests"
README = (TESTS / "README.md").read_text(encoding="utf-8")


def mirror(module: Path) -> Path:
    """The test module at a source module's mirrored path: benchbook/<package>/<module>.py ->
    tests/<package>/test_<module>.py; a chapter folder -> tests/chapters/test_<folder>.py;
    a top-level module -> tests/test_<module>.py."""
    parts = module.relative_to(SRC).with_suffix("").parts
    if parts[0] == "chapters" and len(parts) > 2:
        return TESTS / "chapters" / f"test_{parts[1]}.py"
    return TESTS.joinpath(*parts[:-1], f"test_{parts[-1]}.py")


def modules() -> list[Path]:
    """Source modules that do something: package __init__ files are docstrings, except the
    readers' registry (ingest) and the chapter folders' pages."""
    return [p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent.name == "ingest"
            or p.parent.parent.name == "chapters"]


def listed() -> set[str]:
    """Modules named in the README's second table (first cell of each row)."""
    rows = re.findall(r"^\| (`[^|]+`) \|", README, flags=re.M)
    return {name for row in rows for name in re.findall(r"`([\w/]+\.py)`", row)}


def test_the_mirror_rule():
    assert mirror(SRC / "ingest" / "vllm_log.py") == TESTS / "ingest" / "test_vllm_log.py"
    assert mirror(SRC / "chapters" / "gb10" / "analysis.py") == TESTS / "chapters" / "test_gb10.py"
    assert mirror(SRC / "cli.py") == TESTS / "test_cli.py"


def test_every_module_is_mirrored_or_mapped():
    found = modules()
    assert len(found) > 60
    missing = [p.relative_to(SRC).as_posix() for p in found
               if not mirror(p).exists() and p.relative_to(SRC).as_posix() not in listed()]
    assert missing == [], "add a test module at the mirrored path, or a line to tests/README.md"


def test_every_test_folder_is_a_source_package_or_says_what_it_holds():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    apart = {"e2e", "browser", "tools"}  # end-to-end builds, browser tests, the data generators
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and list(p.glob("test_*.py"))}
    assert folders <= packages | apart, folders - packages - apart


def test_every_test_module_the_map_names_exists():
    named = {n.removeprefix("tests/") for n in re.findall(r"`((?:[\w]+/)*test_[\w*]+\.py)`", README)}
    assert named
    for name in named:
        assert list(TESTS.glob(name)), name


def test_a_mapped_module_that_gains_its_own_test_module_leaves_the_map():
    """One place per module: the map lists only modules without a test at its mirrored path."""
    both = [m for m in listed() if (SRC / m).exists() and mirror(SRC / m).exists()]
    assert both == []

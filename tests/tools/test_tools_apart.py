"""The data generators (tools/reconstruct) are a development tool, kept apart from the library.

The library must run without them: no module of src/benchbook imports them, the wheel
does not ship them, and no chapter's cache key hashes them (editing a generator must not
re-execute a chapter; only the data it writes can).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import setuptools

from benchbook.site import runner

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def test_importing_every_library_module_imports_no_generator():
    """In a fresh interpreter that *could* import tools.reconstruct (the root is on its path)."""
    code = ("import importlib, pkgutil, sys, benchbook\n"
            "names = [m.name for m in pkgutil.walk_packages(benchbook.__path__, 'benchbook.')]\n"
            "for n in names: importlib.import_module(n)\n"
            "print(len(names))\n"
            "print(sorted(m for m in sys.modules if 'reconstruct' in m or m.split('.')[0] == 'tools'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert int(out[0]) > 50  # every module was imported, not an empty walk
    assert out[1] == "[]"


def test_no_library_file_names_the_tools_package():
    pattern = re.compile(r"\btools[./]reconstruct\b|\bfrom tools\b|\bimport tools\b|benchbook[./]reconstruct")
    # the library's own files (an editable install's *.egg-info lists whatever it once saw)
    files = [p for p in SRC.rglob("*") if p.is_file() and p.suffix != ".pyc"
             and not any(part.endswith(".egg-info") for part in p.parts)]
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if pattern.search(line)]
    assert hits == []
    assert not (SRC / "benchbook" / "reconstruct").exists()


def test_the_wheel_packages_only_benchbook():
    """The packages setuptools finds with pyproject's own settings: what the wheel ships."""
    find = (tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
            ["tool"]["setuptools"]["packages"]["find"])
    where = [ROOT / w for w in find["where"]]
    found = [p for w in where for p in setuptools.find_packages(str(w), include=find.get("include", ("*",)),
                                                                  exclude=find.get("exclude", ()))]
    assert "benchbook" in found and "benchbook.ingest" in found
    assert all(p == "benchbook" or p.startswith("benchbook.") for p in found), found
    assert not any("reconstruct" in p or p.startswith("tools") for p in found), found
    assert all(ROOT / "tools" not in [w, *w.parents] for w in where)


def test_no_cache_key_hashes_a_generator():
    files = runner._module_files()  # what code_digest can hash: the library's own modules
    lib = SRC / "benchbook"
    assert files and all(name.split(".")[0] == "benchbook" for name in files)
    assert all(lib in path.resolve().parents for path in files.values())
    assert not any("reconstruct" in name for name in files)


def test_one_command_per_study_runs_from_the_repository_root():
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "tools.reconstruct", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.startswith("usage: python -m tools.reconstruct")
    assert "{dense-sparse,gb10,h100,power-sweep,strix}" in done.stdout
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    for study in ("h100", "strix", "dense-sparse", "power-sweep", "gb10"):
        assert re.search(rf"^\t\$\(BIN\)/python -m tools\.reconstruct {study} data/\S+$", make, re.M), study


def test_no_document_names_the_old_library_path():
    """The generators left src/benchbook/reconstruct; commands and labels say tools.reconstruct."""
    docs = [ROOT / "README.md", ROOT / "Makefile", *(ROOT / "book").glob("*.md"), *(ROOT / "notebooks").glob("*.md"),
            *(ROOT / "data").glob("*/*.yml"), *(ROOT / "data").glob("*/*.md"), *(ROOT / "tools").rglob("*.py"),
            *(ROOT / "tools").rglob("*.j2")]
    stale = [str(p.relative_to(ROOT)) for p in docs
             if re.search(r"benchbook[./]reconstruct", p.read_text(encoding="utf-8"))]
    assert len(docs) > 40 and stale == []

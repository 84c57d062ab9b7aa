"""The environment: requirements.lock pins what pyproject.toml asks for, conda installs the same
lock, and the suite runs on it."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from locked import drift, entries

ROOT = Path(__file__).parents[1]


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _specs(items):
    return {_name(s): s.replace(" ", "") for s in items}


def test_the_lock_pins_every_dependency_of_pyproject_within_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(s) for s in project["dependencies"] + project["optional-dependencies"]["test"]]
    pins = {}
    for req, hashes in entries():
        assert hashes, f"requirements.lock: {req} has no hash"
        pins.setdefault(canonicalize_name(req.name), []).append(next(iter(req.specifier)).version)
    for want in wanted:
        got = pins.get(canonicalize_name(want.name))
        assert got, f"requirements.lock does not pin {want.name}; run make lock"
        assert all(want.specifier.contains(v) for v in got), f"{want}: locked {got}; run make lock"


def test_conda_installs_the_same_lock():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert {"pip": ["--require-hashes", "-r requirements.lock"]} in env["dependencies"]
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert SpecifierSet(requires).contains(python.split("=")[-1] + ".0"), (python, requires)
    assert [d for d in env["dependencies"] if isinstance(d, str) and d not in (python, "pip")] == []


def test_make_lock_writes_the_lock_as_it_is():
    """The lock's header is the command `make lock` runs, so regenerating it changes nothing
    but what pyproject.toml or an upgrade changed."""
    header = (ROOT / "requirements.lock").read_text().splitlines()[1].strip("# ").strip()
    make = (ROOT / "Makefile").read_text()
    assert header.startswith("uv pip compile pyproject.toml --extra test --universal")
    assert "uv pip compile pyproject.toml --extra test --universal --python-version 3.11 --generate-hashes" in make


def test_this_environment_is_the_locked_one():
    """The suite runs on what requirements.lock says (make test installs it); otherwise the
    reconstructed folders' bytes may differ, and this names the packages that moved."""
    assert drift() == []


def test_jupyter_book_is_pinned_to_the_1x_line():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "jupyter-book>=1.0.4.post1,<2" in project["dependencies"]


def test_book_links_to_top_level_config_and_toc():
    for name in ("_config.yml", "_toc.yml"):
        link = ROOT / "book" / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve()


def test_citation_file_names_the_book_and_this_version():
    import yaml

    import benchbook

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors", "repository-code"} <= set(cff)
    assert str(cff["version"]) == benchbook.__version__

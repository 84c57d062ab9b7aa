"""environment.yml (conda) and pyproject.toml (pip) must install the same things."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[1]


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _specs(items):
    return {_name(s): s.replace(" ", "") for s in items}


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = _specs(project["dependencies"] + project["optional-dependencies"]["test"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = _specs(d for d in env["dependencies"] if isinstance(d, str) and _name(d) not in ("python", "pip"))
    assert conda == pip
    assert {"pip": ["-e ."]} in env["dependencies"]


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

"""Where a chapter's numbers come from: data label and hash, code version, tool versions."""

from __future__ import annotations

import platform
import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .. import __version__
from ..ingest.textio import load_yaml
from . import untrusted
from .folder import content_hash

PACKAGES = ("benchbook", "pandas", "numpy", "matplotlib", "seaborn", "papermill",
            "jupytext", "myst-nb", "jupyter-book", "sphinx")


def code_version(repo: Path | None = None) -> str:
    """git describe of the checkout, or the package version outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"], cwd=repo or Path.cwd(),
            capture_output=True, text=True, timeout=10, check=True,
        )
        return f"{__version__} ({out.stdout.strip()})"
    except (OSError, subprocess.SubprocessError):
        return __version__


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


LOCK = "requirements.lock"  # every package at one version, with hashes (make lock)
FOOTER_PACKAGES = ("pandas", "numpy", "matplotlib")  # the versions a page's footer names (of PACKAGES)


def lock_entries(lock: Path) -> list[tuple[Requirement, list[str]]]:
    """Each pinned requirement of a lock file written by `uv pip compile`, with its hashes."""
    out = []
    for block in re.split(r"\n(?=[A-Za-z0-9])", Path(lock).read_text(encoding="utf-8")):
        if block.startswith("#") or "==" not in block:
            continue
        out.append((Requirement(block.split("\\", 1)[0].strip()),
                    re.findall(r"--hash=(sha256:[0-9a-f]{64})", block)))
    return out


def locked_versions(lock: Path) -> dict[str, str]:
    """Package -> the version the lock gives for this interpreter and platform."""
    return {canonicalize_name(r.name): next(iter(r.specifier)).version for r, _ in lock_entries(lock)
            if r.marker is None or r.marker.evaluate()}


def lock_drift(lock: Path) -> list[str]:
    """'pandas 3.2.0 (locked 3.1.1)' for each locked package installed at another version."""
    out = []
    for name, want in sorted(locked_versions(lock).items()):
        try:
            have = version(name)
        except PackageNotFoundError:
            have = "not installed"
        if have != want:
            out.append(f"{name} {have} (locked {want})")
    return out


def environment_words(repo: Path) -> str:
    """The footer's account of the environment: Python and the main packages, and whether
    they are the versions of the project's lock file."""
    have = package_versions()
    names = ", ".join(f"{n} {have[n]}" for n in ("python", *FOOTER_PACKAGES))
    lock = Path(repo) / LOCK
    if not lock.is_file():
        return f"{names} (no {LOCK})"
    moved = lock_drift(lock)
    if not moved:
        return f"{names} (the versions of {LOCK})"
    more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
    return f"{names} (not the locked versions: {'; '.join(moved[:3])}{more})"


def data_record(study) -> dict:
    """Label, kind and content hash of one study's data folder."""
    return dict(
        study=study.id,
        label=study.label,
        status="reconstructed" if study.reconstructed else "measured",
        data_hash=content_hash(study.root)[:16],
        folder=_shown_folder(study.root),
        files=len(study.files),
    )


def _shown_folder(root: Path) -> str:
    """The data folder as a reader may see it: relative to the project, never a home path."""
    root = Path(root).resolve()
    try:
        return root.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return f"{root.name} (outside the project)"


def provenance_table(studies, repo: Path | None = None) -> pd.DataFrame:
    rows = [data_record(s) for s in studies]
    return pd.DataFrame(rows)


def repository(repo: Path) -> tuple[str, str] | None:
    """(web address, branch) of the project's repository, from _config.yml's `repository`
    (a fork sets its own); None when it names none or not an http(s) address."""
    import yaml

    try:
        config = load_yaml((Path(repo) / "_config.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    repo_cfg = config.get("repository") or {}
    url = untrusted.url(str(repo_cfg.get("url") or "").rstrip("/"))
    return (url, str(repo_cfg.get("branch") or "main")) if url else None


def folder_links(repo: Path, folder: str) -> dict[str, str]:
    """Links to a data folder of the project and its PROVENANCE.md in the repository (none
    for a folder outside the project: it is not in the repository)."""
    where = repository(repo)
    path = Path(repo) / folder
    if where is None or "outside the project" in folder or not path.is_dir():
        return {}
    url, branch = where
    links = {"folder": f"{url}/tree/{branch}/{folder}"}
    if (path / "PROVENANCE.md").is_file():
        links["PROVENANCE.md"] = f"{url}/blob/{branch}/{folder}/PROVENANCE.md"
    return links

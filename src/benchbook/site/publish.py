"""Publish the book into a versioned GitHub Pages tree, one folder per version.

The tree (``site/`` by default; on GitHub it is the ``gh-pages`` branch)::

    .nojekyll       serve _static/, _downloads/ and _images/ as they are
    index.html      redirects to latest/ (to dev/ before the first release)
    switcher.json   the theme's version list, read by every page of every version
    <V>/            one complete build per published version
    latest/         a real copy of the newest release
    dev/            the main branch

``latest/`` is a copy, not a symlink or a redirect: GitHub Pages artifacts are tar files
and the gh-pages branch may be served by other hosts, where symlinks are not reliable,
and a copy keeps every page (and the theme's "same page in another version" links) working
under ``/latest/...``. Each folder is written beside the tree first and then moved into
place, so a failed publish leaves the published versions as they were; publishing a
version again replaces only that folder (and ``latest/`` when it is the newest release).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from ..book.paths import find_repo
from . import changes
from .runner import Chapter, toc_studies
from .sphinx_meta import VERSION_ENV, redirect_page
from .sphinx_meta import stamped_version as built_version

DEV, LATEST = "dev", "latest"
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class PublishError(RuntimeError):
    """The tree was not changed; the message says why."""


# ---------------------------------------------------------------- versions

def parse(name: str) -> Version | None:
    """The version a folder name stands for; None for dev. Raises on anything else."""
    if name == DEV:
        return None
    if not _SAFE.match(name) or name == LATEST:
        raise PublishError(f"version {name!r}: expected 'dev' or a version such as v1.2.0 or 1.3.0rc1")
    try:
        return Version(name[1:] if name[:1] in "vV" else name)
    except InvalidVersion:
        raise PublishError(f"version {name!r}: not a version (expected 'dev' or e.g. v1.2.0, 1.3.0rc1)") from None


def is_release(name: str) -> bool:
    """A final release: not dev, not a pre-release (rc, beta, .dev); these go to latest/."""
    v = parse(name)
    return v is not None and not v.is_prerelease


def published_versions(site: Path) -> list[str]:
    """Version folders of the tree (folders with an index.html), newest first, dev first."""
    names = []
    if site.is_dir():
        for p in site.iterdir():
            if p.is_dir() and p.name != LATEST and not p.name.startswith(".") and (p / "index.html").is_file():
                try:
                    parse(p.name)
                except PublishError:
                    continue  # not ours (e.g. a folder someone added by hand)
                names.append(p.name)
    return ordered(names)


def newest_release(names) -> str | None:
    releases = [n for n in names if is_release(n)]
    return max(releases, key=parse) if releases else None


def previous_version(names, version: str) -> str | None:
    """What `version`'s "changes since" compares with: the newest release before it (for dev:
    the newest release)."""
    this = parse(version)
    older = [n for n in names if n != version and is_release(n) and (this is None or parse(n) < this)]
    return max(older, key=parse) if older else None


def switcher_entries(names, base_url: str = "/") -> list[dict]:
    """pydata-sphinx-theme's switcher.json: name, version, url, preferred."""
    base = normalise_base_url(base_url)
    latest = newest_release(names)
    out = []
    for n in ordered(names):
        label = n + (" (latest)" if n == latest else " (main)" if n == DEV else "")
        out.append(dict(name=label, version=n, url=f"{base}{n}/", preferred=n == latest))
    return out


def normalise_base_url(base_url: str) -> str:
    """Where the tree is served: "/" locally, "/<repo>/" for a GitHub project site."""
    base = (base_url or "/").strip()
    if not (base.startswith("/") or re.match(r"^https?://", base)):
        raise PublishError(f"--base-url {base_url!r}: expected a path such as /benchbook/ or a full https:// URL")
    return base if base.endswith("/") else base + "/"


def ordered(names) -> list[str]:
    """dev first, then versions newest first (the switcher's order)."""
    names = list(names)
    return [n for n in names if n == DEV] + sorted((n for n in names if n != DEV), key=parse, reverse=True)


# ---------------------------------------------------------------- the tree

def install(html_dir: Path, site: Path, version: str, base_url: str = "/", log=print) -> Path:
    """Put a built book at site/<version>/ and bring latest/, switcher.json, index.html up to date."""
    parse(version)
    html_dir, site = Path(html_dir), Path(site)
    made_for = built_version(html_dir)
    if not (html_dir / "index.html").is_file():
        raise PublishError(f"{html_dir}: no index.html; expected a built book (book/_build/html)")
    if made_for != version:
        how = f"was built for {made_for!r}" if made_for else "was not built for publishing (no version stamp)"
        raise PublishError(
            f"{html_dir} {how}, not {version!r}; build it with {VERSION_ENV}={version} "
            f"jupyter-book build book, or run benchbook publish without --html")
    base = normalise_base_url(base_url)
    site.mkdir(parents=True, exist_ok=True)
    dest = site / version
    prev = previous_version(published_versions(site), version)

    def fill(tmp: Path) -> None:
        shutil.copytree(html_dir, tmp)
        changes.fill(tmp, (site / prev).resolve() if prev else None, log=log)  # the copy, not the build

    _replace_dir(site, version, fill)
    log(f"published {version} -> {dest}")

    names = published_versions(site)
    latest = newest_release(names)
    if latest and (latest == version or built_version(site / LATEST) != latest):
        _replace_dir(site, LATEST, lambda tmp: shutil.copytree(site / latest, tmp))
        log(f"latest/ is now a copy of {latest}")
    _write(site / "switcher.json", json.dumps(switcher_entries(names, base), indent=2) + "\n")
    _write(site / ".nojekyll", "")
    target = f"{LATEST}/" if latest else f"{DEV}/" if DEV in names else f"{names[0]}/"
    _write(site / "index.html", redirect_page(target))
    log(f"switcher.json lists {', '.join(names)}; / redirects to {target}")
    return dest


def _replace_dir(site: Path, name: str, fill) -> None:
    """Fill a temporary folder beside the target, then swap it in."""
    tmp = site / f".{name}.new-{os.getpid()}"
    old = site / f".{name}.old-{os.getpid()}"
    for leftover in (tmp, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    try:
        fill(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    dest = site / name
    if dest.exists():
        os.rename(dest, old)
    os.rename(tmp, dest)
    shutil.rmtree(old, ignore_errors=True)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------- building

def build(repo: Path, version: str, out: Path, strict: bool = True, log=print) -> Path:
    """`jupyter-book build book` into `out`, stamped with `version`. Chapters run with the
    parameters `benchbook run` remembered, as in any build; the comparison with the previous
    version is added when the build is installed (`install`), so nothing runs again for it."""
    exe = Path(sys.executable).parent / "jupyter-book"
    exe = str(exe) if exe.exists() else shutil.which("jupyter-book")
    if not exe:
        raise PublishError("jupyter-book is not installed in this environment; run `make book` once")
    for study in toc_studies(repo):
        overrides = Chapter(repo, study).overrides()
        if overrides:
            log(f"{study}: publishing with the parameters remembered from `benchbook run`: {overrides}")
    cmd = [exe, "build", str(repo / "book"), "--path-output", str(out), "--all"]
    if strict:
        cmd += ["-W", "-n", "--keep-going"]
    env = {**os.environ, VERSION_ENV: version}
    log(f"building {version}: " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise PublishError(f"the book build for {version} failed (exit {proc.returncode}); "
                           f"nothing was published. Its last output:\n{(proc.stdout + proc.stderr)[-4000:]}")
    return Path(out) / "_build" / "html"


def head_tags(repo: Path) -> list[str] | None:
    """The git tags on the checked-out commit; None when `repo` is not a git checkout."""
    try:
        out = subprocess.run(["git", "tag", "--points-at", "HEAD"], cwd=repo, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.split() if out.returncode == 0 else None


def check_tag(repo: Path, version: str, allow_untagged: bool = False, log=print) -> None:
    """A release or pre-release is published from the commit tagged with its name, so the
    version a page names is the code that made it; `dev` is whatever main is."""
    if version == DEV:
        return
    tags = head_tags(repo)
    if tags is not None and version in tags:
        return
    where = ("the project is not a git checkout" if tags is None else
             f"the checked-out commit is tagged {', '.join(tags)}" if tags else "the checked-out commit has no tag")
    if allow_untagged:
        log(f"warning: publishing {version} although {where} (--allow-untagged); "
            "the page stamps name the version and the code it was built from")
        return
    raise PublishError(f"version {version} is not the checked-out git tag: {where}. Tag the commit "
                       f"(git tag {version}) and publish again, or pass --allow-untagged to publish it anyway.")


def publish(version: str, site: Path | None = None, html_dir: Path | None = None,
            base_url: str = "/", strict: bool = True, repo: Path | None = None, log=print,
            allow_untagged: bool = False) -> Path:
    """`benchbook publish`: build (or take `html_dir`) and install it as site/<version>/."""
    parse(version)
    check_tag(repo or find_repo(), version, allow_untagged, log)
    if html_dir is not None:
        if site is None:
            site = find_repo() / "site"
        return install(html_dir, site, version, base_url, log=log)
    repo = repo or find_repo()
    site = Path(site) if site is not None else repo / "site"
    with tempfile.TemporaryDirectory(prefix="benchbook-publish-") as tmp:
        built = build(repo, version, Path(tmp), strict, log)
        return install(built, site, version, base_url, log=log)

"""Sphinx extension: stamp every page with its version, build date, code version and data hash.

A reader who saved a page, or landed on an old version, can tell what produced it. The
stamp goes into the theme's footer (sphinx-book-theme's ``extra_footer`` slot, appended
to any text configured there) and into a ``<meta name="benchbook-version">`` tag that
``benchbook publish --html`` checks. Chapter pages list the content hash of each data
folder their notebook read; other pages list those of every chapter.

The version comes from ``BENCHBOOK_VERSION``, which ``benchbook publish`` sets. It also
selects the entry of the theme's version switcher (``html_theme_options.switcher`` in
_config.yml). A build without it (``make book``) is an unpublished build: it has no
``switcher.json`` beside it, so the switcher is left off its pages.

Two fixes keep the browser console clean (tests/test_site_browser.py checks it): inline
scripts that Sphinx 7.4 emits twice are dropped, and the front page redirect gets an icon.
"""

from __future__ import annotations

import html
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__
from ..book.paths import ChapterError, find_repo
from ..study.folder import content_hash
from ..study.provenance import code_version, environment_words
from .runner import Chapter, toc_studies

VERSION_ENV = "BENCHBOOK_VERSION"
SWITCHER = "version-switcher"
HASH_CHARS = 16  # as in the chapters' provenance tables
UNPUBLISHED = "unpublished build"
_META = re.compile(r'<meta\s+name="benchbook-version"\s+content="([^"]*)"')
_REFRESH = re.compile(r'http-equiv="refresh"\s+content="0;\s*url=([^"/]+\.html)"', re.IGNORECASE)


def page_version() -> str | None:
    return os.environ.get(VERSION_ENV) or None


def stamped_version(html_dir: Path) -> str | None:
    """The version a built book was stamped with, from its front page (or the page
    index.html redirects to); None for an unpublished build or no build."""
    page = Path(html_dir) / "index.html"
    for _ in range(2):
        if not page.is_file():
            return None
        text = page.read_text(encoding="utf-8", errors="replace")
        m = _META.search(text)
        if m:
            version = html.unescape(m.group(1))
            return None if version == UNPUBLISHED else version
        redirect = _REFRESH.search(text)
        if not redirect:
            return None
        page = page.parent / redirect.group(1)
    return None


def data_folders(repo: Path, study: str) -> list[Path]:
    """Data folders the page's numbers come from: those its parameters name (study folders
    and the facts registry), and those of the chapters whose outputs it reads.

    These are the parameters it was executed with: the build's refresh (benchbook.site.sphinx_ext,
    at config-inited) has run every chapter whose remembered parameters changed.
    """
    chapter = Chapter(repo, study)
    try:
        params = chapter.effective_parameters(chapter.overrides())
    except ChapterError:
        return []
    folders = []
    for value in params.values():
        if isinstance(value, str) and value:
            path = Path(value) if Path(value).is_absolute() else repo / value
            is_data = (path / "study.yml").is_file() or (path.is_dir() and any(path.glob("*.yml"))
                                                          and path.name == "facts")
            if is_data and path not in folders:
                folders.append(path)
    for used in chapter.spec.uses:
        folders += [f for f in data_folders(repo, used) if f not in folders]
    return folders


def build_stamp(repo: Path) -> dict:
    """What every page of this build shares."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds set it
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    hashes, by_study = {}, {}
    for study in toc_studies(repo):  # the chapters this build renders
        by_study[study] = []
        for folder in data_folders(repo, study):
            hashes.setdefault(folder, content_hash(folder)[:HASH_CHARS])
            by_study[study].append(folder)
    return dict(version=page_version(), date=when.strftime("%Y-%m-%d %H:%M UTC"),
                code=code_version(repo), hashes=hashes, by_study=by_study, env=environment_words(repo))


def footer_html(stamp: dict, folders: list[Path]) -> str:
    version = stamp["version"]
    label = (f'Version <span class="benchbook-version">{html.escape(version)}</span>' if version
             else f'<span class="benchbook-version">{UNPUBLISHED.capitalize()}</span>')
    data = ", ".join(
        f'{html.escape(f.name)} <code title="content hash of {html.escape(f.name)}">{stamp["hashes"][f]}</code>'
        for f in folders
    ) or "none"
    return (
        f'<p class="benchbook-stamp">{label} · '
        f'built <span class="benchbook-built">{html.escape(stamp["date"])}</span> · '
        f'code <span class="benchbook-code">{html.escape(stamp["code"])}</span> · '
        f'data <span class="benchbook-data">{data}</span> · '
        f'<span class="benchbook-env">{html.escape(stamp["env"])}</span></p>'
    )


def _configure(app, config) -> None:
    """Point the switcher at this version, or take it off an unpublished build's pages.

    A published version also gets the theme's version warning banner: on any version that
    switcher.json does not mark preferred, it links to the same page in the newest one
    (the theme compares the page's `release` with the preferred entry's version)."""
    opts = config.html_theme_options
    version = page_version()
    if version:
        if isinstance(opts.get("switcher"), dict):
            opts["switcher"] = {**opts["switcher"], "version_match": version}
            opts["show_version_warning_banner"] = True
            config.release = config.version = version
        return
    opts.pop("switcher", None)
    for where in (opts, getattr(config, "html_sidebars", None) or {}):
        for key, value in list(where.items()):
            items = value.split(",") if isinstance(value, str) else value
            if isinstance(items, list) and any(str(i).strip().removesuffix(".html") == SWITCHER for i in items):
                where[key] = [i for i in items if str(i).strip().removesuffix(".html") != SWITCHER]


def _stamp(app, builder=None) -> None:
    app.benchbook_stamp = build_stamp(find_repo(Path(app.srcdir)))


def _page(app, pagename, templatename, context, doctree) -> None:
    stamp = getattr(app, "benchbook_stamp", None)
    if stamp is None:
        return
    study = pagename.rsplit("/", 1)[-1]
    if study in stamp["by_study"]:
        folders = stamp["by_study"][study]
    else:
        folders = [f for fs in stamp["by_study"].values() for f in fs]
        folders = list(dict.fromkeys(folders))
    extra = context.get("theme_extra_footer") or ""
    context["theme_extra_footer"] = extra + footer_html(stamp, folders)
    version = html.escape(stamp["version"] or UNPUBLISHED, quote=True)
    context["metatags"] = context.get("metatags", "") + f'\n<meta name="benchbook-version" content="{version}" />'


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop inline scripts that appear twice on a page.

    Sphinx 7.4 adds an inline script registered by an extension after the builder started
    (sphinx-thebe's and sphinx-togglebutton's) once as filename None and once as "", so
    both copies reach the page and the second `const THEBE_JS_URL` is a JavaScript error.
    """
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, kept = set(), []
    for js in scripts:
        key = (getattr(js, "filename", js) or "", getattr(js, "priority", None),
               tuple(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


def _front_page(app, exc) -> None:
    """Give the front page sphinx-external-toc writes (a bare meta refresh to the root
    document) a title, a link and the book's icon; without an icon, the browser asks for
    /favicon.ico and logs a 404 before following the redirect."""
    index = Path(app.outdir) / "index.html"
    if exc is not None or app.builder.format != "html" or not index.is_file():
        return
    m = re.fullmatch(r'\s*<meta http-equiv="Refresh" content="0; url=([^"]+)" />\s*', index.read_text())
    if m:
        favicon = app.config.html_favicon
        icon = f"_static/{Path(favicon).name}" if favicon and "://" not in favicon else "data:,"
        index.write_text(redirect_page(html.unescape(m.group(1)), icon), encoding="utf-8")


def redirect_page(target: str, icon: str = "data:,") -> str:
    """A page that sends the browser to `target` (relative URL)."""
    t, i = html.escape(target, quote=True), html.escape(icon, quote=True)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>Redirecting to {t}</title>\n<link rel=\"icon\" href=\"{i}\">\n"
        f"<meta http-equiv=\"refresh\" content=\"0; url={t}\">\n"
        f"<link rel=\"canonical\" href=\"{t}\">\n</head>\n"
        f"<body><p>Redirecting to <a href=\"{t}\">{t}</a>.</p></body>\n</html>\n"
    )


def setup(app):
    app.connect("config-inited", _configure)
    app.connect("write-started", _stamp)  # not on a build that writes nothing
    app.connect("html-page-context", _page)
    app.connect("html-page-context", _dedupe_scripts, priority=900)  # after the themes add theirs
    app.connect("build-finished", _front_page, priority=900)  # after sphinx-external-toc's
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

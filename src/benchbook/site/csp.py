"""Sphinx extension: a Content-Security-Policy on every built page.

Text from data folders is escaped before it reaches a page (benchbook.study.untrusted); this is
the second wall. Each page gets a `<meta http-equiv="Content-Security-Policy">` that lets
scripts run only from the site itself, from the external addresses the page's template
names, or inline when the template wrote them: the theme's inline scripts and its two
`onclick` handlers are allowed by their SHA-256 hashes. A script or handler inside the
page's content (the article, where notebook outputs land) is never hashed, so one that
slipped through any escaping does not run. Styles stay open (the theme and pandas tables
use inline styles; a style cannot run code).
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from .. import __version__

_HEAD = re.compile(r"<head(\s[^>]*)?>", re.I)
_OURS = re.compile(r'\s*<meta http-equiv="Content-Security-Policy"[^>]*>', re.I)


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


# Inline scripts the build tools themselves put inside the content, in full: the kernel name
# myst-nb writes for thebe (from the notebook's metadata, which benchbook sets).
TOOL_SCRIPTS = (re.compile(r"\s*kernelName = '[A-Za-z0-9_.-]+'\s*"),)


def _in_content(el) -> bool:
    return any(parent.tag == "article" for parent in el.iterancestors())


class Template(NamedTuple):
    """What a page's template (not its content) runs: SHA-256 sources of inline scripts and
    event handlers, and the origins of external scripts."""
    inline: frozenset
    handlers: frozenset
    origins: frozenset


def template(page: str) -> Template:
    import lxml.html

    doc = lxml.html.document_fromstring(page)
    inline, handlers, origins = set(), set(), set()
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        if _in_content(el):
            if el.tag == "script" and not el.get("src") and any(p.fullmatch(el.text or "") for p in TOOL_SCRIPTS):
                inline.add(_sha(el.text or ""))
            continue
        if el.tag == "script":
            src = el.get("src")
            if src:
                parts = urlsplit(src)
                if parts.scheme in ("http", "https") and parts.netloc:
                    origins.add(f"{parts.scheme}://{parts.netloc}")
            elif (el.get("type") or "text/javascript").lower() in (
                    "text/javascript", "module", "application/javascript"):
                inline.add(_sha(el.text or ""))
        for name, value in el.attrib.items():
            if name.lower().startswith("on"):
                handlers.add(_sha(value))
    return Template(frozenset(inline), frozenset(handlers), frozenset(origins))


def policy(page: str, handlers: set[str] = frozenset(), scanned: Template | None = None) -> str:
    """The policy for one page's HTML: what its template runs, and the `handlers` (hashes)
    of the whole site: the search page parses other pages to show their summaries, and the
    browser checks their handlers against its own policy."""
    t = scanned or template(page)
    handlers = t.handlers | set(handlers)
    scripts = ["'self'", *sorted(t.origins), *sorted(t.inline)]
    if handlers:
        scripts += ["'unsafe-hashes'", *sorted(handlers)]
    return "; ".join([
        "default-src 'self'",
        "script-src " + " ".join(scripts),
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
    ])


def protect(page: str, handlers: set[str] = frozenset(), scanned: Template | None = None) -> str:
    """The page with its policy as the first element of <head> (replacing an earlier one)."""
    page = _OURS.sub("", page)
    m = _HEAD.search(page)
    if m is None:
        return page
    meta = f'\n    <meta http-equiv="Content-Security-Policy" content="{policy(page, handlers, scanned)}">'
    return page[:m.end()] + meta + page[m.end():]


def protect_site(outdir: Path) -> int:
    """Every HTML page under a built site, each parsed once; returns how many were written."""
    pages = {path: path.read_text(encoding="utf-8") for path in Path(outdir).rglob("*.html")}
    scanned = {path: template(_OURS.sub("", text)) for path, text in pages.items()}
    handlers = set().union(*(t.handlers for t in scanned.values()))
    n = 0
    for path, text in pages.items():
        new = protect(text, handlers, scanned[path])
        if new != text:
            path.write_text(new, encoding="utf-8")
            n += 1
    return n


STAMP = ".benchbook-csp"  # in the output folder: the policy code that protected its pages


def _code() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _unchanged(outdir: Path, since: float) -> bool:
    """No page was written since `since` and the pages were protected by this very code: a
    build that changed nothing (Sphinx wrote no page) need not read every page again."""
    stamp = outdir / STAMP
    if not stamp.is_file() or stamp.read_text(encoding="utf-8") != _code():
        return False
    return not any(p.stat().st_mtime >= since for p in outdir.rglob("*.html"))


def _builder_inited(app) -> None:
    app.benchbook_csp_start = time.time()


def _build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        outdir = Path(app.outdir)
        if _unchanged(outdir, getattr(app, "benchbook_csp_start", 0.0)):
            return
        protect_site(outdir)
        (outdir / STAMP).write_text(_code(), encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

"""The page policy: which scripts a built page may run (the browser side is in test_hostile_site)."""

from benchbook.site.csp import _sha, policy, protect, protect_site

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<script>document.documentElement.dataset.mode = "auto";</script>
<script src="_static/theme.js"></script><script src="https://cdn.example.org/m.js"></script>
<script type="text/x-thebe-config">{ requestKernel: true }</script>
</head><body><button onclick="window.print()">p</button>
<article class="bd-article"><script>alert(1)</script><img src=x onerror="alert(2)">
<script>kernelName = 'benchbook-python3'</script><p>text</p></article></body></html>"""


def test_the_template_s_scripts_are_allowed_by_hash_and_the_content_s_are_not():
    p = policy(PAGE)
    assert _sha('document.documentElement.dataset.mode = "auto";') in p
    assert _sha("window.print()") in p and "'unsafe-hashes'" in p
    assert "https://cdn.example.org" in p and "'self'" in p
    assert _sha("alert(1)") not in p and _sha("alert(2)") not in p
    assert _sha("kernelName = 'benchbook-python3'") in p  # the one tool script allowed in content
    assert _sha("{ requestKernel: true }") not in p  # data, not a script
    assert "'unsafe-inline'" not in p.split("script-src")[1].split(";")[0]
    assert "object-src 'none'" in p and "base-uri 'self'" in p


def test_protect_puts_one_policy_first_in_head_and_is_idempotent():
    once = protect(PAGE)
    assert once.index("Content-Security-Policy") < once.index("<script")
    assert protect(once) == once and once.count("Content-Security-Policy") == 1


def test_a_site_shares_its_template_handlers(tmp_path):
    (tmp_path / "a.html").write_text(PAGE)
    (tmp_path / "b.html").write_text(PAGE.replace('<button onclick="window.print()">p</button>', ""))
    assert protect_site(tmp_path) == 2
    assert _sha("window.print()") in (tmp_path / "b.html").read_text()  # b parses a's summary in search
    assert protect_site(tmp_path) == 0


def test_a_build_that_wrote_no_page_leaves_the_protected_pages_alone(tmp_path):
    """The policy is the site's (every page's handlers), so any written page re-protects them
    all; a no-op build (no page newer than its start, same policy code) reads none."""
    import os
    import time
    from types import SimpleNamespace

    from benchbook.site import csp

    page = "<html><head><title>t</title></head><body><p>x</p></body></html>"
    for name in ("a.html", "b.html"):
        (tmp_path / name).write_text(page, encoding="utf-8")
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"))
    csp._builder_inited(app)
    csp._build_finished(app, None)
    assert all("Content-Security-Policy" in p.read_text() for p in tmp_path.glob("*.html"))
    old = time.time() - 100
    for p in tmp_path.glob("*.html"):
        os.utime(p, (old, old))
        p.write_text(p.read_text().replace("<p>x</p>", "<p>kept</p>"))  # a change only a re-run would undo
        os.utime(p, (old, old))
    csp._builder_inited(app)
    csp._build_finished(app, None)
    assert all(os.stat(p).st_mtime == old for p in tmp_path.glob("*.html"))  # not read, not written
    (tmp_path / "a.html").write_text(page, encoding="utf-8")  # this build wrote a page
    csp._build_finished(app, None)
    assert "Content-Security-Policy" in (tmp_path / "a.html").read_text()
    (tmp_path / csp.STAMP).write_text("older policy code")
    b = tmp_path / "b.html"
    b.write_text(csp._OURS.sub("", b.read_text()))
    os.utime(b, (old, old))
    os.utime(tmp_path / "a.html", (old, old))
    csp._builder_inited(app)
    csp._build_finished(app, None)
    assert "Content-Security-Policy" in b.read_text()  # other policy code: every page again

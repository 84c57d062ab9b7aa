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

"""The versioned Pages tree, the version stamp and "changes since" on small real folders.

No book build here (tests/test_site_browser.py publishes real builds): the html folders
are a few hand-written pages laid out like a Sphinx build, which is all `install`,
`stamped_version` and the changes reader look at.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from benchbook.cli import main
from benchbook.site import changes, publish, sphinx_meta
from benchbook.site.publish import PublishError

STUDY = "h100-dense-vs-moe-mtp"


def fake_build(root: Path, version: str | None, runs: pd.DataFrame | None = None,
               claims: pd.DataFrame | None = None) -> Path:
    """A build's shape: a front-page redirect, pages with the version meta tag, downloads."""
    html = root / f"build-{version}"
    (html / "studies").mkdir(parents=True)
    meta = f'<meta name="benchbook-version" content="{version}" />' if version else ""
    (html / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=intro.html" />')
    (html / "intro.html").write_text(f"<html><head>{meta}</head><body>intro {version}</body></html>")
    links = []
    for name, df in (("runs", runs), ("claims", claims)):
        if df is not None:
            folder = html / "_downloads" / f"{abs(hash((version, name))):x}"
            folder.mkdir(parents=True)
            df.to_csv(folder / f"{name}.csv", index=False)
            links.append(f'<a class="reference download internal" download="" '
                         f'href="../_downloads/{folder.name}/{name}.csv">{name}</a>')
    (html / "studies" / f"{STUDY}.html").write_text(f"<html><head>{meta}</head><body>{''.join(links)}</body></html>")
    return html


def quiet(*_):
    pass


def test_version_names_and_order():
    assert publish.ordered(["v0.1.0", "dev", "v0.10.0", "v0.2.0", "v0.3.0rc1"]) == \
        ["dev", "v0.10.0", "v0.3.0rc1", "v0.2.0", "v0.1.0"]
    assert publish.newest_release(["v0.1.0", "v0.3.0rc1", "v0.2.0", "dev"]) == "v0.2.0"
    assert publish.newest_release(["dev", "v1.0.0b1"]) is None
    names = ["dev", "v0.1.0", "v0.2.0", "v0.3.0rc1"]
    assert publish.previous_version(names, "v0.3.0") == "v0.2.0"
    assert publish.previous_version(names, "v0.2.0") == "v0.1.0"
    assert publish.previous_version(names, "v0.1.0") is None
    assert publish.previous_version(names, "dev") == "v0.2.0"
    for bad in ("latest", "../x", "v1/2", "banana", ""):
        with pytest.raises(PublishError, match="expected 'dev' or"):
            publish.parse(bad)


def test_switcher_entries_follow_the_theme_format():
    entries = publish.switcher_entries(["v0.1.0", "dev", "v0.2.0"], "/benchbook")
    assert [e["version"] for e in entries] == ["dev", "v0.2.0", "v0.1.0"]
    assert entries[1] == {"name": "v0.2.0 (latest)", "version": "v0.2.0", "url": "/benchbook/v0.2.0/",
                          "preferred": True}
    assert [e["preferred"] for e in entries] == [False, True, False]
    assert entries[0]["name"] == "dev (main)"
    with pytest.raises(PublishError, match="--base-url"):
        publish.switcher_entries(["dev"], "benchbook/")


def test_install_builds_the_tree_and_latest_follows_the_newest_release(tmp_path):
    site = tmp_path / "site"
    publish.install(fake_build(tmp_path, "v0.1.0"), site, "v0.1.0", log=quiet)
    assert (site / ".nojekyll").is_file()
    assert sphinx_meta.stamped_version(site / "latest") == "v0.1.0"
    assert 'url=latest/' in (site / "index.html").read_text()

    publish.install(fake_build(tmp_path, "v0.2.0"), site, "v0.2.0", log=quiet)
    publish.install(fake_build(tmp_path, "v0.3.0rc1"), site, "v0.3.0rc1", log=quiet)
    publish.install(fake_build(tmp_path, "dev"), site, "dev", log=quiet)
    assert sorted(p.name for p in site.iterdir()) == [
        ".nojekyll", "dev", "index.html", "latest", "switcher.json", "v0.1.0", "v0.2.0", "v0.3.0rc1"]
    assert sphinx_meta.stamped_version(site / "latest") == "v0.2.0"  # the rc does not count
    assert "intro v0.2.0" in (site / "latest/intro.html").read_text()
    listed = json.loads((site / "switcher.json").read_text())
    assert [e["version"] for e in listed] == ["dev", "v0.3.0rc1", "v0.2.0", "v0.1.0"]
    assert not [p for p in site.iterdir() if p.name.startswith(".") and p.name != ".nojekyll"]  # no temp left


def test_republishing_replaces_only_that_folder(tmp_path):
    site = tmp_path / "site"
    for v in ("v0.1.0", "v0.2.0"):
        publish.install(fake_build(tmp_path / "a", v), site, v, log=quiet)
    (site / "v0.1.0" / "kept.txt").write_text("an earlier version is never touched")
    (site / "latest" / "mark.txt").write_text("x")
    (site / "v0.2.0" / "old-page.html").write_text("from the first publication of v0.2.0")

    rebuilt = fake_build(tmp_path / "b", "v0.1.0")
    (rebuilt / "intro.html").write_text('<meta name="benchbook-version" content="v0.1.0" />rebuilt')
    publish.install(rebuilt, site, "v0.1.0", log=quiet)
    assert (site / "v0.1.0/intro.html").read_text().endswith("rebuilt")
    assert not (site / "v0.1.0/kept.txt").exists()  # the folder was replaced as a whole
    assert (site / "v0.2.0/old-page.html").is_file()  # other versions untouched
    assert (site / "latest/mark.txt").is_file()  # v0.1.0 is not the newest: latest/ untouched

    publish.install(fake_build(tmp_path / "c", "v0.2.0"), site, "v0.2.0", log=quiet)
    assert not (site / "v0.2.0/old-page.html").exists()
    assert not (site / "latest/mark.txt").exists()  # the newest release was republished


def test_install_refuses_a_build_made_for_another_version(tmp_path):
    site = tmp_path / "site"
    with pytest.raises(PublishError, match="was built for 'v0.1.0', not 'v0.2.0'"):
        publish.install(fake_build(tmp_path, "v0.1.0"), site, "v0.2.0", log=quiet)
    unpublished = fake_build(tmp_path, None)
    with pytest.raises(PublishError, match="not built for publishing .*BENCHBOOK_VERSION=dev"):
        publish.install(unpublished, site, "dev", log=quiet)
    with pytest.raises(PublishError, match="no index.html"):
        publish.install(tmp_path / "nothing", site, "dev", log=quiet)
    assert not site.exists() or not any(site.iterdir())


def test_failed_copy_leaves_the_published_version_in_place(tmp_path, monkeypatch):
    site = tmp_path / "site"
    publish.install(fake_build(tmp_path / "a", "v0.1.0"), site, "v0.1.0", log=quiet)
    before = (site / "v0.1.0/intro.html").read_text()

    def broken_copy(src, dst, *a, **k):
        Path(dst).mkdir()
        (Path(dst) / "half.html").write_text("")
        raise OSError("disk full")

    monkeypatch.setattr(publish.shutil, "copytree", broken_copy)
    with pytest.raises(OSError, match="disk full"):
        publish.install(fake_build(tmp_path / "b", "v0.1.0"), site, "v0.1.0", log=quiet)
    assert (site / "v0.1.0/intro.html").read_text() == before
    assert sorted(p.name for p in site.iterdir() if p.name.startswith(".")) == [".nojekyll"]


def test_cli_publish_html(tmp_path, capsys):
    site = tmp_path / "site"
    build = fake_build(tmp_path, "v1.0.0")
    assert main(["publish", "--version", "v1.0.0", "--html", str(build), "--site", str(site),
                 "--base-url", "/repo/", "--allow-untagged"]) == 0
    assert "published v1.0.0" in capsys.readouterr().out
    assert json.loads((site / "switcher.json").read_text())[0]["url"] == "/repo/v1.0.0/"
    assert main(["publish", "--version", "latest", "--html", str(build), "--site", str(site)]) == 1
    assert "expected 'dev' or a version" in capsys.readouterr().err


def test_stamped_version_follows_the_front_page_redirect(tmp_path):
    assert sphinx_meta.stamped_version(fake_build(tmp_path, "v2.0.0")) == "v2.0.0"
    assert sphinx_meta.stamped_version(fake_build(tmp_path, None)) is None
    stamped = tmp_path / "u"
    stamped.mkdir()
    (stamped / "index.html").write_text(f'<meta name="benchbook-version" content="{sphinx_meta.UNPUBLISHED}" />')
    assert sphinx_meta.stamped_version(stamped) is None


def test_switcher_is_set_to_the_version_or_left_off_unpublished_builds(monkeypatch):
    def config():
        return SimpleNamespace(html_theme_options={
            "switcher": {"json_url": "../switcher.json", "version_match": "dev"},
            "article_header_end": ["version-switcher", "article-header-buttons"],
            "navbar_end": "theme-switcher, version-switcher.html",
        }, html_sidebars={"**": ["navbar-logo.html", "version-switcher", "sbt-sidebar-nav.html"]})

    monkeypatch.setenv("BENCHBOOK_VERSION", "v0.4.0")
    c = config()
    sphinx_meta._configure(None, c)
    assert c.html_theme_options["switcher"] == {"json_url": "../switcher.json", "version_match": "v0.4.0"}

    monkeypatch.delenv("BENCHBOOK_VERSION")
    c = config()
    sphinx_meta._configure(None, c)
    assert "switcher" not in c.html_theme_options
    assert c.html_theme_options["article_header_end"] == ["article-header-buttons"]
    assert [s.strip() for s in c.html_theme_options["navbar_end"]] == ["theme-switcher"]
    assert c.html_sidebars == {"**": ["navbar-logo.html", "sbt-sidebar-nav.html"]}


def test_footer_escapes_and_lists_each_data_folder(tmp_path):
    a, b = tmp_path / "h100", tmp_path / "strix"
    stamp = dict(version="v1<2", date="2026-01-01 00:00 UTC", code="0.1.0 (abc)",
                 hashes={a: "1" * 16, b: "2" * 16}, by_study={}, env="python 3.11.7 (not <locked>)")
    out = sphinx_meta.footer_html(stamp, [a, b])
    assert "v1&lt;2" in out and "1111111111111111" in out and "strix" in out
    assert '<span class="benchbook-env">python 3.11.7 (not &lt;locked&gt;)</span>' in out
    assert "data <span class=\"benchbook-data\">none</span>" in sphinx_meta.footer_html(stamp, [])
    assert ">Unpublished build</span> · built" in sphinx_meta.footer_html({**stamp, "version": None}, [a])


def test_the_footer_says_whether_the_environment_is_the_locked_one(tmp_path):
    from benchbook.study.provenance import LOCK, environment_words

    lock = (Path(__file__).parents[2] / LOCK).read_text(encoding="utf-8")
    (tmp_path / LOCK).write_text(lock, encoding="utf-8")
    assert environment_words(tmp_path).endswith(f"(the versions of {LOCK})")
    (tmp_path / LOCK).write_text(re.sub(r"\npandas==[^ ]+", "\npandas==0.1", lock), encoding="utf-8")
    assert "not the locked versions: pandas " in environment_words(tmp_path)
    assert "(locked 0.1)" in environment_words(tmp_path)
    (tmp_path / LOCK).unlink()
    assert environment_words(tmp_path).endswith(f"(no {LOCK})")


def test_data_folders_are_the_study_folders_the_parameters_name(tmp_path):
    from projects import copy_project

    root = copy_project(tmp_path)
    folders = sphinx_meta.data_folders(root, STUDY)
    assert [f.name for f in folders] == [STUDY, "strix-halo-baseline"]
    # the synthesis reads every chapter's outputs, so its footer names every chapter's data
    names = {f.name for f in sphinx_meta.data_folders(root, "synthesis")}
    assert {STUDY, "strix-halo-baseline", "gb10-mtp", "power-sweep", "3090-dense-vs-sparse", "facts"} <= names


# ---------------------------------------------------------------- changes since

RUNS = pd.DataFrame({"run_id": ["a", "b", "c"], "output_tps": [100.0, 200.0, 300.0],
                     "median_ttft_s": [0.1, 0.2, 0.3], "p99_ttft_s": [0.5, 0.6, 0.7],
                     "cost_per_m": [2.0, 1.0, 0.5], "config": ["x", "x", "y"]})
CLAIMS = pd.DataFrame({"id": ["k1", "k2", "k3"], "verdict": ["holds", "does not hold", "not derivable"],
                       "claim": ["one", "two", "three"]})


def test_changes_read_the_previous_versions_downloads_not_recompute(tmp_path):
    prev_runs = RUNS.copy()
    prev_runs.loc[1, "cost_per_m"] = 1.5
    prev_runs = prev_runs[prev_runs.run_id != "c"]
    prev_claims = CLAIMS.replace({"does not hold": "holds"})
    prev_site = fake_build(tmp_path, "v0.1.0", prev_runs, prev_claims)
    now_runs = pd.concat([RUNS[RUNS.run_id != "a"], pd.DataFrame({"run_id": ["d"], "output_tps": [9.0]})])

    prev, tables = changes.compare(STUDY, prev_site, {"runs": now_runs, "claims": CLAIMS})
    assert prev.version == "v0.1.0" and prev.missing == []
    runs = tables["runs"].set_index("run_id")
    assert list(runs.index) == ["b", "c", "d", "a"]  # this version's order, then the gone
    assert runs.loc["b", "cost_per_m (v0.1.0)"] == 1.5 and runs.loc["b", "cost_per_m (this version)"] == 1.0
    assert runs["status"].to_dict() == {"b": "changed", "c": "new", "d": "new", "a": "gone"}
    assert "config (v0.1.0)" not in runs.columns  # only the key numbers
    claims = tables["claims"].set_index("id")
    assert claims["status"].to_dict() == {"k1": "same", "k2": "changed", "k3": "same"}
    assert claims.loc["k2", "verdict (v0.1.0)"] == "holds"
    text = changes.summary(prev, tables)
    assert "<strong>v0.1.0</strong>" in text and "1 of 4 runs changed, 2 new, 1 gone" in text
    assert "1 of 3 claims changed" in text


def test_changes_unchanged_numbers_survive_the_csv_round_trip(tmp_path):
    runs = RUNS.assign(output_tps=[1 / 3, 2 / 7, 1e-9])
    prev_site = fake_build(tmp_path, "v0.1.0", runs, CLAIMS)
    _, tables = changes.compare(STUDY, prev_site, {"runs": runs, "claims": CLAIMS})
    assert set(tables["runs"]["status"]) == {"same"} and set(tables["claims"]["status"]) == {"same"}


def test_changes_without_a_previous_version_or_chapter(tmp_path):
    prev, tables = changes.compare(STUDY, "", {"runs": RUNS, "claims": CLAIMS})
    assert prev is None and tables == {}
    assert "no earlier published version" in changes.summary(prev, tables)

    other = fake_build(tmp_path, "v0.1.0")
    (other / "studies" / f"{STUDY}.html").unlink()
    prev, tables = changes.compare(STUDY, other, {"runs": RUNS, "claims": CLAIMS})
    assert tables == {} and "did not have this chapter" in changes.summary(prev, tables)

    only_runs = fake_build(tmp_path / "r", "v0.1.0", RUNS)
    prev, tables = changes.compare(STUDY, only_runs, {"runs": RUNS, "claims": CLAIMS})
    assert list(tables) == ["runs"] and "published no claims table" in changes.summary(prev, tables)

    with pytest.raises(FileNotFoundError, match="previous version .*no index.html"):
        changes.compare(STUDY, tmp_path / "missing", {"runs": RUNS})


def _with_placeholder(build: Path) -> Path:
    """A fake build whose chapter page carries the section as the notebook shows it."""
    from IPython.core.interactiveshell import InteractiveShell

    page = build / "studies" / f"{STUDY}.html"
    shown = []
    InteractiveShell.instance().display_pub.publish = lambda data, **kw: shown.append(data["text/html"])
    changes.placeholder(STUDY)
    page.write_text(page.read_text().replace("</body>", f"<section>{shown[0]}</section></body>"))
    return build


def test_installing_a_version_fills_its_changes_section_from_both_versions_downloads(tmp_path):
    """The comparison is made when a build is installed, from the downloads of the page being
    published and of the previous version's page: no chapter runs again for it, and a page of
    the first version says there is nothing to compare with."""
    site = tmp_path / "site"
    old_runs = RUNS.assign(cost_per_m=[2.5, 1.0, 0.5])
    first_build = _with_placeholder(fake_build(tmp_path / "a", "v0.1.0", old_runs, CLAIMS))
    publish.install(first_build, site, "v0.1.0", log=quiet)
    first = (site / "v0.1.0" / "studies" / f"{STUDY}.html").read_text()
    assert "no earlier published version" in first and 'data-study="' not in first

    said = []
    publish.install(_with_placeholder(fake_build(tmp_path / "b", "v0.2.0", RUNS, CLAIMS)), site, "v0.2.0",
                    log=said.append)
    second = (site / "v0.2.0" / "studies" / f"{STUDY}.html").read_text()
    assert "Since <strong>v0.1.0</strong>: 1 of 3 runs changed" in second and "0 of 3 claims changed" in second
    assert "Changes since v0.1.0: runs" in second and second.count("<tr") == 2  # a header and run a
    assert any("changes since v0.1.0: 1 page(s) compared" in line for line in said)
    assert (site / "latest" / "studies" / f"{STUDY}.html").read_text() == second


def git_repo(path: Path, tag: str | None) -> Path:
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(git + ["init", "-q"], cwd=path, check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "x"], cwd=path, check=True)
    if tag:
        subprocess.run(git + ["tag", tag], cwd=path, check=True)
    return path


def test_a_release_is_published_only_from_the_commit_tagged_with_its_name(tmp_path):
    tagged = git_repo(tmp_path / "tagged", "v1.0.0")
    publish.check_tag(tagged, "v1.0.0", log=quiet)
    publish.check_tag(tagged, "dev", log=quiet)  # dev is main, whatever its tag
    with pytest.raises(PublishError, match="not the checked-out git tag: the checked-out commit is tagged v1.0.0"):
        publish.check_tag(tagged, "v1.1.0", log=quiet)
    with pytest.raises(PublishError, match="has no tag.*--allow-untagged"):
        publish.check_tag(git_repo(tmp_path / "plain", None), "v1.0.0", log=quiet)
    with pytest.raises(PublishError, match="not a git checkout"):
        publish.check_tag(tmp_path, "v1.0.0", log=quiet)
    said = []
    publish.check_tag(tmp_path, "v1.0.0", allow_untagged=True, log=said.append)
    assert said and said[0].startswith("warning: publishing v1.0.0 although the project is not a git checkout")


def test_cli_publish_refuses_an_untagged_release_and_changes_nothing(tmp_path, capsys):
    site = tmp_path / "site"
    build = fake_build(tmp_path, "v9.9.9")
    assert main(["publish", "--version", "v9.9.9", "--html", str(build), "--site", str(site)]) == 1
    assert "is not the checked-out git tag" in capsys.readouterr().err
    assert not site.exists()


def test_changes_are_shown_rounded_with_readers_column_names():
    assert [changes.rounded(v) for v in (0.8762, 12.345, 2229.3, 0.000123456, float("nan"), "holds")] == \
        ["0.876", "12.3", "2,229", "0.000123", "–", "holds"]
    t = pd.DataFrame({"run_id": ["a"], "output_tps (v0.1.0)": [75.123], "output_tps (this version)": [80.0],
                      "status": ["changed"]})
    shown = changes.readable(t, "v0.1.0")
    assert list(shown.columns) == ["run", "output t/s (v0.1.0)", "output t/s (now)", "status"]
    assert shown.iloc[0].tolist() == ["a", "75.1", "80", "changed"]

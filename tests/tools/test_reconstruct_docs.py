"""PROVENANCE.md is the template filled from the study's facts and its assumptions.yml.

The assumptions a reader sees in PROVENANCE.md must be the machine-readable ones the
chapters mark sections with: same entries, same order, same values and columns.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchbook.study.assumptions import Assumption, load_assumptions
from tools.reconstruct import docs

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.parent for p in (ROOT / "data").glob("*/assumptions.yml"))
_BULLET = re.compile(r"^- `(?P<id>[^`]+)` = `(?P<value>.*?)`: (?P<rest>.*)$")


def _section(text: str, title: str) -> list[str]:
    body = text.split(f"\n## {title}\n\n", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in body.splitlines() if ln.startswith("- ")]


def test_there_are_five_reconstructed_folders():
    assert [p.name for p in FOLDERS] == ["3090-dense-vs-sparse", "gb10-mtp", "h100-dense-vs-moe-mtp",
                                         "power-sweep", "strix-halo-baseline"]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_provenance_lists_exactly_the_assumptions_yml_entries(folder):
    bullets = _section((folder / docs.PROVENANCE).read_text(encoding="utf-8"), "Assumptions")
    assumed = load_assumptions(folder)
    assert [(_BULLET.match(b)["id"], _BULLET.match(b)["value"]) for b in bullets] == \
        [(a.id, repr(a.value)) for a in assumed]
    for b, a in zip(bullets, assumed):
        lands = "; lands in " + ", ".join(f"`{c}`" for c in a.columns) if a.columns else ""
        assert _BULLET.match(b)["rest"] == a.why + lands


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_provenance_names_the_command_that_rebuilds_it(folder):
    text = (folder / docs.PROVENANCE).read_text(encoding="utf-8")
    cmd = re.search(r"^- Command: `(.*)`$", text, re.M)[1]
    assert cmd.startswith("python -m tools.reconstruct ") and f" data/{folder.name} " in cmd
    assert re.search(r"^- Generator: `tools\.reconstruct\.\w+` \(with `", text, re.M)


def _facts(**kw) -> docs.Provenance:
    base = dict(study="mini", summary="Nothing was published.", generator="tools.reconstruct.mini",
                helpers=["fit"], command=docs.command("mini", "mini", 7), seed=7)
    return docs.Provenance(**{**base, **kw})


def test_render_shapes_sections_tables_and_the_checksums_line():
    text = docs.render(_facts(
        sections=[docs.Section("Targets", ["Intro.\n\n", docs.Table(["A", "B"], [["x|y", 1.5]])])],
        after=[docs.Section("What was synthesised", ["- all of it\n"])],
        hand_written=["published.yml", "architecture.yml"]),
        [Assumption("band", [0.2, 0.8], "why", ("runs.p99_ttft_s",))])
    assert text.startswith("# Provenance: mini\n\n**Every raw file in this folder is RECONSTRUCTED, not "
                           "measured.** Nothing was published.\n\n## How the files were made\n\n"
                           "- Generator: `tools.reconstruct.mini` (with `fit`).\n"
                           "- Command: `python -m tools.reconstruct mini data/mini --seed 7`\n")
    assert "\n## Targets\n\nIntro.\n\n| A | B |\n|---|---|\n| x\\|y | 1.5 |\n\n## Assumptions\n" in text
    assert "- `band` = `[0.2, 0.8]`: why; lands in `runs.p99_ttft_s`\n\n## What was synthesised\n" in text
    assert text.endswith("(`sha256sum -c SHA256SUMS`). `published.yml` and `architecture.yml` are "
                         "hand-written, not generated.\n")
    assert text.index("## Targets") < text.index("## Assumptions") < text.index("## What was synthesised")


def test_seed_line_says_how_and_what_else_byte_identical_takes():
    plain = docs.render(_facts(), [])
    assert "- Seed: 7; the same seed gives byte-identical files.\n" in plain
    told = docs.render(_facts(seeding="numpy", identical_note="gzip mtime 0"), [])
    assert "- Seed: 7 (numpy); the same seed gives byte-identical files (gzip mtime 0).\n" in told
    assert plain.endswith("(`sha256sum -c SHA256SUMS`).\n")


def test_finish_renders_from_the_assumptions_it_wrote(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "x.txt").write_text("x")
    docs.finish(tmp_path, _facts(), {"band": ((0.2, 0.8), "a tuple in the generator")}, {"band": ("runs.output_tps",)})
    text = (tmp_path / docs.PROVENANCE).read_text(encoding="utf-8")
    assert "- `band` = `[0.2, 0.8]`: a tuple in the generator; lands in `runs.output_tps`\n" in text
    assert load_assumptions(tmp_path)[0].value == [0.2, 0.8]
    with pytest.raises(ValueError, match="SHOWS_IN or ROWS names no assumption with columns: nope"):
        docs.finish(tmp_path, _facts(), {"band": (1, "why")}, {"nope": ("runs.output_tps",)})

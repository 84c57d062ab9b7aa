"""Independent measurements: the registry's schema, the rule's verdicts, the section's data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from benchbook.analysis.facts import COMPARABLE, FactsError, load_facts
from benchbook.book import registry
from benchbook.ledger import independent
from benchbook.ledger.independent import AGREES, CLOSE_MARGIN, HIGHER, LOWER, NONE, SAME_MARGIN, VOID, judge
from benchbook.ledger.published import load_published
from benchbook.page import report

ROOT = Path(__file__).parents[2]
FACTS = ROOT / "data/facts"
WRITE_UPS = [c.id for c in registry.chapters() if c.writeup and c.contract is not None and c.notebook_name == c.id]


@pytest.fixture(scope="module")
def facts():
    return load_facts(FACTS)


def _registry_with(tmp_path: Path, change) -> Path:
    """A copy of data/facts whose independent.yml `change(doc)` has edited."""
    folder = tmp_path / "facts"
    shutil.copytree(FACTS, folder)
    doc = yaml.safe_load((folder / "independent.yml").read_text(encoding="utf-8"))
    change(doc)
    (folder / "independent.yml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return folder


# ---- the rule ----------------------------------------------------------------------------

def test_a_figure_inside_the_spread_of_same_setup_measurements_agrees():
    v = judge(100, [(96, "same"), (104, "same")])
    assert v.verdict == AGREES and v.n == 2 and v.margin == SAME_MARGIN
    assert v.low == pytest.approx(96 * (1 - SAME_MARGIN)) and v.high == pytest.approx(104 * (1 + SAME_MARGIN))
    assert v.median == 100


def test_a_figure_above_or_below_the_band_is_higher_or_lower():
    assert judge(120, [(96, "same"), (104, "same")]).verdict == HIGHER
    assert judge(80, [(96, "same"), (104, "same")]).verdict == LOWER


def test_a_build_or_setting_difference_widens_the_band():
    # 112 is above 104 x 1.05 but inside 104 x 1.15: 'close' sources cannot tell it apart
    assert judge(112, [(96, "same"), (104, "same")]).verdict == HIGHER
    close = judge(112, [(96, "same"), (104, "close")])
    assert close.verdict == AGREES and close.margin == CLOSE_MARGIN


def test_another_setup_voids_the_comparison_and_none_found_is_said():
    assert judge(100, [(50, "different"), (300, "different")]).verdict == VOID
    assert judge(100, []).verdict == NONE
    # different measurements never move the band of comparable ones
    assert judge(100, [(98, "same"), (500, "different")]).high == pytest.approx(98 * (1 + SAME_MARGIN))


def test_the_rule_refuses_values_it_cannot_compare():
    with pytest.raises(ValueError):
        judge(100, [(0, "same")])


# ---- the registry ------------------------------------------------------------------------

def test_every_measurement_has_a_link_a_date_and_an_allowed_comparability(facts):
    ms = facts.sections["measurements"]
    assert ms
    for key, m in ms.items():
        assert m["source"]["url"].startswith(("https://", "http://")), key
        assert m["date"] and m["date"][:4].isdigit(), key
        assert m["comparable"] in COMPARABLE, key
        assert m["why"].strip() and isinstance(m["value"], (int, float)), key
        if "repo" in m["source"]:
            assert m["source"]["commit"] in m["source"]["url"] and m["source"]["path"] in m["source"]["url"], key


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["measurements"]["hogeheer-q8-radv-pp512"]["source"].pop("url"), "hogeheer-q8-radv-pp512.source.url"),
    (lambda d: d["measurements"]["hogeheer-q8-radv-pp512"].pop("date"), "hogeheer-q8-radv-pp512: missing date"),
    (lambda d: d["measurements"]["atlas-gb10-single"].update(comparable="similar"),
     "atlas-gb10-single.comparable: 'similar'; expected one of same, close, different"),
    (lambda d: d["measurements"]["kyuz0-q8kxl-radv-pp512"]["source"].pop("commit"),
     "kyuz0-q8kxl-radv-pp512.source.commit"),
    (lambda d: d["measurements"]["atlas-gb10-single"].update(value="55.7 tok/s"), "atlas-gb10-single.value"),
    (lambda d: d["measurements"]["atlas-gb10-single"]["workload"].pop("concurrency"),
     "atlas-gb10-single.workload: missing concurrency"),
    (lambda d: d["measurements"]["atlas-gb10-single"].update(headline="gb10-nope"),
     "atlas-gb10-single.headline: 'gb10-nope' is not an entry of headlines"),
    (lambda d: d["measurements"]["atlas-gb10-single"]["source"].update(url="javascript:alert(1)"),
     "atlas-gb10-single.source.url"),
])
def test_a_bad_measurement_is_refused_naming_the_file_and_the_key(tmp_path, change, expected):
    with pytest.raises(FactsError) as err:
        load_facts(_registry_with(tmp_path, change))
    assert any(p.startswith("independent.yml: ") and expected in p for p in err.value.problems), err.value.problems


def test_each_headline_names_a_printed_value_and_ledger_rows_that_exist(facts):
    for key, h in facts.sections["headlines"].items():
        q = independent.published_quantity(h, ROOT / "data")
        assert q.value > 0, key
        for chapter, ids in h["ledger"].items():
            claims = {c["id"] for c in load_published(ROOT / "data" / chapter / "published.yml").claims}
            assert set(ids) <= claims, (key, chapter, set(ids) - claims)
        assert set(h["chapters"]) <= set(WRITE_UPS), key


def test_a_headline_naming_a_missing_cell_is_an_error_naming_the_file(tmp_path, facts):
    h = {**facts.sections["headlines"]["gb10-mtp-a"]}
    h["published"] = {**h["published"], "row": "Z: no such row"}
    with pytest.raises(ValueError, match=r"gb10-mtp/published.yml: no cell mtp/'Z: no such row'"):
        independent.published_quantity(h, ROOT / "data")


def test_every_write_up_chapter_has_a_section_with_a_source_and_its_searches(facts):
    for chapter in WRITE_UPS:
        s = independent.section(chapter, facts=facts, data_root=ROOT / "data")
        assert len(s.summary) >= 1 and s.sources >= 1, chapter
        assert len(s.searched) >= 1, chapter
    strix = independent.section("strix-halo-baseline", facts=facts, data_root=ROOT / "data")
    same = strix.measurements[strix.measurements["comparable"] == "same"]
    assert strix.sources >= 2 and len(same) >= 2  # public runs of the exact model and format on the chip


def test_the_section_shows_each_measurement_with_its_verdict_and_a_safe_link(tmp_path):
    def hostile(d):
        m = d["measurements"]["atlas-gb10-single"]
        m["source"]["title"] = "<script>x()</script> atlas"
    facts = load_facts(_registry_with(tmp_path, hostile))
    s = independent.section("gb10-mtp", facts=facts, data_root=ROOT / "data")
    row = s.summary.iloc[0]
    published = load_published(ROOT / "data/gb10-mtp/published.yml")
    cell = next(r for r in next(t for t in published.tables if t.id == "mtp").rows if r[0] == "A: Output tok/s")
    assert row["published"] == cell[2]
    assert row["verdict"] == judge(float(cell[2]), [(55.7, "close"), (270.1, "different")]).verdict
    link = s.measurements.loc[s.measurements["value"].str.startswith("55.7"), "source"].iloc[0]
    assert "<script>" not in link and "&lt;script&gt;" in link
    assert link.startswith('<a href="https://github.com/0xBakeer/inference-atlas/pull/159">')


def test_the_note_says_when_the_page_s_data_is_not_the_write_up_s_or_nothing_compares(facts):
    other = independent.section("strix-halo-baseline", comparable=False, facts=facts, data_root=ROOT / "data")
    assert "not the write-up's setup" in independent.note(other)
    assert independent.note(independent.section("strix-halo-baseline", facts=facts, data_root=ROOT / "data")) == ""
    assert "Nothing comparable found" in independent.note(
        independent.section("power-sweep", facts=facts, data_root=ROOT / "data"))
    h100 = independent.note(independent.section("h100-dense-vs-moe-mtp", facts=facts, data_root=ROOT / "data"))
    assert facts.sections["headlines"]["h100-moe-c1"]["title"] in h100
    assert facts.sections["headlines"]["strix-pp512"]["title"] not in h100


def test_ledger_rows_of_headline_figures_link_to_the_section(facts):
    links = independent.ledger_links("3090-dense-vs-sparse", facts=facts)
    ledger = pd.DataFrame([dict(id=cid, claim="c", published="1", recomputed="1", verdict="holds",
                                basis="measured data", difference="", tolerance="", kind="data", note="", same_as="")
                           for cid in ("c4-ratio", "kv-ratio")])
    shown = report.ledger_display(ledger, links=links)
    assert list(shown["independent"]) == [f'<a href="{independent.ANCHOR}">compare</a>', ""]
    assert "independent" not in report.ledger_display(ledger).columns


def test_the_book_finding_counts_verdicts_and_the_largest_distance():
    t = pd.DataFrame([
        dict(headline="a", published=120.0, **{"independent median": 100.0, "comparable sources": 2,
                                                "published / median": 1.2}, verdict=HIGHER),
        dict(headline="b", published=95.0, **{"independent median": 100.0, "comparable sources": 1,
                                               "published / median": 0.95}, verdict=AGREES),
        dict(headline="c", published=50.0, **{"independent median": None, "comparable sources": 0,
                                               "published / median": None}, verdict=VOID),
    ])
    g = independent.book_glue(t)
    assert (g["independent_book_judged"], g["independent_book_higher"], g["independent_book_agrees"],
            g["independent_book_unjudged"]) == (2, 1, 1, 1)
    assert g["independent_book_max_dev_pct"] == pytest.approx(20.0)
    assert g["independent_book_median_dev_pct"] == pytest.approx(12.5)
    assert g["independent_book_max_dev_headline"] == "a"


def test_methods_states_the_rule_s_margins():
    text = (ROOT / "book/methods.md").read_text(encoding="utf-8")
    section = text.split("## Independent measurements", 1)[1].split("\n## ", 1)[0]
    assert f"by {SAME_MARGIN:.0%} either side".replace("%", " %") in section
    assert f"by {CLOSE_MARGIN:.0%} when any is *close*".replace("%", " %") in section


def test_a_wall_clock_rate_is_not_shown_as_a_decode_rate():
    """club-3090 #104 tabulates 'wall TPS' by power cap; its 270 W value is set beside the power
    sweep's average generation as a rate over wall time, never as a decode rate."""
    from pathlib import Path

    facts = Path(__file__).parents[2] / "data" / "facts"
    s = independent.section("power-sweep", facts_dir=facts, data_root=facts.parent)
    row = s.measurements[s.measurements["source"].str.contains("club-3090/issues/104")].iloc[0]
    assert row["value"].startswith("68.36")
    assert "wall" in row["metric"] and "decode" not in row["metric"]

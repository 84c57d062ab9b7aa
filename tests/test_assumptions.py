"""The generators' assumptions as data (benchbook.assumptions)."""

import pytest
import yaml

from benchbook import registry
from benchbook.assumptions import FILE, Assumption, AssumptionsError, load_assumptions, resting_on
from benchbook.study import load_study
from projects import ROOT  # noqa: E402  (tests/ is on sys.path)


def test_every_reconstructed_folder_lists_its_generator_s_choices():
    for spec in registry.chapters():
        if spec.contract is None:
            continue
        folder = ROOT / "data" / spec.id
        study = load_study(folder)
        assumed = load_assumptions(folder)
        assert bool(assumed) == study.reconstructed, spec.id
        if assumed:
            assert all(a.why for a in assumed) and len({a.id for a in assumed}) == len(assumed)
            tables = {c.split(".")[0] for a in assumed for c in a.columns}
            from benchbook.tables import SCHEMAS

            for a in assumed:  # every column named is a real tidy column
                for c in a.columns:
                    t, col = c.split(".")
                    assert col in {x.name for x in SCHEMAS[t]}, (spec.id, a.id, c)
            assert tables, spec.id  # at least one choice lands in a table a chapter reads


def test_an_assumption_marks_only_sections_that_read_its_columns():
    a = Assumption("draw", 1, "why", ("gpu_samples.power_draw_w",))
    b = Assumption("texture", 2, "why", ())
    assert resting_on([a, b], ("gpu_samples.power_draw_w", "windows.prompt_tps")) == [a]
    assert resting_on([a, b], ("windows.prompt_tps",)) == []


@pytest.mark.parametrize("text, message", [
    ("assumptions: nope", "expected a mapping with an 'assumptions' list"),
    ("assumptions:\n  - {id: x, value: 1}", r"assumptions\[0\]: expected a mapping with id, value and why"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [power_draw_w]}", r"\(x\): columns \['power_draw_w'\]"),
    ("assumptions: [", "not valid YAML"),
])
def test_a_broken_assumptions_file_names_the_entry(tmp_path, text, message):
    (tmp_path / FILE).write_text(text)
    with pytest.raises(AssumptionsError, match=message):
        load_assumptions(tmp_path)


def test_a_folder_without_the_file_assumes_nothing(tmp_path):
    assert load_assumptions(tmp_path) == []
    (tmp_path / FILE).write_text(yaml.safe_dump({"assumptions": [{"id": "x", "value": [1], "why": "w"}]}))
    assert load_assumptions(tmp_path) == [Assumption("x", [1], "w", ())]


def test_a_caveat_resting_on_a_generator_s_choice_says_so_first():
    """Derived from assumptions.yml: each data-rule caveat reading an assumed column is marked."""
    from benchbook.chapters import power_sweep

    folder = ROOT / "data" / "power-sweep"
    r = power_sweep.analyse(folder, published_file=folder / "published.yml")
    marked = r.caveats[r.caveats["caveat"].str.startswith("Assumed, not measured")]
    rules = {o.split(": ", 1)[1] for o in marked["origin"]}
    assert {"limit-is-not-draw", "prefix-cache", "engine-restarts"} <= rules
    assumed = {a.id for a in load_assumptions(folder)}
    for text in marked["caveat"]:  # each names the choices it rests on
        named = text.split("chose (", 1)[1].split(";")[0]
        assert named in assumed
    assert not r.caveats[r.caveats["origin"].str.startswith("authors")]["caveat"].str.startswith("Assumed").any()

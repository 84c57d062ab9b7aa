"""The facts registry: every value cited or marked assumed, and clear errors when not.

The committed registry (data/facts/) is loaded and checked value by value; broken copies of
it, written to a temporary folder, must fail with a message naming the file and the key.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from benchbook.analysis.facts import Fact, FactsError, _fact, load_facts

ROOT = Path(__file__).parents[2]
FACTS = ROOT / "data" / "facts"


@pytest.fixture(scope="module")
def facts():
    return load_facts(FACTS)


@pytest.fixture
def copy(tmp_path):
    dest = tmp_path / "facts"
    shutil.copytree(FACTS, dest)
    return dest


def edit(folder: Path, name: str, change) -> None:
    doc = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
    change(doc)
    (folder / name).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def problems(folder: Path) -> list[str]:
    with pytest.raises(FactsError) as err:
        load_facts(folder)
    return err.value.problems


# ---------------------------------------------------------------- the committed registry


def test_every_value_is_cited_with_a_date_or_assumed_with_reasoning(facts):
    table = facts.table()
    assert len(table) > 50
    for row in table.itertuples():
        if row.assumed:
            assert row.reasoning.strip(), (row.entry, row.field)
        else:
            assert row.source and row.url and row.date, (row.entry, row.field)


def test_strix_halo_shows_the_write_ups_figure_beside_the_specification_and_the_measurement(facts):
    p = "ryzen-ai-max-395"
    spec = facts.fact("platforms", p, "memory_bandwidth")
    measured = facts.fact("platforms", p, "memory_bandwidth_measured")
    written = facts.fact("platforms", p, "memory_bandwidth_as_written")
    assert (spec.value, written.value) == (256, 225)
    assert measured.low <= measured.value <= measured.high and (measured.low, measured.high) == (212, 215)
    assert written.source == "seed-001" and spec.source != written.source
    assert "svethardware" in facts.cite(spec) and "strix-halo-testing" in facts.cite(measured)


def test_the_14_dollar_price_is_openais_in_us_dollars(facts):
    api = facts.entry("api", "openai-gpt-5.2")
    assert api["vendor"] == "OpenAI"
    assert (api["output"].value, api["output"].unit) == (14.0, "USD/Mtok")
    assert "Anthropic" in api["attribution_note"]  # the seeds' attribution, named as a caveat
    upcloud = facts.fact("hourly", "upcloud-h100", "price")
    assert (upcloud.value, upcloud.unit, upcloud.source) == (1.79, "EUR/h", "seed-001")


def test_the_35b_a3b_active_count_is_the_sum_of_the_shapes_its_reasoning_lists(facts):
    # By hand, from FlashRT's tensor shapes (models.yml reasoning):
    moe = 256 * 2048 + 8 * (1024 * 2048 + 2048 * 512) + 3 * 512 * 2048 + 2048  # router, 8 experts, shared, gate
    full = 8192 * 2048 + 2 * 512 * 2048 + 2048 * 4096 + 2 * 256  # q, k, v, o, q/k norms
    linear = 8192 * 2048 + 4096 * 2048 + 2 * 32 * 2048 + 8192 * 4 + 32 + 32 + 128 + 2048 * 4096
    tables = 2 * 248320 * 2048  # embedding and output head, untied
    total = 40 * moe + 10 * full + 30 * linear + 40 * 2 * 2048 + 2048 + tables
    assert facts.value("models", "qwen3.6-35b-a3b", "active_params_exact") == total
    assert facts.fact("models", "qwen3.6-35b-a3b", "active_params_exact").assumed


def test_same_layout_entries_inherit_and_keep_their_own_values(facts):
    m = facts.entry("models", "qwen3.5-35b-a3b")
    assert m["hidden_size"].value == 2048 and m["name"] == "Qwen3.5-35B-A3B"
    assert facts.value("models", "qwen3.6-27b", "kv_heads") == 4


@pytest.mark.parametrize("section,text,key", [
    ("platforms", "UpCloud H100 80GB SXM (fi-hel2)", "h100-sxm5-80gb"),
    ("platforms", "4x RTX 3090 (one is an RTX 3090 Ti)", "rtx-3090"),
    ("platforms", "RTX 3090 Ti", "rtx-3090-ti"),
    ("platforms", "AMD Ryzen AI Max+ 395 (Strix Halo), Radeon 8060S", "ryzen-ai-max-395"),
    ("platforms", "NVIDIA DGX Spark (GB10)", "dgx-spark-gb10"),
    ("models", "Qwen/Qwen3.6-35B-A3B-FP8", "qwen3.6-35b-a3b"),
    ("models", "cyankiwi/Qwen3.5-27B-AWQ-BF16-INT8", "qwen3.5-27b"),
    ("models", "QuantTrio/Qwen3.5-122B-A10B-AWQ", "qwen3.5-122b-a10b"),
    ("quantisations", "Q8_0 (GGUF)", "q8_0"),
    ("quantisations", "AWQ-BF16-INT8 (compressed-tensors)", "int8"),
    ("quantisations", "INT4 AWQ", "int4-awq"),
    ("kv_cache", "auto", "bf16"),
    ("kv_cache", "fp8_e5m2", "fp8"),
    ("platforms", "TPU v5e", None),
])
def test_identify_maps_study_strings_to_entries(facts, section, text, key):
    assert facts.identify(section, text) == key


# ---------------------------------------------------------------- broken registries


def test_a_value_without_source_names_file_and_key(copy):
    edit(copy, "platforms.yml", lambda d: d["platforms"]["h100-sxm5-80gb"]["memory_bandwidth"].pop("source"))
    (msg,) = problems(copy)
    assert msg.startswith("platforms.yml: platforms.h100-sxm5-80gb.memory_bandwidth: no source")
    assert "assumed: true" in msg


def test_an_assumed_value_needs_its_reasoning(copy):
    edit(copy, "quantisation.yml", lambda d: d["quantisations"]["fp8"]["bytes_per_weight"].pop("reasoning"))
    (msg,) = problems(copy)
    assert "quantisation.yml: quantisations.fp8.bytes_per_weight" in msg and "reasoning" in msg


def test_unknown_source_bad_date_bare_value_and_missing_unit_are_all_reported_at_once(copy):
    def change(d):
        h = d["platforms"]["h100-sxm5-80gb"]
        h["memory_size"]["source"] = "nowhere"
        h["power_bound"]["date"] = "June 2026"
        h["tdp"] = 700
        h["peak_dense"]["fp8"].pop("unit")
    edit(copy, "platforms.yml", change)
    found = problems(copy)
    assert len(found) == 4
    assert any("memory_size.source: 'nowhere' is not defined in sources.yml" in p for p in found)
    assert any("power_bound.date: 'June 2026' is not a date" in p for p in found)
    assert any("h100-sxm5-80gb.tdp: 700 is a bare value" in p for p in found)
    assert any("peak_dense.fp8.unit: missing" in p for p in found)


def test_a_cited_value_without_date_and_a_value_outside_its_range(copy):
    def change(d):
        s = d["platforms"]["ryzen-ai-max-395"]
        s["memory_bandwidth"].pop("date")
        s["memory_bandwidth_measured"]["value"] = 230
    edit(copy, "platforms.yml", change)
    found = problems(copy)
    assert any("memory_bandwidth: cited from 'svethardware-strix' without a 'date'" in p for p in found)
    assert any("memory_bandwidth_measured: value 230 lies outside its range [212, 215]" in p for p in found)


def test_a_number_given_as_text_is_refused(copy):
    # YAML reads 35.0e9 (no sign in the exponent) as a string: the loader must say so
    text = (copy / "models.yml").read_text(encoding="utf-8").replace("35.0e+9", "35.0e9", 1)
    (copy / "models.yml").write_text(text, encoding="utf-8")
    (msg,) = problems(copy)
    assert "models.yml: models.qwen3.6-35b-a3b.total_params.value: expected a number, got '35.0e9'" == msg


def test_missing_file_invalid_yaml_and_bad_inheritance(copy):
    (copy / "fx.yml").unlink()
    (copy / "prices.yml").write_text("hourly: [unclosed\n", encoding="utf-8")
    edit(copy, "models.yml", lambda d: d["models"]["qwen3.6-27b"].update(same_layout_as="qwen9-1t"))
    found = problems(copy)
    assert any(p.startswith("fx.yml: missing from") for p in found)
    assert any(p.startswith("prices.yml: not valid YAML") for p in found)
    assert any("models.qwen3.6-27b.same_layout_as: 'qwen9-1t' is not an entry of models" in p for p in found)


def test_a_source_without_title_or_kind(copy):
    edit(copy, "sources.yml", lambda d: d["sources"]["klockwood-h100"].update(kind="blog", title=""))
    found = problems(copy)
    assert any(p.startswith("sources.yml: sources.klockwood-h100: expected a mapping with a 'title'") for p in found)


def test_asking_for_an_unrecorded_value_names_file_and_key(facts):
    with pytest.raises(FactsError, match=r"platforms.yml: platforms.rtx-3090-ti.memory_size: no value recorded"):
        facts.fact("platforms", "rtx-3090-ti", "memory_size")
    with pytest.raises(FactsError, match=r"models.yml: models.gpt-9: no such entry"):
        facts.entry("models", "gpt-9")


# ---------------------------------------------------------------- one value's checks

SOURCES = {"spec-sheet": {"title": "a data sheet", "kind": "vendor"}}
CITED = {"value": 3.35e12, "unit": "B/s", "source": "spec-sheet", "date": "2024-05"}


@pytest.mark.parametrize("change,expected", [
    ({"colour": "red"}, ["f.yml: k: unknown field(s) colour; allowed: assumed, basis, date, high, low, note, "
                         "reasoning, source, unit, value"]),
    ({"value": None}, ["f.yml: k.value: empty; leave the value out instead of recording nothing"]),
    ({"value": 1, "unit": "flag"}, ["f.yml: k.value: a flag must be true or false, got 1"]),
    ({"value": True}, ["f.yml: k.value: expected a number, got True"]),
    ({"unit": ""}, ["f.yml: k.unit: missing; every value needs its unit"]),
    ({"assumed": "yes"}, ["f.yml: k.assumed: expected true or false, got 'yes'"]),
    ({"assumed": "yes", "source": None},  # an assumed that is not a bool counts as not assumed
     ["f.yml: k.assumed: expected true or false, got 'yes'",
      "f.yml: k: no source; give 'source' (an id in sources.yml) and 'date', or mark it 'assumed: true' "
      "with its 'reasoning'"]),
    ({"source": "blog", "date": "May"},
     ["f.yml: k.source: 'blog' is not defined in sources.yml",
      "f.yml: k.date: 'May' is not a date (YYYY-MM or YYYY-MM-DD)"]),
    ({"date": None}, ["f.yml: k: cited from 'spec-sheet' without a 'date'"]),
    ({"assumed": True, "reasoning": " "}, ["f.yml: k: assumed values need their 'reasoning'"]),
    ({"low": 4e12}, ["f.yml: k: value 3350000000000.0 lies outside its range [4000000000000.0, None]"]),
    ({"high": 3e12}, ["f.yml: k: value 3350000000000.0 lies outside its range [None, 3000000000000.0]"]),
    ({"value": "3e12", "low": 4e12}, ["f.yml: k.value: expected a number, got '3e12'"]),  # no range check on text
])
def test_each_problem_of_one_value(change, expected):
    found: list[str] = []
    entry = {k: v for k, v in {**CITED, **change}.items() if v is not None or k == "value"}  # None: key left out
    assert _fact("f.yml", "k", entry, SOURCES, found) is None
    assert found == expected


def test_a_good_value_becomes_a_fact():
    found: list[str] = []
    assert _fact("f.yml", "k", {**CITED, "low": 3e12, "note": "HBM3", "basis": 7}, SOURCES, found) == Fact(
        value=3.35e12, unit="B/s", where="f.yml: k", source="spec-sheet", date="2024-05", low=3e12, note="HBM3",
        basis="7")
    assert _fact("f.yml", "k", {"value": True, "unit": "flag", "assumed": True, "reasoning": " why "}, SOURCES,
                 found) == Fact(value=True, unit="flag", where="f.yml: k", assumed=True, reasoning="why")
    assert found == []

"""benchbook.ledger.comparable: whether a data folder is the write-up's setup, role by role."""

from __future__ import annotations

import pytest

from benchbook.ledger.comparable import (
    Comparability,
    Gate,
    RoleMatch,
    accelerator_count,
    compare_setup,
    describe,
    describe_setup,
    field_matches,
    same_model,
    words,
)

H100_DENSE = {"platform": "NVIDIA H100 80GB HBM3", "accelerators": "1x NVIDIA H100", "model": "Qwen/Qwen3.6-27B-FP8"}
H100_MOE = {"platform": "NVIDIA H100 80GB HBM3", "model": "Qwen/Qwen3.6-35B-A3B-FP8", "quantisation": "FP8"}
SETUP = {
    "baseline": {"platform": ["H100", "H200"], "accelerators": 1, "model": "Qwen3.6-27B", "quantisation": "FP8"},
    "candidate": {"platform": "H100", "model": "Qwen3.6-35B-A3B", "quantisation": "FP8"},
}


def test_words_are_lower_case_alphanumeric_runs():
    assert words("Qwen/Qwen3.6-35B-A3B_FP8") == {"qwen", "qwen3", "6", "35b", "a3b", "fp8"}
    assert words(None) == set() and words("") == set() and words(3090) == {"3090"}


@pytest.mark.parametrize("text, n", [
    ("2x NVIDIA RTX 3090", 2), ("4xNVIDIA_L40S", 4), ("8 × H100", 8), ("  3 x A100", 3),
    ("NVIDIA H100", 1), ("", 1), (None, 1), ("RTX 3090 x2", 1),  # a count after the name is not read
])
def test_accelerator_count(text, n):
    assert accelerator_count(text) == n


def test_field_matches_by_words_in_any_order():
    cfg = {"platform": "2x NVIDIA GeForce RTX 3090"}
    assert field_matches(cfg, "platform", "RTX 3090")
    assert field_matches(cfg, "platform", "3090 rtx")
    assert not field_matches(cfg, "platform", "RTX 3090 Ti")  # every published word must be there
    assert not field_matches(cfg, "platform", "RTX 309")  # words, not substrings


def test_platform_may_be_named_by_the_accelerators_string():
    assert field_matches({"accelerators": "4x NVIDIA L40S"}, "platform", "L40S")
    assert not field_matches({}, "platform", "L40S")


def test_field_matches_any_of_a_list_of_alternatives():
    assert field_matches({"platform": "NVIDIA H200"}, "platform", ["H100", "H200"])
    assert not field_matches({"platform": "NVIDIA A100"}, "platform", ["H100", "H200"])
    assert field_matches({"model": "Qwen3.5-27B"}, "model", ("Qwen3.6-27B", "Qwen3.5-27B"))


def test_model_version_is_a_word_of_its_own():
    assert not field_matches({"model": "Qwen/Qwen3.5-27B"}, "model", "Qwen3.6-27B")
    assert field_matches({"model": "Qwen/Qwen3.6-27B"}, "model", "Qwen3.6-27B")


def test_quantisation_is_found_in_the_model_id():
    assert field_matches({"model": "Qwen/Qwen3.6-35B-A3B-FP8"}, "quantisation", "FP8")
    assert field_matches({"quantisation": "fp8", "model": "x"}, "quantisation", "FP8")
    assert not field_matches({"model": "Qwen/Qwen3.6-35B-A3B-AWQ"}, "quantisation", "FP8")
    assert not field_matches({"model": "Qwen/Qwen3.6-35B-A3B"}, "quantisation", "FP8")


def test_accelerators_match_by_count():
    assert field_matches({"accelerators": "2x NVIDIA RTX 3090"}, "accelerators", 2)
    assert field_matches({"accelerators": "2x NVIDIA RTX 3090"}, "accelerators", "2")
    assert not field_matches({"accelerators": "4x NVIDIA RTX 3090"}, "accelerators", 2)
    assert field_matches({"platform": "H100"}, "accelerators", 1)  # none given: one device


def test_same_model():
    assert same_model("Qwen3.6-35B-A3B", "Qwen/Qwen3.6-35B-A3B-FP8")
    assert same_model("Qwen/Qwen3.6-35B-A3B-FP8", "Qwen3.6-35B-A3B")  # either way round
    assert not same_model("Qwen3.6-35B-A3B", "Qwen3.6-27B")
    assert not same_model("Qwen3.6-27B", "Qwen3.5-27B")
    assert not same_model("", "") and not same_model("", "Qwen3.6-27B") and not same_model(None, "x")


def test_describe_a_config_and_a_setup_entry():
    assert describe(H100_MOE) == "Qwen/Qwen3.6-35B-A3B-FP8, FP8 on NVIDIA H100 80GB HBM3"
    assert describe({"model": "m", "accelerators": "2x RTX 3090"}) == "m on 2x RTX 3090"
    assert describe({}) == "not described"
    assert describe_setup(SETUP["baseline"]) == "Qwen3.6-27B, FP8 on 1x H100 / H200"


def test_describe_a_config_without_model_says_so():
    assert describe({"platform": "NVIDIA H100"}) == "a model it does not name, on NVIDIA H100"
    assert describe_setup({"accelerators": 2}) == "a model it does not name, on 2x"
    assert describe({}) == "not described"


def test_compare_setup_all_roles_match():
    got = compare_setup(SETUP, {"d": H100_DENSE, "m": H100_MOE}, {"d": "baseline", "m": "candidate"})
    assert got.declared and got.comparable and got.any_comparable and got.differing() == []
    assert set(got.roles) == {"baseline", "candidate"}
    assert got.roles["candidate"].data == describe(H100_MOE)
    assert got.roles["candidate"].claim == describe_setup(SETUP["candidate"])


def test_a_differing_field_names_the_config_and_the_field():
    other = dict(H100_MOE, platform="NVIDIA GeForce RTX 3090")
    got = compare_setup(SETUP, {"d": H100_DENSE, "cfg-3090": other}, {"d": "baseline", "cfg-3090": "candidate"})
    assert not got.comparable and got.any_comparable
    assert got.role_ok("baseline") and not got.role_ok("candidate")
    m = got.roles["candidate"]
    assert not m.comparable and m.reason == "cfg-3090: platform differs"
    assert [x.role for x in got.differing()] == ["candidate"]


def test_several_differing_fields_and_configs_are_all_listed():
    bad = {"platform": "A100", "accelerators": "2x A100", "model": "Qwen/Qwen3.5-27B-AWQ"}
    got = compare_setup(SETUP, {"x": bad, "y": H100_DENSE}, {"x": "baseline", "y": "baseline"})
    reason = got.roles["baseline"].reason
    assert reason.startswith("x: ") and "y:" not in reason
    for name in ("platform", "accelerators", "model", "quantisation"):
        assert f"{name} differs" in reason


def test_a_role_absent_from_the_data_is_comparable():
    got = compare_setup(SETUP, {"d": H100_DENSE}, {"d": "baseline"})
    m = got.roles["candidate"]
    assert m.comparable and m.data == "absent" and got.comparable


def test_a_role_the_setup_does_not_name_makes_the_data_only_partly_the_write_ups():
    """Configurations beyond the write-up's (role other) are not its setup, even on its
    platform: a folder of the write-up's model plus four others is no replication."""
    got = compare_setup(SETUP, {"d": H100_DENSE, "z": {"platform": "A100"}, "y": H100_DENSE},
                        {"d": "baseline", "z": "other", "y": "other"})
    assert not got.role_ok("other") and got.roles["other"].claim == "nothing in this role"
    assert got.roles["other"].data == "a model it does not name, on A100; Qwen/Qwen3.6-27B-FP8 on NVIDIA H100 80GB HBM3"
    assert got.role_ok("baseline") and got.any_comparable and not got.comparable


def test_a_config_matches_the_best_of_several_entries():
    setup = {"model": [{"model": "Qwen3.5-27B", "platform": "H100"},
                       {"model": "Qwen3.6-35B-A3B", "quantisation": "FP8"}]}
    ok = compare_setup(setup, {"a": {"model": "Qwen3.5-27B", "platform": "H100"}, "b": H100_MOE},
                       {"a": "model", "b": "model"})
    assert ok.comparable
    assert ok.roles["model"].claim == "Qwen3.5-27B on H100; Qwen3.6-35B-A3B, FP8"
    bad = compare_setup(setup, {"c": {"model": "Qwen3.6-35B-A3B-AWQ", "platform": "A100"}}, {"c": "model"})
    assert bad.roles["model"].reason == "c: quantisation differs"  # the nearer entry's one difference


def test_no_setup_is_undeclared():
    for setup in (None, {}):
        got = compare_setup(setup, {"d": H100_DENSE}, {"d": "baseline"})
        assert isinstance(got, Comparability) and got.declared is False and got.roles == {}


def test_role_data_shows_a_shared_setup_once():
    got = compare_setup(SETUP, {"a": H100_MOE, "b": dict(H100_MOE), "c": dict(H100_MOE, platform="B200")},
                        {"a": "candidate", "b": "candidate", "c": "candidate"})
    data = got.roles["candidate"].data
    assert data.count("Qwen/Qwen3.6-35B-A3B-FP8") == 2 and data.split("; ") == [describe(H100_MOE), describe(
        dict(H100_MOE, platform="B200"))]
    assert got.roles["candidate"].reason == "c: platform differs"


# ---------------------------------------------------------------- Gate


OK = RoleMatch("baseline", True, "d", "w")
BAD = RoleMatch("candidate", False, "Qwen3.6-27B on RTX 3090", "Qwen3.6-35B-A3B on H100")


def test_gate_matches_the_longest_prefix_on_a_word_boundary():
    g = Gate([("h100", OK), ("h100_moe", BAD)])
    assert g.match("h100_moe_c1_tps") is BAD
    assert g.match("h100_moe") is BAD
    assert g.match("h100_c1_tps") is OK
    assert g.match("h100_moex_c1") is OK  # 'h100_moex' is not the h100_moe prefix
    assert g.match("h100x") is None and g.match("strix_pp512") is None


def test_gate_fallback_and_ignored_names():
    fb = RoleMatch("own", False, "mine", "theirs")
    g = Gate([("base", OK)], fallback=fb, ignore=frozenset({"gpu_price"}))
    assert g.match("unprefixed") is fb and g.match("gpu_price") is None and g.match("base_x") is OK


def test_gate_reason_lists_each_differing_role_once():
    g = Gate([("h100_dense", OK), ("h100_moe", BAD)], ignore=frozenset({"h100_moe_price"}))
    assert g.reason(["h100_dense_c1", "param"]) is None
    assert g.reason(["h100_moe_price"]) is None
    why = g.reason(["h100_moe_c1", "h100_moe_c4", "h100_dense_c1"])
    assert why == f"data: {BAD.data}; write-up: {BAD.claim}"

"""benchbook.study.contract: roles, run kinds, value-name keys and sections, on small hand-made
contracts; and the book's own contracts (benchbook.book.registry) checked for consistency."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from benchbook.book.registry import chapters
from benchbook.page.report import PROSE_TAGS
from benchbook.study import contract as C
from benchbook.study.contract import (
    Contract,
    Kind,
    Need,
    Role,
    Section,
    assign_roles,
    available,
    check_runs,
    describe,
    keys_for,
    kind_for,
    role_key,
    run_key,
    slug,
)
from benchbook.study.folder import MANIFEST, FileEntry, Study

ROOT = Path(__file__).parents[2]

KIND_SWEEP = Kind("sweep", "a sweep run", ("runs",), needs=("concurrency", "input_len"), key="c{concurrency}",
                  formats=("vllm-bench",), when=(("concurrency", "set", None),))
KIND_PREFILL = Kind("prefill", "a prefill run", ("runs",), needs=("input_len",), formats=("vllm-bench",),
                    when=(("output_len", "eq", 1),))
KIND_LOG = Kind("server-log", "a server log", ("boot",), key=None, formats=("vllm-server-log",))
DEMO = Contract(
    roles=(Role("base", "base", "the baseline", min=1), Role("cand", "cand", "the candidate"),
           Role("extra", "{config}", "the others", max=None), Role("named", "{name}", "by run name", max=None)),
    kinds=(KIND_PREFILL, KIND_SWEEP, KIND_LOG),
    sections=(
        Section("one", "One stream", (Need(("sweep",), "a sweep run at concurrency 1", where=(("concurrency", 1),)),
                                      Need(("prefill",), "a prefill run")), any_of=True, how="Add a run."),
        Section("both", "Base and candidate", (Need(("sweep",), "a base sweep", roles=("base",)),
                                               Need(("sweep",), "a candidate sweep", roles=("cand",))),
                how="Add a candidate."),
        Section("many", "Concurrency", (Need(("sweep",), "two sweeps", min_runs=2),)),
        Section("spread", "Spread", (Need(("sweep", "server-log"), "two configurations", min_configs=2),)),
        Section("cross", "Other chapter", (), reads=("other_dir",), how="Give the other folder."),
    ),
)


def study(configs: dict, files: list[FileEntry], root: Path = Path("/data/demo")) -> Study:
    return Study("demo", "Demo", "v1", False, root, configs=configs, files=files)


def entry(path, config, **ctx) -> FileEntry:
    return FileEntry(path, config, ctx)


# ---------------------------------------------------------------- roles


def test_contract_lookups_and_unknown_section():
    assert DEMO.role("cand").title == "the candidate" and DEMO.role("nobody") is None
    assert DEMO.kind("server-log") is KIND_LOG and DEMO.kind("sweep-x") is None
    assert DEMO.section("many").needs[0].min_runs == 2
    with pytest.raises(KeyError, match="no section 'zz'.*one, both, many"):
        DEMO.section("zz")


def test_assign_roles_reads_the_role_key_of_each_config():
    roles, problems = assign_roles(study({"a": {"role": "base"}, "b": {"role": "extra"}, "c": {"role": "extra"}},
                                         []), DEMO)
    assert problems == []
    assert roles.of_config == {"a": "base", "b": "extra", "c": "extra"}
    assert roles.configs("extra") == ["b", "c"] and roles.first("extra") == "b" and roles.first("cand") is None


def test_missing_and_unknown_roles_name_the_manifest_and_the_config():
    s = study({"a": {"role": "base"}, "nameless": {"platform": "X"}, "odd": {"role": "judge"}}, [])
    roles, problems = assign_roles(s, DEMO)
    where = str(Path("/data/demo") / MANIFEST)
    none = [p for p in problems if "configs.nameless" in p]
    bad = [p for p in problems if "configs.odd" in p]
    assert len(none) == 1 and none[0].startswith(where) and "no 'role'" in none[0] and "base, cand" in none[0]
    assert len(bad) == 1 and bad[0].startswith(where) and "'judge'" in bad[0]
    assert roles.of_config == {"a": "base"}  # neither unnamed nor unknown roles are assigned


def test_role_counts_below_min_and_above_max_are_problems():
    _, problems = assign_roles(study({"a": {"role": "cand"}, "b": {"role": "cand"}}, []), DEMO)
    text = "\n".join(problems)
    assert "needs 1 configuration(s) with role 'base'" in text and "found 0" in text
    assert "at most 1 configuration(s) may have role 'cand'" in text and "a, b" in text


def test_default_role_applies_to_a_config_that_names_none():
    c = Contract(roles=(Role("model", "{config}", "a model", max=None),), kinds=(), default_role="model")
    roles, problems = assign_roles(study({"x": {}, "y": {"role": "model"}}, []), c)
    assert problems == [] and roles.configs("model") == ["x", "y"]


# ---------------------------------------------------------------- runs and keys


def test_check_runs_names_the_file_entry_and_the_missing_key():
    s = study({"a": {"role": "base"}}, [entry("raw/1.json", "a", concurrency=4),
                                        entry("raw/2.json", "a", kind="nope"),
                                        entry("raw/3.json", "a", kind="sweep", input_len=100),
                                        entry("raw/4.json", "a", kind="sweep", concurrency=2, input_len=100)])
    problems = check_runs(s, DEMO)
    assert len(problems) == 3
    assert "files[0] (raw/1.json)" in problems[0] and "no 'kind'" in problems[0] and "sweep" in problems[0]
    assert "files[1] (raw/2.json)" in problems[1] and "'nope'" in problems[1]
    assert "files[2] (raw/3.json)" in problems[2] and "needs 'concurrency'" in problems[2]


def test_check_runs_takes_a_missing_key_from_the_file_or_says_it_is_null_there():
    s = study({"a": {"role": "base"}}, [entry("raw/1.json", "a", kind="sweep", input_len=100),
                                        entry("raw/2.json", "a", kind="sweep", input_len=100)])
    runs = pd.DataFrame({"source_file": ["raw/1.json", "raw/2.json"], "max_concurrency": [8.0, None]})
    problems = check_runs(s, DEMO, runs)
    assert len(problems) == 1 and "raw/2.json" in problems[0]
    assert "max_concurrency is null" in problems[0] and "set 'concurrency' in study.yml" in problems[0]
    filled = C.filled(s, runs)
    assert filled[0].context["concurrency"] == 8 and isinstance(filled[0].context["concurrency"], int)
    assert "concurrency" not in filled[1].context


def test_check_runs_requires_the_fields_of_the_key_template():
    k = Kind("short", "short prompts", ("runs",), key="short{concurrency}_{seed}")
    c = Contract(roles=DEMO.roles, kinds=(k,))
    problems = check_runs(study({"a": {}}, [entry("raw/1.json", "a", kind="short", concurrency=1)]), c)
    assert len(problems) == 1 and "needs 'seed'" in problems[0]


@pytest.mark.parametrize("kind, ctx, want", [
    (KIND_SWEEP, {"concurrency": 16}, "c16"),
    (KIND_SWEEP, {"concurrency": 16.0}, "c16"),  # a float from a table is written as an integer
    (KIND_PREFILL, {}, "prefill"),  # no template: the kind's name
    (Kind("decode-long", "", ()), {}, "decode_long"),
    (KIND_LOG, {"concurrency": 3}, ""),  # key None: the role key alone
    (Kind("rate", "", (), key="r{request_rate}"), {"request_rate": 0.5}, "r0_5"),
])
def test_run_key(kind, ctx, want):
    assert run_key(kind, ctx) == want


def test_slug_and_role_key():
    assert slug("Qwen/Qwen3.6-35B A3B!") == "qwen_qwen3_6_35b_a3b"
    assert slug("--x--") == "x" and slug(12) == "12"
    assert role_key(DEMO.role("base"), "cfg-1", {}) == "base"
    assert role_key(DEMO.role("extra"), "ROCm-7.1 build", {}) == "rocm_7_1_build"
    assert role_key(DEMO.role("named"), "cfg", {"name": "Agent B"}) == "agent_b"
    assert role_key(DEMO.role("named"), "cfg-x", {}) == "cfg_x"  # no name: the config id


def test_keys_for_prefixes_role_and_run_key():
    s = study({"a": {"role": "base"}, "b": {"role": "cand"}, "Big-One": {"role": "extra"}},
              [entry("raw/1.json", "a", kind="sweep", concurrency=1, input_len=1),
               entry("raw/2.json", "b", kind="sweep", concurrency=4.0, input_len=1),
               entry("raw/3.log", "Big-One", kind="server-log"),
               entry("raw/4.json", "a", kind="prefill", input_len=1)])
    roles, _ = assign_roles(s, DEMO)
    keys = keys_for(s, DEMO, roles)
    assert keys == {(0, None): "base_c1", (1, None): "cand_c4", (2, None): "big_one", (3, None): "base_prefill"}


def test_keys_for_tiebreak_separates_seeds_then_names_what_differs_then_numbers_repeats():
    s = study({"a": {"role": "base"}},
              [entry("raw/1.json", "a", kind="sweep", concurrency=1, input_len=1, seed=1),
               entry("raw/2.json", "a", kind="sweep", concurrency=1, input_len=1, seed=2),
               entry("raw/3.json", "a", kind="sweep", concurrency=8, input_len=1, seed=5),
               entry("raw/4.json", "a", kind="sweep", concurrency=8, input_len=1, seed=5),
               entry("raw/5.json", "a", kind="sweep", concurrency=4, input_len=1),
               entry("raw/6.json", "a", kind="sweep", concurrency=4, input_len=4096)])
    roles, _ = assign_roles(s, DEMO)
    keys = keys_for(s, DEMO, roles)
    assert keys[(0, None)] == "base_c1_s1" and keys[(1, None)] == "base_c1_s2"
    assert (keys[(2, None)], keys[(3, None)]) == ("base_c8_rep1", "base_c8_rep2")  # one run set
    assert (keys[(4, None)], keys[(5, None)]) == ("base_c4_input_len_1", "base_c4_input_len_4096")


def test_keys_for_skips_runs_without_a_known_role_or_kind():
    s = study({"a": {"role": "base"}, "z": {}},
              [entry("raw/1.json", "z", kind="sweep", concurrency=1), entry("raw/2.json", "a", kind="odd"),
               entry("raw/3.json", "a", kind="sweep")])  # no concurrency: reported by check_runs instead
    keys = keys_for(s, DEMO, assign_roles(s, DEMO)[0])
    assert keys == {}


# ---------------------------------------------------------------- sections


def runs_table(*rows) -> pd.DataFrame:
    return pd.DataFrame([dict(zip(("kind", "role", "config", "concurrency"), r)) for r in rows])


def test_available_with_every_need_met():
    runs = runs_table(("sweep", "base", "a", 1), ("sweep", "cand", "b", 1), ("server-log", "extra", "c", None))
    got = available(DEMO, runs, {"other_dir": True})
    assert got == {"one": None, "both": None, "many": None, "spread": None, "cross": None}


def test_available_says_what_is_lacking_and_how():
    runs = runs_table(("sweep", "base", "a", 4), ("sweep", None, "b", 1))  # a run of no role does not count
    got = available(DEMO, runs)
    assert got["one"].lacking == ["a sweep run at concurrency 1", "a prefill run"]
    assert got["one"].text() == "This section needs a sweep run at concurrency 1; a prefill run. Add a run."
    assert got["both"].lacking == ["a candidate sweep"] and got["both"].text().endswith("Add a candidate.")
    assert got["many"].text() == "This section needs two sweeps."  # no `how`: nothing appended
    assert got["spread"].lacking == ["two configurations"]
    assert got["cross"].lacking == ["the data folder of parameter other_dir"]
    assert (got["cross"].text().startswith("This section needs the data folder")
            and "Give the other" in got["cross"].text())


def test_any_of_needs_only_one_of_its_needs():
    got = available(DEMO, runs_table(("prefill", "cand", "b", None)))
    assert got["one"] is None and got["both"] is not None


def test_where_matches_numbers_as_numbers():
    got = available(DEMO, runs_table(("sweep", "base", "a", "1.0")))  # a context value read as text
    assert got["one"] is None


def test_min_configs_counts_builds_of_one_file():
    one = runs_table(("server-log", "extra", "a", None), ("sweep", "extra", "a", 2))
    assert available(DEMO, one)["spread"] is not None
    assert available(DEMO, one.assign(builds=[2, 1]))["spread"] is None


def test_no_runs_means_every_section_with_needs_is_missing():
    got = available(DEMO, pd.DataFrame(), {"other_dir": True})
    assert got["cross"] is None and all(got[s] is not None for s in ("one", "both", "many", "spread"))


# ---------------------------------------------------------------- kind_for and describe


@pytest.mark.parametrize("fmt, ctx, want", [
    ("vllm-bench-serve", {"output_len": 1, "concurrency": 4}, "prefill"),  # the first kind whose conditions hold
    ("vllm-bench-serve", {"output_len": 128, "concurrency": 4}, "sweep"),
    ("vllm-bench-serve", {"output_len": 128}, None),  # no condition holds
    ("vllm-server-log", {}, "server-log"),  # no conditions: always
    ("llama-bench-jsonl", {"output_len": 1}, None),  # no kind reads this format
])
def test_kind_for(fmt, ctx, want):
    got = kind_for(DEMO, fmt, ctx)
    assert (got.name if got else None) == want


@pytest.mark.parametrize("op, value, have, holds", [
    ("eq", 1, 1, True), ("eq", 1, 2, False), ("le", 32, 32, True), ("le", 32, 33, False),
    ("ge", 1024, 1024, True), ("ge", 1024, 10, False), ("gt", 1, 1, False), ("gt", 1, 2, True),
    ("set", None, 0, True), ("set", None, None, False), ("unset", None, None, True), ("unset", None, 5, False),
    ("le", 32, None, False), ("gt", 1, None, False),  # an absent value never satisfies a comparison
])
def test_kind_for_conditions(op, value, have, holds):
    c = Contract(roles=(), kinds=(Kind("k", "", (), formats=("f",), when=(("x", op, value),)),))
    assert (kind_for(c, "f", {"x": have}) is not None) == holds


def test_describe_lists_roles_kinds_and_sections():
    text = describe(DEMO)
    lines = text.splitlines()
    assert lines[0].startswith("Roles")
    assert re.search(r"^\s+base\s+1\s+configuration\(s\): the baseline$", text, re.M)
    assert re.search(r"^\s+cand\s+0-1\s+configuration\(s\)", text, re.M)
    assert re.search(r"^\s+extra\s+0\+\s+configuration\(s\)", text, re.M)
    assert "a sweep run (tables: runs; needs concurrency, input_len)" in text
    assert "One stream: a sweep run at concurrency 1 or a prefill run" in text
    assert "Base and candidate: a base sweep; a candidate sweep" in text
    assert "Other chapter: nothing beyond the data folder; the data folder of parameter other_dir" in text


# ---------------------------------------------------------------- the book's contracts


SPECS = [c for c in chapters() if c.contract is not None]
PICK_RULES = {"first", "second", "rest", "moe", "dense", "speculative", "plain", "setup"}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_registry_contract_is_consistent(spec):
    con = spec.contract
    kinds, roles = {k.name for k in con.kinds}, {r.name for r in con.roles}
    assert len(kinds) == len(con.kinds) and len(roles) == len(con.roles)
    ids = [s.id for s in con.sections]
    assert len(ids) == len(set(ids)), ids
    fixed = [r.key for r in con.roles if r.key not in ("{config}", "{name}")]
    assert len(fixed) == len(set(fixed)), fixed
    for sec in con.sections:
        for need in sec.needs:
            assert set(need.kinds) <= kinds, (sec.id, need.kinds)
            assert set(need.roles) <= roles, (sec.id, need.roles)
        # a folder a section reads is declared, or the page opts out of it (parameter None)
        opted_out = {k for k, v in spec.parameters.items() if v is None}
        assert set(sec.reads) <= set(spec.reads) | opted_out, (sec.id, sec.reads)
    for k in con.kinds:
        assert all(op in C._OPS for _, op, _ in k.when), k.name
    for r in con.roles:
        assert r.max is None or r.min <= r.max
        for rule in (part for both in r.pick for part in both.split("+")):
            if rule.startswith("kind:"):
                assert rule[5:] in kinds, (r.name, rule)
            elif rule.startswith(("model-of:", "not-model-of:")):
                assert rule.split(":", 1)[1] in roles, (r.name, rule)
            else:
                assert rule in PICK_RULES, (r.name, rule)
    assert con.default_role is None or con.default_role in roles


def test_registry_chapter_ids_reads_uses_and_notebooks():
    ids = [c.id for c in chapters()]
    assert len(ids) == len(set(ids))
    for spec in chapters():
        assert set(spec.reads.values()) <= set(ids), spec.id
        assert set(spec.uses) <= set(ids) and spec.id not in spec.uses, spec.id
        assert (ROOT / "notebooks" / f"{spec.notebook_name}.md").is_file(), spec.notebook_name


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_notebook_needs_tags_name_sections_of_the_contract(spec):
    text = (ROOT / "notebooks" / f"{spec.notebook_name}.md").read_text(encoding="utf-8")
    tags = {t for line in text.splitlines() if "tags" in line for t in re.findall(r"needs-([a-z0-9-]+)", line)}
    assert tags, f"{spec.notebook_name}.md tags no section"
    # the report's own conditions of prose (benchbook.page.report.prose_conditions): the write-up's
    # results, data of another setup, another chapter's folder kept apart or not
    unknown = tags - {s.id for s in spec.contract.sections} - set(PROSE_TAGS)
    assert not unknown, f"{spec.notebook_name}.md: needs-{sorted(unknown)} name no section of {spec.id}"

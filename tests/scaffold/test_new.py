"""`benchbook new` (benchbook.scaffold.new): a data folder made from a user's raw files.

Hand-made bench JSONs (tests/bad_corpus.py) pin the rules: kinds by each Kind.when, roles
by each Role.pick. The real files of ../shared/samples/real (SOURCES.md) check the same on
what the tools wrote; expected values are read from those files here, not written down.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from bad_corpus import DENSE, MOE, PACKAGE_JSON, bench
from benchbook.cli import main
from benchbook.scaffold.new import NewError, _roles, new_study
from benchbook.study.contract import Contract, Role
from benchbook.study.folder import CHECKSUMS, MANIFEST, load_study
from realdata import DGX, LHL, NERDALERT, REAL, needs_shared

LOGS = REAL / "vllm-server-logs"




def new(chapter: str, out: Path, files) -> dict:
    new_study(chapter, out, files, log=lambda msg: None)
    return yaml.safe_load((out / MANIFEST).read_text(encoding="utf-8"))


def kinds_by_name(doc: dict) -> dict[str, str | None]:
    return {Path(f["path"]).name: f.get("kind") for f in doc["files"]}


def role_of_model(doc: dict) -> dict[str, str]:
    return {c.get("model"): c["role"] for c in doc["configs"].values()}


# ---------------------------------------------------------------- the folder


def test_files_are_copied_read_only_keeping_their_layout_with_checksums(tmp_path):
    src = tmp_path / "in"
    files = [bench(src / "dense", "result.json"), bench(src / "moe", "result.json", model=MOE)]
    out = tmp_path / "out"
    doc = new("3090-dense-vs-sparse", out, files)
    assert [f["path"] for f in doc["files"]] == ["raw/dense/result.json", "raw/moe/result.json"]
    sums = dict(reversed(line.split("  ", 1)) for line in (out / CHECKSUMS).read_text().splitlines())
    assert set(sums) == {"raw/dense/result.json", "raw/moe/result.json"}
    for f in files:
        copy = out / "raw" / f.parent.name / f.name
        assert copy.read_bytes() == f.read_bytes()
        assert copy.stat().st_mode & 0o222 == 0  # read-only
        assert sums[f"raw/{f.parent.name}/{f.name}"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert sorted(p.name for p in out.iterdir()) == sorted(["raw", MANIFEST, CHECKSUMS])
    study = load_study(out)  # validates the manifest and verifies every checksum
    assert study.id == "3090-dense-vs-sparse" and len(study.files) == 2


def test_an_existing_empty_folder_is_accepted(tmp_path):
    (tmp_path / "out").mkdir()
    assert new("h100-dense-vs-moe-mtp", tmp_path / "out", [bench(tmp_path, "a.json")])["files"]


# ---------------------------------------------------------------- kinds and roles


@pytest.mark.parametrize("chapter, cases", [
    ("h100-dense-vs-moe-mtp", {"p.json": (2048, 1, 4, "prefill"),  # output_len 1 comes before a set concurrency
                               "s.json": (100, 3, 4, "sweep")}),
    ("3090-dense-vs-sparse", {"p.json": (2048, 1, 1, "prefill"), "c.json": (100, 3, 4, "concurrent"),
                              "t.json": (100, 3, 1, "ttft-short"), "l.json": (2048, 256, 1, "decode-long"),
                              "d.json": (100, 256, 1, "decode-single")}),
    ("gb10-mtp", {"a.json": (512, 512, 1, "test-a"), "b.json": (8192, 256, 4, "test-b"),
                  "c.json": (2048, 512, 16, "test-c"), "d.json": (2048, 256, 2, "test-d"),
                  "x.json": (100, 3, 8, "other-bench")}),  # another workload: listed, compared with nothing
])
def test_kinds_by_the_chapter_s_conditions(tmp_path, chapter, cases):
    files = [bench(tmp_path / "in", name, i, o, c) for name, (i, o, c, _) in cases.items()]
    doc = new(chapter, tmp_path / "out", files)
    assert kinds_by_name(doc) == {name: want for name, (*_, want) in cases.items()}
    for i, f in enumerate(doc["files"]):
        i_, o_, c_, want = cases[Path(f["path"]).name]
        assert (f["input_len"], f["output_len"], f["concurrency"]) == (i_, o_, c_)  # read from the JSON
        no_kind = [t for t in doc["todo"] if t.startswith(f"files[{i}].kind:")]
        assert bool(no_kind) == (want is None)
        if no_kind:
            assert "test-a, test-b, test-c, test-d" in no_kind[0]


def test_roles_by_order_first_second_rest(tmp_path):
    models = ["org/model-a", "org/model-b", "org/model-c", "org/model-d"]
    doc = new("h100-dense-vs-moe-mtp", tmp_path / "out",
              [bench(tmp_path / "in", f"{n}.json", model=m) for n, m in enumerate(models)])
    assert list(role_of_model(doc).items()) == [("org/model-a", "baseline"), ("org/model-b", "candidate"),
                                                ("org/model-c", "other"), ("org/model-d", "other")]
    assert not [t for t in doc["todo"] if ".role:" in t]


def test_roles_by_model_name_and_the_role_s_maximum(tmp_path):
    files = [bench(tmp_path / "in", "d1.json", model=DENSE), bench(tmp_path / "in", "m.json", model=MOE),
             bench(tmp_path / "in", "d2.json", model="Qwen/Qwen3-8B")]
    doc = new("3090-dense-vs-sparse", tmp_path / "out", files)
    assert role_of_model(doc) == {DENSE: "dense", MOE: "sparse", "Qwen/Qwen3-8B": "TODO"}  # one dense at most
    todo_cid = next(c for c, v in doc["configs"].items() if v["model"] == "Qwen/Qwen3-8B")
    assert any(t.startswith(f"configs.{todo_cid}.role:") and "dense, sparse" in t for t in doc["todo"])


def test_every_pick_rule_and_rules_that_wait_for_another_role():
    """All of Role.pick's rules on one contract: 'model-of:mtp' is listed before mtp, so it waits a pass."""
    def config(model, kind="sweep", speculative=None):
        return {"facts": {"model": model, "speculative": speculative}, "units": [SimpleNamespace(kind=kind)]}

    configs = {"a": config("org/Qwen3-30B-A3B", speculative="mtp"), "b": config("org/Qwen3-8B"),
               "e": config("org/Mixtral-8x7B"), "c": config("org/Qwen3-30B-A3B", speculative="None"),
               "d": config(None, kind="gpu-log"), "f": config("org/Other-7B"), "g": config("org/Other-9B"),
               "h": config("org/More-1B"), "i": config("org/Last-1B")}
    roles = (Role("same", "s", "", pick=("model-of:mtp",)), Role("mtp", "m", "", pick=("speculative",)),
             Role("gpu", "g", "", pick=("kind:gpu-log",)), Role("dense", "d", "", pick=("dense",)),
             Role("sparse", "p", "", pick=("moe",)), Role("lead", "l", "", pick=("unknown-rule", "first")),
             Role("next", "n", "", pick=("second",)), Role("other", "o", "", max=2, pick=("rest",)))
    assert _roles([], configs, Contract(roles=roles, kinds=())) == {
        "a": "mtp", "d": "gpu", "b": "dense", "e": "sparse", "c": "same",
        "f": "lead", "g": "next", "h": "other", "i": "other"}
    plain = Contract(roles=(Role("control", "c", "", max=None, pick=("plain",)),
                            Role("first", "f", "", pick=("first", "rest"))), kinds=())
    assert _roles([], {"x": config("m", speculative="mtp"), "y": config("m"), "z": config("n", speculative="")},
                  plain) == {"y": "control", "z": "control", "x": "first"}
    assert _roles([], {}, plain) == {}


def test_rules_by_the_write_up_s_setup_and_by_another_role_s_model():
    """'setup' picks the write-up's platform, model and weights for the role; 'not-model-of'
    waits for that role and then takes other models; 'a+b' needs both. With no setup (outside
    a project) the rule 'setup' picks nothing."""
    def config(model, quant, speculative=None, platform="DGX Spark NVIDIA GB10"):
        return {"facts": {"model": model, "quantisation": quant, "platform": platform, "speculative": speculative},
                "units": [SimpleNamespace(kind="sweep")]}

    setup = {"vanilla": {"platform": ["DGX Spark", "GB10"], "model": "Qwen3.6-35B-A3B", "quantisation": "FP8"},
             "control": {"platform": "GB10", "model": "Qwen3.5-35B-A3B", "quantisation": "FP8"}}
    contract = Contract(roles=(
        Role("control", "c", "", pick=("setup+plain", "plain+not-model-of:mtp")),
        Role("vanilla", "v", "", pick=("model-of:mtp+plain", "setup+plain")),
        Role("mtp", "m", "", pick=("speculative",)), Role("other", "o", "", max=None, pick=("rest",))), kinds=())
    five = {"bf16": config("Qwen/Qwen3.6-35B-A3B", "BF16"), "fp8": config("Qwen/Qwen3.6-35B-A3B-FP8", "FP8"),
            "h100": config("Qwen/Qwen3.6-35B-A3B-FP8", "FP8", platform="H100"),
            "dense": config("Qwen/Qwen3.6-27B-FP8", "FP8")}
    assert _roles([], five, contract, setup) == {"fp8": "vanilla", "bf16": "other", "h100": "other",
                                                 "dense": "other"}
    assert _roles([], five, contract) == {c: "other" for c in five}  # no setup: nothing by 'setup'
    with_mtp = {"old": config("Qwen/Qwen3.5-35B-A3B-FP8", "FP8"), "mtp": config("Qwen/Qwen3.6-27B", "BF16", "mtp"),
                "van": config("Qwen/Qwen3.6-27B", "BF16"), "x": config("org/X", "BF16")}
    # control: the setup's model first; without it, a plain model other than the MTP one
    assert _roles([], with_mtp, contract, setup) == {"old": "control", "mtp": "mtp", "van": "vanilla", "x": "other"}
    del with_mtp["old"]
    assert _roles([], with_mtp, contract, setup) == {"mtp": "mtp", "van": "vanilla", "x": "control"}


def test_runs_of_one_model_are_one_configuration(tmp_path):
    files = [bench(tmp_path / "in", f"{c}.json", c=c, model=MOE) for c in (1, 4, 16)]
    doc = new("h100-dense-vs-moe-mtp", tmp_path / "out", files)
    (cid,) = doc["configs"]
    assert {f["config"] for f in doc["files"]} == {cid} and doc["configs"][cid]["quantisation"] == "FP8"
    assert len({f["name"] for f in doc["files"]}) == 3  # run names stay unique


# ---------------------------------------------------------------- what the files do not say


def test_todo_lists_the_facts_no_file_records(tmp_path, capsys):
    out = tmp_path / "out"
    doc = new("h100-dense-vs-moe-mtp", out, [bench(tmp_path, "a.json")])
    cid = next(iter(doc["configs"]))
    todo = doc["todo"]
    assert all(t.startswith(("configs.", "files[")) for t in todo), todo
    for key in ("platform", "accelerators", "engine"):  # a bench JSON names no GPU and no server
        assert any(t.startswith(f"configs.{cid}.{key}:") for t in todo), key
    assert not any(t.startswith(f"configs.{cid}.model:") for t in todo)  # the JSON names it
    assert not any(t.split(":")[0].endswith((".dataset", ".seed")) for t in todo)  # a sweep run needs neither
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sum(f"to do: {t}" in printed for t in todo) == len(todo)


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("case", ["not-empty", "unknown-chapter", "synthesis", "missing", "folder", "twice",
                                  "unsupported"])
def test_refusals_are_clear_errors(tmp_path, capsys, case):
    good = bench(tmp_path / "in", "a.json")
    out, chapter, files = tmp_path / "out", "h100-dense-vs-moe-mtp", [good]
    expect = {"not-empty": "exists and is not empty", "unknown-chapter": "no chapter 'nope'; known: h100",
              "synthesis": "reads other chapters' outputs", "missing": "no such file",
              "folder": "is a folder with no files in it",
              "twice": "two files would both be raw/a.json", "unsupported": "unrecognised format"}[case]
    if case == "not-empty":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    chapter = {"unknown-chapter": "nope", "synthesis": "synthesis"}.get(case, chapter)
    (tmp_path / "empty").mkdir()
    files = {"missing": [good, tmp_path / "gone.json"], "folder": [tmp_path / "empty"], "twice": [good, good],
             "unsupported": [tmp_path / "in" / "package.json"]}.get(case, files)
    (tmp_path / "in" / "package.json").write_bytes(PACKAGE_JSON)
    with pytest.raises(NewError, match=expect):
        new_study(chapter, out, files, log=lambda m: None)
    assert main(["new", chapter, str(out), *map(str, files)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expect in err and "Traceback" not in err
    if case == "unsupported":
        assert "package.json" in err and "no file of a known format" in err
        assert not out.exists()  # nothing half-made is left behind
    if case == "not-empty":
        assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_cli_new_prints_what_it_made_and_the_next_steps(tmp_path, capsys):
    out = tmp_path / "mine"
    assert main(["new", "gb10-mtp", str(out), str(bench(tmp_path, "a.json", 512, 512, 1, model=MOE))]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out / MANIFEST}: 1 run(s) in 1 configuration(s) for chapter gb10-mtp" in printed
    assert "(test-a)" in printed
    nxt = printed.split("next:\n", 1)[1].splitlines()
    assert nxt[0].strip() == f"benchbook validate {out}" and nxt[1].strip() == f"benchbook run gb10-mtp --data {out}"


# ---------------------------------------------------------------- found by these tests, fixed


def test_a_single_fixed_rate_run_is_kind_rate(tmp_path):
    doc = new("h100-dense-vs-moe-mtp", tmp_path / "out", [bench(tmp_path, "r.json", c=None, request_rate=5.0)])
    assert doc["files"][0].get("kind") == "rate" and doc["files"][0].get("request_rate") == 5


def test_a_run_without_a_kind_is_a_to_do_until_the_to_do_is_dropped(tmp_path, capsys):
    out = tmp_path / "out"
    doc = new("power-sweep", out, [bench(tmp_path, "x.json", 100, 3, 8, model=MOE)])  # it reads logs only
    assert "kind" not in doc["files"][0]
    assert main(["validate", str(out)]) == 0  # what `new` wrote, validate accepts: the to-do is listed
    assert "to do: files[0].kind: no kind of this chapter matches" in capsys.readouterr().out
    doc["todo"] = [t for t in doc["todo"] if not t.startswith("files[0].kind")]
    (out / MANIFEST).write_text(yaml.safe_dump(doc))
    assert main(["validate", str(out)]) == 1  # a user who drops the to-do without a kind is told
    assert "files[0] (raw/x.json): no 'kind'" in capsys.readouterr().err


# ---------------------------------------------------------------- real files


@needs_shared
def test_real_bench_jsonl_runs_grouped_by_deployment(tmp_path, capsys):
    lines = [json.loads(x) for x in NERDALERT.read_text().splitlines() if x.strip()]
    deployments = list(dict.fromkeys(o["deployment"] for o in lines))
    out = tmp_path / "out"
    doc = new("h100-dense-vs-moe-mtp", out, [NERDALERT])
    configs = doc["configs"]
    assert [c["deployment"] for c in configs.values()] == deployments
    assert [c["role"] for c in configs.values()] == ["baseline", "candidate"] + ["other"] * (len(deployments) - 2)
    (entry,) = doc["files"]
    assert len(entry["runs"]) == len(lines)
    for run, obj in zip(entry["runs"], lines):
        assert configs[run["config"]]["deployment"] == obj["deployment"]
        assert obj["max_concurrency"] is None and run["kind"] == "rate"
        assert run["request_rate"] == float(obj["request_rate"])
    assert main(["validate", str(out)]) == 0


@needs_shared
def test_real_llama_bench_files_one_configuration_per_build(tmp_path):
    files = sorted((REAL / "llama-bench").glob("llama-cpp-fix-wmma_*.jsonl"))
    doc = new("strix-halo-baseline", tmp_path / "out", files)
    assert len(doc["configs"]) == len(files) and all(c["role"] == "backend" for c in doc["configs"].values())
    for f in doc["files"]:
        first = json.loads((tmp_path / "out" / f["path"]).read_text().splitlines()[0])
        assert f["kind"] == "llama-bench"
        assert first["build_commit"] in doc["configs"][f["config"]]["build"]
    assert main(["validate", str(tmp_path / "out")]) == 0


@needs_shared
def test_real_logs_roles_by_model_and_by_speculative_decoding(tmp_path):
    doc = new("3090-dense-vs-sparse", tmp_path / "ds",
              [LOGS / "vllm-0.11.0_4x3090_qwen3-vl-30b_excerpt.log", LOGS / "club-3090_74_dual-nvlink.log"])
    by_model = role_of_model(doc)
    assert by_model.pop("Qwen3-VL-30B-A3B-Instruct") == "sparse" and by_model == {None: "TODO"}  # names no model
    assert any(".role: no rule of this chapter picks it" in t for t in doc["todo"])
    doc = new("gb10-mtp", tmp_path / "gb",
              [LOGS / "club-3090_105_2x3090_vllm0.20.1_mtp.log", LOGS / "vllm_43295_mtp-slow.log"])
    for c in doc["configs"].values():
        spec = str(c.get("speculative") or "none").lower() != "none"
        # a log that names no model is neither the MTP model without MTP nor another model:
        # it is not guessed to be the control, only shown where every configuration is
        assert c["role"] == ("mtp" if spec else "other" if not c.get("model") else "control"), c
    assert set(kinds_by_name(doc).values()) == {"server-log"}


@needs_shared
def test_real_log_beside_an_nvidia_smi_log_shares_its_configuration_not_its_date(tmp_path):
    src = tmp_path / "in"
    for folder, f in (("run1", LOGS / "club-3090_105_2x3090_vllm0.20.1_mtp.log"),
                      ("run1", REAL / "nvidia-smi" / "RdrigoMachado_gpu_power.csv"),
                      ("run2", LOGS / "vllm_43295_mtp-slow.log")):
        (src / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, src / folder / f.name)
    doc = new("power-sweep", tmp_path / "out", sorted(src.rglob("*.*")))
    f = {Path(e["path"]).name: (i, e) for i, e in enumerate(doc["files"])}
    assert {e["path"].split("/")[1] for _, e in f.values()} == {"run1", "run2"}
    (_, log1), (_, smi), (i2, log2) = (f["club-3090_105_2x3090_vllm0.20.1_mtp.log"], f["RdrigoMachado_gpu_power.csv"],
                                       f["vllm_43295_mtp-slow.log"])
    assert (log1["kind"], smi["kind"], log2["kind"]) == ("server-log", "gpu-log", "server-log")
    assert log1["config"] == smi["config"] != log2["config"]
    csv_date = (src / "run1" / "RdrigoMachado_gpu_power.csv").read_text().splitlines()[1][:10].replace("/", "-")
    assert smi["date"] == csv_date and "date" not in log1 and "date" not in log2  # a log without a year
    i1 = f["club-3090_105_2x3090_vllm0.20.1_mtp.log"][0]  # does not borrow the CSV's: it is asked for
    assert all(any(t.startswith(f"files[{i}].date:") for t in doc["todo"]) for i in (i1, i2))
    assert not any(".config: an nvidia-smi log alone" in t for t in doc["todo"])  # paired by its folder


def test_files_from_unrelated_folders_keep_their_names_not_the_machine_s_layout(tmp_path):
    """Files whose only shared folder is the root keep their names; clashing names their folder's."""
    import tempfile

    other = Path(tempfile.mkdtemp(dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        a = bench(tmp_path, "a.json")
        (other / "x").mkdir()
        b = bench(other / "x", "a.json", 1024, 128, 4)
        doc = new("h100-dense-vs-moe-mtp", tmp_path / "out", [a, b])
        paths = sorted(f["path"] for f in doc["files"])
        assert paths == sorted([f"raw/{tmp_path.name}/a.json", "raw/x/a.json"]), paths
    finally:
        shutil.rmtree(other)


# ---------------------------------------------------------------- llama-bench: what new tells apart, what it asks

B6865 = LHL / "jsonl_rocm_b6865_gpt-oss-20b.jsonl"


def llama_file(path: Path, rows=slice(None), **fields) -> Path:
    """Test rows of the real b6865 `llama-bench -o jsonl` file with some fields rewritten in
    place, each value as llama-bench prints it (a JSON literal), written to path."""
    lines = B6865.read_text().splitlines()[rows]
    for key, value in fields.items():
        lines = [re.sub(rf'"{key}": ("[^"]*"|[^,]+)', lambda m: f'"{key}": {json.dumps(value)}', ln) for ln in lines]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def llama_csv(path: Path, header_only: bool = False) -> Path:
    """The real b6865 records as `llama-bench -o csv` prints them: the field names, then every
    value quoted, bools as 0/1; `header_only`: what it leaves when the model does not load."""
    rows = [json.loads(x) for x in B6865.read_text().splitlines()]
    keys = [k for k in rows[0] if not k.startswith("samples_")]
    value = lambda v: str(int(v)) if isinstance(v, bool) else str(v)  # noqa: E731
    lines = [",".join(keys)] + ([] if header_only else [",".join(f'"{value(r[k])}"' for k in keys) for r in rows])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def config_of(doc: dict, name: str) -> str:
    return next(f["config"] for f in doc["files"] if Path(f["path"]).name == name)


def name_todos(doc: dict) -> list[str]:
    return [t for t in doc["todo"] if "their names differ" in t]


@needs_shared
@pytest.mark.parametrize("failed_first", [True, False])
def test_header_only_llama_csv_is_a_configuration_of_its_own(tmp_path, failed_first):
    src = tmp_path / "in"
    files = [llama_csv(src / "failed.csv", header_only=True), llama_file(src / "gpt-oss.jsonl")]
    doc = new("strix-halo-baseline", tmp_path / "out", files if failed_first else files[::-1])
    failed, real = config_of(doc, "failed.csv"), config_of(doc, "gpt-oss.jsonl")
    assert failed != real and len(doc["configs"]) == 2
    assert doc["configs"][real]["model"] == "gpt-oss-20b-F16.gguf"
    assert doc["configs"][real]["build"] == "1c1409e1 (6865)"
    assert not {"model", "build", "engine_version", "platform", "accelerators"} & set(doc["configs"][failed])
    (model_todo,) = [t for t in doc["todo"] if t.startswith(f"configs.{failed}.model:")]
    assert "no test row" in model_todo and "failed before its first test" in model_todo and "unknown" in model_todo
    assert not any(t.startswith(f"configs.{real}.") for t in doc["todo"])
    assert main(["validate", str(tmp_path / "out")]) == 0


@needs_shared
def test_two_header_only_files_are_two_configurations(tmp_path):
    doc = new("strix-halo-baseline", tmp_path / "out",
              [llama_csv(tmp_path / "a" / "bench.csv", True), llama_csv(tmp_path / "b" / "bench.csv", True)])
    assert len(doc["configs"]) == 2 and len({f["config"] for f in doc["files"]}) == 2


@needs_shared
def test_unknown_build_is_shown_unknown_and_groups_only_by_the_other_facts(tmp_path):
    src, nogit = tmp_path / "in", {"build_commit": "unknown", "build_number": 0}
    files = [llama_file(src / "nogit_pp.jsonl", slice(0, None, 2), **nogit),  # prefill rows
             llama_file(src / "nogit_tg.jsonl", slice(1, None, 2), **nogit),  # generation rows
             llama_file(src / "nogit-8050s.jsonl", gpu_info="Radeon 8050S Graphics", **nogit),
             llama_file(src / "b6865.jsonl")]
    out = tmp_path / "out"
    doc = new("strix-halo-baseline", out, files)
    same = config_of(doc, "nogit_pp.jsonl")
    assert config_of(doc, "nogit_tg.jsonl") == same and len(doc["configs"]) == 3
    assert len({same, config_of(doc, "nogit-8050s.jsonl"), config_of(doc, "b6865.jsonl")}) == 3
    for cid in (same, config_of(doc, "nogit-8050s.jsonl")):
        assert doc["configs"][cid]["build"] == "unknown" and "engine_version" not in doc["configs"][cid]
    assert doc["configs"][config_of(doc, "b6865.jsonl")]["engine_version"] == "b6865"
    assert not re.search(r"\bb0\b", (out / MANIFEST).read_text())
    assert not name_todos(doc)  # nogit_pp / nogit_tg differ only by their test
    # the strix chapter tells builds apart by configuration and prints the build itself: no to-do
    assert not any(".build:" in t or ".engine_version:" in t for t in doc["todo"])


@needs_shared
@pytest.mark.parametrize("names", [("AMD Radeon 8060S Graphics", "Radeon 8060S Graphics"),
                                   ("Radeon 8060S Graphics", "amd  radeon 8060s graphics")])
def test_device_names_differing_only_by_vendor_words_are_one_configuration(tmp_path, names):
    files = [llama_file(tmp_path / "in" / "gpt-oss_pp512.jsonl", slice(0, None, 2), gpu_info=names[0]),
             llama_file(tmp_path / "in" / "gpt-oss_tg128.jsonl", slice(1, None, 2), gpu_info=names[1])]
    doc = new("strix-halo-baseline", tmp_path / "out", files)
    (cfg,) = doc["configs"].values()
    assert cfg["accelerators"] == f"1x {names[0]}"  # the file's own text, not the normalised key
    assert not name_todos(doc)


def test_device_names_compare_without_vendor_words_graphics_case_and_spacing():
    from benchbook.scaffold.grouping import _fact_key

    same = [("accelerators", "2x NVIDIA GeForce RTX 3090", "2x GeForce RTX 3090"),
            ("platform", "Intel(R) Arc(TM) A770 Graphics", "Arc(TM) A770"),
            ("platform", "AMD Radeon 8060S Graphics; CPU AMD RYZEN AI MAX+ 395",
             "Radeon 8060S;  CPU Ryzen AI MAX+ 395")]
    for key, a, b in same:
        assert _fact_key(key, a) == _fact_key(key, b), (a, b)
    differ = [("accelerators", "1x Radeon 8060S Graphics", "1x Radeon 8050S Graphics"),
              ("accelerators", "1x Radeon 8060S Graphics", "2x Radeon 8060S Graphics"),
              ("platform", "AMD Radeon Graphics", "Radeon 8060S Graphics"),  # ROCm's name names no model
              ("model", "AMD-Llama-135m", "Llama-135m")]  # only device names are normalised
    for key, a, b in differ:
        assert _fact_key(key, a) != _fact_key(key, b), (a, b)


@needs_shared
@pytest.mark.parametrize("names, label", [
    (("rocm-6.4.4/gpt-oss-20b.jsonl", "rocm-7.2.3/gpt-oss-20b.jsonl"), "rocm-6.4.4 / rocm-7.2.3"),
    (("llama-bench_rocm-6.4.4_gpt-oss-20b.jsonl", "llama-bench_rocm-7.2.3_gpt-oss-20b.jsonl"),
     "rocm-6.4.4 / rocm-7.2.3"),
    (("gpt-oss_rocm7.2_pp512.jsonl", "gpt-oss_rocm6.4.4_tg128.jsonl"), "rocm7.2 / rocm6.4.4"),
    (("rocm-6.4.4/default.jsonl", "rocm-6.4.4/d4096.jsonl", "rocm-7.2.3/default.jsonl", "rocm-7.2.3/d4096.jsonl"),
     "rocm-6.4.4 / rocm-7.2.3"),
    (("b6865.jsonl", "b6865-rocwmma.jsonl"), "nothing more / b6865-rocwmma"),
])
def test_files_the_content_cannot_tell_apart_but_names_differ_get_a_to_do(tmp_path, names, label):
    doc = new("strix-halo-baseline", tmp_path / "out", [llama_file(tmp_path / "in" / n) for n in names])
    (cid,) = doc["configs"]  # grouped by content: it cannot tell them apart
    (todo,) = name_todos(doc)
    assert todo.startswith(f"configs.{cid}: ") and f"({label});" in todo and "split them" in todo
    assert all(f"raw/{n}" in todo for n in names)


@needs_shared
@pytest.mark.parametrize("names", [
    ("gpt-oss-20b_pp512.jsonl", "gpt-oss-20b_tg128.jsonl"),
    ("gpt-oss-20b-prefill.jsonl", "gpt-oss-20b-gen.jsonl"),
    ("rocm-6.4.4_d0.jsonl", "rocm-6.4.4_d4096.jsonl", "rocm-6.4.4_d16384.jsonl"),
    ("toolbox/default.jsonl", "toolbox/depth-4096.jsonl", "toolbox/long_ctx-65536.jsonl"),
    ("run1.jsonl", "run2.jsonl", "run3.jsonl"),
    ("gpt-oss_1.jsonl", "gpt-oss_2.jsonl", "gpt-oss_3.jsonl"),
    ("gpt-oss.jsonl", "gpt-oss.csv"),  # one run in two of llama-bench's forms
])
def test_files_differing_only_by_their_test_get_no_name_to_do(tmp_path, capsys, names):
    files = [(llama_csv if n.endswith(".csv") else llama_file)(tmp_path / "in" / n) for n in names]
    doc = new("strix-halo-baseline", tmp_path / "out", files)
    assert len(doc["configs"]) == 1 and not name_todos(doc)
    # one run set of one build, not "the same run ... need different seed"
    assert main(["validate", "--quick", str(tmp_path / "out")]) == 0, capsys.readouterr().err


@needs_shared
def test_real_llama_bench_files_together_each_in_the_configuration_of_its_own_model(tmp_path):
    from benchbook.scaffold.infer import describe

    files = sorted(p for p in (REAL / "llama-bench").iterdir() if not p.name.startswith("LICENSE"))
    files += sorted(LHL.glob("*.jsonl"))
    doc = new("strix-halo-baseline", tmp_path / "out", files)
    for f in doc["files"]:
        own = describe(tmp_path / "out" / f["path"]).config
        cfg = doc["configs"][f["config"]]
        assert cfg["model"] == own["model"].value, f["path"]
        for key in ("backend", "build"):
            assert key not in own or cfg[key] == own[key].value, (f["path"], key)
    # the two b6865 gpt-oss-20b files record the same facts: grouped, and the user is asked
    b6865 = [f["path"] for f in doc["files"] if doc["configs"][f["config"]].get("engine_version") == "b6865"]
    (todo,) = name_todos(doc)
    assert len(b6865) == 2 and all(p in todo for p in b6865)


# ---------------------------------------------------------------- the run description


@needs_shared
def test_open_loop_rate_runs_are_never_single_stream_runs(tmp_path, capsys):
    """The issue's case: twelve 0.1-1.0 req/s runs of two models were typed decode-long, and a
    concurrency of 1 set by hand was accepted; the page then compared 'single-stream decode'."""
    out = tmp_path / "out"
    doc = new("3090-dense-vs-sparse", out, [DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"])
    kinds = {f["path"]: f.get("kind") for f in doc["files"]}
    sweep = {p: k for p, k in kinds.items() if "/11-rate-sweep-" in p}
    assert len(sweep) == 12 and set(sweep.values()) == {"rate"}
    assert not any(f.get("concurrency") for f in doc["files"] if "/11-rate-sweep-" in f["path"])
    i = next(i for i, f in enumerate(doc["files"]) if f["path"].endswith("11-rate-sweep-0.5.json"))
    doc["files"][i].update(kind="decode-long", concurrency=1)  # what a user was led to do
    (out / MANIFEST).write_text(yaml.safe_dump(doc))
    assert main(["validate", "--quick", str(out)]) == 1
    err = capsys.readouterr().err
    assert "a 'decode-long' run (a single-stream decode run at long context) needs one request at a time, " \
           "but the file records open loop at 0.5 req/s (burstiness 0.7), up to 66 in flight" in err
    assert "study.yml gives concurrency 1, but the file records an open-loop request rate" in err


def test_a_closed_loop_run_is_offered_only_kinds_that_take_it(tmp_path, monkeypatch):
    """The GB10 chapter without its kind for other workloads ('other-bench'): a closed-loop
    run no kind takes is offered the closed-loop kinds, never 'rate'."""
    import dataclasses

    from benchbook.book.registry import get
    from benchbook.scaffold import new as new_module

    spec = get("gb10-mtp")
    kinds = tuple(k for k in spec.contract.kinds if k.name != "other-bench")
    narrow = dataclasses.replace(spec, contract=dataclasses.replace(spec.contract, kinds=kinds))
    monkeypatch.setattr(new_module, "get", lambda chapter: narrow)
    doc = new("gb10-mtp", tmp_path / "out", [bench(tmp_path, "x.json", 100, 3, 25, model=MOE)])
    todo = next(t for t in doc["todo"] if t.startswith("files[0].kind"))
    assert "load concurrency" in todo and "test-a" in todo and "rate" not in todo.split("choose one of:")[1]


def test_bench_results_with_and_without_spec_decode_keys_are_two_configurations(tmp_path):
    plain = [bench(tmp_path / "in", f"p{i}.json", 100, 3, 4, model=MOE, seed=i) for i in range(3)]
    spec = [bench(tmp_path / "in", f"s{i}.json", 100, 3, 4, model=MOE, seed=i, spec_decode_num_drafts=10,
                  spec_decode_draft_tokens=30, spec_decode_accepted_tokens=20, spec_decode_acceptance_length=3.0,
                  spec_decode_acceptance_rate=66.7) for i in range(3)]
    doc = new("gb10-mtp", tmp_path / "out", plain + spec)
    by_file = {Path(f["path"]).stem: f["config"] for f in doc["files"]}
    assert len({by_file[f"p{i}"] for i in range(3)}) == 1 and len({by_file[f"s{i}"] for i in range(3)}) == 1
    assert by_file["p0"] != by_file["s0"]
    assert doc["configs"][by_file["s0"]]["role"] == "mtp" and doc["configs"][by_file["p0"]]["role"] != "mtp"
    assert any(t.startswith(f"configs.{by_file['p0']}.speculative: its bench results record no spec_decode")
               for t in doc["todo"])


def test_printed_spelling_does_not_split_a_configuration(tmp_path):
    a = bench(tmp_path / "in", "a.json", model="Qwen/Qwen3.6-27B-FP8")
    b = bench(tmp_path / "in", "b.json", model="Qwen/Qwen3.6-27B-FP8", seed=2)
    doc = new("h100-dense-vs-moe-mtp", tmp_path / "out", [a, b])
    assert len(doc["configs"]) == 1


@needs_shared
def test_a_folder_is_read_whole_and_files_no_reader_knows_are_listed_as_skipped(tmp_path, capsys):
    folder = DGX / "qwen-3.6-27b" / "fp8"
    new_study("gb10-mtp", tmp_path / "out", [folder])
    printed = capsys.readouterr().out
    doc = yaml.safe_load((tmp_path / "out" / MANIFEST).read_text(encoding="utf-8"))
    listed = {Path(f["path"]).name for f in doc["files"]}
    skipped = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    every = {p.name for p in folder.iterdir()}
    assert listed | set(skipped) == every and not listed & set(skipped)  # nothing silently dropped
    # the harness's own files (ingest.bench_spark), its power logs and llama-benchy tables
    assert {"meta.json", "11-rate-sweep.json", "_runner.log", "01-telemetry.csv", "01-chat.md"} <= listed
    assert "_sanity.txt" in skipped
    assert "console output of `vllm bench serve`" in skipped["09-reasoning.log"]
    assert f"skipped {len(skipped)} file(s) no reader recognises" in printed
    assert not (tmp_path / "out" / "raw" / "_sanity.txt").exists()  # only what is described is copied
    assert main(["validate", "--quick", str(tmp_path / "out")]) == 0


@needs_shared
def test_the_runs_beside_a_harness_meta_json_take_its_server_facts_and_say_so(tmp_path):
    """bench-spark's meta.json states the server (vLLM version, KV dtype, machine) that its
    bench results do not: `new` lends those facts to the runs in its folder, with a note, and
    leaves no to-do for them; a run's date stays its own."""
    folder = DGX / "qwen-3.6-35b-a3b" / "bf16"
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    doc = new("gb10-mtp", tmp_path / "out", [folder])
    runs = [f for f in doc["files"] if f["path"].endswith(".json") and f.get("kind") == "rate"]
    assert runs
    for f in runs:
        cfg = doc["configs"][f["config"]]
        assert cfg["engine"] == "vLLM" and cfg["engine_version"] == meta["vllm_version_reported"]
        assert cfg["kv_dtype"] == meta["server_config"]["kv_cache_dtype"]  # fp8 KV beside BF16 weights
        assert cfg["platform"] == meta["hardware"] and cfg["quantisation"] == meta["profile"].upper()
        assert "from meta.json beside it" in f["notes"] and "date" not in f["notes"]
        own = json.loads((folder / Path(f["path"]).name).read_text(encoding="utf-8"))["date"]
        assert f["date"] == f"{own[:4]}-{own[4:6]}-{own[6:8]}"  # its own date, not meta.json's
    assert not [t for t in doc["todo"] if t.split(".")[-1].split(":")[0] in ("engine", "engine_version",
                                                                             "platform", "kv_dtype")]


@needs_shared
def test_a_server_that_crashed_at_start_up_is_a_failed_run_and_lends_no_facts(tmp_path):
    doc = new("3090-dense-vs-sparse", tmp_path / "out", [DGX / "qwen-3.6-27b" / "fp8"])
    crash = next(f for f in doc["files"] if f["path"].endswith("_server-crash.log"))
    assert crash["failed"].startswith("the server did not start: RuntimeError: Engine core initialization failed")
    cfg = doc["configs"][crash["config"]]
    assert cfg["model"] == "Qwen/Qwen3.6-27B-FP8"  # the configuration its own content names
    # the crashed attempt's own facts are not lent (its log prints the architecture and the
    # tensor-parallel size; no working run states them) ...
    assert "architecture" not in cfg and "tensor_parallel" not in cfg
    # ... and the harness's meta.json lends to the runs that worked, not to the crash
    assert "meta.json" not in crash.get("notes", "")
    assert cfg["engine_version"] == "0.26.0" and any("meta.json" in f.get("notes", "") for f in doc["files"]
                                                     if f["config"] == crash["config"] and f is not crash)


def test_a_bench_run_in_which_no_request_completed_is_failed(tmp_path):
    path = bench(tmp_path, "x.json", completed=0, failed=3)
    doc = new("h100-dense-vs-moe-mtp", tmp_path / "out", [path])
    assert doc["files"][0]["failed"] == "no request completed (of 3 sent)"


@needs_shared
def test_the_harness_s_power_logs_are_dated_by_its_runner_s_clock(tmp_path):
    """A power CSV records elapsed seconds only: it is dated by its test's START line in
    _runner.log, on the clock that began at meta.json's generated_at (the 27B's run crosses
    midnight), and says so; the sweep summary by its END line; no other date is asked."""
    import re
    from datetime import datetime, timedelta

    folder = DGX / "qwen-3.6-27b" / "fp8"
    doc = new("gb10-mtp", tmp_path / "out", [folder])
    began = datetime.fromisoformat(json.loads((folder / "meta.json").read_text())["generated_at"])
    marks, day, last = {}, 0, None
    for line in (folder / "_runner.log").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\[(\d\d):(\d\d):(\d\d)\] ── (START|END) (\d+)", line)
        if m:
            clock = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
            day += last is not None and clock < last
            last = clock
            marks[(m[4], m[5])] = (began.date() + timedelta(days=day)).isoformat()
    dated = {Path(f["path"]).name: f for f in doc["files"]}
    for name, f in dated.items():
        if name.endswith("-telemetry.csv"):
            assert f["date"] == marks[("START", name[:2])] and f"from the START {name[:2]} line" in f["notes"], name
    assert dated["11-rate-sweep.json"]["date"] == marks[("END", "11")]
    assert dated["_runner.log"]["date"] == began.date().isoformat()
    assert len({f["date"] for n, f in dated.items() if n.endswith("-telemetry.csv")}) == 2  # past midnight
    # the only date left to ask: the crashed server's log, whose lines print no year
    assert [t for t in doc["todo"] if ".date:" in t] and all("no year" in t for t in doc["todo"] if ".date:" in t)

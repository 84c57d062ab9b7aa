"""benchbook.scaffold.infer: what raw files say about themselves, checked against the files' own text.

Expected values are read from the files in the tests (json, csv, regexes on the raw lines),
not written down, so a test fails when `describe` reads a file differently from the file.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import re
import time
from collections import Counter
from pathlib import Path

import pytest

import benchbook.ingest as ingest
from benchbook.scaffold.infer import CONFIG_KEYS, CONTEXT_KEYS, Fact, FileFacts, describe

ROOT = Path(__file__).parents[2]
SHARED = ROOT.parent / "shared"
REAL = SHARED / "samples" / "real"
LHL = SHARED / "samples" / "llama-bench-lhl"
needs_shared = pytest.mark.skipif(not REAL.is_dir(), reason="../shared samples are absent (a user's clone)")

KNOWN_KEYS = set(CONTEXT_KEYS) | set(CONFIG_KEYS) | {"serve_args", "command", "architecture"}


def _shared_files() -> list[Path]:
    return sorted(p for d in (REAL, LHL) if d.is_dir() for p in d.rglob("*") if p.is_file())


def _todo(facts: FileFacts, key: str) -> list[str]:
    return [t for t in facts.todo if t.startswith(key + ":")]


def _check_shape(facts: FileFacts) -> None:
    """Every fact has a value and says where it was read; every todo names its key."""
    for section in (facts.context, facts.config):
        for key, fact in section.items():
            assert isinstance(fact, Fact) and fact.value not in (None, "") and fact.source.strip(), (key, fact)
    assert set(facts.context) <= set(CONTEXT_KEYS)
    for item in facts.todo:
        assert item.split(":", 1)[0] in KNOWN_KEYS, item
    for run in facts.runs:
        assert set(run) >= {"id", "context", "config", "settings"}
        assert set(run["context"]) <= set(CONTEXT_KEYS)


def _line_dicts(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---------------------------------------------------------------- every shared sample


NO_MODEL = ("nvidia-smi-csv", "power-series-csv", "bench-spark-runner-log")  # formats that name no model


@needs_shared
@pytest.mark.parametrize("path", _shared_files(), ids=lambda p: p.name)
def test_every_shared_file_is_described_or_refused(path):
    facts = describe(path)
    _check_shape(facts)
    try:
        result = ingest.read(path)
    except ingest.IngestError as exc:
        assert facts.format == "unknown" and facts.problems == [str(exc)]
        assert str(path) in facts.problems[0]
        assert not facts.context and not facts.config and not facts.tables
        return
    assert not facts.problems
    assert facts.format == result.format
    assert facts.tables == {name: len(df) for name, df in result.tables.items()}
    # a key a file of this kind should give is either inferred or asked for, never dropped
    for key in ("date", "model"):
        assert key in facts.context or key in facts.config or _todo(facts, key) or (
            key == "model" and facts.format in NO_MODEL)


@needs_shared
def test_rejected_nvidia_smi_file_gives_a_problem_naming_it():
    path = REAL / "nvidia-smi" / "xypp3_nvidia_smi.csv"
    facts = describe(path)
    assert facts.format == "unknown"
    assert facts.problems and str(path) in facts.problems[0]
    assert not facts.context and not facts.config


# ---------------------------------------------------------------- vllm bench serve


@needs_shared
def test_nerdalert_jsonl_lists_each_run_with_its_own_rate_and_no_made_up_concurrency():
    path = REAL / "vllm-bench-serve" / "nerdalert_results.jsonl"
    objects = _line_dicts(path)
    facts = describe(path)
    assert len(facts.runs) == len(objects) > 1
    for run, obj in zip(facts.runs, objects):
        assert run["settings"]["request_rate"].value == float(obj["request_rate"])  # "inf" -> inf
        assert run["settings"]["num_prompts"].value == obj["num_prompts"]
        if obj["max_concurrency"] is None:
            assert "concurrency" not in run["context"]
            assert any(t.startswith("concurrency:") for t in run["todo"])
        else:
            assert run["context"]["concurrency"].value == obj["max_concurrency"]
        d = obj["date"]
        assert run["context"]["date"].value == f"{d[:4]}-{d[4:6]}-{d[6:8]}"
        # the user's --metadata lengths are the setting; the measured mean is named beside
        assert run["context"]["input_len"].value == int(obj["input_len"])
        mean_in = math.floor(obj["total_input_tokens"] / obj["completed"] + 0.5)
        assert "--metadata" in run["context"]["input_len"].source and str(mean_in) in run["context"]["input_len"].source
        assert run["settings"]["deployment"].value == obj["deployment"]
    if all(o["max_concurrency"] is None for o in objects):
        assert "concurrency" not in facts.context
        (todo,) = _todo(facts, "concurrency")
        for rate in {str(o["request_rate"]).removesuffix(".0") for o in objects}:
            assert rate in todo
    assert facts.config["model"].value == objects[0]["model_id"]
    assert facts.config["accelerators"].value == objects[0]["gpu"]
    for key in ("dataset", "ignore_eos", "seed", "engine"):
        assert _todo(facts, key)


# the reconstructed folders' bench results (a PROVENANCE.md beside them), all written with --save-detailed
RECONSTRUCTED_JSON = sorted(p for p in (ROOT / "data").glob("*/raw/**/*.json")
                            if (ROOT / "data" / p.relative_to(ROOT / "data").parts[0] / "PROVENANCE.md").is_file())


@pytest.mark.parametrize("path", RECONSTRUCTED_JSON[::7], ids=lambda p: p.name)
def test_study_bench_json_context_matches_the_json(path):
    obj = json.loads(path.read_text())
    facts = describe(path)
    _check_shape(facts)
    assert not facts.runs
    if obj.get("max_concurrency") is not None:
        assert facts.context["concurrency"].value == obj["max_concurrency"]
    else:
        assert "concurrency" not in facts.context and _todo(facts, "concurrency")
    ok = [i for i, e in enumerate(obj.get("errors") or [""] * len(obj["input_lens"])) if not e]
    for key, arr in (("input_len", "input_lens"), ("output_len", "output_lens")):
        lens = [obj[arr][i] for i in ok]
        assert facts.context[key].value == math.floor(sum(lens) / len(lens) + 0.5)
        if len(set(lens)) == 1:
            assert "every one" in facts.context[key].source
    d = obj["date"]
    assert facts.context["date"].value == f"{d[:4]}-{d[4:6]}-{d[6:8]}"
    assert facts.config["model"].value == obj["model_id"]
    positions = obj.get("spec_decode_per_position_acceptance_rates")
    if positions:
        assert facts.config["speculative"].value.endswith(f"num_speculative_tokens={len(positions)}")
    else:
        assert "speculative" not in facts.config


def test_rate_limited_run_without_cap_has_no_concurrency(tmp_path):
    obj = {"date": "20260102-030405", "backend": "vllm", "model_id": "org/Model-7B-AWQ", "num_prompts": 4,
           "completed": 4, "duration": 2.0, "request_rate": 5.0, "max_concurrency": None,
           "total_input_tokens": 402, "total_output_tokens": 80}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(obj))
    facts = describe(path)
    assert "concurrency" not in facts.context and not _todo(facts, "concurrency")
    assert facts.context["request_rate"].value == 5.0 and "request_rate" in facts.context["request_rate"].source
    assert facts.context["input_len"].value == 101 and "mean" in facts.context["input_len"].source
    assert facts.context["date"].value == "2026-01-02"
    assert facts.config["quantisation"].value == "AWQ"


# ---------------------------------------------------------------- llama-bench


def _lhl_jsonl_files() -> list[Path]:
    files = sorted(LHL.glob("*.jsonl")) + sorted((REAL / "llama-bench").glob("*.jsonl"))
    return files + sorted((ROOT / "data").glob("*/raw/llama-bench/*.jsonl"))


_PER_TEST = {"n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
             "samples_ns", "samples_ts"}


@pytest.mark.parametrize("path", _lhl_jsonl_files(), ids=lambda p: p.name)
def test_llama_jsonl_runs_match_the_files_own_fields(path):
    rows = _line_dicts(path)
    facts = describe(path)
    _check_shape(facts)
    # one run per block of consecutive rows with the same settings, as the file has them
    keys = [json.dumps({k: v for k, v in r.items() if k not in _PER_TEST}, sort_keys=True) for r in rows]
    blocks = [i for i, k in enumerate(keys) if i == 0 or k != keys[i - 1]]
    runs = facts.runs or [{"context": facts.context, "config": facts.config}]
    assert len(runs) == len(blocks)
    config = lambda run, key: (run["config"].get(key) or facts.config[key]).value  # noqa: E731
    assert {config(r, "backend") for r in runs} == {r["backends"] for r in rows}
    assert {config(r, "build") for r in runs} == {f"{r['build_commit']} ({r['build_number']})" for r in rows}
    for run, start in zip(runs, blocks):
        row = rows[start]
        assert config(run, "backend") == row["backends"]
        assert config(run, "accelerators") == f"1x {row['gpu_info']}"
        assert (run["context"].get("date") or facts.context["date"]).value == row["test_time"][:10]
        assert config(run, "model") == Path(row["model_filename"]).name
    if len({r["backends"] for r in rows}) > 1:
        assert _todo(facts, "backend") and "backend" not in facts.config
    if len({r["test_time"][:10] for r in rows}) == 1:
        assert facts.context["date"].value == rows[0]["test_time"][:10]


@needs_shared
def test_rx580_vulkan_log_names_the_gpu_of_its_banner():
    path = REAL / "llama-bench" / "geerlingguy_ai-benchmarks_20_rx580_vulkan.log"
    text = path.read_text()
    banner = re.search(r"^ggml_vulkan: 0 = (.+?) \(\w+\) \|", text, re.M).group(1)
    found = int(re.search(r"Found (\d+) Vulkan devices", text).group(1))
    commit, number = re.search(r"^build: (\S+) \((\d+)\)", text, re.M).groups()
    model = re.search(r"-m (\S+)", text).group(1)
    facts = describe(path)
    assert "RX 580" in banner and banner in facts.config["platform"].value
    assert facts.config["accelerators"].value == f"{found}x {banner}"
    assert "banner" in facts.config["platform"].source
    assert facts.config["build"].value == f"{commit} ({number})"
    assert facts.config["engine_version"].value == f"b{number}"
    assert facts.config["model"].value == Path(model).name
    assert facts.config["quantisation"].value in model
    assert facts.config["backend"].value == "Vulkan" and "Vulkan" in text


@needs_shared
def test_cpu_markdown_without_date_asks_for_it():
    path = REAL / "llama-bench" / "geerlingguy_ai-benchmarks_54_radxa_cpu.md"
    text = path.read_text()
    facts = describe(path)
    assert not re.search(r"20\d\d-\d\d-\d\d|20\d{6}", text + path.name)  # no date anywhere
    assert "date" not in facts.context and "markdown table records no date" in _todo(facts, "date")[0]
    gguf = re.search(r"(\S+\.gguf)", text).group(1)
    assert facts.config["model"].value == gguf
    assert facts.config["accelerators"].value.startswith("none") and "| CPU " in text
    assert _todo(facts, "platform")


def test_cuda_banners_count_devices_and_file_name_date_wins(tmp_path):
    table = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| qwen3moe 30B.A3B Q4_K - Medium | 16.49 GiB | 30.53 B | CUDA | 99 | pp512 | 3000.00 ± 10.00 |\n\n"
             "build: 0253fb21f (9187)\n")
    banner = ("ggml_cuda_init: found 2 CUDA devices:\n"
              "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
              "  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n")
    path = tmp_path / "bench-2025-03-04.md"
    path.write_text(banner + table)
    facts = describe(path)
    assert facts.config["accelerators"].value == "2x NVIDIA GeForce RTX 3090"
    assert "compute capability 8.6" in facts.config["platform"].value
    assert facts.context["date"].value == "2025-03-04" and "file name" in facts.context["date"].source
    assert facts.config["quantisation"].value == "Q4_K - Medium"  # no GGUF name: the model type's file type


B6865 = LHL / "jsonl_rocm_b6865_gpt-oss-20b.jsonl"
RX580 = REAL / "llama-bench" / "geerlingguy_ai-benchmarks_20_rx580_vulkan.log"


def _as_csv(path: Path) -> str:
    """A real JSONL file as llama-bench's csv_printer prints the same records: the field names,
    then every value quoted, bools as 0/1 (no sample arrays)."""
    rows = _line_dicts(path)
    fields = [k for k in rows[0] if not k.startswith("samples_")]
    value = lambda v: str(int(v)) if isinstance(v, bool) else str(v)  # noqa: E731
    return "\n".join([",".join(fields)] + [",".join(f'"{value(r[k])}"' for k in fields) for r in rows]) + "\n"


@needs_shared
def test_llama_csv_records_its_date_in_test_time(tmp_path):
    rows = _line_dicts(B6865)
    path = tmp_path / "b6865.csv"
    path.write_text(_as_csv(B6865))
    facts = describe(path)
    assert facts.format == "llama-bench-csv" and not _todo(facts, "date")
    assert facts.context["date"].value == rows[0]["test_time"][:10] and "test_time" in facts.context["date"].source


@needs_shared
def test_llama_file_of_several_days_is_dated_by_its_first_test():
    path = LHL / "jsonl_rocm+vulkan_b5921-6077_qwen3-30b-a3b_raw_runs.jsonl"
    days = sorted({r["test_time"][:10] for r in _line_dicts(path)})
    assert len(days) > 1
    facts = describe(path)
    assert facts.context["date"].value == days[0]
    (todo,) = _todo(facts, "date")
    assert all(d in todo for d in days) and "first test" in todo


@needs_shared
def test_header_only_csv_names_no_model_build_or_gpu(tmp_path):
    """llama-bench -o csv prints its header, then returns when the model does not load."""
    path = tmp_path / "failed.csv"
    path.write_text(_as_csv(B6865).splitlines()[0] + "\n")
    facts = describe(path)
    _check_shape(facts)
    assert facts.format == "llama-bench-csv" and facts.tables == {"llama_bench": 0} and not facts.problems
    for key in ("model", "quantisation", "build", "engine_version", "platform", "accelerators"):
        assert key not in facts.config and "no test row" in _todo(facts, key)[0], key
    (model,) = _todo(facts, "model")
    assert "failed before its first test" in model and "build are unknown" in model
    assert "date" not in facts.context and _todo(facts, "date")


@needs_shared
@pytest.mark.parametrize("form", ["jsonl", "md"])
def test_unknown_build_is_unknown_not_b0(tmp_path, form):
    """llama.cpp built without git prints build_commit "unknown", build_number 0 (`build: unknown (0)`)."""
    if form == "jsonl":
        text = re.sub(r'"build_number": \d+', '"build_number": 0',
                      re.sub(r'"build_commit": "\w+"', '"build_commit": "unknown"', B6865.read_text()))
    else:
        text = re.sub(r"(?m)^build: \S+ \(\d+\)$", "build: unknown (0)", RX580.read_text())
    assert text.count("unknown") >= 1
    path = tmp_path / f"nogit.{form}"
    path.write_text(text)
    facts = describe(path)
    _check_shape(facts)
    assert facts.config["build"].value == "unknown" and "without git" in facts.config["build"].source
    assert "engine_version" not in facts.config and "unknown (0)" in _todo(facts, "engine_version")[0]
    assert not any(re.search(r"\bb0\b", str(f.value)) for f in facts.config.values())
    real = describe(B6865 if form == "jsonl" else RX580)
    assert real.config["engine_version"].value.startswith("b") and real.config["build"].value != "unknown"


# ---------------------------------------------------------------- vLLM server logs


@needs_shared
@pytest.mark.parametrize("path", sorted((REAL / "vllm-server-logs").glob("*.log")), ids=lambda p: p.name)
def test_real_vllm_logs(path):
    text = path.read_text()
    facts = describe(path)
    assert facts.config["engine"].value == "vLLM"
    if not re.search(r"(?m)^\s*20\d\d-\d\d-\d\d", text) and not re.search(r"20\d\d-?\d\d-?\d\d", path.name):
        assert "date" not in facts.context
        (todo,) = _todo(facts, "date")
        assert "no year" in todo
    spec = re.search(r"Per-position acceptance rate: ([\d., ]+?)(?:, Avg|$)", text, re.M)
    if spec:
        k = len(spec.group(1).split(","))
        assert facts.config["speculative"].value.endswith(f"num_speculative_tokens={k}")
    args = re.search(r"non-default args: (\{.*\})$", text, re.M)
    if args:
        args = ast.literal_eval(args.group(1))
        assert facts.config["tensor_parallel"].value == args["tensor_parallel_size"]
        assert facts.config["model"].value == Path(args["model"]).name
        assert "sk123" not in repr(facts)
    version = re.search(r"server version (\S+)", text)
    if version:
        assert facts.config["engine_version"].value == version.group(1)
    else:
        assert _todo(facts, "engine_version")
    if "device_name=" not in text and "Device 0" not in text:
        assert _todo(facts, "accelerators")


@pytest.mark.parametrize("path", sorted((ROOT / "data").glob("*/raw/**/vllm-serve.log*")), ids=str)
def test_study_vllm_logs_match_their_engine_config_line(path):
    text = ingest.textio.read_text(path)
    conf = re.search(r"with config: (.*)$", text, re.M).group(1)
    facts = describe(path)
    tp = int(re.search(r"tensor_parallel_size=(\d+)", conf).group(1))
    kv = re.search(r"kv_cache_dtype=([\w.]+)", conf).group(1)
    quant = re.search(r"quantization=([\w-]+)", conf).group(1)
    assert facts.config["tensor_parallel"].value == tp
    assert facts.config["kv_dtype"].value == kv
    assert facts.config["quantisation"].value == ("none" if quant == "None" else quant)
    spec = re.search(r"speculative_config=(None|\w*\([^)]*\)|\{[^}]*\})", conf).group(1)
    if spec == "None":
        assert facts.config["speculative"].value == "none"
    else:  # SpeculativeConfig(..., num_spec_tokens=N) or {'num_speculative_tokens': N}
        n = re.search(r"num_spec(?:ulative)?_tokens'?\s*[=:]\s*(\d+)", spec).group(1)
        assert facts.config["speculative"].value.endswith(f"num_speculative_tokens={n}")
    names = set(re.findall(r"device_name=(\w+)", text))
    if len(names) == 1:
        assert names.pop().replace("_", " ") in facts.config["accelerators"].value


def test_docker_prefix_gives_the_year_and_two_startups_are_not_merged(tmp_path):
    head = "(APIServer pid=1) INFO 12-31 21:10:00 [utils.py:233] non-default args: "
    lines = [
        "2026-01-01T02:10:00.1Z " + head + "{'model': '/home/me/models/Org/Model-8B-FP8', "
        "'tensor_parallel_size': 2, 'api_key': ['hunter22']}",
        "2026-01-01T02:10:05.1Z (Worker_TP0 pid=3) WARNING 12-31 21:10:05 [fused_moe.py:727] Using default MoE "
        "config. Config file not found at ['/x/E=8,N=7,device_name=NVIDIA_H100_80GB_HBM3.json']",
        "2026-01-01T02:10:05.2Z (Worker_TP0 pid=3) INFO 12-31 21:10:05 [parallel_state.py:1325] rank 0 in "
        "world size 2 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0",
        "2026-01-01T03:00:00.1Z " + head.replace("21:10", "22:00") + "{'model': '/home/me/models/Org/Model-8B-FP8', "
        "'tensor_parallel_size': 4}",
    ]
    path = tmp_path / "serve.log"
    path.write_text("\n".join(lines) + "\n")
    facts = describe(path)
    # docker's UTC year with the server's local month and day: still 2025 there
    assert facts.context["date"].value == "2025-12-31"
    assert facts.config["model"].value == "Model-8B-FP8" and "/home/me" not in repr(facts)
    assert facts.config["quantisation"].value == "FP8"
    assert "hunter22" not in repr(facts)
    assert "tensor_parallel" not in facts.config
    (todo,) = _todo(facts, "tensor_parallel")
    assert "line 1" in todo and "line 4" in todo
    assert facts.config["accelerators"].value == "2x NVIDIA H100 80GB HBM3"


# ---------------------------------------------------------------- nvidia-smi, Prometheus, others


@needs_shared
def test_nvidia_smi_names_and_dates_come_from_the_csv():
    path = REAL / "nvidia-smi" / "RdrigoMachado_gpu_power.csv"
    rows = list(csv.reader(path.read_text().splitlines(), skipinitialspace=True))
    header, first = rows[0], rows[1]
    facts = describe(path)
    name = first[header.index("name")]
    assert facts.config["platform"].value == name
    assert name in facts.config["accelerators"].value
    assert facts.context["date"].value == first[header.index("timestamp")][:10].replace("/", "-")
    nameless = describe(REAL / "nvidia-smi" / "PranavDani_nvidia-smi.csv")
    assert "accelerators" not in nameless.config and _todo(nameless, "accelerators")


@needs_shared
def test_nvidia_smi_gpus_told_apart_without_an_index_are_counted(tmp_path):
    """Two GPUs in a log without an index column (a second GTX 1650 of another uuid after
    each line of the real one-GPU log): two accelerators, said to be counted by the uuid."""
    from files import more_draw, two_gpu_log

    src = REAL / "nvidia-smi" / "RdrigoMachado_gpu_power.csv"
    header, first = (line.split(", ") for line in src.read_text().splitlines()[:2])
    at = header.index("uuid")
    second = lambda v: [*more_draw(30.0)(v)[:at], "GPU-00000000-0000-0000-0000-000000000002",  # noqa: E731
                        *more_draw(30.0)(v)[at + 1:]]
    facts = describe(two_gpu_log(src, tmp_path / "two.csv", second))
    assert facts.config["accelerators"].value == f"2x {first[header.index('name')]}"
    assert "count from the GPUs told apart by the uuid column" in facts.config["accelerators"].source


def test_nvidia_smi_power_limit_is_judged_per_gpu_told_apart(tmp_path):
    """Ten samples of two GPUs, no index: GPU 2 reports 300 W in two of them. Per GPU it holds
    250 W for only 80% of its samples, so no limit is picked (pooled, 90% of the rows say 250)."""
    rows = ["timestamp, power.draw [W], power.limit [W]"]
    for k in range(10):
        rows += [f"2026/03/14 09:30:{k:02d}.250, 100.00 W, 250.00 W",
                 f"2026/03/14 09:30:{k:02d}.250, 120.00 W, {300 if k < 2 else 250:.2f} W"]
    path = tmp_path / "two.csv"
    path.write_text("\n".join(rows) + "\n")
    facts = describe(path)
    assert "power_limit_w" not in facts.context
    (todo,) = _todo(facts, "power_limit_w")
    assert "GPU 1 of 2 (by row order): 250 W" in todo and "GPU 2 of 2 (by row order): 250 W, 300 W" in todo


def test_study_nvidia_smi_counts_gpus_and_does_not_pick_a_power_limit():
    for path in sorted((ROOT / "data").glob("*/raw/**/nvidia-smi.csv*"))[:4]:
        gpu = ingest.read(path).tables["gpu_samples"]
        facts = describe(path)
        per_gpu = Counter(gpu.groupby("gpu_index")["name"].first())
        assert facts.config["accelerators"].value == ", ".join(f"{n}x {name}" for name, n in per_gpu.items())
        limits = gpu["power_limit_w"].dropna()
        if limits.nunique() == 1:
            assert facts.context["power_limit_w"].value == limits.iloc[0]
        elif limits.nunique() > 1 and gpu.groupby("gpu_index")["power_limit_w"].agg(
                lambda s: s.mode().iloc[0]).nunique() > 1:
            assert "power_limit_w" not in facts.context and _todo(facts, "power_limit_w")
        elif not len(limits):
            assert "power_limit_w" not in facts.context and not _todo(facts, "power_limit_w")


def test_prometheus_dump():
    path = ROOT / "data" / "gb10-mtp" / "raw" / "q36-mtp" / "metrics.prom"
    text = path.read_text()
    facts = describe(path)
    assert facts.config["model"].value == re.search(r'model_name="([^"]+)"', text).group(1)
    k = len(set(re.findall(r'num_accepted_tokens_per_pos_total\{[^}]*position="(\d+)"', text)))
    assert facts.config["speculative"].value.endswith(f"num_speculative_tokens={k}")
    assert facts.context["date"].value == re.search(r"^# dump (\d{4}-\d\d-\d\d)", text, re.M).group(1)


def test_tool_call_log_and_gauntlet():
    path = ROOT / "data" / "3090-dense-vs-sparse" / "raw" / "agent-logs" / "qwen36-35b.jsonl"
    records = _line_dicts(path)
    facts = describe(path)
    assert facts.context["date"].value == records[0]["ts"][:10]
    assert facts.config["model"].value == next(r["model"] for r in records if r.get("event") == "tool.call")
    path = ROOT / "data" / "3090-dense-vs-sparse" / "raw" / "gauntlet" / "gauntlet.csv"
    models = list(dict.fromkeys(r["model"] for r in csv.DictReader(
        line for line in path.read_text().splitlines() if not line.startswith("#"))))
    facts = describe(path)
    assert facts.config["model"].value == (models[0] if len(models) == 1 else models)
    assert _todo(facts, "date")


# ---------------------------------------------------------------- never raises, reads once, fast


@pytest.mark.parametrize("content", [None, b"", b"\x00\x01\x02garbage", b"just some text\n"])
def test_unreadable_input_gives_problems_not_exceptions(tmp_path, content):
    path = tmp_path / "thing.txt"
    if content is not None:
        path.write_bytes(content)
    facts = describe(path)
    assert facts.format == "unknown" and facts.problems and str(path) in facts.problems[0]
    assert describe(tmp_path).problems  # a folder


def test_describe_reads_a_file_once_and_reuses_a_given_result(monkeypatch):
    path = ROOT / "data" / "strix-halo-baseline" / "raw" / "llama-bench" / "rocm-723.jsonl"
    result = ingest.read(path)
    calls = []
    real = ingest.read
    monkeypatch.setattr(ingest, "read", lambda *a, **k: calls.append(a) or real(*a, **k))
    fresh = describe(path)
    assert len(calls) == 1
    given = describe(path, result=result)
    assert len(calls) == 1
    assert given.config == fresh.config and given.context == fresh.context


@pytest.mark.slow
def test_all_study_files_in_reasonable_time():
    files = sorted(p for p in (ROOT / "data").glob("*/raw/**/*") if p.is_file())
    start = time.perf_counter()
    described = [describe(p) for p in files]
    elapsed = time.perf_counter() - start
    assert len(files) > 50 and not [f.problems for f in described if f.problems]
    assert elapsed / len(files) < 0.5, f"{elapsed:.1f}s for {len(files)} files"

"""Data folders made with `benchbook new` from real files written by the tools on other
people's machines (../shared/samples/real/, see its SOURCES.md), for the chapter tests.

Each chapter gets three folders: one as close to its write-up's shape as the real files allow,
one clearly different (other hardware, other models, one configuration), and one made from
whole folders as a user hands them over (a benchmark harness's result folders, every sample
of a format), with every to-do `new` leaves still open. Where `new`
leaves a role or a value to the user, `edit` fills it as a user would, and says so; nothing
is made up about the files themselves.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from benchbook.ingest import vllm_bench
from benchbook.scaffold.new import new_study
from benchbook.study.folder import MANIFEST, write_checksums

SHARED = Path(__file__).parents[1].parent / "shared" / "samples"
REAL = SHARED / "real"
LHL = SHARED / "llama-bench-lhl"

needs_shared = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/samples/real is not here")

LOGS = REAL / "vllm-server-logs"
NERDALERT = REAL / "vllm-bench-serve" / "nerdalert_results.jsonl"
DGX = REAL / "dgx-spark-djangodevreng" / "results" / "qwen-3.6"

# chapter -> {variant: (files, edits)}; an edit is (config index, key, value) set in study.yml
FOLDERS = {
    "h100-dense-vs-moe-mtp": {
        # whole folders as a user gives them (the DGX Spark harness; files no reader knows skipped)
        "harness": ([DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"], []),
        "close": ([NERDALERT], []),
        "other": ([NERDALERT], [(0, "role", "other"), (1, "role", "baseline"), (2, "role", "other")]),
    },
    "strix-halo-baseline": {
        "harness": ([REAL / "llama-bench", LHL], []),
        "close": ([REAL / "llama-bench" / "llama-cpp-fix-wmma_gpt-oss-20b.default-hip.jsonl",
                   REAL / "llama-bench" / "llama-cpp-fix-wmma_gpt-oss-20b.lhl-tune-tile.jsonl"], []),
        "other": ([REAL / "llama-bench" / "geerlingguy_ai-benchmarks_20_rx580_vulkan.log",
                   REAL / "llama-bench" / "geerlingguy_ai-benchmarks_54_radxa_cpu.md"], []),
    },
    "3090-dense-vs-sparse": {
        "harness": ([DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"], []),
        # the Qwen3-VL-30B-A3B log is taken as the sparse model by its name; the user says
        # which server the dual-NVLink log (which names no model) was: here, the dense one
        "close": ([LOGS / "vllm-0.11.0_4x3090_qwen3-vl-30b_excerpt.log", LOGS / "club-3090_74_dual-nvlink.log"],
                  [(1, "role", "dense")]),
        "other": ([LOGS / "genesis-vllm-patches_24_3090-tp8.log"], [(0, "role", "dense")]),
    },
    "power-sweep": {
        "harness": ([LOGS, REAL / "nvidia-smi"], []),
        "close": ([LOGS / "vllm_43295_mtp-slow.log", LOGS / "genesis-vllm-patches_24_3090-tp8.log"], []),
        # a server log and an nvidia-smi log of another machine and day, side by side
        "other": ([LOGS / "club-3090_105_2x3090_vllm0.20.1_mtp.log",
                   REAL / "nvidia-smi" / "RdrigoMachado_gpu_power.csv"],
                  []),
    },
    "gb10-mtp": {
        "harness": ([DGX / "qwen-3.6-35b-a3b" / "bf16", DGX / "qwen-3.6-35b-a3b" / "fp8"], []),
        "close": ([LOGS / "club-3090_105_2x3090_vllm0.20.1_mtp.log", LOGS / "vllm_43295_mtp-slow.log"], []),
        "other": ([LOGS / "club-3090_93_5090_dflash.log"], []),
    },
}
SAME_FOLDER = {("power-sweep", "other")}  # the user put the two logs in one folder


def files_in(paths) -> list[Path]:
    """The files of `paths`, folders opened (sorted), as `benchbook new` reads them."""
    return [f for p in paths for f in (sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p])]


def make(chapter: str, variant: str, root: Path) -> Path:
    """The data folder of one chapter and variant, under `root`."""
    files, edits = FOLDERS[chapter][variant]
    out = root / f"{chapter}-{variant}"
    if (chapter, variant) in SAME_FOLDER:
        staging = root / f".staging-{chapter}-{variant}"
        staging.mkdir(parents=True, exist_ok=True)
        for f in files:
            shutil.copyfile(f, staging / f.name)
        files = [staging / f.name for f in files]
    new_study(chapter, out, files, log=lambda msg: None)
    if edits:
        path = out / MANIFEST
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        ids = list(doc["configs"])
        for i, key, value in edits:
            doc["configs"][ids[i]][key] = value
        doc["todo"] = [t for t in doc.get("todo", []) if ".role:" not in t]
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        write_checksums(out)
    return out




def dgx(chapter: str, root: Path, folders: tuple[str, ...], roles: dict[str, str] | None = None) -> Path:
    """A data folder `new` makes from whole DGX Spark harness folders ('qwen-3.6-27b/fp8'),
    with roles set as a user would (folder -> role; None: the user leaves it open, a to-do)."""
    out = root / f"{chapter}-dgx-{len(folders)}"
    new_study(chapter, out, [DGX / f for f in folders], log=lambda msg: None)
    if roles:
        path = out / MANIFEST
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for folder, role in roles.items():
            model, quant = folder.split("/")  # 'qwen-3.6-35b-a3b', 'fp8' -> config 'qwen3-6-35b-a3b-fp8...'
            stem = f"qwen3-6-{model.removeprefix('qwen-3.6-')}-{quant}"
            hit = [cid for cid in doc["configs"] if cid == stem or cid.startswith(stem + "-")]
            assert len(hit) == 1, (folder, list(doc["configs"]))
            doc["configs"][hit[0]]["role"] = role or "TODO"
            doc["todo"] = [t for t in doc.get("todo", []) if not t.startswith(f"configs.{hit[0]}.role:")]
            if role is None:
                doc["todo"].append(f"configs.{hit[0]}.role: left open by the user")
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        write_checksums(out)
    return out

def read_runs(paths_by_config: dict[str, list[Path]]):
    """The runs and run_stats tables of real files, each file's runs given a configuration
    (what study.yml would say) and named by the file."""
    runs, stats = [], []
    for config, paths in paths_by_config.items():
        for path in paths:
            got = vllm_bench.read(path, run_prefix=f"{config}/{path.stem}")
            runs.append(got.tables["runs"].assign(config=config, name=path.stem))
            stats.append(got.tables["run_stats"])
    return pd.concat(runs, ignore_index=True), pd.concat(stats, ignore_index=True)

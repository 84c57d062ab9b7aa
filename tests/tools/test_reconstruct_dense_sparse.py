"""The 3090 dense-vs-sparse data folder: deterministic, and faithful to every published number.

Published targets are recomputed from the written raw files with json, csv, re and numpy,
independently of the generator; the tool-call logs are classified with the library's
classifier (the one the chapter uses), as the issue asks, but counted here.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from benchbook import ingest
from benchbook.ingest import tool_failures as tf
from benchbook.ledger.published import load_published, parse_quantity
from benchbook.study.folder import load_study, sha256_file
from files import tree_bytes  # noqa: E402  (tests/ is on sys.path)
from reconstructed import assert_deterministic, generate_twice  # noqa: E402
from tools.reconstruct import dense_sparse

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "3090-dense-vs-sparse"
PUBLISHED = DATA / "published.yml"
MIB_TO_GB = 1.048576e-3


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return generate_twice(tmp_path_factory, dense_sparse, PUBLISHED, "ds")


@pytest.fixture(scope="module")
def cells():
    """Published cell text by the value name its expression gives."""
    pub = load_published(PUBLISHED)
    return {e: c for t in pub.tables for cs, es in zip(t.rows, t.values) for c, e in zip(cs, es) if e}


@pytest.fixture(scope="module")
def manifest():
    return yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))


def _prints_like(value: float, text: str) -> bool:
    """The value, rounded as the cell was printed, gives the cell's number."""
    q = parse_quantity(text)
    if q.approx:
        return abs(value - q.value) <= 0.1 * abs(q.value)
    return abs(value - q.value) <= q.step / 2 + 1e-12


# ---------------------------------------------------------------- determinism


def test_generation_is_deterministic_and_matches_committed_data(built):
    assert_deterministic(built, DATA)
    for rel, data in tree_bytes(built[0]).items():
        if rel.startswith("raw/"):
            assert (DATA / rel).read_bytes() == data, rel


def test_committed_folder_validates_and_checksums_match():
    study = load_study(DATA)  # manifest, listed files, SHA256SUMS
    sums = dict(line.split("  ", 1)[::-1] for line in (DATA / "SHA256SUMS").read_text().splitlines())
    for entry in study.files:
        assert sums[entry.path] == sha256_file(DATA / entry.path)
    assert study.reconstructed and "reconstructed" in study.label


def test_other_seed_gives_other_bytes_but_the_same_published_numbers(tmp_path, cells):
    dense_sparse.generate(tmp_path, PUBLISHED, seed=7)
    assert (tmp_path / "SHA256SUMS").read_text() != (DATA / "SHA256SUMS").read_text()
    values = bench_values(tmp_path, yaml.safe_load((tmp_path / "study.yml").read_text()))
    for name, v in values.items():
        if name in cells:
            assert _prints_like(v, cells[name]), (name, v, cells[name])


def test_files_are_compact():
    sizes = {p: p.stat().st_size for p in DATA.rglob("*") if p.is_file()}
    assert max(sizes.values()) < 4e6
    assert sum(sizes.values()) < 10e6


# ---------------------------------------------------------------- speed runs


def bench_values(root: Path, manifest: dict) -> dict[str, float]:
    """<run>_<metric> recomputed from the bench JSON arrays with numpy alone."""
    out = {}
    for f in manifest["files"]:
        if not f["path"].endswith(".json"):
            continue
        d = json.loads((root / f["path"]).read_text(encoding="utf-8"))
        ttft = np.array(d["ttfts"])
        outl = np.array(d["output_lens"], dtype=float)
        name = f["name"]
        out[f"{name}_median_ttft_s"] = float(np.median(ttft))
        out[f"{name}_output_tps"] = float(outl.sum() / d["duration"])
        if outl.max() > 1:
            tpot = np.array([sum(x) for x in d["itls"]]) / (outl - 1)
            out[f"{name}_decode_tps"] = float(1 / np.median(tpot))
    return out


def test_every_speed_cell_is_reproduced(manifest, cells):
    values = bench_values(DATA, manifest)
    speed = {k: v for k, v in cells.items() if k.startswith(("dense_", "moe_")) and k in values}
    assert len(speed) == 10
    for name, text in speed.items():
        assert _prints_like(values[name], text), (name, values[name], text)


def test_mtp_only_on_the_dense_runs_and_counters_add_up(manifest):
    for f in manifest["files"]:
        if not f["path"].endswith(".json"):
            continue
        d = json.loads((DATA / f["path"]).read_text(encoding="utf-8"))
        has_spec = "spec_decode_num_drafts" in d
        assert has_spec == (f["config"] == "dense-27b-int4-mtp" and f["output_len"] > 1), f["name"]
        if has_spec:
            chunks = sum(len(x) for x in d["itls"])  # one verification step per streamed chunk
            assert d["spec_decode_num_drafts"] == chunks
            assert d["spec_decode_draft_tokens"] == 3 * chunks
            assert 1 + d["spec_decode_accepted_tokens"] / chunks == pytest.approx(d["spec_decode_acceptance_length"])
            # tokens = first tokens + one per step + accepted drafts, less what max_tokens cut from
            # each request's last step (vLLM still counts those drafts as accepted)
            cut = len(d["ttfts"]) + chunks + d["spec_decode_accepted_tokens"] - sum(d["output_lens"])
            assert 0 <= cut <= 3 * len(d["ttfts"])


# ---------------------------------------------------------------- start-up logs and nvidia-smi

_KV = re.compile(r"GPU KV cache size: ([\d,]+) tokens")
_CONC = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")
_AVAIL = re.compile(r"\((Worker_TP\d) pid=\d+\) .*Available KV cache memory: ([\d.]+) GiB")


def test_boot_logs_print_the_published_kv_figures(cells):
    arch = yaml.safe_load((DATA / "architecture.yml").read_text())
    for short in ("dense", "moe"):
        text = (DATA / f"raw/{short}/vllm-serve.log").read_text()
        tokens = _KV.search(text).group(1)
        ctx, conc = _CONC.search(text).groups()
        assert f"{tokens} tokens" == cells[f"{short}_kv_cache_tokens"]
        assert f"{conc}x" == cells[f"{short}_max_concurrency"]
        assert ctx == "262,144"
        # vLLM's hybrid accounting: the reserved memory covers 4 groups' worth of printed tokens
        m = arch["models"][short]
        per_token = 2 * m["full_attention_layers"]["value"] * m["kv_heads"]["value"] * m["head_dim"]["value"]
        reserved = sum(float(g) for _, g in _AVAIL.findall(text)) * 2**30
        assert len(_AVAIL.findall(text)) == 2
        assert reserved / (int(tokens.replace(",", "")) * per_token) == pytest.approx(4, rel=0.01)


def test_boot_log_secret_never_reaches_a_table():
    raw = (DATA / "raw/dense/vllm-serve.log").read_text()
    assert "'api_key': ['YOURKEY']" in raw  # as vLLM prints --api-key
    result = ingest.read(DATA / "raw/dense/vllm-serve.log")
    for df in result.tables.values():
        assert "YOURKEY" not in df.to_csv()


def test_gpu_memory_prints_like_the_published_cells(manifest, cells):
    for f in manifest["files"]:
        if f["kind"] != "gpu-memory":
            continue
        short = f["name"].split("_")[0]
        with open(DATA / f["path"], newline="") as fh:
            rows = list(csv.reader(fh, skipinitialspace=True))
        header, rows = rows[0], rows[1:]
        assert header[3] == "memory.used [MiB]"
        by_card = {}
        for row in rows:
            by_card.setdefault(row[0], []).append(float(row[3].removesuffix(" MiB")))
        assert sorted(by_card) == ["2", "3"]
        medians = [np.median(v) for v in by_card.values()]
        assert _prints_like(np.sum(medians) * MIB_TO_GB, cells[f"{short}_vram_total_gb"])
        assert _prints_like(np.mean(medians) * MIB_TO_GB, cells[f"{short}_vram_per_card_gb"])


def test_gauntlet_csv_holds_the_published_cells(cells):
    with open(DATA / "raw/gauntlet/gauntlet.csv", newline="") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    served = {"qwen3.6-27b-coder": "dense", "qwen3.6-35b-a3b": "moe"}
    seen = 0
    for row in rows:
        short = served[row["model"]]
        for field, metric in (("seconds", "seconds"), ("checks_met", "checks_met"), ("answer", "answer")):
            name = f"{short}_{row['task_id']}_{metric}"
            if name in cells:
                assert _prints_like(float(row[field]), cells[name]), name
                seen += 1
    assert seen == 12


# ---------------------------------------------------------------- tool-call logs


def _log(path: Path):
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    perms = [r for r in recs if r.get("event") == "permissions"]
    calls = [r for r in recs if r.get("event") == "tool.call"]
    allowed = tf.scripts_in_allow_rules(p for r in perms for p, v in r["rules"]["bash"].items() if v == "allow")
    tools = {t for r in perms for t in r["tools"]}
    return calls, allowed, tools


def test_tool_logs_reproduce_the_reliability_table_and_breakdown(manifest):
    pub = load_published(PUBLISHED)
    rel = next(t for t in pub.tables if t.id == "reliability")
    per = next(t for t in pub.tables if t.id == "failure-classes")
    files = {f["name"]: DATA / f["path"] for f in manifest["files"] if f["kind"] == "tool-calls"}
    assert set(files) == {"qwen36_35b", "qwen35_27b", "qwen35_122b"}
    for row, exprs in zip(rel.rows, rel.values):
        name = exprs[1].removesuffix("_sessions")
        calls, allowed, tools = _log(files[name])
        denied = [c for c in calls if c["decision"] == "deny"]
        messages = {(c["session"], c["message"]) for c in calls}
        got = [len({c["session"] for c in calls}), len(messages), len(calls), len(denied)]
        assert got == [int(x) for x in row[1:5]], name
        assert f"{100 * len(denied) / len(calls):.1f}%" == row[5]
        classes = {}
        for c in denied:
            target = c["args"].get("command") or c["args"].get("filePath") if c["tool"] in ("bash", "read") \
                else json.dumps(c["args"])
            cls = tf.classify(c["tool"], target, known_tools=tools, allowed_scripts=allowed)
            classes[cls] = classes.get(cls, 0) + 1
        col = 1 + [e[1] for e in rel.values].index(exprs[1])
        for prow, pexprs in zip(per.rows, per.values):
            cls = pexprs[col].split("_per100_")[1].replace("_", "-")
            n = len(denied) if cls == "total" else classes.get(cls, 0)
            assert f"{100 * n / len(calls):.2f}" == prow[col], (name, cls)


def test_denied_commands_look_like_the_write_up_describes():
    calls, _, _ = _log(DATA / "raw/agent-logs/qwen35-27b.jsonl")
    reads = [c["args"]["filePath"] for c in calls if c["tool"] == "read" and c["decision"] == "deny"]
    assert reads and all(re.fullmatch(r"/data/rendered/\w+\.png", p) for p in reads)
    calls, _, _ = _log(DATA / "raw/agent-logs/qwen35-122b.jsonl")
    assert {c["tool"] for c in calls if c["decision"] == "deny"} >= {"emit_guidance", "bash", "read"}
    assert any("<< REPORT_EOF" in c["args"].get("command", "") for c in calls)


@pytest.mark.parametrize(("model", "style"), [("qwen36_35b", {"handshake_complete": 1}),
                                              ("qwen35_27b", {"handshake_complete": 4})])
def test_a_move_that_contradicts_the_write_up_s_ralf_claims_is_refused(tmp_path, model, style):
    """The write-up says the 3.6-35B closed no ralf stage and the 27B every one: logs written
    otherwise would fail its own claims, so the generator refuses them as it refuses a misprinted
    cell (`make marks` moved the 35B to one closed stage, and the claim then did not hold)."""
    import shutil

    from tools.marks_check import generate
    from tools.reconstruct.fit import FitError

    out = tmp_path / "3090-dense-vs-sparse"
    shutil.copytree(DATA, out)
    styles = dense_sparse.ASSUMPTIONS["tool_log_models"][0]
    moved = {**styles, model: {**styles[model], **style}}
    with pytest.raises(FitError, match=f"{model}_ralf_closed"):
        generate("3090-dense-vs-sparse", out, {"tool_log_models": moved})


def test_what_the_write_up_s_value_names_fix_of_a_run_is_no_choice(tmp_path):
    """`dense_prefill_3525_median_ttft_s` and `moe_c4_output_tps` fix the prefill prompt and the
    four clients: `make marks` moved the prefill prompt, the runs were renamed and every claim on
    them read "not derivable". Those settings are not in the `runs` choice, and a move that brings
    one back is refused."""
    import shutil

    from tools.marks_check import generate
    from tools.reconstruct.fit import FitError

    chosen = dense_sparse.ASSUMPTIONS["runs"][0]
    assert "input_len" not in chosen["prefill_3525"] and "concurrency" not in chosen["c4"]
    assert dense_sparse.runs()["prefill_3525"]["input_len"] == 3525 and dense_sparse.runs()["c4"]["concurrency"] == 4
    out = tmp_path / "3090-dense-vs-sparse"
    shutil.copytree(DATA, out)
    with pytest.raises(FitError, match="prefill_3525.input_len"):
        generate("3090-dense-vs-sparse", out, {"runs": {**chosen, "prefill_3525": {**chosen["prefill_3525"],
                                                                                      "input_len": 3000}}})


def test_the_cards_name_and_memory_are_the_write_up_s_rtx_3090_not_a_choice():
    """`make marks` moved the cards' memory from 24,576 to 27,034 MiB and a claim on the VRAM
    budget changed its basis: the RTX 3090's 24 GB is a fact (data/facts/platforms.yml)."""
    assert not {"name", "total_mib"} & set(dense_sparse.ASSUMPTIONS["smi"][0])
    assert dense_sparse.card() == {"name": "NVIDIA GeForce RTX 3090", "total_mib": 24576}
    for log in (DATA / "raw/dense/nvidia-smi.csv", DATA / "raw/moe/nvidia-smi.csv"):
        first = log.read_text(encoding="utf-8").splitlines()[1].split(", ")
        assert first[2:5:2] == ["NVIDIA GeForce RTX 3090", "24576 MiB"]


@pytest.mark.parametrize("smi", [{"indices": (14, -14)}, {"indices": (2, 2)}, {"busy_w": (2, 3)},
                                 {"rank_offset_mib": (13, -14)}])
def test_an_smi_choice_nvidia_smi_could_not_print_is_refused(monkeypatch, smi):
    """`make marks` rotated the `smi` numbers into each other's places: GPU -14, busy at 2 W,
    and the page then counted 370 ignored rows. Such a move is refused, and the logged command
    names the indices chosen."""
    from tools.reconstruct.fit import FitError

    value, why = dense_sparse.ASSUMPTIONS["smi"]
    monkeypatch.setitem(dense_sparse.ASSUMPTIONS, "smi", ({**value, **smi}, why))
    with pytest.raises(FitError, match="smi"):
        dense_sparse._smi_choice()
    assert "nvidia-smi -i 2,3 " in (DATA / "study.yml").read_text(encoding="utf-8")

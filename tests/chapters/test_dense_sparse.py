"""The 3090 dense-vs-sparse chapter, executed for real on a copy of the project.

Glued numbers and tables are compared with values recomputed here from the raw files
(json, csv, re, numpy and exact binomial arithmetic), so a slip in the chapter's code or
in the library it calls shows up as a disagreement. One real `benchbook run` plus
`jupyter-book build` (marked `build`) checks the rendered page.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.chapters.dense_sparse import analysis as ds
from benchbook.page import report
from benchbook.study.folder import write_checksums
from pages import glued, html_tables, nb_tables  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "3090-dense-vs-sparse"
DATA = ROOT / "data" / STUDY
MIB_TO_GB = 1.048576e-3


# ---------------------------------------------------------------- the project copy


project, executed = projects.one_chapter_book(STUDY)


def nb_text(nb) -> str:
    return "\n".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells for o in c.get("outputs", []))


# ---------------------------------------------------------------- independent recomputation


@pytest.fixture(scope="module")
def raw():
    manifest = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))
    speed = {}
    for f in manifest["files"]:
        if f["path"].endswith(".json"):
            d = json.loads((DATA / f["path"]).read_text())
            out = np.array(d["output_lens"], dtype=float)
            tpot = np.array([sum(x) for x in d["itls"]]) / np.maximum(out - 1, 1)
            speed[f["name"]] = dict(ttft=float(np.median(d["ttfts"])), agg=float(out.sum() / d["duration"]),
                                    decode=float(1 / np.median(tpot)) if out.max() > 1 else math.nan)
    logs = {}
    for f in manifest["files"]:
        if f["kind"] == "tool-calls":
            recs = [json.loads(x) for x in (DATA / f["path"]).read_text().splitlines()]
            calls = [r for r in recs if r.get("event") == "tool.call"]
            logs[f["name"]] = dict(n=len(calls), k=sum(c["decision"] == "deny" for c in calls), calls=calls)
    boot = {}
    for short in ("dense", "moe"):
        text = (DATA / f"raw/{short}/vllm-serve.log").read_text()
        tokens = int(re.search(r"GPU KV cache size: ([\d,]+)", text).group(1).replace(",", ""))
        ctx, conc = re.search(r"concurrency for ([\d,]+) tokens per request: ([\d.]+)x", text).groups()
        gib = [float(x) for x in re.findall(r"Available KV cache memory: ([\d.]+) GiB", text)]
        boot[short] = dict(tokens=tokens, ctx=int(ctx.replace(",", "")), conc=float(conc), gib=sum(gib))
    vram = {}
    for short in ("dense", "moe"):
        with open(DATA / f"raw/{short}/nvidia-smi.csv", newline="") as fh:
            rows = list(csv.reader(fh, skipinitialspace=True))[1:]
        cards = {}
        for row in rows:
            cards.setdefault(row[0], []).append(float(row[3].split()[0]))
        vram[short] = [np.median(v) * MIB_TO_GB for v in cards.values()]
    return dict(speed=speed, logs=logs, boot=boot, vram=vram)


def wilson(k, n, z=1.959963984540054):
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def fisher(k1, n1, k2, n2):
    """Two-sided Fisher p by enumerating every table with the observed margins."""
    total, col = n1 + n2, k1 + k2

    def prob(x):
        return math.comb(n1, x) * math.comb(n2, col - x) / math.comb(total, col)

    obs = prob(k1)
    return sum(prob(x) for x in range(max(0, col - n2), min(col, n1) + 1) if prob(x) <= obs * (1 + 1e-9))


# ---------------------------------------------------------------- speed and memory


def test_speed_glue_and_table_match_the_raw_runs(executed, raw):
    g, s = glued(executed), raw["speed"]
    assert g["adv_ttft_short"] == pytest.approx(s["dense_ttft_short"]["ttft"] / s["moe_ttft_short"]["ttft"], rel=1e-9)
    assert g["adv_decode_single"] == pytest.approx(
        s["moe_decode_single"]["decode"] / s["dense_decode_single"]["decode"], rel=1e-9)
    assert g["adv_prefill"] == pytest.approx(s["dense_prefill_3525"]["ttft"] / s["moe_prefill_3525"]["ttft"], rel=1e-9)
    assert g["adv_decode_long"] == pytest.approx(
        s["moe_decode_long"]["decode"] / s["dense_decode_long"]["decode"], rel=1e-9)
    assert g["adv_concurrent"] == pytest.approx(s["moe_c4"]["agg"] / s["dense_c4"]["agg"], rel=1e-9)
    assert g["adv_min_metric"] == "Throughput @ 4 concurrent" and g["adv_max_metric"].startswith("Prefill TTFT")
    assert g["prefill_prompt"] == 3525  # from the prefill run's context, not typed
    table = nb_tables(executed)["Speed: the dense model against the sparse one"].set_index("metric")
    assert table.loc["TTFT (short prompt)", "27B dense INT4 + MTP"] == f"{s['dense_ttft_short']['ttft'] * 1000:,.0f} ms"
    assert table.loc["Throughput @ 4 concurrent", "advantage of 35B-A3B MoE AWQ INT4"] == \
        f"{g['adv_concurrent']:.2f}× higher"


def test_the_smallest_and_largest_advantage_rest_on_their_own_row_only():
    """make marks: "Throughput @ 4 concurrent" carried `runs`: every row's advantage was read
    to pick it (no move of `runs` changed which row is smallest), and a name was taken to quote
    its runs' prompt length where only the prefill row's does."""
    from benchbook.study.marks import Glued

    r, out = ds.analyse(DATA), Glued()
    ds._glue_speed(r, out)
    own = {row.metric: ds.speed_ids(r, row.kind, row.unit)["advantage"] for row in ds.speed_table(r).itertuples()}
    adv = ds.speed_table(r).set_index("metric")["advantage"].astype(float)
    assert out.assumed.get("adv_min", ()) == own[adv.idxmin()]
    assert out.assumed.get("adv_max", ()) == own[adv.idxmax()]
    # its name quotes the number of clients, the write-up's: nothing the generator chose
    assert adv.idxmin() == "Throughput @ 4 concurrent" and out.assumed.get("adv_min_metric", ()) == ()


def test_memory_and_kv_cross_check_follow_the_logs_and_architecture(executed, raw):
    g, b = glued(executed), raw["boot"]
    arch = yaml.safe_load((DATA / "architecture.yml").read_text())
    for short in ("dense", "moe"):
        m = arch["models"][short]
        bpt = 2 * m["full_attention_layers"]["value"] * m["kv_heads"]["value"] * m["head_dim"]["value"] * 1
        assert g[f"{short}_kv_bytes_per_token"] == bpt
        assert g[f"{short}_kv_cache_tokens"] == b[short]["tokens"]
        assert g[f"{short}_conc_over_tokens"] == pytest.approx(
            b[short]["conc"] / (b[short]["tokens"] / b[short]["ctx"]))
        assert g[f"{short}_reserved_over_needed"] == pytest.approx(b[short]["gib"] * 2**30 / (b[short]["tokens"] * bpt))
        assert g[f"{short}_vram_per_card_gb"] == pytest.approx(np.mean(raw["vram"][short]))
        assert g[f"{short}_vram_total_gb"] == pytest.approx(np.sum(raw["vram"][short]))
    assert g["kv_bytes_ratio"] == pytest.approx(3.2)
    kv = nb_tables(executed)["KV capacity: the start-up log against the architecture"]
    assert list(kv["KV per token"]) == ["32 KiB", "10 KiB"]
    assert [int(str(x).replace(",", "")) for x in kv["printed KV tokens"]] == [b["dense"]["tokens"], b["moe"]["tokens"]]


# ---------------------------------------------------------------- reliability


def test_error_rates_intervals_and_tests_match_exact_arithmetic(executed, raw):
    g, logs = glued(executed), raw["logs"]
    r = ds.analyse(DATA)  # each model's rates are the page's table (and its download), not glue
    rel = ds.reliability_table(r).set_index("name")
    for name, log in logs.items():
        assert rel.loc[name, "errors"] == log["k"] and rel.loc[name, "tool calls"] == log["n"]
        assert 100 * rel.loc[name, "error rate"] == pytest.approx(100 * log["k"] / log["n"])
        lo, hi = wilson(log["k"], log["n"])
        assert 100 * rel.loc[name, "low"] == pytest.approx(100 * lo)
        assert 100 * rel.loc[name, "high"] == pytest.approx(100 * hi)
    a, b = logs["qwen36_35b"], logs["qwen35_27b"]
    p = ds.pairwise_tests(r).set_index(["a", "b"])
    assert p.loc[("qwen36_35b", "qwen35_27b"), "p_fisher"] == pytest.approx(fisher(a["k"], a["n"], b["k"], b["n"]),
                                                                           rel=1e-9)
    assert g["p_min_holm"] == pytest.approx(min(1, 3 * g["p_min"]))
    shown = nb_tables(executed)["Tool-call errors per model"]
    assert list(shown["error rate"]) == ["12.0%", "5.6%", "10.2%"]
    assert list(shown["tool calls"]) == [158, 161, 128]


def test_failure_class_table_and_recovery_follow_the_logs(executed, raw):
    table = nb_tables(executed)["Denied calls per 100 tool calls, by failure class"].set_index("failure class")
    assert [f"{float(x):.2f}" for x in table.loc["Total"]] == ["12.03", "5.59", "10.16"]
    assert [f"{float(x):.2f}" for x in table.loc["Pipe to head / tail / grep / jq / sed"]] == ["6.33", "0.62", "1.56"]
    assert "Heredoc (<<EOF) into uv run / python" in table.index  # escaped in the HTML, read back as text
    rec = nb_tables(executed)["Recovery after a denied call"].set_index("model")
    for name, log in raw["logs"].items():
        calls = log["calls"]
        retries = sum(1 for a, b in zip(calls, calls[1:])
                      if a["session"] == b["session"] and a["decision"] == "deny" and b["decision"] == "deny")
        label = {"qwen36_35b": "qwen3.6-35b-a3b (MoE)", "qwen35_27b": "qwen3.5-27b (dense)",
                 "qwen35_122b": "qwen3.5-122b (MoE)"}[name]
        assert rec.loc[label, "next call denied again (retry)"].startswith(f"{retries} (")


def test_ledger_caveats_and_reference_data(executed):
    nb = executed
    ledger = nb_tables(nb)["Claims ledger"].set_index("claim id")
    published = yaml.safe_load((DATA / "published.yml").read_text())
    assert list(ledger.index) == [c["id"] for c in published["claims"]]
    for cid in ("everywhere-2x", "dense-concurrency-vs-tokens", "moe-concurrency-vs-tokens", "read-42pct-27b"):
        assert ledger.loc[cid, "verdict"] == "does not hold", cid
    for cid in ("prefill-ratio", "kv-ratio", "half-vs-35b", "pipe-over-half-35b", "emit-guidance-twice"):
        assert ledger.loc[cid, "verdict"] == "holds", cid
    text = nb_text(nb)
    for rule in ("start-up-log-disagrees", "kv-arithmetic", "vram-vs-utilisation", "decode-long-faster",
                 "small-error-counts", "reliability-models-differ", "reconstructed"):
        assert f"data rule: {rule}" in text, rule
    assert "authors (seed-003)" in text and "#40691" in text
    tables = nb_tables(nb)
    ref = next(v for k, v in tables.items() if k.startswith("Qwen official model-card figures, not re-run"))
    assert [float(x) for x in ref.set_index("Benchmark").loc["SWE-bench Verified"]] == [77.2, 73.4]
    assert glued(nb)["cells_within"] == glued(nb)["cells_total"] == 70


def test_downloads_written(project, executed):
    folder = project / "book/studies" / STUDY
    for name in ("runs", "boot", "tool_calls", "reliability", "failure_classes", "claims", "published_vs_reproduced"):
        assert (folder / f"{name}.csv").is_file(), name
    tc = pd.read_csv(folder / "tool_calls.csv")
    assert set(tc["failure_class"].dropna()) <= set(ds.CLASS_IDS)
    assert len(tc) == 158 + 161 + 128


def test_the_chapter_follows_changed_data(tmp_path):
    """Allow one of the 27B's denied calls and drop a card's memory: the numbers move."""
    data = tmp_path / STUDY
    shutil.copytree(DATA, data)
    path = data / "raw/agent-logs/qwen35-27b.jsonl"
    lines = path.read_text().splitlines()
    k = next(i for i, x in enumerate(lines) if '"decision":"deny"' in x and '"tool":"read"' in x)
    rec = json.loads(lines[k])
    rec["decision"] = "allow"
    rec.pop("reason", None)
    lines[k] = json.dumps(rec, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")
    write_checksums(data)
    r = ds.analyse(data)
    assert r.values["qwen35_27b_errors"] == 8
    assert r.values["qwen35_27b_per100_blocked_read_path"] == pytest.approx(200 / 161)
    bad = report.mismatches(r.comparison)
    assert ({("qwen3.5-27b (dense)", "Errors"), ("Read tool with blocked path", "27B")}
            <= set(zip(bad["row"], bad["column"])))
    assert r.ledger.set_index("id").loc["read-42pct-27b", "recomputed"] == "25%"


# ---------------------------------------------------------------- the real build


@pytest.mark.build
def test_benchbook_run_and_book_build_show_the_chapter(tmp_path):
    project = projects.copy_project(tmp_path, chapters=[STUDY])
    proc = subprocess.run([str(BIN / "benchbook"), "run", STUDY], cwd=project, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-n", "--keep-going"], cwd=project,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # nitpicky and warning-free as far as this chapter goes (other pages are other helpers' business)
    log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    mine = [line for line in log.splitlines() if "WARNING" in line and STUDY in line]
    assert not mine, "\n".join(mine)
    page = (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")
    assert "{glue" not in page and "Data: reconstructed" in page
    tables = html_tables(page)
    assert "Speed: the dense model against the sparse one" in tables
    assert "Pairwise comparison of error rates" in tables
    assert any(k.startswith("Qwen official model-card figures, not re-run") for k in tables)
    assert "Published cells outside their tolerance" not in tables
    assert re.search(r"No published cell is outside its tolerance \(\d+ compared\)", page)
    assert "Heredoc (&lt;&lt;EOF) into uv run / python" in page  # escaped, not swallowed as a tag
    for alt in ('alt="Two horizontal bar charts', 'alt="Dot plot of the tool-call error rate',
                'alt="Horizontal grouped bar chart of denied tool calls'):
        assert alt in page, alt
    downloads = {p.name for p in (project / "book/_build/html/_downloads").rglob("*")}
    assert {"tool_calls.csv", "reliability.csv", "3090-dense-vs-sparse-tables.zip"} <= downloads


def test_the_chapter_runs_on_a_folder_without_logs_or_gauntlet(tmp_path):
    """Another data folder may hold only the benchmark runs: the rest says 'not in the data'."""
    data = tmp_path / STUDY
    shutil.copytree(DATA, data)
    manifest = yaml.safe_load((data / "study.yml").read_text())
    keep = [f for f in manifest["files"] if f["path"].endswith(".json")]
    for f in manifest["files"]:
        if f not in keep:
            (data / f["path"]).unlink()
    manifest["files"] = keep
    (data / "study.yml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    write_checksums(data)
    r = ds.analyse(data)
    g = ds.glue_values(r)
    assert g["adv_concurrent"] > 1 and "qwen35_27b_error_pct" not in g
    assert r.has("speed") and not r.has("reliability") and not r.has("gauntlet") and not r.has("memory")
    assert len(ds.reliability_display(r)) == 0 and len(ds.pairwise_display(r)) == 0
    assert len(ds.recovery_display(r)) == 0 and len(ds.gauntlet_table(r)) == 0
    ledger = r.ledger.set_index("id")
    assert ledger.loc["rate-27b-stated", "verdict"] == "holds"  # consistency: published vs published
    for cid in ("half-vs-35b", "dense-concurrency-vs-tokens", "kv-ratio", "bugs-1-4s"):
        if ledger.loc[cid, "kind"] == "data":
            assert ledger.loc[cid, "verdict"] == "not derivable", cid
    assert ds.breakdown_figure(r) is not None and ds.speed_figure(r) is not None


def test_rate_sweeps_of_the_dgx_spark_harness(tmp_path):
    """`new` gives the 27B the role dense and the 35B-A3B the role sparse from their names;
    the section shows both models' sweeps, one table each, and a figure of the main sweep."""
    import matplotlib.pyplot as plt

    from benchbook.page import plots
    from realdata import REAL, dgx

    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    data = dgx(ds.STUDY, tmp_path, ("qwen-3.6-35b-a3b/fp8", "qwen-3.6-27b/fp8"))
    r = ds.analyse(data, DATA / "published.yml", DATA / "architecture.yml")
    assert r.has("rate")
    from benchbook.analysis import rate_sweep

    tables = rate_sweep.steps_tables(r.rates)
    assert [c.split(":")[0] for c, _ in tables] == [r.label_of("dense"), r.label_of("moe")]
    assert all(len(t) == 9 for _, t in tables)
    fig = plots.rate_sweep(r.rates)
    assert fig is not None and len(fig.axes) == 3  # one workload was swept at two or more rates
    plt.close(fig)
    assert ds.glue_values(r)["rate_steps"] == 18


def test_each_serving_point_pairs_one_run_s_rates_per_device_of_two_gpus():
    from benchbook.book.serving_points import NO_DECODE, conform_points

    r = ds.analyse(DATA)
    p = conform_points(ds.serving_points(r), STUDY)
    pts = p[p["left_out"] == ""].set_index("run")
    runs = r.runs.set_index("name")
    for name, x in pts.iterrows():
        assert x["per_user_tps"] == pytest.approx(1 / runs.loc[name, "median_tpot_s"], rel=1e-12)
        assert x["aggregate_tps"] == runs.loc[name, "output_tps"]
        assert x["concurrency"] == runs.loc[name, "max_concurrency"]
        assert x["devices"] == 2 and x["per_device_tps"] == pytest.approx(x["aggregate_tps"] / 2)
    assert list(p.loc[p["left_out"] != "", "left_out"]) == [NO_DECODE, NO_DECODE]  # the two prefill runs
    assert len(pts) == len(r.runs) - 2


def test_the_kv_cross_check_carries_the_start_up_choices_it_reads():
    """make marks: moving `boot` moved "the log reserves 20.74 GiB ... 4.01×" in the glue and the
    kv-arithmetic caveat, which carried no mark: both read the KV memory a generator wrote."""
    r = ds.analyse(DATA)
    arithmetic = [c for o, c in zip(r.caveats["origin"], r.caveats["caveat"]) if o == "data rule: kv-arithmetic"]
    dense = [c for c in arithmetic if "Qwen3.6-27B:" in c]
    assert len(dense) == 1 and dense[0].startswith("Assumed, not measured") and "(boot;" in dense[0]
    assert "boot" in ds.kv_ids(r, "dense", "reserved / needed")
    assert ds.kv_ids(r, "dense", "KV bytes per token") == ()  # the architecture's, a published fact

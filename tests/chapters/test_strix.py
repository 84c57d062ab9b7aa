"""The Strix Halo baseline chapter, executed for real on a copy of the project.

The chapter's glued numbers and tables are compared with values recomputed here from the
raw files with json and numpy alone (llama-bench samples, vllm bench arrays), so a slip in
the chapter's code or in the library it calls shows up as a disagreement. One real
`jupyter-book build` (marked `build`) checks the rendered page.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.ledger.published import parse_quantity
from pages import glued, html_tables, nb_tables  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "strix-halo-baseline"
H100 = "h100-dense-vs-moe-mtp"
STRIX_DIR = ROOT / "data" / STUDY
H100_DIR = ROOT / "data" / H100
LHL = "strix-halo-qwen3-30b-lhl"  # the book's page of this notebook on real llama-bench runs
LHL_DIR = ROOT / "data" / LHL
AGENTS, ANSWER, LONG_PROMPT = 16, 200, 4096  # the notebook's default parameters


# ---------------------------------------------------------------- the project copy


project, executed = projects.one_chapter_book(STUDY)


# ---------------------------------------------------------------- independent recomputation


def _study_files(root: Path) -> list[dict]:
    return yaml.safe_load((root / "study.yml").read_text(encoding="utf-8"))["files"]


def llama_rows() -> pd.DataFrame:
    """Each llama-bench test row: t/s from its nanosecond samples, as llama-bench defines it."""
    rows = []
    for f in _study_files(STRIX_DIR):
        if f["kind"] != "llama-bench":
            continue
        for line in (STRIX_DIR / f["path"]).read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            n_tok = d["n_prompt"] + d["n_gen"]
            ts = 1e9 * n_tok / np.array(d["samples_ns"], dtype=float)
            test = f"pp{d['n_prompt']}" if d["n_gen"] == 0 else f"tg{d['n_gen']}"
            rows.append(dict(config=f["config"], test=test, mean=ts.mean(), sd=ts.std(ddof=1), n=len(ts),
                             build=d["build_number"]))
    return pd.DataFrame(rows)


def bench_run(path: Path) -> dict:
    d = json.loads(path.read_text(encoding="utf-8"))
    ttft = np.array(d["ttfts"], dtype=float)
    out = np.array(d["output_lens"], dtype=float)
    tpot = np.array([sum(r) for r in d["itls"]]) / (out - 1)
    return dict(output_tps=out.sum() / d["duration"], median_ttft=np.median(ttft), median_tpot=np.median(tpot),
                prefill=np.median(np.array(d["input_lens"]) / ttft), n=len(ttft))


def h100_per_agent(config: str, concurrency: int) -> tuple[float, float]:
    """(per-agent t/s, median TTFT) of the H100 sweep run at that concurrency."""
    for f in _study_files(H100_DIR):
        if f["config"] == config and f["kind"] == "sweep" and f["concurrency"] == concurrency:
            run = bench_run(H100_DIR / f["path"])
            return run["output_tps"] / concurrency, run["median_ttft"]
    raise AssertionError(f"no {config} sweep run at concurrency {concurrency}")


def strix_server() -> dict:
    f = next(f for f in _study_files(STRIX_DIR) if f["config"] == "strix-llama-server")
    return bench_run(STRIX_DIR / f["path"])


@pytest.fixture(scope="module")
def raw():
    lb = llama_rows()
    best = lb.loc[lb.groupby("test")["mean"].idxmax()].set_index("test")
    worst = lb.loc[lb.groupby("test")["mean"].idxmin()].set_index("test")
    return dict(lb=lb, best=best, worst=worst, server=strix_server())


# ---------------------------------------------------------------- llama-bench results


def test_best_of_and_winning_backend_match_the_raw_samples(executed, raw):
    g, best = glued(executed), raw["best"]
    assert g["pp_test"] == "pp512" and g["tg_test"] == "tg128"
    assert g["pp_best_tps"] == pytest.approx(best.loc["pp512", "mean"], rel=1e-6)
    assert g["tg_best_tps"] == pytest.approx(best.loc["tg128", "mean"], rel=1e-6)
    assert g["pp_best_config"] == best.loc["pp512", "config"]
    assert g["tg_best_config"] == best.loc["tg128", "config"]
    assert g["backends"] == raw["lb"]["config"].nunique()
    assert g["winners"] == best["config"].nunique()
    shown = nb_tables(executed)["Best of the backends, per test"].set_index("test")
    for test in ("pp512", "tg128"):
        assert shown.loc[test, "winning config"] == best.loc[test, "config"]
        assert shown.loc[test, "best t/s (mean ± sd)"] == f"{best.loc[test, 'mean']:,.2f} ± {best.loc[test, 'sd']:.2f}"
        assert shown.loc[test, "build"] == f"b{best.loc[test, 'build']}"


def test_per_backend_table_has_every_test_with_mean_sd_and_samples(executed, raw):
    shown = nb_tables(executed)["llama-bench results per backend"]
    lb = raw["lb"]
    assert len(shown) == len(lb)
    got = {(r["config"], r["test"]): r for _, r in shown.iterrows()}
    for _, row in lb.iterrows():
        cell = got[(row["config"], row["test"])]
        assert cell["t/s (mean ± sd)"] == f"{row['mean']:,.2f} ± {row['sd']:.2f}"
        assert cell["samples"] == row["n"]
        assert cell["build"].startswith(f"b{row['build']} (")
    assert set(shown["backend"]) == {"ROCm", "Vulkan"}


def test_spread_between_backends(executed, raw):
    g, best, worst = glued(executed), raw["best"], raw["worst"]
    for role, test in (("pp", "pp512"), ("tg", "tg128")):
        assert g[f"{role}_spread"] == pytest.approx(best.loc[test, "mean"] / worst.loc[test, "mean"], rel=1e-6)
        assert g[f"{role}_worst_config"] == worst.loc[test, "config"]
    spread = nb_tables(executed)["Spread between backends: best against worst, per test"].set_index("test")
    assert spread.loc["pp512", "best / worst"] == f"{best.loc['pp512', 'mean'] / worst.loc['pp512', 'mean']:.2f}×"
    single = nb_tables(executed)["Each build alone, as a share of the best-of figure"].set_index("build")
    lb = raw["lb"]
    for _, row in lb.iterrows():
        share = row["mean"] / best.loc[row["test"], "mean"]
        assert single.loc[row["config"], row["test"]] == f"{share:.1%}"
    # no single build reaches the best-of figure on every test
    assert all(single.loc[c, "lowest share"] != "100.0%" for c in single.index)


# ---------------------------------------------------------------- latency run and serving model


def test_server_latencies_and_the_prefill_they_imply(executed, raw):
    g, s = glued(executed), raw["server"]
    assert g["server_ttft_ms"] == pytest.approx(1000 * s["median_ttft"], rel=1e-9)
    assert g["server_tpot_ms"] == pytest.approx(1000 * s["median_tpot"], rel=1e-9)
    assert g["server_prefill_tps"] == pytest.approx(s["prefill"], rel=1e-9)
    assert g["server_requests"] == s["n"]
    pp = raw["best"].loc["pp512", "mean"]
    assert g["ttft_at_pp_rate_s"] == pytest.approx(LONG_PROMPT / pp, rel=1e-6)
    assert g["prefill_ratio"] == pytest.approx(s["prefill"] / pp, rel=1e-6)


def test_sequential_serving_times_and_ratios(executed, raw):
    g = glued(executed)
    assert (g["agents"], g["answer_tokens"], g["prompt_tokens"], g["long_prompt_tokens"]) == \
        (AGENTS, ANSWER, 0, LONG_PROMPT)
    tg, pp = raw["best"].loc["tg128", "mean"], raw["best"].loc["pp512", "mean"]
    seq = AGENTS * ANSWER / tg
    seq_long = seq + AGENTS * LONG_PROMPT / pp
    dense, dense_ttft = h100_per_agent("h100-dense", AGENTS)
    moe, moe_ttft = h100_per_agent("h100-moe-mtp", AGENTS)
    # the chapter uses llama-bench's printed avg_ts (6 decimals); ours come from the samples
    assert g["strix_s"] == pytest.approx(seq, rel=1e-6)
    assert g["long_strix_s"] == pytest.approx(seq_long, rel=1e-6)
    # the prose quotes the faster batched configuration, with and without its median TTFT
    assert g["batched_label"] == "H100, 35B-A3B FP8 + MTP" and moe > dense
    assert g["batched_s"] == pytest.approx(ANSWER / moe, rel=1e-9)
    assert g["batched_advantage"] == pytest.approx(seq / (ANSWER / moe), rel=1e-6)
    assert g["batched_s_ttft"] == pytest.approx(ANSWER / moe + moe_ttft, rel=1e-9)
    from benchbook.chapters.strix import analysis as strix

    sv = strix.serving(strix.analyse(STRIX_DIR, H100_DIR)).set_index("prompt_tokens")
    assert sv.loc[0, "dense_s"] == pytest.approx(ANSWER / dense, rel=1e-9)
    assert sv.loc[LONG_PROMPT, "moe_s"].iloc[0] == pytest.approx(ANSWER / moe + moe_ttft, rel=1e-9)  # TTFT at 4,096
    shown = nb_tables(executed)["Time to serve all agents: sequential against batched"]
    assert list(shown["Strix Halo (sequential)"])[:2] == [f"{seq:.2f} s", f"{seq_long:.2f} s"]
    assert shown["H100, 27B dense FP8, batched (c=16): time (advantage)"].iloc[0] == \
        f"{ANSWER / dense:.2f} s ({seq / (ANSWER / dense):.2f}×)"
    assert shown["H100, 35B-A3B FP8 + MTP, batched (c=16): time (advantage)"].iloc[0] == \
        f"{ANSWER / moe:.2f} s ({seq / (ANSWER / moe):.2f}×)"
    # the third scenario reads prefill at the rate the llama-server run implies
    s = raw["server"]
    assert shown["Strix Halo (sequential)"].iloc[2] == f"{seq + AGENTS * LONG_PROMPT / s['prefill']:.2f} s"


def _verdict(published: str, got: float, approx: bool = False) -> str:
    q = parse_quantity(published)
    tol = (q.step / 2) / q.value + (0.10 if (q.approx or approx) else 0.01)
    return "holds" if abs(got / q.value - 1) <= tol else "does not hold"


def test_ledger_covers_every_claim_and_recomputes_the_serving_claims(executed, project, raw):
    ledger = pd.read_csv(project / "book/studies" / STUDY / "claims.csv", keep_default_na=False)
    published = yaml.safe_load((STRIX_DIR / "published.yml").read_text(encoding="utf-8"))
    assert list(ledger["id"]) == [c["id"] for c in published["claims"]]
    assert {"holds", "does not hold", "not derivable"} == set(ledger["verdict"])
    kinds = {c["id"]: c.get("kind", "data") for c in published["claims"]}
    assert (ledger["verdict"] == "not derivable").sum() >= sum(k == "not-derivable" for k in kinds.values())
    assert {"data", "consistency", "not-derivable"} == set(kinds.values())

    v = ledger.set_index("id")["verdict"]
    tg, pp = raw["best"].loc["tg128", "mean"], raw["best"].loc["pp512", "mean"]
    seq = AGENTS * ANSWER / tg
    dense, _ = h100_per_agent("h100-dense", AGENTS)
    moe, _ = h100_per_agent("h100-moe-mtp", AGENTS)
    expected = {
        "strix-seq-60s": _verdict("roughly 60 s", seq),
        "strix-dense-batched-5s": _verdict("roughly 5 s", ANSWER / dense),
        "strix-dense-serving-12x": _verdict("12×", seq * dense / ANSWER, approx=True),
        "strix-moe-batched-2-5s": _verdict("roughly 2.5 s", ANSWER / moe),
        "strix-moe-serving-24x": _verdict("~24×", seq * moe / ANSWER),
        "strix-moe-serving-24x-stated": _verdict("~24×", 60 / 2.5),
        "strix-ttft-vs-prefill": _verdict("434 ms", 4096 / 1388),
        "strix-ttft-vs-prefill-data": _verdict("434 ms", 4096 / pp),
        "strix-tpot-vs-gen": _verdict("54 t/s", 1 / 0.0185),
        "strix-moe-batched-2-5s-stated": _verdict("roughly 2.5 s", 200 / 103.3),
    }
    assert {k: v[k] for k in expected} == expected
    assert v["strix-moe-prefill-8x"] == "not derivable"  # no MoE+MTP prefill run exists
    note = ledger.set_index("id").loc["strix-ttft-7k", "note"]
    assert "true as a bound" in note  # 7,000 tokens at 1,388 t/s is far more than 400 ms


def test_published_cells_and_downloads(executed, project):
    g = glued(executed)
    shown = nb_tables(executed)
    like = next(t for k, t in shown.items() if k.startswith("Single request, like for like"))
    assert like.loc[0, "Strix Halo (35B MoE)"].startswith("434 ms → ")
    assert g["cells_within"] <= g["cells_total"] == 15
    folder = project / "book/studies" / STUDY
    for name in ("llama_bench.csv", "best_of.csv", "serving.csv", "serving_curve.csv", "claims.csv",
                 "published_vs_reproduced.csv", "strix-halo-baseline-tables.zip"):
        assert (folder / name).is_file(), name
    curve = pd.read_csv(folder / "serving_curve.csv")
    strix = curve[(curve["server"] == "Strix Halo (sequential)") & (curve["prompt_tokens"] == 0)]
    assert np.allclose(np.diff(strix["seconds"]), g["strix_s"] / AGENTS)  # linear in N


def test_caveats_name_envelope_batching_model_shape_authorship_and_ttft_assumption(executed):
    text = " ".join(" ".join(map(str, o.get("data", {}).values())) for c in executed.cells
                    for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))
    for phrase in ("optimistic envelope", "one request at a time", "suit the memory bandwidth",
                   "author's own", "our assumption", "data rule: reconstructed"):
        assert phrase in text, phrase


# ---------------------------------------------------------------- data and the H100 chapter


def test_this_published_yml_generates_the_committed_raw_files(tmp_path):
    """The generator reads the H100 study's copy of these cells; this file yields the same bytes."""
    from tools.reconstruct import strix

    strix.generate(tmp_path, STRIX_DIR / "published.yml", seed=strix.SEED)
    assert (tmp_path / "SHA256SUMS").read_bytes() == (STRIX_DIR / "SHA256SUMS").read_bytes()


def test_h100_chapter_reads_its_strix_figures_from_this_study(raw):
    from benchbook.chapters.h100 import analysis as h100

    r = h100.analyse(H100_DIR, STRIX_DIR, H100_DIR / "published.yml")
    assert r.values["strix_best_tg128_tps"] == pytest.approx(raw["best"].loc["tg128", "mean"], rel=1e-6)
    assert r.values["strix_server_c1_median_ttft_s"] == pytest.approx(raw["server"]["median_ttft"], rel=1e-9)


# ---------------------------------------------------------------- the rendered page


@pytest.mark.build
def test_book_build_renders_the_chapter(project, executed, raw):
    from benchbook.site.runner import toc_studies

    assert toc_studies(project) == [STUDY]  # the copy is a book of this chapter only
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    page = (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")
    assert "{glue" not in page and "Data: reconstructed" in page
    t = html_tables(page)
    per_backend = t["llama-bench results per backend"]
    assert len(per_backend) == len(raw["lb"]) and set(per_backend["test"]) == {"pp512", "tg128"}
    best = t["Best of the backends, per test"].set_index("test")
    assert best.loc["tg128", "winning config"] == raw["best"].loc["tg128", "config"]
    serving = t["Time to serve all agents: sequential against batched"]
    seq = AGENTS * ANSWER / raw["best"].loc["tg128", "mean"]
    assert serving["Strix Halo (sequential)"].iloc[0] == f"{seq:.2f} s"
    published = yaml.safe_load((STRIX_DIR / "published.yml").read_text(encoding="utf-8"))
    assert list(t["Claims ledger"]["claim id"]) == [c["id"] for c in published["claims"]]
    assert 'alt="Stacked charts, one per kind of llama-bench test' in page
    assert 'alt="Stacked line charts with a log-scale' in page
    downloads = {p.name for p in (project / "book/_build/html/_downloads").rglob("*")}
    assert {"claims.csv", "llama_bench.csv", "serving.csv"} <= downloads


def test_the_serving_comparison_names_the_configurations_that_run_another_model():
    """On the write-up's data only the dense 27B differs from the Strix model; on the lhl folder
    (Qwen3-30B-A3B) both H100 configurations do."""
    from benchbook.chapters.strix import analysis as strix

    published = STRIX_DIR / "published.yml"
    note = strix.serving_models_note(strix.analyse(STRIX_DIR, h100_data_dir=H100_DIR, published_file=published))
    assert "27B" in note and "runs another model" in note and "35B-A3B FP8 + MTP (" not in note
    lhl = strix.analyse(ROOT / "data" / "strix-halo-qwen3-30b-lhl", h100_data_dir=H100_DIR, published_file=published)
    note = strix.serving_models_note(lhl)
    assert "Qwen3-30B-A3B" in note and note.count("Qwen/Qwen3.6") == 2 and " run another model" in note
    alone = strix.analyse(STRIX_DIR, h100_data_dir=None, published_file=published)
    assert strix.serving_models_note(alone) == ""


# ---------------------------------------------------------------- real runs beside reconstructed data


SAME_SETTINGS = ("backends", "build_number", "flash_attn", "n_batch", "n_ubatch", "use_mmap", "n_threads",
                 "type_k", "type_v", "n_gpu_layers")


def lhl_rows() -> pd.DataFrame:
    """The lhl llama-bench rows, read with json alone: recorded settings, test and rate."""
    raw = next((LHL_DIR / "raw").glob("*.jsonl"))
    rows = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines() if line.strip()]
    df = pd.DataFrame(rows)
    df["test"] = [f"pp{p}" if g == 0 else f"tg{g}" for p, g in zip(df["n_prompt"], df["n_gen"])]
    df["settings"] = list(zip(*(df[c].astype(str) for c in SAME_SETTINGS)))
    return df


@pytest.fixture(scope="module")
def lhl():
    from benchbook.chapters.strix import analysis as strix

    return strix.analyse(LHL_DIR, H100_DIR, STRIX_DIR / "published.yml")


def test_real_runs_never_take_a_verdict_or_key_result_from_the_reconstructed_h100_folder(lhl):
    """The lhl folder is measured, the H100 folder reconstructed: every claim or headline that
    reads an H100 value is kept apart (no verdict, no key result), and says why, naming both."""
    from benchbook.book.headlines import key_results
    from benchbook.ledger.expr import names_in

    why = lhl.kept_apart("h100_data_dir")
    assert why and "lhl/strix-halo-testing" in why and "tools.reconstruct.h100" in why
    claims = {c["id"]: c for c in lhl.published.claims}
    on_h100 = {cid for cid, c in claims.items() if c.get("kind", "data") == "data" and c.get("recompute")
               and any(n.startswith("h100_") for n in names_in(c["recompute"]))}
    assert {"strix-moe-gen-ratio", "strix-moe-serving-24x", "strix-dense-batched-5s"} <= on_h100
    ledger = lhl.ledger.set_index("id")
    for cid in on_h100:
        assert ledger.loc[cid, "verdict"] == "not comparable" and why in ledger.loc[cid, "note"], cid
        assert ledger.loc[cid, "basis"] == "", cid
    shown = set(key_results(lhl)["claim"])
    assert shown and not shown & on_h100  # the write-up's MoE ÷ Strix ratio is left out
    # the published H100 cells are not this data's either
    h100_cells = lhl.comparison[lhl.comparison["expr"].astype(str).str.contains("h100_")] \
        if "expr" in lhl.comparison else lhl.comparison.iloc[:0]
    assert not (h100_cells.get("within", pd.Series(dtype=object)) == True).any()  # noqa: E712


def test_no_glued_value_of_the_real_data_page_depends_on_the_reconstructed_folder(lhl):
    """Everything the lhl page glues is the same with and without the H100 folder, except the
    ledger's counts (claims about the H100 are 'not comparable' with it, 'not derivable'
    without) and the sequential serving times, which the section shows only beside an H100
    folder and which read the lhl rates alone; the comparison sits in a note naming both."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.page.report import kept_apart_note, prose_conditions

    alone = strix.glue_values(strix.analyse(LHL_DIR, None, STRIX_DIR / "published.yml"))
    beside = strix.glue_values(lhl)
    counts = {k for k in beside if k.startswith(("claims_", "cells_"))}
    assert {k: v for k, v in beside.items() if k in alone and k not in counts} == \
        {k: v for k, v in alone.items() if k not in counts}
    assert set(beside) - set(alone) == {"strix_s", "long_strix_s", "long_pp_test", "long_pp_basis"}
    best = lhl_rows().groupby("test")["avg_ts"].max()
    assert beside["strix_s"] == pytest.approx(AGENTS * ANSWER / best["tg128"], rel=1e-6)
    assert beside["long_strix_s"] == pytest.approx(AGENTS * ANSWER / best["tg128"] + AGENTS * LONG_PROMPT
                                                   / best["pp4096"], rel=1e-6)
    assert list(strix.serving_display(lhl).columns) == ["scenario", "llama.cpp (sequential)"]
    assert not strix.serving_curve(lhl)["server"].str.contains("H100").any()
    side = strix.serving_display(lhl, batched=True)
    assert all("the write-up's reconstructed data" in c for c in side.columns[2:]) and len(side.columns) == 4
    note = kept_apart_note(lhl, "h100_data_dir").data
    assert "lhl/strix-halo-testing" in note and "tools.reconstruct.h100" in note
    conditions = prose_conditions(lhl)
    assert "like-data" in conditions and "kept-apart" not in conditions and "comparable" in conditions
    # the write-up's own folders together: the comparison is the page's, as before
    r = strix.analyse(STRIX_DIR, H100_DIR)
    assert r.kept_apart("h100_data_dir") is None and kept_apart_note(r, "h100_data_dir") is None
    assert "kept-apart" in prose_conditions(r) and "batched_s" in strix.glue_values(r)


def test_a_build_is_told_apart_by_every_recorded_setting_and_repeats_are_flagged(lhl):
    """Flash attention on and off are different builds on the page (they were pooled), as is
    every other recorded setting; runs the files cannot tell apart are one build whose
    repeats are listed, counted at their fastest, and named in a caveat."""
    from benchbook.chapters.strix import analysis as strix

    raw = lhl_rows()
    assert raw["settings"].nunique() == lhl.llama["variant"].nunique() == 12
    for _, rows in lhl.llama.groupby("variant"):
        assert rows["flash_attn"].nunique() == 1 and rows["params"].fillna("").nunique() == 1
    assert not lhl.llama["variant"].str.contains(" · ").any()  # one configuration: its id is not repeated
    by = raw.groupby(["settings", "test"])["avg_ts"]
    spread = (by.max() / by.min()).max()
    repeated = strix.repeated_runs(lhl.llama)
    assert repeated["spread"].iloc[0] == pytest.approx(spread, rel=1e-6) and spread > 3
    caveat = next(c for c in lhl.caveats["caveat"] if "same recorded settings" in c)
    assert f"{spread:.2f}×" in caveat
    # the best and worst builds of a test are builds at their fastest run, not a slow repeat
    best = by.max().groupby("test")
    t = strix.per_test(lhl.llama).set_index("test")
    assert t.loc["pp4096", "best_tps"] == pytest.approx(best.max()["pp4096"], rel=1e-6)
    assert t.loc["pp4096", "worst_tps"] == pytest.approx(best.min()["pp4096"], rel=1e-6)
    table = strix.backend_table(lhl)
    assert len(table) == len(raw) and "tested at" in table.columns


@pytest.mark.parametrize("prompt, test, extrapolated", [
    (4096, "pp4096", False), (3000, "pp2048", False), (3072, "pp4096", False), (6000, "pp4096", True)])
def test_the_serving_model_prefills_at_the_measured_test_nearest_the_prompt(prompt, test, extrapolated):
    """The lhl runs measured pp1 ... pp4096: a prompt takes the best rate of the nearest test
    (the longer on a tie), and a prompt beyond the longest says it is extrapolated."""
    from benchbook.chapters.strix import analysis as strix

    r = strix.analyse(LHL_DIR, H100_DIR, STRIX_DIR / "published.yml", long_prompt_tokens=prompt)
    raw = lhl_rows()
    best = raw.groupby("test")["avg_ts"].max()
    g = strix.glue_values(r)
    assert g["long_pp_test"] == test and ("extrapolated" in g["long_pp_basis"]) == extrapolated
    expected = AGENTS * ANSWER / best["tg128"] + AGENTS * prompt / best[test]
    assert g["long_strix_s"] == pytest.approx(expected, rel=1e-6)
    assert any("extrapolated" in c for c in r.caveats["caveat"]) == extrapolated


def test_on_the_write_up_s_data_the_long_prompt_rate_is_said_to_be_extrapolated_from_pp512(executed):
    g = glued(executed)
    assert g["long_pp_test"] == "pp512" and "extrapolated" in g["long_pp_basis"]


@pytest.fixture(scope="module")
def lhl_page(project):
    """The lhl page of this notebook, executed in the same copy (it reads the copy's H100 folder)."""
    import nbformat

    from benchbook.site.runner import Chapter

    return nbformat.read(Chapter(project, LHL).execute(log=lambda msg: None), as_version=4)


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _outputs(nb) -> str:
    """The HTML and Markdown the page's code cells show."""
    return "\n".join("".join(o["data"][m]) for c in nb.cells for o in c.get("outputs", [])
                     for m in ("text/html", "text/markdown") if m in o.get("data", {}))


def test_the_real_data_page_opens_on_its_own_files_and_keeps_the_write_up_s_framing_labelled(lhl_page):
    text, g = _markdown(lhl_page), glued(lhl_page)
    assert "Both H100 write-ups measure themselves" not in text  # the write-up's introduction, as the page's own
    assert "This page runs the Strix Halo chapter on {glue:text}`data_label`" in text
    assert "**The write-up's framing.**" in text
    assert "Qwen3-30B-A3B" in g["data_models"] and "Strix Halo" in g["platform"]
    assert g["writeup_setup"].startswith("Qwen3.6-35B-A3B, Q8_0")
    assert g["data_tests"] == "pp1 to pp4096 (13 tests); tg1 to tg4096 (13 tests)"
    assert g["data_dates"] == "between 2025-07-17 and 2025-08-05"


def test_the_real_data_page_shows_the_h100_comparison_only_in_a_note_naming_both_folders(lhl_page):
    text, out = _markdown(lhl_page), _outputs(lhl_page)
    assert "batched_advantage" not in text and "fig-strix-serving-sequential" in text
    assert not any(k.startswith("batched") for k in glued(lhl_page))
    assert "Beside the write-up's reconstructed data, not a finding of this data" in out
    assert "the H100 write-up" in out and "lhl/strix-halo-testing" in out
    # the 520 runs are folded, with the line that says how many
    assert '<details class="benchbook-details"><summary>llama-bench results per backend ' in out
    assert "(520 rows)" in out


def test_data_caveats_take_a_frame_without_the_runs_table_s_columns():
    """A chapter without bench runs (llama-bench only) may pass an empty frame: the rules read
    the runs table's columns, so the frame is given them instead of raising KeyError."""
    import pandas as pd

    from benchbook.book.pipeline import load
    from benchbook.book.registry import get
    from benchbook.ledger.caveats import data_caveats

    data = load(STRIX_DIR, get("strix-halo-baseline").contract)
    caveats = data_caveats(data, pd.DataFrame())
    assert any(c["origin"] == "data rule: reconstructed" for c in caveats)


def test_a_claim_both_chapters_check_rests_on_the_same_basis_on_both_pages():
    """The Strix Halo page computes the H100's per-agent rates under its own names; they are
    the H100 tables' cells all the same, so a statement both pages check rests on the same
    basis, and none 'does not hold' by construction."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.strix import analysis as strix
    from benchbook.ledger.claims import BY_CONSTRUCTION, FAILS

    s = strix.analyse(STRIX_DIR, H100_DIR).ledger
    h = h100.analyse(H100_DIR, STRIX_DIR, H100_DIR / "published.yml").ledger.set_index("id")
    pairs = s[s["same_as"].astype(str).str.startswith("h100-dense-vs-moe-mtp:")]
    judged = pairs[pairs["verdict"].isin(["holds", "does not hold"])]
    assert len(judged) >= 8
    for _, row in judged.iterrows():
        theirs = h.loc[row["same_as"].split(":", 1)[1]]
        assert (row["verdict"], row["basis"]) == (theirs["verdict"], theirs["basis"]), row["id"]
    for ledger in (s, h):
        assert not ((ledger["verdict"] == FAILS) & (ledger["basis"] == BY_CONSTRUCTION)).any()


def test_the_page_on_measured_runs_lists_no_verdict_resting_on_reconstructed_files():
    from benchbook.chapters.strix import analysis as strix
    from benchbook.ledger.claims import BY_CONSTRUCTION, GENERATOR

    ledger = strix.analyse(LHL_DIR, H100_DIR, STRIX_DIR / "published.yml").ledger
    assert not ledger["basis"].isin([BY_CONSTRUCTION, GENERATOR]).any()


def test_the_caveat_on_the_write_up_s_strix_figures_counts_what_others_measured():
    """The page (and the synthesis, which lists every caveat) must not say nobody else measured
    the Strix Halo figures while its Independent measurements section lists values."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.ledger import independent

    caveats = " ".join(strix.analyse(STRIX_DIR, H100_DIR).caveats["caveat"])
    shown = independent.section(STUDY, facts_dir=ROOT / "data" / "facts", data_root=ROOT / "data")
    assert len(shown.measurements) > 0
    assert "no one else" not in caveats
    assert f"({len(shown.measurements)} values from {shown.sources} sources)" in caveats


def test_serving_points_are_one_stream_generation_tests_and_the_server_run():
    """A llama-bench generation test decodes one sequence: per user is the aggregate. Prefill
    tests are left out; the llama-server run pairs 1 / median TPOT with its own output rate."""
    from benchbook.book.serving_points import NO_DECODE, conform_points
    from benchbook.chapters.strix import analysis as strix

    data = ROOT / "data" / "strix-halo-baseline"
    r = strix.analyse(data)
    p = conform_points(strix.serving_points(r), "strix-halo-baseline")
    pts = p[p["left_out"] == ""]
    tg = r.llama[(r.llama["n_gen"] > 0) & (r.llama["n_prompt"] == 0)]
    bench = pts[pts["per_user_basis"].str.startswith("llama-bench")]
    assert sorted(bench["per_user_tps"]) == sorted(tg["avg_ts"]) and (bench["aggregate_tps"] ==
                                                                       bench["per_user_tps"]).all()
    assert (bench["concurrency"] == 1).all() and (bench["load"] == "single-stream").all()
    server = pts[~pts["per_user_basis"].str.startswith("llama-bench")].iloc[0]
    s = r.server.iloc[0]
    assert (server["per_user_tps"], server["aggregate_tps"]) == (pytest.approx(1 / s["median_tpot_s"]), s["output_tps"])
    assert (p["left_out"] == NO_DECODE).sum() == len(r.llama) - len(tg)


def test_the_per_backend_table_keeps_the_folder_s_row_order_whatever_the_rates():
    """Which build is slower is a generator's choice on reconstructed data (`losing_ratios`):
    rows ordered by rate reordered when it moved, with no cell to carry the mark. The rows keep
    the folder's order; "of best" says which build leads."""
    from benchbook.chapters.strix import analysis as strix

    r = strix.analyse(STRIX_DIR, H100_DIR, STRIX_DIR / "published.yml")
    before = strix.backend_table(r)[["test", "config"]].values.tolist()
    slowest = r.llama.groupby("test_name")["avg_ts"].idxmin()
    r.llama.loc[slowest, "avg_ts"] *= 10  # every test's slowest build now leads it
    after = strix.backend_table(r)
    assert after[["test", "config"]].values.tolist() == before
    assert set(after.loc[after["of best"] == "100.0%", "config"]) == set(r.llama.loc[slowest, "variant"])


def test_a_batched_time_with_the_measured_ttft_added_as_it_is_rests_on_no_prompt_length():
    """make marks: the batched time plus the H100's median TTFT carried `sweep_lengths`, though
    the TTFT is added unscaled (no prompt length moves it); a time scaled to a prompt reads the
    length the TTFT was measured at."""
    from benchbook.chapters.strix import analysis as S

    r = S.analyse(STRIX_DIR, H100_DIR)
    assert "h100-dense-vs-moe-mtp/sweep_lengths" in S._h100_ids(r, "h100-dense", 16, 4096)
    assert "h100-dense-vs-moe-mtp/sweep_lengths" not in S._h100_ids(r, "h100-dense", 16, 0, ttft=True)

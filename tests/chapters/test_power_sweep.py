"""The power-sweep chapter, executed for real on a copy of the project.

Its glued numbers, tables and downloads are compared with values recomputed here from
the raw logs by the independent parser of tests/power_logs.py (regular
expressions, pandas, numpy), so a slip in the chapter or the readers shows up as a
disagreement. Parameters and the manifest cross-check are exercised through the library;
one real `jupyter-book build` (marked `build`) checks the rendered page.
"""

from __future__ import annotations

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
from benchbook.chapters.power_sweep import analysis as ps
from benchbook.ledger.published import load_published
from benchbook.study.folder import load_study
from pages import glued, html_tables, nb_tables  # noqa: E402  (tests/ is on sys.path)
from power_logs import PREFIX, _values, parse_log, parse_smi
from realdata import make, needs_shared  # noqa: E402

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent
STUDY = "power-sweep"
DATA = ROOT / "data" / STUDY
TOC = """format: jb-book
root: intro
parts:
  - caption: Studies
    chapters:
      - file: studies/power-sweep
  - caption: About
    chapters:
      - file: methods
      - file: reproduce
"""


project, executed = projects.one_chapter_book(STUDY)


# ---------------------------------------------------------------- independent recomputation


@pytest.fixture(scope="module")
def raw():
    """Windows of every server log (own parser) with the power the GPU log beside it shows."""
    study = load_study(DATA)
    frames = []
    for e in study.files:
        if e.context["kind"] != "server-log":
            continue
        path = study.path(e)
        w = parse_log(path, int(str(e.context["date"])[:4]))
        smi = parse_smi(next(path.parent.glob("nvidia-smi.csv*")))
        smi = smi[smi["index"].isin([0, 2, 3, 4])]
        draws, limits = [], []
        for t in w["time"]:
            s = smi[(smi["timestamp"] > t - pd.Timedelta(seconds=10)) & (smi["timestamp"] <= t)]
            draws.append(s.groupby("index")["power.draw [W]"].mean().sum() if s["index"].nunique() == 4 else np.nan)
            limits.append(s.groupby("index")["power.limit [W]"].median().median() if len(s) else np.nan)
        frames.append(w.assign(config=e.config, draw=draws, limit=limits, manifest=e.context["power_limit_w"]))
    return pd.concat(frames, ignore_index=True)


def test_glued_counts_and_power_match_the_raw_logs(executed, raw):
    g = glued(executed)
    busy = raw[raw["running"] >= 1]
    assert g["windows_total"] == len(raw)
    assert g["busy_total"] == len(busy)
    assert g["logs_n"] == 9 and g["models_n"] == 3
    assert g["windows_md"] == f"The **9** server logs hold **{len(raw)}** stats lines, of which **{len(busy)}** were " \
                              "written while at least one request was running."
    assert (g["limit_lo"], g["limit_hi"]) == ("200W", "300W")
    assert g["cards_text"] == "4 cards"
    ok = busy.dropna(subset=["draw"])
    assert g["draw_share"] == pytest.approx((ok["draw"] / (4 * ok["limit"])).mean(), rel=1e-9)
    assert (busy["limit"] == busy["manifest"]).all()  # the data agrees with its manifest
    assert g["stats_interval_s"] == 10


def test_glued_gains_match_the_raw_logs(executed):
    g, v = glued(executed), _values(DATA)
    gains = {prefix: v[f"{prefix}_300W_gen_mean"] / v[f"{prefix}_200W_gen_mean"] - 1 for prefix in PREFIX.values()}
    assert g["gain_models"] == len(PREFIX)
    assert g["gain_min"] == pytest.approx(min(gains.values()), rel=1e-9)
    assert g["gain_max"] == pytest.approx(max(gains.values()), rel=1e-9)


def test_concurrency_tables_compute_per_request_from_the_average(executed, raw):
    t = nb_tables(executed)
    for config, label in (("q35-27b", "Qwen3.5-27B"), ("q36-35b", "Qwen3.6-35B-A3B")):
        shown = t[f"{label}: generation by concurrency"]
        busy = raw[(raw["config"] == config) & (raw["running"] >= 1)]
        for row in shown.itertuples():
            w = busy[(busy["limit"] == float(row[1].rstrip("W"))) & (busy["running"] == row[2])]
            n = len(w)
            assert str(row[3]) == (f"{n} †" if n <= 5 else str(n))
            assert str(row[4]) == f"{w['gen'].mean():,.0f}"
            assert str(row[7]) == f"{w['gen'].mean() / row[2]:,.0f}"  # per request = average / concurrency


def test_completions_table_counts_access_lines_per_window(executed, raw):
    shown = nb_tables(executed)["Completions per minute by concurrency, model and power limit († few windows)"]
    busy = raw[raw["running"] >= 1]
    w = busy[(busy["config"] == "q36-35b") & (busy["limit"] == 250) & (busy["running"] == 4)]
    cell = shown.set_index("concurrent").loc[4, "Qwen3.6-35B-A3B 250W"]
    assert cell == f"{6 * w['completions'].sum() / len(w):.1f}"


def test_downloads_hold_the_tidy_tables(executed, project, raw):
    folder = project / "book" / "studies" / STUDY
    names = {p.name for p in folder.iterdir()}
    assert {"windows.csv", "claims.csv", "published_vs_reproduced.csv", "tokens_per_kw.csv",
            "power-sweep-tables.zip"} <= names
    windows = pd.read_csv(folder / "windows.csv")
    assert len(windows) == len(raw)
    assert set(windows["limit_source"]) == {"nvidia-smi"}
    claims = pd.read_csv(folder / "claims.csv")
    published = load_published(DATA / "published.yml")
    assert list(claims["id"]) == [c["id"] for c in published.claims]
    g = glued(executed)
    assert g["claims_total"] == len(claims)
    assert g["claims_holds"] == int((claims["verdict"] == "holds").sum())
    cmp = pd.read_csv(folder / "published_vs_reproduced.csv")
    assert g["cells_total"] == int(cmp["within"].notna().sum())
    assert g["cells_within"] == int((cmp["within"] == True).sum())  # noqa: E712
    assert g["cells_within"] < g["cells_total"]  # the contradictory cells show
    assert "200W, 3" in set(cmp["row"])  # rows named by all their label cells


def test_caveats_come_from_rules_with_evidence(executed, raw):
    text = "\n".join(o.get("data", {}).get("text/markdown", "") for c in executed.cells for o in c.get("outputs", []))
    for rule in ("few-windows", "different-mixes", "windows-straddle", "burst-ends", "limit-is-not-draw",
                 "other-cards", "engine-restarts", "prefix-cache", "live-workload", "reconstructed"):
        assert f"data rule: {rule}" in text, rule
    busy = raw[raw["running"] >= 1]
    n = busy.groupby(["config", "limit", "running"]).size()
    assert f"{int((n <= 5).sum())} of {len(n)} concurrency cells" in text
    assert "authors (seed-003)" in text


def test_ledger_and_published_layout_on_the_page(executed):
    t = nb_tables(executed)
    published = load_published(DATA / "published.yml")
    ledger = t["Claims ledger"]
    assert list(ledger["claim id"]) == [c["id"] for c in published.claims]
    layout = t["Qwen3.5-27B: power vs performance [seed-003]"]
    assert list(layout.columns) == published.tables[0].columns
    assert layout.iloc[0, 0] == "200W" and layout.iloc[0, 1] == "156 → 156"
    kw = t["Tokens per kW at 1-6 concurrent (GPU power = 4 cards x limit) [seed-003]"]
    assert "✗" in " ".join(kw.astype(str).to_numpy().ravel())


# ---------------------------------------------------------------- parameters and the manifest


def test_overhead_parameter_lowers_tokens_per_kw():
    base = ps.analyse(DATA)
    more = ps.analyse(DATA, overhead_w=200.0)
    for key in ("q35_27b_250W", "q36_35b_300W"):
        assert more.values[f"{key}_gpu_kw"] == pytest.approx(base.values[f"{key}_gpu_kw"] + 0.2)
        assert more.values[f"{key}_c1to6_gen_per_kw"] < base.values[f"{key}_c1to6_gen_per_kw"]


def test_a_manifest_limit_that_disagrees_with_nvidia_smi_is_flagged(tmp_path):
    data = tmp_path / STUDY
    shutil.copytree(DATA, data)
    doc = yaml.safe_load((data / "study.yml").read_text(encoding="utf-8"))
    entry = next(f for f in doc["files"] if f["kind"] == "server-log" and f["power_limit_w"] == 250)
    entry["power_limit_w"] = 275
    (data / "study.yml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    r = ps.analyse(data)
    mism = r.caveats[r.caveats["origin"] == "data rule: limit-mismatch"]
    assert len(mism) == 1 and "study.yml 275 W, nvidia-smi 250 W" in mism["caveat"].iloc[0]
    assert "250W" in set(r.busy["power_key"]) and "275W" not in set(r.busy["power_key"])


# ---------------------------------------------------------------- the stats interval, measured per log

START = pd.Timestamp("2026-04-07 09:00:00")


def server_log(path: Path, every: int, n: int) -> list[dict]:
    """A log of `n` busy stats lines `every` seconds apart, one chat completion before each;
    returns what each window holds (time, generation t/s, completions)."""
    lines, windows = [], []
    for k in range(n):
        t = START + pd.Timedelta(every * (k + 1), "s")
        gen = 40.0 + 5 * k
        lines += ['(APIServer pid=1) INFO:     10.0.0.9:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
                  f"(APIServer pid=1) INFO {t:%m-%d %H:%M:%S} [loggers.py:259] Engine 000: Avg prompt throughput: "
                  f"100.0 tokens/s, Avg generation throughput: {gen:.1f} tokens/s, Running: 1 reqs, Waiting: 0 "
                  "reqs, GPU KV cache usage: 2.0%, Prefix cache hit rate: 0.0%"]
        windows.append(dict(time=t, gen=gen, completions=1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return windows


def gpu_log(path: Path, seconds: int, limit: int) -> None:
    """Two GPUs and no index column, a sample a second: GPU 1 draws 100 + t W, GPU 2 200 + t W
    (t: seconds since START), both limited to `limit` W."""
    rows = ["timestamp, power.draw [W], power.limit [W]"]
    for t in range(seconds + 1):
        stamp = f"{START + pd.Timedelta(t, 's'):%Y/%m/%d %H:%M:%S}.000"
        rows += [f"{stamp}, {100 + t:.2f} W, {limit:.2f} W", f"{stamp}, {200 + t:.2f} W, {limit:.2f} W"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def intervals(tmp_path_factory):
    """One model, three server logs: 5-second stats lines at 250 W, 10-second ones at 300 W
    (each with a two-GPU nvidia-smi log without an index beside it), and a log of one stats
    line and no GPU log (its limit, 350 W, from study.yml)."""
    from benchbook.study.folder import write_checksums

    root = tmp_path_factory.mktemp("intervals")
    windows = {k: server_log(root / f"raw/{k}/vllm-serve.log", every, n) for k, every, n in
               (("a", 5, 8), ("b", 10, 6), ("c", 10, 1))}
    gpu_log(root / "raw/a/nvidia-smi.csv", 60, 250)
    gpu_log(root / "raw/b/nvidia-smi.csv", 80, 300)
    limits = {"a": 250, "b": 300, "c": 350}
    files = [dict(path=f"raw/{k}/{f}", config="m", kind=kind, date="2026-04-07",
                  **({"power_limit_w": limits[k]} if k in limits else {}))
             for kind, f, logs in (("server-log", "vllm-serve.log", "abc"), ("gpu-log", "nvidia-smi.csv", "ab"))
             for k in logs]
    (root / "study.yml").write_text(yaml.safe_dump(dict(
        study=STUDY, title="Intervals", label="made up for the test", reconstructed=False,
        configs={"m": dict(role="model", model="demo", model_label="Demo", cards=2)}, files=files), sort_keys=False))
    write_checksums(root)
    return ps.analyse(root, DATA / "published.yml"), windows


def test_windows_last_their_log_s_measured_interval(intervals):
    r, _ = intervals
    w = r.windows.assign(log=r.windows["source_file"].str.split("/").str[1])
    assert w.groupby("log")["interval_s"].first().fillna(-1).to_dict() == {"a": 5.0, "b": 10.0, "c": -1}
    assert ps.files_table(r)["stats interval"].tolist() == ["5 s", "10 s", "unknown"]
    md = ps.glue_values(r)["stats_interval_md"]
    assert md.startswith("The stats lines come every **5** seconds in **1** log and every **10** seconds in **1** log:")
    assert "over **12** gaps" in md  # 7 + 5 gaps after a busy line
    assert "The interval of **1** log is unknown" in md
    table = ps.files_table(r)  # the log without a GPU log: no cards, no GPU file (not "nan")
    assert (table["cards summed"].iloc[2], table["GPU log beside it"].iloc[2]) == ("–", "none")


@needs_shared
def test_real_logs_of_5_and_10_second_intervals(tmp_path):
    """The power-sweep folder made from real logs: the genesis excerpt prints every 5 s (its
    times 16:21:55 and 16:22:00), the vLLM issue 43295 excerpt every 10 s."""
    r = ps.analyse(make(STUDY, "close", tmp_path), DATA / "published.yml")
    got = r.windows.groupby(r.windows["source_file"].map(lambda f: Path(f).name))["interval_s"].unique()
    assert {f: list(v) for f, v in got.items()} == {"genesis-vllm-patches_24_3090-tp8.log": [5.0],
                                                    "vllm_43295_mtp-slow.log": [10.0]}
    assert ps.glue_values(r)["stats_interval_md"].startswith(
        "The stats lines come every **5** seconds in **1** log and every **10** seconds in **1** log")
    notes = dict(zip(r.data.report["file"].map(lambda f: Path(f).name), r.data.report["notes"]))
    assert notes["genesis-vllm-patches_24_3090-tp8.log"].startswith("stats interval of engine 000 (APIServer) 5 s")


def test_power_draw_is_the_sum_of_the_gpus_over_each_window(intervals):
    """The samples in the interval before each line (5 s: t-4..t, 10 s: t-9..t), per GPU told
    apart by row order, summed: not one pooled series, not a 10-second window everywhere."""
    r, windows = intervals
    for log, every, limit in (("a", 5, 250), ("b", 10, 300)):
        w = r.windows[r.windows["source_file"] == f"raw/{log}/vllm-serve.log"]
        t = np.array([(x["time"] - START).total_seconds() for x in windows[log]])
        mean_t = t - (every - 1) / 2  # the mean of t-every+1 .. t
        np.testing.assert_allclose(w["draw_w"], (100 + mean_t) + (200 + mean_t))
        assert (w["limit_w"] == limit).all() and (w["gpu_samples_n"] == 2 * every).all()
    assert r.limits["cards"].tolist()[:2] == ["1 of 2 (by row order), 2 of 2 (by row order)"] * 2


def test_completions_per_minute_use_the_measured_interval(intervals):
    r, _ = intervals
    v = r.values
    assert v["m_250W_completions_per_min"] == pytest.approx(12.0)  # one per 5-second window; 6 if 10 s were assumed
    assert v["m_300W_completions_per_min"] == pytest.approx(6.0)
    # the one-line log: its window has no length, so no completions per minute
    assert "m_350W_completions_per_min" not in v and v["m_350W_gen_n"] == 1
    cells = ps.completions_table(r).set_index("concurrent")
    assert (cells.loc[1, "Demo 250W"], cells.loc[1, "Demo 300W"], cells.loc[1, "Demo 350W"]) == ("12.0", "6.0", "–")
    from benchbook.chapters.power_sweep import figures

    assert [t.get_text() for t in figures.completions(r).axes[0].texts] == ["12.0", "6.0"]  # the heat map too


def test_tokens_and_energy_weigh_each_window_by_its_length():
    """Two windows of 5 s and one of 10 s: tokens = rate x length, energy = draw x length."""
    w = pd.DataFrame(dict(generation_tps=[100.0, 200.0, 50.0], prompt_tps=[0.0, 10.0, 0.0],
                          per_request_tps=[100.0, 200.0, 50.0], completions=[1, 2, 3],
                          draw_w=[300.0, 400.0, 200.0], interval_s=[5.0, 5.0, 10.0]))
    s = ps.scope_stats(w)
    assert s["gen_per_kwh_measured"] == pytest.approx((500 + 1000 + 500) / ((1500 + 2000 + 2000) / 3.6e6))
    assert s["measured_kw"] == pytest.approx((1500 + 2000 + 2000) / 20 / 1000)
    assert s["completions_per_min"] == pytest.approx(60 * 6 / 20)
    assert s["gen_mean"] == pytest.approx(350 / 3)  # the write-up's mean over windows stays unweighted
    unknown = ps.scope_stats(w.assign(interval_s=np.nan))
    assert not {"completions_per_min", "gen_per_kwh_measured", "measured_kw"} & set(unknown)


# ---------------------------------------------------------------- the built page


@pytest.mark.build
def test_book_build_renders_the_chapter(executed, project):
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book", "-W", "-n", "--keep-going"],
                          cwd=project, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    html = (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")
    assert "{glue" not in html and "IPython.core.display" not in html
    assert "Data: reconstructed" in html
    # the interval the logs' own times give, glued (the shipped logs print every 10 s)
    assert re.search(r"The stats lines come every\s*<strong>10</strong>\s*seconds", html)
    t = html_tables(html)
    summary = t["Qwen3.6-35B-A3B: power vs performance"]
    assert list(summary["power limit"]) == ["200W", "250W", "300W"]
    assert list(summary["windows"]) == [40, 157, 64]
    cpm = t["Completions per minute by concurrency and power limit [seed-003]"]
    assert cpm.iloc[0, 1] == "7.9 → 7.9"
    for label in ("Qwen3.5-27B", "Qwen3.5-122B-A10B", "Qwen3.6-35B-A3B"):  # one figure per model, placed by code
        assert f'alt="Candle charts for {label}, one column per power limit' in html
    downloads = {p.name for p in (project / "book/_build/html/_downloads").rglob("*") if p.is_file()}
    assert {"windows.csv", "claims.csv", "power-sweep-tables.zip"} <= downloads


def test_an_nvidia_smi_log_in_a_configuration_of_its_own_is_no_model(tmp_path):
    """A server log and an nvidia-smi log given from two folders: `new` cannot pair them (it
    guesses nothing), says so in its to-do list, and the page names the GPU log's
    configuration as one without a server log, not as a model whose requests never ran, and
    gives it no column in the per-model tables."""
    from benchbook.scaffold.new import new_study
    from files import serving_log

    log = serving_log(tmp_path / "server" / "serving.log")
    smi = tmp_path / "gpus" / "smi.csv"
    smi.parent.mkdir()
    smi.write_text("timestamp, power.draw [W]\n2024/10/30 18:42:33.189, 22.89 W\n2024/10/30 18:42:34.189, 23.10 W\n",
                   encoding="utf-8")
    out = tmp_path / "folder"
    doc = yaml.safe_load(new_study(STUDY, out, [log, smi], log=lambda msg: None).read_text(encoding="utf-8"))
    server, gpu = (next(f["config"] for f in doc["files"] if f["path"].endswith(n)) for n in ("serving.log", "smi.csv"))
    assert server != gpu
    assert f"files[1].config: an nvidia-smi log alone in its configuration, so no server log is read beside it; set " \
           f"the configuration of the server it was logged beside (one of: {server})" in doc["todo"]

    r = ps.analyse(out, DATA / "published.yml")
    assert ps.busy_configs(r) == [server]
    rules = dict(zip(r.caveats["origin"], r.caveats["caveat"]))
    assert gpu in rules["data rule: no-server-log"] and "data rule: no-busy-windows" not in rules
    assert "cells hold 6 windows each," in rules["data rule: live-workload"]  # one cell: no "between 6 and 6"
    assert ps.files_table(r)["date"].tolist() == ["–"]  # the log's times carry no year and study.yml gives none
    assert ps.glue_values(r)["windows_md"].startswith("The **1** server log holds **6** stats lines")  # not "logs hold"
    key = ps.limits_order(r)[0]
    for table in (ps.prefill_table(r, key), ps.completions_table(r)):
        assert any(server in c for c in table.columns) and not any(gpu in c for c in table.columns)
    from benchbook.chapters.power_sweep import figures

    legend = [t.get_text() for t in figures.prefill(r).axes[0].get_legend().get_texts()]
    assert server in legend and gpu not in legend


def test_an_nvidia_smi_log_without_any_server_log_gives_a_page_not_a_traceback(tmp_path):
    """Only a GPU log: no server log, so no window. The chapter runs, says what is missing
    and why, and its downloads keep their columns (a KeyError on the empty table of power
    limits was what a user got before)."""
    from benchbook.page.report import write_downloads
    from benchbook.scaffold.new import new_study

    smi = tmp_path / "smi.csv"
    smi.write_text("timestamp, power.draw [W]\n2024/10/30 18:42:33.189, 22.89 W\n2024/10/30 18:42:34.189, 23.10 W\n",
                   encoding="utf-8")
    out = tmp_path / "folder"
    new_study(STUDY, out, [smi], log=lambda msg: None)
    r = ps.analyse(out, DATA / "published.yml")
    assert not len(r.limits) and not len(r.windows) and ps.busy_configs(r) == []
    assert r.sections and all(m is not None for m in r.sections.values())
    rules = dict(zip(r.caveats["origin"], r.caveats["caveat"]))
    assert "no server log" in rules["data rule: no-server-log"]
    tables = ps.downloads(r)
    for name, path in write_downloads(tables, tmp_path / "downloads", "t").items():
        if path.suffix == ".csv":
            assert path.read_text(encoding="utf-8").partition("\n")[0] == ",".join(map(str, tables[name].columns)), name
    assert {"file", "other_cards", "agrees"} <= set(tables["power_limits"].columns)
    assert ps.glue_values(r)["windows_md"] == "This data holds no server log, so there is no stats line to count."


def test_the_ledger_checks_which_model_the_step_to_300_w_rewards_from_the_generation_means():
    """Seed 003: only the 3.6-35B is rewarded for the 20 % more power from 250 to 300 W. The two
    claims that state it are recomputed from the models' mean generation rates at each limit;
    the write-up's other statements without a number stay open with why."""
    r = ps.analyse(DATA)
    led = r.ledger.set_index("id")
    v = r.values
    gains = {m: 100 * (v[f"{m}_300W_gen_mean"] / v[f"{m}_250W_gen_mean"] - 1)
             for m in ("q35_27b", "q35_122b", "q36_35b")}
    others = max(gains["q35_27b"], gains["q35_122b"])
    assert led.loc["others-300w-gain-under-20pct", "verdict"] == ("holds" if others < 20 else "does not hold")
    assert led.loc["q36-300w-gain-over-20pct", "verdict"] == ("holds" if gains["q36_35b"] > 20 else "does not hold")
    for cid in ("per-request-dies-past-3", "fp16-kv-max-num-seqs", "q122-200w-competitive-c1-4"):
        assert led.loc[cid, "verdict"] == "not derivable" and led.loc[cid, "note"], cid


def test_serving_points_are_the_one_stream_windows_and_the_busier_buckets_are_left_out(raw):
    """With one request running the log says one stream: that rate is the user's and the
    aggregate, a point per model and power limit. With more running the log holds no request's
    own rate, so each such bucket is left out and says why."""
    from benchbook.book.serving_points import conform_points

    p = conform_points(ps.serving_points(ps.analyse(DATA)), STUDY)
    pts = p[p["left_out"] == ""]
    busy = raw[raw["running"] >= 1]
    one = busy[busy["running"] == 1].groupby(["config", "manifest"])["gen"].mean()
    assert len(pts) == len(one)
    for (config, limit), gen in one.items():
        x = pts[pts["config"] == f"{config}@{int(limit)}W"].iloc[0]
        assert x["per_user_tps"] == pytest.approx(gen, rel=1e-9) and x["aggregate_tps"] == x["per_user_tps"]
        assert (x["concurrency"], x["devices"]) == (1, 4) and x["per_device_tps"] == pytest.approx(gen / 4)
    more = busy[busy["running"] > 1].groupby(["config", "manifest", "running"]).size()
    gone = p[p["left_out"] != ""]
    assert len(gone) == len(more) and (gone["left_out"] == ps.LOG_WINDOWS).all()
    assert sorted(gone["concurrency"].astype(int)) == sorted(r for _, _, r in more.index)

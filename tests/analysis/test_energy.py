"""Energy per token (benchbook.analysis.energy).

On the DGX Spark harness's real folders the energy of every run is recomputed here from the
raw files alone (csv, json and a regex on `_runner.log`), not from the book's readers."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbook import ingest
from benchbook.analysis import energy
from realdata import DGX, needs_shared

FOLDER = "qwen-3.6-35b-a3b/fp8"


def test_constant_power_over_a_covered_window():
    t = np.arange(0, 101, 10.0)
    e = energy.over_window(t, np.full_like(t, 100.0), 20, 70)
    assert e.covered and e.energy_j == pytest.approx(5000) and e.mean_power_w == pytest.approx(100)


def test_the_edges_are_interpolated_between_samples():
    t, w = np.array([0.0, 10, 20]), np.array([0.0, 100, 100])
    e = energy.over_window(t, w, 5, 20)  # 50 W at 5 s: (50+100)/2*5 + 100*10
    assert e.energy_j == pytest.approx(375 + 1000)


def test_a_series_that_does_not_cover_the_run_gives_nothing():
    t = np.arange(0, 101, 10.0)
    e = energy.over_window(t, np.full_like(t, 50.0), 60, 150)
    assert not e.covered and np.isnan(e.energy_j) and "does not cover the run" in e.why


def test_a_gap_inside_the_run_gives_nothing():
    t = np.array([0.0, 10, 20, 30, 80, 90, 100])
    e = energy.over_window(t, np.full_like(t, 50.0), 5, 95)
    assert not e.covered and "a gap of 50 s" in e.why


def _raw_events(folder: Path) -> dict:
    """START/END and step times of _runner.log in seconds from its first line (by regex)."""
    out, first, last, day = {}, None, None, 0
    for line in (folder / "_runner.log").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\[(\d\d):(\d\d):(\d\d)\] (.*)", line)
        if not m:
            continue
        clock = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
        day += last is not None and clock < last
        last = clock
        at = clock + 86400 * day
        first = at if first is None else first
        if ev := re.match(r"── (START|END) (\d+)", m[4]):
            out[(ev[1], ev[2])] = at - first
        elif st := re.match(r"\s*K: rate ([0-9.]+) req/s", m[4]):
            out[("STEP", st[1])] = at - first
    return out


def _raw_energy(folder: Path, result: Path) -> float:
    """Joules over the run, from the raw CSV by the trapezoid rule, edges interpolated."""
    ev, nn = _raw_events(folder), result.name[:2]
    dur = json.loads(result.read_text())["duration"]
    if m := re.match(r"\d+-rate-sweep-([0-9.]+)\.json", result.name):
        steps = sorted((v, k[1]) for k, v in ev.items() if k[0] == "STEP")
        mine = next(v for v, r in steps if float(r) == float(m[1]))
        end = next((v for v, _ in steps if v > mine), ev[("END", nn)])
    else:
        end = ev[("END", nn)]
    with open(folder / f"{nn}-telemetry.csv", newline="") as fh:
        rows = [(float(r["elapsed_s"]) + ev[("START", nn)], float(r["power_w"])) for r in csv.DictReader(fh)]
    t, w = np.array(rows).T
    pts = np.concatenate([[end - dur], t[(t > end - dur) & (t < end)], [end]])
    p = np.interp(pts, t, w)
    return float(np.sum((p[1:] + p[:-1]) / 2 * np.diff(pts)))


@pytest.fixture(scope="module")
def tables():
    folder = DGX / FOLDER
    runs, power = [], []
    for f in sorted(folder.iterdir()):
        try:
            res = ingest.read(f)
        except ingest.IngestError:
            continue
        rel = {"source_file": f"raw/{f.name}"}
        if "runs" in res.tables:
            runs.append(res.tables["runs"].assign(config="c", **rel))
        if "power_samples" in res.tables:
            power.append(res.tables["power_samples"].assign(**rel))
        if "harness_events" in res.tables:
            events = res.tables["harness_events"].assign(**rel)
    return pd.concat(runs, ignore_index=True), events, pd.concat(power, ignore_index=True)


@needs_shared
def test_every_run_of_a_harness_folder_has_the_energy_of_its_raw_files(tables):
    runs, events, power = tables
    out = energy.of_runs(runs, events, power)
    results = sorted(p for p in (DGX / FOLDER).glob("[01][0-9]-*.json") if "date" in json.loads(p.read_text()))
    assert len(out) == len(results) == 10 and out["covered"].all()
    for _, row in out.iterrows():
        path = DGX / FOLDER / Path(row["source_file"]).name
        joules = _raw_energy(DGX / FOLDER, path)
        tokens = json.loads(path.read_text())["total_output_tokens"]
        assert row["energy_j"] == pytest.approx(joules, rel=1e-9), row["source_file"]
        assert row["tokens_per_j"] == pytest.approx(tokens / joules, rel=1e-9)
        assert row["tokens_per_kwh"] == pytest.approx(tokens / joules * 3.6e6, rel=1e-9)
        assert row["scope"] == "unknown"  # the CSV's column is power_w: it does not say whose power


@needs_shared
def test_a_run_whose_test_the_runner_log_does_not_show_is_left_out(tables):
    runs, events, power = tables
    out = energy.of_runs(runs, events[events["test"] != "07"], power)
    assert not out["source_file"].str.contains("07-").any() and len(out) == 9


@needs_shared
def test_a_series_cut_short_does_not_cover_its_run(tables):
    runs, events, power = tables
    short = power[~(power["source_file"].str.startswith("raw/08-") & (power["elapsed_s"] > 400))]
    row = energy.of_runs(runs, events, short).set_index("source_file").loc["raw/08-sharegpt.json"]
    assert not row["covered"] and "does not cover the run" in row["why"] and pd.isna(row["tokens_per_j"])

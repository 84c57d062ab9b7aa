"""Energy per token: a power series set against the runs it overlaps.

A run's energy is the integral of the series' power over the run's window (the trapezoid rule
between samples, the power at the window's edges interpolated between the samples either side).
It is computed only when the series covers the run: a sample at or before the window's start,
or within one sampling interval after it; likewise at the end; and no gap inside the window
longer than three sampling intervals. Otherwise nothing is computed and the reason is given.
Output tokens per joule and per kWh follow from the run's own output tokens. The power is what
the series measures: a GPU's, the whole system's, or, when the column's name says neither,
of unknown scope (`ingest.power_series`), and the page says which.

Placing a run and a series on one clock needs a record of both. The DGX Spark harness
(bench-spark) counts each power CSV's `elapsed_s` from its test's START line in `_runner.log`,
and its result JSONs hold a run's duration but a date on another clock (the container's),
so a run is placed by the runner's own events (`runner_windows`): a test's run ends at the
test's END line, a sweep step's at the next step's start (or the test's END), and it began its
duration before. That rule is this module's reading of the harness, stated on the page as
the basis of every figure; the runner log's minute-by-minute status lines, which print the
same power as the CSV at the same elapsed seconds, are the check that the CSV counts from START.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import pandas as pd

from ..format import fmt_rate
from ..study.contract import Missing
from ..study.marks import Col, table

J_PER_KWH = 3.6e6
MAX_GAP_INTERVALS = 3  # a gap inside the window longer than this many sampling intervals: not covered

COLUMNS = ["config", "run_id", "source_file", "series_file", "scope", "window_start_s", "window_s", "basis",
           "covered", "why", "samples", "mean_power_w", "energy_j", "output_tokens", "tokens_per_j",
           "tokens_per_kwh"]


@dataclass(frozen=True)
class Energy:
    covered: bool
    why: str  # how the series covers the window, or why it does not
    samples: int = 0
    mean_power_w: float = math.nan
    energy_j: float = math.nan


def over_window(t: np.ndarray, watts: np.ndarray, start: float, end: float) -> Energy:
    """The energy of a power series (times `t` in seconds, `watts`) over [start, end]."""
    ok = ~(np.isnan(t) | np.isnan(watts))
    t, watts = t[ok], watts[ok]
    order = np.argsort(t, kind="stable")
    t, watts = t[order], watts[order]
    if end <= start:
        return Energy(False, "the run has no duration")
    if len(t) < 2:
        return Energy(False, f"the series holds {len(t)} sample(s)")
    step = float(np.median(np.diff(t)))
    if t[0] > start + step or t[-1] < end - step:
        return Energy(False, f"the series spans {t[0]:,.0f}-{t[-1]:,.0f} s and the run {start:,.0f}-{end:,.0f} s "
                             "on the same clock: it does not cover the run")
    inside = (t > start) & (t < end)
    pts = np.concatenate([[start], t[inside], [end]])
    gaps = np.diff(pts)
    if gaps.max() > MAX_GAP_INTERVALS * step:
        return Energy(False, f"a gap of {gaps.max():,.0f} s between samples inside the run (sampling every "
                             f"{step:,.0f} s)")
    p = np.interp(pts, t, watts)  # the edges interpolated; beyond the series, its first or last value
    joules = float(np.sum((p[1:] + p[:-1]) / 2 * gaps))
    first, last = max(t[0], start), min(t[-1], end)
    held = (first - start) + (end - last)
    how = f"{int(inside.sum())} samples every {step:,.0f} s inside the {end - start:,.0f} s run"
    if held > 0:
        how += f"; its first or last {held:,.0f} s, before or after the samples, at the nearest sample's power"
    return Energy(True, how, int(inside.sum()), joules / (end - start), joules)


# ---------------------------------------------------------------- the bench-spark harness


_TEST_FILE = re.compile(r"^(\d+)-")
_STEP_FILE = re.compile(r"^(\d+)-rate-sweep-([0-9.]+)\.json(?:\.gz)?$")


def runner_windows(runs: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """Each bench run of a bench-spark folder placed on its runner's clock (index: the runs
    table's): the test it belongs to (its file's number), the window's start and end in the
    runner log's seconds, and the basis in words. Runs of a folder without a runner log, or
    whose test the log does not show, are left out."""
    rows = {}
    if not len(runs) or not len(events):
        return pd.DataFrame(columns=["test", "folder", "start_s", "end_s", "basis"])
    ev = events.assign(folder=events["source_file"].map(lambda p: str(PurePosixPath(p).parent)))
    for i, run in runs.iterrows():
        path = PurePosixPath(str(run["source_file"]))
        m = _TEST_FILE.match(path.name)
        dur = float(run.get("duration_s", math.nan))
        if not m or math.isnan(dur):
            continue
        mine = ev[(ev["folder"] == str(path.parent)) & (ev["test"] == m[1])]
        end = mine[mine["event"] == "end"]
        if not len(end):
            continue
        step = _STEP_FILE.match(path.name)
        if step:
            steps = mine[mine["event"] == "step"].sort_values("elapsed_s")
            at = steps[np.isclose(steps["request_rate"].astype(float), float(step[2]))]
            if len(at) != 1:
                continue
            later = steps[steps["elapsed_s"] > at["elapsed_s"].iloc[0]]
            stop = float(later["elapsed_s"].iloc[0]) if len(later) else float(end["elapsed_s"].iloc[0])
            basis = (f"the step's {dur:,.0f} s ending when the runner began the next step or ended test {m[1]} "
                     f"(runner log line {int((later if len(later) else end)['line'].iloc[0])})")
        else:
            stop = float(end["elapsed_s"].iloc[0])
            basis = f"the run's {dur:,.0f} s ending when the runner logged the end of test {m[1]} (line " \
                    f"{int(end['line'].iloc[0])})"
        rows[i] = {"test": m[1], "folder": str(path.parent), "start_s": stop - dur, "end_s": stop, "basis": basis}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["test", "folder", "start_s", "end_s", "basis"])


def of_runs(runs: pd.DataFrame, events: pd.DataFrame, power: pd.DataFrame) -> pd.DataFrame:
    """Energy per token of every run a power series of its folder and test covers (bench-spark:
    `NN-telemetry.csv` beside `NN-*.json`, its elapsed seconds counted from test NN's START)."""
    win = runner_windows(runs, events)
    out = []
    if not len(win) or not len(power):
        return pd.DataFrame(columns=COLUMNS)
    pw = power.assign(folder=power["source_file"].map(lambda p: str(PurePosixPath(p).parent)),
                      test=power["source_file"].map(lambda p: (_TEST_FILE.match(PurePosixPath(p).name) or [None,
                                                                                                          None])[1]))
    starts = events[events["event"] == "start"].assign(
        folder=events["source_file"].map(lambda p: str(PurePosixPath(p).parent)))
    for i, w in win.iterrows():
        series = pw[(pw["folder"] == w["folder"]) & (pw["test"] == w["test"]) & pw["elapsed_s"].notna()]
        start = starts[(starts["folder"] == w["folder"]) & (starts["test"] == w["test"])]
        if not len(series) or not len(start):
            continue
        for (src, scope), s in series.groupby(["source_file", "scope"], sort=False):
            t = s["elapsed_s"].to_numpy(dtype=float) + float(start["elapsed_s"].iloc[0])
            e = over_window(t, s["power_w"].to_numpy(dtype=float), w["start_s"], w["end_s"])
            run = runs.loc[i]
            tokens = float(run.get("total_output_tokens", math.nan))
            per_j = tokens / e.energy_j if e.covered and e.energy_j > 0 else math.nan
            out.append({"config": run.get("config"), "run_id": run.get("run_id"), "source_file": run["source_file"],
                        "series_file": src, "scope": scope, "window_start_s": w["start_s"],
                        "window_s": w["end_s"] - w["start_s"], "basis": w["basis"], "covered": e.covered,
                        "why": e.why, "samples": e.samples, "mean_power_w": e.mean_power_w, "energy_j": e.energy_j,
                        "output_tokens": tokens, "tokens_per_j": per_j, "tokens_per_kwh": per_j * J_PER_KWH})
    return pd.DataFrame(out, columns=COLUMNS)


# ---------------------------------------------------------------- a chapter's energy section


def of_chapter(r) -> pd.DataFrame:
    """A chapter's energy per token (`r`: its pipeline.ChapterResults; every bench run of its
    data with a configuration, whatever its kind); the section
    the files allow but none of whose runs a series covers is marked missing, with why."""
    out = of_runs(r.data["runs"], r.data["harness_events"], r.data["power_samples"])
    if r.has("energy") and not out["covered"].any():
        why = "; ".join(dict.fromkeys(out["why"])) if len(out) else (
            "bench runs whose test the runner's log and a power series of the same folder and test both show")
        r.sections["energy"] = Missing(r.spec.contract.section("energy"), [why])
    return out


def glue_values(e: pd.DataFrame) -> dict:
    """Numbers the energy section's prose quotes."""
    ok = e[e["covered"]]
    scopes = sorted(set(ok["scope"].dropna()))
    return {"energy_runs": len(ok), "energy_not_covered": int((~e["covered"]).sum()),
            "energy_scope": ", ".join(SCOPE_WORDS.get(s, s) for s in scopes) or "unknown"}


SCOPE_WORDS = {"gpu": "the GPU's draw", "system": "the whole system's draw", "package": "the chip package's draw",
               "cpu": "the CPU's draw", "unknown": "a power column whose name does not say what it measures"}


def display(e: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """The energy table: per run covered, its length, mean power, energy and tokens per J / kWh
    (how each was covered and placed: basis_display)."""
    ok = e[e["covered"]]
    return table(ok, {
        "configuration": Col("config", lambda v: labels.get(v, v)),
        "run": Col("source_file", _run_name),
        "run length": Col("window_s", lambda v: f"{v:,.0f} s"),
        "mean power": Col("mean_power_w", lambda v: f"{v:,.1f} W"),
        "energy": Col("energy_j", lambda v: f"{v / 3600:,.2f} Wh"),
        "output tokens": Col("output_tokens", lambda v: f"{int(v):,}"),
        "tokens per joule": Col("tokens_per_j", lambda v: f"{v:,.2f}"),
        "tokens per kWh": Col("tokens_per_kwh", lambda v: fmt_rate(v, 0)),
    })


def basis_display(e: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """Per run: the power series, what it measures, how it covers the run (or why it does not)
    and where the run was placed on its clock."""
    return table(e, {
        "configuration": Col("config", lambda v: labels.get(v, v)),
        "run": Col("source_file", _run_name),
        "power series": Col("series_file", lambda v: PurePosixPath(str(v)).name),
        "power": Col("scope", lambda v: SCOPE_WORDS.get(v, v)),
        "how the series covers the run": Col("why"),
        "where the run is placed": Col("basis"),
    })


def _run_name(path) -> str:
    return re.sub(r"\.json(\.gz)?$", "", PurePosixPath(str(path)).name)

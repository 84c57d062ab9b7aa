"""The reconstructed power-sweep logs: deterministic, and faithful to every published cell.

The published tables are recomputed from the raw files with a small parser written here
(plain regular expressions, pandas and numpy: not the generator's code, not the
chapter's), then through the project's readers when they are installed. Cells the
files do not reproduce are listed in EXPECTED_MISSES, and each is shown to contradict
other published numbers using the printed digits alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbook.ledger.published import load_published, parse_quantity
from benchbook.study.folder import load_study, read_checksums
from power_logs import _values, _values_of, parse_log, parse_smi
from reconstructed import assert_deterministic, generate_twice  # noqa: E402  (tests/ is on sys.path)
from tools.reconstruct import power_sweep

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "power-sweep"
PUBLISHED = DATA / "published.yml"


# Published cells (table id, first label cells, column) that the files do not print alike,
# each proven contradictory below.
EXPECTED_MISSES = {
    # the 122B's tokens-per-kW averages contradict its concurrency tables
    *{("tokens-per-kw-c1-3", ("122B", p), col)
      for p in ("200W", "250W", "300W") for col in ("Avg Gen t/s", "Gen t/kW")},
    *{("tokens-per-kw-c1-6", ("122B", p), col)
      for p in ("200W", "250W", "300W") for col in ("Avg Gen t/s", "Gen t/kW")},
    ("tokens-per-kw-c1-3", ("122B", "250W"), "Avg Prefill t/s"),
    ("tokens-per-kw-c1-3", ("122B", "250W"), "Prefill t/kW"),
    ("tokens-per-kw-c1-6", ("122B", "250W"), "Avg Prefill t/s"),
    ("tokens-per-kw-c1-6", ("122B", "250W"), "Prefill t/kW"),
    ("tokens-per-kw-c1-6", ("122B", "300W"), "Avg Prefill t/s"),
    ("tokens-per-kw-c1-6", ("122B", "300W"), "Prefill t/kW"),
    # the 3.6-35B: power-table averages keep the 1-3 (and 1-6) request cells out of reach
    ("tokens-per-kw-c1-3", ("3.6-35B", "200W"), "Avg Gen t/s"),
    ("tokens-per-kw-c1-3", ("3.6-35B", "200W"), "Gen t/kW"),
    ("tokens-per-kw-c1-3", ("3.6-35B", "250W"), "Avg Gen t/s"),
    ("tokens-per-kw-c1-3", ("3.6-35B", "250W"), "Gen t/kW"),
    ("tokens-per-kw-c1-6", ("3.6-35B", "250W"), "Avg Gen t/s"),
    ("tokens-per-kw-c1-6", ("3.6-35B", "250W"), "Gen t/kW"),
    ("tokens-per-kw-c1-3", ("3.6-35B", "250W"), "Avg Prefill t/s"),
    ("tokens-per-kw-c1-3", ("3.6-35B", "250W"), "Prefill t/kW"),
    # per-request cells against their own average (or the power table's average)
    ("concurrency-36-35b", ("250W", "3"), "Per-request t/s"), ("concurrency-36-35b", ("250W", "5"), "Per-request t/s"),
    ("concurrency-36-35b", ("200W", "2"), "Per-request t/s"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return generate_twice(tmp_path_factory, power_sweep, PUBLISHED, "power")


# ---------------------------------------------------------------- determinism


def test_generation_is_deterministic_and_matches_committed_data(built):
    assert_deterministic(built, DATA)
    first = built[0]
    sums = read_checksums(DATA)
    assert sums == read_checksums(first)
    for rel in sums:
        assert (DATA / rel).read_bytes() == (first / rel).read_bytes(), rel


def test_other_seed_gives_other_files_but_the_same_tables(tmp_path):
    power_sweep.generate(tmp_path, PUBLISHED, seed=11)
    assert read_checksums(tmp_path) != read_checksums(DATA)
    assert _misses(_values(tmp_path)) == EXPECTED_MISSES


def test_folder_is_compact_and_loads():
    study = load_study(DATA)  # verifies every checksum
    assert study.reconstructed and "reconstructed" in study.label
    assert len(study.files) == 18
    sizes = [(DATA / f.path).stat().st_size for f in study.files]
    assert max(sizes) < 4_000_000 and sum(sizes) < 10_000_000
    kinds = {f.context["kind"] for f in study.files}
    assert kinds == {"server-log", "gpu-log"}


# ---------------------------------------------------------------- an independent parser














@pytest.fixture(scope="module")
def values() -> dict[str, float]:
    return _values(DATA)


def _cells():
    """(table id, label cells, column, printed text, expression) of every valued cell."""
    pub = load_published(PUBLISHED)
    for t in pub.tables:
        for cells, exprs in zip(t.rows, t.values):
            labels = tuple(c for c, e in zip(cells, exprs) if e is None)
            for col, text, expr in zip(t.columns, cells, exprs):
                if expr:
                    yield t.id, labels, col, text, expr


def _eval(expr: str, values: dict) -> float | None:
    names = re.findall(r"[A-Za-z_]\w*", expr)
    if any(values.get(n) is None for n in names):
        return None
    return float(eval(expr, {"__builtins__": {}}, {n: values[n] for n in names}))  # noqa: S307 - our YAML


def _prints_alike(text: str, value: float) -> bool:
    """Our value rounds to the printed digits (same number of decimals)."""
    q = parse_quantity(text)
    m = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    decimals = len(m.group(1) or "")
    return f"{value:.{decimals}f}" == f"{q.value:.{decimals}f}"


def _misses(values: dict) -> set:
    out = set()
    for table, labels, col, text, expr in _cells():
        v = _eval(expr, values)
        if v is None or not _prints_alike(text, v):
            out.add((table, labels, col))
    return out


def test_every_published_cell_is_reproduced_or_a_proven_contradiction(values):
    assert _misses(values) == EXPECTED_MISSES


@pytest.mark.parametrize("table,labels,col,text,expr", list(_cells()),
                         ids=lambda x: x if isinstance(x, str) else "-".join(x) if isinstance(x, tuple) else None)
def test_published_cell(values, table, labels, col, text, expr):
    v = _eval(expr, values)
    assert v is not None, f"the files give no value for {expr}"
    q = parse_quantity(text)
    if (table, labels, col) in EXPECTED_MISSES:
        assert not _prints_alike(text, v)
        return
    assert _prints_alike(text, v), f"{table} {labels} {col}: {expr} = {q.display(v)}, published {text}"


def test_single_value_claims(values):
    """Claims about values no table prints: peaks, the stats interval, an empty cell."""
    pub = {c["id"]: c for c in load_published(PUBLISHED).claims}
    for cid in ("q27-peak-prefill", "q27-peak-gen", "q122-peak-prefill", "stats-interval", "cpm-q36-200-c6-empty"):
        c = pub[cid]
        q, v = parse_quantity(c["published"]), values[c["recompute"]]
        assert abs(v - q.value) <= q.tolerance * max(abs(q.value), 1.0), (cid, v)


# ---------------------------------------------------------------- the misses really contradict


def _iv(text: str) -> tuple[float, float]:
    q = parse_quantity(text)
    return q.value - q.step / 2, q.value + q.step / 2


def _pub() -> dict[str, dict]:
    return {t.id: t for t in load_published(PUBLISHED).tables}


def _row(table, *labels):
    t = _pub()[table]
    return next(dict(zip(t.columns, r)) for r in t.rows if tuple(r[: len(labels)]) == labels)


def test_122b_tokens_per_kw_averages_contradict_its_concurrency_table():
    for power in ("200W", "250W", "300W"):
        cells = {c: _row("concurrency-122b", power, str(c)) for c in range(1, 7)}
        for table, top in (("tokens-per-kw-c1-3", 3), ("tokens-per-kw-c1-6", 6)):
            n = sum(float(cells[c]["Samples"]) for c in range(1, top + 1))
            lo = sum(_iv(cells[c]["Avg gen t/s"])[0] * float(cells[c]["Samples"]) for c in range(1, top + 1)) / n
            hi = sum(_iv(cells[c]["Avg gen t/s"])[1] * float(cells[c]["Samples"]) for c in range(1, top + 1)) / n
            p_lo, p_hi = _iv(_row(table, "122B", power)["Avg Gen t/s"])
            assert p_hi <= lo or p_lo >= hi, (table, power, lo, hi)


def test_122b_250w_prefill_per_kw_contradicts_its_active_cells():
    t = _pub()["prefill-active-250w"]
    n = {int(r[0]): float(r[4]) for r in t.rows}
    a = {int(r[0]): _iv(r[3]) for r in t.rows}
    for table, top in (("tokens-per-kw-c1-3", 3), ("tokens-per-kw-c1-6", 6)):
        cs = range(1, top + 1)
        hi = sum(a[c][1] * n[c] for c in cs) / sum(n[c] for c in cs)
        assert _iv(_row(table, "122B", "250W")["Avg Prefill t/s"])[0] >= hi


def test_122b_300w_prefill_per_kw_needs_most_windows_without_prefill(values):
    """2573 over 1-6 requests with 2132.5 over all windows leaves at most 4 windows at 7-8
    requests to pull the average down: possible only if very few windows prefilled."""
    pooled_hi = _iv(_row("power-122b", "300W")["Avg Prefill (t/s)"])[1]
    c16_lo = _iv(_row("tokens-per-kw-c1-6", "122B", "300W")["Avg Prefill t/s"])[0]
    extra = float(_row("power-122b", "300W")["Samples"]) - sum(
        float(_row("concurrency-122b", "300W", str(c))["Samples"]) for c in range(1, 7))
    # mean16 <= pooled * A / (A - extra): at least c16_lo needs A <= limit
    most_active = extra * c16_lo / (c16_lo - pooled_hi)
    assert values["q35_122b_300W_prefill_active_n"] > most_active


def test_36_tokens_per_kw_cells_conflict_with_the_power_table():
    def bound(power, cells_lo, top, n_tot, pooled):
        rest = sum(_iv(r["Avg gen t/s"])[1] * float(r["Samples"]) for c, r in cells_lo.items() if c > top)
        n = sum(float(r["Samples"]) for c, r in cells_lo.items() if c <= top)
        return (_iv(pooled)[0] * n_tot - rest) / n

    for power, top in (("200W", 3), ("250W", 3)):
        t = _pub()["concurrency-36-35b"]
        cells = {int(r[1]): dict(zip(t.columns, r)) for r in t.rows if r[0] == power}
        power_row = _row("power-36-35b", power)
        least = bound(power, cells, top, float(power_row["Samples"]), power_row["Avg Gen (t/s)"])
        assert least >= _iv(_row("tokens-per-kw-c1-3", "3.6-35B", power)["Avg Gen t/s"])[1], power
    # 1-6 requests are all of the 3.6-35B's windows: 162 and 163.0 cannot both print
    assert _iv(_row("tokens-per-kw-c1-6", "3.6-35B", "250W")["Avg Gen t/s"])[1] <= _iv(
        _row("power-36-35b", "250W")["Avg Gen (t/s)"])[0]


def test_36_250w_prefill_over_1_3_requests_contradicts_the_sustained_cells():
    t = _pub()["prefill-sustained-250w"]
    rows = {int(r[0]): r for r in t.rows if int(r[0]) <= 3}
    hi = sum(_iv(r[5])[1] * float(r[6]) for r in rows.values()) / sum(float(r[6]) for r in rows.values())
    assert _iv(_row("tokens-per-kw-c1-3", "3.6-35B", "250W")["Avg Prefill t/s"])[0] >= hi


def test_36_per_request_cells_contradict_their_averages():
    for c in (3, 5):
        r = _row("concurrency-36-35b", "250W", str(c))
        lo, hi = _iv(r["Avg gen t/s"])
        p_lo, p_hi = _iv(r["Per-request t/s"])
        assert p_hi <= lo / c or p_lo >= hi / c
    # at 200 W the 2-request cell's "93" caps its average below 187, and then the
    # power table's 188.4 is out of reach even with every other cell at its top
    t = _pub()["concurrency-36-35b"]
    rows = [dict(zip(t.columns, r)) for r in t.rows if r[0] == "200W"]
    top = 0.0
    for r in rows:
        c = int(r["Concurrent reqs"])
        hi = _iv(r["Avg gen t/s"])[1]
        if c == 2:
            hi = min(hi, _iv(r["Per-request t/s"])[1] * c)
        top += hi * float(r["Samples"])
    assert top / 40 < _iv(_row("power-36-35b", "200W")["Avg Gen (t/s)"])[0]


# ---------------------------------------------------------------- the GPU logs


def test_gpu_logs_carry_the_limit_beside_each_server_log():
    study = load_study(DATA)
    for e in study.files:
        if e.context["kind"] != "gpu-log":
            continue
        smi = parse_smi(study.path(e))
        vllm = smi[smi["index"].isin([0, 2, 3, 4])]
        last = vllm.groupby("index")["power.limit [W]"].last()
        assert set(last) == {float(e.context["power_limit_w"])}, e.path
        assert set(vllm["power.limit [W]"]) == {175.0, float(e.context["power_limit_w"])}  # set before the run
        assert set(smi[smi["index"] == 1]["power.limit [W]"]) == {140.0}  # the A4000 is not in the group
        assert (vllm["power.draw [W]"] <= vllm["power.limit [W]"] * 1.01).all()
        log = next(f for f in study.files
                   if f.context["kind"] == "server-log" and Path(f.path).parent == Path(e.path).parent)
        windows = parse_log(study.path(log), 2026)
        assert smi["timestamp"].min() < windows["time"].min() and smi["timestamp"].max() > windows["time"].max()


def test_logs_tell_a_consistent_story():
    """Running changes only by arrivals minus completions; one all-zero line per burst."""
    study = load_study(DATA)
    for e in study.files:
        if e.context["kind"] != "server-log":
            continue
        df = parse_log(study.path(e), 2026)
        zero = (df["gen"] == 0) & (df["prefill"] == 0) & (df["running"] == 0)
        tails = (df["running"] == 0) & (df["gen"] > 0)
        assert zero.sum() == tails.sum() > 3, e.path
        assert (tails.shift(1, fill_value=False) == zero).all(), "each burst ends in a tail, then one all-zero line"
        # across an idle gap (or a restart) the server starts from nothing running
        resumed = df["time"].diff().dt.total_seconds().fillna(999) > 15
        before = df["running"].shift(1).fillna(0).where(~resumed, 0)
        drops = (before - df["running"]).clip(lower=0)
        assert (df["completions"] >= drops).all(), e.path
        new = df["running"] - before + df["completions"]
        assert (new >= 0).all()
        assert (df.loc[new > 0, "prefill"] > 0).all(), "a new request always brings some prefill"


# ---------------------------------------------------------------- through the readers


def test_readers_agree_with_the_independent_parser():
    try:
        from benchbook.ingest import (
            read,
            vllm_log,  # noqa: F401
        )
    except Exception as exc:  # noqa: BLE001 - the readers are written in parallel
        pytest.skip(f"vLLM log reader not available: {exc}")
    study = load_study(DATA)
    for e in study.files:
        path = study.path(e)
        if e.context["kind"] == "server-log":
            res = read(path)
            ours = parse_log(path, 2026)
            w = res.tables["windows"]
            assert len(w) == len(ours), e.path
            assert np.allclose(w["generation_tps"].to_numpy(dtype=float), ours["gen"].to_numpy())
            assert np.allclose(w["prompt_tps"].to_numpy(dtype=float), ours["prefill"].to_numpy())
            assert (w["running"].to_numpy(dtype=int) == ours["running"].to_numpy()).all()
            acc = res.tables["access"]
            ok = acc[(acc["method"] == "POST") & (acc["path"] == "/v1/chat/completions") & (acc["status"] == 200)]
            assert len(ok) == ours["completions"].sum(), e.path
        else:
            res = read(path)
            g = res.tables["gpu_samples"]
            assert len(g) == len(parse_smi(path)) and res.ignored == 0, e.path


def test_every_published_cell_through_the_readers(values):
    """The same check with the project's readers doing the parsing (windows, access lines,
    nvidia-smi samples) and this file doing the arithmetic."""
    try:
        from benchbook.ingest import vllm_log
        from benchbook.study.load import ingest_study
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"vLLM log reader not available: {exc}")
    data = ingest_study(DATA)
    w, acc, gpu = data["windows"], data["access"], data["gpu_samples"]
    done = acc[(acc["method"] == "POST") & (acc["path"] == "/v1/chat/completions") & (acc["status"] == 200)]
    per_window = done.groupby(["source_file", "window_line"]).size()
    logs = []
    for src, g in w.groupby("source_file"):
        g = vllm_log.add_timestamps(g, int(str(g["run_date"].iloc[0])[:4])).sort_values("line")
        beside = gpu[gpu["source_file"].map(lambda f: str(Path(f).parent)) == str(Path(src).parent)]
        limit = int(beside[beside["gpu_index"] == 0]["power_limit_w"].iloc[-1])
        key = pd.MultiIndex.from_arrays([g["source_file"], g["line"].astype("Int64")])
        logs.append((g["config"].iloc[0], limit, pd.DataFrame({
            "time": g["timestamp"].to_numpy(), "prefill": g["prompt_tps"].to_numpy(dtype=float),
            "gen": g["generation_tps"].to_numpy(dtype=float), "running": g["running"].to_numpy(dtype=int),
            "completions": per_window.reindex(key).fillna(0).to_numpy(dtype=int)})))
    via_readers = _values_of(logs)
    assert _misses(via_readers) == EXPECTED_MISSES
    for name, v in values.items():
        assert via_readers[name] == pytest.approx(v, rel=1e-12, abs=1e-12), name


def test_the_write_up_s_four_cards_and_visible_devices_are_no_choice():
    """The write-up's "4x RTX 3090" (its 800/1000/1200 W are four times the limit) and its
    compose file's NVIDIA_VISIBLE_DEVICES=0,2,3,4 were generator choices, so what rests on them
    read as assumed; they are the write-up's, and their landings are gone."""
    from tools.reconstruct import lands, power_sweep

    assert power_sweep.CARDS == 4 and power_sweep.GPU_INDICES == [0, 2, 3, 4]
    assert not {"cards", "gpu_indices"} & set(power_sweep.ASSUMPTIONS)
    assert not {"cards", "gpu_indices"} & set(lands.load("power-sweep"))


def test_a_landing_of_a_choice_the_generator_no_longer_makes_goes(tmp_path, monkeypatch):
    from tools.reconstruct import lands

    monkeypatch.setattr(lands, "FOLDER", tmp_path)
    lands.record("x", {"a": {"moves": "nothing"}, "b": {"moves": "nothing"}})
    lands.record("x", {"a": {"columns": ["t.c"]}}, choices={"a"})
    assert lands.load("x") == {"a": {"columns": ["t.c"]}}

"""An independent reader of the power-sweep logs (regular expressions, not benchbook's readers),
shared by the generator's tests and the chapter's: both check numbers against it."""

from __future__ import annotations

import gzip
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from benchbook.study.folder import load_study

PREFIX = {"q35-27b": "q35_27b", "q35-122b": "q35_122b", "q36-35b": "q36_35b"}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_STATS = re.compile(
    r"^(?:\(\w+ pid=\d+\) )?INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[loggers\.py:\d+\] Engine \d+: "
    r"Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, "
    r"Running: (\d+) reqs, Waiting: (\d+) reqs")


_DONE = re.compile(r'^(?:\(\w+ pid=\d+\) )?INFO: +\S+ - "POST /v1/chat/completions HTTP/1\.1" 200\b')


def _text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def parse_log(path: Path, year: int) -> pd.DataFrame:
    """One row per stats line, with the completions logged since the previous one."""
    rows, done = [], 0
    for line in _text(path).splitlines():
        line = _ANSI.sub("", line.rstrip("\r"))
        if _DONE.match(line):
            done += 1
            continue
        m = _STATS.match(line)
        if m:
            t = datetime.strptime(f"{year}-{m.group(1)}", "%Y-%m-%d %H:%M:%S")
            rows.append(dict(time=t, prefill=float(m.group(2)), gen=float(m.group(3)),
                             running=int(m.group(4)), completions=done))
            done = 0
    return pd.DataFrame(rows)


def parse_smi(path: Path) -> pd.DataFrame:
    lines = _text(path).splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    rows = [[v.strip() for v in line.split(",")] for line in lines[1:]]
    df = pd.DataFrame(rows, columns=header)
    for col in ("power.draw [W]", "power.limit [W]"):
        df[col] = df[col].str.removesuffix(" W").astype(float)
    df["index"] = df["index"].astype(int)
    df["timestamp"] = pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f")
    return df


def _stats(out: dict, p: str, w: pd.DataFrame) -> None:
    out[f"{p}_gen_n"] = float(len(w))
    if not len(w):
        return
    g, pf = w["gen"].to_numpy(), w["prefill"].to_numpy()
    act = pf[pf > 0]
    out.update({
        f"{p}_gen_mean": g.mean(), f"{p}_gen_median": float(np.median(g)), f"{p}_gen_max": g.max(),
        f"{p}_gen_p95": float(np.percentile(g, 95, method="lower")),
        f"{p}_per_request_mean": float((w["gen"] / w["running"]).mean()),
        f"{p}_prefill_sustained_mean": pf.mean(), f"{p}_prefill_sustained_median": float(np.median(pf)),
        f"{p}_prefill_active_n": float(len(act)),
        f"{p}_completions_per_min": 6.0 * w["completions"].sum() / len(w),
    })
    if len(act):
        out[f"{p}_prefill_active_mean"] = act.mean()
        out[f"{p}_prefill_active_median"] = float(np.median(act))


def _values(root: Path) -> dict[str, float]:
    """Every value name of published.yml, from the raw files of a data folder."""
    study = load_study(root)
    logs = []
    for e in study.files:
        if e.context["kind"] != "server-log":
            continue
        smi = parse_smi(next(study.path(e).parent.glob("nvidia-smi.csv*")))
        limit = int(smi[smi["index"] == 0]["power.limit [W]"].iloc[-1])  # the limit beside the log
        logs.append((e.config, limit, parse_log(study.path(e), int(str(e.context["date"])[:4]))))
    return _values_of(logs)


def _values_of(logs: list[tuple[str, int, pd.DataFrame]]) -> dict[str, float]:
    """The published metrics of (config, limit, windows) logs; windows have time, prefill,
    gen, running and completions columns."""
    out, gaps = {}, []
    for config, limit, df in logs:
        prefix = PREFIX[config]
        gaps += list(df["time"].diff().dt.total_seconds().dropna())
        p = f"{prefix}_{limit}W"
        busy = df[df["running"] >= 1]
        _stats(out, p, busy)
        for c in range(1, 9):
            _stats(out, f"{p}_c{c}", busy[busy["running"] == c])
        for scope, lo, hi in (("c1to3", 1, 3), ("c1to6", 1, 6), ("c6to8", 6, 8)):
            _stats(out, f"{p}_{scope}", busy[busy["running"].between(lo, hi)])
        out[f"{p}_gpu_kw"] = 4 * limit / 1000
        for k in ("gen", "prefill"):
            out[f"{prefix}_{k}_max"] = max(out.get(f"{prefix}_{k}_max", 0.0), float(df[k].max()))
    out["stats_interval_s"] = float(np.median(gaps))
    return out

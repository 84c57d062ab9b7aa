"""Reader for `nvidia-smi --query-gpu=... --format=csv[,nounits] -l N` logs.

Power draw and the enforced limit per GPU over time, so a window's power limit can come
from the log beside it and not only from the manifest. Columns are found by name in the
header (any order, any subset), because every user queries a different list.

One record is one data line (one GPU at one sample time). `read` counts the lines that
reached `gpu_samples`; `ignored` counts lines that did not, each with a reason: a header
repeated mid-file (a restarted `-l` loop appending to the same file), a line whose value
count or values do not fit the header, a cut-off last line. An unavailable value
(`[N/A]`, `[Not Supported]`, any `[...]`) keeps its line: the value becomes NaN and the
reasons count it as "unavailable value ..." without adding to `ignored`.
The header is required: `noheader` files are refused with an explanation.

Several GPUs without an index column: `--query-gpu=timestamp,power.draw,...` on a machine
with two GPUs prints, at each sample time, one row per GPU, and nothing in a row says which
GPU it is. The reader tells them apart (the `gpu` column, the index staying empty) by:

- a column that names one GPU (`uuid`, `gpu_uuid`, `pci.bus_id`, `serial`) when it holds
  more than one value: the GPUs in the order they first appear ("2 of 2 (by uuid)");
- else, when sample times repeat: every time must occur exactly k > 1 times in k rows in a
  row (the last sample may be cut short), and the row's place within its time gives the GPU
  ("1 of 2 (by row order)"), or the `name` column when the names differ within each time.
  Any other pattern (a time printed once here and twice there, a name that changes place)
  is an error naming the line: add `index` to --query-gpu.

A log whose times never repeat and that names at most one GPU is one series, as before
(rows a few milliseconds apart cannot be told from one GPU sampled fast). What was done is
said in the result's notes ("2 GPUs told apart by row order within each timestamp").
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import columns, conform
from .textio import read_text

FORMAT = "nvidia-smi-csv"
TABLES = ("gpu_samples",)

TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S")
EXAMPLE_HEADER = "index, timestamp, name, power.draw [W], power.limit [W], memory.used [MiB]"

# table column -> (query names in order of preference, unit the values carry)
_NUMERIC = {
    "power_draw_w": (("power.draw", "power.draw.average", "power.draw.instant"), "W"),
    "power_limit_w": (("power.limit", "enforced.power.limit", "power.default_limit"), "W"),
    "memory_used_mib": (("memory.used",), "MiB"),
    "memory_total_mib": (("memory.total",), "MiB"),
    "utilization_gpu_pct": (("utilization.gpu",), "%"),
    "temperature_c": (("temperature.gpu",), None),
    "sm_clock_mhz": (("clocks.current.sm", "clocks.sm"), "MHz"),
}
# names (or name prefixes ending in '.') that only nvidia-smi's query list uses
_KNOWN = ("index", "timestamp", "name", "gpu_name", "uuid", "gpu_uuid", "serial", "pstate",
          "driver_version", "vbios_version", "count", "persistence_mode", "compute_mode",
          "display_mode", "display_active", "fan.speed", "enforced.power.limit",
          "power.", "memory.", "utilization.", "temperature.", "clocks.", "clocks_event_reasons.",
          "clocks_throttle_reasons.", "pci.", "pcie.", "ecc.", "retired_pages.", "encoder.",
          "mig.", "gom.", "inforom.", "accounting.", "protected_memory.")
_FIELD = re.compile(r"^([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)(?: \[([^\]]+)\])?$")
_VALUE = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+))(?: (\S+))?$")
_TIME = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}$")
_IDS = ("uuid", "gpu_uuid", "pci.bus_id", "serial")  # query names whose value names one GPU
_DATA_HINT = re.compile(r"^\d+/\d\d/\d\d \d\d:|^[-+]?\d+(?:\.\d+)? (?:W|MiB|MHz|%)$|^\[N/A\]$")


def sniff(head: str, path: str | Path | None = None) -> bool:
    """True when the first non-blank line is an nvidia-smi `--format=csv` header."""
    for line in head.lstrip("\ufeff").splitlines():
        if line.strip():
            return _header(line) is not None
    return False


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read one nvidia-smi CSV log into the `gpu_samples` table."""
    path = Path(path)
    text = read_text(path)
    res = IngestResult(path=str(path), format=FORMAT)
    lines = text.split("\n")
    cut = not text.endswith("\n")  # the last line has no newline: the writer was stopped
    header, rows = None, []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = _header(line)
        if header is None:
            if fields is None:
                raise IngestError(path, f"line {n}", _no_header(line))
            header = _Header(fields, path, n)
            continue
        if fields is not None:
            if fields == header.fields:
                res.ignore("header repeated mid-file (a restarted nvidia-smi -l loop)")
            else:
                res.ignore("new header mid-file (the query list changed)")
                header = _Header(fields, path, n)
            continue
        row = header.row(line, res)
        if isinstance(row, str):
            res.ignore("partial last line" if cut and n == len(lines) else row)
            continue
        row.update(source_file=str(path), line=n)
        rows.append(row)
    if header is None:
        raise IngestError(path, None, "no lines; expected an nvidia-smi CSV header and samples")
    res.read = len(rows)
    df = pd.DataFrame(rows, columns=[*columns("gpu_samples"), "_id", "_id_name"])
    df["timestamp"] = pd.to_datetime(df["timestamp"])
    df["gpu"] = df["gpu"].astype(object)  # (all None so far: pandas made it float)
    _tell_gpus_apart(df, path, res)
    res.tables["gpu_samples"] = conform(df.drop(columns=["_id", "_id_name"]), "gpu_samples")
    return res


def gpu_key(gpu: pd.DataFrame) -> pd.Series:
    """Which GPU each row of a gpu_samples table is, as text: its index where the log
    printed one, else the GPU the reader told apart (`gpu`), else missing (one series)."""
    key = gpu["gpu_index"].astype("Int64").astype("string")
    if "gpu" in gpu:
        key = key.fillna(gpu["gpu"].astype("string"))
    return key


def _tell_gpus_apart(df: pd.DataFrame, path: Path, res: IngestResult) -> None:
    """Fill `gpu` for the rows without an index when the log holds several GPUs (module
    docstring); raise when its rows repeat sample times in no regular pattern."""
    rows = df[df["gpu_index"].isna()]
    if len(rows) < 2:
        return
    if rows["_id"].nunique() > 1:
        if rows["_id"].isna().any():
            n = int(rows.loc[rows["_id"].isna(), "line"].iloc[0])
            raise IngestError(path, f"line {n}", f"no {rows['_id_name'].dropna().iloc[0]} value, and it is "
                              f"what tells this log's GPUs apart: {_ADVICE}")
        _label(df, rows.index, pd.factorize(rows["_id"])[0], rows["_id_name"].dropna().iloc[0], res)
        return
    times = rows["timestamp"]
    if not times.dropna().duplicated().any():
        return  # one series, as before
    runs = (times != times.shift()).cumsum()  # rows in a row with the same time
    sizes = runs.groupby(runs).size().to_numpy()
    _check_pattern(rows, runs, sizes, path)
    k = int(sizes[0])
    position = rows.groupby(runs).cumcount().to_numpy()
    by_name = _name_per_place(rows, runs, position, k, path)
    if by_name is not None:
        _label(df, rows.index, by_name, "name", res)
    else:
        _label(df, rows.index, position, "row order", res)
    if sizes[-1] < k:
        res.notes.append(f"the last sample (line {int(rows['line'].iloc[-1])}) has {int(sizes[-1])} of {k} rows "
                         "(the log stopped within a sample)")


_ADVICE = ("the log has no index column, so its rows can only be told apart by GPU when every sample time has one "
           "row per GPU, in the same order; add index to --query-gpu (e.g. --query-gpu=index,timestamp,power.draw,...)")


def _check_pattern(rows: pd.DataFrame, runs: pd.Series, sizes: np.ndarray, path: Path) -> None:
    """Sample times that repeat must do so regularly: each time in k > 1 rows in a row (the
    last time may have fewer), no time again later, every row with a time, and no column
    naming a single GPU. Else an error naming the line where the pattern breaks."""
    lines = rows.groupby(runs)["line"].first().to_numpy()
    if rows["timestamp"].isna().any():
        n = int(rows.loc[rows["timestamp"].isna(), "line"].iloc[0])
        raise IngestError(path, f"line {n}", f"a row without a sample time among rows whose times repeat: {_ADVICE}")
    first_repeat = int(np.argmax(sizes > 1))
    if rows["_id"].nunique() == 1:
        raise IngestError(path, f"line {int(lines[first_repeat])}", f"this sample time has {int(sizes[first_repeat])} "
                          f"rows while the {rows['_id_name'].dropna().iloc[0]} column names one GPU: {_ADVICE}")
    k = int(sizes[0])
    bad = np.flatnonzero(sizes[:-1] != k) if k > 1 else np.array([first_repeat])
    if not len(bad) and sizes[-1] > k:
        bad = np.array([len(sizes) - 1])
    if len(bad):
        i = int(bad[0])
        raise IngestError(path, f"line {int(lines[i])}", f"this sample time has {int(sizes[i])} row(s) where the "
                          f"first has {k}: {_ADVICE}")
    again = rows["timestamp"].duplicated() & (runs != runs.shift())
    if again.any():
        raise IngestError(path, f"line {int(rows.loc[again, 'line'].iloc[0])}", "this sample time occurred "
                          f"before, in other rows: {_ADVICE}")


def _name_per_place(rows, runs, position, k: int, path: Path):
    """GPU numbers from the name column when the names differ within every sample time (the
    order of first appearance), None when the names do not tell the GPUs apart; an error
    when they show that the GPUs changed places within the samples."""
    names = rows["name"].astype("string").fillna("")
    if names.groupby(runs).nunique().eq(rows.groupby(runs).size()).all() and names.nunique() == k:
        return pd.factorize(names)[0]
    per_place = names.groupby(position).nunique()
    if (per_place > 1).any():
        place = int(per_place[per_place > 1].index[0])
        first = names[position == place]
        n = int(rows.loc[first.index[(first != first.iloc[0]).to_numpy().argmax()], "line"])
        raise IngestError(path, f"line {n}", f"the GPU name in place {place + 1} of its sample time changed, so "
                          f"the row order does not tell the GPUs apart: {_ADVICE}")
    return None


def _label(df: pd.DataFrame, index, numbers, by: str, res: IngestResult) -> None:
    """Write 'n of k (by ...)' into `gpu` and say so in the notes."""
    numbers = np.asarray(numbers)
    k = int(numbers.max()) + 1
    df.loc[index, "gpu"] = [f"{n + 1} of {k} (by {by})" for n in numbers.tolist()]
    how = "row order within each timestamp" if by == "row order" else f"the {by} column"
    res.notes.append(f"{k} GPUs told apart by {how} (the log has no index column)")


class _Header:
    """Which position of a data line feeds which table column."""

    def __init__(self, fields: list[tuple[str, str | None]], path: Path, n: int):
        self.fields = fields
        where = {name: i for i, (name, _) in enumerate(fields)}
        self.width = len(fields)
        self.pos: dict[str, int] = {}
        for col, query in (("gpu_index", "index"), ("name", "name"), ("name", "gpu_name"),
                           ("timestamp", "timestamp"), *(("_id", q) for q in _IDS)):
            if query in where and col not in self.pos:
                self.pos[col] = where[query]
        for col, (names, unit) in _NUMERIC.items():
            for name in names:
                if name in where:
                    got = fields[where[name]][1]
                    if got != unit:
                        want = f"[{unit}]" if unit else "no unit"
                        raise IngestError(path, f"line {n}", f"column {name!r} has unit "
                                          f"[{got}]; expected {want}")
                    self.pos[col] = where[name]
                    break
        if not set(self.pos) - {"_id"}:
            kept = ["index", "name", "timestamp"] + [n for names, _ in _NUMERIC.values() for n in names]
            raise IngestError(path, f"line {n}", "the header has none of the columns this reader "
                              f"keeps; expected some of: {', '.join(kept)}")

    def row(self, line: str, res: IngestResult) -> dict | str:
        """A table row from one data line, or the reason the line is not one."""
        values = [v.strip() for v in line.split(",")]
        if len(values) != self.width:
            n = len(values)
            return f"line has {n} value{'s' if n != 1 else ''}, header has {self.width}"
        row: dict = {}
        for col, i in self.pos.items():
            name, unit = self.fields[i]
            raw = values[i]
            if raw.startswith("[") and raw.endswith("]"):
                if col != "_id":  # (the GPU's id is only compared, not kept)
                    res.reasons[f"unavailable value {raw} in {name} (line kept, value NaN)"] += 1
                row[col] = None if col in ("name", "timestamp") else math.nan
                continue
            if col == "name":
                row[col] = _redact(raw)
            elif col == "_id":  # which GPU (only compared, never kept)
                row[col], row["_id_name"] = raw, name
            elif col == "timestamp":
                row[col] = _time(raw)
                if row[col] is None:
                    return f"{name}: {raw!r} is not a time like 2026/01/05 10:00:00.123"
            elif col == "gpu_index":
                if not raw.isdigit():
                    return f"{name}: {raw!r} is not a GPU index"
                row[col] = int(raw)
            else:
                m = _VALUE.match(raw)
                if not m or (m.group(2) is not None and m.group(2) != unit):
                    want = f"a number in {unit}" if unit else "a number without unit"
                    return f"{name}: {raw!r} is not {want}"
                row[col] = float(m.group(1))
        return row


def _header(line: str) -> list[tuple[str, str | None]] | None:
    """(query name, unit) per column when the line is an nvidia-smi header, else None."""
    text = line.strip().lstrip("\ufeff")
    parts = text.split(", ")
    if any("," in p for p in parts):  # nvidia-smi always separates with ", "
        return None
    fields = []
    for part in parts:
        m = _FIELD.match(part)
        if not m:
            return None
        fields.append((m.group(1), m.group(2)))
    names = [f[0] for f in fields]
    if len(set(names)) != len(names):
        return None
    if not any(n == k or (k.endswith(".") and n.startswith(k)) for n in names for k in _KNOWN):
        return None
    if not any(unit for _, unit in fields) and not {"index", "timestamp"} & set(names):
        return None  # too little to tell it from other CSV
    return fields


def _time(raw: str) -> datetime | None:
    """`YYYY/MM/DD HH:MM:SS.mmm` (local time, as printed) as a naive datetime."""
    if _TIME.match(raw):  # fast path; strptime is slow on long -l logs
        return datetime.fromisoformat(raw.replace("/", "-"))
    for fmt in TIME_FORMATS:
        try:
            return datetime.strptime(raw, fmt)
        except ValueError:
            continue
    return None


@lru_cache(maxsize=64)
def _redact(name: str) -> str:
    return redact(name)  # GPU names repeat on every line


def _no_header(line: str) -> str:
    values = [v.strip() for v in line.split(",")]
    if any(_DATA_HINT.match(v) for v in values):
        return ("no header line: this looks like nvidia-smi output written with "
                "--format=csv,noheader, and the column names are needed to know which value "
                "is which. Re-run with --format=csv (nounits is fine), or add the header of "
                f"your --query-gpu list as the first line, e.g. {EXAMPLE_HEADER!r}")
    return ("expected an nvidia-smi --format=csv header of query names with units, "
            f"e.g. {EXAMPLE_HEADER!r}")

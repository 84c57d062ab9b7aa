"""Reader for power time-series CSVs: the power a benchmark harness logged while a test ran.

A header of column names, then one line per sample: a time column and a power column at least,
often temperature, clocks, utilisation and memory beside them. Harnesses name their columns in
their own way, so columns are found by NAME (case-insensitive, any order, any subset beyond
time + power), never by position; the result's notes say which column was read as what, and
which columns were not read. Recognised (docs/formats.md section 5.1):

- time: elapsed seconds since the series' own start (`elapsed_s`, `elapsed`, `time_s`, `t_s`,
  `elapsed_ms`, ...) -> `elapsed_s`; or a wall time (`timestamp`, `time`, `datetime`, `epoch`,
  `unix_time`, ...) written as ISO 8601 (an offset is dropped: the wall time as written) or
  epoch seconds (UTC) -> `timestamp`. A file may have both.
- power: a name with its unit in watts (`power_w`, `power_W`, `watts`, `power.draw [W]`,
  `gpu_power_w`, `system_power_w`, `package_power_w`, `power_draw_w`, `wall_w`, a `_mw` or
  `_kw` column converted); a name without a unit (`power`, `power.draw`) is not taken for one.
  Limits and caps (`power_limit_w`, `max_power_w`, ...) are not samples and are not read.
- scope, from the power column's name only: `gpu` (a `gpu` word, or nvidia-smi's own
  `power.draw`), `cpu`, `package` (`package`, `pkg`, `soc`), `system` (`system`, `sys`,
  `wall`, `psu`, `pdu`, `outlet`), else `unknown`: `power_w` alone says neither, and the
  reader never assumes.
- beside them: temperature (°C), the SM/graphics clock (MHz), GPU utilisation (%) and memory
  used (MiB); a unit the name does not give, or gives as MB, is said in the notes.

One record is one data line. `read` counts the data lines that reached `power_samples`;
`ignored` counts the others, each with a reason: a value that is not a number (or a time),
a line whose value count does not fit the header, the header repeated mid-file, a cut-off
last line. An empty or `N/A` value beside the power keeps its line (the value NaN; the notes
count them). A file with several power columns gives one row per line per power column,
`power_column` saying which. Times that go backwards are kept in file order and said in
the notes (two series one after another in one file, e.g. a logger restarted).

Not claimed: nvidia-smi's own `--format=csv` output (`ingest/nvidia_smi.py` takes it, so this
sniff refuses whatever that one accepts), files without both a time and a power column
(llama-bench CSV, gauntlet CSV, ...), and files with a device column (`gpu`, `index`, `uuid`,
...): those hold several devices' series interleaved, which one series per power column
cannot tell apart.
"""

from __future__ import annotations

import csv
import math
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd

from . import nvidia_smi
from .errors import IngestError
from .result import IngestResult
from .tables import conform
from .textio import read_text

FORMAT = "power-series-csv"
TABLES = ("power_samples",)

EXAMPLE_HEADER = "elapsed_s,power_w,temp_c,sm_mhz,gpu_util,mem_used_mb"

# unit words as they end a column name (`power_w`, `elapsed_ms`) or stand in brackets (`[W]`)
_UNITS = {
    "w": "W", "watt": "W", "watts": "W", "mw": "mW", "milliwatts": "mW", "kw": "kW",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "ms": "ms", "msec": "ms", "millis": "ms", "milliseconds": "ms",
    "c": "C", "degc": "C", "celsius": "C", "f": "F", "degf": "F", "fahrenheit": "F",
    "mhz": "MHz", "ghz": "GHz", "pct": "%", "percent": "%", "%": "%",
    "mib": "MiB", "mb": "MB", "gib": "GiB", "gb": "GB", "kib": "KiB", "kb": "KB", "bytes": "B", "b": "B",
    "j": "J", "wh": "Wh", "kwh": "kWh",
}
_POWER_SCALE = {"W": 1.0, "mW": 1e-3, "kW": 1e3}

# time columns, by name without the unit
_ELAPSED = {"elapsed", "elapsed_time", "time_elapsed", "runtime", "run_time", "relative_time", "rel_time",
            "time_since_start", "since_start", "t", "time", "offset", "time_offset", "uptime", "seconds",
            "secs", "sec"}
_STAMP = {"timestamp", "time", "datetime", "date_time", "ts", "time_stamp", "wall_time", "wallclock",
          "wall_clock", "clock_time", "sample_time", "local_time", "localtime", "time_utc", "timestamp_utc",
          "utc_time", "datetime_utc", "time_iso", "iso_time", "epoch", "epoch_time", "unix_time",
          "unix_timestamp", "unixtime", "unix", "epoch_timestamp"}
_BARE_SECONDS = {"seconds", "secs", "sec"}  # a name that is its own unit
# names of a column that says which device a row is: several series interleaved
_DEVICE = {"gpu", "gpu_index", "index", "gpu_id", "device", "device_id", "device_index", "uuid", "gpu_uuid",
           "pci_bus_id", "bus_id", "gpu_bus_id", "card", "minor_number", "gpu_num", "gpu_number"}
# words of a power name that make it a setting or a statistic, not a sample
_NOT_A_SAMPLE = {"limit", "cap", "max", "min", "peak", "default", "enforced", "target", "setpoint", "tdp",
                 "budget", "std", "stddev", "energy"}
_SCOPE_WORDS = {
    "gpu": re.compile(r"^gpus?\d*$"),
    "cpu": re.compile(r"^cpus?\d*$"),
    "package": re.compile(r"^(?:package|pkg|soc)\d*$"),
    "system": re.compile(r"^(?:system|sys|wall|psu|pdu|outlet)\d*$"),
}
_SMI_POWER = re.compile(r"^power\.draw(?:\.average|\.instant)?\s*(?:\[w\])?$", re.IGNORECASE)  # its spelling
_UNAVAILABLE = {"", "n/a", "na", "[n/a]", "[not supported]", "nan", "null", "none", "-", "--", "?"}

_BRACKET = re.compile(r"^(.*?)\s*[\[(]\s*([^\])]*?)\s*[\])]\s*$")
_NUMBER = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%°]+)?$")
_ISO = re.compile(r"^\d{4}([-/])\d\d\1\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(Z|[+-]\d\d(?::?\d\d)?)?$",
                  re.IGNORECASE)


def sniff(head: str, path: str | Path | None = None) -> bool:
    """True when the first line that is not blank or a `#` comment is a CSV header with a
    time column and a power column, no device column, and not nvidia-smi's own header."""
    if nvidia_smi.sniff(head, path):
        return False
    for line in head.lstrip("\ufeff").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            if nvidia_smi.sniff(line):  # (after a comment line, which nvidia-smi never writes)
                return False
            cols = _Columns(_split(line))
            return cols.time_ok and bool(cols.power) and not cols.device and not cols.duplicates
    return False


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read one power time-series CSV into the `power_samples` table."""
    path = Path(path)
    text = read_text(path)
    res = IngestResult(path=str(path), format=FORMAT)
    lines = text.split("\n")
    cut = not text.endswith("\n")  # the last line has no newline: the writer was stopped
    cols: _Columns | None = None
    header_line: list[str] = []
    rows: list[dict] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if cols is None:
            if line.lstrip().startswith("#"):
                continue  # a comment before the header
            if nvidia_smi.sniff(line):
                raise IngestError(path, f"line {n}", "this is nvidia-smi's own --format=csv header; read the "
                                  "file as nvidia-smi-csv (detection picks that reader by itself)")
            header_line = _split(line)
            cols = _Columns(header_line)
            cols.check(path, n)
            continue
        if line.lstrip().startswith("#"):
            res.ignore("comment line among the samples")
            continue
        values = _split(line)
        if [v.strip().lower() for v in values] == [h.strip().lower() for h in header_line]:
            res.ignore("header repeated mid-file (a logger restarted, appending to the same file)")
            continue
        row = cols.row(values, n, path)
        if isinstance(row, str):
            res.ignore("partial last line (the writer was stopped mid-line)" if cut and n == len(lines) else row)
            continue
        rows.append(row)
    if cols is None:
        raise IngestError(path, None, f"no header line; expected a CSV header naming a time and a power column, "
                          f"e.g. {EXAMPLE_HEADER!r}")
    res.read = len(rows)
    res.notes += cols.notes()
    res.notes += _unavailable_notes(cols, rows)
    table = _table(cols, rows, path)
    res.notes += _backwards_notes(table)
    res.tables["power_samples"] = table
    return res


# ---------------------------------------------------------------- the header


def _split(line: str) -> list[str]:
    return next(csv.reader([line.strip().lstrip("\ufeff")]), [])


def _name(raw: str) -> tuple[tuple[str, ...], str | None]:
    """A column name as its words and its unit: `power.draw [W]` -> (('power', 'draw'), 'W'),
    `mem_used_mb` -> (('mem', 'used'), 'MB'), `watts` -> ((), 'W')."""
    s = raw.strip().lower().replace("°", "")
    unit = None
    m = _BRACKET.match(s)
    if m and m.group(1):
        s, unit = m.group(1), m.group(2).strip().replace(" ", "")
    words = re.split(r"[^a-z0-9]+", s.replace("%", " pct "))
    words = [w for w in words if w]
    if unit is None and words and words[-1] in _UNITS and (len(words) > 1 or _UNITS[words[-1]] == "W"):
        unit = words.pop()
    return tuple(words), (_UNITS.get(unit, unit) if unit is not None else None)


class _Columns:
    """Which column of a line feeds which table column, found by name."""

    def __init__(self, header: list[str]):
        self.header = [h.strip() for h in header]
        self.width = len(header)
        self.names = [_name(h) for h in self.header]
        lowered = [h.lower() for h in self.header]
        self.duplicates = sorted({h for h in self.header if lowered.count(h.lower()) > 1})
        self.elapsed: tuple[int, float, str] | None = None  # (position, seconds per unit, how)
        self.stamp: tuple[int, str | None] | None = None  # (position, unit when the name gives one)
        self.power: list[tuple[int, float, str, str]] = []  # (position, W per unit, scope, why)
        self.extra: dict[str, tuple[int, float, str]] = {}  # table column -> (position, scale, how)
        self.device = [h for h, (w, u) in zip(self.header, self.names) if u is None and "_".join(w) in _DEVICE]
        self.stamp_kind: str | None = None  # "iso", "epoch" or "epoch-ms", from the first value
        self.offsets: dict[str, int] = {}
        self._find()

    @property
    def time_ok(self) -> bool:
        return self.elapsed is not None or self.stamp is not None

    def _find(self) -> None:
        for i, (words, unit) in enumerate(self.names):
            key = "_".join(words)
            if unit in _POWER_SCALE and not set(words) & _NOT_A_SAMPLE:
                self.power.append((i, _POWER_SCALE[unit], *_scope(self.header[i], words)))
            elif self.elapsed is None and (key in _ELAPSED and unit in ("s", "ms") or key in _BARE_SECONDS
                                           or key in ("elapsed", "elapsed_time", "time_elapsed") and unit is None):
                how = ("ms, divided by 1000" if unit == "ms" else "s" if unit or key in _BARE_SECONDS
                       else "s: the name gives no unit, taken as seconds")
                self.elapsed = (i, 1e-3 if unit == "ms" else 1.0, how)
            elif self.stamp is None and key in _STAMP and unit in (None, "s", "ms"):
                self.stamp = (i, unit)
        taken = {self.elapsed[0] if self.elapsed else -1, self.stamp[0] if self.stamp else -1,
                 *(p[0] for p in self.power)}
        for col, match in _EXTRA.items():
            found = [i for i, (words, unit) in enumerate(self.names) if i not in taken and match(words, unit)]
            if found:
                i = next((i for i in found if "gpu" in self.names[i][0]), found[0])  # a GPU's, if several
                self.extra[col] = (i, *_extra_unit(col, self.names[i][1]))
                taken.add(i)

    def check(self, path: Path, n: int) -> None:
        """An error naming what the header lacks, listing the columns found."""
        found = ", ".join(self.header) or "(none)"
        if self.duplicates:
            raise IngestError(path, f"line {n}", f"column(s) {', '.join(self.duplicates)} appear twice in the "
                              "header; expected each column once")
        if not self.power:
            unitless = [h for h, (w, u) in zip(self.header, self.names) if "power" in w or "watts" in w]
            hint = (f" ({', '.join(unitless)} names no unit, and the reader does not guess one)"
                    if unitless else "")
            raise IngestError(path, f"line {n}", f"no power column{hint}; expected one named with its unit in "
                              f"watts, e.g. power_w, gpu_power_w, system_power_w, watts, power.draw [W]; "
                              f"the header has: {found}")
        if not self.time_ok:
            raise IngestError(path, f"line {n}", "no time column; expected elapsed seconds (elapsed_s, time_s, "
                              f"elapsed_ms) or a wall time (timestamp, time, epoch); the header has: {found}")
        if self.device:
            raise IngestError(path, f"line {n}", f"column {self.device[0]!r} says which device a row is: the file "
                              "holds several devices' series interleaved, which power_samples (one series per "
                              "power column) cannot tell apart; give one file per device")

    def row(self, values: list[str], n: int, path: Path) -> dict | str:
        """The values of one data line, or the reason the line is not one."""
        if len(values) != self.width:
            k = len(values)
            return f"line has {k} value{'s' if k != 1 else ''}, header has {self.width}"
        row: dict = {"line": n}
        if self.elapsed is not None:
            i, scale, _ = self.elapsed
            v = _number(values[i], self.names[i][1])
            if not isinstance(v, float):
                return f"{self.header[i]}: {values[i].strip()!r} is not a number of seconds"
            row["elapsed_s"] = v * scale
            if v * scale >= 1e8:  # over three years since the start: a wall time
                raise IngestError(path, f"line {n}", f"{self.header[i]} is {values[i].strip()!r}: over three "
                                  "years of elapsed seconds, so epoch seconds; name the column timestamp or "
                                  "epoch, or give elapsed seconds since the series' start")
        if self.stamp is not None:
            i = self.stamp[0]
            t = self._time(values[i].strip(), n, path)
            if t is None:
                return f"{self.header[i]}: {values[i].strip()!r} is not {_STAMP_WANT[self.stamp_kind]}"
            row["timestamp"] = t
        power = []
        for i, scale, _, _ in self.power:
            v = _number(values[i], self.names[i][1])
            if not isinstance(v, float):
                raw = values[i].strip()
                return (f"no power value in {self.header[i]} ({raw!r})" if v == "unavailable"
                        else f"{self.header[i]}: {raw!r} is not a number in {self.names[i][1]}")
            power.append(v * scale)
        row["_power"] = power
        for col, (i, scale, _) in self.extra.items():
            v = _number(values[i], self.names[i][1])
            if v == "unavailable":
                row[col] = math.nan
            elif not isinstance(v, float):
                return f"{self.header[i]}: {values[i].strip()!r} is not a number"
            else:
                row[col] = v * scale
        return row

    def _time(self, raw: str, n: int, path: Path):
        """A wall time from the time column: a naive datetime (ISO) or nanoseconds since 1970 (epoch)."""
        if self.stamp_kind is None:  # the first value says how the column writes times
            self.stamp_kind = self._stamp_kind(raw, n, path)
        if self.stamp_kind == "iso":
            m = _ISO.match(raw)
            if not m:
                return None
            off = (m.group(2) or "").upper()
            core = raw[:m.start(2)].rstrip() if off else raw
            try:
                t = datetime.fromisoformat(core.replace("/", "-").replace(",", ".") + off)
            except ValueError:
                return None
            if t.tzinfo is not None:
                self.offsets[off] = self.offsets.get(off, 0) + 1
                t = t.replace(tzinfo=None)  # the wall time as written
            return t
        if not isinstance(_number(raw, None), float):
            return None
        ns = Decimal(raw.strip()) * (10**6 if self.stamp_kind == "epoch-ms" else 10**9)
        return int(ns.to_integral_value())  # nanoseconds since 1970, exactly as written

    def _stamp_kind(self, raw: str, n: int, path: Path) -> str | None:
        i, unit = self.stamp
        if unit == "ms":
            return "epoch-ms"
        v = _number(raw, None)
        if not isinstance(v, float):
            return "iso"  # (a value that is not one either is ignored with the reason)
        if v >= 1e11 and unit is None:
            return "epoch-ms"  # 1e11 s is the year 5138: milliseconds (the notes say so)
        if v >= 1e8:
            return "epoch"
        raise IngestError(path, f"line {n}", f"{self.header[i]} is {raw!r}: not epoch seconds (1973 or later) "
                          "nor an ISO 8601 time like 2026-01-05T10:00:00; if it counts seconds from the start "
                          "of the series, name the column elapsed_s")

    def notes(self) -> list[str]:
        """Which columns were read as what, and which were not read."""
        read = []
        if self.elapsed is not None:
            i, _, how = self.elapsed
            read.append(f"{self.header[i]} as elapsed_s ({how})")
        if self.stamp is not None:
            i = self.stamp[0]
            how = {"iso": "ISO 8601", "epoch": "epoch seconds, as UTC", None: "no value",
                   "epoch-ms": "epoch milliseconds, as UTC" + ("" if self.stamp[1] == "ms" else
                                                                 ": values above 1e11 s are the year 5138")}
            kind = how[self.stamp_kind]
            if self.offsets:
                kind += (f", UTC offset {', '.join(self.offsets)} dropped: the wall time as written"
                         + (" (offsets differ within the file)" if len(self.offsets) > 1 else ""))
            read.append(f"{self.header[i]} as timestamp ({kind})")
        for i, scale, _, _ in self.power:
            read.append(f"{self.header[i]} as power_w ({self.names[i][1]}{', converted to W' if scale != 1 else ''})")
        for col, (i, _, how) in self.extra.items():
            read.append(f"{self.header[i]} as {col} ({how})")
        used = {self.elapsed[0] if self.elapsed else -1, self.stamp[0] if self.stamp else -1,
                *(p[0] for p in self.power), *(e[0] for e in self.extra.values())}
        unread = [h or f"(unnamed column {i + 1})" for i, h in enumerate(self.header) if i not in used]
        out = ["columns read: " + "; ".join(read),
               "columns not read: " + ", ".join(unread) if unread else "every column read"]
        out += [f"{self.header[i]}: scope {scope} ({why}{'' if scope != 'unknown' else '; not assumed'})"
                for i, _, scope, why in self.power]
        if self.stamp is None:
            out.append("no wall-clock time in the file: elapsed_s counts from the series' own start")
        if len(self.power) > 1:
            out.append(f"{len(self.power)} power columns: one row per line per column (power_column says which)")
        return out


_STAMP_WANT = {"iso": "an ISO 8601 time like 2026-01-05T10:00:00", "epoch": "epoch seconds",
               "epoch-ms": "epoch milliseconds", None: "a time"}


def _scope(name: str, words: tuple[str, ...]) -> tuple[str, str]:
    """What a power column measures, by its name only, and why."""
    if _SMI_POWER.match(name):
        return "gpu", "nvidia-smi's query name, the GPU's own draw"
    found = {scope for w in words for scope, pat in _SCOPE_WORDS.items() if pat.match(w)}
    if found == {"cpu", "package"}:
        found = {"package"}  # cpu_package_power_w: the processor package
    if len(found) == 1:
        (scope,) = found
        what = {"gpu": "GPU", "cpu": "CPU", "package": "processor package", "system": "whole system"}[scope]
        return scope, f"the name says {what}"
    if found:
        return "unknown", f"the name says several ({', '.join(sorted(found))})"
    return "unknown", "the name says neither GPU nor system"


def _temperature(words, unit) -> bool:
    return bool({"temp", "temperature"} & set(words)) and unit in (None, "C") and not set(words) & {
        "cpu", "mem", "memory", "hbm", "hotspot", "junction", "ambient", "inlet", "nvme", "ssd", "disk", "max",
        "min", "limit", "slowdown", "shutdown", "target"}


def _clock(words, unit) -> bool:
    return unit in ("MHz", "GHz") and bool({"sm", "graphics", "gpu", "core", "clock", "clk", "clocks", "freq"}
                                             & set(words)) \
        and not set(words) & {"mem", "memory", "video", "max", "min", "limit", "target", "app", "applications",
                              "default", "cpu"}


def _utilization(words, unit) -> bool:
    return unit in (None, "%") and bool({"util", "utilization", "utilisation", "usage"} & set(words)) \
        and not set(words) & {"mem", "memory", "cpu", "enc", "encoder", "dec", "decoder", "jpg", "ofa",
                              "bandwidth", "pcie", "fan"}


def _memory(words, unit) -> bool:
    return unit in ("MiB", "MB", "GiB", "GB") and bool({"mem", "memory", "vram", "fb"} & set(words)) \
        and "used" in words and "cpu" not in words


_EXTRA = {"temperature_c": _temperature, "sm_clock_mhz": _clock, "utilization_pct": _utilization,
          "memory_used_mib": _memory}


def _extra_unit(col: str, unit: str | None) -> tuple[float, str]:
    """(scale to the table's unit, how the notes say it) for a column beside the power."""
    if col == "temperature_c":
        return 1.0, "°C" if unit else "°C: the name gives no unit, taken as °C"
    if col == "sm_clock_mhz":
        return (1e3, "GHz, converted to MHz") if unit == "GHz" else (1.0, "MHz")
    if col == "utilization_pct":
        return 1.0, "%" if unit else "%: the name gives no unit, taken as percent"
    return {"MiB": (1.0, "MiB"), "GiB": (1024.0, "GiB, converted to MiB"),
            "MB": (1.0, "the name says MB: taken as MiB, not converted"),
            "GB": (1024.0, "the name says GB: taken as GiB, converted to MiB")}[unit]


# ---------------------------------------------------------------- values


def _number(raw: str, unit: str | None) -> float | str:
    """A finite number (a trailing unit equal to the column's is allowed: `22.89 W`), or
    "unavailable" (empty, N/A, NaN), or "bad"."""
    s = raw.strip()
    if s.lower() in _UNAVAILABLE:
        return "unavailable"
    m = _NUMBER.match(s)
    if not m:
        return "bad"
    if m.group(2) is not None and _UNITS.get(m.group(2).lower().replace("°", ""), m.group(2)) != unit:
        return "bad"
    v = float(m.group(1))
    return v if math.isfinite(v) else "bad"


def _unavailable_notes(cols: _Columns, rows: list[dict]) -> list[str]:
    out = []
    for col, (i, _, _) in cols.extra.items():
        empty = [r["line"] for r in rows if math.isnan(r[col])]
        if empty:
            out.append(f"{cols.header[i]} empty or unavailable on {len(empty)} line(s), first line {empty[0]} "
                       "(lines kept, value NaN)")
    return out


def _backwards_notes(df: pd.DataFrame) -> list[str]:
    """Say where the times go backwards (rows are kept in file order)."""
    out = []
    lines = df.drop_duplicates("line")
    for col in ("elapsed_s", "timestamp"):
        t = lines[col]
        if t.isna().all():
            continue
        back = (t < t.shift()).to_numpy()
        if back.any():
            k = int(back.argmax())
            out.append(f"{col} goes backwards on {int(back.sum())} line(s), first line {int(lines['line'].iloc[k])} "
                       f"({_show(t.iloc[k])} after {_show(t.iloc[k - 1])}): the file may hold several series one "
                       "after another (e.g. a logger restarted); rows kept in file order")
    return out


def _show(v) -> str:
    return str(v) if isinstance(v, pd.Timestamp) else f"{v:g}"


def _table(cols: _Columns, rows: list[dict], path: Path) -> pd.DataFrame:
    """One row per data line per power column."""
    out: dict[str, list] = {"source_file": [], "line": [], "elapsed_s": [], "timestamp": [], "power_w": [],
                            "scope": [], "power_column": [], **{c: [] for c in cols.extra}}
    for r in rows:
        for j, (i, _, scope, _) in enumerate(cols.power):
            out["source_file"].append(str(path))
            out["line"].append(r["line"])
            out["elapsed_s"].append(r.get("elapsed_s", math.nan))
            out["timestamp"].append(r.get("timestamp"))
            out["power_w"].append(r["_power"][j])
            out["scope"].append(scope)
            out["power_column"].append(cols.header[i])
            for c in cols.extra:
                out[c].append(r[c])
    df = pd.DataFrame(out)
    if cols.stamp_kind in ("epoch", "epoch-ms"):
        df["timestamp"] = pd.to_datetime(df["timestamp"].astype("Int64"), unit="ns")
    else:
        df["timestamp"] = pd.to_datetime(df["timestamp"])
    return conform(df, "power_samples")

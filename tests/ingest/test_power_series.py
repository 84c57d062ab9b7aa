"""Power time-series CSV reader: the power a harness logged while a test ran, columns found by name.

Expected values are read from the raw files in the tests (the csv module, regexes on the runner
log), never from the reader's output. Templates from docs/formats.md section 5.1: a header of
names (`elapsed_s,power_w,temp_c,...` or `timestamp,gpu_power_w,...`), one sample per line.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

import bad_corpus as corpus  # noqa: E402  (tests/ is on sys.path)
from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import nvidia_smi as smi
from benchbook.ingest import power_series as ps
from benchbook.ingest.textio import read_head
from files import (  # noqa: E402
    REPO_DATA,
    assert_detect_picks_it_for_no_other_format,
    assert_sniffs_no_other_format,
    write,
)
from realdata import DGX, REAL, SHARED, needs_shared  # noqa: E402

TELEMETRY = sorted(DGX.glob("*/*/*-telemetry.csv")) if DGX.is_dir() else []
FOLDERS = sorted({p.parent for p in TELEMETRY})
# the real header's columns -> the table's (what the harness's names say)
DGX_COLUMNS = {"elapsed_s": "elapsed_s", "power_w": "power_w", "temp_c": "temperature_c",
               "sm_mhz": "sm_clock_mhz", "gpu_util": "utilization_pct", "mem_used_mb": "memory_used_mib"}


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}/{path.name}"


def raw_rows(path: Path) -> list[tuple[int, dict]]:
    """(line number, row) of every data line, by the csv module."""
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    reader = csv.DictReader(io.StringIO(text))
    return [(reader.line_num, row) for row in reader]


def table(path: Path, **kw) -> pd.DataFrame:
    return ingest.read(path, **kw).tables["power_samples"]


# ---------------------------------------------------------------- the real harness files


@needs_shared
def test_the_five_harness_folders_each_log_eleven_tests():
    assert len(FOLDERS) == 5 and len(TELEMETRY) == 55
    assert all(len(list(f.glob("*-telemetry.csv"))) == 11 for f in FOLDERS)


@needs_shared
@pytest.mark.parametrize("path", TELEMETRY, ids=_id)
def test_every_real_telemetry_file(path):
    rows = raw_rows(path)
    res = ingest.read(path)  # detected, through the one way in
    df = res.tables["power_samples"]
    assert res.format == "power-series-csv"
    assert res.read == len(df) == len(rows) > 0 and res.ignored == 0 and not res.reasons
    assert df["line"].tolist() == [n for n, _ in rows]
    for raw_col, col in DGX_COLUMNS.items():
        assert df[col].tolist() == [float(r[raw_col]) for _, r in rows], col
    assert set(df["scope"]) == {"unknown"} and set(df["power_column"]) == {"power_w"}  # power_w says neither
    assert df["timestamp"].isna().all()  # elapsed seconds only: no wall time in the file
    assert "power_w: scope unknown (the name says neither GPU nor system; not assumed)" in res.notes
    assert "every column read" in res.notes
    assert any("mem_used_mb as memory_used_mib (the name says MB: taken as MiB, not converted)" in n
               for n in res.notes)
    assert any(n.startswith("no wall-clock time in the file") for n in res.notes)
    assert not any("backwards" in n for n in res.notes)  # every file counts up
    assert str(df["timestamp"].dtype) == "datetime64[ns]"


_STATUS = re.compile(r"\.\.\. (\d\d) running: (\d+)s, GPU (\d+)%, ([\d.]+)W, (\d+)C, (\d+)MHz")
_END = re.compile(r"── END (\d\d) \((\d+)s\) ──")


@needs_shared
@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_elapsed_s_counts_from_the_start_the_runner_log_prints(folder):
    """The folder's _runner.log prints `── START NN ──`, then every minute `... NN running: 60s,
    GPU 96%, 50.83W, 70C, 2496MHz`, then `── END NN (2946s) ──`: its seconds are elapsed_s and its
    values are the telemetry row at that second; no sample lies after the test's end."""
    log = (folder / "_runner.log").read_text(encoding="utf-8")
    tables = {p.name[:2]: table(p).set_index("elapsed_s") for p in folder.glob("*-telemetry.csv")}
    status = _STATUS.findall(log)
    assert len(status) > 100
    for nn, s, util, watts, temp, mhz in status:
        row = tables[nn].loc[float(s)]
        assert (row["power_w"], row["utilization_pct"], row["temperature_c"], row["sm_clock_mhz"]) == \
            (float(watts), float(util), float(temp), float(mhz)), (nn, s)
    ends = dict(_END.findall(log))
    assert set(ends) == set(tables)
    for nn, df in tables.items():
        assert 0 < df.index.min() and df.index.max() <= int(ends[nn]), nn


# ---------------------------------------------------------------- time columns


def test_iso_timestamps_are_kept_as_the_wall_time_written(tmp_path):
    text = ("timestamp,gpu_power_w,temp_c\n"
            "2026-01-05T10:00:00+02:00,201.5,60\n"
            "2026-01-05T10:00:01.250+02:00,202.5,61\n"
            "2026-01-05 10:00:02.5+02:00,203.5,61\n")
    path = write(tmp_path, "iso.csv", text)
    res = ingest.read(path)
    df = res.tables["power_samples"]
    want = [datetime.fromisoformat(r["timestamp"]).replace(tzinfo=None) for _, r in raw_rows(path)]
    assert df["timestamp"].tolist() == [pd.Timestamp(t) for t in want]
    assert df["timestamp"].iloc[0] == pd.Timestamp("2026-01-05 10:00:00")  # not moved to UTC
    assert df["elapsed_s"].isna().all() and df["power_w"].tolist() == [201.5, 202.5, 203.5]
    assert set(df["scope"]) == {"gpu"}
    assert any("timestamp as timestamp (ISO 8601, UTC offset +02:00 dropped: the wall time as written)" in n
               for n in res.notes)
    assert not any(n.startswith("no wall-clock") for n in res.notes)


@pytest.mark.parametrize("stamp", ["2026-01-05T08:00:00Z", "2026-01-05 08:00:00", "2026/01/05 08:00:00.000",
                                   "2026-01-05T08:00:00.123456"])
def test_iso_variants(tmp_path, stamp):
    path = write(tmp_path, "v.csv", f"datetime,watts\n{stamp},99.5\n")
    df = table(path)
    want = datetime.fromisoformat(stamp.replace("/", "-").replace("Z", "+00:00")).replace(tzinfo=None)
    assert df["timestamp"].iloc[0] == pd.Timestamp(want) and df["power_w"].iloc[0] == 99.5


def test_epoch_seconds_are_utc_to_the_digit(tmp_path):
    path = write(tmp_path, "epoch.csv", "epoch,system_power_w\n1767607200.123,310.0\n1767607201,311\n")
    res = ingest.read(path)
    df = res.tables["power_samples"]
    ns = [int(Decimal(r["epoch"]) * 10**9) for _, r in raw_rows(path)]
    assert df["timestamp"].tolist() == [pd.Timestamp(n, unit="ns") for n in ns]
    assert df["timestamp"].iloc[0] == pd.Timestamp("2026-01-05 10:00:00.123")  # 1767607200 is 10:00 UTC
    assert set(df["scope"]) == {"system"} and df["elapsed_s"].isna().all()
    assert any("epoch as timestamp (epoch seconds, as UTC)" in n for n in res.notes)


@pytest.mark.parametrize("header", ["timestamp_ms", "timestamp"])
def test_epoch_milliseconds(tmp_path, header):
    res = ingest.read(write(tmp_path, "ms.csv", f"{header},power_w\n1767607200123,50\n1767607210123,51\n"))
    df = res.tables["power_samples"]
    assert df["timestamp"].tolist() == [pd.Timestamp("2026-01-05 10:00:00.123"),
                                        pd.Timestamp("2026-01-05 10:00:10.123")]
    assert any("epoch milliseconds" in n for n in res.notes)


def test_elapsed_in_milliseconds_and_both_time_columns(tmp_path):
    text = "elapsed_ms,timestamp,power_w\n0,2026-01-05T10:00:00,40\n1500,2026-01-05T10:00:01.5,41\n"
    df = table(write(tmp_path, "both.csv", text))
    assert df["elapsed_s"].tolist() == [0.0, 1.5]
    assert df["timestamp"].tolist() == [pd.Timestamp("2026-01-05 10:00:00"), pd.Timestamp("2026-01-05 10:00:01.5")]


def test_a_time_column_that_is_neither_epoch_nor_iso_is_an_error(tmp_path):
    path = write(tmp_path, "t.csv", "time,power_w\n0.5,40\n1.5,41\n")
    with pytest.raises(IngestError) as err:
        ingest.read(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:line 2:") and "not epoch seconds" in msg and "elapsed_s" in msg


def test_epoch_values_under_an_elapsed_name_are_an_error(tmp_path):
    path = write(tmp_path, "t.csv", "time_s,power_w\n1767607200,40\n")
    with pytest.raises(IngestError, match="line 2.*epoch seconds"):
        ingest.read(path)


def test_times_that_go_backwards_are_kept_and_said(tmp_path):
    text = "elapsed_s,power_w\n10,50\n20,51\n10,52\n20,53\n"  # a logger restarted into the same file
    res = ingest.read(write(tmp_path, "back.csv", text))
    assert res.read == 4 and res.tables["power_samples"]["elapsed_s"].tolist() == [10.0, 20.0, 10.0, 20.0]
    (note,) = [n for n in res.notes if "backwards" in n]
    assert note.startswith("elapsed_s goes backwards on 1 line(s), first line 4 (10 after 20)")


# ---------------------------------------------------------------- power columns and their scope


@pytest.mark.parametrize("name, scope, unit_watts", [
    ("power_w", "unknown", 1), ("power_W", "unknown", 1), ("watts", "unknown", 1),
    ("power_draw_w", "unknown", 1), ("Power (W)", "unknown", 1),
    ("power.draw [W]", "gpu", 1),  # nvidia-smi's query name, in a file that is not its own CSV
    ("gpu_power_w", "gpu", 1), ("GPU Power [W]", "gpu", 1), ("gpu0_watts", "gpu", 1),
    ("system_power_w", "system", 1), ("wall_w", "system", 1), ("psu_power_w", "system", 1),
    ("sys_power_mw", "system", 1e-3),
    ("package_power_w", "package", 1), ("cpu_package_power_w", "package", 1), ("soc_power_w", "package", 1),
    ("cpu_power_w", "cpu", 1), ("gpu_system_power_w", "unknown", 1), ("rack_power_kw", "unknown", 1e3),
])
def test_scope_comes_from_the_power_columns_name_only(tmp_path, name, scope, unit_watts):
    res = ingest.read(write(tmp_path, "p.csv", f'elapsed_s,"{name}"\n10,250\n'))
    df = res.tables["power_samples"]
    assert (df["scope"].iloc[0], df["power_column"].iloc[0]) == (scope, name)
    assert df["power_w"].iloc[0] == 250 * unit_watts
    assert any(n.startswith(f"{name}: scope {scope} (") for n in res.notes)


def test_several_power_columns_give_a_row_each(tmp_path):
    text = "timestamp,gpu_power_w,cpu_power_w,wall_w,power_limit_w,temp_c\n2026-01-05T10:00:00,200,40,300,250,60\n"
    res = ingest.read(write(tmp_path, "multi.csv", text))
    df = res.tables["power_samples"]
    assert res.read == 1 and len(df) == 3 and df["line"].tolist() == [2, 2, 2]
    assert df[["power_column", "scope", "power_w"]].values.tolist() == [
        ["gpu_power_w", "gpu", 200.0], ["cpu_power_w", "cpu", 40.0], ["wall_w", "system", 300.0]]
    assert df["temperature_c"].tolist() == [60.0] * 3
    assert "columns not read: power_limit_w" in res.notes  # a limit is not a sample


def test_columns_are_found_by_name_in_any_order(tmp_path):
    a = table(write(tmp_path, "a.csv", "elapsed_s,power_w,temp_c,sm_mhz\n10,50.5,60,2400\n20,51,61,2401\n"))
    b = table(write(tmp_path, "b.csv", "SM_MHZ,Temp_C,Power_W,Elapsed_S,fan_pct\n2400,60,50.5,10,30\n"
                                       "2401,61,51,20,31\n"))
    cols = ["line", "elapsed_s", "power_w", "temperature_c", "sm_clock_mhz"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert b["power_column"].iloc[0] == "Power_W"


def test_notes_say_what_was_read_as_what_and_what_was_not(tmp_path):
    text = "elapsed_s,power_w,gpu_util,mem_clock_mhz,fan_pct,note\n10,50,96,9000,30,ok\n"
    res = ingest.read(write(tmp_path, "n.csv", text))
    assert res.notes[0] == ("columns read: elapsed_s as elapsed_s (s); power_w as power_w (W); gpu_util as "
                            "utilization_pct (%: the name gives no unit, taken as percent)")
    assert res.notes[1] == "columns not read: mem_clock_mhz, fan_pct, note"


# ---------------------------------------------------------------- bad input


def test_bad_lines_are_ignored_with_their_reason(tmp_path):
    text = ("elapsed_s,power_w,temp_c\n"
            "10,50.1,60\n"
            "20,fifty,60\n"  # not a number
            "30,,60\n"  # no power
            "40,52.0,hot\n"  # not a number beside the power
            "50,53.0,N/A\n"  # unavailable beside the power: kept
            "60,54.0\n"  # too few values
            "elapsed_s,power_w,temp_c\n"  # a restarted logger's header
            "# paused\n"
            "70,55.0,61\n"
            "80,5")  # cut off
    path = write(tmp_path, "bad.csv", text)
    res = ingest.read(path)
    df = res.tables["power_samples"]
    assert df["line"].tolist() == [2, 6, 10] and res.read == 3
    assert math.isnan(df["temperature_c"].iloc[1])
    assert res.ignored == 7 == sum(res.reasons.values())
    assert res.reasons == {
        "power_w: 'fifty' is not a number in W": 1, "no power value in power_w ('')": 1,
        "temp_c: 'hot' is not a number": 1, "line has 2 values, header has 3": 1,
        "header repeated mid-file (a logger restarted, appending to the same file)": 1,
        "comment line among the samples": 1, "partial last line (the writer was stopped mid-line)": 1}
    assert "temp_c empty or unavailable on 1 line(s), first line 6 (lines kept, value NaN)" in res.notes


def test_a_value_with_its_unit_is_a_number(tmp_path):
    df = table(write(tmp_path, "u.csv", "elapsed_s,power.draw [W]\n1,22.89 W\n2,23 W\n"))
    assert df["power_w"].tolist() == [22.89, 23.0]


def test_a_missing_power_column_is_an_error_listing_the_columns(tmp_path):
    path = write(tmp_path, "nopower.csv", "elapsed_s,power,temp_c\n10,50,60\n")
    with pytest.raises(IngestError) as err:
        ingest.read(path, fmt="power-series-csv")
    msg = str(err.value)
    assert msg.startswith(f"{path}:line 1: no power column")
    assert "(power names no unit, and the reader does not guess one)" in msg
    assert "power_w, gpu_power_w" in msg and "the header has: elapsed_s, power, temp_c" in msg
    assert not ps.sniff(path.read_text())  # and detection never hands it to this reader


def test_a_missing_time_column_is_an_error(tmp_path):
    path = write(tmp_path, "notime.csv", "sample,power_w\n1,50\n")
    with pytest.raises(IngestError, match=r"line 1: no time column.*the header has: sample, power_w"):
        ingest.read(path, fmt="power-series-csv")


def test_a_device_column_is_refused(tmp_path):
    text = "timestamp,gpu,gpu_power_w\n2026-01-05T10:00:00,0,200\n2026-01-05T10:00:00,1,201\n"
    path = write(tmp_path, "devices.csv", text)
    assert not ps.sniff(text)
    with pytest.raises(IngestError, match="line 1: column 'gpu' says which device"):
        ingest.read(path, fmt="power-series-csv")


def test_gzip_reads_like_the_plain_file(tmp_path):
    text = "elapsed_s,gpu_power_w,temp_c\n10,50.5,60\n20,51.5,61\n"
    plain = ingest.read(write(tmp_path, "p.csv", text))
    packed = ingest.read(write(tmp_path, "p.csv.gz", text, gz=True))
    assert packed.format == "power-series-csv" and (packed.read, packed.ignored) == (2, 0)
    cols = [c for c in plain.tables["power_samples"].columns if c != "source_file"]
    pd.testing.assert_frame_equal(packed.tables["power_samples"][cols], plain.tables["power_samples"][cols])


@needs_shared
def test_a_gzipped_real_file(tmp_path):
    src = TELEMETRY[0]
    path = tmp_path / "01-telemetry.csv.gz"
    path.write_bytes(gzip.compress(src.read_bytes()))
    df = table(path)
    assert df["power_w"].tolist() == [float(r["power_w"]) for _, r in raw_rows(src)]


# the bad-input corpus every reader meets (tests/ingest/test_bad_inputs.py samples readers
# from bad_corpus.SAMPLES or committed data, neither of which has a power series yet)
SAMPLE = (b"elapsed_s,power_w,temp_c,sm_mhz,gpu_util,mem_used_mb\n"
          b"10,50.16,68,2496,96,118981\n20,50.48,69,2496,96,118937\n")


@pytest.mark.parametrize("case", sorted(corpus.GENERIC))
def test_the_generic_bad_inputs(tmp_path, case):
    make, expect = corpus.GENERIC[case]
    path = tmp_path / f"{case}.{'gz' if 'gzip' in case else 'txt'}"
    path.write_bytes(make(SAMPLE))
    try:
        res = ingest.read(path, fmt="power-series-csv")
    except IngestError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)) and "\n" not in msg and "failed unexpectedly" not in msg, msg
        for part in expect.parts if expect else ():
            assert part in msg, (part, msg)
        return
    assert expect is None, res.summary()
    assert res.ignored >= 1 and res.ignored == sum(res.reasons.values()), res.summary()


@pytest.mark.parametrize("variant", ["utf16-bom", "utf8-bom", "crlf", "gzip"])
def test_encodings_read_like_the_clean_file(tmp_path, variant):
    clean = ingest.read(write(tmp_path, "clean.csv", SAMPLE.decode()))
    data = {"utf16-bom": SAMPLE.decode().encode("utf-16"), "utf8-bom": b"\xef\xbb\xbf" + SAMPLE,
            "crlf": SAMPLE.replace(b"\n", b"\r\n"), "gzip": gzip.compress(SAMPLE)}[variant]
    path = tmp_path / f"variant.{'gz' if variant == 'gzip' else 'txt'}"
    path.write_bytes(data)
    got = ingest.read(path)
    assert got.format == "power-series-csv" and (got.read, got.ignored) == (clean.read, clean.ignored) == (2, 0)
    cols = [c for c in clean.tables["power_samples"].columns if c != "source_file"]
    pd.testing.assert_frame_equal(got.tables["power_samples"][cols], clean.tables["power_samples"][cols])


# ---------------------------------------------------------------- what this reader does not claim


def test_sniff_takes_only_power_series():
    assert ps.sniff(SAMPLE.decode())
    assert ps.sniff("# logged by my harness\ntimestamp,package_power_w\n")
    assert not ps.sniff("elapsed_s,temp_c\n10,60\n")  # no power
    assert not ps.sniff("power_w,temp_c\n50,60\n")  # no time
    assert not ps.sniff("time, power, memory\n10:00, 200, 1000\n")  # no unit: no power column
    assert not ps.sniff("timestamp, power.draw [W]\n2024/10/30 18:42:33.189, 22.89 W\n")  # nvidia-smi's own
    assert not ps.sniff("index, timestamp, power.draw [W], power.limit [W]\n")
    assert not ps.sniff("# a comment nvidia-smi never writes\ntimestamp, power.draw [W]\n")
    assert not ps.sniff('{"elapsed_s": 1, "power_w": 2}\n')


def test_no_other_format_is_claimed(tmp_path):
    assert_sniffs_no_other_format(ps, "power-series-csv")
    assert_detect_picks_it_for_no_other_format(ps, "power-series-csv", tmp_path)


@pytest.mark.parametrize("header", [
    SAMPLE.decode(), "timestamp,gpu_power_w,temp_c", "timestamp,power.draw [W]", "elapsed_s,power.draw [W]",
    "timestamp, power.draw [W]", "index, timestamp, power.draw [W], power.limit [W]",
    "timestamp, power_w",  # ", "-joined with a timestamp: nvidia-smi's reader takes it (docs/formats.md 5.1)
    "elapsed_s, power_w", "timestamp,gpu,index,memory.used,memory.total,power.draw,temperature.gpu",
])
def test_the_nvidia_smi_reader_and_this_one_never_both_claim_a_header(header):
    assert not (smi.sniff(header) and ps.sniff(header)), header


def test_the_nvidia_smi_reader_does_not_claim_a_power_series():
    assert not smi.sniff(SAMPLE.decode())
    assert not smi.sniff("timestamp,gpu_power_w,temp_c\n2026-01-05T10:00:00,200,60\n")


def test_the_committed_raw_files_stay_with_their_readers():
    """Every raw file of the book's data folders (nvidia-smi logs, gauntlet CSV, bench JSON, ...)
    but a harness's power log, should one be added."""
    paths = sorted(p for p in REPO_DATA.glob("*/raw/**/*") if p.is_file() and "telemetry" not in p.name)
    assert any(p.name.startswith("nvidia-smi.csv") for p in paths) and any(p.suffix == ".csv" for p in paths)
    for path in paths:
        head = read_head(path, 8192).decode("utf-8", errors="replace")
        assert not ps.sniff(head), path


@needs_shared
def test_the_shared_samples_other_than_telemetry_are_not_claimed():
    """The real nvidia-smi logs (also the one whose made-up header both readers refuse), llama-bench
    output, vLLM logs and bench JSON, and the harness's other files."""
    paths = sorted(p for p in SHARED.rglob("*") if p.is_file() and not p.name.endswith("-telemetry.csv"))
    smi_logs = [p for p in paths if "power.draw" in p.read_text(encoding="utf-8", errors="replace")
                and p.suffix == ".csv"]
    assert len(smi_logs) == 3
    for path in paths:
        head = read_head(path, 8192).decode("utf-8", errors="replace")
        assert not ps.sniff(head), path
    for path in smi_logs:
        try:
            assert ingest.detect(path) is smi, path
        except IngestError:  # xypp3's made-up header: refused by both, as before
            assert path.name == "xypp3_nvidia_smi.csv"


@needs_shared
def test_an_nvidia_smi_log_given_as_a_power_series_is_sent_to_its_reader():
    path = REAL / "nvidia-smi" / "PranavDani_nvidia-smi.csv"
    with pytest.raises(IngestError, match="line 1: this is nvidia-smi's own --format=csv header"):
        ingest.read(path, fmt="power-series-csv")

"""nvidia-smi CSV reader: logs written the way `nvidia-smi --query-gpu=... --format=csv -l N` prints.

Templates from docs/formats.md section 5: a `", "`-joined header of canonical names with ` [unit]`,
values after `", "` with units (or without, for `nounits`), `[N/A]` for unavailable values.
"""

from __future__ import annotations

import gzip
import math
from datetime import datetime, timedelta

import pandas as pd
import pytest

from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import nvidia_smi as smi
from files import (  # noqa: E402  (tests/ is on sys.path)
    assert_detect_picks_it_for_no_other_format,
    assert_sniffs_no_other_format,
    more_draw,
    two_gpu_log,
    write,
)
from realdata import REAL, needs_shared  # noqa: E402

QUERY = ["index", "timestamp", "name", "power.draw [W]", "power.limit [W]", "memory.used [MiB]",
         "memory.total [MiB]", "utilization.gpu [%]", "temperature.gpu", "clocks.current.sm [MHz]",
         "pstate"]
HEADER = ", ".join(QUERY)
T0 = datetime(2026, 3, 14, 9, 30, 0, 250000)


def sample(i, t, *, draw, limit=250.0, used=21003, util=97, temp=64, sm=1695, units=True):
    """One data line as nvidia-smi prints it (units, or bare numbers with nounits)."""
    u = (lambda v, unit: f"{v} {unit}") if units else (lambda v, unit: f"{v}")
    return ", ".join([str(i), t.strftime("%Y/%m/%d %H:%M:%S.%f")[:-3], "NVIDIA GeForce RTX 3090",
                      u(f"{draw:.2f}", "W"), u(f"{limit:.2f}", "W"), u(used, "MiB"), u(24576, "MiB"),
                      u(util, "%"), str(temp), u(sm, "MHz"), "P2"])


def power_log(gpus=4, times=3, *, units=True, limit=250.0):
    lines = [HEADER]
    for k in range(times):
        t = T0 + timedelta(seconds=k)
        lines += [sample(i, t + timedelta(milliseconds=2 * i), draw=200 + 10 * i + k, limit=limit,
                         units=units) for i in range(gpus)]
    return "\n".join(lines) + "\n"


def test_multi_gpu_samples_over_time(tmp_path):
    res = smi.read(write(tmp_path, "smi-250w.csv", power_log(gpus=4, times=3)))
    df = res.tables["gpu_samples"]
    assert res.read == len(df) == 12 and res.ignored == 0 and not res.reasons
    assert df["line"].tolist() == list(range(2, 14))
    assert df.groupby("gpu_index").size().to_dict() == {0: 3, 1: 3, 2: 3, 3: 3}
    assert df["timestamp"].dt.floor("s").nunique() == 3
    first = df.iloc[0]
    assert first["timestamp"] == pd.Timestamp(T0)  # local time as printed, milliseconds kept
    assert first["name"] == "NVIDIA GeForce RTX 3090"
    assert (first["power_draw_w"], first["power_limit_w"]) == (200.0, 250.0)
    assert (first["memory_used_mib"], first["memory_total_mib"]) == (21003.0, 24576.0)
    assert (first["utilization_gpu_pct"], first["temperature_c"], first["sm_clock_mhz"]) == (97.0, 64.0, 1695.0)
    assert df.loc[df["gpu_index"] == 3, "power_draw_w"].tolist() == [230.0, 231.0, 232.0]
    assert str(df["timestamp"].dtype) == "datetime64[ns]"


def test_nounits_gives_the_same_table(tmp_path):
    a = smi.read(write(tmp_path, "u.csv", power_log(units=True))).tables["gpu_samples"]
    b = smi.read(write(tmp_path, "n.csv", power_log(units=False))).tables["gpu_samples"]
    cols = [c for c in a.columns if c != "source_file"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_the_real_examples_of_formats_md(tmp_path):
    text = ("index, timestamp, power.draw [W], clocks.current.sm [MHz], clocks.current.memory [MHz], "
            "clocks.current.graphics [MHz]\n0, 2019/08/23 14:54:47.307, 208.36 W, 1545 MHz, 6800 MHz, 1545 MHz\n")
    row = smi.read(write(tmp_path, "a.csv", text)).tables["gpu_samples"].iloc[0]
    assert row["timestamp"] == pd.Timestamp("2019-08-23 14:54:47.307")
    assert (row["gpu_index"], row["power_draw_w"], row["sm_clock_mhz"]) == (0, 208.36, 1545.0)
    text = ("power.draw [W], power.limit [W], clocks.current.sm [MHz], clocks.max.sm [MHz], temperature.gpu, "
            "utilization.gpu [%]\n34.19 W, 72.00 W, 2040 MHz, 2040 MHz, 71, 0 %\n")
    row = smi.read(write(tmp_path, "b.csv", text)).tables["gpu_samples"].iloc[0]
    assert (row["power_draw_w"], row["power_limit_w"], row["sm_clock_mhz"]) == (34.19, 72.0, 2040.0)
    assert (row["temperature_c"], row["utilization_gpu_pct"]) == (71.0, 0.0)
    assert pd.isna(row["timestamp"]) and pd.isna(row["gpu_index"])


def test_timestamp_without_milliseconds(tmp_path):
    text = "timestamp, power.draw [W]\n2026/03/14 09:30:07, 120.00 W\n"
    row = smi.read(write(tmp_path, "t.csv", text)).tables["gpu_samples"].iloc[0]
    assert row["timestamp"] == pd.Timestamp("2026-03-14 09:30:07")


def test_columns_found_by_name_in_any_order_and_subset(tmp_path):
    text = "power.draw [W], index\n151.20 W, 1\n"
    df = smi.read(write(tmp_path, "s.csv", text)).tables["gpu_samples"]
    assert df[["gpu_index", "power_draw_w"]].values.tolist() == [[1, 151.2]]
    assert df["power_limit_w"].isna().all() and df["name"].isna().all()


@pytest.mark.parametrize("header, values, draw, limit", [
    ("power.draw.instant [W], enforced.power.limit [W]", "180.50 W, 300.00 W", 180.5, 300.0),
    ("power.draw.average [W], power.default_limit [W]", "175.00 W, 350.00 W", 175.0, 350.0),
    # power.draw and power.limit win over their alternatives
    ("power.draw.instant [W], power.draw [W], power.default_limit [W], power.limit [W]",
     "181.00 W, 177.00 W, 350.00 W, 250.00 W", 177.0, 250.0),
    ("power.draw.instant [W], power.draw.average [W], power.default_limit [W], enforced.power.limit [W]",
     "181.00 W, 177.00 W, 350.00 W, 200.00 W", 177.0, 200.0),
])
def test_power_column_alternatives(tmp_path, header, values, draw, limit):
    row = smi.read(write(tmp_path, "p.csv", f"{header}\n{values}\n")).tables["gpu_samples"].iloc[0]
    assert (row["power_draw_w"], row["power_limit_w"]) == (draw, limit)


def test_clock_alias_in_a_hand_written_header(tmp_path):
    row = smi.read(write(tmp_path, "c.csv", "clocks.sm [MHz], power.draw [W]\n1410 MHz, 99.00 W\n")
                   ).tables["gpu_samples"].iloc[0]
    assert row["sm_clock_mhz"] == 1410.0


def test_unavailable_values_keep_the_row_as_nan(tmp_path):
    lines = power_log(gpus=2, times=1).splitlines()
    lines[1] = lines[1].replace("200.00 W", "[N/A]")
    lines[2] = lines[2].replace("1695 MHz", "[Not Supported]").replace("P2", "[N/A]")
    res = smi.read(write(tmp_path, "na.csv", "\n".join(lines) + "\n"))
    df = res.tables["gpu_samples"]
    assert res.read == 2 and res.ignored == 0
    assert math.isnan(df.iloc[0]["power_draw_w"]) and df.iloc[0]["power_limit_w"] == 250.0
    assert math.isnan(df.iloc[1]["sm_clock_mhz"])
    assert res.reasons == {
        "unavailable value [N/A] in power.draw (line kept, value NaN)": 1,
        "unavailable value [Not Supported] in clocks.current.sm (line kept, value NaN)": 1,
    }  # pstate is not a table column: its [N/A] does not matter


def test_header_repeated_by_a_restarted_loop_is_skipped_and_counted(tmp_path):
    text = power_log(gpus=2, times=2) + power_log(gpus=2, times=2)
    res = smi.read(write(tmp_path, "twice.csv", text))
    assert res.read == 8 and res.ignored == 1
    assert res.reasons == {"header repeated mid-file (a restarted nvidia-smi -l loop)": 1}
    assert res.tables["gpu_samples"]["line"].tolist() == [2, 3, 4, 5, 7, 8, 9, 10]


def test_a_changed_query_mid_file_switches_columns(tmp_path):
    text = power_log(gpus=1, times=1) + "power.limit [W], index\n300.00 W, 0\n"
    res = smi.read(write(tmp_path, "changed.csv", text))
    df = res.tables["gpu_samples"]
    assert res.reasons == {"new header mid-file (the query list changed)": 1}
    assert df["power_limit_w"].tolist() == [250.0, 300.0]
    assert math.isnan(df.iloc[1]["power_draw_w"])


@pytest.mark.parametrize("old, new, reason", [
    ("200.00 W", "200.00 MHz", "power.draw: '200.00 MHz' is not a number in W"),
    ("200.00 W", "lots W", "power.draw: 'lots W' is not a number in W"),
    ("21003 MiB", "21003 GiB", "memory.used: '21003 GiB' is not a number in MiB"),
    (", 64, ", ", 64 C, ", "temperature.gpu: '64 C' is not a number without unit"),
    ("2026/03/14 09:30:00.250", "14.03.2026 09:30", "timestamp: '14.03.2026 09:30' is not a time"),
    ("0, 2026", "GPU0, 2026", "index: 'GPU0' is not a GPU index"),
    ("P2", "P2, extra", "line has 12 values, header has 11"),
])
def test_bad_values_ignore_the_line_with_a_reason(tmp_path, old, new, reason):
    lines = power_log(gpus=2, times=1).splitlines()
    lines[1] = lines[1].replace(old, new, 1)
    res = smi.read(write(tmp_path, "bad.csv", "\n".join(lines) + "\n"))
    assert res.read == 1 and res.ignored == 1
    (got,) = res.reasons
    assert got.startswith(reason)
    assert res.tables["gpu_samples"]["gpu_index"].tolist() == [1]


def test_driver_messages_between_samples_are_counted(tmp_path):
    lines = power_log(gpus=1, times=2).splitlines()
    lines.insert(2, "Unable to determine the device handle for GPU0000:02:00.0: Unknown Error")
    res = smi.read(write(tmp_path, "err.csv", "\n".join(lines) + "\n"))
    assert res.read == 2 and res.reasons == {"line has 1 value, header has 11": 1}


def test_partial_last_line(tmp_path):
    text = power_log(gpus=2, times=1) + "0, 2026/03/14 09:30:01.250, NVIDIA GeForce RTX 3090, 20"
    res = smi.read(write(tmp_path, "cut.csv", text))
    assert res.read == 2 and res.reasons == {"partial last line": 1}


def test_gzip_and_windows_line_endings(tmp_path):
    text = power_log(gpus=2, times=2).replace("\n", "\r\n")
    res = ingest.read(write(tmp_path, "smi.csv.gz", text, gz=True))
    assert res.format == "nvidia-smi-csv" and res.read == 4 and res.ignored == 0


def test_noheader_file_is_refused_with_advice(tmp_path):
    text = "\n".join(power_log(gpus=2, times=1).splitlines()[1:]) + "\n"
    path = write(tmp_path, "noheader.csv", text)
    with pytest.raises(IngestError) as err:
        smi.read(path)
    msg = str(err.value)
    assert str(path) in msg and err.value.where == "line 1"
    assert "noheader" in msg and "--format=csv" in msg and "power.draw [W]" in msg


def test_wrong_unit_in_header_is_an_error(tmp_path):
    with pytest.raises(IngestError, match=r"column 'memory.used' has unit \[GiB\]; expected \[MiB\]"):
        smi.read(write(tmp_path, "gib.csv", "memory.used [GiB]\n20 GiB\n"))


def test_a_header_without_any_kept_column_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="none of the columns this reader keeps.*power.draw"):
        smi.read(write(tmp_path, "clocks.csv", "pstate, clocks.max.sm [MHz]\nP0, 2040 MHz\n"))


def test_empty_file_is_an_error(tmp_path):
    with pytest.raises(IngestError, match="no lines"):
        smi.read(write(tmp_path, "empty.csv", "\n\n"))


# ---------------------------------------------------------------- format detection

def test_sniff_matrix():
    assert smi.sniff(power_log())
    assert smi.sniff(power_log(units=False))
    assert smi.sniff("\ufeff\nindex, timestamp, power.draw [W]\n")
    assert smi.sniff("timestamp, utilization.gpu [%]\n")
    assert smi.sniff("memory.used [MiB]\n1003 MiB\n")
    assert not smi.sniff("\n".join(power_log().splitlines()[1:]))  # noheader: nothing to go by
    assert not smi.sniff("name, pstate\n")  # too little to tell
    assert_sniffs_no_other_format(smi, "nvidia-smi-csv")


def test_detect_picks_this_reader_only_for_nvidia_smi_csv(tmp_path):
    assert ingest.detect(write(tmp_path, "u.csv", power_log())) is smi
    assert ingest.detect(write(tmp_path, "n.csv", power_log(units=False))) is smi
    assert_detect_picks_it_for_no_other_format(smi, "nvidia-smi-csv", tmp_path)


def test_a_study_reads_its_power_logs_with_manifest_context(tmp_path):
    from benchbook.study.folder import write_checksums
    from benchbook.study.load import ingest_study

    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "smi-200w.csv").write_text(power_log(gpus=2, times=2, limit=200.0))
    (tmp_path / "raw" / "smi-300w.csv.gz").write_bytes(
        gzip.compress(power_log(gpus=2, times=3, limit=300.0).encode()))
    (tmp_path / "study.yml").write_text(
        "study: demo\ntitle: Demo\nlabel: demo\nreconstructed: false\n"
        "configs:\n  a: {platform: 2x RTX 3090}\nfiles:\n"
        "  - {path: raw/smi-200w.csv, config: a, power_limit_w: 200}\n"
        "  - {path: raw/smi-300w.csv.gz, config: a, power_limit_w: 300, format: nvidia-smi-csv}\n")
    write_checksums(tmp_path)
    data = ingest_study(tmp_path)
    gpu = data["gpu_samples"]
    assert gpu.groupby("source_file")["power_limit_w"].max().to_dict() == {
        "raw/smi-200w.csv": 200.0, "raw/smi-300w.csv.gz": 300.0}
    assert gpu["platform"].eq("2x RTX 3090").all()
    assert data.report["read"].tolist() == [4, 6]


# ---------------------------------------------------------------- several GPUs, no index column
# Fixtures: the real one-GPU logs with a second GPU's line after each of theirs at the same
# sample time (tests/files.py two_gpu_log), as nvidia-smi prints a two-GPU machine.

PRANAV = REAL / "nvidia-smi" / "PranavDani_nvidia-smi.csv"  # --query-gpu=timestamp,power.draw
RDRIGO = REAL / "nvidia-smi" / "RdrigoMachado_gpu_power.csv"  # timestamp, name, uuid, ..., power.draw
OTHER_UUID = "GPU-00000000-0000-0000-0000-000000000002"  # made up: the second GPU of the fixture


@needs_shared
def test_the_real_one_gpu_logs_stay_one_series():
    for path in (PRANAV, RDRIGO):
        res = smi.read(path)
        df = res.tables["gpu_samples"]
        assert df["gpu"].isna().all() and df["gpu_index"].isna().all() and not res.notes, path
        assert res.read == len(path.read_text().splitlines()) - 1


@needs_shared
def test_two_gpus_without_an_index_are_told_apart_by_row_order(tmp_path):
    one = smi.read(PRANAV).tables["gpu_samples"]
    res = smi.read(two_gpu_log(PRANAV, tmp_path / "two.csv", more_draw(48.0)))
    df = res.tables["gpu_samples"]
    assert res.read == 2 * len(one) and res.ignored == 0 and df["gpu_index"].isna().all()
    assert df["gpu"].tolist() == ["1 of 2 (by row order)", "2 of 2 (by row order)"] * len(one)
    first, second = (df[df["gpu"] == f"{n} of 2 (by row order)"].reset_index(drop=True) for n in (1, 2))
    pd.testing.assert_series_equal(first["power_draw_w"], one["power_draw_w"])
    pd.testing.assert_series_equal(second["power_draw_w"], (one["power_draw_w"] + 48.0).round(2))
    pd.testing.assert_series_equal(second["timestamp"], one["timestamp"])
    assert res.notes == ["2 GPUs told apart by row order within each timestamp (the log has no index column)"]
    assert "; 2 GPUs told apart by row order within each timestamp" in res.summary()
    # each GPU keeps its own series: no mean over both (what one pooled series would give)
    assert df.groupby("gpu")["power_draw_w"].mean().round(6).tolist() == \
        [round(one["power_draw_w"].mean(), 6), round(one["power_draw_w"].mean() + 48.0, 6)]


@needs_shared
def test_a_uuid_column_tells_the_gpus_apart(tmp_path):
    header = RDRIGO.read_text().splitlines()[0].split(", ")
    at = header.index("uuid")

    def other_gpu(values):
        values = more_draw(30.0)(values)
        values[at] = OTHER_UUID
        return values

    res = smi.read(two_gpu_log(RDRIGO, tmp_path / "two.csv", other_gpu))
    df = res.tables["gpu_samples"]
    assert df["gpu"].tolist()[:4] == ["1 of 2 (by uuid)", "2 of 2 (by uuid)"] * 2
    assert res.notes == ["2 GPUs told apart by the uuid column (the log has no index column)"]
    assert "uuid" not in df.columns  # compared, not kept


@needs_shared
def test_repeated_times_under_one_uuid_are_refused(tmp_path):
    path = two_gpu_log(RDRIGO, tmp_path / "same.csv", more_draw(30.0))  # the copy keeps the uuid
    with pytest.raises(IngestError) as err:
        smi.read(path)
    assert err.value.where == "line 2" and str(path) in str(err.value)
    assert "the uuid column names one GPU" in str(err.value) and "add index to --query-gpu" in str(err.value)


@needs_shared
def test_an_irregular_pattern_is_refused_naming_its_line(tmp_path):
    path = two_gpu_log(PRANAV, tmp_path / "odd.csv", more_draw(48.0), skip={10})
    with pytest.raises(IngestError) as err:
        smi.read(path)
    # header on line 1, samples 0-9 on lines 2-21: sample 10 (one row) starts on line 22
    assert err.value.where == "line 22"
    assert "this sample time has 1 row(s) where the first has 2" in str(err.value)
    assert "--query-gpu=index,timestamp,power.draw" in str(err.value)


@needs_shared
def test_a_last_sample_cut_short_is_kept_and_said(tmp_path):
    n = len(PRANAV.read_text().splitlines()) - 1
    res = smi.read(two_gpu_log(PRANAV, tmp_path / "cut.csv", more_draw(48.0), skip={n - 1}))
    df = res.tables["gpu_samples"]
    assert len(df) == 2 * n - 1 and df["gpu"].iloc[-1] == "1 of 2 (by row order)"
    assert res.notes[-1] == f"the last sample (line {2 * n}) has 1 of 2 rows (the log stopped within a sample)"


NAMED = "timestamp, name, power.draw [W]\n"


def named_rows(*samples) -> str:
    """One sample time per tuple of GPU names, one row each, the draw counting up."""
    out, w = [NAMED.strip()], 100
    for k, names in enumerate(samples):
        for name in names:
            out.append(f"2026/03/14 09:30:{k:02d}.250, {name}, {w:.2f} W")
            w += 1
    return "\n".join(out) + "\n"


def test_names_that_differ_tell_the_gpus_apart_in_any_order(tmp_path):
    res = smi.read(write(tmp_path, "named.csv", named_rows(("RTX 3090", "RTX 4090"), ("RTX 4090", "RTX 3090"))))
    df = res.tables["gpu_samples"]
    assert df["gpu"].tolist() == ["1 of 2 (by name)", "2 of 2 (by name)", "2 of 2 (by name)", "1 of 2 (by name)"]
    assert df.groupby("gpu")["name"].unique().map(list).to_dict() == {"1 of 2 (by name)": ["RTX 3090"],
                                                                       "2 of 2 (by name)": ["RTX 4090"]}
    assert res.notes == ["2 GPUs told apart by the name column (the log has no index column)"]


@pytest.mark.parametrize("samples, line, says", [
    # two alike and one other: the other moved from place 3 to place 2, so the order is not stable
    ((("A", "A", "B"), ("A", "B", "A")), 6, "the GPU name in place 2 of its sample time changed"),
    # a sample time printed again after another one
    ((("A", "A"), ("A", "A")), None, None),
    # the first time once, the next twice
    ((("A",), ("A", "A")), 3, "this sample time has 2 row(s) where the first has 1"),
])
def test_irregular_named_logs(tmp_path, samples, line, says):
    text = named_rows(*samples)
    if line is None:  # the same two samples written again: times come back
        text += "\n".join(text.splitlines()[1:3]) + "\n"
        line, says = 6, "this sample time occurred before, in other rows"
    with pytest.raises(IngestError) as err:
        smi.read(write(tmp_path, "odd.csv", text))
    assert err.value.where == f"line {line}" and says in str(err.value)

"""The `benchbook` command as a user runs it (in-process through main())."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchbook.cli import main

ROOT = Path(__file__).parents[1]
H100 = ROOT / "data/h100-dense-vs-moe-mtp"
STRIX = ROOT / "data/strix-halo-baseline"
REAL_LOGS = ROOT.parent / "shared" / "samples" / "real" / "vllm-server-logs"


def test_ingest_bench_json_writes_requested_table(tmp_path, capsys):
    src = next((H100 / "raw/h100-moe-mtp").glob("*concurrency4-*.json"))
    out = tmp_path / "requests.csv"
    assert main(["ingest", str(src), "--table", "requests", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "[vllm-bench-serve]: 41 records read, 0 ignored" in printed
    df = pd.read_csv(out)
    assert len(df) == 40 and {"ttft_s", "tpot_s", "ok"} <= set(df.columns)


def test_ingest_several_tables_into_one_csv_file_is_a_clear_error(tmp_path, capsys):
    src = next((H100 / "raw/h100-dense").glob("*.json"))
    assert main(["ingest", str(src), "--out", str(tmp_path / "x.csv")]) == 1
    err = capsys.readouterr().err
    assert src.name in err and "yields several tables (runs, requests, run_stats)" in err
    assert "give a folder as --out" in err and "choose one with --table" in err
    assert list(tmp_path.iterdir()) == []  # no CSV, no .part


def test_ingest_without_table_writes_every_table_of_a_bench_json_to_a_folder(tmp_path, capsys):
    from benchbook import ingest

    src = next((H100 / "raw/h100-moe-mtp").glob("*concurrency4-*.json"))
    out = tmp_path / "tables"  # created
    assert main(["ingest", str(src), "--out", str(out), "--as", "csv"]) == 0
    printed = capsys.readouterr().out
    whole = ingest.read(src)
    assert sorted(p.name for p in out.iterdir()) == ["requests.csv", "run_stats.csv", "runs.csv"]
    for table, df in whole.tables.items():
        assert len(pd.read_csv(out / f"{table}.csv")) == len(df) > 0
        assert f"wrote {len(df)} rows of {table} to {out / f'{table}.csv'}" in printed
    assert "[vllm-bench-serve]: 41 records read, 0 ignored" in printed


def test_ingest_without_table_streams_a_real_server_log_into_a_folder(tmp_path, capsys, monkeypatch):
    """Each table batch by batch into its own CSV, the same as from the whole tables."""
    import io

    from benchbook import ingest
    from benchbook.ingest import vllm_log

    src = REAL_LOGS / "vllm-0.11.0_4x3090_qwen3-vl-30b_excerpt.log"
    if not src.is_file():
        pytest.skip(f"real samples not present at {REAL_LOGS}")
    whole = ingest.read(src)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 1000)
    out = tmp_path / "log"
    assert main(["ingest", str(src), "--out", str(out), "--batch-rows", "5", "--as", "csv"]) == 0
    printed = capsys.readouterr().out
    assert whole.summary() in printed and printed.count("lines read") == 1
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{t}.csv" for t in vllm_log.TABLES)
    for table, df in whole.tables.items():
        got = pd.read_csv(out / f"{table}.csv")
        want = pd.read_csv(io.StringIO(df.to_csv(index=False)))
        pd.testing.assert_frame_equal(got[list(want.columns)], want)
        assert f"wrote {len(df)} rows of {table}" in printed
    assert {t: len(df) > 0 for t, df in whole.tables.items()} == {
        "windows": True, "access": True, "spec_decode": False, "boot": True}  # an empty one: a header only


def test_ingest_folder_refused_when_out_is_a_file(tmp_path, capsys):
    src = next((H100 / "raw/h100-dense").glob("*.json"))
    taken = tmp_path / "results"
    taken.write_text("x")
    assert main(["ingest", str(src), "--out", str(taken)]) == 1
    err = capsys.readouterr().err
    assert f"{taken}: exists and is not a folder" in err and "ending in .parquet or .csv" in err
    assert taken.read_text() == "x"


@pytest.mark.parametrize("as_", ["csv", "parquet"])
def test_a_failed_ingest_into_a_folder_leaves_nothing(tmp_path, capsys, as_):
    src = next((H100 / "raw/h100-dense").glob("*.json"))
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    out = tmp_path / "out"
    assert main(["ingest", str(src), str(bad), "--out", str(out), "--as", as_, "--jobs", "2"]) == 1
    assert "notes.txt:line 1: unrecognised format" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # the first file's tables were not renamed into place


def test_ingest_several_llama_bench_files_into_one_table(tmp_path, capsys):
    files = sorted((STRIX / "raw/llama-bench").glob("*.jsonl"))
    out = tmp_path / "lb.csv"
    assert main(["ingest", *map(str, files), "--out", str(out)]) == 0
    assert capsys.readouterr().out.count("records read") == len(files)
    df = pd.read_csv(out)
    assert set(df["n_prompt"]) == {0, 512} and len(df) == 2 * len(files)


def test_ingest_unknown_format_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert main(["ingest", str(bad), "--out", str(tmp_path / "o.csv")]) == 1
    err = capsys.readouterr().err
    assert "notes.txt:line 1: unrecognised format" in err and "vllm-bench-serve" in err


def test_validate_reports_counts_and_all_problems(tmp_path, capsys):
    assert main(["validate", str(STRIX)]) == 0
    assert "checksums verified" in capsys.readouterr().out
    copy = tmp_path / "strix"
    shutil.copytree(STRIX, copy)
    (copy / "raw/stray.txt").write_text("x")
    victim = next((copy / "raw/llama-bench").glob("*.jsonl"))
    victim.write_text(victim.read_text() + "\n")
    assert main(["validate", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "2 problem(s)" in err and "stray.txt" in err and "content changed" in err
    assert main(["validate", str(copy), "--update-checksums"]) == 1  # stray file is still unlisted
    (copy / "raw/stray.txt").unlink()
    assert main(["validate", str(copy), "--update-checksums"]) == 0


def test_run_refuses_unknown_parameter_and_missing_folder(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", "h100-dense-vs-moe-mtp", "-p", "colour", "red"]) == 1
    assert "unknown parameter(s) colour" in capsys.readouterr().err
    assert main(["run", "h100-dense-vs-moe-mtp", "--data", "/no/such/folder"]) == 1
    assert "not a folder" in capsys.readouterr().err
    assert main(["run", "no-such-study"]) == 1
    err = capsys.readouterr().err
    assert "known studies: " in err and "h100-dense-vs-moe-mtp" in err


def test_list_names_every_chapter(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "data/h100-dense-vs-moe-mtp/" in lines["h100-dense-vs-moe-mtp"]
    assert "data/strix-halo-qwen3-30b-lhl/" in lines["strix-halo-qwen3-30b-lhl"]
    assert "reads other chapters" in lines["synthesis"]


def _generated_log(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("log_ingest", ROOT / "benchmarks" / "log_ingest.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.ensure_inputs(tmp_path, 0.3, seed=5)[0]


def test_ingest_streams_a_server_log_in_batches(tmp_path, capsys, monkeypatch):
    """A log is written batch by batch; the CSV is the same as from the whole table."""
    from benchbook import ingest
    from benchbook.ingest import vllm_log

    log = _generated_log(tmp_path)
    whole = ingest.read(log)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 10_000)
    for table in ("windows", "access"):
        out = tmp_path / f"{table}.csv"
        assert main(["ingest", str(log), "--table", table, "--out", str(out), "--batch-rows", "100"]) == 0
        printed = capsys.readouterr().out
        alone = vllm_log.read(log, tables=[table])  # only this table's lines parsed
        assert printed.count("lines read") == 1 and alone.summary() in printed
        got = pd.read_csv(out)
        want = pd.read_csv(__import__("io").StringIO(whole.tables[table].to_csv(index=False)))
        pd.testing.assert_frame_equal(got[list(want.columns)], want)
        assert len(got) == len(whole.tables[table]) > 100


def test_ingest_csv_keeps_every_value(tmp_path, capsys):
    """The CSV (written by polars) reads back as the table: times to the nanosecond, NaN and
    missing values as empty fields, text with commas and quotes, numbers as printed."""
    from benchbook import ingest

    stats = ("(APIServer pid=1) INFO 05-30 07:55:{s:02d} [loggers.py:271] Engine 000: Avg prompt throughput: "
             "{p} tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, "
             "GPU KV cache usage: {kv}%, Prefix cache hit rate: 0.0%")
    stamp = "2026-04-07T14:03:21.123456789Z "
    lines = [(stamp if k % 2 else "") + stats.format(s=k, p=k * 0.1, kv=("nan", "0.5")[k % 2]) for k in range(6)]
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines + ['INFO:     10.1.2.3:5 - "GET /a,\\"b HTTP/1.1" 200']) + "\n")
    whole = ingest.read(log)
    for table in ("windows", "access"):
        out = tmp_path / f"{table}.csv"
        assert main(["ingest", str(log), "--table", table, "--out", str(out)]) == 0
        got = pd.read_csv(out, keep_default_na=False, na_values=[""])
        want = pd.read_csv(__import__("io").StringIO(whole.tables[table].to_csv(index=False)), keep_default_na=False,
                           na_values=[""])
        if table == "windows":
            stamps = pd.to_datetime(got.pop("timestamp")).astype("datetime64[ns]")
            assert (stamps.to_numpy() == whole.tables[table]["timestamp"].to_numpy()).sum() == 3  # the NaT differ
            assert stamps.notna().sum() == 3 and want.pop("timestamp").notna().sum() == 3
            assert got["kv_usage"].isna().sum() == 3 and (got["kv_usage"].dropna() == 0.005).all()
            assert got["prompt_tps"].tolist() == [k * 0.1 for k in range(6)]
        pd.testing.assert_frame_equal(got[list(want.columns)], want)  # (a stream writes every optional column)
    capsys.readouterr()


def test_ingest_refuses_columns_the_csv_cannot_hold(tmp_path):
    """A later batch with a filled column the CSV's header lacks is an error naming the
    file, not a silent drop; an empty one is left out, a missing one left empty."""
    import pytest

    from benchbook.cli import _in_columns
    from benchbook.ingest import IngestError

    header = ["a", "b"]
    assert _in_columns(Path("f.log"), pd.DataFrame({"a": [1], "c": [None]}), header).columns.tolist() == header
    with pytest.raises(IngestError, match=r"f\.log.*\['c'\]"):
        _in_columns(Path("f.log"), pd.DataFrame({"a": [1], "c": ["x"]}), header)


def test_ingest_of_a_cut_off_gzip_log_is_a_clear_error(tmp_path, capsys):
    import gzip

    log = _generated_log(tmp_path)
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(gzip.compress(log.read_bytes())[:-5000])
    assert main(["ingest", str(broken), "--table", "windows", "--out", str(tmp_path / "w.csv")]) == 1
    err = capsys.readouterr().err
    assert "broken.log.gz" in err and "gzip" in err and "Traceback" not in err


def test_a_failed_ingest_leaves_no_partial_csv(tmp_path, capsys):
    files = sorted((STRIX / "raw/llama-bench").glob("*.jsonl"))
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    out = tmp_path / "lb.csv"
    assert main(["ingest", str(files[0]), str(bad), "--out", str(out)]) == 1
    assert not out.exists() and not list(tmp_path.glob("*.part"))


def test_needs_prints_each_chapter_s_contract(capsys, monkeypatch):
    """Every role, kind and section of the registry's contract is named; an unknown id is an error."""
    from benchbook.book import registry

    monkeypatch.chdir(ROOT)
    for spec in registry.chapters():
        assert main(["needs", spec.id]) == 0
        out = capsys.readouterr().out
        if spec.contract is None:
            assert all(u in out for u in spec.uses)
            continue
        for item in (*spec.contract.roles, *spec.contract.kinds):
            assert f"  {item.name} " in out
        for section in spec.contract.sections:
            assert f"  {section.title}:" in out
    assert main(["needs", "no-such-chapter"]) == 1
    assert "no chapter 'no-such-chapter'" in capsys.readouterr().err


# ---------------------------------------------------------------- Parquet, folders, many files at once


def _polars_tables(res) -> dict:
    from benchbook.ingest.parquet import to_polars

    return {name: to_polars(df) for name, df in res.tables.items()}


def test_parquet_datasets_from_folders_read_in_parallel(tmp_path, capsys):
    """Folders as inputs, two worker processes, one Parquet dataset per table: each part
    is its file's table, every dataset has one schema (polars reads the folder as is), the
    counts are printed per file and in total."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from benchbook import ingest

    inputs = [H100 / "raw", STRIX / "raw/llama-bench"] + ([REAL_LOGS] if REAL_LOGS.is_dir() else [])
    out = tmp_path / "ds"
    assert main(["ingest", *map(str, inputs), "--out", str(out), "--jobs", "2"]) == 0
    printed = capsys.readouterr().out
    files = [f for d in inputs for f in sorted(d.rglob("*")) if f.is_file() and not f.name.startswith(".")]
    read, rows = 0, {}
    for i, f in enumerate(files):
        try:
            whole = ingest.read(f)
        except ingest.IngestError:
            assert f"skipped {f}" in printed
            continue
        assert whole.summary().split(" -> rows")[0] in printed  # (Batches' counts hold no tables)
        read += whole.read
        for table, want in _polars_tables(whole).items():
            pieces = sorted((out / table).glob(f"part-{i:05d}-*.parquet"))  # batches, pieces: in row order
            got = pl.concat([pl.read_parquet(p) for p in pieces])
            assert_frame_equal(got.select(want.columns), want, check_dtypes=False)
            extra = got.select(pl.exclude(want.columns))  # optional or other files' columns: empty here
            assert all((col.is_null() | col.is_nan() if col.dtype.is_float() else col.is_null()).all()
                       or (col.name == "kv_device" and set(col.drop_nulls()) <= {"GPU"})  # printed on every V1 line
                       for col in extra.iter_columns()), (f, table)
            rows[table] = rows.get(table, 0) + len(want)
    assert "total: " in printed and f"{read} records read" in printed
    for table, n in rows.items():
        assert len(pl.scan_parquet(out / table).collect()) == n  # the folder as one dataset
        assert f"wrote {n} rows of {table} to {out / table}" in printed
    assert {"runs", "requests", "llama_bench"} <= set(rows)


def test_one_table_to_a_parquet_file_is_the_table_of_a_read(tmp_path, capsys, monkeypatch):
    """`--table windows --out w.parquet`: the rows `vllm_log.read` gives, batch by batch
    (small chunks and batches), joined into one file; an Int64 column keeps its nulls."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from benchbook import ingest
    from benchbook.ingest import vllm_log

    log = _generated_log(tmp_path)
    whole = ingest.read(log)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 10_000)
    for table in ("windows", "access"):
        out = tmp_path / f"{table}.parquet"
        assert main(["ingest", str(log), "--table", table, "--out", str(out), "--batch-rows", "100",
                     "--jobs", "1"]) == 0
        printed = capsys.readouterr().out
        assert printed.count("lines read") == 1 and f"wrote {len(whole.tables[table])} rows" in printed
        want = _polars_tables(whole)[table]
        got = pl.read_parquet(out)
        assert_frame_equal(got.select(want.columns), want)
        assert not list(tmp_path.glob(".ingest-*")) and not list(tmp_path.glob("*.part"))
    folder = tmp_path / "ds"  # the same log as datasets: many batches and pieces, in row order by name
    monkeypatch.setattr("benchbook.ingest.parquet.ROW_GROUP", 70)
    assert main(["ingest", str(log), "--out", str(folder), "--batch-rows", "100", "--jobs", "1"]) == 0
    assert len(list((folder / "access").iterdir())) > 10
    for table, want in _polars_tables(whole).items():
        assert_frame_equal(pl.read_parquet(sorted((folder / table).iterdir())).select(want.columns), want)
    access = pl.read_parquet(tmp_path / "access.parquet")
    assert access["window_line"].dtype == pl.Int64 and access["window_line"].null_count() == \
        whole.tables["access"]["window_line"].isna().sum()


def test_several_tables_into_one_parquet_file_is_a_clear_error(tmp_path, capsys):
    src = next((H100 / "raw/h100-dense").glob("*.json"))
    assert main(["ingest", str(src), "--out", str(tmp_path / "x.parquet")]) == 1
    err = capsys.readouterr().err
    assert src.name in err and "yields several tables (runs, requests, run_stats)" in err
    assert list(tmp_path.iterdir()) == []


def test_table_a_file_lacks_is_a_clear_error(tmp_path, capsys):
    src = next((H100 / "raw/h100-dense").glob("*.json"))
    assert main(["ingest", str(src), "--table", "windows", "--out", str(tmp_path / "w.parquet")]) == 1
    assert "has no table 'windows'; it yields: runs, requests, run_stats" in capsys.readouterr().err


def test_to_polars_keeps_types_and_missing_values():
    import numpy as np
    import polars as pl

    from benchbook.ingest.parquet import to_polars

    df = pd.DataFrame({
        "cat": pd.Categorical(["a", None, "b"]), "s": pd.array(["x", None, "z"], dtype="string"),
        "i": pd.array([1, None, 3], dtype="Int64"), "b": pd.array([True, None, False], dtype="boolean"),
        "f": [0.5, np.nan, 2.0], "t": pd.to_datetime(["2026-01-01", None, "2026-01-02"]).astype("datetime64[ns]"),
        "o": np.array(["p", None, "r"], dtype=object)})
    got = to_polars(df)
    assert got.schema == pl.Schema({"cat": pl.String, "s": pl.String, "i": pl.Int64, "b": pl.Boolean,
                                    "f": pl.Float64, "t": pl.Datetime("ns"), "o": pl.String})
    assert got.null_count().row(0) == (1, 1, 1, 1, 0, 1, 1)  # NaN stays a float NaN
    assert got["cat"].to_list() == ["a", None, "b"] and got["i"].to_list() == [1, None, 3]


def test_a_folder_with_table_skips_files_that_cannot_hold_it(tmp_path, capsys):
    """`--table windows` over a folder of mixed raw files reads the server logs and names
    the other files as skipped; a file named on its own still has to hold the table."""
    import polars as pl

    from benchbook import ingest

    folder = ROOT / "data/gb10-mtp/raw"
    logs = [f for f in sorted(folder.rglob("*")) if f.is_file() and ingest.detect(f).FORMAT == "vllm-server-log"]
    assert main(["ingest", str(folder), "--table", "windows", "--out", str(tmp_path / "w.parquet")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("lines read") == len(logs) > 0 and "a vllm-bench-serve file has no table windows" in printed
    want = sum(len(ingest.read(f).tables["windows"]) for f in logs)
    assert len(pl.read_parquet(tmp_path / "w.parquet")) == want > 0


def test_validate_lists_the_page_s_sections_inside_the_book_and_the_contract_s_outside(tmp_path, capsys,
                                                                                      monkeypatch):
    """Inside the book the chapter runs on the folder (what the page will show); elsewhere
    validate still checks the folder and says it could not run the chapter."""
    assert main(["validate", str(STRIX)]) == 0
    assert "chapter strix-halo-baseline, the page will show: " in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(STRIX)]) == 0
    out = capsys.readouterr().out
    assert "not inside the book's folder, so the chapter was not run" in out
    assert "chapter strix-halo-baseline, the files' run kinds allow: " in out

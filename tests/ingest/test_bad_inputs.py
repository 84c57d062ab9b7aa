"""The bad-input corpus (tests/bad_corpus.py): a clear message or a counted skip, never a traceback.

Per-file cases run through `benchbook.ingest.read` (the one way in, used by the CLI and
`load`) and through `benchbook ingest`; study folders through `benchbook validate`. The
generic cases run against every reader registered in `benchbook.ingest.readers()`, so a
reader that lands later is covered without editing this file.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import bad_corpus as corpus
import benchbook.ingest as ingest
from benchbook.cli import main
from benchbook.ingest import IngestError
from benchbook.ingest.textio import read_bytes
from benchbook.study.folder import StudyError, load_study
from benchbook.study.load import StudyReadError, ingest_study

ROOT = Path(__file__).parents[2]


def assert_clear(message: str, path: Path, parts) -> None:
    """File named first, then where and what was expected; one line; not the bug net."""
    assert message.startswith(str(path)), message
    for part in parts:
        assert part in message, (part, message)
    assert "\n" not in message and "Traceback" not in message
    assert "failed unexpectedly" not in message, f"reader bug: {message}"


def assert_one_error_line(argv, path: Path, capsys, parts=()) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}"), err
    for part in parts:
        assert part in lines[0]
    return lines[0]


# ---------------------------------------------------------------- per-file corpus


@pytest.mark.parametrize("case", corpus.FILE_CASES, ids=lambda c: c.id)
def test_file_case(case, tmp_path, capsys):
    path = corpus.write_file(case, tmp_path)
    expect = case.expect
    if isinstance(expect, corpus.Error):
        with pytest.raises(IngestError) as err:
            ingest.read(path, fmt=case.fmt)
        assert_clear(str(err.value), path, expect.parts)
        argv = ["ingest", str(path), "--out", str(tmp_path / "out.csv")] + (["--format", case.fmt] if case.fmt else [])
        assert_one_error_line(argv, path, capsys, expect.parts)
        return
    result = ingest.read(path, fmt=case.fmt)
    if isinstance(expect, corpus.Skip):
        for reason, n in expect.reasons.items():
            assert sum(k for r, k in result.reasons.items() if reason in r) == n, result.reasons
            assert reason in result.summary()  # reported, with its count
        assert result.ignored == sum(result.reasons.values()) >= sum(expect.reasons.values())
        if expect.read is not None:
            assert result.read == expect.read
    else:
        assert (result.read, result.ignored) == (expect.read, 0), result.summary()
        for key, want in expect.check.items():
            table, column = key.split(".")
            got = result.tables[table][column].iloc[0]
            assert got == (pytest.approx(want) if isinstance(want, float) else want), key


def test_readable_variants_give_the_same_tables_as_the_clean_file(tmp_path):
    """UTF-16, BOM, CRLF, gzip and unknown keys change nothing in what is read."""
    def tables(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return ingest.read(path).tables

    clean = tables("clean.json", corpus.vllm_json())
    for case in corpus.FILE_CASES:
        if isinstance(case.expect, corpus.Reads) and case.id.startswith("vllm-"):
            got = tables(case.id + "-" + case.name, case.data)
            for name in ("runs", "requests", "run_stats"):
                a, b = (t[name].drop(columns=["source_file", "run_id", "extra"], errors="ignore")
                        for t in (clean, got))
                pd.testing.assert_frame_equal(a, b, obj=f"{case.id}: {name}")
            if case.id == "vllm-unknown-keys":  # kept aside in `extra`, named, not dropped unseen
                assert '"new_metric_2031":"<object of 1, not kept>"' in got["runs"]["extra"][0]
            else:
                assert got["runs"]["extra"][0] == clean["runs"]["extra"][0], case.id


# ---------------------------------------------------------------- studies and `benchbook validate`


@pytest.mark.parametrize("case", corpus.STUDY_CASES, ids=lambda c: c.id)
def test_study_case(case, tmp_path, capsys):
    root = corpus.write_study(case, tmp_path)
    code = main(["validate", str(root)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if not case.expect:
        assert code == 0, err
        assert "checksums verified" in out
        ingest_study(root)
        return
    assert code == 1, out
    problems = [line[4:] for line in err.splitlines() if line.startswith("  - ")]
    assert f"{root}: {len(problems)} problem(s)" in err
    assert all(p.startswith(str(root)) for p in problems), problems  # each names its file
    for part in case.expect:
        assert any(part in p for p in problems), (part, problems)
    with pytest.raises((StudyError, IngestError)):  # the library refuses it too
        ingest_study(root)


def test_validate_reports_every_problem_at_once(tmp_path, capsys):
    files = {
        "raw/good.jsonl": corpus.lb_jsonl(corpus.lb_line(), corpus.lb_line(**corpus.TG)),
        "raw/cut.jsonl": corpus.lb_jsonl(corpus.lb_line(), corpus.lb_line(**corpus.TG))[:-40],
        "raw/changed.jsonl": corpus.lb_jsonl(corpus.lb_line()),
        "raw/run.json": corpus.vllm_json()[:600],
        "raw/junk.jsonl": bytes(range(256)),
        "raw/stray.txt": b"notes\n",
    }
    manifest = ("colour: red\n" + corpus.MANIFEST.replace("  - {path: raw/one.jsonl, config: a, name: one}\n", "")
                + "".join(f"  - {{path: {p}, config: a}}\n"
                          for p in ("raw/good.jsonl", "raw/cut.jsonl", "raw/changed.jsonl",
                                    "raw/run.json", "raw/junk.jsonl", "raw/gone.jsonl")))
    root = corpus.write_study(corpus.StudyCase("all", manifest, files, (), after={
        "raw/changed.jsonl": corpus.lb_jsonl(corpus.lb_line(avg_ts=1.0))}), tmp_path)
    assert main(["validate", str(root)]) == 1
    out, err = capsys.readouterr()
    expected = [
        "study.yml: unknown key 'colour'",
        "files[5]: listed file 'raw/gone.jsonl' does not exist",
        "raw/stray.txt: present in the data folder but not listed",
        "raw/changed.jsonl: content changed since its checksum",
        "raw/run.json:line 1, column 601: invalid or truncated JSON",
        "raw/junk.jsonl:byte 128: not UTF-8 text",
    ]
    assert f"{len(expected)} problem(s)" in err
    for part in expected:
        assert part in err, part
    # the files that could be read are still accounted for, skips included
    assert "raw/cut.jsonl: 1 records read, 1 ignored partial last line (1)" in out
    assert "raw/good.jsonl: 2 records read, 0 ignored" in out
    with pytest.raises(StudyError) as exc:  # the build stops on the manifest and checksums first
        load_study(root)
    assert len(exc.value.problems) == 4


def test_reader_problems_are_collected_per_file(tmp_path):
    files = {"raw/one.jsonl": corpus.vllm_json()[:100], "raw/two.jsonl": b"\x1f\x8b\x08\x00junk"}
    manifest = corpus.MANIFEST + "  - {path: raw/two.jsonl, config: a, name: two}\n"
    root = corpus.write_study(corpus.StudyCase("per-file", manifest, files, ()), tmp_path)
    with pytest.raises(StudyReadError) as exc:
        ingest_study(root)
    assert [p.split(":")[0] for p in exc.value.problems] == [str(root / "raw/one.jsonl"), str(root / "raw/two.jsonl")]
    assert "corrupt gzip" in exc.value.problems[1]


@pytest.mark.parametrize("fmt", [None, "vllm-bench-serve"])
def test_a_folder_or_missing_file_is_a_clear_error(fmt, tmp_path, capsys):
    extra = ["--format", fmt] if fmt else []
    assert_one_error_line(["ingest", str(tmp_path), "--out", str(tmp_path / "o.csv"), *extra], tmp_path, capsys,
                          ("holds no file of a known format",))  # a folder is read file by file: here none
    gone = tmp_path / "gone.json"
    assert_one_error_line(["ingest", str(gone), "--out", str(tmp_path / "o.csv"), *extra], gone, capsys,
                          ("file not found",))


# ---------------------------------------------------------------- generic cases, every reader


def _modules() -> dict[str, tuple]:
    """Each registered reader module once: name -> (module, a format name it answers to)."""
    out = {}
    for fmt, mod in ingest.readers().items():
        out.setdefault(mod.__name__.rsplit(".", 1)[-1], (mod, fmt))
    return out


READERS = _modules()


def _sample(mod, tmp_path: Path) -> tuple[bytes, str]:
    """A small valid file this reader recognises, and the format it reads it as."""
    candidates = []
    if mod.FORMAT in corpus.SAMPLES:
        p = tmp_path / f"sample-{mod.FORMAT}"
        p.write_bytes(corpus.SAMPLES[mod.FORMAT])
        candidates.append(p)
    for folder in (ROOT / "tests/fixtures", *sorted((ROOT / "data").glob("*/raw"))):
        candidates += sorted(p for p in folder.rglob("*") if p.is_file() and p.stat().st_size < 1_000_000)
    for path in candidates:
        try:
            if ingest.detect(path) is mod:
                result = ingest.read(path)
                fmt = result.format if result.format in ingest.readers() else _modules_fmt(mod)
                return read_bytes(path), fmt
        except IngestError:
            continue
    pytest.skip(f"no sample file for reader {mod.__name__}: add one to tests/fixtures/ or bad_corpus.SAMPLES")


def _modules_fmt(mod) -> str:
    return next(fmt for fmt, m in ingest.readers().items() if m is mod)


@pytest.mark.parametrize("case", sorted(corpus.GENERIC))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_generic_bad_input_against_every_reader(reader, case, tmp_path, capsys):
    mod, _ = READERS[reader]
    sample, fmt = _sample(mod, tmp_path)
    make, expect = corpus.GENERIC[case]
    path = tmp_path / f"{case}.{'gz' if 'gzip' in case else 'txt'}"
    path.write_bytes(make(sample))
    try:
        result = ingest.read(path, fmt=fmt)
    except IngestError as exc:
        message = str(exc)
        assert_clear(message, path, expect.parts if expect else ())
        if case == "truncated":
            assert "line" in message or "byte" in message or "column" in message, message
        assert_one_error_line(["ingest", str(path), "--format", fmt, "--out", str(tmp_path / "o.csv")], path, capsys)
        return
    assert expect is None or case in ("binary", "truncated-gzip") and reader in COUNTS_UNDECODABLE, \
        f"{reader} read {case} input without an error: {result.summary()}"
    # no error: then the damage must be counted and reported, never silently dropped
    assert result.ignored >= 1, f"{reader}: {case} input read silently: {result.summary()}"
    assert result.ignored == sum(result.reasons.values())
    if case in ("nul-bytes", "binary"):
        assert not sum(len(df) for df in result.tables.values()), result.summary()


# Readers of long logs may count undecodable lines instead of refusing the file; they must
# say so in a reason that names UTF-8 (see test_generic_latin1_names_the_byte).
COUNTS_UNDECODABLE = {"vllm_log"}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_generic_latin1_names_the_byte(reader, tmp_path, capsys):
    mod, _ = READERS[reader]
    sample, fmt = _sample(mod, tmp_path)
    data, at = corpus.latin1(sample)
    path = tmp_path / "latin1.txt"
    path.write_bytes(data)
    try:
        result = ingest.read(path, fmt=fmt)
    except IngestError as exc:
        assert_clear(str(exc), path, (f"byte {at}", "not UTF-8", "expected"))
        assert_one_error_line(["ingest", str(path), "--format", fmt, "--out", str(tmp_path / "o.csv")], path, capsys)
        return
    assert reader in COUNTS_UNDECODABLE, f"{reader} decoded latin-1 silently: {result.summary()}"
    if not any("UTF-8" in r for r in result.reasons):  # then the byte was in text it does not keep
        clean_path = tmp_path / "clean.txt"
        clean_path.write_bytes(sample)
        clean = ingest.read(clean_path, fmt=fmt)
        assert (result.read, result.ignored) == (clean.read, clean.ignored), result.summary()
        for name, df in clean.tables.items():
            drop = [c for c in ("source_file", "run_id") if c in df.columns]
            pd.testing.assert_frame_equal(result.tables[name].drop(columns=drop), df.drop(columns=drop))


@pytest.mark.parametrize("variant", ["utf16-bom", "utf8-bom", "crlf", "gzip"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_generic_encodings_read_like_the_clean_file(reader, variant, tmp_path):
    mod, _ = READERS[reader]
    sample, fmt = _sample(mod, tmp_path)
    clean_path = tmp_path / "clean.txt"
    clean_path.write_bytes(sample)
    clean = ingest.read(clean_path, fmt=fmt)
    text = sample.decode("utf-8")
    data = {
        "utf16-bom": text.encode("utf-16"),
        "utf8-bom": b"\xef\xbb\xbf" + sample,
        "crlf": text.replace("\r\n", "\n").replace("\n", "\r\n").encode(),
        "gzip": corpus._gz(sample),
    }[variant]
    path = tmp_path / f"variant.{'gz' if variant == 'gzip' else 'txt'}"
    path.write_bytes(data)
    got = ingest.read(path, fmt=fmt)
    assert (got.read, got.ignored) == (clean.read, clean.ignored), (got.summary(), clean.summary())
    for name, df in clean.tables.items():
        drop = [c for c in ("source_file", "run_id") if c in df.columns]
        pd.testing.assert_frame_equal(got.tables[name].drop(columns=drop), df.drop(columns=drop),
                                      obj=f"{variant}: {name}")


# ---------------------------------------------------------------- the vLLM log reader (once it has landed)


def test_vllm_log_with_ansi_colour_codes_reads_like_the_plain_log(tmp_path):
    pytest.importorskip("benchbook.ingest.vllm_log")
    plain = corpus.SAMPLES["vllm-server-log"].decode()
    coloured = plain.replace("(APIServer pid=1) ", "\x1b[1;36m(APIServer pid=1)\x1b[0;0m ")  # 0.10.1-0.11, in files
    assert "\x1b[" in coloured
    results = []
    for name, text in (("plain.log", plain), ("colour.log", coloured)):
        (tmp_path / name).write_text(text)
        results.append(ingest.read(tmp_path / name))
    a, b = results
    assert (b.read, b.ignored) == (a.read, a.ignored) and len(a.tables["windows"]) == 2
    for name, df in a.tables.items():
        drop = [c for c in ("source_file", "run_id") if c in df.columns]
        pd.testing.assert_frame_equal(b.tables[name].drop(columns=drop), df.drop(columns=drop))


def test_vllm_log_stats_line_of_an_unknown_version_is_counted(tmp_path):
    vllm_log = pytest.importorskip("benchbook.ingest.vllm_log")
    future = ("(APIServer pid=1) INFO 05-30 07:55:51 [loggers.py:400] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
              "Avg generation throughput: 2.0 tokens/s, Queue depth: 3 reqs, Warp factor: 9\n")
    path = tmp_path / "future.log"
    path.write_bytes(corpus.SAMPLES["vllm-server-log"] + future.encode())
    result = ingest.read(path)
    reason = getattr(vllm_log, "UNKNOWN_STATS", "unknown template")
    assert result.reasons[reason] == 1, result.summary()
    assert reason in result.summary() and len(result.tables["windows"]) == 2

"""Smoke runs of the benchmark commands (`make bench` runs them at full size): they start
from a fresh clone, agree on what they count and print their tables."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the benchmark scripts (make test-fast leaves it out)


ROOT = Path(__file__).resolve().parents[1]


def run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_log_ingest_benchmark_prints_every_method(tmp_path):
    out = run("log_ingest.py", "--size-mb", "0.3", "--repeat", "1", "--gz", "--variants", "--workdir", str(tmp_path))
    assert "WARNING" not in out  # every method finds the reader's rows of its table
    assert out.count("= the reader") == 2  # the template grep matches exactly the rows made, plain and .gz
    table, variants = out.split("peak RSS MB")[1].split("Rewrites")[0].splitlines()[1:], out.split("Rewrites")[1]
    rows = [line.split() for line in variants.splitlines()[2:]]  # (a warning if a rewrite loses a window)
    assert [(r[0].split("-")[0], r[1]) for r in rows] == [("v0", "reader"), ("v0", "windows"),
                                                         ("coloured", "reader"), ("coloured", "windows")]
    methods = [line.split()[1] for line in table if line.strip()]
    readers = ["grep-C", "grep", "grep-T", "reader", "stream", "windows", "access", "spec_decode", "cli-w", "cli-wc"]
    # polars' line reader: not on the .gz copy
    plain_only = ["polars-w", "polars-wc", "polars-a", "polars-s", "parse-w"]
    assert methods == [*readers, *plain_only, "naive", *readers, "naive"]
    assert not list(tmp_path.glob("*.log*"))  # inputs removed without --keep


def test_bench_json_benchmark_runs(tmp_path):
    out = run("bench_json_ingest.py", "--requests", "300", "--itls", "20", "--repeat", "1")
    assert "requests" in out and "MB/s" in out


def test_suite_timeline_reads_workers_groups_and_the_idle_tail(tmp_path):
    lines = [{"worker": "gw0", "test": "a::t1", "group": "a.py", "start": 100.0, "stop": 160.0},
             {"worker": "gw0", "test": "a::t2", "group": "a.py", "start": 160.0, "stop": 190.0},
             {"worker": "gw1", "test": "b::t", "group": "b::t", "start": 100.0, "stop": 130.0}]
    path = tmp_path / "timeline.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = run("suite_timeline.py", "--from", str(path), "--top", "1")
    assert "to the last test's end: 90 s" in out
    assert "gw1: 1 tests, busy 30 s, done at 30 s, idle at the end 60 s" in out
    assert out.strip().endswith("90.0 s  a.py")  # the costliest group only
    path.write_text("not json\n")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite_timeline.py"), "--from", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and f"{path}:1: not a timeline line" in proc.stderr

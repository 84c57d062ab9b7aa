"""Where the test suite's time goes: per worker, per group of tests that share a build, and the
tail where one worker waits for the other.

Usage: python benchmarks/suite_timeline.py [--from FILE] [--top N]

Without --from it runs `make test` with BENCHBOOK_TEST_TIMELINE set (tests/conftest.py writes one
line per test: worker, group, start, end) and then reads that file. The suite's wall time is
the last test's end; a worker's busy time is the sum of its tests; the tail is how long the
first worker to finish then sat idle. A group (tests/worker_groups.py) runs in one worker, so
the longest group is the floor of the wall time however the rest is spread.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_suite(path: Path) -> float:
    env = {**os.environ, "BENCHBOOK_TEST_TIMELINE": str(path)}
    start = time.perf_counter()
    subprocess.run(["make", "test", "PYTHON=" + sys.executable], cwd=ROOT, env=env)
    return time.perf_counter() - start


def read(path: Path) -> list[dict]:
    if not path.is_file():
        raise SystemExit(f"{path}: no such file; expected the timeline a suite run wrote with "
                         "BENCHBOOK_TEST_TIMELINE set to that path")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not a timeline line ({exc}); expected one JSON object per line")
    if not rows:
        raise SystemExit(f"{path}: no test recorded; was the suite run with BENCHBOOK_TEST_TIMELINE set?")
    return rows


def summary(rows: list[dict], top: int) -> str:
    t0 = min(r["start"] for r in rows)
    workers: dict[str, list[dict]] = defaultdict(list)
    groups: dict[str, float] = defaultdict(float)
    for r in rows:
        workers[r["worker"]].append(r)
        groups[r["group"]] += r["stop"] - r["start"]
    ends = {w: max(r["stop"] for r in rs) - t0 for w, rs in workers.items()}
    wall = max(ends.values())
    out = [f"tests: {len(rows)}; from the first test's start to the last test's end: {wall:.0f} s"]
    for w in sorted(workers):
        busy = sum(r["stop"] - r["start"] for r in workers[w])
        out.append(f"  {w}: {len(workers[w])} tests, busy {busy:.0f} s, done at {ends[w]:.0f} s, "
                   f"idle at the end {wall - ends[w]:.0f} s")
    out.append(f"the {top} costliest groups (a group runs in one worker):")
    for g, s in sorted(groups.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"  {s:7.1f} s  {g}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="source", type=Path, help="a timeline file from an earlier run")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    if args.source:
        print(summary(read(args.source), args.top))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "timeline.jsonl"
        seconds = run_suite(path)
        print(f"make test: {seconds:.0f} s (with lint and the virtualenv check)")
        print(summary(read(path), args.top))


if __name__ == "__main__":
    main()

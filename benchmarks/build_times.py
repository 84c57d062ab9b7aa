"""Build times of the book: from clean, no-op, and after one chapter's data changed.

Usage: python benchmarks/build_times.py [--repeat N]
Copies the project to a temporary folder so the working tree is untouched.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tests"))
from projects import copy_project  # noqa: E402  (the same project copy the tests build)


def timed_build(project: Path) -> tuple[float, list[str]]:
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book"], cwd=project,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode:
        sys.exit(proc.stdout[-3000:] + proc.stderr[-3000:])
    return elapsed, re.findall(r"\] executed (\S+) in", proc.stdout + proc.stderr)


def change_one_chapter(project: Path) -> None:
    from benchbook.study import write_checksums

    data = project / "data/h100-dense-vs-moe-mtp"
    run = next(data.glob("raw/h100-moe-mtp/*concurrency8-*.json"))
    doc = json.loads(run.read_text())
    doc["ttfts"] = [t * 1.01 for t in doc["ttfts"]]
    run.write_text(json.dumps(doc))
    write_checksums(data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = {"from clean": [], "no-op": [], "one chapter's data changed": []}
    executed = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            copy_project(project)
            for label, prepare in (("from clean", None), ("no-op", None),
                                   ("one chapter's data changed", change_one_chapter)):
                if prepare:
                    prepare(project)
                seconds, ran = timed_build(project)
                rows[label].append(seconds)
                executed[label] = ran
    print(f"{'build':30s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  chapters executed")
    for label, times in rows.items():
        ran = ", ".join(sorted(executed[label])) or "none"
        print(f"{label:30s} {statistics.median(times):9.1f} {min(times):7.1f} {max(times):7.1f}  "
              f"{len(executed[label])}: {ran}")


if __name__ == "__main__":
    main()

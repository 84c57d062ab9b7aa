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


def change_h100(project: Path) -> None:
    """One H100 run's TTFTs 1 % slower: read by the H100 and Strix Halo chapters and the synthesis."""
    from benchbook.study.folder import write_checksums

    data = project / "data/h100-dense-vs-moe-mtp"
    run = next(data.glob("raw/h100-moe-mtp/*concurrency8-*.json"))
    doc = json.loads(run.read_text())
    doc["ttfts"] = [t * 1.01 for t in doc["ttfts"]]
    run.write_text(json.dumps(doc))
    write_checksums(data)


def change_power_sweep(project: Path) -> None:
    """One nvidia-smi sample of the power sweep 1 W higher: read by its chapter and the synthesis."""
    import gzip

    from benchbook.study.folder import write_checksums

    data = project / "data/power-sweep"
    smi = sorted(data.glob("raw/*/*/nvidia-smi.csv.gz"))[0]
    lines = gzip.decompress(smi.read_bytes()).decode().splitlines(keepends=True)
    fields = lines[1].split(", ")
    fields[3] = f"{float(fields[3].split()[0]) + 1:.2f} W"
    lines[1] = ", ".join(fields)
    smi.write_bytes(gzip.compress("".join(lines).encode(), mtime=0))
    write_checksums(data)


CHANGES = {"h100": change_h100, "power-sweep": change_power_sweep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--change", nargs="+", choices=list(CHANGES), default=list(CHANGES),
                    help="whose data to change after the no-op build (one build each)")
    args = ap.parse_args()
    steps = [("from clean", None), ("no-op", None),
             *((f"{name} data changed", CHANGES[name]) for name in args.change)]
    rows = {label: [] for label, _ in steps}
    executed = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp)
            copy_project(project)
            for label, prepare in steps:
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

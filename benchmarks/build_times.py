"""Build and test times: what a user and a contributor wait for.

Usage: python benchmarks/build_times.py [--repeat N] [--no-suite] [--fresh]

Prints, with the machine it ran on, the median, fastest and slowest of N runs of:
- a build from clean, a no-op build, and builds after one chapter's data changed;
- one chapter rerun with another parameter (`benchbook run`) and the build that shows it;
- the fast test lane (`make test-fast`) and the whole suite (`make test`), once each
  (skip them with --no-suite);
- with --fresh, `make book` in a fresh clone (virtualenv from requirements.lock, then the build).
Each runs on a copy of the project (or a clone), so the working tree is untouched, with
BENCHBOOK_STORE unset, so every execution is real, and with an empty cache folder per repeat
(BENCHBOOK_CACHE_DIR), so the build from clean is what a first build costs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

ENV = {k: v for k, v in os.environ.items() if k != "BENCHBOOK_STORE"}
RERUN = ("strix-halo-baseline", "agents")  # the chapter and the parameter the rerun changes


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
    return elapsed, proc.stdout + proc.stderr


def timed_build(project: Path) -> tuple[float, list[str]]:
    seconds, log = timed([str(BIN / "jupyter-book"), "build", "book"], project)
    return seconds, re.findall(r"\] executed (\S+) in", log)


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


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    mem = next((int(line.split()[1]) // 1024 // 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), 0) if Path("/proc/meminfo").exists() else 0
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu}), {mem} GiB, "
            f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f} at start")


def builds(repeat: int, changes: list[str]) -> tuple[dict, dict]:
    steps = [("build from clean", None), ("no-op build", None),
             *((f"build after {name} data changed", CHANGES[name]) for name in changes)]
    rows, executed = {label: [] for label, _ in steps}, {}
    for label in ("rerun: benchbook run", "rerun: the build that shows it", "rerun: both"):
        rows[label] = []
    for n in range(repeat):
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
            # an empty cache folder (benchbook.site.memo): the build from clean is a first
            # build, then each step finds what the earlier ones of this repeat kept
            ENV["BENCHBOOK_CACHE_DIR"] = cache
            project = Path(tmp)
            copy_project(project)
            for label, prepare in steps:
                if prepare:
                    prepare(project)
                seconds, ran = timed_build(project)
                rows[label].append(seconds)
                executed[label] = ran
            chapter, param = RERUN
            run, _ = timed([str(BIN / "benchbook"), "run", chapter, "-p", param, str(20 + n)], project)
            build, ran = timed_build(project)
            rows["rerun: benchbook run"].append(run)
            rows["rerun: the build that shows it"].append(build)
            rows["rerun: both"].append(run + build)
            executed["rerun: the build that shows it"] = ran
    ENV.pop("BENCHBOOK_CACHE_DIR")
    return rows, executed


def suite() -> dict:
    out = {}
    for label, target in (("test-fast (make test-fast)", "test-fast"), ("suite (make test)", "test")):
        seconds, log = timed(["make", target, "PYTHON=" + sys.executable], ROOT)
        out[label] = ([seconds], summary(log))
    return out


def summary(log: str) -> str:
    """pytest's closing line ('3206 passed, 2 skipped in 577.12s'), not make's last words."""
    lines = [ln.strip("= ") for ln in log.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    return lines[-1] if lines else "no pytest summary in the output"


def fresh() -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        seconds = timed(["make", "book", "PYTHON=python3"], clone)[0]
        return seconds, "virtualenv from requirements.lock, then every chapter"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--change", nargs="+", choices=list(CHANGES), default=list(CHANGES),
                    help="whose data to change after the no-op build (one build each)")
    ap.add_argument("--no-suite", action="store_true", help="skip timing the test suite and the fast lane")
    ap.add_argument("--fresh", action="store_true", help="also time `make book` in a fresh clone")
    args = ap.parse_args()
    print(machine())
    rows, executed = builds(args.repeat, args.change)
    print(f"\n{'':34s} {'median s':>9s} {'min s':>7s} {'max s':>7s}  chapters executed")
    for label, times in rows.items():
        ran = executed.get(label)
        note = "" if ran is None else f"  {len(ran)}: {', '.join(sorted(ran)) or 'none'}"
        print(f"{label:34s} {statistics.median(times):9.1f} {min(times):7.1f} {max(times):7.1f}{note}")
    extra = {} if args.no_suite else suite()
    if args.fresh:
        seconds, note = fresh()
        extra["fresh clone: make book"] = ([seconds], note)
    for label, (times, note) in extra.items():
        print(f"{label:34s} {times[0]:9.1f} {'':7s} {'':7s}  {note}")


if __name__ == "__main__":
    main()

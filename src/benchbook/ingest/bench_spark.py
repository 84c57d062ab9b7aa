"""Reader for the two JSON files of the DGX Spark benchmark harness (`bench-spark`) that are not
`vllm bench serve` results: a run's `meta.json` and the rate sweep's `11-rate-sweep.json`.

The harness (djangodevreng/dgx-spark-benchmarks on GitHub, CC-BY-4.0; its runner itself is not
public, so this follows the files and the repository's README.md as of 2026-11-27) writes, per
model and precision, one folder: llama-benchy tests 01-06, `vllm bench serve` results 07-11,
a power CSV per test, `_runner.log`, and:

- `meta.json`, `bench-spark-meta`: what the harness knew of the server it measured: the model
  repository, the vLLM image and the version the server reported, the server's settings
  (`server_config`: max_model_len, gpu_memory_utilization, kv_cache_dtype, prefix caching,
  the extra vLLM arguments), the machine, driver and VBIOS, and when the run began
  (`generated_at`, with its UTC offset). Table `run_meta`: one row per leaf value, its key
  dotted (`server_config.kv_cache_dtype`), so no key is dropped unseen.
- `11-rate-sweep.json`, `bench-spark-capacity`: the harness's own summary of the sweep: per
  step the configured and achieved rate, completed requests, p50/p95/p99 TTFT, output
  throughput and peak concurrency, and the capacity under each p95 TTFT limit (the highest
  configured rate whose p95 stays under it, or null: no step). Tables `harness_steps` and
  `harness_capacity`; times in seconds. A chapter checks these against what it computes from
  the per-step results, as it checks a write-up's claims: they are the harness's claims.

- `_runner.log`, `bench-spark-runner-log`: the runner's own clock, one `[HH:MM:SS]` line per
  event: `── START 07 ──`, `── END 07 (722s) ──`, and within the sweep one `K: rate 0.3 req/s,
  100 prompts` line as each step begins. Table `harness_events`: one row per such line, with
  its seconds since the log's first line (a time earlier than the one before is taken as the
  next day: the runs last hours and cross midnight; the notes say how often). The power CSVs
  count their `elapsed_s` from a test's START line, so these rows place a power sample, and a
  run, on one clock. The minute-by-minute status lines, the sanity check and the set-up lines
  are not events: ignored, each with its reason.

Counting: `read` = leaf values (meta), steps + limits (capacity) or events (runner log); a
value that is not a number where one is expected is ignored with a reason naming the key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .result import IngestResult
from .tables import conform
from .textio import read_text

FORMAT = "bench-spark-meta"
FORMATS = ("bench-spark-meta", "bench-spark-capacity", "bench-spark-runner-log")
TABLES = ("run_meta", "harness_steps", "harness_capacity", "harness_events")
RUNNER_LOG = "bench-spark-runner-log"

_META_KEYS = ('"vllm_version_reported"', '"server_config"')
_RUN_LINE = re.compile(r"^\[\d{2}:\d{2}:\d{2}\] === bench-spark run ===")
_CLOCK = re.compile(r"^\[(\d{2}):(\d{2}):(\d{2})\] (.*)$")
_EVENT = re.compile(r"^── (START|END) (\d+) (?:\((\d+)s\) )?──$")
_STEP = re.compile(r"^K: rate ([0-9.]+) req/s, (\d+) prompts$")
_IGNORED = ((re.compile(r"^\.\.\. \d+ running: "), "status line (the runner's minute-by-minute progress)"),
            (re.compile(r"^SANITY: |^Sanity-check"), "sanity check line"),
            (re.compile(r"^=== "), "run banner line"))
_STEP_NUMBERS = {"configured_rps": "configured_rps", "achieved_rps": "achieved_rps", "completed": "completed",
                 "total_requests": "total_requests", "ttft_p50_ms": "ttft_p50_s", "ttft_p95_ms": "ttft_p95_s",
                 "ttft_p99_ms": "ttft_p99_s", "output_tps": "output_tps", "peak_concurrent": "peak_in_flight"}


def sniff(head: str, path=None) -> bool:
    """A JSON object with the harness's own keys (never a bench result: no `num_prompts`), or
    the runner's log (its first line `[HH:MM:SS] === bench-spark run ===`)."""
    text = head.lstrip("\ufeff \t\r\n")
    if _RUN_LINE.match(text):
        return True
    if not text.startswith("{") or '"num_prompts"' in text:
        return False
    return _form(text) is not None


def _form(text: str) -> str | None:
    if '"capacity_by_slo_ms"' in text:
        return "bench-spark-capacity"
    if all(k in text for k in _META_KEYS):
        return "bench-spark-meta"
    return None


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    path = Path(path)
    text = read_text(path)
    if _RUN_LINE.match(text.lstrip("\ufeff \t\r\n")):
        return _runner_log(path, text)
    form = _form(text)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg}); expected the harness's "
                          f"{'meta.json' if form == FORMAT else '11-rate-sweep.json'} object") from None
    if not isinstance(doc, dict) or form is None:
        raise IngestError(path, "line 1", "expected a JSON object with the harness's keys (meta.json: "
                          "vllm_version_reported and server_config; the sweep summary: capacity_by_slo_ms)")
    res = IngestResult(path=str(path), format=form)
    if form == FORMAT:
        rows = [{"source_file": str(path), "key": k, "value": "" if v is None else str(v)}
                for k, v in _leaves(doc)]
        res.read = len(rows)
        res.tables["run_meta"] = conform(pd.DataFrame(rows, columns=["source_file", "key", "value"]), "run_meta")
        return res
    steps, caps = _capacity(doc, path, res)
    res.tables["harness_steps"] = conform(pd.DataFrame(steps), "harness_steps")
    res.tables["harness_capacity"] = conform(pd.DataFrame(caps), "harness_capacity")
    return res


def _leaves(doc, prefix=""):
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _leaves(v, key + ".")
        else:
            yield key, (json.dumps(v) if isinstance(v, list) else v)


def _capacity(doc: dict, path: Path, res: IngestResult) -> tuple[list[dict], list[dict]]:
    common = {"source_file": str(path), "model": doc.get("model"), "profile": doc.get("profile")}
    steps = []
    for i, step in enumerate(doc.get("steps") or []):
        row = dict(common, step=i + 1)
        bad = _numbers(step, _STEP_NUMBERS, row, f"steps[{i}]")
        if bad:
            res.ignore(bad)
            continue
        steps.append(row)
        res.read += 1
    caps = []
    by_limit = doc.get("capacity_by_slo_ms")
    if not isinstance(by_limit, dict):
        raise IngestError(path, "capacity_by_slo_ms", "expected a mapping of p95 TTFT limits in ms to a step or null")
    for ms, step in by_limit.items():
        try:
            limit_s = float(ms) / 1000
        except ValueError:
            res.ignore(f"capacity_by_slo_ms: key {ms!r} is not a limit in milliseconds")
            continue
        row = dict(common, limit_s=limit_s, met=step is not None)
        if step is not None:
            bad = _numbers(step, _STEP_NUMBERS, row, f"capacity_by_slo_ms.{ms}")
            if bad:
                res.ignore(bad)
                continue
        caps.append(row)
        res.read += 1
    if doc.get("aborted_at_rps") is not None:
        res.notes.append(f"the harness aborted the sweep at {doc['aborted_at_rps']} req/s")
    return steps, caps


def _numbers(src: dict, names: dict, row: dict, where: str) -> str | None:
    """Copy the numbers of `src` into `row` (ms become s); the reason when one is not a number."""
    for key, col in names.items():
        v = src.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"{where}.{key}: {v!r} is not a number"
        row[col] = v / 1000 if key.endswith("_ms") else v
    return None


def _runner_log(path: Path, text: str) -> IngestResult:
    """The runner's events (START, END, sweep steps) on one clock from its first line."""
    res = IngestResult(path=str(path), format=RUNNER_LOG)
    rows, first, day, last, wraps = [], None, 0, None, 0
    for n, raw in enumerate(text.splitlines(), 1):
        m = _CLOCK.match(raw.strip())
        if not m:
            if raw.strip():
                res.ignore("line without the runner's [HH:MM:SS] clock")
            continue
        clock = int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3])
        if last is not None and clock < last:
            day, wraps = day + 1, wraps + 1
        last = clock
        at = clock + 86400 * day
        first = at if first is None else first
        what = m[4].strip()
        ev, step = _EVENT.match(what), _STEP.match(what)
        if ev:
            rows.append({"source_file": str(path), "line": n, "clock": f"{m[1]}:{m[2]}:{m[3]}",
                         "elapsed_s": float(at - first), "event": ev[1].lower(), "test": ev[2],
                         "duration_s": float(ev[3]) if ev[3] else None})
        elif step:
            test = next((r["test"] for r in reversed(rows) if r["event"] == "start"), None)
            rows.append({"source_file": str(path), "line": n, "clock": f"{m[1]}:{m[2]}:{m[3]}",
                         "elapsed_s": float(at - first), "event": "step", "test": test,
                         "request_rate": float(step[1]), "prompts": int(step[2])})
        else:
            res.ignore(next((why for rx, why in _IGNORED if rx.match(what)), "set-up or other runner line"))
    res.read = len(rows)
    if wraps:
        res.notes.append(f"the clock passed midnight {wraps} time(s): a time earlier than the one before "
                         "is taken as the next day")
    cols = ["source_file", "line", "clock", "elapsed_s", "event", "test", "duration_s", "request_rate", "prompts"]
    res.tables["harness_events"] = conform(pd.DataFrame(rows, columns=cols), "harness_events")
    return res


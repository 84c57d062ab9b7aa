"""Reader for `vllm bench serve --save-result` JSON (and the old `benchmark_serving.py`).

A file holds one result object, or several written by `--append-result`. When the file
kept the per-request arrays (`--save-detailed`, or always for the old script), summary
metrics are recomputed from them the way vLLM does, so a study can check what was reported.

Counting: `read` = result objects + per-request entries. Failed requests are read and kept
(ok=False). Requests with impossible values are kept too (ok=False, error says why) but
counted as ignored, because they are excluded from the computed metrics.

Run ids: a file with one result object gives the run id `<prefix>` (the manifest's name,
else the file name without `.json`/`.json.gz`); a file with several (`--append-result`, or
one object per line as in a JSONL of runs) gives `<prefix>#<k>`, k = 1, 2, ... in file
order. Ids come from the position only, never from a `label`, `run_name` or `name` key in
the object, so two objects with the same label keep distinct ids, and the same file always
gives the same ids. Each object keeps its own settings (date, backend, label, model_id,
request_rate, max_concurrency, ...); its other top-level keys, which no column holds (a
script's `deployment` or `gpu`, `tokenizer_id`, ...), go to the `extra`
column as compact JSON, so none is dropped unseen.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from . import load_pattern
from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import conform
from .textio import read_bytes, read_text

FORMAT = "vllm-bench-serve"
TABLES = ("runs", "requests", "run_stats")

EXPECTED = "a `vllm bench serve --save-result` JSON object"
_STAT_KEY = re.compile(r"^(mean|median|std|p[0-9.]+)_([a-z0-9_]+)_ms$")
_CORE_ARRAYS = ("input_lens", "output_lens", "ttfts", "itls")
_OTHER_ARRAYS = ("start_times", "errors", "latencies", "generated_texts")
_LATENCIES = ("ttft", "tpot", "itl", "e2el")
# Top-level keys a column or another table holds (with the `*_ms` statistics and the
# per-request arrays); `endpoint_type` only when it stands in for `backend`.
_HELD = {
    "date", "backend", "label", "model_id", "num_prompts", "completed", "failed", "max_concurrency",
    "request_rate", "duration", "output_throughput", "request_throughput", "total_input_tokens",
    "total_output_tokens", "spec_decode_acceptance_rate", "spec_decode_acceptance_length",
    "spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens",
    "spec_decode_per_position_acceptance_rates", "burstiness", "max_concurrent_requests",
}
_MAX_TTFT_S = 1e5
# Reported values that can never be negative (checked so a corrupt file fails loudly).
_NON_NEGATIVE = (
    "num_prompts", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput",
    "output_throughput", "total_token_throughput",
    "spec_decode_acceptance_rate", "spec_decode_acceptance_length",
    "spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens",
)


# ---------------------------------------------------------------- detection


def sniff(head: str, path: str | Path | None = None) -> bool:
    """True for a bench-serve result object.

    Rejects llama-bench JSON (a top-level array) and `vllm bench throughput` output
    (which has `num_requests`/`requests_per_second`, never `num_prompts`).
    """
    text = head.lstrip("\ufeff \t\r\n")
    if not text.startswith("{") or '"num_prompts"' not in text:
        return False
    return any(k in text for k in ('"completed"', '"total_output_tokens"', '"request_throughput"'))


# ---------------------------------------------------------------- entry point


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read every result object of the file into the runs, requests and run_stats tables."""
    path = Path(path)
    result = IngestResult(path=str(path), format=FORMAT)
    objects = _decode_fast(read_bytes(path)) or _decode_objects(read_text(path), path)
    base = run_prefix or _stem(path)
    runs, requests, stats = [], [], []
    for k, (line, obj) in enumerate(objects, 1):
        run_id = base if len(objects) == 1 else f"{base}#{k}"
        run, req, st = _read_object(obj, run_id, (path, line), result)
        runs.append(run)
        stats.extend(st)
        if req is not None:
            requests.append(req)
    result.read += len(objects)
    result.tables = {
        "runs": conform(pd.DataFrame(runs), "runs"),
        "requests": conform(pd.concat(requests, ignore_index=True) if requests else pd.DataFrame(), "requests"),
        "run_stats": conform(pd.DataFrame(stats), "run_stats"),
    }
    return result


def _stem(path: Path) -> str:
    """File name without `.json`/`.json.gz`: vLLM's default names carry the run's identity."""
    name = path.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem


# ---------------------------------------------------------------- JSON decoding


def _decode_fast(raw: bytes) -> list[tuple[int, object]] | None:
    """orjson for the common one-object UTF-8 file (several times faster than json).

    Anything else (several `--append-result` objects, NaN, UTF-16, broken JSON) returns
    None and takes the `json` path, which also gives the line and column of an error.
    """
    try:
        value = orjson.loads(raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw)
    except orjson.JSONDecodeError:
        return None
    return [(1, value)]


def _decode_objects(text: str, path: Path) -> list[tuple[int, object]]:
    """(start line, value) of each top-level JSON value; `--append-result` writes several."""
    decoder = json.JSONDecoder()
    blank = re.compile(r"\s*")
    out, pos = [], blank.match(text, 0).end()
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise IngestError(
                path, f"line {exc.lineno}, column {exc.colno}",
                f"invalid or truncated JSON ({exc.msg}); expected {EXPECTED}",
            ) from exc
        out.append((text.count("\n", 0, pos) + 1, value))
        pos = blank.match(text, end).end()
    if not out:
        raise IngestError(path, None, f"file is empty; expected {EXPECTED}")
    return out


def _where(ctx, key: str | None = None) -> str:
    line = f"line {ctx[1]}"
    return f"{line}, key {key!r}" if key else line


def _check_core(obj, ctx) -> None:
    """Fail early on JSON that is not a bench result, naming what is missing."""
    if not isinstance(obj, dict):
        raise IngestError(ctx[0], _where(ctx), f"JSON value is a {type(obj).__name__}; expected {EXPECTED}")
    if "completed" in obj or ("num_prompts" in obj and "duration" in obj):
        return
    missing = [k for k in ("completed", "num_prompts", "duration") if k not in obj]
    raise IngestError(
        ctx[0], _where(ctx),
        f"missing key(s) {', '.join(map(repr, missing))}: {EXPECTED} has 'completed' "
        "(or 'num_prompts' and 'duration' in old benchmark_serving.py output)",
    )


# ---------------------------------------------------------------- scalar values


def _num(obj: dict, key: str, ctx) -> float:
    """A reported non-negative number, NaN when absent or null; errors name the key."""
    value = obj.get(key)
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IngestError(ctx[0], _where(ctx, key), f"expected a number, found {value!r}")
    if value < 0:
        raise IngestError(ctx[0], _where(ctx, key), f"negative value {value!r}; expected >= 0")
    return float(value)


def _int(obj: dict, key: str, ctx):
    value = _num(obj, key, ctx)
    if math.isnan(value):
        return pd.NA
    if value != int(value):
        raise IngestError(ctx[0], _where(ctx, key), f"expected a whole number, found {value!r}")
    return int(value)


def _str(value):
    return pd.NA if value is None else str(value)


def _request_rate(obj: dict, ctx) -> float:
    """vLLM writes "inf" for all-at-once; null means not recorded."""
    value = obj.get("request_rate")
    if not isinstance(value, str):
        return _num(obj, "request_rate", ctx)
    try:
        number = float(value)
    except ValueError:
        raise IngestError(ctx[0], _where(ctx, "request_rate"), f"expected a number or 'inf', found {value!r}")
    return _num({"request_rate": number}, "request_rate", ctx)


# ---------------------------------------------------------------- one result object


def _read_object(obj, run_id: str, ctx, result: IngestResult):
    """One runs row, its requests frame (or None) and its run_stats rows."""
    _check_core(obj, ctx)
    for key in _NON_NEGATIVE:
        _num(obj, key, ctx)
    run = _run_header(obj, run_id, ctx)
    stats = _reported_stats(obj, run_id, ctx)
    arrays = _per_request_arrays(obj, ctx)
    if arrays is None:
        run.update(_reported_summary(obj, ctx), summary_only=True)
        return run, None, stats
    req = _request_values(arrays, ctx, result)
    result.read += len(req["ttft_s"])
    duration = run["duration_s"]
    if math.isnan(duration):
        duration = _duration_from_starts(req)
        run["duration_s"] = duration
    summary = _computed_summary(req, duration)
    run.update(summary, summary_only=False)
    stats.extend(_computed_stats(summary, run_id))
    return run, _requests_frame(req, run_id), stats


def _run_header(obj: dict, run_id: str, ctx) -> dict:
    """Run identity and settings, the same whether or not the file kept per-request data."""
    num_prompts, completed = _int(obj, "num_prompts", ctx), _int(obj, "completed", ctx)
    failed = _int(obj, "failed", ctx)  # only since 0.12
    if failed is pd.NA and num_prompts is not pd.NA and completed is not pd.NA:
        failed = num_prompts - completed
    rate = _num(obj, "spec_decode_acceptance_rate", ctx)
    cap, request_rate = _int(obj, "max_concurrency", ctx), _request_rate(obj, ctx)
    return {
        "run_id": run_id,
        "source_file": str(ctx[0]),
        "format": FORMAT,
        "date": _str(obj.get("date")),
        "backend": _str(obj.get("backend") or obj.get("endpoint_type")),  # 0.9.2-0.10: endpoint_type only
        "label": _str(redact(obj.get("label"))),  # free text: may carry hosts or keys
        "model_id": _str(redact(obj.get("model_id"))),  # may be a local path or URL
        "num_prompts": num_prompts,
        "completed": completed,
        "failed": failed,
        "max_concurrency": cap,
        "request_rate": request_rate,
        "load": load_pattern.pattern(cap, request_rate, cap_recorded="max_concurrency" in obj),
        "burstiness": _num(obj, "burstiness", ctx),
        "peak_in_flight": _int(obj, "max_concurrent_requests", ctx),  # since vLLM 0.11
        "duration_s": _num(obj, "duration", ctx),
        "spec_acceptance_rate": rate / 100.0,  # the file has a percent
        "spec_acceptance_length": _num(obj, "spec_decode_acceptance_length", ctx),
        "spec_num_drafts": _int(obj, "spec_decode_num_drafts", ctx),
        "spec_draft_tokens": _int(obj, "spec_decode_draft_tokens", ctx),
        "spec_accepted_tokens": _int(obj, "spec_decode_accepted_tokens", ctx),
        "extra": _extra(obj),
    }


def _extra(obj: dict):
    """The object's top-level keys no column holds, as compact JSON in file order (a list
    or object is named with its size, not copied); missing when there are none."""
    held = _HELD | set(_CORE_ARRAYS + _OTHER_ARRAYS) | (set() if obj.get("backend") else {"endpoint_type"})
    out = {}
    for key, value in obj.items():
        if key in held or _STAT_KEY.match(key):
            continue
        if isinstance(value, (list, dict)):
            value = f"<{'list' if isinstance(value, list) else 'object'} of {len(value)}, not kept>"
        out[key] = redact(value) if isinstance(value, str) else value  # free text: may name hosts
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")) if out else pd.NA


def _reported_summary(obj: dict, ctx) -> dict:
    """Summary columns taken from the file when it has no per-request arrays (ms -> s)."""
    out = {
        f"{s}_{m}_s": _num(obj, f"{s}_{m}_ms", ctx) / 1000.0
        for m in _LATENCIES for s in ("mean", "median", "p99")
    }
    out.update(
        output_tps=_num(obj, "output_throughput", ctx),
        request_tps=_num(obj, "request_throughput", ctx),
        prefill_tps=math.nan,
        total_input_tokens=_int(obj, "total_input_tokens", ctx),
        total_output_tokens=_int(obj, "total_output_tokens", ctx),
    )
    return out


def _reported_stats(obj: dict, run_id: str, ctx) -> list[dict]:
    """Every `{stat}_{metric}_ms` key in the file, plus the per-position spec rates."""
    rows = []
    for key in obj:
        m = _STAT_KEY.match(key)
        if m:
            value = _num(obj, key, ctx) / 1000.0
            rows.append(_stat_row(run_id, m.group(2), m.group(1), value, "reported"))
    positions = obj.get("spec_decode_per_position_acceptance_rates")
    if positions is not None:
        values = _float_array(positions, "spec_decode_per_position_acceptance_rates", ctx)
        # Oddity: runs has no per-position columns, so these live in run_stats (fraction, not seconds).
        rows += [_stat_row(run_id, f"spec_accept_pos{i}", "rate", v, "reported") for i, v in enumerate(values)]
    return rows


def _stat_row(run_id, metric, stat, value, origin) -> dict:
    return {"run_id": run_id, "metric": metric, "stat": stat, "value_s": float(value), "origin": origin}


# ---------------------------------------------------------------- per-request arrays


def _per_request_arrays(obj: dict, ctx) -> dict | None:
    """The per-request lists, all of one length; None for a summary-only file.

    0.33 keeps `latencies` even without `--save-detailed`, so only the core lists decide.
    """
    present = [k for k in _CORE_ARRAYS if obj.get(k) is not None]
    if not present:
        return None
    missing = [k for k in _CORE_ARRAYS if k not in present]
    if missing:
        raise IngestError(
            ctx[0], _where(ctx, missing[0]),
            f"per-request array(s) {', '.join(map(repr, missing))} missing while {present[0]!r} is present",
        )
    arrays = {k: obj[k] for k in _CORE_ARRAYS + _OTHER_ARRAYS if obj.get(k) is not None}
    for key, value in arrays.items():
        if not isinstance(value, list):
            raise IngestError(ctx[0], _where(ctx, key), f"expected a per-request list, found {type(value).__name__}")
    _check_lengths(arrays, ctx)
    return arrays


def _check_lengths(arrays: dict, ctx) -> None:
    """Name the one list whose length differs from the others (majority wins)."""
    lengths = {k: len(v) for k, v in arrays.items()}
    expected = Counter(lengths.values()).most_common(1)[0][0]
    for key, n in lengths.items():
        if n != expected:
            others = [k for k, m in lengths.items() if m == expected]
            raise IngestError(
                ctx[0], _where(ctx, key),
                f"per-request array has {n} entries; expected {expected} like {', '.join(others)}",
            )


def _float_array(values: list, key: str, ctx) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise IngestError(ctx[0], _where(ctx, key), f"expected a list of numbers ({exc})") from exc


def _itl_segments(itls: list, ctx) -> tuple[np.ndarray, np.ndarray]:
    """All inter-token gaps flattened (vectorised) and each request's count of them."""
    for i, x in enumerate(itls):
        if x is not None and not isinstance(x, list):
            raise IngestError(ctx[0], _where(ctx, "itls"), f"entry {i} is {x!r}; expected a list of seconds")
    itls = [x or [] for x in itls]
    lens = np.fromiter(map(len, itls), dtype=np.int64, count=len(itls))
    try:
        flat = np.fromiter(itertools.chain.from_iterable(itls), dtype=float, count=int(lens.sum()))
    except (TypeError, ValueError) as exc:
        raise IngestError(ctx[0], _where(ctx, "itls"), f"expected lists of numbers ({exc})") from exc
    return flat, lens


def _segment_reduce(ufunc, flat: np.ndarray, lens: np.ndarray, fill: float) -> np.ndarray:
    """ufunc.reduce over each request's gaps; `fill` for requests with none."""
    out = np.full(len(lens), fill)
    nonempty = lens > 0
    if nonempty.any():
        starts = np.cumsum(lens) - lens
        out[nonempty] = ufunc.reduceat(flat, starts[nonempty])
    return out


def _request_values(arrays: dict, ctx, result: IngestResult) -> dict:
    """Per-request columns as numpy arrays, with ok/error decided and bad values flagged."""
    inp = _float_array(arrays["input_lens"], "input_lens", ctx)
    out = _float_array(arrays["output_lens"], "output_lens", ctx)
    ttft = _float_array(arrays["ttfts"], "ttfts", ctx)
    flat, lens = _itl_segments(arrays["itls"], ctx)
    n = len(ttft)
    itl_sum = _segment_reduce(np.add, flat, lens, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        itl_mean = np.where(lens > 0, itl_sum / np.maximum(lens, 1), np.nan)
        if "latencies" in arrays:  # 0.33 records the latency itself
            e2el = _float_array(arrays["latencies"], "latencies", ctx)
        else:
            e2el = ttft + itl_sum
        tpot = np.where(out > 1, (e2el - ttft) / np.maximum(out - 1, 1), np.nan)
    start = _float_array(arrays["start_times"], "start_times", ctx) if "start_times" in arrays else np.full(n, np.nan)
    values = {
        "input_tokens": inp, "output_tokens": out, "ttft_s": ttft, "tpot_s": tpot, "e2el_s": e2el,
        "itl_mean_s": itl_mean, "itl_max_s": _segment_reduce(np.maximum, flat, lens, np.nan),
        "n_chunks": lens, "start_s": start, "itl_flat": flat, "itl_lens": lens,
    }
    _decide_ok(values, arrays.get("errors"), _segment_reduce(np.minimum, flat, lens, 0.0), result)
    return values


def _decide_ok(values: dict, errors: list | None, itl_min: np.ndarray, result: IngestResult) -> None:
    """ok/error per request: vLLM's own failures first, then impossible numbers."""
    out, ttft = values["output_tokens"], values["ttft_s"]
    n = len(ttft)
    if errors is not None:
        error = np.array([redact(str(e)) if e else "" for e in errors], dtype=object)  # server text
        failed = error != ""
    else:  # old files without `errors`: vLLM marks a failure by 0 tokens / 0.0 s
        failed = (out == 0) | (ttft == 0)
        error = np.where(failed, "no output (output_len 0 or ttft 0) and no error text", "").astype(object)
    bad = np.zeros(n, dtype=bool)
    checks = (
        ("input_len", values["input_tokens"], "", math.inf),
        ("output_len", out, "", math.inf),
        ("ttft", ttft, " s", _MAX_TTFT_S),
        ("itl", itl_min, " s", math.inf),
        ("e2el", values["e2el_s"], " s", math.inf),  # after itl: it is ttft + sum(itls)
    )
    for name, v, unit, limit in checks:
        for problem, mask in (("not a number", np.isnan(v)), ("negative", v < 0), ("too large", v > limit)):
            for i in np.flatnonzero(mask & ~failed & ~bad):
                detail = f"{name} {problem}" + ("" if problem == "not a number" else f" ({v[i]:g}{unit})")
                error[i] = detail
                bad[i] = True
                result.ignore(f"request excluded from metrics: {name} {problem}")
    values["ok"] = ~failed & ~bad
    values["error"] = np.where(values["ok"], None, error)


def _duration_from_starts(req: dict) -> float:
    """Fallback when `duration` is absent: first start to last finish (perf_counter seconds)."""
    start, ok = req["start_s"], req["ok"]
    ends = (start + req["e2el_s"])[ok]
    if not np.isfinite(start).any() or not np.isfinite(ends).any():
        return math.nan
    return float(np.nanmax(ends) - np.nanmin(start))


def _stats(values: np.ndarray) -> dict:
    """mean, median and linear p99 as vLLM computes them (NaN when there is nothing)."""
    if len(values) == 0:
        return {"mean": math.nan, "median": math.nan, "p99": math.nan}
    median, p99 = np.percentile(values, [50, 99])  # one partition pass, same values as median()
    return {"mean": float(np.mean(values)), "median": float(median), "p99": float(p99)}


def _computed_summary(req: dict, duration: float) -> dict:
    """The runs summary columns recomputed from successful requests."""
    ok, out, inp, ttft = req["ok"], req["output_tokens"], req["input_tokens"], req["ttft_s"]
    samples = {
        "ttft": ttft[ok],
        "tpot": req["tpot_s"][ok & (out > 1)],
        "itl": req["itl_flat"] if ok.all() else req["itl_flat"][np.repeat(ok, req["itl_lens"])],
        "e2el": req["e2el_s"][ok],
    }
    summary = {f"{s}_{m}_s": v for m, vals in samples.items() for s, v in _stats(vals).items()}
    total_out = int(out[ok].sum())
    has_ttft = ok & (ttft > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        summary.update(
            total_input_tokens=int(inp[ok].sum()),
            total_output_tokens=total_out,
            output_tps=total_out / duration if duration > 0 else math.nan,
            request_tps=int(ok.sum()) / duration if duration > 0 else math.nan,
            prefill_tps=float(np.median(inp[has_ttft] / ttft[has_ttft])) if has_ttft.any() else math.nan,
        )
    return summary


def _computed_stats(summary: dict, run_id: str) -> list[dict]:
    return [
        _stat_row(run_id, m, s, summary[f"{s}_{m}_s"], "computed")
        for m in _LATENCIES for s in ("mean", "median", "p99")
    ]


def _requests_frame(req: dict, run_id: str) -> pd.DataFrame:
    n = len(req["ttft_s"])
    cols = ("input_tokens", "output_tokens", "ttft_s", "tpot_s", "e2el_s", "itl_mean_s",
            "itl_max_s", "n_chunks", "start_s", "ok", "error")
    frame = pd.DataFrame({"run_id": run_id, "request_index": np.arange(n), **{c: req[c] for c in cols}})
    return conform(frame, "requests")

"""Tidy table schemas: one place that says what every column means and in which unit.

Readers return DataFrames conformed to these schemas, so analysis code never has to
guess units. Times are stored in seconds, rates in tokens per second, powers in watts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .vllm_templates import fact_names as _boot_facts
from .vllm_templates import formats as _log_formats


@dataclass(frozen=True)
class Column:
    name: str
    # pandas dtype: "string", "category" (text repeated on many rows of a log, stored once),
    # "Int64", "float64", "boolean", "object"
    dtype: str
    doc: str
    required: bool = False


def _cols(*specs: tuple) -> tuple[Column, ...]:
    return tuple(Column(*s) for s in specs)


_STATS = ("mean", "median", "p99")
_LATENCIES = ("ttft", "tpot", "itl", "e2el")

SCHEMAS: dict[str, tuple[Column, ...]] = {
    # One row per benchmark run (one `vllm bench serve` result object).
    "runs": _cols(
        ("run_id", "string", "unique id of the run within a study", True),
        ("source_file", "string", "path of the raw file, relative to the data folder", True),
        ("format", "string", "detected native format, e.g. vllm-bench-serve", True),
        ("summary_only", "boolean", "True when the file had no per-request arrays", True),
        ("date", "string", "date string written by the tool (local time)"),
        ("backend", "string", "client backend (openai, vllm, ...)"),
        ("label", "string", "label given to the benchmark run"),
        ("model_id", "string", "model name sent to the server"),
        ("num_prompts", "Int64", "prompts requested"),
        ("completed", "Int64", "successful requests"),
        ("failed", "Int64", "failed requests"),
        ("max_concurrency", "Int64", "client-side concurrency cap (None = unbounded)"),
        ("request_rate", "float64", "requests/s offered (inf = all at once)"),
        ("load", "string", "load pattern from the file's own fields: single-stream, concurrency, request-rate, "
                           "all-at-once or unknown (benchbook.ingest.load_pattern)"),
        ("burstiness", "float64", "burstiness of an open-loop run's arrivals (1 = Poisson)"),
        ("peak_in_flight", "Int64", "most requests in flight at once (max_concurrent_requests); since vLLM 0.11"),
        ("duration_s", "float64", "benchmark wall time, seconds"),
        ("total_input_tokens", "Int64", "sum of input tokens of successful requests"),
        ("total_output_tokens", "Int64", "sum of output tokens of successful requests"),
        ("output_tps", "float64", "aggregate output tokens/s = total output / duration"),
        ("request_tps", "float64", "completed requests per second"),
        ("prefill_tps", "float64", "median over requests of input tokens / TTFT"),
        *((f"{s}_{m}_s", "float64", f"{s} {m.upper()}, seconds") for m in _LATENCIES for s in _STATS),
        ("spec_acceptance_rate", "float64", "speculative acceptance, fraction 0-1 (file has percent)"),
        ("spec_acceptance_length", "float64", "1 + accepted / drafts"),
        ("spec_num_drafts", "Int64", "speculative drafts in the run"),
        ("spec_draft_tokens", "Int64", "draft tokens proposed"),
        ("spec_accepted_tokens", "Int64", "draft tokens accepted"),
        ("extra", "string", "the result object's other top-level keys (those no column above holds, e.g. "
                            "tokenizer_id, or a script's own deployment, gpu), as compact JSON; "
                            "a list or object there is named, not copied"),
    ),
    # One row per request of a run that kept its per-request arrays.
    "requests": _cols(
        ("run_id", "string", "run the request belongs to", True),
        ("request_index", "Int64", "position in the file's arrays", True),
        ("input_tokens", "Int64", "prompt tokens"),
        ("output_tokens", "Int64", "generated tokens (0 when failed)"),
        ("ttft_s", "float64", "time to first token, seconds"),
        ("tpot_s", "float64", "(e2el - ttft) / (output_tokens - 1), seconds"),
        ("e2el_s", "float64", "end-to-end latency, seconds"),
        ("itl_mean_s", "float64", "mean inter-token latency of this request, seconds"),
        ("itl_max_s", "float64", "largest inter-token gap of this request, seconds"),
        ("n_chunks", "Int64", "streamed chunks after the first (len of itls)"),
        ("start_s", "float64", "perf_counter start time, seconds (arbitrary origin)"),
        ("ok", "boolean", "request succeeded", True),
        ("error", "string", "error text of a failed request"),
    ),
    # One row per summary statistic a file reported (every percentile key present).
    "run_stats": _cols(
        ("run_id", "string", "run the statistic belongs to", True),
        ("metric", "string", "ttft, tpot, itl, e2el, ...", True),
        ("stat", "string", "mean, median, std, p50, p99, p99.9, ...", True),
        ("value_s", "float64", "value in seconds (the file has milliseconds)", True),
        ("origin", "string", "reported (from the file) or computed (from requests)", True),
    ),
    # One row per llama-bench test, and one per run that crashed (status "failed"; the
    # required test and rate columns may be empty on that row only, see _EMPTY_WHEN).
    "llama_bench": _cols(
        ("run_id", "string", "id of the test row within the study", True),
        ("source_file", "string", "raw file, relative to the data folder", True),
        ("format", "string", "llama-bench-json, -jsonl, -csv or -md", True),
        ("backend", "string", "backend as llama-bench reports it (ROCm, Vulkan, CUDA, ...)"),
        ("build_commit", "string", "llama.cpp commit"),
        ("build_number", "Int64", "llama.cpp build number"),
        ("model", "string", "model type / description"),
        ("model_filename", "string", "GGUF file name"),
        ("model_size_bytes", "Int64", "model size, bytes"),
        ("model_n_params", "Int64", "parameter count"),
        ("n_gpu_layers", "Int64", "layers offloaded"),
        ("flash_attn", "Int64", "-1 auto, 0 off, 1 on"),
        ("params", "string", "other non-default parameters, as key=value;..."),
        ("test", "string", "pp or tg (or pp+tg)", True),
        ("n_prompt", "Int64", "prompt tokens of the test", True),
        ("n_gen", "Int64", "generated tokens of the test", True),
        ("n_depth", "Int64", "context depth before the test", True),
        ("avg_ts", "float64", "mean tokens/s over repetitions", True),
        ("stddev_ts", "float64", "sample standard deviation of tokens/s"),
        ("n_samples", "Int64", "repetitions"),
        ("test_time", "string", "UTC time of the test"),
        ("status", "string", "ok (a measured test) or failed (a run that crashed: no rate, avg_ts NaN)"),
        ("error", "string", "why a failed run failed, one line (e.g. terminate called after throwing "
                            "an instance of 'vk::DeviceLostError' — what(): ...); empty when ok"),
    ),
    # One row per periodic engine stats line of a vLLM server log: a window of one stats
    # interval (VLLM_LOG_STATS_INTERVAL, 10 s by default; V0 5 s), measured per log and engine
    # from `gap_s` (ingest.vllm_log.stats_intervals), never assumed.
    "windows": _cols(
        ("source_file", "category", "raw log, relative to the data folder", True),
        ("line", "Int64", "line number in the log (1-based)", True),
        ("time", "string", "timestamp as printed (MM-DD HH:MM:SS; no year)", True),
        ("timestamp", "datetime64[ns]", "when the line carries an RFC 3339 prefix (docker logs -t, kubectl "
                                        "--timestamps): that wall time as written, offset dropped (UTC for a "
                                        "Z); otherwise the time with the year from the manifest's date, if known"),
        ("gap_s", "float64", "seconds since the previous stats line of the same process and engine in the log (by "
                             "the RFC 3339 times where both lines have one, else by the printed times, to the "
                             "second); empty on an engine's first line or where the time goes back. The log's "
                             "stats interval is the median of these gaps"),
        ("process", "category", "process tag, e.g. APIServer, EngineCore_DP0"),
        ("engine", "category", "engine index ('000') or 'aggregated'"),
        ("prompt_tps", "float64", "average prompt throughput over the window, tokens/s", True),
        ("generation_tps", "float64", "average generation throughput over the window, tokens/s", True),
        ("running", "Int64", "requests running", True),
        ("waiting", "Int64", "requests waiting"),
        ("swapped", "Int64", "requests swapped (V0 logs only)"),
        ("preemptions", "Int64", "preemptions in the window"),
        ("deferred", "Int64", "deferred requests (0.20+)"),
        ("kv_usage", "float64", "KV cache usage, fraction 0-1 (the log prints a percent)"),
        ("prefix_hit_rate", "float64", "prefix cache hit rate, fraction 0-1"),
        ("log_format", "category", "which template matched: " + ", ".join(_log_formats("stats"))),
    ),
    # One row per uvicorn access line (a completed HTTP request).
    "access": _cols(
        ("source_file", "category", "raw log, relative to the data folder", True),
        ("line", "Int64", "line number in the log", True),
        ("method", "category", "HTTP method", True),
        ("path", "category", "request path, e.g. /v1/chat/completions", True),
        ("status", "Int64", "HTTP status code", True),
        ("client", "category", "client address (redacted when private)"),
        ("window_time", "category", "time of the next stats line: access lines carry no timestamp"),
        ("window_line", "Int64", "line of that stats line"),
    ),
    # Speculative decoding: a `SpecDecoding metrics:` log line, or counters from /metrics.
    "spec_decode": _cols(
        ("source_file", "string", "raw file, relative to the data folder", True),
        ("origin", "string", "log-line, prometheus or prometheus-delta", True),
        ("line", "Int64", "line number (log lines) or dump index (prometheus)"),
        ("time", "string", "timestamp as printed, if any"),
        ("num_drafts", "Int64", "drafts (forward passes with speculation)"),
        ("draft_tokens", "Int64", "draft tokens proposed"),
        ("accepted_tokens", "Int64", "draft tokens accepted"),
        ("mean_acceptance_length", "float64", "1 + accepted / drafts, as printed or computed"),
        ("acceptance_rate", "float64", "accepted / draft tokens, fraction 0-1"),
        ("accepted_tps", "float64", "accepted tokens/s over the window"),
        ("drafted_tps", "float64", "drafted tokens/s over the window"),
        ("per_position", "string", "acceptance per draft position, comma-separated fractions"),
    ),
    # Engine start-up facts, one row per fact (long form: facts differ between versions).
    "boot": _cols(
        ("source_file", "string", "raw log, relative to the data folder", True),
        ("line", "Int64", "line number in the log", True),
        ("fact", "string", "one of " + ", ".join(_boot_facts()), True),
        ("value", "string", "the value as printed", True),
        ("value_num", "float64", "the value as a number, where it is one"),
        ("unit", "string", "unit of value_num"),
    ),
    # A benchmark harness's record of the server it measured (bench-spark's meta.json), one row
    # per value: benchbook.ingest.bench_spark.
    "run_meta": _cols(
        ("source_file", "string", "the harness's file, relative to the data folder", True),
        ("key", "string", "the value's key, dotted below the top level (server_config.kv_cache_dtype)", True),
        ("value", "string", "the value as written (a list as JSON; empty for null)"),
    ),
    # A harness's own summary of a request-rate sweep, per step (bench-spark's 11-rate-sweep.json).
    "harness_steps": _cols(
        ("source_file", "string", "the summary file, relative to the data folder", True),
        ("step", "Int64", "the step's place in the summary, from 1", True),
        ("model", "string", "model as the summary names it"),
        ("profile", "string", "the harness's profile (precision) name"),
        ("configured_rps", "float64", "request rate offered, requests/s"),
        ("achieved_rps", "float64", "requests completed per second"),
        ("completed", "Int64", "requests completed"),
        ("total_requests", "Int64", "requests sent"),
        ("ttft_p50_s", "float64", "median time to first token, s"),
        ("ttft_p95_s", "float64", "95th percentile time to first token, s"),
        ("ttft_p99_s", "float64", "99th percentile time to first token, s"),
        ("output_tps", "float64", "output tokens/s"),
        ("peak_in_flight", "Int64", "most requests in flight at once"),
    ),
    # The same summary's capacity under each p95 TTFT limit: the step it names, or none.
    "harness_capacity": _cols(
        ("source_file", "string", "the summary file, relative to the data folder", True),
        ("limit_s", "float64", "p95 TTFT limit, s", True),
        ("met", "boolean", "whether any step met the limit (false: the summary's null)", True),
        ("model", "string", "model as the summary names it"),
        ("profile", "string", "the harness's profile (precision) name"),
        ("configured_rps", "float64", "the capacity: the configured rate of the step named, requests/s"),
        ("achieved_rps", "float64", "that step's achieved rate, requests/s"),
        ("ttft_p95_s", "float64", "that step's p95 TTFT, s"),
        ("output_tps", "float64", "that step's output tokens/s"),
        ("peak_in_flight", "Int64", "that step's most requests in flight"),
    ),
    # One row per GPU per nvidia-smi sample.
    "gpu_samples": _cols(
        ("source_file", "string", "raw CSV, relative to the data folder", True),
        ("line", "Int64", "line number", True),
        ("timestamp", "datetime64[ns]", "sample time (local time as printed)"),
        ("gpu_index", "Int64", "GPU index, where the log has an index column"),
        ("gpu", "string", "the GPU a row is when the log has no index column but holds several GPUs, told apart by "
                          "a uuid or pci.bus_id column ('2 of 2 (by uuid)'), or by the row's place within its sample "
                          "time ('1 of 2 (by row order)', '(by name)'): a number the reader inferred, not nvidia-smi's "
                          "index; empty when the index column says it or the log is one series"),
        ("name", "string", "GPU name"),
        ("power_draw_w", "float64", "power draw, W"),
        ("power_limit_w", "float64", "enforced power limit, W"),
        ("memory_used_mib", "float64", "memory used, MiB"),
        ("memory_total_mib", "float64", "memory total, MiB"),
        ("utilization_gpu_pct", "float64", "GPU utilisation, %"),
        ("temperature_c", "float64", "temperature, °C"),
        ("sm_clock_mhz", "float64", "SM clock, MHz"),
    ),
    # One row per sample of a harness's power time-series CSV (ingest.power_series), per power
    # column when the file has several; columns found by name, the notes say which was read as what.
    "power_samples": _cols(
        ("source_file", "string", "raw CSV, relative to the data folder", True),
        ("line", "Int64", "line number in the file (1-based)", True),
        ("elapsed_s", "float64", "seconds since the series' own start, as the file records them (a column in ms "
                                 "divided by 1000); empty when the file has timestamps only"),
        ("timestamp", "datetime64[ns]", "sample time: an ISO 8601 time as printed (local time; a UTC offset is "
                                        "dropped, the notes name it, so a Z time stays UTC), or epoch seconds as "
                                        "UTC; empty when the file has elapsed seconds only"),
        ("power_w", "float64", "power, W (a column in mW or kW converted)", True),
        ("scope", "string", "what the power column's name says it measures: gpu, cpu, package (processor package "
                            "or SoC), system (whole machine: system, wall, psu), or unknown (a name such as power_w "
                            "that says neither; never assumed)", True),
        ("power_column", "string", "the header name the power was read from (a file with several power columns "
                                   "gives one row per line per column)", True),
        ("temperature_c", "float64", "temperature, °C, where the file has a temperature column"),
        ("sm_clock_mhz", "float64", "SM (graphics) clock, MHz, where present"),
        ("utilization_pct", "float64", "GPU utilisation, %, where present"),
        ("memory_used_mib", "float64", "memory used, MiB, where present (a column named in MB, such as "
                                       "mem_used_mb, is taken as MiB unconverted; the notes say so)"),
    ),
    # One row per metric sample of a Prometheus text exposition dump.
    "prom_samples": _cols(
        ("source_file", "string", "raw dump, relative to the data folder", True),
        ("dump", "Int64", "index of the dump within the file (0-based)", True),
        ("metric", "string", "metric name, e.g. vllm:generation_tokens_total", True),
        ("labels", "string", "labels as sorted key=value pairs joined by ','", True),
        ("value", "float64", "sample value", True),
        ("type", "string", "counter, gauge, histogram, ... from # TYPE"),
    ),
    # One row per agent tool call.
    "tool_calls": _cols(
        ("source_file", "string", "raw log, relative to the data folder", True),
        ("line", "Int64", "line number", True),
        ("session", "string", "agent session id", True),
        ("model", "string", "model that made the call", True),
        ("message", "Int64", "message index within the session"),
        ("tool", "string", "tool name", True),
        ("target", "string", "the command or path (redacted)"),
        ("allowed", "boolean", "True when the harness allowed the call", True),
        ("failure_class", "string", "rule-assigned class of a denied call (computed, not stored)"),
    ),
    # One row per task answered in a hand-run task gauntlet (one model, one prompt).
    "gauntlet": _cols(
        ("source_file", "string", "raw CSV, relative to the data folder", True),
        ("line", "Int64", "line number in the CSV", True),
        ("task_id", "string", "short id of the task"),
        ("task", "string", "the task as described", True),
        ("model", "string", "model that answered", True),
        ("checks_total", "Int64", "checks the answer was held to (constraints, bugs to find, ...)"),
        ("checks_met", "Int64", "checks the answer met"),
        ("self_verified", "boolean", "the model checked its own answer (tests, re-derivation)"),
        ("seconds", "float64", "wall time of the answer, seconds"),
        ("answer", "string", "final answer, where the task has one"),
        ("notes", "string", "the grader's notes"),
    ),
}

TABLE_NAMES = tuple(SCHEMAS)

# Tables whose required values `conform` checks row by row, with the rows that may leave
# them empty: a llama-bench run that crashed measured no test (column, value).
_EMPTY_WHEN = {"llama_bench": ("status", "failed")}


class SchemaError(ValueError):
    """A frame does not fit its table schema."""


def columns(table: str) -> list[str]:
    return [c.name for c in SCHEMAS[table]]


def empty(table: str) -> pd.DataFrame:
    """An empty frame with the table's columns and dtypes."""
    return conform(pd.DataFrame(), table, check_required=False)


def conform(df: pd.DataFrame, table: str, *, check_required: bool = True) -> pd.DataFrame:
    """Order, complete and type a frame's columns after its schema.

    Missing optional columns are added as missing values; columns the schema does not
    know are kept at the end (a study may add context such as `platform`).
    """
    if table not in SCHEMAS:
        raise SchemaError(f"unknown table {table!r}; known tables: {', '.join(SCHEMAS)}")
    schema = SCHEMAS[table]
    out = df.copy()
    if check_required and len(out):
        missing = [c.name for c in schema if c.required and c.name not in out]
        if missing:
            raise SchemaError(f"table {table!r}: missing required column(s) {missing}")
    for col in schema:
        if col.name not in out:
            out[col.name] = None  # (not pd.NA: an object NA cannot become float64)
        try:
            out[col.name] = out[col.name].astype(col.dtype)
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"table {table!r}, column {col.name!r}: expected {col.dtype} ({col.doc}): {exc}"
            ) from exc
    if check_required and table in _EMPTY_WHEN:
        _check_filled(out, table)
    known = [c.name for c in schema]
    return out[known + [c for c in out.columns if c not in known]]


def _check_filled(df: pd.DataFrame, table: str) -> None:
    """Every required value filled, except on the rows `_EMPTY_WHEN` exempts."""
    col, value = _EMPTY_WHEN[table]
    held = df[col].astype(object).ne(value).to_numpy()  # missing counts as not exempt
    for c in SCHEMAS[table]:
        empty = held & df[c.name].isna().to_numpy()
        if c.required and empty.any():
            first = df["run_id"].iloc[empty.argmax()] if "run_id" in df else df.index[empty.argmax()]
            raise SchemaError(f"table {table!r}, column {c.name!r}: empty in {int(empty.sum())} row(s), "
                              f"first {first!r}; expected a value ({c.doc}) unless {col} is {value!r}")


def categorical(codes: np.ndarray, labels: list) -> pd.Categorical:
    """A categorical column whose code i means `labels[i]` (-1: missing). Labels may repeat,
    e.g. after decoding or redacting the categories, and are merged; None means missing."""
    index: dict = {}
    remap = np.array([-1 if lab is None else index.setdefault(lab, len(index)) for lab in labels] + [-1],
                     dtype=np.int32)
    return pd.Categorical.from_codes(remap[codes], list(index))


def describe(table: str) -> pd.DataFrame:
    """The schema as a frame, for the methods page."""
    return pd.DataFrame(
        [(c.name, c.dtype, "yes" if c.required else "", c.doc) for c in SCHEMAS[table]],
        columns=["column", "dtype", "required", "meaning"],
    )

"""Tidy table schemas: one place that says what every column means and in which unit.

Readers return DataFrames conformed to these schemas, so analysis code never has to
guess units. Times are stored in seconds, rates in tokens per second, powers in watts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import pandas_dtype

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
    # One row per llama-benchy test row (benchbook.ingest.llama_benchy; docs/formats.md): a pp
    # row and a tg row per test. Every value is a mean with its `_sd`: numpy's population
    # standard deviation (ddof 0), over runs for the batch values (tps_total and peak_tps at
    # concurrency > 1) and over every request of every run for the per-request values.
    "llama_benchy": _cols(
        ("source_file", "string", "raw file, relative to the data folder", True),
        ("line", "Int64", "line of the row in the file (1-based; JSON: where its test object starts)", True),
        ("format", "string", "benchy-md (the markdown table), benchy-json or benchy-csv (--format json/csv)", True),
        ("source_kind", "string", "console (llama-benchy's console output: its banner or progress lines are in the "
                                  "file) or results (the results alone, as --save-result writes them, or a copy of "
                                  "the table with someone's notes around it)", True),
        ("model", "string", "model as llama-benchy names it (--model: the name sent to the server)"),
        ("test", "string", "test name as printed: pp{N} or tg{N}, ` @ d{depth}`, ` (c{concurrency})`; "
                           "ctx_pp / ctx_tg for a context-load pass", True),
        ("kind", "string", "pp (prompt processing) or tg (token generation)", True),
        ("context_load", "boolean", "True for a ctx_pp / ctx_tg row: with --enable-prefix-caching and depth > 0, "
                                    "the pass that sends the depth's context (and a one-character message) before "
                                    "the timed test"),
        ("prompt_tokens", "Int64", "--pp of the test: prompt tokens asked for, besides the depth (a tg row: the pp "
                                   "of its test; empty when the file does not say)"),
        ("gen_tokens", "Int64", "--tg of the test: max tokens to generate (a pp row: the tg of its test; empty "
                                "when the file does not say)"),
        ("depth", "Int64", "--depth of the test: tokens of earlier context sent before the prompt (`@ dN`; 0 "
                           "without it)", True),
        ("concurrency", "Int64", "requests sent at once (`(cN)`; 1 where the name has none: llama-benchy adds "
                                 "it only when a test of the run had concurrency > 1)", True),
        ("tps_total", "float64", "t/s (total), `t/s` in a table where every test ran at concurrency 1, tokens/s: "
                                 "pp rows prompt tokens (the server's count when within 20% of pp + depth: the "
                                 "depth counts, unless prefix caching), tg rows tokens after each request's "
                                 "first; at concurrency > 1 the batch's tokens over the batch's span (pp: first "
                                 "start to last first token; tg: first first token to last token), mean over "
                                 "runs; at concurrency 1 the same as tps_req"),
        ("tps_total_sd", "float64", "its sd, tokens/s: over runs (concurrency 1: over requests, one per run)"),
        ("tps_req", "float64", "t/s (req), tokens/s: each request's rate (pp: prompt tokens / est_ppt; tg: tokens "
                               "after the first / time from the first to the last), mean over every request "
                               "of every run"),
        ("tps_req_sd", "float64", "its sd over every request of every run, tokens/s"),
        ("peak_tps", "float64", "peak t/s (tg rows), tokens/s: most tokens of the batch within any 1 s window "
                                "(tokens / span when the stream lasted under 1 s), mean over runs"),
        ("peak_tps_sd", "float64", "its sd over runs, tokens/s"),
        ("peak_tps_req", "float64", "peak t/s (req) (tg rows), tokens/s: the same for each request, mean over "
                                    "every request of every run"),
        ("peak_tps_req_sd", "float64", "its sd over every request of every run, tokens/s"),
        ("ttfr_s", "float64", "time to first response (pp rows): from sending to the first streamed chunk with "
                              "a choice (maybe no token yet), seconds; mean over every request of every run"),
        ("ttfr_sd_s", "float64", "its sd over every request of every run, seconds"),
        ("est_ppt_s", "float64", "estimated prompt processing time (pp rows): ttfr minus latency_s, floored at "
                                 "0, seconds; mean over every request of every run"),
        ("est_ppt_sd_s", "float64", "its sd over every request of every run, seconds"),
        ("e2e_ttft_s", "float64", "end-to-end time to first token (pp rows): from sending to the first chunk "
                                  "with content or reasoning text, seconds; mean over every request of every run"),
        ("e2e_ttft_sd_s", "float64", "its sd over every request of every run, seconds"),
        ("latency_s", "float64", "the latency llama-benchy measured (--latency-mode) and took off ttfr for est_ppt, "
                                 "seconds (the console's `Average latency`, the JSON's latency_ms); empty when "
                                 "the file does not say"),
        ("runs", "Int64", "timed runs of each test (--runs; one untimed warmup before them): from the command "
                          "line or the console's `Run k/N`; empty when the file does not say"),
        ("tool_version", "string", "llama-benchy version as printed (`llama-benchy (0.4.0)`)"),
        ("date", "string", "llama-benchy's start time as printed, local time (`date:` of its footer or `Date:` "
                           "of its banner); JSON: its `timestamp`, UTC at the end of the run (ends in Z)"),
        ("latency_mode", "string", "api, generation or none: how latency_s was measured"),
        ("command", "string", "the llama-benchy command line as the file prints it (redacted); empty when it "
                              "does not"),
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
    # A benchmark runner's own events (bench-spark's _runner.log): tests starting and ending,
    # sweep steps beginning, on one clock.
    "harness_events": _cols(
        ("source_file", "string", "the runner's log, relative to the data folder", True),
        ("line", "Int64", "line number", True),
        ("clock", "string", "the time printed, HH:MM:SS (the runner's local time; no date)", True),
        ("elapsed_s", "float64", "seconds since the log's first line (past midnight: the next day)", True),
        ("event", "string", "start, end (of a test) or step (a sweep step begins)", True),
        ("test", "string", "the harness's test number, e.g. 07"),
        ("duration_s", "float64", "the test's length as the END line prints it, s"),
        ("request_rate", "float64", "a sweep step's offered rate, requests/s"),
        ("prompts", "Int64", "a sweep step's number of prompts"),
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

# The columns of a row that record its configuration's engine build (study.yml's engine and
# engine_version, which study.load copies onto every row, and llama-bench's build) and its
# arguments (llama-bench's recorded settings, and study.yml's serve_args, copied likewise): a
# configuration's engine and arguments cells rest on what these rest on
# (ChapterResults.config_ids). Here, below the chapters, because the Strix Halo and H100 pages
# both mark their configuration tables with them.
ENGINE_COLUMNS = ("engine", "engine_version", "build_number", "build_commit")
ARGUMENT_COLUMNS = ("params", "n_gpu_layers", "flash_attn", "serve_args")

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
    if check_required and len(df):
        missing = [c.name for c in schema if c.required and c.name not in df]
        if missing:
            raise SchemaError(f"table {table!r}: missing required column(s) {missing}")
    # one new frame from typed columns: assigning column by column into a copy cost 9 ms a
    # table, most of the time `benchbook new` and `validate` spend on a folder of small files
    columns: dict[str, pd.Series] = {}
    for col in schema:
        if col.name not in df:
            columns[col.name] = pd.Series(index=df.index, dtype=col.dtype)
            continue
        values = df[col.name]
        if _typed(values.dtype, col.dtype):
            columns[col.name] = values
            continue
        try:
            columns[col.name] = values.astype(col.dtype)
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"table {table!r}, column {col.name!r}: expected {col.dtype} ({col.doc}): {exc}"
            ) from exc
    columns.update((c, df[c]) for c in df.columns if c not in columns)
    out = pd.DataFrame(columns, index=df.index)  # copy-on-write: df is never changed through it
    if check_required and table in _EMPTY_WHEN:
        _check_filled(out, table)
    return out


def _typed(have, dtype: str) -> bool:
    """The column already has the schema's dtype (a 'str' column is not 'string': its missing
    value is NaN, not NA; any categories are 'category')."""
    if dtype == "category":
        return isinstance(have, pd.CategoricalDtype)
    return have == pandas_dtype(dtype)


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

"""Tidy table schemas: one place that says what every column means and in which unit.

Readers return DataFrames conformed to these schemas, so analysis code never has to
guess units. Times are stored in seconds, rates in tokens per second, powers in watts.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # pandas dtype: "string", "Int64", "float64", "boolean", "object"
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
    # One row per llama-bench test.
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
    ),
}

TABLE_NAMES = tuple(SCHEMAS)


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
            out[col.name] = pd.NA
        try:
            out[col.name] = out[col.name].astype(col.dtype)
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"table {table!r}, column {col.name!r}: expected {col.dtype} ({col.doc}): {exc}"
            ) from exc
    known = [c.name for c in schema]
    return out[known + [c for c in out.columns if c not in known]]


def describe(table: str) -> pd.DataFrame:
    """The schema as a frame, for the methods page."""
    return pd.DataFrame(
        [(c.name, c.dtype, "yes" if c.required else "", c.doc) for c in SCHEMAS[table]],
        columns=["column", "dtype", "required", "meaning"],
    )

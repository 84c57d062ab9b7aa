"""Write `llama-bench -o jsonl` lines byte-for-byte like llama.cpp's jsonl_printer.

Field order is `test::get_fields()` of a build around b9200 (docs/formats.md section 4):
`"field": value, ` pairs, then `"samples_ns": [ ... ],"samples_ts": [ ... ]}` with no space
before `"samples_ts"`. avg/stddev of nanoseconds are uint64 arithmetic (reproduced here,
wrap-around included, because real files show its rounding); avg_ts/stddev_ts are doubles
printed with std::to_string (6 decimals); samples_ts use ostream's default 6 digits.
"""

from __future__ import annotations

import math

import numpy as np

FIELDS = (
    "build_commit", "build_number", "cpu_info", "gpu_info", "backends", "model_filename",
    "model_type", "model_size", "model_n_params", "n_batch", "n_ubatch", "n_threads", "cpu_mask",
    "cpu_strict", "poll", "type_k", "type_v", "n_gpu_layers", "n_cpu_moe", "split_mode",
    "main_gpu", "no_kv_offload", "flash_attn", "devices", "tensor_split", "tensor_buft_overrides",
    "use_mmap", "embeddings", "no_op_offload", "no_host", "n_prompt", "n_gen", "n_depth",
    "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
)
_U64 = 2**64


def u64_avg(v: list[int]) -> int:
    return (sum(v) % _U64) // len(v)


def u64_stdev(v: list[int]) -> int:
    """llama-bench's `stdev<uint64_t>`: sqrt(sq_sum/(n-1) - mean^2*n/(n-1)), all in uint64."""
    n = len(v)
    if n <= 1:
        return 0
    mean = u64_avg(v)
    sq = sum(x * x for x in v) % _U64
    diff = (sq // (n - 1) - ((mean * mean % _U64) * n % _U64) // (n - 1)) % _U64
    return int(math.sqrt(float(diff)))


def tokens_per_s(samples_ns: list[int], n_tokens: int) -> list[float]:
    return [1e9 * n_tokens / t for t in samples_ns]


def _acc(v) -> float:
    """std::accumulate: plain left-to-right addition (Python's sum() compensates)."""
    total = 0.0
    for x in v:
        total += x
    return total


def d_avg(v: list[float]) -> float:
    return _acc(v) / len(v)


def d_stdev(v: list[float]) -> float:
    n = len(v)
    if n <= 1:
        return 0.0
    mean = d_avg(v)
    sq = _acc(x * x for x in v)
    return math.sqrt(sq / (n - 1) - mean * mean * n / (n - 1))


def samples_for(rng: np.random.Generator, target_ts: float, n_tokens: int, reps: int, cv: float) -> list[int]:
    """Integer nanosecond samples whose mean tokens/s is `target_ts` (to a few 1e-6)."""
    ts = target_ts * (1 + cv * rng.standard_normal(reps))
    ts += target_ts - ts.mean()
    return [int(round(1e9 * n_tokens / t)) for t in ts]


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)


def line(fields: dict, samples_ns: list[int]) -> str:
    """One JSONL record; `fields` gives every FIELDS entry up to test_time."""
    n_tokens = fields["n_prompt"] + fields["n_gen"]
    ts = tokens_per_s(samples_ns, n_tokens)
    values = dict(fields)
    values.update(avg_ns=u64_avg(samples_ns), stddev_ns=u64_stdev(samples_ns),
                  avg_ts=f"{d_avg(ts):.6f}", stddev_ts=f"{d_stdev(ts):.6f}")
    body = "".join(f'"{k}": {values[k] if k in ("avg_ts", "stddev_ts") else _value(values[k])}, '
                   for k in FIELDS)
    ns = ", ".join(str(x) for x in samples_ns)
    tss = ", ".join(f"{x:.6g}" for x in ts)
    return "{" + body + f'"samples_ns": [ {ns} ],"samples_ts": [ {tss} ]' + "}\n"

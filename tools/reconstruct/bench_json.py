"""Write a `vllm bench serve --save-result --save-detailed` JSON the way vLLM 0.19-0.22 does.

Key order, units and the summary statistics follow `vllm/benchmarks/serve.py` (see
docs/formats.md section 1): one `json.dump` line, seconds in the per-request lists,
milliseconds in the `*_ms` keys, `np.percentile` (linear) for P99, `np.std` (population).
The peak-throughput keys use the 1-second buckets of that era's `calculate_metrics`,
which count one token per streamed chunk (so MTP chunks of several tokens count once).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def file_name(model_id: str, max_concurrency: int | None, date: str, backend: str = "openai",
              request_rate: float = math.inf) -> str:
    """vLLM's default name: {label}-{rate}qps[-concurrency{N}]-{model basename}-{date}.json."""
    conc = f"-concurrency{max_concurrency}" if max_concurrency is not None else ""
    return f"{backend}-{request_rate}qps{conc}-{model_id.split('/')[-1]}-{date}.json"


def _stats(values: list[float]) -> tuple[float, float, float, float]:
    """mean, median, std, p99 in ms, with vLLM's `x or 0` fallback for empty lists."""
    x = values or 0
    return (float(np.mean(x) * 1000), float(np.median(x) * 1000), float(np.std(x) * 1000),
            float(np.percentile(x, 99) * 1000))


def _peaks(starts, ttfts, itls, latencies) -> tuple[float, int]:
    """max_output_tokens_per_s and max_concurrent_requests, 1-second buckets (0.11-0.22)."""
    t0 = min(starts)
    end = max(s + lat for s, lat in zip(starts, latencies))
    n_buckets = int(np.ceil(end - t0)) + 1
    tokens = np.zeros(n_buckets)
    conc = np.zeros(n_buckets)
    for s, ttft, itl, lat in zip(starts, ttfts, itls, latencies):
        t = s + ttft
        times = [t]
        for gap in itl:
            t += gap
            times.append(t)
        for tt in times:
            b = int(tt - t0)
            if 0 <= b < n_buckets:
                tokens[b] += 1
        for sec in range(int(s - t0), int((s + lat) - t0) + 1):
            conc[sec] += 1
    return float(np.max(tokens)), int(np.max(conc))


def result(*, date: str, model_id: str, tokenizer_id: str, max_concurrency: int | None,
           duration: float, input_lens: list[int], output_lens: list[int], ttfts: list[float],
           itls: list[list[float]], start_times: list[float], spec: dict | None = None,
           backend: str = "openai") -> dict:
    """The result object, keys in vLLM's insertion order, every request successful."""
    n = len(ttfts)
    latencies = [t + sum(i) for t, i in zip(ttfts, itls)]
    tpots = [(lat - t) / (o - 1) for lat, t, o in zip(latencies, ttfts, output_lens) if o > 1]
    flat = [x for row in itls for x in row]
    total_in, total_out = int(sum(input_lens)), int(sum(output_lens))
    peak_tps, peak_conc = _peaks(start_times, ttfts, itls, latencies)
    out = {
        "date": date, "endpoint_type": backend, "backend": backend, "label": None,
        "model_id": model_id, "tokenizer_id": tokenizer_id, "num_prompts": n,
        "request_rate": "inf", "burstiness": 1.0, "max_concurrency": max_concurrency,
        "duration": duration, "completed": n, "failed": 0,
        "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": n / duration, "request_goodput": None,
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
        "input_lens": list(input_lens), "output_lens": list(output_lens), "ttfts": list(ttfts),
        "itls": [list(r) for r in itls], "start_times": list(start_times),
        "generated_texts": [""] * n, "errors": [""] * n,
        "max_output_tokens_per_s": peak_tps, "max_concurrent_requests": peak_conc, "rtfx": 0.0,
    }
    if spec:
        out.update(spec)
    for metric, values in (("ttft", list(ttfts)), ("tpot", tpots), ("itl", flat)):
        mean, median, std, p99 = _stats(values)
        out.update({f"mean_{metric}_ms": mean, f"median_{metric}_ms": median,
                    f"std_{metric}_ms": std, f"p99_{metric}_ms": p99})
    return out


def spec_block(num_drafts: int, accepted_per_pos: list[int], k: int) -> dict:
    """The spec-decode keys from /metrics counter deltas (rate in percent, positions 0-1)."""
    accepted = int(sum(accepted_per_pos))
    draft_tokens = num_drafts * k
    return {
        "spec_decode_acceptance_rate": accepted / draft_tokens * 100,
        "spec_decode_acceptance_length": 1 + accepted / num_drafts,
        "spec_decode_num_drafts": int(num_drafts),
        "spec_decode_draft_tokens": int(draft_tokens),
        "spec_decode_accepted_tokens": accepted,
        "spec_decode_per_position_acceptance_rates": [a / num_drafts for a in accepted_per_pos],
    }


def dump(obj: dict, path: Path) -> None:
    """One line, no indent, no trailing newline, as `json.dump(result_json, outfile)`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)

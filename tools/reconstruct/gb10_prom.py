"""Write a vLLM server's `/metrics` page (Prometheus text exposition, prometheus_client style).

Conventions from docs/formats.md section 3: labels in alphabetical order, each counter as
`..._total` plus a `..._created` gauge, histograms as cumulative `_bucket{le}` samples with
`_count` and `_sum`, values printed the way prometheus_client's `floatToGoString` does.
"""

from __future__ import annotations

import numpy as np

TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
               10.0, 20.0, 40.0, 80.0)
E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
               120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)


def go_float(d: float) -> str:
    """prometheus_client.utils.floatToGoString."""
    d = float(d)
    if d == float("inf"):
        return "+Inf"
    if d != d:
        return "NaN"
    s = repr(d)
    dot = s.find(".")
    if d > 0 and dot > 6:
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+0{dot - 1}"
    return s


def _labels(**labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


class Page:
    """Accumulates the lines of one /metrics page."""

    def __init__(self, model: str, created: float):
        self.lines: list[str] = []
        self.base = {"engine": "0", "model_name": model}
        self.created = created

    def raw(self, name: str, kind: str, help_text: str, samples: list[tuple[dict, float]]) -> None:
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        self.lines += [f"{name}{_labels(**lab) if lab else ''} {go_float(v)}" for lab, v in samples]

    def gauge(self, name: str, help_text: str, value: float, **labels) -> None:
        self.raw(name, "gauge", help_text, [({**self.base, **labels}, value)])

    def counter(self, name: str, help_text: str, values: list[tuple[dict, float]]) -> None:
        labs = [({**self.base, **lab}, v) for lab, v in values]
        self.raw(f"{name}_total", "counter", help_text, labs)
        self.raw(f"{name}_created", "gauge", help_text, [(lab, self.created) for lab, _ in labs])

    def histogram(self, name: str, help_text: str, values: np.ndarray, buckets) -> None:
        values = np.asarray(values, dtype=float)
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
        for le in (*buckets, float("inf")):
            count = int((values <= le).sum())
            self.lines.append(f"{name}_bucket{_labels(**self.base, le=go_float(le))} {go_float(count)}")
        self.lines.append(f"{name}_count{_labels(**self.base)} {go_float(len(values))}")
        self.lines.append(f"{name}_sum{_labels(**self.base)} {go_float(float(values.sum()))}")
        self.lines += [f"# HELP {name}_created {help_text}", f"# TYPE {name}_created gauge",
                       f"{name}_created{_labels(**self.base)} {go_float(self.created)}"]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def vllm_page(*, model: str, created: float, process: dict, totals: dict, spec: dict | None,
              ttfts, itls, e2els, running: int = 0) -> str:
    """One dump: process metrics, vLLM gauges and counters, spec-decode counters, histograms.

    `totals`: prompt_tokens, generation_tokens, requests (all finished by length).
    `spec`: drafts, draft_tokens, accepted, per_pos (list).
    """
    p = Page(model, created)
    p.raw("python_gc_objects_collected_total", "counter", "Objects collected during gc",
          [({"generation": str(g)}, v) for g, v in enumerate(process["gc_collected"])])
    p.raw("python_gc_collections_total", "counter", "Number of times this generation was collected",
          [({"generation": str(g)}, v) for g, v in enumerate(process["gc_collections"])])
    p.raw("python_info", "gauge", "Python platform information",
          [({"implementation": "CPython", "major": "3", "minor": "12", "patchlevel": "3", "version": "3.12.3"}, 1.0)])
    p.raw("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          [({}, process["rss_bytes"])])
    p.raw("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
          [({}, process["start_time"])])
    p.raw("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
          [({}, process["cpu_seconds"])])
    p.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running)
    p.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", 0)
    p.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", 0.0)
    p.counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
              [({}, totals["prompt_tokens"])])
    p.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", [({}, 0)])
    p.counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", [({}, 0)])
    p.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", [({}, totals["prompt_tokens"])])
    p.counter("vllm:generation_tokens", "Number of generation tokens processed.",
              [({}, totals["generation_tokens"])])
    p.counter("vllm:request_success", "Count of successfully processed requests.",
              [({"finished_reason": r}, totals["requests"] if r == "length" else 0)
               for r in ("abort", "length", "stop")])
    if spec is not None:
        p.counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", [({}, spec["drafts"])])
        p.counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", [({}, spec["draft_tokens"])])
        p.counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", [({}, spec["accepted"])])
        p.counter("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                  [({"position": str(i)}, v) for i, v in enumerate(spec["per_pos"])])
    p.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                ttfts, TTFT_BUCKETS)
    p.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                itls, ITL_BUCKETS)
    p.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
                e2els, E2E_BUCKETS)
    return p.text()

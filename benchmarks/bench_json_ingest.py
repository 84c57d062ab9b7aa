"""Time to read a detailed `vllm bench serve` JSON into the requests table.

Usage: python benchmarks/bench_json_ingest.py [--requests 20000] [--itls 500] [--repeat 5]
Generates the file deterministically in a temporary folder (plain and .gz) and prints
seconds per read (median, min), MB/s, and peak RSS of a fresh process per read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_file(path: Path, n: int, itls: int, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    ttfts = rng.gamma(4.0, 0.05, n)
    gaps = rng.gamma(9.0, 0.0015, (n, itls))
    doc = {
        "date": "20260601-101500", "endpoint_type": "openai", "backend": "openai", "label": None,
        "model_id": "Qwen/Qwen3.6-27B-FP8", "tokenizer_id": "Qwen/Qwen3.6-27B-FP8", "num_prompts": n,
        "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 64,
        "duration": float(ttfts.sum() / 32 + gaps.sum() / 64), "completed": n, "failed": 0,
        "total_input_tokens": 4096 * n, "total_output_tokens": (itls + 1) * n,
        "request_throughput": 1.0, "request_goodput": None, "output_throughput": 1.0,
        "total_token_throughput": 1.0,
        "input_lens": [4096] * n, "output_lens": [itls + 1] * n, "ttfts": ttfts.tolist(),
        "itls": gaps.tolist(), "start_times": np.cumsum(rng.random(n)).tolist(),
        "generated_texts": [""] * n, "errors": [""] * n,
        "mean_ttft_ms": 1.0, "median_ttft_ms": 1.0, "p99_ttft_ms": 1.0,
    }
    path.write_text(json.dumps(doc))


def one_read(path: str) -> None:
    """Run in a fresh process: read once, print seconds and peak RSS (MB)."""
    from benchbook.ingest import vllm_bench

    start = time.perf_counter()
    result = vllm_bench.read(Path(path))
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "rows": len(result.tables["requests"]), "peak_mb": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--itls", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return one_read(args.one)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "run.json"
        make_file(plain, args.requests, args.itls)
        gz = Path(tmp) / "run.json.gz"
        gz.write_bytes(gzip.compress(plain.read_bytes(), compresslevel=6))
        size_mb = plain.stat().st_size / 1e6
        print(f"{args.requests:,} requests x {args.itls} ITLs: {size_mb:.0f} MB plain, "
              f"{gz.stat().st_size / 1e6:.0f} MB gzip")
        print(f"{'file':8s} {'median s':>9s} {'min s':>7s} {'MB/s':>7s} {'peak RSS MB':>12s} {'rows':>7s}")
        for label, path in (("plain", plain), ("gzip", gz)):
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run([sys.executable, __file__, "--one", str(path)],
                                     capture_output=True, text=True, check=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            secs = [r["seconds"] for r in runs]
            med = statistics.median(secs)
            print(f"{label:8s} {med:9.2f} {min(secs):7.2f} {size_mb / med:7.0f} "
                  f"{max(r['peak_mb'] for r in runs):12.0f} {runs[0]['rows']:7d}")


if __name__ == "__main__":
    main()

"""Speed of the vLLM server-log reader against hand-written polars queries, `grep -cE` and a
naive per-line `re` loop.

Usage: python benchmarks/log_ingest.py [--size-mb 300 1000] [--repeat 3] [--gz] [--variants] [--workdir DIR] [--keep]

Generates a realistic mixed server log deterministically (seeded): start-up blocks of
several vLLM versions, bursts and idle gaps, 10-second stats lines, SpecDecoding lines,
uvicorn access lines (completions, health checks, /metrics scrapes), request logs with
long prompts in some segments, warnings, tracebacks, tqdm progress lines. Then times,
each in a fresh subprocess, on the plain file (and its .gz copy with --gz), at each size:

- our reader, `benchbook.ingest.vllm_log.read`: all four tables (import time excluded);
- the same reader streaming, `vllm_log.LogStream`: batches of 100k rows, each dropped once
  counted, as a consumer that aggregates or writes out the rows would;
- one table alone, `LogStream(path, tables=[X])` streaming (windows, access, spec_decode):
  only X's lines are parsed;
- `cli-w`: `benchbook ingest LOG --table windows --out w.parquet` in-process, Parquet written;
  `cli-wc`: the same with `--out w.csv`;
- the polars one-offs (plain files only): what a user would write by hand for one table, a
  dozen lines each (`polars_windows`, `polars_access`, `polars_spec`): read the file as lines,
  keep those holding the table's phrase, pull the fields with `str.extract`. No header
  parsing, no template check, no counts of what was skipped: a lower bound for a reader;
- `polars-wc` (plain files only): the same one-off for every column the windows table holds
  (line number, time, docker stamp, process, call site, engine, every field the templates
  print), still unchecked: the like-for-like query for the windows reader (x/same);
- `parse-w` (plain files only): the reader's own polars plan for the stats lines (header,
  process tag, stamp, the template's two regexes, numbers cast) on polars' line reader, with
  no tables made: the floor for a reader that checks the template with these kernels;
- `grep -cE` (`gzip -dc | grep` for .gz) with two patterns: the fixed phrases the reader
  looks for (C locale and the current one), and the full templates, which match exactly
  the lines the reader turns into rows (the table says whether the counts agree);
- a naive loop: every line through every regex.

With `--variants`, the generated log is also rewritten as a V0 server prints it (each stats
line in V0's template, followed by V0's own prefix-cache line) and as vLLM's ColoredFormatter
prints it on a terminal (level, time and call site in ANSI colours), and each rewrite is read
by `reader` and `windows`.

The script prints the median time of `--repeat` runs, MB/s (uncompressed), the ratios to
both greps, to the table's polars one-off (x/polars), to the same-columns one-off (x/same: the
windows methods) and to the naive loop, and the peak RSS of the measuring process. Not part
of the tests (a tiny smoke run is).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

GENERATOR_VERSION = 4

# Two `grep -cE` baselines. GREP_PATTERN: the fixed phrases the reader looks for first (a
# stats line, SpecDecoding, V0 prefix line, start-up facts, the start of a uvicorn access
# line): grep's fastest case, a literal search, and a lower bound for any parser.
GREP_PATTERN = (
    r"Avg prompt throughput|SpecDecoding metrics|Draft acceptance rate|Prefix cache hit rate: GPU"
    r"|KV cache size|Maximum concurrency for|Available KV cache memory|Graph capturing finished"
    r"|CUDAGraphMode\.|Loading weights took|Model loading took|Loading model weights took"
    r"|server version|LLM engine \(v|Resolved architecture|in world size|world_size=|DP group leader"
    r"|Using configuration from|Using default MoE config|100% Completed \||Capturing CUDA graphs|INFO:     "
)

# GREP_TEMPLATES: the same lines the reader turns into rows, matched by the templates (as
# POSIX EREs): header, stats fields, SpecDecoding fields, access line, start-up facts. Its
# count must equal the reader's rows (windows + access + spec_decode + start-up lines); the
# table says whether it does.
_N = r"-?([0-9]+(\.[0-9]*)?|nan|inf)"
_H = r"..-.. ..:..:..( |[.,][0-9]+ )\[?[^] ]+\.py:[0-9]+\] "
GREP_TEMPLATES = "|".join([
    _H + r"(Engine [0-9]+|[0-9]+ Engines Aggregated): Avg prompt throughput: " + _N + r" tokens/s, Avg generation "
    r"throughput: " + _N + r" tokens/s, Running: [0-9]+ reqs, Waiting: [0-9]+ reqs.*KV cache usage: " + _N + "%",
    _H + r"(Engine [0-9]+: )?SpecDecoding metrics: .*Mean acceptance length: " + _N + r", .*Accepted: [0-9]+ tokens, "
    r"Drafted: [0-9]+ tokens, Per-position acceptance rate: " + _N + "(, " + _N + ")*",
    r'INFO:     [^ :]+(:[0-9]+)? - "[A-Z]+ [^"]* HTTP/[0-9.]+" [0-9]{3}',
    _H + r"(.* KV cache size|Maximum concurrency for|Available KV cache memory|Graph capturing finished|"
    r"CUDAGraphMode\.|Loading weights took|Model loading took|Loading model weights took|vLLM (API )?server "
    r"version|Initializing an? (V1 )?LLM engine|Resolved architecture|rank [0-9]+ in world size [0-9]+ is assigned as|"
    r"world_size=[0-9]+ rank=[0-9]+ local_rank=|DP group leader: |Using configuration from [^ ]*E=[0-9]|"
    r"Using default MoE config)",
    # progress bars (no header): finished ones only
    r"checkpoint shards( \(eager\))?: 100% Completed \| [0-9]+/[0-9]+ ",
    r"Capturing CUDA graphs \([^(),]+, (PIECEWISE|FULL)\): +100%\|[^|]*\| [0-9]+/[0-9]+ ",
])

# ---------------------------------------------------------------- generator

WORDS = (
    "the of and to in a is that for it as was with be by on not this are or from at which "
    "but have an they you were there one all we can model token cache request server latency "
    "throughput batch prompt answer explain write code function python summary report table "
    "data user assistant system please translate review error fix test value result"
).split()

# segment versions: (name, tag colour, stats call site, spec call site, stats builder key)
SEGMENTS = [
    ("0.22.1", "", 271, 101, "v1-0.20"),
    ("0.11.0", "\x1b[1;36m", 127, 96, "v1-0.10"),
    ("0.33.0", "", 335, 120, "v1-0.33"),
    ("0.19.1", "", 259, 101, "v1-0.12"),
]


class LogWriter:
    """Writes header-decorated lines the way vLLM's logger and `_add_prefix` do."""

    def __init__(self, out, colour: str):
        self.out, self.colour, self.size = out, colour, 0  # size: characters written so far

    def tag(self, proc: str) -> str:
        if not proc:
            return ""
        text = f"({proc}) "
        return f"{self.colour}{text[:-1]}\x1b[0;0m " if self.colour else text

    def log(self, t: datetime, proc: str, level: str, site: str, msg: str) -> None:
        self.raw(proc, f"{level} {t:%m-%d %H:%M:%S} [{site}] {msg}")

    def raw(self, proc: str, text: str) -> None:
        line = f"{self.tag(proc)}{text}\n"
        self.out.append(line)
        self.size += len(line)

    def access(self, client: str, method: str, path: str, status: str) -> None:
        self.raw("APIServer pid=1", f'INFO:     {client} - "{method} {path} HTTP/1.1" {status}')


def _boot(w: LogWriter, t: datetime, version: str, spec: bool, rng: random.Random) -> datetime:
    api, core, wk = "APIServer pid=1", "EngineCore_DP0 pid=274", "Worker_TP0 pid=310"
    model = rng.choice(["Qwen/Qwen3.6-35B-A3B-FP8", "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-122B-A10B"])
    w.log(t, api, "INFO", "api_server.py:1920", f"vLLM API server version {version}")
    w.log(t, api, "INFO", "utils.py:326", f"non-default args: {{'model': '{model}', "
          "'api_key': ['sk-0123456789abcdef0123'], 'max_model_len': 262144}")
    w.log(t, api, "INFO", "model.py:547", "Resolved architecture: Qwen3MoeForCausalLM")
    w.log(t, api, "INFO", "model.py:1510", "Using max model len 262144")
    t += timedelta(seconds=3)
    w.log(t, core, "INFO", "core.py:93", f"Initializing a V1 LLM engine (v{version}) with config: model='{model}', "
          f"speculative_config={'SpeculativeConfig(method=mtp, num_spec_tokens=2)' if spec else None}, "
          f"tokenizer='{model}', seed=0")
    w.log(t, wk, "INFO", "parallel_state.py:1208",
          "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0")
    for pct, k in ((0, 0), (25, 1), (50, 2), (75, 3), (100, 4)):
        w.raw(wk, f"Loading safetensors checkpoint shards: {pct:3d}% Completed | {k}/4 "
                  f"[00:0{k}<00:0{4 - k},  1.40s/it]\r")
    t += timedelta(seconds=40)
    w.log(t, wk, "INFO", "default_loader.py:267", f"Loading weights took {rng.uniform(20, 60):.2f} seconds")
    w.log(t, wk, "INFO", "gpu_model_runner.py:2653",
          f"Model loading took {rng.uniform(15, 70):.4f} GiB memory and {rng.uniform(25, 80):.6f} seconds")
    if spec:
        w.log(t, wk, "WARNING", "compilation.py:1407",
              "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend "
              "FlashInferBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); "
              "setting cudagraph_mode=PIECEWISE")
    t += timedelta(seconds=30)
    w.log(t, wk, "INFO", "gpu_worker.py:298", f"Available KV cache memory: {rng.uniform(5, 40):.2f} GiB")
    tokens = rng.randrange(200_000, 900_000, 16)
    if version.startswith("0.33"):
        w.log(t, core, "INFO", "kv_cache_utils.py:1301", f"GPU KV cache size: {tokens:,} tokens, "
              f"Maximum concurrency for 262,144 tokens per request: {tokens / 262144:.2f}x")
    else:
        w.log(t, core, "INFO", "kv_cache_utils.py:1087", f"GPU KV cache size: {tokens:,} tokens")
        w.log(t, core, "INFO", "kv_cache_utils.py:1091",
              f"Maximum concurrency for 262,144 tokens per request: {tokens / 262144:.2f}x")
    w.raw(wk, "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 "
              "[00:09<00:00,  7.10it/s]")
    t += timedelta(seconds=12)
    w.log(t, wk, "INFO", "gpu_model_runner.py:3480",
          f"Graph capturing finished in {rng.randint(8, 40)} secs, took {rng.uniform(0.3, 2.5):.2f} GiB")
    w.log(t, core, "INFO", "core.py:210", "init engine (profile, create kv cache, warmup model) took 61.20 seconds")
    for route, methods in (("/openapi.json", "GET, HEAD"), ("/health", "GET"), ("/metrics", "GET"),
                           ("/v1/models", "GET"), ("/v1/chat/completions", "POST"), ("/v1/completions", "POST")):
        w.log(t, api, "INFO", "launcher.py:46", f"Route: {route}, Methods: {methods}")
    w.raw(api, "INFO:     Started server process [1]")
    w.raw(api, "INFO:     Waiting for application startup.")
    w.raw(api, "INFO:     Application startup complete.")
    return t + timedelta(seconds=2)


def _stats(fmt: str, p: float, g: float, run: int, wait: int, kv: float, hit: float) -> str:
    head = (f"Engine 000: Avg prompt throughput: {p:.1f} tokens/s, Avg generation throughput: {g:.1f} tokens/s, "
            f"Running: {run} reqs, Waiting: {wait} reqs")
    if fmt == "v1-0.20":
        return f"{head}, Deferred: 0 reqs, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {hit:.1f}%"
    if fmt == "v1-0.33":
        return (f"{head}, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {hit:.1f}%, "
                "KV fetch: 0 waiting to start, 0 in progress, 0 completed waiting")
    if fmt == "v1-0.12" and run > 8:
        return f"{head}, Preemptions: 0, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {hit:.1f}%"
    return f"{head}, GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {hit:.1f}%"


def _spec(rng: random.Random) -> str:
    drafted = rng.randint(200, 900) // 2 * 2
    pos = [rng.uniform(0.75, 0.9), rng.uniform(0.5, 0.7)]
    acc = int(drafted / 2 * sum(pos))
    return (f"SpecDecoding metrics: Mean acceptance length: {1 + acc / (drafted / 2):.2f}, "
            f"Accepted throughput: {acc / 10:.2f} tokens/s, "
            f"Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {acc} tokens, Drafted: {drafted} tokens, "
            f"Per-position acceptance rate: {pos[0]:.3f}, {pos[1]:.3f}, "
            f"Avg Draft acceptance rate: {100 * acc / drafted:.1f}%")


def _traceback(w: LogWriter, t: datetime, rng: random.Random) -> None:
    w.log(t, "APIServer pid=1", "ERROR", "serving_chat.py:1150", "Error in chat completion stream generator.")
    w.raw("APIServer pid=1", "Traceback (most recent call last):")
    for fn, ln in (("serving_chat.py", 1120), ("async_llm.py", 412), ("output_processor.py", 388)):
        w.raw("APIServer pid=1",
              f'  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/{fn}", line {ln}, in generate')
        w.raw("APIServer pid=1", "    async for res in result_generator:")
    w.raw("APIServer pid=1", rng.choice(["asyncio.exceptions.CancelledError", "ValueError: prompt too long"]))
    w.raw("", "")


def generate(path: Path, size_mb: float, seed: int = 1234) -> Path:
    """Write a deterministic mixed log of about `size_mb` MB (10^6 bytes) to `path`."""
    rng = random.Random(seed)
    corpus = " ".join(rng.choice(WORDS) for _ in range(200_000))
    target = int(size_mb * 1e6)
    t = datetime(2026, 5, 1, 7, 0, 0)
    seg, buf = 0, []
    w = LogWriter(buf, "")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        while w.size < target:
            version, colour, site, spec_site, fmt = SEGMENTS[seg % len(SEGMENTS)]
            spec = seg % 2 == 0
            log_requests = seg % 4 in (1, 2)
            seg += 1
            w.colour = colour
            t = _boot(w, t, version, spec, rng)
            seg_end = w.size + max(target // 6, 50_000)  # a restart every ~1/6 of the file
            busy, conc, hit, port, zero_sent = False, 0, 0.0, 30000, True
            while w.size < min(seg_end, target):
                t += timedelta(seconds=10)
                if rng.random() < (0.08 if busy else 0.15):
                    busy = not busy
                if busy:
                    conc = max(1, min(16, conc + rng.choice((-2, -1, 0, 0, 1, 2))))
                    done = rng.randint(0, conc)
                else:
                    conc, done = 0, 0
                for k in range(done):  # completed requests of this window
                    rid = f"chatcmpl-{rng.getrandbits(128):032x}"
                    if log_requests:
                        a = rng.randrange(0, len(corpus) - 4000)
                        prompt = corpus[a:a + rng.randint(200, 3500)]
                        w.log(t, "APIServer pid=1", "INFO", "logger.py:41",
                              f"Received request {rid}: prompt: '{prompt}', "
                              "params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, "
                              "temperature=0.7, top_p=0.8, top_k=20, max_tokens=2048), prompt_token_ids: None, "
                              "lora_request: None.")
                        w.log(t, "APIServer pid=1", "INFO", "async_llm.py:274", f"Added request {rid}.")
                    port = 30000 + (port - 29999) % 30000
                    client = "172.18.0.1" if rng.random() < 0.8 else "203.0.113.7"
                    status = "200 OK" if rng.random() < 0.97 else "400 Bad Request"
                    w.access(f"{client}:{port}", "POST", "/v1/chat/completions", status)
                for _ in range(2):  # health probes every 5 s
                    port = 30000 + (port - 29999) % 30000
                    w.access(f"127.0.0.1:{port}", "GET", "/health", "200 OK")
                if int(t.timestamp()) % 30 == 0:
                    w.access(f"10.0.0.5:{port}", "GET", "/metrics", "200 OK")
                if rng.random() < 0.01:
                    w.log(t, "APIServer pid=1", "WARNING", "protocol.py:84",
                          "The following fields were present in the request but ignored: {'foo'}")
                if rng.random() < 0.002:
                    _traceback(w, t, rng)
                if busy or not zero_sent:
                    p = rng.uniform(100, 3000) if busy and rng.random() < 0.6 else 0.0
                    g = conc * rng.uniform(20, 60) if busy else 0.0
                    hit = min(99.0, hit + rng.uniform(0, 2))
                    kv = min(99.0, conc * rng.uniform(0.5, 4))
                    w.log(t, "APIServer pid=1", "INFO", f"loggers.py:{site}",
                          _stats(fmt, p, g, conc, rng.randint(0, 2) if busy else 0, kv, hit))
                    if spec and busy:
                        w.log(t, "APIServer pid=1", "INFO", f"metrics.py:{spec_site}", _spec(rng))
                    zero_sent = not busy
                if len(buf) > 2000:
                    fh.write("".join(buf))
                    buf.clear()
        fh.write("".join(buf))
    return path


def ensure_inputs(workdir: Path, size_mb: float, seed: int) -> tuple[Path, Path]:
    """The plain and .gz logs, regenerated only when size, seed or generator changed."""
    workdir.mkdir(parents=True, exist_ok=True)
    plain = workdir / f"vllm-{size_mb:g}mb-s{seed}.log"
    gz = plain.with_suffix(".log.gz")
    stamp = workdir / (plain.name + ".stamp")
    want = f"{GENERATOR_VERSION}"
    if not (plain.exists() and gz.exists() and stamp.exists() and stamp.read_text() == want):
        print(f"generating {plain} ...", file=sys.stderr, flush=True)
        generate(plain, size_mb, seed)
        with open(plain, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        stamp.write_text(want)
    return plain, gz


# ---------------------------------------------------------------- measured methods


def naive_counts(path: Path) -> dict:
    """The straightforward reader: every line through every regex, one dict per row, frames
    at the end (ANSI codes stripped from every line first)."""
    import pandas as pd

    from benchbook.ingest.textio import open_text

    num = r"(-?\d+(?:\.\d*)?|nan|inf)"
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    stats = re.compile(
        r"(?:\((?P<proc>\S+) pid=\d+\) )?\w+ (?P<time>\d\d-\d\d \d\d:\d\d:\d\d) \[?\S+?:\d+\] "
        r"(?:Engine (?P<engine>\d+)|\d+ Engines Aggregated): Avg prompt throughput: " + num.replace("(", "(?P<p>", 1)
        + r" tokens/s, Avg generation throughput: " + num.replace("(", "(?P<g>", 1) + r" tokens/s, "
        r"Running: (?P<running>\d+) reqs, Waiting: (?P<waiting>\d+) reqs.*?KV cache usage: "
        + num.replace("(", "(?P<kv>", 1) + r"%(?:, Prefix cache hit rate: " + num.replace("(", "(?P<hit>", 1) + r"%)?")
    spec = re.compile(
        r"\w+ (?P<time>\d\d-\d\d \d\d:\d\d:\d\d) .*?Mean acceptance length: " + num.replace("(", "(?P<mal>", 1)
        + r", .*?Accepted: (?P<acc>\d+) tokens, Drafted: (?P<dr>\d+) tokens, Per-position acceptance rate: "
        r"(?P<pp>[\d., na]+?)(?:, Avg Draft acceptance rate: " + num.replace("(", "(?P<rate>", 1) + r"%)?$")
    access = re.compile(r'INFO: +(?P<client>\S+) - "(?P<method>[A-Z]+) (?P<path>.*?) HTTP/[\d.]+" (?P<status>\d{3})')
    boot = [(fact, re.compile(p)) for fact, p in (
        ("kv_cache_tokens", r"KV cache size: ([\d,]+) tokens"),
        ("max_concurrency", r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
        ("kv_cache_gib", r"Available KV cache memory: ([\d.]+) GiB"),
        ("graph_capture", r"Graph capturing finished in (\d+) secs, took ([\d.]+) GiB"),
        ("cudagraph", r"setting cudagraph_mode=(\w+)"), ("weights_load_s", r"Loading weights took ([\d.]+) seconds"),
        ("weights_gib", r"Model loading took ([\d.]+) (?:GiB|GB)"), ("version", r"server version (\S+)"),
        ("version", r"LLM engine \(v([^)]+)\)"), ("architecture", r"Resolved architecture: (\w+)"),
        ("world_size", r"in world size (\d+) is assigned as"),
        ("checkpoint_shards", r"checkpoint shards: 100% Completed \| (\d+)/\1 "),
        ("graphs", r"Capturing CUDA graphs \([^)]*\): +100%\|[^|]*\| (\d+)/\1 "))]
    windows, specs, accesses, boots = [], [], [], []
    lines = 0
    with open_text(path) as fh:
        fh.reconfigure(newline="")  # count "\n" like grep does, not "\r"
        for n, line in enumerate(fh, 1):
            lines = n
            line = ansi.sub("", line.rstrip("\r\n"))
            if m := stats.search(line):
                windows.append({"line": n, **m.groupdict()})
            elif m := spec.search(line):
                specs.append({"line": n, **m.groupdict()})
            elif m := access.search(line):
                accesses.append({"line": n, **m.groupdict()})
            else:
                facts = [{"line": n, "fact": fact, "value": m.group(1)}
                         for fact, rx in boot if (m := rx.search(line))]
                boots += facts
    frames = [pd.DataFrame(rows) for rows in (windows, specs, accesses, boots)]
    return {"lines": lines, "windows": len(frames[0]), "access": len(frames[2]),
            "spec_decode": len(frames[1]), "boot_lines": int(frames[3]["line"].nunique()) if boots else 0}


def reader_counts(path: Path) -> dict:
    from benchbook.ingest import vllm_log

    res = vllm_log.read(path)
    t = res.tables
    return {"lines": res.read, "windows": len(t["windows"]), "access": len(t["access"]),
            "spec_decode": len(t["spec_decode"]), "boot_lines": int(t["boot"]["line"].nunique())}


def stream_counts(path: Path) -> dict:
    """The same tables in batches (vllm_log.LogStream), each dropped once counted: what a
    consumer that aggregates or writes out the rows keeps in memory."""
    from benchbook.ingest import vllm_log

    log = vllm_log.LogStream(path)
    boot_lines = set()
    for tables in log:
        boot_lines.update(tables["boot"]["line"].tolist())
    rows = log.result.rows
    return {"lines": log.result.read, "windows": rows["windows"], "access": rows["access"],
            "spec_decode": rows["spec_decode"], "boot_lines": len(boot_lines)}


def table_counts(path: Path, table: str) -> dict:
    """One table alone, streamed (LogStream with tables=[table]): its rows, lines read."""
    from benchbook.ingest import vllm_log

    log = vllm_log.LogStream(path, tables=[table])
    for _ in log:
        pass
    return {"lines": log.result.read, table: log.result.rows[table]}


def cli_windows(path: Path, suffix: str = ".parquet") -> dict:
    """`benchbook ingest LOG --table windows --out w.parquet` (or w.csv) in this process."""
    import tempfile

    import polars as pl

    from benchbook.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / ("w" + suffix)
        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                assert main(["ingest", str(path), "--table", "windows", "--out", str(out), "--jobs", "1"]) == 0
            finally:
                sys.stdout = stdout
        rows = pl.scan_parquet(out) if suffix == ".parquet" else pl.scan_csv(out, infer_schema=False)
        return {"windows": rows.select(pl.len()).collect().item()}


# The polars one-offs: a user's own query for one table.
_NUM = r"(-?\d+(?:\.\d*)?|nan|inf)"


def polars_windows(path: Path) -> dict:
    import polars as pl

    t = pl.col("line")
    df = (pl.scan_lines(path).filter(t.str.contains("Avg prompt throughput", literal=True))
          .select(t.str.extract(r"(\d\d-\d\d \d\d:\d\d:\d\d)", 1).alias("time"),
                  t.str.extract(r"Avg prompt throughput: " + _NUM, 1).cast(pl.Float64).alias("prompt_tps"),
                  t.str.extract(r"Avg generation throughput: " + _NUM, 1).cast(pl.Float64).alias("generation_tps"),
                  t.str.extract(r"Running: (\d+)", 1).cast(pl.Int64).alias("running"),
                  t.str.extract(r"Waiting: (\d+)", 1).cast(pl.Int64).alias("waiting"),
                  t.str.extract(r"KV cache usage: " + _NUM, 1).cast(pl.Float64).alias("kv_usage"),
                  t.str.extract(r"Prefix cache hit rate: " + _NUM, 1).cast(pl.Float64).alias("prefix_hit_rate"))
          .collect())
    return {"windows": len(df)}


def polars_windows_columns(path: Path) -> dict:
    """`polars_windows` for every column the windows table holds, each pulled by its own
    `str.extract` as a user would write it: no template check, no count of what was skipped."""
    import polars as pl

    t = pl.col("line")
    text = lambda rx: t.str.extract(rx, 1)  # noqa: E731
    num = lambda label: text(label + ": " + _NUM).cast(pl.Float64)  # noqa: E731
    count = lambda rx: text(rx).cast(pl.Int64)  # noqa: E731
    df = (pl.scan_lines(path).with_row_index("n", offset=1)
          .filter(t.str.contains("Avg prompt throughput", literal=True))
          .select("n", text(r"(\d\d-\d\d \d\d:\d\d:\d\d)").alias("time"),
                  text(r"^(\d{4}-\d\d-\d\dT[\d:.]+)").alias("stamp"),
                  text(r"\(([^()\s]+) pid=\d+\)").alias("process"), text(r"\[([^\]\s]+:\d+)\]").alias("site"),
                  text(r"Engine (\d+):").alias("engine"), num("Avg prompt throughput").alias("prompt_tps"),
                  num("Avg generation throughput").alias("generation_tps"),
                  count(r"Running: (\d+)").alias("running"), count(r"Waiting: (\d+)").alias("waiting"),
                  count(r"Deferred: (\d+)").alias("deferred"), count(r"Preemptions: (\d+)").alias("preemptions"),
                  text(r"(\w+) KV cache usage").alias("kv_device"), num("KV cache usage").alias("kv_usage"),
                  num("Prefix cache hit rate").alias("prefix_hit_rate"), count(r"Corrupted: (\d+)").alias("corrupted"),
                  num("External prefix cache hit rate").alias("external_prefix_hit_rate"),
                  num("MM cache hit rate").alias("mm_hit_rate"),
                  count(r"KV fetch: (\d+) waiting").alias("kv_fetch_waiting"),
                  count(r"(\d+) in progress").alias("kv_fetch_in_progress"),
                  count(r"(\d+) completed waiting").alias("kv_fetch_completed"))
          .collect())
    return {"windows": len(df)}


def parse_windows(path: Path) -> dict:
    """The reader's own polars plan for the stats lines (the scanner's header, process
    tag, stamp, two template regexes, numbers cast) over polars' streaming line reader, with
    no tables, no counts and no other line: how near the one-off a reader built on these
    kernels that checks the template can come. Not a reader: its row count is the stats
    lines that match the template."""
    import polars as pl

    from benchbook.ingest import vllm_log

    scanner = vllm_log._scanner()
    t = pl.col("t")
    stats = pl.scan_lines(path, name="t").with_row_index("i").filter(t.str.contains("Avg prompt throughput",
                                                                                    literal=True))
    df = scanner._parse(stats, scanner.stats_rx, scanner.stats_names).collect()
    return {"windows": int(df["ok"].sum())}


def polars_access(path: Path) -> dict:
    import polars as pl

    t = pl.col("line")
    df = (pl.scan_lines(path).filter(t.str.contains("INFO:     ", literal=True))
          .select(t.str.extract_groups(r'INFO: +(?<client>[^ :]+)(?::\d+)? - "(?<method>[A-Z]+) (?<path>.*?) '
                                       r'HTTP/[\d.]+" (?<status>\d{3})').alias("m"))
          .unnest("m").drop_nulls("status").with_columns(pl.col("status").cast(pl.Int64)).collect())
    return {"access": len(df)}


def polars_spec(path: Path) -> dict:
    import polars as pl

    t = pl.col("line")
    df = (pl.scan_lines(path).filter(t.str.contains("SpecDecoding metrics", literal=True))
          .select(t.str.extract(r"(\d\d-\d\d \d\d:\d\d:\d\d)", 1).alias("time"),
                  t.str.extract(r"Mean acceptance length: " + _NUM, 1).cast(pl.Float64).alias("mean_acceptance_length"),
                  t.str.extract(r"Accepted: (\d+) tokens", 1).cast(pl.Int64).alias("accepted_tokens"),
                  t.str.extract(r"Drafted: (\d+) tokens", 1).cast(pl.Int64).alias("draft_tokens"),
                  t.str.extract(r"Per-position acceptance rate: ([\d., na]+?)(?:, Avg|$)", 1).alias("per_position"),
                  t.str.extract(r"Avg Draft acceptance rate: " + _NUM, 1).cast(pl.Float64).alias("rate"))
          .collect())
    return {"spec_decode": len(df)}


def grep_count(path: Path, locale: str, pattern: str = GREP_PATTERN) -> dict:
    env = dict(os.environ, LC_ALL=locale) if locale else dict(os.environ)
    q = lambda s: "'" + s.replace("'", "'\\''") + "'"  # noqa: E731
    if path.suffix == ".gz":
        cmd = f"gzip -dc {q(str(path))} | grep -cE {q(pattern)}"
    else:
        cmd = f"grep -cE {q(pattern)} {q(str(path))}"
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=env)
    if out.returncode not in (0, 1):
        raise SystemExit(out.stderr)
    return {"matching_lines": int(out.stdout.strip() or 0)}


def _measure(method: str, path: Path) -> None:
    """Run one method in this (fresh) process and print elapsed seconds and peak RSS."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    if not method.startswith(("grep", "naive")) and method not in ONE_OFFS:
        from benchbook.cli import ALLOCATOR  # what `benchbook` sets before polars starts

        os.environ.setdefault(*ALLOCATOR)
    if not method.startswith(("grep", "naive")):
        import polars  # noqa: F401  (import time excluded: the reader imports it on first use)

        import benchbook.cli  # noqa: F401
        import benchbook.ingest.parquet  # noqa: F401
        import benchbook.ingest.vllm_log  # noqa: F401
    start, cpu = time.perf_counter(), _cpu()
    if method == "reader":
        counts = reader_counts(path)
    elif method == "stream":
        counts = stream_counts(path)
    elif method in TABLE_METHODS:
        counts = table_counts(path, method)
    elif method == "cli-w":
        counts = cli_windows(path)
    elif method == "cli-wc":
        counts = cli_windows(path, ".csv")
    elif method in ONE_OFFS:
        counts = ONE_OFFS[method](path)
    elif method == "parse-w":
        counts = parse_windows(path)
    elif method == "naive":
        counts = naive_counts(path)
    elif method == "grep-T":
        counts = grep_count(path, "C", GREP_TEMPLATES)
    else:
        counts = grep_count(path, "C" if method == "grep-C" else "")
    elapsed, cpu = time.perf_counter() - start, _cpu() - cpu
    who = resource.RUSAGE_CHILDREN if method.startswith("grep") else resource.RUSAGE_SELF
    rss_mb = resource.getrusage(who).ru_maxrss / 1024
    print(json.dumps({"elapsed": elapsed, "cpu": cpu, "rss_mb": rss_mb, "counts": counts}))


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children: steadier
    than wall time on a machine shared with other work."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_one(method: str, path: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--_measure", method, str(path)],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{method} on {path} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


TABLE_METHODS = ("windows", "access", "spec_decode")
ONE_OFFS = {"polars-w": polars_windows, "polars-wc": polars_windows_columns, "polars-a": polars_access,
            "polars-s": polars_spec}
# the polars one-off each method is set beside (same table)
VERSUS = {"windows": "polars-w", "cli-w": "polars-w", "cli-wc": "polars-w", "parse-w": "polars-w", "access": "polars-a",
          "spec_decode": "polars-s"}
# the windows methods beside the one-off that pulls the same columns (like for like)
SAME = {"windows": "polars-wc", "cli-w": "polars-wc", "cli-wc": "polars-wc", "parse-w": "polars-wc"}
METHODS = ("grep-C", "grep", "grep-T", "reader", "stream", *TABLE_METHODS, "cli-w", "cli-wc", *ONE_OFFS, "parse-w",
           "naive")
PLAIN_ONLY = (*ONE_OFFS, "parse-w")  # polars' line reader takes plain files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, nargs="+", default=[300.0, 1000.0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--gz", action="store_true", help="measure the .gz copy too")
    ap.add_argument("--variants", action="store_true",
                    help="measure the V0 and the terminal-coloured rewrites of the generated log too")
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "benchbook-bench")
    ap.add_argument("--naive-repeat", type=int, default=1, help="the naive loop is slow; repeat it less")
    ap.add_argument("--keep", action="store_true", help="keep the generated logs for the next run")
    ap.add_argument("--_measure", nargs=2, metavar=("METHOD", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._measure:
        _measure(args._measure[0], Path(args._measure[1]))
        return
    rows, variant_rows = [], []
    for size_mb in args.size_mb:
        rows += measure_size(args, size_mb, variant_rows)
    print("\nwall = elapsed seconds (median), cpu = user+system seconds (grep: gzip+grep); x/grep-C = ratio to "
          "grep -cE with the reader's fixed phrases (C locale), x/grep-T = ratio to grep -cE with the full templates "
          "(C locale; the same lines the reader turns into rows); x/polars = ratio to the polars one-off for the "
          "same table; x/same = ratio to the one-off that pulls every column of the windows table; naive/x = how "
          "many times faster than the per-line loop; grep = the phrases in the current locale; "
          "reader = vllm_log.read (all tables), stream = vllm_log.LogStream (batches of 100k rows), "
          "windows/access/spec_decode = LogStream of that table alone, cli-w = benchbook ingest --table windows "
          "--out w.parquet, cli-wc = the same to w.csv, polars-w/-a/-s = the one-offs (windows, access, "
          "spec_decode), polars-wc = the windows one-off for every column of the table, parse-w = the stats-line "
          "parse of the reader alone, no tables (the floor for a template-checking reader)")
    print(f"{'file':26s} {'method':11s} {'wall s':>7s} {'MB/s':>6s} {'x/grep-C':>8s} {'x/grep-T':>8s} "
          f"{'x/polars':>8s} {'x/same':>6s} {'naive/x':>7s} {'cpu s':>6s} {'cpu x/polars':>12s} {'cpu x/same':>10s} "
          f"{'peak RSS MB':>11s}")
    for name, method, t, mbs, rc, rt, rp, rs, rn, cpu, cp, cs, rss in rows:
        fmt = lambda v, w: f"{v:{w}.2f}" if v is not None else f"{'-':>{w}s}"  # noqa: E731
        print(f"{name:26s} {method:11s} {t:7.2f} {mbs:6.0f} {rc:8.2f} {rt:8.2f} {fmt(rp, 8)} {fmt(rs, 6)} {rn:7.1f} "
              f"{cpu:6.2f} {fmt(cp, 12)} {fmt(cs, 10)} {rss:11.0f}")
    if variant_rows:
        print(f"\nRewrites of the generated log (V0, terminal colours)\n{'file':34s} {'method':11s} {'wall s':>7s} "
              f"{'MB/s':>6s} {'cpu s':>6s} {'peak RSS MB':>11s} {'windows':>8s}")
        for name, method, t, mbs, cpu, rss, windows in variant_rows:
            print(f"{name:34s} {method:11s} {t:7.2f} {mbs:6.0f} {cpu:6.2f} {rss:11.0f} {windows:8d}")


def measure_size(args, size_mb: float, variant_rows: list) -> list[tuple]:
    """Every method on the generated log of this size (and its .gz copy with --gz; the
    rewrites' rows go to `variant_rows` with --variants)."""
    plain, gz = ensure_inputs(args.workdir, size_mb, args.seed)
    size = plain.stat().st_size
    print(f"input: {plain.name} {size / 1e6:.0f} MB plain, {gz.stat().st_size / 1e6:.0f} MB gzip; "
          f"{os.cpu_count()} CPUs; median of {args.repeat} runs (naive: {args.naive_repeat})", flush=True)
    rows = []
    for path in (plain, gz) if args.gz else (plain,):
        results = {}
        for method in METHODS:
            if method in PLAIN_ONLY and path.suffix == ".gz":
                continue
            n = args.naive_repeat if method == "naive" else args.repeat
            runs = [run_one(method, path) for _ in range(n)]
            results[method] = {
                "t": statistics.median(r["elapsed"] for r in runs),
                "cpu": statistics.median(r["cpu"] for r in runs),
                "rss": max(r["rss_mb"] for r in runs),
                "counts": runs[0]["counts"],
            }
        counts = results["reader"]["counts"]
        for other in ("stream", "naive"):
            if results[other]["counts"] != counts:
                print(f"WARNING: reader and {other} disagree on {path.name}: {counts} vs {results[other]['counts']}")
        for method, r in results.items():
            for table, n in r["counts"].items():
                if (method in VERSUS or method in ONE_OFFS) and table != "lines" \
                        and n != counts[table]:
                    print(f"WARNING: {method} found {n} rows of {table} on {path.name}, the reader {counts[table]}")
        rows_made = counts["windows"] + counts["access"] + counts["spec_decode"] + counts["boot_lines"]
        templated = results["grep-T"]["counts"]["matching_lines"]
        print(f"{path.name}: counts {counts}; grep -cE literals: {results['grep-C']['counts']['matching_lines']} "
              f"lines; grep -cE templates: {templated} lines "
              f"({'= the reader' if templated == rows_made else 'WARNING: the reader made'} {rows_made} rows)",
              flush=True)
        base_c, base_t, naive = results["grep-C"], results["grep-T"], results["naive"]
        for method, r in results.items():
            versus, same = results.get(VERSUS.get(method)), results.get(SAME.get(method))
            rows.append((path.name, method, r["t"], size / 1e6 / r["t"], r["t"] / base_c["t"], r["t"] / base_t["t"],
                         r["t"] / versus["t"] if versus else None, r["t"] / same["t"] if same else None,
                         naive["t"] / r["t"], r["cpu"], r["cpu"] / versus["cpu"] if versus else None,
                         r["cpu"] / same["cpu"] if same else None, r["rss"]))
        if args.variants and path is plain:
            for rewrite in REWRITES:
                variant_rows += measure_rewrite(args, rewrite, plain, counts["windows"])
    if not args.keep:
        for p in (plain, gz, args.workdir / (plain.name + ".stamp")):
            p.unlink(missing_ok=True)
    return rows


VARIANT_METHODS = ("reader", "windows")


def v0_copy(plain: Path) -> Path:
    """The generated log as a V0 server prints it: each stats line in V0's template (Swapped,
    Pending, CPU KV cache usage), followed by V0's own prefix-cache line."""
    rx = re.compile(r"^.*?INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[loggers\.py:\d+\] Engine 000: Avg prompt throughput: "
                    r"([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, Running: (\d+) reqs, "
                    r"Waiting: (\d+) reqs.*?GPU KV cache usage: ([\d.]+)%, Prefix cache hit rate: ([\d.]+)%")
    out = plain.with_name("v0-" + plain.name)
    with open(plain, encoding="utf-8", newline="") as src, open(out, "w", encoding="utf-8", newline="") as dst:
        for line in src:
            m = rx.match(line)
            if m is None:
                dst.write(line)
                continue
            t, p, g, run, wait, kv, hit = m.groups()
            dst.write(f"INFO {t} metrics.py:396] Avg prompt throughput: {p} tokens/s, Avg generation throughput: "
                      f"{g} tokens/s, Running: {run} reqs, Swapped: 0 reqs, Pending: {wait} reqs, GPU KV cache "
                      f"usage: {kv}%, CPU KV cache usage: 0.0%.\n"
                      f"INFO {t} metrics.py:412] Prefix cache hit rate: GPU: {hit}%, CPU: 0.00%\n")
    return out


# vLLM's ColoredFormatter (logging_utils/formatter.py): the level in its colour, time and call site grey
_COLOURED = re.compile(r"(DEBUG|INFO|WARNING|ERROR) (\d\d-\d\d \d\d:\d\d:\d\d) (\[\S+?:\d+\]) ")
_LEVEL_COLOURS = {"DEBUG": "37", "INFO": "32", "WARNING": "33", "ERROR": "31"}


def coloured_copy(plain: Path) -> Path:
    """The generated log as vLLM prints it with colour on (a terminal, VLLM_LOGGING_COLOR=1)."""
    out = plain.with_name("coloured-" + plain.name)
    paint = lambda m: (f"\x1b[{_LEVEL_COLOURS[m[1]]}m{m[1]}\x1b[0m \x1b[90m{m[2]}\x1b[0m "  # noqa: E731
                       f"\x1b[90m{m[3]}\x1b[0m ")
    with open(plain, encoding="utf-8", newline="") as src, open(out, "w", encoding="utf-8", newline="") as dst:
        for line in src:
            dst.write(_COLOURED.sub(paint, line, count=1))
    return out


REWRITES = {"v0": v0_copy, "coloured": coloured_copy}


def measure_rewrite(args, rewrite: str, plain: Path, windows: int) -> list[tuple]:
    """`VARIANT_METHODS` on a rewrite of `plain`, which holds the same `windows`."""
    path = REWRITES[rewrite](plain)
    size = path.stat().st_size
    rows = []
    for method in VARIANT_METHODS:
        runs = [run_one(method, path) for _ in range(args.repeat)]
        t, cpu = statistics.median(r["elapsed"] for r in runs), statistics.median(r["cpu"] for r in runs)
        found = runs[0]["counts"]["windows"]
        if found != windows:
            print(f"WARNING: {method} found {found} windows in {path.name}; the V1 log has {windows}")
        rows.append((path.name, method, t, size / 1e6 / t, cpu, max(r["rss_mb"] for r in runs), found))
    if not args.keep:
        path.unlink()
    return rows


if __name__ == "__main__":
    main()

"""vLLM server-log reader: every line variant of docs/formats.md section 2, written here
to the exact templates (and the real lines quoted there), among the other lines a server
prints: request logs, warnings, tracebacks, progress bars, blank lines, ANSI colours."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import benchbook.ingest as ingest
from benchbook.ingest import IngestError, vllm_log
from benchbook.ingest.tables import conform

TAG = "(APIServer pid=1) "
TAG_011 = "\x1b[1;36m(APIServer pid=1)\x1b[0;0m "  # 0.10.1-0.11: always, even into files
TAG_012 = "\x1b[0;36m(APIServer pid=1)\x1b[0;0m "  # 0.12-0.15 unless NO_COLOR
THROUGHPUT = "Avg prompt throughput: 120.5 tokens/s, Avg generation throughput: 45.2 tokens/s"

# docs/formats.md, "Real lines" and the cudagraph example
REAL_STATS = ("(APIServer pid=1) INFO 05-30 07:55:21 [loggers.py:271] Engine 000: Avg prompt throughput: "
              "0.0 tokens/s, Avg generation throughput: 54.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
              "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%")
REAL_SPEC = ("(APIServer pid=1) INFO 05-30 07:55:21 [metrics.py:101] SpecDecoding metrics: Mean acceptance "
             "length: 2.88, Accepted throughput: 35.39 tokens/s, Drafted throughput: 56.39 tokens/s, "
             "Accepted: 354 tokens, Drafted: 564 tokens, Per-position acceptance rate: 0.798, 0.628, 0.457, "
             "Avg Draft acceptance rate: 62.8%")
REAL_ACCESS = '(APIServer pid=1) INFO:     172.18.0.3:48374 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
REAL_CUDAGRAPH = (
    "(Worker_TP0 pid=104) WARNING 05-09 10:37:02 [compilation.py:1390] CUDAGraphMode.FULL_AND_PIECEWISE is "
    "not supported with spec-decode for attention backend FlashInferBackend (support: "
    "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE")

# what a server prints between the lines we read
REQUEST_LOG = ("(APIServer pid=1) INFO 05-30 07:55:20 [logger.py:41] Received request chatcmpl-9f2: prompt: "
               "'Summarise the report', params: SamplingParams(n=1, temperature=0.7, max_tokens=512), "
               "prompt_token_ids: None, lora_request: None.")
WARNING = ("(APIServer pid=1) WARNING 05-30 07:55:20 [protocol.py:84] The following fields were present in "
           "the request but ignored: {'foo'}")
TRACEBACK = [
    "(EngineCore_DP0 pid=274) Traceback (most recent call last):",
    '(EngineCore_DP0 pid=274)   File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 701, in run',
    "(EngineCore_DP0 pid=274)     raise ValueError('boom')",
    "(EngineCore_DP0 pid=274) ValueError: boom",
]
PROGRESS = "(Worker_TP0 pid=310) Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:02<00:02,  1.40s/it]\r"


# vLLM's ColoredFormatter (vllm/logging_utils/formatter.py), on a terminal or with
# VLLM_LOGGING_COLOR=1: the level in its colour, the time and `[file:line]` in grey
_LEVEL_COLOURS = {"DEBUG": "37", "INFO": "32", "WARNING": "33", "ERROR": "31"}
_COLOURED = re.compile(r"(DEBUG|INFO|WARNING|ERROR) (\d\d-\d\d \d\d:\d\d:\d\d) (\[\S+?:\d+\]) ")


def coloured(line: str) -> str:
    """`line` as vLLM prints it with colour on (the process tag as 0.12-0.15 coloured it)."""
    line = line.replace(TAG, TAG_012)
    return _COLOURED.sub(lambda m: f"\x1b[{_LEVEL_COLOURS[m[1]]}m{m[1]}\x1b[0m \x1b[90m{m[2]}\x1b[0m "
                                   f"\x1b[90m{m[3]}\x1b[0m ", line, count=1)


def write(tmp_path: Path, lines: list[str], name: str = "server.log", *, end: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(end.join(lines).encode() + end.encode())
    return path


def read(tmp_path: Path, lines: list[str], **kw):
    return vllm_log.read(write(tmp_path, lines, **kw))


def stats(head: str, body: str) -> str:
    return f"{head}Engine 000: {THROUGHPUT}, {body}"


# ---------------------------------------------------------------- windows, every variant

# (id, line, expected values of the one window); percentages as fractions
VARIANTS = [
    ("0.10.1 coloured tag",
     stats(TAG_011 + "INFO 08-20 10:00:00 [loggers.py:123] ",
           "Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 40.0%"),
     dict(log_format="v1-0.10", process="APIServer", engine="000", time="08-20 10:00:00", running=3,
          waiting=1, kv_usage=0.125, prefix_hit_rate=0.4, prompt_tps=120.5, generation_tps=45.2)),
    ("0.11 coloured tag",
     stats(TAG_011 + "INFO 10-02 10:00:00 [loggers.py:127] ",
           "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%"),
     dict(log_format="v1-0.10", running=0, kv_usage=0.0)),
    ("0.12 coloured tag, preemptions",
     stats(TAG_012 + "INFO 01-15 08:00:00 [loggers.py:236] ",
           "Running: 5 reqs, Waiting: 0 reqs, Preemptions: 2, GPU KV cache usage: 30.0%, Prefix cache hit rate: 10.0%"),
     dict(log_format="v1-0.12", preemptions=2, running=5, kv_usage=0.3, prefix_hit_rate=0.1)),
    ("0.16-0.19 every optional part",
     stats(TAG + "INFO 03-01 09:00:00 [loggers.py:259] ",
           "Running: 7 reqs, Waiting: 4 reqs, Preemptions: 0, GPU KV cache usage: 55.5%, Prefix cache hit rate: "
           "12.0%, Corrupted: 1 reqs, External prefix cache hit rate: 5.0%, MM cache hit rate: 2.5%"),
     dict(log_format="v1-0.12", preemptions=0, corrupted=1, external_prefix_hit_rate=0.05, mm_hit_rate=0.025)),
    ("0.19 plain, template from the call site",
     stats(TAG + "INFO 03-01 09:00:00 [loggers.py:259] ",
           "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%"),
     dict(log_format="v1-0.12")),
    ("0.20-0.22.1 deferred",
     stats(TAG + "INFO 04-11 11:00:00 [loggers.py:271] ",
           "Running: 2 reqs, Waiting: 2 reqs, Deferred: 1 reqs, GPU KV cache usage: 4.0%, "
           "Prefix cache hit rate: 50.0%"),
     dict(log_format="v1-0.20", deferred=1, waiting=2)),
    ("real 0.22.1 line", REAL_STATS,
     dict(log_format="v1-0.20", process="APIServer", time="05-30 07:55:21", prompt_tps=0.0, generation_tps=54.2,
          running=1, waiting=0, kv_usage=0.01, prefix_hit_rate=0.0)),
    ("0.33 KV fetch, no prefix part",
     stats(TAG + "INFO 06-01 12:00:00 [loggers.py:335] ",
           "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
           "KV fetch: 0 waiting to start, 1 in progress, 2 completed waiting"),
     dict(log_format="v1-0.33", prefix_hit_rate=math.nan, kv_fetch_waiting=0, kv_fetch_in_progress=1,
          kv_fetch_completed=2)),
    ("0.33 XPU device",
     stats(TAG + "INFO 06-01 12:00:00 [loggers.py:335] ",
           "Running: 1 reqs, Waiting: 0 reqs, XPU KV cache usage: 3.0%, Prefix cache hit rate: 1.0%"),
     dict(log_format="v1-0.33", kv_device="XPU", kv_usage=0.03)),
    ("engines aggregated",
     f"{TAG}INFO 05-30 07:55:21 [loggers.py:271] 2 Engines Aggregated: {THROUGHPUT}, Running: 8 reqs, "
     "Waiting: 3 reqs, GPU KV cache usage: 20.0%, Prefix cache hit rate: 5.0%",
     dict(engine="aggregated", running=8, waiting=3)),
    ("engine 001 of a DP pair, untagged",
     f"INFO 05-30 07:55:21 [loggers.py:271] Engine 001: {THROUGHPUT}, Running: 1 reqs, Waiting: 0 reqs, "
     "GPU KV cache usage: 2.0%, Prefix cache hit rate: 0.0%",
     dict(engine="001", process=None)),
    ("DEBUG file info", REAL_STATS.replace("[loggers.py:271]", "[v1/metrics/loggers.py:271]"),
     dict(log_format="v1-0.20")),
    ("date prefix", "2026-05-30 07:55:21 " + REAL_STATS, dict(running=1, process="APIServer")),
    ("bracketed date prefix", "[2026-05-30 07:55:21] " + REAL_STATS, dict(running=1, process="APIServer")),
    ("docker prefix", "2026-05-30T07:55:21.123456789Z stdout F " + REAL_STATS, dict(running=1)),
    ("journald prefix", "May 30 07:55:21 gpu-box vllm[1234]: " + REAL_STATS, dict(running=1)),
    ("ANSI colours in the header",
     "\x1b[32mINFO\x1b[0m 05-30 07:55:21 \x1b[90m[loggers.py:259]\x1b[0m " + REAL_STATS.split("] ", 1)[1],
     dict(running=1, log_format="v1-0.12", time="05-30 07:55:21")),
    ("nan percentages",
     stats(TAG + "INFO 05-30 07:55:21 [loggers.py:271] ",
           "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: nan%, Prefix cache hit rate: nan%"),
     dict(kv_usage=math.nan, prefix_hit_rate=math.nan, running=0)),
    ("V0 without brackets",
     "INFO 08-07 13:51:58 metrics.py:396] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
     "7.8 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache usage: 0.2%, "
     "CPU KV cache usage: 0.0%.",
     dict(log_format="v0", running=1, swapped=0, waiting=2, kv_usage=0.002, cpu_kv_usage=0.0,
          generation_tps=7.8, engine=None)),
    ("V0 with prefix-cache part",
     "INFO 10-01 12:00:00 [metrics.py:351] Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: "
     "80.1 tokens/s, Running: 4 reqs, Swapped: 1 reqs, Pending: 0 reqs, GPU KV cache usage: 42.0%, "
     "CPU KV cache usage: 3.0%, Prefix cache hit rate: GPU: 12.50%, CPU: 0.00%",
     dict(log_format="v0", swapped=1, prefix_hit_rate=0.125, cpu_prefix_hit_rate=0.0, cpu_kv_usage=0.03)),
]


@pytest.mark.parametrize("line, expected", [v[1:] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_every_stats_variant_gives_one_window(tmp_path, line, expected):
    res = read(tmp_path, [REQUEST_LOG, WARNING, line, *TRACEBACK])
    w = res.tables["windows"]
    assert len(w) == 1, res.summary()
    row = w.iloc[0]
    assert row["line"] == 3
    for col, want in expected.items():
        got = row[col]
        if want is None:
            assert pd.isna(got), col
        elif isinstance(want, float):
            assert (math.isnan(want) and pd.isna(got)) or got == pytest.approx(want), col
        else:
            assert got == want, col
    assert res.ignored == 6 and res.read == 7


def test_v0_prefix_rate_on_its_own_line_joins_its_window(tmp_path):
    v0 = VARIANTS[-2][1]
    res = read(tmp_path, [v0, "INFO 08-07 13:51:58 metrics.py:412] Prefix cache hit rate: GPU: 33.30%, CPU: 0.00%",
                          "INFO 08-07 13:52:08 metrics.py:412] Prefix cache hit rate: GPU: 1.00%, CPU: 0.00%"])
    w = res.tables["windows"]
    assert len(w) == 1 and w["prefix_hit_rate"][0] == pytest.approx(0.333)
    assert res.ignored == 1 and res.reasons[vllm_log.ORPHAN_V0_PREFIX] == 1  # the second has no window


def test_unknown_stats_lines_are_counted_under_their_own_reason(tmp_path):
    lines = [
        REAL_STATS,
        stats(TAG + "INFO 05-30 07:55:31 [loggers.py:999] ",
              "Running: 1 reqs, Waiting: 0 reqs, Frobnicated: 3 widgets, GPU KV cache usage: 1.0%"),
        "(APIServer pid=1) INFO 05-30 07:55:32 [logger.py:41] Received request chatcmpl-1: prompt: "
        "'what does Avg prompt throughput mean?', params: SamplingParams(n=1)",
        REAL_STATS.split("] ", 1)[1],  # a stats message without a header: no time
    ]
    res = read(tmp_path, lines)
    assert len(res.tables["windows"]) == 1
    assert res.reasons[vllm_log.UNKNOWN_STATS] == 2
    assert res.reasons[vllm_log.HEADERLESS_STATS] == 1
    assert res.read == 4 and res.ignored == 3


# ---------------------------------------------------------------- access lines


def test_access_lines_belong_to_the_next_stats_line(tmp_path):
    later = REAL_STATS.replace("07:55:21", "07:55:31")
    lines = [
        REAL_ACCESS,                                                                        # 1
        '(APIServer pid=1) INFO:     127.0.0.1:54946 - "GET /health HTTP/1.1" 200 OK',        # 2
        REQUEST_LOG,                                                                        # 3
        REAL_STATS,                                                                         # 4
        'INFO:     [::1]:8000 - "POST /v1/completions HTTP/1.1" 404 Not Found',             # 5
        # uvicorn on a TTY colours the level, the request line and the status
        '\x1b[32mINFO\x1b[0m:     10.1.2.3:5000 - "\x1b[1mGET /metrics?x=1 HTTP/1.0\x1b[0m" \x1b[32m200 OK\x1b[0m',  # 6
        later,                                                                              # 7
        '(APIServer pid=1) INFO:     203.0.113.9:1234 - "POST /v1/chat/completions HTTP/1.1" '
        '500 Internal Server Error',                                                        # 8
        "(APIServer pid=1) INFO:     Shutting down",                                        # 9
    ]
    res = read(tmp_path, lines)
    a = res.tables["access"]
    assert a["line"].tolist() == [1, 2, 5, 6, 8]
    assert a["method"].tolist() == ["POST", "GET", "POST", "GET", "POST"]
    assert a["path"].tolist() == ["/v1/chat/completions", "/health", "/v1/completions", "/metrics?x=1",
                                  "/v1/chat/completions"]
    assert a["status"].tolist() == [200, 200, 404, 200, 500]
    assert a["client"].tolist() == ["[private-ip]", "127.0.0.1", "[::1]", "[private-ip]", "203.0.113.9"]
    assert a["window_line"].tolist()[:4] == [4, 4, 7, 7] and pd.isna(a["window_line"][4])
    assert a["window_time"].tolist()[:4] == ["05-30 07:55:21"] * 2 + ["05-30 07:55:31"] * 2
    assert pd.isna(a["window_time"][4])
    assert res.ignored == 2  # the request log and the shutdown line


def test_real_lines_of_formats_md(tmp_path):
    res = read(tmp_path, [REAL_STATS, REAL_SPEC, REAL_ACCESS])
    assert len(res.tables["windows"]) == 1 and len(res.tables["access"]) == 1
    s = res.tables["spec_decode"].iloc[0]
    assert (s["line"], s["time"], s["origin"]) == (2, "05-30 07:55:21", "log-line")
    assert (s["accepted_tokens"], s["draft_tokens"]) == (354, 564)
    assert s["mean_acceptance_length"] == pytest.approx(2.88)
    assert (s["accepted_tps"], s["drafted_tps"]) == (pytest.approx(35.39), pytest.approx(56.39))
    assert s["per_position"] == "0.798,0.628,0.457" and s["acceptance_rate"] == pytest.approx(0.628)
    assert res.ignored == 0


# ---------------------------------------------------------------- SpecDecoding

SPEC_HEAD = TAG + "INFO 05-30 07:55:21 [metrics.py:{}] "
SPECS = [
    ("0.11-0.33", REAL_SPEC, dict(log_format="v1-0.11", acceptance_rate=0.628, accepted_tps=35.39)),
    ("0.10.1", SPEC_HEAD.format(87) + "SpecDecoding metrics: Draft acceptance rate: 71.3%, Mean acceptance "
     "length: 2.43, Accepted: 500 tokens, Drafted: 701 tokens, Per-position acceptance rate: 0.850, 0.576",
     dict(log_format="v1-0.10", acceptance_rate=0.713, accepted_tps=math.nan, accepted_tokens=500,
          per_position="0.850,0.576", mean_acceptance_length=2.43)),
    ("PR 24127", SPEC_HEAD.format(96) + "SpecDecoding metrics: Draft acceptance rate: 88.8%, Mean acceptance "
     "length: 5.44, Accepted throughput: 4.37 tokens/s, Drafted throughput: 4.92 tokens/s, Accepted: 262 "
     "tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.949, 0.915, 0.881, 0.712",
     dict(log_format="v1-pr24127", acceptance_rate=0.888, drafted_tps=4.92, draft_tokens=295,
          per_position="0.983,0.949,0.915,0.881,0.712")),
    ("PR 24127 as quoted, no prefix", SPEC_HEAD.format(96) + "Draft acceptance rate: 88.8%, Mean acceptance "
     "length: 5.44, Accepted throughput: 4.37 tokens/s, Drafted throughput: 4.92 tokens/s, Accepted: 262 "
     "tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.949, 0.915, 0.881, 0.712",
     dict(log_format="v1-pr24127", accepted_tokens=262)),
    ("nan rate", SPEC_HEAD.format(120) + "SpecDecoding metrics: Mean acceptance length: 1.00, Accepted "
     "throughput: 0.00 tokens/s, Drafted throughput: 0.00 tokens/s, Accepted: 0 tokens, Drafted: 0 tokens, "
     "Per-position acceptance rate: nan, nan, Avg Draft acceptance rate: nan%",
     dict(log_format="v1-0.11", acceptance_rate=math.nan, per_position="nan,nan", draft_tokens=0)),
    ("0.11 coloured tag", REAL_SPEC.replace(TAG, TAG_011), dict(acceptance_rate=0.628)),
]


@pytest.mark.parametrize("line, expected", [s[1:] for s in SPECS], ids=[s[0] for s in SPECS])
def test_every_spec_decode_variant(tmp_path, line, expected):
    res = read(tmp_path, [REQUEST_LOG, line])
    s = res.tables["spec_decode"]
    assert len(s) == 1 and s["line"][0] == 2 and s["origin"][0] == "log-line"
    for col, want in expected.items():
        got = s[col][0]
        if isinstance(want, float) and math.isnan(want):
            assert pd.isna(got), col
        else:
            assert got == (pytest.approx(want) if isinstance(want, float) else want), col


def test_spec_line_of_an_unknown_template_is_counted(tmp_path):
    res = read(tmp_path, [SPEC_HEAD.format(101) + "SpecDecoding metrics: Mean acceptance length: 2.00, "
                                                  "Accepted: 5 tokens"])
    assert res.tables["spec_decode"].empty and res.reasons[vllm_log.UNKNOWN_SPEC] == 1


# ---------------------------------------------------------------- start-up facts

BOOT = [
    "(APIServer pid=1) INFO 05-09 10:36:00 [api_server.py:1920] vLLM API server version 0.22.1",
    "(APIServer pid=1) INFO 05-09 10:36:00 [model.py:547] Resolved architecture: Qwen3MoeForCausalLM",
    "(EngineCore_DP0 pid=274) INFO 05-09 10:36:03 [core.py:93] Initializing a V1 LLM engine (v0.22.1) with "
    "config: model='Qwen/Qwen3.6-35B-A3B-FP8', speculative_config=SpeculativeConfig(method='mtp'), seed=0",
    "(Worker_TP0 pid=104) INFO 05-09 10:36:40 [default_loader.py:267] Loading weights took 21.37 seconds",
    "(Worker_TP0 pid=104) INFO 05-09 10:36:41 [gpu_model_runner.py:2653] Model loading took 34.1250 GiB "
    "memory and 23.418822 seconds",
    REAL_CUDAGRAPH,
    "(Worker_TP0 pid=104) INFO 05-09 10:37:10 [gpu_worker.py:298] Available KV cache memory: 19.83 GiB",
    "(EngineCore_DP0 pid=274) INFO 05-09 10:37:11 [kv_cache_utils.py:1087] GPU KV cache size: 626,240 tokens",
    "(EngineCore_DP0 pid=274) INFO 05-09 10:37:11 [kv_cache_utils.py:1091] Maximum concurrency for 262,144 "
    "tokens per request: 2.39x",
    "(Worker_TP0 pid=104) INFO 05-09 10:37:30 [gpu_model_runner.py:3480] Graph capturing finished in 19 secs, "
    "took 0.85 GiB",
]


def facts(res) -> dict:
    b = res.tables["boot"]
    return {f: (v, n, u) for f, v, n, u in zip(b["fact"], b["value"], b["value_num"], b["unit"])}


def test_boot_facts(tmp_path):
    res = read(tmp_path, [*BOOT, PROGRESS, REQUEST_LOG])
    got = facts(res)
    assert got["engine_version"][0] == "0.22.1"
    assert got["architecture"][0] == "Qwen3MoeForCausalLM"
    assert got["model"][0] == "Qwen/Qwen3.6-35B-A3B-FP8"
    assert got["weights_load_s"][1:] == (21.37, "s")
    assert got["weights_gib"][1:] == (34.125, "GiB") and got["model_load_s"][1] == pytest.approx(23.418822)
    assert got["cudagraph_mode_from"][0] == "FULL_AND_PIECEWISE" and got["cudagraph_mode_to"][0] == "PIECEWISE"
    assert got["cudagraph_reason"][0] == "spec-decode for attention backend FlashInferBackend"
    assert got["kv_cache_gib"][1:] == (19.83, "GiB")
    assert got["kv_cache_tokens"] == ("626,240", 626240.0, "tokens")
    assert got["max_model_len"] == ("262,144", 262144.0, "tokens")
    assert got["max_concurrency"][1:] == (2.39, "x")
    assert got["graph_capture_s"][1:] == (19.0, "s") and got["graph_capture_gib"][1] == 0.85
    b = res.tables["boot"]
    assert b.loc[b["fact"] == "kv_cache_tokens", "process"].item() == "EngineCore_DP0"
    assert b.loc[b["fact"] == "kv_cache_tokens", "line"].item() == 8
    assert res.ignored == 2 and b["line"].nunique() == len(BOOT)


def test_other_boot_templates(tmp_path):
    res = read(tmp_path, [
        "(EngineCore_DP0 pid=9) INFO 05-09 10:37:11 [kv_cache_utils.py:1301] GPU KV cache size: 1,048,576 tokens, "
        "Maximum concurrency for 131,072 tokens per request: 8.00x",                       # 0.33 merged
        "INFO 08-07 13:50:00 model_runner.py:1008] Model loading took 14.9888 GB and 5.123456 seconds",
        "(APIServer pid=1) INFO 06-01 09:00:00 [api_server.py:1500] vLLM server version 0.25.1, serving model "
        "Qwen/Qwen3-8B",
        "(APIServer pid=1) INFO 06-01 09:00:00 [utils.py:233]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.25.1",
        "(Worker pid=5) WARNING 06-01 09:00:05 [gpu_model_runner.py:3100] CUDAGraphMode.FULL is not supported "
        "with FlashAttentionBackend backend (support: AttentionCGSupport.NEVER); setting cudagraph_mode=NONE "
        "because attention is not compiled piecewise",
        "(APIServer pid=1) INFO 06-01 09:00:00 [api_server.py:1500] GPU KV cache size: lots of tokens",
    ])
    got = facts(res)
    assert got["kv_cache_tokens"][1] == 1048576 and got["max_model_len"][1] == 131072
    assert got["max_concurrency"][1] == 8.0
    assert got["weights_gib"][1:] == (14.9888, "GiB") and got["model_load_s"][1] == pytest.approx(5.123456)
    assert got["model"][0] == "Qwen/Qwen3-8B"
    assert res.tables["boot"].query("fact == 'engine_version'")["value"].tolist() == ["0.25.1", "0.25.1"]
    assert (got["cudagraph_mode_from"][0], got["cudagraph_mode_to"][0]) == ("FULL", "NONE")
    assert res.reasons[vllm_log.UNKNOWN_BOOT] == 1


def test_secrets_in_kept_text_are_redacted(tmp_path):
    res = read(tmp_path, [
        "(APIServer pid=1) INFO 06-01 09:00:00 [api_server.py:1500] vLLM server version 0.25.1, serving model "
        "192.168.1.20:/srv/models/Qwen3-8B --api-key sk-abcdefghijklmnop1234",
        "(EngineCore_DP0 pid=9) INFO 06-01 09:00:03 [core.py:93] Initializing a V1 LLM engine (v0.25.1) with "
        "config: model='http://10.0.0.7:8000/hf_abcdefghijklmnopqrstuvwx', seed=0",
        '(APIServer pid=1) INFO:     192.168.7.7:5555 - "GET /v1/models?api_key=hunter2secret HTTP/1.1" 200 OK',
    ])
    text = json.dumps({name: df.astype(str).values.tolist() for name, df in res.tables.items()})
    for secret in ("192.168", "10.0.0.7", "sk-abcdef", "hf_abcdef", "hunter2secret"):
        assert secret not in text
    assert "[private-ip]" in facts(res)["model"][0]


# ---------------------------------------------------------------- files as users have them


def mixed_log() -> list[str]:
    return [*BOOT, PROGRESS, REQUEST_LOG, REAL_ACCESS, REAL_STATS, REAL_SPEC, WARNING, *TRACEBACK, "",
            REAL_ACCESS, REAL_STATS.replace("07:55:21", "07:55:31"), REAL_ACCESS]


def plain(res) -> dict:
    return {k: df.drop(columns="source_file") for k, df in res.tables.items()}


def assert_same(a, b):
    for name in vllm_log.TABLES:
        pd.testing.assert_frame_equal(plain(a)[name], plain(b)[name])
    assert (a.read, a.ignored, a.reasons) == (b.read, b.ignored, b.reasons)


def test_gzip_gives_the_same_tables(tmp_path):
    path = write(tmp_path, mixed_log())
    gz = tmp_path / "server.log.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert_same(vllm_log.read(path), vllm_log.read(gz))


def test_crlf_and_utf16_give_the_same_tables(tmp_path):
    base = vllm_log.read(write(tmp_path, mixed_log()))
    assert_same(base, vllm_log.read(write(tmp_path, mixed_log(), "crlf.log", end="\r\n")))
    utf16 = tmp_path / "utf16.log"
    utf16.write_bytes(("\n".join(mixed_log()) + "\n").encode("utf-16"))
    assert_same(base, vllm_log.read(utf16))


def test_chunk_boundaries_do_not_change_anything(tmp_path, monkeypatch):
    path = write(tmp_path, mixed_log() * 3)
    whole = vllm_log.read(path)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 97)  # shorter than most lines
    assert_same(whole, vllm_log.read(path))


def test_partial_last_line(tmp_path):
    cut = tmp_path / "cut.log"
    cut.write_bytes(("\n".join([REAL_STATS, REAL_ACCESS, REAL_STATS[:120]])).encode())
    res = vllm_log.read(cut)
    assert res.read == 3 and len(res.tables["windows"]) == 1 and len(res.tables["access"]) == 1
    assert res.reasons == {vllm_log.PARTIAL: 1}
    whole = tmp_path / "whole.log"
    whole.write_bytes(("\n".join([REAL_ACCESS, REAL_STATS])).encode())  # complete, just no newline
    res = vllm_log.read(whole)
    assert res.read == 2 and res.tables["windows"]["line"].tolist() == [2] and res.ignored == 0


def test_counts_and_summary(tmp_path):
    res = read(tmp_path, mixed_log())
    n = len(mixed_log())
    assert res.read == n
    assert (len(res.tables["windows"]), len(res.tables["access"]), len(res.tables["spec_decode"])) == (2, 3, 1)
    assert res.tables["boot"]["line"].nunique() == len(BOOT)
    kept = 2 + 3 + 1 + len(BOOT)
    assert res.ignored == n - kept
    # request log + warning are log lines; the progress bar, traceback and blank line are not
    assert res.reasons == {vllm_log.OTHER: 2, vllm_log.CONTINUATION: 1 + len(TRACEBACK) + 1}
    text = res.summary()
    assert f"{n} lines read" in text and "2 windows found" in text and f"{n - kept} lines ignored" in text


def test_tables_are_conformed(tmp_path):
    res = read(tmp_path, mixed_log() + [VARIANTS[-1][1], VARIANTS[7][1]])
    for name in vllm_log.TABLES:
        df = res.tables[name]
        pd.testing.assert_frame_equal(conform(df, name), df)
        assert (df["source_file"] == str(tmp_path / "server.log")).all()
    empty = read(tmp_path, [WARNING], name="empty.log")
    for name in vllm_log.TABLES:
        pd.testing.assert_frame_equal(conform(empty.tables[name], name), empty.tables[name])
        assert empty.tables[name].empty


def test_bad_files_raise_clear_errors(tmp_path):
    with pytest.raises(IngestError, match="not found"):
        vllm_log.read(tmp_path / "missing.log")
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(gzip.compress(("\n".join(mixed_log() * 50)).encode())[:-200] + b"garbage")
    with pytest.raises(IngestError, match="broken.log.gz"):
        vllm_log.read(broken)


def test_invalid_utf8_is_counted_not_replaced(tmp_path):
    path = tmp_path / "latin1.log"
    path.write_bytes(b"\n".join([
        REAL_STATS.encode(),
        b"(APIServer pid=1) INFO 05-30 07:55:22 [logger.py:41] Received request: prompt: 'caf\xe9'",
        b"(APIServer pid=1) INFO 05-30 07:55:22 [model.py:547] Resolved architecture: Caf\xe9Model",
    ]) + b"\n")
    res = vllm_log.read(path)
    assert len(res.tables["windows"]) == 1 and res.tables["boot"].empty
    assert res.reasons == {vllm_log.NOT_UTF8: 1, vllm_log.OTHER: 1}


# ---------------------------------------------------------------- detection

NOT_LOGS = {
    "bench.json": '{"date": "20260722-060114", "endpoint_type": "openai", "num_prompts": 10, "completed": 10}',
    "llama.json": '[\n  {\n    "build_commit": "1c1409e1",\n    "build_number": 6865\n  }\n]\n',
    "llama.md": "| model | size | params | backend | ngl | test | t/s |\n"
                "| --- | ---: | ---: | --- | --: | ---: | ---: |\n",
    "smi.csv": "timestamp, index, name, power.draw [W], power.limit [W]\n"
               "2026/05/30 07:55:21.123, 0, NVIDIA GeForce RTX 3090, 245.12 W, 250.00 W\n",
    "metrics.txt": "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                   "# TYPE vllm:num_requests_running gauge\n"
                   'vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 0.0\n',
    "notes.txt": "Benchmark notes: INFO about 05-30 runs\n",
}


@pytest.mark.parametrize("head", [
    REAL_STATS, REAL_STATS.replace(TAG, TAG_011), VARIANTS[-2][1], "2026-05-30 07:55:21 " + REAL_STATS,
    REAL_ACCESS, "[2026-05-30 07:55:21] " + REAL_CUDAGRAPH,
])
def test_sniff_recognises_logs(head):
    assert vllm_log.sniff(PROGRESS + "\n" + head + "\n", None)


@pytest.mark.parametrize("name", sorted(NOT_LOGS))
def test_sniff_rejects_other_formats(name):
    assert not vllm_log.sniff(NOT_LOGS[name], None)


def test_detect_picks_this_reader_for_logs_only(tmp_path):
    path = write(tmp_path, mixed_log())
    gz = tmp_path / "server.log.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert ingest.detect(path) is vllm_log and ingest.detect(gz) is vllm_log
    assert len(ingest.read(gz).tables["windows"]) == 2
    for name, text in NOT_LOGS.items():
        other = tmp_path / name
        other.write_text(text)
        try:
            mod = ingest.detect(other)
        except IngestError:
            continue
        assert mod is not vllm_log, name


# ---------------------------------------------------------------- timestamps


def test_add_timestamps_rolls_over_the_year(tmp_path):
    times = ["12-31 23:59:40", "12-31 23:59:50", "01-01 00:00:00", "12-31 23:59:59", "01-01 00:00:10"]
    res = read(tmp_path, [REAL_STATS.replace("05-30 07:55:21", t) for t in times])
    w = vllm_log.add_timestamps(res.tables["windows"], 2025)
    assert w["timestamp"].dt.year.tolist() == [2025, 2025, 2026, 2025, 2026]  # an interleaved late line
    assert str(w["timestamp"][2]) == "2026-01-01 00:00:00"
    assert w["timestamp"].dtype == "datetime64[ns]"
    kept = w.copy()
    kept.loc[0, "timestamp"] = pd.Timestamp("2030-01-01")
    assert vllm_log.add_timestamps(kept, 2025)["timestamp"][0] == pd.Timestamp("2030-01-01")
    assert vllm_log.add_timestamps(res.tables["windows"].iloc[:0], 2025).empty


# ---------------------------------------------------------------- against the naive loop

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "log_ingest.py"


def test_generated_mixed_log_agrees_with_the_naive_loop(tmp_path):
    """Smoke run of benchmarks/log_ingest.py: a small generated log read by the reader and
    by the straightforward per-line loop gives the same counts (plain and .gz)."""
    spec = importlib.util.spec_from_file_location("log_ingest", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    plain_path, gz = bench.ensure_inputs(tmp_path, 0.6, seed=7)
    want = bench.naive_counts(plain_path)
    assert want["windows"] > 50 and want["access"] > 200 and want["spec_decode"] > 20
    assert bench.reader_counts(plain_path) == want
    assert bench.reader_counts(gz) == want
    w = vllm_log.read(plain_path).tables["windows"]
    assert set(w["log_format"]) == {"v1-0.10", "v1-0.12", "v1-0.20", "v1-0.33"}
    assert np.all(np.diff(w["line"].to_numpy()) > 0)


# ---------------------------------------------------------------- the two paths agree

REPO = Path(__file__).resolve().parents[2]


def repo_logs() -> list[Path]:
    """Every vLLM server log shipped in data/ (plain and .gz)."""
    found = []
    for path in sorted((REPO / "data").glob("*/raw/**/*")):
        if path.is_file() and path.suffix in (".log", ".gz") and ingest.detect(path) is vllm_log:
            found.append(path)
    return found


def test_repo_ships_server_logs():
    assert len(repo_logs()) >= 5


@pytest.mark.parametrize("lines", [
    mixed_log(), [v[1] for v in VARIANTS], [s[0] for s in SPECS], BOOT,
    [line.replace(TAG, TAG_011) for line in mixed_log()]
    + ['\x1b[32mINFO\x1b[0m:     10.0.0.1:5 - "GET /health HTTP/1.1" 200'],
    ["2026-05-30T07:55:21Z " + line for line in mixed_log()],
    [coloured(line) for line in mixed_log() + [v[1] for v in VARIANTS] + [s[0] for s in SPECS]],
    ["", "\r", "\r\r", REAL_STATS + "\r", '"' + REAL_ACCESS, "# " + REAL_STATS, REAL_STATS + "\x1f",
     "\x00" + REAL_ACCESS, '"quoted, with a comma"', REAL_SPEC + "\t", "", ""],
    ["", "\r", "\r\r", REAL_STATS + "\r", '"' + REAL_ACCESS, "# " + REAL_STATS, "\x00" + REAL_ACCESS,
     '"quoted, with a comma"', REAL_SPEC + "\t", "", ""],
], ids=["mixed", "stats-variants", "spec-variants", "boot", "coloured", "date-prefixed", "terminal-colours",
        "hostile-bytes", "hostile-csv"])
def test_columnar_and_byte_paths_agree_on_lines(tmp_path, monkeypatch, lines):
    """The polars pass and the byte path give the same tables, counts and reasons."""
    path = write(tmp_path, lines * 3)
    columnar = vllm_log.read(path)
    monkeypatch.setattr(vllm_log, "COLUMNAR", False)
    assert_same(columnar, vllm_log.read(path))


def real_logs() -> list[Path]:
    """The real server logs of ../shared/samples (none where shared/ is not beside the repo)."""
    return sorted(REAL_LOGS.glob("*.log")) if REAL_LOGS.is_dir() else []


def every_log(tmp_path: Path) -> list[Path]:
    """Shipped logs, their `docker logs -t` copies, a generated log (plain and .gz) and the
    real samples."""
    spec = importlib.util.spec_from_file_location("log_ingest", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    docker = [docker_prefixed(p, tmp_path / f"docker-{i}.log", ("Z", "+02:00")[i % 2])
              for i, p in enumerate(repo_logs())]  # `docker logs -t` of every shipped log
    return [*repo_logs(), *docker, *bench.ensure_inputs(tmp_path, 0.4, seed=11), *real_logs()]


@pytest.mark.slow
def test_columnar_and_byte_paths_agree_on_shipped_generated_and_real_logs(tmp_path, monkeypatch):
    paths = every_log(tmp_path)
    assert len(real_logs()) >= 9 or not REAL_LOGS.is_dir()
    columnar = {p: vllm_log.read(p) for p in paths}
    monkeypatch.setattr(vllm_log, "COLUMNAR", False)
    for p in paths:
        assert_same(columnar[p], vllm_log.read(p))


# what each table's lines can be ignored for: counted alike whether or not the others are read
TABLE_REASONS = {"windows": {vllm_log.UNKNOWN_STATS, vllm_log.HEADERLESS_STATS, vllm_log.ORPHAN_V0_PREFIX},
                 "access": {vllm_log.BAD_ACCESS}, "spec_decode": {vllm_log.UNKNOWN_SPEC},
                 "boot": {vllm_log.UNKNOWN_BOOT}}


def assert_one_table_alike(whole, path: Path) -> None:
    """Each table read on its own is the table `read` gives with all four; the lines of
    the others are counted as not asked for."""
    for name in vllm_log.TABLES:
        alone = vllm_log.read(path, tables=[name])
        assert list(alone.tables) == [name]
        pd.testing.assert_frame_equal(plain(alone)[name], plain(whole)[name], obj=f"{path.name} {name}")
        assert alone.read == whole.read and alone.ignored == sum(alone.reasons.values())
        for reason in TABLE_REASONS[name]:
            assert alone.reasons[reason] == whole.reasons[reason], (path.name, name, reason)
        assert set(alone.reasons) <= TABLE_REASONS[name] | {vllm_log.NOT_ASKED, vllm_log.NOT_UTF8,
                                                           vllm_log.PARTIAL, *TABLE_REASONS["windows"]}
        used, lines = alone.read - alone.ignored, whole.tables[name]["line"].nunique()
        assert used == lines if name != "windows" else used >= lines  # (+ V0 prefix-cache lines)


@pytest.mark.slow
@pytest.mark.parametrize("columnar", [True, False])
def test_one_table_read_alone_is_the_same_table(tmp_path, monkeypatch, columnar):
    """`tables=[X]` parses only X's lines and gives X exactly as a read of all four does,
    on both paths, for every log the tests know."""
    monkeypatch.setattr(vllm_log, "COLUMNAR", columnar)
    for path in every_log(tmp_path) + [write(tmp_path, mixed_log() + [VARIANTS[-2][1], REAL_ACCESS], "m.log")]:
        assert_one_table_alike(vllm_log.read(path), path)


def test_one_table_batches_and_unknown_table(tmp_path, monkeypatch):
    path = write(tmp_path, mixed_log() * 5)
    whole = vllm_log.read(path)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 600)  # batches are cut between chunks
    batches = list(vllm_log.LogStream(path, batch_rows=3, tables=["access"]))
    assert len(batches) > 2 and all(list(b) == ["access"] for b in batches)
    got = pd.concat([as_objects(b["access"]) for b in batches], ignore_index=True)
    want = as_objects(whole.tables["access"])
    pd.testing.assert_frame_equal(got[list(want.columns)], want, check_dtype=False)
    for table in ("spec_decode", "boot"):  # no stats line parsed: batches end anywhere
        batches = list(vllm_log.LogStream(path, batch_rows=2, tables=[table]))
        assert len(batches) > 2
        got = pd.concat([as_objects(b[table]) for b in batches], ignore_index=True)
        want = as_objects(whole.tables[table])
        pd.testing.assert_frame_equal(got[list(want.columns)], want, check_dtype=False)
    with pytest.raises(ValueError, match="unknown table"):
        vllm_log.LogStream(path, tables=["runs"])


# ---------------------------------------------------------------- streaming in batches


def joined(batches: list[dict], name: str, whole: pd.DataFrame) -> pd.DataFrame:
    """One table from the batches, repeated text as plain objects (categories differ per
    batch), in the columns of `whole`: the optional columns it lacks are empty in every batch."""
    assert len({tuple(b[name].columns) for b in batches}) == 1  # every batch has the same columns
    frames = [b[name] for b in batches if len(b[name])] or [batches[-1][name]]
    out = pd.concat([as_objects(f) for f in frames], ignore_index=True)
    extra = [c for c in out.columns if c not in whole.columns]
    if "kv_device" in extra:  # printed on every V1 line; `read` keeps it only when not all GPU
        assert set(out.pop("kv_device").dropna()) <= {"GPU"}
        extra.remove("kv_device")
    assert out[extra].isna().all().all()
    return out[list(whole.columns)]


def as_objects(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype({c: object for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)})


@pytest.mark.parametrize("batch_rows", [1, 7, 50])
def test_batches_join_to_the_whole_file(tmp_path, monkeypatch, batch_rows):
    """Each row in exactly one batch, access lines keep a window that comes in a later batch,
    V0 prefix-cache lines stay with their window, and the counts are the whole file's."""
    v0, v0_prefix = VARIANTS[-2][1], ("INFO 08-07 13:50:00 metrics.py:396] Prefix cache hit rate: GPU: 12.50%, "
                                      "CPU: 0.00%")
    lines = (mixed_log() + [v0, v0_prefix, REAL_ACCESS, REAL_ACCESS]) * 4 + [REAL_ACCESS]
    path = write(tmp_path, lines)
    whole = vllm_log.read(path)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 600)  # batches are cut between chunks
    log = vllm_log.LogStream(path, batch_rows=batch_rows)
    batches = list(log)
    assert len(batches) > (2 if batch_rows < 50 else 1)
    for name in vllm_log.TABLES:
        got = joined(batches, name, whole.tables[name])
        pd.testing.assert_frame_equal(got, as_objects(whole.tables[name]), check_dtype=False)
        assert log.result.rows[name] == len(whole.tables[name])
    assert (log.result.read, log.result.ignored, log.result.reasons) == (whole.read, whole.ignored, whole.reasons)
    assert whole.tables["access"]["window_line"].isna().sum() == 3  # the access lines after the last window
    assert log.result.summary() == whole.summary()


def test_batches_of_a_generated_log(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("log_ingest", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    plain_path, _ = bench.ensure_inputs(tmp_path, 0.5, seed=3)
    whole = vllm_log.read(plain_path)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 20_000)
    batches = list(vllm_log.LogStream(plain_path, batch_rows=300))
    assert len(batches) > 5
    for name in vllm_log.TABLES:
        got = joined(batches, name, whole.tables[name])
        pd.testing.assert_frame_equal(got, as_objects(whole.tables[name]), check_dtype=False)


# ---------------------------------------------------------------- `docker logs -t` timestamps

REAL_LOGS = Path(__file__).resolve().parents[3] / "shared" / "samples" / "real" / "vllm-server-logs"
DOCKER_START = np.datetime64("2026-04-07T14:03:21.123456789", "ns")
DOCKER_STEP = np.timedelta64(1_000_003_001, "ns")  # a little over a second, every digit in use


def docker_prefixed(src: Path, dst: Path, offset: str = "Z") -> Path:
    """The same log as `docker logs -t` prints it: an RFC 3339 time (nanoseconds, then `Z`
    or an offset such as +02:00) and a space before every line; line k gets START + k steps."""
    raw = src.read_bytes()
    raw = gzip.decompress(raw) if src.suffix == ".gz" else raw
    lines = raw.split(b"\n")
    stamped = [f"{DOCKER_START + k * DOCKER_STEP}{offset} ".encode() + line for k, line in enumerate(lines[:-1])]
    dst.write_bytes(b"\n".join(stamped + [lines[-1]]))
    return dst


def assert_docker_reads_alike(src: Path, dst: Path, offset: str) -> dict[str, int]:
    """Every line of the prefixed log is read as in the plain log; the windows' timestamps
    are the prefix's wall time (offset dropped), their `time` what vLLM printed. Returns the
    rows per table."""
    plain, docker = vllm_log.read(src), vllm_log.read(docker_prefixed(src, dst, offset))
    assert (docker.read, docker.ignored, docker.reasons) == (plain.read, plain.ignored, plain.reasons), src
    for name in vllm_log.TABLES:
        want, got = plain_tables(plain)[name], plain_tables(docker)[name]
        if name == "windows":
            stamps = got.pop("timestamp")
            assert stamps.dtype == "datetime64[ns]" and want.pop("timestamp").isna().all()
            expected = DOCKER_START + (got["line"].to_numpy(dtype=np.int64) - 1) * DOCKER_STEP
            assert (stamps.to_numpy() == expected).all(), src
            assert stamps.dt.year.eq(2026).all() and (stamps.empty or stamps.dt.nanosecond.ne(0).any())
            # the gaps come from the prefix's times, to the nanosecond, per process and engine
            engines = [got["process"].astype(str), got["engine"].astype(str)]
            by_stamp = stamps.groupby(engines).diff().dt.total_seconds()
            np.testing.assert_allclose(got.pop("gap_s"), by_stamp, rtol=0, atol=1e-12)
            assert want.pop("gap_s").dropna().mod(1).eq(0).all()  # printed times: whole seconds
        pd.testing.assert_frame_equal(got, want, obj=f"{src.name} {name}")
    return {name: len(df) for name, df in docker.tables.items()}


def plain_tables(res) -> dict:
    return {k: df.drop(columns="source_file") for k, df in res.tables.items()}


def test_docker_timestamps_on_shipped_logs(tmp_path):
    rows = Counter()
    for i, src in enumerate(repo_logs()):
        rows.update(assert_docker_reads_alike(src, tmp_path / f"d{i}.log", ("Z", "+02:00", "-05:00")[i % 3]))
    assert min(rows.values()) > 50, rows  # stats, SpecDecoding, access and start-up lines, all prefixed


def test_docker_timestamps_on_real_logs(tmp_path, monkeypatch):
    if not REAL_LOGS.is_dir():
        pytest.skip(f"real samples not present at {REAL_LOGS}")
    logs = sorted(REAL_LOGS.glob("*.log"))
    rows = Counter()
    for i, src in enumerate(logs):
        rows.update(assert_docker_reads_alike(src, tmp_path / f"r{i}.log", "Z"))
    assert len(rows) == 4 and min(rows.values()) > 0, rows  # every kind of line, read when prefixed
    docker = docker_prefixed(logs[0], tmp_path / "docker.log")
    columnar = vllm_log.read(docker)
    monkeypatch.setattr(vllm_log, "COLUMNAR", False)
    assert_same(columnar, vllm_log.read(docker))


def test_docker_timestamp_only_where_a_line_has_one(tmp_path, monkeypatch):
    lines = [
        "2026-04-07T14:03:21.5Z " + REAL_STATS,  # fewer digits
        REAL_STATS,  # no prefix (e.g. the log before `docker logs -t` was used)
        "2026-04-07T14:03:21+02:00 " + REAL_STATS,  # whole seconds
        "2026-13-07T14:03:21.123456789Z " + REAL_STATS,  # not a date: read, no timestamp
    ]
    for columnar in (True, False):  # the polars pass and the byte path
        monkeypatch.setattr(vllm_log, "COLUMNAR", columnar)
        w = read(tmp_path, lines).tables["windows"]
        assert len(w) == 4 and set(w["time"]) == {"05-30 07:55:21"}
        assert w["timestamp"].tolist()[0] == pd.Timestamp("2026-04-07 14:03:21.5")
        assert w["timestamp"].tolist()[2] == pd.Timestamp("2026-04-07 14:03:21")
        assert w["timestamp"].isna().tolist() == [False, True, False, True]


# ---------------------------------------------------------------- the template list

from benchbook.ingest import vllm_templates  # noqa: E402

# one line per template of benchbook/ingest/vllm_templates.py: a template without a line here fails
TEMPLATE_LINES = {
    ("v1", "v1-0.10"): VARIANTS[0][1],
    ("v1", "v1-0.12"): VARIANTS[2][1],
    ("v1", "v1-0.20"): VARIANTS[5][1],
    ("v1", "v1-0.33"): VARIANTS[7][1],
    ("v0", "v0"): VARIANTS[-1][1],
    ("v0prefix", "v0"): "INFO 08-07 13:51:58 metrics.py:412] Prefix cache hit rate: GPU: 33.30%, CPU: 0.00%",
    ("spec", "v1-0.10"): SPECS[1][1],
    ("spec", "v1-pr24127"): SPECS[2][1],
    ("spec", "v1-0.11"): REAL_SPEC,
}
BOOT_LINES = {  # start-up template -> (line, {fact: value as printed})
    "kv-cache-size": (BOOT[7], {"kv_cache_tokens": "626,240"}),
    "max-concurrency": (BOOT[8], {"max_model_len": "262,144", "max_concurrency": "2.39"}),
    "kv-cache-memory": (BOOT[6], {"kv_cache_gib": "19.83"}),
    "graph-capture": (BOOT[9], {"graph_capture_s": "19", "graph_capture_gib": "0.85"}),
    "cudagraph-mode": (REAL_CUDAGRAPH, {"cudagraph_mode_from": "FULL_AND_PIECEWISE", "cudagraph_mode_to": "PIECEWISE"}),
    "weights-load": (BOOT[3], {"weights_load_s": "21.37"}),
    "model-load": (BOOT[4], {"weights_gib": "34.1250", "model_load_s": "23.418822"}),
    "server-version-model": ("(APIServer pid=1) INFO 06-01 09:00:00 [utils.py:299] vLLM server version 0.20.1, "
                             "serving model Qwen/Qwen3-8B", {"engine_version": "0.20.1", "model": "Qwen/Qwen3-8B"}),
    "server-version": (BOOT[0], {"engine_version": "0.22.1"}),
    "engine-config": (BOOT[2], {"engine_version": "0.22.1", "model": "Qwen/Qwen3.6-35B-A3B-FP8"}),
    "architecture": (BOOT[1], {"architecture": "Qwen3MoeForCausalLM"}),
    "banner-version": ("(APIServer pid=1) INFO 06-01 09:00:00 [utils.py:299]  \u2584\u2584 \u2584\u2588 \u2588     "
                       "\u2588     \u2588 \u2580\u2584\u2580 \u2588  version 0.20.1", {"engine_version": "0.20.1"}),
    "banner-model": ("(APIServer pid=1) INFO 06-01 09:00:00 [utils.py:299]   \u2588\u2584\u2588\u2580 \u2588     "
                     "\u2588     \u2588     \u2588  model   Qwen/Qwen3-8B", {"model": "Qwen/Qwen3-8B"}),
    # real lines (public logs and vLLM's docs) for the start-up facts of the parallel layout,
    # the fused-MoE config and the progress bars
    "parallel-ranks": ("(EngineCore_DP0 pid=143) INFO 03-18 14:04:03 [parallel_state.py:1411] rank 0 in world size 1 "
                       "is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank 0",
                       {"world_size": "1", "global_rank": "0", "tp_rank": "0", "ep_rank": "0"}),
    "distributed-init": ("(EngineCore_DP0 pid=143) INFO 03-18 14:04:03 [parallel_state.py:1203] world_size=1 rank=0 "
                         "local_rank=0 distributed_init_method=tcp://172.17.0.3:57931 backend=nccl",
                         {"world_size": "1", "global_rank": "0", "local_rank": "0"}),
    "dp-group-leader": ("(EngineCore pid=4076649) INFO 08-20 16:38:29 [multiproc_executor.py:140] DP group leader: "
                        "node_rank=0, node_rank_within_dp=0, master_addr=127.0.0.1, mq_connect_ip=10.207.212.181 "
                        "(local), world_size=4, local_world_size=4", {"world_size": "4", "local_world_size": "4"}),
    "moe-config": ("(VllmWorker TP2 pid=60498) INFO 09-09 16:23:07 [fused_moe.py:720] Using configuration from "
                   "/your_moe_tuned_dir/E=512,N=128,device_name=NVIDIA_H20-3e.json for MoE layer.",
                   {"moe_config_file": "E=512,N=128,device_name=NVIDIA_H20-3e.json", "moe_experts": "512",
                    "moe_intermediate_size": "128", "moe_device_name": "NVIDIA_H20-3e"}),
    "moe-config-missing": (
        "(EngineCore pid=62) WARNING 03-26 11:05:29 [fused_moe.py:1090] Using default MoE config. Performance might "
        "be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/"
        "fused_moe/configs/E=256,N=512,device_name=NVIDIA_GB10,dtype=fp8_w8a8,block_shape=[128,128].json",
        {"moe_config_missing": "E=256,N=512,device_name=NVIDIA_GB10,dtype=fp8_w8a8,block_shape=[128,128].json",
         "moe_experts": "256", "moe_intermediate_size": "512", "moe_device_name": "NVIDIA_GB10",
         "moe_dtype": "fp8_w8a8"}),
    "checkpoint-shards": ("Loading safetensors checkpoint shards: 100% Completed | 13/13 [00:25<00:00,  1.97s/it]",
                          {"checkpoint_shards": "13"}),
    "cuda-graphs-piecewise": ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|" + "\u2588" * 20
                              + "| 67/67 [00:11<00:00,  5.66it/s]", {"graphs_piecewise": "67"}),
    "cuda-graphs-full": ("Capturing CUDA graphs (decode, FULL): 100%|" + "\u2588" * 20
                         + "| 35/35 [00:06<00:00,  5.78it/s]", {"graphs_full": "35"}),
}


def test_every_template_has_a_test_line():
    assert set(TEMPLATE_LINES) == {(t.family, t.name) for t in vllm_templates.TEMPLATES}
    assert set(BOOT_LINES) == {b.name for b in vllm_templates.BOOT}


@pytest.mark.parametrize("key", sorted(TEMPLATE_LINES), ids=lambda k: "-".join(k))
def test_each_template_names_its_lines(tmp_path, monkeypatch, key):
    family, name = key
    lines = [TEMPLATE_LINES[key]]
    if family == "v0prefix":  # read into the V0 window printed just before it
        lines = [TEMPLATE_LINES["v0", "v0"].replace(", Prefix cache hit rate: GPU: 12.50%, CPU: 0.00%", ""), *lines]
    for columnar in (True, False):
        monkeypatch.setattr(vllm_log, "COLUMNAR", columnar)
        res = read(tmp_path, lines)
        table = res.tables["spec_decode" if family == "spec" else "windows"]
        assert table["log_format"].tolist() == [name] and res.ignored == 0, res.summary()


# the ChunkScan field that holds a family's rows, and the kind of candidate line it is
SCANNED = {"v1": ("stats", "stats"), "v0": ("v0", "stats"), "v0prefix": ("v0prefix", "v0prefix"),
           "spec": ("spec", "spec")}


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "coloured"])
@pytest.mark.parametrize("key", sorted(TEMPLATE_LINES), ids=lambda k: "-".join(k))
def test_the_columnar_pass_parses_every_template_itself(key, colour):
    """A line of any known template, plain or with vLLM's terminal colours, is parsed by
    the polars pass, for all kinds and for its own kind alone: none goes to the per-line
    templates."""
    from benchbook.ingest.vllm_log_scan import KINDS

    field, kind = SCANNED[key[0]]
    lines = [WARNING, TEMPLATE_LINES[key], REAL_ACCESS]
    if colour:
        lines = [coloured(line) for line in lines]
        assert "\x1b[90m" in lines[1] or key[0] == "v0prefix"  # (V0's own line: no `[file:line]`)
    buf = ("\n".join(lines) + "\n").encode()
    for kinds in (KINDS, frozenset({kind})):
        scan = vllm_log._scanner().scan(buf, 1, kinds)
        assert scan is not None and list(getattr(scan, field)["line"]) == [2], (kinds, scan)
        assert not any(scan.slow.values()), scan.slow


def v0_log(windows: int) -> list[str]:
    """A V0 server's lines: stats lines with and without the prefix-cache part, V0's own
    prefix-cache line after most of them (twice after some: the second has no window),
    request logs and access lines between them, in two processes."""
    lines = []
    for k in range(windows):
        t = f"08-07 13:{k // 60 % 60:02d}:{k % 60:02d}"
        tag = "" if k % 3 else "(VllmWorkerProcess pid=7) "
        stats = (f"{tag}INFO {t} metrics.py:396] Avg prompt throughput: {k * 1.5:.1f} tokens/s, Avg generation "
                 f"throughput: {k % 17 * 3.1:.1f} tokens/s, Running: {k % 5} reqs, Swapped: {k % 2} reqs, "
                 f"Pending: {k % 4} reqs, GPU KV cache usage: {k % 90 / 10:.1f}%, CPU KV cache usage: 0.0%")
        prefix = f"{tag}INFO {t} metrics.py:412] Prefix cache hit rate: GPU: {k % 100:.2f}%, CPU: 0.00%"
        if k % 7 == 0:
            lines.append(stats + f", Prefix cache hit rate: GPU: {k % 50:.2f}%, CPU: 0.00%")
        else:
            lines.append(stats + ".")
        lines += [prefix] * (1 + (k % 11 == 0)) if k % 5 else []
        lines += [REQUEST_LOG, REAL_ACCESS]
    return lines


def test_a_v0_log_reads_alike_on_both_paths_in_any_chunks_and_batches(tmp_path, monkeypatch):
    path = write(tmp_path, v0_log(400))
    whole = vllm_log.read(path)
    w = whole.tables["windows"]
    assert len(w) == 400 and set(w["log_format"]) == {"v0"} and w["prefix_hit_rate"].notna().sum() > 300
    assert whole.reasons[vllm_log.ORPHAN_V0_PREFIX] > 20  # the second prefix line, and those after a full line
    for chunk in (vllm_log.CHUNK_BYTES, 5000):
        monkeypatch.setattr(vllm_log, "CHUNK_BYTES", chunk)
        for columnar in (False, True):
            monkeypatch.setattr(vllm_log, "COLUMNAR", columnar)
            assert_same(whole, vllm_log.read(path))
            batches = list(vllm_log.LogStream(path, batch_rows=37, tables=["windows"]))
            assert len(batches) > 5 or chunk == vllm_log.CHUNK_BYTES
            got = joined(batches, "windows", w)
            pd.testing.assert_frame_equal(got, as_objects(w), check_dtype=False)


@pytest.mark.parametrize("name", sorted(BOOT_LINES))
def test_each_start_up_template_gives_its_facts(tmp_path, name):
    line, want = BOOT_LINES[name]
    got = dict(zip(*(read(tmp_path, [line]).tables["boot"][c] for c in ("fact", "value"))))
    assert {f: got.get(f) for f in want} == want


def test_call_site_map_and_regexes_come_from_the_list():
    """The site map, the optional parts and the template order are the list's."""
    sites = vllm_templates.site_map("v1")
    assert sites["loggers.py", 271] == 2 and vllm_templates.family("v1")[2].name == "v1-0.20"
    union = vllm_templates.union(vllm_templates.family("v1"))
    optional = [p.fields[0][0] for p in union if p.optional]
    assert optional == ["deferred", "preemptions", "prefix_hit_rate", "corrupted", "external_prefix_hit_rate",
                        "mm_hit_rate", "kv_fetch_waiting"]
    assert vllm_log._V1_MSG.pattern.startswith(vllm_templates.message_regex("v1"))
    assert vllm_templates.formats("stats") == ["v1-0.10", "v1-0.12", "v1-0.20", "v1-0.33", "v0"]


def test_a_template_entry_is_all_a_new_format_needs(monkeypatch):
    """A family extended by one entry: its parts join the union in order, its site maps to it,
    and the rule names lines by the fields it admits."""
    extra = vllm_templates.Template(
        "v1-next", "v1", "next", ("loggers.py:999",),
        vllm_templates.parts(*vllm_templates._V1_HEAD, rb"[Deferred: {deferred:int} reqs]", vllm_templates._KV,
                             rb"[Prefix cache hit rate: {prefix_hit_rate:pct}%]", rb"[Shed: {shed:int} reqs]"))
    monkeypatch.setattr(vllm_templates, "TEMPLATES", vllm_templates.TEMPLATES + (extra,))
    names = [p.fields[0][0] for p in vllm_templates.union(vllm_templates.family("v1"))]
    assert names[names.index("prefix_hit_rate") + 1] == "shed"  # where the new entry prints it
    assert vllm_templates.site_map("v1")["loggers.py", 999] == 4
    rx = re.compile(vllm_templates.message_regex("v1"))
    line = (b"Engine 000: " + THROUGHPUT.encode() + b", Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
            b"Shed: 2 reqs")
    m = rx.fullmatch(line)
    assert m and m["shed"] == b"2"
    cols = {"line": np.array([1]), "site": np.array([b"[loggers.py:123]"]), "device": np.array([b"GPU"]),
            "shed": np.array([2.0]), "prefix_hit_rate_printed": np.array([False])}
    assert vllm_log._log_format("v1", cols).tolist() == ["v1-next"]


# ---------------------------------------------------------------- start-up facts of progress bars

PROGRESS_LINES = [
    "(EngineCore_DP0 pid=205) Loading safetensors checkpoint shards:   0% Completed | 0/14 [00:00<?, ?it/s]",
    "(EngineCore_DP0 pid=205) Loading safetensors checkpoint shards: 100% Completed | 14/14 [01:26<00:00,  6.20s/it]",
    # tqdm on a file: every update in one physical line, separated by "\r"
    "Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]\rLoading safetensors checkpoint "
    "shards:  50% Completed | 1/2 [00:01<00:01,  1.2s/it]\rLoading safetensors checkpoint shards: 100% Completed | "
    "2/2 [00:02<00:00,  1.1s/it]\r",
    "\x1b[0;36m(EngineCore_DP0 pid=205)\x1b[0;0m Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): "
    "100%|\u2588\u2588\u2588\u2588| 11/11 [00:07<00:00,  1.49it/s]",
    "(EngineCore_DP0 pid=205) Capturing CUDA graphs (decode, FULL):  57%|\u2588\u2588  | 4/7 [00:01<00:01,  2.48it/s]",
    "(EngineCore_DP0 pid=205) Capturing CUDA graphs (decode, FULL): "
    "100%|\u2588\u2588\u2588\u2588| 7/7 [00:02<00:00,  2.48it/s]",
    "(EngineCore_DP0 pid=205) Loading pt checkpoint shards: 100% Completed | 3/4 [00:02<00:00,  1.1s/it]",
]


@pytest.mark.parametrize("columnar", [True, False])
def test_progress_bar_facts(tmp_path, monkeypatch, columnar):
    """Only a finished bar (100 %, n of n) gives a fact; the others stay continuation lines."""
    monkeypatch.setattr(vllm_log, "COLUMNAR", columnar)
    res = read(tmp_path, [*PROGRESS_LINES, REAL_STATS])
    b = res.tables["boot"]
    assert list(zip(b["line"], b["fact"], b["value_num"])) == [
        (2, "checkpoint_shards", 14.0), (3, "checkpoint_shards", 2.0), (4, "graphs_piecewise", 11.0),
        (6, "graphs_full", 7.0)]
    assert b["process"].fillna("-").tolist() == ["EngineCore_DP0", "-", "EngineCore_DP0", "EngineCore_DP0"]
    assert b["time"].isna().all() and set(b["unit"]) == {"shards", "graphs"}
    assert res.reasons == {vllm_log.CONTINUATION: 3}
    assert res.read == 8 and res.ignored == 3


def test_progress_bar_lines_read_alike_on_both_paths(tmp_path, monkeypatch):
    path = write(tmp_path, (PROGRESS_LINES + mixed_log()) * 3)
    columnar = vllm_log.read(path)
    monkeypatch.setattr(vllm_log, "COLUMNAR", False)
    assert_same(columnar, vllm_log.read(path))
    assert_one_table_alike(columnar, path)
    monkeypatch.setattr(vllm_log, "CHUNK_BYTES", 300)  # lines cut between chunks
    assert_same(columnar, vllm_log.read(path))


REAL_011 = REAL_LOGS / "vllm-0.11.0_4x3090_qwen3-vl-30b_excerpt.log"


def test_start_up_facts_of_the_real_0_11_log():
    """The real vLLM 0.11.0 excerpt (4x RTX 3090, TP4): its progress bars give the checkpoint
    shards (two workers printed the bar) and the CUDA graphs captured in each mode."""
    if not REAL_011.is_file():
        pytest.skip(f"real sample not present at {REAL_011}")
    b = vllm_log.read(REAL_011).tables["boot"]
    got = b.groupby("fact")["value_num"].agg(list).to_dict()
    assert got["checkpoint_shards"] == [13.0, 13.0]
    assert got["graphs_piecewise"] == [67.0] and got["graphs_full"] == [35.0]
    assert got["graph_capture_gib"] == [1.92] * 3 and got["kv_cache_tokens"] == [100752.0] * 4
    assert "world_size" not in got  # this excerpt left out the workers' rank lines


@pytest.mark.parametrize("paths", [
    # 0.11 prints the list of paths it tried (vLLM's docs quote this warning)
    "['/vllm_path/vllm/model_executor/layers/fused_moe/configs/E=512,N=128,device_name=NVIDIA_H20-3e.json']",
    # 0.20 joins them with ", " (a tuned folder first, then vLLM's own)
    "/home/u/moe/E=512,N=128,device_name=NVIDIA_H20-3e.json, /usr/lib/vllm/fused_moe/configs/"
    "E=512,N=128,device_name=NVIDIA_H20-3e.json",
])
def test_missing_moe_config_in_both_printed_forms(tmp_path, paths):
    line = ("(VllmWorker TP2 pid=47571) WARNING 09-09 15:47:25 [fused_moe.py:727] Using default MoE config. "
            "Performance might be sub-optimal! Config file not found at " + paths)
    got = facts(read(tmp_path, [line]))
    assert got["moe_experts"][1:] == (512.0, "experts") and got["moe_intermediate_size"][1] == 128.0
    assert got["moe_config_missing"][0] == "E=512,N=128,device_name=NVIDIA_H20-3e.json"
    assert "moe_dtype" not in got  # no dtype in this file name


def test_a_rank_line_without_expert_parallelism(tmp_path):
    """`EP rank N/A` (a dense model) gives the other ranks and no EP rank (real 0.22-era line)."""
    got = facts(read(tmp_path, [
        "(EngineCore pid=970) INFO 05-12 11:33:53 [parallel_state.py:1717] rank 0 in world size 1 is assigned as "
        "DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank N/A, EPLB rank N/A"]))
    assert got["world_size"][1:] == (1.0, "ranks") and got["tp_rank"][1] == 0.0 and "ep_rank" not in got


# ---------------------------------------------------------------- the stats interval, measured

DGX_BOOT = (REAL_LOGS.parent / "dgx-spark-djangodevreng" / "results" / "qwen-3.6" / "qwen-3.6-35b-a3b" / "bf16"
            / "_bootlog.txt")
STATS_TIME = re.compile(r"^\(APIServer pid=\d+\) INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[loggers\.py:\d+\] Engine 000: "
                        r"Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+)", re.M)


def line_at(time: str, gen: float = 54.2, engine: str = "000") -> str:
    """REAL_STATS printed at `time` (MM-DD HH:MM:SS) with this generation rate (0: idle,
    nothing running) and engine."""
    line = REAL_STATS.replace("05-30 07:55:21", time).replace("Engine 000", f"Engine {engine}")
    return line.replace("54.2 tokens/s", f"{gen:.1f} tokens/s").replace("Running: 1", f"Running: {int(gen > 0)}")


def expected_interval(text: str) -> float:
    """The median gap after a line with throughput, from the printed times (parsed here with a
    regex and pandas, in a leap year), for a one-engine log."""
    found = STATS_TIME.findall(text)
    t = pd.to_datetime(["2000-" + f[0] for f in found], format="%Y-%m-%d %H:%M:%S")
    busy = [float(p) > 0 or float(g) > 0 for _, p, g in found]
    gaps = [(b - a).total_seconds() for a, b, was in zip(t[:-1], t[1:], busy[:-1]) if was]
    return float(np.median(gaps)) if gaps else math.nan


@pytest.mark.parametrize("path", [*real_logs(), *([DGX_BOOT] if DGX_BOOT.is_file() else [])],
                         ids=lambda p: p.name)
def test_the_interval_of_each_real_log_comes_from_its_times(path):
    res = vllm_log.read(path)
    (interval,) = res.intervals  # one engine in each of these logs
    text = path.read_text(encoding="utf-8")
    assert interval.seconds == expected_interval(text) and interval.lines == len(STATS_TIME.findall(text))
    assert res.notes == [interval.text()] and interval.text() in res.summary()
    per_log = vllm_log.stats_intervals(res.tables["windows"])
    assert per_log["interval_s"].tolist() == [interval.seconds] and per_log["gaps"].tolist() == [interval.gaps]


@pytest.mark.skipif(not REAL_LOGS.is_dir(), reason="real samples not present")
def test_the_five_second_log_is_five_seconds():
    """SOURCES.md: the genesis excerpt has a 5-second stats interval (16:21:55, 16:22:00)."""
    res = vllm_log.read(REAL_LOGS / "genesis-vllm-patches_24_3090-tp8.log")
    assert res.intervals[0].seconds == 5 and res.tables["windows"]["gap_s"].tolist()[1] == 5
    assert res.notes == ["stats interval of engine 000 (APIServer) 5 s (median of 1 gap between its consecutive "
                         "stats lines; at least half of them exactly 5 s)"]
    assert vllm_log.with_intervals(res.tables["windows"])["interval_s"].tolist() == [5.0, 5.0]


def test_one_stats_line_has_no_interval(tmp_path):
    res = read(tmp_path, [REAL_STATS, REAL_ACCESS])
    (interval,) = res.intervals
    assert math.isnan(interval.seconds) and (interval.gaps, interval.lines) == (0, 1)
    assert res.notes == ["stats interval of engine 000 (APIServer) unknown: 1 stats line and no two whose times "
                         "give a gap"]
    w = vllm_log.with_intervals(res.tables["windows"])
    assert w["gap_s"].isna().all() and w["interval_s"].isna().all()


def test_gaps_after_an_idle_line_do_not_set_the_interval(tmp_path):
    """Bursts of one busy line and the all-zero line after it, 10 s apart, then 200 s of
    silence (vLLM printed the idle lines at DEBUG): half the gaps are 200 s, the interval 10 s."""
    lines, t = [], pd.Timestamp("2000-05-30 07:00:00")
    for _ in range(5):
        lines += [line_at(f"{t:%m-%d %H:%M:%S}"), line_at(f"{t + pd.Timedelta(10, 's'):%m-%d %H:%M:%S}", 0.0)]
        t += pd.Timedelta(210, "s")
    res = read(tmp_path, lines)
    gaps = res.tables["windows"]["gap_s"]
    assert gaps.dropna().tolist() == [10.0, 200.0] * 4 + [10.0] and gaps.median() == 10.0
    assert res.intervals[0].seconds == 10.0 and res.intervals[0].gaps == 5  # the gaps after a busy line
    two_gaps = [lines[0], lines[1], line_at("05-30 07:05:00", 0.0)]  # no busy line before the long gap
    assert vllm_log.read(write(tmp_path, two_gaps, "idle.log")).intervals[0].seconds == 10.0


def test_each_engine_has_its_own_gaps(tmp_path):
    """Two data-parallel engines print at the same times: 10 s each, never 0 s."""
    lines = [line_at(f"05-30 07:55:{s:02d}", engine=e) for s in (0, 10, 20, 30) for e in ("000", "001")]
    res = read(tmp_path, lines)
    w = res.tables["windows"]
    assert w["gap_s"].dropna().eq(10.0).all() and w["gap_s"].isna().sum() == 2
    assert [(i.engine, i.seconds, i.gaps) for i in res.intervals] == [("000", 10.0, 3), ("001", 10.0, 3)]
    assert vllm_log.stats_intervals(w)["interval_s"].tolist() == [10.0, 10.0]


def test_the_turn_of_a_year_is_one_gap(tmp_path):
    res = read(tmp_path, [line_at("12-31 23:59:55"), line_at("01-01 00:00:05"), line_at("01-01 00:00:15")])
    assert res.tables["windows"]["gap_s"].tolist()[1:] == [10.0, 10.0]
    leap = read(tmp_path, [line_at("02-28 23:59:55"), line_at("02-29 00:00:05")], name="leap.log")
    assert leap.tables["windows"]["gap_s"].tolist()[1] == 10.0  # 02-29 is a date in a log without a year


def test_time_going_back_gives_no_gap(tmp_path):
    res = read(tmp_path, [line_at("05-30 07:55:20"), line_at("05-30 07:55:10"), line_at("05-30 07:55:20")])
    assert res.tables["windows"]["gap_s"].isna().tolist() == [True, True, False]

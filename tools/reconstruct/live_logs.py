"""Write one day of a live vLLM server as its log file and the nvidia-smi log beside it.

A `DaySpec` says when the server booted and how its log looks (colour, request logging,
compression); the bursts of windows come from the fit. Stats lines fall on the server's
10-second grid, which keeps running (silently, at DEBUG) through idle gaps; each burst
ends with one window logged after the last request finished and one all-zero line.
Requests arrive and finish between stats lines as the plan says; the access line is
written when a (non-streamed) response is complete. The GPU log samples every card of
the host, including the one vLLM does not use.
"""

from __future__ import annotations

import bisect
import gzip
import io
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from . import vllm_serve_log as L

API = "APIServer pid=1"


@dataclass
class EngineFacts:
    """Start-up facts a model's server prints (ours: see ASSUMPTIONS in power_sweep)."""

    model: str
    architecture: str
    args: dict
    kv_tokens: int
    kv_gib: float
    weights_gib: float
    load_s: float
    compile_s: float
    graph_s: int
    graph_gib: float
    boot_s: float
    restart_boot_s: float
    engine_config: str
    ep: bool
    spec_tokens: int = 0
    cudagraph_warning: str = ""


@dataclass
class DaySpec:
    date: str
    boot: str  # HH:MM:SS local
    limit_w: int
    previous_limit_w: int
    colour: bool
    request_log: bool
    extra_field_warnings: bool
    tool_parser_errors: int
    bad_requests: int
    gz_log: bool
    gz_smi: bool
    max_seqs: int
    gen_ref: float
    prefill_ref: float
    hit_rate: float
    ctx_tokens: tuple[float, float]
    spec_acceptance: tuple[float, float] | None
    gaps: dict = field(default_factory=dict)


# ---------------------------------------------------------------- timeline


def _boot_lines(t0: datetime, f: EngineFacts, colour: bool, engine_pid: int, worker_pid: int,
                version: str, restart: bool, rng) -> tuple[list[tuple[datetime, str]], datetime]:
    """Start-up block; returns timed lines and the moment the server is ready."""
    out = []
    t = t0
    boot = f.restart_boot_s if restart else f.boot_s

    def at(dt, text):
        out.append((t0 + timedelta(seconds=dt), text))

    at(0.0, L.log(API, "INFO", t, "utils.py:299", L.logo(version, f.model), colour))
    at(0.0, L.log(API, "INFO", t, "api_server.py:1896", f"vLLM API server version {version}", colour))
    at(0.0, L.log(API, "INFO", t, "utils.py:233", f"non-default args: {f.args!r}", colour))
    t1 = t0 + timedelta(seconds=9.3)
    at(9.3, L.log(API, "INFO", t1, "model.py:547", f"Resolved architecture: {f.architecture}", colour))
    at(9.3, L.log(API, "INFO", t1, "model.py:1510", "Using max model len 262144", colour))
    at(9.4, L.log(API, "INFO", t1, "scheduler.py:226",
                  "Chunked prefill is enabled with max_num_batched_tokens=8192.", colour))
    eng = f"EngineCore_DP0 pid={engine_pid}"
    t2 = t0 + timedelta(seconds=17.8)
    at(17.8, L.log(eng, "INFO", t2, "core.py:93",
                   f"Initializing a V1 LLM engine (v{version}) with config: {f.engine_config}", colour))
    at(18.0, L.log(eng, "WARNING", t2, "multiproc_executor.py:882",
                   "Reducing Torch parallelism from 16 threads to 1 to avoid unnecessary CPU contention. "
                   "Set OMP_NUM_THREADS in the external environment to tune this value as needed.", colour))
    workers = [f"Worker_TP{i}_EP{i}" if f.ep else f"Worker_TP{i}" for i in range(4)]
    for i, w in enumerate(workers):
        at(31.0 + i * 0.2, L.log(f"{w} pid={worker_pid + i}", "INFO", t0 + timedelta(seconds=31 + i * 0.2),
                                 "parallel_state.py:1325", f"rank {i} in world size 4 is assigned as DP rank 0, "
                                 f"PP rank 0, TP rank {i}, EP rank {i if f.ep else 'N/A'}", colour))
    w0 = f"{workers[0]} pid={worker_pid}"
    load = f.load_s * (0.55 if restart else 1.0)
    tl = 34.0 + load
    at(34.0, L.log(w0, "INFO", t0 + timedelta(seconds=34), "gpu_model_runner.py:2912",
                   f"Starting to load model {f.model}...", colour))
    at(tl, L.log(w0, "INFO", t0 + timedelta(seconds=tl), "default_loader.py:314",
                 f"Loading weights took {load:.2f} seconds", colour))
    at(tl + 2.1, L.log(w0, "INFO", t0 + timedelta(seconds=tl + 2.1), "gpu_model_runner.py:2966",
                       f"Model loading took {f.weights_gib:.4f} GiB memory and {load + 4.3:.6f} seconds", colour))
    comp = f.compile_s * (0.18 if restart else 1.0)
    tc = tl + 6 + comp
    at(tl + 6, L.log(w0, "INFO", t0 + timedelta(seconds=tl + 6), "backends.py:643",
                     "Using cache directory: /root/.cache/vllm/torch_compile_cache/5c1f07d3a2/rank_0_0/backbone "
                     "for vLLM's torch.compile", colour))
    at(tc, L.log(w0, "INFO", t0 + timedelta(seconds=tc), "monitor.py:34",
                 f"torch.compile takes {comp:.2f} s in total", colour))
    at(tc + 3.4, L.log(w0, "INFO", t0 + timedelta(seconds=tc + 3.4), "gpu_worker.py:391",
                       f"Available KV cache memory: {f.kv_gib:.2f} GiB", colour))
    tk = tc + 4.0
    at(tk, L.log(eng, "INFO", t0 + timedelta(seconds=tk), "kv_cache_utils.py:1229",
                 f"GPU KV cache size: {f.kv_tokens:,} tokens", colour))
    at(tk, L.log(eng, "INFO", t0 + timedelta(seconds=tk), "kv_cache_utils.py:1234",
                 f"Maximum concurrency for 262,144 tokens per request: {f.kv_tokens / 262144:.2f}x", colour))
    if f.cudagraph_warning:
        at(tk + 0.5, L.log(w0, "WARNING", t0 + timedelta(seconds=tk + 0.5), "gpu_model_runner.py:4583",
                           f.cudagraph_warning, colour))
    tg = tk + f.graph_s + 1.0
    at(tg, L.log(w0, "INFO", t0 + timedelta(seconds=tg), "gpu_model_runner.py:4741",
                 f"Graph capturing finished in {f.graph_s} secs, took {f.graph_gib:.2f} GiB", colour))
    ready = max(boot, tg + 3.0)
    at(ready - 1.5, L.log(eng, "INFO", t0 + timedelta(seconds=ready - 1.5), "core.py:271",
                          f"init engine (profile, create kv cache, warmup model) took {ready - 20.5:.2f} seconds",
                          colour))
    tr = t0 + timedelta(seconds=ready)
    sampling = ("{'temperature': 1.0, 'top_k': 20, 'top_p': 0.95, 'min_p': 0.0, 'presence_penalty': 1.5, "
                "'repetition_penalty': 1.0}")
    at(ready - 0.8, L.log(API, "INFO", tr, "serving_responses.py:201",
                          f"Using default chat sampling params from model: {sampling}", colour))
    at(ready - 0.7, L.log(API, "INFO", tr, "api_server.py:1971",
                          "Starting vLLM API server 0 on http://0.0.0.0:8000", colour))
    at(ready - 0.7, L.log(API, "INFO", tr, "launcher.py:37", "Available routes are:", colour))
    for r in L.ROUTES:
        at(ready - 0.6, L.log(API, "INFO", tr, "launcher.py:45", f"Route: {r}, Methods: {L.route_methods(r)}", colour))
    at(ready - 0.5, L.uvicorn(API, "INFO", "Started server process [1]", colour))
    at(ready - 0.5, L.uvicorn(API, "INFO", "Waiting for application startup.", colour))
    at(ready, L.uvicorn(API, "INFO", "Application startup complete.", colour))
    return sorted(out, key=lambda x: x[0]), tr


@dataclass
class _Tick:
    t: datetime
    window: object  # power_sweep.Window


def timeline(bursts, spec: DaySpec, facts: EngineFacts, rng: np.random.Generator):
    """Times of every stats line, boot and crash, from the bursts and the gap assumptions."""
    t0 = datetime.fromisoformat(f"{spec.date}T{spec.boot}")
    period = 10.0 + spec.gaps["tick_drift_s"]
    boots = [(t0, False)]
    lines, ready = _boot_lines(t0, facts, spec.colour, 214, 380, "0.19.0", False, rng)
    readies = [ready]
    ticks: list[_Tick] = []
    crashes = []
    i = int(spec.gaps["first_gap_ticks"] + rng.integers(0, 12))
    base = ready
    for bi, (ws, end) in enumerate(bursts):
        for w in ws:
            ticks.append(_Tick(base + timedelta(seconds=(i + 1) * period), w))
            i += 1
        if end == "crash":
            tc = ticks[-1].t + timedelta(seconds=float(rng.uniform(2.0, 7.0)))
            crashes.append(tc)
            t_restart = tc + timedelta(seconds=float(rng.uniform(6.0, 9.0)))
            boot_lines, ready2 = _boot_lines(t_restart, facts, spec.colour, 213, 377, "0.19.0", True, rng)
            boots.append((t_restart, True))
            readies.append(ready2)
            lines += boot_lines
            base, i = ready2, int(rng.integers(2, 8))
            continue
        gap = spec.gaps["mean_gap_ticks"]
        if bi == spec.gaps.get("long_gap_after", -1):
            gap = spec.gaps["long_gap_ticks"]
        i += max(3, int(rng.exponential(gap)))
    end_t = (ticks[-1].t if ticks else ready) + timedelta(seconds=float(spec.gaps["tail_idle_s"]))
    return t0, lines, ticks, crashes, boots, end_t, readies


# ---------------------------------------------------------------- the server log


@dataclass
class Day:
    lines: list[str]
    printed: list[dict]  # every stats line as printed: time, kind, running, gen, prefill, ...
    span: tuple[datetime, datetime]
    ticks: list
    boots: list
    crashes: list


def _client(rng) -> str:
    return f"172.18.0.1:{int(rng.integers(33000, 60999))}"


def server_log(bursts, spec: DaySpec, facts: EngineFacts, rng: np.random.Generator):
    """All lines of the server log, in order, and the windows as printed."""
    t0, boot_lines, ticks, crashes, boots, end_t, readies = timeline(bursts, spec, facts, rng)
    events: list[tuple[datetime, int, str]] = [(t, 0, s) for t, s in boot_lines]
    printed = []
    hit = spec.hit_rate
    crash_iter = iter(crashes)
    next_crash = next(crash_iter, None)
    max_tok = 262144
    colour = spec.colour
    for k, tick in enumerate(ticks):
        w = tick.window
        start = tick.t - timedelta(seconds=10.0)
        first = k == 0 or (tick.t - ticks[k - 1].t).total_seconds() > 10.5 or ticks[k - 1].window.kind == "zero"
        if first and w.kind == "window":
            events.append((start + timedelta(seconds=float(rng.uniform(0.05, 0.6))), 1,
                           L.access(API, _client(rng), "GET", "/v1/models", 200, colour)))
        # arrivals and completions inside the window
        for _ in range(w.arrivals):
            ta = start + timedelta(seconds=float(rng.uniform(0.7, 9.9)))
            rid = "chatcmpl-" + "".join(f"{x:02x}" for x in rng.integers(0, 256, 16))
            if spec.extra_field_warnings and rng.random() < 0.3:
                events.append((ta, 1, L.log(API, "WARNING", ta, "protocol.py:51", "The following fields were present "
                                            "in the request but ignored: {'reasoning_effort'}", colour)))
            if spec.request_log:
                prompt = int(rng.uniform(*spec.ctx_tokens))
                events.append((ta, 2, L.log(API, "INFO", ta, "logger.py:54", f"Received request {rid}: params: "
                                            f"{L.sampling_params(max_tok - prompt)}, lora_request: None.", colour)))
                events.append((ta, 3, L.log(API, "INFO", ta, "async_llm.py:344", f"Added request {rid}.", colour)))
        for _ in range(w.completions):
            tf = start + timedelta(seconds=float(rng.uniform(0.2, 9.95)))
            events.append((tf, 1, L.access(API, _client(rng), "POST", "/v1/chat/completions", 200, colour)))
        # the stats line itself
        if w.kind == "window":
            waiting = int(rng.poisson(0.8)) if w.running >= spec.max_seqs else 0
            ctx = float(np.sum(np.clip(rng.normal(sum(spec.ctx_tokens) / 2, 9000, w.running), 8000, 120000)))
            kv = min(99.0, 100 * ctx / facts.kv_tokens)
            pre = int(rng.random() < 0.08) if (w.running >= spec.max_seqs and facts.ep and spec.max_seqs == 8) else 0
        else:
            waiting, kv, pre = 0, 0.0, 0
        hit = float(np.clip(hit + rng.normal(0, 0.25), spec.hit_rate - 6, min(99.0, spec.hit_rate + 5)))
        line = L.stats(tick.t, w.prefill, w.gen, w.running, waiting, kv, hit, pre, colour)
        events.append((tick.t, 5, line))
        if spec.spec_acceptance and w.gen > 0:
            tokens = int(round(w.gen * 10.0))
            mean_len = float(np.clip(rng.normal(*spec.spec_acceptance), 1.6, 2.9))
            drafts = max(1, int(round(tokens / mean_len)))
            accepted = max(0, tokens - drafts)
            acc0 = min(drafts, int(round(accepted * rng.uniform(0.56, 0.63))))
            acc1 = min(acc0, accepted - acc0)
            acc0 = accepted - acc1
            if acc0 <= drafts:
                events.append((tick.t, 6, L.spec_decoding(tick.t, drafts, [acc0, acc1], 10.0, colour)))
        printed.append(dict(time=tick.t, kind=w.kind, running=w.running, gen=w.gen, prefill=w.prefill,
                            completions=w.completions, arrivals=w.arrivals))
        # the crash after this window
        if next_crash is not None and tick.t < next_crash and (k + 1 == len(ticks) or ticks[k + 1].t > next_crash):
            events += _crash_lines(next_crash, w.running, colour, rng)
            next_crash = next(crash_iter, None)
    events += _extras(ticks, spec, colour, rng)
    events += _health(readies, end_t, colour, rng, crashes)
    events += _shutdown(end_t, colour)
    events.sort(key=lambda e: (e[0], e[1]))
    return Day([e[2] for e in events], printed, (t0, end_t), ticks, boots, crashes)


def _crash_lines(tc: datetime, running: int, colour: bool, rng) -> list:
    eng = "EngineCore_DP0 pid=214"
    err = ("CUDA error: an illegal memory access was encountered\n"
           "CUDA kernel errors might be asynchronously reported at some "
           "other API call, so the stacktrace below might be incorrect.\n"
           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    out = [(tc, 1, L.log(eng, "ERROR", tc, "core.py:903", L.engine_traceback(err), colour))]
    t2 = tc + timedelta(seconds=0.4)
    out.append((t2, 2, L.log(API, "ERROR", t2, "async_llm.py:525", L.output_handler_traceback(), colour)))
    for j in range(running):
        out.append((t2 + timedelta(seconds=0.01 * (j + 1)), 3,
                    L.access(API, _client(rng), "POST", "/v1/chat/completions", 500, colour)))
        if j == 0:
            out.append((t2 + timedelta(seconds=0.011), 3, L.raw(API, L.asgi_traceback(), colour)))
    t3 = tc + timedelta(seconds=1.2)
    out.append((t3, 4, L.uvicorn(API, "INFO", "Shutting down", colour)))
    out.append((t3, 4, L.uvicorn(API, "INFO", "Waiting for application shutdown.", colour)))
    out.append((t3, 4, L.uvicorn(API, "INFO", "Application shutdown complete.", colour)))
    out.append((t3, 4, L.uvicorn(API, "INFO", "Finished server process [1]", colour)))
    return out


def _extras(ticks, spec: DaySpec, colour: bool, rng) -> list:
    """Tool-parser tracebacks and over-long prompts, placed in random busy windows."""
    busy = [t for t in ticks if t.window.kind == "window"]
    out = []
    if not busy:
        return out
    for j in range(spec.tool_parser_errors):
        t = busy[int(rng.integers(0, len(busy)))].t - timedelta(seconds=float(rng.uniform(0.5, 9.0)))
        out.append((t, 1, L.log(API, "ERROR", t, "qwen3coder_tool_parser.py:329",
                                L.tool_parser_traceback(int(rng.integers(40, 400))), colour)))
    for j in range(spec.bad_requests):
        t = busy[int(rng.integers(0, len(busy)))].t - timedelta(seconds=float(rng.uniform(0.5, 9.0)))
        n = int(rng.integers(262145, 270000))
        msg = (f"This model's maximum context length is 262144 tokens. However, you requested {n} tokens "
               f"({n} in the messages, 0 in the completion). Please reduce the length of the messages or "
               "completion.")
        out.append((t, 1, L.log(API, "WARNING", t, "serving_chat.py:263",
                                f"Error in preprocessing prompt inputs: {msg}", colour)))
        out.append((t, 2, L.access(API, _client(rng), "POST", "/v1/chat/completions", 400, colour)))
    return out


def _health(readies, end_t, colour, rng, crashes) -> list:
    """Docker's healthcheck: GET /health every 30 s from inside the container, answered
    only while a server is up (from each start-up's end to the next crash)."""
    out = []
    ups = []
    for i, r in enumerate(readies):
        down = crashes[i] if i < len(crashes) else end_t
        ups.append((r, down))
    t = readies[0] - timedelta(seconds=float(rng.uniform(0.0, 30.0)))
    while t < end_t:
        if any(a < t < b for a, b in ups):
            out.append((t, 0, L.access(API, f"127.0.0.1:{int(rng.integers(40000, 60999))}", "GET", "/health", 200,
                                       colour)))
        t += timedelta(seconds=30.0 + float(rng.uniform(0.0, 0.02)))
    return out


def _shutdown(t: datetime, colour: bool) -> list:
    return [
        (t, 7, L.uvicorn(API, "INFO", "Shutting down", colour)),
        (t, 7, L.uvicorn(API, "INFO", "Waiting for application shutdown.", colour)),
        (t, 7, L.uvicorn(API, "INFO", "Application shutdown complete.", colour)),
        (t, 7, L.uvicorn(API, "INFO", "Finished server process [1]", colour)),
    ]


# ---------------------------------------------------------------- nvidia-smi


HEADER = ("timestamp, index, name, power.draw [W], power.limit [W], utilization.gpu [%], "
          "memory.used [MiB], memory.total [MiB], temperature.gpu, clocks.current.sm [MHz]")


def smi_log(day: Day, spec: DaySpec, gpus: list[dict], vllm_idx: list[int],
            gpu_mem_frac: float, rng: np.random.Generator, smi: dict) -> list[str]:
    """`nvidia-smi --query-gpu=... --format=csv -l 5` over the day, every card of the host."""
    ticks, boots, crashes = day.ticks, day.boots, day.crashes
    t0, t_end = day.span
    start = t0 - timedelta(seconds=smi["pre_roll_s"])
    stop = t_end + timedelta(seconds=smi["post_roll_s"])
    switch = t0 - timedelta(seconds=smi["limit_set_before_s"])
    times = [tk.t for tk in ticks]
    temps = {g["index"]: 31.0 + g["index"] for g in gpus}
    lines = [HEADER]
    t = start
    boots_ready = [(b, b + timedelta(seconds=240 if r else 330)) for b, r in boots]
    while t <= stop:
        j = bisect.bisect_left(times, t)
        w = ticks[j].window if j < len(ticks) and (times[j] - t).total_seconds() <= 10.0 else None
        loading = any(a <= t < b for a, b in boots_ready)
        down = any(c <= t < c + timedelta(seconds=8) for c in crashes)
        for k, g in enumerate(gpus):
            stamp = t + timedelta(milliseconds=int(k * rng.integers(0, 2)))
            used = g["index"] in vllm_idx
            limit = g["limit"] if not used else (spec.previous_limit_w if t < switch else spec.limit_w)
            if not used:
                draw = float(rng.uniform(*g["draw"]))
                util = int(rng.integers(0, 4)) if draw < 25 else int(rng.integers(10, 60))
                mem = g["mem_used"]
            else:
                u, mem = _load(t, w, loading, down, t0, t_end, spec, g, gpu_mem_frac, rng)
                idle = g["idle_w"] + float(rng.normal(0, 1.2))
                demand = idle + (g["demand_w"] - idle) * u
                draw = min(demand * (1 + float(rng.normal(0, 0.035))), limit * float(rng.uniform(0.985, 1.008)))
                draw = max(draw, idle * 0.9)
                util = 0 if u < 0.05 else int(np.clip(55 + 45 * u + rng.normal(0, 4), 1, 100))
            temps[g["index"]] += (28.0 + 0.17 * draw - temps[g["index"]]) * 0.12
            clock = 210 if util == 0 else int(np.clip(15 * round((700 + 3.4 * draw) / 15), 600, 1950))
            lines.append(f"{stamp:%Y/%m/%d %H:%M:%S}.{stamp.microsecond // 1000:03d}, {g['index']}, {g['name']}, "
                         f"{draw:.2f} W, {limit:.2f} W, {util} %, {mem} MiB, {g['mem_total']} MiB, "
                         f"{int(round(temps[g['index']]))}, {clock} MHz")
        t += timedelta(seconds=smi["interval_s"] + float(rng.uniform(0.004, 0.03)))
    return lines


def _load(t, w, loading, down, t0, t_end, spec, g, frac, rng):
    """Utilisation proxy 0-1 and memory of a card vLLM uses, at time t."""
    mem = int(g["mem_total"] * frac + 310 + rng.integers(0, 40))
    if t < t0 or t > t_end or down:
        return 0.0, int(rng.integers(1, 4))
    if loading and w is None:
        return float(rng.uniform(0.05, 0.35)), mem
    if w is None or w.kind == "zero":
        return 0.0, mem
    if w.kind == "tail":
        return float(rng.uniform(0.05, 0.3)), mem
    u = 0.22 + 0.55 * min(1.0, w.gen / spec.gen_ref) + 0.45 * min(1.0, w.prefill / spec.prefill_ref)
    return float(np.clip(u * rng.uniform(0.92, 1.08), 0.0, 1.0)), mem


# ---------------------------------------------------------------- files


def write_text(path: Path, lines: list[str], gz: bool) -> None:
    """Write lines with '\\n' endings; gzip deterministically (no name, mtime 0)."""
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as fh:
            fh.write(data)
        path.write_bytes(buf.getvalue())
    else:
        path.write_bytes(data)

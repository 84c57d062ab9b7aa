"""Write a vLLM 0.19-era server log (`docker logs` of `vllm serve`) from simulated events.

Line formats follow docs/formats.md section 2: `(Process pid=N) LEVEL MM-DD HH:MM:SS [file:line]
message`, the periodic `Engine 000:` stats line every ~10 s (one all-zero line after each
burst, then silence), the `SpecDecoding metrics:` line right after it with the same
timestamp when the interval had drafts, and uvicorn access lines without a timestamp.
Events are given in wall-clock datetimes; the log prints them truncated to the second, as
Python logging does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

API = "APIServer"
ENGINE = "EngineCore_DP0"


@dataclass
class Request:
    """One request as the server saw it (wall-clock seconds from the session origin)."""

    arrival: float
    first_token: float
    chunk_times: np.ndarray  # arrival time of each streamed chunk after the first token
    chunk_tokens: np.ndarray  # tokens in each of those chunks
    input_len: int
    path: str = "/v1/completions"
    a0: np.ndarray | None = None  # per chunk: accepted at draft position 0 (MTP)
    a1: np.ndarray | None = None
    port: int = 0

    @property
    def finish(self) -> float:
        return float(self.chunk_times[-1]) if len(self.chunk_times) else self.first_token

    @property
    def output_len(self) -> int:
        return 1 + int(self.chunk_tokens.sum())


@dataclass
class Window:
    """What one stats line reports: the interval (start, end] and what happened in it."""

    end: float
    seconds: float
    prompt_tokens: int
    generation_tokens: int
    running: int
    kv_usage: float  # fraction
    drafts: int = 0
    accepted: int = 0
    per_pos: list[int] = field(default_factory=list)


def line(t: datetime, msg: str, level: str = "INFO", where: str = "api_server.py:1", process: str | None = API,
         pid: int = 1) -> str:
    tag = f"({process} pid={pid}) " if process else ""
    return f"{tag}{level} {t.strftime('%m-%d %H:%M:%S')} [{where}] {msg}"


def windows(requests: list[Request], ticks: np.ndarray, kv_tokens: int, k: int = 0) -> list[Window]:
    """Aggregate the requests' events over the stats intervals ending at `ticks`."""
    n = len(ticks)
    prompt = np.zeros(n, dtype=np.int64)
    gen = np.zeros(n, dtype=np.int64)
    drafts = np.zeros(n, dtype=np.int64)
    per_pos = np.zeros((n, max(k, 1)), dtype=np.int64)

    def slot(t):
        return np.searchsorted(ticks, t, side="left")  # (t_{i-1}, t_i] -> i

    for r in requests:
        i = slot(r.first_token)
        if i < n:
            prompt[i] += r.input_len
            gen[i] += 1
        idx = slot(r.chunk_times)
        ok = idx < n
        np.add.at(gen, idx[ok], r.chunk_tokens[ok])
        if k and r.a0 is not None:
            np.add.at(drafts, idx[ok], 1)
            np.add.at(per_pos[:, 0], idx[ok], r.a0[ok])
            np.add.at(per_pos[:, 1], idx[ok], r.a1[ok])
    out = []
    for i, t in enumerate(ticks):
        running, held = 0, 0
        for r in requests:
            if r.arrival <= t < r.finish:
                running += 1
                done = int(r.chunk_tokens[r.chunk_times <= t].sum()) + (1 if r.first_token <= t else 0)
                held += r.input_len + done
        seconds = float(t - ticks[i - 1]) if i else 10.0
        out.append(Window(float(t), seconds, int(prompt[i]), int(gen[i]), running, held / kv_tokens,
                          int(drafts[i]), int(per_pos[i].sum()) if k else 0,
                          [int(x) for x in per_pos[i]] if k else []))
    return out


def stats_lines(ws: list[Window], clock, k: int, engine_where: str, spec_where: str) -> list[tuple[float, str]]:
    """The INFO lines vLLM prints for these windows (silent while idle)."""
    out = []
    prev_busy = False
    for w in ws:
        busy = w.prompt_tokens > 0 or w.generation_tokens > 0
        if not busy and not prev_busy:
            continue
        prev_busy = busy
        t = clock(w.end)
        msg = (f"Engine 000: Avg prompt throughput: {w.prompt_tokens / w.seconds:.1f} tokens/s, "
               f"Avg generation throughput: {w.generation_tokens / w.seconds:.1f} tokens/s, "
               f"Running: {w.running} reqs, Waiting: 0 reqs, GPU KV cache usage: {100 * w.kv_usage:.1f}%, "
               f"Prefix cache hit rate: 0.0%")
        out.append((w.end, line(t, msg, where=engine_where)))
        if k and w.drafts:
            drafted = w.drafts * k
            rates = ", ".join(f"{a / w.drafts:.3f}" for a in w.per_pos)
            msg = (f"SpecDecoding metrics: Mean acceptance length: {1 + w.accepted / w.drafts:.2f}, "
                   f"Accepted throughput: {w.accepted / w.seconds:.2f} tokens/s, "
                   f"Drafted throughput: {drafted / w.seconds:.2f} tokens/s, "
                   f"Accepted: {w.accepted} tokens, Drafted: {drafted} tokens, "
                   f"Per-position acceptance rate: {rates}, "
                   f"Avg Draft acceptance rate: {100 * w.accepted / drafted:.1f}%")
            out.append((w.end + 1e-6, line(t, msg, where=spec_where)))
    return out


def access_line(client: str, port: int, method: str, path: str, status: int = 200) -> str:
    """uvicorn's access line: no timestamp, only the process tag."""
    return f'({API} pid=1) INFO:     {client}:{port} - "{method} {path} HTTP/1.1" {status} OK'


def stamp(origin: datetime):
    """Seconds from the session origin -> datetime."""
    return lambda s: origin + timedelta(seconds=float(s))

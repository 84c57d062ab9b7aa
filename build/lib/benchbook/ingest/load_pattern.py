"""How a run sent its requests: its load pattern, read from the file's own fields.

A TPOT measured one request at a time, with 16 clients, or under an open-loop request
rate that let 250 requests pile up are three different numbers. `vllm bench serve`
records which it was: `max_concurrency` (the client-side cap, null for none),
`request_rate` (inf: no pacing), `burstiness` and, since vLLM 0.11,
`max_concurrent_requests` (the peak in flight; docs/formats.md). Every part of the book that needs to know
(`benchbook new` choosing a run kind, `validate` checking one, the runner's sections, the
page's labels) asks this module, so the answer is the same everywhere.

The patterns:
- ``single-stream``: at most one request in flight (max_concurrency 1);
- ``concurrency``: a closed loop of N clients (max_concurrency N > 1);
- ``request-rate``: an open loop, requests sent at R per second whatever is in flight;
- ``all-at-once``: no cap and no pacing (request_rate inf): every prompt sent at once;
- ``unknown``: the file records neither (older `benchmark_serving.py` output without
  `max_concurrency`); study.yml's concurrency or request rate is then the user's word.
"""

from __future__ import annotations

import math

SINGLE = "single-stream"
CONCURRENCY = "concurrency"
RATE = "request-rate"
ALL_AT_ONCE = "all-at-once"
UNKNOWN = "unknown"
PATTERNS = (SINGLE, CONCURRENCY, RATE, ALL_AT_ONCE, UNKNOWN)
CLOSED = (SINGLE, CONCURRENCY)  # a fixed number of requests in flight: what a concurrency sweep measures
OPEN = (RATE, ALL_AT_ONCE)


def _value(v):
    """None for a missing value of any kind (None, NaN, pandas NA)."""
    try:
        return None if v is None or v != v else v  # NaN and NA are not equal to themselves
    except TypeError:  # pd.NA in a boolean context
        return None


def pattern(max_concurrency, request_rate, *, cap_recorded: bool = True) -> str:
    """The pattern a bench result's own fields give. `cap_recorded` is False when the file
    has no `max_concurrency` key at all (so a null cap is not known to be 'none')."""
    cap, rate = _value(max_concurrency), _value(request_rate)
    if cap is not None:
        return SINGLE if int(cap) == 1 else CONCURRENCY
    if not cap_recorded or rate is None:
        return UNKNOWN
    return ALL_AT_ONCE if math.isinf(float(rate)) else RATE


def of_context(context: dict) -> str:
    """The pattern a study.yml run entry states: its concurrency, else its request rate."""
    conc, rate = _value(context.get("concurrency")), _value(context.get("request_rate"))
    if conc is not None:
        return SINGLE if float(conc) == 1 else CONCURRENCY
    if rate is not None:
        return ALL_AT_ONCE if math.isinf(float(rate)) else RATE
    return UNKNOWN


def conflict(recorded: str, context: dict) -> str | None:
    """Why study.yml's description contradicts what the file records, or None.

    A file that records an open loop (no cap) cannot be given a concurrency by hand: the
    number of requests in flight was not fixed. A closed-loop file whose cap differs from
    study.yml's concurrency is a typo or the wrong file."""
    stated = of_context(context)
    if recorded == UNKNOWN or stated == UNKNOWN:
        return None
    if recorded in OPEN and stated in CLOSED:
        return (f"study.yml gives concurrency {context.get('concurrency')}, but the file records "
                f"{'an open-loop request rate' if recorded == RATE else 'every prompt sent at once'} "
                "with no concurrency cap (max_concurrency null): the number of requests in flight was not fixed")
    if recorded in CLOSED and stated in OPEN:
        return (f"study.yml gives request_rate {context.get('request_rate')}, but the file records a "
                "concurrency cap (max_concurrency): its load is set by the cap")
    return None


def text(row) -> str:
    """The pattern in words for a page or a message: 'open loop at 0.5 req/s (burstiness
    0.7), up to 66 in flight'. `row` is a mapping with the runs table's columns."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    kind = _value(get("load")) or UNKNOWN
    cap, rate, n = _value(get("max_concurrency")), _value(get("request_rate")), _value(get("num_prompts"))
    peak, burst = _value(get("peak_in_flight")), _value(get("burstiness"))
    peak_text = f", up to {int(peak)} in flight" if peak is not None else ""
    if kind == SINGLE:
        return "one request at a time"
    if kind == CONCURRENCY:
        return f"{int(cap)} concurrent requests (closed loop)"
    if kind == RATE:
        b = f" (burstiness {_num(burst)})" if burst is not None and float(burst) != 1 else ""
        return f"open loop at {_num(rate)} req/s{b}{peak_text}"
    if kind == ALL_AT_ONCE:
        return f"{'all ' + str(int(n)) if n is not None else 'every'} prompts sent at once{peak_text}"
    return "load pattern not recorded in the file"


def _num(v) -> str:
    f = float(v)
    return str(int(f)) if f.is_integer() else f"{f:g}"

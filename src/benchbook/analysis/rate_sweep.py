"""Request-rate sweeps: what a server delivered as the offered load rose, and how much load
it took under a latency objective.

An open-loop run (`vllm bench serve --request-rate R` without `--max-concurrency`) sends
requests at R per second whatever is in flight, so latency and throughput are measured
against offered load; one run per R is a *step* of a sweep. Steps form one sweep only when
they are of one configuration and one workload: the same dataset and `ignore_eos` as
study.yml states them (unknown is a value of its own, never matched with a known one), the
same burstiness, and prompt and answer lengths within LENGTH_TOLERANCE of each other (the
files record the mean tokens per request, and a random dataset's mean moves with the number
of prompts drawn: 4,202 against 4,058 input tokens for one `--random-input-len 4000` setting
at 100 and 250 prompts). Steps of other workloads are other sweeps, named for what differs.

vLLM's definitions, as `vllm bench serve` computes them (vllm/benchmarks/serve.py of
vllm-project/vllm, `calculate_metrics`, `check_goodput_args` and `parse_goodput`, at commit
009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1, read 2026-11-27):
- request throughput = completed requests / duration (the achieved rate here); output
  throughput = output tokens / duration; total token throughput = (input + output tokens) /
  duration, all over successful requests;
- percentiles are numpy's linear percentiles over successful requests; TPOT over requests
  with more than one output token;
- goodput (`--goodput ttft:MS tpot:MS e2el:MS`): a request is good when every configured
  objective holds for it, a value at or under its limit (`s >= r`), with the TPOT of a
  one-token answer counted as 0; request goodput = good requests / duration. A failed
  request is never good.

Capacity under a latency objective: the highest step whose p95 TTFT is at or under the limit
(with a TPOT limit, its p95 TPOT too, as goodput asks every objective of a request). A
failed request counts as one that never answered (vLLM counts it in no goodput): with
per-request data the p95 is taken over every request with the failed ones at infinity;
without it a step with failures is unknown unless its p95 over the completed ones is
already over the limit. Several runs at one rate all have to meet it. A percentile the
file does not report, and the requests do not give, is unknown, never interpolated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..format import config_label, fmt_amount, fmt_rate, fmt_ratio, fmt_seconds
from ..ingest import load_pattern
from ..study.contract import Missing
from ..study.marks import Col, Shown, rows_table, table, union

LIMITS_S = (2.0, 5.0, 10.0)  # p95 TTFT limits of the capacity table, seconds (the harness's)
LENGTH_TOLERANCE = 0.10  # mean lengths within 10 % of each other are one workload
PERCENTILES = (50, 95, 99)
LATENCIES = ("ttft", "tpot", "itl")
FROM_REQUESTS = {"ttft": "ttft_s", "tpot": "tpot_s"}  # the requests table keeps no single gaps (ITL)
MET, NOT_MET, UNKNOWN = "met", "not met", "unknown"
OPEN, CLOSED = "open loop", "closed loop"
AGREES, DIFFERS = "agrees", "differs"  # a harness's own capacity against the steps' (against_harness)
HARNESS_COLUMNS = ["config", "source_file", "workload", "sweep", "limit_s", "harness_rps", "status", "capacity_rps",
                   "steps", "harness_steps", "verdict"]


# ---------------------------------------------------------------- the runs as points


def points(runs: pd.DataFrame, run_stats: pd.DataFrame | None = None, requests: pd.DataFrame | None = None,
           loads=load_pattern.OPEN) -> pd.DataFrame:
    """One row per run whose load pattern is in `loads`, with what a sweep shows of it
    (index: the runs table's). A run whose file records no load pattern takes the one
    study.yml states (load_pattern.of_context), the user's word."""
    if not len(runs):
        return _empty()
    load = runs.apply(_load_of, axis=1)
    x = runs[load.isin(loads)].assign(load=load[load.isin(loads)])
    if not len(x):
        return _empty()
    out = pd.DataFrame(index=x.index)
    for col in ("config", "run_id", "name", "load", "num_prompts", "completed", "failed", "peak_in_flight",
                "dataset", "ignore_eos", "duration_s", "source_file"):
        out[col] = x[col] if col in x else pd.NA
    out["family"] = out["load"].map(lambda v: OPEN if v in load_pattern.OPEN else CLOSED)
    out["request_rate"] = _num(x, "request_rate")
    out["concurrency"] = _num(x, "concurrency").fillna(_num(x, "max_concurrency"))
    out["point"] = out["request_rate"].where(out["family"] == OPEN, out["concurrency"])
    out["burstiness"] = _num(x, "burstiness").where(out["family"] == OPEN)
    done = _num(x, "completed")
    out["input_len"] = _num(x, "input_len").fillna(_num(x, "total_input_tokens") / done)
    out["output_len"] = _num(x, "output_len").fillna(_num(x, "total_output_tokens") / done)
    duration = _num(x, "duration_s").where(lambda d: d > 0)
    out["achieved_rps"] = (done / duration).fillna(_num(x, "request_tps"))
    # every request answered exactly its output length (random prompts with --ignore-eos): the
    # request rate is then the output rate over that length, whatever the count and duration
    out["whole_answers"] = (_num(x, "total_output_tokens") == done * _num(x, "output_len")).fillna(False)
    out["output_tps"] = _num(x, "output_tps")
    out["total_tps"] = (_num(x, "total_input_tokens") + _num(x, "total_output_tokens")) / duration
    _add_percentiles(out, x, run_stats, requests)
    out["workload"] = workloads(out)
    out["sweep"] = out["workload"].map(sweep_names(out))
    return out


def steps(runs: pd.DataFrame, run_stats: pd.DataFrame | None = None,
          requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """The open-loop runs (request rate, or every prompt at once) as steps of their sweeps."""
    return points(runs, run_stats, requests, load_pattern.OPEN)


def _empty() -> pd.DataFrame:
    cols = ["config", "run_id", "name", "load", "family", "point", "request_rate", "concurrency", "burstiness",
            "num_prompts", "input_len", "output_len", "dataset", "ignore_eos", "completed", "failed",
            "duration_s", "achieved_rps", "whole_answers", "output_tps", "total_tps", "peak_in_flight",
            *[f"{m}_p{q}_s" for m in LATENCIES for q in PERCENTILES], "unknown", "computed", "workload", "sweep"]
    return pd.DataFrame(columns=cols)


def _num(x: pd.DataFrame, col: str) -> pd.Series:
    if col not in x:
        return pd.Series(np.nan, index=x.index, dtype="float64")
    return pd.to_numeric(x[col], errors="coerce").astype("float64")


def _load_of(row: pd.Series) -> str:
    recorded = load_pattern._value(row.get("load"))
    if recorded and recorded != load_pattern.UNKNOWN:
        return recorded
    return load_pattern.of_context({"concurrency": row.get("concurrency"), "request_rate": row.get("request_rate")})


# ---------------------------------------------------------------- percentiles


def _add_percentiles(out: pd.DataFrame, x: pd.DataFrame, run_stats, requests) -> None:
    """p50 / p95 / p99 of TTFT, TPOT and ITL: the runs table's median and p99, else what the
    file reported (run_stats), else computed from its per-request data the way vLLM does;
    what none of them holds stays NaN and is named in `unknown`."""
    stats = _reported(run_stats)
    unknown = {i: [] for i in out.index}
    computed = {i: [] for i in out.index}
    for m in LATENCIES:
        for q in PERCENTILES:
            col = f"{m}_p{q}_s"
            own = {50: f"median_{m}_s", 99: f"p99_{m}_s"}.get(q)
            v = _num(x, own) if own else pd.Series(np.nan, index=x.index)
            v = v.fillna(x["run_id"].map(stats.get((m, f"p{q}"), {})).astype("float64"))
            if q == 50:
                v = v.fillna(x["run_id"].map(stats.get((m, "median"), {})).astype("float64"))
            if m in FROM_REQUESTS and requests is not None and len(requests):
                mine = x["run_id"].map(_request_percentile(requests, FROM_REQUESTS[m], q)).astype("float64")
                for i in v.index[v.isna() & mine.notna()]:
                    computed[i].append(f"p{q} {m.upper()}")
                v = v.fillna(mine)
            out[col] = v
            for i in v.index[v.isna()]:
                unknown[i].append(f"p{q} {m.upper()}")
    out["unknown"] = pd.Series({i: ", ".join(v) for i, v in unknown.items()}, dtype="string")
    out["computed"] = pd.Series({i: ", ".join(v) for i, v in computed.items()}, dtype="string")


def _reported(run_stats: pd.DataFrame | None) -> dict:
    """(metric, stat) -> {run_id: seconds}, a reported value before a computed one."""
    if run_stats is None or not len(run_stats):
        return {}
    s = run_stats.assign(_o=(run_stats["origin"] != "reported").astype(int)).sort_values("_o")
    s = s.drop_duplicates(["run_id", "metric", "stat"])
    return {k: dict(zip(g["run_id"], g["value_s"].astype(float))) for k, g in s.groupby(["metric", "stat"])}


def _request_percentile(requests: pd.DataFrame, column: str, q: int) -> dict:
    """run_id -> the q-th percentile of a column over successful requests (numpy's linear,
    as vLLM computes it); runs without such requests are left out."""
    ok = requests[requests["ok"].fillna(False).astype(bool)]
    v = pd.to_numeric(ok[column], errors="coerce").astype("float64")
    return v.groupby(ok["run_id"]).quantile(q / 100).dropna().to_dict()


# ---------------------------------------------------------------- workloads and sweeps


def workloads(pts: pd.DataFrame, tolerance: float = LENGTH_TOLERANCE) -> pd.Series:
    """A workload number per row: rows of one dataset, ignore_eos and burstiness whose mean
    prompt and answer lengths are each within `tolerance` of a workload's first row share
    it (in the order of the rows: the same frame always gives the same numbers)."""
    anchors: list[tuple[tuple, float, float]] = []
    out = {}
    for i, row in pts.iterrows():
        exact = (_key(row.get("dataset")), _key(row.get("ignore_eos")), _key(row.get("burstiness")))
        hit = next((k for k, (e, inp, outp) in enumerate(anchors)
                    if e == exact and _near(inp, row["input_len"], tolerance)
                    and _near(outp, row["output_len"], tolerance)), None)
        if hit is None:
            anchors.append((exact, row["input_len"], row["output_len"]))
            hit = len(anchors) - 1
        out[i] = hit + 1
    return pd.Series(out, index=pts.index, dtype="Int64")


def _key(v):
    v = load_pattern._value(v)
    return None if v is None else str(v)


def _near(a, b, tolerance: float) -> bool:
    if pd.isna(a) or pd.isna(b):
        return pd.isna(a) and pd.isna(b)
    return abs(float(a) - float(b)) <= tolerance * max(abs(float(a)), abs(float(b)))


def sweep_names(pts: pd.DataFrame) -> dict:
    """Workload number -> its name: the prompt and answer lengths, and the dataset,
    burstiness or ignore_eos where workloads differ in them."""
    if not len(pts):
        return {}
    names = {}
    differ = {c: pts.groupby("workload")[c].first().map(_key).nunique(dropna=False) > 1
              for c in ("dataset", "ignore_eos", "burstiness") if c in pts}
    for w, g in pts.groupby("workload"):
        parts = [f"{_span(g['input_len'])} → {_span(g['output_len'])} tokens"]
        first = g.iloc[0]
        if differ.get("dataset") or load_pattern._value(first.get("dataset")) is not None:
            ds = load_pattern._value(first.get("dataset"))
            parts.append(f"dataset {ds}" if ds is not None else "dataset not stated")
        if differ.get("burstiness") and load_pattern._value(first.get("burstiness")) is not None:
            parts.append(f"burstiness {float(first['burstiness']):g}")
        if differ.get("ignore_eos"):
            eos = load_pattern._value(first.get("ignore_eos"))
            parts.append({None: "ignore_eos not stated"}.get(eos, "ignore_eos" if eos else "stops at end of text"))
        names[w] = ", ".join(parts)
    seen: dict[str, int] = {}
    for w, name in names.items():  # two workloads the rounding names alike stay apart
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            names[w] = f"{name} (#{seen[name]})"
    return names


def _span(v: pd.Series) -> str:
    v = pd.to_numeric(v, errors="coerce").dropna()
    if not len(v):
        return "?"
    lo, hi = round(v.min()), round(v.max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


# ---------------------------------------------------------------- capacity


def verdict(step: pd.Series, objective: dict, requests: pd.DataFrame | None = None) -> tuple[str, str]:
    """Whether one step meets an objective {metric: limit in s} at p95: (met / not met /
    unknown, why), failed requests counted as never answering. Every objective must hold."""
    states = [_meets(step, metric, limit, _requests_of(requests, step.get("run_id")))
              for metric, limit in objective.items()]
    for state in (NOT_MET, UNKNOWN):
        hit = [why for s, why in states if s == state]
        if hit:
            return state, "; ".join(hit)
    return MET, "; ".join(why for _, why in states if why)


def _meets(step: pd.Series, metric: str, limit: float, mine: pd.DataFrame) -> tuple[str, str]:
    """One objective at one step. With per-request data and failures, the p95 over every
    request; else from the percentiles the file gives, a bound where it has no p95 itself."""
    name, failed = metric.upper(), load_pattern._value(step.get("failed"))
    if failed is None:
        return UNKNOWN, "the file does not record failed requests"
    if failed > 0 and metric in FROM_REQUESTS and len(mine):
        p95 = p95_counting_failures(mine, FROM_REQUESTS[metric])
        shown = "∞" if math.isinf(p95) else fmt_seconds(p95)
        return (NOT_MET if p95 > limit else MET), f"p95 {name} over every request, {int(failed)} failed: {shown}"
    return _bounded(step, metric, limit, int(failed))


def _bounded(step: pd.Series, metric: str, limit: float, failed: int) -> tuple[str, str]:
    """The p95 over every request, failed ones at infinity, is the completed requests' q-th
    percentile, q = 95 (N-1)/(c-1) with N requests of which c completed (linear
    percentiles): q = 95 without failures. A percentile the file gives at or above q that is
    within the limit puts it within; one at or below q over the limit puts it over; else
    it is unknown. Stated, never interpolated."""
    name, done = metric.upper(), load_pattern._value(step.get("completed")) or 0
    total = done + failed
    if failed and (done < 2 or 0.95 * (total - 1) > done - 1):
        return NOT_MET, f"{failed} of {total} requests failed: more than the 5 % a p95 objective leaves"
    q = 95.0 if not failed else 95.0 * (total - 1) / (done - 1)
    given = [(p, step.get(f"{metric}_p{p}_s")) for p in PERCENTILES]
    given = [(p, float(v)) for p, v in given if v is not None and pd.notna(v)]
    over = [(p, v) for p, v in given if p <= q and v > limit]
    within = [(p, v) for p, v in given if p >= q and v <= limit]
    has95 = any(p == 95 for p, _ in given)
    lead = (f"{failed} request(s) failed, so the p95 over every request is the completed ones' p{q:.3g}; "
            if failed else "" if has95 else f"p95 {name} not in the file; ")
    exact = not failed and has95
    if over:
        p, v = over[-1]
        return NOT_MET, (f"p95 {name} {fmt_seconds(v)}" if exact else
                         f"{lead}p95 {name} over the limit, since the p{p} is {fmt_seconds(v)}")
    if within:
        p, v = within[0]
        return MET, "" if exact else f"{lead}p95 {name} within the limit, since the p{p} is {fmt_seconds(v)}"
    known = ", ".join(f"p{p} {fmt_seconds(v)}" for p, v in given)
    return UNKNOWN, f"{lead}no percentile the file gives decides it" + (f" ({known})" if known else "")


def _requests_of(requests: pd.DataFrame | None, run_id) -> pd.DataFrame:
    if requests is None or not len(requests) or run_id is None:
        return pd.DataFrame()
    return requests[requests["run_id"] == run_id]


def p95_counting_failures(requests: pd.DataFrame, column: str, q: float = 95) -> float:
    """The q-th percentile (numpy's linear) over every request, a failed one at infinity."""
    ok = requests["ok"].fillna(False).astype(bool)
    values = np.sort(pd.to_numeric(requests.loc[ok, column], errors="coerce").dropna().to_numpy(float))
    values = np.concatenate([values, np.full(int((~ok).sum()), np.inf)])
    if not len(values):
        return math.nan
    h = q / 100 * (len(values) - 1)
    lo, hi = math.floor(h), math.ceil(h)
    if lo == hi or values[hi] == values[lo]:
        return float(values[lo])
    if math.isinf(values[hi]):
        return math.inf
    return float(values[lo] + (h - lo) * (values[hi] - values[lo]))


def capacity(stp: pd.DataFrame, limits_s=LIMITS_S, tpot_limit_s: float | None = None,
             requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per sweep (configuration and workload) and TTFT limit: the highest step meeting the
    objective, the numbers at that step, and what bounds it (the next step, or none)."""
    rows = []
    open_ = stp[stp["family"] == OPEN] if len(stp) else stp
    for (config, workload), g in open_.groupby(["config", "workload"], sort=False):
        for limit in limits_s:
            objective = {"ttft": float(limit)} | ({"tpot": float(tpot_limit_s)} if tpot_limit_s else {})
            rows.append(_capacity_row(config, g, float(limit), objective, requests))
    out = pd.DataFrame(rows, columns=CAPACITY_COLUMNS)
    for col in ("workload", "peak_in_flight", "steps"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("Int64")
    return out


CAPACITY_COLUMNS = ["config", "workload", "sweep", "limit_s", "tpot_limit_s", "status", "capacity_rps",
                    "achieved_rps", "ttft_p95_s", "output_tps", "peak_in_flight", "goodput_rps", "run",
                    "steps", "note"]


def _capacity_row(config, g: pd.DataFrame, limit: float, objective: dict, requests) -> dict:
    by_rate = []
    for rate, at in g.groupby("request_rate", sort=True):
        found = [verdict(s, objective, requests) for _, s in at.iterrows()]
        state = NOT_MET if any(s == NOT_MET for s, _ in found) else UNKNOWN if any(
            s == UNKNOWN for s, _ in found) else MET
        by_rate.append((float(rate), at, state, "; ".join(w for _, w in found if w)))
    met = [i for i, (_, _, s, _) in enumerate(by_rate) if s == MET]
    row = dict(config=config, workload=g["workload"].iloc[0], sweep=g["sweep"].iloc[0], limit_s=limit,
               tpot_limit_s=objective.get("tpot"), steps=len(g))
    if not met:
        unknown = [f"{_rate_text(r)}: {w}" for r, _, s, w in by_rate if s == UNKNOWN]
        row.update(status=UNKNOWN if unknown else "not met at any step",
                   note="; ".join(unknown) if unknown else _first_miss(by_rate))
        return row
    top = met[-1]
    rate, at, _, basis = by_rate[top]
    step = at.iloc[-1] if len(at) == 1 else at.loc[at["ttft_p95_s"].astype(float).fillna(math.inf).idxmax()]
    row.update(status=MET, capacity_rps=rate, achieved_rps=step["achieved_rps"], ttft_p95_s=step["ttft_p95_s"],
               output_tps=step["output_tps"], peak_in_flight=step["peak_in_flight"],
               goodput_rps=_goodput(step, objective, requests),
               run=", ".join(str(n) for n in at["name"].fillna(at["run_id"])),
               note="; ".join(x for x in (basis, _bound(by_rate, top)) if x))
    return row


def _rate_text(rate: float) -> str:
    return "all at once" if math.isinf(rate) else f"{rate:g} req/s"


def _first_miss(by_rate) -> str:
    rate, _, _, why = by_rate[0]
    return f"lowest step {_rate_text(rate)}: {why}"


def _bound(by_rate, top: int) -> str:
    """What the capacity rests on: the next step's miss, or that the sweep stopped first."""
    notes = []
    if top == len(by_rate) - 1:
        notes.append("met at the highest step measured: the capacity is at least this")
    else:
        rate, _, state, why = by_rate[top + 1]
        notes.append(f"next step {_rate_text(rate)}: {why}" if state == NOT_MET
                     else f"next step {_rate_text(rate)} unknown: {why}")
    lower = [_rate_text(r) for r, _, s, _ in by_rate[:top] if s != MET]
    if lower:
        notes.append(f"not met (or unknown) at the lower step(s) {', '.join(lower)}")
    return "; ".join(notes)


def _goodput(step: pd.Series, objective: dict, requests) -> float:
    """vLLM's request goodput for this objective (`--goodput ttft:MS [tpot:MS]`): requests
    meeting every limit / duration; NaN without per-request data."""
    mine = _requests_of(requests, step.get("run_id"))
    duration = load_pattern._value(step.get("duration_s"))
    if not len(mine) or not duration:
        return math.nan
    good = mine["ok"].fillna(False).astype(bool)
    for metric, limit in objective.items():
        values = pd.to_numeric(mine[FROM_REQUESTS[metric]], errors="coerce")
        if metric == "tpot":
            values = values.fillna(0.0)  # vLLM: a one-token answer's TPOT is 0 for goodput
        good &= values <= limit
    return float(good.sum()) / float(duration)


# ---------------------------------------------------------------- common points of two configurations

COMPARED = (("achieved_rps", "achieved req/s"), ("output_tps", "output t/s"), ("total_tps", "total t/s"),
            ("ttft_p50_s", "TTFT p50"), ("ttft_p95_s", "TTFT p95"), ("ttft_p99_s", "TTFT p99"),
            ("tpot_p50_s", "TPOT p50"), ("tpot_p95_s", "TPOT p95"), ("tpot_p99_s", "TPOT p99"))


POINT_KEYS = ("workload", "family", "point", "request_rate", "num_prompts")


def common_points(pts: pd.DataFrame, base: str, cand: str) -> pd.DataFrame:
    """Two configurations at the load points both measured, like with like: the same
    workload, load pattern (open or closed loop), rate or concurrency (and for a closed loop
    the rate its requests were sent at, if paced), and number of prompts (an open loop the
    server cannot keep up with builds a queue that grows with the run).
    One row per point and metric, with candidate ÷ baseline; a point one side alone measured,
    or several runs on a side that cannot be paired, is listed with `measured`."""
    rows = []
    mine = pts[pts["config"].isin([base, cand])]
    keys = list(POINT_KEYS)
    for key, g in mine.groupby(keys, sort=True, dropna=False):
        b, c = g[g["config"] == base], g[g["config"] == cand]
        first = g.iloc[0]
        common = dict(zip(keys, key)) | dict(sweep=first["sweep"], load=first["load"],
                                            burstiness=first["burstiness"], output_len=first["output_len"])
        measured = _measured(len(b), len(c))
        for metric, label in COMPARED:
            vb = float(b[metric].iloc[0]) if len(b) == 1 else math.nan
            vc = float(c[metric].iloc[0]) if len(c) == 1 else math.nan
            ratio = vc / vb if measured == "both" and vb and not math.isnan(vb) and not math.isnan(vc) else math.nan
            rows.append(common | dict(metric=metric, label=label, measured=measured, baseline=vb, candidate=vc,
                                      ratio=ratio, baseline_run=_names(b), candidate_run=_names(c),
                                      rows=tuple(g.index), reads=_reads(metric, g)))
    return pd.DataFrame(rows, columns=COMMON_COLUMNS)


COMMON_COLUMNS = [*POINT_KEYS, "sweep", "load", "burstiness", "output_len", "metric", "label", "measured",
                  "baseline", "candidate", "ratio", "baseline_run", "candidate_run",
                  "rows", "reads"]  # rows: the runs-table labels it reads; reads: their columns it rests on


def _reads(metric: str, g: pd.DataFrame) -> tuple:
    """The runs columns a metric of these runs rests on: READS, except that a request rate of
    runs whose every request answered its full length is their output rate over that length
    (`make marks`: ten prompts per client more moved the H100 count and duration in step, never
    their ratio, which the published output rate and the write-up's 512 tokens fix)."""
    if metric == "achieved_rps" and g["whole_answers"].all():
        return ("output_tps", "output_len")
    return READS.get(metric, ())


# The runs columns each shown metric rests on (what marks a shown value): a P50 its median and a
# P99 its P99, nothing else (a P50 that also read the P99 carried every choice that moves a tail).
# A P95 is no column of the runs table: it is read from the run's whole distribution, which its
# mean stands for (`make marks`: ten prompts per client more moved the H100 P95 TTFTs, which
# rested on the median and P99 only, both published)
READS = {"achieved_rps": ("completed", "duration_s", "request_tps"), "output_tps": ("output_tps",),
         "total_tps": ("total_input_tokens", "total_output_tokens", "duration_s"),
         **{f"{m}_p{q}_s": (f"{stat}_{m}_s",) for m in ("ttft", "tpot", "itl")
            for q, stat in ((50, "median"), (99, "p99"))},
         **{f"{m}_p95_s": (f"median_{m}_s", f"mean_{m}_s", f"p99_{m}_s") for m in ("ttft", "tpot", "itl")}}


def _measured(nb: int, nc: int) -> str:
    if nb == 1 and nc == 1:
        return "both"
    if not nc or not nb:
        return "baseline only" if not nc else "candidate only"
    return f"not paired: {nb} baseline and {nc} candidate runs"


def _names(g: pd.DataFrame) -> str:
    return ", ".join(str(n) for n in g["name"].fillna(g["run_id"])) if len(g) else ""


# ---------------------------------------------------------------- a chapter's rate section


@dataclass
class RateSweeps:
    """What a chapter's rate section shows: the steps, the capacity table, and how each
    configuration is named and coloured."""

    steps: pd.DataFrame = field(default_factory=_empty)
    capacity: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CAPACITY_COLUMNS))
    limits_s: tuple = LIMITS_S
    tpot_limit_s: float | None = None
    labels: dict = field(default_factory=dict)  # config -> label on the page
    models: dict = field(default_factory=dict)  # config -> model (its colour in every figure)
    cells: object = None  # marks.Cells of the steps' runs rows: what a data generator chose
    # a harness's own capacity summary checked against the steps (against_harness)
    harness: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=HARNESS_COLUMNS))

    def ordered(self, frame: pd.DataFrame, then: str = "request_rate") -> pd.DataFrame:
        """Rows in the chapter's order of configurations, then by workload and `then`."""
        order = {c: i for i, c in enumerate(self.labels)}
        return frame.assign(_o=frame["config"].map(order)).sort_values(
            ["_o", "workload", then], kind="stable").drop(columns="_o")


def analyse(runs: pd.DataFrame, run_stats: pd.DataFrame | None, requests: pd.DataFrame | None, labels: dict,
            models: dict | None = None, limits_s=LIMITS_S, tpot_limit_s: float | None = None) -> RateSweeps:
    """The rate sweeps of the configurations in `labels` (config -> label, in page order)."""
    limits = tuple(sorted(float(v) for v in limits_s))
    mine = runs[runs["config"].isin(list(labels))] if len(runs) else runs
    stp = steps(mine, run_stats, requests)
    rs = RateSweeps(steps=stp, limits_s=limits, tpot_limit_s=tpot_limit_s, labels=dict(labels),
                    models=dict(models or {}))
    rs.steps = rs.ordered(stp) if len(stp) else stp
    rs.capacity = capacity(rs.steps, limits, tpot_limit_s, requests)
    return rs


def of_chapter(r, runs: pd.DataFrame, labels: dict | None = None) -> RateSweeps:
    """A chapter's rate sweeps (`r`: its pipeline.ChapterResults; `runs`: its runs of kind
    rate): its configurations with a role, in the order of the contract's roles (or
    `labels`), limits from its parameters `ttft_limits_s` and `tpot_limit_s`. The rate
    section the runs allow but whose files record no open loop is marked missing."""

    if labels is None:
        labels = {cid: config_label(cid, r.config(cid))
                  for role in r.spec.contract.roles for cid in r.roles.configs(role.name)}
    models = {cid: r.config(cid).get("model") for cid in labels}
    out = analyse(runs, r.data["run_stats"], r.data["requests"], labels, models,
                  r.params.get("ttft_limits_s", LIMITS_S), r.params.get("tpot_limit_s"))
    out.cells = r.cells(runs.loc[out.steps.index], "runs") if len(out.steps) else None
    out.harness = against_harness(out, r.data["harness_steps"], r.data["harness_capacity"])
    if r.has("rate") and not len(out.steps):
        r.sections["rate"] = Missing(r.spec.contract.section("rate"), [
            "runs whose files record an open-loop request rate (request_rate, no max_concurrency)"])
    return out


def _secs(v) -> str:
    return "unknown" if v is None or pd.isna(v) else fmt_seconds(v)


def _three(*v) -> str:
    return " / ".join(_secs(x) for x in v)


def _rps(v) -> str:
    if v is None or pd.isna(v):
        return "unknown"
    return "all at once" if math.isinf(float(v)) else f"{float(v):.3g}"


def steps_display(rs: RateSweeps, config: str | None = None) -> pd.DataFrame:
    """The steps by sweep and offered rate: one configuration's, or every configuration's
    with a column naming it; a shown value computed from a cell a data generator chose is
    marked (rs.cells)."""
    s = rs.steps if config is None else rs.steps[rs.steps["config"] == config]
    cols = {"configuration": Col("config", lambda v: rs.labels.get(v, v))} if config is None else {}
    cols |= {
        "sweep (workload)": Col("sweep", reads=("input_len", "output_len", "dataset", "burstiness")),
        "offered req/s": Col("request_rate", _rps),
        "achieved req/s": Col("achieved_rps", _rps, reads=("completed", "duration_s", "request_tps")),
        "output t/s": Col("output_tps", lambda v: fmt_rate(v, 1)),
        "total t/s": Col("total_tps", lambda v: fmt_rate(v, 0),
                         reads=("total_input_tokens", "total_output_tokens", "duration_s")),
        **{f"{m.upper()} p50 / p95 / p99": Col(tuple(f"{m}_p{q}_s" for q in PERCENTILES), _three,
                                                reads=(f"median_{m}_s", f"p99_{m}_s")) for m in LATENCIES},
        "peak in flight": Col("peak_in_flight", lambda v: "unknown" if pd.isna(v) else int(v)),
        "completed / failed": Col(("completed", "failed"), lambda a, b: f"{_int(a)} / {_int(b)}"),
    }
    if s["computed"].fillna("").astype(bool).any():
        cols["from per-request data"] = Col("computed")
    return table(s, cols, rs.cells)


def _int(v) -> str:
    return "unknown" if v is None or pd.isna(v) else f"{int(v):,}"


def steps_tables(rs: RateSweeps) -> list[tuple[str, pd.DataFrame]]:
    """(caption, table) per configuration with steps, in the chapter's order."""
    return [(f"{label}: steps of its request-rate sweeps", steps_display(rs, cid))
            for cid, label in rs.labels.items() if (rs.steps["config"] == cid).any()]


def capacity_display(rs: RateSweeps) -> pd.DataFrame:
    """The capacity table: per sweep and limit, the highest step meeting it and what bounds it."""
    c = rs.ordered(rs.capacity, "limit_s")
    cols = {
        "configuration": Col("config", lambda v: rs.labels.get(v, v)),
        "sweep (workload)": Col("sweep"),
        "p95 TTFT limit": Col("limit_s", lambda v: f"{v:g} s"),
        "highest offered rate meeting it": Col(("status", "capacity_rps"), _capacity_text),
        "achieved req/s there": Col("achieved_rps", lambda v: "–" if pd.isna(v) else _rps(v)),
        "p95 TTFT there": Col(("status", "ttft_p95_s"), lambda st, v: _secs(v) if st == MET else "–"),
        "output t/s there": Col("output_tps", lambda v: fmt_rate(v, 1)),
        "peak in flight there": Col("peak_in_flight", lambda v: "–" if pd.isna(v) else int(v)),
    }
    if c["goodput_rps"].notna().any():
        cols["TTFT goodput there (req/s)"] = Col("goodput_rps", lambda v: "–" if pd.isna(v) else f"{v:.3g}")
    cols["what bounds it"] = Col("note")
    return table(c, cols)


def _capacity_text(status, rate) -> str:
    if status != MET:
        return str(status)
    return "every prompt at once" if math.isinf(float(rate)) else f"{_rps(rate)} req/s"


def common_display(common: pd.DataFrame, cells=None, why: dict | None = None,
                   orders: dict | None = None) -> pd.DataFrame:
    """One row per point: each metric as 'baseline → candidate (candidate ÷ baseline)', marked
    where it rests on a cell a data generator chose (`cells`: marks.Cells of the runs table;
    `orders`: metric -> {runs-table label: ids} for a percentile computed from a run's requests,
    which rests on the requests at its position, not on the runs table's columns)."""
    rows = []
    shown = ("achieved_rps", "output_tps", "ttft_p50_s", "ttft_p95_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s")
    for _, g in common.groupby(list(POINT_KEYS), sort=True, dropna=False):
        first = g.iloc[0]
        runs = [i for r in g["rows"] for i in r]

        def setting(cols, value):  # a run's setting, marked where a generator chose it (4k read as 4,096)
            return Shown(value, union(*(cells.row(i, cols) for i in runs)) if cells is not None else ())
        row = {"workload": setting(("input_len", "output_len", "dataset"), first["sweep"]),
               "load": setting(("concurrency", "max_concurrency", "request_rate"), _point_text(first)),
               "prompts": setting(("num_prompts", "completed"), _int(first["num_prompts"])),
               "measured": first["measured"]}
        for _, m in g[g["metric"].isin(shown)].iterrows():
            if m["metric"].startswith(("tpot", "itl")) and pd.notna(m["output_len"]) and m["output_len"] <= 1:
                # vLLM counts such a TPOT as 0: no decode step; the dash rests on the answer length
                lengths = union(*(cells.row(i, ("output_len",)) for i in m["rows"])) if cells is not None else ()
                row[m["label"]] = Shown("– (one output token)", lengths)
                continue
            if m["metric"] in (orders or {}):
                ids = union(*(orders[m["metric"]].get(i, ()) for i in m["rows"]))
            else:
                ids = union(*(cells.row(i, m["reads"]) for i in m["rows"])) if cells is not None else ()
            row[m["label"]] = Shown(_pair_text(m), ids)
        rows.append(row)
    return rows_table(rows, why or {})


def _point_text(row) -> str:
    if row["family"] == OPEN:
        rate = load_pattern.text({"load": row["load"], "request_rate": row["point"], "burstiness": row["burstiness"]})
        return rate
    n = int(row["point"]) if pd.notna(row["point"]) else None
    text = "one request at a time" if n == 1 else f"{n} concurrent requests" if n else "concurrency not recorded"
    rate = row.get("request_rate")
    return text + (f", sent at up to {rate:g} req/s" if pd.notna(rate) and not math.isinf(rate) else "")


def _pair_text(m: pd.Series) -> str:
    fmt = _secs if m["metric"].endswith("_s") else fmt_amount
    if m["measured"] == "baseline only":
        return fmt(m["baseline"])
    if m["measured"] == "candidate only":
        return fmt(m["candidate"])
    if m["measured"] != "both":
        return "–"
    ratio = fmt_ratio(m["ratio"])
    return f"{fmt(m['baseline'])} → {fmt(m['candidate'])} ({ratio})"


# ---------------------------------------------------------------- glued numbers


def glue_values(rs: RateSweeps) -> dict:
    """Numbers the rate section's prose quotes (every chapter's the same keys)."""
    stp, cap = rs.steps, rs.capacity
    limits = [f"{v:g}" for v in rs.limits_s]
    return {
        "rate_steps": len(stp),
        "rate_sweeps": int(stp.groupby(["config", "workload"]).ngroups) if len(stp) else 0,
        "rate_configs": int(stp["config"].nunique()) if len(stp) else 0,
        "rate_limits": (", ".join(limits[:-1]) + " and " + limits[-1] if len(limits) > 1 else "".join(limits)) + " s",
        "rate_pairs": len(cap),
        "rate_met": int((cap["status"] == MET).sum()),
        "rate_unknown": int((cap["status"] == UNKNOWN).sum()),
        "harness_checked": len(rs.harness),
        "harness_agree": int((rs.harness["verdict"] == AGREES).sum()),
        "harness_files": int(rs.harness["source_file"].nunique()),
    }


def common_glue(common: pd.DataFrame) -> dict:
    """How many load points both configurations measured, and how many one side alone."""
    per_point = common.drop_duplicates(list(POINT_KEYS)) if len(common) else common
    both = int((per_point["measured"] == "both").sum()) if len(per_point) else 0
    return {"common_points": both, "common_one_sided": len(per_point) - both}


# ---------------------------------------------------------------- a harness's own summary, checked

def against_harness(rs: RateSweeps, harness_steps: pd.DataFrame, harness_capacity: pd.DataFrame) -> pd.DataFrame:
    """A harness's own capacity per limit (bench-spark's 11-rate-sweep.json) set against the
    capacity this module computes from the step results, as a write-up's claim is checked:
    per configuration and limit, what the summary says, what the steps give, and whether
    they agree. The summary's sweep is the computed sweep of that configuration holding the
    most of its steps' offered rates. Only limits this page computes are checked."""
    rows = []
    if not len(harness_capacity) or not len(rs.capacity):
        return pd.DataFrame(columns=HARNESS_COLUMNS)
    for (cfg, src), caps in harness_capacity.groupby(["config", "source_file"], sort=False):
        rates = set(harness_steps.loc[(harness_steps["config"] == cfg) & (harness_steps["source_file"] == src),
                                      "configured_rps"].dropna().round(6))
        mine = rs.steps[rs.steps["config"] == cfg]
        if not len(mine) or not rates:
            continue
        overlap = mine.assign(_r=mine["request_rate"].round(6)).groupby("workload")["_r"].agg(
            lambda r: len(rates & set(r)))
        workload = overlap.idxmax()
        for _, h in caps.iterrows():
            got = rs.capacity[(rs.capacity["config"] == cfg) & (rs.capacity["workload"] == workload)
                              & (np.isclose(rs.capacity["limit_s"].astype(float), float(h["limit_s"])))]
            if not len(got):
                continue
            g = got.iloc[0]
            theirs = float(h["configured_rps"]) if bool(h["met"]) else None
            ours = float(g["capacity_rps"]) if g["status"] == MET else None
            verdict = (UNKNOWN if g["status"] == UNKNOWN else
                       AGREES if (theirs is None and ours is None) or (theirs is not None and ours is not None
                                                                       and math.isclose(theirs, ours)) else DIFFERS)
            rows.append({"config": cfg, "source_file": src, "workload": workload, "sweep": g["sweep"],
                         "limit_s": float(h["limit_s"]), "harness_rps": theirs, "status": g["status"],
                         "capacity_rps": ours, "steps": int(g["steps"]), "harness_steps": len(rates),
                         "verdict": verdict})
    return pd.DataFrame(rows, columns=HARNESS_COLUMNS)


def harness_display(rs: RateSweeps, checked: pd.DataFrame) -> pd.DataFrame:
    """The check as a table: the summary's capacity beside this page's, and the verdict."""
    def rate(v) -> str:
        return "no step" if v is None or pd.isna(v) else f"{_rps(v)} req/s"

    return table(rs.ordered(checked, "limit_s"), {
        "configuration": Col("config", lambda v: rs.labels.get(v, v)),
        "p95 TTFT limit": Col("limit_s", lambda v: f"{v:g} s"),
        "the harness's summary says": Col("harness_rps", rate),
        "the step results give": Col(("status", "capacity_rps"), lambda st, v: rate(v) if st != UNKNOWN else st),
        "steps (summary / this page)": Col(("harness_steps", "steps"), lambda h, s: f"{h} / {s}"),
        "verdict": Col("verdict"),
        "summary file": Col("source_file"),
    })

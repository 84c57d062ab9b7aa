"""The serving points a chapter declares for the synthesis's cross-study chart.

A point is one measurement that gives both an output rate per user and an aggregate output
rate, taken from the same run at the same concurrency: plotted as throughput per accelerator
(aggregate ÷ devices) against throughput per user, the way serving dashboards compare
hardware. Pairing a single-stream decode rate with a best aggregate from another run would
draw a point no server ever reached, so each builder here reads both numbers from one row of
the chapter's tidy tables and nothing else.

A measurement that cannot be paired (an open-loop rate run, a prefill test, a server-log
window whose requests' own rates are not recorded) stays in the table with `left_out` saying
why, so the synthesis can say how many were left out and for what reason.
"""

from __future__ import annotations

import math

import pandas as pd

from ..ingest import load_pattern
from ..study.marks import Shown, rows_table
from .key_figures import accelerator_count, speculative

# serving_points: one row per measurement a chapter considered. Strings as study.yml gives them.
POINT_COLUMNS = {
    "study": "the chapter page whose data the point comes from",
    "config": "configuration id from study.yml",
    "label": "the configuration as the chapter names it",
    "platform": "platform as study.yml gives it",
    "model": "model as study.yml gives it",
    "quantisation": "weight format as study.yml gives it",
    "speculative": "speculative decoding as study.yml gives it; empty without",
    "devices": "accelerators serving the model (study.yml's `accelerators`, e.g. '2x ...')",
    "run": "the one measurement both rates come from (run id, or file and test)",
    "load": "how the requests were sent: single-stream or concurrency (benchbook.ingest.load_pattern)",
    "concurrency": "requests kept in flight during that measurement, as its file records it",
    "per_user_tps": "output tokens/s one request saw in that measurement",
    "aggregate_tps": "output tokens/s of all requests together in that measurement",
    "per_device_tps": "aggregate_tps ÷ devices",
    "per_user_basis": "how per_user_tps was measured",
    "input_tokens": "prompt tokens per request (with any context before it)",
    "output_tokens": "output tokens per request",
    "data_kind": "'reconstructed' (made from a write-up's tables) or 'measured' (real files)",
    "anchor": "section anchor of the chapter page the measurement is shown in",
    "left_out": "empty for a point; otherwise why the measurement gives no point",
}
DATA_KINDS = ("reconstructed", "measured")
# Rates vary between requests and per user is a median, so N users may together exceed N times
# it a little; a single stream's rate beside a busier run's aggregate exceeds it by far.
SLACK = 1.25
NUMBERS = ("devices", "concurrency", "per_user_tps", "aggregate_tps", "per_device_tps", "input_tokens",
           "output_tokens")

# Reasons a measurement gives no point (the synthesis counts them by these words).
OPEN_LOOP = "open-loop request rate: the number of requests in flight was not fixed"
ALL_AT_ONCE = "every prompt sent at once: the number of requests in flight was not fixed"
PACED = "paced request rate under a concurrency cap: the number in flight was not held at the cap"
UNKNOWN_LOAD = "the file records no concurrency cap, so the concurrency is not the file's own"
NO_DECODE = "a prefill test: it times the prompt, not the output"
NO_TPOT = "no time per output token in the file"
NONE_COMPLETED = "no request completed"
MIXED_TEST = "a prompt-and-generation test: its rate mixes prefill and decode"
NO_PER_REQUEST = "no per-request rate printed"
FAILED = "the run failed: no rate"


def data_kind(reconstructed: bool) -> str:
    return "reconstructed" if reconstructed else "measured"


def _base(study: str, config: str, c: dict, *, run: str, label: str, anchor: str, kind: str) -> dict:
    return dict(study=study, config=config, label=label or config, platform=c.get("platform") or "",
                model=c.get("model") or "", quantisation=c.get("quantisation") or "", speculative=speculative(c),
                devices=accelerator_count(c.get("accelerators")), run=run, data_kind=kind, anchor=anchor)


def point(study: str, config: str, c: dict, *, run: str, load: str, concurrency: int, per_user: Shown,
          aggregate: Shown, basis: str, label: str = "", anchor: str = "", kind: str = "measured",
          input_tokens: float = math.nan, output_tokens: float = math.nan) -> dict:
    """A point: both rates from the one measurement `run`; per device is aggregate ÷ devices."""
    row = _base(study, config, c, run=run, label=label, anchor=anchor, kind=kind)
    return row | dict(load=load, concurrency=int(concurrency), per_user_tps=per_user,
                      aggregate_tps=aggregate, per_device_tps=Shown(float(aggregate.value) / row["devices"],
                                                                    aggregate.ids),
                      per_user_basis=basis, input_tokens=input_tokens, output_tokens=output_tokens, left_out="")


def left_out(study: str, config: str, c: dict, *, run: str, reason: str, label: str = "", anchor: str = "",
             kind: str = "measured", load: str = "", concurrency=math.nan) -> dict:
    """A measurement that gives no point, and why."""
    row = _base(study, config, c, run=run, label=label, anchor=anchor, kind=kind)
    return row | dict(load=load, concurrency=concurrency, per_user_tps=math.nan, aggregate_tps=math.nan,
                      per_device_tps=math.nan, per_user_basis="", input_tokens=math.nan,
                      output_tokens=math.nan, left_out=reason)


def points_table(rows: list[dict], why: dict) -> pd.DataFrame:
    """The chapter's serving_points output, cells resting on a generator's choice marked; with
    no row it still has its columns, so a reader finds "no points", not a file without a header."""
    out = rows_table([{k: r[k] for k in POINT_COLUMNS} for r in rows], why, columns=list(POINT_COLUMNS))
    return out


# ---- builders over the tidy tables ---------------------------------------------------

def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def bench_points(study: str, runs: pd.DataFrame, cells, configs: dict, *, labels: dict, anchor: str | dict,
                 kind: str) -> list[dict]:
    """Points of `vllm bench serve` runs (the runs table of benchbook.ingest.vllm_bench): per
    user 1 / median TPOT, aggregate the run's output t/s, at the concurrency cap the file
    records. Only closed-loop runs (one stream, or a fixed number of clients sending the next
    request when one ends) hold the number in flight at that cap. `anchor`: the page section
    showing them, or {run kind: section} with "" for the rest."""
    rows = []
    for label, run in runs.iterrows():
        cid = str(run["config"])
        c, name = configs.get(cid, {}), str(run.get("name") or run.get("run_id") or label)
        where = anchor if isinstance(anchor, str) else anchor.get(str(run.get("kind")), anchor.get("", ""))
        at = dict(run=name, label=labels.get(cid, cid), anchor=where, kind=kind)
        load = str(run.get("load") or load_pattern.UNKNOWN)
        cap, rate = _num(run.get("max_concurrency")), _num(run.get("request_rate"))
        tpot, out_len, agg = _num(run.get("median_tpot_s")), _num(run.get("output_len")), _num(run.get("output_tps"))
        reason = (OPEN_LOOP if load == load_pattern.RATE else ALL_AT_ONCE if load == load_pattern.ALL_AT_ONCE
                  else UNKNOWN_LOAD if load not in load_pattern.CLOSED or math.isnan(cap)
                  else PACED if not math.isnan(rate) and not math.isinf(rate)
                  else NONE_COMPLETED if not _num(run.get("completed")) > 0
                  else NO_DECODE if not out_len > 1
                  else NO_TPOT if not tpot > 0 or not agg > 0 else "")
        if reason:
            rows.append(left_out(study, cid, c, reason=reason, load=load, concurrency=cap, **at))
            continue
        rows.append(point(study, cid, c, load=load, concurrency=int(cap),
                          per_user=Shown(1.0 / tpot, cells.at(label, "median_tpot_s")),
                          aggregate=Shown(agg, cells.at(label, "output_tps")),
                          basis="1 / median time per output token (vllm bench serve)",
                          input_tokens=_num(run.get("input_len")), output_tokens=out_len, **at))
    return rows


def benchy_points(study: str, closed: pd.DataFrame, configs: dict, *, labels: dict, anchor: str,
                  kind: str) -> list[dict]:
    """Points of llama-benchy's generation tests (benchbook.analysis.closed_loop.points): per
    user and in total as the harness printed them for one test at one concurrency (it keeps
    that many requests in flight). Its prefill (pp) rows time the prompts of the same requests
    whose generation row is the point, so they are no measurement of their own here."""
    rows = []
    for _, t in closed[closed["kind"] == "tg"].iterrows():
        cid = str(t["config"])
        c = configs.get(cid, {})
        depth = 0.0 if pd.isna(t["depth"]) else float(t["depth"])
        prompt = _num(t["prompt_tokens"])
        # one file runs a test name at several prompt lengths: the prompt tells them apart
        run = f"{t['source_file']}: {t['test']}" + ("" if math.isnan(prompt) else f", {int(prompt):,}-token prompt") \
            + (f" after {int(depth):,} tokens of context" if depth else "")
        at = dict(run=run, label=labels.get(cid, cid), anchor=anchor, kind=kind)
        conc, per, total = _num(t["concurrency"]), _num(t["tps_req"]), _num(t["tps_total"])
        load = load_pattern.SINGLE if conc == 1 else load_pattern.CONCURRENCY
        reason = (UNKNOWN_LOAD if not conc >= 1
                  else NO_PER_REQUEST if not (per > 0 and total > 0) else "")
        if reason:
            rows.append(left_out(study, cid, c, reason=reason, load=load, concurrency=conc, **at))
            continue
        rows.append(point(study, cid, c, load=load, concurrency=int(conc), per_user=Shown(per),
                          aggregate=Shown(total), basis="generation t/s per request (llama-benchy)",
                          input_tokens=prompt + depth, output_tokens=_num(t["gen_tokens"]), **at))
    return rows


def llama_bench_points(study: str, llama: pd.DataFrame, cells, configs: dict, *, labels: dict, anchor: str,
                       kind: str) -> list[dict]:
    """Points of llama-bench tests: a generation test (tgN, no prompt) decodes one sequence,
    so its t/s is both the one stream's rate and the aggregate. Prefill (ppN) and combined
    (ppN+tgM) tests give no point."""
    rows = []
    for label, t in llama.iterrows():
        cid = str(t["config"])
        c = configs.get(cid, {})
        name = str(t.get("test_name") or t.get("test") or label)
        build = t.get("variant") or t.get("build_number") or ""  # one file may hold many builds' runs
        at = dict(run=f"{t['source_file']}: {name}" + (f" ({build})" if build else ""), label=labels.get(cid, cid),
                  anchor=anchor, kind=kind)
        n_prompt, n_gen, ts = _num(t["n_prompt"]), _num(t["n_gen"]), _num(t["avg_ts"])
        reason = (NO_DECODE if not n_gen > 0 else MIXED_TEST if n_prompt > 0
                  else NO_PER_REQUEST if not ts > 0 else "")
        if reason:
            rows.append(left_out(study, cid, c, reason=reason, load=load_pattern.SINGLE, concurrency=1, **at))
            continue
        ids = cells.at(label, "avg_ts")
        depth = _num(t.get("n_depth"))
        rows.append(point(study, cid, c, load=load_pattern.SINGLE, concurrency=1, per_user=Shown(ts, ids),
                          aggregate=Shown(ts, ids), basis="llama-bench generation test: one sequence",
                          input_tokens=0.0 if math.isnan(depth) else depth, output_tokens=n_gen, **at))
    return rows


# ---- what the synthesis reads ----------------------------------------------------------

def conform_points(df: pd.DataFrame, study: str) -> pd.DataFrame:
    """Check a chapter's serving_points output: every column there; each point with both
    rates positive, a whole concurrency of at least one under a closed loop, per device equal
    to aggregate ÷ devices, and an aggregate that `concurrency` users at the per-user rate could
    produce (at most SLACK times concurrency × per user: a single stream's decode rate set
    beside a busier run's aggregate fails this). A wrong file is an error naming the chapter
    and the row."""
    missing = [c for c in POINT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{study}: serving_points lacks column(s) {', '.join(missing)}; "
                         "see benchbook.book.serving_points.POINT_COLUMNS")
    out = df.copy()
    for col in POINT_COLUMNS:
        if col not in NUMBERS:
            out[col] = out[col].astype(object).where(out[col].notna(), "")
        else:
            out[col] = pd.to_numeric(out[col], errors="coerce")
    problems = []
    for i, r in out.iterrows():
        at = f"{study}: serving_points row {i} ({r['config']}, {r['run']})"
        if r["data_kind"] not in DATA_KINDS:
            problems.append(f"{at}: data_kind {r['data_kind']!r}; expected {' or '.join(DATA_KINDS)}")
        if r["left_out"]:
            continue
        rates = [r[c] for c in ("per_user_tps", "aggregate_tps", "per_device_tps")]
        if not all(v > 0 for v in rates):
            problems.append(f"{at}: a point needs positive per_user_tps, aggregate_tps and per_device_tps")
        elif not (r["devices"] >= 1 and math.isclose(r["per_device_tps"], r["aggregate_tps"] / r["devices"],
                                                     rel_tol=1e-6)):
            problems.append(f"{at}: per_device_tps {r['per_device_tps']:g} is not aggregate_tps "
                            f"{r['aggregate_tps']:g} ÷ devices {r['devices']:g}")
        conc = r["concurrency"]
        if all(v > 0 for v in rates) and conc >= 1 and r["aggregate_tps"] > SLACK * conc * r["per_user_tps"]:
            problems.append(f"{at}: aggregate_tps {r['aggregate_tps']:g} exceeds what {int(conc)} request(s) at "
                            f"per_user_tps {r['per_user_tps']:g} could produce: the two rates are not from one "
                            "measurement")
        if not (conc >= 1 and float(conc).is_integer()):
            problems.append(f"{at}: concurrency {conc!r}; a point needs the whole number of requests in flight")
        elif r["load"] not in load_pattern.CLOSED or (r["load"] == load_pattern.SINGLE) != (conc == 1):
            problems.append(f"{at}: load {r['load']!r} at concurrency {int(conc)}; a point needs a closed loop "
                            "(single-stream at 1, concurrency above 1)")
    if problems:
        raise ValueError("\n".join(problems))
    return out[list(POINT_COLUMNS) + [c for c in out.columns if c not in POINT_COLUMNS]]

"""Decode and prefill by concurrency from closed-loop tests (llama-benchy: `ingest.llama_benchy`).

llama-benchy keeps N requests in flight (N = the concurrency), each a prompt of `pp` tokens
(after `depth` tokens of context) answered with `tg` tokens, three timed runs per point by
default. Per point it prints the prefill (pp) and generation (tg) rate in total over the
requests and per request, each with its standard deviation (`np.std`, over runs for the total
at concurrency > 1, over every request for the per-request figures), and the time to the
first response. This module shows those numbers as printed, per configuration and test: it
computes nothing new from them, and it keeps one copy of a test whose table is in two files
(the harness's `.md` and the console `.log` beside it print the same table; the `.md` is kept).
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pandas as pd

from ..format import fmt_rate
from ..study.marks import Col, table

ANCHOR = "decode-and-prefill-by-concurrency-llama-benchy"  # the section's heading id on a chapter page
COLUMNS = ["config", "source_file", "test", "kind", "prompt_tokens", "gen_tokens", "depth", "concurrency",
           "tps_total", "tps_total_sd", "tps_req", "tps_req_sd", "ttfr_s", "runs"]


def points(benchy: pd.DataFrame, configs: list[str]) -> pd.DataFrame:
    """The llama-benchy rows of `configs` (in that order), one copy of each test: where a
    results file (.md) and a console log (.log) of one test sit side by side, the log's rows go."""
    if not len(benchy):
        return pd.DataFrame(columns=COLUMNS)
    b = benchy[benchy["config"].isin(configs)].copy()
    stem = b["source_file"].map(lambda p: str(PurePosixPath(str(p)).with_suffix("")))
    has_results = set(stem[b["source_kind"] == "results"])
    b = b[~((b["source_kind"] == "console") & stem.isin(has_results))]
    order = {c: i for i, c in enumerate(configs)}
    b = b.assign(_o=b["config"].map(order), _line=b["line"]).sort_values(["_o", "source_file", "_line"], kind="stable")
    return b[COLUMNS].reset_index(drop=True)


def _pm(v, sd, decimals: int) -> str:
    if v is None or pd.isna(v):
        return "–"
    return fmt_rate(v, decimals) + ("" if sd is None or pd.isna(sd) else f" ± {fmt_rate(sd, decimals)}")


def _context(pp, depth) -> str:
    depth = 0 if depth is None or pd.isna(depth) else int(depth)
    return f"{int(pp):,}" + (f" after {depth:,} of context" if depth else "")


def display(pts: pd.DataFrame, kind: str, labels: dict) -> pd.DataFrame:
    """Decode (`kind` "tg") or prefill ("pp") by test and concurrency, as llama-benchy printed it."""
    rows = pts[pts["kind"] == kind]
    cols = {
        "configuration": Col("config", lambda v: labels.get(v, v)),
        "test file": Col("source_file", lambda v: PurePosixPath(str(v)).stem),
        "prompt tokens": Col(("prompt_tokens", "depth"), _context),
        "answer tokens": Col("gen_tokens", lambda v: "–" if pd.isna(v) else f"{int(v):,}"),
        "concurrency": Col("concurrency", lambda v: "–" if pd.isna(v) else int(v)),
        "t/s in total": Col(("tps_total", "tps_total_sd"), lambda v, sd: _pm(v, sd, 1)),
        "t/s per request": Col(("tps_req", "tps_req_sd"), lambda v, sd: _pm(v, sd, 1)),
    }
    if kind == "pp":
        cols["time to first response"] = Col("ttfr_s", lambda v: "–" if pd.isna(v) else f"{v:,.2f} s")
    return table(rows, cols)


def glue_values(pts: pd.DataFrame) -> dict:
    """Numbers the closed-loop section's prose quotes."""
    conc = pts["concurrency"].dropna()
    return {"closed_points": int((pts["kind"] == "tg").sum()),
            "closed_files": int(pts["source_file"].nunique()),
            "closed_configs": int(pts["config"].nunique()),
            "closed_concurrency": ", ".join(str(int(c)) for c in sorted(set(conc))) if len(conc) else "none",
            "closed_runs": ", ".join(str(int(n)) for n in sorted(set(pts["runs"].dropna()))) or "not stated"}


def single_stream(pts: pd.DataFrame, config: str) -> dict | None:
    """One stream's decode rate, time to first response and prefill rate from `config`'s
    concurrency-1 llama-benchy tests: the generation point with the least context while it
    decodes (prompt, depth and half the answer), and the prefill point printed beside it (same
    file, prompt and depth). For key figures of data without a concurrency-1 bench run; None
    without a concurrency-1 generation point."""
    mine = pts[(pts["config"] == config) & (pts["concurrency"] == 1)]
    tg = mine[(mine["kind"] == "tg") & mine["tps_req"].notna()]
    if not len(tg):
        return None
    depth = tg["depth"].fillna(0).astype(float)
    context = tg["prompt_tokens"].astype(float) + depth + (tg["gen_tokens"].fillna(1).astype(float) - 1) / 2
    best = tg.loc[context.idxmin()]
    pp = mine[(mine["kind"] == "pp") & (mine["source_file"] == best["source_file"])
              & (mine["prompt_tokens"] == best["prompt_tokens"]) & (mine["depth"].fillna(0) == depth[best.name])]
    first = pp.iloc[0] if len(pp) else None
    nan = float("nan")
    return {"decode_tps": float(best["tps_req"]), "context": float(context[best.name]),
            "prompt": float(best["prompt_tokens"]) + float(depth[best.name]),
            "file": PurePosixPath(str(best["source_file"])).name, "test": str(best["test"]),
            "ttfr_s": nan if first is None or pd.isna(first["ttfr_s"]) else float(first["ttfr_s"]),
            "prefill_tps": nan if first is None or pd.isna(first["tps_total"]) else float(first["tps_total"])}


def single_stream_figures(one: dict) -> dict:
    """The key-figures columns of one stream (benchbook.book.key_figures) from
    `single_stream`'s result; llama-benchy records no speculative acceptance."""
    return dict(single_stream_decode_tps=one["decode_tps"], acceptance_length=float("nan"), ttft_s=one["ttfr_s"],
                ttft_input_tokens=one["prompt"], decode_context_tokens=one["context"],
                decode_basis=f"llama-benchy's generation rate, one request ({one['test']} in {one['file']}, "
                             "prefill left out)")

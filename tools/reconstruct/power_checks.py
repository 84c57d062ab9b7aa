"""Checks for the power-sweep reconstruction: its own recomputation, and the write-up's.

`window_values` recomputes every value name published.yml uses from the stats lines as
they were printed, with the chapter's own definitions (benchbook.chapters.power_sweep.analysis:
SCOPES, the P95 rule, per-request and completion rates), so the generator's proof that
the fit landed is the book's arithmetic; the tests do it again from the files.
`published_checks` holds the write-up's tables against each other using only their
printed digits, so the inconsistencies in PROVENANCE.md are computed.
"""

from __future__ import annotations

import math
import re
from itertools import product

import pandas as pd

from benchbook.chapters.power_sweep import analysis as chapter
from benchbook.ingest.vllm_log import with_intervals
from benchbook.ledger.published import Published, parse_quantity

# Concurrency levels of each scope the published tables pool ("c1to3" -> 1, 2, 3).
LEVELS = {scope: range(lo, hi + 1) for scope, (lo, hi) in chapter.SCOPES.items()}


def window_values(groups: dict[tuple[str, int], list[dict]], max_seqs: dict[str, int], cards: int) -> dict[str, float]:
    """Every value name of published.yml, from printed windows (dicts with running, gen,
    prefill, completions, time), by the chapter's `window_values`."""
    return chapter.window_values(*window_frames(groups, max_seqs, cards))


def window_frames(groups: dict[tuple[str, int], list[dict]], max_seqs: dict[str, int],
                  cards: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The printed windows as the chapter's windows and models tables (no GPU draw: the
    values the write-up published need none). Each window lasts its log's stats interval,
    measured from the printed times as the reader and the chapter measure it."""
    rows = []
    for (prefix, limit), wins in groups.items():
        for k, w in enumerate(wins):
            stamp = w["time"].replace(microsecond=0)  # the log prints whole seconds
            rows.append({"source_file": f"{prefix}/{limit}w", "line": k, "config": prefix, "running": w["running"],
                         "generation_tps": w["gen"], "prompt_tps": w["prefill"], "completions": w["completions"],
                         "limit_w": float(limit), "power_key": f"{limit}W", "draw_w": math.nan,
                         "timestamp": stamp, "time": stamp.strftime("%m-%d %H:%M:%S")})
    windows = pd.DataFrame(rows)
    windows["process"], windows["engine"] = "APIServer", "000"  # one engine per log, as the generator prints
    windows["gap_s"] = windows.groupby("source_file")["timestamp"].diff().dt.total_seconds()
    windows = with_intervals(windows)
    windows["per_request_tps"] = windows["generation_tps"] / windows["running"].where(windows["running"] > 0)
    models = pd.DataFrame([{"config": p, "prefix": p, "max_num_seqs": n, "cards": cards} for p, n in max_seqs.items()])
    return windows, models


# ---------------------------------------------------------------- the write-up against itself


def _iv(text: str) -> tuple[float, float]:
    q = parse_quantity(text)
    return q.value - q.step / 2, q.value + q.step / 2


def _cells(published: Published) -> dict[str, str]:
    """Value name -> printed text, for every cell whose expression is a single name."""
    out = {}
    for t in published.tables:
        for cells, exprs in zip(t.rows, t.values):
            for text, expr in zip(cells, exprs):
                if expr and re.fullmatch(r"\w+", expr):
                    out.setdefault(expr, text)
    return out


def published_checks(published: Published, cards: int = 4) -> list[list[str]]:
    """Rows: check | where | published | what the other printed cells allow | verdict."""
    cells = _cells(published)
    rows: list[list[str]] = []
    models = sorted({m.group(1) for n in cells if (m := re.match(r"^(q\d+_\d+b)_", n))})
    for m, limit in product(models, (200, 250, 300)):
        p = f"{m}_{limit}W"
        levels = [c for c in range(1, 9) if f"{p}_c{c}_gen_n" in cells]
        if not levels:
            continue
        n = {c: float(cells[f"{p}_c{c}_gen_n"]) for c in levels}
        total = float(cells[f"{p}_gen_n"]) if f"{p}_gen_n" in cells else None
        if total is not None and total != sum(n.values()):
            rows.append([f"{p}: windows in the concurrency table vs the power table", "concurrency / power tables",
                         f"{total:.0f}", f"{sum(n.values()):.0f} at 1-6 requests",
                         f"{total - sum(n.values()):.0f} windows at 7-8 requests count only in the power table"])
        bounds = {c: _mean_bounds(cells, p, c) for c in levels}
        tight = {c: _mean_bounds(cells, p, c, published) for c in levels}
        for scope in ("c1to3", "c1to6"):
            members, label = LEVELS[scope], f"{LEVELS[scope][0]}-{LEVELS[scope][-1]}"
            for metric, key in (("gen", "gen_mean"),):
                name = f"{p}_{scope}_{key}"
                if name not in cells:
                    continue
                lo, hi = _weighted(bounds, n, [c for c in members if c in levels])
                _range_row(rows, f"{p}: average generation over {label} requests (tokens-per-kW table)",
                           "t/kW vs concurrency table", cells[name], lo, hi)
        if f"{p}_gen_mean" in cells and total == sum(n.values()):
            lo, hi = _weighted(bounds, n, levels)
            _range_row(rows, f"{p}: power-table average generation vs its concurrency cells",
                       "power vs concurrency table", cells[f"{p}_gen_mean"], lo, hi)
            lo, hi = _weighted(tight, n, levels)
            _range_row(rows, f"{p}: power-table average generation vs its concurrency cells, per-request "
                       "cells included", "power vs concurrency table", cells[f"{p}_gen_mean"], lo, hi)
            sub = f"{p}_c1to3_gen_mean"
            if sub in cells:  # the power-table mean with the other cells at their extremes
                p_lo, p_hi = _iv(cells[f"{p}_gen_mean"])
                low = [c for c in levels if c <= 3]
                rest = [c for c in levels if c > 3]
                n13 = sum(n[c] for c in low)
                lo = (p_lo * total - sum(bounds[c][1] * n[c] for c in rest)) / n13
                hi = (p_hi * total - sum(bounds[c][0] * n[c] for c in rest)) / n13
                lo, hi = max(lo, _weighted(bounds, n, low)[0]), min(hi, _weighted(bounds, n, low)[1])
                _range_row(rows, f"{p}: 1-3 request average generation (tokens-per-kW table) vs the power-table "
                           "average and the other cells", "t/kW vs power and concurrency tables", cells[sub], lo, hi)
            same = f"{p}_c1to6_gen_mean"
            if same in cells:
                lo, hi = _iv(cells[f"{p}_gen_mean"])
                _range_row(rows, f"{p}: 1-6 request average generation (tokens-per-kW table) vs the power "
                           "table, same windows", "t/kW vs power table", cells[same], lo, hi)
        for c in levels:
            rows += _per_request(published, p, c)
        rows += _p95_rows(cells, p, levels, n, total)
    rows += _prefill_rows(cells, models)
    rows += _kw_rows(published, cards)
    return rows


def _mean_bounds(cells, p, c, published=None):
    """Interval of a cell's mean from its printed average (and, given the tables, its
    per-request cell = average / concurrency)."""
    lo, hi = _iv(cells[f"{p}_c{c}_gen_mean"])
    if published is not None:
        for t in published.tables:
            for row, exprs in zip(t.rows, t.values):
                for text, expr in zip(row, exprs):
                    if expr == f"{p}_c{c}_gen_mean / {c}":
                        r_lo, r_hi = _iv(text)
                        if max(lo, r_lo * c) < min(hi, r_hi * c):  # a contradicting cell is reported apart
                            lo, hi = max(lo, r_lo * c), min(hi, r_hi * c)
    return lo, hi


def _weighted(bounds, n, levels):
    tot = sum(n[c] for c in levels)
    return (sum(bounds[c][0] * n[c] for c in levels) / tot, sum(bounds[c][1] * n[c] for c in levels) / tot)


def _range_row(rows, check, where, text, lo, hi):
    v_lo, v_hi = _iv(text)
    ok = v_lo < hi and v_hi > lo and lo < hi
    rows.append([check, where, text, f"{lo:.2f}-{hi:.2f}", "consistent" if ok else "inconsistent"])


def _per_request(published, p, c) -> list[list[str]]:
    """A per-request cell against its own average / concurrency."""
    out = []
    for t in published.tables:
        for cells, exprs in zip(t.rows, t.values):
            for text, expr in zip(cells, exprs):
                if expr == f"{p}_c{c}_gen_mean / {c}":
                    avg = next(tx for tx, e in zip(cells, exprs) if e == f"{p}_c{c}_gen_mean")
                    lo, hi = _iv(avg)
                    v_lo, v_hi = _iv(text)
                    if not (v_lo < hi / c and v_hi > lo / c):
                        out.append([f"{p}: per-request t/s at {c} requests vs average / {c}", f"table {t.id}",
                                    text, f"{lo / c:.2f}-{hi / c:.2f} (from the average {avg})", "inconsistent"])
    return out


def _p95_rows(cells, p, levels, n, total) -> list[list[str]]:
    """Can linear interpolation give the published P95, given the published cell peaks?"""
    if f"{p}_gen_p95" not in cells or total is None:
        return []
    N = int(total)
    h = 0.95 * (N - 1)
    k, f = int(math.floor(h)), h - math.floor(h)
    q_lo, q_hi = _iv(cells[f"{p}_gen_p95"])
    peaks = sorted((_iv(cells[f"{p}_c{c}_gen_max"]) for c in levels if f"{p}_c{c}_gen_max" in cells),
                   key=lambda b: -b[0])
    above = [b for b in peaks if b[0] >= q_hi]
    slots = N - 1 - k  # positions above rank k
    if len(above) != slots or not f:
        return []
    # the `slots` peaks fill the ranks above k; every other peak sits at rank <= k
    w_k1 = min(b[0] for b in above)
    rest = [b for b in peaks if b not in above]
    w_k = max((b[0] for b in rest), default=0.0)
    least = w_k + f * (w_k1 - w_k)
    if least < q_hi:
        return []
    return [[f"{p}: P95 of {N} windows by linear interpolation", "power vs concurrency table",
             cells[f"{p}_gen_p95"], f"at least {least:.2f} (peaks {', '.join(f'{b[0]:.1f}+' for b in above)} "
             f"fill the top {slots} ranks, another peak of {w_k:.1f}+ sits at rank {k})",
             "inconsistent with linear interpolation; the 'lower' rule (value at rank floor(0.95 (n-1))) fits"]]


def _prefill_rows(cells, models) -> list[list[str]]:
    out = []
    for m in models:
        p = f"{m}_250W"
        levels = [c for c in range(1, 7) if f"{p}_c{c}_prefill_active_mean" in cells]
        if not levels:
            continue
        n = {c: float(cells[f"{p}_c{c}_gen_n"]) for c in levels}
        na = {c: float(cells[f"{p}_c{c}_prefill_active_n"]) for c in levels}
        for c in levels:
            s_lo, s_hi = _iv(cells[f"{p}_c{c}_prefill_sustained_mean"])
            a_lo, a_hi = _iv(cells[f"{p}_c{c}_prefill_active_mean"])
            if not (s_lo * n[c] < a_hi * na[c] and s_hi * n[c] > a_lo * na[c]):
                out.append([f"{p}: prefill at {c} requests, sustained x n vs active x n", "prefill tables",
                            cells[f"{p}_c{c}_prefill_sustained_mean"],
                            f"{a_lo * na[c] / n[c]:.1f}-{a_hi * na[c] / n[c]:.1f}", "inconsistent"])
        for scope in ("c1to3", "c1to6"):
            top = LEVELS[scope][-1]
            for kind, counts, col in (("active", na, "active"), ("sustained", n, "sustained")):
                name = f"{p}_{scope}_prefill_{kind}_mean"
                if name not in cells:
                    continue
                cs = [c for c in levels if c <= top]
                bounds = {c: _iv(cells[f"{p}_c{c}_prefill_{col}_mean"]) for c in cs}
                lo, hi = _weighted(bounds, counts, cs)
                _range_row(out, f"{p}: {kind} prefill over 1-{top} requests (tokens-per-kW table) vs the prefill cells",
                           "t/kW vs prefill tables", cells[name], lo, hi)
        act = sum(float(cells[f"{p}_c{c}_prefill_active_mean"]) * na[c] for c in levels) / sum(na.values())
        sus = sum(float(cells[f"{p}_c{c}_prefill_sustained_mean"]) * n[c] for c in levels) / sum(n.values())
        power = cells.get(f"{p}_prefill_active_mean") or cells.get(f"{p}_prefill_sustained_mean")
        if power:
            pv = float(power)
            which = "active-only" if abs(pv - act) <= abs(pv - sus) else "sustained (all windows)"
            verdict = "consistent" if abs(pv - act) / act < 0.01 else (
                "matches the sustained cells, not the active-only ones the write-up names" if abs(pv - sus) / sus < 0.01
                else "matches neither 1-6 request aggregate (windows at 7-8 requests are not in the cell tables)")
            out.append([f"{p}: power-table prefill average vs the 1-6 request prefill cells", "power vs prefill tables",
                        power, f"active-only {act:.1f}, sustained {sus:.1f} (closest: {which})", verdict])
    return out


def _kw_rows(published, cards) -> list[list[str]]:
    """Tokens per kW cells against their own average / (cards x limit)."""
    out = []
    for t in published.tables:
        if not t.id.startswith("tokens-per-kw"):
            continue
        for cells in t.rows:
            limit = int(cells[1].rstrip("W"))
            kw = cards * limit / 1000
            for avg_i, kw_i, label in ((2, 3, "generation"), (4, 5, "prefill")):
                lo, hi = _iv(cells[avg_i])
                v_lo, v_hi = _iv(cells[kw_i])
                if not (v_lo < hi / kw and v_hi > lo / kw):
                    out.append([f"{cells[0]} {cells[1]}: {label} t/kW vs average / {kw:g} kW", f"table {t.id}",
                                cells[kw_i], f"{lo / kw:.1f}-{hi / kw:.1f}", "inconsistent"])
    return out

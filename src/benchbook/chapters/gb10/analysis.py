"""GB10 MTP chapter: control, model against model, vanilla vs MTP, acceptance anatomy, boot costs.

Everything the chapter shows is computed here from its data folder (bench JSON per run,
each server's log, the MTP server's /metrics dumps) through the project's readers.
Configurations are found by role (the CONTRACT of this folder): old-stack, control, vanilla and
mtp, whose value-name keys are old, fresh, van and mtp; a run's test is its kind (test-a to
test-d). Value names follow the header of the study's published.yml.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...analysis import closed_loop, energy, rate_sweep
from ...book import pipeline
from ...book import serving_points as points
from ...book.key_figures import decode_context, key_figure_row, key_figures_table, speculative
from ...book.kinds import shared_glue
from ...format import config_label, fmt_pct, fmt_seconds, platform_short
from ...ingest import load_pattern
from ...ingest.prometheus import counter_delta
from ...ingest.textio import read_text
from ...ledger import claims as claims_mod
from ...ledger.caveats import data_caveats, rule
from ...page import plots
from ...page.opening import opening_words
from ...page.palette import NEUTRAL, model_colour, seed_colour
from ...study.contract import Missing
from ...study.marks import MARKS, Col, Glued, Shown, rows_table, table, union
from . import CONTRACT as GB10
from . import beside

STUDY = "gb10-mtp"
TESTS = ("a", "b", "c", "d")
# role -> value-name key (old, fresh, van, mtp); configurations of role 'other' enter only the
# sections every configuration has (rate sweeps, llama-benchy, energy), never tests A-D's
ROLE_KEYS = {r.name: r.key for r in GB10.roles if "{" not in r.key}
KEY_ROLES = {v: k for k, v in ROLE_KEYS.items()}
# metric -> (label, higher is better, seconds?)
METRICS = {
    "output_tps": ("output t/s", True, False), "mean_ttft_s": ("mean TTFT", False, True),
    "p99_ttft_s": ("P99 TTFT", False, True), "mean_tpot_s": ("mean TPOT", False, True),
    "p99_tpot_s": ("P99 TPOT", False, True), "mean_itl_s": ("mean ITL", False, True),
    "p99_itl_s": ("P99 ITL", False, True),
}
COMPARISONS = {  # id -> (before, after, title)
    "control": ("old", "fresh", "Control: the same model on the earlier and on the current stack"),
    "model": ("fresh", "van", "The control model against the model under test, both on the current stack"),
    "mtp": ("van", "mtp", "The model under test without and with MTP"),
}
# Glue keys the prose quotes: per comparison, its rows and how many moved beyond the noise.
COMPARISON_GLUE = {"control": ("control_rows", "control_beyond"), "model": ("model_rows", "model_beyond"),
                   "mtp": ("mtp_rows", "mtp_beyond")}
# Per configuration of test B: long gaps, all gaps, and the share of long ones.
GAPS_GLUE = {"van": ("b_long_van", "b_gaps_van", "b_share_van"), "mtp": ("b_long_mtp", "b_gaps_mtp", "b_share_mtp")}
# Where MTP moved output most (`best`) and least (`worst`): the test, and the change of each metric.
MTP_MOVE_GLUE = {
    "best": {"test": "mtp_best_test", "output_tps": "mtp_best_output_pct", "mean_ttft_s": "mtp_best_mean_ttft_s_pct",
             "mean_tpot_s": "mtp_best_mean_tpot_s_pct"},
    "worst": {"test": "mtp_worst_test", "output_tps": "mtp_worst_output_pct",
              "mean_ttft_s": "mtp_worst_mean_ttft_s_pct", "mean_tpot_s": "mtp_worst_mean_tpot_s_pct"},
}
# What MTP costs at start-up: boot fact -> (change, change in per cent).
MTP_COST_GLUE = {
    "kv_cache_tokens": ("mtp_cost_kv_cache_tokens", "mtp_cost_kv_cache_tokens_pct"),
    "weights_gib": ("mtp_cost_weights_gib", "mtp_cost_weights_gib_pct"),
    "weights_load_s": ("mtp_cost_weights_load_s", "mtp_cost_weights_load_s_pct"),
    "kv_cache_gib": ("mtp_cost_kv_cache_gib", "mtp_cost_kv_cache_gib_pct"),
    "max_concurrency": ("mtp_cost_max_concurrency", "mtp_cost_max_concurrency_pct"),
}


@dataclass
class Results(pipeline.ChapterResults):
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)  # one row per bench run with its metrics
    groups: pd.DataFrame = field(default_factory=pd.DataFrame)  # per (config, test, metric): mean, seeds, spread
    boot: pd.DataFrame = field(default_factory=pd.DataFrame)
    lines: pd.DataFrame = field(default_factory=pd.DataFrame)
    labels: dict = field(default_factory=dict)  # value-name key (old, fresh, van, mtp) -> label
    rates: rate_sweep.RateSweeps = field(default_factory=rate_sweep.RateSweeps)  # the request-rate sweeps
    energy: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=energy.COLUMNS))  # per token
    closed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=closed_loop.COLUMNS))  # llama-benchy
    beside: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=beside.COLUMNS))  # write-up vs nearest

    def test_label(self, test: str) -> str:
        """'A: 512/512, 1 client': the test's workload as this data ran it."""
        x = self.runs[self.runs["test"] == test] if len(self.runs) else self.runs
        if not len(x):
            return test.upper()
        i, o, c = (x[k].dropna() for k in ("input_len", "output_len", "concurrency"))
        if not (len(i) and len(o) and len(c)):
            return test.upper()
        c0 = int(c.iloc[0])
        return f"{test.upper()}: {int(i.iloc[0])}/{int(o.iloc[0])}, {c0} client{'s' if c0 != 1 else ''}"


# ---------------------------------------------------------------- values from the tables


def _role_key(df: pd.DataFrame) -> pd.Series:
    return df["role"].map(ROLE_KEYS) if "role" in df else pd.Series([None] * len(df), index=df.index)


def run_table(data) -> pd.DataFrame:
    """Bench runs with every metric the chapter uses (means from runs, percentiles from requests)."""
    runs = data["runs"].copy()
    req = data["requests"]
    ok = req[req["ok"].fillna(False)]
    g = ok.groupby("run_id")
    extra = pd.DataFrame({
        "p95_ttft_s": g["ttft_s"].quantile(0.95),
        "ttft_outliers": g["ttft_s"].apply(lambda s: float((s > 2 * s.median()).sum())),
        "first_start_s": g["start_s"].min(),
        "last_end_s": (ok["start_s"] + ok["e2el_s"]).groupby(ok["run_id"]).max(),
        "chunks": g["n_chunks"].sum(),
        "decode_tokens": (ok["output_tokens"] - 1).groupby(ok["run_id"]).sum(),
    })
    runs = runs.merge(extra, left_on="run_id", right_index=True, how="left")
    stats = data["run_stats"]
    for pos in (0, 1):
        s = stats[(stats["metric"] == f"spec_accept_pos{pos}") & (stats["origin"] == "reported")]
        runs[f"spec_pos{pos}"] = runs["run_id"].map(s.set_index("run_id")["value_s"])
    runs["cfg"] = _role_key(runs)
    runs["test"] = runs["kind"].astype(str).str.extract(r"^test-([a-d])$")[0]
    runs = runs[runs["cfg"].notna() & runs["test"].notna()].copy()
    runs["group"] = runs["cfg"] + "_" + runs["test"]
    runs["tokens_per_chunk"] = runs["decode_tokens"] / runs["chunks"]
    return runs


RUN_VALUES = ("output_tps", "mean_ttft_s", "p95_ttft_s", "p99_ttft_s", "mean_tpot_s", "p99_tpot_s",
              "mean_itl_s", "p99_itl_s", "ttft_outliers", "spec_acceptance_rate", "spec_acceptance_length",
              "spec_num_drafts", "spec_draft_tokens", "spec_accepted_tokens", "spec_pos0", "spec_pos1",
              "tokens_per_chunk")
GROUP_COLUMNS = ["group", "cfg", "test", "metric", "mean", "n", "spread", "seeds"]


def group_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over a group's seeds, the seeds' values and their spread (max - min) / mean."""
    rows = []
    for (group, cfg, test), r in runs.groupby(["group", "cfg", "test"], sort=False):
        for m in RUN_VALUES:
            v = r[m].astype(float).dropna()
            if not len(v):
                continue
            mean = float(v.mean())
            spread = float((v.max() - v.min()) / abs(mean)) if len(v) > 1 and mean else math.nan
            rows.append(dict(group=group, cfg=cfg, test=test, metric=m, mean=mean, n=len(v), spread=spread,
                             seeds=", ".join(f"{x:.6g}" for x in v)))
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)


def boot_table(data) -> pd.DataFrame:
    """Start-up facts per configuration (first value of each fact in each log)."""
    b = data["boot"]
    cols = ["cfg", "fact", "value", "value_num", "unit"]
    if not len(b):
        return pd.DataFrame(columns=cols)
    b = b.assign(cfg=_role_key(b)).dropna(subset=["cfg"])
    return b.sort_values("line").groupby(["cfg", "fact"], as_index=False).first().reindex(columns=cols)


PROM = {"num_drafts": "vllm:spec_decode_num_drafts_total",
        "draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
        "accepted_tokens": "vllm:spec_decode_num_accepted_tokens_total"}
PROM_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"


def prom_values(data) -> dict:
    """Spec-decode counters of the last dump, and their growth since the first dump.

    Only the MTP server's dumps count; a counter a dump lacks (no speculative decoding,
    an older vLLM) is simply absent from the values, never an error.
    """
    ps = data["prom_samples"]
    if len(ps) and "role" in ps:
        ps = ps[ps["role"] == "mtp"]
    if not len(ps) or not ps["metric"].isin(PROM.values()).any():
        return {}
    ps = ps[ps["source_file"] == ps["source_file"].iloc[0]]  # one server's dumps
    first, last = int(ps["dump"].min()), int(ps["dump"].max())
    out = {}
    lastdump = ps[ps["dump"] == last]
    for short, metric in PROM.items():
        if (lastdump["metric"] == metric).any():
            out[f"prom_{short}"] = float(lastdump[lastdump["metric"] == metric]["value"].sum())
            _delta(out, f"prom_delta_{short}", ps, metric, first, last)
    for p in (0, 1):
        sel = lastdump[(lastdump["metric"] == PROM_POS) & lastdump["labels"].str.contains(f"position={p}")]
        if len(sel):
            out[f"prom_accepted_pos{p}"] = float(sel["value"].sum())
            _delta(out, f"prom_delta_accepted_pos{p}", ps, PROM_POS, first, last, position=p)
    out["prom_first_dump"], out["prom_last_dump"] = first, last
    return out


def _delta(out: dict, key: str, ps, metric, first, last, **labels) -> None:
    try:
        out[key] = counter_delta(ps, metric, first, last, **labels)
    except ValueError:
        pass  # one dump, a restart between dumps: no growth to report


def spec_lines(data) -> pd.DataFrame:
    """The SpecDecoding lines of the logs with drafts (= drafted tokens / draft positions)."""
    sd = data["spec_decode"]
    s = sd[sd["origin"] == "log-line"].copy()
    if not len(s):
        return s.assign(cfg=pd.Series(dtype=object), drafts=pd.Series(dtype=int))
    k = s["per_position"].astype(str).str.count(",") + 1
    s["k"] = k
    s["drafts"] = (s["draft_tokens"].astype(float) / k).round().astype(int)
    s["accepted_per_draft"] = s["accepted_tokens"].astype(float) / s["drafts"]
    s["cfg"] = _role_key(s)
    return s


def compute_values(runs: pd.DataFrame, groups: pd.DataFrame, boot: pd.DataFrame, prom: dict,
                   lines: pd.DataFrame) -> dict:
    values = {}
    for r in runs.itertuples():
        for m in RUN_VALUES:
            v = getattr(r, m)
            if pd.notna(v) and isinstance(r.key, str):
                values[f"{r.key}_{m}"] = float(v)
    for r in groups.itertuples():
        values[f"{r.group}_{r.metric}"] = r.mean
    for r in boot.itertuples():
        if pd.notna(r.value_num):
            values[f"{r.cfg}_{r.fact}"] = float(r.value_num)
    values.update(prom)
    for r in lines.itertuples():
        if r.cfg != "mtp" or not isinstance(r.time, str):
            continue
        key = "specline_" + str(r.time).split()[-1].replace(":", "")
        values[f"{key}_mean_acceptance_length"] = float(r.mean_acceptance_length)
        values[f"{key}_acceptance_rate"] = float(r.acceptance_rate)
    fresh = runs[runs["cfg"] == "fresh"]
    if len(fresh) and fresh["last_end_s"].notna().any():
        values["fresh_session_s"] = float(fresh["last_end_s"].max() - fresh["first_start_s"].min())
    return values


def value_ids(r: Results) -> dict:
    """The assumption ids behind compute_values' names: a run's own cells, a group's mean
    (every seed's cell), a start-up fact (its lines in the configuration's log)."""
    cells, out = r.cells(r.runs, "runs"), {}
    for label, key in zip(r.runs.index, r.runs["key"]):
        for m in RUN_VALUES if isinstance(key, str) else ():
            out[f"{key}_{m}"] = cells.at(label, m)
    for group, g in r.runs.groupby("group", sort=False):
        for m in RUN_VALUES:
            out[f"{group}_{m}"] = cells.union(m, g.index)
    boot = r.data["boot"]
    if len(boot):
        bc, cfg = r.cells(boot, "boot"), _role_key(boot)
        for (c, fact), g in boot.groupby([cfg, "fact"]):
            out[f"{c}_{fact}"] = bc.union("value_num", g.index)
    return {k: v for k, v in out.items() if v}


# ---------------------------------------------------------------- analysis


def analyse(data_dir, published_file=None, noise_factor=1.0, within_pct=2.0, strong_gain_pct=20.0,
            strong_ttft_pct=20.0, ttft_limits_s=rate_sweep.LIMITS_S, tpot_limit_s=None) -> Results:
    params = dict(noise_factor=noise_factor, within_pct=within_pct, strong_gain_pct=strong_gain_pct,
                  strong_ttft_pct=strong_ttft_pct, ttft_limits_s=tuple(ttft_limits_s), tpot_limit_s=tpot_limit_s)
    r = pipeline.start(STUDY, data_dir, published_file, params, results=Results)
    r.runs = run_table(r.data)
    r.groups = group_table(r.runs)
    r.boot = boot_table(r.data)
    r.lines = spec_lines(r.data)
    r.labels = {ROLE_KEYS[role]: config_label(cid, r.config(cid)) for cid, role in r.roles.of_config.items()
                if role in ROLE_KEYS}
    r.values = compute_values(r.runs, r.groups, r.boot, prom_values(r.data), r.lines)
    r.value_ids = value_ids(r)
    runs = r.data["runs"]
    r.rates = rate_sweep.of_chapter(r, runs[runs["kind"] == "rate"])
    r.energy = energy.of_chapter(r)
    r.closed = closed_loop.points(r.data["llama_benchy"], list(r.rates.labels))
    vanilla = [cid for cid, role in r.roles.of_config.items() if role == "vanilla"]
    r.beside = beside.table(r.closed, vanilla, GB10, r.published)
    _refine_sections(r)
    _refine_beside(r)
    pipeline.finish(r, caveats=_caveats)
    r.ledger["within rounding"] = [within_rounding(c) for c in r.published.claims]
    return r


def _refine_sections(r: Results) -> None:
    """Sections the runs allow but the tables inside them do not fill."""
    def lacks(section, why):
        if r.sections.get(section) is None:
            r.sections[section] = Missing(r.spec.contract.section(section), [why])

    mtp_lines = r.lines[r.lines["cfg"] == "mtp"] if len(r.lines) else r.lines
    if not len(mtp_lines):
        lacks("acceptance-log", "SpecDecoding lines in the MTP server's log")
    if "prom_num_drafts" not in r.values:
        lacks("acceptance-metrics", "speculative-decoding counters in the MTP server's /metrics dumps")
    if not r.runs[(r.runs["cfg"] == "mtp") & r.runs["spec_num_drafts"].notna()].shape[0]:
        lacks("acceptance-bench", "the bench JSON's speculative-decoding block in a run of the MTP configuration")
    if quoted_line(r) is None:
        lacks("quoted-line", "the SpecDecoding log line the write-up quotes")
    if not len(long_gaps(r)):
        lacks("long-gaps", "per-request inter-token gaps of test B runs without and with MTP")
    if not len(tpot_vs_itl(r)):
        lacks("tpot-itl", "mean TPOT and ITL of the vanilla or MTP configuration")
    if not len(r.boot):
        lacks("boot", "start-up lines in the server logs")
    for cfg in ("van", "mtp"):
        for fact in ("kv_cache_tokens", "weights_gib"):
            if f"{cfg}_{fact}" not in r.values:
                lacks("mtp-boot", f"{fact} in the start-up lines of the {KEY_ROLES[cfg]} server")
    if r.sections.get("mtp") is None and not len(decision(r)):
        lacks("mtp", "a test both the vanilla and the MTP configuration ran")


def _refine_beside(r: Results) -> None:
    """The write-up's runs are set beside this data's only on its setup (role vanilla)."""
    if r.sections.get("beside") is not None:
        return
    if not r.comparability.role_ok("vanilla"):
        why = ("the vanilla configuration on the write-up's platform, model and weights "
               f"(here: {r.comparability.roles['vanilla'].data})")
    elif not len(r.beside):
        why = "a published test of the vanilla configuration and a llama-benchy test to set beside it"
    else:
        return
    r.sections["beside"] = Missing(r.spec.contract.section("beside"), [why])


def within_rounding(claim: dict) -> str:
    """For a consistency claim: can numbers that print like the stated ones give a value that
    prints like the published one? The ledger's verdict follows the same rule (claims.rounding_allows)."""
    ok = claims_mod.rounding_allows(claim)
    return "" if ok is None else ("yes" if ok else "no")


def spread_of(r: Results, cfg: str, test: str, metric: str) -> float:
    g = r.groups[(r.groups["cfg"] == cfg) & (r.groups["test"] == test) & (r.groups["metric"] == metric)]
    return float(g["spread"].iloc[0]) if len(g) else math.nan


def noise_band(r: Results, a: str, b: str, test: str, metric: str) -> tuple[float, str]:
    """The larger seed-to-seed spread of the two configurations for this test and metric; for
    a single-run test (A), the largest spread of that metric over tests B-D as a stand-in."""
    s = [x for x in (spread_of(r, a, test, metric), spread_of(r, b, test, metric)) if not math.isnan(x)]
    if s:
        return max(s), "seeds"
    other = [spread_of(r, c, t, metric) for c in (a, b) for t in TESTS if t != test]
    other = [x for x in other if not math.isnan(x)]
    return (max(other), "stand-in") if other else (math.nan, "none")


def compare(r: Results, before: str, after: str, metrics=tuple(METRICS)) -> pd.DataFrame:
    """Δ % per test and metric with the noise band beside it and the verdict of the rule."""
    rows = []
    f = r.params["noise_factor"]
    for test in TESTS:
        for m in metrics:
            va, vb = r.values.get(f"{before}_{test}_{m}"), r.values.get(f"{after}_{test}_{m}")
            if va is None or vb is None:
                continue
            delta = vb / va - 1
            band, kind = noise_band(r, before, after, test, m)
            if math.isnan(band):
                verdict = "no spread to judge by"
            else:
                verdict = "beyond noise" if abs(delta) > f * band else "within noise"
            label, higher, secs = METRICS[m]
            better = (delta > 0) == higher
            seeds = _shared_seeds(r, before, after, test)
            paired = [r.values[f"{after}_{test}_s{s}_{m}"] / r.values[f"{before}_{test}_s{s}_{m}"] - 1 for s in seeds
                      if f"{after}_{test}_s{s}_{m}" in r.values and f"{before}_{test}_s{s}_{m}" in r.values]
            ia, ib = (r.value_ids.get(f"{c}_{test}_{m}", ()) for c in (before, after))
            band_ids = _band_ids(r, before, after, test, m, kind)
            rows.append({
                "test": test.upper(), "metric": label, _head(r, before): Shown(_fmt(va, secs), ia),
                _head(r, after): Shown(_fmt(vb, secs), ib), "Δ": Shown(fmt_pct(delta), union(ia, ib)),
                "Δ per seed": _per_seed(seeds, paired, union(ia, ib)),
                "seed spread": Shown("–" if math.isnan(band) else f"{band:.1%}" + (" *" if kind == "stand-in" else ""),
                                     band_ids),
                "verdict": Shown(verdict + ("" if verdict != "beyond noise" else (", better" if better else ", worse")),
                                 union(ia, ib, band_ids)),
                "_delta": delta, "_band": band, "_metric": m, "_test": test, "_ids": union(ia, ib, band_ids),
            })
    return rows_table(rows, r.assumed_why, columns=["test", "metric", _head(r, before), _head(r, after), "Δ",
                                                    "Δ per seed", "seed spread", "verdict", "_delta", "_band",
                                                    "_metric", "_test", "_ids"])


def _per_seed(seeds: list, paired: list, ids: tuple) -> Shown:
    """The change seed by seed ('–' with fewer than two seeds), resting on both groups' cells."""
    if len(paired) < 2:
        return Shown("–")
    return Shown(" / ".join(f"{fmt_pct(x)} (s{s})" for s, x in zip(seeds, paired)), ids)


def _band_ids(r: Results, a: str, b: str, test: str, metric: str, kind: str) -> tuple:
    """What noise_band read: the two groups' seeds, or for a stand-in every other test's."""
    tests = [test] if kind == "seeds" else [t for t in TESTS if t != test] if kind == "stand-in" else []
    return union(*(r.value_ids.get(f"{c}_{t}_{metric}", ()) for c in (a, b) for t in tests))


def _head(r: Results, cfg: str) -> str:
    """A column heading for a configuration (its label; the role if two share a label)."""
    label = r.labels.get(cfg, cfg)
    same = [k for k, v in r.labels.items() if v == label]
    return label if len(same) < 2 else f"{label} ({KEY_ROLES.get(cfg, cfg)})"


def _shared_seeds(r: Results, a: str, b: str, test: str) -> list[int]:
    """Seeds both configurations ran this test with, when each ran it with several."""
    def seeds(cfg):
        x = r.runs[(r.runs["cfg"] == cfg) & (r.runs["test"] == test)]
        return set(pd.to_numeric(x["seed"], errors="coerce").dropna().astype(int)) if len(x) > 1 else set()
    return sorted(seeds(a) & seeds(b))


def _fmt(v: float, secs: bool) -> str:
    return fmt_seconds(v) if secs else f"{v:,.2f}"


def shown(df: pd.DataFrame) -> pd.DataFrame:
    return df[[c for c in df.columns if not c.startswith("_")]]


def within_count(r: Results) -> dict:
    """How many of six metrics per test move less than `within_pct` between the control and
    the vanilla configuration (our reading of the write-up's count, which names no metrics)."""
    ms = ("output_tps", "mean_ttft_s", "p99_ttft_s", "mean_tpot_s", "p99_tpot_s", "mean_itl_s")
    c = compare(r, "fresh", "van", ms)
    lim = r.params["within_pct"] / 100
    out = c[c["_delta"].abs() >= lim]
    return dict(total=len(c), within=int((c["_delta"].abs() < lim).sum()),
                outside=", ".join(f"{t} {m} ({d})" for t, m, d in zip(out["test"], out["metric"], out["Δ"])),
                ids=union(*c["_ids"]))


def decision(r: Results) -> pd.DataFrame:
    """MTP on or off per test, by a stated rule on the vanilla -> MTP changes.

    off: throughput falls by more than the noise band; on: it rises by more than the band;
    strongly on: it rises by at least `strong_gain_pct` and mean TTFT falls by at least
    `strong_ttft_pct`; otherwise no clear call.
    """
    c = compare(r, "van", "mtp", ("output_tps", "mean_ttft_s", "mean_tpot_s", "p99_itl_s", "p99_tpot_s"))
    pub = published_decisions(r)
    rows = []
    for test in TESTS:
        t = c[c["_test"] == test].set_index("_metric")
        if "output_tps" not in t.index:
            continue
        d, band = t.loc["output_tps", "_delta"], t.loc["output_tps", "_band"]
        f = r.params["noise_factor"] * (0 if math.isnan(band) else band)
        ttft = t.loc["mean_ttft_s", "_delta"] if "mean_ttft_s" in t.index else math.nan
        if d < -f:
            call = "off"
        elif d >= r.params["strong_gain_pct"] / 100 and ttft <= -r.params["strong_ttft_pct"] / 100:
            call = "strongly on"
        elif d > f:
            call = "on"
        else:
            call = "no clear call"
        costs = [f"{t.loc[m, 'metric']} {t.loc[m, 'Δ']}" for m in ("mean_tpot_s", "p99_tpot_s", "p99_itl_s")
                 if m in t.index and t.loc[m, "_delta"] > t.loc[m, "_band"] * r.params["noise_factor"]]
        ids = _ids_of(t, ("output_tps",)), _ids_of(t, ("mean_ttft_s",))
        call_ids = union(*ids)
        row = {"test": r.test_label(test), "output t/s Δ": Shown(t.loc["output_tps", "Δ"], ids[0]),
               "mean TTFT Δ": Shown(t.loc["mean_ttft_s", "Δ"] if "mean_ttft_s" in t.index else "–", ids[1]),
               "noise band": Shown(f"{f:.1%}", ids[0]), "our call": Shown(call, call_ids)}
        if r.comparable:  # the write-up's calls are about its setup only
            row.update({"write-up": pub.get(test, "–"),
                        "agree": Shown("yes" if pub.get(test) == call else "no", call_ids)})
        row["costs beyond noise"] = Shown(", ".join(costs) or "none",
                                          _ids_of(t, ("mean_tpot_s", "p99_tpot_s", "p99_itl_s")))
        rows.append(row)
    return rows_table(rows, r.assumed_why)


def _ids_of(t: pd.DataFrame, metrics) -> tuple:
    """The assumption ids of compare's rows (indexed by metric) for these metrics."""
    return union(*(t.loc[m, "_ids"] for m in metrics if m in t.index))


def published_decisions(r: Results) -> dict:
    """The write-up's decision table read by its symbols: ❌ off, ✅ on, ✅✅ strongly on."""
    t = next((t for t in r.published.tables if t.id == "decision"), None)
    out = {}
    if t is None:
        return out
    for row in t.rows:
        m = re.search(r"\(([A-D])\)", row[0])
        if not m:
            continue
        n = row[1].count("✅")
        out[m.group(1).lower()] = "off" if "❌" in row[1] else ("strongly on" if n >= 2 else "on" if n else "–")
    return out


# ---------------------------------------------------------------- acceptance anatomy


def acceptance_runs(r: Results) -> pd.DataFrame:
    """Per MTP run: the bench JSON's spec block, with the acceptance length both ways."""
    m = r.runs[r.runs["spec_num_drafts"].notna()].sort_values("name")
    pct = lambda v: f"{v:.2%}"  # noqa: E731
    return table(m, {
        "run": Col("name"), "drafts": Col("spec_num_drafts", int), "draft tokens": Col("spec_draft_tokens", int),
        "accepted": Col("spec_accepted_tokens", int),
        "position 0": Col("spec_pos0", pct), "position 1": Col("spec_pos1", pct),
        "acceptance rate": Col("spec_acceptance_rate", pct),
        "length, with bonus token": Col("spec_acceptance_length", lambda v: f"{v:.3f}"),
        "accepted per draft (no bonus)": Col(("spec_accepted_tokens", "spec_num_drafts"), lambda a, d: f"{a / d:.3f}"),
    }, r.cells(m, "runs"))


def reconciliation(r: Results) -> pd.DataFrame:
    """The same counters four ways: /metrics absolute and delta, the logs' lines, the bench JSON."""
    v = r.values
    lines = r.lines
    mtp_lines = lines[lines["cfg"] == "mtp"] if len(lines) else lines
    bench = r.runs[(r.runs["cfg"] == "mtp") & r.runs["spec_num_drafts"].notna()]
    rows = []

    k = _draft_positions(r)

    bench_ids = r.cells(bench, "runs").union(("spec_num_drafts", "spec_accepted_tokens"))  # the sums read each run

    def row(label, drafts, accepted, ids=()):
        if not drafts:
            return
        rows.append({"source": label, "drafts": Shown(int(drafts), ids), "accepted": Shown(int(accepted), ids),
                     "accepted per draft": Shown(f"{accepted / drafts:.4f}", ids),
                     "length (with bonus)": Shown(f"{1 + accepted / drafts:.3f}", ids),
                     "rate": Shown(f"{accepted / (k * drafts):.2%}" if k else "–", ids)})

    if "prom_num_drafts" in v and "prom_accepted_tokens" in v:
        row("/metrics, last dump (since server start)", v["prom_num_drafts"], v["prom_accepted_tokens"])
    if "prom_delta_num_drafts" in v and "prom_delta_accepted_tokens" in v:
        row("/metrics, last dump minus first", v["prom_delta_num_drafts"], v["prom_delta_accepted_tokens"])
    if len(mtp_lines):
        row("SpecDecoding log lines, all", mtp_lines["drafts"].sum(), mtp_lines["accepted_tokens"].sum())
    if len(bench):
        row("bench JSON spec blocks (measured requests)", bench["spec_num_drafts"].sum(),
            bench["spec_accepted_tokens"].sum(), bench_ids)
        if "prom_num_drafts" in v and "prom_accepted_tokens" in v:
            row("left for warm-ups and other requests", v["prom_num_drafts"] - bench["spec_num_drafts"].sum(),
                v["prom_accepted_tokens"] - bench["spec_accepted_tokens"].sum(), bench_ids)
    return rows_table(rows, r.assumed_why)


def _draft_positions(r: Results) -> int | None:
    """Speculative tokens per draft: from the log lines' per-position list, else the /metrics
    draft tokens over drafts."""
    m = r.lines[r.lines["cfg"] == "mtp"] if len(r.lines) else r.lines
    if len(m):
        return int(m["k"].mode().iloc[0])
    v = r.values
    if v.get("prom_num_drafts") and "prom_draft_tokens" in v:
        return int(round(v["prom_draft_tokens"] / v["prom_num_drafts"]))
    return None


def quoted_line(r: Results) -> str | None:
    """The `specline_HHMMSS` the write-up quotes (named in published.yml), if the log has it."""
    for c in r.published.claims:
        m = re.search(r"specline_(\d{6})", str(c.get("recompute", "")))
        if m and f"specline_{m.group(1)}_mean_acceptance_length" in r.values:
            return f"specline_{m.group(1)}"
    return None


def three_figures(r: Results) -> pd.DataFrame:
    """The acceptance figures the write-up quotes (test A's, one log line's, the session's), on
    one yardstick: with and without the bonus token."""
    v = r.values
    q = quoted_line(r)
    line_key = f"{q}_mean_acceptance_length" if q else None
    rows = []
    if "mtp_a_spec_acceptance_length" in v:
        L = v["mtp_a_spec_acceptance_length"]
        rows.append(["test A, bench JSON (measured requests of test A)", "with the bonus token", L, L - 1])
    if line_key:
        L = v[line_key]
        hhmmss = line_key.split("_")[1]
        rows.append([f"one SpecDecoding line, one stats interval ({hhmmss[:2]}:{hhmmss[2:4]}:{hhmmss[4:]}, test A)",
                     "with the bonus token", L, L - 1])
    if v.get("prom_num_drafts") and "prom_accepted_tokens" in v:
        x = v["prom_accepted_tokens"] / v["prom_num_drafts"]
        rows.append(["/metrics since server start (all tests, warm-ups, other requests)", "without the bonus token",
                     x, 1 + x])
    return pd.DataFrame([{"figure": a, "as printed": b, "printed value": f"{c:.2f}",
                          "with bonus": f"{(c if 'with the' in b else d):.3f}",
                          "without bonus": f"{(d if 'with the' in b else c):.3f}"} for a, b, c, d in rows])


def tpot_vs_itl(r: Results) -> pd.DataFrame:
    """Mean ITL over mean TPOT is the tokens per streamed chunk: a burst, not a slowdown."""
    rows = []
    for cfg in ("van", "mtp"):
        for test in TESTS:
            v = r.values
            t, i, k = (v.get(f"{cfg}_{test}_{m}") for m in ("mean_tpot_s", "mean_itl_s", "tokens_per_chunk"))
            if t is None or i is None:
                continue
            ids = {m: r.value_ids.get(f"{cfg}_{test}_{m}", ())
                   for m in ("mean_tpot_s", "mean_itl_s", "tokens_per_chunk", "p99_itl_s")}
            rows.append({"config": r.labels.get(cfg, cfg), "test": test.upper(),
                         "mean TPOT": Shown(fmt_seconds(t), ids["mean_tpot_s"]),
                         "mean ITL": Shown(fmt_seconds(i), ids["mean_itl_s"]),
                         "ITL / TPOT": Shown(f"{i / t:.2f}", union(ids["mean_itl_s"], ids["mean_tpot_s"])),
                         "tokens per chunk": Shown("–" if k is None else f"{k:.2f}", ids["tokens_per_chunk"]),
                         "P99 ITL": Shown(fmt_seconds(v.get(f"{cfg}_{test}_p99_itl_s")), ids["p99_itl_s"]),
                         "_cfg": cfg})
    return rows_table(rows, r.assumed_why)


def long_gaps(r: Results, threshold_s: float = 0.5) -> pd.DataFrame:
    """Test B: how many inter-token gaps exceed `threshold_s`, and where the P99 falls."""
    rows = []
    for run, flat in _test_b_gaps(r):
        n_long = int((flat > threshold_s).sum())
        rows.append({"run": run["name"], "cfg": run["cfg"], "gaps": len(flat), f"gaps > {threshold_s:g} s": n_long,
                     "share": f"{n_long / len(flat):.2%}", "gaps above the P99": int(np.ceil(0.01 * (len(flat) - 1))),
                     "P99 ITL": fmt_seconds(float(np.percentile(flat, 99))), "_ids": gap_ids(r, run)})
    return pd.DataFrame(rows, columns=None if rows else ["run", "cfg", "_ids"])


# What each column of long_gaps rests on, as the tidy tables keep a run's gaps (the gaps
# themselves are read from the bench JSON): how many (each request's chunks), how long (each
# request's mean and largest gap too), and the P99 the bench file records over all of them.
GAP_READS = {"gaps": ("n_chunks",), "gaps above the P99": ("n_chunks",),
             "long": ("n_chunks", "itl_mean_s", "itl_max_s"), "share": ("n_chunks", "itl_mean_s", "itl_max_s"),
             "P99 ITL": ("p99_itl_s",)}  # "long": the column of gaps over the threshold


def long_gaps_display(r: Results) -> pd.DataFrame:
    """long_gaps as the page shows it, each cell marked with what it rests on (GAP_READS)."""
    rows = [{k: (Shown(v, row["_ids"].get("long" if k.startswith("gaps >") else k, ())) if k != "run" else v)
             for k, v in row.items() if k not in ("cfg", "_ids")} for row in long_gaps(r).to_dict("records")]
    return rows_table(rows, r.assumed_why)


def gap_ids(r: Results, run: pd.Series) -> dict:
    """What each column of a run's long_gaps row rests on (GAP_READS: `make marks` moved the
    seed spread, and with it the long gaps and the P99 of test B, unmarked): those columns of
    the run's requests and of its runs row."""
    req = r.data["requests"]
    mine = req.index[req["run_id"].astype(str) == str(run["run_id"])] if len(req) else req.index
    requests, runs = r.cells(req, "requests"), r.cells(r.runs, "runs")
    return {role: union(requests.union([c for c in reads if c in req.columns], mine),
                        runs.row(run.name, [c for c in reads if c in r.runs.columns]))
            for role, reads in GAP_READS.items()}


def _test_b_gaps(r: Results):
    """(run, every inter-token gap of its requests) for test B runs without and with MTP.

    The gaps are read from the run's own bench JSON (the tidy tables keep each request's
    mean and largest gap only); a run saved without per-request arrays has none.
    """
    runs = r.runs[(r.runs["test"] == "b") & r.runs["cfg"].isin(["van", "mtp"])] if len(r.runs) else r.runs
    for _, run in runs.sort_values(["cfg", "name"]).iterrows():
        objects = _objects(r.data.study.root / str(run["source_file"]))
        k = str(run["run_id"]).rsplit("#", 1)
        obj = objects[int(k[1]) - 1] if len(k) == 2 and k[1].isdigit() and len(objects) >= int(k[1]) else objects[0]
        itls = obj.get("itls") if isinstance(obj, dict) else None
        if not itls:
            continue
        flat = np.concatenate([np.asarray(x, dtype=float) for x in itls if len(x)] or [np.empty(0)])
        if len(flat):
            yield run, flat


def _objects(path) -> list:
    """The result objects of a bench JSON file: one object, or one per line (JSONL)."""
    import json

    text = read_text(path)
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------- boot facts


BOOT_FACTS = (("kv_cache_tokens", "KV cache, tokens"), ("kv_cache_gib", "KV cache memory, GiB"),
              ("max_concurrency", "max concurrency at max_model_len"), ("weights_gib", "weights in memory, GiB"),
              ("weights_load_s", "weight loading, s"), ("graph_capture_s", "graph capture, s"),
              ("graph_capture_gib", "graph capture, GiB"), ("cudagraph_mode_from", "CUDA graph mode asked"),
              ("cudagraph_mode_to", "CUDA graph mode used"), ("graphs_piecewise", "CUDA graphs captured, piecewise"),
              ("graphs_full", "CUDA graphs captured, full"), ("checkpoint_shards", "checkpoint shards"),
              ("moe_experts", "MoE routed experts (E of the MoE config file)"),
              ("moe_intermediate_size", "MoE expert size per GPU (N)"), ("world_size", "ranks (world size)"),
              ("architecture", "resolved architecture"), ("engine_version", "vLLM version"), ("model", "model"))


def boot_facts_table(r: Results) -> pd.DataFrame:
    b = r.boot
    cfgs = [k for k in ROLE_KEYS.values() if k in set(b["cfg"])]
    rows = []
    for fact, label in BOOT_FACTS:
        if not (b["fact"] == fact).any():
            continue
        row = {"fact": label}
        for cfg in cfgs:
            hit = b[(b["cfg"] == cfg) & (b["fact"] == fact)]
            row[_head(r, cfg)] = Shown("–" if not len(hit) else (
                f"{hit['value_num'].iloc[0]:,.2f}".rstrip("0").rstrip(".") if pd.notna(hit["value_num"].iloc[0])
                else str(hit["value"].iloc[0])), r.value_ids.get(f"{cfg}_{fact}", ()))
        rows.append(row)
    return rows_table(rows, r.assumed_why)


def mtp_costs(r: Results, out: dict | None = None) -> dict:
    v = r.values
    out = Glued(r.assumed_why) if out is None else out
    for fact, (change, change_pct) in MTP_COST_GLUE.items():
        a, b = v.get(f"van_{fact}"), v.get(f"mtp_{fact}")
        if a is not None and b is not None:
            ids = union(r.value_ids.get(f"van_{fact}", ()), r.value_ids.get(f"mtp_{fact}", ()))
            out.cell(change, b - a, ids)
            out.cell(change_pct, 100 * (b / a - 1), ids)
    bt = r.boot
    mode = bt[bt["cfg"] == "mtp"].drop_duplicates("fact").set_index("fact")["value"].astype(str)
    out["mtp_graph_change"] = (f"{mode['cudagraph_mode_from']} → {mode['cudagraph_mode_to']}"
                               if {"cudagraph_mode_from", "cudagraph_mode_to"} <= set(mode.index) else "none logged")
    return out


# ---------------------------------------------------------------- caveats by rule


def _caveats(r: Results) -> list[dict]:
    return data_caveats(r.data, r.runs.assign(dataset=r.runs.get("dataset"), ignore_eos=r.runs.get("ignore_eos")),
                        r.ledger) + gb10_caveats(r)


def gb10_caveats(r: Results) -> list[dict]:
    out = []
    platforms = {c.get("platform") for c in r.data.study.configs.values()}
    if len(platforms) == 1 and None not in platforms:
        out.append(rule("one machine", (
            f"Every run comes from one machine ({platforms.pop()}); nothing here says how another unit or "
            "another unified-memory system behaves.")))
    boot, groups = r.boot, r.groups
    v = boot[boot["fact"] == "engine_version"].groupby("cfg")["value"].first()
    if v.nunique() > 1:
        out.append(rule("software moved", (
            "The logs show different vLLM builds (" + ", ".join(f"{r.labels.get(c, c)}: {x}" for c, x in v.items()) +
            "); a comparison across them mixes every change between the builds, and the driver with it.")))
    seeded = groups[groups["n"] > 1]
    if len(seeded):
        n = int(seeded["n"].max())
        single = sorted({r.labels.get(c, c) + " " + t.upper()
                         for c, t in groups[groups["n"] == 1][["cfg", "test"]].itertuples(index=False)})
        out.append(rule("few seeds", (
            f"At most {n} seeds per test: a seed-to-seed spread from {n} runs is a range, not a confidence "
            "interval, so 'beyond noise' is a screening rule."
            + (f" Single runs ({', '.join(single)}) have no spread of their own; the chapter borrows the largest "
               "spread of the same metric from other tests (marked *)." if single else ""))))
    elif len(groups):
        out.append(rule("no seeds", (
            "Every test ran once, so there is no seed-to-seed spread to judge a change by: the comparisons "
            "below give the changes without a noise verdict.")))
    modes = boot[boot["fact"] == "cudagraph_mode_to"]
    if len(modes):
        out.append(rule("graph mode changed", (
            "vLLM changed the CUDA graph mode at start-up for " + ", ".join(r.labels.get(c, c) for c in modes["cfg"]) +
            " (" + ", ".join(modes["value"].astype(str)) + "): those runs are not on equal footing with the others.")))
    return out


# ---------------------------------------------------------------- figures


def fig_deltas(r: Results) -> plt.Figure:
    """Δ % of vanilla -> MTP per test for three metrics; error bars span the noise band."""
    c = compare(r, "van", "mtp", ("output_tps", "mean_ttft_s", "mean_tpot_s"))
    tests = [t.upper() for t in TESTS]
    metrics = [METRICS[m][0] for m in ("output_tps", "mean_ttft_s", "mean_tpot_s")]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.26
    # metrics, not models: shades of grey, so no model's colour means something else here
    for j, (m, colour) in enumerate(zip(metrics, NEUTRAL)):
        sub = c[c["metric"] == m].set_index("test").reindex(tests)
        x = np.arange(len(tests)) + (j - 1) * width
        band = 100 * sub["_band"].fillna(0.0) * r.params["noise_factor"]
        ax.bar(x, 100 * sub["_delta"], width, yerr=band, capsize=3, label=m, color=colour)
    ax.set_xticks(np.arange(len(tests)), tests)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("change with MTP (%)")
    ax.set_xlabel("test")
    ax.set_title(f"{r.labels.get('mtp', 'MTP')}: MTP on against off")
    legend = ax.legend(fontsize=plots.MIN_FONT_PT)
    marked = {m: (union(*g["_ids"]), all(g["_ids"])) for m, g in c.groupby("metric") if union(*g["_ids"])}
    plots.mark_series(fig, legend, marked, r.assumed_why)
    fig.tight_layout()
    return fig


def fig_acceptance(r: Results) -> plt.Figure:
    """Acceptance rate of every SpecDecoding line (one stats interval each) of the MTP server, by time."""
    lines = r.lines
    s = lines[lines["cfg"] == "mtp"].copy()
    t = pd.to_datetime("2000-" + s["time"].astype(str), format="%Y-%m-%d %H:%M:%S", errors="coerce")
    s, t = s[t.notna()], t[t.notna()]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    if len(s):
        minutes = (t - t.min()).dt.total_seconds() / 60
        ax.plot(minutes, 100 * s["acceptance_rate"], marker="o", markersize=3, linewidth=0.8,
                label=LINE_LABEL, color=model_colour(r.config(r.roles.first("mtp")).get("model")))
        key = quoted_line(r)
        if key:
            hh = key.split("_")[1]
            hit = s["time"].astype(str).str.endswith(f"{hh[:2]}:{hh[2:4]}:{hh[4:]}")
            ax.scatter(minutes[hit], 100 * s.loc[hit, "acceptance_rate"], s=80, facecolors="none",
                       edgecolors=NEUTRAL[0], linewidths=1.5, label="the line the write-up quotes")
        if "prom_accepted_tokens" in r.values and r.values.get("prom_draft_tokens"):
            ax.axhline(100 * r.values["prom_accepted_tokens"] / r.values["prom_draft_tokens"], color="grey",
                       linestyle="--", label="whole session (/metrics)")
    ax.set_xlabel("minutes since the first SpecDecoding line")
    ax.set_ylabel("draft acceptance rate (%)")
    ax.set_title("MTP acceptance per stats interval")
    legend = ax.legend(loc="lower left", fontsize=plots.MIN_FONT_PT)
    ids = line_ids(r, s.index) if len(s) else ()
    plots.mark_series(fig, legend, {LINE_LABEL: (ids, True)} if ids else {}, r.assumed_why)
    fig.tight_layout()
    return fig


LINE_LABEL = "one line (a stats interval)"


def fig_itl(r: Results) -> plt.Figure:
    """Test B inter-token gaps without and with MTP: same long gaps, fewer gaps in all. A
    seed keeps its colour (the seed palette), MTP off is solid and on dashed."""
    fig, ax = plt.subplots(figsize=(8, 4))
    seeds: dict = {}
    marked = {}
    for run, flat in _test_b_gaps(r):
        flat = np.sort(flat)
        seed = f", seed {int(run['seed'])}" if pd.notna(run.get("seed")) else ""
        colour = seed_colour(seeds.setdefault(seed, len(seeds)))
        label = f"{r.labels.get(run['cfg'], run['cfg'])}{seed}"
        ax.plot(flat * 1000, 1 - np.arange(len(flat)) / len(flat), color=colour,
                linestyle="--" if run["cfg"] == "mtp" else "-", label=label)
        if ids := union(*gap_ids(r, run).values()):
            marked[label] = (ids, True)
    ax.axhline(0.01, color="grey", linestyle=":", label="1 % of gaps (P99)")
    plots.log_scale(ax, "x")
    plots.log_scale(ax, "y")
    ax.set_xlabel("inter-token gap (ms)")
    ax.set_ylabel("share of gaps at least this long")
    ax.set_title("Test B: long gaps with and without MTP")
    plots.mark_series(fig, ax.legend(fontsize=plots.MIN_FONT_PT), marked, r.assumed_why)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- chapter helpers


def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    for cid, c in r.data.study.configs.items():
        rows.append({"config": cid, "role": r.roles.of_config.get(cid), "model": c.get("model"),
                     "vLLM": c.get("engine_version"), "stack": c.get("stack"), "speculative": c.get("speculative")})
    return pd.DataFrame(rows)


def runs_display(r: Results) -> pd.DataFrame:
    """Every bench run of a configuration with a role, whatever its kind (tests A-D and
    request-rate runs alike), with its load pattern as the file records it."""
    x = r.data["runs"]
    x = x[x["role"].notna() & x["kind"].notna()] if "role" in x else x.iloc[0:0]
    x = x.assign(test=x["kind"].astype(str).str.replace(r"^test-([a-d])$", lambda m: m.group(1).upper(),
                                                          regex=True),
                 load_text=x.apply(load_pattern.text, axis=1) if len(x) else pd.Series(dtype=object))
    x = x.sort_values(["config", "test", "name"])
    return table(x, {"run": Col("name"), "config": Col("config"), "test": Col("test"),
                     "seed": Col("seed", lambda v: "–" if v is None or pd.isna(v) else v),
                     "load": Col("load_text", reads=("load", "max_concurrency", "request_rate", "burstiness",
                                                     "peak_in_flight", "num_prompts")),
                     "requests": Col("completed", lambda v: pd.NA if pd.isna(v) else int(v)),
                     "output t/s": Col("output_tps", lambda v: f"{v:.2f}"),
                     "mean TTFT": Col("mean_ttft_s", fmt_seconds), "mean TPOT": Col("mean_tpot_s", fmt_seconds),
                     "mean ITL": Col("mean_itl_s", fmt_seconds), "P99 ITL": Col("p99_itl_s", fmt_seconds),
                     "file": Col("source_file", lambda p: Path(str(p)).name)}, r.cells(x, "runs"))


def ingest_table(r: Results) -> pd.DataFrame:
    return r.ingest_report(["file", "format", "read", "ignored", "reasons"])


def glue_values(r: Results) -> dict:
    """Numbers and words quoted in the chapter's prose, each computed only when its data is
    there; the prose that quotes it is tagged with its section and dropped without it."""
    out = Glued(r.assumed_why)
    out.update(opening_words(r))  # the opening on data of another setup
    out.update({"noise_factor": r.params["noise_factor"], "within_pct": r.params["within_pct"],
                "strong_gain_pct": r.params["strong_gain_pct"], "strong_ttft_pct": r.params["strong_ttft_pct"]})
    for comp, (a, b, _) in COMPARISONS.items():
        if r.has(comp):
            c, (rows, beyond) = compare(r, a, b), COMPARISON_GLUE[comp]
            out[rows] = len(c)
            out.cell(beyond, int(c["verdict"].str.startswith("beyond").sum()), union(*c["_ids"]))
    if r.has("control"):
        out.of("control_summary", (
            "the stack alone moved the control beyond the noise, so the later comparisons use the current "
            "stack only" if out["control_beyond"] else "the stack alone moved nothing beyond the noise"),
            "control_beyond")
    if r.has("model"):
        wc = within_count(r)
        out["within_total"] = wc["total"]
        for key, value in (("within_count", wc["within"]), ("within_outside", wc["outside"] or "none")):
            out.cell(key, value, wc["ids"])
    if r.has("mtp"):
        _mtp_values(r, out)
        dec = decision(r)
        if "agree" in dec:
            out.cell("decisions_agree", int((dec["agree"] == "yes").sum()), union(*cell_ids_of(dec, "agree")))
        out["decisions_total"] = len(dec)
    if r.has("long-gaps"):
        lg = long_gaps(r)
        for cfg, (long_, gaps, share) in GAPS_GLUE.items():
            sub = lg[lg["cfg"] == cfg]
            if len(sub):
                ids = {c: union(*(x[c] for x in sub["_ids"])) for c in GAP_READS}
                out.cell(long_, float(sub.filter(like="gaps >").iloc[:, 0].mean()), ids["long"])
                out.cell(gaps, float(sub["gaps"].mean()), ids["gaps"])
                out.of(share, 100 * out[long_] / out[gaps], long_, gaps)
    if r.has("tpot-itl"):
        tv = tpot_vs_itl(r)
        top = tv.assign(_k=tv["ITL / TPOT"].astype(float)).sort_values("_k").iloc[-1]
        ids = union(*cell_ids_of(tv, "ITL / TPOT"))  # the largest of every ratio
        for key, value in dict(itl_test=top["test"], itl_config=top["config"], itl_over_tpot=float(top["ITL / TPOT"]),
                               itl_tokens_per_chunk=top["tokens per chunk"]).items():
            out.cell(key, value, ids)
    _acceptance_values(r, out)
    if r.has("mtp-boot"):
        mtp_costs(r, out)
    out.update(shared_glue(r))
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison, r.claim_ids))
    cons = r.ledger[r.ledger["kind"] == "consistency"]
    out["consistency_total"] = len(cons)
    out["consistency_fail_rounding"] = int((cons["within rounding"] == "no").sum())
    return out


def cell_ids_of(df: pd.DataFrame, column: str) -> list[tuple]:
    """The ids a display frame marks in one column, row by row (marks.with_marks)."""

    found = (df.attrs.get(MARKS) or {}).get(column, {})
    return [tuple(found.get(label, ())) for label in df.index]


def _mtp_values(r: Results, out: Glued) -> None:
    """The tests where MTP moved throughput most and least, with the TTFT and TPOT change there."""
    c = compare(r, "van", "mtp", ("output_tps", "mean_ttft_s", "mean_tpot_s"))
    tput = c[c["_metric"] == "output_tps"].sort_values("_delta")
    if not len(tput):
        return
    chosen = union(*tput["_ids"])  # which test moved most is read off every test's change
    for role, row in (("best", tput.iloc[-1]), ("worst", tput.iloc[0])):
        t, keys = row["_test"], MTP_MOVE_GLUE[role]
        out.cell(keys["test"], r.test_label(t), chosen)
        out.cell(keys["output_tps"], 100 * float(row["_delta"]), union(chosen, row["_ids"]))
        for m in ("mean_ttft_s", "mean_tpot_s"):
            hit = c[(c["_test"] == t) & (c["_metric"] == m)]
            if len(hit):
                out.cell(keys[m], 100 * float(hit["_delta"].iloc[0]), union(chosen, hit["_ids"].iloc[0]))
    out["mtp_tests"] = len(tput)


def _acceptance_values(r: Results, out: Glued) -> None:
    v = r.values
    if r.has("acceptance-metrics"):
        for k in ("prom_num_drafts", "prom_accepted_tokens", "prom_draft_tokens"):
            if k in v:
                out[k] = int(v[k])
        out["global_per_draft"] = v["prom_accepted_tokens"] / v["prom_num_drafts"]
        out["global_length"] = 1 + out["global_per_draft"]
        if v.get("prom_draft_tokens"):
            out["global_rate_pct"] = 100 * v["prom_accepted_tokens"] / v["prom_draft_tokens"]
        for name, key in (("prom_accepted_pos0", "pos0_pct"), ("prom_accepted_pos1", "pos1_pct")):
            if name in v:
                out[key] = 100 * v[name] / v["prom_num_drafts"]
    if r.has("acceptance-bench") and "mtp_a_spec_acceptance_length" in v:
        ids = r.value_ids.get("mtp_a_spec_acceptance_length", ())
        out.cell("a_length", v["mtp_a_spec_acceptance_length"], ids)
        out.cell("a_per_draft", v["mtp_a_spec_acceptance_length"] - 1, ids)
        if "global_per_draft" in out:
            d = out["a_per_draft"] - out["global_per_draft"]
            out.of("a_vs_global", "as much as" if abs(d) < 0.005 else ("less than" if d < 0 else "more than"),
                   "a_per_draft")
    line = quoted_line(r)
    if line:
        out["line_length"] = v[f"{line}_mean_acceptance_length"]
        out["line_rate_pct"] = 100 * v[f"{line}_acceptance_rate"]
        hh = line.split("_")[1]
        out["line_time"] = f"{hh[:2]}:{hh[2:4]}:{hh[4:]}"
    if "prom_delta_num_drafts" in v:
        out["prom_delta_drafts"] = int(v["prom_delta_num_drafts"])
    bench = r.runs[r.runs["spec_num_drafts"].notna()] if "spec_num_drafts" in r.runs else r.runs.iloc[:0]
    out.cell("bench_drafts", int(bench["spec_num_drafts"].sum()) if len(bench) else 0,
             r.cells(bench, "runs").union("spec_num_drafts"))
    out["mtp_runs"] = len(bench)
    m = r.lines[r.lines["cfg"] == "mtp"] if len(r.lines) else r.lines
    if len(m):
        ids = line_ids(r, m.index)
        out.cell("lines_n", len(m), r.cells(r.data["spec_decode"], "spec_decode").union(("line",), m.index))
        out.cell("lines_rate_min", 100 * float(m["acceptance_rate"].min()), ids)
        out.cell("lines_rate_max", 100 * float(m["acceptance_rate"].max()), ids)


def line_ids(r: Results, rows) -> tuple:
    """What the SpecDecoding log lines' acceptance rates rest on (those rows of spec_decode)."""
    return r.cells(r.data["spec_decode"], "spec_decode").union(
        ("acceptance_rate", "accepted_tokens", "draft_tokens", "mean_acceptance_length"), rows)


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    return {"runs": r.runs, "requests": r.data["requests"], "seed_groups": r.groups,
            "windows": r.data["windows"], "spec_decode": r.data["spec_decode"], "boot": r.data["boot"],
            "prom_samples": r.data["prom_samples"], "published_vs_reproduced": r.comparison,
            "claims": r.ledger, "caveats": r.caveats, "key_figures": key_figures(r),
            "rate_steps": r.rates.steps, "rate_capacity": r.rates.capacity, "energy": r.energy,
            "closed_loop": r.closed, "writeup_beside": r.beside, "serving_points": serving_points(r)}


# ---- serving points for the synthesis's cross-study chart (benchbook.book.serving_points) ----

def serving_points(r: Results) -> pd.DataFrame:
    """Each bench run (tests A-D, and any other) and llama-benchy generation test as a point
    (both rates from that one run), or left out with the reason. Each seed's run is its own
    point: a mean over seeds would pair rates no single run measured together."""
    kind = points.data_kind(r.data.study.reconstructed)
    runs = r.data["runs"]
    labels, cells = dict(r.rates.labels), r.cells(runs, "runs")
    rows = points.bench_points(STUDY, runs, cells, r.data.study.configs, labels=labels, kind=kind,
                               anchor={"rate": "request-rate-sweeps", "": "changes-against-the-noise"})
    rows += points.benchy_points(STUDY, r.closed, r.data.study.configs, labels=labels, anchor=closed_loop.ANCHOR,
                                 kind=kind)
    return points.points_table(rows, cells.why)


def _benchy_key_figures(r: Results, cid: str, c: dict) -> dict | None:
    """A configuration without test A (another harness's runs): one stream from its
    concurrency-1 llama-benchy tests, the best aggregate from its fixed-concurrency `vllm bench
    serve` runs (as the other chapters: an open-loop run's output follows its offered rate);
    None without a concurrency-1 llama-benchy generation test."""
    one = closed_loop.single_stream(r.closed, cid)
    if one is None:
        return None
    nan = float("nan")
    bench = r.data["runs"]
    bench = bench[(bench["config"] == cid) & bench["output_tps"].notna() & bench["concurrency"].notna()]
    best = bench.loc[bench["output_tps"].idxmax()] if len(bench) else None
    return key_figure_row(
        STUDY, cid, c, **closed_loop.single_stream_figures(one),
        best_aggregate_tps=nan if best is None else float(best["output_tps"]),
        best_aggregate_concurrency=nan if best is None else float(best["concurrency"]),
        anchor=closed_loop.ANCHOR, label=config_label(cid, c),
        prefill_tps=one["prefill_tps"], prefill_tokens=one["prompt"],
        notes=f"first-token time as llama-benchy's time to first response ({one['file']}); best aggregate: "
              + ("no fixed-concurrency vllm bench serve run" if best is None
                 else f"{best['name']}, concurrency {int(best['concurrency'])}"))


# ---- key figures for the synthesis chapter (benchbook.book.key_figures.KEY_FIGURES) ---------

def key_figures(r: Results) -> pd.DataFrame:
    """One row per configuration: test A's single stream, and the best aggregate of any test.

    Decode is 1 / median TPOT of test A (512 in, 512 out, one client); with MTP its
    acceptance length comes from the run's counters. TTFT is test A's median (512-token
    prompts: the only single-client test). The best aggregate is the highest output t/s of
    any run of the configuration (one seed, not a mean over seeds).
    """

    rows, cells = [], r.cells(r.runs, "runs")
    for cid, c in r.data.study.configs.items():
        runs = r.runs[r.runs["config"] == cid]
        a = runs[(runs["kind"] == "test-a") & (runs["concurrency"] == 1) & runs["median_tpot_s"].notna()]
        if not len(a):
            if (row := _benchy_key_figures(r, cid, c)) is not None:
                rows.append(row)
            continue
        one = a.iloc[0]
        best = runs.loc[runs["output_tps"].idxmax()]
        mtp = bool(speculative(c))
        rows.append(key_figure_row(
            STUDY, cid, c,
            single_stream_decode_tps=Shown(1.0 / float(one["median_tpot_s"]), cells.at(one.name, "median_tpot_s")),
            acceptance_length=Shown(float(one["spec_acceptance_length"]) if mtp else float("nan"),
                                    cells.at(one.name, "spec_acceptance_length") if mtp else ()),
            ttft_s=Shown(float(one["median_ttft_s"]), cells.at(one.name, "median_ttft_s")),
            ttft_input_tokens=float(one["input_len"]),
            best_aggregate_tps=Shown(float(best["output_tps"]), cells.union("output_tps", runs.index)),
            best_aggregate_concurrency=Shown(float(best["concurrency"]), cells.union("output_tps", runs.index)),
            anchor="changes-against-the-noise",
            label=f"{platform_short(c)}, {r.labels.get(ROLE_KEYS.get(r.roles.of_config.get(cid)), cid)}",
            decode_context_tokens=decode_context(one),
            decode_basis=f"1 / median TPOT of test A (one client, {int(one['input_len']):,}-token prompts)",
            prefill_tps=Shown(float(one["prefill_tps"]), cells.at(one.name, "prefill_tps")),
            prefill_tokens=float(one["input_len"]),
            notes=f"prefill as input / TTFT of test A; best aggregate: {best['name']}",
        ))
    return key_figures_table(rows, cells.why)

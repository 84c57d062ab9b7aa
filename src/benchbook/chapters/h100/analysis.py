"""H100 dense 27B vs MoE 35B-A3B + MTP, against Strix Halo: everything the chapter computes.

Configurations are found by their role (the CONTRACT of this folder): the baseline (the
write-up's dense 27B), the candidate (its 35B-A3B with MTP) and any others, shown in the
tables only. Run kinds: concurrency sweeps, a prefill run, short-prompt runs and runs at a
fixed request rate. The Strix Halo side comes from the Strix Halo chapter's data folder; when
that folder is reconstructed and this one measured, it is kept apart (no verdicts, no key
results, tables under a note naming both: pipeline.ChapterResults.kept_apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ...analysis import closed_loop, energy, rate_sweep
from ...analysis.llama import best_name, best_of, llama_value_ids, llama_values, ok_rows, usual_tests, with_test_names
from ...analysis.serving import add_serving_metrics, run_value_ids, run_values, sequential_vs_batched, sweep_table
from ...book import pipeline
from ...book import serving_points as points
from ...book.key_figures import decode_context, key_figure_row, key_figures_table, speculative
from ...book.kinds import shared_glue
from ...format import config_label, fmt_args, fmt_money, fmt_rate, fmt_ratio, fmt_seconds, same_platform
from ...ingest import load_pattern
from ...ingest.tables import ARGUMENT_COLUMNS, ENGINE_COLUMNS
from ...ledger import claims as claims_mod
from ...ledger.caveats import data_caveats
from ...page import interactive
from ...page.opening import opening_words
from ...study.contract import Missing
from ...study.marks import Col, Glued, Shown, as_int, rows_table, table, tagged, union, value_ids, with_marks

STUDY = "h100-dense-vs-moe-mtp"
BASE_KEY, CAND_KEY = "h100_dense", "h100_moe"  # the roles' value-name prefixes (this folder's CONTRACT)


@dataclass
class Results(pipeline.ChapterResults):
    runs: pd.DataFrame = field(default_factory=pd.DataFrame)
    price: float | None = None  # hourly price the costs use, in `currency`
    currency: str = ""
    price_source: str = ""
    rates: rate_sweep.RateSweeps = field(default_factory=rate_sweep.RateSweeps)  # the request-rate sweeps
    common: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=rate_sweep.COMMON_COLUMNS))
    # ^ baseline and candidate at common load points
    energy: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=energy.COLUMNS))  # per token
    closed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=closed_loop.COLUMNS))  # llama-benchy

    @property
    def strix(self):
        return self.reads.get("strix_data_dir")

    @property
    def baseline(self) -> str | None:
        return self.roles.first("baseline")

    @property
    def candidate(self) -> str | None:
        return self.roles.first("candidate")

    def configs_in_order(self) -> list[str]:
        """Baseline, candidate, then the others: the order of every table and figure."""
        return [c for role in ("baseline", "candidate", "other") for c in self.roles.configs(role)]

    def label(self, cid: str | None) -> str:
        return config_label(cid, self.config(cid))


def analyse(data_dir, strix_data_dir=None, published_file=None, price_per_hour=None,
            currency="", usd_per_eur=None, agents=16, answer_tokens=200,
            ttft_limits_s=rate_sweep.LIMITS_S, tpot_limit_s=None) -> Results:
    params = dict(price_per_hour=price_per_hour, currency=currency, usd_per_eur=usd_per_eur,
                  agents=agents, answer_tokens=answer_tokens, ttft_limits_s=tuple(ttft_limits_s),
                  tpot_limit_s=tpot_limit_s)
    r = pipeline.start(STUDY, data_dir, published_file, params, reads={"strix_data_dir": strix_data_dir},
                       results=Results)
    r.price, r.currency, r.price_source = _price(r)
    r.runs = add_serving_metrics(r.data["runs"], r.data["requests"], r.price)
    r.values = run_values(r.runs)
    r.value_ids = run_value_ids(r.runs, r.cells(r.runs, "runs"))
    r.currencies = {k: r.currency for k in r.values if k.endswith("_cost_per_m")}
    if r.strix is not None:
        lb = ok_rows(r.strix["llama_bench"])
        r.values.update(llama_values(lb, "strix"))
        r.value_ids.update(llama_value_ids(lb, "strix", r.cells(lb, "llama_bench", r.strix)))
        strix_runs = add_serving_metrics(r.strix["runs"], r.strix["requests"], None)
        r.values.update(run_values(strix_runs))
        r.value_ids.update(run_value_ids(strix_runs, r.cells(strix_runs, "runs", r.strix)))
    if r.price is None:
        r.sections["cost"] = Missing(r.spec.contract.section("cost"), [
            "an hourly price for this hardware (the write-up's price applies to its own H100 only)"])
    _load_points(r)
    r.energy = energy.of_chapter(r)
    r.closed = closed_loop.points(r.data["llama_benchy"], r.configs_in_order())
    pipeline.finish(r, caveats=_caveats)
    return r


BENCH_KINDS = ("sweep", "rate", "short-prompts", "prefill")


def _load_points(r: Results) -> None:
    """The request-rate sweeps, and the baseline and candidate at their common load points
    (benchbook.analysis.rate_sweep); a section the runs allow but whose files do not record
    the load says so."""
    r.rates = rate_sweep.of_chapter(r, r.runs[r.runs["kind"] == "rate"],
                                    {cid: r.label(cid) for cid in r.configs_in_order()})
    if r.baseline and r.candidate:
        bench = r.runs[r.runs["kind"].isin(BENCH_KINDS) & r.runs["config"].isin([r.baseline, r.candidate])]
        pts = rate_sweep.points(bench, r.data["run_stats"], r.data["requests"],
                                load_pattern.OPEN + load_pattern.CLOSED)
        r.common = rate_sweep.common_points(pts, r.baseline, r.candidate)
    if r.has("common-points") and not len(r.common):
        r.sections["common-points"] = Missing(r.spec.contract.section("common-points"), [
            "bench runs of the baseline and the candidate whose files record their load pattern"])


def _price(r: Results) -> tuple[float | None, str, str]:
    """The hourly price: the parameter, else the write-up's own when the data is its setup."""
    if r.params["price_per_hour"] is not None:
        return float(r.params["price_per_hour"]), r.params["currency"] or "", "parameter price_per_hour"
    theirs = r.published.parameters.get("price_per_hour")
    if theirs and r.comparability.declared and r.comparability.roles.get("baseline") \
            and r.comparability.role_ok("baseline") and r.baseline:
        return float(theirs["value"]), theirs.get("currency", ""), f"the write-up's price ({theirs['source']})"
    return None, r.params["currency"] or "", ""


def _caveats(r: Results) -> list[dict]:
    shown = r.strix is not None and (r.has("strix") or r.has("serving"))  # the Strix Halo data is on the page
    strix_configs = r.strix.study.configs if shown else {}
    server = r.strix.roles.first("server") if shown else None
    pairs = [(r.baseline, server), (r.candidate, server), (r.baseline, r.candidate)]
    cav = data_caveats(r.data, r.runs, r.ledger, compared=[p for p in pairs if all(p)],
                       extra_configs=strix_configs)
    if shown:
        strix_runs = add_serving_metrics(r.strix["runs"], r.strix["requests"], None)
        for c in data_caveats(r.strix, strix_runs):
            if c["origin"] == "data rule: reconstructed" and r.data.study.reconstructed:
                continue  # said once already
            cav.append({**c, "origin": f"{c['origin']} ({r.strix.study.id})", "data": r.strix})
    return cav


# ---- tables shown in the chapter -------------------------------------------------

def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    configs = [(cid, r.roles.of_config.get(cid), r.config(cid)) for cid in r.configs_in_order()]
    if r.strix is not None:
        configs += [(cid, f"Strix Halo {r.strix.roles.of_config.get(cid, '')}".strip(), c)
                    for cid, c in r.strix.study.configs.items()]
    for cid, role, c in configs:
        rows.append(dict(config=cid, role=role, platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"), speculative=c.get("speculative"),
                         kv_dtype=c.get("kv_dtype"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         serve_args=fmt_args(c.get("serve_args"))))
    out = pd.DataFrame(rows)
    # a reconstructed folder's study.yml is its generator's: a Strix Halo configuration's build and
    # arguments rest on what its rows' build and argument columns rest on (as on its own page; make
    # marks moved them with builds, engine_versions and llama_bench_args). This folder's own
    # configurations are left to its check (its landings cover engine columns by position).
    engine, args = {}, {}
    if r.strix is not None:
        strix = set(r.strix.study.configs)
        engine.update({c: ids for c, ids in r.config_ids(ENGINE_COLUMNS, data=r.strix).items() if c in strix})
        args = {c: ids for c, ids in r.config_ids(ARGUMENT_COLUMNS, data=r.strix).items() if c in strix}
    configs = list(out.get("config", []))
    return with_marks(out, {"engine": {i: engine.get(c, ()) for i, c in enumerate(configs)},
                            "serve_args": {i: args.get(c, ()) for i, c in enumerate(configs)}}, r.assumed_why)


def runs_table(r: Results) -> pd.DataFrame:
    """Every run of both folders; a run's settings and counts are marked where a generator
    chose them (study.yml of a reconstructed folder is the generator's: 4k read as 4,096)."""
    cols = ["name", "config", "role", "kind", "concurrency", "request_rate", "input_len", "output_len",
            "completed", "failed", "source_file"]
    parts = [(r.runs, None)]
    if r.strix is not None and len(r.strix["runs"]):
        parts.append((r.strix["runs"], r.strix))
    frames, shown = [], {}
    for frame, data in parts:
        cells, start = r.cells(frame, "runs", data=data), sum(len(f) for f in frames)
        for c in cols[4:-1]:
            for i, label in enumerate(frame.index):
                if ids := cells.at(label, c):
                    shown.setdefault(c, {})[start + i] = ids
        frames.append(frame.reindex(columns=cols))
    runs = pd.concat(frames, ignore_index=True)
    runs = runs.assign(source_file=runs["source_file"].map(lambda p: Path(str(p)).name))
    return with_marks(runs, shown, r.assumed_why)


def ingest_table(r: Results) -> pd.DataFrame:
    return r.ingest_report(["study", "file", "format", "read", "ignored", "reasons"], reads=("strix_data_dir",))


def single_stream(r: Results) -> pd.DataFrame:
    """Each configuration at one request at a time: prefill, TTFT, decode step, output rate."""
    rows, cells = [], r.cells(r.runs, "runs")
    for cid in r.configs_in_order():
        mine = r.runs[r.runs["config"] == cid]
        one = mine[(mine["kind"] == "sweep") & (mine["concurrency"] == 1)]
        pre = mine[mine["kind"] == "prefill"]
        if not len(one) and not len(pre):
            continue
        o = one.iloc[0] if len(one) else None

        def shown(col, fmt, row=o):
            return Shown(fmt(row[col]), cells.at(row.name, col)) if row is not None else "–"

        rows.append({
            "configuration": r.label(cid),
            "prefill t/s (prefill run)": shown("prefill_tps", fmt_rate, pre.iloc[0] if len(pre) else None),
            "prompt tokens": shown("input_len", lambda v: f"{int(v):,}"),
            "TTFT p50": shown("median_ttft_s", fmt_seconds),
            "TPOT p50": shown("median_tpot_s", fmt_seconds),
            "output t/s": shown("output_tps", fmt_rate),
        })
    return rows_table(rows, cells.why)


def strix_tests(r: Results) -> tuple[str | None, str | None]:
    """The Strix Halo llama-bench tests set against the H100 (pp512 and tg128 when measured)."""
    return usual_tests(r.strix["llama_bench"]) if r.strix is not None else (None, None)


# what each H100 row of the single-request comparisons was measured with (the Strix side: llama-bench)
SERVE_PREFILL = "H100: vllm bench serve, the prefill run"
SERVE_ONE = "H100: vllm bench serve, one client"


def against_strix(r: Results) -> list[tuple[str, pd.DataFrame]]:
    """The write-ups' two single-request comparisons, for this data's roles."""
    pp, tg = strix_tests(r)
    server = r.strix.roles.first("server") if r.strix is not None else None
    strix_label = "Strix Halo " + ", ".join(
        x for x in (r.strix.study.configs.get(r.strix.roles.first("backend") or "", {}).get("model"),) if x
    ) if r.strix is not None else "Strix Halo"
    strix_label += strix_whose(r)
    out = []
    first = [(f"Prefill rate ({SERVE_PREFILL}; Strix Halo: llama-bench {pp})", f"{BASE_KEY}_prefill_prefill_tps",
              best_name(pp), "tps", False),
             (f"Single-request generation rate ({SERVE_ONE}; Strix Halo: llama-bench {tg})",
              f"{BASE_KEY}_c1_output_tps", best_name(tg), "tps", False)]
    if r.baseline:
        out.append((f"Single request: {r.label(r.baseline)} against {strix_label} (best of its backends)",
                    side_by_side(r, first, (r.label(r.baseline), strix_label))))
    if r.candidate and server:
        second = [("Median TTFT", f"{CAND_KEY}_c1_median_ttft_s", "strix_server_c1_median_ttft_s", "s", True),
                  ("Median TPOT", f"{CAND_KEY}_c1_median_tpot_s", "strix_server_c1_median_tpot_s", "s", True),
                  (f"Single-request generation rate ({SERVE_ONE}; Strix Halo: llama-bench {tg})",
                   f"{CAND_KEY}_c1_output_tps", best_name(tg), "tps", False)]
        out.append((f"Single request: {r.label(r.candidate)} against {strix_label}",
                    side_by_side(r, second, (r.label(r.candidate), strix_label))))
    return [(c, t) for c, t in out if len(t)]


def strix_whose(r: Results) -> str:
    """What the Strix Halo columns add to their label when that folder is reconstructed and
    this data measured (pipeline.ChapterResults.kept_apart): whose numbers they are."""
    return " (the write-up's reconstructed data)" if r.kept_apart("strix_data_dir") else ""


def side_by_side(r: Results, rows: list[tuple[str, str, str, str, bool]], labels: tuple[str, str]) -> pd.DataFrame:
    """Rows (label, value a, value b, kind, lower_is_better) with a's advantage; rows the data lacks are left out."""
    out = []
    for label, a, b, kind, lower_better in rows:
        va, vb = r.values.get(a), r.values.get(b)
        if va is None and vb is None:
            continue
        ratio = (vb / va if lower_better else va / vb) if va and vb else None
        show = fmt_seconds if kind == "s" else (lambda v: f"{fmt_rate(v)} t/s" if v else "–")
        ia, ib = r.value_ids.get(a, ()), r.value_ids.get(b, ())
        out.append({"metric": label, labels[0]: Shown(show(va), ia), labels[1]: Shown(show(vb), ib),
                    "advantage of the first": Shown(fmt_ratio(ratio), union(ia, ib))})
    return rows_table(out, r.assumed_why)


def sweeps(r: Results) -> pd.DataFrame:
    """The sweep runs, one row per configuration and concurrency, labelled for figures."""
    runs = r.runs[(r.runs["kind"] == "sweep") & r.runs["config"].isin(r.configs_in_order())]
    order = {c: i for i, c in enumerate(r.configs_in_order())}
    s = runs.assign(_o=runs["config"].map(order)).sort_values(["_o", "concurrency"])
    s = tagged(s[sweep_table(runs).columns], r.cells(s, "runs"))  # each cell with the assumptions it holds
    models = {cid: r.config(cid).get("model") for cid in r.configs_in_order()}
    return s.assign(model=s["config"].map(models), config=s["config"].map(r.label))


def interactive_sweep(r: Results):
    """The concurrency sweep as one interactive chart: aggregate output per configuration,
    with per-agent output and TTFT on hover."""

    s = sweeps(r)
    s = s.assign(per_agent=s["per_agent_tps"].map(lambda v: fmt_rate(v, 1)),
                 ttft=s["median_ttft_s"].map(lambda v: f"{v:.2f} s"), p99=s["p99_ttft_s"].map(lambda v: f"{v:.2f} s"))
    return interactive.lines(s, "concurrency", "output_tps", "config", "Aggregate output by concurrency",
                             "concurrent requests", "output tokens/s", colour_of=dict(zip(s["config"], s["model"])),
                             log_x=True, hover={"per_agent": "per agent t/s", "ttft": "median TTFT",
                                                "p99": "P99 TTFT"},
                             reads={"per_agent": "per_agent_tps", "ttft": "median_ttft_s", "p99": "p99_ttft_s"})


def sweep_display(r: Results, config: str) -> pd.DataFrame:
    s = r.runs[(r.runs["kind"] == "sweep") & (r.runs["config"] == config)].sort_values("concurrency")
    return table(s, {
        "concurrency": Col("concurrency", as_int),
        "aggregate t/s": Col("output_tps", fmt_rate),
        "per agent": Col("per_agent_tps", lambda v: fmt_rate(v, 1)),
        "per request": Col("per_request_tps", lambda v: fmt_rate(v, 1)),
        "TTFT p50": Col("median_ttft_s", fmt_seconds),
        "TTFT p99": Col("p99_ttft_s", fmt_seconds),
        "TPOT p50": Col("median_tpot_s", fmt_seconds),
        "TPOT p99": Col("p99_tpot_s", fmt_seconds),
        "n": Col("completed", as_int),
    }, r.cells(s, "runs"))


def sweep_tables(r: Results) -> list[tuple[str, pd.DataFrame]]:
    """One sweep table per configuration that has sweep runs, captioned by its label."""
    out = []
    for cid in r.configs_in_order():
        t = sweep_display(r, cid)
        if len(t):
            out.append((r.label(cid), t))
    return out


def rate_display(r: Results) -> pd.DataFrame:
    """Runs at a fixed request rate: what the server delivered at each offered load, by
    configuration and sweep (benchbook.analysis.rate_sweep)."""
    return rate_sweep.steps_display(r.rates)


def common_display(r: Results) -> pd.DataFrame:
    """The baseline and the candidate at the load points both measured, like with like."""
    return rate_sweep.common_display(r.common, r.cells(r.runs, "runs"), r.assumed_why, orders=_p95_ids(r))


def _p95_ids(r: Results) -> dict:
    """A P95 no run file reports is computed from the run's requests (rate_sweep._add_percentiles),
    so it rests on the requests at its position: metric -> {runs label: ids}."""
    reported = r.data["run_stats"]
    out = {}
    for metric, column in (("ttft", "ttft_s"), ("tpot", "tpot_s")):
        ids = r.request_order_ids(column, 0.95)
        told = set(reported.loc[(reported["metric"] == metric) & (reported["stat"] == "p95"), "run_id"]) \
            if len(reported) else set()
        out[f"{metric}_p95_s"] = {i: ids.get(run, ()) for i, run in r.runs["run_id"].items() if run not in told}
    return out


def cost_display(r: Results) -> pd.DataFrame:
    runs = r.runs[r.runs["kind"].isin(["sweep", "rate"])].sort_values(["config", "kind", "concurrency"])
    return table(runs, {
        "configuration": Col("config", r.label),
        "run": Col("name"),
        "concurrency": Col("concurrency", as_int),
        "output t/s": Col("output_tps", fmt_rate),
        f"{r.currency or 'price units'}/M output tokens": Col("cost_per_m", lambda v: fmt_money(v, r.currency)),
    }, r.cells(runs, "runs"))


def serving_model(r: Results) -> pd.DataFrame:
    """N agents served one after another on Strix Halo vs batched here."""
    n, tokens = r.params["agents"], r.params["answer_tokens"]
    _, tg = strix_tests(r)
    tg_rate = r.values.get(best_name(tg)) if tg else None
    seq = r.value_ids.get(best_name(tg), ())
    rows, cells = [], r.cells(r.runs, "runs")
    for cid in r.configs_in_order():
        row = nearest(r, cid, n)
        if row is None or not tg_rate:
            continue
        per_agent, ttft = float(row["per_agent_tps"]), float(row["median_ttft_s"])
        plain = sequential_vs_batched(n, tokens, tg_rate, per_agent)
        with_ttft = sequential_vs_batched(n, tokens, tg_rate, per_agent, ttft)
        gen, both = cells.at(row.name, "per_agent_tps"), cells.row(row.name, ("per_agent_tps", "median_ttft_s"))
        rows.append({
            "batched server": f"{r.label(cid)} (measured at {int(row['concurrency'])})",
            f"Strix Halo, sequential{strix_whose(r)}": Shown(fmt_seconds(plain["sequential_s"]), seq),
            "batched, generation only": Shown(fmt_seconds(plain["batched_s"]), gen),
            "advantage": Shown(fmt_ratio(plain["advantage"]), union(seq, gen)),
            "batched, with median TTFT": Shown(fmt_seconds(with_ttft["batched_s"]), both),
            "advantage with TTFT": Shown(fmt_ratio(with_ttft["advantage"]), union(seq, both)),
        })
    return rows_table(rows, r.assumed_why)


def nearest(r: Results, config: str, concurrency: int) -> pd.Series | None:
    """The sweep run of a configuration nearest a concurrency (the lower on a tie)."""
    s = r.runs[(r.runs["config"] == config) & (r.runs["kind"] == "sweep")].sort_values("concurrency")
    if not len(s):
        return None
    return s.iloc[int((s["concurrency"].astype(float) - concurrency).abs().to_numpy().argmin())]


def strix_backends(r: Results) -> pd.DataFrame:
    if r.strix is None or not len(ok_rows(r.strix["llama_bench"])):
        return pd.DataFrame()
    lb = with_test_names(ok_rows(r.strix["llama_bench"]))
    best = best_of(lb).set_index("test_name", drop=False)
    # the best backend reads the winning row; the spread the test's greatest and least rates, where
    # they sit in its sorted rates (make marks: moving how far the others fall below the best moved
    # neither the best nor its name; moving which build wins moved its name, not the spread)
    rows = r.cells(lb, "llama_bench", r.strix)
    cells = rows.group(lb, "test_name")
    if cells:
        rates, extremes = lb.groupby("test_name")["avg_ts"], r.rate_extreme_ids(lb, r.strix)
        cells = cells.assign("avg_ts", {t: rows.at(i, "avg_ts") for t, i in rates.idxmax().items()})
        cells = cells.assign("top_ts", {t: ids[0] for t, ids in extremes.items()})
        cells = cells.assign("worst_avg_ts", {t: ids[1] for t, ids in extremes.items()})
        # the best rate holds what its value name holds: nothing when the write-up published it
        cells = cells.assign("best_ts", {t: value_ids(r.value_ids, [best_name(t)]) for t in rates.groups})
    return table(best.assign(best_ts=best["avg_ts"]), {
        "test": Col("test_name"), "best backend": Col("best_config", reads=("avg_ts",)),
        "best t/s": Col("best_ts", lambda v: fmt_rate(v, 1)),
        "best / worst backend": Col("spread", fmt_ratio, reads=("top_ts", "worst_avg_ts")),
    }, cells)


# The sweep numbers the prose quotes, by configuration role (`base`: the baseline, `cand`:
# the candidate): glue key -> (point, column), where `lo` / `hi` are the sweep's lowest and
# highest concurrency and `at` the point nearest the `agents` parameter, so the prose stays
# true on data swept at other concurrencies. ROLE_GLUE: the role's label and scaling keys.
SWEEP_GLUE = {
    "base": {"base_lo_concurrency": ("lo", "concurrency"), "base_hi_concurrency": ("hi", "concurrency"),
             "base_at_concurrency": ("at", "concurrency"), "base_lo_output_tps": ("lo", "output_tps"),
             "base_hi_output_tps": ("hi", "output_tps"), "base_hi_p99_ttft_s": ("hi", "p99_ttft_s"),
             "base_at_cost_per_m": ("at", "cost_per_m")},
    "cand": {"cand_lo_concurrency": ("lo", "concurrency"), "cand_hi_concurrency": ("hi", "concurrency"),
             "cand_lo_output_tps": ("lo", "output_tps"), "cand_hi_output_tps": ("hi", "output_tps"),
             "cand_hi_p99_ttft_s": ("hi", "p99_ttft_s")},
}
ROLE_GLUE = {"base": ("base_label", "base_scaling"), "cand": ("cand_label", "cand_scaling")}


def glue_values(r: Results) -> dict:
    """Numbers and words quoted in the chapter's prose, keyed by role rather than by run name."""
    out = Glued(r.assumed_why)
    out.update(opening_words(r))  # the opening on data of another setup
    sweeps_ = r.runs[r.runs["kind"] == "sweep"]
    for role, cid in (("base", r.baseline), ("cand", r.candidate)):
        _glue_sweep(r, out, role, cid)
    if "base_lo_output_tps" in out and "cand_lo_output_tps" in out \
            and out["base_lo_concurrency"] == out["cand_lo_concurrency"]:
        out.of("cand_uplift_lo", out["cand_lo_output_tps"] / out["base_lo_output_tps"],
               "cand_lo_output_tps", "base_lo_output_tps")
        out["where"] = ("on the same platform" if same_platform(r.config(r.baseline), r.config(r.candidate))
                        else f"on another platform ({r.config(r.candidate).get('platform') or 'not stated'} against "
                             f"{r.config(r.baseline).get('platform') or 'not stated'})")
    if len(sweeps_):
        cells = r.cells(r.runs, "runs")
        for key, col in (("sweep_input_len", "input_len"), ("sweep_output_len", "output_len")):
            lens = sweeps_[col].dropna().astype(int).unique()
            out.cell(key, f"{lens[0]:,}" if len(lens) == 1 else f"{min(lens):,} to {max(lens):,}",
                     cells.union(col, sweeps_.index))
    out.update(shared_glue(r))
    if r.has("common-points"):
        out.update(rate_sweep.common_glue(r.common))
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison, r.claim_ids))
    out["agents"] = r.params["agents"]
    out["answer_tokens"] = r.params["answer_tokens"]
    if r.price is not None:
        out["price_per_hour"] = r.price
        out["currency"] = r.currency or "price units"
        out["price_source"] = r.price_source
    return out


def _glue_sweep(r: Results, out: Glued, role: str, cid: str | None) -> None:
    """One configuration's SWEEP_GLUE numbers, its label and how far its output scales."""
    s = r.runs[(r.runs["kind"] == "sweep") & (r.runs["config"] == cid)].sort_values("concurrency")
    if not cid or not len(s):
        return
    cells, label, scaling = r.cells(r.runs, "runs"), *ROLE_GLUE[role]
    points = {"lo": s.iloc[0], "hi": s.iloc[-1], "at": nearest(r, cid, r.params["agents"])}
    out[label] = r.label(cid)
    for key, (point, column) in SWEEP_GLUE[role].items():
        row = points[point]
        if column == "concurrency":
            out[key] = int(row[column])
        else:
            out.cell(key, float(row[column]), cells.at(row.name, column))
    hi, lo = points["hi"], points["lo"]
    out.cell(scaling, float(hi["output_tps"]) / float(lo["output_tps"]),
             union(cells.at(hi.name, "output_tps"), cells.at(lo.name, "output_tps")))


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    """The chapter's tidy tables, as offered for download."""
    out = {"runs": r.runs, "requests": r.data["requests"], "run_stats": r.data["run_stats"],
           "published_vs_reproduced": r.comparison, "claims": r.ledger, "caveats": r.caveats,
           "key_figures": key_figures(r), "rate_steps": r.rates.steps, "rate_capacity": r.rates.capacity,
           "common_points": r.common.drop(columns=["rows", "reads"]), "energy": r.energy,
           "closed_loop": r.closed, "serving_points": serving_points(r)}
    if r.strix is not None:
        out["strix_llama_bench"] = r.strix["llama_bench"]
        out["strix_runs"] = r.strix["runs"]
    return out


# ---- serving points for the synthesis's cross-study chart (benchbook.book.serving_points) ----

def serving_points(r: Results) -> pd.DataFrame:
    """Each bench run and llama-benchy generation test of this page's configurations as a
    point (both rates from that one run), or left out with the reason. The Strix Halo runs
    this page reads are the Strix Halo chapter's points, not this page's."""
    kind = points.data_kind(r.data.study.reconstructed)
    labels = {cid: r.label(cid) for cid in r.configs_in_order()}
    cells = r.cells(r.runs, "runs")
    rows = points.bench_points(STUDY, r.runs[r.runs["config"].isin(labels)], cells, r.data.study.configs,
                               labels=labels, kind=kind,
                               anchor={"rate": "request-rate", "prefill": "single-request", "": "concurrency"})
    rows += points.benchy_points(STUDY, r.closed, r.data.study.configs, labels=labels, anchor=closed_loop.ANCHOR,
                                 kind=kind)
    return points.points_table(rows, cells.why)


# ---- key figures for the synthesis chapter (benchbook.book.key_figures.KEY_FIGURES) ---------

def _single_stream(one, single: bool, benchy: dict | None, cells, spec: bool) -> dict:
    """The key figures of one stream: from the concurrency-1 sweep run `one`, else from
    llama-benchy's concurrency-1 tests (`benchy`, closed_loop.single_stream), else unmeasured,
    with the lowest concurrency the sweep ran at. Never from a busier run: its TPOT and TTFT
    hold the other requests' share of each step and their queue."""
    nan = float("nan")
    if single:
        tpot = cells.at(one.name, "median_tpot_s")
        return dict(single_stream_decode_tps=Shown(1.0 / float(one["median_tpot_s"]), tpot),
                    acceptance_length=Shown(float(one["spec_acceptance_length"]) if spec else nan,
                                            cells.at(one.name, "spec_acceptance_length")),
                    ttft_s=Shown(float(one["median_ttft_s"]), cells.at(one.name, "median_ttft_s")),
                    ttft_input_tokens=float(one["input_len"]), decode_context_tokens=decode_context(one),
                    decode_basis=f"1 / median TPOT, concurrency 1, {int(one['input_len']):,}-token prompts")
    if benchy is not None:
        return closed_loop.single_stream_figures(benchy)
    lowest = int(one["concurrency"])
    return dict(single_stream_decode_tps=nan, acceptance_length=nan, ttft_s=nan, ttft_input_tokens=nan,
                decode_context_tokens=nan,
                decode_basis=f"not measured: the lowest-concurrency sweep run is at concurrency {lowest}")


def key_figures(r: Results) -> pd.DataFrame:
    """One row per configuration with sweep runs: single-stream decode, TTFT, best aggregate, cost.

    Decode is 1 / median TPOT of the lowest-concurrency sweep run (decode only, without
    the TTFT that output t/s includes); with MTP it is already several tokens per step,
    and the run's acceptance length says how many. The best aggregate is over the sweep
    runs, not the short-prompt run.
    """

    rows, cells = [], r.cells(r.runs, "runs")
    for cid in r.configs_in_order():
        runs = r.runs[r.runs["config"] == cid]
        sweep = runs[runs["kind"] == "sweep"].sort_values("concurrency")
        if not len(sweep):
            continue
        c = r.config(cid)
        one = sweep.iloc[0]
        best = sweep.loc[sweep["output_tps"].idxmax()]
        top = cells.union("output_tps", sweep.index)  # the best is chosen among every sweep run
        # one stream only from a concurrency-1 run: a busier run's TPOT and TTFT include the
        # other requests' share of each step and their queue
        single = pd.notna(one["concurrency"]) and int(one["concurrency"]) == 1
        nan = float("nan")
        pre = runs[runs["kind"] == "prefill"]
        if len(pre):
            prefill, prefill_tokens, pre_note = float(pre["prefill_tps"].iloc[0]), float(pre["input_len"].iloc[0]), \
                "prefill from the one-token prefill run"
            pre_ids = cells.at(pre.index[0], "prefill_tps")
        elif single:
            prefill, prefill_tokens, pre_note = float(one["prefill_tps"]), float(one["input_len"]), \
                "prefill as input / TTFT of the concurrency-1 sweep run (no prefill run)"
            pre_ids = cells.at(one.name, "prefill_tps")
        else:
            prefill, prefill_tokens, pre_ids = nan, nan, ()
            pre_note = f"no prefill run and no concurrency-1 run (the lowest is {int(one['concurrency'])})"
        # without a concurrency-1 bench run, one stream from llama-benchy's concurrency-1 tests
        benchy = None if single else closed_loop.single_stream(r.closed, cid)
        if benchy is not None:
            pre_note += f"; one stream from llama-benchy ({benchy['file']}: time to first response and prompt rate)"
            prefill, prefill_tokens, pre_ids = benchy["prefill_tps"], benchy["prompt"], ()
        elif not single:
            pre_note += ": single-stream decode, TTFT and prefill not measured"
        price = f"; cost at {r.price} {r.currency}/h ({r.price_source})" if r.price is not None else "; not priced"
        rows.append(key_figure_row(
            STUDY, cid, c, **_single_stream(one, single, benchy, cells, speculative(c)),
            best_aggregate_tps=Shown(float(best["output_tps"]), top),
            best_aggregate_concurrency=Shown(float(best["concurrency"]), top),
            cost_per_m=Shown(float(best["cost_per_m"]), top), currency=r.currency if r.price is not None else "",
            anchor="concurrency" if benchy is None else closed_loop.ANCHOR, label=r.label(cid),
            prefill_tps=Shown(prefill, pre_ids), prefill_tokens=prefill_tokens,
            notes=pre_note + "; best aggregate over the sweep runs" + price,
        ))
    return key_figures_table(rows, cells.why)

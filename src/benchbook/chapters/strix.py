"""Strix Halo baseline: llama-bench across backends, and agents served one at a time.

Everything the chapter shows is computed here from its data folder (llama-bench output of
each build, with role backend; optionally a single-client bench run against llama-server,
role server) and, for the serving comparison, from the H100 chapter's data folder, whose
configurations are found by their roles (baseline, candidate). On other hardware the page
names that hardware, not Strix Halo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .. import claims as claims_mod
from .. import pipeline, plots
from ..analysis.llama import llama_value_ids, llama_values, ok_rows, usual_tests, variants, with_test_names
from ..analysis.serving import add_serving_metrics, run_value_ids, run_values
from ..caveats import data_caveats
from ..contract import Missing
from ..marks import (
    WHY,
    Col,
    Glued,
    Shown,
    as_int,
    carried,
    rows_table,
    series,
    table,
    tagged,
    union,
    value_ids,
    with_marks,
)
from ..report import config_label, fmt_args, fmt_rate, fmt_ratio, fmt_seconds

STUDY = "strix-halo-baseline"
H100_ROLES = {"baseline": "dense", "candidate": "moe"}  # H100 role -> short name in value names


@dataclass
class Results(pipeline.ChapterResults):
    llama: pd.DataFrame = field(default_factory=pd.DataFrame)  # measured llama_bench rows, with test_name
    failed: pd.DataFrame = field(default_factory=pd.DataFrame)  # llama-bench runs that crashed
    server: pd.DataFrame = field(default_factory=pd.DataFrame)  # bench runs against llama-server
    h100_runs: pd.DataFrame | None = None

    @property
    def h100(self):
        return self.reads.get("h100_data_dir")

    def h100_configs(self) -> dict[str, tuple[str, str]]:
        """The H100 folder's compared configurations: config -> (short name, label)."""
        if self.h100 is None:
            return {}
        out = {}
        for role, short in H100_ROLES.items():
            cid = self.h100.roles.first(role)
            if cid:
                out[cid] = (short, config_label(cid, self.h100.study.configs.get(cid, {})))
        return out

    @property
    def platform(self) -> str:
        """The hardware the llama-bench builds ran on, as the data names it."""
        names = [self.config(c).get("platform") for c in self.roles.configs("backend")]
        names = [n for n in dict.fromkeys(names) if n]
        return "; ".join(names) if names else "this hardware"

    @property
    def sequential_label(self) -> str:
        return "Strix Halo (sequential)" if self.comparable else "llama.cpp (sequential)"


def analyse(data_dir, h100_data_dir=None, published_file=None, agents=16, answer_tokens=200,
            prompt_tokens=0, long_prompt_tokens=4096) -> Results:
    params = dict(agents=agents, answer_tokens=answer_tokens, prompt_tokens=prompt_tokens,
                  long_prompt_tokens=long_prompt_tokens)
    r = pipeline.start(STUDY, data_dir, published_file, params, reads={"h100_data_dir": h100_data_dir},
                       results=Results)
    lb = r.data["llama_bench"]
    r.llama = with_test_names(ok_rows(lb))
    r.llama["variant"] = variants(r.llama)
    r.failed = lb[lb["status"].astype(object).eq("failed").to_numpy()] if "status" in lb else lb.iloc[:0]
    r.server = add_serving_metrics(r.data["runs"], r.data["requests"], None)
    r.values = {**llama_values(r.llama, "strix"), **run_values(r.server), **backend_counts(r.llama)}
    r.value_ids = {**llama_value_ids(r.llama, "strix", r.cells(r.llama, "llama_bench")),
                   **run_value_ids(r.server, r.cells(r.server, "runs"))}
    if r.h100 is not None:
        r.h100_runs = add_serving_metrics(r.h100["runs"], r.h100["requests"], None)
        r.values.update(run_values(r.h100_runs))
        r.value_ids.update(run_value_ids(r.h100_runs, r.cells(r.h100_runs, "runs", r.h100)))
        r.values.update(batched_values(r, agents))
    _refine_sections(r)
    pipeline.finish(r, caveats=_caveats)
    return r


def _refine_sections(r: Results) -> None:
    """Sections the runs allow but the tests do not: no prefill or no generation test."""
    flat = set(r.llama["test_name"]) if len(r.llama) else set()
    for section, kind in (("pp", "pp"), ("tg", "tg")):
        if not any(t.startswith(kind) and "+" not in t and "@" not in t for t in flat):
            r.sections[section] = Missing(r.spec.contract.section(section), [f"a llama-bench {kind} test"])
    if r.sections.get("tg") is not None or not r.h100_configs() or r.h100_runs is None \
            or not len(r.h100_runs[r.h100_runs["kind"] == "sweep"]):
        r.sections.setdefault("serving", None)
        if r.sections["serving"] is None:
            r.sections["serving"] = Missing(r.spec.contract.section("serving"), [
                "a llama-bench generation test here and sweep runs of a baseline or candidate in the H100 "
                "chapter's data"])


# ---- what was measured -------------------------------------------------------------

def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    for cid, c in r.data.study.configs.items():
        rows.append(dict(config=cid, role=r.roles.of_config.get(cid), platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         arguments=fmt_args(c.get("serve_args"))))
    return pd.DataFrame(rows)


def files_table(r: Results) -> pd.DataFrame:
    """Each raw file with what the reader took from it, and what it skipped and why."""
    rep = r.data.report.assign(study=r.data.study.id)
    if r.h100 is not None:
        rep = pd.concat([rep, r.h100.report.assign(study=r.h100.study.id)], ignore_index=True)
    return rep[["study", "file", "format", "read", "ignored", "reasons"]]


# ---- llama-bench: backends, best of, spread ---------------------------------------

def backend_counts(llama: pd.DataFrame) -> dict[str, float]:
    """``strix_<test>_backends``: how many backends ran each depth-0 test."""
    llama = ok_rows(llama)
    flat = llama[~llama["test_name"].str.contains("@", na=False)]
    return {f"strix_{t}_backends": float(n) for t, n in flat.groupby("test_name")["variant"].nunique().items()}


def _tests_in_order(llama: pd.DataFrame) -> list[str]:
    """Prefill tests before generation tests, shallow before deep, as llama-bench orders them."""
    keys = llama.drop_duplicates("test_name")
    keys = keys.assign(_k=keys["test"].map({"pp": 0, "tg": 1, "pp+tg": 2}).fillna(3))
    return list(keys.sort_values(["_k", "n_depth", "n_prompt", "n_gen"])["test_name"])


def per_test(llama: pd.DataFrame) -> pd.DataFrame:
    """One row per test: best and worst backend, with their rates and the spread."""
    rows = []
    llama = ok_rows(llama)
    for test in _tests_in_order(llama):
        g = llama[llama["test_name"] == test].sort_values("avg_ts", ascending=False)
        best, worst = g.iloc[0], g.iloc[-1]
        rows.append(dict(
            test=test, backends=int(g["variant"].nunique()),
            best_config=best["variant"], best_backend=best["backend"],
            best_build=int(best["build_number"]) if pd.notna(best["build_number"]) else None,
            best_tps=float(best["avg_ts"]),
            best_stddev=float(best["stddev_ts"]) if pd.notna(best["stddev_ts"]) else 0.0,
            worst_config=worst["variant"], worst_tps=float(worst["avg_ts"]),
            spread=float(best["avg_ts"] / worst["avg_ts"]),
        ))
    return pd.DataFrame(rows, columns=["test", "backends", "best_config", "best_backend", "best_build", "best_tps",
                                       "best_stddev", "worst_config", "worst_tps", "spread"])


def with_share_of_best(llama: pd.DataFrame) -> pd.DataFrame:
    llama = ok_rows(llama)
    best = llama.groupby("test_name")["avg_ts"].transform("max")
    return llama.assign(share_of_best=llama["avg_ts"] / best)


def llama_cells(r: Results, lb: pd.DataFrame):
    """The assumption ids of llama-bench rows; a share of the best holds what its test's
    rates hold (the best is their maximum)."""
    cells = r.cells(lb, "llama_bench")
    return cells.assign("share_of_best", cells.per_group(lb, "test_name", "avg_ts"))


def backend_table(r: Results) -> pd.DataFrame:
    """Every llama-bench test of every backend, with its share of the best."""
    lb = with_share_of_best(r.llama)
    order = {t: i for i, t in enumerate(_tests_in_order(lb))}
    lb = lb.assign(_o=lb["test_name"].map(order)).sort_values(["_o", "avg_ts"], ascending=[True, False])
    out = table(lb, {
        "test": Col("test_name"),
        "config": Col("variant"),
        "backend": Col("backend"),
        "build": Col(("build_number", "build_commit"), _build),
        "t/s (mean ± sd)": Col(("avg_ts", "stddev_ts"), lambda a, s: f"{a:,.2f} ± {0 if pd.isna(s) else s:.2f}"),
        "samples": Col("n_samples", lambda v: pd.NA if pd.isna(v) else int(v)),
        "of best": Col("share_of_best", lambda v: f"{v:.1%}"),
    }, llama_cells(r, lb))
    if len(r.failed):  # a crashed run: shown as failed, with its error, never silently dropped
        f, marked = with_test_names(r.failed), out
        out = pd.concat([out, pd.DataFrame({
            "test": f["test_name"].replace("", "–"), "config": f["config"], "backend": f["backend"],
            "build": [_build(n, c) for n, c in zip(f["build_number"], f["build_commit"])],
            "t/s (mean ± sd)": "failed: " + f["error"].fillna("no error text").astype(str),
            "samples": pd.array([pd.NA] * len(f), dtype="Int64"), "of best": "–"})], ignore_index=True)
        out = carried(out, marked)
    return out


def _build(number, commit) -> str:
    if pd.isna(number):
        return str(commit) if pd.notna(commit) else "–"
    return f"b{int(number)}" + (f" ({commit})" if pd.notna(commit) and commit else "")


def per_test_cells(r: Results):
    """per_test's rows are tests: which build is best or worst, and by how much, read every
    rate (and spread) of the test."""
    return r.cells(r.llama, "llama_bench").group(r.llama, "test_name")


def best_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama).set_index("test", drop=False)
    return table(t, {
        "test": Col("test"),
        "best t/s (mean ± sd)": Col(("best_tps", "best_stddev"), lambda a, s: f"{a:,.2f} ± {s:.2f}",
                                    reads=("avg_ts", "stddev_ts")),
        "winning config": Col("best_config", reads=("avg_ts",)),
        "backend": Col("best_backend", reads=("avg_ts",)),
        "build": Col("best_build", lambda n: f"b{n}" if pd.notna(n) else "–", reads=("avg_ts",)),
        "backends tried": Col("backends"),
    }, per_test_cells(r))


def spread_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama).set_index("test", drop=False)
    return table(t, {
        "test": Col("test"),
        "best": Col(("best_config", "best_tps"), lambda c, v: f"{c} ({v:,.1f} t/s)", reads=("avg_ts",)),
        "worst": Col(("worst_config", "worst_tps"), lambda c, v: f"{c} ({v:,.1f} t/s)", reads=("avg_ts",)),
        "best / worst": Col("spread", fmt_ratio, reads=("avg_ts",)),
        "worst is below best by": Col("spread", lambda v: f"{1 - 1 / v:.1%}", reads=("avg_ts",)),
    }, per_test_cells(r))


def single_build_table(r: Results) -> pd.DataFrame:
    """What each backend alone reaches, as a share of the best-of envelope, per test."""
    lb = with_share_of_best(r.llama)
    wide = lb.pivot_table(index="variant", columns="test_name", values="share_of_best")
    wide = wide[[t for t in _tests_in_order(lb) if t in wide.columns]]
    out = wide.map(lambda v: f"{v:.1%}").rename_axis("build").reset_index()
    out["lowest share"] = wide.min(axis=1).map(lambda v: f"{v:.1%}").values
    # a share reads its test's rates; the lowest share reads every test's
    tests = per_test_cells(r)
    marks = {t: {i: tests.row(t, "avg_ts") for i in range(len(out))} for t in wide.columns}
    marks["lowest share"] = {i: tests.union("avg_ts") for i in range(len(out))}
    return with_marks(out, marks, tests.why)


def spread_figure(r: Results) -> plt.Figure:
    """Each backend's rate as a share of the best per test, with ±1 sd error bars."""
    lb = with_share_of_best(r.llama)
    tests = _tests_in_order(lb)
    configs = sorted(lb["variant"].unique())
    # Many or long test names (pp512 @ d1024, ...): slanted ticks, and no labels on the bars,
    # which would overlap (the table above the figure gives every share).
    crowded = sum(len(t) for t in tests) > 40 or len(tests) * len(configs) > 12
    fig, ax = plt.subplots(figsize=(7.5, 4.5 if crowded else 4))
    width = 0.8 / max(len(configs), 1)
    colors = sns.color_palette(n_colors=len(configs))
    for k, (cfg, color) in enumerate(zip(configs, colors)):
        g = lb[lb["variant"] == cfg].groupby("test_name").first().reindex(tests)
        x = np.arange(len(tests)) + (k - (len(configs) - 1) / 2) * width
        share = 100 * g["share_of_best"].to_numpy(dtype=float)
        err = 100 * (g["stddev_ts"] / g["avg_ts"] * g["share_of_best"]).to_numpy(dtype=float)
        bars = ax.bar(x, share, width, yerr=err, capsize=3, label=cfg, color=color)
        if not crowded:
            ax.bar_label(bars, labels=[f"{v:.0f}%" if np.isfinite(v) else "" for v in share],
                         padding=3, fontsize=plots.MIN_FONT_PT)
    ax.set_xticks(np.arange(len(tests)), tests, rotation=35 if crowded else 0,
                  ha="right" if crowded else "center", rotation_mode="anchor")
    ax.set_ylim(0, 112)  # bars start at zero, so their lengths compare honestly
    ax.set_ylabel("% of the best backend's t/s")
    ax.set_xlabel("llama-bench test")
    ax.set_title("Spread between llama.cpp backends")
    legend = ax.legend(title="backend build", fontsize=plots.MIN_FONT_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    # a bar is a share of its test's best: it reads every rate of the test
    cells = llama_cells(r, lb)
    plots.mark_series(fig, legend, series(tagged(lb, cells), "variant", ["share_of_best"]), cells.why)
    fig.tight_layout()
    return fig


# ---- the llama-server run (4k-prompt TTFT and TPOT) ---------------------------------

def server_table(r: Results) -> pd.DataFrame:
    s = r.server
    if not len(s):
        return pd.DataFrame()
    return table(s, {
        "run": Col("name"), "input tokens": Col("input_len", as_int),
        "output tokens": Col("output_len", as_int), "requests": Col("completed", as_int),
        "TTFT p50": Col("median_ttft_s", fmt_seconds), "TTFT p99": Col("p99_ttft_s", fmt_seconds),
        "TPOT p50": Col("median_tpot_s", fmt_seconds),
        "decode t/s (1 / TPOT)": Col("median_tpot_s", lambda v: fmt_rate(1 / v, 1)),
        "prefill t/s (input / TTFT)": Col("prefill_tps", fmt_rate),
        "per-request t/s": Col("per_request_tps", lambda v: fmt_rate(v, 1)),
    }, r.cells(s, "runs"))


def prefill_two_ways(r: Results, prompts=(4096, 7000)) -> pd.DataFrame:
    """The prefill rate from llama-bench and the one the server's TTFT implies, side by side."""
    rows = []
    for src, name in (("llama-bench, best pp512", "strix_best_pp512_tps"),
                      ("llama-server run, median input / TTFT", "strix_server_c1_prefill_tps")):
        if r.values.get(name):
            rows.append((src, r.values[name], r.value_ids.get(name, ())))
    return rows_table([
        {"source of the rate": src, "prefill t/s": Shown(fmt_rate(rate), ids),
         **{f"TTFT at {n:,} tokens": Shown(fmt_seconds(n / rate), ids) for n in prompts}}
        for src, rate, ids in rows
    ], r.assumed_why)


# ---- sequential (Strix Halo) against batched (H100) serving ------------------------

def sequential_s(agents: int, answer_tokens: int, gen_tps: float, prompt_tokens: int = 0,
                 prefill_tps: float | None = None) -> float:
    """A server that does not batch: each agent's prompt and answer wait for the previous one."""
    t = agents * answer_tokens / gen_tps
    if prompt_tokens:
        t += agents * prompt_tokens / prefill_tps
    return t


def batched_s(answer_tokens: int, per_agent_tps: float, prompt_tokens: int = 0,
              ttft_s: float | None = None, ttft_input_len: float | None = None) -> float:
    """All agents at once on a batching server, at the per-agent rate measured at that load.

    With prompts, the measured median TTFT (scaled to the prompt length) is added on top,
    although the per-agent rate was measured with prompts already: conservative for the H100.
    """
    t = answer_tokens / per_agent_tps
    if prompt_tokens and ttft_s is not None:
        t += ttft_s * prompt_tokens / (ttft_input_len or prompt_tokens)
    return t


def nearest_sweep(h100_runs: pd.DataFrame, config: str, agents: int) -> pd.Series | None:
    """The H100 sweep run at the measured concurrency nearest `agents` (the lower on a tie)."""
    s = h100_runs[(h100_runs["config"] == config) & (h100_runs["kind"] == "sweep")]
    if not len(s):
        return None
    s = s.sort_values("concurrency")
    return s.iloc[int(np.argmin((s["concurrency"].astype(float) - agents).abs().to_numpy()))]


def batched_values(r: Results, agents: int) -> dict[str, float]:
    """``h100_<short>_batched_per_agent_tps`` (and its concurrency) nearest `agents`."""
    out = {}
    for cfg, (short, _) in r.h100_configs().items():
        row = nearest_sweep(r.h100_runs, cfg, agents)
        if row is not None:
            out[f"h100_{short}_batched_per_agent_tps"] = float(row["per_agent_tps"])
            out[f"h100_{short}_batched_concurrency"] = float(row["concurrency"])
    return out


def _scenarios(r: Results) -> list[tuple[str, int, str]]:
    """(label, prompt tokens, Strix prefill source) of each serving scenario."""
    out = []
    for p in dict.fromkeys([int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"])]):
        out.append((f"{p:,}-token prompts" if p else "no prompt (as the write-ups count)", p, "llama-bench"))
        if p and r.values.get("strix_server_c1_prefill_tps"):
            out.append((f"{p:,}-token prompts, llama.cpp prefill at the llama-server rate", p, "llama-server"))
    return out


def _strix_time(r: Results, n: int, prompt: int, source: str) -> float | None:
    pp, tg = usual_tests(r.llama)
    gen = r.values.get(f"strix_best_{tg}_tps")
    pre = r.values.get(f"strix_best_{pp}_tps" if source == "llama-bench" else "strix_server_c1_prefill_tps")
    if not gen or (prompt and not pre):
        return None
    return sequential_s(n, r.params["answer_tokens"], gen, prompt, pre)


def _strix_ids(r: Results, prompt: int, source: str) -> tuple:
    """What _strix_time reads: the best generation rate, and with prompts a prefill rate."""
    pp, tg = usual_tests(r.llama)
    names = [f"strix_best_{tg}_tps"]
    if prompt:
        names.append(f"strix_best_{pp}_tps" if source == "llama-bench" else "strix_server_c1_prefill_tps")
    return value_ids(r.value_ids, names)


def _h100_ids(r: Results, cfg: str, n: int, prompt: int) -> tuple:
    """What _h100_time reads: the per-agent rate (and with prompts the median TTFT) of the
    sweep run nearest n."""
    row = nearest_sweep(r.h100_runs, cfg, n) if r.h100_runs is not None else None
    if row is None:
        return ()
    read = ("per_agent_tps", "median_ttft_s") if prompt else ("per_agent_tps",)
    return r.cells(r.h100_runs, "runs", r.h100).row(row.name, read)


def _h100_time(r: Results, cfg: str, n: int, prompt: int) -> tuple[float | None, int | None]:
    if r.h100_runs is None:
        return None, None
    row = nearest_sweep(r.h100_runs, cfg, n)
    if row is None:
        return None, None
    t = batched_s(r.params["answer_tokens"], float(row["per_agent_tps"]), prompt,
                  float(row["median_ttft_s"]), float(row["input_len"]))
    return t, int(row["concurrency"])


def serving(r: Results) -> pd.DataFrame:
    """Time to serve `agents` agents, per scenario, with the H100's advantage (numbers)."""
    n, rows = int(r.params["agents"]), []
    if not r.has("serving"):
        return pd.DataFrame(columns=["scenario", "agents", "prompt_tokens", "answer_tokens",
                                     "strix_prefill", "strix_s"])
    for label, prompt, source in _scenarios(r):
        row = dict(scenario=label, agents=n, prompt_tokens=prompt, answer_tokens=r.params["answer_tokens"],
                   strix_prefill=source if prompt else "", strix_s=_strix_time(r, n, prompt, source))
        for cfg, (short, _) in r.h100_configs().items():
            t, c = _h100_time(r, cfg, n, prompt)
            row[f"{short}_s"], row[f"{short}_concurrency"] = t, c
            row[f"{short}_advantage"] = row["strix_s"] / t if t and row["strix_s"] else None
        rows.append(row)
    return pd.DataFrame(rows)


def serving_display(r: Results) -> pd.DataFrame:
    s, n = serving(r), int(r.params["agents"])
    seq = [_strix_ids(r, p, src) for p, src in zip(s["prompt_tokens"], s["strix_prefill"].replace("", "llama-bench"))]
    out = pd.DataFrame({"scenario": s["scenario"], r.sequential_label: s["strix_s"].map(fmt_seconds)})
    marks = {r.sequential_label: dict(enumerate(seq))}
    for cfg, (short, label) in r.h100_configs().items():
        conc = s[f"{short}_concurrency"].dropna()
        at = f" (c={int(conc.iloc[0])})" if len(conc) else ""
        col = f"{label}, batched{at}: time (advantage)"
        out[col] = [f"{fmt_seconds(t)} ({fmt_ratio(a)})" for t, a in zip(s[f"{short}_s"], s[f"{short}_advantage"])]
        marks[col] = {i: union(_h100_ids(r, cfg, n, p), seq[i]) for i, p in enumerate(s["prompt_tokens"])}
    return with_marks(out, marks, r.assumed_why)


def serving_curve(r: Results) -> pd.DataFrame:
    """Time to serve N = 1 … max(measured concurrency, agents) agents, per scenario and server."""
    top = int(r.params["agents"])
    if not r.has("serving"):
        return pd.DataFrame(columns=["prompt_tokens", "agents", "server", "seconds", "measured_at", "sequential"])
    sweeps = r.h100_runs.loc[r.h100_runs["kind"] == "sweep", "concurrency"].dropna()
    if len(sweeps):
        top = max(top, int(sweeps.max()))
    rows, ids = [], []
    for label, prompt, source in _scenarios(r):
        for n in range(1, top + 1):
            strix = _strix_time(r, n, prompt, source)
            if source == "llama-bench" or prompt:
                seq = r.sequential_label
                name = seq if source == "llama-bench" else f"{seq}, llama-server prefill"
                rows.append(dict(prompt_tokens=prompt, agents=n, server=name, seconds=strix, measured_at=None,
                                 sequential=True))
                ids.append(_strix_ids(r, prompt, source))
            if source != "llama-bench":
                continue
            for cfg, (_, lab) in r.h100_configs().items():
                t, c = _h100_time(r, cfg, n, prompt)
                if t is not None:
                    rows.append(dict(prompt_tokens=prompt, agents=n, server=f"{lab} (batched)",
                                     seconds=t, measured_at=c, sequential=False))
                    ids.append(_h100_ids(r, cfg, n, prompt))
    out = pd.DataFrame(rows, columns=["prompt_tokens", "agents", "server", "seconds", "measured_at", "sequential"])
    return with_marks(out, {"seconds": dict(enumerate(ids))}, r.assumed_why)  # for the figure's legend


def serving_figure(curve: pd.DataFrame) -> plt.Figure:
    """Time to serve N agents: a straight line for sequential, steps for batched."""
    prompts = list(dict.fromkeys(curve["prompt_tokens"]))
    fig, axes = plt.subplots(1, len(prompts), figsize=(5.2 * len(prompts), 4.2), sharey=True, squeeze=False)
    servers = [n for n in dict.fromkeys(curve["server"]) if "llama-server" not in n]
    colors = dict(zip(servers, sns.color_palette(n_colors=len(servers))))
    first = next(iter(servers), None)
    for name in curve["server"].unique():  # the same sequential line, other prefill: same colour, dashed
        colors.setdefault(name, colors.get(first, "grey"))
    sequential = dict(zip(curve["server"], curve["sequential"]))
    for ax, p in zip(axes[0], prompts):
        sub = curve[curve["prompt_tokens"] == p].dropna(subset=["seconds"])
        for name, g in sub.groupby("server", sort=False):
            dashed = "llama-server" in name
            ax.plot(g["agents"], g["seconds"], color=colors[name], label=name,
                    linestyle="--" if dashed else "-", drawstyle="default" if sequential[name] else "steps-mid")
            measured = g[g["agents"] == g["measured_at"]]
            if len(measured):
                ax.plot(measured["agents"], measured["seconds"], "o", color=colors[name])
        plots.log_scale(ax, "y")
        ax.set_xlabel("agents served (N)")
        ax.set_title(f"{p:,}-token prompts" if p else "answers only, no prompt")
    axes[0][0].set_ylabel("time to serve all agents (s)")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    legend = fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=plots.MIN_FONT_PT,
                        frameon=False)
    plots.mark_series(fig, legend, series(curve, "server", ["seconds"]), curve.attrs.get(WHY) or {})
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# ---- comparison, ledger, caveats ---------------------------------------------------

def _ours(text: str) -> dict:
    return dict(origin="this chapter", caveat=text)


def _caveats(r: Results) -> list[dict]:
    server = r.roles.first("server")
    compared = [(server, cfg) for cfg in r.h100_configs()] if server else []
    h100_configs = r.h100.study.configs if r.h100 is not None else {}
    cav = data_caveats(r.data, r.server, r.ledger, compared=compared, extra_configs=h100_configs)
    if r.h100 is not None:
        for c in data_caveats(r.h100, r.h100_runs):
            if c["origin"] == "data rule: reconstructed" and r.data.study.reconstructed:
                continue  # said once already
            cav.append(dict(origin=f"{c['origin']} ({r.h100.study.id})", caveat=c["caveat"]))
    if len(r.failed):
        cav.append(_ours(
            f"{len(r.failed)} llama-bench run(s) crashed ({', '.join(r.failed['config'].astype(str))}); "
            "they are listed with their error and left out of the best-of figures and spreads."))
    if r.data.study.reconstructed:
        cav.append(_ours(
            "The Strix Halo figures are the author's own, from private benchmark notes; no one else "
            "measured them and no raw output was published, so nothing here checks them independently."))
    if r.has("serving"):
        cav.append(_ours(
            "The serving model assumes a server that takes one request at a time, as the write-ups "
            "describe llama.cpp. llama-server can run several slots in parallel; with them, this "
            "hardware would serve agents faster than the model says."))
    if r.comparable and r.data.study.reconstructed:
        cav.append(_ours(
            "Generation on Strix Halo is fast enough only because the model is a mixture of experts "
            "that reads about 3B of its 35B weights per token: the model was chosen to suit the "
            "memory bandwidth, and a dense model of similar size would not fare the same."))
    n_pp = r.llama.loc[r.llama["test"] == "pp", "n_prompt"] if len(r.llama) else pd.Series(dtype=float)
    longest = max(int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"]))
    if r.has("serving") and len(n_pp) and longest > int(n_pp.max()):
        cav.append(_ours(
            f"Sequential times with {longest:,}-token prompts use the pp{int(n_pp.max())} rate for "
            "prefill; llama.cpp's prefill slows as the context grows, so these times flatter the "
            "sequential server. The batched side adds its measured median TTFT on top of a per-agent "
            "rate that already includes prefill, which flatters the sequential server as well."))
    if len(r.server) and r.data.study.reconstructed:
        cav.append(_ours(
            "The write-ups do not say how the 4k-input TTFT and the TPOT were measured. We represent "
            "them as a single-client `vllm bench serve` run against llama-server; that is our "
            "assumption (PROVENANCE.md), and its implied prefill rate disagrees with llama-bench's."))
    return cav


# ---- prose numbers and downloads ---------------------------------------------------

# The prompt-processing (`pp`) and generation (`tg`) tests the prose quotes: glue key ->
# column of per_test (the test's best and worst build and how far apart they are).
TEST_GLUE = {
    "pp": {"pp_test": "test", "pp_best_tps": "best_tps", "pp_best_config": "best_config",
           "pp_worst_tps": "worst_tps", "pp_worst_config": "worst_config", "pp_spread": "spread"},
    "tg": {"tg_test": "test", "tg_best_tps": "best_tps", "tg_best_config": "best_config",
           "tg_worst_tps": "worst_tps", "tg_worst_config": "worst_config", "tg_spread": "spread"},
}


def glue_values(r: Results) -> dict:
    """Numbers and names quoted in the chapter's prose, keyed by role.

    Every key is computed only when its data is there; the prose that quotes it is tagged
    with its section (`needs-...`), and a section the data cannot fill is dropped.
    """
    out = Glued(r.assumed_why)
    out["platform"] = r.platform
    t, tests = per_test(r.llama), per_test_cells(r)
    pp, tg = usual_tests(r.llama)
    for role, test in (("pp", pp), ("tg", tg)):
        hit = t[t["test"] == test] if test else t.iloc[:0]
        if len(hit):
            row, ids = hit.iloc[0], tests.row(test, "avg_ts")  # best and worst of the test's rates
            for key, column in TEST_GLUE[role].items():
                if column == "test":
                    out[key] = row[column]
                else:
                    out.cell(key, row[column], ids)
    out["backends"] = int(r.llama["variant"].nunique()) if len(r.llama) else 0
    out["tests"] = int(r.llama["test_name"].nunique()) if len(r.llama) else 0
    out["winners"] = int(t["best_config"].nunique()) if len(t) else 0
    out.cell("envelope_note", (
        f"The {out['tests']} tests are won by {out['winners']} different builds, so the best-of "
        "figures describe no single build: each build alone reaches only the shares below."
        if out["winners"] > 1 else
        "One build wins every test, so the best-of figures are that build's own; the others "
        "reach the shares below."), tests.union("avg_ts"))
    if len(r.server):
        s, cells = r.server.iloc[0], r.cells(r.server, "runs")
        out["server_input_len"] = int(s["input_len"])
        out["server_requests"] = int(s["completed"])
        out.cell("server_ttft_ms", float(s["median_ttft_s"]) * 1000, cells.at(s.name, "median_ttft_s"))
        out.cell("server_tpot_ms", float(s["median_tpot_s"]) * 1000, cells.at(s.name, "median_tpot_s"))
        out.cell("server_decode_tps", 1 / float(s["median_tpot_s"]), cells.at(s.name, "median_tpot_s"))
        out.cell("server_prefill_tps", float(s["prefill_tps"]), cells.at(s.name, "prefill_tps"))
        if "pp_best_tps" in out:
            out.of("prefill_ratio", out["server_prefill_tps"] / out["pp_best_tps"], "server_prefill_tps", "pp_best_tps")
            out.of("ttft_at_pp_rate_s", out["server_input_len"] / out["pp_best_tps"], "pp_best_tps")
    if r.has("serving"):
        _serving_values(r, out)
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison))
    out.update({k: r.params[k] for k in ("agents", "answer_tokens", "prompt_tokens", "long_prompt_tokens")})
    for k, v in out.items():
        if isinstance(v, np.floating):
            out[k] = float(v)
    return out


def _serving_values(r: Results, out: Glued) -> None:
    """The sequential time for `agents` agents and the fastest batched configuration's."""
    sv, n = serving(r), int(r.params["agents"])
    for prompt, key in ((r.params["prompt_tokens"], "strix_s"), (r.params["long_prompt_tokens"], "long_strix_s")):
        rows = sv[(sv["prompt_tokens"] == prompt) & (sv["strix_prefill"].isin(["", "llama-bench"]))]
        if len(rows) and pd.notna(rows["strix_s"].iloc[0]):
            out.cell(key, float(rows["strix_s"].iloc[0]), _strix_ids(r, prompt, "llama-bench"))
    rows = sv[(sv["prompt_tokens"] == r.params["prompt_tokens"]) & (sv["strix_prefill"].isin(["", "llama-bench"]))]
    if not len(rows) or "strix_s" not in out:
        return
    row = rows.iloc[0]
    best = None
    for cfg, (short, label) in r.h100_configs().items():
        t = row.get(f"{short}_s")
        if t is not None and pd.notna(t) and (best is None or t < best[1]):
            best = (cfg, float(t), label)
    if best is None:
        return
    cfg, secs, label = best
    at = nearest_sweep(r.h100_runs, cfg, n)
    prompt = r.params["prompt_tokens"]
    out.update(batched_label=label, batched_concurrency=int(at["concurrency"]))
    out.cell("batched_s", secs, _h100_ids(r, cfg, n, prompt))
    out.cell("batched_s_ttft", secs + float(at["median_ttft_s"]), _h100_ids(r, cfg, n, 1))
    out.of("batched_advantage", out["strix_s"] / secs, "strix_s", "batched_s")
    out.of("batched_advantage_ttft", out["strix_s"] / out["batched_s_ttft"], "strix_s", "batched_s_ttft")


def serving_models_note(r: Results) -> str:
    """Plain text naming the batched configurations that run another model than llama.cpp
    here: for them the times compare two setups, not two machines on one model."""
    from ..comparable import same_model

    if r.h100 is None:
        return ""
    mine = [m for m in dict.fromkeys(r.config(c).get("model", "") for c in r.roles.configs("backend")) if m]
    other = {label: r.h100.study.configs.get(cid, {}).get("model", "") for cid, (_, label) in r.h100_configs().items()}
    differ = [f"{label} ({model})" for label, model in other.items()
              if model and not any(same_model(model, m) for m in mine)]
    if not mine or not differ:
        return ""
    return (f"llama.cpp here serves {', '.join(mine)}; {'; '.join(differ)} "
            f"{'runs' if len(differ) == 1 else 'run'} another model. For "
            f"{'it' if len(differ) == 1 else 'them'} the times say how long each setup takes, not which "
            "hardware is faster on one model.")


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    """The chapter's tidy tables, as offered for download."""
    return {
        "llama_bench": with_share_of_best(r.llama), "best_of": per_test(r.llama),
        "server_runs": r.server, "server_requests": r.data["requests"],
        "serving": serving(r), "serving_curve": serving_curve(r),
        "failed_runs": r.failed, "published_vs_reproduced": r.comparison, "claims": r.ledger,
        "caveats": r.caveats, "key_figures": key_figures(r),
    }


# ---- key figures for the synthesis chapter (benchbook.chapters.KEY_FIGURES) ---------

def key_figures(r: Results) -> pd.DataFrame:
    """Strix Halo's rows: the best-of-backends llama-bench figures, and the llama-server run.

    llama-bench's tg test decodes at almost no context and its figure is the best of the
    backends per test (an envelope no single build reaches on every test); the llama-server
    run decodes after a 4k prompt, so its 1 / median TPOT includes the KV reads of that
    context. llama.cpp serves one request at a time here, so the best aggregate is the
    single stream.
    """
    from . import decode_context, key_figure_row, key_figures_table

    rows, tests = [], per_test_cells(r)
    t = per_test(r.llama)
    pp_name, tg_name = usual_tests(r.llama)
    tg = t[t["test"] == tg_name] if tg_name else t.iloc[:0]
    pp = t[t["test"] == pp_name] if pp_name else t.iloc[:0]
    if len(tg):
        best = tg.iloc[0]
        cid = r.llama.loc[r.llama["variant"] == best["best_config"], "config"].iloc[0]
        c = r.data.study.configs.get(cid, {})
        n_gen = int(best["test"][2:])
        pre = pp.iloc[0] if len(pp) else None
        rows.append(key_figure_row(
            STUDY, best["best_config"], c,
            single_stream_decode_tps=Shown(float(best["best_tps"]), tests.row(tg_name, "avg_ts")),
            acceptance_length=float("nan"),
            best_aggregate_tps=Shown(float(best["best_tps"]), tests.row(tg_name, "avg_ts")),
            best_aggregate_concurrency=1.0, anchor="llama-bench-across-backends",
            label=f"{_short_platform(r, c)}, {c.get('model') or best['best_config']}, llama-bench (best of backends)",
            speculative="", decode_context_tokens=(n_gen - 1) / 2,
            decode_basis=f"llama-bench {best['test']}, best of {int(best['backends'])} backends",
            prefill_tps=Shown(float(pre["best_tps"]) if pre is not None else float("nan"),
                              tests.row(pp_name, "avg_ts") if pre is not None else ()),
            prefill_tokens=float(pre["test"][2:]) if pre is not None else float("nan"),
            notes=(f"prefill: llama-bench {pre['test']}, best of backends ({pre['best_config']})"
                   if pre is not None else "") + "; llama.cpp serves one request at a time",
        ))
    if len(r.server):
        s, cells = r.server.iloc[0], r.cells(r.server, "runs")
        c = r.data.study.configs.get(s["config"], {})
        rows.append(key_figure_row(
            STUDY, s["config"], c,
            single_stream_decode_tps=Shown(1.0 / float(s["median_tpot_s"]), cells.at(s.name, "median_tpot_s")),
            acceptance_length=float("nan"), ttft_s=Shown(float(s["median_ttft_s"]), cells.at(s.name, "median_ttft_s")),
            ttft_input_tokens=float(s["input_len"]),
            best_aggregate_tps=Shown(float(s["output_tps"]), cells.at(s.name, "output_tps")),
            best_aggregate_concurrency=float(s["concurrency"]), anchor="time-to-first-token-and-decode-step",
            label=f"{_short_platform(r, c)}, {c.get('model') or s['config']}, llama-server",
            speculative="", decode_context_tokens=decode_context(s),
            decode_basis=f"1 / median TPOT, one client, {int(s['input_len']):,}-token prompts",
            prefill_tps=Shown(float(s["prefill_tps"]), cells.at(s.name, "prefill_tps")),
            prefill_tokens=float(s["input_len"]), notes="prefill as input / TTFT of the llama-server run",
        ))
    return key_figures_table(rows, r.assumed_why)


def _short_platform(r: Results, config: dict) -> str:
    """'Strix Halo' on the write-up's hardware; otherwise the platform as the data names it."""
    return "Strix Halo" if r.comparable and r.data.study.reconstructed else str(config.get("platform") or "llama.cpp")

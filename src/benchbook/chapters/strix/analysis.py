"""Strix Halo baseline: llama-bench across backends, and agents served one at a time.

Everything the chapter shows is computed here from its data folder (llama-bench output of
each build, with role backend; optionally a single-client bench run against llama-server,
role server) and, for the serving comparison, from the H100 chapter's data folder, whose
configurations are found by their roles (baseline, candidate). On other hardware the page
names that hardware, not Strix Halo.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...analysis.llama import (
    best_name,
    llama_value_ids,
    llama_values,
    nearest_test,
    ok_rows,
    usual_tests,
    variants,
    with_test_names,
)
from ...analysis.serving import add_serving_metrics, run_value_ids, run_values
from ...book import pipeline
from ...book import serving_points as points
from ...book.key_figures import decode_context, key_figure_row, key_figures_table
from ...book.paths import ChapterError, find_repo
from ...format import config_label, fmt_args, fmt_rate, fmt_ratio, fmt_seconds, platform_short
from ...ingest.tables import ARGUMENT_COLUMNS, ENGINE_COLUMNS
from ...ledger import claims as claims_mod
from ...ledger import independent
from ...ledger.caveats import data_caveats
from ...ledger.comparable import describe_setup, same_model
from ...page import plots
from ...page.palette import build_colours, model_colour, platform_colour
from ...study.contract import Missing
from ...study.marks import (
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
        r.same_as.update(batched_names(r, agents))
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
    """The configurations of study.yml; their engine and arguments carry the choices of the
    tidy cells they are recorded in (study.yml of a reconstructed folder is the generator's)."""
    rows = []
    for cid, c in r.data.study.configs.items():
        rows.append(dict(config=cid, role=r.roles.of_config.get(cid), platform=c.get("platform"), model=c.get("model"),
                         quantisation=c.get("quantisation"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         arguments=fmt_args(c.get("serve_args"))))
    out = pd.DataFrame(rows)
    engine, args = r.config_ids(ENGINE_COLUMNS), r.config_ids(ARGUMENT_COLUMNS)
    return with_marks(out, {"engine": {i: engine.get(c, ()) for i, c in enumerate(out.get("config", []))},
                            "arguments": {i: args.get(c, ()) for i, c in enumerate(out.get("config", []))}},
                      r.assumed_why)


def files_table(r: Results) -> pd.DataFrame:
    """Each raw file with what the reader took from it, and what it skipped and why."""
    return r.ingest_report(["study", "file", "format", "read", "ignored", "reasons"], reads=("h100_data_dir",))


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


def fastest_runs(llama: pd.DataFrame) -> pd.DataFrame:
    """One row per build and test: its fastest run. A build that ran a test several times
    with the same recorded settings is counted at its best, as the best-of figures count
    builds (repeated_runs says how far apart such runs are)."""
    llama = ok_rows(llama)
    if not len(llama):
        return llama
    idx = llama.groupby(["variant", "test_name"])["avg_ts"].idxmax()
    return llama.loc[sorted(idx)]


def per_test(llama: pd.DataFrame) -> pd.DataFrame:
    """One row per test: best and worst build (each at its fastest run), with their rates
    and the spread."""
    rows = []
    llama = fastest_runs(llama)
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


def repeated_runs(llama: pd.DataFrame) -> pd.DataFrame:
    """Tests a build ran several times with the same recorded settings, with how far apart
    the runs are (fastest ÷ slowest), widest first; only those more than 5 % apart, the
    noise of one llama-bench run being a few per cent."""
    llama = ok_rows(llama)
    if not len(llama):
        return pd.DataFrame(columns=["variant", "test_name", "runs", "spread"])
    g = llama.groupby(["variant", "test_name"])["avg_ts"].agg(["size", "max", "min"]).reset_index()
    g = g[g["size"] > 1].assign(spread=lambda d: d["max"] / d["min"]).rename(columns={"size": "runs"})
    return g[g["spread"] > 1.05].sort_values("spread", ascending=False)[["variant", "test_name", "runs", "spread"]]


def with_share_of_best(llama: pd.DataFrame) -> pd.DataFrame:
    llama = ok_rows(llama)
    best = llama.groupby("test_name")["avg_ts"].transform("max")
    return llama.assign(share_of_best=llama["avg_ts"] / best)


def llama_cells(r: Results, lb: pd.DataFrame):
    """The assumption ids of llama-bench rows; a share of the best holds what its own rate and
    the best rate of its test hold, and the best's own share (100 %) what its own rate holds:
    which build wins (`make marks`: moving how far the other backends fall below the best moved
    no share but their own; moving the winner turned a 100.0 % into 84.0 %)."""
    cells = r.cells(lb, "llama_bench")
    if not cells or not len(lb):
        return cells
    best = lb.groupby("test_name")["avg_ts"].transform("idxmax")
    # another build's share reads its own rate and the test's best rate, where that sits among the
    # test's sorted rates (which build wins swaps rates between builds, not the best: make marks)
    extremes = r.rate_extreme_ids(lb)
    return cells.assign("share_of_best", {
        label: cells.at(label, "avg_ts") if label == top else
        union(cells.at(label, "avg_ts"), extremes[test][0] if test in extremes else cells.at(top, "avg_ts"))
        for label, top, test in zip(lb.index, best, lb["test_name"])})


def backend_table(r: Results) -> pd.DataFrame:
    """Every llama-bench test of every backend, with its share of the best. Within a test the
    rows keep the folder's order, not the rates': on reconstructed data which build is slower
    is a generator's choice, and a row's place would rest on it with no cell to carry the mark
    (`make marks`: moving one losing ratio reordered the rows); "of best" says the ranking."""
    lb = with_share_of_best(r.llama)
    order = {t: i for i, t in enumerate(_tests_in_order(lb))}
    lb = lb.assign(_o=lb["test_name"].map(order)).sort_values("_o", kind="stable")
    cols = {
        "test": Col("test_name"),
        "config": Col("variant"),
        "backend": Col("backend"),
        "build": Col(("build_number", "build_commit"), _build),
        "t/s (mean ± sd)": Col(("avg_ts", "stddev_ts"), lambda a, s: f"{a:,.2f} ± {0 if pd.isna(s) else s:.2f}"),
        "samples": Col("n_samples", lambda v: pd.NA if pd.isna(v) else int(v)),
        "of best": Col("share_of_best", lambda v: f"{v:.1%}"),
    }
    if lb.duplicated(["variant", "test_name"]).any() and "test_time" in lb:  # runs only their time tells apart
        cols["tested at"] = Col("test_time", lambda v: "–" if pd.isna(v) else str(v))
    out = table(lb, cols, llama_cells(r, lb))
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
    """per_test's rows are tests: a column of the llama-bench table holds what any of the test's
    rows holds. `best_avg_ts` and `worst_avg_ts` hold what the test's greatest and least rate rest
    on (order_ids: where a choice moved those positions of the test's sorted rates; else the
    winning and slowest build's fastest run), which is all a best, a worst or a spread between
    them reads: moving which build wins swaps rates between builds and moves neither (`make
    marks`). `best_who` and `worst_who` hold what the winning and slowest run hold, which is what
    names the build, and `best_stddev_ts` and `best_build_number` that run's own cells."""
    cells = r.cells(r.llama, "llama_bench")
    grouped = cells.group(r.llama, "test_name")
    fast = fastest_runs(r.llama)
    if not grouped or not len(fast):
        return grouped
    ends = {}
    for test, g in fast.groupby("test_name"):
        g = g.sort_values("avg_ts", ascending=False)
        ends[test] = (g.index[0], g.index[-1])
    for column, (which, source) in {"best_who": (0, "avg_ts"), "best_stddev_ts": (0, "stddev_ts"),
                                    "best_build_number": (0, "build_number"), "worst_who": (1, "avg_ts")}.items():
        grouped = grouped.assign(column, {t: cells.at(rows[which], source) for t, rows in ends.items()})
    # (a build ran a test once in a reconstructed folder: its fastest run is its only one)
    extremes = r.rate_extreme_ids(fast if len(fast) == len(ok_rows(r.llama)) else r.llama)
    for column, which in (("best_avg_ts", 0), ("worst_avg_ts", 1)):
        grouped = grouped.assign(column, {t: ids[which] for t, ids in extremes.items()})
    return grouped


def best_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama).set_index("test", drop=False)
    return table(t, {
        "test": Col("test"),
        "best t/s (mean ± sd)": Col(("best_tps", "best_stddev"), lambda a, s: f"{a:,.2f} ± {s:.2f}",
                                    reads=("best_avg_ts", "best_stddev_ts")),
        "winning config": Col("best_config", reads=("best_who",)),
        "backend": Col("best_backend", reads=("best_who",)),
        "build": Col("best_build", lambda n: f"b{n}" if pd.notna(n) else "–",
                     reads=("best_who", "best_build_number")),
        "backends tried": Col("backends"),
    }, per_test_cells(r))


def spread_table(r: Results) -> pd.DataFrame:
    t = per_test(r.llama).set_index("test", drop=False)
    return table(t, {
        "test": Col("test"),
        "best": Col(("best_config", "best_tps"), lambda c, v: f"{c} ({v:,.1f} t/s)", reads=("best_who", "best_avg_ts")),
        "worst": Col(("worst_config", "worst_tps"), lambda c, v: f"{c} ({v:,.1f} t/s)",
                     reads=("worst_who", "worst_avg_ts")),
        "best / worst": Col("spread", fmt_ratio, reads=("best_avg_ts", "worst_avg_ts")),
        "worst is below best by": Col("spread", lambda v: f"{1 - 1 / v:.1%}", reads=("best_avg_ts", "worst_avg_ts")),
    }, per_test_cells(r))


def single_build_table(r: Results) -> pd.DataFrame:
    """What each backend alone reaches, as a share of the best-of envelope, per test."""
    lb = with_share_of_best(fastest_runs(r.llama))
    wide = lb.pivot_table(index="variant", columns="test_name", values="share_of_best")
    wide = wide[[t for t in _tests_in_order(lb) if t in wide.columns]]
    out = wide.map(lambda v: f"{v:.1%}").rename_axis("build").reset_index()
    out["lowest share"] = wide.min(axis=1).map(lambda v: f"{v:.1%}").values
    # a share reads its build's rate and its test's best (the best's own 100 % reads nothing);
    # the lowest share reads those of every test
    cells = llama_cells(r, lb)
    ids = {(v, t): cells.at(label, "share_of_best") for label, v, t in zip(lb.index, lb["variant"], lb["test_name"])}
    marks = {t: {i: ids.get((v, t), ()) for i, v in enumerate(out["build"])} for t in wide.columns}
    marks["lowest share"] = {i: union(*(ids.get((v, t), ()) for t in wide.columns)) for i, v in enumerate(out["build"])}
    return with_marks(out, marks, cells.why)


FIGURE_WIDTH_IN = 4.8  # narrow enough that 10 pt text stays about 10 px on a 390 px phone


def _family(test: str) -> str:
    """A test's series: its kind for a test at depth 0 ('pp', 'tg', 'pp+tg'), its test at
    any depth for a depth sweep ('pp512 @ depth')."""
    name, _, depth = test.partition(" @ ")
    if depth:
        return f"{name} @ depth"
    return "+".join(part.rstrip("0123456789") for part in name.split("+"))


def _size(test: str, by_depth: bool = False) -> int:
    """Where a test sits in its series: its depth in a depth sweep (0 for the test without
    one), else its length (prompt tokens for pp, generated tokens for tg and pp+tg)."""
    name, _, depth = test.partition(" @ d")
    if by_depth:
        return int(depth or 0)
    return int(name.split("+")[-1][2:])


FAMILY_TITLES = {"pp": "prefill (pp), by prompt tokens", "tg": "generation (tg), by tokens generated",
                 "pp+tg": "prefill then generation (pp+tg), by tokens generated"}


def _families(tests: list[str]) -> dict[str, list[str]]:
    """The tests by series, each in order: a depth sweep takes its test at depth 0 too."""
    families = {}
    for t in tests:
        families.setdefault(_family(t), []).append(t)
    for family in [f for f in families if f.endswith(" @ depth")]:
        base = family.split(" @")[0]
        kind = _family(base)
        if base in families.get(kind, []):
            families[kind].remove(base)
            families[family].append(base)
    return {f: sorted(mine, key=lambda t: _size(t, f.endswith(" @ depth"))) for f, mine in families.items() if mine}


def _panels(tests: list[str]) -> list[tuple[str, list[str], bool]]:
    """(title, tests, drawn as a series) per panel: a series of three or more tests of one
    kind is drawn against its length or depth; the other tests share one panel, one column each."""
    out, rest = [], []
    for family, mine in _families(tests).items():
        if len(mine) >= 3:
            title = FAMILY_TITLES.get(family) or f"{family.split(' @')[0]}, by depth (context tokens before it)"
            out.append((title, mine, True))
        else:
            rest += mine
    if rest:
        out.append((" and ".join(rest) if len(rest) <= 3 else "other tests", rest, False))
    return out


def short_names(names) -> dict[str, str]:
    """Build names without the configuration id they all share ('cfg · ROCm b6077 (fa=on)'
    -> 'ROCm b6077 (fa=on)'), for legends a phone can show."""
    names = list(names)
    heads = {n.split(" · ", 1)[0] for n in names}
    if len(heads) == 1 and all(" · " in n for n in names):
        return {n: n.split(" · ", 1)[1] for n in names}
    return {n: n for n in names}


def _styles(names) -> dict[str, dict]:
    """Colour by backend and build, line and marker by the other settings, so twelve
    builds stay told apart: 'ROCm b6077 (fa=on)' and '(fa=off)' share a colour."""
    names = sorted(names)
    idents = list(dict.fromkeys(n.split(" (")[0] for n in names))
    colours = build_colours(idents)
    lines, markers, seen = ("-", "--", ":", "-."), "osD^vPX*", {}
    out = {}
    for n in names:
        ident = n.split(" (")[0]
        k = seen[ident] = seen.get(ident, -1) + 1
        out[n] = dict(color=colours[ident], linestyle=lines[k % len(lines)], marker=markers[k % len(markers)])
    return out


def spread_figure(r: Results) -> plt.Figure:
    """Each build's rate as a share of the best build, per test: one panel per kind of test,
    stacked, drawn against the test's length, so every label keeps its size on a phone;
    ±1 sd error bars. A build counts at its fastest run (fastest_runs)."""
    lb = with_share_of_best(fastest_runs(r.llama))
    panels = _panels(_tests_in_order(lb))
    names = short_names(sorted(lb["variant"].unique()))
    styles = _styles(names.values())
    legend_in = 0.22 * len(names) + 0.4  # the legend's own row, one build a line, under the panels
    fig, axes = plt.subplots(len(panels) + 1, 1, figsize=(FIGURE_WIDTH_IN, 2.4 * len(panels) + legend_in),
                             squeeze=False, height_ratios=[2.4] * len(panels) + [legend_in])
    for ax, (title, mine, line) in zip(axes[:-1, 0], panels):
        _spread_panel(ax, lb, mine, names, styles, line)
        ax.set_title(title, loc="left", fontsize=plots.MIN_FONT_PT + 1)
    key = axes[-1, 0]
    key.axis("off")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    legend = key.legend(handles, labels, title="llama.cpp build", loc="upper left", ncol=1,
                        fontsize=plots.MIN_FONT_PT, frameon=False, borderaxespad=0)
    # a point is a share of its test's best: it reads every rate of the test; its error bar reads
    # the build's spread too (`make marks`: moving the repetitions moved the bars, unmarked)
    cells = llama_cells(r, lb)
    marked = series(tagged(lb, cells), "variant", ["share_of_best", "stddev_ts"])
    plots.mark_series(fig, legend, {names[k]: v for k, v in marked.items()}, cells.why)
    fig.tight_layout()
    return fig


def _spread_panel(ax, lb: pd.DataFrame, tests: list[str], names: dict, styles: dict, line: bool) -> None:
    """One panel: each build's share of the best on these tests; a series joined by lines
    at evenly spaced lengths (llama-bench's are powers of two), else one column per test
    with the builds side by side."""
    x = {t: i for i, t in enumerate(tests)}
    step = 0.0 if line else 0.6 / max(len(names), 1)
    for k, (variant, label) in enumerate(names.items()):
        g = lb[(lb["variant"] == variant) & lb["test_name"].isin(tests)]
        g = g.assign(_x=g["test_name"].map(x)).sort_values("_x")
        share = 100 * g["share_of_best"].to_numpy(dtype=float)
        err = 100 * (g["stddev_ts"] / g["avg_ts"] * g["share_of_best"]).to_numpy(dtype=float)
        style = dict(styles[label]) if line else {**styles[label], "linestyle": "none"}
        ax.errorbar(g["_x"] + (k - (len(names) - 1) / 2) * step, share, yerr=err, label=label, markersize=5,
                    linewidth=1.4, capsize=2, **style)
    ticks = [i for i in range(len(tests)) if len(tests) <= 7 or i % 2 == 0 or i == len(tests) - 1]
    by_depth = any(" @ d" in t for t in tests)
    labels = [_tick(tests[i], by_depth) if line else tests[i] for i in ticks]
    crowded = not line and sum(len(t) for t in labels) > 30
    ax.set_xticks(ticks, labels, rotation=30 if crowded else 0, ha="right" if crowded else "center",
                  rotation_mode="anchor")
    ax.set_xlim(-0.5, len(tests) - 0.5)
    ax.set_ylim(0, 105)  # from zero, so the gaps compare honestly
    ax.set_ylabel("% of best")


def _tick(test: str, by_depth: bool = False) -> str:
    """A test's length (or depth) as a tick label: 512, 2k, 4k."""
    n = _size(test, by_depth)
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


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
    return _nearest(_sweep(h100_runs, config), agents)


def _sweep(h100_runs: pd.DataFrame, config: str) -> pd.DataFrame:
    """A configuration's sweep runs by concurrency (a stable sort: ties keep file order)."""
    s = h100_runs[(h100_runs["config"] == config) & (h100_runs["kind"] == "sweep")]
    return s.sort_values("concurrency", kind="stable")


def _nearest(sweep: pd.DataFrame, agents: int) -> pd.Series | None:
    if not len(sweep):
        return None
    return sweep.iloc[int(np.argmin((sweep["concurrency"].astype(float) - agents).abs().to_numpy()))]


def batched_values(r: Results, agents: int) -> dict[str, float]:
    """``h100_<short>_batched_per_agent_tps`` (and its concurrency) nearest `agents`."""
    out = {}
    for cfg, (short, _) in r.h100_configs().items():
        row = nearest_sweep(r.h100_runs, cfg, agents)
        if row is not None:
            out[f"h100_{short}_batched_per_agent_tps"] = float(row["per_agent_tps"])
            out[f"h100_{short}_batched_concurrency"] = float(row["concurrency"])
    return out


def batched_names(r: Results, agents: int) -> dict[str, str]:
    """Each ``h100_<short>_batched_per_agent_tps`` -> the H100 chapter's name of the same
    run's value (``h100_<short>_c<n>_per_agent_tps``), the name its write-up's tables use."""
    out = {}
    for cfg, (short, _) in r.h100_configs().items():
        row = nearest_sweep(r.h100_runs, cfg, agents)
        if row is not None:
            out[f"h100_{short}_batched_per_agent_tps"] = f"h100_{short}_c{int(row['concurrency'])}_per_agent_tps"
    return out


def prefill_test(r: Results, prompt: int) -> str | None:
    """The llama-bench prefill test whose best rate the sequential model uses for prompts of
    `prompt` tokens: the measured one nearest that length (analysis.llama.nearest_test)."""
    return nearest_test(r.llama, "pp", int(prompt)) if prompt else None


def prefill_basis(r: Results, prompt: int) -> str:
    """Which prefill rate a scenario's sequential time uses, in words, and whether it is
    measured at that length or extrapolated from a shorter test."""
    test = prefill_test(r, prompt)
    if not test:
        return ""
    n = int(test[2:])
    if n == prompt:
        return f"the best {test} rate, measured at that length"
    if n < prompt and n == max(_pp_lengths(r)):
        return (f"the best {test} rate, extrapolated: no prefill test as long as {prompt:,} tokens was "
                "measured, and prefill slows as the prompt grows")
    return f"the best {test} rate, the measured prefill test nearest {prompt:,} tokens"


def _pp_lengths(r: Results) -> list[int]:
    """The prompt lengths of the depth-0 prefill tests measured."""
    return [int(t[2:]) for t in r.llama["test_name"].unique() if t.startswith("pp") and t[2:].isdigit()]


def _scenarios(r: Results) -> list[tuple[str, int, str]]:
    """(label, prompt tokens, Strix prefill source) of each serving scenario."""
    out = []
    for p in dict.fromkeys([int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"])]):
        test = prefill_test(r, p)
        out.append((f"{p:,}-token prompts (prefill at {test})" if p and test else f"{p:,}-token prompts" if p
                    else "no prompt (as the write-ups count)", p, "llama-bench"))
        if p and r.values.get("strix_server_c1_prefill_tps"):
            out.append((f"{p:,}-token prompts, llama.cpp prefill at the llama-server rate", p, "llama-server"))
    return out


def _prefill_name(r: Results, prompt: int, source: str) -> str:
    """The value name of the prefill rate a scenario reads."""
    return best_name(prefill_test(r, prompt)) if source == "llama-bench" else "strix_server_c1_prefill_tps"


def _strix_time(r: Results, n: int, prompt: int, source: str) -> float | None:
    return _strix_timer(r, prompt, source)(n)


def _strix_timer(r: Results, prompt: int, source: str):
    """n -> seconds for n agents one after another (None without the rates it needs): the
    rates are looked up once, for a curve over many n."""
    _, tg = usual_tests(r.llama)
    gen = r.values.get(best_name(tg))
    pre = r.values.get(_prefill_name(r, prompt, source)) if prompt else None
    if not gen or (prompt and not pre):
        return lambda n: None
    return lambda n: sequential_s(n, r.params["answer_tokens"], gen, prompt, pre)


def _strix_ids(r: Results, prompt: int, source: str) -> tuple:
    """What _strix_time reads: the best generation rate, and with prompts a prefill rate."""
    _, tg = usual_tests(r.llama)
    names = [best_name(tg)]
    if prompt:
        names.append(_prefill_name(r, prompt, source))
    return value_ids(r.value_ids, names)


def _h100_ids(r: Results, cfg: str, n: int, prompt: int, ttft: bool = False) -> tuple:
    """What _h100_time reads: the per-agent rate (and with prompts the median TTFT and the prompt
    length it was measured at, which scales it) of the sweep run nearest n (`make marks`: the
    H100 sweep's chosen 4,096-token prompts moved the batched times, unmarked). `ttft`: the
    median TTFT added as it is, unscaled (which no prompt length moves: make marks)."""
    row = nearest_sweep(r.h100_runs, cfg, n) if r.h100_runs is not None else None
    if row is None:
        return ()
    read = ("per_agent_tps", "median_ttft_s", "input_len") if prompt else ("per_agent_tps",)
    return r.cells(r.h100_runs, "runs", r.h100).row(row.name, read + (("median_ttft_s",) if ttft else ()))


def _h100_time(r: Results, cfg: str, n: int, prompt: int) -> tuple[float | None, int | None]:
    if r.h100_runs is None:
        return None, None
    return _h100_time_of(r, nearest_sweep(r.h100_runs, cfg, n), prompt)


def _h100_time_of(r: Results, row: pd.Series | None, prompt: int) -> tuple[float | None, int | None]:
    """The batched time at a sweep run (row), and the run's concurrency."""
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


def batched_shown(r: Results) -> bool:
    """Whether the page sets the batched H100 times beside this data's as one finding: not
    when this data is measured and the H100 folder reconstructed (Results.kept_apart)."""
    return r.h100 is not None and not r.kept_apart("h100_data_dir")


def serving_display(r: Results, batched: bool | None = None) -> pd.DataFrame:
    """Time to serve all agents per scenario: the sequential server, and (`batched`, by
    default when batched_shown) each H100 configuration with its advantage. Beside a folder
    kept apart, the H100 columns say whose data they are."""
    s, n = serving(r), int(r.params["agents"])
    batched = batched_shown(r) if batched is None else batched
    seq = [_strix_ids(r, p, src) for p, src in zip(s["prompt_tokens"], s["strix_prefill"].replace("", "llama-bench"))]
    out = pd.DataFrame({"scenario": s["scenario"], r.sequential_label: s["strix_s"].map(fmt_seconds)})
    marks = {r.sequential_label: dict(enumerate(seq))}
    whose = ", the write-up's reconstructed data" if r.kept_apart("h100_data_dir") else ""
    for cfg, (short, label) in r.h100_configs().items() if batched else ():
        conc = s[f"{short}_concurrency"].dropna()
        at = f" (c={int(conc.iloc[0])})" if len(conc) else ""
        col = f"{label}, batched{at}{whose}: time (advantage)"
        out[col] = [f"{fmt_seconds(t)} ({fmt_ratio(a)})" for t, a in zip(s[f"{short}_s"], s[f"{short}_advantage"])]
        marks[col] = {i: union(_h100_ids(r, cfg, n, p), seq[i]) for i, p in enumerate(s["prompt_tokens"])}
    return with_marks(out, marks, r.assumed_why)


# a sequential (Strix) line names its platform, a batched (H100) line its model: their colours
CURVE_COLUMNS = ["prompt_tokens", "agents", "server", "seconds", "measured_at", "sequential", "platform", "model"]


def serving_curve(r: Results) -> pd.DataFrame:
    """Time to serve N = 1 … max(measured concurrency, agents) agents, per scenario and server."""
    top = int(r.params["agents"])
    if not r.has("serving"):
        return pd.DataFrame(columns=CURVE_COLUMNS)
    sweeps = r.h100_runs.loc[r.h100_runs["kind"] == "sweep", "concurrency"].dropna()
    if len(sweeps) and batched_shown(r):
        top = max(top, int(sweeps.max()))
    rows, ids = [], []
    strix = platform_short(next(iter(r.data.study.configs.values()), {}))
    batched = batched_shown(r)
    sweeps = {cfg: _sweep(r.h100_runs, cfg) for cfg in r.h100_configs()} if batched else {}
    for label, prompt, source in _scenarios(r):
        seq_ids, strix_time = _strix_ids(r, prompt, source), _strix_timer(r, prompt, source)  # same rates at every n
        h100_ids = functools.cache(lambda cfg, c, prompt=prompt: _h100_ids(r, cfg, c, prompt))
        for n in range(1, top + 1):
            strix_s = strix_time(n)
            if source == "llama-bench" or prompt:
                seq = r.sequential_label
                name = seq if source == "llama-bench" else f"{seq}, llama-server prefill"
                rows.append(dict(prompt_tokens=prompt, agents=n, server=name, seconds=strix_s, measured_at=None,
                                 sequential=True, platform=strix))
                ids.append(seq_ids)
            if source != "llama-bench" or not batched:
                continue
            for cfg, (_, lab) in r.h100_configs().items():
                t, c = _h100_time_of(r, _nearest(sweeps[cfg], n), prompt)
                if t is not None:
                    rows.append(dict(prompt_tokens=prompt, agents=n, server=f"{lab} (batched)", seconds=t,
                                     measured_at=c, sequential=False, model=r.h100.study.configs[cfg].get("model")))
                    ids.append(h100_ids(cfg, c))  # the sweep run at concurrency c, whatever n
    out = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    return with_marks(out, {"seconds": dict(enumerate(ids))}, r.assumed_why)  # for the figure's legend


def serving_figure(curve: pd.DataFrame) -> plt.Figure:
    """Time to serve N agents: a straight line for sequential, steps for batched; one panel
    per prompt length, stacked so the labels keep their size on a phone. A batched line
    takes its model's colour, the sequential lines (one platform, two prefill sources:
    solid and dashed) the platform's."""
    prompts = list(dict.fromkeys(curve["prompt_tokens"]))
    first = curve.drop_duplicates("server")
    colors = {s: platform_colour(p) if seq else model_colour(m)
              for s, seq, p, m in zip(first["server"], first["sequential"], first["platform"], first["model"])}
    sequential = dict(zip(curve["server"], curve["sequential"]))
    legend_in = 0.22 * curve["server"].nunique() + 0.2
    fig, axes = plt.subplots(len(prompts) + 1, 1, figsize=(FIGURE_WIDTH_IN, 2.6 * len(prompts) + legend_in),
                             squeeze=False, height_ratios=[2.6] * len(prompts) + [legend_in])
    for ax, p in zip(axes[:-1, 0], prompts):
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
        ax.set_ylabel("seconds, all agents")
        ax.set_title(f"{p:,}-token prompts" if p else "answers only, no prompt", loc="left",
                     fontsize=plots.MIN_FONT_PT + 1)
    key = axes[-1, 0]
    key.axis("off")
    handles = {}
    for ax in axes[:-1, 0]:  # every server once, whichever panel draws it
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    legend = key.legend(list(handles.values()), list(handles), loc="upper left", ncol=1,
                        fontsize=plots.MIN_FONT_PT, frameon=False, borderaxespad=0)
    plots.mark_series(fig, legend, series(curve, "server", ["seconds"]), curve.attrs.get(WHY) or {})
    fig.tight_layout()
    return fig


# ---- comparison, ledger, caveats ---------------------------------------------------

def _ours(text: str) -> dict:
    return dict(origin="this chapter", caveat=text)


def _others_measured(chapter: str) -> str:
    """What others published of the write-up's Strix Halo figures (data/facts/independent.yml), as
    a sentence; empty outside a project or when nothing was found."""
    try:
        facts = find_repo() / "data" / "facts"
    except ChapterError:
        return ""
    ind = independent.glue_values(independent.section(chapter, facts_dir=facts, data_root=facts.parent))
    if not ind["independent_values"]:
        return ""
    return (f" Others' measurements of the same hardware ({ind['independent_values']} values from "
            f"{ind['independent_sources']} sources) are set beside them under Independent measurements.")


def _caveats(r: Results) -> list[dict]:
    server = r.roles.first("server")
    compared = [(server, cfg) for cfg in r.h100_configs()] if server else []
    h100_configs = r.h100.study.configs if r.h100 is not None else {}
    cav = data_caveats(r.data, r.server, r.ledger, compared=compared, extra_configs=h100_configs)
    if r.h100 is not None:
        for c in data_caveats(r.h100, r.h100_runs):
            if c["origin"] == "data rule: reconstructed" and r.data.study.reconstructed:
                continue  # said once already
            cav.append({**c, "origin": f"{c['origin']} ({r.h100.study.id})", "data": r.h100})
    if len(r.failed):
        cav.append(_ours(
            f"{len(r.failed)} llama-bench run(s) crashed ({', '.join(r.failed['config'].astype(str))}); "
            "they are listed with their error and left out of the best-of figures and spreads."))
    if r.data.study.reconstructed:
        cav.append(_ours(
            "The Strix Halo figures are the author's own, from private benchmark notes, and no raw output "
            "was published, so files fit to them cannot check them." + _others_measured(r.spec.id)))
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
    longest = max(int(r.params["prompt_tokens"]), int(r.params["long_prompt_tokens"]))
    test = prefill_test(r, longest) if r.has("serving") else None
    if test and int(test[2:]) < longest:
        longer = max(_pp_lengths(r)) > int(test[2:])
        cav.append(_ours(
            f"Sequential times with {longest:,}-token prompts use the {test} rate for prefill, "
            + ("the measured test nearest that length but shorter" if longer else
               f"extrapolated to {longest:,} tokens: no longer prefill test was measured")
            + "; llama.cpp's prefill slows as the context grows, so these times flatter the sequential server."
            + (" The batched side adds its measured median TTFT on top of a per-agent rate that already "
               "includes prefill, which flatters the sequential server as well." if batched_shown(r) else "")))
    repeated = repeated_runs(r.llama)
    if len(repeated):
        worst = repeated.iloc[0]
        cav.append(_ours(
            f"{len(repeated)} test(s) of a build were run more than once with the same recorded settings "
            f"(backend, build, flash attention, parameters), and their rates differ: up to "
            f"{worst['spread']:.2f}× on {worst['test_name']} of {worst['variant']}. The files record nothing "
            "that tells these runs apart (an environment variable, a driver or a firmware would not show), "
            "so each is listed in the table per backend, and a build's figure is its fastest run."))
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
    out.update(data_words(r))
    # a reconstructed folder's builds and dates are its generator's; the dates print the day only,
    # which a choice of the time of day (utc_offset_h, test_overhead_s) leaves alone (make marks)
    rows = r.cells(r.llama, "llama_bench")
    for key, columns in (("data_builds", ["build_number"]), ("data_dates", ["run_date"])):
        if key in out:
            out.cell(key, out[key], rows.union(columns))
    t, tests = per_test(r.llama), per_test_cells(r)
    pp, tg = usual_tests(r.llama)
    for role, test in (("pp", pp), ("tg", tg)):
        hit = t[t["test"] == test] if test else t.iloc[:0]
        if len(hit):
            row = hit.iloc[0]  # a build's name reads who wins (or comes last), a rate its place, a spread both ends
            reads = {"best_config": ("best_who",), "worst_config": ("worst_who",), "worst_tps": ("worst_avg_ts",),
                     "spread": ("best_avg_ts", "worst_avg_ts")}
            for key, column in TEST_GLUE[role].items():
                if column == "test":
                    out[key] = row[column]
                elif column == "best_tps":  # a published best is the write-up's (pipeline.finish)
                    out.cell(key, row[column], value_ids(r.value_ids, [best_name(test)]))
                else:
                    out.cell(key, row[column], tests.row(test, reads[column]))
    out["backends"] = int(r.llama["variant"].nunique()) if len(r.llama) else 0
    out["tests"] = int(r.llama["test_name"].nunique()) if len(r.llama) else 0
    out["winners"] = int(t["best_config"].nunique()) if len(t) else 0
    out.cell("envelope_note", (
        f"The {out['tests']} tests are won by {out['winners']} different builds, so the best-of "
        "figures describe no single build: each build alone reaches only the shares below."
        if out["winners"] > 1 else
        "One build wins every test, so the best-of figures are that build's own; the others "
        "reach the shares below."), tests.union("best_who"))  # which build wins each test
    if len(r.server):
        s, cells = r.server.iloc[0], r.cells(r.server, "runs")
        out.cell("server_input_len", int(s["input_len"]), cells.at(s.name, "input_len"))
        out.cell("server_requests", int(s["completed"]), cells.at(s.name, "completed"))
        out.cell("server_ttft_ms", float(s["median_ttft_s"]) * 1000, cells.at(s.name, "median_ttft_s"))
        out.cell("server_tpot_ms", float(s["median_tpot_s"]) * 1000, cells.at(s.name, "median_tpot_s"))
        out.cell("server_decode_tps", 1 / float(s["median_tpot_s"]), cells.at(s.name, "median_tpot_s"))
        out.cell("server_prefill_tps", float(s["prefill_tps"]), cells.at(s.name, "prefill_tps"))
        if "pp_best_tps" in out:
            out.of("prefill_ratio", out["server_prefill_tps"] / out["pp_best_tps"], "server_prefill_tps", "pp_best_tps")
            out.of("ttft_at_pp_rate_s", out["server_input_len"] / out["pp_best_tps"], "server_input_len", "pp_best_tps")
    if r.has("serving"):
        _serving_values(r, out)
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison, r.claim_ids))
    out.update({k: r.params[k] for k in ("agents", "answer_tokens", "prompt_tokens", "long_prompt_tokens")})
    for k, v in out.items():
        if isinstance(v, np.floating):
            out[k] = float(v)
    return out


def data_words(r: Results) -> dict[str, str]:
    """What the opening says about data of another setup than the write-up's: its label,
    models, builds, tests and dates, from study.yml and the llama-bench rows; and the
    write-up's own setup (published.yml), which the page's framing names as the write-up's."""

    lb = r.llama
    models = []
    for cid in r.roles.configs("backend"):
        c = r.config(cid)
        model, quant = str(c.get("model") or ""), str(c.get("quantisation") or "")
        models.append(model if not quant or quant in model else f"{model} at {quant}".strip())
    builds = {}
    for backend, number in zip(lb.get("backend", []), lb.get("build_number", [])):
        builds.setdefault(str(backend) if pd.notna(backend) else "backend unknown", set()).add(
            f"b{int(number)}" if pd.notna(number) else "build unknown")
    setup = r.published.setup.get("backend") if r.published.setup else None
    return {
        "data_label": r.data.study.label,
        "data_models": ", ".join(m for m in dict.fromkeys(models) if m) or "a model study.yml does not name",
        "data_builds": "; ".join(f"{b} {', '.join(sorted(n))}" for b, n in sorted(builds.items())) or "no build",
        "data_tests": _test_span(lb),
        "data_dates": _date_span(lb),
        "writeup_setup": describe_setup(setup if isinstance(setup, dict) else (setup or [{}])[0]) if setup
        else "a setup its published.yml does not state",
    }


def _test_span(lb: pd.DataFrame) -> str:
    """The tests, per series, as a range where there are several: 'pp1 to pp4096 (13 tests)',
    'pp512 at depths 0 to 65,536 (5 tests)'."""
    parts = []
    for family, mine in _families(_tests_in_order(lb) if len(lb) else []).items():
        if len(mine) <= 2:
            parts.append(" and ".join(mine))
        elif family.endswith(" @ depth"):
            parts.append(f"{family.split(' @')[0]} at depths {_size(mine[0], True):,} to {_size(mine[-1], True):,} "
                         f"({len(mine)} tests)")
        else:
            parts.append(f"{mine[0]} to {mine[-1]} ({len(mine)} tests)")
    return "; ".join(parts) or "no test"


def _date_span(lb: pd.DataFrame) -> str:
    """When the tests ran, from llama-bench's own test_time; unknown when it is not recorded."""
    times = pd.to_datetime(lb["test_time"], errors="coerce", utc=True).dropna() if "test_time" in lb else []
    if not len(times):
        return "on dates the files do not record"
    first, last = times.min().date(), times.max().date()
    return f"on {first}" if first == last else f"between {first} and {last}"


def _serving_values(r: Results, out: Glued) -> None:
    """The sequential time for `agents` agents and the fastest batched configuration's."""
    sv, n = serving(r), int(r.params["agents"])
    for prompt, key in ((r.params["prompt_tokens"], "strix_s"), (r.params["long_prompt_tokens"], "long_strix_s")):
        rows = sv[(sv["prompt_tokens"] == prompt) & (sv["strix_prefill"].isin(["", "llama-bench"]))]
        if len(rows) and pd.notna(rows["strix_s"].iloc[0]):
            out.cell(key, float(rows["strix_s"].iloc[0]), _strix_ids(r, prompt, "llama-bench"))
    long = int(r.params["long_prompt_tokens"])
    if long and prefill_test(r, long):
        out["long_pp_test"] = prefill_test(r, long)
        out["long_pp_basis"] = prefill_basis(r, long)
    rows = sv[(sv["prompt_tokens"] == r.params["prompt_tokens"]) & (sv["strix_prefill"].isin(["", "llama-bench"]))]
    if not len(rows) or "strix_s" not in out or not batched_shown(r):
        return  # beside a folder kept apart, the batched times are in a note, never in the prose
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
    out.cell("batched_s_ttft", secs + float(at["median_ttft_s"]), _h100_ids(r, cfg, n, prompt, ttft=True))
    out.of("batched_advantage", out["strix_s"] / secs, "strix_s", "batched_s")
    out.of("batched_advantage_ttft", out["strix_s"] / out["batched_s_ttft"], "strix_s", "batched_s_ttft")


def serving_models_note(r: Results) -> str:
    """Plain text naming the batched configurations that run another model than llama.cpp
    here: for them the times compare two setups, not two machines on one model."""

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
        "caveats": r.caveats, "key_figures": key_figures(r), "serving_points": serving_points(r),
    }


# ---- serving points for the synthesis's cross-study chart (benchbook.book.serving_points) ----

def serving_points(r: Results) -> pd.DataFrame:
    """Each llama-bench generation test (one sequence: the one user's rate is the aggregate)
    and each llama-server bench run as a point, every build its own; prefill and failed runs
    left out with the reason. The H100 runs this page reads are the H100 chapter's points."""
    kind = points.data_kind(r.data.study.reconstructed)
    configs = r.data.study.configs
    labels = {cid: config_label(cid, c) for cid, c in configs.items()}
    llama_cells, server_cells = r.cells(r.llama, "llama_bench"), r.cells(r.server, "runs")
    rows = points.llama_bench_points(STUDY, r.llama, llama_cells, configs, labels=labels,
                                     anchor="llama-bench-across-backends", kind=kind)
    for _, f in r.failed.iterrows():
        rows.append(points.left_out(STUDY, str(f["config"]), configs.get(str(f["config"]), {}),
                                    run=f"{f['source_file']}: {f.get('test') or 'llama-bench'}",
                                    reason=points.FAILED, label=labels.get(str(f["config"]), ""),
                                    anchor="llama-bench-across-backends", kind=kind))
    rows += points.bench_points(STUDY, r.server, server_cells, configs, labels=labels, kind=kind,
                                anchor="time-to-first-token-and-decode-step")
    return points.points_table(rows, {**llama_cells.why, **server_cells.why})


# ---- key figures for the synthesis chapter (benchbook.book.key_figures.KEY_FIGURES) ---------

def key_figures(r: Results) -> pd.DataFrame:
    """Strix Halo's rows: the best-of-backends llama-bench figures, and the llama-server run.

    llama-bench's tg test decodes at almost no context and its figure is the best of the
    backends per test (an envelope no single build reaches on every test); the llama-server
    run decodes after a 4k prompt, so its 1 / median TPOT includes the KV reads of that
    context. llama.cpp serves one request at a time here, so the best aggregate is the
    single stream.
    """

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

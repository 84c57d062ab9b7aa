"""Power sweep (the write-up: 4x RTX 3090): everything the chapter computes from live vLLM logs.

The unit of measurement is the engine stats window of a `vllm serve` log: one stats line,
whose rates average one stats interval. The interval is measured per log from its lines'
times (vllm_log.stats_intervals), never assumed: counts and energy per window use it. A
window is bucketed by its Running count; its power limit and power draw come from the
nvidia-smi log beside it (joined by time); its completions are the HTTP 200 chat
completion lines written since the previous stats line. Every table, figure and glued
number of the chapter is derived here from those three tidy tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np
import pandas as pd

from ...book import pipeline
from ...book import serving_points as points
from ...book.key_figures import key_figure_row, key_figures_table, speculative
from ...format import fmt_args, fmt_rate, platform_short
from ...ingest import nvidia_smi
from ...ingest.vllm_log import stats_intervals, with_intervals
from ...ledger import claims as claims_mod
from ...ledger.caveats import rule
from ...page.opening import opening_words
from ...study.contract import Missing, slug
from ...study.marks import Glued, Shown, rows_table, union

STUDY = "power-sweep"
NO_LIMIT = "limit unknown"  # the power key of windows whose limit no file gives
P95_METHOD = "lower"  # numpy rule for the window P95 (see the chapter's methods note)
SCOPES = {"c1to3": (1, 3), "c1to6": (1, 6), "c6to8": (6, 8)}
COMPLETION = ("POST", "/v1/chat/completions", 200)


@dataclass
class Results(pipeline.ChapterResults):
    windows: pd.DataFrame = field(default_factory=pd.DataFrame)  # every stats window, enriched
    models: pd.DataFrame = field(default_factory=pd.DataFrame)  # config -> prefix, label, cards, gpus
    limits: pd.DataFrame = field(default_factory=pd.DataFrame)  # per server log: manifest and nvidia-smi limits
    draw_ids: dict = field(default_factory=dict)  # window -> assumption ids of the GPU samples its draw reads

    @property
    def busy(self) -> pd.DataFrame:
        """Windows with at least one request running: the ones the tables bucket."""
        return self.windows[self.windows["running"] >= 1]


def analyse(data_dir, published_file=None, overhead_w: float = 0.0, directional_n: int = 5,
            mix_threshold: float = 0.2) -> Results:
    params = dict(overhead_w=float(overhead_w), directional_n=int(directional_n),
                  mix_threshold=float(mix_threshold))
    r = pipeline.start(STUDY, data_dir, published_file, params, results=Results)
    r.models = model_table(r)
    windows = with_intervals(r.data["windows"])  # timestamps filled by load.ingest_study
    windows, r.limits = join_power(windows, r.data["gpu_samples"], r.models, r.data.study)
    windows = join_completions(windows, r.data["access"])
    windows = windows.merge(r.models[["config", "prefix", "label"]], on="config", how="left")
    windows["per_request_tps"] = windows["generation_tps"] / windows["running"].where(windows["running"] > 0)
    windows["power_key"] = windows["limit_w"].map(lambda v: f"{int(round(v))}W" if pd.notna(v) else NO_LIMIT)
    r.windows = windows
    r.values = window_values(windows, r.models, params["overhead_w"])
    r.draw_ids = draw_ids(r)
    r.value_ids = window_value_ids(r)
    _refine_sections(r)
    pipeline.finish(r, caveats=data_caveats)
    r.comparison = label_rows(r.published, r.comparison)
    return r


def _refine_sections(r: Results) -> None:
    """Sections the logs allow but their windows do not fill."""
    def lacks(section, why):
        if r.sections.get(section) is None:
            r.sections[section] = Missing(r.spec.contract.section(section), [why])

    known = [k for k in limits_order(r) if k != NO_LIMIT]
    if r.busy.empty:
        for section in ("power", "concurrency", "energy", "models", "draw"):
            lacks(section, "stats windows with a request running")
    if len(known) < 2:
        lacks("power", "busy windows at two or more known power limits (study.yml power_limit_w, or an "
                       "nvidia-smi log with power.limit beside each server log)")
    if not known:
        lacks("energy", "a power limit for the busy windows")
    if len(busy_configs(r)) < 2:
        lacks("models", "busy windows of two or more models")
    if not r.busy["draw_w"].notna().any():
        lacks("draw", "GPU power draw joined to the windows (an nvidia-smi log with power.draw and timestamps "
                      "beside each server log, and log lines with a date)")


# ---------------------------------------------------------------- joining the three logs


def model_table(r: Results) -> pd.DataFrame:
    """One row per model (role model): value-name prefix, label, cards and the GPU indices it uses."""

    rows = []
    for cid in r.roles.configs("model"):
        cfg = r.config(cid)
        gpus = cfg.get("gpus")
        rows.append(dict(config=cid, prefix=slug(cid),
                         label=cfg.get("model_label") or cfg.get("label") or cfg.get("model") or cid,
                         cards=int(cfg.get("cards") or (len(gpus) if gpus else 1)),
                         gpus=tuple(int(g) for g in gpus) if gpus else None,
                         max_num_seqs=(cfg.get("serve_args") or {}).get("max_num_seqs")))
    return pd.DataFrame(rows, columns=["config", "prefix", "label", "cards", "gpus", "max_num_seqs"])


def _folder(path) -> str:
    return str(PurePosixPath(str(path)).parent)


POWER_LIMIT_COLUMNS = ["file", "config", "manifest_limit_w", "gpu_file", "nvidia_smi_limit_w", "cards", "other_cards",
                       "windows", "windows_joined", "join_note"]


def join_power(windows: pd.DataFrame, gpu: pd.DataFrame, models: pd.DataFrame,
               study) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each window's power limit and mean GPU draw, from the nvidia-smi log beside its log.

    The log beside a server log is the GPU log in the same folder (else the one with the
    same configuration, manifest limit and date). Only the configuration's GPUs count
    (study.yml `gpus`; all of them when absent). The limit is the median over those cards
    of the limit they reported during the window; the draw is the sum over the cards of
    their mean draw in the window (the samples in the log's measured stats interval before
    the stats line, or the latest sample within a minute when the log is sparser). A window
    of unknown length (a log with one stats line) gets the limit of the latest sample within
    a minute and no draw. A GPU log without an index column counts the GPUs it tells apart
    otherwise (nvidia_smi.gpu_key); the study's `gpus` cannot be picked from it.
    """
    out = windows.copy()
    for col in ("limit_w", "draw_w", "gpu_samples_n"):
        out[col] = np.nan
    out["limit_source"] = "manifest"
    out["gpu_file"] = None
    rows = []
    gpus_of = dict(zip(models["config"], models["gpus"]))
    for src, w in out.groupby("source_file", sort=False):
        cfg = w["config"].iloc[0]
        g = _gpu_file_for(src, w, gpu)
        manifest = float(pd.to_numeric(pd.Series([w["power_limit_w"].iloc[0]]), errors="coerce").iloc[0]) \
            if "power_limit_w" in w else np.nan
        rec = dict(file=src, config=cfg, manifest_limit_w=manifest, gpu_file=None, nvidia_smi_limit_w=np.nan,
                   cards=None, other_cards=None, windows=len(w), windows_joined=0, join_note="")
        if g is None or w["timestamp"].isna().all():
            out.loc[w.index, "limit_w"] = manifest
            if g is not None:  # a GPU log is there, but the log's lines carry no year to join by
                rec["gpu_file"] = g["source_file"].iloc[0]
                rec["join_note"] = "the server log's lines have no date (give the file a date in study.yml)"
            rows.append(rec)
            continue
        wanted = gpus_of.get(cfg)
        sel = g[g["gpu_index"].isin(wanted)] if wanted else g
        rec["gpu_file"] = g["source_file"].iloc[0]
        rec["cards"] = ", ".join(sorted(nvidia_smi.gpu_key(sel).dropna().unique(), key=_card_order))
        others = sorted(set(g["gpu_index"].dropna().unique()) - set(sel["gpu_index"].dropna().unique()))
        rec["other_cards"] = ", ".join(f"{i} ({n})" for i, n in
                                       g[g["gpu_index"].isin(others)].groupby("gpu_index")["name"].first().items())
        lim, draw, n = _per_window(w, sel)
        out.loc[w.index, "limit_w"] = np.where(np.isnan(lim), manifest, lim)
        out.loc[w.index, "draw_w"] = draw
        out.loc[w.index, "gpu_samples_n"] = n
        out.loc[w.index[~np.isnan(lim)], "limit_source"] = "nvidia-smi"
        out.loc[w.index, "gpu_file"] = rec["gpu_file"]
        busy = w["running"].to_numpy() >= 1
        joined = lim[busy]
        rec["nvidia_smi_limit_w"] = float(np.nanmedian(joined)) if np.isfinite(joined).any() else np.nan
        rec["windows_joined"] = int(np.isfinite(lim).sum())
        if not rec["windows_joined"]:
            rec["join_note"] = ("the GPU log has no index column, so the study's gpus cannot be picked from it"
                                if wanted and g["gpu_index"].isna().all() else
                                "no GPU sample falls in or within a minute of any stats window (another day or clock?)")
        rows.append(rec)
    limits = pd.DataFrame(rows, columns=None if rows else POWER_LIMIT_COLUMNS)  # (no server log: no row)
    diff = (limits["manifest_limit_w"].astype(float) - limits["nvidia_smi_limit_w"].astype(float)).abs()
    limits["agrees"] = pd.array(np.where(diff.isna(), None, diff < 0.5), dtype="boolean")
    return out, limits


def draw_ids(r: Results) -> dict:
    """Window -> the assumption ids its logged draw reads: the power_draw_w cells of the GPU
    log join_power took it from (every sample of that log, a conservative bound)."""
    gpu = r.data["gpu_samples"]
    if not r.assumptions_of() or not len(gpu) or "gpu_file" not in r.windows:
        return {}
    cells = r.cells(gpu, "gpu_samples")
    per_file = {f: cells.union("power_draw_w", g.index) for f, g in gpu.groupby("source_file", observed=True)}
    w = r.windows
    return {label: per_file.get(f, ()) for label, f, d in zip(w.index, w["gpu_file"], w["draw_w"])
            if pd.notna(d) and per_file.get(f)}


def _gpu_file_for(src: str, w: pd.DataFrame, gpu: pd.DataFrame) -> pd.DataFrame | None:
    if gpu.empty:
        return None
    files = pd.Series(gpu["source_file"].astype(str).unique())
    beside = files[files.map(_folder) == _folder(src)]
    here = gpu[gpu["source_file"].isin(beside)]
    if here.empty:
        keys = [k for k in ("config", "power_limit_w", "run_date") if k in gpu and k in w]
        mask = np.ones(len(gpu), dtype=bool)
        for k in keys:
            mask &= (gpu[k].astype(str) == str(w[k].iloc[0])).to_numpy()
        here = gpu[mask]
    if here.empty:
        return None
    first = here["source_file"].iloc[0]
    return here[here["source_file"] == first].dropna(subset=["timestamp"])


def _per_window(w: pd.DataFrame, g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median limit over cards, summed mean draw, samples used; per window (NaN if none)."""
    n = len(w)
    lim, draw, used = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n)
    ends = w["timestamp"].to_numpy(dtype="datetime64[ns]")
    length = w["interval_s"].to_numpy(dtype=float)  # the log's measured stats interval (NaN: unknown)
    g = g.sort_values("timestamp")
    ts = g["timestamp"].to_numpy(dtype="datetime64[ns]")
    idx = nvidia_smi.gpu_key(g).to_numpy(dtype=object)
    pw = g["power_draw_w"].to_numpy(dtype=float)
    pl = g["power_limit_w"].to_numpy(dtype=float)
    cards = [c for c in dict.fromkeys(idx) if not pd.isna(c)]
    for i in range(n):
        sl = _samples_in(ts, ends[i], length[i], len(cards))
        if sl is None:
            continue
        per_card_draw = [np.nanmean(pw[sl][idx[sl] == c]) for c in cards if (idx[sl] == c).any()]
        per_card_lim = [np.nanmedian(pl[sl][idx[sl] == c]) for c in cards if (idx[sl] == c).any()]
        if per_card_lim:
            lim[i] = float(np.median(per_card_lim))
            whole = len(per_card_draw) == len(cards) and np.isfinite(length[i])
            draw[i] = float(np.sum(per_card_draw)) if whole else np.nan
            used[i] = sl.stop - sl.start
    return lim, draw, used


def _samples_in(ts: np.ndarray, end, length: float, cards: int) -> slice | None:
    """The GPU samples of a window that ends at `end` and lasts `length` seconds: those
    inside it, else the latest ones within a minute (also for a window of unknown length);
    None without a time or a sample."""
    if np.isnat(end):
        return None
    hi = np.searchsorted(ts, end, "right")
    lo = np.searchsorted(ts, end - np.timedelta64(int(round(length * 1e9)), "ns"), "right") \
        if np.isfinite(length) else hi
    if hi == lo:  # no sample inside: the latest one within a minute
        lo = max(hi - cards, 0)
        if hi == 0 or end - ts[hi - 1] > np.timedelta64(60, "s"):
            return None
    return slice(lo, hi)


def _card_order(card: str):
    """GPU indices in numeric order, inferred GPUs ('1 of 2 ...') after them by their text."""
    return (0, int(card), "") if str(card).isdigit() else (1, 0, str(card))


def join_completions(windows: pd.DataFrame, access: pd.DataFrame) -> pd.DataFrame:
    """HTTP 200 chat completions written between the previous stats line and each one."""
    out = windows.copy()
    out["completions"] = 0
    if access.empty:
        return out
    method, path, status = COMPLETION
    done = access[(access["method"] == method) & (access["path"] == path) & (access["status"] == status)]
    counts = done.dropna(subset=["window_line"]).groupby(["source_file", "window_line"]).size()
    key = pd.MultiIndex.from_arrays([out["source_file"], out["line"].astype("Int64")])
    out["completions"] = counts.reindex(key).fillna(0).astype(int).to_numpy()
    return out


# ---------------------------------------------------------------- values (names as in published.yml)


def _p95(x: np.ndarray) -> float:
    return float(np.percentile(x, 95, method=P95_METHOD))


def per_minute(w: pd.DataFrame) -> float:
    """Completions per minute of the windows' time: their count over their summed length
    (each window lasts its log's measured stats interval); NaN when no length is known."""
    known = w["interval_s"].notna()
    seconds = float(w.loc[known, "interval_s"].sum())
    return 60.0 * float(w.loc[known, "completions"].sum()) / seconds if seconds > 0 else float("nan")


def scope_stats(w: pd.DataFrame) -> dict:
    """The statistics of one set of windows, under published.yml's metric names. Tokens,
    energy and completions per minute weigh each window by its length (its log's measured
    stats interval); windows of unknown length are left out of them."""
    n = len(w)
    out = {"gen_n": float(n)}
    if not n:
        return out
    g = w["generation_tps"].to_numpy(dtype=float)
    p = w["prompt_tps"].to_numpy(dtype=float)
    act = p[p > 0]
    out.update(gen_mean=float(g.mean()), gen_median=float(np.median(g)), gen_p95=_p95(g),
               gen_max=float(g.max()), gen_std=float(g.std(ddof=1)) if n > 1 else 0.0, gen_min=float(g.min()),
               per_request_mean=float(w["per_request_tps"].mean()),
               prefill_sustained_mean=float(p.mean()), prefill_sustained_median=float(np.median(p)),
               prefill_active_n=float(len(act)))
    if np.isfinite(cpm := per_minute(w)):
        out["completions_per_min"] = cpm
    if len(act):
        out.update(prefill_active_mean=float(act.mean()), prefill_active_median=float(np.median(act)))
    draw, length = w["draw_w"].to_numpy(dtype=float), w["interval_s"].to_numpy(dtype=float)
    ok = np.isfinite(draw) & np.isfinite(length)
    if ok.any():
        seconds = length[ok]
        out["measured_kw"] = float((draw[ok] * seconds).sum() / seconds.sum()) / 1000  # mean power over the time
        # tokens per kWh: the windows' tokens (rate x length) over their energy (draw x length)
        out["gen_per_kwh_measured"] = float((g[ok] * seconds).sum() / ((draw[ok] * seconds).sum() / 3.6e6))
    return out


def window_values(windows: pd.DataFrame, models: pd.DataFrame, overhead_w: float = 0.0) -> dict[str, float]:
    """Every value name published.yml uses, plus the chapter's own, from the windows."""
    out: dict[str, float] = {}
    busy = windows[windows["running"] >= 1]
    for _, m in models.iterrows():
        mine = windows[windows["config"] == m["config"]]
        if mine.empty:
            continue
        out[f"{m['prefix']}_gen_max"] = float(mine["generation_tps"].max())
        out[f"{m['prefix']}_prefill_max"] = float(mine["prompt_tps"].max())
        top = int(m["max_num_seqs"] or max(8, int(mine["running"].max())))
        for key, w in busy[busy["config"] == m["config"]].groupby("power_key"):
            p = f"{m['prefix']}_{key}"
            limit = float(w["limit_w"].median())
            if np.isfinite(limit):
                out[f"{p}_limit_w"] = limit
                out[f"{p}_gpu_kw"] = (m["cards"] * limit + overhead_w) / 1000
            _put(out, p, scope_stats(w))
            for c in range(1, max(top, int(w["running"].max())) + 1):
                _put(out, f"{p}_c{c}", scope_stats(w[w["running"] == c]))
            for scope, (lo, hi) in SCOPES.items():
                _put(out, f"{p}_{scope}", scope_stats(w[w["running"].between(lo, hi)]))
            for scope in ("c1to3", "c1to6"):
                if f"{p}_gpu_kw" not in out:
                    continue
                if f"{p}_{scope}_gen_mean" in out:
                    out[f"{p}_{scope}_gen_per_kw"] = out[f"{p}_{scope}_gen_mean"] / out[f"{p}_gpu_kw"]
                if f"{p}_{scope}_prefill_active_mean" in out:
                    out[f"{p}_{scope}_prefill_per_kw"] = out[f"{p}_{scope}_prefill_active_mean"] / out[f"{p}_gpu_kw"]
    known = stats_intervals(windows)["interval_s"].dropna()
    if len(known):
        out["stats_interval_s"] = float(np.median(known))  # the median over the logs' measured intervals
    return out


DRAW_VALUES = ("measured_kw", "gen_per_kwh_measured")  # scope_stats' values that read the logged draw


def window_value_ids(r: Results) -> dict:
    """The assumption ids behind window_values' names: those of the logged draw, per scope
    (the same groups of windows as window_values)."""
    if not r.draw_ids:
        return {}
    out, busy = {}, r.busy

    def put(prefix, w):
        ids = union(*(r.draw_ids.get(label, ()) for label in w.index))
        for k in DRAW_VALUES if ids else ():
            out[f"{prefix}_{k}"] = ids

    for m in r.models.itertuples():
        for key, w in busy[busy["config"] == m.config].groupby("power_key"):
            p = f"{m.prefix}_{key}"
            put(p, w)
            for c, g in w.groupby("running"):
                put(f"{p}_c{int(c)}", g)
            for scope, (lo, hi) in SCOPES.items():
                put(f"{p}_{scope}", w[w["running"].between(lo, hi)])
    return out


def _put(out: dict, prefix: str, stats: dict) -> None:
    for k, v in stats.items():
        out[f"{prefix}_{k}"] = v


# ---------------------------------------------------------------- published vs reproduced


def label_rows(published, comparison: pd.DataFrame) -> pd.DataFrame:
    """Name each compared cell's row by all its label cells ('200W, 3'), in table order."""
    labels = []
    for t in published.tables:
        for cells, exprs in zip(t.rows, t.values):
            label = ", ".join(c for c, e in zip(cells, exprs) if e is None) or cells[0]
            labels += [label] * sum(1 for e in exprs if e is not None)
    out = comparison.copy()
    if len(labels) == len(out):
        out["row"] = labels
    return out


# ---------------------------------------------------------------- tables shown in the chapter


def _label(r: Results, config: str) -> str:
    return r.models.set_index("config")["label"].get(config, config)


def _dagger(r: Results, n: int) -> str:
    return f"{n} †" if 0 < n <= r.params["directional_n"] else str(n)


def busy_configs(r: Results) -> list[str]:
    """The models with at least one busy window, in study.yml order: the per-model tables."""
    busy = set(r.busy["config"]) if len(r.windows) else set()
    return [c for c in r.models["config"] if c in busy]


def limits_order(r: Results) -> list[str]:
    """Power keys of the busy windows, lowest limit first; windows of no known limit last."""
    keys = r.busy["power_key"].dropna().unique() if len(r.windows) else []
    return sorted(keys, key=lambda k: (k == NO_LIMIT, float(k.rstrip("W")) if k != NO_LIMIT else 0.0))


def configs_table(r: Results) -> pd.DataFrame:
    rows = []
    for cid, c in r.data.study.configs.items():
        rows.append(dict(config=cid, model=c.get("model"), architecture=c.get("model_arch"),
                         quantisation=c.get("quantisation"), speculative=c.get("speculative"),
                         kv_dtype=c.get("kv_dtype"),
                         engine=f"{c.get('engine', '')} {c.get('engine_version', '')}".strip(),
                         cards=", ".join(str(g) for g in c.get("gpus") or []),
                         serve_args=fmt_args(c.get("serve_args"))))
    return pd.DataFrame(rows)


def files_table(r: Results) -> pd.DataFrame:
    """Per server log: what it holds, and where its power limit came from."""
    boot = r.data["boot"]
    starts = (boot[boot["fact"] == "kv_cache_tokens"].groupby("source_file").size() if len(boot)
              else pd.Series(dtype=int))
    cells = r.cells(boot, "boot")  # a start-up is a fact of the log: the generator may have made it (a restart)
    start_ids = {f: cells.union("fact", g.index) for f, g in boot[boot["fact"] == "kv_cache_tokens"].groupby(
        "source_file", observed=True)} if len(boot) else {}
    rows = []
    for rec in r.limits.itertuples():
        w = r.windows[r.windows["source_file"] == rec.file]
        busy = w[w["running"] >= 1]
        rows.append({
            "model": _label(r, rec.config),
            "date": str(w["run_date"].iloc[0]) if len(w) and pd.notna(w["run_date"].iloc[0]) else "–",
            "limit (study.yml)": fmt_rate(rec.manifest_limit_w, 0),
            "limit (nvidia-smi)": fmt_rate(rec.nvidia_smi_limit_w, 0),
            "stats lines": len(w), "stats interval": _interval_text(w), "busy windows": len(busy),
            "completions": int(busy["completions"].sum()),
            "start-ups": Shown(int(starts.get(rec.file, 0)), start_ids.get(rec.file, ())),
            "cards summed": rec.cards if _text(rec.cards) else "–",
            "cards left out": rec.other_cards if _text(rec.other_cards) else "–",
            "server log": PurePosixPath(rec.file).as_posix(),
            "GPU log beside it": (f"{PurePosixPath(rec.gpu_file).name}: {rec.windows_joined} windows joined"
                                  + (f" ({rec.join_note})" if _text(rec.join_note) else ""))
            if _text(rec.gpu_file) else "none",
        })
    return rows_table(rows, r.assumed_why)


def _text(value) -> bool:
    """A cell holds text (pandas' string columns hold a missing value as NaN, not None)."""
    return isinstance(value, str) and bool(value)


def _interval_text(w: pd.DataFrame) -> str:
    """A log's measured stats interval as the files table shows it ('10 s', 'unknown')."""
    values = sorted(set(w["interval_s"].dropna())) if len(w) else []
    return " / ".join(f"{v:g} s" for v in values) if values else "unknown"


def ingest_table(r: Results) -> pd.DataFrame:
    return r.ingest_report(["file", "format", "read", "ignored", "reasons", "notes"])


def summary_table(r: Results, config: str) -> pd.DataFrame:
    """Power vs performance: one row per limit, over every busy window of the model."""
    prefix = r.models.set_index("config")["prefix"][config]
    rows = []
    for key in limits_order(r):
        p = f"{prefix}_{key}"
        if f"{p}_gen_n" not in r.values:
            continue
        v = r.values
        rows.append({"power limit": key, "windows": int(v[f"{p}_gen_n"]),
                     "avg gen t/s": fmt_rate(v.get(f"{p}_gen_mean"), 1),
                     "median gen": fmt_rate(v.get(f"{p}_gen_median"), 1),
                     "P95 gen": fmt_rate(v.get(f"{p}_gen_p95"), 1),
                     "avg prefill (active)": fmt_rate(v.get(f"{p}_prefill_active_mean"), 1),
                     "median prefill (active)": fmt_rate(v.get(f"{p}_prefill_active_median"), 1),
                     "avg prefill (all windows)": fmt_rate(v.get(f"{p}_prefill_sustained_mean"), 1),
                     "completions/min": fmt_rate(v.get(f"{p}_completions_per_min"), 1),
                     "GPU draw W (logged)": Shown(fmt_rate(1000 * v[f"{p}_measured_kw"], 0) if f"{p}_measured_kw" in v
                                                  else "–", r.value_ids.get(f"{p}_measured_kw", ()))})
    return rows_table(rows, r.assumed_why)


CONCURRENCY_COLUMNS = ["power limit", "concurrent", "windows", "avg gen t/s", "median", "peak", "per-request t/s",
                       "std", "min", "share of windows"]


def concurrency_table(r: Results, config: str) -> pd.DataFrame:
    """Generation by Running count; per-request t/s is the average divided by the count."""
    rows = []
    busy = r.busy[r.busy["config"] == config]
    for key in limits_order(r):
        w = busy[busy["power_key"] == key]
        for c, g in w.groupby("running"):
            s = scope_stats(g)
            rows.append({"power limit": key, "concurrent": int(c), "windows": _dagger(r, len(g)),
                         "avg gen t/s": fmt_rate(s["gen_mean"], 0), "median": fmt_rate(s["gen_median"], 0),
                         "peak": fmt_rate(s["gen_max"], 0), "per-request t/s": fmt_rate(s["gen_mean"] / c, 0),
                         "std": fmt_rate(s["gen_std"], 0), "min": fmt_rate(s["gen_min"], 0),
                         "share of windows": f"{len(g) / len(w):.0%}"})
    return pd.DataFrame(rows, columns=None if rows else CONCURRENCY_COLUMNS)


def _models_by_concurrency(r: Results, key: str, cells) -> pd.DataFrame:
    """One power limit, a row per number of requests running, the models side by side:
    `cells(label, windows, running)` gives one model's columns from its windows there."""
    w = r.busy[r.busy["power_key"] == key]
    rows = []
    for c in sorted(w["running"].unique()):
        row = {"concurrent": int(c)}
        for cid in busy_configs(r):
            row.update(cells(_label(r, cid), w[(w["config"] == cid) & (w["running"] == c)], c))
        rows.append(row)
    return pd.DataFrame(rows)


def _mean_n(r: Results, g: pd.DataFrame, column: str) -> str:
    """A column's mean over windows with their number, '–' without any."""
    return f"{g[column].mean():,.0f} ({_dagger(r, len(g))})" if len(g) else "–"


def threeway_table(r: Results, key: str) -> pd.DataFrame:
    """One power limit, the models side by side: average aggregate and per-request t/s."""
    return _models_by_concurrency(r, key, lambda lab, g, c: {
        f"{lab} t/s (n)": _mean_n(r, g, "generation_tps"),
        f"{lab} per request": fmt_rate(g["generation_tps"].mean() / c, 0) if len(g) else "–"})


def prefill_table(r: Results, key: str) -> pd.DataFrame:
    """Sustained (all windows) and active-only (prefill > 0) prefill by concurrency."""
    return _models_by_concurrency(r, key, lambda lab, g, c: {
        f"{lab} all windows (n)": _mean_n(r, g, "prompt_tps"),
        f"{lab} active (n)": _mean_n(r, g[g["prompt_tps"] > 0], "prompt_tps")})


def completions_table(r: Results) -> pd.DataFrame:
    """Completions per minute by concurrency, one column per model and limit."""
    rows = []
    busy = r.busy
    for c in sorted(busy["running"].unique()):
        row = {"concurrent": int(c)}
        for cid in busy_configs(r):
            for key in limits_order(r):
                g = busy[(busy["config"] == cid) & (busy["power_key"] == key) & (busy["running"] == c)]
                lab = f"{_label(r, cid)} {key}"
                cpm = per_minute(g) if len(g) else float("nan")
                row[lab] = (f"{cpm:.1f}" + (" †" if len(g) <= r.params["directional_n"] else "")
                            if np.isfinite(cpm) else "–")
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["concurrent"])


TOKENS_PER_KW_COLUMNS = ["model", "power limit", "concurrent", "windows", "avg gen t/s", "gen t/kW (nominal)",
                         "avg prefill t/s (active)", "prefill t/kW (nominal)", "avg prefill t/s (all windows)",
                         "nominal kW", "measured GPU kW", "gen tokens/kWh (logged draw)"]


def tokens_per_kw_table(r: Results) -> pd.DataFrame:
    """Generated and prefilled tokens per kW of GPU power: nominal (cards x limit [+ overhead])
    as the write-up counts it, and per kWh from the measured draw of the same windows."""
    rows = []
    for _, m in r.models.iterrows():
        for key in limits_order(r):
            p = f"{m['prefix']}_{key}"
            if f"{p}_gpu_kw" not in r.values:
                continue
            for scope, label in (("c1to3", "1-3"), ("c1to6", "1-6")):
                v = r.values
                if not v.get(f"{p}_{scope}_gen_n"):
                    continue
                rows.append({"model": m["label"], "power limit": key, "concurrent": label,
                             "windows": int(v[f"{p}_{scope}_gen_n"]),
                             "avg gen t/s": fmt_rate(v.get(f"{p}_{scope}_gen_mean"), 0),
                             "gen t/kW (nominal)": fmt_rate(v.get(f"{p}_{scope}_gen_per_kw"), 0),
                             "avg prefill t/s (active)": fmt_rate(v.get(f"{p}_{scope}_prefill_active_mean"), 0),
                             "prefill t/kW (nominal)": fmt_rate(v.get(f"{p}_{scope}_prefill_per_kw"), 0),
                             "avg prefill t/s (all windows)": fmt_rate(v.get(f"{p}_{scope}_prefill_sustained_mean"), 0),
                             "nominal kW": fmt_rate(v[f"{p}_gpu_kw"], 2),
                             "measured GPU kW": Shown(fmt_rate(v.get(f"{p}_{scope}_measured_kw"), 2),
                                                      r.value_ids.get(f"{p}_{scope}_measured_kw", ())),
                             "gen tokens/kWh (logged draw)": Shown(
                                 fmt_rate(v.get(f"{p}_{scope}_gen_per_kwh_measured"), 0),
                                 r.value_ids.get(f"{p}_{scope}_gen_per_kwh_measured", ()))})
    return rows_table(rows, r.assumed_why, columns=None if rows else TOKENS_PER_KW_COLUMNS)


def window_mix(r: Results) -> pd.DataFrame:
    """Share of each model's busy windows at each concurrency, per limit (long form)."""
    busy = r.busy
    out = busy.groupby(["config", "power_key", "running"]).size().rename("windows").reset_index()
    out["share"] = out["windows"] / out.groupby(["config", "power_key"])["windows"].transform("sum")
    out["model"] = out["config"].map(lambda c: _label(r, c))
    return out


def mix_table(r: Results) -> pd.DataFrame:
    mix = window_mix(r)
    wide = mix.pivot_table(index="running", columns=["model", "power_key"], values="share", fill_value=0.0)
    wide.columns = [f"{m} {k}" for m, k in wide.columns]
    wide = wide[[c for m in r.models["label"] for k in limits_order(r) for c in [f"{m} {k}"] if c in wide.columns]]
    shown = wide.map(lambda v: f"{v:.0%}" if v else "–")
    shown.insert(0, "concurrent", wide.index.astype(int))
    return shown.reset_index(drop=True)


def mix_distances(r: Results) -> pd.DataFrame:
    """Total variation distance between two models' concurrency mixes at one limit (0: the
    same mix, 1: no concurrency level in common)."""
    mix = window_mix(r)
    rows = []
    models = list(r.models["config"])
    for key in limits_order(r):
        at = mix[mix["power_key"] == key].pivot_table(index="running", columns="config", values="share", fill_value=0.0)
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                if a in at and b in at:
                    rows.append(dict(power=key, a=_label(r, a), b=_label(r, b),
                                     distance=0.5 * float((at[a] - at[b]).abs().sum())))
    return pd.DataFrame(rows, columns=["power", "a", "b", "distance"])


# ---------------------------------------------------------------- caveats raised by rules


def data_caveats(r: Results) -> list[dict]:
    """Caveats whose condition the data meets, each with its evidence."""
    out = []
    for check in (_reconstructed, _idle_models, _live, _directional, _mixes, _straddling, _tails, _draw_vs_limit,
                  _limit_source, _other_cards, _restarts, _prefix_cache, _access_lines, _p95_rule):
        out += check(r)
    return out


def _reconstructed(r):
    s = r.data.study
    if not s.reconstructed:
        return []
    return [rule("reconstructed", (
        f"The raw files ({s.label}) are reconstructed from the published tables, not measured: agreement "
        "with the write-up is by construction. The consistency checks between published numbers remain "
        "informative."))]


def _idle_models(r):
    """Models without busy windows: those whose log shows no request running, and those with
    no server log at all (an nvidia-smi log alone describes a machine's GPUs, not a model)."""
    logged = {e.config for e in r.data.study.run_entries() if e.context.get("kind") == "server-log"}
    busy = set(busy_configs(r))
    idle = [c for c in r.models["config"] if c not in busy]
    quiet, unlogged = [c for c in idle if c in logged], [c for c in idle if c not in logged]
    out = []
    if quiet:
        out.append(rule("no-busy-windows", (
            f"{', '.join(_label(r, c) for c in quiet)}: no stats line of the log shows a request running, so the "
            "model has no row in the tables below (its idle lines are counted in the files table).")))
    if unlogged:
        out.append(rule("no-server-log", (
            f"{', '.join(_label(r, c) for c in unlogged)}: no server log, so no windows and no row in the tables "
            "below. An nvidia-smi log is joined to the server log in its folder, or of its configuration: give "
            "its file the configuration of the server it was logged beside (study.yml `files[].config`).")))
    return out


def _live(r):
    busy = r.busy
    if busy.empty:
        return []
    n = busy.groupby(["config", "power_key", "running"]).size()
    held = f"{n.min()} windows each" if n.min() == n.max() else f"between {n.min()} and {n.max()} windows"
    return [rule("live-workload", (
        f"The {len(busy):,} windows come from live agent traffic: how long each model ran at each concurrency "
        f"was not controlled, so cells hold {held}, and requests of every length (long prompts, short tool "
        "calls) are mixed in each."))]


def _directional(r):
    k = r.params["directional_n"]
    n = r.busy.groupby(["config", "power_key", "running"]).size()
    few = n[n <= k]
    if few.empty:
        return []
    ex = ", ".join(f"{_label(r, c)} {p} at {int(run)} ({v})" for (c, p, run), v in few.head(6).items())
    longest = r.busy["interval_s"].max()
    span = (f" {k} windows are at most {k * longest:.0f} seconds of one workload (the longest stats interval "
            "measured here)." if np.isfinite(longest) else "")
    return [rule("few-windows", (
        f"{len(few)} of {len(n)} concurrency cells rest on {k} windows or fewer (marked † in the tables; "
        f"e.g. {ex}); read them as directional.{span}"))]


def _mixes(r):
    d = mix_distances(r)
    far = d[d["distance"] > r.params["mix_threshold"]]
    if far.empty:
        return []
    mix = window_mix(r)
    top = mix.loc[mix.groupby(["config", "power_key"])["share"].idxmax()]
    modes = "; ".join(f"{_label(r, row.config)} {row.power_key}: {row.share:.0%} at {int(row.running)}"
                      for row in top.itertuples())
    pooled = _pooled_cross_model_claims(r)
    text = (f"The models spent their windows at different concurrency mixes (largest share per model and limit: "
            f"{modes}). At {len(far)} model pairs and limits the mixes differ by more than "
            f"{r.params['mix_threshold']:.0%} (total variation distance up to {far['distance'].max():.2f}), so an "
            "overall average per model compares different workloads; compare cell by cell (same concurrency).")
    if pooled:
        text += f" Claims that compare overall averages across models: {', '.join(pooled)}."
    return [rule("different-mixes", text)]


def _pooled_cross_model_claims(r) -> list[str]:
    import re

    ids = []
    for c in r.published.claims:
        names = re.findall(r"(q\d+_\d+b)_\d+W_(?:gen_mean|prefill_active_mean|prefill_sustained_mean)\b",
                           str(c.get("recompute", "")))
        if len(set(names)) >= 2:
            ids.append(c["id"])
    return ids


def _straddling(r):
    w = r.windows.sort_values(["source_file", "line"])
    gap = w["gap_s"]  # since the previous line of the same engine
    engines = [w["source_file"].astype(str), w["process"].astype(str), w["engine"].astype(str)]
    prev = w.groupby(engines)["running"].shift(1)
    busy = w["running"] >= 1
    opens = busy & ((gap > 1.5 * w["interval_s"]) | gap.isna() | (prev == 0))  # a line or more missing before it
    changed = busy & ~opens & (prev != w["running"])
    if not busy.any():
        return []
    return [rule("windows-straddle", (
        f"vLLM's Running count is a snapshot at the end of each window while the throughputs average the whole "
        f"stats interval: {int(changed.sum())} busy windows ({changed.sum() / busy.sum():.0%}) follow a different "
        "count, and "
        f"{int(opens.sum())} ({opens.sum() / busy.sum():.0%}) open a burst after an idle spell, so part of their "
        "time ran at another concurrency or none."))]


def _tails(r):
    w = r.windows
    tail = w[(w["running"] == 0) & (w["generation_tps"] > 0)]
    if tail.empty:
        return []
    share = tail["generation_tps"].sum() / w["generation_tps"].sum()
    return [rule("burst-ends", (
        f"{len(tail)} windows log Running 0 although tokens were generated in them (the last requests of a burst "
        f"finished before the line was written); they belong to no concurrency cell and hold {share:.1%} of the "
        "generated tokens."))]


def _draw_vs_limit(r):
    b = r.busy.dropna(subset=["draw_w", "limit_w"])
    if b.empty:
        return []
    cards = b["config"].map(r.models.set_index("config")["cards"])
    b = b.assign(share=b["draw_w"] / (cards * b["limit_w"]))
    by = b.groupby("power_key")["share"].mean()
    text = ", ".join(f"{k}: {by[k]:.0%}" for k in limits_order(r) if k in by)
    return [rule("limit-is-not-draw", (
        "Tokens per kW in the write-up divide by cards x power limit, but a limit is a ceiling: in busy windows "
        f"the cards drew on average this share of it ({text}). The logged-draw columns use the nvidia-smi draw; "
        "neither counts CPU, memory or power-supply losses (parameter overhead_w adds a fixed figure)."),
        (("gpu_samples.power_draw_w",), None))]


def _limit_source(r):
    lim = r.limits
    if lim.empty:
        return []
    out = []
    unjoined = lim[lim["gpu_file"].notna() & (lim["windows_joined"] == 0)]
    for row in unjoined.itertuples():
        out.append(rule("gpu-log-joins-nothing", (
            f"The nvidia-smi log {row.gpu_file} beside {row.file} joins 0 of its {row.windows} windows: "
            f"{row.join_note}. Its samples give neither a power limit nor a draw for that log.")))
    missing = lim[lim["gpu_file"].isna()]
    given = missing[missing["manifest_limit_w"].notna()]
    if len(given):
        out.append(rule("limit-from-manifest", (
            f"{len(given)} server logs have no nvidia-smi log beside them; their power limit is the study.yml value "
            f"({', '.join(given['file'])})")))
    unknown = lim[lim["manifest_limit_w"].isna() & (lim["windows_joined"] == 0)]
    if len(unknown):
        out.append(rule("limit-unknown", (
            f"No power limit is known for {len(unknown)} server log(s) ({', '.join(unknown['file'])}): neither "
            "study.yml nor a joined nvidia-smi log gives one, so their windows are grouped as 'limit unknown' and "
            "left out of the power and energy figures.")))
    bad = lim[(lim["agrees"] == False)]  # noqa: E712
    if len(bad):
        detail = "; ".join(f"{b.file}: study.yml {b.manifest_limit_w:.0f} W, nvidia-smi {b.nvidia_smi_limit_w:.0f} W"
                           for b in bad.itertuples())
        out.append(rule("limit-mismatch", (
            f"The power limit the cards reported differs from the one study.yml gives ({detail}); the tables use "
            "the nvidia-smi value.")))
    return out


def _other_cards(r):
    lim = r.limits.dropna(subset=["other_cards"])
    lim = lim[lim["other_cards"].astype(str).str.len() > 0]
    if lim.empty:
        return []
    cards = sorted(set(lim["other_cards"]))
    return [rule("other-cards", (
        f"The nvidia-smi logs also list cards the server does not use ({'; '.join(cards)}); their draw is left out "
        "of the power figures (study.yml `gpus`)."))]


def _restarts(r):
    boot = r.data["boot"]
    if boot.empty:
        return []
    starts = boot[boot["fact"] == "kv_cache_tokens"].groupby("source_file").size()
    many = starts[starts > 1]
    if many.empty:
        return []
    return [rule("engine-restarts", (
        f"{len(many)} server logs contain more than one engine start-up "
        f"({', '.join(f'{f} ({n})' for f, n in many.items())}): "
        "the engine was started again within one log (after a crash or by hand; the lines before each start say "
        "which), so requests in flight then may have failed and a burst may end without its usual last lines."),
        (("boot.fact",), None))]


def _prefix_cache(r):
    b = r.busy.dropna(subset=["prefix_hit_rate"])
    if b.empty:
        return []
    by = b.groupby("config")["prefix_hit_rate"].mean()
    text = ", ".join(f"{_label(r, c)} {v:.0%}" for c, v in by.items())
    return [rule("prefix-cache", (
        f"The logged prefix-cache hit rate averages {text}: prompt throughput counts only the tokens computed, so "
        "prefill rates describe the uncached part of each prompt, not the prompt length agents send."),
        (("windows.prefix_hit_rate",), None))]


def _access_lines(r):
    a = r.data["access"]
    if a.empty:
        return []
    method, path, status = COMPLETION
    post = a[(a["method"] == method) & (a["path"] == path)]
    failed = post[post["status"] != status]
    loose = post[(post["status"] == status) & post["window_line"].isna()]
    text = ("Completions are uvicorn access lines, which carry no time: each counts toward the next stats line. "
            "uvicorn writes the line when the response starts, which for a streamed response is before its "
            "tokens, so the count is of started responses when clients stream.")
    if len(failed):
        text += f" {len(failed)} chat requests answered with an error status are not counted."
    if len(loose):
        text += f" {len(loose)} completion lines after a log's last stats line belong to no window."
    return [rule("access-lines", text)]


def _p95_rule(r):
    return [rule("p95-rule", (
        f"P95 over windows is numpy's '{P95_METHOD}' rule (the sorted value at rank floor(0.95 (n-1))): linear "
        "interpolation cannot give one of the published P95 values together with the published cell peaks "
        "(PROVENANCE.md), the 'lower' rule can."))]


# ---------------------------------------------------------------- glue and downloads


def glue_values(r: Results) -> dict:
    """Numbers the prose quotes, named by role so the prose stays true on other data; a
    number of a section the data cannot fill is not computed (its prose is dropped)."""
    v = r.values
    out = Glued(r.assumed_why)
    out.update(opening_words(r))  # the opening on data of another setup
    out.update({"windows_total": int(len(r.windows)), "busy_total": int(len(r.busy)),
                "logs_n": int(len(r.limits)), "models_n": int(len(r.models)),
                "directional_n": r.params["directional_n"], "overhead_w": r.params["overhead_w"]})
    # the opening sentence of "What was measured" (Markdown: its numbers bold, as glued
    # numbers are elsewhere); without a server log, no sentence of zeros
    n = out["logs_n"]
    out["windows_md"] = (f"The **{n}** server log{' holds' if n == 1 else 's hold'} **{out['windows_total']}** stats "
                         f"lines, of which **{out['busy_total']}** were written while at least one request was running."
                         if n else "This data holds no server log, so there is no stats line to count.")
    cards = sorted(set(int(c) for c in r.models["cards"]))
    out["cards_text"] = " or ".join(str(c) for c in cards) + (" card" if cards == [1] else " cards")
    keys = [k for k in limits_order(r) if k != NO_LIMIT]
    if r.has("power"):
        out["limit_lo"], out["limit_hi"] = keys[0], keys[-1]
        gains = {}
        for m in r.models.itertuples():
            lo, hi = v.get(f"{m.prefix}_{keys[0]}_gen_mean"), v.get(f"{m.prefix}_{keys[-1]}_gen_mean")
            if lo and hi:
                gains[m.label] = hi / lo - 1
        if gains:
            out.update(gain_min=min(gains.values()), gain_max=max(gains.values()),
                       gain_min_label=min(gains, key=gains.get), gain_max_label=max(gains, key=gains.get),
                       gain_models=len(gains))
    if r.has("draw") and r.has("energy"):
        busy = r.busy.dropna(subset=["draw_w", "limit_w"])
        if len(busy):
            n_cards = busy["config"].map(r.models.set_index("config")["cards"])
            out.cell("draw_share", float((busy["draw_w"] / (n_cards * busy["limit_w"])).mean()),
                     union(*(r.draw_ids.get(label, ()) for label in busy.index)))
    n = r.busy.groupby(["config", "power_key", "running"]).size()
    out["cells_n"], out["cells_directional"] = int(len(n)), int((n <= r.params["directional_n"]).sum())
    out.update(claims_mod.ledger_glue(r.ledger, r.comparison, r.claim_ids))
    if "stats_interval_s" in v:
        out["stats_interval_s"] = v["stats_interval_s"]
    out["stats_interval_md"] = interval_sentence(stats_intervals(r.windows))
    return out


def interval_sentence(intervals: pd.DataFrame) -> str:
    """What the page says of the stats interval, from each log's measured one (Markdown, its
    numbers bold like the other glued sentences)."""
    known = intervals.dropna(subset=["interval_s"])
    unknown = intervals[intervals["interval_s"].isna()]
    text = ""
    if len(known):
        logs = known.groupby("interval_s")["source_file"].nunique()
        each = " and ".join(f"every **{v:g}** seconds in **{n}** log{'s' if n != 1 else ''}" for v, n in logs.items())
        if len(logs) == 1:
            each = f"every **{logs.index[0]:g}** seconds"
        lo, hi = known["q1_s"].min(), known["q3_s"].max()
        spread = (f"at least half of each log's gaps are exactly {lo:g} s" if lo == hi else
                  f"the middle half of each log's gaps lies within {lo:g}–{hi:g} s")
        text = (f"The stats lines come {each}: the interval is measured from each log's own times (the median gap "
                f"between consecutive stats lines of one engine, over **{int(known['gaps'].sum()):,}** gaps; "
                f"{spread}). A window's tokens, energy and completions per minute use its log's interval.")
    if len(unknown):
        n = unknown["source_file"].nunique()
        text += (f" The interval of **{n}** log{'s' if n != 1 else ''} is unknown (fewer than two stats lines of an "
                 "engine): their windows have no length, so they count in the rates but not in completions per "
                 "minute, tokens or energy.")
    return text.strip() or "No stats line, so no stats interval to measure."


WINDOW_COLUMNS = ["source_file", "line", "time", "timestamp", "gap_s", "interval_s", "config", "label", "power_limit_w",
                  "limit_w", "limit_source", "running", "waiting", "prompt_tps", "generation_tps", "per_request_tps",
                  "kv_usage", "prefix_hit_rate", "completions", "draw_w", "gpu_samples_n", "gpu_file"]


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    """The chapter's tidy tables, as offered for download."""
    w = r.windows[[c for c in WINDOW_COLUMNS if c in r.windows]]
    return {
        "windows": w, "access": r.data["access"], "power_limits": r.limits,
        "concurrency": pd.concat([concurrency_table(r, c).assign(model=_label(r, c)) for c in r.models["config"]]
                                 or [pd.DataFrame(columns=[*CONCURRENCY_COLUMNS, "model"])], ignore_index=True),
        "completions_per_minute": completions_table(r), "tokens_per_kw": tokens_per_kw_table(r),
        "window_mix": window_mix(r), "published_vs_reproduced": r.comparison, "claims": r.ledger,
        "caveats": r.caveats, "key_figures": key_figures(r), "serving_points": serving_points(r),
    }


# ---- key figures for the synthesis chapter (benchbook.book.key_figures.KEY_FIGURES) ---------

# ---- serving points for the synthesis's cross-study chart (benchbook.book.serving_points) ----

LOG_WINDOWS = ("server-log windows record the aggregate rate and how many requests were running, "
               "not any request's own rate")


def serving_points(r: Results) -> pd.DataFrame:
    """Per model, power limit and number of requests running, the live windows there. With one
    request running the log says one stream, so that window's generation rate is both the
    user's and the aggregate: a point (the mean over those windows). With more, the log gives
    no request's own rate (aggregate ÷ running would assume equal shares and a count that held
    all window long), so those buckets are left out."""
    kind = points.data_kind(r.data.study.reconstructed)
    cells = r.cells(r.windows, "windows")
    rows = []
    for (cid, key, running), w in r.busy.groupby(["config", "power_key", "running"], sort=True):
        c = r.data.study.configs.get(cid, {})
        limit = w["limit_w"].median()
        label = f"{platform_short(c)} " + (f"at {int(limit)} W" if pd.notna(limit) else "(power limit unknown)") \
            + f", {_label(r, cid)}"
        at = dict(run=f"{cid}@{key}: {len(w)} windows with {int(running)} running", label=label,
                  anchor="generation-by-concurrency", kind=kind)
        if running != 1:
            rows.append(points.left_out(STUDY, f"{cid}@{key}", c, reason=LOG_WINDOWS, load="concurrency",
                                        concurrency=int(running), **at))
            continue
        gen = Shown(float(w["generation_tps"].mean()), cells.union("generation_tps", w.index))
        rows.append(points.point(STUDY, f"{cid}@{key}", c, load="single-stream", concurrency=1, per_user=gen,
                                 aggregate=gen, basis=f"mean generation t/s of {len(w)} server-log windows with "
                                                      "one request running", **at))
    return points.points_table(rows, cells.why)


def _acceptance_length(r: Results, spec: pd.DataFrame, w: pd.DataFrame) -> Shown:
    """1 + accepted / drafts over the SpecDecoding lines of these windows' logs, with the
    ids of the cells it reads (NaN without drafts)."""
    s = spec[spec["source_file"].isin(w["source_file"].unique())]
    # drafts per line: as logged, or accepted / (acceptance length - 1) where only those are printed
    drafts = s["num_drafts"].astype("Float64").fillna(
        s["accepted_tokens"].astype("Float64") / (s["mean_acceptance_length"].astype("Float64") - 1))
    if not len(s) or float(drafts.sum()) <= 0:
        return Shown(float("nan"))
    ids = r.cells(s, "spec_decode").union(("accepted_tokens", "num_drafts", "mean_acceptance_length"))
    return Shown(1.0 + float(s["accepted_tokens"].sum()) / float(drafts.sum()), ids)


def key_figures(r: Results) -> pd.DataFrame:
    """One row per model and power limit, from the live stats windows.

    Single-stream decode is the mean generation t/s of the windows with exactly one request
    running; the best aggregate is the concurrency bucket with the highest mean generation
    t/s; power is the mean measured draw of all cards over that bucket's windows. The live
    prompts' context length is not in the logs, so the decode context is left unknown (the
    synthesis then leaves KV reads out), and TTFT and prefill are not measured per request.
    With MTP, the acceptance length is 1 + accepted / drafts over the log's SpecDecoding lines.
    """

    busy = r.busy
    spec = r.data["spec_decode"]
    rows = []
    for (cid, key), w in busy.groupby(["config", "power_key"], sort=True):
        c = r.data.study.configs.get(cid, {})
        limit = w["limit_w"].median()
        one = w[w["running"] == 1]
        buckets = w.groupby("running").agg(gen=("generation_tps", "mean"), draw=("draw_w", "mean"))
        top = buckets["gen"].idxmax()
        al = _acceptance_length(r, spec, w) if speculative(c) and len(spec) else Shown(float("nan"))
        rows.append(key_figure_row(
            STUDY, f"{cid}@{key}", c,
            single_stream_decode_tps=float(one["generation_tps"].mean()) if len(one) else float("nan"),
            acceptance_length=al, best_aggregate_tps=float(buckets.loc[top, "gen"]),
            best_aggregate_concurrency=float(top),
            power_w=Shown(float(buckets.loc[top, "draw"]),
                          union(*(r.draw_ids.get(label, ()) for label in w[w["running"] == top].index))),
            power_kind="measured" if pd.notna(buckets.loc[top, "draw"]) else "",
            anchor="generation-by-concurrency",
            label=f"{platform_short(c)} " + (f"at {int(limit)} W" if pd.notna(limit) else "(power limit unknown)")
                  + f", {_label(r, cid)}",
            decode_context_tokens=float("nan"),
            decode_basis=f"mean generation t/s of the {len(one)} live windows with one request running",
            notes="live agent traffic; power: mean draw of all cards in the nvidia-smi log at the best bucket",
        ))
    return key_figures_table(rows, r.assumed_why)

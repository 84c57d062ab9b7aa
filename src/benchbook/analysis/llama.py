"""llama-bench results: test names, best of several backends, named values.

The `llama_bench` table also holds runs that crashed (status "failed", avg_ts NaN, the test
maybe unknown): best-of figures, spreads and values take `ok_rows` only.
"""

from __future__ import annotations

import pandas as pd

# a row's test label is llama-bench's own, read where its rows are (ingest.llama_bench)
from ..ingest.llama_bench import test_name  # noqa: F401  (analysis.llama.test_name, as before)


def ok_rows(lb: pd.DataFrame) -> pd.DataFrame:
    """The rows that measured a test: not those of runs that crashed (status "failed")."""
    if "status" not in lb:  # a frame from before the column existed
        return lb[lb["avg_ts"].notna()]
    return lb[lb["status"].astype(object).ne("failed").to_numpy() & lb["avg_ts"].notna().to_numpy()]


def with_test_names(lb: pd.DataFrame) -> pd.DataFrame:
    out = lb.copy()
    out["test_name"] = out.apply(test_name, axis=1) if len(out) else pd.Series(dtype="string")
    return out


def best_of(lb: pd.DataFrame, by: str = "config") -> pd.DataFrame:
    """Per test, the best mean t/s over backends (an optimistic envelope), and who won."""
    named = with_test_names(ok_rows(lb))
    idx = named.groupby("test_name")["avg_ts"].idxmax()
    best = named.loc[idx, ["test_name", by, "avg_ts", "stddev_ts"]]
    spread = named.groupby("test_name")["avg_ts"].agg(["min", "max"])
    best = best.join(spread, on="test_name")
    best["spread"] = best["max"] / best["min"]
    return best.rename(columns={by: "best_" + by}).drop(columns=["min", "max"]).reset_index(drop=True)


def best_name(test: str, prefix: str = "strix") -> str:
    """The value name of a test's best-of rate (llama_values), e.g. 'strix_best_pp512_tps'."""
    return f"{prefix}_best_{test}_tps"


def llama_values(lb: pd.DataFrame, prefix: str) -> dict[str, float]:
    """``<prefix>_best_<test>_tps`` and ``<name>_<test>_tps`` for depth-0 tests."""
    named = with_test_names(ok_rows(lb))
    if not len(named):
        return {}
    named = named[~named["test_name"].str.contains("@")]
    values = {best_name(t, prefix): float(v) for t, v in named.groupby("test_name")["avg_ts"].max().items()}
    by = "key" if "key" in named and named["key"].notna().all() else "name"
    if by in named:
        for (name, t), v in named.groupby([by, "test_name"])["avg_ts"].max().items():
            values[f"{name}_{t}_tps"] = float(v)
    return values


def llama_value_ids(lb: pd.DataFrame, prefix: str, cells) -> dict[str, tuple]:
    """The assumption ids behind each value llama_values names: a best-of figure holds what
    its winning row's cell holds. The others lie below it, and a choice that moves only them
    moves no best-of figure (`make marks`: Strix Halo's losing_ratios left '1,387.7' and the
    winning backend where they were, while the figure carried its mark)."""
    named = with_test_names(ok_rows(lb))
    named = named[~named["test_name"].str.contains("@")] if len(named) else named
    out = {}
    by = "key" if "key" in named and named["key"].notna().all() else "name"
    for test, g in named.groupby("test_name") if len(named) else ():
        out[best_name(test, prefix)] = cells.union("avg_ts", [g["avg_ts"].idxmax()])
        for name, rows in g.groupby(by).groups.items() if by in g else ():
            out[f"{name}_{test}_tps"] = cells.union("avg_ts", rows)
    return {k: v for k, v in out.items() if v}


def usual_tests(lb: pd.DataFrame) -> tuple[str | None, str | None]:
    """The prefill and generation tests to quote: pp512 and tg128 (llama-bench's defaults)
    when measured, else the shortest depth-0 prefill and generation tests of the data."""
    named = with_test_names(ok_rows(lb)) if len(lb) else lb
    names = set(named["test_name"]) if len(named) else set()
    flat = sorted((n for n in names if n and "@" not in n and "+" not in n), key=lambda n: int(n[2:]))
    pick = []
    for kind, usual in (("pp", "pp512"), ("tg", "tg128")):
        mine = [n for n in flat if n.startswith(kind)]
        pick.append(usual if usual in mine else (mine[0] if mine else None))
    return pick[0], pick[1]


def nearest_test(lb: pd.DataFrame, kind: str, tokens: int) -> str | None:
    """The measured depth-0 `kind` test ("pp" or "tg") whose length is nearest `tokens`; on a
    tie the longer (a prefill rate falls as the prompt grows, so the longer test flatters
    least). None when the data has no such test."""
    named = with_test_names(ok_rows(lb)) if len(lb) else lb
    names = set(named["test_name"]) if len(named) else set()
    flat = [n for n in names if n.startswith(kind) and "@" not in n and "+" not in n and n[2:].isdigit()]
    if not flat:
        return None
    return min(flat, key=lambda n: (abs(int(n[2:]) - tokens), -int(n[2:])))


def variants(lb: pd.DataFrame) -> pd.Series:
    """Which build a llama-bench row measured, as the tables name it.

    A configuration is normally one build (its id names it). One llama-bench file may hold
    several builds, backends or settings (a sweep across them): its rows are then told
    apart by backend, build, flash attention and the parameters that differ between runs
    of one build, so no two settings are ever pooled into one best-of figure. Parameters
    every run of the build shares are left out of the name (the configurations table and
    the downloads keep them), and so is the configuration id when the rows have only one.
    """
    if not len(lb):
        return pd.Series(dtype=object)
    build = lb["build_number"].map(lambda n: f"b{int(n)}" if pd.notna(n) else "build ?")
    ident = lb["backend"].fillna("backend ?").astype(str) + " " + build
    settings = _settings(lb)
    out = lb["config"].astype(str).copy()
    several = lb["config"].nunique() > 1
    for cid, rows in lb.groupby("config", sort=False):
        shown = ident[rows.index] + settings[rows.index].map(repr)
        if shown.nunique() <= 1:
            continue
        for _, same in ident[rows.index].groupby(ident[rows.index]):
            differ = _differing(settings[same.index])
            head = f"{cid} · " if several else ""
            out[same.index] = [head + i + (f" ({'; '.join(f'{k}={s[k]}' for k in differ)})" if differ else "")
                               for i, s in zip(same, settings[same.index])]
    return out


_FA = {"1": "on", "true": "on", "on": "on", "0": "off", "false": "off", "off": "off"}  # llama-bench's fa column


def _settings(lb: pd.DataFrame) -> pd.Series:
    """Per row, its run settings as {name: value}: the non-default parameters and flash
    attention (`fa`, its own column), "default" for a parameter left at llama-bench's default."""
    params = lb["params"] if "params" in lb else pd.Series(None, index=lb.index, dtype=object)
    fa = lb["flash_attn"] if "flash_attn" in lb else pd.Series(None, index=lb.index, dtype=object)
    out = []
    for p, f in zip(params, fa):
        d = dict(kv.split("=", 1) if "=" in kv else (kv, "") for kv in str(p).split(";")) if pd.notna(p) and p else {}
        if pd.notna(f):
            d["fa"] = _FA.get(str(f).lower(), str(f))
        out.append(d)
    return pd.Series(out, index=lb.index, dtype=object)


def _differing(settings: pd.Series) -> list[str]:
    """The setting names whose values differ between these rows (a missing one is the default), fa first."""
    keys = sorted({k for d in settings for k in d}, key=lambda k: (k != "fa", k))
    out = [k for k in keys if len({d.get(k, "default") for d in settings}) > 1]
    for d in settings:
        for k in out:
            d.setdefault(k, "default")
    return out

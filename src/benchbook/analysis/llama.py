"""llama-bench results: test names, best of several backends, named values.

The `llama_bench` table also holds runs that crashed (status "failed", avg_ts NaN, the test
maybe unknown): best-of figures, spreads and values take `ok_rows` only.
"""

from __future__ import annotations

import pandas as pd


def ok_rows(lb: pd.DataFrame) -> pd.DataFrame:
    """The rows that measured a test: not those of runs that crashed (status "failed")."""
    if "status" not in lb:  # a frame from before the column existed
        return lb[lb["avg_ts"].notna()]
    return lb[lb["status"].astype(object).ne("failed").to_numpy() & lb["avg_ts"].notna().to_numpy()]


def test_name(row) -> str:
    """llama-bench's own test label: pp512, tg128, pp512+tg128, with @ d<depth>; empty for
    a failed run whose test is unknown."""
    parts = []
    if pd.notna(row["n_prompt"]) and row["n_prompt"] > 0:
        parts.append(f"pp{int(row['n_prompt'])}")
    if pd.notna(row["n_gen"]) and row["n_gen"] > 0:
        parts.append(f"tg{int(row['n_gen'])}")
    name = "+".join(parts)
    depth = row.get("n_depth")
    if pd.notna(depth) and depth > 0:
        name += f" @ d{int(depth)}"
    return name


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


def llama_values(lb: pd.DataFrame, prefix: str) -> dict[str, float]:
    """``<prefix>_best_<test>_tps`` and ``<name>_<test>_tps`` for depth-0 tests."""
    named = with_test_names(ok_rows(lb))
    if not len(named):
        return {}
    named = named[~named["test_name"].str.contains("@")]
    values = {f"{prefix}_best_{t}_tps": float(v) for t, v in named.groupby("test_name")["avg_ts"].max().items()}
    by = "key" if "key" in named and named["key"].notna().all() else "name"
    if by in named:
        for (name, t), v in named.groupby([by, "test_name"])["avg_ts"].max().items():
            values[f"{name}_{t}_tps"] = float(v)
    return values


def llama_value_ids(lb: pd.DataFrame, prefix: str, cells) -> dict[str, tuple]:
    """The assumption ids behind each value llama_values names: a best-of figure holds
    what any backend's cell of its test holds (it is their maximum)."""
    named = with_test_names(ok_rows(lb))
    named = named[~named["test_name"].str.contains("@")] if len(named) else named
    out = {}
    by = "key" if "key" in named and named["key"].notna().all() else "name"
    for test, g in named.groupby("test_name") if len(named) else ():
        out[f"{prefix}_best_{test}_tps"] = cells.union("avg_ts", g.index)
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


def variants(lb: pd.DataFrame) -> pd.Series:
    """Which build a llama-bench row measured, as the tables name it.

    A configuration is normally one build (its id names it). One llama-bench file may hold
    several builds, backends or settings (a sweep across them): its rows are then told
    apart by backend, build and the non-default parameters, so no two builds are ever
    pooled into one best-of figure.
    """
    if not len(lb):
        return pd.Series(dtype=object)
    params = lb["params"].fillna("") if "params" in lb else pd.Series("", index=lb.index)
    build = lb["build_number"].map(lambda n: f"b{int(n)}" if pd.notna(n) else "build ?")
    backend = lb["backend"].fillna("backend ?").astype(str)
    ident = backend + " " + build
    out = lb["config"].astype(str).copy()
    for cid, rows in lb.groupby("config", sort=False):
        if (ident[rows.index] + params[rows.index]).nunique() <= 1:
            continue
        several_params = (ident[rows.index] + params[rows.index]).nunique() > ident[rows.index].nunique()
        out[rows.index] = [f"{cid} · {i}" + (f" ({p})" if several_params and p else "")
                           for i, p in zip(ident[rows.index], params[rows.index])]
    return out

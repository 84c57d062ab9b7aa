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
    if "name" in named:
        for (name, t), v in named.groupby(["name", "test_name"])["avg_ts"].max().items():
            values[f"{name}_{t}_tps"] = float(v)
    return values

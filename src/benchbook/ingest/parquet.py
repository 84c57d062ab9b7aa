"""Tidy tables as Parquet, written by polars, batch by batch, one file's tables at a time.

`benchbook ingest` writes Parquet in three shapes: one file for one table (`--out x.parquet`),
or a folder holding one Parquet dataset per table (`--out DIR`: `DIR/<table>/part-NNNNN.parquet`,
one part per input file, which DuckDB (`read_parquet('DIR/windows/*.parquet')`), polars
(`pl.scan_parquet('DIR/windows/')`) and Spark (`spark.read.parquet('DIR/windows')`) read as
is). `ingest_file` is the work for one input file, run in a worker process for many files at
once: it streams the file's batches (`ingest.Batches`) to one Parquet file per batch and
table, then joins them with polars' streaming engine into one part per table (row groups of
`ROW_GROUP` rows), so the memory stays that of a batch whatever the file's size.

Columns keep their meaning: text (category, string, object) -> String, nullable Int64 and
boolean -> Int64 and Boolean with nulls, floats stay floats (a NaN stays NaN: in these tables
it is a value printed as `nan`, or a field not printed), datetime64 -> Datetime. pyarrow is
not needed: each pandas column is handed to polars as numpy arrays.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

ROW_GROUP = 200_000


def to_polars(df: pd.DataFrame):
    """A pandas tidy table as a polars DataFrame (see the module docstring for the types)."""
    import polars as pl

    return pl.DataFrame([_series(name, df[name]) for name in df.columns], height=len(df))


def _series(name: str, s: pd.Series):
    import polars as pl

    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = [None if not isinstance(c, str) and pd.isna(c) else str(c) for c in s.cat.categories]
        codes = s.cat.codes.to_numpy()
        lookup = pl.Series(name, [*cats, None], dtype=pl.String)  # code -1 (missing) -> the last
        return lookup.gather(np.where(codes < 0, len(cats), codes))
    if isinstance(dtype, pd.StringDtype) or dtype == object:
        values = s.to_numpy(dtype=object, na_value=None)
        try:
            return pl.Series(name, values, dtype=pl.String)
        except (TypeError, pl.exceptions.PolarsError):  # not all text: written as text
            return pl.Series(name, [None if v is None else str(v) for v in values], dtype=pl.String)
    if isinstance(dtype, (pd.Int64Dtype, pd.BooleanDtype)) or isinstance(s.array, pd.arrays.IntegerArray):
        data = s.array._data
        mask = s.array._mask
        out = pl.Series(name, data)
        return out.scatter(np.flatnonzero(mask), None) if mask.any() else out
    if dtype.kind == "M":
        return pl.Series(name, s.to_numpy())
    return pl.Series(name, s.to_numpy())


def write_frame(df: pd.DataFrame, path: Path) -> None:
    """One table (one batch) as one Parquet file."""
    to_polars(df).write_parquet(path, row_group_size=ROW_GROUP)


def join_parts(parts: list[Path], out: Path) -> None:
    """Several Parquet files of one table as one, streamed (polars' streaming engine):
    columns one part lacks are null there; the parts are removed."""
    import polars as pl

    if len(parts) == 1:
        os.replace(parts[0], out)
        return
    schemas = [pl.read_parquet_schema(p) for p in parts]
    if all(s == schemas[0] for s in schemas):
        frame = pl.scan_parquet(parts)
    else:
        frame = pl.concat([pl.scan_parquet(p) for p in parts], how="diagonal_relaxed")
    frame.sink_parquet(out, row_group_size=ROW_GROUP)
    for p in parts:
        p.unlink()


def unify_parts(parts: list[Path]) -> None:
    """Give the parts of one table one schema (so that a dataset reader takes them as they
    are): the union of their columns, in first-seen order, each of the type polars would
    give their concatenation; a part lacking a column gets it as nulls (rewritten, streamed)."""
    import polars as pl

    schemas = [pl.read_parquet_schema(p) for p in parts]
    if all(s == schemas[0] for s in schemas):
        return
    union = pl.concat([pl.scan_parquet(p) for p in parts], how="diagonal_relaxed").collect_schema()
    for part, schema in zip(parts, schemas):
        if dict(schema) == dict(union) and list(schema) == list(union):
            continue
        tmp = part.with_name(part.name + ".tmp")
        pl.scan_parquet(part).select(
            (pl.col(name).cast(dtype) if name in schema else pl.lit(None, dtype)).alias(name)
            for name, dtype in union.items()).sink_parquet(tmp, row_group_size=ROW_GROUP)
        os.replace(tmp, part)


def ingest_file(path: str, index: int, staging: str, fmt: str | None, tables: list[str] | None,
                batch_rows: int) -> dict:
    """Read one input file in batches into Parquet parts under `staging`: one file per table,
    `<table>-<index>.parquet`. Returns the summary line, rows per table and the parts. Any
    error comes back as text (an IngestError's message), so a worker never dies silently."""
    from . import Batches
    from .errors import IngestError

    staging = Path(staging)
    batch_parts: dict[str, list[Path]] = {}
    rows: dict[str, int] = {}
    try:
        batches = Batches(path, fmt=fmt, batch_rows=batch_rows, tables=tables)
        for k, batch in enumerate(batches):
            for table, df in batch.items():
                part = staging / f"{table}-{index:05d}-{k:05d}.parquet"
                write_frame(df, part)
                batch_parts.setdefault(table, []).append(part)
                rows[table] = rows.get(table, 0) + len(df)
        parts = {}
        for table, pieces in batch_parts.items():
            parts[table] = str(staging / f"{table}-{index:05d}.parquet")
            join_parts(pieces, Path(parts[table]))
        return {"path": path, "summary": batches.result.summary(), "rows": rows, "parts": parts,
                "read": batches.result.read, "ignored": batches.result.ignored}
    except IngestError as exc:
        for pieces in batch_parts.values():
            for p in pieces:
                p.unlink(missing_ok=True)
        return {"path": path, "error": str(exc), "error_args": (exc.path, exc.where, exc.problem)}


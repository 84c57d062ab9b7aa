"""Tidy tables as Parquet, written by polars, batch by batch, one file's tables at a time.

`benchbook ingest` writes Parquet in two shapes: one file for one table (`--out x.parquet`),
or a folder holding one Parquet dataset per table (`--out DIR`:
`DIR/<table>/part-FFFFF-BBBBB-KKK.parquet`: input file, batch, piece), which DuckDB
(`read_parquet('DIR/windows/*.parquet')`), polars (`pl.scan_parquet('DIR/windows/')`) and
Spark (`spark.read.parquet('DIR/windows')`) read as they are. `ingest_file` is the work for
one input file, run in a worker process for many files at once: each batch's tables are
written as Parquet files of at most `ROW_GROUP` rows, joined (one table into one file) by
polars' streaming engine, so one batch or one small file is in memory at a time whatever the
input's size.

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

from . import Batches
from .errors import IngestError

ROW_GROUP = 65_536


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
    if isinstance(dtype, pd.StringDtype) or pd.api.types.is_object_dtype(dtype):
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


def write_frames(df: pd.DataFrame, stem: Path) -> list[Path]:
    """One table (one batch) as Parquet files of at most ROW_GROUP rows (a later join or
    dataset reader then holds one small file at a time), `<stem>-000.parquet`, `-001`, ...:
    names that sort in row order."""
    frame = to_polars(df)
    out = []
    for k, start in enumerate(range(0, max(len(frame), 1), ROW_GROUP)):
        path = stem.with_name(f"{stem.name}-{k:03d}.parquet")
        frame.slice(start, ROW_GROUP).write_parquet(path, row_group_size=ROW_GROUP)
        out.append(path)
    return out


def union_schema(parts: list[Path]):
    """The columns of several Parquet files of one table, in first-seen order, each of the
    type polars gives their concatenation."""
    import polars as pl

    schemas = [pl.read_parquet_schema(p) for p in parts]
    if all(s == schemas[0] for s in schemas):
        return schemas[0]
    return pl.concat([pl.scan_parquet(p) for p in parts], how="diagonal_relaxed").collect_schema()


def _in_schema(part: Path, schema):
    """A part as a lazy frame in `schema`: missing columns null, types cast."""
    import polars as pl

    have = pl.read_parquet_schema(part)
    return pl.scan_parquet(part).select(
        (pl.col(name).cast(dtype) if name in have else pl.lit(None, dtype)).alias(name)
        for name, dtype in schema.items())


def join_parts(parts: list[Path], out: Path) -> None:
    """Several Parquet files of one table as one, by polars' streaming engine (one small
    part at a time); columns a part lacks are null there. The parts are removed."""
    import polars as pl

    if len(parts) == 1:
        os.replace(parts[0], out)
        return
    schema = union_schema(parts)
    same = all(pl.read_parquet_schema(p) == schema for p in parts)
    frame = pl.scan_parquet(parts) if same else pl.concat([_in_schema(p, schema) for p in parts])
    frame.sink_parquet(out, row_group_size=ROW_GROUP)
    for p in parts:
        p.unlink()


def unify_parts(parts: list[Path]) -> None:
    """Give the parts of one table one schema (so that a dataset reader takes them as they
    are): `union_schema`; a part lacking a column gets it as nulls (rewritten)."""
    import polars as pl

    schema = union_schema(parts)
    for part in parts:
        if list(pl.read_parquet_schema(part).items()) != list(schema.items()):
            tmp = part.with_name(part.name + ".tmp")
            _in_schema(part, schema).sink_parquet(tmp, row_group_size=ROW_GROUP)
            os.replace(tmp, part)


def ingest_file(path: str, index: int, staging: str, fmt: str | None, tables: list[str] | None,
                batch_rows: int) -> dict:
    """Read one input file in batches into Parquet under `staging`: each batch's tables as
    files of at most ROW_GROUP rows, `<table>-<index>-<batch>-<k>.parquet`. Returns the summary
    line, rows per table and the files per table, in order. An IngestError comes back as text,
    so a worker never dies silently."""

    staging = Path(staging)
    parts: dict[str, list[str]] = {}
    rows: dict[str, int] = {}
    try:
        batches = Batches(path, fmt=fmt, batch_rows=batch_rows, tables=tables)
        for k, batch in enumerate(batches):
            for table, df in batch.items():
                if len(df) or table not in parts:  # an empty batch adds nothing but the columns
                    written = write_frames(df, staging / f"{table}-{index:05d}-{k:05d}")
                    parts.setdefault(table, []).extend(map(str, written))
                rows[table] = rows.get(table, 0) + len(df)
        return {"path": path, "summary": batches.result.summary(), "rows": rows, "parts": parts,
                "read": batches.result.read, "ignored": batches.result.ignored}
    except IngestError as exc:
        for p in staging.glob(f"*-{index:05d}-*.parquet"):
            p.unlink()
        return {"path": path, "error": str(exc), "error_args": (exc.path, exc.where, exc.problem)}

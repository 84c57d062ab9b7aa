"""`benchbook ingest ... --out DIR|NAME.parquet`: many files at once, each in its own process.

Each input file is read by `ingest.parquet.ingest_file` in a worker process (up to `--jobs`,
by default the number of cores and at most one per file), which streams the file's batches
to Parquet under a staging folder beside the output; nothing is moved into place until
every file was read, so a failed ingest leaves no partial output. Then:

- `--out DIR`: one Parquet dataset per table, `DIR/<table>/part-FFFFF-BBBBB-KKK.parquet` (the
  input file's position, the batch, a piece of at most 65,536 rows; names sort in row order), the parts of an
  earlier ingest into the same folder replaced;
- `--out NAME.parquet`: the one table's parts joined into that file (streamed).

The counts of each file are printed as it finishes, then the totals.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from . import IngestError
from .parquet import ingest_file, join_parts, unify_parts


def ingest_to_parquet(files: list[Path], args) -> int:
    out: Path = args.out
    one_file = out.suffix.lower() == ".parquet"
    root = out.parent if one_file else out
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".ingest-{os.getpid()}"
    staging.mkdir()
    try:
        results = _read_all(files, args, staging)
        failed = [r for r in results if "error" in r]
        if failed:  # each was printed as it came; the first is the command's error
            path, where, problem = failed[0]["error_args"]
            more = f" (and {len(failed) - 1} more file(s) failed)" if len(failed) > 1 else ""
            raise IngestError(path, where, problem + more)
        parts: dict[str, list[Path]] = {}
        for r in results:
            for table, pieces in r["parts"].items():
                parts.setdefault(table, []).extend(map(Path, pieces))
        written = _place(parts, out, one_file, results)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    total = Counter()
    for r in results:
        total.update(r["rows"])
    if len(results) > 1:
        print(f"total: {len(results)} files, {sum(r['read'] for r in results)} records read, "
              f"{sum(r['ignored'] for r in results)} ignored -> rows: "
              + ", ".join(f"{t} {n}" for t, n in total.items()))
    for table, where in written.items():
        print(f"wrote {total[table]} rows of {table} to {where}")
    return 0


def _read_all(files: list[Path], args, staging: Path) -> list[dict]:
    """Each file's result, in input order; files read by `--jobs` processes at once."""
    jobs = args.jobs or (os.cpu_count() or 1)
    jobs = max(1, min(jobs, len(files)))
    work = [(str(f), i, str(staging), args.format, args.table, args.batch_rows) for i, f in enumerate(files)]
    results: list[dict | None] = [None] * len(files)
    if jobs == 1:
        for i, w in enumerate(work):
            results[i] = _report(ingest_file(*w))
        return results
    threads = max(1, (os.cpu_count() or 1) // jobs)  # polars' threads per worker: no oversubscription
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # polars' thread pool does not survive a fork
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init, initargs=(threads,)) as pool:
        futures = {pool.submit(ingest_file, *w): i for i, w in enumerate(work)}
        for fut in as_completed(futures):
            results[futures[fut]] = _report(fut.result())
    return results


def _worker_init(threads: int) -> None:
    os.environ.setdefault("POLARS_MAX_THREADS", str(threads))


def _report(result: dict) -> dict:
    if "error" in result:
        print(f"error: {result['error']}", file=sys.stderr)
    else:
        print(result["summary"], flush=True)
    return result


def _place(parts: dict[str, list[Path]], out: Path, one_file: bool, results: list[dict]) -> dict[str, Path]:
    """Move the parts into place: the one table into `out`, or each table's parts into
    its dataset folder `out/<table>/`. Returns where each table went."""
    if one_file:
        if not parts:
            raise IngestError(out, None, "the files yield no table to write")
        if len(parts) > 1:
            first = next(r for r in results if len(r["parts"]) > 1) if any(len(r["parts"]) > 1 for r in results) \
                else results[0]
            raise IngestError(first["path"], None, f"yields several tables ({', '.join(parts)}) and --out {out} "
                              "is one Parquet file: give a folder as --out (one dataset each), or choose one "
                              "with --table")
        (table, pieces), = parts.items()
        tmp = out.with_name(out.name + ".part")
        join_parts(pieces, tmp)
        os.replace(tmp, out)
        return {table: out}
    for table in parts:  # an earlier ingest's parts are replaced; anything else is left alone
        folder = out / table
        if folder.exists() and (not folder.is_dir() or any(not p.name.startswith("part-")
                                                           for p in folder.iterdir())):
            raise IngestError(folder, None, "exists and holds other files than part-*.parquet; choose "
                              "another --out")
    where = {}
    for table, pieces in parts.items():
        unify_parts(pieces)
        folder = out / table
        if folder.exists():
            for old in folder.iterdir():
                old.unlink()
        folder.mkdir(exist_ok=True)
        for piece in pieces:  # <table>-<file>-<batch>-<k>.parquet -> part-<file>-<batch>-<k>.parquet
            os.replace(piece, folder / ("part-" + piece.name.split("-", 1)[1]))  # (no "-" in table names)
        where[table] = folder
    return where

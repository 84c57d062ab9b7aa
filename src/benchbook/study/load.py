"""Ingest every raw file a study lists, and attach the manifest's context to each row."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from .. import ingest
from ..format import fmt_args
from ..ingest import IngestError, tables
from ..ingest.vllm_log import add_timestamps
from .folder import MANIFEST, Study, load_study

CONTEXT_COLUMNS = ("config", "name", "kind", "concurrency", "input_len", "output_len",
                   "dataset", "ignore_eos", "seed", "run_date", "power_limit_w")


class StudyReadError(IngestError):
    """Some of a study's files cannot be read; `problems` has one line per problem."""

    def __init__(self, root, problems: list[str], report: pd.DataFrame | None = None, partial=None):
        self.problems = problems
        self.report = report  # what was read from the files that could be read
        self.partial = partial  # StudyData of the files that could be read
        super().__init__(root, None, "cannot read every file:\n  " + "\n  ".join(problems))


@dataclass
class StudyData:
    """A study's tidy tables plus an account of what was read from each file."""

    study: Study
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    report: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Set by benchbook.book.pipeline when a chapter's contract is applied: each configuration's
    # role, and one row per described run (file, run, config, role, kind, key, context, rows).
    roles: object = None
    described: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getitem__(self, table: str) -> pd.DataFrame:
        """A table; one no file yielded is empty but has every column a filled one would
        (its schema, the run context and the contract's role and key), so code that selects
        columns never meets a KeyError on data without such files."""
        if table in self.tables:
            return self.tables[table]
        df = tables.empty(table)
        for col in (*CONTEXT_COLUMNS, "role", "key"):
            if col not in df:
                df[col] = pd.Series(dtype=object)
        return df


def ingest_study(study: Study | str | Path) -> StudyData:
    """Read all of a study's files; every problem is collected and raised together."""
    if not isinstance(study, Study):
        study = load_study(study)
    frames: dict[str, list[pd.DataFrame]] = {}
    report, problems = [], []
    for entry in study.files:
        path = study.path(entry)
        prefix = entry.context.get("name") or Path(entry.path).name.split(".")[0]
        try:
            result = ingest.read(path, fmt=entry.format, run_prefix=prefix)
        except IngestError as exc:
            problems.append(str(exc))
            continue
        context = _context(study, entry)
        for name, df in result.tables.items():
            df = df.copy()
            if "source_file" in df:  # relative to the data folder, as in study.yml
                df["source_file"] = entry.path
            for key, value in context.items():
                if key not in df.columns:
                    df[key] = value
            if entry.runs and "run_id" in df:
                df = _per_run(study, entry, prefix, df)
            if name == "windows":
                df = _with_year(df, entry.context.get("date"))
            frames.setdefault(name, []).append(df)
        report.append(dict(file=entry.path, format=result.format, read=result.read,
                           ignored=result.ignored,
                           reasons="; ".join(f"{r} ({n})" for r, n in result.reasons.most_common()),
                           notes="; ".join(result.notes)))
    out = {}
    for name, dfs in frames.items():
        df = pd.concat([d for d in dfs if len(d)], ignore_index=True) if any(len(d) for d in dfs) else dfs[0]
        if name in ("runs", "llama_bench"):
            dupes = df["run_id"][df["run_id"].duplicated()].unique().tolist()
            if dupes:
                files = sorted(set(df.loc[df["run_id"].isin(dupes), "source_file"].astype(str)))
                problems.append(f"{study.root / MANIFEST}: duplicate run ids {dupes} in {name} "
                                f"(files {', '.join(files)}): give each file a unique 'name'")
        out[name] = _with_context_columns(tables.conform(df, name) if name in tables.SCHEMAS else df)
    if "runs" in out:
        out["runs"] = _run_context(out["runs"])
    report = pd.DataFrame(report, columns=["file", "format", "read", "ignored", "reasons", "notes"])
    if problems:
        raise StudyReadError(study.root, problems, report, StudyData(study, out, report))
    return StudyData(study, out, report)


def _per_run(study: Study, entry, prefix: str, df: pd.DataFrame) -> pd.DataFrame:
    """Rows of the n-th run of a multi-run file take the context of `runs[n-1]`."""
    df = df.astype({c: object for c in df.columns if c not in ("run_id",) and df[c].dtype != object
                    and c in CONTEXT_COLUMNS + ("platform", "model", "quantisation")})
    for run in study.run_entries():
        if run.path != entry.path or run.run is None:
            continue
        mask = df["run_id"] == f"{prefix}#{run.run}"
        if not mask.any():
            continue
        ctx = _context(study, replace(entry, config=run.config, context=run.context))
        for key, value in ctx.items():
            if key not in df.columns:
                df[key] = None
            elif df[key].dtype != object:  # a file-wide value (request_rate: 1) set as a typed column
                df[key] = df[key].astype(object)
            df.loc[mask, key] = value
    return df


def _with_context_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Every run context column, empty where study.yml gives no value (a date, a limit)."""
    missing = [c for c in CONTEXT_COLUMNS if c not in df]
    if missing:
        df = df.assign(**{c: pd.Series([None] * len(df), index=df.index, dtype=object) for c in missing})
    return df


def _run_context(runs: pd.DataFrame) -> pd.DataFrame:
    """Every context column present (empty where no file gave it), and a run's
    concurrency from the file's max_concurrency when study.yml does not give one."""
    runs = runs.copy()
    if "max_concurrency" in runs:
        conc = pd.to_numeric(runs["concurrency"], errors="coerce").astype("Float64")
        cap = pd.to_numeric(runs["max_concurrency"], errors="coerce").astype("Float64")
        runs["concurrency"] = conc.fillna(cap).round().astype("Int64")
    return runs


def _with_year(windows: pd.DataFrame, date) -> pd.DataFrame:
    """Log lines print no year: take it from the file's manifest date (none: left empty)."""
    year = str(date or "")[:4]
    if windows.empty or not year.isdigit() or windows["timestamp"].notna().all():
        return windows

    return add_timestamps(windows, int(year))


def _context(study: Study, entry) -> dict:
    """The run's context: its configuration's scalar facts and its serve arguments as the pages
    print them (redacted), and the run entry's own. Each row carries them, so a choice of a
    reconstructed study.yml lands in cells like any other (`make marks`: moving Strix Halo's
    llama-server flags moved the configuration tables' arguments, which no cell held)."""
    config = study.configs.get(entry.config, {})
    ctx = {k: v for k, v in config.items() if not isinstance(v, (dict, list))}
    if config.get("serve_args"):
        ctx["serve_args"] = fmt_args(config["serve_args"])
    ctx["config"] = entry.config
    for key, value in entry.context.items():
        ctx["run_date" if key == "date" else key] = value
    ctx.setdefault("name", None)
    return ctx

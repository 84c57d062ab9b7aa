"""Ingest every raw file a study lists, and attach the manifest's context to each row."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import ingest, tables
from .ingest import IngestError
from .study import MANIFEST, Study, load_study

CONTEXT_COLUMNS = ("config", "name", "kind", "concurrency", "input_len", "output_len",
                   "dataset", "ignore_eos", "seed", "run_date", "power_limit_w")


class StudyReadError(IngestError):
    """Some of a study's files cannot be read; `problems` has one line per problem."""

    def __init__(self, root, problems: list[str], report: pd.DataFrame | None = None):
        self.problems = problems
        self.report = report  # what was read from the files that could be read
        super().__init__(root, None, "cannot read every file:\n  " + "\n  ".join(problems))


@dataclass
class StudyData:
    """A study's tidy tables plus an account of what was read from each file."""

    study: Study
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    report: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getitem__(self, table: str) -> pd.DataFrame:
        return self.tables.get(table, tables.empty(table))


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
            if name == "windows":
                df = _with_year(df, entry.context.get("date"))
            frames.setdefault(name, []).append(df)
        report.append(dict(file=entry.path, format=result.format, read=result.read,
                           ignored=result.ignored,
                           reasons="; ".join(f"{r} ({n})" for r, n in result.reasons.most_common())))
    out = {}
    for name, dfs in frames.items():
        df = pd.concat([d for d in dfs if len(d)], ignore_index=True) if any(len(d) for d in dfs) else dfs[0]
        if name in ("runs", "llama_bench"):
            dupes = df["run_id"][df["run_id"].duplicated()].unique().tolist()
            if dupes:
                files = sorted(set(df.loc[df["run_id"].isin(dupes), "source_file"].astype(str)))
                problems.append(f"{study.root / MANIFEST}: duplicate run ids {dupes} in {name} "
                                f"(files {', '.join(files)}): give each file a unique 'name'")
        out[name] = tables.conform(df, name) if name in tables.SCHEMAS else df
    report = pd.DataFrame(report, columns=["file", "format", "read", "ignored", "reasons"])
    if problems:
        raise StudyReadError(study.root, problems, report)
    return StudyData(study, out, report)


def _with_year(windows: pd.DataFrame, date) -> pd.DataFrame:
    """Log lines print no year: take it from the file's manifest date (none: left empty)."""
    year = str(date or "")[:4]
    if windows.empty or not year.isdigit() or windows["timestamp"].notna().all():
        return windows
    from .ingest.vllm_log import add_timestamps

    return add_timestamps(windows, int(year))


def _context(study: Study, entry) -> dict:
    ctx = {k: v for k, v in study.configs.get(entry.config, {}).items() if not isinstance(v, (dict, list))}
    ctx["config"] = entry.config
    for key, value in entry.context.items():
        ctx["run_date" if key == "date" else key] = value
    ctx.setdefault("name", None)
    return ctx

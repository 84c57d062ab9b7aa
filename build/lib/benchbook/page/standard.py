"""The sections every chapter page has, one call each: what was measured, caveats, provenance.

A chapter made by `benchbook new-chapter` shows these as they are; the five studies' own
pages predate this module and compose the same report functions by hand.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from IPython.display import display

from ..format import fmt_args
from . import report


def configurations(r) -> pd.DataFrame:
    """One row per configuration of the data folder, with its role and what study.yml says of it."""
    rows = [dict(config=cid, role=r.roles.of_config.get(cid), platform=c.get("platform"), model=c.get("model"),
                 quantisation=c.get("quantisation"), engine=" ".join(
                     str(c.get(k) or "") for k in ("engine", "engine_version")).strip() or None,
                 arguments=fmt_args(c.get("serve_args")))
            for cid, c in r.data.study.configs.items()]
    return pd.DataFrame(rows, columns=["config", "role", "platform", "model", "quantisation", "engine", "arguments"])


def runs(r) -> pd.DataFrame:
    """One row per described run: its file, configuration, role, kind and the rows it gave."""
    d = r.data.described
    cols = ["file", "run", "config", "role", "kind", "rows"]
    if not len(d):
        return pd.DataFrame(columns=cols)
    out = d.reindex(columns=["path", *cols[1:]]).rename(columns={"path": "file"})
    return out.assign(file=out["file"].map(lambda p: Path(str(p)).name))


def measured(r) -> None:
    """The 'What was measured' section: configurations, runs and the ingest report."""
    display(report.html(configurations(r), "Configurations (from study.yml)", wide=("arguments",), collapsed=True))
    display(report.html(runs(r), "Runs and the raw files they come from", collapsed=True))
    display(report.html(r.data.report[["file", "format", "read", "ignored", "reasons"]], "Ingest report",
                        collapsed=True))


def caveats(r) -> None:
    """The 'Caveats' section."""
    display(report.caveats_display(r))


def provenance(r, page: str, tables: dict[str, pd.DataFrame]) -> None:
    """The 'Provenance' section: the data folders, their sources, the software, and a link to
    each download (`tables`: the chapter's downloads, as written by report.write_outputs)."""
    display(report.html(r.provenance, "Data folders used by this page"))
    display(report.sources_html(r))
    display(report.software(r.versions))
    links = {"all tables (zip)": f"{page}-tables.zip", "all tables as Parquet (zip)": f"{page}-tables-parquet.zip"}
    display(report.download_links(page, links | {name.replace("_", " "): f"{name}.csv" for name in tables}))

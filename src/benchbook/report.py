"""Showing tables in a chapter: readable units, no index, and CSV downloads."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pandas as pd


def fmt_seconds(v) -> str:
    """Seconds shown as ms below one second, as s above."""
    if v is None or pd.isna(v):
        return "–"
    return f"{v * 1000:.1f} ms" if abs(v) < 1 else f"{v:.2f} s"


def fmt_rate(v, decimals: int = 0) -> str:
    if v is None or pd.isna(v):
        return "–"
    return f"{v:,.{decimals}f}"


def fmt_ratio(v) -> str:
    if v is None or pd.isna(v) or math.isinf(v):
        return "–"
    return f"{v:.2f}×"


def fmt_money(v, currency: str) -> str:
    if v is None or pd.isna(v):
        return "–"
    symbol = {"EUR": "€", "USD": "$", "GBP": "£"}.get(currency, currency + " ")
    return f"{symbol}{v:,.2f}"


def fmt_pct(v) -> str:
    if v is None or pd.isna(v):
        return "–"
    return f"{v:+.1%}"


def fmt_args(args) -> str:
    """Serve arguments from study.yml, redacted: users paste command lines with keys."""
    from .redact import redact

    if isinstance(args, dict):
        args = ", ".join(f"{k}={v}" for k, v in args.items())
    return redact(str(args or ""))


def html(df: pd.DataFrame, caption: str | None = None, wide: tuple[str, ...] = (),
         markup: tuple[str, ...] = ()):
    """A DataFrame as an HTML table without the index.

    Cell text is HTML-escaped (data can hold `<<EOF` or worse); columns named in `markup`
    hold HTML the library built itself (links) and are left as they are. `wide` columns get
    room for prose.
    """
    import hashlib

    from IPython.display import HTML

    uid = hashlib.sha1(f"{caption}{list(df.columns)}".encode()).hexdigest()[:8]
    plain = [c for c in df.columns if c not in markup]
    styler = (
        df.style.hide(axis="index")
        .set_table_attributes('class="benchbook-table"')
        .format(na_rep="–", precision=4, escape="html", subset=plain)
    )
    styler.set_uuid(uid)
    if caption:
        styler = styler.set_caption(caption)
    cols = [c for c in wide if c in df.columns]
    if cols:
        styler = styler.set_properties(subset=cols, **{"min-width": "18em"})
    return HTML(styler.to_html())


LEDGER_COLUMNS = ["id", "claim", "published", "recomputed", "verdict", "difference", "tolerance", "kind", "note"]


def comparison_tables(published, comparison: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Each published table in its own layout, every cell 'published → reproduced'."""
    from .claims import published_layout

    return [(f"{t.title} [{t.source}]", published_layout(published, comparison, t.id)) for t in published.tables]


def mismatches(comparison: pd.DataFrame) -> pd.DataFrame:
    """Published cells outside their tolerance, with the difference."""
    c = comparison[comparison["within"] == False]  # noqa: E712
    return pd.DataFrame({"table": c["table"], "row": c["row"], "column": c["column"],
                         "published": c["published"], "reproduced": c["reproduced"],
                         "difference": c["difference"].map(lambda v: f"{v:+.1%}")})


def ledger_display(ledger: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """The claims ledger as shown: verdict beside the numbers; `extra` columns after it."""
    cols = LEDGER_COLUMNS[:5] + list(extra) + LEDGER_COLUMNS[5:]
    return ledger[cols].rename(columns={"id": "claim id"}).fillna("")


def write_downloads(tables: dict[str, pd.DataFrame], folder: str | Path, bundle: str) -> dict[str, Path]:
    """Write each tidy table as CSV plus one zip of all of them; return the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, df in tables.items():
        path = folder / f"{name}.csv"
        df.to_csv(path, index=False)
        paths[name] = path
    zpath = folder / f"{bundle}.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in paths.items():
            zf.write(path, arcname=path.name)
    paths["zip"] = zpath
    return paths

"""A chapter's key numbers beside those of the previous published version.

The previous numbers are read from the tidy CSVs that version published with the chapter
(found through the download links on its page), never recomputed: they are what readers
of that version saw, computed by that version's code on that version's data. The current
numbers are read the same way, from the downloads of the page being published.

The section is filled in when a build is published (`benchbook publish`, `fill`), not when
the chapter runs: the notebook shows a placeholder (`placeholder`) that says there is no
earlier version, which is what an unpublished build shows. So publishing a version executes
no chapter again for the comparison: a chapter's execution, and its cache key, do not depend
on which version came before.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd

from ..book import registry
from ..page.report import html as html_table
from ..study import untrusted
from ..study.contract import KeyNumbers
from .sphinx_meta import stamped_version


def key_numbers(study: str) -> tuple:
    """The chapter's declared key numbers (registry `ChapterSpec.key_numbers`; none if unknown)."""

    spec = next((c for c in registry.chapters() if c.id == study), None)
    return spec.key_numbers if spec else ()


@dataclass
class Previous:
    version: str
    site: Path
    page: Path | None  # the chapter's page in that version; None if it had no such chapter
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # keys' tables it did not publish


_HREF = re.compile(r'href="([^"]*_downloads/[^"]*)"')


def chapter_page(site: Path, study: str) -> Path | None:
    """The chapter's HTML page in a published version folder."""
    for page in sorted(site.rglob(f"{study}.html")):
        if "_sources" not in page.relative_to(site).parts:
            return page
    return None


def find_download(page: Path, name: str) -> Path | None:
    """The file a page offers for download as `name` (its `_downloads/<hash>/name` link)."""
    for href in _HREF.findall(page.read_text(encoding="utf-8", errors="replace")):
        path = unquote(urlsplit(html.unescape(href)).path)
        if Path(path).name == name:
            target = (page.parent / path).resolve()
            if target.is_file():
                return target
    return None


def page_tables(page: Path, study: str, keys=None) -> dict[str, pd.DataFrame]:
    """The key tables a built page offers for download (what its readers get), by name; both
    versions' sides of the comparison are read this way."""
    out = {}
    for key in key_numbers(study) if keys is None else keys:
        csv = find_download(page, f"{key.table}.csv")
        if csv is not None:
            out[key.table] = pd.read_csv(csv)
    return out


def load_previous(previous_site: str | Path, study: str, keys=None) -> Previous | None:
    """The previous version's tidy tables for `study`; None when there is no previous version."""
    if not previous_site:
        return None
    site = Path(previous_site)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(
            f"previous version {site}: no index.html there; expected a published version folder "
            "such as site/v0.1.0")
    prev = Previous(version=stamped_version(site) or site.name, site=site,
                    page=chapter_page(site, study))
    keys = key_numbers(study) if keys is None else keys
    prev.tables = page_tables(prev.page, study, keys) if prev.page else {}
    prev.missing = [key.table for key in keys if key.table not in prev.tables]
    return prev


def side_by_side(key: KeyNumbers, before: pd.DataFrame | None, now: pd.DataFrame, label: str) -> pd.DataFrame:
    """One row per index value: each key number as of `label` and now, and a status
    (same, changed, new, gone)."""
    index = list(key.index)
    now = now[[c for c in (*index, *key.values) if c in now.columns]]
    before = pd.DataFrame(columns=index) if before is None else \
        before[[c for c in (*index, *key.values) if c in before.columns]]
    merged = before.merge(now, on=index, how="outer", suffixes=(" prev", " now"), sort=False, indicator=True)
    # this version's row order, then rows only the previous version had
    rank: dict = {}
    for k in [*map(tuple, now[index].values), *map(tuple, before[index].values)]:
        rank.setdefault(k, len(rank))
    keys = list(map(tuple, merged[index].values))
    merged = merged.iloc[sorted(range(len(merged)), key=lambda i: rank[keys[i]])].reset_index(drop=True)
    out = merged[index].copy()
    same = pd.Series(True, index=merged.index)
    for v in key.values:
        missing = pd.Series(np.nan, index=merged.index, dtype=object)
        a = merged[f"{v} prev"] if f"{v} prev" in merged else merged[v] if v in before else missing
        b = merged[f"{v} now"] if f"{v} now" in merged else merged[v] if v in now else missing
        out[f"{v} ({label})"], out[f"{v} (this version)"] = a, b
        same &= _same(a, b)
    out["status"] = np.select([merged["_merge"] == "right_only", merged["_merge"] == "left_only", ~same],
                              ["new", "gone", "changed"], "same")
    return out


def _same(a: pd.Series, b: pd.Series) -> pd.Series:
    """Equal values (numbers within float noise from the CSV round trip), or both missing."""
    an, bn = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    numeric = an.notna() & bn.notna()
    close = pd.Series(np.isclose(an.fillna(0), bn.fillna(0), rtol=1e-9, atol=0), index=a.index)
    both_missing = a.isna() & b.isna()
    text_equal = a.astype(str) == b.astype(str)
    return both_missing | (numeric & close) | (~numeric & text_equal & a.notna())


def compare(study: str, previous_site: str | Path, current: dict[str, pd.DataFrame],
            keys=None) -> tuple[Previous | None, dict[str, pd.DataFrame]]:
    """The previous version (or None) and, per key table, the side-by-side frame."""
    keys = key_numbers(study) if keys is None else keys
    prev = load_previous(previous_site, study, keys)
    if prev is None or prev.page is None:
        return prev, {}
    return prev, {k.table: side_by_side(k, prev.tables.get(k.table), current[k.table], prev.version)
                  for k in keys if k.table in current and k.table not in prev.missing}


LABELS = {  # tidy column -> what a reader calls it
    "run_id": "run", "config": "configuration", "id": "claim", "verdict": "verdict",
    "output_tps": "output t/s", "median_ttft_s": "median TTFT (s)", "p99_ttft_s": "P99 TTFT (s)",
    "cost_per_m": "cost per M tokens", "single_stream_decode_tps": "single-stream decode t/s",
    "ttft_s": "TTFT (s)", "prefill_tps": "prefill t/s", "best_aggregate_tps": "best aggregate t/s",
    "power_w": "power (W)",
}
TABLES = {"runs": "runs", "key_figures": "configurations", "claims": "claims"}


def label(column: str) -> str:
    return LABELS.get(column, column.replace("_", " "))


def table_label(name: str) -> str:
    return TABLES.get(name, name.replace("_", " "))


def rounded(v) -> str:
    """A number as a reader compares it: whole units from 100 up, else three significant
    digits (never an exponent); text as it is."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–"
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        v = float(v)
        if abs(v) >= 100:
            return f"{v:,.0f}"
        return np.format_float_positional(v, precision=3, unique=False, fractional=False, trim="-")
    return str(v)


def summary(prev: Previous | None, tables: dict[str, pd.DataFrame]) -> str:
    """One sentence (HTML) saying what changed since the previous version, or that there
    is nothing to compare with."""
    if prev is None:
        return ("There is no earlier published version of this book to compare with; "
                "a published version shows here how its key numbers differ from the one before.")

    version = f"<strong>{untrusted.html(prev.version)}</strong>"
    if prev.page is None:
        return f"The previous published version, {version}, did not have this chapter."
    parts = []
    for name, t in tables.items():
        counts = t["status"].value_counts()
        parts.append(f"{counts.get('changed', 0)} of {len(t)} {table_label(name)} changed"
                     + (f", {counts['new']} new" if counts.get("new") else "")
                     + (f", {counts['gone']} gone" if counts.get("gone") else ""))
    missing = f" It published no {', '.join(prev.missing)} table to compare with." if prev.missing else ""
    return (f"Since {version}: {'; '.join(parts) or 'nothing to compare'} (key numbers read from that "
            f"version's downloadable tables; only what changed is listed).{missing}")


PLACE = "benchbook-changes"
_PLACEHOLDER = re.compile(rf'<div class="{PLACE}" data-study="([^"<>]*)">.*?</div>', re.S)


def placeholder(study: str) -> None:
    """The chapter's section as an unpublished build shows it (no earlier version); `benchbook
    publish` replaces it with the comparison (`fill`)."""
    from IPython.display import HTML, display

    display(HTML(f'<div class="{PLACE}" data-study="{html.escape(study)}"><p>{summary(None, {})}</p></div>'))


def section_html(prev: Previous | None, tables: dict[str, pd.DataFrame]) -> str:
    """The section: the summary sentence and, per key table, the rows that changed."""
    parts = [f"<p>{summary(prev, tables)}</p>"]
    for name, t in tables.items():
        t = t[t["status"] != "same"]
        if len(t):
            caption = f"Changes since {prev.version}: {table_label(name)}"
            parts.append(html_table(readable(t, prev.version), caption).data)
    version = f' data-previous="{untrusted.html(prev.version)}"' if prev is not None else ""
    return f'<div class="{PLACE}"{version}>{"".join(parts)}</div>'


def fill(html_dir: Path, previous_site: str | Path | None, log=print) -> list[str]:
    """Every page of a built book (`html_dir`) with its changes section computed against the
    previous published version (`previous_site`, a version folder; None: there is none): both
    sides read from the pages' downloads. Returns the chapters filled in."""
    done = []
    for page in sorted(Path(html_dir).rglob("*.html")):
        if "_sources" in page.relative_to(html_dir).parts:
            continue
        text = page.read_text(encoding="utf-8")
        if PLACE not in text:
            continue

        def section(m: re.Match, page=page) -> str:
            study = html.unescape(m.group(1))
            prev, tables = compare(study, previous_site or "", page_tables(page, study))
            done.append(study)
            return section_html(prev, tables)

        page.write_text(_PLACEHOLDER.sub(section, text), encoding="utf-8")
    if previous_site:
        log(f"changes since {Path(previous_site).name}: {len(done)} page(s) compared ({', '.join(done)})")
    return done


def readable(t: pd.DataFrame, version: str) -> pd.DataFrame:
    """Reader's column names ('output t/s (v0.1.0)', '... (now)') and rounded numbers."""
    out = t.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]) or pd.api.types.is_integer_dtype(out[c]):
            out[c] = out[c].map(rounded)
    names = {}
    for c in out.columns:
        if c.endswith(f" ({version})"):
            names[c] = f"{label(c[: -len(version) - 3])} ({version})"
        elif c.endswith(" (this version)"):
            names[c] = f"{label(c[: -len(' (this version)')])} (now)"
        else:
            names[c] = label(c)
    return out.rename(columns=names)

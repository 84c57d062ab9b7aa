"""A second opinion: each chapter's headline figures beside independent public measurements.

The book checks each write-up against itself and against physical limits; a reader who must
choose hardware first asks whether anyone else measured the same thing. The measurements
live in data/facts/independent.yml (validated by benchbook.analysis.facts), the headline figures in
each chapter's published.yml. One rule (`judge`, book/methods.md) gives every headline a
verdict: agrees, higher or lower, against the spread the comparable sources themselves show.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.facts import Facts, load_facts
from ..format import fmt_ratio
from ..study import untrusted
from .published import PublishedError, Quantity, load_published, parse_quantity

SAME_MARGIN = 0.05  # measurements on the write-up's setup: their spread, widened by 5 %
CLOSE_MARGIN = 0.15  # a build, setting or checkpoint differs: widened by 15 %
AGREES, HIGHER, LOWER = "agrees", "higher", "lower"
VOID = "no verdict (setups differ)"
NONE = "none found"
ANCHOR = "#independent-measurements"  # the section heading's id on every chapter page


@dataclass(frozen=True)
class Verdict:
    """The rule's outcome for one published figure; `low`/`high` bound the band it was held to."""

    verdict: str
    n: int = 0  # comparable measurements (same or close) the band rests on
    low: float | None = None
    high: float | None = None
    margin: float | None = None
    median: float | None = None


def judge(published: float, measured: list[tuple[float, str]]) -> Verdict:
    """The rule. Only measurements marked same or close count; their range, widened by 5 %
    when all are on the write-up's setup and by 15 % when any differs in build or setting,
    is the band. The published figure agrees inside it, is higher above it, lower below it.
    Measurements of another setup ('different') never give a verdict; none at all is said."""
    usable = [(float(v), c) for v, c in measured if c in ("same", "close")]
    if not usable:
        return Verdict(VOID if measured else NONE)
    if any(v <= 0 for v, _ in usable) or published <= 0:
        raise ValueError("the rule compares positive rates; got a value at or below zero")
    margin = SAME_MARGIN if all(c == "same" for _, c in usable) else CLOSE_MARGIN
    values = [v for v, _ in usable]
    low, high = min(values) * (1 - margin), max(values) * (1 + margin)
    verdict = AGREES if low <= published <= high else HIGHER if published > high else LOWER
    return Verdict(verdict, len(values), low, high, margin, statistics.median(values))


# ---- reading the registry and the write-ups' printed values ----------------------------------

def published_quantity(headline: dict, data_root: str | Path = "data") -> Quantity:
    """The headline's printed value, from the claim or table cell of published.yml it names."""
    pub = headline["published"]
    path = Path(data_root) / pub["chapter"] / "published.yml"
    published = load_published(path)
    if pub.get("claim"):
        claim = next((c for c in published.claims if c.get("id") == pub["claim"]), None)
        if claim is None:
            raise PublishedError(f"{path}: no claim {pub['claim']!r} (named by independent.yml)")
        text = claim["published"]
    else:
        table = next((t for t in published.tables if t.id == pub["table"]), None)
        row = next((r for r in (table.rows if table else []) if r[0] == pub["row"]), None)
        if row is None or pub["column"] not in table.columns:
            raise PublishedError(f"{path}: no cell {pub['table']}/{pub['row']!r}/{pub['column']!r} "
                                 "(named by independent.yml)")
        text = row[table.columns.index(pub["column"])]
    q = parse_quantity(text, f"{path}, headline value")
    if q.unit and q.unit != headline["unit"]:
        raise PublishedError(f"{path}: {text!r} is in {q.unit}; "
                             f"independent.yml gives the headline in {headline['unit']}")
    return q


def compare(facts: Facts, data_root: str | Path = "data") -> dict[str, tuple[dict, Quantity, list[dict], Verdict]]:
    """Every headline with its printed value, its independent measurements and the rule's
    verdict: the one comparison both the chapter sections and the book table show."""
    out = {}
    for key, h in facts.sections["headlines"].items():
        q = published_quantity(h, data_root)
        ms = [m for m in facts.sections["measurements"].values() if m["headline"] == key]
        out[key] = (h, q, ms, judge(q.value, [(m["value"], m["comparable"]) for m in ms]))
    return out


def _link(source: dict) -> str:
    """The source as an HTML link built here (title escaped, only http(s) targets)."""
    target = untrusted.url(source.get("url"))
    title = untrusted.html(source.get("title", ""))
    where = (f" ({untrusted.html(source['path'])} @ {untrusted.html(source['commit'][:12])})"
             if source.get("repo") else "")
    return f'<a href="{untrusted.html(target)}">{title}</a>{where}' if target else title + where


def source_id(source: dict) -> str:
    """Who published it: a repository (several files or threads of one project count once),
    otherwise the page."""
    if source.get("repo"):
        return str(source["repo"])
    m = re.match(r"https?://github\.com/([^/]+/[^/]+)", str(source.get("url") or ""))
    return m.group(1) if m else str(source.get("url"))


def _workload(w: dict) -> str:
    parts = [str(w.get("test") or "")]
    if w.get("input_tokens") is not None or w.get("output_tokens") is not None:
        parts.append(f"{_tokens(w.get('input_tokens'))} in / {_tokens(w.get('output_tokens'))} out")
    if w.get("concurrency") is not None:
        parts.append(f"concurrency {w['concurrency']}")
    return ", ".join(p for p in parts if p)


def _tokens(v) -> str:
    return "?" if v is None else f"{v:,}"


def _rate(v: float | None) -> str:
    return "" if v is None else f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


@dataclass
class Section:
    """What a chapter page shows under "Independent measurements"."""

    chapter: str
    comparable: bool  # is the page's data the write-up's setup?
    summary: pd.DataFrame  # one row per headline: published, band, median, verdict
    measurements: pd.DataFrame  # every independent value for those headlines, with its source
    searched: pd.DataFrame  # what was searched for this chapter
    verdicts: dict[str, Verdict]
    sources: int = 0  # distinct sources (a repository counts once, whatever files were read)


def section(chapter: str, comparable: bool = True, facts_dir: str | Path = "data/facts",
            data_root: str | Path = "data", facts: Facts | None = None) -> Section:
    """The section for a write-up chapter; `comparable` is whether the page's own data is the
    write-up's setup (the comparison is always with the write-up's published figures)."""
    facts = facts or load_facts(facts_dir)
    rows, mrows, verdicts, sources = [], [], {}, set()
    for key, (h, q, ms, v) in compare(facts, data_root).items():
        if chapter not in h["chapters"]:
            continue
        verdicts[key] = v
        rows.append({
            "headline": h["title"], "write-up setup": h["setup"], "published": q.text,
            "independent (same or close)": v.n, "band": _band(v, h["unit"]),
            "median": _rate(v.median), "verdict": v.verdict,
        })
        for m in ms:
            sources.add(source_id(m["source"]))
            mrows.append({
                "headline": h["title"], "platform": m["platform"], "model": m["model"],
                "quantisation": m["quantisation"], "engine": m["engine"], "workload": _workload(m["workload"]),
                "metric": m["metric"], "value": f"{m['value']:,g} {m['unit']}", "comparable": m["comparable"],
                "why": m["why"], "source": _link(m["source"]),
                "date": m["date"] + (f" ({m['date_note']})" if m.get("date_note") else ""),
            })
    searched = pd.DataFrame(facts.sections["searches"].get(chapter, []), columns=["tool", "query", "found"])
    return Section(chapter, comparable, pd.DataFrame(rows, columns=SUMMARY_COLUMNS),
                   pd.DataFrame(mrows, columns=MEASUREMENT_COLUMNS), searched, verdicts, len(sources))


SUMMARY_COLUMNS = ["headline", "write-up setup", "published", "independent (same or close)", "band", "median",
                   "verdict"]
MEASUREMENT_COLUMNS = ["headline", "platform", "model", "quantisation", "engine", "workload", "metric", "value",
                       "comparable", "why", "source", "date"]


def _band(v: Verdict, unit: str) -> str:
    if v.low is None:
        return ""
    return f"{_rate(v.low)}–{_rate(v.high)} {unit} (±{v.margin:.0%})"


def glue_values(s: Section) -> dict:
    """The section's numbers for its prose (glue keys are these literals)."""
    counts = {k: sum(v.verdict == k for v in s.verdicts.values()) for k in (AGREES, HIGHER, LOWER)}
    return {
        "independent_headlines": len(s.verdicts),
        "independent_judged": sum(v.n > 0 for v in s.verdicts.values()),
        "independent_values": len(s.measurements),
        "independent_sources": s.sources,
        "independent_agrees": counts[AGREES],
        "independent_higher": counts[HIGHER],
        "independent_lower": counts[LOWER],
        "independent_same_margin_pct": round(SAME_MARGIN * 100),
        "independent_close_margin_pct": round(CLOSE_MARGIN * 100),
    }


def note(s: Section) -> str:
    """A note (Markdown) for what the reader must know first: the page's data is not the
    write-up's setup, or nothing comparable was found (with what was searched below)."""
    parts = []
    if not s.comparable:
        parts.append(":::{admonition} The write-up's setup, not this data\n:class: important\n"
                     "This page's data is not the write-up's setup. The comparison below sets the "
                     "write-up's published figures beside others' measurements of the write-up's "
                     "setup; it says nothing about this data.\n:::")
    missing = list(s.summary.loc[s.summary["independent (same or close)"] == 0, "headline"])
    if missing:
        names = "; ".join(untrusted.md(n) for n in missing)
        parts.append(":::{admonition} Nothing comparable found\n:class: note\n"
                     f"No independent measurement on the write-up's setup (same or close) was found for: "
                     f"{names}. Whatever was found is listed with why it differs, and the searches are "
                     "listed below.\n:::")
    return "\n\n".join(parts)


def ledger_links(chapter: str, facts_dir: str | Path = "data/facts", facts: Facts | None = None) -> dict[str, str]:
    """Claim id -> link to the section, for the ledger rows of this chapter's headline figures."""
    facts = facts or load_facts(facts_dir)
    return {cid: ANCHOR for h in facts.sections["headlines"].values()
            for cid in (h.get("ledger") or {}).get(chapter, [])}


# ---- the book-level view (synthesis) --------------------------------------------------------

def book_table(facts_dir: str | Path = "data/facts", data_root: str | Path = "data",
               facts: Facts | None = None) -> pd.DataFrame:
    """Every headline: its published value against the median of the comparable independent
    ones, the ratio, and the verdict of the rule."""
    facts = facts or load_facts(facts_dir)
    rows = []
    for h, q, _, v in compare(facts, data_root).values():
        rows.append({
            "chapter": h["published"]["chapter"], "headline": h["title"], "unit": h["unit"],
            "published": q.value, "independent median": v.median, "comparable sources": v.n,
            "published / median": (q.value / v.median) if v.median else None, "verdict": v.verdict,
        })
    return pd.DataFrame(rows, columns=["chapter", "headline", "unit", "published", "independent median",
                                       "comparable sources", "published / median", "verdict"])


def book_display(t: pd.DataFrame) -> pd.DataFrame:
    """The book table as shown: rates with their unit, the ratio as a factor."""
    def rate(v, unit):
        return "–" if v is None or pd.isna(v) else f"{_rate(float(v))} {unit}"
    return pd.DataFrame({
        "chapter": t["chapter"], "headline": t["headline"],
        "published": [rate(v, u) for v, u in zip(t["published"], t["unit"])],
        "independent median": [rate(v, u) for v, u in zip(t["independent median"], t["unit"])],
        "comparable sources": t["comparable sources"],
        "published / median": t["published / median"].map(fmt_ratio),
        "verdict": t["verdict"],
    })


def book_finding(t: pd.DataFrame) -> str:
    """One sentence per verdict that is not agreement, naming the figures (from data)."""
    parts = []
    for verdict, words in ((HIGHER, "Above what others measured"), (LOWER, "Below what others measured")):
        names = list(t.loc[t["verdict"] == verdict, "headline"])
        if names:
            parts.append(f"{words}: {'; '.join(names)}.")
    unjudged = list(t.loc[t["comparable sources"] == 0, "headline"])
    if unjudged:
        parts.append(f"Nothing comparable found for: {'; '.join(unjudged)}.")
    return " ".join(parts) or "Every headline figure agrees with what others measured."


def book_glue(t: pd.DataFrame) -> dict:
    """The book-level finding's numbers: how many headlines could be judged, how they fell,
    and how far the write-ups sit from the median of what others measured."""
    judged = t[t["comparable sources"] > 0]
    dev = (judged["published / median"] - 1).abs()
    worst = judged.loc[dev.idxmax()] if len(judged) else None
    return {
        "independent_book_headlines": len(t),
        "independent_book_judged": len(judged),
        "independent_book_agrees": int((t["verdict"] == AGREES).sum()),
        "independent_book_higher": int((t["verdict"] == HIGHER).sum()),
        "independent_book_lower": int((t["verdict"] == LOWER).sum()),
        "independent_book_unjudged": int(len(t) - len(judged)),
        "independent_book_median_dev_pct": float(dev.median() * 100) if len(judged) else float("nan"),
        "independent_book_max_dev_pct": float(dev.max() * 100) if len(judged) else float("nan"),
        "independent_book_max_dev_headline": "" if worst is None else str(worst["headline"]),
        "independent_book_finding": book_finding(t),
    }

"""The cross-study view: every chapter's serving points on one chart, and what was left out.

Each chapter declares its points (benchbook.book.serving_points): a per-user and an
aggregate output rate from one run at one concurrency, or a measurement left out with the
reason. This module gathers them as the chapters wrote them, names each point's platform,
model and weight format by the facts registry (so one filter value covers every spelling),
counts what was left out and why, and lists a measurement two pages computed from the same
files once. It computes no rate of its own.
"""

from __future__ import annotations

from html import escape

import pandas as pd

from ...analysis.facts import Facts
from ...book.serving_points import POINT_COLUMNS
from ...format import fmt_rate
from ...page import interactive
from ...study.marks import MARKS, WHY, legend_html, with_marks

# what one measurement is: a page that runs on the same files as another gives the same numbers
SAME_MEASUREMENT = ["platform", "model", "quantisation", "devices", "concurrency", "per_user_tps", "aggregate_tps",
                    "input_tokens", "output_tokens"]
SHOWN = ["platform_name", "model_name", "precision"]  # the filters' names for each point


def gather(runs) -> pd.DataFrame:
    """Every chapter's serving_points rows (ChapterRun.points), with their marks, in the
    synthesis's chapter order."""
    frames = [r.points for r in runs if r.status == "ok" and r.points is not None and len(r.points)]
    if not frames:
        return with_marks(pd.DataFrame(columns=[*POINT_COLUMNS, *SHOWN, "link", "duplicate_of"]), {}, {})
    marks, why, rows = {}, {}, 0
    for f in frames:
        for col, cells in (f.attrs.get(MARKS) or {}).items():
            for label, ids in cells.items():
                marks.setdefault(col, {})[rows + int(label)] = ids
        why.update(f.attrs.get(WHY) or {})
        rows += len(f)
    out = pd.concat([f.reset_index(drop=True) for f in frames], ignore_index=True)
    return with_marks(out, marks, why)


def name(facts: Facts, df: pd.DataFrame) -> pd.DataFrame:
    """Each row's platform, model and weight format as the filters show them: the facts
    registry's short name where it knows the text, else the text as the chapter gave it."""
    out = df.copy()
    out["platform_name"] = [_named(facts, "platforms", v, ("short", "name")) for v in df["platform"]]
    out["model_name"] = [_named(facts, "models", v, ("name",)) or _bare_model(v) for v in df["model"]]
    out["precision"] = [_precision(facts, v) for v in df["quantisation"]]
    out["link"] = [f"{s}.html" + (f"#{a}" if a else "") for s, a in zip(df["study"], df["anchor"])]
    out.attrs = df.attrs
    return out


def _named(facts: Facts, section: str, text, fields) -> str:
    key = facts.identify(section, text)
    if key is None:
        # a platform the registry does not know keeps its whole text: a cut at its first
        # bracket or comma could join two setups that differ only there
        return "" if section == "models" else (str(text or "").strip() or "unknown")
    entry = facts.entry(section, key)
    return next((str(entry[f]) for f in fields if entry.get(f)), key)


def _bare_model(text) -> str:
    """A model id without its organisation ('Qwen/Qwen3.6-27B-FP8' -> 'Qwen3.6-27B-FP8')."""
    return str(text or "unknown").rsplit("/", 1)[-1]


def _precision(facts: Facts, text) -> str:
    key = facts.identify("quantisations", text)
    return key.upper() if key else (str(text).split("(")[0].strip() or "unknown")


def mark_duplicates(df: pd.DataFrame) -> pd.DataFrame:
    """`duplicate_of`: for a point another page already gave (the same files run under two
    chapters' notebooks: equal platform, model, weights, devices, concurrency and rates), the
    page listed first; empty otherwise. The chart shows such a point once."""
    out = df.copy()
    pts = out[out["left_out"] == ""]
    key = pd.Series(["|".join(map(str, row)) for row in pts[SAME_MEASUREMENT].itertuples(index=False)],
                    index=pts.index, dtype=object)
    first = {}
    dup = pd.Series("", index=out.index, dtype=object)
    for i, k in key.items():
        if k in first:
            dup[i] = out.at[first[k], "study"]
        else:
            first[k] = i
    out["duplicate_of"] = dup
    out.attrs = df.attrs
    return out


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """The points the chart draws: paired, and not another page's duplicate (marks kept)."""
    keep = (df["left_out"] == "") & (df["duplicate_of"] == "")
    out = _subset(df, keep)
    out["concurrency"] = out["concurrency"].astype(int)  # a point's is whole (conform_points)
    out["devices"] = out["devices"].astype(int)
    return out


def _subset(df: pd.DataFrame, keep: pd.Series) -> pd.DataFrame:
    out = df[keep]
    marks = {c: {i: ids for i, ids in m.items() if i in out.index} for c, m in (df.attrs.get(MARKS) or {}).items()}
    return with_marks(out.copy(), marks, df.attrs.get(WHY) or {})


def left_out(df: pd.DataFrame) -> pd.DataFrame:
    """Per chapter and reason, how many measurements give no point."""
    out = df[df["left_out"] != ""]
    if not len(out):
        return pd.DataFrame(columns=["chapter", "why left out", "measurements"])
    g = out.groupby(["study", "left_out"], sort=False).size().reset_index(name="measurements")
    return g.rename(columns={"study": "chapter", "left_out": "why left out"})


def per_chapter(df: pd.DataFrame, runs) -> pd.DataFrame:
    """Per chapter (linked to its page): its data kind, the points it gives, those another page
    gave first, and the measurements left out."""
    rows = []
    for r in runs:
        if r.status != "ok":
            continue
        mine = df[df["study"] == r.study]
        kind = ", ".join(dict.fromkeys(mine["data_kind"])) or ("reconstructed" if r.reconstructed else "measured")
        declared = r.points is not None
        rows.append({"chapter": f'<a href="{escape(r.study, quote=True)}.html">{escape(r.study)}</a>', "data": kind,
                     "points": int(((mine["left_out"] == "") & (mine["duplicate_of"] == "")).sum()),
                     "already another page's": int((mine["duplicate_of"] != "").sum()),
                     "left out": int((mine["left_out"] != "").sum()),
                     "note": "" if declared else "the chapter declares no serving_points output"})
    return pd.DataFrame(rows, columns=["chapter", "data", "points", "already another page's", "left out", "note"])


def glue(df: pd.DataFrame) -> dict:
    """The counts the section's prose quotes (glue keys `serving_points_*`)."""
    pts = shown(df)
    gone = df[df["left_out"] != ""]
    return {
        "serving_points_shown": len(pts),
        "serving_points_chapters": int(pts["study"].nunique()),
        "serving_points_reconstructed": int((pts["data_kind"] == "reconstructed").sum()),
        "serving_points_measured": int((pts["data_kind"] == "measured").sum()),
        "serving_points_duplicates": int((df["duplicate_of"] != "").sum()),
        "serving_points_left_out": len(gone),
        "serving_points_left_out_reasons": int(gone["left_out"].nunique()),
        "serving_points_platforms": int(pts["platform_name"].nunique()),
    }


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Every point the chart draws as a table row, linked to its chapter's section (the
    chart's data for a reader without a pointer, or a screen reader)."""
    pts = shown(df)
    if not len(pts):
        return pd.DataFrame()
    out = pd.DataFrame({
        "configuration": [f'<a href="{escape(u, quote=True)}">{escape(str(lab))}</a>'
                          for u, lab in zip(pts["link"], pts["label"])],
        "data": pts["data_kind"].tolist(),
        "platform": [f"{int(d)}× {p}" if d > 1 else p for p, d in zip(pts["platform_name"], pts["devices"])],
        "model": pts["model_name"].tolist(),
        "precision": pts["precision"].tolist(),
        "concurrency": [int(c) for c in pts["concurrency"]],
        "t/s per user": [fmt_rate(v, 1) for v in pts["per_user_tps"]],
        "t/s per device": [fmt_rate(v, 1) for v in pts["per_device_tps"]],
        "measured as": pts["per_user_basis"].tolist(),
    })
    marks = pts.attrs.get(MARKS) or {}
    pos = {label: i for i, label in enumerate(pts.index)}
    shown_marks = {"t/s per user": {pos[i]: v for i, v in (marks.get("per_user_tps") or {}).items() if i in pos},
                   "t/s per device": {pos[i]: v for i, v in (marks.get("per_device_tps") or {}).items() if i in pos}}
    return with_marks(out, shown_marks, pts.attrs.get(WHY) or {})


# ---- the chart ---------------------------------------------------------------------------

FILTERS = {"platform_name": "Platform", "model_name": "Model", "precision": "Precision", "data_kind": "Data"}
SYMBOLS = {"measured": "circle", "reconstructed": "circle-open"}  # filled: measured files (as the prose says)
HOVER = {"label": "configuration", "model_name": "model", "precision": "weights", "devices": "devices",
         "concurrency": "concurrency", "per_user_basis": "per user", "run": "run", "study": "chapter"}


def chart_html(df: pd.DataFrame) -> str:
    """The cross-study chart with its filters (benchbook.page.interactive.scatter), and the
    legend of any point resting on a generator's choice; '' without points."""
    pts = shown(df)
    if not len(pts):
        return ""
    fig = interactive.scatter(
        pts, "per_user_tps", "per_device_tps", "",  # the section's heading is its title
        "output t/s per user", "output t/s per accelerator", colour="platform_name", symbol="data_kind",
        filters=FILTERS, link="link", hover=HOVER, symbols=SYMBOLS)
    found = fig.layout.meta.get("benchbook_assumed") if isinstance(fig.layout.meta, dict) else None
    summary = "Open the chart of every point: hover for its values, click to open its chapter, choose what to show"
    return interactive.filtered_block(fig, summary, interactive.filter_controls(pts, FILTERS)) + \
        (legend_html(list(found), found) if found else "")

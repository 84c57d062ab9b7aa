"""The synthesis: every study's results on one page, against physical limits, cost and energy.

It reads what each chapter page computed and declared as its outputs (its folder beside
the executed notebook: `chapter.json`, `key_figures.csv`, `claims.csv`, `caveats.csv`), so
a chapter rerun on other data with `benchbook run X --data DIR` reaches this page too, and
the numbers here are the ones the chapter shows. It adds what no write-up has: each
measured rate as a share of its platform's ceiling (facts registry), cost with explicit
currencies, and tokens per kWh. A chapter that has not produced its outputs is listed as
missing; nothing is filled in for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...analysis import cost as cost_mod
from ...analysis.facts import Facts, FactsError, load_facts
from ...analysis.limits import bandwidth_sensitivity, limits
from ...book.key_figures import KEY_FIGURES, conform_key_figures
from ...book.paths import STUDIES_DIR, find_repo
from ...book.registry import get
from ...book.serving_points import POINT_COLUMNS, conform_points
from ...format import fmt_money, fmt_rate, fmt_seconds
from ...ledger import claims as claims_mod
from ...page import plots
from ...page.palette import platform_colour
from ...page.report import anchor, write_downloads
from ...study import untrusted
from ...study.folder import content_hash
from ...study.marks import Glued, legend_html, marked_html, union, with_marks
from ...study.provenance import code_version, package_versions
from . import points as points_mod

STUDY = "synthesis"
CLAIMS_ANCHOR = "claims-ledger"


@dataclass
class ChapterRun:
    """What the synthesis read from one chapter's declared outputs."""

    study: str
    status: str  # ok | missing | failed
    detail: str = ""
    key_figures: pd.DataFrame | None = None
    has_key_figures: bool = False
    ledger: pd.DataFrame | None = None
    caveats: pd.DataFrame | None = None
    data: list = field(default_factory=list)  # provenance records of the folders it read
    comparable: bool = True
    assumed_columns: list = field(default_factory=list)  # tidy columns its generator chose values for
    assumed_rows: dict = field(default_factory=dict)  # key_figures row -> {column: ids} of a generator's choices
    assumed_claims: dict = field(default_factory=dict)  # claim id -> ids its recomputed value rests on
    assumed_why: dict = field(default_factory=dict)  # id -> why
    points: pd.DataFrame | None = None  # its serving_points (None: it declares none), cells marked

    @property
    def reconstructed(self) -> bool:
        """Its own data folder is reconstructed (the folders it reads may differ)."""
        return any(d.get("status") == "reconstructed" for d in self.data if d.get("study", self.study) == self.study)

    @property
    def reads_reconstructed(self) -> bool:
        return any(d.get("status") == "reconstructed" for d in self.data if d.get("study", self.study) != self.study)


@dataclass
class Results:
    params: dict
    facts: Facts
    runs: list[ChapterRun]
    key_figures: pd.DataFrame
    limits: pd.DataFrame
    claims: pd.DataFrame
    caveats: pd.DataFrame  # every caveat of every chapter, with its kind
    own_caveats: pd.DataFrame  # this page's
    rate: cost_mod.Rate | None
    provenance: pd.DataFrame
    versions: dict
    ledger: pd.DataFrame  # this page makes no claims of its own: an empty ledger
    assumed: dict = field(default_factory=dict)  # (study, config) -> {key_figures column: ids}
    assumed_why: dict = field(default_factory=dict)  # id -> why, of every chapter's choices
    points: pd.DataFrame = field(default_factory=pd.DataFrame)  # every chapter's serving points (points.py)

    def run(self, study: str) -> ChapterRun | None:
        return next((r for r in self.runs if r.study == study), None)


# ---- reading the chapters' outputs ------------------------------------------------------

def read_chapter(study: str, folder: Path) -> ChapterRun:
    """A chapter's declared outputs, from the folder its page wrote them to. A file that
    cannot be read makes the chapter 'failed', with the file and the reason."""
    info = folder / "chapter.json"
    if not info.is_file():
        return ChapterRun(study, "missing", f"no outputs in {folder.name}/: the chapter has not been executed")
    where = info
    try:
        doc = json.loads(info.read_text(encoding="utf-8"))
        run = ChapterRun(study, "ok", data=list(doc.get("data") or []), comparable=bool(doc.get("comparable", True)),
                         assumed_columns=list(doc.get("assumed_columns") or []))
        _read_assumed(run, doc)
        outputs = doc.get("outputs") or {}
        for name, columns in (("claims", claims_mod.LEDGER_COLUMNS), ("caveats", ["origin", "caveat"]),
                              ("key_figures", list(KEY_FIGURES))):
            where = folder / str(outputs.get(name, ""))
            frame = _csv(folder, outputs.get(name), columns)
            if name == "key_figures" and name in outputs:
                # its rows belong to this page, whose notebook may be another page's (they link here)
                run.key_figures, run.has_key_figures = conform_key_figures(frame, study).assign(study=study), True
            elif name != "key_figures":
                setattr(run, "ledger" if name == "claims" else name, frame)
        if "serving_points" in outputs:
            where = folder / str(outputs["serving_points"])
            run.points = _marked_points(conform_points(_csv(folder, outputs["serving_points"], list(POINT_COLUMNS)),
                                                       study).assign(study=study), doc, study)
        if not run.has_key_figures:
            run.detail = "the chapter declares no key_figures output: its claims and caveats are included, " \
                         "its numbers are not in the tables below"
        elif not len(run.key_figures):
            run.detail = "no configuration of its data has the runs its key figures need: its claims and " \
                         "caveats are included, it has no row in the tables below"
    except (OSError, ValueError, KeyError) as exc:
        return ChapterRun(study, "failed", f"reading {folder.name}/{where.relative_to(folder)}: "
                                           f"{type(exc).__name__}: {exc}")
    return run


def _marked_points(df: pd.DataFrame, doc: dict, study: str) -> pd.DataFrame:
    """A chapter's serving points with the cells it marked as a generator's choice
    (chapter.json's assumed_cells), ids named with the chapter's study."""
    cells = (doc.get("assumed_cells") or {}).get("serving_points") or {}
    why = {_qualified(study, i): w for i, w in (doc.get("assumed_why") or {}).items()}
    marks = {col: {int(row): tuple(_qualified(study, i) for i in ids) for row, ids in rows.items()}
             for col, rows in cells.items()}
    return with_marks(df.drop(columns=["assumed_by_generator"], errors="ignore"), marks, why)


def _qualified(study: str, i: str) -> str:
    """An assumption id as this page names it: with the study whose folder holds it."""
    return i if "/" in i else f"{study}/{i}"


def _read_assumed(run: ChapterRun, doc: dict) -> None:
    """What the chapter marked as resting on its generator's choices (report.write_outputs):
    cells of its key figures, claims, and why; ids named with the chapter's study."""
    q = lambda ids: tuple(_qualified(run.study, i) for i in ids)  # noqa: E731
    cells = (doc.get("assumed_cells") or {}).get("key_figures") or {}
    for col, rows in cells.items():
        for row, ids in rows.items():
            run.assumed_rows.setdefault(int(row), {})[col] = q(ids)
    run.assumed_claims = {cid: q(ids) for cid, ids in (doc.get("assumed_claims") or {}).items()}
    run.assumed_why = {_qualified(run.study, i): w for i, w in (doc.get("assumed_why") or {}).items()}


def _assumed(runs: list[ChapterRun]) -> tuple[dict, dict]:
    """(study, config) -> {key_figures column: ids}, and id -> why, over the chapters."""
    out, why = {}, {}
    for r in runs:
        why.update(r.assumed_why)
        if r.key_figures is None:
            continue
        for i, config in enumerate(r.key_figures["config"]):
            if r.assumed_rows.get(i):
                out[(r.study, config)] = r.assumed_rows[i]
    return out, why


# What each shown quantity reads of a configuration's key figures: it holds what they hold.
READS = {
    "decode": ("single_stream_decode_tps",), "share": ("single_stream_decode_tps", "acceptance_length"),
    "pass": ("acceptance_length",), "ttft": ("ttft_s",), "prefill": ("prefill_tps",),
    "aggregate": ("best_aggregate_tps", "best_aggregate_concurrency"), "cost": ("cost_per_m", "best_aggregate_tps"),
    "power": ("power_w",), "kwh": ("best_aggregate_tps", "power_w"),
}


def row_ids(r: Results, x, what: str) -> tuple:
    """The assumption ids a shown quantity of one configuration (a limits row) rests on."""
    found = r.assumed.get((x["study"], x["config"]), {})
    return union(*(found.get(c, ()) for c in READS[what]))


def _mark(r: Results, df: pd.DataFrame, shows: dict[str, str]) -> pd.DataFrame:
    """Mark the cells of a table with one row per limits row: {column: what it shows}."""
    rows = list(r.limits.iterrows())
    return with_marks(df, {col: {i: row_ids(r, x, what) for i, (_, x) in enumerate(rows)}
                           for col, what in shows.items() if col in df.columns}, r.assumed_why)


def _csv(folder: Path, name: str | None, columns: list[str]) -> pd.DataFrame:
    """A declared output table; an undeclared one is empty, a declared one that is gone an error."""
    if not name:
        return pd.DataFrame(columns=columns)
    if not (folder / name).is_file():
        raise FileNotFoundError(f"chapter.json declares {name}, which is not there")
    return pd.read_csv(folder / name, keep_default_na=False, na_values=[""])


# ---- the analysis ---------------------------------------------------------------------

def analyse(facts_dir="data/facts", usd_per_eur=None, fx_date="", api_price="openai-gpt-5.2",
            studies_dir=None) -> Results:
    """`studies_dir`: where the chapters wrote their outputs (default: the book's studies/)."""

    params = dict(facts_dir=facts_dir, usd_per_eur=usd_per_eur, fx_date=fx_date, api_price=api_price)
    facts = load_facts(facts_dir)
    if api_price not in facts.sections.get("api", {}):
        raise FactsError([f"prices.yml: api.{api_price}: no such API price (parameter api_price); known: "
                          f"{', '.join(facts.sections.get('api', {})) or 'none'}"])
    rate = _rate(facts, usd_per_eur, fx_date)
    root = Path(studies_dir) if studies_dir else find_repo() / STUDIES_DIR
    runs = [read_chapter(study, root / study) for study in get(STUDY).uses]
    frames = [r.key_figures for r in runs if r.key_figures is not None and len(r.key_figures)]
    kf = once(pd.concat(frames, ignore_index=True)) if frames else \
        conform_key_figures(pd.DataFrame(columns=list(KEY_FIGURES)), STUDY)
    lim = _add_cost_and_energy(facts, limits(facts, kf), rate, api_price)  # (no rows: still its columns)
    prov, seen = [], set()
    for r in runs:
        for d in r.data:
            if (d.get("folder"), d.get("data_hash")) not in seen:
                seen.add((d.get("folder"), d.get("data_hash")))
                prov.append(d)
    prov.append(dict(study="facts registry", label="data/facts (cited values)", status="cited",
                     data_hash=content_hash(Path(facts_dir))[:16], folder=str(facts_dir),
                     files=len(list(Path(facts_dir).glob("*.yml")))))
    assumed, why = _assumed(runs)
    pts = points_mod.mark_duplicates(points_mod.name(facts, points_mod.gather(runs)))
    return Results(
        params=params, facts=facts, runs=runs, key_figures=kf, limits=lim,
        claims=claims_summary(runs), caveats=caveats_index(runs), own_caveats=own_caveats(facts, runs, lim, rate),
        rate=rate, provenance=pd.DataFrame(prov), versions={"code": code_version(), **package_versions()},
        ledger=pd.DataFrame(columns=claims_mod.LEDGER_COLUMNS), assumed=assumed, assumed_why=why, points=pts,
    )


# what one measurement of a configuration is: two pages that ran on the same raw files (the
# DGX Spark runs under the H100 and the GB10 notebooks) give the same numbers for it
SAME_RUNS = ["platform", "model", "quantisation", "kv_dtype", "speculative", "single_stream_decode_tps", "ttft_s",
             "best_aggregate_tps", "best_aggregate_concurrency", "prefill_tps"]


def once(kf: pd.DataFrame) -> pd.DataFrame:
    """Key figures with a configuration two pages computed from the same runs listed once
    (from the first page in the synthesis's `uses`): equal platform, model, weights and
    measured numbers."""
    key = kf[SAME_RUNS].astype(str)
    return kf[~key.duplicated(keep="first")].reset_index(drop=True)


def _rate(facts: Facts, usd_per_eur, fx_date) -> cost_mod.Rate | None:
    """The dated EUR/USD rate: the parameters, else one recorded in fx.yml, else none."""
    if usd_per_eur is not None:
        return cost_mod.usd_per_eur(usd_per_eur, fx_date, "parameter usd_per_eur")
    if fx_date:
        raise cost_mod.CurrencyError(f"fx_date {fx_date!r} given without usd_per_eur")
    f = facts.get("rates", "usd_per_eur", "rate") if "usd_per_eur" in facts.sections.get("rates", {}) else None
    if f is None:
        return None
    return cost_mod.usd_per_eur(float(f.value), f.date or "", facts.cite(f))


def _api_entry(facts: Facts, name: str) -> dict | None:
    """The API price prices.yml gives under `name` (parameter api_price), or None without one."""
    return facts.entry("api", name) if name in facts.sections.get("api", {}) else None


def _add_cost_and_energy(facts: Facts, lim: pd.DataFrame, rate, api_price: str) -> pd.DataFrame:
    out = lim.copy()
    # energy: measured draw, a power limit, or the platform's power bound (TDP) x devices
    kinds, watts = [], []
    for _, r in out.iterrows():
        if pd.notna(r["power_w"]) and r["power_kind"] in ("measured", "limit"):
            kinds.append(r["power_kind"])
            watts.append(float(r["power_w"]))
            continue
        bound = facts.get("platforms", r["platform_key"], "power_bound") if isinstance(r["platform_key"], str) else None
        kinds.append("tdp" if bound is not None else "")
        watts.append(bound.value * int(r["devices"] or 1) if bound is not None else np.nan)
    out["power_basis"], out["power_used_w"] = kinds, watts
    out["tokens_per_kwh"] = [cost_mod.tokens_per_kwh(t, w) if pd.notna(t) and pd.notna(w) and w > 0 else np.nan
                             for t, w in zip(out["best_aggregate_tps"], out["power_used_w"])]
    # the API price, compared in its own currency, or through the dated rate
    api = _api_entry(facts, api_price)
    ratios, notes = [], []
    for _, r in out.iterrows():
        if not (api and pd.notna(r["cost_per_m"]) and r["currency"]):
            ratios.append(np.nan)
            notes.append("")
            continue
        price = cost_mod.Money(api["output"].value, api["output"].unit.split("/")[0])
        ours = cost_mod.Money(float(r["cost_per_m"]), r["currency"])
        try:
            ratios.append(cost_mod.ratio(price, ours, rate))
            notes.append("" if price.currency == ours.currency else f"converted at {rate.label()}")
        except cost_mod.CurrencyError as exc:
            ratios.append(np.nan)
            notes.append(f"not derivable: {exc}")
    out["api_ratio"], out["api_note"] = ratios, notes
    return out


CLOUD_COLUMNS = ["config", "label", "offer", "price", "source", "aggregate_tps", "concurrency", "cost_per_m",
                 "currency", "api_over_ours"]


def cloud_scenarios(r: Results) -> pd.DataFrame:
    """USD cost per M tokens of each configuration at the USD cloud prices for its platform.

    Same currency as the USD API price, so the two divide without an exchange rate.
    """
    lim, rows = r.limits, []
    if not len(lim):
        return pd.DataFrame(columns=CLOUD_COLUMNS)
    api = _api_entry(r.facts, r.params["api_price"])
    for key, entry in r.facts.sections.get("hourly", {}).items():
        for path in ("price", "price_low", "price_high"):
            f = r.facts.get("hourly", key, path)
            if f is None:
                continue
            currency = f.unit.split("/")[0]
            if api is not None and not api["output"].unit.startswith(currency):
                continue  # the point of this table: the API's currency, no exchange rate needed
            for _, row in lim[lim["platform_key"] == entry.get("platform")].iterrows():
                c = cost_mod.cost_per_million(cost_mod.Money(f.value, currency), row["best_aggregate_tps"])
                api_ratio = np.nan
                if api is not None and api["output"].unit.startswith(currency):
                    api_ratio = cost_mod.ratio(cost_mod.Money(api["output"].value, currency), c)
                rows.append(dict(config=row["config"], label=row["label"], offer=entry.get("name"),
                                 price=f"{f.value:g} {f.unit}", source=r.facts.cite(f),
                                 aggregate_tps=row["best_aggregate_tps"],
                                 concurrency=row["best_aggregate_concurrency"], cost_per_m=c.amount,
                                 currency=c.currency, api_over_ours=api_ratio))
    return pd.DataFrame(rows, columns=None if rows else CLOUD_COLUMNS)


# ---- claims and caveats across the book -----------------------------------------------

def distinct_claims(runs: list[ChapterRun]) -> pd.DataFrame:
    """One row per distinct statement across the chapters (claims_mod.claim_key), with what
    its verdicts rest on: 'checked' when some verdict could have failed (the write-up against
    itself, or measured data); else the basis of its verdicts ('a generator's choice' when
    any rests on one, else 'by construction'); else 'not comparable' or 'not derivable'."""
    rows = []
    for r in runs:
        if r.status != "ok" or r.ledger is None:
            continue
        for _, row in r.ledger.iterrows():
            rows.append(dict(key=claims_mod.claim_key(r.study, row), verdict=row["verdict"],
                             basis=row.get("basis", "") if isinstance(row.get("basis", ""), str) else ""))
    if not rows:
        return pd.DataFrame(columns=["key", "status", "holds"])
    df = pd.DataFrame(rows)
    out = []
    for key, g in df.groupby("key", sort=False):
        checked = g[g["basis"].isin(claims_mod.INDEPENDENT)]
        if len(checked):
            status, holds = "checked", bool((checked["verdict"] == claims_mod.HOLDS).all())
        elif (g["basis"] == claims_mod.GENERATOR).any():
            status, holds = claims_mod.GENERATOR, False
        elif (g["basis"] == claims_mod.BY_CONSTRUCTION).any():
            status, holds = claims_mod.BY_CONSTRUCTION, False
        elif (g["verdict"] == claims_mod.NOT_COMPARABLE).any():
            status, holds = "not comparable", False
        else:
            status, holds = "not derivable", False
        out.append(dict(key=key, status=status, holds=holds))
    return pd.DataFrame(out)


def distinct_claim_counts(runs: list[ChapterRun]) -> dict:
    d = distinct_claims(runs)
    st = d["status"] if len(d) else pd.Series(dtype=object)
    return {"claims_distinct": len(d), "claims_checked": int((st == "checked").sum()),
            "claims_checked_hold": int((d["holds"] & (st == "checked")).sum()) if len(d) else 0,
            "claims_by_construction": int((st == claims_mod.BY_CONSTRUCTION).sum()),
            "claims_generator": int((st == claims_mod.GENERATOR).sum()),
            "claims_distinct_not_comparable": int((st == "not comparable").sum()),
            "claims_distinct_not_derivable": int((st == "not derivable").sum())}


def claims_summary(runs: list[ChapterRun]) -> pd.DataFrame:
    """Per chapter: claims that hold / do not hold / are not derivable, from its own ledger."""
    rows = []
    for r in runs:
        row = dict(study=r.study, status=r.status, detail=r.detail if r.status != "ok" else "",
                   link=f"{r.study}.html#{CLAIMS_ANCHOR}" if r.status == "ok" else "")
        if r.status == "ok":
            counts = claims_mod.verdict_counts(r.ledger)
            row.update({v: counts[v] for v in claims_mod.VERDICTS}, total=len(r.ledger))
            row.update(claims_mod.basis_counts(r.ledger))
        else:
            row.update({v: np.nan for v in (*claims_mod.VERDICTS, *claims_mod.BASES)}, total=np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=["study", "status", *claims_mod.VERDICTS, "total", *claims_mod.BASES,
                                       "link", "detail"])


def caveat_kind(origin: str) -> str:
    """Group a caveat by where it comes from: the authors, a data rule (by rule), the chapter."""
    origin = str(origin)
    if origin.startswith("authors"):
        return "the authors' own"
    m = re.match(r"data rule: ([\w-]+)", origin)
    if m:
        return f"data rule: {m.group(1)}"
    return "chapter notes"


def caveats_index(runs: list[ChapterRun]) -> pd.DataFrame:
    """Every caveat of every chapter once, grouped by kind, with the chapters that raise it."""
    rows = []
    for r in runs:
        if r.status != "ok":
            continue
        cav = r.caveats
        if cav is None or not len(cav):
            continue
        for c in cav.itertuples():
            rows.append(dict(kind=caveat_kind(c.origin), origin=c.origin, caveat=c.caveat, study=r.study))
    if not rows:
        return pd.DataFrame(columns=["kind", "caveat", "studies", "origins"])
    df = pd.DataFrame(rows)
    grouped = df.groupby(["kind", "caveat"], sort=False).agg(
        studies=("study", lambda s: ", ".join(dict.fromkeys(s))),
        origins=("origin", lambda s: "; ".join(dict.fromkeys(s)))).reset_index()
    order = {k: i for i, k in enumerate(sorted(grouped["kind"].unique(), key=_kind_order))}
    return grouped.assign(_o=grouped["kind"].map(order)).sort_values("_o", kind="stable").drop(columns="_o") \
        .reset_index(drop=True)


def _kind_order(kind: str):
    return (0 if kind.startswith("the authors") else 2 if kind == "chapter notes" else 1, kind)


def own_caveats(facts: Facts, runs: list[ChapterRun], lim: pd.DataFrame, rate) -> pd.DataFrame:
    """This page's own caveats, raised by what it used."""
    out = []

    def add(kind, text):
        out.append(dict(kind=kind, caveat=text))

    if any(r.status == "ok" and r.reconstructed for r in runs):
        add("reconstructed data", "The raw files behind these chapters are reconstructed from the published "
            "tables, so each share of a ceiling below is in effect the share of the published number.")
    add("roofline", "Decode ceilings count weights, output head and full-attention KV reads only: activations, "
        "the linear-attention state, kernel launches and (for tensor parallel) communication are left out, so "
        "each ceiling is an upper bound and a share near 100 % is not expected.")
    if len(lim) and (lim["speculative"].astype(str) != "").any():
        add("roofline", "With MTP the ceiling is multiplied by the measured acceptance length, assuming one "
            "weight read per verification pass and free draft passes; real verification of several positions "
            "reads more MoE experts, so the MTP ceiling is optimistic.")
    if len(lim) and (lim["prefill_peak_assumed"] == True).any():  # noqa: E712
        add("facts", "Some prefill ceilings use a dense peak that is arithmetic on a vendor figure, not a "
            "published number (marked assumed in the facts registry).")
    if len(lim) and (lim["power_basis"] == "tdp").any():
        add("energy", "Where no power was measured, tokens per kWh use the platform's power bound (TDP or the "
            "top of its range) times the devices: a lower bound on tokens per kWh, for the accelerator only, "
            "without host, memory or cooling.")
    if rate is None:
        add("currency", "No dated exchange rate was given, so euro costs are not compared with the US-dollar API "
            "price; set usd_per_eur and fx_date to compare.")
    add("prices", "Seeds 001 and 000 attribute the '$14 per million output tokens' price to Anthropic; it is "
        "OpenAI's GPT-5.2 list price. The comparison here names OpenAI.")
    if len(lim):
        for _, x in lim.iterrows():
            for col, what in (("pct_decode_ceiling", "decode"), ("pct_prefill_ceiling", "prefill")):
                v = x[col]
                if pd.notna(v) and v > 0.8:
                    add("near the ceiling", f"{x['label']}: measured {what} is {100 * v:.0f} % of its {what} "
                        "ceiling. An upper bound is rarely approached this closely; check how the rate was "
                        f"measured ({x['decode_basis'] if what == 'decode' else x['notes']}).")
    missing = [r.study for r in runs if r.status != "ok"]
    if missing:
        add("coverage", f"Not included: {', '.join(missing)} (see the chapter list); the book-level figures "
            "cover only the chapters that ran.")
    return pd.DataFrame(out, columns=["kind", "caveat"])


# ---- display --------------------------------------------------------------------------

def chapters_table(r: Results) -> pd.DataFrame:
    return pd.DataFrame([dict(
        chapter=_link(x.study, "", x.study) if x.status == "ok" else x.study, status=x.status,
        configurations=len(x.key_figures) if x.key_figures is not None else 0,
        note=x.detail) for x in r.runs])


def _link(study: str, anchor: str, text: str) -> str:
    """An HTML link to a chapter page's section; the text is escaped (it may come from data)."""
    from html import escape

    href = f"{study}.html" + (f"#{anchor}" if anchor else "")
    return f'<a href="{escape(href, quote=True)}">{escape(str(text))}</a>'


def _pct(v) -> str:
    return "–" if v is None or pd.isna(v) else f"{100 * v:.0f} %"


def _kwh(v, basis) -> str:
    if v is None or pd.isna(v):
        return "–"
    text = f"{v / 1e6:,.2f} M"
    return text if basis == "measured" else f"≥ {text} ({'TDP' if basis == 'tdp' else 'power limit'})"


def overview(r: Results) -> pd.DataFrame:
    """The one table across platforms and configurations, every cell linked to its chapter."""
    lim = r.limits
    if not len(lim):
        return pd.DataFrame()
    rows = []
    for _, x in lim.iterrows():
        ln = lambda text, x=x: _link(x["study"], x["anchor"], text)  # noqa: E731
        pct = _pct(x["pct_decode_ceiling"])
        if x["speculative"] and pd.isna(x["pct_decode_ceiling"]):
            pct = f"not derivable (plain ratio {_pct(x['plain_ratio'])})"
        elif x["speculative"]:
            pct += f" (×{x['tokens_per_pass']:.2f} per pass)"
        ttft = "–" if pd.isna(x["ttft_s"]) else f"{fmt_seconds(x['ttft_s'])} at {int(x['ttft_input_tokens']):,} tok"
        agg = "–" if pd.isna(x["best_aggregate_tps"]) else \
            f"{fmt_rate(x['best_aggregate_tps'])} at c={int(x['best_aggregate_concurrency'])}"
        cost = fmt_money(x["cost_per_m"], x["currency"]) if x["currency"] else "–"
        rows.append({
            "configuration": ln(x["label"] or x["config"]),
            "data": ln(data_status(r, x["study"])),
            "platform": ln(_platform_name(r.facts, x)),
            "decode t/s (1 stream)": ln(fmt_rate(x["single_stream_decode_tps"], 1)),
            "% of decode ceiling": ln(pct),
            "TTFT (input)": ln(ttft),
            "best aggregate t/s": ln(agg),
            "cost per M output tokens": ln(cost),
            "tokens per kWh": ln(_kwh(x["tokens_per_kwh"], x["power_basis"])),
        })
    return _mark(r, pd.DataFrame(rows), {"decode t/s (1 stream)": "decode", "% of decode ceiling": "share",
                                         "TTFT (input)": "ttft", "best aggregate t/s": "aggregate",
                                         "cost per M output tokens": "cost", "tokens per kWh": "kwh"})


def data_status(r: Results, study: str) -> str:
    """Whether a page's own data folder is measured or reconstructed, as its outputs say."""
    run = next((c for c in r.runs if c.study == study), None)
    if run is None or not run.data:
        return "unknown"
    return "reconstructed" if run.reconstructed else "measured"


def _platform_name(facts: Facts, x) -> str:
    if isinstance(x["platform_key"], str):
        entry = facts.entry("platforms", x["platform_key"])
        name = entry.get("short") or entry.get("name")
    else:
        name = x["platform"]
    n = int(x["devices"] or 1)
    return f"{n}× {name}" if n > 1 else str(name)


def _per_config(r: Results, columns, marks: dict) -> pd.DataFrame:
    """A table of every configuration's limits: its name, then `columns(limits)`; `marks`:
    column -> the quantity whose assumed cells it shows (empty without configurations)."""
    lim = r.limits
    if not len(lim):
        return pd.DataFrame()
    return _mark(r, pd.DataFrame({"configuration": lim["label"], **columns(lim)}), marks)


def decode_table(r: Results) -> pd.DataFrame:
    """The decode roofline of every configuration, with its byte count by part."""
    return _per_config(r, lambda lim: {
        "model / weights / KV": [f"{m} / {q} / {k or '?'}" for m, q, k in
                                 zip(lim["model_key"], lim["quant_key"], lim["kv_key"])],
        "bandwidth GB/s": [fmt_rate(b, 0) + (f" ×{int(d)}" if d and d > 1 else "") for b, d in
                           zip(lim["bandwidth_gbs"], lim["devices"])],
        "context": lim["decode_context_tokens"].map(fmt_rate),
        "GB weights + head + KV": [f"{fmt_rate(a, 2)} + {fmt_rate(b, 2)} + {fmt_rate(c, 3)}" for a, b, c in
                                   zip(lim["gb_weights"], lim["gb_head"], lim["gb_kv"])],
        "ceiling t/s": lim["decode_ceiling_tps"].map(lambda v: fmt_rate(v, 0)),
        "tokens per pass": [("–" if pd.isna(t) else f"{t:.2f}") if s else "1" for t, s in
                            zip(lim["tokens_per_pass"], lim["speculative"])],
        "measured t/s": lim["single_stream_decode_tps"].map(lambda v: fmt_rate(v, 1)),
        "measured ÷ plain ceiling": lim["plain_ratio"].map(_pct),
        "% of ceiling": lim["pct_decode_ceiling"].map(_pct),
        "measured as": lim["decode_basis"],
        "note": [s or i for s, i in zip(lim["mtp_status"], lim["issues"])],
    }, {"tokens per pass": "pass", "measured t/s": "decode", "measured ÷ plain ceiling": "decode",
        "% of ceiling": "share"})


def prefill_table(r: Results) -> pd.DataFrame:
    """The prefill (compute) ceiling of every configuration against its measured prefill."""
    return _per_config(r, lambda lim: {
        "compute type": lim["prefill_dtype"].fillna("–"),
        "dense peak TFLOPS": [("–" if pd.isna(p) else fmt_rate(p, 1) + (" (assumed)" if a else "")) for p, a in
                              zip(lim["prefill_peak_tflops"], lim["prefill_peak_assumed"])],
        "ceiling t/s": lim["prefill_ceiling_tps"].map(lambda v: fmt_rate(v, 0)),
        "measured t/s": lim["prefill_tps"].map(lambda v: fmt_rate(v, 0)),
        "prompt tokens": lim["prefill_tokens"].map(fmt_rate),
        "% of ceiling": lim["pct_prefill_ceiling"].map(_pct),
    }, {"measured t/s": "prefill", "% of ceiling": "prefill"})


def cost_table(r: Results) -> pd.DataFrame:
    lim = r.limits
    if not len(lim):
        return pd.DataFrame()
    api = _api_entry(r.facts, r.params["api_price"])
    api_label = f"{api['name'].split('(')[0].strip()} output price ÷ ours" if api else "API ÷ ours"
    out = pd.DataFrame({
        "configuration": lim["label"],
        "best aggregate t/s": lim["best_aggregate_tps"].map(fmt_rate),
        "cost per M output tokens": [fmt_money(c, cur) if cur else "not priced" for c, cur in
                                     zip(lim["cost_per_m"], lim["currency"])],
        "currency": lim["currency"].replace("", "–"),
        api_label: [("–" if pd.isna(a) else f"{a:,.0f}×") if not n.startswith("not derivable") else "not derivable"
                    for a, n in zip(lim["api_ratio"], lim["api_note"])],
        "note": lim["api_note"],
    })
    return _mark(r, out, {"best aggregate t/s": "aggregate", "cost per M output tokens": "cost", api_label: "cost"})


def energy_table(r: Results) -> pd.DataFrame:
    lim = r.limits
    if not len(lim):
        return pd.DataFrame()
    basis = {"measured": "logged draw", "limit": "power limit (upper bound)", "tdp": "TDP bound (upper bound)",
             "": "unknown"}
    out = pd.DataFrame({
        "configuration": lim["label"],
        "best aggregate t/s": lim["best_aggregate_tps"].map(fmt_rate),
        "power W": lim["power_used_w"].map(lambda v: fmt_rate(v, 0)),
        "power basis": lim["power_basis"].map(basis),
        "tokens per kWh": [_kwh(v, b) for v, b in zip(lim["tokens_per_kwh"], lim["power_basis"])],
    })
    return _mark(r, out, {"best aggregate t/s": "aggregate", "power W": "power", "tokens per kWh": "kwh"})


def claims_display(r: Results) -> pd.DataFrame:
    """Verdicts per chapter, then what the holds / does-not-hold verdicts rest on."""
    c = r.claims.assign(**{"could have failed": r.claims[claims_mod.MEASURED] + r.claims[claims_mod.SELF]})
    counted = (*claims_mod.VERDICTS, "total", "could have failed", claims_mod.BY_CONSTRUCTION, claims_mod.GENERATOR)
    show = pd.DataFrame({
        "chapter": [_link(s, CLAIMS_ANCHOR, s) if st == "ok" else s for s, st in zip(c["study"], c["status"])],
        "status": c["status"],
        **{v: c[v].map(lambda n: "–" if pd.isna(n) else f"{int(n)}") for v in counted},
        "note": c["detail"],
    })
    ok = c[c["status"] == "ok"]
    total = {"chapter": "all chapters (ledger rows)", "status": f"{len(ok)} of {len(c)}",
             **{v: f"{int(ok[v].sum())}" for v in counted}, "note": ""}
    return pd.concat([show, pd.DataFrame([total])], ignore_index=True)


def not_holding(r: Results) -> pd.DataFrame:
    """Every ledger row of every chapter that does not hold, each linking to its row on the
    chapter's page (report.anchor), with what the verdict rests on."""

    rows, ids, seen = [], {}, set()
    for run in r.runs:
        if run.status != "ok" or run.ledger is None:
            continue
        bad = run.ledger[run.ledger["verdict"] == claims_mod.FAILS]
        for _, row in bad.iterrows():
            # a second page of a notebook checks the same write-up: a claim it fails on the
            # write-up's own numbers is listed once, from the first page
            if (row["id"], row["claim"], row["published"], row["recomputed"]) in seen:
                continue
            seen.add((row["id"], row["claim"], row["published"], row["recomputed"]))
            ids[len(rows)] = run.assumed_claims.get(row["id"], ())  # as its chapter's ledger marks it
            rows.append({"chapter": run.study, "claim id": _link(run.study, anchor(row["id"]), row["id"]),
                         "claim": row["claim"], "published": row["published"], "recomputed": row["recomputed"],
                         "difference": row["difference"], "rests on": row.get("basis", ""), "kind": row["kind"]})
    out = pd.DataFrame(rows, columns=["chapter", "claim id", "claim", "published", "recomputed", "difference",
                                      "rests on", "kind"])
    return with_marks(out, {"recomputed": ids}, r.assumed_why)


def facts_display(r: Results) -> pd.DataFrame:
    t = r.facts.table()
    return pd.DataFrame({
        "file": t["file"], "entry": t["entry"], "field": t["field"],
        "value": [_fact_value(v, lo, hi) for v, lo, hi in zip(t["value"], t["low"], t["high"])],
        "unit": t["unit"],
        "source": [f"{s} ({u})" if s else "" for s, u in zip(t["source"], t["url"])],
        "date": t["date"],
        "assumed": t["assumed"].map(lambda a: "assumed" if a else ""),
        "reasoning / note": [x or y for x, y in zip(t["reasoning"], t["note"])],
    })


def _fact_value(v, lo, hi) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    text = f"{v:,.4g}" if isinstance(v, float) and abs(v) < 1e6 else f"{v:,}" if isinstance(v, int) else f"{v:.4g}"
    if lo is not None and hi is not None and not (pd.isna(lo) or pd.isna(hi)):
        text += f" ({lo:g}–{hi:g})"
    return text


def ceiling_figure(r: Results) -> plt.Figure:
    """Share of the decode ceiling per configuration, grouped by platform."""
    lim = r.limits.dropna(subset=["plain_ratio"]).copy() if len(r.limits) else pd.DataFrame()
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(lim), 2) + 1.4))
    if not len(lim):
        ax.text(0.5, 0.5, "no configuration with a decode ceiling", ha="center", va="center")
        ax.set_axis_off()
        return fig
    lim["platform_name"] = [_platform_name(r.facts, x) for _, x in lim.iterrows()]
    lim = lim.sort_values(["platform_name", "label"]).reset_index(drop=True)
    colors = {p: platform_colour(p) for p in lim["platform_name"].unique()}
    y = np.arange(len(lim))
    shown = lim["pct_decode_ceiling"].astype(float)
    ax.barh(y, 100 * shown.fillna(0), color=[colors[p] for p in lim["platform_name"]])
    spec = lim["speculative"].astype(str) != ""
    if spec.any():
        ax.scatter(100 * lim.loc[spec, "plain_ratio"].astype(float), y[spec.to_numpy()], marker="D", color="black",
                   zorder=3)
    for yi, v in zip(y, shown):
        if pd.notna(v):
            ax.text(100 * v + 1, yi, f"{100 * v:.0f} %", va="center", fontsize=plots.MIN_FONT_PT)
    ax.set_yticks(y, _bar_labels(r, fig, lim))
    ax.axvline(100, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, max(110, float(100 * lim["plain_ratio"].max()) + 10))
    ax.set_xlabel("single-stream decode as % of the memory-bandwidth ceiling")
    ax.set_title("How close each configuration gets to its decode ceiling")
    named: dict = {}  # one legend entry per colour: '2× RTX 3090, 4× RTX 3090'
    for p, c in colors.items():
        named.setdefault(c, []).append(p)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in named]
    labels = [", ".join(ps) for ps in named.values()]
    if spec.any():
        handles.append(plt.Line2D([], [], marker="D", color="black", linestyle=""))
        labels.append("MTP: measured ÷ one-token-per-pass ceiling")
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=plots.MIN_FONT_PT,
               frameon=False)  # below the axes; the theme saves with bbox "tight", so it is kept
    return fig


def _bar_labels(r: Results, fig, lim: pd.DataFrame) -> list[str]:
    """Each bar's label; a bar of a rate resting on a generator's choice says so, and the
    figure keeps the ids for its caption (report.glue_figure)."""
    marked = [row_ids(r, x, "share") for _, x in lim.iterrows()]
    if any(marked):
        fig.benchbook_assumed = {i: r.assumed_why.get(i, "") for ids in marked for i in ids}
    return [f"{label}" + (" (assumed)" if ids else "") for label, ids in zip(lim["label"], marked)]


def ceiling_values(r: Results) -> str:
    """The figure's numbers as text, for readers who cannot see it."""
    lim = r.limits

    rows = [(x, row_ids(r, x, "share")) for _, x in lim.iterrows() if len(lim) and pd.notna(x["pct_decode_ceiling"])]
    parts = [f"{untrusted.md(x['label'])}: " + marked_html(f"{100 * x['pct_decode_ceiling']:.0f}\u00a0%", ids,
                                                           r.assumed_why) for x, ids in rows]
    ids = [i for _, found in rows for i in found]
    legend = f"\n\n{legend_html(ids, r.assumed_why)}" if ids else ""
    return ("; ".join(parts) + "." if parts else "no configuration has a decode ceiling.") + legend


def caveats_html(r: Results) -> str:
    """The book-wide caveats index as HTML: one list per kind, each caveat linked to its chapters."""
    from html import escape

    parts = []
    for kind, group in r.caveats.groupby("kind", sort=False):
        parts.append(f"<p><strong>{escape(kind[0].upper() + kind[1:])}</strong> ({len(group)})</p><ul>")
        for c in group.itertuples():
            links = ", ".join(f'<a href="{escape(s, quote=True)}.html#caveats">{escape(s)}</a>'
                              for s in c.studies.split(", "))
            parts.append(f"<li>{_code(escape(c.caveat))} ({links})</li>")
        parts.append("</ul>")
    if len(r.own_caveats):
        parts.append(f"<p><strong>This page</strong> ({len(r.own_caveats)})</p><ul>")
        parts += [f"<li><em>{escape(c.kind)}</em>: {_code(escape(c.caveat))}</li>" for c in r.own_caveats.itertuples()]
        parts.append("</ul>")
    return '<div class="benchbook-caveats">' + "".join(parts) + "</div>"


def _code(text: str) -> str:
    """`inline code` in a caveat's Markdown, as HTML."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


# ---- glued numbers --------------------------------------------------------------------

def glue_values(r: Results) -> dict:
    """Headline numbers by role, so the prose (and the intro page) stays true on other data.
    A number picked among the configurations (the fastest, the cheapest) holds what any of
    them holds (row_ids): which one wins rests on all of them."""
    out = Glued(r.assumed_why)
    ok = [x for x in r.runs if x.status == "ok"]
    out["chapters_total"] = len(r.runs)
    out["chapters_present"] = len(ok)
    out["chapters_missing"] = len(r.runs) - len(ok)
    out["chapters_missing_names"] = ", ".join(x.study for x in r.runs if x.status != "ok") or "none"
    out["chapters_missing_text"] = ("every registered study is included" if out["chapters_missing_names"] == "none"
                                    else f"not included: {out['chapters_missing_names']}")
    out["configs"] = len(r.limits)
    c = r.claims[r.claims["status"] == "ok"]
    for v, key in claims_mod.GLUE_KEYS.items():
        out[key] = int(c[v].sum()) if len(c) else 0
    out["claims_total"] = int(c["total"].sum()) if len(c) else 0
    out.update(distinct_claim_counts(r.runs))
    out.update(points_mod.glue(r.points))
    out["caveats_total"] = len(r.caveats) + len(r.own_caveats)
    out["caveat_kinds"] = int(r.caveats["kind"].nunique()) if len(r.caveats) else 0
    lim = r.limits
    if len(lim):
        out["platforms"] = int(lim["platform_key"].nunique())
        _glue_extremes(r, out, lim)
        _glue_mtp(r, out, lim)
    e = _api_entry(r.facts, r.params["api_price"])
    if e is not None:
        out.update(api_vendor=e["vendor"], api_name=e["name"].split("(")[0].strip(),
                   api_output_price=float(e["output"].value), api_currency=e["output"].unit.split("/")[0])
    out["fx"] = r.rate.label() if r.rate else "no exchange rate given"
    strix = r.facts.sections.get("platforms", {}).get("ryzen-ai-max-395")
    out["strix_included"] = int(len(strix_sensitivity(r)) > 0) if len(r.limits) else 0
    if strix:
        for k, path in (("strix_bw_spec", "memory_bandwidth"), ("strix_bw_measured", "memory_bandwidth_measured"),
                        ("strix_bw_written", "memory_bandwidth_as_written")):
            f = r.facts.get("platforms", "ryzen-ai-max-395", path)
            if f is not None:
                out[k] = float(f.value)
    n, p = out["configs"], out.get("platforms", 0)
    out["configs_text"] = f"{n} configuration{'s' if n != 1 else ''}"
    out["platforms_text"] = f"{p} platform{'s' if p != 1 else ''}"
    for k, v in out.items():
        out[k] = float(v) if isinstance(v, (np.floating,)) else int(v) if isinstance(v, np.integer) else v
    out["findings_md"] = findings_md(out)  # marked inside, item by item, with the legend
    out["findings_html"] = findings_html(out)
    return out


def _glue_extremes(r: Results, out: Glued, lim: pd.DataFrame) -> None:
    """The highest and lowest of each headline quantity across the configurations."""
    pct = lim.dropna(subset=["pct_decode_ceiling"])
    if len(pct):
        lo, hi = pct.loc[pct["pct_decode_ceiling"].astype(float).idxmin()], \
            pct.loc[pct["pct_decode_ceiling"].astype(float).idxmax()]
        _cells(out, _among(r, pct, "share"), pct_ceiling_min=100 * float(lo["pct_decode_ceiling"]),
               pct_ceiling_min_label=lo["label"], pct_ceiling_max=100 * float(hi["pct_decode_ceiling"]),
               pct_ceiling_max_label=hi["label"])
    top = lim.loc[lim["single_stream_decode_tps"].astype(float).idxmax()]
    _cells(out, _among(r, lim, "decode"), decode_max_tps=float(top["single_stream_decode_tps"]),
           decode_max_label=top["label"],
           decode_max_basis=str(top.get("decode_basis") or "") or "how it was measured is not recorded")
    agg = lim.loc[lim["best_aggregate_tps"].astype(float).idxmax()]
    _cells(out, _among(r, lim, "aggregate"), aggregate_max_tps=float(agg["best_aggregate_tps"]),
           aggregate_max_label=agg["label"], aggregate_max_concurrency=int(agg["best_aggregate_concurrency"]))
    priced = lim[lim["currency"] != ""].dropna(subset=["cost_per_m"])
    if len(priced):
        cheap = priced.loc[priced["cost_per_m"].astype(float).idxmin()]
        _cells(out, _among(r, priced, "cost"), cost_min=float(cheap["cost_per_m"]),
               cost_min_currency=cheap["currency"], cost_min_label=cheap["label"])
    kwh = lim.dropna(subset=["tokens_per_kwh"])
    if len(kwh):
        best = kwh.loc[kwh["tokens_per_kwh"].astype(float).idxmax()]
        basis = {"measured": "logged draw", "limit": "at its power limit, a lower bound",
                 "tdp": "at its TDP, a lower bound"}.get(best["power_basis"], "")
        if best["power_basis"] == "measured" and (kwh["power_basis"] != "measured").any():
            basis += "; configurations rated at a power bound could be higher"  # a bound only bounds from below
        _cells(out, _among(r, kwh, "kwh"), kwh_max_m=float(best["tokens_per_kwh"]) / 1e6,
               kwh_max_label=best["label"], kwh_max_basis=basis)
    pre = lim.dropna(subset=["pct_prefill_ceiling"])
    if len(pre):
        hi = pre.loc[pre["pct_prefill_ceiling"].astype(float).idxmax()]
        _cells(out, _among(r, pre, "prefill"), prefill_pct_max=100 * float(hi["pct_prefill_ceiling"]),
               prefill_pct_max_label=hi["label"])


def _glue_mtp(r: Results, out: Glued, lim: pd.DataFrame) -> None:
    """MTP's tokens per pass (each configuration's shares of its ceilings are in the table,
    not glued: a key named after a configuration could not be quoted by prose)."""
    mtp = lim[(lim["speculative"].astype(str) != "") & lim["tokens_per_pass"].notna()]
    if len(mtp):
        out.cell("mtp_per_pass", float(mtp["tokens_per_pass"].iloc[0]), row_ids(r, mtp.iloc[0], "pass"))
        out["mtp_label"] = mtp["label"].iloc[0]
        chosen = {x.study for x in r.runs if set(x.assumed_columns) & ACCEPTANCE_COLUMNS}
        out["mtp_assumed"] = str(mtp["study"].iloc[0]) in chosen


def _among(r: Results, rows: pd.DataFrame, what: str) -> tuple:
    """Ids of a quantity over several configurations (the best of them rests on all)."""
    return union(*(row_ids(r, x, what) for _, x in rows.iterrows()))


def _cells(out: Glued, ids: tuple, **values) -> None:
    for key, value in values.items():
        out.cell(key, value, ids)


# Each part of the page's prose and the keys it quotes: a part whose keys the data does not
# give is left out of the page (benchbook.site.runner drops markdown cells tagged needs-<part>).
SECTIONS = {
    "decode": ("pct_ceiling_min", "pct_ceiling_max"),
    "throughput": ("decode_max_tps", "aggregate_max_tps"),
    "cost": ("cost_min",),
    "energy": ("kwh_max_m",),
    "mtp": ("mtp_per_pass",),
    "strix-bandwidth": ("strix_bw_spec", "strix_bw_measured", "strix_bw_written", "strix_included"),
    "api": ("api_name", "api_output_price"),
    "claims": ("claims_total", "claims_distinct"),
    "points": ("serving_points_shown",),
    "points-duplicates": ("serving_points_duplicates",),
}


def absent_sections(g: dict) -> dict[str, str]:
    """The page's parts whose numbers the included chapters do not give."""
    out = {}
    for section, keys in SECTIONS.items():
        lacking = [k for k in keys if not g.get(k)]
        if lacking:
            out[section] = f"the included chapters give no {', '.join(lacking)}"
    return out


def findings(g: dict) -> list[tuple[str, str]]:
    """The findings at a glance, (title, sentence) in plain text, only of what the data gives."""
    items = [("Chapters.", f"{g['chapters_present']} of {g['chapters_total']} studies are included, with "
              f"{g['configs_text']} on {g['platforms_text']} ({g['chapters_missing_text']}).")]
    if "pct_ceiling_min" in g:
        items.append(("Decode against the hardware.", f"One stream decodes at between {g['pct_ceiling_min']:.0f} % "
                      f"({g['pct_ceiling_min_label']}) and {g['pct_ceiling_max']:.0f} % ({g['pct_ceiling_max_label']}) "
                      "of the rate its platform's memory bandwidth allows."))
    if "decode_max_tps" in g:
        items.append(("Speed.", f"The fastest single-stream decode is {g['decode_max_tps']:,.0f} tokens/s "
                      f"({g['decode_max_label']}; {g['decode_max_basis']}); the highest aggregate output rate in "
                      f"the data is "
                      f"{g['aggregate_max_tps']:,.0f} tokens/s ({g['aggregate_max_label']})."))
    parts = []
    if "cost_min" in g:
        parts.append(f"the lowest cost in the data is {g['cost_min']:.2f} {g['cost_min_currency']} per million output "
                     f"tokens ({g['cost_min_label']})")
    if "kwh_max_m" in g:
        parts.append(f"the most tokens per kWh are {g['kwh_max_m']:.1f} million ({g['kwh_max_label']}, "
                     f"{g['kwh_max_basis']})")
    if parts:
        text = "; ".join(parts)
        items.append(("Cost and energy.", text[0].upper() + text[1:] + "."))
    if g.get("claims_distinct"):
        parts = [f"{g['claims_checked']} were checked in a way that could have failed (against the "
                 f"write-up's own numbers or measured data) and {g['claims_checked_hold']} of those hold"]
        if g["claims_by_construction"]:
            parts.append(f"{g['claims_by_construction']} hold only by construction (on reconstructed files fit to "
                         "the published numbers), so they confirm nothing")
        if g["claims_generator"]:
            parts.append(f"{g['claims_generator']} rest on values a generator chose where the write-up printed "
                         "none, so they are no finding")
        if g["claims_distinct_not_derivable"]:
            parts.append(f"{g['claims_distinct_not_derivable']} cannot be derived from the data")
        if g["claims_distinct_not_comparable"]:
            parts.append(f"{g['claims_distinct_not_comparable']} are about another setup than the data's")
        items.append(("Claims.", f"The chapters' ledgers hold {g['claims_total']} rows for "
                      f"{g['claims_distinct']} distinct published claims (a statement two chapters check, and "
                      f"its consistency twin, count once). Of these, {'; '.join(parts)}."))
    return items


# The glued keys each finding quotes: a finding quoting a number that rests on a generator's
# choice carries the marker, and the list its legend.
FINDING_KEYS = {
    "Decode against the hardware.": ("pct_ceiling_min", "pct_ceiling_max"),
    "Speed.": ("decode_max_tps", "aggregate_max_tps"),
    "Cost and energy.": ("cost_min", "kwh_max_m"),
}


def _finding_ids(g: dict, title: str) -> tuple:
    assumed = getattr(g, "assumed", {})
    return union(*(assumed.get(k, ()) for k in FINDING_KEYS.get(title, ())))


def findings_md(g: dict) -> str:
    """The findings as a Markdown list for this page; names from the data are escaped."""

    why = getattr(g, "why", {})
    items = [(title, text, _finding_ids(g, title)) for title, text in findings(g)]
    body = "\n".join(f"- **{title}** " + marked_html(untrusted.md(text), ids, why) for title, text, ids in items)
    ids = [i for _, _, found in items for i in found]
    return body + (f"\n\n{legend_html(ids, why)}" if ids else "")


def findings_html(g: dict) -> str:
    """The same list as HTML, for the intro page (myst-nb pastes HTML from another page)."""
    import html

    why = getattr(g, "why", {})
    found = [(t, x, _finding_ids(g, t)) for t, x in findings(g)]
    items = "".join(f"<li><strong>{html.escape(t)}</strong> {marked_html(html.escape(x), ids, why)}</li>"
                    for t, x, ids in found)
    ids = [i for _, _, f in found for i in f]
    return f'<ul class="benchbook-findings">{items}</ul>' + (legend_html(ids, why) if ids else "")


def downloads(r: Results) -> dict[str, pd.DataFrame]:
    return {"key_figures_and_limits": r.limits, "claims_by_chapter": r.claims, "caveats_index": r.caveats,
            "facts": r.facts.table(), "cloud_scenarios": cloud_scenarios(r), "serving_points": r.points}


def prefill_remark(r: Results) -> str:
    """A sentence on prefill rates close to their ceiling, or an empty string."""
    lim = r.limits
    if not len(lim):
        return ""
    near = lim[lim["pct_prefill_ceiling"].astype(float) > 0.8]
    if not len(near):
        return ""

    items = "; ".join(f"{untrusted.md(x['label'])}, {100 * x['pct_prefill_ceiling']:.0f} % "
                      f"({untrusted.md_code(x['notes'])})"
                      for _, x in near.iterrows())
    return (f"Close to the ceiling: {items}. A bound this generous is rarely approached, so such a rate may not "
            "measure a full prefill (a prompt cache, or a time to first token that misses part of the work).")


def strix_sensitivity(r: Results) -> pd.DataFrame:
    """Strix Halo's decode share under the spec, measured and write-up bandwidths."""
    if not len(r.limits):
        return pd.DataFrame()
    s = bandwidth_sensitivity(r.facts, r.limits, "ryzen-ai-max-395")
    if not len(s):
        return s
    names = {"memory_bandwidth": "specification (theoretical)", "memory_bandwidth_measured": "measured",
             "memory_bandwidth_as_written": "as the write-ups say"}
    out = pd.DataFrame({
        "configuration": s["label"], "bandwidth": s["bandwidth"].map(names),
        "GB/s": s["gbs"].map(lambda v: f"{v:g}"), "ceiling t/s": s["ceiling_tps"].map(lambda v: fmt_rate(v, 1)),
        "measured as % of it": s["pct"].map(_pct),
    })
    rows = {x["config"]: x for _, x in r.limits.iterrows()}  # a share reads its configuration's decode rate
    ids = {i: row_ids(r, rows[c], "share") for i, c in enumerate(s["config"]) if c in rows}
    return with_marks(out, {"measured as % of it": ids}, r.assumed_why)


def banner(r: Results) -> str:
    """The page's opening note: which chapters read measured data and which reconstructed."""

    rows = [x for x in r.runs if x.status == "ok"]
    measured = [x.study + (" (it also reads reconstructed data of another chapter)" if x.reads_reconstructed else "")
                for x in rows if not x.reconstructed]
    rebuilt = [x.study for x in rows if x.reconstructed]
    other = [x.study for x in rows if not x.comparable]
    parts = []
    if rebuilt:
        parts.append("Reconstructed data (made from the published tables, not measured): "
                     + ", ".join(untrusted.md(s) for s in rebuilt) + ".")
    if measured:
        parts.append("Measured data: " + "; ".join(untrusted.md(s) for s in measured) + ".")
    if other:
        parts.append("Not, or not all, the write-up's setup, so the claims about the data that differs "
                     "are not compared: " + ", ".join(untrusted.md(s) for s in other) + ".")
    kind = "warning" if rebuilt else "note"
    title = "Data: " + " and ".join(k for k, v in (("reconstructed", rebuilt), ("measured", measured)) if v) \
        if rows else "Data: none"
    body = " ".join(parts) or "No chapter has produced its outputs yet."
    return (f":::{{admonition}} {title}\n:class: {kind}\nEach figure below is the one its chapter page "
            f"computed from its own data folder. {body} The provenance section lists every folder and its "
            "content hash.\n:::")


# Columns that hold an acceptance length: where a chapter's generator chose them, the
# synthesis's MTP paragraph rests on that choice.
ACCEPTANCE_COLUMNS = {"runs.spec_acceptance_length", "runs.spec_acceptance_rate",
                      "spec_decode.mean_acceptance_length", "spec_decode.acceptance_rate"}


def write_outputs(r: Results, g: dict, folder) -> None:
    """The page's downloads, and its chapter.json: which parts of its prose the data cannot fill."""
    import json

    write_downloads(downloads(r), folder, "synthesis-tables")
    assumed = {"mtp": [{"id": "acceptance", "why": f"the acceptance length of {g['mtp_label']}"}]} \
        if g.get("mtp_assumed") else {}
    doc = {"chapter": STUDY, "absent_sections": absent_sections(g), "assumed_sections": assumed,
           "data": r.provenance.astype(object).where(r.provenance.notna(), None).to_dict(orient="records")}
    (Path(folder) / "chapter.json").write_text(json.dumps(doc, indent=2, default=str), encoding="utf-8")

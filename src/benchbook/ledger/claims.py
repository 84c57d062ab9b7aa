"""The claims ledger: each published claim against the value recomputed from the data.

A claim is one of three kinds:
- ``data``: its number is recomputed from the raw files (``recompute`` expression);
- ``consistency``: checked against other numbers the write-ups printed (``stated``),
  e.g. a ratio against the ratio of its own operands, or a number stated twice;
- ``not-derivable``: the data cannot speak to it (``why`` says so).
Verdicts: holds / does not hold / not derivable. Amounts in different currencies are
never divided without an exchange-rate parameter.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ..format import fmt_change, fmt_multiple
from ..study.marks import Glued, union, with_marks
from ..study.marks import value_ids as ids_of
from .expr import MissingValue, evaluate, names_in
from .published import APPROX_WORDS, MAGNITUDE, Published, PublishedError, Quantity, parse_quantity

HOLDS, FAILS, UNKNOWN = "holds", "does not hold", "not derivable"
NOT_COMPARABLE = "not comparable"  # the data is not the write-up's setup: no verdict
VERDICTS = (HOLDS, FAILS, UNKNOWN, NOT_COMPARABLE)
# The glue key of each verdict's count (ledger_glue; the synthesis sums them over chapters).
GLUE_KEYS = {HOLDS: "claims_holds", FAILS: "claims_does_not_hold", UNKNOWN: "claims_not_derivable",
             NOT_COMPARABLE: "claims_not_comparable"}

# What a verdict rests on (book/methods.md, "What a verdict rests on"). Only MEASURED and SELF
# are checks that could have failed. On reconstructed files fit to the published numbers a
# claim over those numbers holds BY_CONSTRUCTION; when it fails all the same, the write-up's
# numbers disagree with each other, and the verdict rests on them (SELF, its note naming both
# numbers): no verdict is both "does not hold" and "by construction". Where the write-up gave
# no number the generator chose one (GENERATOR).
MEASURED = "measured data"
SELF = "the write-up's own numbers"
BY_CONSTRUCTION = "by construction"
GENERATOR = "a generator's choice"
BASES = (MEASURED, SELF, BY_CONSTRUCTION, GENERATOR)
INDEPENDENT = (MEASURED, SELF)


def check_claims(
    published: Published,
    values: dict[str, float],
    params: dict | None = None,
    currencies: dict[str, str] | None = None,
    gate=None,
    reconstructed=None,
    fitted: set[str] | None = None,
) -> pd.DataFrame:
    """One ledger row per claim, in the order of published.yml.

    `gate` (benchbook.ledger.comparable.Gate) says which names draw on data that is not the
    write-up's setup; a data claim over such names gets 'not comparable' and no verdict.
    Consistency claims check the write-up against itself and are always judged.
    `reconstructed(names)` says whether any of these value names comes from a
    reconstructed data folder; it decides each verdict's `basis`. `fitted` names further
    values a reconstruction was fit to (those of the write-ups of the folders a page reads).
    """
    pinned = pinned_names(published) | set(fitted or ())
    rows = []
    for c in published.claims:
        row = check_claim(c, values, params or {}, currencies or {}, gate, published.plausible)
        row["basis"] = basis(c, row["verdict"], pinned, set(params or {}), reconstructed)
        again = restated(published, c) if row["basis"] == BY_CONSTRUCTION else {}
        row.update(again)
        if row["verdict"] == FAILS and row["basis"] == SELF and c.get("kind", "data") == "data" and not again:
            row["note"] = disagreement_note(published, c, row)
        rows.append(row)
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def restated(published: Published, claim: dict) -> dict:
    """A claim that prints again a number one of the write-up's tables prints (the same
    expression) is, on files fit to that table, the write-up against itself: judged by the
    rounding of the two printed numbers, with no measurement floor (the rule of consistency
    claims). Returns the changed fields: none when the two agree."""
    expr = " ".join(str(claim.get("recompute") or "").split())
    cells = [(f"{t.title or t.id}, {row[0]} / {col}", text) for t in published.tables
             for row, exprs in zip(t.rows, t.values)
             for col, text, e in zip(t.columns, row, exprs) if e and " ".join(e.split()) == expr]
    if not cells:
        return {}
    where, text = cells[0]
    q = parse_quantity(claim["published"], f"claim {claim['id']}")
    cell = parse_quantity(text, f"claim {claim['id']}, table cell")
    if q.unit != cell.unit or _span_allows(q, cell.value - cell.step / 2, cell.value + cell.step / 2):
        return {}
    return {"verdict": FAILS, "basis": SELF, "tolerance": "rounding of the printed numbers",
            "note": (f"The write-up disagrees with itself: its table ({where}) prints {text}, to which the "
                     f"reconstructed files were fit; this claim prints the same number as {claim['published']}, "
                     f"which {text} does not round to")}


LEDGER_COLUMNS = [
    "id", "source", "kind", "claim", "published", "recomputed",
    "difference", "tolerance", "verdict", "basis", "note", "same_as",
]


def claim_key(chapter: str, row) -> str:
    """One key per distinct statement across the book: a claim another chapter also checks
    (`same_as: chapter:id`) takes that claim's key, and a '-stated' consistency twin its
    base claim's, so book-level counts count each statement once."""
    cid = str(row["id"])
    same = str(row.get("same_as") or "")
    if same and same != "nan":
        chapter, cid = same.split(":", 1)
    return f"{chapter}:{cid.removesuffix('-stated')}"


def pinned_names(published: Published) -> set[str]:
    """Value names a reconstruction is fit to: every name in a published table cell, and
    every data claim that is one value name and prints a number (a bound such as 'over 2
    tokens' pins nothing: the generator chose the value). Such a value agrees with the
    write-up on reconstructed files whatever the truth."""
    out = set()
    for table in published.tables:
        for exprs in table.values:
            for expr in exprs:
                if expr:
                    out |= set(names_in(expr))
    for c in published.claims:
        if _single_value(c) and parse_quantity(c["published"], f"claim {c.get('id')}").bound is None:
            out.add(str(c["recompute"]).strip())
    return out


def _single_value(claim: dict) -> bool:
    """A data claim whose number is one value name of the data."""
    expr = str(claim.get("recompute") or "").strip()
    return claim.get("kind", "data") == "data" and bool(expr) and names_in(expr) == {expr}


def basis(claim: dict, verdict: str, pinned: set[str], params: set[str], reconstructed=None) -> str:
    """What a holds / does-not-hold verdict rests on (empty for other verdicts).

    A data claim's own stated numbers and the page's parameters are the write-up's or the
    reader's, never the data's. On reconstructed files, a claim over values fit to the
    published numbers holds by construction, and one that fails all the same shows the
    write-up disagreeing with itself (SELF)."""
    if verdict not in (HOLDS, FAILS):
        return ""
    if claim.get("kind", "data") == "consistency":
        return SELF
    used = set(names_in(claim["recompute"])) - params - set(claim.get("stated") or {})
    if reconstructed is None or not reconstructed(used):
        return MEASURED
    if not used <= pinned:
        return GENERATOR
    return BY_CONSTRUCTION if verdict == HOLDS else SELF


def fitted_to(published: Published, names: set[str], claim_id: str = "") -> list[str]:
    """The write-up's printed numbers a reconstruction fit these value names to: the table
    cells that are one of them, and the other data claims that are one of them, as
    "where: printed text"."""
    out = []
    for table in published.tables:
        for cells, exprs in zip(table.rows, table.values):
            out += [f"{table.title or table.id}, {cells[0]} / {col}: {text}"
                    for col, text, expr in zip(table.columns, cells, exprs) if expr and expr.strip() in names]
    out += [f"claim {c['id']}: {c['published']}" for c in published.claims
            if c["id"] != claim_id and _single_value(c) and str(c["recompute"]).strip() in names]
    return out


def disagreement_note(published: Published, claim: dict, row: dict, shown: int = 2) -> str:
    """The note of a claim that fails on files fit to the write-up's own numbers: which
    printed numbers the files were fit to, what they give, and what the claim says."""
    sources = fitted_to(published, set(names_in(claim["recompute"])), claim["id"])
    where = "; ".join(sources[:shown]) + (f"; and {len(sources) - shown} more" if len(sources) > shown else "")
    checks = _checks_of(published, claim)
    if checks:
        where = "; ".join(x for x in (where, "the numbers " + ", ".join(checks) + " states") if x)
    if not row["recomputed"]:  # no number of its own: what it rests on, then why it fails
        return f"Rests on the write-up's own numbers ({where}); {row['note']}"
    note = (f"The write-up disagrees with itself: the reconstructed files were fit to its own numbers "
            f"({where or 'its other printed numbers'}), which give {row['recomputed']}, while this claim "
            f"says {row['published']}")
    return note + (f"; {row['note']}" if row.get("note") else "")


def _checks_of(published: Published, claim: dict) -> list[str]:
    """The consistency checks of the same statement: its '-stated' twins, and those that
    check the same printed number."""
    return [c["id"] for c in published.claims if c.get("kind") == "consistency"
            and (c["id"].startswith(f"{claim['id']}-") or str(c["published"]) == str(claim["published"]))]


def claim_ids(published: Published, ledger: pd.DataFrame, value_ids: dict) -> dict[str, tuple]:
    """Claim id -> the assumption ids of the values its recomputed number reads (a data
    claim with a number only; the write-up's own numbers rest on no generator's choice)."""

    exprs = {c["id"]: c.get("recompute") for c in published.claims if c.get("kind", "data") == "data"}
    out = {}
    for cid, shown in zip(ledger.get("id", []), ledger.get("recomputed", [])):
        expr = exprs.get(cid)
        ids = ids_of(value_ids, names_in(expr)) if expr and shown != "" else ()
        if ids:
            out[cid] = ids
    return out


def printed_as_published(ledger: pd.DataFrame) -> set[str]:
    """Claims that hold by construction and whose recomputed number prints as the write-up
    printed it (the same value at the same digits and unit): on files fit to the write-up that
    number is the write-up's own, whatever a generator chose below its digits, so it is no
    assumption (a mark says "not in the write-up") and moving a choice does not move it
    (`make marks`: the GB10 KV block size moves the fitted pools, not "2.12×")."""
    out = set()
    for cid, published, shown, basis_ in zip(ledger.get("id", []), ledger.get("published", []),
                                              ledger.get("recomputed", []), ledger.get("basis", [])):
        if basis_ != BY_CONSTRUCTION or not shown:
            continue
        try:
            p, q = parse_quantity(published), parse_quantity(str(shown).replace("\u2212", "-"))
        except PublishedError:
            continue
        if (p.bound is None and (p.unit, p.currency) == (q.unit, q.currency) and math.isclose(p.step, q.step)
                and math.isclose(p.value, q.value, rel_tol=1e-9, abs_tol=p.step * 1e-6)):
            out.add(cid)
    return out


def mark_ledger(ledger: pd.DataFrame, ids: dict, why: dict, difference: dict | None = None) -> pd.DataFrame:
    """Mark the recomputed value, verdict and bound note (which quotes the value) of each ledger
    row resting on an assumed cell (report.html shows the marker and the legend), and its
    difference with `difference` (claim id -> ids; `ids` when None): the difference prints the
    offset to a tenth of a per cent, so it shows digits below the write-up's that a choice may
    move even when the recomputed number prints as the write-up's and carries no mark (`make
    marks`: where a generator placed the published numbers in their printing intervals, when that
    was a choice, moved '−1.2%' to '−1.3%')."""

    rows = {label: ids.get(cid, ()) for label, cid in zip(ledger.index, ledger.get("id", []))}
    off = ids if difference is None else difference
    diff = {label: off.get(cid, ()) if str(d) else () for label, cid, d in
            zip(ledger.index, ledger.get("id", []), ledger.get("difference", []))}
    note = {label: rows[label] for label, n in zip(ledger.index, ledger.get("note", [])) if BOUND in str(n)}
    return with_marks(ledger, {"recomputed": rows, "verdict": rows, "difference": diff, "note": note}, why)


def basis_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """How many verdicts rest on each basis (every basis present, zero when none)."""
    col = ledger["basis"] if "basis" in ledger else pd.Series(dtype=object)
    return {b: int((col == b).sum()) for b in BASES}


def check_claim(claim: dict, values: dict, params: dict, currencies: dict, gate=None,
                plausible: dict | None = None) -> dict:
    where = f"claim {claim.get('id')}"
    if "tolerance" in claim:
        raise PublishedError(f"{where}: 'tolerance' is not a claim key: a claim's tolerance follows how its "
                             "number is printed (half a unit of its last digit, widened by '~', 'about' or "
                             "'roughly'; 'an order of magnitude' is ten times within a factor of √10); "
                             "see book/methods.md, 'Published values and tolerances'")
    q = parse_quantity(claim["published"], where)
    if "kilo" in claim:
        q = q.with_kilo(float(claim["kilo"]))
    if "approx" in claim:
        _check_approx(claim, q, where)
        q = _with(q, approx=bool(claim["approx"]))
    tol = q.tolerance
    kind = claim.get("kind", "data")
    row = dict(
        id=claim["id"], source=claim["source"], kind=kind, claim=claim["claim"],
        published=str(claim["published"]), recomputed="", difference="",
        tolerance=f"±{tol:.1%}" if q.bound is None else "within a factor of √10" if q.bound == MAGNITUDE else q.bound,
        verdict=UNKNOWN,
        note=claim.get("why", ""), same_as=claim.get("same_as", ""),
    )
    if kind == "not-derivable":
        row["tolerance"] = ""
        return row
    if kind not in ("data", "consistency"):
        raise PublishedError(f"{where}: unknown kind {kind!r}; expected data, consistency or not-derivable")

    stated = {k: parse_quantity(v, f"{where}, stated {k}") for k, v in (claim.get("stated") or {}).items()}
    space = {k: s.value for k, s in stated.items()}
    space.update({k: v for k, v in params.items() if _is_number(v) or v is None})
    if kind == "data":
        space.update(values)
    expr = claim.get("recompute")
    if not expr:
        raise PublishedError(f"{where}: kind {kind} needs a 'recompute' expression")

    used = names_in(expr)
    if kind == "data" and gate is not None and (why := gate.reason(used)):
        row.update(verdict=NOT_COMPARABLE, tolerance="", note=why)
        return row
    money = {currencies[n] for n in used if n in currencies}
    money |= {s.currency for k, s in stated.items() if s.currency and k in used}
    blocked = _blocked(claim, expr, space, q, money, plausible or {})
    if blocked:
        row.update(blocked)
        return row

    try:
        got = evaluate(expr, space)
    except MissingValue as exc:
        row["note"] = claim.get("why") or f"no value for {', '.join(exc.names)} in this data"
        return row
    row["recomputed"] = q.display(got)
    verdict, diff = judge(q, got, tol)
    row["difference"] = "" if diff is None else fmt_change(diff)
    if kind == "consistency" and stated:
        # One rule for the write-up against itself: can numbers that print like the stated
        # ones give a number that prints like the published one? (No measurement floor.)
        allowed = rounding_allows(claim, q, tol)
        row["tolerance"] = "rounding of the printed numbers"
        # the same rule at the printed values themselves (no measurement floor either)
        if allowed and not _span_allows(q, got, got, tol):
            row["note"] = (row["note"] + "; " if row["note"] else "") + \
                "holds within the rounding of the stated numbers, not at their printed values"
        verdict = HOLDS if allowed else FAILS
    row["verdict"] = verdict
    bound = _bound_note(q, got, verdict)
    if bound:
        row["note"] = f"{row['note']}; {bound}" if row["note"] else bound
    return row


def _check_approx(claim: dict, q: Quantity, where: str) -> None:
    """A number printed without '~' is widened to an approximate one only where the claim, in
    the write-up's sense, says it is approximate ('about', 'roughly', ...)."""
    words = [w for w in APPROX_WORDS if w not in ("under", "over")]
    if claim["approx"] and not q.approx and not any(w in str(claim["claim"]).lower() for w in words):
        raise PublishedError(f"{where}: 'approx: true' widens {claim['published']!r} to an approximate number, "
                             f"but the claim does not say it is approximate ({', '.join(words)})")


def _blocked(claim: dict, expr: str, space: dict, q, money: set, plausible: dict) -> dict | None:
    """Why a claim cannot be recomputed here (a missing parameter, mixed currencies), as the
    row's note (and verdict, when only an implausible parameter value could rescue it)."""
    needs = [n for n in claim.get("needs", []) if space.get(n) is None]
    if needs:
        rescue = _implausible_rescue(expr, space, needs, q, plausible)
        if rescue:  # only a value no one will see would make it hold
            return {"verdict": FAILS, "note": rescue}
        return {"note": _needs_note(claim, expr, space, needs, q, money)}
    if len(money) > 1 and not claim.get("needs"):
        return {"note": f"divides amounts in {' and '.join(sorted(money))} without an exchange rate"}
    if q.currency and money and money != {q.currency}:
        return {"note": f"published in {q.currency}, recomputed in {', '.join(sorted(money))}: not comparable"}
    return None


BOUND = "true as a bound"  # a held bound's note, which quotes the recomputed value


def _bound_note(q, got: float, verdict: str) -> str | None:
    """A bound that holds says by how much: 'under 1 s' at 0.1 s is true but tells little. Said
    whenever it holds, not only when by far: the ratio moves with the recomputed value, and a
    note that came and went with it could carry no mark where it was empty (`make marks`: Strix
    Halo's server run moved to longer prompts made "2.1×" appear)."""
    if q.bound not in ("under", "over") or verdict != HOLDS or not got or not q.value or got / q.value <= 0:
        return None
    ratio = got / q.value
    shown = fmt_multiple(ratio)
    if 0.5 < ratio < 2:
        return f"{BOUND}: the recomputed value is {shown}× the stated one"
    where = "far above" if ratio > 1 else "far below"
    return f"{BOUND}, but the recomputed value is {shown}× the stated one ({where} it)"


def stated_range(claim: dict) -> tuple[float, float] | None:
    """The lowest and highest value a consistency claim's expression takes over numbers that
    print like its stated ones (each within half a unit of its last digit)."""
    import itertools

    stated = {k: parse_quantity(v, f"claim {claim.get('id')}, stated {k}")
              for k, v in (claim.get("stated") or {}).items()}
    if claim.get("kind") != "consistency" or not stated:
        return None
    names = list(stated)
    # a bare whole number ("3" runs) is a count, exact; anything else was rounded when printed
    step = {n: 0.0 if re.fullmatch(r"\s*\d+\s*", str(claim["stated"][n])) else stated[n].step for n in names}
    got = []
    for corner in itertools.product((-0.5, 0.5), repeat=len(names)):
        space = {n: stated[n].value + c * step[n] for n, c in zip(names, corner)}
        try:
            got.append(evaluate(claim["recompute"], space))
        except (MissingValue, ZeroDivisionError):
            return None
    return min(got), max(got)


def rounding_allows(claim: dict, q: Quantity | None = None, tol: float | None = None) -> bool | None:
    """Can numbers that print like the stated ones give a value within the published one's
    tolerance? None for a claim that states no numbers."""
    span = stated_range(claim)
    if span is None:
        return None
    q = q or parse_quantity(claim["published"], f"claim {claim.get('id')}")
    return _span_allows(q, *span, tol)


def _span_allows(q: Quantity, lo: float, hi: float, tol: float | None = None) -> bool:
    """Does some value between lo and hi print like the published one?"""
    if q.bound == MAGNITUDE:
        return lo <= q.value * 10 ** 0.5 and hi >= q.value * 10 ** -0.5
    if q.bound == "under":
        return lo < q.value
    if q.bound == "over":
        return hi > q.value
    # the published number's own rounding (approximate ones: their stated tolerance); the
    # measurement floor is for data, and the stated numbers' rounding is in [lo, hi] already
    half = q.step / 2 if not q.approx else (q.tolerance if tol is None else tol) * abs(q.value)
    half += 1e-9 * abs(q.value)  # a bound met exactly is met (binary floating point)
    return lo <= q.value + half and hi >= q.value - half


def judge(q: Quantity, got: float, tol: float) -> tuple[str, float | None]:
    """Verdict and relative difference of a recomputed value against a published one."""
    if got is None or math.isnan(got):
        return UNKNOWN, None
    if q.bound == MAGNITUDE:  # the same rule as for a span of values
        return (HOLDS if _span_allows(q, got, got) else FAILS), got / q.value - 1
    if q.bound == "under":
        return (HOLDS if got < q.value else FAILS), None
    if q.bound == "over":
        return (HOLDS if got > q.value else FAILS), None
    if q.value == 0:
        return (HOLDS if abs(got) <= tol else FAILS), None
    diff = (got - q.value) / abs(q.value)
    return (HOLDS if abs(diff) <= tol else FAILS), diff


def _needs_note(claim, expr, space, needs, q: Quantity, money: set) -> str:
    note = f"needs parameter {', '.join(needs)}"
    if money:
        note = f"amounts in {' and '.join(sorted(money))}; " + note
    if len(needs) == 1:
        implied = _implied(expr, space, needs[0], q.value)
        if implied is not None:
            note += f"; it would hold at {needs[0]} = {implied:.3g}"
    return note


def _implausible_rescue(expr: str, space: dict, needs: list, q: Quantity, plausible: dict) -> str:
    """Why a claim that needs one missing parameter cannot hold: the value at which it would
    lies outside that parameter's cited plausible range (else '')."""
    if len(needs) != 1 or needs[0] not in plausible or q.bound in ("under", "over"):
        return ""
    name, r = needs[0], plausible[needs[0]]
    implied = _implied(expr, space, name, q.value)
    if implied is None:
        return ""
    # the published number's tolerance, at both ends of the plausible range
    ends = [evaluate(expr, {**space, name: v}) for v in (r["low"], r["high"])]
    lo, hi = min(ends), max(ends)
    within = _span_allows(q, lo, hi) if q.bound == MAGNITUDE else \
        q.value * (1 - q.tolerance) <= hi and q.value * (1 + q.tolerance) >= lo
    if within:
        return ""
    return (f"holds only at {name} = {implied:.3g}, outside its plausible range {r['low']:g}-{r['high']:g} "
            f"({r['source']}); over that range the recomputed value is {q.display(lo)} to {q.display(hi)}")


def _implied(expr: str, space: dict, name: str, target: float) -> float | None:
    """The parameter value at which expr equals target, for a power-law dependence."""
    try:
        r1 = evaluate(expr, {**space, name: 1.0})
        r2 = evaluate(expr, {**space, name: 2.0})
    except (MissingValue, ValueError):
        return None
    if r1 <= 0 or r2 <= 0 or r1 == r2 or target <= 0:
        return None
    k = math.log(r2 / r1) / math.log(2.0)
    return (target / r1) ** (1.0 / k)


def _with(q: Quantity, **changes) -> Quantity:
    from dataclasses import replace

    return replace(q, **changes)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def verdict_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """How many claims hold, do not hold, are not derivable."""
    counts = ledger["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def ledger_glue(ledger: pd.DataFrame, comparison: pd.DataFrame | None = None, claim_ids: dict | None = None) -> Glued:
    """The counts every chapter's ledger section quotes, under their glue keys: claims by
    verdict and, with the published-vs-reproduced table, its comparable cells and how many agree.
    A count of verdicts rests on what any verdict it counts rests on (`claim_ids`, the page's:
    make marks moved a Strix Halo claim from holds to does not hold, and both counts with it);
    the number of claims rests on nothing."""
    out = Glued()
    every = union(*(claim_ids or {}).values())
    for v, n in verdict_counts(ledger).items():
        out.cell(GLUE_KEYS[v], n, every)
    out["claims_total"] = len(ledger)
    if comparison is not None:
        out["cells_total"] = int(comparison["within"].notna().sum())
        out["cells_within"] = int((comparison["within"] == True).sum())  # noqa: E712
    return out


def compare_published(published: Published, values: dict, currencies: dict | None = None,
                      gate=None, reconstructed=None) -> pd.DataFrame:
    """Every published table cell beside the value recomputed from the data.

    A cell whose expression draws on data that is not the write-up's setup (`gate`) is
    not evaluated: its note says what differs. Each compared cell's `basis` follows the
    ledger's rule (cell_basis)."""
    currencies = currencies or {}
    rows = []
    for table in published.tables:
        for cells, exprs in zip(table.rows, table.values):
            for col, text, expr in zip(table.columns, cells, exprs):
                if expr is None:
                    continue
                q = parse_quantity(text, f"table {table.id}, row {cells[0]!r}, column {col!r}")
                row = dict(
                    table=table.id, source=table.source, row=cells[0], column=col,
                    published=text, reproduced="n/a", difference=None, within=None, basis="", note="",
                )
                if gate is not None and (why := gate.reason(names_in(expr))):
                    row["note"] = f"not comparable ({why})"
                    rows.append(row)
                    continue
                money = {currencies[n] for n in names_in(expr) if n in currencies}
                if q.currency and money and money != {q.currency}:
                    row["note"] = f"recomputed in {', '.join(sorted(money))}"
                    rows.append(row)
                    continue
                try:
                    got = evaluate(expr, values)
                except MissingValue as exc:
                    row["note"] = f"not in the data: {', '.join(exc.names)}"
                    rows.append(row)
                    continue
                row["reproduced"] = q.display(got)
                if q.value and not math.isnan(got):
                    row["difference"] = (got - q.value) / abs(q.value)
                    row["within"] = abs(row["difference"]) <= q.tolerance
                    row["basis"], note = cell_basis(published, expr, text, row["within"], reconstructed)
                    row["note"] = note or row["note"]
                rows.append(row)
    return pd.DataFrame(rows, columns=[
        "table", "source", "row", "column", "published", "reproduced", "difference", "within", "basis", "note",
    ])


def cell_basis(published: Published, expr: str, text: str, within: bool, reconstructed=None) -> tuple[str, str]:
    """What a compared published cell rests on, and a note when that needs saying: measured
    data; by construction (the reconstructed files were fit to the cell); or, for a cell they
    do not reproduce, the write-up's own numbers, which disagree (the note names the other
    printed numbers the files were fit to)."""
    if reconstructed is None or not reconstructed(set(names_in(expr))):
        return MEASURED, ""
    if within:
        return BY_CONSTRUCTION, ""
    others = [s for s in fitted_to(published, set(names_in(expr))) if not s.endswith(f": {text}")]
    where = "; ".join(others) or "other printed numbers of the write-up"
    return SELF, (f"The write-up disagrees with itself: the reconstructed files were fit to its {where}, "
                  f"not to this cell's {text}")


def published_layout(published: Published, comparison: pd.DataFrame, table_id: str) -> pd.DataFrame:
    """One published table in its own layout, each cell 'published → reproduced'.

    A cell outside the tolerance is marked ✗. Cells are matched by position (the order
    compare_published wrote them), so tables that repeat a row label still line up.
    """
    table = next(t for t in published.tables if t.id == table_id)
    compared = iter(comparison[comparison["table"] == table_id].itertuples())
    rows = []
    for cells, exprs in zip(table.rows, table.values):
        row = {}
        for col, text, expr in zip(table.columns, cells, exprs):
            if expr is None:
                row[col] = text
                continue
            c = next(compared)
            mark = " ✗" if c.within is False or c.within == False else ""  # noqa: E712
            row[col] = f"{text} → {c.reproduced}{mark}"
        rows.append(row)
    return pd.DataFrame(rows, columns=table.columns)

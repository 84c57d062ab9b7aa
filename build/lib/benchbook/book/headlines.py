"""Key results: the few numbers a reader came for, first on the page.

Each chapter declares its headlines in the registry as claim ids of the write-up's
ledger and a label with `{role}` placeholders. A headline's number is always this data's
own (the claim's expression over the data's values), its verdict the ledger's: on data of
another setup the number still shows and the verdict says `not comparable`. A headline
whose number the data cannot give is left out, and the box says how many were; so is one
that rests on another chapter's folder kept apart from this page's data (a reconstructed
folder beside measured files: benchbook.book.pipeline.ChapterResults.kept_apart).
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ..ledger.expr import ExpressionError, MissingValue, evaluate, names_in
from ..ledger.published import PublishedError, parse_quantity
from .pipeline import claim_space, gate

COLUMNS = ["result", "this data", "write-up", "verdict", "basis", "claim"]


def _label(template: str, roles) -> str:
    def role(m: re.Match) -> str:
        return roles.first(m.group(1)) or m.group(1)

    return re.sub(r"\{([a-z_-]+)\}", role, template)


def _own_value(claim: dict, space: dict) -> float | None:
    """The claim's number on this data, whatever the verdict (None if it lacks a value)."""
    if claim.get("kind", "data") != "data" or not claim.get("recompute"):
        return None
    try:
        got = evaluate(claim["recompute"], space)
    except (MissingValue, ExpressionError, ZeroDivisionError):
        return None
    return None if got is None or (isinstance(got, float) and math.isnan(got)) else got


def key_results(r) -> pd.DataFrame:
    """One row per declared headline that this data can give: label, value, the write-up's
    number, the ledger's verdict and what it rests on."""
    space, g = claim_space(r), gate(r)
    claims = {c["id"]: c for c in r.published.claims}
    ledger = r.ledger.set_index("id") if len(r.ledger) else pd.DataFrame()
    rows = []
    for h in r.spec.headlines:
        claim = claims.get(h.claim)
        if claim is None or h.claim not in ledger.index:
            continue
        if claim.get("recompute") and g.apart(names_in(claim["recompute"])):
            continue
        got = _own_value(claim, space)
        if got is None:
            continue
        try:
            q = parse_quantity(claim["published"], f"claim {h.claim}")
        except PublishedError:
            continue
        entry = ledger.loc[h.claim]
        rows.append({"result": _label(h.label, r.roles), "this data": q.display(got),
                     "write-up": str(claim["published"]), "verdict": entry["verdict"],
                     "basis": entry.get("basis", "") or "", "claim": h.claim})
    return pd.DataFrame(rows, columns=COLUMNS)

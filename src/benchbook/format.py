"""How numbers and configurations read on a page: the one formatting module.

Below every layer that prints (analysis tables, the ledger, pages), so each says a rate,
a time or a configuration's name the same way. One number style for all displayed text: a
true minus sign (U+2212) before a negative number, never a negative zero ('−0.0%' reads
'0.0%'), and one ratio format, '2.1×'. `typeset` brings text printed elsewhere (a
write-up's own '8.2x', a cell a chapter formatted itself, a value glued into prose) to that
style. Downloads are written from the tidy tables' numbers, never from these strings, so
they keep machine-readable numbers (and the write-ups' own text stays as published there).
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager

import pandas as pd

from .ingest.redact import redact

MINUS = "\u2212"
_CURRENCY = "€$£"
# a hyphen-minus that starts a number: not inside a word, a date, a range or an argument
_HYPHEN_MINUS = re.compile(rf"(?<![\w.,=/:\-{MINUS}+])-(?=[{_CURRENCY}]?\.?\d)")
# a signed zero ('-0.0%', '+0'): the sign says nothing
_SIGNED_ZERO = re.compile(rf"(?<![\w.,])[-{MINUS}+](?=[{_CURRENCY}]?0(?:[.,]0+)?(?![\d.,]*[1-9])(?!\d))")
# a ratio or a count written with a letter x ('2.1x', '2.1 x', '4x RTX 3090')
_LETTER_X = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)\s?x(?!\w)(?!\s*\d)")  # not '3 x 4'
# a cell that is one number: sign, approximation, currency, digits, unit or %/×, a mark aside
_NUMERIC = re.compile(rf"^[~≈<>≤≥]?\s?[-{MINUS}+]?[{_CURRENCY}]?\d[\d,]*(?:\.\d+)?\s?"
                      r"(?:[%×]|[a-zA-Z/]{1,8}(?:/[a-z]+)?)?$")


_EXACT = [False]


@contextmanager
def exact_numbers():
    """Within it, every number formatted here is printed in full (its repr and unit) rather than
    at a page's precision. For tools.marks_check, which asks whether the value a cell shows
    moved when a generator's choice moved, not only whether its printed digits did: a median
    that moves in its fifth digit rests on the choice as much as one that moves in its first."""
    was, _EXACT[0] = _EXACT[0], True
    try:
        yield
    finally:
        _EXACT[0] = was


def exact() -> bool:
    """Is exact_numbers on (a chart then places its points unrounded too)?"""
    return _EXACT[0]


def _full(v, unit: str = "") -> str | None:
    """The number in full when exact_numbers is on, else None."""
    return f"{float(v)!r}{unit}" if _EXACT[0] else None


def typeset(text: str) -> str:
    """Displayed text in the book's number style: true minus, no negative zero, '×' ratios."""
    text = _SIGNED_ZERO.sub("", str(text))
    text = _HYPHEN_MINUS.sub(MINUS, text)
    return _LETTER_X.sub(r"\1×", text)


def is_numeric_text(text) -> bool:
    """A table cell that shows one number ('−7.2%', '306.1 ms', '8.2×', '€0.43', '1,163')."""
    return bool(_NUMERIC.match(str(text).strip()))


def is_missing(v) -> bool:
    """None, NaN, NaT or pandas' NA (never a text, a list or a number)."""
    return v is None or (not isinstance(v, str) and pd.api.types.is_scalar(v) and bool(pd.isna(v)))


def fmt_cell(v) -> str:
    """A table cell as a page shows it: text typeset, a float to four places, a missing value as a dash."""
    if is_missing(v):
        return "–"
    if isinstance(v, float) and _EXACT[0]:
        return _full(v)
    return typeset(f"{v:.4f}" if isinstance(v, float) else str(v))


def fmt_significant(v) -> str:
    """A value to four significant figures, thousands with commas, whole above 1,000
    ('12,345', '123.5', '0.01235'); a dash for none or an infinite value (a chart's tooltip)."""
    if is_missing(v):
        return "–"
    v = float(v)
    if not math.isfinite(v):
        return "–"
    return _full(v) or typeset(f"{v:,.0f}" if abs(v) >= 1000 else f"{float(f'{v:.4g}'):,.10g}")


def fmt_amount(v, missing: str = "unknown") -> str:
    """A rate to three significant digits without an exponent ('2,230' rather than '2.23e+03')."""
    if is_missing(v):
        return missing
    return _full(v) or typeset(f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}")


def fmt_seconds(v) -> str:
    """Seconds shown as ms below one second, as s above."""
    if v is None or pd.isna(v):
        return "–"
    return _full(v, " s") or typeset(f"{v * 1000:.1f} ms" if abs(v) < 1 else f"{v:.2f} s")


def fmt_rate(v, decimals: int = 0) -> str:
    if v is None or pd.isna(v):
        return "–"
    return _full(v) or typeset(f"{v:,.{decimals}f}")


def fmt_ratio(v) -> str:
    if v is None or pd.isna(v) or math.isinf(v):
        return "–"
    return _full(v, "×") or typeset(f"{v:.2f}×")


def fmt_unit(v, unit: str, decimals: int) -> str:
    """A number with its unit ('35.02 GiB'), or a dash when there is none."""
    if v is None or pd.isna(v):
        return "–"
    return _full(v, f" {unit}") or typeset(f"{v:.{decimals}f} {unit}")


def fmt_money(v, currency: str) -> str:
    if v is None or pd.isna(v):
        return "–"
    symbol = {"EUR": "€", "USD": "$", "GBP": "£"}.get(currency, currency + " ")
    return _full(v, f" {currency}") or typeset(f"{'-' if v < 0 else ''}{symbol}{abs(v):,.2f}")


def fmt_pct(v) -> str:
    if v is None or pd.isna(v):
        return "–"
    return _full(v, " (fraction)") or typeset(f"{v:+.1%}")


def fmt_change(v) -> str:
    """A relative difference as a claims ledger keeps it ('+1.2%', in plain ASCII: its downloads
    carry the text as computed). In full (exact_numbers) to a ten-millionth: it is a fraction of
    the published value, so a value that moved by its last bits (1387.999999 for 1388) moves the
    difference from −7e-10 to 0, which is rounding, not a move."""
    return _full(round(v, 7) + 0.0, " (fraction)") or f"{v:+.1%}"  # (+ 0.0: no −0.0)


def fmt_multiple(v) -> str:
    """How many times another value one is, in a sentence ('1.9', '0.42'; the × is the caller's)."""
    return _full(v) or (f"{v:.1f}" if v > 1 else f"{v:.2f}")


def config_label(cid: str | None, config: dict) -> str:
    """How a page names a configuration: its study.yml `label`, else its id."""
    if not cid:
        return "–"
    return str(config.get("label") or cid)


def platform_short(config: dict) -> str:
    """A platform in a few words for a label: study.yml's `platform` up to its first
    parenthesis or comma ('NVIDIA DGX Spark (GB10, ...)' -> 'NVIDIA DGX Spark')."""
    text = str(config.get("platform") or config.get("accelerators") or "").strip()
    return re.split(r"\s*[(,]", text, maxsplit=1)[0] or "unknown platform"


def same_platform(a: dict, b: dict) -> bool:
    """Two configurations on the same hardware (platform and accelerators as study.yml gives them)."""
    key = ("platform", "accelerators")
    return all(a.get(k) == b.get(k) for k in key) and any(a.get(k) for k in key)


def fmt_args(args) -> str:
    """Serve arguments from study.yml, redacted: users paste command lines with keys."""
    if isinstance(args, dict):
        args = ", ".join(f"{k}={v}" for k, v in args.items())
    return redact(str(args or ""))

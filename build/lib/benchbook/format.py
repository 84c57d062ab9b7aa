"""How numbers and configurations read on a page: the one formatting module.

Below every layer that prints (analysis tables, the ledger, pages), so each says a rate,
a time or a configuration's name the same way.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from .ingest.redact import redact


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


def fmt_unit(v, unit: str, decimals: int) -> str:
    """A number with its unit ('35.02 GiB'), or a dash when there is none."""
    if v is None or pd.isna(v):
        return "–"
    return f"{v:.{decimals}f} {unit}"


def fmt_money(v, currency: str) -> str:
    if v is None or pd.isna(v):
        return "–"
    symbol = {"EUR": "€", "USD": "$", "GBP": "£"}.get(currency, currency + " ")
    return f"{symbol}{v:,.2f}"


def fmt_pct(v) -> str:
    if v is None or pd.isna(v):
        return "–"
    return f"{v:+.1%}"


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

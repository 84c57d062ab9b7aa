"""Money and energy on one honest basis: explicit currencies, dated exchange rates.

An amount always carries its currency. Two amounts in different currencies are never
compared or divided unless an exchange rate with its date (and source) is given; without
one the functions raise CurrencyError rather than guess.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class CurrencyError(ValueError):
    """Amounts in different currencies met without a usable exchange rate."""


@dataclass(frozen=True)
class Money:
    amount: float
    currency: str  # ISO 4217: EUR, USD

    def __post_init__(self):
        if not re.fullmatch(r"[A-Z]{3}", str(self.currency or "")):
            raise CurrencyError(f"currency {self.currency!r}: expected an ISO 4217 code such as EUR or USD")


@dataclass(frozen=True)
class Rate:
    """`value` units of `quote` per one unit of `base` on `date` (e.g. 1.08 USD per EUR)."""

    base: str
    quote: str
    value: float
    date: str
    source: str = ""

    def __post_init__(self):
        if not (isinstance(self.value, (int, float)) and math.isfinite(self.value) and self.value > 0):
            raise CurrencyError(f"exchange rate {self.quote}/{self.base}: {self.value!r} is not a positive number")
        if not _DATE.match(str(self.date or "")):
            raise CurrencyError(f"exchange rate {self.quote}/{self.base} = {self.value}: needs the date it "
                                f"applies to (YYYY-MM-DD), got {self.date!r}")
        if self.base == self.quote:
            raise CurrencyError(f"exchange rate from {self.base} to itself")

    def label(self) -> str:
        return f"{self.value:g} {self.quote}/{self.base} on {self.date}" + (f" ({self.source})" if self.source else "")


def usd_per_eur(value: float | None, date: str | None, source: str = "") -> Rate | None:
    """The rate from the usual parameters; None when no rate was given."""
    if value is None:
        if date:
            raise CurrencyError(f"fx date {date!r} given without a rate (usd_per_eur)")
        return None
    return Rate("EUR", "USD", float(value), str(date or ""), source)


def convert(money: Money, to: str, rate: Rate | None) -> Money:
    """`money` in currency `to`; the rate must link the two currencies."""
    if money.currency == to:
        return money
    if rate is None:
        raise CurrencyError(f"cannot convert {money.currency} to {to} without a dated exchange rate")
    if (rate.base, rate.quote) == (money.currency, to):
        return Money(money.amount * rate.value, to)
    if (rate.base, rate.quote) == (to, money.currency):
        return Money(money.amount / rate.value, to)
    raise CurrencyError(f"rate {rate.quote}/{rate.base} does not convert {money.currency} to {to}")


def ratio(a: Money, b: Money, rate: Rate | None = None) -> float:
    """a / b as a pure number, converting b into a's currency only through `rate`."""
    b_in_a = convert(b, a.currency, rate)
    if b_in_a.amount == 0:
        raise ZeroDivisionError(f"division by a zero amount of {b.currency}")
    return a.amount / b_in_a.amount


def cost_per_million(price_per_hour: Money, tokens_per_s: float) -> Money:
    """Cost of one million tokens at a sustained rate, in the price's currency."""
    if not tokens_per_s or tokens_per_s <= 0 or math.isnan(tokens_per_s):
        raise ValueError(f"tokens/s must be positive, got {tokens_per_s!r}")
    return Money(price_per_hour.amount / (tokens_per_s * 3600.0) * 1e6, price_per_hour.currency)


def tokens_per_kwh(tokens_per_s: float, power_w: float) -> float:
    """Tokens produced per kilowatt-hour at a rate and a power draw.

    With a power bound (TDP, a power limit) instead of a measured draw, the result is a
    lower bound on tokens per kWh.
    """
    if not power_w or power_w <= 0:
        raise ValueError(f"power must be positive, got {power_w!r}")
    return tokens_per_s * 3600.0 / (power_w / 1000.0)

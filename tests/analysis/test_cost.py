"""Cost, currency and energy rules: amounts keep their currency; conversions need a dated rate."""

from __future__ import annotations

import math

import pytest

from benchbook.analysis.cost import (
    CurrencyError,
    Money,
    Rate,
    convert,
    cost_per_million,
    ratio,
    tokens_per_kwh,
    usd_per_eur,
)


def test_cost_per_million_by_hand():
    # €1.79 per hour at 236.2 t/s: 236.2 x 3,600 = 850,320 tokens an hour; 1.79 / 0.85032 = €2.1051 per M
    c = cost_per_million(Money(1.79, "EUR"), 236.2)
    assert c.currency == "EUR" and c.amount == pytest.approx(2.10508, abs=1e-5)
    # $2.70 per hour at 2,229.28 t/s: 8,025,408 tokens an hour -> $0.33643 per M
    assert cost_per_million(Money(2.7, "USD"), 2229.28).amount == pytest.approx(0.336432, abs=1e-6)
    with pytest.raises(ValueError):
        cost_per_million(Money(1.79, "EUR"), 0)
    with pytest.raises(ValueError):
        cost_per_million(Money(1.79, "EUR"), math.nan)


def test_amounts_in_different_currencies_never_divide_without_a_rate():
    api, ours = Money(14.0, "USD"), Money(0.30, "EUR")
    with pytest.raises(CurrencyError, match="without a dated exchange rate"):
        ratio(api, ours)
    with pytest.raises(CurrencyError, match="without a dated exchange rate"):
        convert(ours, "USD", None)
    assert ratio(Money(14.0, "USD"), Money(0.35, "USD")) == pytest.approx(40.0)  # same currency: fine


def test_conversion_through_a_dated_rate_both_ways():
    rate = Rate("EUR", "USD", 1.25, "2026-06-05", "test")
    # €0.30 x 1.25 USD/EUR = $0.375; $14 / $0.375 = 37.33
    assert convert(Money(0.30, "EUR"), "USD", rate) == Money(0.375, "USD")
    assert ratio(Money(14.0, "USD"), Money(0.30, "EUR"), rate) == pytest.approx(14 / 0.375)
    # $10 / 1.25 = €8
    assert convert(Money(10.0, "USD"), "EUR", rate) == Money(8.0, "EUR")
    assert rate.label() == "1.25 USD/EUR on 2026-06-05 (test)"


def test_a_rate_needs_a_date_a_positive_value_and_the_right_currencies():
    with pytest.raises(CurrencyError, match="needs the date"):
        Rate("EUR", "USD", 1.1, "")
    with pytest.raises(CurrencyError, match="needs the date"):
        Rate("EUR", "USD", 1.1, "June 2026")
    with pytest.raises(CurrencyError, match="not a positive number"):
        Rate("EUR", "USD", 0, "2026-06-05")
    with pytest.raises(CurrencyError, match="not a positive number"):
        Rate("EUR", "USD", math.inf, "2026-06-05")
    with pytest.raises(CurrencyError, match="does not convert GBP to USD"):
        convert(Money(1.0, "GBP"), "USD", Rate("EUR", "USD", 1.1, "2026-06-05"))
    with pytest.raises(CurrencyError, match="ISO 4217"):
        Money(1.0, "€")


def test_rate_from_parameters():
    assert usd_per_eur(None, "") is None
    assert usd_per_eur(1.1, "2026-06-05").value == 1.1
    with pytest.raises(CurrencyError, match="given without a rate"):
        usd_per_eur(None, "2026-06-05")
    with pytest.raises(CurrencyError, match="needs the date"):
        usd_per_eur(1.1, "")


def test_tokens_per_kwh_by_hand():
    # 1,000 t/s for an hour = 3.6 M tokens; at 500 W that hour uses 0.5 kWh -> 7.2 M tokens per kWh
    assert tokens_per_kwh(1000, 500) == pytest.approx(7.2e6)
    # 2,229 t/s on a 700 W H100: 2,229 x 3,600 / 0.7 = 11.463 M per kWh
    assert tokens_per_kwh(2229, 700) == pytest.approx(11_463_428.6, abs=0.1)
    with pytest.raises(ValueError):
        tokens_per_kwh(1000, 0)

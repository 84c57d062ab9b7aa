"""One number style on every page: a true minus, no negative zero, '2.1×' ratios, and
numbers told apart from words so tables can right-align them. Displayed text only:
the write-ups' own text ('8.2x', hyphen-minus) still parses as a number."""

from __future__ import annotations

import math

import pytest

from benchbook import format as fmt
from benchbook.ledger.published import parse_quantity

MINUS = "\u2212"


@pytest.mark.parametrize("shown", [fmt.fmt_pct(-0.072), fmt.fmt_rate(-1234.5), fmt.fmt_unit(-2.5, "GiB", 2),
                                   fmt.fmt_seconds(-0.25), fmt.fmt_money(-3.2, "EUR")])
def test_a_negative_number_shows_a_true_minus(shown):
    assert shown.startswith(MINUS) and "-" not in shown


@pytest.mark.parametrize("value", [-0.0, -0.00004, 0.0, 0.00004])
def test_a_number_that_rounds_to_zero_has_no_sign(value):
    assert fmt.fmt_pct(value) == "0.0%"
    assert fmt.fmt_rate(-0.4) == "0"


@pytest.mark.parametrize("text, shown", [
    ("-7.2%", f"{MINUS}7.2%"),
    ("(-3.4%) / -0.0% (s12)", f"({MINUS}3.4%) / 0.0% (s12)"),
    ("+0.0 points", "0.0 points"),
    (f"{MINUS}0.00", "0.00"),
    ("-0.05", f"{MINUS}0.05"),
    ("~8.2x", "~8.2×"),
    ("2.1 x faster", "2.1× faster"),
    ("2x RTX 3090", "2× RTX 3090"),
])
def test_typeset_brings_text_printed_elsewhere_to_the_style(text, shown):
    assert fmt.typeset(text) == shown


@pytest.mark.parametrize("text", ["2026-11-27", "Qwen3.6-35B-A3B", "--max-num-seqs 8", "max_num_seqs=-1",
                                  "1-2 s", "0x1F", "3 x 4 grid", "gfx1151", "q36-mtp"])
def test_typeset_leaves_dates_names_arguments_and_ranges_alone(text):
    assert fmt.typeset(text) == text


def test_ratios_read_one_way():
    assert fmt.fmt_ratio(2.1) == "2.10×"
    assert fmt.fmt_ratio(math.inf) == "–"


def test_the_write_ups_own_text_still_parses_after_the_style_is_chosen():
    """The ledger reads the write-up's '8.2x' and '-57%' as written; the display is typeset."""
    assert parse_quantity("~8.2x").value == pytest.approx(8.2)
    assert parse_quantity("-57%").value == pytest.approx(-57)
    assert parse_quantity(fmt.typeset("-57%")).value == pytest.approx(-57)  # and the typeset form too


@pytest.mark.parametrize("text, numeric", [
    (f"{MINUS}7.2%", True), ("306.1 ms", True), ("8.2×", True), ("€0.43", True), ("1,163", True),
    ("~8.2×", True), ("12 t/s", True), ("holds", False), ("q36-mtp", False), ("2.00× lower", False),
    ("does not hold", False), ("", False),
])
def test_a_cell_that_shows_one_number_is_told_from_text(text, numeric):
    assert fmt.is_numeric_text(text) is numeric


def test_a_table_cell_is_typeset_and_a_missing_one_is_a_dash():
    assert fmt.fmt_cell(-0.5) == f"{MINUS}0.5000"
    assert fmt.fmt_cell(float("nan")) == fmt.fmt_cell(None) == "–"
    assert fmt.fmt_cell(3) == "3"


def test_missing_values_of_every_kind_are_a_dash_and_lists_are_not_missing():
    import pandas as pd

    assert all(fmt.is_missing(v) for v in (None, float("nan"), pd.NA, pd.NaT))
    assert not any(fmt.is_missing(v) for v in ("", "–", [1, 2], 0))
    assert fmt.fmt_cell(pd.NA) == "–" and fmt.fmt_cell([1, 2]) == "[1, 2]"

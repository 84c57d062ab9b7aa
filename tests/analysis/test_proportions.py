"""Wilson intervals, Fisher's exact test and Holm's correction against textbook values."""

import math

import pytest

from benchbook.analysis.proportions import compare_rates, fisher_exact, holm, wilson


def test_wilson_known_values():
    assert wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    assert wilson(5, 10) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson(10, 10)[1] == 1.0
    lo, hi = wilson(19, 158, 0.90)
    assert lo > wilson(19, 158)[0] and hi < wilson(19, 158)[1]  # a lower level gives a narrower interval
    assert all(math.isnan(x) for x in wilson(0, 0))
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_fisher_exact_known_values():
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(0.4857142857)  # Fisher's tea-tasting table
    assert fisher_exact(1, 9, 11, 3) == pytest.approx(0.0027594561)  # R: fisher.test(matrix(c(1,11,9,3),2))
    assert fisher_exact(5, 5, 5, 5) == pytest.approx(1.0)
    assert fisher_exact(0, 0, 0, 0) == 1.0
    assert fisher_exact(2, 3, 4, 1) == fisher_exact(4, 1, 2, 3)  # symmetric in the rows


def test_holm_adjusts_in_step_down_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([0.4, 0.9]) == pytest.approx([0.8, 0.9])


def test_compare_rates():
    c = compare_rates(19, 158, 9, 161)
    assert c["rate_1"] == pytest.approx(19 / 158) and c["difference"] == pytest.approx(19 / 158 - 9 / 161)
    assert c["intervals_overlap"] and 0.04 < c["p_fisher"] < 0.05

import math

import pytest

from benchbook.ledger.published import PublishedError, load_published, parse_quantity


@pytest.mark.parametrize("text,value,unit,approx,currency", [
    ("1,163", 1163.0, "", False, None),
    ("243 ms", 0.243, "s", False, None),
    ("1.31 s", 1.31, "s", False, None),
    ("~8.2×", 8.2, "×", True, None),
    ("€0.43", 0.43, "", False, "EUR"),
    ("$14", 14.0, "", False, "USD"),
    ("11,378 t/s", 11378.0, "tok/s", False, None),
    ("roughly 60 s", 60.0, "s", True, None),
    ("20 minutes", 1200.0, "s", False, None),
])
def test_parse_quantity_values_units(text, value, unit, approx, currency):
    q = parse_quantity(text)
    assert math.isclose(q.value, value)
    assert q.unit == unit
    assert q.approx is approx
    assert q.currency == currency


def test_bounds_are_one_sided_not_approximate():
    q = parse_quantity("under 1.7 s")
    assert q.bound == "under" and not q.approx and q.value == 1.7


def test_tolerance_follows_printed_precision():
    # half a unit of the last digit relative to the value, plus the 1 % floor
    assert math.isclose(parse_quantity("12.8 ms").tolerance, 0.05 / 12.8 + 0.01)
    assert math.isclose(parse_quantity("~5.1×").tolerance, 0.05 / 5.1 + 0.10)


def test_display_uses_published_unit_and_decimals():
    assert parse_quantity("243 ms").display(0.2456) == "246 ms"
    assert parse_quantity("1,163").display(1170.4) == "1,170"
    assert parse_quantity("€0.43").display(0.4312) == "€0.43"
    # one significant digit printed: show three so the difference is visible
    assert parse_quantity("under €1").display(1.1337) == "€1.13"


@pytest.mark.parametrize("bad", ["fast", "12 parsecs", ""])
def test_unreadable_numbers_name_the_place(bad):
    with pytest.raises(PublishedError, match="claims\\[3\\]"):
        parse_quantity(bad, "claims[3]")


def test_template_rows_expand_the_first_cell(tmp_path):
    p = tmp_path / "published.yml"
    p.write_text(
        "study: s\nsources: {a: {file: f}}\ntables:\n"
        "  - id: t\n    source: a\n    title: T\n    columns: [Concurrency, Rate]\n"
        "    template: [null, 'run_c{0}_output_tps']\n    rows:\n      - ['4', '259']\n",
        encoding="utf-8",
    )
    pub = load_published(p)
    assert pub.tables[0].values == [[None, "run_c4_output_tps"]]


def test_row_with_wrong_cell_count_is_reported(tmp_path):
    p = tmp_path / "published.yml"
    p.write_text(
        "study: s\nsources: {a: {file: f}}\ntables:\n"
        "  - id: t\n    source: a\n    title: T\n    columns: [A, B]\n"
        "    template: [null, x]\n    rows:\n      - ['1', '2', '3']\n",
        encoding="utf-8",
    )
    with pytest.raises(PublishedError, match="rows\\[0\\] has 3 cells, expected 2"):
        load_published(p)


def test_claim_with_unknown_source_is_reported(tmp_path):
    p = tmp_path / "published.yml"
    p.write_text(
        "study: s\nsources: {a: {file: f}}\nclaims:\n"
        "  - {id: c1, source: b, claim: x, published: '1'}\n",
        encoding="utf-8",
    )
    with pytest.raises(PublishedError, match="unknown source 'b'"):
        load_published(p)


def test_repository_published_file_loads():
    from pathlib import Path

    path = Path(__file__).parents[2] / "data/h100-dense-vs-moe-mtp/published.yml"
    pub = load_published(path)
    assert {t.id for t in pub.tables} >= {"dense-concurrency", "moe-concurrency", "dense-cost", "moe-cost"}
    for claim in pub.claims:  # every printed value parses
        parse_quantity(claim["published"], claim["id"])


@pytest.mark.parametrize("entry, message", [
    ("{low: 1.6, high: 0.8, source: s}", "expected numbers with low below high"),
    ("{low: 0.8, source: s}", "expected a mapping with 'low', 'high' and 'source'"),
    ("{low: 0.8, high: 1.6, source: nowhere}", "unknown source 'nowhere'"),
])
def test_a_plausible_range_is_cited_and_ordered(tmp_path, entry, message):
    from benchbook.ledger.published import PublishedError, load_published

    path = tmp_path / "published.yml"
    path.write_text(f"study: x\nsources: {{s: {{title: t}}}}\nplausible:\n  usd_per_eur: {entry}\n", encoding="utf-8")
    with pytest.raises(PublishedError, match=f"plausible.usd_per_eur: {message}"):
        load_published(path)

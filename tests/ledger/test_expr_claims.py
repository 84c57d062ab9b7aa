import math

import pytest

from benchbook.ledger.claims import FAILS, HOLDS, UNKNOWN, check_claim, compare_published
from benchbook.ledger.expr import ExpressionError, MissingValue, evaluate, names_in
from benchbook.ledger.published import Published, PublishedTable


def test_evaluate_arithmetic_and_functions():
    assert evaluate("a / b + 1", {"a": 6, "b": 3}) == 3.0
    assert evaluate("max(a, b) * 2", {"a": 1, "b": 4}) == 8.0
    assert math.isnan(evaluate("a / 0", {"a": 1}))
    assert names_in("x_1 / max(y, 2)") == {"x_1", "y"}


def test_evaluate_reports_missing_names():
    with pytest.raises(MissingValue) as err:
        evaluate("a / b / c", {"a": 1, "c": None})
    assert err.value.names == ["b", "c"]


@pytest.mark.parametrize("expr", ["__import__('os')", "a.b", "[1, 2]", "a if b else c"])
def test_evaluate_refuses_anything_else(expr):
    with pytest.raises(ExpressionError):
        evaluate(expr, {"a": 1, "b": 1, "c": 1})


def claim(**kw):
    base = dict(id="c", source="s", claim="text")
    base.update(kw)
    return base


def test_data_claim_holds_within_tolerance_and_fails_outside():
    values = {"x": 8.1}
    assert check_claim(claim(published="~8.2×", recompute="x"), values, {}, {})["verdict"] == HOLDS
    assert check_claim(claim(published="8.2×", recompute="x"), values, {}, {})["verdict"] == HOLDS  # 1.2 % < 1.6 %
    assert check_claim(claim(published="8.6×", recompute="x"), values, {}, {})["verdict"] == FAILS


def test_bounds():
    row = check_claim(claim(published="under €1", recompute="cost"), {"cost": 1.13}, {}, {"cost": "EUR"})
    assert row["verdict"] == FAILS
    row = check_claim(claim(kind="consistency", published="over 0.4 s", stated={"p": "1,388 t/s"},
                            recompute="7000 / p"), {}, {}, {})
    assert row["verdict"] == HOLDS and "12.6×" in row["note"]


def test_consistency_uses_only_stated_numbers():
    row = check_claim(claim(kind="consistency", published="77 t/s", stated={"b": "75.2 t/s"}, recompute="b"),
                      {"b": 77.0}, {}, {})
    assert row["verdict"] == FAILS and row["difference"] == "-2.3%"


def test_missing_measurement_is_not_derivable_with_reason():
    row = check_claim(claim(published="~8×", recompute="nope_tps / 2", why="never measured"), {}, {}, {})
    assert row["verdict"] == UNKNOWN and row["note"] == "never measured"


def test_currency_mixing_needs_an_exchange_rate():
    c = claim(published="~45×", stated={"api": "$14"}, needs=["usd_per_eur"],
              recompute="api / (cost * usd_per_eur)")
    row = check_claim(c, {"cost": 0.30}, {"usd_per_eur": None}, {"cost": "EUR"})
    assert row["verdict"] == UNKNOWN
    assert "USD" in row["note"] and "EUR" in row["note"]
    assert "would hold at usd_per_eur = 1.04" in row["note"]
    row = check_claim(c, {"cost": 0.30}, {"usd_per_eur": 1.08}, {"cost": "EUR"})
    assert row["verdict"] == HOLDS and row["recomputed"] == "43×"


def test_dividing_currencies_without_needs_is_refused():
    c = claim(published="~45×", stated={"api": "$14"}, recompute="api / cost")
    row = check_claim(c, {"cost": 0.30}, {}, {"cost": "EUR"})
    assert row["verdict"] == UNKNOWN and "without an exchange rate" in row["note"]


def test_not_derivable_kind():
    row = check_claim(claim(kind="not-derivable", published="~225 GB/s", why="a spec"), {}, {}, {})
    assert row["verdict"] == UNKNOWN and row["note"] == "a spec"


def test_compare_published_cells():
    table = PublishedTable(id="t", source="s", title="T", columns=["c", "rate", "ttft"],
                           rows=[["1", "75", "243 ms"]], values=[[None, "r_output_tps", "r_median_ttft_s"]])
    pub = Published(study="x", sources={"s": {}}, tables=[table])
    out = compare_published(pub, {"r_output_tps": 75.3, "r_median_ttft_s": 0.300})
    assert list(out["reproduced"]) == ["75", "300 ms"]
    assert list(out["within"]) == [True, False]
    assert math.isclose(out["difference"].iloc[1], 0.3 / 0.243 - 1)


# ---- what a verdict rests on ------------------------------------------------------------

def _basis_case():
    from benchbook.ledger.published import Published, PublishedTable

    table = PublishedTable(id="t", source="s", title="", columns=["run", "t/s"], rows=[["a", "100"], ["b", "50"]],
                           values=[[None, "a_tps"], [None, "b_tps"]])
    claims = [
        dict(id="ratio", source="s", claim="a is twice b", published="2×", recompute="a_tps / b_tps"),
        dict(id="spread", source="s", claim="twice c is 20", published="20", recompute="2 * c_spread"),
        dict(id="ratio-stated", kind="consistency", source="s", claim="2 = 100/50", published="2×",
             recompute="x / y", stated={"x": "100", "y": "50"}),
        dict(id="gone", source="s", claim="d is 1", published="1", recompute="d_tps"),
        dict(id="priced", source="s", claim="cost", published="3", recompute="a_tps * price / 200 * 3"),
    ]
    return Published(study="x", sources={"s": {}}, tables=[table], claims=claims)


def test_verdicts_on_reconstructed_files_are_not_confirmations():
    from benchbook.ledger.claims import BY_CONSTRUCTION, GENERATOR, MEASURED, SELF, check_claims, pinned_names

    pub = _basis_case()
    assert pinned_names(pub) == {"a_tps", "b_tps", "d_tps"}  # table cells, and a claim of one value
    values = {"a_tps": 100.0, "b_tps": 50.0, "c_spread": 10.0}
    rec = check_claims(pub, values, {"price": 2.0}, reconstructed=lambda names: True).set_index("id")
    assert rec.loc["ratio", "basis"] == BY_CONSTRUCTION and rec.loc["ratio", "verdict"] == HOLDS
    assert rec.loc["spread", "basis"] == GENERATOR  # a value no published number pins
    assert rec.loc["ratio-stated", "basis"] == SELF
    assert rec.loc["gone", "verdict"] == UNKNOWN and rec.loc["gone", "basis"] == ""
    assert rec.loc["priced", "basis"] == BY_CONSTRUCTION  # a parameter is not data
    measured = check_claims(pub, values, {"price": 2.0}, reconstructed=lambda names: False).set_index("id")
    assert set(measured.loc[["ratio", "spread", "priced"], "basis"]) == {MEASURED}
    # only names from a reconstructed folder make a verdict constructed
    mixed = check_claims(pub, values, {"price": 2.0}, reconstructed=lambda names: "b_tps" in names).set_index("id")
    assert mixed.loc["ratio", "basis"] == BY_CONSTRUCTION and mixed.loc["spread", "basis"] == MEASURED


def test_a_claim_two_chapters_check_and_its_stated_twin_are_one_statement():
    from benchbook.ledger.claims import claim_key

    assert claim_key("strix", {"id": "strix-gap-doubles", "same_as": "h100:moe-gap-doubles"}) == "h100:moe-gap-doubles"
    assert claim_key("h100", {"id": "moe-gap-doubles-stated", "same_as": ""}) == "h100:moe-gap-doubles"
    assert claim_key("h100", {"id": "moe-gap-doubles"}) == "h100:moe-gap-doubles"
    assert claim_key("gb10", {"id": "moe-gap-doubles"}) == "gb10:moe-gap-doubles"


def test_same_as_must_name_a_chapter_and_a_claim(tmp_path):
    from benchbook.ledger.published import PublishedError, load_published

    path = tmp_path / "published.yml"
    path.write_text("study: x\nsources: {s: {}}\nclaims:\n  - {id: c, source: s, claim: t, published: '1', "
                    "recompute: a, same_as: 'just-an-id'}\n")
    with pytest.raises(PublishedError, match=r"claims\[0\] \(c\): same_as 'just-an-id'; expected"):
        load_published(path)


def test_a_bound_note_states_the_ratio_the_right_way_round():
    below = check_claim(claim(kind="consistency", published="under 4 GiB", stated={"need": "1.0 GiB"},
                              recompute="need"), {}, {}, {})
    assert below["verdict"] == HOLDS and "0.25× the stated one (far below it)" in below["note"]
    above = check_claim(claim(published="over 1 s", recompute="t"), {"t": 3.0}, {}, {})
    assert above["verdict"] == HOLDS and "3.0× the stated one (far above it)" in above["note"]


def test_the_write_up_against_itself_is_judged_by_the_rounding_of_its_printed_numbers():
    # 368k and 360k tokens can be 368,499 and 359,500: -2.4 % ... -2.0 %, so -2.3 % holds
    row = check_claim(claim(kind="consistency", published="−2.3%", stated={"a": "368k tokens", "b": "360k tokens"},
                            recompute="100 * (b / a - 1)"), {}, {}, {})
    assert row["verdict"] == HOLDS and "rounding of the stated numbers" in row["note"]
    assert row["tolerance"] == "rounding of the printed numbers"
    # a whole number of runs is a count, exact: 1 + 2 x 3 is 7, not 8
    row = check_claim(claim(kind="consistency", published="8", stated={"n": "3"}, recompute="1 + 2 * n"), {}, {}, {})
    assert row["verdict"] == FAILS
    # the same average printed twice, 163.0 and 162: no rounding reconciles them
    row = check_claim(claim(kind="consistency", published="162 t/s", stated={"x": "163.0 t/s"}, recompute="x"),
                      {}, {}, {})
    assert row["verdict"] == FAILS


def test_a_consistency_claim_that_holds_only_through_rounding_says_so_even_within_the_data_floor():
    # 12.8 / 3.6 = 3.56 prints as 3.6, not 3.5 (within the 1 % floor data claims get, which
    # consistency claims do not have); 12.85 / 3.65 = 3.52 prints as 3.5, so it holds, with the reason
    row = check_claim(claim(kind="consistency", published="3.5×", stated={"moe": "3.6 ms", "dense": "12.8 ms"},
                            recompute="dense / moe"), {}, {}, {})
    assert row["verdict"] == HOLDS and row["recomputed"] == "3.6×"
    assert "not at their printed values" in row["note"]
    # a restatement that prints the same at its printed value carries no such note
    row = check_claim(claim(kind="consistency", published="8×", stated={"t": "~8.2×"}, recompute="t"), {}, {}, {})
    assert row["verdict"] == HOLDS and "not at their printed values" not in row["note"]


def test_an_order_of_magnitude_is_ten_times_within_a_factor_of_root_ten():
    from benchbook.ledger.claims import judge
    from benchbook.ledger.published import MAGNITUDE, parse_quantity

    q = parse_quantity("roughly an order of magnitude", "t")
    assert (q.value, q.unit, q.bound) == (10.0, "×", MAGNITUDE)
    assert judge(q, 8.2, q.tolerance)[0] == "holds"
    assert judge(q, 31.0, q.tolerance)[0] == "holds"
    assert judge(q, 3.0, q.tolerance)[0] == "does not hold"
    assert judge(q, 32.0, q.tolerance)[0] == "does not hold"


def test_a_claim_cannot_set_its_own_tolerance():
    from benchbook.ledger.claims import check_claim
    from benchbook.ledger.published import PublishedError

    claim = {"id": "c", "source": "s", "claim": "x", "published": "40%", "recompute": "v", "tolerance": 0.15}
    with pytest.raises(PublishedError, match="claim c: 'tolerance' is not a claim key"):
        check_claim(claim, {"v": 39.0}, {}, {})


def test_a_claim_that_only_an_implausible_parameter_could_rescue_does_not_hold():
    from benchbook.ledger.claims import check_claim

    claim = {"id": "gap", "source": "s", "claim": "x", "published": "two orders of magnitude",
             "stated": {"api": "$14"}, "needs": ["usd_per_eur"], "recompute": "api / (cost * usd_per_eur)"}
    plausible = {"usd_per_eur": {"low": 0.8252, "high": 1.599, "source": "ecb"}}
    row = check_claim(claim, {"cost": 0.73}, {}, {}, None, plausible)
    assert row["verdict"] == "does not hold"
    assert ("holds only at usd_per_eur = 0.192" in row["note"]
            and "outside its plausible range 0.8252-1.599" in row["note"])
    # a claim some plausible rate makes true stays open: it needs the rate
    near = dict(claim, published="~15×")
    row = check_claim(near, {"cost": 0.73}, {}, {}, None, plausible)
    assert row["verdict"] == "not derivable" and "needs parameter usd_per_eur" in row["note"]
    # without a cited range nothing is judged
    assert check_claim(claim, {"cost": 0.73}, {}, {}, None, {})["verdict"] == "not derivable"


def test_two_orders_of_magnitude_is_a_hundred_times_within_a_factor_of_root_ten():
    from benchbook.ledger.claims import check_claim, judge
    from benchbook.ledger.published import MAGNITUDE, parse_quantity

    q = parse_quantity("two orders of magnitude", "t")
    assert (q.value, q.bound) == (100.0, MAGNITUDE)
    assert judge(q, 40.0, q.tolerance)[0] == HOLDS  # within √10 of 100, far outside ±10.5 %
    assert judge(q, 30.0, q.tolerance)[0] == FAILS
    row = check_claim({"id": "g", "source": "s", "claim": "x", "published": "two orders of magnitude",
                       "recompute": "v"}, {"v": 250.0}, {}, {})
    assert (row["verdict"], row["tolerance"]) == (HOLDS, "within a factor of √10")


def test_a_number_printed_without_a_tilde_is_widened_only_where_the_claim_says_approximately():
    from benchbook.ledger.claims import check_claim
    from benchbook.ledger.published import PublishedError

    plain = {"id": "t", "source": "s", "claim": "the MoE is twice as fast", "published": "2x", "recompute": "v"}
    assert check_claim(plain, {"v": 1.45}, {}, {})["verdict"] == FAILS  # ±26 %: its last digit and 1 %
    with pytest.raises(PublishedError, match="claim t: 'approx: true' widens '2x'"):
        check_claim(dict(plain, approx=True), {"v": 1.45}, {}, {})
    about = dict(plain, claim="the MoE is about twice as fast", approx=True)
    assert check_claim(about, {"v": 1.45}, {}, {})["verdict"] == HOLDS  # ±35 %


def test_a_claim_that_fails_on_files_fit_to_the_write_up_rests_on_its_own_numbers():
    """Files fit to the write-up's table still fail a claim over it: the write-up disagrees
    with itself, and the note names both numbers; never 'does not hold' by construction."""
    from benchbook.ledger.claims import BY_CONSTRUCTION, GENERATOR, SELF, check_claims

    pub = _basis_case()
    pub.claims = [
        dict(id="ratio", source="s", claim="a is twice b", published="2×", recompute="a_tps / b_tps"),
        dict(id="thrice", source="s", claim="a is three times b", published="3×", recompute="a_tps / b_tps"),
        dict(id="bound", source="s", claim="c is over 2", published="over 2", recompute="c_len"),
        dict(id="c-value", source="s", claim="c is 3", published="over 1", recompute="c_len"),
        dict(id="gap", source="s", claim="a over a price", published="over 5", stated={"price": "$1"},
             recompute="a_tps / price"),
    ]
    led = check_claims(pub, {"a_tps": 100.0, "b_tps": 50.0, "c_len": 2.5}, reconstructed=lambda n: True)
    led = led.set_index("id")
    assert led.loc["ratio", "basis"] == BY_CONSTRUCTION
    assert (led.loc["thrice", "verdict"], led.loc["thrice", "basis"]) == (FAILS, SELF)
    note = led.loc["thrice", "note"]
    assert "disagrees with itself" in note and "a / t/s: 100" in note and "b / t/s: 50" in note
    assert "give 2.00×" in note and "says 3×" in note
    # a bound pins no value: the generator chose it
    assert led.loc["bound", "basis"] == GENERATOR and led.loc["c-value", "basis"] == GENERATOR
    # a claim's own stated number is the write-up's, not the data's
    assert led.loc["gap", "basis"] == BY_CONSTRUCTION
    assert not ((led["verdict"] == FAILS) & (led["basis"] == BY_CONSTRUCTION)).any()


def test_a_write_up_whose_k_is_1024_states_32k_active_tokens_exactly():
    """GB10: 2k context x 16 requests is 32,768 tokens, the write-up's '32k' (its 2k prompt is
    2,048 tokens): the claim holds, where k = 1,000 would call it 33k and fail it."""
    from pathlib import Path

    from benchbook.ledger.claims import check_claim
    from benchbook.ledger.published import load_published

    pub = load_published(Path(__file__).parents[2] / "data" / "gb10-mtp" / "published.yml")
    for cid in ("c-active-kv", "b-active-kv"):
        claim = next(c for c in pub.claims if c["id"] == cid)
        assert claim["kilo"] == 1024
        row = check_claim(claim, {}, {}, {})
        assert (row["verdict"], row["recomputed"]) == (HOLDS, "32k tokens"), cid
        assert check_claim({k: v for k, v in claim.items() if k != "kilo"}, {}, {}, {})["verdict"] == FAILS


def test_a_cell_the_files_fit_to_another_printed_number_blames_the_write_up_not_the_data():
    """The write-up prints one value as 77 in one table and 75 in another; files fit to the
    75 cannot reproduce the 77: that cell rests on the write-up's own numbers, naming both."""
    from benchbook.ledger.claims import BY_CONSTRUCTION, MEASURED, SELF
    from benchbook.page.report import mismatches

    first = PublishedTable(id="first", source="s", title="First", columns=["run", "t/s"], rows=[["one", "77 t/s"]],
                           values=[[None, "gen_tps"]])
    later = PublishedTable(id="later", source="s", title="Later", columns=["run", "t/s"], rows=[["one", "75 t/s"]],
                           values=[[None, "gen_tps"]])
    pub = Published(study="x", sources={"s": {}}, tables=[first, later])
    rec = compare_published(pub, {"gen_tps": 75.0}, reconstructed=lambda names: True)
    assert list(rec["basis"]) == [SELF, BY_CONSTRUCTION]
    bad = mismatches(rec)
    assert list(bad["rests on"]) == [SELF]
    assert "Later, one / t/s: 75" in bad["note"].iloc[0] and "77 t/s" in bad["note"].iloc[0]
    measured = compare_published(pub, {"gen_tps": 75.0}, reconstructed=lambda names: False)
    assert list(measured["basis"]) == [MEASURED, MEASURED] and measured["note"].iloc[0] == ""


def test_a_claim_printing_a_table_cell_again_is_judged_as_the_write_up_against_itself():
    """GB10: a table prints test C's TTFT change as −56.7 %, the headline as −56 %. On files fit
    to the table the headline is that cell again, so it is judged as the '-stated' check is, by
    the rounding of both printed numbers: −56.7 % does not round to −56 %. One verdict, not a
    'holds' by the data's 1 % floor beside a 'does not hold'."""
    from benchbook.ledger.claims import BY_CONSTRUCTION, SELF, check_claims

    table = PublishedTable(id="c", source="s", title="Results", columns=["metric", "change"],
                           rows=[["TTFT", "−56.7%"], ["TPOT", "−17.1%"]],
                           values=[[None, "100 * (m / v - 1)"], [None, "100 * (t / u - 1)"]])
    claims = [dict(id="headline", source="s", claim="TTFT -56 %", published="−56%", recompute="100 * (m / v - 1)"),
              dict(id="headline-stated", kind="consistency", source="s", claim="-56 against -56.7",
                   published="−56%", stated={"table": "−56.7%"}, recompute="table"),
              dict(id="tpot", source="s", claim="TPOT -17 %", published="−17%", recompute="100 * (t / u - 1)")]
    pub = Published(study="x", sources={"s": {}}, tables=[table], claims=claims)
    values = {"m": 1721.0, "v": 3979.0, "t": 82.9, "u": 100.0}
    led = check_claims(pub, values, reconstructed=lambda names: True).set_index("id")
    assert list(led["verdict"]) == [FAILS, FAILS, HOLDS]
    assert list(led["basis"]) == [SELF, SELF, BY_CONSTRUCTION]
    assert "prints −56.7%" in led.loc["headline", "note"] and "−56%" in led.loc["headline", "note"]
    # on measured data the claim is the data's, judged with the measurement floor
    measured = check_claims(pub, values, reconstructed=lambda names: False).set_index("id")
    assert measured.loc["headline", "verdict"] == HOLDS


def test_a_held_bound_always_says_by_how_much_so_its_note_can_carry_a_mark():
    """make marks: Strix Halo's server run moved to longer prompts made the 7,000-token claim's
    note "true as a bound, but … 2.1× the stated one" appear where the note had been empty, and an
    empty note carries no mark. A held bound now always gives its ratio; the note joins the claim's
    own words and, quoting the value, carries what the value rests on."""
    import pandas as pd

    from benchbook.ledger.claims import mark_ledger
    from benchbook.study.marks import cell_ids

    near = check_claim(claim(published="over 400 ms", recompute="t", why="the 7k prompt"), {"t": 0.742}, {}, {})
    assert near["verdict"] == HOLDS
    assert near["note"] == "the 7k prompt; true as a bound: the recomputed value is 1.9× the stated one"
    far = check_claim(claim(published="over 400 ms", recompute="t"), {"t": 0.842}, {}, {})
    assert far["note"] == "true as a bound, but the recomputed value is 2.1× the stated one (far above it)"
    ledger = pd.DataFrame([{**near, "id": "a"}, {**far, "id": "b", "note": "the write-up's own words"}])
    marked = cell_ids(mark_ledger(ledger, {"a": ("server_run",), "b": ("server_run",)}, {}))
    assert marked[(0, "note")] == ("server_run",) and (1, "note") not in marked

"""Key results: declared headlines exist, show this data's own numbers and the ledger's verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.book import registry
from benchbook.book.headlines import _label, key_results
from benchbook.book.spec import Headline
from benchbook.ledger.published import load_published

ROOT = Path(__file__).parents[2]
H100_DIR = ROOT / "data" / "h100-dense-vs-moe-mtp"
STRIX_DIR = ROOT / "data" / "strix-halo-baseline"
LHL_DIR = ROOT / "data" / "strix-halo-qwen3-30b-lhl"


@pytest.mark.parametrize("spec", [c for c in registry.chapters() if c.writeup and c.contract is not None],
                         ids=lambda c: c.id)
def test_every_chapter_declares_three_to_six_headlines_that_are_data_claims_of_its_write_up(spec):
    assert 3 <= len(spec.headlines) <= 6
    claims = {c["id"]: c for c in load_published(ROOT / "data" / registry.get(spec.notebook_name).id /
                                                 "published.yml").claims}
    for h in spec.headlines:
        assert h.claim in claims, h.claim
        assert claims[h.claim].get("kind", "data") == "data", h.claim
    roles = {r.name for r in spec.contract.roles}
    for h in spec.headlines:  # a placeholder names a role of the chapter's contract
        for name in __import__("re").findall(r"\{([a-z_-]+)\}", h.label):
            assert name in roles, (h.label, name)


def test_a_label_names_the_configuration_of_each_role_and_keeps_an_unknown_one():
    from benchbook.study.contract import Roles

    roles = Roles({"h100-moe": "candidate", "h100-dense": "baseline"})
    assert _label("{candidate} ÷ {baseline}", roles) == "h100-moe ÷ h100-dense"
    assert _label("{candidate} ÷ {other}", roles) == "h100-moe ÷ other"


def test_on_the_write_ups_setup_the_numbers_are_the_ledgers_recomputed_values():
    from benchbook.chapters.h100 import analysis as h100

    r = h100.analyse(H100_DIR, STRIX_DIR, H100_DIR / "published.yml")
    kr = key_results(r)
    assert len(kr) == len(r.spec.headlines)
    ledger = r.ledger.set_index("id")
    for row in kr.itertuples():
        assert row._2 == ledger.loc[row.claim, "recomputed"]  # "this data"
        assert row.verdict == ledger.loc[row.claim, "verdict"]
    assert "h100-moe-mtp" in kr["result"].iloc[2] and "h100-dense" in kr["result"].iloc[2]


def test_on_another_setup_the_data_s_own_numbers_show_without_a_verdict():
    from benchbook.chapters.strix import analysis as strix

    r = strix.analyse(LHL_DIR, h100_data_dir=H100_DIR, published_file=STRIX_DIR / "published.yml")
    kr = key_results(r).set_index("claim")
    assert not r.comparable
    assert {"strix-prefill-rate", "strix-gen-rate"} <= set(kr.index)
    assert set(kr.loc[["strix-prefill-rate", "strix-gen-rate"], "verdict"]) == {"not comparable"}
    # the lhl runs' best tg128 is their own number, not the write-up's 54 t/s
    lb = r.data["llama_bench"]
    tg128 = (lb["n_gen"] == 128) & (lb["n_prompt"] == 0) & (lb["n_depth"].fillna(0) == 0)
    best_tg = lb[tg128 & (lb["status"] == "ok")]["avg_ts"].max()
    assert kr.loc["strix-gen-rate", "this data"] == f"{best_tg:,.0f} t/s"
    # no server run in those files: that headline is left out, not shown empty
    assert "strix-ttft-4k" not in kr.index


def test_a_headline_whose_claim_is_not_in_the_published_file_is_left_out():
    from dataclasses import replace

    from benchbook.chapters.h100 import analysis as h100

    r = h100.analyse(H100_DIR, STRIX_DIR, H100_DIR / "published.yml")
    r.spec = replace(r.spec, headlines=(Headline("no-such-claim", "x"), r.spec.headlines[0]))
    assert list(key_results(r)["claim"]) == [r.spec.headlines[1].claim]

"""Decode and prefill ceilings against cases computed by hand (the arithmetic is written out).

The first part checks the formulas of benchbook.analysis.roofline; the second the join of
key figures with the real facts registry (benchbook.analysis.limits), including how MTP,
tensor parallelism and unknown facts enter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbook.analysis import roofline as rl
from benchbook.analysis.facts import load_facts
from benchbook.analysis.limits import bandwidth_sensitivity, decode_bytes, limits
from benchbook.book.key_figures import conform_key_figures

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def facts():
    return load_facts(ROOT / "data" / "facts")


# ---------------------------------------------------------------- formulas


def test_kv_bytes_per_context_token_counts_only_full_attention_layers():
    # Qwen3.6-35B-A3B: 2 (K and V) x 10 full layers x 2 KV heads x 256 dims x 2 bytes = 20,480 B = 20 KiB
    assert rl.kv_bytes_per_context_token(10, 2, 256, 2) == 20_480
    # Qwen3.6-27B at FP8 KV: 2 x 16 x 4 x 256 x 1 = 32,768 B = 32 KiB (64 KiB at BF16)
    assert rl.kv_bytes_per_context_token(16, 4, 256, 1) == 32_768
    assert rl.kv_bytes_per_context_token(16, 4, 256, 2) == 65_536


def test_split_params_takes_an_untied_embedding_table_out_and_keeps_the_head():
    # 27B dense, vocab 248,320, hidden 5,120: one table = 248,320 x 5,120 = 1,271,398,400
    body, head = rl.split_params(27e9, 248_320, 5_120, tied=False)
    assert head == 1_271_398_400
    assert body == 27e9 - 2 * 1_271_398_400 == 24_457_203_200
    # tied: the table is the head, counted once
    body_tied, _ = rl.split_params(27e9, 248_320, 5_120, tied=True)
    assert body_tied == 27e9 - 1_271_398_400
    with pytest.raises(ValueError, match="do not cover the embedding and head"):
        rl.split_params(1e9, 248_320, 5_120, tied=False)


def test_mean_decode_context():
    # 512 tokens after a 4,096-token prompt: the k-th attends to 4,096 + k - 1; mean = 4,096 + 511 / 2
    assert rl.mean_decode_context(4096, 512) == 4351.5
    assert rl.mean_decode_context(0, 1) == 0


def test_decode_ceiling_h100_dense_27b_fp8_by_hand():
    # weights 24,457,203,200 x 1 B + head 1,271,398,400 x 2 B + KV 65,536 B x 4,351.5 tokens
    #   = 24,457,203,200 + 2,542,796,800 + 285,179,904 = 27,285,179,904 bytes per token
    # 3.35e12 B/s / 27,285,179,904 B = 122.777 t/s
    b = rl.DecodeBytes(24_457_203_200, 1.0, 1_271_398_400, 2.0, 65_536, 4351.5)
    assert b.total == 27_285_179_904
    assert rl.decode_ceiling_tps(3.35e12, b.total) == pytest.approx(122.777, abs=5e-4)


def test_mtp_multiplies_by_tokens_per_pass_and_tensor_parallel_by_devices():
    # 1e12 B/s over 4e9 B = 250 passes/s; 2.5 tokens per pass -> 625 t/s; on 2 devices -> 1,250 t/s
    assert rl.decode_ceiling_tps(1e12, 4e9) == 250
    assert rl.decode_ceiling_tps(1e12, 4e9, tokens_per_pass=2.5) == 625
    assert rl.decode_ceiling_tps(1e12, 4e9, devices=2, tokens_per_pass=2.5) == 1250
    with pytest.raises(ValueError):
        rl.decode_ceiling_tps(1e12, 0)


def test_prefill_ceiling_by_hand():
    # H100 FP8 1,979 TFLOPS / (2 x 25,728,601,600 matmul params) = 38,459.14 t/s
    assert rl.prefill_ceiling_tps(1979e12, 27e9 - 1_271_398_400) == pytest.approx(38_459.14, abs=0.01)
    # Strix Halo FP16 59.4 TFLOPS / (2 x 2,946,429,568) = 10,080.0 t/s; two devices double it
    assert rl.prefill_ceiling_tps(59.4e12, 3_454_988_928 - 508_559_360) == pytest.approx(10_080.0, abs=0.05)
    assert rl.prefill_ceiling_tps(1e12, 1e9, devices=2) == 1000
    with pytest.raises(ValueError):
        rl.prefill_ceiling_tps(0, 1e9)


def test_share_refuses_missing_values():
    assert rl.share(50, 200) == 0.25
    assert rl.share(None, 200) is None and rl.share(50, None) is None and rl.share(np.nan, 200) is None


# ---------------------------------------------------------------- with the facts registry


def test_decode_bytes_from_the_registry_match_the_hand_computation(facts):
    b = decode_bytes(facts, "qwen3.6-27b", "fp8", "bf16", 4351.5)
    assert (b.body_params, b.head_params, b.kv_bytes_per_context_token) == (24_457_203_200, 1_271_398_400, 65_536)
    assert b.total == 27_285_179_904
    # 35B-A3B at Q8_0 with f16 KV and no context: (3,454,988,928 - 2 x 508,559,360) x 1.0625 + 508,559,360 x 1.0625
    b = decode_bytes(facts, "qwen3.6-35b-a3b", "q8_0", "f16", 0)
    assert b.total == pytest.approx((3_454_988_928 - 508_559_360) * 1.0625)


def kf(**rows) -> pd.DataFrame:
    base = dict(study="s", platform="", config="", model="", quantisation="", single_stream_decode_tps=np.nan,
                acceptance_length=np.nan, ttft_s=np.nan, ttft_input_tokens=np.nan, best_aggregate_tps=np.nan,
                best_aggregate_concurrency=np.nan, cost_per_m=np.nan, currency="", power_w=np.nan, power_kind="",
                anchor="a")
    return conform_key_figures(pd.DataFrame([{**base, "config": k, **v} for k, v in rows.items()]), "s")


def test_limits_mtp_with_and_without_acceptance_length_and_tensor_parallel(facts):
    common = dict(platform="H100", model="Qwen3.6-35B-A3B", quantisation="FP8", kv_dtype="fp8",
                  decode_context_tokens=0.0, single_stream_decode_tps=300.0, prefill_tps=33_583.0)
    frame = kf(mtp=dict(common, speculative="MTP", acceptance_length=2.5),
               mtp_unknown=dict(common, speculative="MTP"),
               plain=dict(common),
               tp2=dict(common, accelerators=2),
               nowhere=dict(common, platform="TPU v5e"))
    lim = limits(facts, frame).set_index("config")
    # bytes: (3,454,988,928 - 2 x 508,559,360) x 1 + 508,559,360 x 2 = 3,454,988,928 B; KV at context 0 = 0
    # plain ceiling = 3.35e12 / 3,454,988,928 = 969.61 t/s
    plain = 3.35e12 / 3_454_988_928
    assert lim.loc["plain", "decode_ceiling_tps"] == pytest.approx(plain)
    assert lim.loc["plain", "pct_decode_ceiling"] == pytest.approx(300 / plain)
    assert lim.loc["mtp", "decode_ceiling_mtp_tps"] == pytest.approx(2.5 * plain)
    assert lim.loc["mtp", "pct_decode_ceiling"] == pytest.approx(300 / (2.5 * plain))
    assert lim.loc["mtp", "plain_ratio"] == pytest.approx(300 / plain)
    assert pd.isna(lim.loc["mtp_unknown", "pct_decode_ceiling"])
    assert lim.loc["mtp_unknown", "mtp_status"].startswith("not derivable")
    assert lim.loc["mtp_unknown", "plain_ratio"] == pytest.approx(300 / plain)
    assert lim.loc["tp2", "decode_ceiling_tps"] == pytest.approx(2 * plain)
    # prefill: 1,979e12 / (2 x (3,454,988,928 - 508,559,360)) = 335,830.19 t/s
    assert lim.loc["plain", "prefill_ceiling_tps"] == pytest.approx(335_830.19, abs=0.01)
    assert lim.loc["plain", "pct_prefill_ceiling"] == pytest.approx(33_583 / 335_830.19, rel=1e-6)
    assert lim.loc["nowhere", "issues"] == "no facts entry for platform 'TPU v5e'"
    assert pd.isna(lim.loc["nowhere", "decode_ceiling_tps"])


def test_unknown_kv_type_leaves_kv_out_and_says_so(facts):
    lim = limits(facts, kf(x=dict(platform="H100", model="Qwen3.6-27B", quantisation="FP8", kv_dtype="q4_k",
                                  decode_context_tokens=4351.5, single_stream_decode_tps=78.0)))
    row = lim.iloc[0]
    assert row["gb_kv"] == 0 and "KV type 'q4_k' unknown" in row["issues"]
    assert row["decode_ceiling_tps"] == pytest.approx(3.35e12 / (24_457_203_200 + 2_542_796_800))


def test_prefill_uses_the_first_compute_type_the_platform_lists(facts):
    # FP8 weights on an RTX 3090 (no FP8 peak recorded): fall back to FP16, 142 TFLOPS
    lim = limits(facts, kf(x=dict(platform="RTX 3090", model="Qwen3.6-35B-A3B", quantisation="FP8",
                                  kv_dtype="fp8", decode_context_tokens=0.0, prefill_tps=1000.0)))
    assert lim.iloc[0]["prefill_dtype"] == "fp16" and lim.iloc[0]["prefill_peak_tflops"] == 142
    # GB10: only an assumed dense FP8 peak (250 TFLOPS) exists, and it is flagged
    lim = limits(facts, kf(x=dict(platform="GB10", model="Qwen3.6-35B-A3B", quantisation="FP8",
                                  kv_dtype="fp8", decode_context_tokens=0.0, prefill_tps=1000.0)))
    assert lim.iloc[0]["prefill_peak_tflops"] == 250 and lim.iloc[0]["prefill_peak_assumed"] == True  # noqa: E712


def test_strix_bandwidth_sensitivity_uses_all_three_figures(facts):
    lim = limits(facts, kf(x=dict(platform="Strix Halo", model="Qwen3.6-35B-A3B", quantisation="Q8_0",
                                  kv_dtype="f16", decode_context_tokens=0.0, single_stream_decode_tps=54.0)))
    s = bandwidth_sensitivity(facts, lim, "ryzen-ai-max-395").set_index("bandwidth")
    bytes_ = (3_454_988_928 - 508_559_360) * 1.0625  # weights and head, both Q8_0
    for path, gbs in (("memory_bandwidth", 256), ("memory_bandwidth_measured", 213.5),
                      ("memory_bandwidth_as_written", 225)):
        assert s.loc[path, "ceiling_tps"] == pytest.approx(gbs * 1e9 / bytes_)
        assert s.loc[path, "pct"] == pytest.approx(54.0 / (gbs * 1e9 / bytes_))

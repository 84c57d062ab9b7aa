"""Physical limits: how fast decode and prefill could go on a platform, at best.

Single-stream decode is bound by memory bandwidth: every generated token (every forward
pass) reads the weights it uses and the KV cache of the context, so

    decode ceiling (t/s) = devices x bandwidth / bytes read per forward pass x tokens per pass

Prefill is bound by compute: a forward pass over n prompt tokens costs about
2 x (matmul parameters) x n floating-point operations, so

    prefill ceiling (t/s) = devices x dense peak (FLOP/s) / (2 x matmul parameters)

Both are upper bounds: they leave out activations, the linear-attention state, attention
FLOPs, kernel launch and communication time. Measured rates are shown as a share of them.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
TFLOPS = 1e12


@dataclass(frozen=True)
class DecodeBytes:
    """Bytes one forward pass of one sequence reads, by part."""

    body_params: float  # weights read per token, apart from the output head
    body_bytes_per_weight: float
    head_params: float  # vocab x hidden
    head_bytes_per_weight: float
    kv_bytes_per_context_token: float  # over the full-attention layers
    context_tokens: float

    @property
    def weights(self) -> float:
        return self.body_params * self.body_bytes_per_weight

    @property
    def head(self) -> float:
        return self.head_params * self.head_bytes_per_weight

    @property
    def kv(self) -> float:
        return self.kv_bytes_per_context_token * self.context_tokens

    @property
    def total(self) -> float:
        return self.weights + self.head + self.kv


def kv_bytes_per_context_token(full_attention_layers: int, kv_heads: int, head_dim: int,
                               bytes_per_element: float) -> float:
    """K and V of one context token in every full-attention layer.

    Linear-attention (Gated DeltaNet) layers keep a fixed-size state instead, whatever the
    context length, and are not counted here.
    """
    return 2.0 * full_attention_layers * kv_heads * head_dim * bytes_per_element


def split_params(active_params: float, vocab: int, hidden: int, tied: bool) -> tuple[float, float]:
    """(body, head) parameters read per token, from an active count that includes both tables.

    The output head (vocab x hidden) is a full matrix-vector product every token. The input
    embedding is a lookup of one row, so an untied embedding table is taken out of the count;
    a tied one is the head itself and is counted once.
    """
    head = float(vocab) * hidden
    embedding = 0.0 if tied else head
    body = active_params - head - embedding
    if body <= 0:
        raise ValueError(f"active parameters {active_params:.3g} do not cover the embedding and head "
                         f"tables ({head + embedding:.3g}); check the model's facts")
    return body, head


def mean_decode_context(input_tokens: float, output_tokens: float) -> float:
    """Mean context over a decode of `output_tokens`: the k-th token attends to input + k - 1."""
    return float(input_tokens) + (float(output_tokens) - 1.0) / 2.0


def decode_ceiling_tps(bandwidth_bytes_per_s: float, bytes_per_pass: float, devices: int = 1,
                       tokens_per_pass: float = 1.0) -> float:
    """Upper bound on single-stream decode t/s.

    `devices` split the bytes evenly (tensor parallel): their bandwidths add, with the
    slowest device setting the pace, so pass the smallest device bandwidth.
    `tokens_per_pass` is 1 without speculative decoding; with MTP it is the mean acceptance
    length (1 + accepted draft tokens per verification step), on the assumption that a
    verification pass reads the weights once for all its positions and the draft passes
    cost nothing: an optimistic, and therefore still an upper, bound.
    """
    if bytes_per_pass <= 0 or bandwidth_bytes_per_s <= 0:
        raise ValueError("bandwidth and bytes per pass must be positive")
    return devices * bandwidth_bytes_per_s / bytes_per_pass * tokens_per_pass


def prefill_ceiling_tps(peak_flops: float, matmul_params: float, devices: int = 1) -> float:
    """Upper bound on prefill t/s: dense peak / (2 x matmul parameters per token)."""
    if peak_flops <= 0 or matmul_params <= 0:
        raise ValueError("peak and parameters must be positive")
    return devices * peak_flops / (2.0 * matmul_params)


def share(measured: float | None, ceiling: float | None) -> float | None:
    """measured / ceiling, or None when either is missing."""
    if measured is None or ceiling is None or ceiling != ceiling or measured != measured or ceiling <= 0:
        return None
    return measured / ceiling

"""Write a vLLM 0.20 `vllm serve` start-up log and an `nvidia-smi --query-gpu` CSV.

(Used by `dense_sparse.py`; the GB10 study's log writer is `gb10_log.py`.)

The log follows docs/formats.md section 2: `(Process pid=N) LEVEL MM-DD HH:MM:SS [file:line] msg`,
the EngineCore's "GPU KV cache size" / "Maximum concurrency" lines with thousands
separators, the workers' "Available KV cache memory" and "Graph capturing finished" lines,
then uvicorn's start-up lines. The nvidia-smi CSV follows section 5 (`, `-joined header with
units, one row per GPU per sample, values with units).

Hybrid (Gated DeltaNet + attention) models: vLLM sets the attention block size so that one
attention page is at least one linear-attention state page, pools every group's blocks,
and prints the token count as blocks / groups x block size. The KV memory printed here is
the memory those blocks take (blocks x page x layers per group), so the log keeps vLLM's
own arithmetic, including its disagreement with the printed concurrency.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

GIB = 1 << 30


@dataclass
class Layout:
    """What the KV arithmetic needs per model (values from architecture.yml)."""

    full_attention_layers: int
    kv_heads: int
    head_dim: int
    linear_key_heads: int
    linear_value_heads: int
    linear_key_head_dim: int
    linear_value_head_dim: int
    conv_kernel: int
    kv_bytes: int
    state_bytes: int
    tp: int
    kernel_block: int = 16

    @property
    def attn_bytes_per_token_layer(self) -> int:
        """K and V of one token in one full-attention layer, on one GPU."""
        return 2 * (self.kv_heads // self.tp) * self.head_dim * self.kv_bytes

    @property
    def mamba_page(self) -> int:
        """One linear-attention layer's recurrent + conv state of one sequence, on one GPU."""
        ssm = (self.linear_value_heads // self.tp) * self.linear_key_head_dim * self.linear_value_head_dim
        conv_dim = (2 * self.linear_key_heads * self.linear_key_head_dim
                    + self.linear_value_heads * self.linear_value_head_dim) // self.tp
        return (ssm + conv_dim * (self.conv_kernel - 1)) * self.state_bytes

    @property
    def block_size(self) -> int:
        """Attention block size (tokens) that makes one attention page >= one state page."""
        per = self.kernel_block * self.attn_bytes_per_token_layer
        return self.kernel_block * math.ceil(self.mamba_page / per)

    @property
    def page(self) -> int:
        return self.block_size * self.attn_bytes_per_token_layer

    @property
    def padding_pct(self) -> float:
        return (self.page - self.mamba_page) / self.mamba_page * 100


def kv_memory_gib(layout: Layout, kv_tokens: int, groups: int, extra_blocks: int) -> tuple[int, float]:
    """(blocks, GiB per GPU) behind a printed token count: blocks = groups x tokens / block."""
    if kv_tokens % layout.block_size:
        raise ValueError(f"{kv_tokens} KV tokens is not a whole number of {layout.block_size}-token blocks")
    blocks = groups * (kv_tokens // layout.block_size) + extra_blocks
    return blocks, blocks * layout.page * layout.full_attention_layers / GIB


@dataclass
class Boot:
    """Everything one start-up log says; times in seconds, memory in GiB."""

    start: datetime
    pids: tuple[int, int, int, int]  # APIServer, EngineCore, Worker_TP0, Worker_TP1
    version: str
    model_path: str
    served_name: str
    port: int
    args: str  # the non-default args dict as vLLM prints it
    architecture: str
    dtype: str
    quantization: str
    kv_cache_dtype: str
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    padding_pct: float
    speculative: str | None  # e.g. "SpeculativeConfig(method='mtp', ..., num_spec_tokens=3)"
    weights_load_s: tuple[float, float]
    model_load: tuple[tuple[float, float], tuple[float, float]]  # (GiB, s) per worker
    dynamo_s: float
    compile_s: float
    kv_gib: float
    kv_tokens: int
    max_concurrency: float
    graph_s: int
    graph_gib: float
    client: str


def _line(t: datetime, proc: str, pid: int, level: str, where: str, msg: str) -> str:
    return f"({proc} pid={pid}) {level} {t.strftime('%m-%d %H:%M:%S')} [{where}] {msg}\n"


class _Log:
    """The lines of one process group, each stamped at seconds after the start."""

    def __init__(self, b: Boot):
        self.b, self.out = b, []
        self.api, self.core, *self.workers = b.pids

    def _at(self, seconds: float) -> datetime:
        return self.b.start + timedelta(seconds=seconds)

    def A(self, s, where, msg, level="INFO"):  # the API server, as vLLM tags it
        self.out.append(_line(self._at(s), "APIServer", self.api, level, where, msg))

    def E(self, s, where, msg, level="INFO"):  # the engine core
        self.out.append(_line(self._at(s), "EngineCore_DP0", self.core, level, where, msg))

    def W(self, s, rank, where, msg, level="INFO"):  # a tensor-parallel worker
        self.out.append(_line(self._at(s), f"Worker_TP{rank}", self.workers[rank], level, where, msg))


def boot_log(b: Boot) -> str:
    """The start-up log of one `vllm serve` process group (TP=2), up to the first request."""
    log = _Log(b)
    _boot_config(log, b)
    _boot_engine(log, b)
    t_c = _boot_weights(log, b)
    t_kv = _boot_compile(log, b, t_c)
    t_init = _boot_kv_and_graphs(log, b, t_kv)
    _boot_serving(log, b, t_init + 1.1)
    return "".join(log.out)


def _boot_config(log: _Log, b: Boot) -> None:
    """The API server's reading of the arguments and the model config."""
    A = log.A
    A(0.0, "api_server.py:1885", f"vLLM API server version {b.version}")
    A(0.1, "utils.py:299", f"non-default args: {b.args}")
    A(7.9, "model.py:548", f"Resolved architecture: {b.architecture}")
    if b.dtype == "float16":
        A(7.9, "model.py:1841", "Casting torch.bfloat16 to torch.float16.", "WARNING")
    A(7.9, "model.py:1602", f"Using max model len {b.max_model_len}")
    A(8.4, "cache.py:214", f"Using {b.kv_cache_dtype} data type to store kv cache. It reduces the GPU memory "
      "footprint and boosts the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.")
    A(8.5, "scheduler.py:226", f"Chunked prefill is enabled with max_num_batched_tokens={b.max_num_batched_tokens}.")
    A(8.5, "config.py:468", f"Setting attention block size to {b.block_size} tokens to ensure that attention "
      "page size is >= mamba page size.")
    if b.padding_pct > 0.005:
        A(8.5, "config.py:492", f"Padding mamba page size by {b.padding_pct:.2f}% to ensure that mamba page size "
          "and attention page size are exactly equal.")


def _boot_engine(log: _Log, b: Boot) -> None:
    """The engine's config line and the parallel layout."""
    spec = f"speculative_config={b.speculative}, " if b.speculative else "speculative_config=None, "
    log.E(19.3, "core.py:97", (
        f"Initializing a V1 LLM engine (v{b.version}) with config: model='{b.model_path}', {spec}"
        f"tokenizer='{b.model_path}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
        f"trust_remote_code=True, dtype=torch.{b.dtype}, max_seq_len={b.max_model_len}, download_dir=None, "
        "load_format=auto, tensor_parallel_size=2, pipeline_parallel_size=1, data_parallel_size=1, "
        f"disable_custom_all_reduce=True, quantization={b.quantization}, enforce_eager=False, "
        f"kv_cache_dtype={b.kv_cache_dtype}, device_config=cuda, served_model_name={b.served_name}, "
        "enable_prefix_caching=True, enable_chunked_prefill=True"))
    log.E(19.4, "multiproc_executor.py:127", "DP group leader: node_rank=0, node_rank_within_dp=0, "
          "master_addr=127.0.0.1, mq_connect_ip=127.0.0.1 (local), world_size=2, local_world_size=2")
    for rank in (0, 1):
        log.W(31.2 + 0.01 * rank, rank, "parallel_state.py:1411", f"rank {rank} in world size 2 is assigned as "
              f"DP rank 0, PP rank 0, PCP rank 0, TP rank {rank}, EP rank {rank}")


def _boot_weights(log: _Log, b: Boot) -> float:
    """Loading the weights (and the drafter); returns when compiling starts."""
    W = log.W
    for rank in (0, 1):
        W(31.9 + 0.02 * rank, rank, "gpu_model_runner.py:3442", f"Starting to load model {b.model_path}...")
    W(32.4, 0, "cuda.py:411", "Using FLASHINFER attention backend out of potential backends: "
      "['FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION']")
    t_load = 32.4
    for rank in (0, 1):
        W(t_load + b.weights_load_s[rank], rank, "default_loader.py:291",
          f"Loading weights took {b.weights_load_s[rank]:.2f} seconds")
    if b.speculative:
        W(t_load + b.weights_load_s[0] + 0.3, 0, "gpu_model_runner.py:3471", "Loading drafter model...")
    for rank in (0, 1):
        gib, secs = b.model_load[rank]
        W(32.0 + secs, rank, "gpu_model_runner.py:3524",
          f"Model loading took {gib:.2f} GiB memory and {secs:.6f} seconds")
    return 32.0 + max(s for _, s in b.model_load) + 1.1


def _boot_compile(log: _Log, b: Boot, t_c: float) -> float:
    """torch.compile; returns when the KV cache is sized."""
    W = log.W
    W(t_c, 0, "backends.py:631", "Using cache directory: /home/ai/.cache/vllm/torch_compile_cache/"
      f"{hash_str(b.model_path):010x}/rank_0_0/backbone for vLLM's torch.compile")
    W(t_c + b.dynamo_s, 0, "backends.py:647", f"Dynamo bytecode transform time: {b.dynamo_s:.2f} s")
    W(t_c + b.dynamo_s + b.compile_s, 0, "backends.py:251",
      f"Compiling a graph for compile range (1, {b.max_num_batched_tokens}) takes {b.compile_s:.2f} s")
    W(t_c + b.dynamo_s + b.compile_s + 0.1, 0, "monitor.py:34",
      f"torch.compile takes {b.dynamo_s + b.compile_s:.2f} s in total")
    return t_c + b.dynamo_s + b.compile_s + 6.8


def _boot_kv_and_graphs(log: _Log, b: Boot, t_kv: float) -> float:
    """KV cache size and CUDA graph capture; returns when the engine is initialised."""
    for rank in (0, 1):
        log.W(t_kv + 0.02 * rank, rank, "gpu_worker.py:359", f"Available KV cache memory: {b.kv_gib:.2f} GiB")
    log.E(t_kv + 0.4, "kv_cache_utils.py:1319", f"GPU KV cache size: {b.kv_tokens:,} tokens")
    log.E(t_kv + 0.4, "kv_cache_utils.py:1324",
          f"Maximum concurrency for {b.max_model_len:,} tokens per request: {b.max_concurrency:.2f}x")
    if b.speculative:
        log.W(t_kv + 0.9, 0, "compilation.py:1390", "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with "
              "spec-decode for attention backend FlashInferBackend (support: "
              "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE", "WARNING")
    for rank in (0, 1):
        log.W(t_kv + 1.2 + b.graph_s, rank, "gpu_model_runner.py:4420",
              f"Graph capturing finished in {b.graph_s:.0f} secs, took {b.graph_gib:.2f} GiB")
    t_init = t_kv + 1.2 + b.graph_s + 0.47
    init_s = t_init - (32.0 + max(s for _, s in b.model_load))  # profiling, compile, KV cache, capture
    log.E(t_init, "core.py:254", f"init engine (profile, create kv cache, warmup model) took {init_s:.2f} seconds")
    return t_init


def _boot_serving(log: _Log, b: Boot, t_up: float) -> None:
    """The API server's routes, start-up and the client's first health checks."""
    A, api = log.A, log.api
    A(t_up, "api_server.py:1634", "Supported_tasks: ['generate']")
    A(t_up + 0.2, "api_server.py:1957", f"Starting vLLM API server 0 on http://0.0.0.0:{b.port}")
    A(t_up + 0.2, "launcher.py:46", "Available routes are:")
    for route, methods in (("/openapi.json", "GET, HEAD"), ("/docs", "GET, HEAD"), ("/health", "GET"),
                           ("/tokenize", "POST"), ("/v1/models", "GET"), ("/version", "GET"),
                           ("/v1/chat/completions", "POST"), ("/v1/completions", "POST"), ("/metrics", "GET")):
        A(t_up + 0.2, "launcher.py:54", f"Route: {route}, Methods: {methods}")
    for msg in (f"Started server process [{api}]", "Waiting for application startup.", "Application startup complete."):
        log.out.append(f"(APIServer pid={api}) INFO:     {msg}\n")
    log.out.append(f'(APIServer pid={api}) INFO:     {b.client} - "GET /health HTTP/1.1" 200 OK\n')
    log.out.append(f'(APIServer pid={api}) INFO:     {b.client} - "GET /v1/models HTTP/1.1" 200 OK\n')


def hash_str(text: str) -> int:
    """A stable 40-bit hash (Python's str hash changes between processes)."""
    return zlib.crc32(text.encode()) * 256 + (zlib.adler32(text.encode()) & 0xFF)


SMI_HEADER = ("index, timestamp, name, memory.used [MiB], memory.total [MiB], power.draw [W], "
              "utilization.gpu [%], temperature.gpu")


def smi_csv(rows: list[tuple]) -> str:
    """`nvidia-smi -i 2,3 --query-gpu=index,timestamp,name,memory.used,memory.total,power.draw,
    utilization.gpu,temperature.gpu --format=csv -l 1` output: rows are
    (index, datetime, name, used MiB, total MiB, watts, util %, temp C)."""
    out = [SMI_HEADER + "\n"]
    for idx, t, name, used, total, watts, util, temp in rows:
        stamp = t.strftime("%Y/%m/%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        out.append(f"{idx}, {stamp}, {name}, {used} MiB, {total} MiB, {watts:.2f} W, {util} %, {temp}\n")
    return "".join(out)

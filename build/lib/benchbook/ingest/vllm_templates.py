r"""The vLLM server-log templates the log reader knows: one entry per template.

An entry says what vLLM printed (the message's parts in order, each field with its type,
optional parts marked), which versions printed it and from which call sites (`file.py:N`
as the log header shows them). `vllm_log` derives everything else from this list: the
strict and the any-order regexes, the polars split point, the map from call site to
template, the rule that names each line's template (`log_format`), the candidate phrases
of start-up lines and the schema's list of templates. Adding a template is one entry here
and a test in tests/test_ingest_vllm_log.py.

The formats themselves, with the vLLM source lines they come from: docs/formats.md.
(This module imports nothing from benchbook: the schema in tables.py lists its templates.)

A part is a bytes regex in which `{name:type}` stands for a field (TYPES below); a part
written `[...]` is optional. Templates of one family share one regex (the union of their
parts, in vLLM's order); a line's template is the first of its family, in list order,
that admits the fields the line printed, or the template of its call site when that one
comes later in the family (families marked `by_site`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

NUMBER = rb"-?(?:\d+(?:\.\d*)?|nan|inf)"  # as %d, %.1f, %.2f print, nan and inf included

# field type -> (regex, kept as text)
TYPES: dict[str, tuple[bytes, bool]] = {
    "int": (rb"\d+", False),
    "num": (NUMBER, False),
    "pct": (NUMBER, False),  # a percent as printed; the tables keep the fraction
    "word": (rb"\w+", True),
    "digits": (rb"\d+", True),  # an index kept as printed, e.g. engine '000'
    "numlist": (NUMBER + rb"(?:, " + NUMBER + rb")*", True),
}
_FIELD = re.compile(rb"\{(\w+):(\w+)\}")


@dataclass(frozen=True)
class Part:
    text: bytes  # with {name:type} fields
    optional: bool = False

    @property
    def fields(self) -> list[tuple[str, str]]:
        return [(m[1].decode(), m[2].decode()) for m in _FIELD.finditer(self.text)]

    @property
    def regex(self) -> bytes:
        return _FIELD.sub(lambda m: b"(?P<%s>%s)" % (m[1], TYPES[m[2].decode()][0]), self.text)


def parts(*texts: bytes) -> tuple[Part, ...]:
    """Parts from their texts; `[...]` marks an optional one."""
    return tuple(Part(t[1:-1], True) if t.startswith(b"[") and t.endswith(b"]") else Part(t) for t in texts)


@dataclass(frozen=True)
class Template:
    """One message template of a periodic line (stats, SpecDecoding, V0's prefix line)."""

    name: str  # the `log_format` value it gives
    family: str  # templates matched by one regex: v1, v0, v0prefix, spec
    versions: str
    sites: tuple[str, ...]  # `file.py:N` call sites, as the header prints them
    parts: tuple[Part, ...]
    fixed: dict = field(default_factory=dict)  # field -> the only value this template prints
    lead: bytes = b""  # optional text before the first part
    end: bytes = b""  # text after the last part (blanks are always allowed)


@dataclass(frozen=True)
class Family:
    """How one family's regex is matched: `any_order` allows its optional parts in any
    order (the full-line fallback); `by_site` lets the call site name a later template."""

    name: str
    kind: str  # the candidate kind its lines are (vllm_log_scan.KINDS)
    any_order: bool = False
    by_site: bool = False


@dataclass(frozen=True)
class Boot:
    """A start-up line: `start` is how its message begins (bytes regex, after the header;
    None: a progress-bar line, found by its `phrase` anywhere, with or without a header),
    `pattern` is searched in the message, `facts` are (fact, group, unit; None = text)."""

    name: str
    versions: str
    sites: tuple[str, ...]
    start: bytes | None
    pattern: str
    facts: tuple[tuple[str, int, str | None], ...]
    phrase: bytes = b""


FAMILIES = (Family("v1", "stats", any_order=True, by_site=True), Family("v0", "stats"),
            Family("v0prefix", "v0prefix"), Family("spec", "spec"))

# ---------------------------------------------------------------- periodic lines

_V1_HEAD = (rb"(?:Engine {engine:digits}|{engines:digits} Engines Aggregated): "
            rb"Avg prompt throughput: {prompt_tps:num} tokens/s",
            rb"Avg generation throughput: {generation_tps:num} tokens/s",
            rb"Running: {running:int} reqs", rb"Waiting: {waiting:int} reqs")
_KV = rb"{device:word} KV cache usage: {kv_usage:pct}%"
_PREFIX = rb"Prefix cache hit rate: {prefix_hit_rate:pct}%"
_V1_012_TAIL = (rb"[Corrupted: {corrupted:int} reqs]",
                rb"[External prefix cache hit rate: {external_prefix_hit_rate:pct}%]",
                rb"[MM cache hit rate: {mm_hit_rate:pct}%]")
_GPU = {"device": "GPU"}

_SPEC_LEAD = rb"(?:Engine \d+: )?(?:SpecDecoding metrics: )?"
_RATE_FIRST = rb"Draft acceptance rate: {rate_first:pct}%"
_MEAN = rb"Mean acceptance length: {mean_acceptance_length:num}"
_TPS = rb"Accepted throughput: {accepted_tps:num} tokens/s, Drafted throughput: {drafted_tps:num} tokens/s"
_COUNTS = (rb"Accepted: {accepted_tokens:int} tokens", rb"Drafted: {draft_tokens:int} tokens",
           rb"Per-position acceptance rate: {per_position:numlist}")
_V0_PREFIX = rb"Prefix cache hit rate: GPU: {prefix_hit_rate:pct}%, CPU: {cpu_prefix_hit_rate:pct}%"

TEMPLATES = (
    # LoggingStatLogger.log, v1/metrics/loggers.py
    Template("v1-0.10", "v1", "0.10.1-0.11", ("loggers.py:123", "loggers.py:127"),
             parts(*_V1_HEAD, _KV, _PREFIX), fixed=_GPU),
    Template("v1-0.12", "v1", "0.12-0.19",
             ("loggers.py:236", "loggers.py:248", "loggers.py:257", "loggers.py:259"),
             parts(*_V1_HEAD, rb"[Preemptions: {preemptions:int}]", _KV, _PREFIX, *_V1_012_TAIL), fixed=_GPU),
    Template("v1-0.20", "v1", "0.20-0.22.1", ("loggers.py:271",),
             parts(*_V1_HEAD, rb"[Deferred: {deferred:int} reqs]", rb"[Preemptions: {preemptions:int}]", _KV,
                   _PREFIX, *_V1_012_TAIL), fixed=_GPU),
    Template("v1-0.33", "v1", "0.33", ("loggers.py:335",),
             parts(*_V1_HEAD, rb"[Deferred: {deferred:int} reqs]", rb"[Preemptions: {preemptions:int}]", _KV,
                   b"[" + _PREFIX + b"]", *_V1_012_TAIL,
                   rb"[KV fetch: {kv_fetch_waiting:int} waiting to start, {kv_fetch_in_progress:int} in "
                   rb"progress, {kv_fetch_completed:int} completed waiting]")),
    # V0's StatLogger (engine/metrics.py), `metrics.py:N]` without the `[`
    Template("v0", "v0", "V0 engine (before 0.11)", (),
             parts(rb"Avg prompt throughput: {prompt_tps:num} tokens/s",
                   rb"Avg generation throughput: {generation_tps:num} tokens/s", rb"Running: {running:int} reqs",
                   rb"Swapped: {swapped:int} reqs", rb"Pending: {waiting:int} reqs",
                   rb"GPU KV cache usage: {kv_usage:pct}%", rb"CPU KV cache usage: {cpu_kv_usage:pct}%",
                   b"[" + _V0_PREFIX + b"]"), end=rb"\.?"),
    Template("v0", "v0prefix", "V0 engine (its own line after the stats line)", (),
             parts(_V0_PREFIX), end=rb"\.?"),
    # SpecDecodingLogging.log, v1/spec_decode/metrics.py
    Template("v1-0.10", "spec", "0.10.1", ("metrics.py:87",),
             parts(_RATE_FIRST, _MEAN, *_COUNTS), lead=_SPEC_LEAD),
    Template("v1-pr24127", "spec", "vLLM PR #24127 (rate first, with throughputs)", (),
             parts(_RATE_FIRST, _MEAN, _TPS, *_COUNTS), lead=_SPEC_LEAD),
    Template("v1-0.11", "spec", "0.11-0.33",
             ("metrics.py:96", "metrics.py:100", "metrics.py:101", "metrics.py:120"),
             # (the throughputs are always printed; a line without them is read as this template too)
             parts(_MEAN, b"[" + _TPS + b"]", *_COUNTS, rb"Avg Draft acceptance rate: {rate_last:pct}%"),
             lead=_SPEC_LEAD),
)

# ---------------------------------------------------------------- start-up lines

_N = r"([\d.,]+)"
_V = "0.10.1-0.33"
# vLLM's fused-MoE config file name (fused_moe.py, get_config_file_name)
_MOE_FILE = r"E=(\d+),N=(\d+),device_name=([^,\s']+?)(?:,dtype=([^,\s']+?))?(?:,block_shape=\[[\d, ]*\])?\.json"
_MOE_FACTS = (("moe_experts", 2, "experts"), ("moe_intermediate_size", 3, "N"), ("moe_device_name", 4, None),
              ("moe_dtype", 5, None))
BOOT = (
    Boot("kv-cache-size", "0.10.1-0.33 (0.33: one line with the concurrency)",
         ("kv_cache_utils.py:1087", "kv_cache_utils.py:1708"), rb"\w+ KV cache size",
         r"\b\w+ KV cache size: ([\d,]+) tokens", (("kv_cache_tokens", 1, "tokens"),)),
    Boot("max-concurrency", _V, ("kv_cache_utils.py:1091", "kv_cache_utils.py:1709"), rb"Maximum concurrency for",
         r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.,]+)x",
         (("max_model_len", 1, "tokens"), ("max_concurrency", 2, "x"))),
    Boot("kv-cache-memory", _V, ("gpu_worker.py:298", "gpu_worker.py:440"), rb"Available KV cache memory",
         rf"Available KV cache memory: {_N} GiB", (("kv_cache_gib", 1, "GiB"),)),
    Boot("graph-capture", _V, ("gpu_model_runner.py:3480", "gpu_model_runner.py:6133"),
         rb"Graph capturing finished", rf"Graph capturing finished in {_N} secs?, took {_N} GiB",
         (("graph_capture_s", 1, "s"), ("graph_capture_gib", 2, "GiB"))),
    Boot("cudagraph-mode", _V, ("gpu_model_runner.py:3681", "compilation.py:1343", "compilation.py:1370",
                                "compilation.py:1390"), rb"CUDAGraphMode\.",
         r"CUDAGraphMode\.(\w+) is not supported with (.+?)(?: \(support: [^)]*\))?; setting cudagraph_mode=(\w+)",
         (("cudagraph_mode_from", 1, None), ("cudagraph_reason", 2, None), ("cudagraph_mode_to", 3, None))),
    Boot("weights-load", _V, ("default_loader.py:267", "default_loader.py:384"), rb"Loading weights took",
         rf"Loading weights took {_N} seconds", (("weights_load_s", 1, "s"),)),
    # vLLM divides by 2**30 in every version, so the old "GB" is GiB too.
    Boot("model-load", "V0 and V1", ("gpu_model_runner.py:2653", "gpu_model_runner.py:4879"),
         rb"Model loading took|Loading model weights took",
         rf"(?:Model loading|Loading model weights) took {_N} Gi?B(?: memory)?(?: and {_N} seconds)?",
         (("weights_gib", 1, "GiB"), ("model_load_s", 2, "s"))),
    Boot("server-version-model", "0.20+ with VLLM_DISABLE_LOG_LOGO", ("utils.py:299",),
         rb"vLLM (?:API )?server version", r"vLLM (?:API )?server version (\S+?),? (?:serving model (\S.*))?$",
         (("engine_version", 1, None), ("model", 2, None))),
    Boot("server-version", _V, ("api_server.py:1839",), rb"vLLM (?:API )?server version",
         r"vLLM (?:API )?server version (\S+)$", (("engine_version", 1, None),)),
    Boot("engine-config", _V, ("core.py:77", "core.py:109"), rb"Initializing an? (?:V1 )?LLM engine",
         r"Initializing an? (?:V1 )?LLM engine \(v?([^)\s]+)\) with config: (?:.*?\bmodel='([^']*)')?",
         (("engine_version", 1, None), ("model", 2, None))),
    Boot("architecture", _V, ("model.py:547", "model.py:555"), rb"Resolved architecture",
         r"Resolved architecture: (\S+)", (("architecture", 1, None),)),
    Boot("banner-version", "0.20+ (the logo)", ("utils.py:299",), rb"[ \x80-\xff]+(?:version|model) ",
         r"^[ \u2580-\u259f]+version (\S+)", (("engine_version", 1, None),)),
    Boot("banner-model", "0.20+ (the logo)", ("utils.py:299",), rb"[ \x80-\xff]+(?:version|model) ",
         r"^[ \u2580-\u259f]+model +(\S+)", (("model", 1, None),)),
    # the parallel layout: one line per worker (world size = all ranks; the TP size is the
    # number of distinct TP ranks)
    Boot("parallel-ranks", "0.10-0.33 (PCP rank from 0.12, EPLB rank from 0.20)",
         ("parallel_state.py:1208", "parallel_state.py:1715"), rb"rank \d+ in world size \d+ is assigned as",
         r"^rank (\d+) in world size (\d+) is assigned as DP rank (\d+), PP rank (\d+), (?:PCP rank \d+, )?"
         r"TP rank (\d+), EP rank (?:(\d+)|N/A)",
         (("global_rank", 1, "rank"), ("world_size", 2, "ranks"), ("dp_rank", 3, "rank"), ("pp_rank", 4, "rank"),
          ("tp_rank", 5, "rank"), ("ep_rank", 6, "rank"))),
    Boot("distributed-init", "0.12-0.33 (INFO from 0.20; DEBUG before)",
         ("parallel_state.py:1029", "parallel_state.py:1402"), rb"world_size=\d+ rank=\d+ local_rank=",
         r"^world_size=(\d+) rank=(\d+) local_rank=(\d+)",
         (("world_size", 1, "ranks"), ("global_rank", 2, "rank"), ("local_rank", 3, "rank"))),
    Boot("dp-group-leader", "0.12-0.33", ("multiproc_executor.py:139",), rb"DP group leader: ",
         r"DP group leader: .*\bworld_size=(\d+), local_world_size=(\d+)",
         (("world_size", 1, "ranks"), ("local_world_size", 2, "ranks"))),
    # the fused-MoE kernel's tuned config file, E experts and intermediate size N per GPU
    Boot("moe-config", "0.10-0.33", ("fused_moe.py:788", "fused_moe.py:1078"), rb"Using configuration from \S*E=\d",
         r"Using configuration from (?:\S*/)?(" + _MOE_FILE + r") for MoE layer",
         (("moe_config_file", 1, None), *_MOE_FACTS)),
    Boot("moe-config-missing", "0.10-0.33 (WARNING)", ("fused_moe.py:798", "fused_moe.py:1091"),
         rb"Using default MoE config",
         r"Using default MoE config\. Performance might be sub-optimal! Config file not found at \[?'?(?:[^\s']*/)?("
         + _MOE_FILE + r")", (("moe_config_missing", 1, None), *_MOE_FACTS)),
    # tqdm progress bars on stderr: the process tag or nothing before them, no header
    Boot("checkpoint-shards", "0.10-0.33 (progress bar)", ("weight_utils.py:569", "weight_utils.py:890"), None,
         r"(?:Multi-thread l|L)oading (?:safetensors|pt|np_cache) checkpoint shards(?: \(eager\))?: "
         r"100% Completed \| (\d+)/\1 ", (("checkpoint_shards", 1, "shards"),), phrase=b"100% Completed | "),
    Boot("cuda-graphs-piecewise", "0.11-0.33 (progress bar)", ("gpu_model_runner.py:3496", "gpu_model_runner.py:6195"),
         None, r"Capturing CUDA graphs \([^(),]+, PIECEWISE\): +100%\|[^|\n]*\| (\d+)/\1 ",
         (("graphs_piecewise", 1, "graphs"),), phrase=b"Capturing CUDA graphs ("),
    Boot("cuda-graphs-full", "0.11-0.33 (progress bar)", ("gpu_model_runner.py:3496", "gpu_model_runner.py:6195"),
         None, r"Capturing CUDA graphs \([^(),]+, FULL\): +100%\|[^|\n]*\| (\d+)/\1 ",
         (("graphs_full", 1, "graphs"),), phrase=b"Capturing CUDA graphs ("),
)


# ---------------------------------------------------------------- derived


def family(name: str) -> list[Template]:
    return [t for t in TEMPLATES if t.family == name]


def family_of(name: str) -> Family:
    return next(f for f in FAMILIES if f.name == name)


def union(templates: list[Template]) -> list[Part]:
    """The family's parts in vLLM's order; a part is optional unless every template prints it."""
    order: list[bytes] = []
    for t in templates:
        pos = -1
        for p in t.parts:
            if p.text in order:
                i = order.index(p.text)
                assert i > pos, f"{t.name}: part {p.text!r} out of the family's order"
                pos = i
            else:
                pos += 1
                order.insert(pos, p.text)
    required = {p.text for p in templates[0].parts if not p.optional}
    for t in templates[1:]:
        required &= {p.text for p in t.parts if not p.optional}
    return [Part(text, text not in required) for text in order]


def message_regex(name: str, any_order: bool = False) -> bytes:
    """The family's message from its start to the line's end (without trailing blanks):
    the strict form (parts in vLLM's order), or optional parts in any order between the
    required ones."""
    templates = family(name)
    out, run, seen_required = [templates[0].lead], [], False
    for p in union(templates):
        if p.optional and any_order and seen_required:
            run.append(p.regex)
            continue
        if run:
            out.append(rb"(?:, (?:%s))*" % b"|".join(run))
            run = []
        if not p.optional:
            out.append((b", " if seen_required else b"") + p.regex)
            seen_required = True
        else:
            out.append(rb"(?:, %s)?" % p.regex if seen_required else rb"(?:%s, )?" % p.regex)
    if run:
        out.append(rb"(?:, (?:%s))*" % b"|".join(run))
    return b"".join(out) + templates[0].end


def head_length(name: str) -> int:
    """Bytes of the strict regex up to its first optional part (where polars splits it)."""
    templates = family(name)
    head = []
    for p in union(templates):
        if p.optional:
            break
        head.append(p.regex)
    return len(templates[0].lead) + len(b", ".join(head))


def text_fields() -> set[str]:
    return {f for t in TEMPLATES for p in t.parts for f, kind in p.fields if TYPES[kind][1]}


def _fields(t: Template, required: bool | None = None) -> set[str]:
    return {f for p in t.parts if required is None or p.optional != required for f, _ in p.fields}


def _per_list(fn):
    """Cache a derivation of one family per template list (a test may extend the list)."""
    cached = functools.lru_cache(maxsize=64)(lambda name, _list_id: fn(name))

    @functools.wraps(fn)
    def wrapper(name: str):
        return cached(name, id(TEMPLATES))
    return wrapper


@_per_list
def discriminating(name: str) -> set[str]:
    """Fields whose presence tells a family's templates apart (not printed by every template)."""
    templates = family(name)
    if len(templates) < 2:
        return set()
    common = set.intersection(*(_fields(t, True) for t in templates))
    return set.union(*(_fields(t) for t in templates)) - common


def presence_fields() -> set[str]:
    """Discriminating fields that can print `nan`: their presence is recorded apart."""
    types = {f: k for t in TEMPLATES for p in t.parts for f, k in p.fields}
    return {f for fam in FAMILIES for f in discriminating(fam.name) if types[f] in ("num", "pct")}


@dataclass(frozen=True)
class Rule:
    """What one template admits: `required` and `allowed` discriminating fields, `fixed` values."""

    name: str
    required: frozenset
    allowed: frozenset
    fixed: dict


@_per_list
def rules(name: str) -> list[Rule]:
    """The family's templates in order, as admission rules over the discriminating fields."""
    disc = discriminating(name)
    return [Rule(t.name, frozenset(_fields(t, True) & disc), frozenset(_fields(t) & disc), t.fixed)
            for t in family(name)]


@_per_list
def site_map(name: str) -> dict[tuple[str, int], int]:
    """(file, line) of a call site -> index of its template in the family."""
    out = {}
    for i, t in enumerate(family(name)):
        for site in t.sites:
            file, _, line = site.rpartition(":")
            out[file, int(line)] = i
    return out


def formats(kind: str) -> list[str]:
    """The `log_format` values lines of one kind can get, in list order."""
    names = [t.name for f in FAMILIES if f.kind == kind for t in family(f.name)]
    return list(dict.fromkeys(names))


def boot_starts() -> bytes:
    """The alternation of the start-up lines' message starts (the anchor's boot kind)."""
    return b"|".join(dict.fromkeys(b.start for b in BOOT if b.start is not None))


def boot_phrases() -> list[bytes]:
    """Literal phrases of the start-up lines found anywhere (progress bars: no header)."""
    return list(dict.fromkeys(b.phrase for b in BOOT if b.start is None))


def fact_names() -> list[str]:
    """Every start-up fact a template gives, in list order."""
    return list(dict.fromkeys(fact for b in BOOT for fact, _, _ in b.facts))


def boot_facts() -> list[tuple[re.Pattern, tuple]]:
    return [(re.compile(b.pattern), b.facts) for b in BOOT]

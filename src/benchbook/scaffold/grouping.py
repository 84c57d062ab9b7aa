"""Which runs are one configuration: the grouping rules of `benchbook new`.

Runs are one configuration when they agree on every configuration fact both record
(model, weights, engine, build, decoding, platform) and on the settings that tell a
deployment apart. Printed spelling does not split them (`same_fact`); silence does not
merge what the files tell apart (bench results with and without spec_decode keys, a
llama-bench file that names no model), and a failed attempt lends no fact to the runs that
worked. What the content cannot tell apart but the names can is asked as a to-do
(`name_todos`, `spec_todos`). docs/runs.md describes the rules for users.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..book.key_figures import speculative
from ..study.contract import slug
from .infer import FileFacts


@dataclass
class Unit:
    """One run to describe: a whole file, or the n-th run of a multi-run file."""

    path: str  # relative to the data folder
    facts: FileFacts
    run: int | None = None  # 1-based position in a multi-run file
    context: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    distinct: dict = field(default_factory=dict)  # settings that tell this run's deployment apart
    todo: list = field(default_factory=list)
    kind: str | None = None
    config_id: str | None = None
    load: str | None = None  # the file's own load pattern (benchbook.ingest.load_pattern), bench runs only
    notes: list = field(default_factory=list)  # where facts not in the file itself came from


_GROUP_KEYS = ("model", "quantisation", "engine_version", "backend", "build", "speculative", "platform", "accelerators")


def configurations(units: list[Unit]) -> dict[str, dict]:
    """Group runs into configurations: runs that agree on every configuration fact both know
    (model, weights, engine, build, platform, speculative decoding, deployment) are one."""
    groups: list[dict] = []
    for u in units:
        for g in groups:
            if _compatible(g, u):
                g["units"].append(u)
                for k, v in u.config.items():
                    g["facts"].setdefault(k, v)
                break
        else:
            groups.append({"facts": dict(u.config), "distinct": dict(u.distinct), "units": [u]})
    configs: dict[str, dict] = {}
    for g in groups:
        ran = [u for u in g["units"] if not u.context.get("failed")]
        if ran and len(ran) < len(g["units"]):  # a failed attempt lends no fact to the runs that worked
            g["facts"] = {}
            for u in ran:
                for k, v in u.config.items():
                    g["facts"].setdefault(k, v)
        cid = _config_id(g, configs)
        configs[cid] = g
        for u in g["units"]:
            u.config_id = cid
    return configs


def stem(name: str) -> str:
    """A file name without the extensions raw files come with ('x_vllm0.20.1.log.gz' -> 'x_vllm0.20.1')."""
    for suffix in (".gz", ".log", ".jsonl", ".json", ".csv", ".md", ".txt", ".prom"):
        name = name.removesuffix(suffix)
    return name


def _compatible(group: dict, u: Unit) -> bool:
    if group["distinct"] != u.distinct or _llama_apart(group, u):
        return False
    facts = group["facts"]
    for k in _GROUP_KEYS:
        if not same_fact(k, facts.get(k), u.config.get(k)):
            return False
    if _bench(u) and any(_bench(x) and bool(x.config.get("speculative")) != bool(u.config.get("speculative"))
                         for x in group["units"]):
        return False  # see same_fact: bench results with and without spec_decode_* keys
    if u.config.get("model") is not None and facts.get("model") is not None:
        return True
    # a file that names no model joins files of other formats in its own folder (a server log
    # and the nvidia-smi log beside it), never another file of its own format
    folder = str(Path(u.path).parent)
    return all(str(Path(x.path).parent) == folder and x.facts.format != u.facts.format for x in group["units"])


# words a device name may carry or not for the same device (the ROCm and Vulkan backends
# print "Radeon 8060S Graphics" and "AMD Radeon 8060S Graphics" for one GPU)
_DEVICE_NOISE = re.compile(r"(?<!\w)(?:amd|nvidia|intel|graphics)(?:\((?:r|tm)\))?(?!\w)", re.IGNORECASE)


def _fact_key(key: str, value) -> str:
    """A configuration fact as grouping compares it: device names without vendor words,
    "Graphics", case and spacing; the value shown stays the file's own text."""
    text = str(value)
    if key in ("platform", "accelerators"):
        return re.sub(r" (?=[;,)])", "", " ".join(_DEVICE_NOISE.sub(" ", text).lower().split()))
    return text


def _is_llama(u: Unit) -> bool:
    return u.facts.format.startswith("llama-bench")


def _llama_apart(group: dict, u: Unit) -> bool:
    """A llama-bench file that names no model (a header-only file, a crash without its command
    line) is a configuration of its own: put with another llama-bench file it would take
    that file's model, which it does not record."""
    if not _is_llama(u) or not any(_is_llama(x) for x in group["units"]):
        return False
    return u.config.get("model") is None or any(_is_llama(x) and x.config.get("model") is None
                                                for x in group["units"])


# words of a file name that describe the test a file ran, not its setup: a prefill file and a
# generation file (pp512, tg128), depths (d4096, depth-4096), repeats (run2, _3) are one run set
_TEST_WORD = re.compile(r"(?:\d+k?|(?:pp|tg|pg|d|depth|ctx|run|rep)\d+k?|pp|tg|pg|d|depth|ctx|context|run|rep|"
                        r"prefill|prompt|gen|generation|decode|default|long|short|tests?)", re.IGNORECASE)
_SEGMENT_SEP = re.compile(r"[/_\s]+|(?<!\d)\.|\.(?!\d)")  # a dot between digits is a version's
_TOKEN_SEP = re.compile(r"[-+,=]+")


def _name_words(path: str) -> list[tuple[str, list[str]]]:
    """(segment, its setup words) of a path below raw/, without extensions and test words:
    'rocm-6.4.4/qwen_pp512.jsonl' -> [('rocm-6.4.4', ['rocm', '6.4.4']), ('qwen', ['qwen']), ('pp512', [])]."""
    name = stem(path.removeprefix("raw/")).lower()
    out = []
    for seg in filter(None, _SEGMENT_SEP.split(name)):
        words = [w for w in _TOKEN_SEP.split(seg) if w and not _TEST_WORD.fullmatch(w)]
        out.append((seg, words))
    return out


def name_todos(cid: str, group: dict) -> list[str]:
    """A to-do when llama-bench files of one configuration differ in their names by more than
    the test they ran ('...rocm-6.4.4...' and '...rocm-7.2.3...'): the content cannot tell the
    setups apart, so the user is asked whether the names mark different ones."""
    paths = list(dict.fromkeys(u.path for u in group["units"] if _is_llama(u)))
    words = {p: frozenset(w for _, ws in _name_words(p) for w in ws) for p in paths}
    classes = list(dict.fromkeys(words.values()))
    if len(classes) < 2:
        return []
    shared = frozenset.intersection(*classes)
    labels = []
    for own in classes:
        first = next(p for p in paths if words[p] == own)
        labels.append(" ".join(seg for seg, ws in _name_words(first) if (own - shared) & set(ws)) or "nothing more")
    shown = paths[:6] + ([f"{len(paths) - 6} more"] if len(paths) > 6 else [])
    files = ", ".join(shown[:-1]) + " and " + shown[-1]
    return [f"configs.{cid}: {files} record the same configuration facts but their names differ "
            f"({' / '.join(labels)}); if they are different setups, split them and set what differs "
            "(backend/build/notes)"]


def _bench(u: Unit) -> bool:
    return u.facts.format.startswith("vllm-bench")


def _norm(key: str, value) -> str:
    """A configuration fact as compared: case, spaces and separators do not tell setups
    apart ('FP8' / 'fp8'), nor vendor words in a device name (_fact_key); a speculative
    config of 'none' is no speculative decoding."""
    text = re.sub(r"[\s_\-]+", " ", _fact_key(key, value)).strip().lower()
    if key == "speculative" and text.startswith("none"):
        return ""
    return text


def same_fact(key: str, a, b) -> bool:
    """Two files' values of one configuration fact agree, or one of them does not say.

    (Speculative decoding is also split where one side is silent, but only between bench
    results, in `_compatible`: `vllm bench serve` writes spec_decode_* keys when the server
    speculates, so a bench JSON without them beside one with them is another setup.)"""
    if a is None or b is None:
        return True
    return _norm(key, a) == _norm(key, b)


def _config_id(group: dict, taken: dict) -> str:
    f = group["facts"]
    first = stem(Path(group["units"][0].path).name)
    parts = [str(f.get("model") or first).split("/")[-1].removesuffix(".gguf")]
    for k in ("backend", "engine_version"):
        if f.get(k) and str(f[k]).lower() not in ("none", ""):
            parts.append(str(f[k]).split(",")[0])
    if f.get("model") and speculative(f):
        parts.append("spec")
    parts += [str(v) for v in group["distinct"].values()]
    base = slug("-".join(parts)).replace("_", "-")[:60].strip("-") or "config"
    cid, n = base, 2
    while cid in taken:
        cid, n = f"{base}-{n}", n + 1
    return cid


def spec_todos(configs: dict) -> list[str]:
    """A configuration of bench results that record no speculative decoding, beside one of
    the same model that does: the split is right for a current client, so ask to confirm."""
    out = []
    for cid, g in configs.items():
        if g["facts"].get("speculative") or not all(_bench(u) for u in g["units"]):
            continue
        model = _norm("model", g["facts"].get("model"))
        spec = [c for c, h in configs.items() if c != cid and h["facts"].get("speculative")
                and _norm("model", h["facts"].get("model")) == model]
        if spec:
            out.append(f"configs.{cid}.speculative: its bench results record no spec_decode_* keys, while "
                       f"{', '.join(spec)} of the same model record speculative decoding, so they are kept "
                       "apart; set `speculative: none` to confirm (a bench client older than vLLM 0.14 "
                       "writes no such keys even when the server speculates: then merge them)")
    return out

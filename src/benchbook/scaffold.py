"""`benchbook new`: a data folder for a chapter, made from a user's raw files.

It copies the files into DIR/raw/ (keeping their folders relative to one another, which
pairs a server log with the nvidia-smi log beside it), reads what each file tells about
itself (benchbook.infer), groups the runs into configurations, gives each file its run
kind and each configuration its role by the chapter's contract (benchbook.registry), and
writes study.yml and SHA256SUMS. What it could not infer goes to the manifest's `todo`
list, which `benchbook validate` prints; nothing is guessed.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .chapters import speculative
from .contract import TODO, Contract, kind_for, slug
from .infer import FileFacts, describe
from .ingest import detect, readers
from .ingest.errors import IngestError
from .registry import ChapterSpec, get
from .study import MANIFEST, StudyError, write_checksums

# Configuration facts: the keys study.yml's configs take from the files.
CONFIG_KEYS = ("platform", "accelerators", "engine", "engine_version", "model", "quantisation",
               "speculative", "kv_dtype", "backend", "build", "serve_args")
# Run context: the keys a file entry takes.
CONTEXT_KEYS = ("concurrency", "request_rate", "input_len", "output_len", "dataset", "ignore_eos",
                "seed", "date", "power_limit_w", "failed")
# Settings of a bench run that are its workload, not its configuration.
RUN_SETTINGS = {"request_rate", "num_prompts", "max_concurrency", "burstiness", "seed", "date", "load",
                "input_len", "output_len", "backend", "model", "tokenizer_id", "model_id", "label"}
_MOE = re.compile(r"-A\d+(?:\.\d+)?B\b|\bMoE\b|mixtral|-\d+x\d+B", re.IGNORECASE)


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
    load: str | None = None  # the file's own load pattern (benchbook.load_pattern), bench runs only


class NewError(StudyError):
    """The folder cannot be made; `problems` says why."""


def new_study(chapter: str, out_dir, files, log=print) -> Path:
    """Make a data folder for `chapter` at `out_dir` from `files`; return its study.yml."""
    spec = _spec(chapter)
    out = Path(out_dir)
    sources, skipped = _gather(out, [Path(f) for f in files])
    rel = _relative_names(sources)
    (out / "raw").mkdir(parents=True, exist_ok=True)
    units, problems = [], []
    for src, name in zip(sources, rel):
        dest = out / "raw" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        os.chmod(dest, 0o444)  # raw data is read-only
        facts = describe(dest)
        if facts.problems:
            problems += [f"{src}: {p}" for p in facts.problems]
            continue
        units += _units(f"raw/{name}", facts)
    if problems:
        shutil.rmtree(out)
        raise NewError(problems)
    _pair_power_limits(units)
    _kinds(units, spec.contract)
    configs = _configs(units)
    roles = _roles(units, configs, spec.contract)
    doc = _manifest(spec, out, units, configs, roles)
    if skipped:
        doc["skipped"] = [{"path": str(p), "reason": why} for p, why in skipped]
    manifest = out / MANIFEST
    manifest.write_text(_dump(doc), encoding="utf-8")
    write_checksums(out)
    log(_summary(spec, out, units, configs, roles, doc["todo"], skipped))
    return manifest


def _spec(chapter: str) -> ChapterSpec:
    try:
        spec = get(chapter)
    except KeyError as exc:
        raise NewError([str(exc).strip("'\"")]) from None
    if spec.contract is None:
        raise NewError([f"chapter {chapter!r} reads other chapters' outputs, not raw files; "
                        "make a data folder for one of the chapters it reads"])
    return spec


def _gather(out: Path, given: list[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The raw files to describe: each file given, and every file under each folder given
    (sorted, hidden ones left out). A file no reader recognises is skipped with the reader's
    reason (a harness's own notes, a README), so one stray file never stops the folder; it
    is an error only when nothing is left."""
    problems = []
    if out.exists() and any(out.iterdir()):
        problems.append(f"{out}: exists and is not empty; give a new folder")
    if not given:
        problems.append("no raw files given")
    files: list[tuple[Path, str]] = []  # (file, its name as given: no one's home layout in study.yml)
    for s in given:
        if s.is_dir():
            found = sorted(p for p in s.rglob("*") if p.is_file()
                           and not any(part.startswith(".") for part in p.relative_to(s).parts))
            if not found:
                problems.append(f"{s}: is a folder with no files in it")
            files += [(p, f"{s.name}/{p.relative_to(s).as_posix()}") for p in found]
        elif s.is_file():
            files.append((s, s.name))
        else:
            problems.append(f"{s}: no such file")
    if problems:
        raise NewError(problems)
    kept, skipped = [], []
    for f, name in files:
        try:
            detect(f)
            kept.append(f)
        except IngestError as exc:
            why = exc.problem.split("; expected one of:")[0]  # the list of formats is printed once
            skipped.append((name, (f"{exc.where}: " if exc.where else "") + why))
    if not kept:
        raise NewError([f"{f}: skipped: {why}" for f, why in skipped] + ["no file of a known format given"])
    return kept, skipped


def _relative_names(sources: list[Path]) -> list[str]:
    """Each file's path below the deepest folder all of them share (their own layout). Files
    that share no folder below the home folder keep their names only (with their folder's
    name where two names clash), so no one's directory layout lands in the data folder."""
    resolved = [s.resolve() for s in sources]
    common = Path(os.path.commonpath([p.parent for p in resolved]))
    if common == Path(common.anchor) or common in (Path.home(), *Path.home().parents):
        names = [p.name for p in resolved]
        names = [f"{p.parent.name}/{p.name}" if names.count(p.name) > 1 else p.name for p in resolved]
    else:
        names = [p.relative_to(common).as_posix() for p in resolved]
    if len(set(names)) != len(names):
        raise NewError([f"two files would both be raw/{n}" for n in sorted({n for n in names if names.count(n) > 1})])
    return names


def _units(path: str, facts: FileFacts) -> list[Unit]:
    """The runs of one file: one unit, or one per run of a multi-run bench file."""
    base_ctx = {k: f.value for k, f in facts.context.items() if k in CONTEXT_KEYS}
    base_cfg = {k: f.value for k, f in facts.config.items() if k in CONFIG_KEYS}
    if not facts.runs or not facts.format.startswith("vllm-bench"):
        load = facts.settings.get("load")
        return [Unit(path, facts, None, base_ctx, base_cfg, {}, list(facts.todo), load=load and load.value)]
    single = len(facts.runs) == 1  # one run: the file is the unit (no per-run entry)
    settings = [{k: f.value for k, f in (run.get("settings") or {}).items()} for run in facts.runs]
    differ = {k for k in set().union(*settings) if k not in RUN_SETTINGS
              and len({repr(s.get(k)) for s in settings}) > 1}
    out = []
    for k, (run, st) in enumerate(zip(facts.runs, settings), 1):
        ctx = {**base_ctx, **{x: f.value for x, f in (run.get("context") or {}).items() if x in CONTEXT_KEYS}}
        if "request_rate" in st and ctx.get("concurrency") is None:
            ctx["request_rate"] = st["request_rate"]
        cfg = {**base_cfg, **{x: f.value for x, f in (run.get("config") or {}).items() if x in CONFIG_KEYS}}
        todo = [t for t in facts.todo if not t.startswith("concurrency:")] + list(run.get("todo") or [])
        out.append(Unit(path, facts, None if single else k, ctx, cfg,
                        {x: st[x] for x in sorted(differ) if x in st}, todo, load=st.get("load")))
    return out


def _pair_power_limits(units: list[Unit]) -> None:
    """A server log takes the power limit of the nvidia-smi log beside it."""
    limits = {str(Path(u.path).parent): u.context["power_limit_w"] for u in units
              if u.facts.format.startswith("nvidia-smi") and u.context.get("power_limit_w") is not None}
    for u in units:
        folder = str(Path(u.path).parent)
        if u.facts.format == "vllm-server-log" and u.context.get("power_limit_w") is None and folder in limits:
            u.context["power_limit_w"] = limits[folder]


def _kinds(units: list[Unit], contract: Contract) -> None:
    for u in units:
        kind = kind_for(contract, u.facts.format, u.context, u.load)
        if kind is None:
            known = ", ".join(k.name for k in contract.kinds
                              if any(u.facts.format.startswith(f) for f in k.formats) and k.takes(u.load))
            u.todo.append("kind: no kind of this chapter matches this run ("
                          + _describe_run(u) + "); "
                          + (f"choose one of: {known}" if known else "this chapter reads no file of this format"))
        else:
            u.kind = kind.name


def _describe_run(u: Unit) -> str:
    parts = [u.facts.format] + [f"{k} {u.context[k]}" for k in ("input_len", "output_len", "concurrency",
                                                               "request_rate") if u.context.get(k) is not None]
    return ", ".join(parts + ([f"load {u.load}"] if u.load else []))


_BUILD_KEYS = {"backend", "build", "engine_version", "serve_args"}
_GROUP_KEYS = ("model", "quantisation", "engine_version", "backend", "build", "speculative", "platform", "accelerators")


def _configs(units: list[Unit]) -> dict[str, dict]:
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


def _stem(name: str) -> str:
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
    stem = _stem(path.removeprefix("raw/")).lower()
    out = []
    for seg in filter(None, _SEGMENT_SEP.split(stem)):
        words = [w for w in _TOKEN_SEP.split(seg) if w and not _TEST_WORD.fullmatch(w)]
        out.append((seg, words))
    return out


def _name_todos(cid: str, group: dict) -> list[str]:
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
    first = _stem(Path(group["units"][0].path).name)
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


_BY_ORDER = ("first", "second", "rest")


def _roles(units: list[Unit], configs: dict[str, dict], contract: Contract) -> dict[str, str]:
    """Each configuration's role by the contract's pick rules (see contract.Role.pick)."""
    picker = _RolePicker(configs)
    for _ in range(len(contract.roles) + 1):  # rules that refer to other roles wait for them
        for role in contract.roles:
            for rule in role.pick:
                if rule not in _BY_ORDER and picker.room(role):
                    picker.take(role, picker.matching(rule))
    picker.by_order(contract.roles)
    return picker.roles


class _RolePicker:
    """The roles given so far, and which free configurations each pick rule matches."""

    def __init__(self, configs: dict[str, dict]):
        self.configs = configs
        self.kinds = {cid: {u.kind for u in g["units"]} for cid, g in configs.items()}
        self.roles: dict[str, str] = {}

    def free(self) -> list[str]:
        return [c for c in self.configs if c not in self.roles]

    def room(self, role) -> bool:
        return role.max is None or sum(1 for r in self.roles.values() if r == role.name) < role.max

    def take(self, role, found) -> None:
        """Give the role to the found configurations still free, up to its maximum."""
        for cid in found:
            if cid in self.roles or not self.room(role):
                continue
            self.roles[cid] = role.name

    def model(self, cid) -> str:
        return str(self.configs[cid]["facts"].get("model") or "")

    def speculative(self, cid) -> bool:
        return bool(speculative(self.configs[cid]["facts"]))

    def matching(self, rule: str) -> list[str]:
        """The free configurations a rule by content picks; none for a rule it does not know."""
        if rule.startswith("kind:"):
            return [c for c in self.free() if rule[5:] in self.kinds[c]]
        if rule.startswith("model-of:"):
            other = [c for c, r in self.roles.items() if r == rule[9:]]
            return [c for c in self.free() if other and self.model(c) and self.model(c) == self.model(other[0])]
        tests = {
            "moe": lambda c: _MOE.search(self.model(c)),
            "dense": lambda c: self.model(c) and not _MOE.search(self.model(c)),
            "speculative": self.speculative,
            "plain": lambda c: not self.speculative(c),
        }
        test = tests.get(rule)
        return [c for c in self.free() if test(c)] if test else []

    def by_order(self, roles) -> None:
        """'first', 'second' and 'rest' among the configurations no rule by content picked."""
        order = self.free()
        for role in roles:
            for rule in role.pick:
                if rule == "first" and order:
                    self.take(role, order[:1])
                elif rule == "second" and len(order) > 1:
                    self.take(role, order[1:2])
                elif rule == "rest":
                    self.take(role, [c for c in order if c not in self.roles])


def _manifest(spec: ChapterSpec, out: Path, units: list[Unit], configs: dict, roles: dict) -> dict:
    todo: list[str] = []
    cfg_doc = {}
    for cid, g in configs.items():
        facts = {k: v for k, v in g["facts"].items() if v is not None}
        entry = {"role": roles.get(cid) or TODO}
        if cid not in roles:
            todo.append(f"configs.{cid}.role: no rule of this chapter picks it; set one of: "
                        + ", ".join(r.name for r in spec.contract.roles))
        entry.update(facts)
        entry.update({(k if k not in entry else f"deployment_{k}"): v for k, v in g["distinct"].items()})
        cfg_doc[cid] = entry
        known = set(facts)
        todo += _name_todos(cid, g)
        for t in dict.fromkeys(t for u in g["units"] for t in u.todo):
            key = t.split(":", 1)[0]
            if key in _BUILD_KEYS and all(u.facts.format.startswith("llama-bench") for u in g["units"]):
                continue  # several builds in one llama-bench file: the chapter tells them apart by row
            if key in CONFIG_KEYS and key not in known:
                todo.append(f"configs.{cid}.{t}")
    todo += _spec_todos(configs)
    files, names = [], set()
    needed = _needed(spec.contract)
    by_file: dict[str, list[Unit]] = {}
    for u in units:
        by_file.setdefault(u.path, []).append(u)
    gpu_only = {cid for cid, g in configs.items() if all(u.facts.format.startswith("nvidia-smi") for u in g["units"])}
    servers = [cid for cid in configs if cid not in gpu_only]
    for i, (path, us) in enumerate(by_file.items()):
        entry = {"path": path, "config": us[0].config_id}
        if us[0].config_id in gpu_only:
            todo.append(f"files[{i}].config: an nvidia-smi log alone in its configuration, so no server log is "
                        "read beside it; set the configuration of the server it was logged beside"
                        + (f" (one of: {', '.join(servers)})" if servers else ", and add that server's files"))
        if len(us) == 1 and us[0].run is None:
            entry.update(_run_fields(us[0], names))
            todo += [f"files[{i}].{t}" for t in us[0].todo if t.split(":", 1)[0] in needed(us[0])]
        else:
            entry["runs"] = []
            for k, u in enumerate(us):
                item = {"config": u.config_id, **_run_fields(u, names)}
                entry["runs"].append(item)
                todo += [f"files[{i}].runs[{k}].{t}" for t in u.todo if t.split(":", 1)[0] in needed(u)]
        files.append(entry)
    return {
        "study": spec.id,
        "title": _title(configs),
        "label": f"{out.name} (made by benchbook new from {len(by_file)} file{'s' if len(by_file) != 1 else ''})",
        "reconstructed": False,
        "description": "Raw files described by `benchbook new`: the configuration facts, run kinds and roles "
                       "below were read from the files or chosen by the chapter's rules; check them.",
        "configs": cfg_doc,
        "files": files,
        "todo": list(dict.fromkeys(todo)),
    }


def _spec_todos(configs: dict) -> list[str]:
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


def _needed(contract: Contract):
    """The run context keys worth a TODO for a run: those its kind needs, and its date."""
    def keys(u: Unit) -> set:
        kind = contract.kind(u.kind) if u.kind else None
        return {"kind", "date", *(kind.needs if kind else ())}
    return keys


def _run_fields(u: Unit, names: set) -> dict:
    out = {}
    if u.kind:
        out["kind"] = u.kind
    name = slug(f"{u.config_id}_{u.kind or 'run'}_" + "_".join(
        str(u.context[k]) for k in ("concurrency", "request_rate", "input_len", "power_limit_w")
        if u.context.get(k) is not None))
    base, n = name, 2
    while name in names:
        name, n = f"{base}_{n}", n + 1
    names.add(name)
    out["name"] = name
    out.update({k: _plain(u.context[k]) for k in CONTEXT_KEYS if u.context.get(k) is not None})
    return out


def _plain(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _title(configs: dict) -> str:
    models = list(dict.fromkeys(str(g["facts"].get("model") or "?").split("/")[-1] for g in configs.values()))
    platforms = list(dict.fromkeys(str(g["facts"]["platform"]) for g in configs.values() if g["facts"].get("platform")))
    title = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
    return title + (f" on {', '.join(platforms[:2])}" if platforms else "")


def _dump(doc: dict) -> str:
    head = ("# Made by `benchbook new`: every value was read from the raw files or chosen by the\n"
            "# chapter's rules. Check it, fill in the `todo` entries, then run `benchbook validate`.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def _summary(spec, out, units, configs, roles, todo, skipped=()) -> str:
    lines = [f"wrote {out / MANIFEST}: {len(units)} run(s) in {len(configs)} configuration(s) for chapter {spec.id}"]
    if skipped:
        lines.append(f"skipped {len(skipped)} file(s) no reader recognises (study.yml `skipped`; the formats "
                     f"read are: {', '.join(sorted(readers()))}):")
        lines += [f"  - {p}: {why}" for p, why in skipped]
    for cid, g in configs.items():
        kinds = ", ".join(sorted({u.kind or "?" for u in g["units"]}))
        lines.append(f"  {cid}: role {roles.get(cid, 'TODO')}; {len(g['units'])} run(s) ({kinds})")
    if todo:
        lines.append(f"{len(todo)} thing(s) the files do not say (study.yml `todo`):")
        lines += [f"  - {t}" for t in todo]
    lines += ["next:", f"  benchbook validate {out}", f"  benchbook run {spec.id} --data {out}",
              "  jupyter-book build book"]
    return "\n".join(lines)

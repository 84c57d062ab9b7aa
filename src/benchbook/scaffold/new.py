"""`benchbook new`: a data folder for a chapter, made from a user's raw files.

It copies the files into DIR/raw/ (keeping their folders relative to one another, which
pairs a server log with the nvidia-smi log beside it), reads what each file tells about
itself (benchbook.scaffold.infer), groups the runs into configurations, gives each file its run
kind and each configuration its role by the chapter's contract (benchbook.book.registry), and
writes study.yml and SHA256SUMS. What it could not infer goes to the manifest's `todo`
list, which `benchbook validate` prints; nothing is guessed.
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from ..book.key_figures import speculative
from ..book.paths import writeup_file
from ..book.registry import get
from ..book.spec import ChapterSpec
from ..ingest import detect, readers
from ..ingest import read as ingest_read
from ..ingest.errors import IngestError
from ..ledger.comparable import differences
from ..ledger.published import load_published
from ..study.contract import TODO, Contract, kind_for, slug
from ..study.folder import MANIFEST, StudyError, write_checksums
from .grouping import Unit, configurations, name_todos, same_fact, spec_todos
from .infer import FileFacts, describe

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
    _lend_harness_meta(units)
    _dates_from_the_runner(out, units)
    _kinds(units, spec.contract)
    configs = configurations(units)
    roles = _roles(units, configs, spec.contract, _writeup_setup(spec, out))
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


def _lend_harness_meta(units: list[Unit]) -> None:
    """The runs beside a harness's meta.json (bench-spark) take the server facts it states and
    they do not (engine, version, KV dtype, machine), the file entry noting where each came
    from. Not to a run that names another model or that failed, and never a date: a run's date
    is its own."""
    metas = {str(Path(u.path).parent): u for u in units if u.facts.format == "bench-spark-meta"}
    for u in units:
        meta = metas.get(str(Path(u.path).parent))
        if meta is None or u is meta or u.context.get("failed"):  # a crashed start may have had other settings
            continue
        theirs, mine = meta.config.get("model"), u.config.get("model")
        served = meta.facts.settings.get("served_name")
        if mine is not None and served is not None and str(mine).lower() == str(served.value).lower():
            u.config["model"] = mine = theirs  # the name the server was asked by: the model meta.json names
            u.notes.append(f"model {theirs} from {Path(meta.path).name} beside it, whose served_name is the "
                           f"name this file prints ({served.value})")
        if mine is not None and theirs is not None and not same_fact("model", mine, theirs):
            continue
        lent = [k for k, v in meta.config.items() if v is not None and u.config.get(k) is None]
        for k in lent:
            u.config[k] = meta.config[k]
        u.todo = [t for t in u.todo if t.split(":", 1)[0] not in lent]
        if lent:
            u.notes.append(f"{', '.join(lent)} from {Path(meta.path).name} beside it (the harness's record of "
                           "the server), not from this file")


def _dates_from_the_runner(out: Path, units: list[Unit]) -> None:
    """Dates a harness's files do not print, from its runner's clock (bench-spark): the
    runner log's first line is the run's start, whose date meta.json's `generated_at` gives
    (used only when the two times agree within a minute: one clock); a power CSV began at its
    test's START line and the sweep summary was written at its test's END, so each is dated by
    the day of the run that line falls on. Each such date's file entry says where it came from."""
    by_folder: dict[str, dict[str, Unit]] = {}
    for u in units:
        by_folder.setdefault(str(Path(u.path).parent), {})[u.facts.format] = u
    for folder, found in by_folder.items():
        meta, log = found.get("bench-spark-meta"), found.get("bench-spark-runner-log")
        began = meta and meta.facts.context.get("date") and meta.facts.settings.get("generated_at")
        if not (began and log):
            continue
        start = datetime.fromisoformat(str(began.value))
        events = ingest_read(out / log.path).tables["harness_events"]
        if not len(events):
            continue
        # the log's first line: its first event's clock less the seconds since that line
        h, m, sec = (int(x) for x in events["clock"].iloc[0].split(":"))
        of_day = (h * 3600 + m * 60 + sec - float(events["elapsed_s"].iloc[0])) % 86400
        first = datetime.combine(start.date(), datetime.min.time(), start.tzinfo) + timedelta(seconds=of_day)
        if abs((first - start).total_seconds()) > 60:
            continue  # not one clock, or not this run's log

        def date_of(seconds: float) -> str:
            return (first + timedelta(seconds=seconds)).date().isoformat()

        log_name = Path(log.path).name
        _date(log, first.date().isoformat(), f"its first line is the run's start, {start.isoformat()} "
                                              f"(generated_at in {Path(meta.path).name})")
        for u in units:
            if str(Path(u.path).parent) != folder or u.context.get("date") is not None:
                continue
            test = re.match(r"(\d+)-", Path(u.path).name)
            kind = {"power-series-csv": "start", "bench-spark-capacity": "end"}.get(u.facts.format)
            at = events[(events["event"] == kind) & (events["test"] == test[1])] if test and kind else events[:0]
            if len(at) == 1:
                line = int(at["line"].iloc[0])
                _date(u, date_of(float(at["elapsed_s"].iloc[0])),
                      f"the {kind.upper()} {test[1]} line of {log_name} (line {line}), on the runner's clock "
                      f"that began {start.isoformat()}")


def _date(u: Unit, day: str, why: str) -> None:
    u.context["date"] = day
    u.todo = [t for t in u.todo if not t.startswith("date:")]
    u.notes.append(f"date {day} from {why}")


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
_BY_ORDER = ("first", "second", "rest")


def _roles(units: list[Unit], configs: dict[str, dict], contract: Contract, setup: dict | None = None
           ) -> dict[str, str]:
    """Each configuration's role by the contract's pick rules (see contract.Role.pick); `setup`:
    the write-up's, per role, for the rule 'setup'."""
    picker = _RolePicker(configs, setup or {})
    for _ in range(len(contract.roles) + 1):  # rules that refer to other roles wait for them
        for role in contract.roles:
            for rule in role.pick:
                if rule not in _BY_ORDER and picker.room(role):
                    picker.take(role, picker.matching(rule, role.name))
    picker.by_order(contract.roles)
    return picker.roles


def _writeup_setup(spec: ChapterSpec, out: Path) -> dict:
    """The write-up's setup per role (published.yml), for the pick rule 'setup'; none outside
    a project or for a chapter without a write-up."""
    path = writeup_file(spec.id, out) if spec.writeup else None
    return load_published(path).setup if path is not None else {}


class _RolePicker:
    """The roles given so far, and which free configurations each pick rule matches."""

    def __init__(self, configs: dict[str, dict], setup: dict):
        self.configs = configs
        self.setup = setup
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

    def of_role(self, role: str) -> list[str]:
        return [c for c, r in self.roles.items() if r == role]

    def writeup_like(self, cid, role: str) -> bool:
        """The configuration is the write-up's setup for `role` (platform, model, weights)."""
        return bool(self.setup.get(role)) and not differences(self.configs[cid]["facts"], self.setup[role])

    def matching(self, rule: str, role: str) -> list[str]:
        """The free configurations a rule by content picks; none for a rule it does not know.
        'a+b' picks those both rules pick."""
        if "+" in rule:
            found = [set(self.matching(part, role)) for part in rule.split("+")]
            return [c for c in self.free() if all(c in f for f in found)]
        if rule.startswith(("model-of:", "not-model-of:")):
            other = self.of_role(rule.split(":", 1)[1])
            if not other or not self.model(other[0]):
                return []  # no configuration of that role yet: nothing to compare with
            same = rule.startswith("model-of:")
            return [c for c in self.free() if self.model(c) and (self.model(c) == self.model(other[0])) == same]
        if rule.startswith("kind:"):
            return [c for c in self.free() if rule[5:] in self.kinds[c]]
        tests = {
            "moe": lambda c: _MOE.search(self.model(c)),
            "dense": lambda c: self.model(c) and not _MOE.search(self.model(c)),
            "speculative": self.speculative,
            "plain": lambda c: not self.speculative(c),
            "setup": lambda c: self.writeup_like(c, role),
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
        todo += name_todos(cid, g)
        for t in dict.fromkeys(t for u in g["units"] for t in u.todo):
            key = t.split(":", 1)[0]
            if key in _BUILD_KEYS and all(u.facts.format.startswith("llama-bench") for u in g["units"]):
                continue  # several builds in one llama-bench file: the chapter tells them apart by row
            if key in CONFIG_KEYS and key not in known:
                todo.append(f"configs.{cid}.{t}")
    todo += spec_todos(configs)
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
    if u.notes:
        out["notes"] = "; ".join(u.notes)
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

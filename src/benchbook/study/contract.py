"""A chapter's contract: what it needs from a data folder, checked before it runs.

A chapter declares
- **roles**: what its configurations stand for (baseline, candidate, backend, ...), how
  many configurations each takes, and the prefix its value names use (``key``);
- **kinds**: the run kinds it reads (a file entry's ``kind``), the tables such a file must
  yield, the run context keys every run of that kind needs, and how a run's key is formed
  from its context (``c{concurrency}``), so value names never depend on the run names a
  user chose;
- **sections**: the parts of its page and the runs each one needs. A section whose runs
  are absent is not an error: the page shows a short note saying what is missing.

`check` turns a study folder into problems that each name the file and the key; a folder
without problems never makes a chapter fail. `available` says which sections the data
can fill. Roles come from each configuration's ``role`` key in study.yml.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

import pandas as pd

from ..ingest import load_pattern
from .folder import MANIFEST, Study

ROLE_KEY = "role"
TODO = "TODO"  # the value `benchbook new` writes where the user must choose


def pending(study: Study) -> set[str]:
    """The study.yml paths its `todo` list still asks about ('configs.x.role', 'files[3].kind'):
    a value left open there is a to-do for `validate` to repeat, not a problem; the run or
    configuration it concerns is left out of the page until it is filled."""
    return {str(t).split(":", 1)[0].strip() for t in study.todo}


def open_roles(study: Study) -> list[str]:
    """The configurations whose role `benchbook new` left to the user (`role: TODO`)."""
    return [c for c, cfg in study.configs.items() if cfg.get(ROLE_KEY) == TODO]


@dataclass(frozen=True)
class KeyNumbers:
    """Numbers of one of the chapter's tidy downloads that a version sets beside the previous
    version's: rows by `index`, columns `values`."""

    table: str  # the download's file stem, e.g. "runs" for runs.csv
    index: tuple[str, ...]
    values: tuple[str, ...]


@dataclass(frozen=True)
class Role:
    name: str
    key: str  # value-name prefix of this role's runs: '<key>_<run key>_<metric>'; '{config}'
    # for the configuration id (for roles of many configurations), '{name}' for the run name
    title: str  # what the role stands for, in the write-up and in general
    min: int = 0
    max: int | None = 1  # None: any number of configurations
    aggregate: str = ""  # value-name prefix of figures over all of the role's configurations
    # How `benchbook new` picks this role's configurations, in order of the rules:
    # 'kind:<k>' those with files of kind k; 'first', 'second' by order of appearance;
    # 'rest' all not yet given a role; 'moe' / 'dense' by the model name ('-A3B' = MoE);
    # 'speculative' / 'plain' by speculative decoding; 'model-of:<role>' ('not-model-of:<role>')
    # the same model as (another model than) that role's configuration, once it has one;
    # 'setup' the write-up's platform, model and weights for this role (published.yml's setup);
    # 'a+b' those both rules pick. A configuration no rule picks is left as a TODO.
    pick: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    name: str
    title: str
    tables: tuple[str, ...]  # a file of this kind must yield rows in one of these
    needs: tuple[str, ...] = ()  # run context keys every run of this kind needs
    key: str | None = ""  # run key template over the context, e.g. 'c{concurrency}'; '' = the
    # kind's name; None = no run key (the role key alone names the run)
    tiebreak: str = "s{seed}"  # appended when two runs of one role would share a key
    formats: tuple[str, ...] = ()  # reader formats (prefixes) a file of this kind has, for `new`
    # Conditions on a run's context for `benchbook new` to choose this kind (the first kind
    # whose conditions all hold): (key, op, value), op one of eq, le, ge, gt, set, unset.
    when: tuple[tuple[str, str, object], ...] = ()
    # Load patterns (benchbook.ingest.load_pattern) a bench run of this kind may have; empty: any.
    # A file that records another pattern cannot be this kind, whatever study.yml says.
    loads: tuple[str, ...] = ()

    def takes(self, load: str | None) -> bool:
        """A run with this load pattern can be of this kind (an unrecorded pattern can)."""
        return not self.loads or load in (None, load_pattern.UNKNOWN) or load in self.loads


@dataclass(frozen=True)
class Need:
    """Runs a section needs: of these kinds, roles (any when empty) and context values."""

    kinds: tuple[str, ...]
    what: str  # for the reader: 'a sweep run at concurrency 1'
    roles: tuple[str, ...] = ()
    where: tuple[tuple[str, object], ...] = ()
    min_runs: int = 1
    min_configs: int = 1  # distinct configurations (or builds, for llama-bench) among those runs


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    needs: tuple[Need, ...] = ()
    any_of: bool = False  # one of the needs suffices
    reads: tuple[str, ...] = ()  # parameters naming another chapter's data it needs
    how: str = ""  # how to add what is missing
    columns: tuple[str, ...] = ()  # tidy columns ('table.column') its numbers rest on, so that a
    # generator's assumption about one of them marks the section (benchbook.study.assumptions)


@dataclass(frozen=True)
class Contract:
    roles: tuple[Role, ...]
    kinds: tuple[Kind, ...]
    sections: tuple[Section, ...] = ()
    default_role: str | None = None  # the role of a configuration that names none

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)

    def kind(self, name: str) -> Kind | None:
        return next((k for k in self.kinds if k.name == name), None)

    def section(self, name: str) -> Section:
        hit = next((s for s in self.sections if s.id == name), None)
        if hit is None:
            raise KeyError(f"no section {name!r}; known: {', '.join(s.id for s in self.sections)}")
        return hit


@dataclass
class Roles:
    """Configurations by role, and the role of each configuration."""

    of_config: dict[str, str] = field(default_factory=dict)

    def configs(self, role: str) -> list[str]:
        return [c for c, r in self.of_config.items() if r == role]

    def first(self, role: str) -> str | None:
        found = self.configs(role)
        return found[0] if found else None


def assign_roles(study: Study, contract: Contract) -> tuple[Roles, list[str]]:
    """Each configuration's role from study.yml, with a problem for each that has none or a wrong one."""
    where = study.root / MANIFEST
    roles, problems = Roles(), []
    names = ", ".join(r.name for r in contract.roles)
    waiting = pending(study)
    for cid, cfg in study.configs.items():
        role = cfg.get(ROLE_KEY, contract.default_role)
        if role == TODO and f"configs.{cid}.{ROLE_KEY}" in waiting:
            continue  # left to the user by `benchbook new`: its runs wait, unused, until it is set
        if role is None:
            problems.append(f"{where}: configs.{cid}: no '{ROLE_KEY}'; expected one of: {names}")
        elif contract.role(str(role)) is None:
            problems.append(f"{where}: configs.{cid}: role '{role}' is not one of this chapter's ({names})")
        else:
            roles.of_config[cid] = str(role)
    waiting_roles = open_roles(study)
    for r in contract.roles:
        n = len(roles.configs(r.name))
        if n < r.min and not waiting_roles:  # while a role is a to-do, the count waits for it
            problems.append(f"{where}: configs: the chapter needs {r.min} configuration(s) with role "
                            f"'{r.name}' ({r.title}); found {n}")
        if r.max is not None and n > r.max:
            problems.append(f"{where}: configs: at most {r.max} configuration(s) may have role '{r.name}' "
                            f"({r.title}); found {n}: {', '.join(roles.configs(r.name))}")
    return roles, problems


def check_runs(study: Study, contract: Contract, runs: pd.DataFrame | None = None) -> list[str]:
    """Kinds and run context keys of every described run, against the chapter's kinds.

    A context key that study.yml leaves out but the file itself holds (a bench run's
    max_concurrency, its request rate) is taken from the file; `runs` (the ingested runs
    table) says which files hold what, and explains a missing value.
    """
    where = study.root / MANIFEST
    known = ", ".join(k.name for k in contract.kinds)
    problems = []
    waiting = pending(study)
    for run in study.run_entries():
        at = f"{where}: {run.where}"
        item = run.where.split(" ", 1)[0]  # 'files[3]' or 'files[3].runs[0]'
        kind_name = run.context.get("kind")
        if kind_name is None:
            if f"{item}.kind" not in waiting:
                problems.append(f"{at}: no 'kind'; expected one of: {known}")
            continue
        kind = contract.kind(str(kind_name))
        if kind is None:
            problems.append(f"{at}: kind '{kind_name}' is not one this chapter reads; expected one of: {known}")
            continue
        problems += _load_problems(at, kind, contract, run, runs)
        wanted = list(kind.needs) + [f for f in _fields(kind.key or "") if f not in kind.needs and f != "kind"]
        for key in wanted:
            if run.context.get(key) is not None or _in_file(runs, run, key) is not None \
                    or f"{item}.{key}" in waiting:
                continue
            problems.append(f"{at}: a '{kind.name}' run ({kind.title}) needs '{key}'{_hint(runs, run, key)}")
    return problems


def _load_problems(at: str, kind: Kind, contract: Contract, run, runs) -> list[str]:
    """The file's own load pattern against the kind and against study.yml's numbers."""
    rows = _rows_of(runs, run)
    if rows is None or not len(rows) or "load" not in rows:
        return []
    recorded = rows.iloc[0]
    load = recorded["load"]
    out = []
    if not kind.takes(load):
        fits = [k.name for k in contract.kinds if k.loads and load in k.loads]
        out.append(f"{at}: a '{kind.name}' run ({kind.title}) needs "
                   f"{' or '.join(_LOAD_WORDS[x] for x in kind.loads)}, but the file records "
                   f"{load_pattern.text(recorded)}"
                   + (f"; its kind is one of: {', '.join(fits)}" if fits else "; this chapter has no kind for it"))
    if why := load_pattern.conflict(load, run.context):
        out.append(f"{at}: {why}")
    return out


_LOAD_WORDS = {load_pattern.SINGLE: "one request at a time", load_pattern.CONCURRENCY: "a fixed concurrency",
               load_pattern.RATE: "an open-loop request rate", load_pattern.ALL_AT_ONCE: "every prompt at once"}


# Run context a bench file holds itself: context key -> runs table column.
FROM_FILE = {"concurrency": "max_concurrency", "request_rate": "request_rate"}


def _rows_of(runs: pd.DataFrame | None, run) -> pd.DataFrame | None:
    if runs is None or not len(runs) or "source_file" not in runs:
        return None
    rows = runs[runs["source_file"].astype(str) == run.path]
    if run.run is not None and "run_id" in rows:
        rows = rows[rows["run_id"].astype(str).str.endswith(f"#{run.run}")]
    return rows


def filled(study: Study, runs: pd.DataFrame | None):
    """The described runs, with context keys the files hold filled in where study.yml omits them."""
    from dataclasses import replace

    out = []
    for run in study.run_entries():
        extra = {k: v for k in FROM_FILE if run.context.get(k) is None
                 and (v := _in_file(runs, run, k)) is not None}
        out.append(replace(run, context={**run.context, **{k: _plain(_num(v)) for k, v in extra.items()}}))
    return out


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _in_file(runs, run, key):
    rows = _rows_of(runs, run)
    col = FROM_FILE.get(key)
    if rows is None or col is None or col not in rows or not len(rows):
        return None
    vals = rows[col].dropna()
    return vals.iloc[0] if len(vals) == len(rows) else None


def _hint(runs, run, key) -> str:
    rows = _rows_of(runs, run)
    col = FROM_FILE.get(key)
    if rows is None or col is None or col not in rows or not len(rows):
        return ""
    return f" (the file's {col} is null; set '{key}' in study.yml)"


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def run_key(kind: Kind, context: dict) -> str:
    """A run's key from its kind and context: 'c16' for a sweep run at concurrency 16."""
    if kind.key is None:
        return ""
    template = kind.key or kind.name.replace("-", "_")
    values = {k: _plain(v) for k, v in context.items()}
    values.setdefault("kind", kind.name.replace("-", "_"))
    return slug(template.format(**values))


def slug(text) -> str:
    """Text as a part of a value name: lower case, letters, digits and underscores."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def role_key(role: Role, config: str, context: dict) -> str:
    """The value-name prefix of a run of this role ('h100_dense', or per configuration/name)."""
    if role.key == "{config}":
        return slug(config)
    if role.key == "{name}":
        return slug(context.get("name") or config)
    return role.key


def _plain(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def keys_for(study: Study, contract: Contract, roles: Roles, entries=None) -> dict[tuple, str]:
    """Value-name prefix of each described run ('<role key>_<run key>').

    Keyed by (file index, run position). Two runs of one role with the same key get the
    kind's tiebreak (the seed) appended; if that does not separate them, they are named for
    what differs in their context, and runs alike in every respect are repeats numbered in
    file order. Runs of a kind without a run key (llama-bench files of one build: a prefill
    file and a generation file) share the role's key: they are one run set.
    """
    base: dict[tuple, str] = {}
    found = {}
    for run in entries if entries is not None else study.run_entries():
        kind = contract.kind(str(run.context.get("kind")))
        role = contract.role(roles.of_config.get(run.config, ""))
        if kind is None or role is None:
            continue
        try:
            parts = (role_key(role, run.config, run.context), run_key(kind, run.context))
        except (KeyError, ValueError, IndexError):
            continue  # reported by check_runs
        base[(run.file, run.run)] = "_".join(p for p in parts if p)
        found[(run.file, run.run)] = (run, kind)
    out = {}
    for key in sorted(set(base.values())):
        same = [i for i, k in base.items() if k == key]
        if len(same) == 1:
            out[same[0]] = key
            continue
        kind = found[same[0]][1]
        if kind.key is None:  # the role's runs of this kind are one set (llama-bench files of one build)
            out.update({i: key for i in same})
            continue
        try:
            split = {i: f"{key}_{slug(kind.tiebreak.format(**found[i][0].context))}" for i in same}
        except (KeyError, ValueError, IndexError):
            split = {}
        if not split or len(set(split.values())) != len(same):
            split = _named_for_difference(key, [found[i][0] for i in same], same)
        out.update(split)
    return out


# Context keys that name a run, not its workload: never used to tell runs apart.
_NOT_WORKLOAD = {"kind", "name", "notes", "config"}


def _named_for_difference(key: str, runs: list, ids: list) -> dict:
    """Runs of one role and kind that share a key, named for what differs in their context
    ('_dataset_sharegpt', '_input_len_229'); runs whose context is the same are repeats of
    one run set, numbered in file order ('_rep2')."""
    ctx = [{k: v for k, v in r.context.items() if k not in _NOT_WORKLOAD} for r in runs]
    differ = [k for k in dict.fromkeys(k for c in ctx for k in c) if len({repr(c.get(k)) for c in ctx}) > 1]
    names = {i: "_".join([key] + [slug(f"{k}_{_plain(c[k])}") for k in differ if c.get(k) is not None])
             for i, c in zip(ids, ctx)}
    seen: dict[str, int] = {}
    for i in ids:
        seen[names[i]] = seen.get(names[i], 0) + 1
        if seen[names[i]] > 1 or list(names.values()).count(names[i]) > 1:
            names[i] = f"{names[i]}_rep{seen[names[i]]}"
    return names


@dataclass
class Missing:
    """Why a section cannot be shown on this data, and how to make it possible."""

    section: Section
    lacking: list[str]

    def text(self) -> str:
        what = "; ".join(self.lacking)
        how = f" {self.section.how}" if self.section.how else ""
        return f"This section needs {what}.{how}"


def available(contract: Contract, runs: pd.DataFrame,
              reads: dict[str, bool] | None = None) -> dict[str, Missing | None]:
    """Section id -> None when the data can fill it, else what it lacks.

    `runs` has one row per run with at least `kind` and `role` (and the context columns
    the needs filter on); `reads` says which cross-read data folders are present.
    """
    reads = reads or {}
    out = {}
    for section in contract.sections:
        lacking = [n.what + (", not a failed one (every such run here failed)" if _met(n, runs, failed=True) else "")
                   for n in section.needs if not _met(n, runs)]
        if section.any_of and len(lacking) < len(section.needs):
            lacking = []
        lacking += [f"the data folder of parameter {p}" for p in section.reads if not reads.get(p)]
        out[section.id] = Missing(section, lacking) if lacking else None
    return out


def _met(need: Need, runs: pd.DataFrame, failed: bool = False) -> bool:
    """The need is met by the runs (counting failed runs too with `failed`, to say why not)."""
    if runs is None or not len(runs) or "kind" not in runs:
        return False
    sel = runs["kind"].isin(need.kinds) & runs["role"].notna()
    if "failed" in runs and not failed:  # a failed run (a server that never started) feeds no section
        sel &= runs["failed"].isna()
    if need.roles:
        sel &= runs["role"].isin(need.roles)
    for col, value in need.where:
        if col not in runs:
            return False
        sel &= pd.to_numeric(runs[col], errors="coerce") == value if isinstance(value, (int, float)) \
            else runs[col] == value
    configs = runs.loc[sel, "config"].nunique()
    if "builds" in runs:  # a file of several builds counts each (benchbook.analysis.llama.variants)
        configs = max(configs, int(runs.loc[sel].groupby("config")["builds"].max().sum()))
    return int(sel.sum()) >= need.min_runs and configs >= need.min_configs


_OPS = {
    "eq": lambda v, x: v is not None and v == x, "le": lambda v, x: v is not None and v <= x,
    "ge": lambda v, x: v is not None and v >= x, "gt": lambda v, x: v is not None and v > x,
    "set": lambda v, x: v is not None, "unset": lambda v, x: v is None,
}


def kind_for(contract: Contract, fmt: str, context: dict, load: str | None = None) -> Kind | None:
    """The first kind of the contract that reads this format, takes this load pattern and
    whose conditions hold."""
    for kind in contract.kinds:
        if not any(fmt.startswith(f) for f in kind.formats) or not kind.takes(load):
            continue
        if all(_OPS[op](context.get(key), value) for key, op, value in kind.when):
            return kind
    return None


def describe(contract: Contract) -> str:
    """The contract in words, for `benchbook needs`: roles, run kinds and what each section needs."""
    lines = ["Roles (a configuration's `role:` in study.yml):"]
    for r in contract.roles:
        count = f"{r.min}+" if r.max is None else (f"{r.min}-{r.max}" if r.min != r.max else str(r.min))
        lines.append(f"  {r.name:12s} {count:4s} configuration(s): {r.title}")
    lines.append("Run kinds (a file entry's `kind:`):")
    for k in contract.kinds:
        needs = f"; needs {', '.join(k.needs)}" if k.needs else ""
        loads = f"; load: {' or '.join(k.loads)}" if k.loads else ""
        lines.append(f"  {k.name:12s} {k.title} (tables: {', '.join(k.tables)}{needs}{loads})")
    lines.append("Sections of the page and what each needs:")
    for sec in contract.sections:
        joiner = " or " if sec.any_of else "; "
        what = joiner.join(n.what for n in sec.needs) or "nothing beyond the data folder"
        if sec.reads:
            what += f"; the data folder of parameter {', '.join(sec.reads)}"
        lines.append(f"  {sec.title}: {what}")
    return "\n".join(lines)

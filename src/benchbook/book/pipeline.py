"""One pipeline for every chapter: ingest -> values -> published comparison -> claims ->
caveats -> provenance -> outputs.

A chapter module computes its own values and tables between `start` and `finish`; the
steps every chapter shares live here once:

- `load`: read the data folder, apply the chapter's contract (roles, run keys, the
  sections the data can fill) and raise one StudyError listing every problem;
- `start`: load the chapter's own folder and the folders it reads from other chapters,
  read published.yml and decide, role by role, whether the data is the write-up's setup;
- `finish`: set the write-up's published cells and claims beside the values (only where
  the data is comparable), gather caveats, record provenance.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from ..analysis.llama import ok_rows, variants
from ..analysis.serving import DERIVED as serving
from ..book.paths import writeup_file
from ..ledger import claims as claims_mod
from ..ledger.caveats import authors_caveats
from ..ledger.comparable import Comparability, Gate, RoleMatch, compare_setup, owner
from ..ledger.expr import names_in
from ..ledger.published import Published, load_published
from ..study import marks
from ..study.assumptions import assumed_ids, load_assumptions, order_groups, order_ids, ordered_values, resting_on
from ..study.contract import Contract, Missing, Roles, assign_roles, available, check_runs, filled, keys_for, role_key
from ..study.folder import MANIFEST, StudyError, load_study
from ..study.load import StudyData, StudyReadError, ingest_study
from ..study.marks import Cells
from ..study.provenance import code_version, data_record, package_versions
from .registry import get
from .spec import ChapterSpec

RUN_TABLES_KEYED = ("runs", "requests", "run_stats")  # tables whose rows carry a run_id


def _derived() -> dict:
    """Columns chapters add to a tidy table, by table: the columns each is computed from."""

    return {"runs": serving}


# ---------------------------------------------------------------- loading with a contract


def contract_problems(data: StudyData, contract: Contract) -> list[str]:
    """Apply the contract to ingested data: roles and keys on every table; its problems."""
    study = data.study
    roles, problems = assign_roles(study, contract)
    runs = data.tables.get("runs")
    problems += check_runs(study, contract, runs)
    entries = filled(study, runs)
    keys = keys_for(study, contract, roles, entries)
    data.roles = roles
    data.described = _described(data, contract, roles, entries, keys)
    for name, df in list(data.tables.items()):
        data.tables[name] = _annotated(df, data, roles, keys)
    return problems


def _described(data: StudyData, contract: Contract, roles: Roles, entries, keys) -> pd.DataFrame:
    """One row per described run, with how many rows it gave in its kind's tables."""
    rows = []
    for run in entries:
        kind = contract.kind(str(run.context.get("kind")))
        n, builds = 0, 1
        for table in kind.tables if kind else ():
            df = data.tables.get(table)
            if df is None or not len(df) or "source_file" not in df:
                continue
            mine = df["source_file"].astype(str) == run.path
            if run.run is not None and "run_id" in df:
                mine &= df["run_id"].astype(str).str.endswith(f"#{run.run}")
            n += int(mine.sum())
            if table == "llama_bench" and mine.any():  # one file may hold several builds
                measured = ok_rows(df[mine])
                builds = max(builds, int(variants(measured).nunique()) if len(measured) else 1)
        rows.append(dict(file=run.file, run=run.run, path=run.path, config=run.config,
                         role=roles.of_config.get(run.config), key=keys.get((run.file, run.run)),
                         rows=n, builds=builds, **{k: v for k, v in run.context.items()}))
        rows[-1].setdefault("kind", None)  # a run without a kind (a problem of its own) still has the column
    out = pd.DataFrame(rows)
    if len(out):  # a file that gave no rows of its kind's tables does not count as present
        out = out.assign(kind=out["kind"].where(out["rows"] > 0))
    return out


def _annotated(df: pd.DataFrame, data: StudyData, roles: Roles, keys: dict) -> pd.DataFrame:
    df = df.copy()
    if "config" in df:
        df["role"] = df["config"].map(roles.of_config).astype(object)
    else:
        df["role"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    df["key"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    if not len(df) or "source_file" not in df:
        return df
    files = {f.path: i for i, f in enumerate(data.study.files)}
    src = df["source_file"].astype(str)
    for path, i in files.items():
        mine = src == path
        if not mine.any():
            continue
        if data.study.files[i].runs and "run_id" in df:
            pos = df.loc[mine, "run_id"].astype(str).str.extract(r"#(\d+)$")[0]
            df.loc[mine, "key"] = [keys.get((i, int(p))) if isinstance(p, str) else None for p in pos]
        else:
            df.loc[mine, "key"] = keys.get((i, None))
    return df


def load(data_dir, contract: Contract | None) -> StudyData:
    """A data folder's tidy tables with the contract applied; every problem raised at once."""
    study = load_study(data_dir)
    try:
        data = ingest_study(study)
    except StudyReadError as exc:
        problems = exc.problems
        data = None
    else:
        problems = []
    if data is not None and contract is not None:
        problems += contract_problems(data, contract)
    if problems:
        raise StudyError(problems)
    return data


# ---------------------------------------------------------------- a chapter's results


@dataclass
class ChapterResults:
    """What every chapter computes; a chapter's Results adds its own tables to these."""

    spec: ChapterSpec
    params: dict
    data: StudyData
    published: Published
    comparability: Comparability
    reads: dict = field(default_factory=dict)  # parameter -> StudyData of another chapter's folder (or None)
    read_setups: dict = field(default_factory=dict)  # parameter -> Comparability of that folder
    values: dict = field(default_factory=dict)
    currencies: dict = field(default_factory=dict)
    ledger: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)
    caveats: pd.DataFrame = field(default_factory=pd.DataFrame)
    provenance: pd.DataFrame = field(default_factory=pd.DataFrame)
    versions: dict = field(default_factory=dict)
    sections: dict = field(default_factory=dict)  # section id -> None or Missing
    assumed: dict = field(default_factory=dict)  # section id -> the generator's assumptions it rests on
    value_ids: dict = field(default_factory=dict)  # value name -> ids of the assumed cells it was computed from
    claim_ids: dict = field(default_factory=dict)  # claim id -> ids its recomputed value rests on
    # value name -> the name of the same value in the namespace of a write-up's tables (a page's
    # own name for a read folder's cell), so what a reconstruction was fit to is known by both
    same_as: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    _assumptions: dict = field(default_factory=dict, repr=False)
    _cells: dict = field(default_factory=dict, repr=False)  # cells() per frame, computed once (see there)

    @property
    def roles(self) -> Roles:
        return self.data.roles

    def config(self, cid: str | None) -> dict:
        return self.data.study.configs.get(cid, {}) if cid else {}

    def has(self, section: str) -> bool:
        """Whether the data can fill this section of the page."""
        self.spec.contract.section(section)  # a typo is an error, not a silently missing section
        return self.sections.get(section) is None

    def missing(self, section: str) -> Missing | None:
        self.spec.contract.section(section)
        return self.sections.get(section)

    def assumptions_of(self, data: StudyData | None = None) -> list:
        """The generator's choices in a folder this page reads (its own by default), none
        when it was measured. Ids of another chapter's folder carry that study's id
        ('strix-halo-baseline/winners'), so a page reading two folders names each apart."""

        data = self.data if data is None else data
        sid = data.study.id
        if sid not in self._assumptions:
            found = load_assumptions(data.study.root) if data.study.reconstructed else []
            if data is not self.data:
                found = [replace(a, id=f"{sid}/{a.id}") for a in found]
            self._assumptions[sid] = found
        return self._assumptions[sid]

    def cells(self, frame: pd.DataFrame, table: str, data: StudyData | None = None, derived: dict | None = None):
        """Per cell of `frame` (rows of tidy table `table` of a folder this page reads, maybe
        with columns computed from it: _derived, and the chapter's own `derived` {column:
        the columns it is computed from}), the assumption ids it holds (marks.Cells)."""

        found = self.assumptions_of(data)
        if not found:
            return Cells()
        # a page asks again and again for the same frame (the Strix Halo serving model once per
        # agent count): the answer is kept with the frame it was computed for, and a frame that
        # changed shape since is computed again
        key = (id(frame), table, id(data), tuple(sorted((derived or {}).items(), key=str)))
        kept = self._cells.get(key)
        if kept is not None and kept[0] is frame and kept[1] == (frame.shape, tuple(frame.columns)):
            return Cells(kept[2].ids.copy(), dict(kept[2].why))
        ids = assumed_ids(frame, table, found, {**_derived().get(table, {}), **(derived or {})})
        if table == "runs" and {"per_request_tps", "run_id"} <= set(frame.columns):
            rates = self.request_order_ids("per_request_tps", 0.5, data)
            ids["per_request_tps"] = [marks.union(a, rates.get(run, ())) for a, run in zip(
                ids["per_request_tps"], frame["run_id"].tolist())]
        out = Cells(ids, {a.id: a.why for a in found})
        self._cells[key] = (frame, (frame.shape, tuple(frame.columns)), out)
        return Cells(ids.copy(), dict(out.why))

    def file_ids(self, data: StudyData | None = None) -> dict:
        """Raw file -> the assumption ids its rows' line numbers hold: a choice that moves where a
        row sits in its file added or took away lines of it, so the counts the ingest report
        prints for that file (lines read, ignored) move with it (`make marks`: the power sweep's
        `gaps` moved the 35B's 200 W log from 383 lines read to 382). A bench file's records are
        its run's requests, whose place (request index) moves when requests come or go."""
        found = self.assumptions_of(data)
        tables = (self.data if data is None else data).tables if found else {}
        runs = tables.get("runs")
        run_files = dict(zip(runs["run_id"], runs["source_file"])) if runs is not None and len(runs) \
            and {"run_id", "source_file"} <= set(runs.columns) else {}
        out: dict = {}
        for table, df in tables.items():
            # a row's line, or its place among its run's requests (a bench file's records)
            place = next((c for c in ("line", "request_index") if c in df.columns), None)
            if not len(df) or place is None:
                continue
            if "source_file" in df.columns:
                files = df["source_file"].tolist()
            elif "run_id" in df.columns:
                files = [run_files.get(r) for r in df["run_id"].tolist()]
            else:
                continue
            for f, ids in zip(files, assumed_ids(df, table, found, columns=[place])[place].tolist()):
                if ids and f is not None:
                    out[f] = marks.union(out.get(f, ()), ids)
        return out

    def config_ids(self, columns, data: StudyData | None = None) -> dict:
        """Configuration -> the assumption ids of these tidy columns in its rows, over every table
        of a folder this page reads: a reconstructed folder's study.yml is the generator's, so a
        configuration's engine build or arguments rest on what its rows' build and argument
        columns rest on (`make marks`: moving Strix Halo's builds moved 'b9263' in the
        configuration tables, unmarked)."""
        found = self.assumptions_of(data)
        out: dict = {}
        for table, df in ((self.data if data is None else data).tables.items() if found else ()):
            present = [c for c in columns if c in df.columns]
            if not len(df) or "config" not in df.columns or not present:
                continue
            ids = assumed_ids(df, table, found, columns=present)
            for cid, row in zip(df["config"].tolist(), ids.itertuples(index=False)):
                if any(row):
                    out[cid] = marks.union(out.get(cid, ()), *row)
        return out

    def ingest_report(self, columns: list[str], counts=("read", "ignored"), reads=()) -> pd.DataFrame:
        """The folder's ingest report, and those of the folders this page reads under the `reads`
        parameters (each row naming its `study`), the count columns marked with what each file's
        lines or records rest on (`make marks`: the Strix Halo server run's prompt count moved
        its file's records read, on both pages that list it, unmarked)."""
        folders = [self.data, *(d for p in reads if (d := self.reads.get(p)) is not None)]
        frames, rows = [], {}
        for data in folders:
            report = data.report.assign(study=data.study.id)
            files, start = self.file_ids(None if data is self.data else data), sum(map(len, frames))
            rows.update({start + i: files.get(f, ()) for i, f in enumerate(report["file"])})
            frames.append(report)
        df = pd.concat(frames, ignore_index=True)[columns]
        # a count of none stays none when a choice adds lines or requests of the kind already read
        return marks.with_marks(df, {c: {i: ids for i, ids in rows.items() if df[c].iat[i]} for c in counts if c in df},
                                self.assumed_why)

    def rate_extreme_ids(self, lb: pd.DataFrame, data: StudyData | None = None) -> dict:
        """test_name -> (ids its greatest llama-bench rate rests on, ids its least does), over `lb`
        (rows of a folder this page reads, one per build and test, with test_name): where a choice
        moved those positions of the test's sorted rates (order_ids), else, for an entry that does
        not say or a test a build ran more than once, what the fastest and slowest row hold
        (`make marks`: which Strix Halo build wins swaps rates between builds and moves neither)."""
        found = self.assumptions_of(data)
        if not found or not len(lb):
            return {}
        rows, groups = self.cells(lb, "llama_bench", data), order_groups("llama_bench", lb)
        out = {}
        for test, g in lb.groupby("test_name"):
            top, bottom = g["avg_ts"].idxmax(), g["avg_ts"].idxmin()
            build = next((c for c in ("variant", "config") if c in g), None)
            alone = build is None or not g[build].duplicated().any()
            out[test] = tuple(order_ids(found, "llama_bench.avg_ts", groups[i], len(g), q, rows.at(i, "avg_ts"))
                              if alone and groups is not None else rows.at(i, "avg_ts")
                              for i, q in ((top, 1.0), (bottom, 0.0)))
        return out

    def request_order_ids(self, column: str, q: float, data: StudyData | None = None) -> dict:
        """run_id -> the ids the q-quantile of its requests' `column` rests on (ordered_values: a
        TTFT, or per-request t/s, whose median analysis.serving prints): where a choice moved
        the run's sorted values at the quantile's positions, or, for an entry that does not say,
        what the run's rows of the column's sources hold (`make marks`: a per-request median at
        one client carried the extreme-jitter choice, which moves only the fastest and slowest
        requests)."""
        found = self.assumptions_of(data)
        req = (self.data if data is None else data).tables.get("requests")
        groups = order_groups("requests", req) if req is not None else None
        if not found or groups is None or not len(req) or "run_id" not in req:
            return {}
        sources = ("output_tokens", "e2el_s") if column == "per_request_tps" else (column,)
        cells = self.cells(req, "requests", data)  # (kept with the frame: a page asks per column and quantile)
        values = ordered_values("requests", req).get(column)
        if values is None or not len(values):
            return {}
        out: dict = {}
        for run, idx in values.groupby(req.loc[values.index, "run_id"]).groups.items():
            rows = cells.union(sources, idx)
            if ids := order_ids(found, f"requests.{column}", groups[idx[0]], len(idx), q, rows):
                out[run] = ids
        return out

    @property
    def assumed_why(self) -> dict:
        """id -> why of every assumption of the folders this page reads."""
        folders = [self.data] + [d for d in self.reads.values() if d is not None]
        return {a.id: a.why for d in folders for a in self.assumptions_of(d)}

    @property
    def comparable(self) -> bool:
        """The data is the write-up's setup, in every role it has."""
        return self.comparability.comparable and all(c.comparable for c in self.read_setups.values())

    def read_side(self, param: str) -> str:
        """The short name of the chapter whose folder this page reads under `param` ('H100')."""
        return get(self.spec.reads[param]).title.split(":")[0]

    def kept_apart(self, param: str) -> str | None:
        """Why the folder this page reads under `param` is set beside its own data and never
        against it, or None when the two may be compared.

        A page on measured files that reads another chapter's reconstructed folder would
        otherwise print ratios of real numbers to numbers a generator fit to a write-up as
        this data's findings. Such numbers get no verdict and no key result (the gate says
        so) and are shown, if at all, under a note naming both folders (report.kept_apart_note).
        """
        other = self.reads.get(param)
        if other is None or self.data.study.reconstructed or not other.study.reconstructed:
            return None
        side = self.read_side(param)
        return (f"{side} side: {other.study.label}, the {side} write-up's numbers rebuilt by a generator from "
                f"its published tables, not measured. This page's data: {self.data.study.label}. A number that "
                "rests on the reconstructed side is no finding of this page's data: it gets no verdict here and "
                "no key result")


def start(chapter: str, data_dir, published_file=None, params: dict | None = None,
          reads: dict | None = None, results: type = ChapterResults, **extra) -> ChapterResults:
    """Load the chapter's data and the folders it reads; decide what is comparable."""
    spec = get(chapter)
    data = load(data_dir, spec.contract)
    published = _published(spec, Path(published_file) if published_file else Path(data_dir) / "published.yml")
    setup = compare_setup(published.setup, data.study.configs, data.roles.of_config)
    other, other_setups = {}, {}
    for param, folder in (reads or {}).items():
        other_spec = get(spec.reads[param])
        if not folder or not (Path(folder) / MANIFEST).is_file():
            other[param] = None
            continue
        other[param] = load(folder, other_spec.contract)
        theirs = writeup_file(other_spec.id, folder)
        their_setup = load_published(theirs).setup if theirs is not None else {}
        other_setups[param] = compare_setup(their_setup, other[param].study.configs,
                                            other[param].roles.of_config)
    r = results(spec=spec, params=dict(params or {}), data=data, published=published,
                comparability=setup, reads=other, read_setups=other_setups, **extra)
    described = [data.described] + [d.described for d in other.values() if d is not None]
    r.sections = available(spec.contract, pd.concat(described, ignore_index=True) if any(
        len(d) for d in described) else pd.DataFrame(), {p: d is not None for p, d in other.items()})
    r.assumed = assumed_sections(spec.contract, data, other)
    return r


def _published(spec: ChapterSpec, path: Path) -> Published:
    """The write-up's published.yml; a chapter that declares no write-up may have none (then it
    has no published cells, claims or setup, and its ledger is empty)."""
    if spec.writeup or path.is_file():
        return load_published(path)
    return Published(study=spec.id, sources={})


# what a caveat resting on a generator's choice says first (its ids are its mark's too)
CAVEAT_ASSUMED = "Assumed, not measured: this rests on values the data generator chose ({ids}; see PROVENANCE.md). "


def _marked(r: ChapterResults, caveat: dict) -> tuple[dict, tuple]:
    """A data rule's caveat whose columns (`rests`: groups of `table.column`s and the runs
    read in them, None for every run) hold a generator's choice says so first; with the ids
    of those choices (report.caveats_display marks the caveat with them). `data`: the folder
    the rule read, when it is one this page reads rather than its own."""

    data = caveat.get("data")
    out = {k: v for k, v in caveat.items() if k not in ("rests", "data", "ids")}
    held = set(caveat.get("ids") or ()).union(
        *(_rest_ids(r, reads, runs, data) for reads, runs in caveat.get("rests") or ()))
    hits = [a for a in r.assumptions_of(data) if a.id in held]
    if hits:
        out["caveat"] = CAVEAT_ASSUMED.format(ids="; ".join(a.id for a in hits)) + out["caveat"]
    return out, tuple(a.id for a in hits)


def _rest_ids(r: ChapterResults, reads, runs, data) -> set:
    """The ids of the choices landing in these columns of these runs (every run: None); a
    run's median per-request rate rests on the requests at its median (order ids)."""
    plain = [x for x in reads if x not in ORDER_READS]
    hits = resting_on(r.assumptions_of(data), plain) if plain else []
    if hits and runs is not None:  # only the choices landing in the runs it quotes
        hits = [a for a in hits if a.id in _ids_in_runs(r.data if data is None else data, hits, plain, runs)]
    ordered = {i for x in reads if x in ORDER_READS for run, ids in r.request_order_ids(*ORDER_READS[x], data).items()
               if runs is None or run in runs for i in ids}
    return {a.id for a in hits} | ordered


# a caveat's reads that are order statistics of a run's requests: read -> (column, quantile)
ORDER_READS = {"requests.per_request_tps": ("per_request_tps", 0.5)}


def _ids_in_runs(data: StudyData, assumed: list, reads, runs) -> set:
    """The ids of these assumptions that cover a cell of these `table.column`s in rows of these
    runs (assumed_ids: each table's rows matched once for all of them)."""
    found = set()
    for read in reads:
        table, column = read.split(".", 1)
        df = data.tables.get(table)
        if df is None or not len(df) or "run_id" not in df.columns or column not in df.columns:
            continue
        quoted = df["run_id"].astype(str).isin(runs).to_numpy()
        cells = assumed_ids(df, table, assumed, columns=[column])[column].tolist()
        found |= {i for ids, q in zip(cells, quoted) if q for i in ids}
    return found


def assumed_sections(contract: Contract, data: StudyData, reads: dict) -> dict[str, list]:
    """Section id -> the assumptions (of reconstructed folders) its declared columns rest on.
    The chapter's own folder counts for every section, a folder it reads only for the
    sections that read it; a measured folder has no assumptions."""

    def of(d: StudyData | None) -> list:
        return load_assumptions(d.study.root) if d is not None and d.study.reconstructed else []

    own, other = of(data), {p: of(d) for p, d in reads.items()}
    out = {}
    for section in contract.sections:
        pool = own + [a for p in section.reads for a in other.get(p, [])]
        hits = resting_on(pool, section.columns)
        if hits:
            out[section.id] = hits
    return out


def gate(r: ChapterResults) -> Gate:
    """Value-name prefixes of every role of the chapter's folder and of the folders it reads.

    A value name of no role's prefix (a counter of the whole folder, say) is the chapter's
    own data: comparable only when all of that folder is.
    """
    prefixes = _prefixes(r.spec.contract, r.data, r.comparability)
    for param, data in r.reads.items():
        if data is not None:
            other = get(r.spec.reads[param]).contract
            pairs = _prefixes(other, data, r.read_setups[param])
            if apart := r.kept_apart(param):
                pairs = [(p, replace(m, comparable=False, apart=apart)) for p, m in pairs]
            prefixes += pairs
    own = r.comparability
    fallback = RoleMatch("data", own.comparable, "; ".join(m.data for m in own.differing()),
                         "; ".join(m.claim for m in own.differing()))
    return Gate(prefixes, fallback=fallback, ignore=frozenset(r.params))


def reconstructed_names(r: ChapterResults):
    """A test: does any of these value names come from a reconstructed data folder? Names
    belong to folders by the same role prefixes as the gate; others are the chapter's own."""

    pairs = [(p, r.data.study.reconstructed) for p, _ in _prefixes(r.spec.contract, r.data, r.comparability)]
    for param, data in r.reads.items():
        if data is not None:
            other = get(r.spec.reads[param]).contract
            pairs += [(p, data.study.reconstructed) for p, _ in _prefixes(other, data, r.read_setups[param])]
    pairs.sort(key=lambda p: -len(p[0]))
    own, params = r.data.study.reconstructed, set(r.params)
    return lambda names: any(owner(pairs, n, own) for n in names if n not in params)


def fitted_names(r: ChapterResults) -> set[str]:
    """Value names a reconstruction was fit to beyond the page's own write-up: those of the
    write-up of each folder the page reads (its `published.yml`), and the page's own names
    for the same values (`same_as`)."""
    out = set()
    for param, data in r.reads.items():
        path = writeup_file(get(r.spec.reads[param]).id, data.study.root) if data is not None else None
        if path is not None:
            out |= claims_mod.pinned_names(load_published(path))
    fitted = out | claims_mod.pinned_names(r.published)
    return out | {name for name, same in r.same_as.items() if same in fitted}


def _prefixes(contract: Contract, data: StudyData, setup: Comparability) -> list[tuple[str, RoleMatch]]:
    out = []
    for role in contract.roles:
        match = setup.roles.get(role.name)
        if match is None and setup.declared and data.roles.configs(role.name):
            # a role of the data that the write-up does not have: nothing of it is the write-up's
            match = RoleMatch(role.name, False, "; ".join(data.roles.configs(role.name)),
                              "no such configuration")
        match = match or RoleMatch(role.name, True, "", "")
        if "{" in role.key:
            keys = {role_key(role, c, {"name": n}) for c, n in _names(data, role.name)}
        else:
            keys = {role.key}
        if role.aggregate:
            keys.add(role.aggregate)
        out += [(k, match) for k in keys]
    return out


def _names(data: StudyData, role: str):
    d = data.described
    if not len(d):
        return []
    d = d[d["role"] == role]
    return list(zip(d["config"], d.get("name", pd.Series([None] * len(d)))))


def claim_space(r: ChapterResults) -> dict:
    """The names a claim's expression may use: the data's values and numeric parameters."""
    numeric = {k: v for k, v in r.params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {**numeric, **r.values}


def table_names(published: Published) -> set[str]:
    """Value names of the write-up's published table cells: a reconstruction is fit to print
    every one of them as published."""
    return {n for table in published.tables for exprs in table.values for e in exprs if e for n in names_in(e)}


def fitted_claims(r: ChapterResults) -> set[str]:
    """Data claims whose recomputed number reads only values the reconstruction was fit to
    (the published tables' cells, table_names): at the write-up's precision that number is the write-up's, whatever
    the generator chose below it, so no choice is marked on it (a value the write-up printed is
    no assumption, even when a generator wrote it into a file)."""
    pinned, params = table_names(r.published), set(r.params)
    out = set()
    for c in r.published.claims:
        expr = str(c.get("recompute") or "").strip()
        used = names_in(expr) - params if expr and c.get("kind", "data") == "data" else set()
        if used and used <= pinned:
            out.add(c["id"])
    return out


def finish(r: ChapterResults, caveats=None) -> ChapterResults:
    """The published comparison and the ledger (gated by comparability), caveats, provenance.

    `caveats` is the chapter's own list, or a function of the results that makes it (after
    the ledger, which some caveat rules read). The authors' caveats are kept only when the
    data is the write-up's setup.
    """
    g = gate(r)
    values, fitted = claim_space(r), fitted_names(r)
    # a value the files were fit to print as published is the write-up's number, whatever a
    # generator chose around it (each is written at its printed value, and the generator refuses
    # files that print it otherwise): no choice moves it, so nothing computed from it rests on one
    r.value_ids = {name: ids for name, ids in r.value_ids.items() if name not in fitted}
    r.ledger = claims_mod.check_claims(r.published, values, r.params, r.currencies, gate=g,
                                       reconstructed=reconstructed_names(r), fitted=fitted)
    resting = claims_mod.claim_ids(r.published, r.ledger, r.value_ids)
    r.claim_ids = {cid: ids for cid, ids in resting.items()
                   if cid not in fitted_claims(r) | claims_mod.printed_as_published(r.ledger)}
    claims_mod.mark_ledger(r.ledger, r.claim_ids, r.assumed_why, difference=resting)
    r.comparison = claims_mod.compare_published(r.published, values, r.currencies, gate=g,
                                                reconstructed=reconstructed_names(r))
    own = authors_caveats(r.published) if r.comparability.comparable else []  # they describe its own setup
    mine = caveats(r) if callable(caveats) else list(caveats or [])
    marked = [_marked(r, c) for c in mine]
    r.caveats = pd.DataFrame(own + [c for c, _ in marked], columns=["origin", "caveat"])
    marks.with_marks(r.caveats, {"caveat": {len(own) + i: ids for i, (_, ids) in enumerate(marked)}}, r.assumed_why)
    folders = [r.data.study] + [d.study for d in r.reads.values() if d is not None]
    r.provenance = pd.DataFrame([data_record(s) for s in folders])
    r.versions = {"code": code_version(), **package_versions()}
    return r

"""A study's data folder: the `study.yml` manifest, its raw files and their checksums.

Layout of ``data/<study>/``::

    study.yml      what each raw file is (configuration, run context) and the sources
    SHA256SUMS     checksums of every raw file (``sha256sum -c`` format)
    PROVENANCE.md  how the files were made (measured, or reconstructed and how)
    raw/...        native files, never edited

Every problem is collected, so `benchbook validate` can report them all at once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from ..ingest.textio import load_yaml

MANIFEST = "study.yml"
CHECKSUMS = "SHA256SUMS"
TOP_KEYS = {"study", "title", "label", "reconstructed", "description", "sources", "configs", "files", "todo",
            "skipped"}  # files `benchbook new` was given but no reader recognises, with why
REQUIRED_TOP = ("study", "title", "label", "reconstructed", "configs", "files")
FILE_KEYS = {
    "path", "config", "name", "kind", "concurrency", "input_len", "output_len", "dataset",
    "ignore_eos", "seed", "date", "power_limit_w", "request_rate", "notes", "format", "runs",
    "failed",  # why the run failed (a server that did not start, no request completed): no section uses it
}
RUN_CONTEXT = FILE_KEYS - {"path", "config", "notes", "format", "runs"}
# A file with several runs (a bench JSONL, one result per line) may describe each under
# `runs:`, in file order; an item overrides the file entry's config and run context.
RUN_KEYS = RUN_CONTEXT | {"config", "notes"}
# Files in the data folder that are documentation or bookkeeping, not raw data.
NOT_RAW = {MANIFEST, CHECKSUMS, "PROVENANCE.md", "published.yml", "README.md", "LICENSE", "assumptions.yml",
           "architecture.yml"}  # cited model facts a chapter checks the data against


class StudyError(ValueError):
    """A study folder has problems; `problems` lists every one of them."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the data folder, POSIX separators
    config: str
    context: dict  # run context: name, kind, concurrency, lengths, ...
    format: str | None = None
    runs: tuple = ()  # per-run overrides of a multi-run file, in file order (dicts)


@dataclass(frozen=True)
class RunEntry:
    """One described run: a whole file, or the n-th run of a multi-run file."""

    file: int  # index in Study.files
    run: int | None  # 1-based position in a multi-run file; None: the whole file
    path: str
    config: str
    context: dict

    @property
    def where(self) -> str:
        item = f"files[{self.file}]" + (f".runs[{self.run - 1}]" if self.run else "")
        return f"{item} ({self.path})"


@dataclass
class Study:
    id: str
    title: str
    label: str
    reconstructed: bool
    root: Path
    sources: dict = field(default_factory=dict)
    configs: dict = field(default_factory=dict)
    files: list[FileEntry] = field(default_factory=list)
    description: str = ""
    todo: list = field(default_factory=list)  # what `benchbook new` could not read from the files
    manifest: dict = field(default_factory=dict, repr=False)  # study.yml as parsed, for text checks

    def path(self, entry: FileEntry) -> Path:
        return self.root / entry.path

    def run_entries(self) -> list[RunEntry]:
        """Every described run: one per file, or one per item of a file's `runs`."""
        out = []
        for i, f in enumerate(self.files):
            if not f.runs:
                out.append(RunEntry(i, None, f.path, f.config, dict(f.context)))
                continue
            for k, item in enumerate(f.runs, 1):
                ctx = {**f.context, **{x: v for x, v in item.items() if x in RUN_CONTEXT}}
                out.append(RunEntry(i, k, f.path, str(item.get("config", f.config)), ctx))
        return out


def load_study(data_dir: str | Path, *, verify: bool = True) -> Study:
    """Parse and check a study folder; raise StudyError listing every problem found."""
    study, problems = inspect_study(data_dir, verify=verify)
    if problems:
        raise StudyError(problems)
    return study


def inspect_study(data_dir: str | Path, *, verify: bool = True) -> tuple[Study | None, list[str]]:
    """The study as far as it can be read, and every problem found (`benchbook validate`).

    The Study is None only when the manifest itself cannot be read; otherwise it lists
    the entries that could be parsed, so their files can still be checked.
    """
    root = Path(data_dir)
    problems: list[str] = []
    manifest = root / MANIFEST
    if not manifest.is_file():
        return None, [f"{manifest}: missing; expected a study manifest ({MANIFEST})"]
    try:  # bytes: PyYAML reads UTF-8 and UTF-16 by their BOM itself
        doc = load_yaml(manifest.read_bytes())
    except yaml.reader.ReaderError as exc:
        return None, [f"{manifest}:byte {exc.position}: not UTF-8 text ({exc.reason}); "
                      "expected a UTF-8 YAML file"]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        return None, [f"{manifest}{where}: not valid YAML ({' '.join(str(exc).split())})"]  # one line
    if not isinstance(doc, dict):
        return None, [f"{manifest}: expected a mapping at the top level (study, title, label, configs, files, ...)"]

    for key in REQUIRED_TOP:
        if key not in doc:
            problems.append(f"{manifest}: missing key '{key}'")
    for key in sorted(set(doc) - TOP_KEYS):
        problems.append(f"{manifest}: unknown key '{key}' (known: {', '.join(sorted(TOP_KEYS))})")

    configs = doc.get("configs") or {}
    if not isinstance(configs, dict):
        problems.append(f"{manifest}: 'configs' must map config ids to their description")
        configs = {}
    for cid in [c for c, v in configs.items() if not isinstance(v, dict)]:
        problems.append(f"{manifest}: configs.{cid}: expected a mapping of settings (platform, engine, ...)")
        configs[cid] = {}
    labels: dict[str, str] = {}
    for cid, config in configs.items():
        label = str(config.get("label") or cid)
        if label in labels:
            problems.append(f"{manifest}: configs.{cid}: label '{label}' is also configs.{labels[label]}'s; "
                            "give each configuration its own label (pages and tables name them by it)")
        labels.setdefault(label, cid)
    files = _parse_files(doc.get("files") or [], configs, root, manifest, problems)

    study = Study(
        id=str(doc.get("study", root.name)),
        title=str(doc.get("title", "")),
        label=str(doc.get("label", "")),
        reconstructed=bool(doc.get("reconstructed", False)),
        root=root,
        sources=doc.get("sources") or {},
        configs=configs,
        files=files,
        description=str(doc.get("description", "")),
        todo=[str(t) for t in doc.get("todo") or []],
        manifest=doc,
    )
    problems += _unlisted_files(study)
    if verify:
        problems += verify_checksums(study)
    return study, problems


def _parse_files(items, configs, root: Path, manifest: Path, problems: list[str]) -> list[FileEntry]:
    if not isinstance(items, list):
        problems.append(f"{manifest}: 'files' must be a list of file entries")
        return []
    out, seen_paths, seen_names = [], set(), set()
    for i, item in enumerate(items):
        where = f"{manifest}: files[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a mapping with at least 'path' and 'config'")
            continue
        for key in sorted(set(item) - FILE_KEYS):
            problems.append(f"{where}: unknown key '{key}' (known: {', '.join(sorted(FILE_KEYS))})")
        path, config = item.get("path"), item.get("config")
        if not path:
            problems.append(f"{where}: missing key 'path'")
            continue
        rel = PurePosixPath(str(path))
        if rel.is_absolute() or ".." in rel.parts:
            problems.append(f"{where}: path '{path}' escapes the data folder; give a path inside it")
            continue
        if not (root / rel).resolve().is_relative_to(root.resolve()):
            problems.append(f"{where}: path '{path}' is a link out of the data folder; copy the file in")
            continue
        if not (root / rel).is_file():
            problems.append(f"{where}: listed file '{path}' does not exist")
        if str(rel) in seen_paths:
            problems.append(f"{where}: file '{path}' is listed twice")
        seen_paths.add(str(rel))
        if config is None:
            problems.append(f"{where}: missing key 'config'")
        elif isinstance(config, (list, dict)) or config not in configs:
            problems.append(f"{where}: config '{config}' is not defined under 'configs'")
        context = {k: v for k, v in item.items() if k in RUN_CONTEXT}
        _check_name(context, where, seen_names, problems)
        runs = _parse_runs(item.get("runs"), configs, where, seen_names, problems)
        out.append(FileEntry(str(rel), str(config), context, item.get("format"), runs))
    return out


def _check_name(context: dict, where: str, seen: set, problems: list[str]) -> None:
    name = context.get("name")
    if isinstance(name, (list, dict)):
        problems.append(f"{where}: 'name' must be a single word, found {name!r}")
        context.pop("name")
    elif name is not None:
        if name in seen:
            problems.append(f"{where}: run name '{name}' is used twice")
        seen.add(name)


def _parse_runs(items, configs: dict, where: str, seen: set, problems: list[str]) -> tuple:
    if items is None:
        return ()
    if not isinstance(items, list):
        problems.append(f"{where}: 'runs' must be a list, one mapping per run of the file in file order")
        return ()
    out = []
    for k, item in enumerate(items):
        at = f"{where}.runs[{k}]"
        if not isinstance(item, dict):
            problems.append(f"{at}: expected a mapping (config, name, kind, concurrency, ...)")
            item = {}
        for key in sorted(set(item) - RUN_KEYS):
            problems.append(f"{at}: unknown key '{key}' (known: {', '.join(sorted(RUN_KEYS))})")
        if "config" in item and (isinstance(item["config"], (list, dict)) or item["config"] not in configs):
            problems.append(f"{at}: config '{item['config']}' is not defined under 'configs'")
        item = dict(item)
        _check_name(item, at, seen, problems)
        out.append(item)
    return tuple(out)


def raw_files(root: Path) -> list[str]:
    """Every data file under the folder (relative POSIX paths), bookkeeping files excluded."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() not in NOT_RAW
    )


def _unlisted_files(study: Study) -> list[str]:
    listed = {f.path for f in study.files}
    return [
        f"{study.root / rel}: present in the data folder but not listed in {MANIFEST}; "
        "list it under 'files' or remove it"
        for rel in raw_files(study.root)
        if rel not in listed
    ]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_checksums(root: Path) -> dict[str, str]:
    sums = root / CHECKSUMS
    out = {}
    if not sums.is_file():
        return out
    try:
        text = sums.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise StudyError([f"{sums}:byte {exc.start}: not UTF-8 text; expected sha256sum output"]) from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise StudyError([f"{sums}:{n}: expected '<sha256>  <path>' (sha256sum format)"])
        out[name.strip()] = digest
    return out


def verify_checksums(study: Study) -> list[str]:
    """Problems where a raw file differs from, or is missing in, SHA256SUMS."""
    sums_path = study.root / CHECKSUMS
    if not sums_path.is_file():
        return [f"{sums_path}: missing; run `benchbook validate {study.root} --update-checksums`"]
    try:
        sums = read_checksums(study.root)
    except StudyError as exc:
        return exc.problems
    problems = []
    for entry in study.files:
        path = study.path(entry)
        if not path.is_file():
            continue  # reported as missing already
        if entry.path not in sums:
            problems.append(f"{sums_path}: no checksum for '{entry.path}'")
        elif sha256_file(path) != sums[entry.path]:
            problems.append(
                f"{path}: content changed since its checksum was recorded in {CHECKSUMS}; "
                f"if the change is deliberate, run `benchbook validate {study.root} --update-checksums`"
            )
    return problems


def write_checksums(root: Path) -> Path:
    """Record the checksum of every raw file: the deliberate way to accept a change."""
    lines = [f"{sha256_file(root / rel)}  {rel}\n" for rel in raw_files(root)]
    out = root / CHECKSUMS
    out.write_text("".join(lines), encoding="utf-8")
    return out


def content_hash(path: str | Path) -> str:
    """A hash of a file, or of every file in a folder (names and contents)."""
    path = Path(path)
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(sha256_file(path).encode())
        return digest.hexdigest()
    for p in sorted(q for q in path.rglob("*") if q.is_file()):
        digest.update(p.relative_to(path).as_posix().encode() + b"\0")
        digest.update(sha256_file(p).encode() + b"\n")
    return digest.hexdigest()

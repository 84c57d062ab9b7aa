"""The `benchbook` command: a thin layer over the library."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import __version__, ingest
from .book.paths import ChapterError, find_repo
from .ingest import IngestError
from .ingest.textio import load_yaml
from .site.runner import Chapter, studies
from .study.folder import StudyError, inspect_study, write_checksums

# polars' allocator (jemalloc) keeps freed pages for 10 s by default, which on a long log
# reads as memory growing with the file; a short decay returns them at once (set before
# polars is first imported, as `benchbook` does; a user's own setting wins).
ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:100,muzzy_decay_ms:0")


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault(*ALLOCATOR)
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (ChapterError, IngestError, StudyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a bare traceback for a user; BENCHBOOK_DEBUG=1 shows it
        if os.environ.get("BENCHBOOK_DEBUG") == "1":
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (a bug in benchbook; "
              "run again with BENCHBOOK_DEBUG=1 for the traceback and report it)", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchbook", description=__doc__)
    p.add_argument("--version", action="version", version=f"benchbook {__version__}")
    sub = p.add_subparsers(required=True, metavar="COMMAND")

    s = sub.add_parser("list", help="list the studies and whether each chapter is up to date")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("run", help="execute one chapter with papermill (on another data folder with --data)")
    s.add_argument("study")
    s.add_argument("--data", type=Path, help="folder of raw files laid out like data/<study>/")
    s.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="set a notebook parameter (VALUE is read as YAML, as papermill does)")
    s.add_argument("--force", action="store_true",
                   help="execute even if nothing changed (and not from BENCHBOOK_STORE)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("build", help="execute stale chapters and build the book (jupyter-book build book)")
    s.add_argument("--strict", action="store_true", help="turn Sphinx warnings into errors")
    s.add_argument("--path-output", help="where _build goes (default: book/)")
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("ingest", help="read raw files and write the tidy rows as Parquet or CSV")
    s.add_argument("files", nargs="+", type=Path, metavar="DIR|FILE",
                   help="raw files, or folders: every file under a folder whose format is recognised")
    s.add_argument("--out", type=Path, required=True,
                   help="a file for one table (the one chosen with --table, or the only one the files "
                        "yield): NAME.parquet or NAME.csv; otherwise a folder (created if missing) that "
                        "gets one Parquet dataset per table, <table>/part-FFFFF-BBBBB-KKK.parquet (input "
                        "file, batch, piece), or one <table>.csv per table with --as csv")
    s.add_argument("--table", action="append", metavar="TABLE",
                   help="write only this table (e.g. windows, runs); repeat for several (into a folder). "
                        "A server log then parses only the lines of these tables")
    s.add_argument("--as", dest="as_", choices=("parquet", "csv"), default="parquet",
                   help="what a folder --out gets (default parquet)")
    s.add_argument("--jobs", type=int, default=0,
                   help="files read at once, each in its own process (default: the number of cores, "
                        "at most one per file); Parquet output only, CSV is written in order by one process")
    s.add_argument("--format", help="skip detection and use this format")
    s.add_argument("--batch-rows", type=int, default=100_000,
                   help="rows per batch when streaming a server log (memory grows with it; default 100000)")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("new", help="make a data folder for a chapter from raw files (writes study.yml)")
    s.add_argument("chapter", help="the chapter the data is for, e.g. h100-dense-vs-moe-mtp")
    s.add_argument("dir", type=Path, help="the new data folder (must not exist, or be empty)")
    s.add_argument("files", nargs="+", type=Path, help="raw files: bench JSON, server logs, llama-bench output, ...")
    s.set_defaults(func=cmd_new)

    s = sub.add_parser("new-chapter", help="make a chapter from the template: its folder, notebook, test and TOC line")
    s.add_argument("chapter", help="the new chapter's id, e.g. my-machine (names its page, data folder and module)")
    s.add_argument("--title", help="the page's title (default: from the id)")
    s.set_defaults(func=cmd_new_chapter)

    s = sub.add_parser("needs", help="what a chapter needs from a data folder: roles, run kinds, sections")
    s.add_argument("chapter", help="a chapter id, e.g. gb10-mtp")
    s.set_defaults(func=cmd_needs)

    s = sub.add_parser("validate", help="check a data folder: manifest, files, checksums and the chapter's contract")
    s.add_argument("target", help="a study id or a data folder")
    s.add_argument("--chapter", help="check against this chapter's contract (default: the folder's study id)")
    s.add_argument("--update-checksums", action="store_true",
                   help="accept the current raw files: rewrite SHA256SUMS")
    s.add_argument("--quick", action="store_true",
                   help="do not run the chapter: list the sections the files' run kinds allow, not the "
                        "ones the page will show (which also depend on what the files hold)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                   help="a parameter the page will run with (as for `benchbook run`), e.g. -p price_per_hour 2.5")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("publish", help="build the book into a versioned GitHub Pages tree (site/<VERSION>/)")
    s.add_argument("--version", dest="publish_version", required=True, metavar="VERSION",
                   help="vX.Y.Z (a release), a pre-release such as v1.0.0rc1, or dev (main)")
    s.add_argument("--site", type=Path, help="the tree (default: site/ in the project)")
    s.add_argument("--html", type=Path, help="publish this build instead of building "
                   "(made with BENCHBOOK_VERSION=VERSION jupyter-book build book)")
    s.add_argument("--base-url", default="/", help="where the tree is served, e.g. /<repo>/ on GitHub Pages")
    s.add_argument("--allow-warnings", action="store_true", help="do not turn Sphinx warnings into errors")
    s.add_argument("--allow-untagged", action="store_true",
                   help="publish a release although the checked-out commit is not tagged with its name")
    s.set_defaults(func=cmd_publish)
    return p


def cmd_list(args) -> int:
    repo = find_repo()
    for study in studies(repo):
        chapter = Chapter(repo, study)
        state = "up to date" if not chapter.is_stale() else "stale (will execute on next build)"
        over = {k: v for k, v in chapter.overrides().items() if k != "data_dir"}
        extra = f"  parameters: {over}" if over else ""
        print(f"{study:26s} {_shown_path(chapter.data_dir(), repo):42s} {state}{extra}")
    return 0


def _shown_path(folder: str | None, repo: Path) -> str:
    """A chapter's data folder as `benchbook list` prints it: repo-relative where it can be."""
    if not folder:
        return "(reads other chapters)"
    path = (repo / folder).resolve()  # notebooks run with the repository as working directory
    try:
        return str(path.relative_to(repo)) + "/"
    except ValueError:
        return str(path) + "/"


def cmd_needs(args) -> int:
    from .book import registry
    from .study.contract import describe

    try:
        spec = registry.get(args.chapter)
    except KeyError as exc:
        raise ChapterError(exc.args[0]) from None
    if spec.contract is None:
        print(f"{spec.id} reads no data folder of its own; it uses the outputs of: {', '.join(spec.uses)}")
    else:
        print(f"{spec.id}: {spec.title}\n{describe(spec.contract)}")
    return 0


def cmd_run(args) -> int:
    repo = find_repo()
    chapter = Chapter(repo, args.study)
    overrides = {name: load_yaml(value) for name, value in args.parameter}
    if args.data is not None:
        if not args.data.is_dir():
            raise ChapterError(f"{args.data}: not a folder; expected a data folder like data/{args.study}/")
        overrides["data_dir"] = str(args.data.resolve())
    chapter.effective_parameters(overrides)  # fail early on unknown names
    if not args.force and not chapter.is_stale(overrides):
        print(f"{args.study}: up to date with these inputs; nothing to do (use --force to re-execute)")
        chapter.remember(overrides)
        return 0
    chapter.execute(overrides, restore=not args.force)  # --force runs the notebook, never a stored run
    print("the next `jupyter-book build book` shows these results")
    return 0


def cmd_build(args) -> int:
    """`jupyter-book build book`; the Sphinx extension executes stale chapters first."""
    repo = find_repo()
    exe = Path(sys.executable).parent / "jupyter-book"
    if not exe.exists():
        exe = shutil.which("jupyter-book")
    if not exe:
        raise ChapterError("jupyter-book is not installed in this environment; run `make book` once")
    cmd = [str(exe), "build", str(repo / "book")]
    if args.strict:
        cmd += ["-W", "-n", "--keep-going"]
    if args.path_output:
        cmd += ["--path-output", args.path_output]
    return subprocess.call(cmd, cwd=repo)


def cmd_ingest(args) -> int:
    """Write the files' tables batch by batch (a server log of any size is streamed, so the
    memory does not grow with it): one table to the file --out (NAME.parquet or NAME.csv),
    or every table to the folder --out (Parquet datasets, or CSV files with --as csv)."""
    suffix = args.out.suffix.lower()
    if args.table and len(args.table) > 1 and suffix in (".csv", ".parquet"):
        raise IngestError(args.out, None, f"is one file and --table names {len(args.table)} tables; give a "
                          "folder as --out for several")
    if suffix not in (".csv", ".parquet") and args.out.exists() and not args.out.is_dir():
        raise IngestError(args.out, None, "exists and is not a folder; expected a folder for one dataset "
                          "(or <table>.csv) per table, or a name ending in .parquet or .csv (with --table "
                          "if several)")
    files = _ingest_inputs(args.files, args.format, args.table)
    if suffix == ".parquet" or (suffix != ".csv" and args.as_ == "parquet"):
        from .ingest.batch import ingest_to_parquet

        return ingest_to_parquet(files, args)
    one_file = suffix == ".csv"
    writers: dict[str, _CsvWriter] = {}
    try:
        for path in files:
            batches = ingest.Batches(path, fmt=args.format, batch_rows=args.batch_rows, tables=args.table)
            for tables in batches:
                for table, df in _tables_to_write(path, tables, args, writers).items():
                    if table not in writers:
                        writers[table] = _CsvWriter(args.out if one_file else args.out / f"{table}.csv")
                    writers[table].write(path, df)
            print(batches.result.summary())
        for writer in writers.values():
            writer.commit()
    finally:
        for writer in writers.values():
            writer.discard()
    for table, writer in writers.items():
        print(f"wrote {writer.rows} rows of {table} to {writer.path}")
    return 0


def _ingest_inputs(paths: list[Path], fmt: str | None, tables: list[str] | None = None) -> list[Path]:
    """The files to read: each FILE as given, and under each folder every file (sorted,
    hidden ones left out) whose format is recognised and, with --table, that can hold one
    of those tables; the others are named as skipped."""
    files = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = 0
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            if any(part.startswith(".") for part in f.relative_to(path).parts):
                continue
            if fmt is None:
                try:
                    mod = ingest.detect(f)
                except IngestError as exc:
                    print(f"skipped {exc}")
                    continue
                if tables and not set(tables) & set(getattr(mod, "TABLES", tables)):
                    print(f"skipped {f}: a {mod.FORMAT} file has no table {' or '.join(tables)}")
                    continue
            files.append(f)
            found += 1
        if not found:
            raise IngestError(path, None, "holds no file of a known format" + (
                f" with a table {' or '.join(tables)}" if tables else ""))
    return files


def _tables_to_write(path: Path, tables: dict, args, writers: dict) -> dict:
    """The tables of one batch that go to --out: the chosen ones, the only one, or all."""
    if args.table is not None:
        return {t: tables[_ingest_table(path, tables, t)] for t in args.table}
    if args.out.suffix.lower() != ".csv":
        return tables
    names = list(tables)
    if len(names) > 1:
        raise IngestError(path, None, f"yields several tables ({', '.join(names)}) and --out {args.out} is "
                          "one CSV file: give a folder as --out (one <table>.csv each), or choose one "
                          "with --table")
    if writers and names[0] not in writers:
        raise IngestError(path, None, f"yields the table {names[0]}, unlike the files before it "
                          f"({', '.join(writers)}); give a folder as --out, or ingest it on its own")
    return tables


class _CsvWriter:
    """One table's CSV, written batch by batch to `<path>.part` and renamed to `path` only
    when every file was read (a failed ingest leaves no partial CSV). polars writes it (ten
    times faster than pandas' writer on a log's windows); a missing value, NaN included,
    is an empty field."""

    def __init__(self, path: Path):
        self.path, self.part = path, path.with_name(path.name + ".part")
        self.header: list[str] | None = None
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.part, "wb")

    def write(self, source: Path, df) -> None:
        import polars.selectors as cs

        from .ingest.parquet import to_polars

        first = self.header is None
        if first:
            self.header = list(df.columns)
        frame = to_polars(_in_columns(source, df, self.header)).with_columns(cs.float().fill_nan(None))
        frame.write_csv(self.fh, include_header=first, null_value="", datetime_format="%Y-%m-%d %H:%M:%S%.f")
        self.rows += len(df)

    def commit(self) -> None:
        self.fh.close()
        os.replace(self.part, self.path)

    def discard(self) -> None:
        self.fh.close()
        self.part.unlink(missing_ok=True)


def _ingest_table(path: Path, tables: dict, wanted: str) -> str:
    if wanted not in tables:
        raise IngestError(path, None, f"has no table {wanted!r}; it yields: {', '.join(tables)}")
    return wanted


def _in_columns(path: Path, df, header: list[str]):
    """`df` in the CSV's columns: those it lacks are empty; one it has beyond them is an
    error unless empty (a CSV's header cannot grow once written)."""
    extra = [c for c in df.columns if c not in header]
    if extra and df[extra].notna().any().any():
        raise IngestError(path, None, f"has column(s) {extra} with values that the CSV begun from the files "
                          f"before it lacks ({', '.join(header)}); write it to a CSV of its own")
    return df.reindex(columns=header)


def cmd_validate(args) -> int:
    """Every problem at once: manifest, checksums, every listed file that exists, and the
    chapter's contract; then what the chapter can show from this data and what is left to do."""
    target = Path(args.target)
    if not target.is_dir():
        target = find_repo() / "data" / args.target
    if not target.is_dir():
        raise StudyError([f"{args.target}: neither a data folder nor a study id under data/"])
    if args.update_checksums:
        print(f"wrote {write_checksums(target)}")
    study, problems = inspect_study(target)
    sections = {}
    if study is not None:
        data, read_problems = _ingest_present(study)
        problems += read_problems
        for row in data.report.itertuples():
            print(f"  {row.file}: {row.read} records read, {row.ignored} ignored {row.reasons}".rstrip()
                  + (f"; {row.notes}" if row.notes else ""))
        warnings, url_problems = _text_checks(study, data)
        for warning in warnings:
            print(f"  warning: {warning}")
        problems += url_problems
        spec = _chapter_for(study, args.chapter)
        if spec is not None and spec.contract is not None:
            from .book.pipeline import contract_problems
            from .study.contract import available

            problems += contract_problems(data, spec.contract)
            sections = available(spec.contract, data.described, {p: True for p in spec.reads})
            what = "the files' run kinds allow"
            if not args.quick and not problems:
                repo = _repo_or_none()
                if repo is None:
                    print("  (not inside the book's folder, so the chapter was not run: the sections below are "
                          "what the files' run kinds allow; run validate from the book to see the page's)")
                else:
                    sections, why = _page_sections(repo, spec, target, args.param)
                    problems += why
                    what = "the page will show"
            if not problems or args.quick:
                _print_sections(spec, sections, what)
        elif study.id and spec is None:
            print(f"  (study '{study.id}' is no chapter of this book; contract not checked; "
                  "give --chapter to check one)")
        for item in study.todo:
            print(f"  to do: {item}")
    if problems:
        print(f"{target}: {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"{target}: OK ({len(study.files)} files, checksums verified"
          + (f"; {len(study.todo)} to-do item(s) above" if study.todo else "") + ")")
    return 0


def _repo_or_none() -> Path | None:
    from .book.paths import ChapterError

    try:
        return find_repo()
    except ChapterError:
        return None


def _page_sections(repo: Path, spec, target: Path, params) -> tuple[dict, list[str]]:
    """What the page will show on this folder: the chapter's own analysis decides
    (runner.Chapter.sections); a chapter that fails on the data is a problem to report."""
    from .book.paths import ChapterError
    from .site.runner import Chapter

    try:
        chapter = Chapter(repo, spec.id)
        return chapter.sections(target, {k: load_yaml(v) for k, v in params}), []
    except ChapterError as exc:
        return {}, [str(exc)]
    except Exception as exc:  # noqa: BLE001 - the user's data reached a chapter bug: say so, no traceback
        return {}, [f"{target}: chapter {spec.id} stops on this data ({type(exc).__name__}: {exc}); "
                    "this is a bug in the chapter: please report it with this folder"]


def _print_sections(spec, sections: dict, what: str) -> None:
    shown = [s.title for s in spec.contract.sections if sections.get(s.id) is None]
    print(f"  chapter {spec.id}, {what}: {'; '.join(shown) or 'none of its sections'}")
    for s in spec.contract.sections:
        if sections.get(s.id) is not None:
            print(f"  not in this data: {s.title} ({'; '.join(sections[s.id].lacking)})")


def _ingest_present(study):
    """Tables of the listed files that exist, and the problems of those that cannot be read."""
    from dataclasses import replace

    from .study.load import StudyReadError, ingest_study

    present = replace(study, files=[f for f in study.files if study.path(f).is_file()])
    try:
        return ingest_study(present), []
    except StudyReadError as exc:
        return exc.partial, exc.problems


def _text_checks(study, data) -> tuple[list[str], list[str]]:
    """Names that will surprise a reader (markup, control characters, very long) and link
    targets that are not http(s); every name is shown literally on the pages regardless."""
    from .study.untrusted import scan

    return scan(study.manifest, data.tables)


def _chapter_for(study, chapter: str | None):
    from .book.registry import get

    try:
        return get(chapter or study.id)
    except KeyError:
        if chapter:
            raise StudyError([f"--chapter {chapter}: no such chapter"]) from None
        return None


def cmd_new(args) -> int:
    from .scaffold.new import new_study

    new_study(args.chapter, args.dir, args.files)
    return 0


def cmd_new_chapter(args) -> int:
    from .scaffold.chapter import new_chapter

    new_chapter(find_repo(), args.chapter, args.title)
    return 0


def cmd_publish(args) -> int:
    from .site.publish import PublishError, publish

    try:
        publish(args.publish_version, site=args.site, html_dir=args.html, base_url=args.base_url,
                strict=not args.allow_warnings, allow_untagged=args.allow_untagged)
    except PublishError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

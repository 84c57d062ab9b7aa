"""Execute a chapter with papermill when, and only when, its inputs changed.

A chapter's cache key hashes everything its numbers depend on: the jupytext notebook,
the effective parameters, the content of every file or folder a parameter points to
(jupyter-cache alone would miss data files), the library's version and the source it
imports, and the outputs it reads from other chapters.
The key is stored in the executed notebook's metadata; a build re-executes a chapter
only when the key differs. Overrides given to `benchbook run` are remembered in
``book/studies/<study>.run.json`` so the next `jupyter-book build` keeps using them.
"""

from __future__ import annotations

import ast
import atexit
import copy
import functools
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .. import __version__
from ..book.paths import NOTEBOOKS_DIR, STUDIES_DIR, ChapterError, downloads_dir
from ..book.registry import chapters, get
from ..book.spec import ChapterSpec
from ..ingest.textio import load_yaml
from ..study import untrusted
from ..study.folder import content_hash
from ..study.marks import (
    figure_legend_text,
    legend_html,
    legend_items,
    marked_html,
    merge_legends,
    replace_legends,
    short,
)
from . import memo, store

LIB_DIR = Path(__file__).resolve().parents[1]  # the benchbook package
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def studies(repo: Path) -> list[str]:
    """Chapter ids: the registry's chapters whose notebook is in notebooks/, then any other
    notebook there (a chapter being written, before it has a registry entry)."""
    here = {p.stem for p in (repo / NOTEBOOKS_DIR).glob("*.md")}
    known = [c.id for c in chapters() if c.notebook_name in here]
    notebooks = {c.notebook_name for c in chapters()}
    return known + sorted(here - set(known) - notebooks)


def spec_for(study: str):
    """The chapter's registry entry; a notebook without one gets a bare entry of its own."""
    try:
        return get(study)
    except KeyError:
        return ChapterSpec(study, "", study)


@dataclass
class Chapter:
    repo: Path
    study: str

    @property
    def spec(self):
        return spec_for(self.study)

    @property
    def source(self) -> Path:
        return self.repo / NOTEBOOKS_DIR / f"{self.spec.notebook_name}.md"

    @property
    def output(self) -> Path:
        return self.repo / STUDIES_DIR / f"{self.study}.ipynb"

    @property
    def run_file(self) -> Path:
        return self.repo / STUDIES_DIR / f"{self.study}.run.json"

    def overrides(self) -> dict:
        """Parameters remembered from the last `benchbook run` (none: the defaults)."""
        if self.run_file.is_file():
            return json.loads(self.run_file.read_text(encoding="utf-8"))["parameters"]
        return {}

    def remember(self, overrides: dict) -> None:
        self.run_file.parent.mkdir(parents=True, exist_ok=True)
        if overrides:
            _atomic_write(self.run_file, json.dumps({"parameters": overrides}, indent=2, sort_keys=True))
        elif self.run_file.exists():
            self.run_file.unlink()

    def outputs(self) -> list[str]:
        """Files the chapter wrote beside its notebook (downloads), relative to the repo."""
        folder = downloads_dir(self.study, self.repo)
        return sorted(p.relative_to(self.repo).as_posix() for p in folder.rglob("*") if p.is_file())

    def read_source(self):
        """The jupytext notebook, a copy of its own to change (execute sets its kernel)."""
        return copy.deepcopy(self._parsed())

    def _version(self) -> int:
        """The notebook file's version (its mtime); a missing notebook is a ChapterError naming
        the known studies."""
        if not self.source.is_file():
            raise ChapterError(f"{self.source}: no such notebook; known studies: {', '.join(studies(self.repo))}")
        return self.source.stat().st_mtime_ns

    def _parsed(self):
        """The notebook as parsed once per version of the file: read it, never change it."""
        return _parsed_notebook(self.source, self._version())

    def _outline(self) -> tuple[tuple[str, ...], str]:
        """What a build needs of the notebook: its parameters cells and its code."""
        return _notebook_outline(self.source, self._version())

    def _cell_defaults(self) -> dict:
        """The literal defaults of the notebook's parameters cell."""
        return copy.deepcopy(dict(_parameters_cell(self.source, self._version())))

    def defaults(self) -> dict:
        """The notebook's parameters cell, with this page's registry overrides."""
        params = self._cell_defaults()
        params.update(self.spec.parameters)
        return params

    def effective_parameters(self, overrides: dict) -> dict:
        """The page's defaults, each cross-read pointed at the data folder the chapter it
        reads now uses (so `benchbook run X --data DIR` reaches the pages that read X's
        data), then the overrides."""
        params = self.defaults()
        unknown = sorted(set(overrides) - set(params))
        if unknown:
            raise ChapterError(
                f"{self.source}: unknown parameter(s) {', '.join(unknown)}; "
                f"the parameters cell defines: {', '.join(params)}"
            )
        for param, other in self.spec.reads.items():
            if param in params and param not in overrides and other in studies(self.repo):
                params[param] = Chapter(self.repo, other).data_dir()
        params.update(overrides)
        return params

    def analysed(self, overrides: dict | None = None):
        """The chapter's results as its page computes them: its module's `analyse`, called
        with the parameters the page would get (`overrides` on top), so `benchbook validate`,
        the tests and the page answer from one function. Raises what the chapter raises."""
        import inspect
        from contextlib import chdir
        from importlib import import_module

        params = self.effective_parameters(dict(overrides or {}))
        analyse = import_module(self.spec.module).analyse
        wanted = inspect.signature(analyse).parameters
        with chdir(self.repo):  # the parameters' relative paths are the notebook's, run from the repo
            return analyse(**{k: v for k, v in params.items() if k in wanted})

    def sections(self, data_dir, overrides: dict | None = None) -> dict:
        """Section id -> None or what it lacks, as the page on `data_dir` will show it."""
        return dict(self.analysed({**(overrides or {}), "data_dir": str(Path(data_dir).resolve())}).sections)

    def data_dir(self) -> str | None:
        """The data folder this chapter reads (its `data_dir`, remembered or default)."""
        over = self.overrides()
        if "data_dir" in over:
            return over["data_dir"]
        return self.defaults().get("data_dir")

    def injected(self, overrides: dict) -> dict:
        """What papermill sets: every effective parameter that differs from the notebook's cell."""
        cell = self._cell_defaults()
        return {k: v for k, v in self.effective_parameters(overrides).items() if cell.get(k, object()) != v}

    def cache_key(self, overrides: dict) -> str:
        """Hash of the notebook, parameters, the data they name, the code the chapter
        imports, and the outputs of the chapters it uses (outputs_digest): nothing else."""
        params = self.effective_parameters(overrides)
        inputs = {}
        for name, value in sorted(params.items()):
            if isinstance(value, str) and value:
                path = Path(value) if Path(value).is_absolute() else self.repo / value
                if path.exists():
                    inputs[name] = content_hash(path)
        for pattern in self.spec.files:  # what the page reads beyond its parameters, declared
            found = sorted(self.repo.glob(pattern))
            inputs[pattern] = {p.relative_to(self.repo).as_posix(): content_hash(p) for p in found}
        uses = {u: Chapter(self.repo, u).outputs_digest() for u in self.spec.uses if u in studies(self.repo)}
        doc = dict(
            notebook=_sha(self.source.read_bytes()),
            parameters=params,
            inputs=inputs,
            library=[__version__, code_digest(self.imports())],
            uses=uses,
        )
        return _sha(json.dumps(doc, sort_keys=True, default=str).encode())

    def outputs_digest(self) -> str:
        """Hash of what this chapter leaves for other pages: its chapter.json and the tables
        it names there. A page that uses them depends on these files, not on how they were
        made, so rerunning this chapter re-executes that page only when they changed."""
        folder = downloads_dir(self.study, self.repo)
        info = folder / "chapter.json"
        if not info.is_file():
            return "no outputs"
        try:
            names = sorted(str(n) for n in (json.loads(info.read_text(encoding="utf-8")).get("outputs") or {}).values())
        except (ValueError, AttributeError):  # unreadable: the page that reads it says so
            names = []
        files = {name: content_hash(folder / name) if (folder / name).is_file() else "absent"
                 for name in ["chapter.json", *names]}
        return _sha(json.dumps(files, sort_keys=True).encode())

    def imports(self) -> list[str]:
        """benchbook modules the notebook and its chapter module import, transitively, and the chapter
        folders of the data folders it reads."""
        roots = set(_imported(self._outline()[1], "benchbook"))
        if self.spec.folder:
            roots.add(self.spec.module)
        # the registry finds chapter folders at run time, so the folders whose data this page
        # reads (and whose contract it applies to that data) are named here
        roots |= {spec.module for spec in map(spec_for, self.spec.reads.values()) if spec.folder}
        return import_closure(roots)

    def stored_key(self) -> str | None:
        """The key the executed notebook was made with; None if it or its downloads are gone."""
        if not self.output.is_file():
            return None
        try:  # the metadata only: validating the whole notebook took a tenth of a no-op build
            meta = json.loads(self.output.read_bytes())["metadata"].get("benchbook", {})
        except Exception:  # a damaged output is simply stale
            return None
        if not all((self.repo / f).is_file() for f in meta.get("outputs", [])):
            return None
        return meta.get("cache_key")

    def is_stale(self, overrides: dict | None = None) -> bool:
        overrides = self.overrides() if overrides is None else overrides
        return self.stored_key() != self.cache_key(overrides)

    def _remove_stale_temps(self) -> None:
        """Temporary files left by a run that was killed; the next run cleans them up.

        Called under the chapter's lock, so no live run of this chapter owns a temp
        notebook; a file whose pid is still alive is left alone all the same.
        """
        own = re.compile(rf"\.{re.escape(self.study)}\.(?:run\.json\.)?(\d+)\.tmp(?:\.ipynb)?")
        for path in self.output.parent.glob(f".{self.study}.*"):
            m = own.fullmatch(path.name)
            if m and (int(m.group(1)) == os.getpid() or not _alive(int(m.group(1)))):
                path.unlink(missing_ok=True)

    def execute(self, overrides: dict | None = None, log=print, restore: bool = True) -> Path:
        """Run the notebook with papermill into a temporary file, then move it into place.
        With a store (benchbook.site.store) holding this key, and `restore`, put that in place."""
        import papermill as pm
        from filelock import FileLock

        overrides = self.overrides() if overrides is None else overrides
        self.output.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.output) + ".lock"):
            self._remove_stale_temps()
            key = self.cache_key(overrides)
            with store.claim(key):  # another process executing this key: wait, then restore it
                entry = store.lookup(key) if restore else None
                if entry is not None:  # executed before, to the same key, in another copy of the project
                    store.restore(entry, self.output, downloads_dir(self.study, self.repo))
                    restored = nbformat.read(self.output, as_version=4)
                    restored.metadata["benchbook"]["parameters"] = sorted(overrides)  # this run's, same effect
                    nbformat.write(restored, self.output)
                    self.remember(overrides)
                    log(f"restored {self.study} from the store ({store.ENV}), executed before to the same key")
                    return self.output
                nb = self.read_source()
                nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
                tmp = self.output.with_name(f".{self.study}.{os.getpid()}.tmp.ipynb")
                start = time.monotonic()
                log(f"executing {self.study} ({', '.join(f'{k}={v}' for k, v in overrides.items()) or 'defaults'})")
                try:
                    for attempt in range(1, KERNEL_STARTS + 1):
                        try:
                            with this_interpreter_kernel():
                                # The kernel's working folder is given to nbclient, not papermill's
                                # `cwd`: that one is os.chdir, process-wide, and chapters run in
                                # parallel threads would start kernels in whichever folder another
                                # thread left behind.
                                pm.execute_notebook(
                                    nb, str(tmp), parameters=self.injected(overrides), kernel_name=KERNEL,
                                    language="python", progress_bar=False, log_output=False,
                                    resources={"metadata": {"path": str(self.repo)}},
                                    # written once at the end, not after every cell (a third of a run)
                                    request_save_on_cell_execute=False,
                                    # every cell has finished and its outputs are in: stop the kernel
                                    # at once rather than wait for its graceful exit (about 0.5 s)
                                    shutdown_kernel="immediate",
                                )
                            break
                        except RuntimeError as exc:
                            if not _kernel_did_not_start(exc) or attempt == KERNEL_STARTS:
                                raise
                            log(f"{self.study}: the kernel died while starting ({exc}); no cell had run, "
                                f"starting another (attempt {attempt + 1} of {KERNEL_STARTS})")
                except pm.PapermillExecutionError as exc:
                    raise ChapterError(_describe_failure(self.study, exc)) from None
                finally:
                    if tmp.exists() and not _finished(tmp):
                        tmp.unlink()
                out = nbformat.read(tmp, as_version=4)
                _unpublish_parameters(out, self.run_file.name)
                _drop_absent_sections(out, downloads_dir(self.study, self.repo))
                _mark_assumed_sections(out, downloads_dir(self.study, self.repo))
                _mark_assumed_glue(out)
                _one_legend_per_section(out)
                _drop_empty_displays(out)
                dropped = _drop_prose_without_numbers(out)
                if dropped:
                    log(f"{self.study}: left out {len(dropped)} paragraph(s) quoting numbers this data does not "
                        f"have ({', '.join(dropped)}); the chapter should mark their section as absent")
                if self.spec.notebook and self.spec.notebook != self.study:
                    _second_page(out, self.spec.title, self.study)
                out.metadata["benchbook"] = dict(
                    cache_key=key, study=self.study, parameters=sorted(overrides),
                    library=__version__, seconds=round(time.monotonic() - start, 1),
                    outputs=self.outputs(),
                )
                nbformat.write(out, tmp)
                os.replace(tmp, self.output)
                self.remember(overrides)
                store.save(key, self.output, downloads_dir(self.study, self.repo))
                log(f"executed {self.study} in {time.monotonic() - start:.1f} s -> {self.output}")
        return self.output


KERNEL = "benchbook-python3"
# A kernel can die before it answers its first message on a busy machine (jupyter_client's
# "Kernel died before replying to kernel_info"); no cell has run then, so another start is
# safe. A chapter's own error (PapermillExecutionError) is never retried.
KERNEL_STARTS = 3
_NOT_STARTED = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")


def _kernel_did_not_start(exc: BaseException) -> bool:
    return any(m in str(exc) for m in _NOT_STARTED)


_KERNEL_LOCK = threading.Lock()
_KERNEL_DIR: str | None = None


@contextmanager
def this_interpreter_kernel():
    """Make the kernel `benchbook-python3` run this very interpreter.

    A user-level `python3` kernelspec may point at another Python without benchbook;
    a private spec first on JUPYTER_PATH rules that out, for venv and conda alike. It is
    made once per process (and removed at exit), so chapters executing in parallel
    threads never see JUPYTER_PATH change under them.
    """
    global _KERNEL_DIR
    with _KERNEL_LOCK:
        if _KERNEL_DIR is None:
            tmp = tempfile.mkdtemp(prefix="benchbook-kernel-")
            atexit.register(shutil.rmtree, tmp, ignore_errors=True)
            spec = Path(tmp, "kernels", KERNEL)
            spec.mkdir(parents=True)
            (spec / "kernel.json").write_text(json.dumps({
                # the kernel app logs a TCP-encryption notice per kernel; only errors matter here
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                         "--IPKernelApp.log_level=ERROR"],
                "display_name": "Python 3 (benchbook)", "language": "python",
            }))
            old = os.environ.get("JUPYTER_PATH")
            os.environ["JUPYTER_PATH"] = tmp + (os.pathsep + old if old else "")
            _KERNEL_DIR = tmp
    yield


def default_parameters(cells: tuple[str, ...], where: Path) -> dict:
    """Names and literal default values of the cell tagged `parameters` (`cells`: the sources
    of every cell so tagged)."""
    if len(cells) != 1:
        raise ChapterError(f"{where}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    params = {}
    for node in ast.parse(cells[0]).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                params[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                raise ChapterError(f"{where}: parameter {node.targets[0].id} must have a literal default")
    return params


def toc_studies(repo: Path, toc: Path | None = None) -> list[str]:
    """Chapter ids the table of contents includes (`studies/<id>` entries), in order.

    A build executes only these: a notebook being written but not yet in the book
    costs nothing and cannot break the build.
    """
    doc = load_yaml((toc or repo / "_toc.yml").read_text(encoding="utf-8")) or {}
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            entry = node.get("file")
            if isinstance(entry, str) and entry.startswith("studies/"):
                found.append(Path(entry).stem)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    known = set(studies(repo))
    return [s for s in dict.fromkeys(found) if s in known]


def refresh(repo: Path, only: list[str] | None = None, log=print, jobs: int | None = None) -> list[str]:
    """Execute every stale chapter (default: those in the TOC); return the ids that ran.

    Chapters are taken in waves: one is looked at only once the chapters whose outputs it
    reads (its `uses`) are up to date, because its cache key hashes those outputs, so it runs
    again only when what it reads changed. The stale chapters of a wave run `jobs` at a time
    (default: BENCHBOOK_JOBS or the number of CPUs), each in its own kernel process; every
    failure is reported, not just the first.
    """
    jobs = jobs or int(os.environ.get("BENCHBOOK_JOBS") or 0) or os.cpu_count() or 1
    pending = [Chapter(repo, study) for study in (toc_studies(repo) if only is None else only)]
    ran, errors, failed = [], [], set()
    while pending:
        names = {c.study for c in pending}
        wave = [c for c in pending if not names & set(c.spec.uses)]
        if not wave:  # a cycle of `uses` (a registry mistake): take the rest together
            wave = list(pending)
        pending = [c for c in pending if c not in wave]
        stale = []
        for c in wave:
            if failed & set(c.spec.uses):
                errors.append(f"chapter {c.study} not executed: it reads chapter(s) "
                              f"{', '.join(sorted(failed & set(c.spec.uses)))}, which failed")
                failed.add(c.study)
            elif c.is_stale():
                stale.append(c)
            else:
                log(f"{c.study}: up to date, not re-executed")
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(stale) or 1))) as pool:
            futures = {chapter.study: pool.submit(chapter.execute, log=log) for chapter in stale}
            for study, future in futures.items():
                try:
                    future.result()
                    ran.append(study)
                except ChapterError as exc:
                    errors.append(str(exc))
                    failed.add(study)
    if errors:
        raise ChapterError("\n\n".join(errors))
    return ran


def library_digest() -> str:
    """Hash of the library's whole source."""
    return code_digest(sorted(_module_files()))


def code_digest(modules: list[str]) -> str:
    """Hash of the source of these benchbook modules, so changing one re-executes only the
    chapters that import it."""
    files = _module_files()
    digest = hashlib.sha256()
    for name in sorted(modules):
        path = files.get(name)
        if path is not None:
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _module_files() -> dict[str, Path]:
    """benchbook module name -> its source file."""
    out = {}
    for path in LIB_DIR.rglob("*.py"):
        parts = list(path.relative_to(LIB_DIR).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["benchbook", *parts])] = path
    return out


_AST_LOCK = threading.Lock()  # CPython 3.11's ast.parse is not safe in parallel threads


@functools.lru_cache(maxsize=64)
def _parsed_notebook(path: Path, mtime_ns: int):
    """A jupytext notebook, parsed once per version of the file: a build asks for each
    chapter's parameters and imports many times (read_source hands out copies)."""
    import jupytext

    return jupytext.read(path)


@functools.lru_cache(maxsize=64)
def _notebook_outline(path: Path, mtime_ns: int) -> tuple[tuple[str, ...], str]:
    """The sources of a notebook's cells tagged `parameters`, and its code cells joined:
    what a build's cache keys need. Remembered between processes by the file's content and
    jupytext's version (benchbook.site.memo): parsing every notebook took a tenth of a build
    that changed nothing."""
    text = path.read_text(encoding="utf-8")
    k = memo.key("notebook-outline", _jupytext_version(), path.suffix, text)
    known = memo.get(k)
    if known is None:
        cells = _parsed_notebook(path, mtime_ns).cells
        known = [[c.source for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])],
                 "\n".join(c.source for c in cells if c.cell_type == "code")]
        memo.put(k, known)
        memo.save()
    return tuple(known[0]), known[1]


@functools.cache
def _jupytext_version() -> str:
    from importlib.metadata import version

    return version("jupytext")


@functools.lru_cache(maxsize=64)
def _parameters_cell(path: Path, mtime_ns: int) -> tuple[tuple[str, object], ...]:
    return tuple(default_parameters(_notebook_outline(path, mtime_ns)[0], path).items())


@functools.lru_cache(maxsize=1024)
def _imported(code: str, package: str, here: str = "") -> tuple[str, ...]:
    """Modules of `package` that Python source imports (absolute, or relative to module `here`);
    remembered between processes by the source's content (benchbook.site.memo)."""
    k = memo.key(package, here, code)
    known = memo.get(k)
    if known is None:
        known = list(_parse_imports(code, package, here))
        memo.put(k, known)
    return tuple(known)


def _parse_imports(code: str, package: str, here: str) -> tuple[str, ...]:
    try:
        with _AST_LOCK:
            tree = ast.parse(code)
    except SyntaxError:
        return ()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = here.split(".")[: len(here.split(".")) - node.level]
                base = ".".join(parent + ([base] if base else []))
            out.append(base)
            out += [f"{base}.{a.name}" for a in node.names]  # `from pkg import module`
    return tuple(m for m in out if m == package or m.startswith(package + "."))


def import_closure(roots) -> list[str]:
    """The modules `roots` import, transitively, with their parent packages (which Python
    runs first); only benchbook's own modules are followed."""
    files = _module_files()
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in files:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        # relative imports count from the module's package: a package's __init__ is inside it
        base = f"{name}.__init__" if files[name].name == "__init__.py" else name
        source = files[name].read_text(encoding="utf-8")
        todo += _imported(source, "benchbook", base)
        if files[name].name == "__init__.py" and "import_module(" in source:
            todo += [m for m in files if m.startswith(name + ".")]  # a registry of plug-in modules
    memo.save()
    return sorted(seen)


def _describe_failure(study: str, exc) -> str:
    tb = _ANSI.sub("", "\n".join(exc.traceback or []))
    cell = getattr(exc, "exec_count", None) or getattr(exc, "cell_index", "?")
    return f"chapter {study} failed in cell {cell}: {exc.ename}: {exc.evalue}\n{tb}"


def _second_page(nb, title: str, page: str) -> None:
    """A second page of one notebook gets its own title (its registry entry's), so the table
    of contents and the browser tell the two pages apart, and its own figure labels."""
    titled = False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("# ") and not titled:
                lines[i], titled = f"# {title}", True
            elif line.startswith(":name: "):
                lines[i] = f"{line}-{page}"
        cell.source = "\n".join(lines)


def _drop_absent_sections(nb, folder: Path) -> None:
    """Remove the prose of sections the data could not fill.

    A markdown cell tagged `needs-<section>` quotes numbers of that section; when the
    chapter's `chapter.json` lists the section as absent, the cell goes, so no sentence
    on the page speaks of data that is not there (the section shows its note instead).
    """
    info = folder / "chapter.json"
    if not info.is_file():
        return
    absent = set(json.loads(info.read_text(encoding="utf-8")).get("absent_sections", {}))
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or not any(
        t.startswith("needs-") and t[len("needs-"):] in absent for t in c.get("metadata", {}).get("tags", []))]


def _drop_empty_displays(nb) -> None:
    """Remove display outputs with empty Markdown or HTML (a note with nothing to say): the
    page renders such an output by its text fallback, an object repr."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        keep = []
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            rich = [data[m] for m in ("text/markdown", "text/html") if m in data]
            if o.get("output_type") in ("display_data", "execute_result") and rich and \
                    not any("".join(r).strip() for r in rich) and "scrapbook" not in o.get("metadata", {}):
                continue
            keep.append(o)
        cell.outputs = keep


ASSUMED_MARK = "Assumed, not measured."


def _mark_assumed_sections(nb, folder: Path) -> None:
    """Mark the prose of sections that rest on a data generator's assumption.

    `chapter.json` lists, per shown section, the assumptions of reconstructed folders its
    declared columns meet (benchbook.study.assumptions). The first markdown cell tagged
    `needs-<section>` for such a section in each part of the page (a level-1 or level-2
    heading) gets a line saying so, naming every choice its tagged cells rest on, so a chosen
    value never reads as a finding and the line is not repeated paragraph after paragraph; on
    measured data the list is empty and nothing changes.
    """

    info = folder / "chapter.json"
    if not info.is_file():
        return
    assumed = json.loads(info.read_text(encoding="utf-8")).get("assumed_sections") or {}

    def hits(cell) -> list:
        tags = cell.get("metadata", {}).get("tags", []) if cell.cell_type == "markdown" else []
        return [a for t in tags if t.startswith("needs-") for a in assumed.get(t[len("needs-"):], [])]

    for cells in _page_sections(nb):
        found = [(cell, hits(cell)) for cell in cells]
        found = [(cell, h) for cell, h in found if h]
        if not found:
            continue
        whats = "; ".join(dict.fromkeys(untrusted.md(short(a["why"])) for _, h in found for a in h))
        cell = found[0][0]
        cell.source = (cell.source.rstrip() + f'\n\n<span class="benchbook-assumed">{ASSUMED_MARK}</span> '
                       f"*These numbers rest on values the data generator chose where the write-up printed "
                       f"none ({whats}); on reconstructed data they are not a finding. The data folder's "
                       f"PROVENANCE.md lists every such choice.*")


_SECTION_HEADING = re.compile(r"^#{1,2}\s", re.M)


def _page_sections(nb) -> list[list]:
    """The notebook's cells by part of the page: a new part at each markdown cell with a
    level-1 or level-2 heading (a '###' subsection stays in its section)."""
    parts: list[list] = [[]]
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _SECTION_HEADING.search(cell.source) and parts[-1]:
            parts.append([])
        parts[-1].append(cell)
    return parts


_SHOWN = ("text/html", "text/markdown")  # outputs a page shows (glued ones are pasted elsewhere)


def _one_legend_per_section(nb) -> None:
    """One 'assumed' legend per part of the page: where its first legend shown unfolded
    was (under a table, a paragraph or a list; the first legend of all when every one is
    in a fold), one line naming every assumption marked in the part; the others go."""
    for cells in _page_sections(nb):
        slots = [s for s in _text_slots(cells) if legend_items(s[0][s[1]])]
        if not slots:
            continue
        items = [i for holder, key in slots for i in legend_items(holder[key])]
        target = next((s for s in slots if not _folded(s[0][s[1]])), slots[0])
        for holder, key in slots:
            mine = holder is target[0] and key == target[1]
            holder[key] = replace_legends(holder[key], merge_legends(items) if mine else "")


def _text_slots(cells) -> list[tuple]:
    """(holder, key) of every text a part of the page shows, in page order: markdown
    sources and the HTML or Markdown outputs of code cells (each joined into one string)."""
    slots = []
    for cell in cells:
        if cell.cell_type == "markdown":
            slots.append((cell, "source"))
        for out in cell.get("outputs", []) if cell.cell_type == "code" else ():
            data = out.get("data", {})
            for mime in _SHOWN:
                if mime in data:
                    data[mime] = "".join(data[mime])
                    slots.append((data, mime))
    return slots


def _folded(text: str) -> bool:
    """The first legend line in `text` is inside a fold (a <details> not closed before it)."""
    before = text[: text.find('class="benchbook-assumed-legend"')]
    return before.count("<details") > before.count("</details>")


def _glue_assumed(nb) -> dict[str, list]:
    """Glued key -> [{id, why}] of the assumptions its value was computed from
    (report.glue puts them in the glued output's metadata)."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else ():
            meta = o.get("metadata", {})
            name, found = meta.get("scrapbook", {}).get("name"), meta.get("benchbook", {}).get("assumed")
            if name and found:
                out[name] = found
    return out


_GLUE_TEXT = re.compile(r"\{glue(?::text)?\}`([^`:]+)(?::[^`]*)?`")
_GLUE_FIGURE = re.compile(r"^(```+|:::+)\{glue:figure\}[ \t]+(\S+)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)


def _mark_assumed_glue(nb) -> None:
    """Mark every glued number computed from an assumed cell where the prose shows it: the
    marker after its `{glue:text}` reference and the legend under its paragraph; a glued
    figure with series drawn from assumed cells gets the legend in its caption. The ids
    come with the glued output (report.glue); on measured data there are none."""

    assumed = _glue_assumed(nb)
    if not assumed:
        return
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source = _GLUE_FIGURE.sub(lambda m: _figure_legend(m, assumed), cell.source)
        hits: list[dict] = []

        def mark(m: re.Match) -> str:
            found = assumed.get(m.group(1))
            if not found:
                return m.group(0)
            hits.extend(found)
            return marked_html(m.group(0), [a["id"] for a in found], {a["id"]: a["why"] for a in found})

        text = _GLUE_TEXT.sub(mark, cell.source)
        if hits:
            why = {a["id"]: a["why"] for a in hits}
            text = text.rstrip() + "\n\n" + legend_html(list(why), why)
        cell.source = text


def _figure_legend(m: re.Match, assumed: dict) -> str:
    """A `{glue:figure}` directive whose figure marks series: its caption gets the legend."""

    found = assumed.get(m.group(2))
    if not found:
        return m.group(0)
    why = {a["id"]: a["why"] for a in found}
    line = untrusted.md(figure_legend_text(list(why), why))
    body = m.group(0)
    fence_end = body.rstrip().rfind(m.group(1))
    return body[:fence_end].rstrip("\n") + "\n" + line + "\n" + body[fence_end:]


_GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`|\{glue:figure\}[ \t]+(\S+)")


def _drop_prose_without_numbers(nb) -> list[str]:
    """A safety net: a paragraph quoting a number the notebook did not glue is removed, so
    no page shows a sentence with a hole in it (or fails a strict build). Chapters mark
    sections absent themselves; this catches a case they missed, and says which keys."""
    glued = {o.get("metadata", {}).get("scrapbook", {}).get("name")
             for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])}
    missing_all, kept = [], []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            refs = [a or b for a, b in _GLUE_REF.findall(cell.source)]
            keys = [k.split(":", 1)[0] for k in refs if "::" not in k]
            missing = [k for k in keys if k not in glued]
            if missing:
                missing_all += missing
                continue
        kept.append(cell)
    nb.cells = kept
    return list(dict.fromkeys(missing_all))


def _unpublish_parameters(nb, run_file: str) -> None:
    """Keep parameter values (a user's data path) out of the notebook the site copies.

    The executed notebook is copied verbatim into the site's `_sources`; the values stay
    in `<study>.run.json`, which is not published. The injected cell keeps its tags.
    """
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags:
            if "remove-cell" not in tags:
                tags.append("remove-cell")
            names = [ln.split("=")[0].strip() for ln in cell.source.splitlines() if "=" in ln]
            cell.source = (f"# Parameters set by `benchbook run`: {', '.join(names)}; "
                           f"their values are kept in {run_file}, not published.")
            cell.outputs = []
    papermill = nb.metadata.get("papermill", {})
    for key in ("parameters", "input_path", "output_path"):  # values, a notebook copy, local paths
        papermill.pop(key, None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _finished(tmp: Path) -> bool:
    """Papermill leaves a partial output on failure; only a full run is kept."""
    try:
        nb = nbformat.read(tmp, as_version=4)
    except Exception:
        return False
    return nb.metadata.get("papermill", {}).get("exception") is not True and \
        all(c.get("metadata", {}).get("papermill", {}).get("status") in (None, "completed") for c in nb.cells)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

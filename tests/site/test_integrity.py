"""Integrity: checksums stop a build, killed and concurrent runs leave a valid chapter,
a failing notebook fails the real `jupyter-book build` with its error shown.

Runs on a tiny project (one chapter that reads a one-file study) with a real kernel.
The notebook pauses and writes a journal only when told by environment variables,
which are not parameters and so do not change the cache key.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import bad_corpus as corpus
import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.book.paths import ChapterError
from benchbook.cli import main
from benchbook.site.runner import Chapter
from benchbook.study.folder import write_checksums

pytestmark = pytest.mark.slow  # executes chapter notebooks (make test-fast leaves it out)

BIN = Path(sys.executable).parent
PAUSE, MARKER, JOURNAL = "BENCHBOOK_TEST_PAUSE", "BENCHBOOK_TEST_MARKER", "BENCHBOOK_TEST_JOURNAL"

NOTEBOOK = projects.mini_notebook('data_dir = "data/mini"', """\
import os, time
from pathlib import Path
from benchbook.study.load import ingest_study


def note(word):
    if os.environ.get("BENCHBOOK_TEST_JOURNAL"):
        with open(os.environ["BENCHBOOK_TEST_JOURNAL"], "a") as fh:
            fh.write(f"{word} {os.getppid()}\\n")

note("start")
if os.environ.get("BENCHBOOK_TEST_MARKER"):
    Path(os.environ["BENCHBOOK_TEST_MARKER"]).write_text("running")
time.sleep(float(os.environ.get("BENCHBOOK_TEST_PAUSE", "0")))
data = ingest_study(data_dir)
print("rows", len(data["llama_bench"]))
note("end")
""", tags='parameters, remove-cell')


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks/mini.md").write_text(NOTEBOOK)
    data = tmp_path / "data/mini"
    (data / "raw").mkdir(parents=True)
    (data / "study.yml").write_text(corpus.MANIFEST)
    (data / "raw/one.jsonl").write_bytes(corpus.lb_jsonl(corpus.lb_line(), corpus.lb_line(**corpus.TG)))
    write_checksums(data)
    return tmp_path


def printed(nb_path: Path) -> str:
    nb = nbformat.read(nb_path, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def stored_key(nb_path: Path) -> str:
    return nbformat.read(nb_path, as_version=4).metadata["benchbook"]["cache_key"]


def temps(chapter: Chapter) -> list[Path]:
    return sorted(chapter.output.parent.glob(f".{chapter.study}.*.tmp*"))


def start_run(repo: Path, env: dict) -> subprocess.Popen:
    """`benchbook run mini --force` in its own process group (so its kernel can be killed too)."""
    return subprocess.Popen(
        [str(BIN / "benchbook"), "run", "mini", "--force"], cwd=repo, env={**os.environ, **env},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def wait_for(path: Path, proc: subprocess.Popen, limit: float = 120) -> None:
    """Until the kernel has written `path` (a bound, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.communicate()}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"the kernel never started: {path}")
        time.sleep(0.05)


# ---------------------------------------------------------------- checksums


def test_changed_raw_file_fails_the_chapter_naming_it_until_accepted(repo, capsys):
    chapter = Chapter(repo, "mini")
    chapter.execute({}, log=lambda m: None)
    assert "rows 2" in printed(chapter.output)
    before = chapter.output.read_bytes()

    raw = repo / "data/mini/raw/one.jsonl"
    raw.write_bytes(corpus.lb_jsonl(corpus.lb_line(), corpus.lb_line(**corpus.TG), corpus.lb_line(n_prompt=128)))
    with pytest.raises(ChapterError) as err:
        chapter.execute({}, log=lambda m: None)
    message = str(err.value)
    assert "chapter mini failed in cell" in message and "StudyError" in message
    assert "data/mini/raw/one.jsonl: content changed since its checksum was recorded in SHA256SUMS" in message
    assert "run `benchbook validate data/mini --update-checksums`" in message
    assert chapter.output.read_bytes() == before  # the last good chapter stays, nothing half-written
    assert chapter.is_stale() and not temps(chapter)

    # validate lists the change too; --update-checksums is the deliberate way to accept it
    assert main(["validate", str(repo / "data/mini")]) == 1
    assert "raw/one.jsonl: content changed" in capsys.readouterr().err
    assert main(["validate", str(repo / "data/mini"), "--update-checksums"]) == 0
    assert "wrote" in capsys.readouterr().out
    chapter.execute({}, log=lambda m: None)
    assert "rows 3" in printed(chapter.output)


def test_update_checksums_does_not_accept_an_unlisted_file(repo, capsys):
    data = repo / "data/mini"
    (data / "raw/extra.jsonl").write_bytes(corpus.lb_jsonl(corpus.lb_line()))
    assert main(["validate", str(data), "--update-checksums"]) == 1
    assert "raw/extra.jsonl: present in the data folder but not listed" in capsys.readouterr().err


# ---------------------------------------------------------------- killed and concurrent runs


def test_killed_run_leaves_the_last_good_chapter_and_the_next_run_recovers(repo, tmp_path_factory):
    chapter = Chapter(repo, "mini")
    chapter.execute({}, log=lambda m: None)
    good, good_key = chapter.output.read_bytes(), stored_key(chapter.output)

    raw = repo / "data/mini/raw/one.jsonl"  # new data: the next run has work to do
    raw.write_bytes(corpus.lb_jsonl(corpus.lb_line(), corpus.lb_line(**corpus.TG), corpus.lb_line(n_prompt=128)))
    write_checksums(repo / "data/mini")
    new_key = chapter.cache_key({})
    assert new_key != good_key

    marker = tmp_path_factory.mktemp("signals") / "kernel-running"
    proc = start_run(repo, {PAUSE: "120", MARKER: str(marker)})
    wait_for(marker, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the run and its kernel, mid-cell
    proc.wait()

    assert chapter.output.read_bytes() == good  # no half-written chapter in place
    assert stored_key(chapter.output) == good_key
    # papermill writes the notebook once, at the end: a run killed mid-cell leaves nothing, or
    # (killed while writing) a temp file of its own pid beside the chapter, never in its place
    assert all(str(proc.pid) in p.name for p in temps(chapter))
    if not temps(chapter):  # what a run killed while writing leaves, for the cleanup below
        (chapter.output.parent / f".mini.{proc.pid}.tmp.ipynb").write_text("{")
    assert chapter.is_stale()

    run = subprocess.run([str(BIN / "benchbook"), "run", "mini"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not temps(chapter)  # stale temp files cleaned up under the lock
    assert stored_key(chapter.output) == new_key and not chapter.is_stale()
    assert "rows 3" in printed(chapter.output)


def test_two_runs_at_once_are_serialised_and_leave_a_valid_chapter(repo, tmp_path_factory):
    chapter = Chapter(repo, "mini")
    signals = tmp_path_factory.mktemp("signals")
    journal = signals / "journal"
    first = start_run(repo, {PAUSE: "1", MARKER: str(signals / "first"), JOURNAL: str(journal)})
    wait_for(signals / "first", first)  # the first holds the lock and its kernel is running
    second = start_run(repo, {PAUSE: "0", JOURNAL: str(journal)})
    outs = [p.communicate(timeout=300) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outs

    lines = journal.read_text().split()
    words, pids = lines[0::2], lines[1::2]
    assert words == ["start", "end", "start", "end"]  # never two kernels in the chapter at once
    assert pids[0] == pids[1] != pids[2] == pids[3]
    nb = nbformat.read(chapter.output, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["benchbook"]["cache_key"] == chapter.cache_key({}) and not chapter.is_stale()
    assert "rows 2" in printed(chapter.output)
    assert not temps(chapter)


def test_stale_temp_of_a_live_process_is_left_alone(repo):
    """Cleanup removes only temp files whose process is gone."""
    chapter = Chapter(repo, "mini")
    chapter.output.parent.mkdir(parents=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = chapter.output.with_name(f".mini.{sleeper.pid}.tmp.ipynb")
        dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                                  capture_output=True, text=True).stdout.strip()
        dead = chapter.output.with_name(f".mini.{dead_pid}.tmp.ipynb")
        other = chapter.output.with_name(".minimal.1.tmp.ipynb")  # another chapter's name
        for p in (live, dead, other):
            p.write_text("{}")
        chapter.execute({}, log=lambda m: None)
        assert live.exists() and other.exists() and not dead.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


# ---------------------------------------------------------------- a failing chapter in a real build

FAILING = NOTEBOOK.replace('print("rows", len(data["llama_bench"]))',
                           'raise ValueError("planted failure: t/s column missing")')


@pytest.mark.build
def test_failing_chapter_fails_the_jupyter_book_build_with_its_error(repo):
    (repo / "notebooks/mini.md").write_text(FAILING)
    (repo / "_config.yml").write_text(
        'title: Tiny\nonly_build_toc_files: true\nexclude_patterns: [_build]\n'
        'execute:\n  execute_notebooks: "off"\n'
        "sphinx:\n  extra_extensions: [benchbook.site.sphinx_ext]\n"
    )
    (repo / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: studies/mini\n")
    book = repo / "book"
    (book / "studies").mkdir(parents=True)
    (book / "_config.yml").symlink_to("../_config.yml")
    (book / "_toc.yml").symlink_to("../_toc.yml")
    (book / "intro.md").write_text("# Tiny\n\nOne chapter.\n")
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book"], cwd=repo,
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, log[-3000:]
    assert "chapter mini failed in cell" in log
    assert "ValueError: planted failure: t/s column missing" in log
    # nothing of the failed execution is published or left in place
    site = book / "_build/html"
    assert not (site / "reports").exists()
    assert not (book / "studies/mini.ipynb").exists()
    assert not list((book / "studies").glob(".mini.*"))
    for page in site.rglob("*.html") if site.exists() else ():
        assert "planted failure" not in page.read_text(encoding="utf-8")

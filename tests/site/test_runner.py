"""Cache keys and papermill execution on a tiny project (a real kernel runs)."""

import json
import shutil

import nbformat
import pytest

import projects  # noqa: E402  (tests/ is on sys.path)
from benchbook.book.paths import ChapterError, find_repo
from benchbook.site.runner import Chapter, refresh

pytestmark = pytest.mark.slow  # executes chapter notebooks (make test-fast leaves it out)

NOTEBOOK = projects.mini_notebook('data_dir = "data/mini"\nfactor = 2', """\
from pathlib import Path

value = int(Path(data_dir, "value.txt").read_text()) * factor
print("value", value)
""")


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n  - file: studies/mini\n  - file: studies/missing\n"
    )
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks/mini.md").write_text(NOTEBOOK)
    (tmp_path / "data/mini").mkdir(parents=True)
    (tmp_path / "data/mini/value.txt").write_text("21")
    return tmp_path


def output_text(chapter):
    nb = nbformat.read(chapter.output, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_find_repo_walks_up(repo):
    (repo / "book/studies").mkdir(parents=True)
    assert find_repo(repo / "book/studies") == repo


def test_cache_key_covers_notebook_data_parameters(repo):
    ch = Chapter(repo, "mini")
    key = ch.cache_key({})
    assert ch.cache_key({}) == key
    assert ch.cache_key({"factor": 3}) != key
    (repo / "data/mini/value.txt").write_text("22")
    key2 = ch.cache_key({})
    assert key2 != key
    (repo / "notebooks/mini.md").write_text(NOTEBOOK.replace("factor = 2", "factor = 2  # same"))
    assert ch.cache_key({}) != key2


def test_unknown_parameter_is_refused(repo):
    with pytest.raises(ChapterError, match="unknown parameter.*colour.*defines: data_dir, factor"):
        Chapter(repo, "mini").cache_key({"colour": "red"})


def test_execute_then_skip_then_rerun_on_other_data(repo, tmp_path_factory):
    ch = Chapter(repo, "mini")
    logs = []
    assert refresh(repo, log=logs.append) == ["mini"]
    assert "value 42" in output_text(ch)
    nb = nbformat.read(ch.output, as_version=4)
    assert nb.metadata["benchbook"]["cache_key"] == ch.cache_key({})
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert all("remove-cell" in c.metadata["tags"] for c in injected)

    assert refresh(repo, log=logs.append) == []  # nothing changed: nothing runs

    other = tmp_path_factory.mktemp("other")
    shutil.copytree(repo / "data/mini", other / "mini")
    (other / "mini/value.txt").write_text("50")
    ch.execute({"data_dir": str(other / "mini")}, log=logs.append)
    assert "value 100" in output_text(ch)
    assert json.loads(ch.run_file.read_text())["parameters"]["data_dir"] == str(other / "mini")
    assert refresh(repo, log=logs.append) == []  # the remembered data is still current
    (other / "mini/value.txt").write_text("51")
    assert refresh(repo, log=logs.append) == ["mini"]
    assert "value 102" in output_text(ch)


def test_failing_chapter_reports_the_cell_error_and_leaves_no_output(repo):
    (repo / "notebooks/mini.md").write_text(NOTEBOOK.replace("* factor", "/ 0 * factor"))
    ch = Chapter(repo, "mini")
    with pytest.raises(ChapterError, match="ZeroDivisionError"):
        ch.execute({}, log=lambda m: None)
    assert not ch.output.exists()
    assert not list(ch.output.parent.glob(".*.tmp.ipynb"))


def test_a_kernel_that_dies_while_starting_is_started_again_and_a_chapter_error_is_not(repo, tmp_path, monkeypatch):
    """The first kernel exits before it answers (as one can on a busy machine); the run starts
    another and the chapter's output is the normal one. The start is not retried forever."""
    hook = tmp_path / "hook"
    hook.mkdir()
    starts = tmp_path / "starts"
    # every Python process started from here (the kernels) imports this first: the first exits
    (hook / "sitecustomize.py").write_text(
        "import os\n"
        f"path = {str(starts)!r}\n"
        "n = len(open(path).read()) if os.path.exists(path) else 0\n"
        "open(path, 'a').write('x')\n"
        f"if n < int(os.environ.get('DIE_FIRST', '1')):\n"
        "    os._exit(1)\n")
    monkeypatch.setenv("PYTHONPATH", str(hook))
    chapter, said = Chapter(repo, "mini"), []
    chapter.execute({}, log=said.append, restore=False)  # not from the suite's store: a kernel runs
    assert "value 42" in output_text(chapter)
    assert starts.read_text() == "xx" and any("the kernel died while starting" in m for m in said), said
    starts.unlink()
    monkeypatch.setenv("DIE_FIRST", "99")  # every start dies: the run stops, naming why
    with pytest.raises(RuntimeError, match="Kernel died before replying"):
        chapter.execute({"factor": 3}, log=lambda m: None, restore=False)
    assert len(starts.read_text()) == 3


def test_only_chapters_in_the_toc_are_executed(repo):
    (repo / "notebooks/draft.md").write_text(NOTEBOOK)  # being written, not in the book yet
    from benchbook.site.runner import toc_studies

    assert toc_studies(repo) == ["mini"]  # toc entries without a notebook are left to Sphinx
    assert refresh(repo, log=lambda m: None) == ["mini"]
    assert not Chapter(repo, "draft").output.exists()


def test_empty_notes_are_dropped_so_no_object_repr_reaches_the_page():
    import nbformat

    from benchbook.site.runner import _drop_empty_displays

    def shown(md):
        return nbformat.v4.new_output("display_data", data={"text/markdown": md,
                                                            "text/plain": "<IPython.core.display.Markdown object>"})
    cell = nbformat.v4.new_code_cell("display(Markdown(note))")
    cell.outputs = [shown(""), shown("  \n"), shown("A note."), nbformat.v4.new_output("stream", text="log")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    _drop_empty_displays(nb)
    assert [o.get("data", {}).get("text/markdown", o.get("text")) for o in nb.cells[0].outputs] == ["A note.", "log"]


def test_a_chapter_s_cache_key_covers_the_modules_it_imports_and_no_other_chapter_s():
    """Editing one chapter's folder re-executes that chapter (and pages that read its data or
    use its outputs), not all: a page's key covers its own folder and the folders of the data it
    reads (whose contract it applies), never another."""
    from benchbook.book import registry

    root = find_repo()
    imports = {c.id: set(Chapter(root, c.id).imports()) for c in registry.chapters()}
    for spec in registry.chapters():
        mine = imports[spec.id]
        assert {spec.module, f"benchbook.chapters.{spec.folder}"} <= mine
        allowed = {spec.folder} | {registry.get(other).folder for other in spec.reads.values()}
        folders = {m.split(".")[2] for m in mine if m.startswith("benchbook.chapters.")}
        assert folders == allowed, (spec.id, folders - allowed)
        assert not any("reconstruct" in m for m in mine), spec.id
    assert "benchbook.study.contract" in imports["gb10-mtp"] and "benchbook.ingest.vllm_log" in imports["power-sweep"]


def test_a_chapter_runs_in_its_project_without_moving_this_process(repo, tmp_path_factory, monkeypatch):
    """Chapters run in parallel threads: a kernel must start in its own project whatever the
    process's working folder is, and running one must not change that folder for the others
    (papermill's `cwd` is a process-wide chdir)."""
    import os
    import threading

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "data/mini").mkdir(parents=True)
    (elsewhere / "data/mini/value.txt").write_text("1")  # a decoy the relative path would find
    monkeypatch.chdir(elsewhere)
    seen, done = set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.add(os.getcwd())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        ch = Chapter(repo, "mini")
        ch.execute({}, log=lambda m: None)
    finally:
        done.set()
        watcher.join()
    assert "value 42" in output_text(ch)  # read from the project, not the decoy
    assert seen == {str(elsewhere)}


UP = projects.mini_notebook('data_dir = "data/up"\nnote = "a"', """\
import json
from pathlib import Path
from benchbook.book.paths import downloads_dir
out = downloads_dir("up")
out.mkdir(parents=True, exist_ok=True)
(out / "t.csv").write_text(Path(data_dir, "value.txt").read_text())
(out / "chapter.json").write_text(json.dumps({"outputs": {"t": "t.csv"}}))
""")
DOWN = projects.mini_notebook('factor = 1', """\
from benchbook.book.paths import downloads_dir
print("read", (downloads_dir("up") / "t.csv").read_text())
""")


def test_a_page_that_uses_another_s_outputs_reruns_only_when_they_change(tmp_path, monkeypatch):
    """The synthesis's rule: its key hashes the outputs it reads, not how they were made."""
    from dataclasses import replace

    from benchbook.book.spec import ChapterSpec
    from benchbook.site import runner

    specs = {"up": ChapterSpec("up", "", "Up"), "down": replace(ChapterSpec("down", "", "Down"), uses=("up",))}
    monkeypatch.setattr(runner, "get", lambda study: specs[study])
    monkeypatch.delenv("BENCHBOOK_STORE", raising=False)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                       "  - file: studies/down\n  - file: studies/up\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks/up.md").write_text(UP)
    (tmp_path / "notebooks/down.md").write_text(DOWN)
    (tmp_path / "data/up").mkdir(parents=True)
    (tmp_path / "data/up/value.txt").write_text("1")
    assert refresh(tmp_path, log=lambda m: None) == ["up", "down"]  # down waits for what it reads
    Chapter(tmp_path, "up").remember({"note": "b"})  # reruns up; its outputs stay the same
    logs = []
    assert refresh(tmp_path, log=logs.append) == ["up"]
    assert "down: up to date, not re-executed" in logs
    (tmp_path / "data/up/value.txt").write_text("2")  # now what down reads changes
    assert refresh(tmp_path, log=lambda m: None) == ["up", "down"]
    assert "read 2" in output_text(Chapter(tmp_path, "down"))


# ---- one "assumed" legend and one "assumed, not measured" line per part of the page -------------


def _legend_notebook():
    """A title part with a marked key-results table, a section with a folded marked table,
    an unfolded one and a marked paragraph under a subsection, and a section with nothing
    marked."""
    from benchbook.study.marks import legend_html

    why = {"tails": "chosen: no P99 published", "draw": "chosen: the draw"}

    def table(ids, fold=False):
        text = "<table>t</table>" + legend_html(ids, why)
        out = nbformat.v4.new_output("display_data", data={"text/html": f"<details>{text}</details>" if fold else text})
        cell = nbformat.v4.new_code_cell("")
        cell.outputs = [out]
        return cell

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n\nIntro."), table(["tails"]),
                nbformat.v4.new_markdown_cell("## Speed\n\nWhat was measured."), table(["tails"], fold=True),
                table(["draw"]),
                nbformat.v4.new_markdown_cell("### Detail\n\nA number." + legend_html(["tails"], why)),
                nbformat.v4.new_markdown_cell("## Memory\n\nNothing assumed."), table([])]
    nb.cells[-1].outputs[0]["data"]["text/html"] = "<table>m</table>"
    return nb


def _legends(cell) -> int:
    texts = [cell.source] if cell.cell_type == "markdown" else [o["data"]["text/html"] for o in cell.outputs]
    return sum(t.count('class="benchbook-assumed-legend"') for t in texts)


def test_a_page_part_shows_one_legend_naming_every_assumption_in_it_where_its_first_unfolded_one_was():
    from benchbook.site.runner import _one_legend_per_section

    nb = _legend_notebook()
    _one_legend_per_section(nb)
    assert [_legends(c) for c in nb.cells] == [0, 1, 0, 0, 1, 0, 0, 0]
    speed = nb.cells[4].outputs[0]["data"]["text/html"]  # the first legend outside a fold
    assert speed.startswith("<table>t</table>") and speed.count("<code>tails</code>") == 1
    assert "<code>draw</code>" in speed
    assert "<code>draw</code>" not in nb.cells[1].outputs[0]["data"]["text/html"]  # the title part: its own
    assert nb.cells[3].outputs[0]["data"]["text/html"] == "<details><table>t</table></details>"  # the table stays
    assert nb.cells[5].source == "### Detail\n\nA number."


def test_the_assumed_line_is_written_once_per_page_part(tmp_path):
    from benchbook.site.runner import ASSUMED_MARK, _mark_assumed_sections

    (tmp_path / "chapter.json").write_text(json.dumps({"assumed_sections": {
        "speed": [{"id": "tails", "why": "no P99 published"}],
        "memory": [{"id": "draw", "why": "the draw of the sweep"}]}}))
    nb = nbformat.v4.new_notebook()
    tagged = [nbformat.v4.new_markdown_cell(text, metadata={"tags": [tag]}) for text, tag in
              (("## Speed\n\nOne.", "needs-speed"), ("Two.", "needs-speed"), ("Three.", "needs-memory"),
               ("## Memory\n\nFour.", "needs-memory"), ("Five.", "needs-memory"))]
    nb.cells = tagged
    _mark_assumed_sections(nb, tmp_path)
    assert [ASSUMED_MARK in c.source for c in tagged] == [True, False, False, True, False]
    assert "(no P99 published; the draw of the sweep)" in tagged[0].source  # the part's line names each choice in it


def test_numbers_glued_into_prose_take_the_book_s_number_style_and_other_text_does_not():
    """A glue format spec (':+.1f') prints a hyphen-minus; the page shows a true minus, no
    negative zero; prose around the glued spans is left as written."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from benchbook.site.sphinx_ext import _typeset_glued

    doc = new_document("page", get_default_settings(Parser))
    para = nodes.paragraph()
    para += nodes.Text("Runs 2026-11-27, change ")
    para += nodes.inline("-7.2", "-7.2", classes=["pasted-text"])
    para += nodes.Text(" % and ")
    para += nodes.inline("-0.0", "-0.0", classes=["pasted-text"])
    para += nodes.Text(" %, ratio ")
    para += nodes.inline("8.2x", "8.2x", classes=["pasted-text"])
    para += nodes.Text(" from -3 in the write-up.")
    doc += para
    _typeset_glued(None, doc, "page")
    assert para.astext() == "Runs 2026-11-27, change \u22127.2 % and 0.0 %, ratio 8.2× from -3 in the write-up."

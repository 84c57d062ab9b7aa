"""What a module imports is remembered between processes by its content, and a cache folder
that cannot be written costs nothing but the parse."""

from __future__ import annotations

import json

from benchbook.site import memo, runner


def _fresh(monkeypatch, folder):
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(folder))
    monkeypatch.setattr(memo, "_memo", None)
    runner._imported.cache_clear()


def test_a_second_process_reads_the_imports_instead_of_parsing(tmp_path, monkeypatch):
    code = "from .x import y\nimport benchbook.format\n\ndef f():\n    from ..study import marks\n"
    _fresh(monkeypatch, tmp_path)
    first = runner._imported(code, "benchbook", "benchbook.page.report")
    assert set(first) >= {"benchbook.page.x", "benchbook.format", "benchbook.study.marks"}
    memo.save()
    stored = json.loads((tmp_path / memo.FILE).read_text())
    assert list(stored.values()) == [list(first)]
    _fresh(monkeypatch, tmp_path)  # as a new process: only the file is left
    monkeypatch.setattr(runner, "_parse_imports", lambda *a: (_ for _ in ()).throw(AssertionError("parsed")))
    assert runner._imported(code, "benchbook", "benchbook.page.report") == first
    other = code + "import benchbook.cli\n"  # another content is another key: never a stale answer
    monkeypatch.undo()
    _fresh(monkeypatch, tmp_path)
    assert "benchbook.cli" in runner._imported(other, "benchbook", "benchbook.page.report")


def test_a_folder_that_cannot_be_written_is_not_used(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    _fresh(monkeypatch, blocker / "cache")  # a folder under a file: cannot be made
    assert runner._imported("import benchbook.format\n", "benchbook") == ("benchbook.format",)
    memo.save()
    assert not (blocker / "cache").exists()


NOTEBOOK = """# %% tags=["parameters"]
data_dir = "data/a"
agents = 4

# %%
from benchbook import format
"""


def test_a_second_process_reads_a_notebook_s_parameters_without_parsing_it(tmp_path, monkeypatch):
    nb = tmp_path / "chapter.py"
    nb.write_text(NOTEBOOK)
    _fresh(monkeypatch, tmp_path / "cache")
    runner._notebook_outline.cache_clear()
    params, code = runner._notebook_outline(nb, nb.stat().st_mtime_ns)
    assert runner.default_parameters(params, nb) == {"data_dir": "data/a", "agents": 4}
    assert "from benchbook import format" in code
    _fresh(monkeypatch, tmp_path / "cache")  # as a new process: only the file is left
    runner._notebook_outline.cache_clear()
    monkeypatch.setattr(runner, "_parsed_notebook", lambda *a: (_ for _ in ()).throw(AssertionError("parsed")))
    assert runner._notebook_outline(nb, nb.stat().st_mtime_ns) == (params, code)
    nb.write_text(NOTEBOOK.replace("agents = 4", "agents = 8"))  # new content, new key: never stale
    monkeypatch.undo()
    _fresh(monkeypatch, tmp_path / "cache")
    runner._notebook_outline.cache_clear()
    params, _ = runner._notebook_outline(nb, nb.stat().st_mtime_ns)
    assert runner.default_parameters(params, nb)["agents"] == 8

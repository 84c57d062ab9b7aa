"""What `benchbook new` writes, `benchbook validate` accepts: over every real file in
../shared/samples/ alone, every folder of them, and the mixes a user makes, for every chapter
that reads raw files. A to-do is allowed (validate lists it and exits 0); a problem is not,
and neither is a traceback. `new` may refuse an input only with a clear error (a folder of
files no reader knows). Run in-process and with `validate --quick` (the contract, not the
chapter's analysis) so all of them fit the suite's time budget.

Then, for one folder per chapter and format family, the chapter runs (papermill, as
`benchbook run` does) and the sections `validate` says the page will show are exactly the
sections the executed page shows: no "Not in this data" note for one of them, and no
empty table under one of them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from benchbook.book.registry import chapters, get
from benchbook.cli import main as cli
from benchbook.scaffold.new import NewError, new_study
from benchbook.site.runner import Chapter
from projects import copy_project
from realdata import LHL, REAL, needs_shared

pytestmark = [needs_shared, pytest.mark.slow]  # runs every chapter's analysis on every sample

RAW_CHAPTERS = [c.id for c in chapters() if c.contract is not None and c.id == c.notebook_name]
DGX = REAL / "dgx-spark-djangodevreng" / "results" / "qwen-3.6"


def _inputs() -> dict[str, list[Path]]:
    """Every recognisable real file alone, every folder, and mixes: name -> paths given to `new`."""
    if not REAL.is_dir():
        return {}
    out: dict[str, list[Path]] = {}
    for folder in ("vllm-server-logs", "llama-bench", "nvidia-smi", "vllm-bench-serve"):
        for f in sorted((REAL / folder).iterdir()):
            if not f.name.startswith("LICENSE"):
                out[f"{folder}/{f.name}"] = [f]
        out[f"folder {folder}"] = [REAL / folder]
    for f in sorted(LHL.glob("*.jsonl")):
        out[f"lhl/{f.name}"] = [f]
    for model in sorted(p for p in DGX.iterdir() if p.is_dir()):
        for prec in sorted(p for p in model.iterdir() if p.is_dir()):
            out[f"dgx {model.name}/{prec.name}"] = [prec]
    out["dgx one model, every precision"] = [DGX / "qwen-3.6-35b-a3b"]
    out["dgx two models, fp8"] = [DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"]
    out["dgx the whole harness folder"] = [REAL / "dgx-spark-djangodevreng"]
    out["every sample folder"] = [REAL]
    out["llama-bench and lhl files"] = [*sorted((REAL / "llama-bench").glob("*.*")), *sorted(LHL.glob("*.jsonl"))]
    out["logs and gpu logs side by side"] = [REAL / "vllm-server-logs", REAL / "nvidia-smi"]
    return out


INPUTS = _inputs()


@pytest.mark.parametrize("chapter", RAW_CHAPTERS)
@pytest.mark.parametrize("case", sorted(INPUTS))
def test_what_new_writes_validate_accepts(tmp_path, capsys, chapter, case):
    out = tmp_path / "study"
    try:
        new_study(chapter, out, INPUTS[case], log=lambda m: None)
    except NewError as exc:  # a clear refusal is allowed only for inputs no reader knows
        assert all("no reader" in p or "unrecognised" in p or "no file of a known format" in p
                   or "not a server log" in p or "not nvidia-smi" in p.lower() or ": skipped: " in p
                   for p in exc.problems), exc.problems
        assert not out.exists()
        return
    code = cli(["validate", "--quick", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "Traceback" not in printed.out + printed.err


# one folder per chapter and format family: bench JSON, bench JSONL, server logs, logs with
# GPU logs, llama-bench output
FAMILIES = {
    ("h100-dense-vs-moe-mtp", "bench-json"): lambda: [DGX / "qwen-3.6-35b-a3b" / "fp8",
                                                      DGX / "qwen-3.6-27b" / "fp8"],
    ("h100-dense-vs-moe-mtp", "bench-jsonl"): lambda: [REAL / "vllm-bench-serve"],
    ("3090-dense-vs-sparse", "bench-json-and-crash-logs"): lambda: [DGX / "qwen-3.6-35b-a3b" / "fp8",
                                                                   DGX / "qwen-3.6-27b" / "fp8"],
    ("3090-dense-vs-sparse", "server-logs"): lambda: [REAL / "vllm-server-logs"],
    ("power-sweep", "logs-and-gpu-logs"): lambda: [REAL / "vllm-server-logs", REAL / "nvidia-smi"],
    ("gb10-mtp", "bench-json-and-boot-log"): lambda: [DGX / "qwen-3.6-35b-a3b" / "bf16",
                                                      DGX / "qwen-3.6-35b-a3b" / "fp8"],
    ("gb10-mtp", "server-logs"): lambda: [REAL / "vllm-server-logs"],
    ("strix-halo-baseline", "llama-bench"): lambda: [REAL / "llama-bench", LHL],
}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections")
    return copy_project(root)


def _page_sections(nb) -> tuple[set, set]:
    """(sections the executed page marks absent, sections whose guarded cells show an empty table)."""
    absent, empty = set(), set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        out = json.dumps(cell.get("outputs", []))
        absent |= set(re.findall(r"benchbook-absent-([\w-]+)", out))
        if "benchbook-empty" in out:
            empty |= set(re.findall(r'r\.has\("([\w-]+)"\)', cell.source))
    return absent, empty


@pytest.mark.build
@pytest.mark.parametrize(("chapter", "family"), sorted(FAMILIES))
def test_validate_lists_the_sections_the_page_shows(project, tmp_path, capsys, monkeypatch, chapter, family):
    out = tmp_path / "study"
    new_study(chapter, out, FAMILIES[(chapter, family)](), log=lambda m: None)
    monkeypatch.chdir(project)  # the book whose page it is: its chapters' data folders are the cross-reads
    assert cli(["validate", str(out)]) == 0
    printed = capsys.readouterr().out
    spec = get(chapter)
    said = re.search(r"the page will show: (.*)", printed).group(1)
    shown = {s.id for s in spec.contract.sections if s.title in said.split("; ")}
    nb = nbformat.read(Chapter(project, chapter).execute({"data_dir": str(out)}, log=lambda m: None), as_version=4)
    absent, empty = _page_sections(nb)
    assert not shown & absent, f"validate lists {shown & absent} but the page says they are not in this data"
    assert not shown & empty, f"validate lists {shown & empty} but the page shows them empty"
    missing = {s.id for s in spec.contract.sections} - shown
    assert absent <= missing
    # the page opens on these files, with the write-up's own introduction left out
    tags = [set(c.get("metadata", {}).get("tags", [])) for c in nb.cells if c.cell_type == "markdown"]
    assert not any("needs-comparable" in t for t in tags)
    opening = next(c.source for c in nb.cells if "needs-other-setup" in c.get("metadata", {}).get("tags", []))
    assert "data_label" in opening and "data_models" in opening

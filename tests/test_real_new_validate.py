"""What `benchbook new` writes, `benchbook validate` accepts: over every real file in
../shared/samples/ alone, every folder of them, and the mixes a user makes, for every chapter
that reads raw files. A to-do is allowed (validate lists it and exits 0); a problem is not,
and neither is a traceback. `new` may refuse an input only with a clear error (a folder of
files no reader knows).

Run in-process (no subprocess per case) so all of them fit the suite's time budget.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.cli import main as cli
from benchbook.registry import CHAPTERS
from benchbook.scaffold import NewError, new_study
from realdata import LHL, REAL, needs_shared

pytestmark = needs_shared

RAW_CHAPTERS = [c.id for c in CHAPTERS if c.contract is not None and c.id == c.notebook_name]
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
    code = cli(["validate", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "Traceback" not in printed.out + printed.err

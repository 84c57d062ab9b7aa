"""Reader for the results of a hand-run task gauntlet: a small CSV, one row per answer.

Seed 002 grades two models on the same hard prompts by hand (constraints met, whether
the model checked itself, how long it took). No tool writes these, so the format is
ours: UTF-8 CSV, `#` lines before the header are comments, then this header (columns in
any order; task, model and seconds are required, the rest optional):

    task_id,task,model,checks_total,checks_met,self_verified,seconds,answer,notes

- checks_total / checks_met: whole numbers, met <= total (constraints, bugs to find, ...);
- self_verified: true/false (also yes/no, 1/0); empty when the grader did not say;
- seconds: wall time of the answer, a number >= 0; empty when not timed;
- answer, notes: free text (redacted). Other columns are kept as they are.

Counting: `read` = data rows; rows with every cell empty are ignored and counted.
A malformed value is an error naming the line and the column.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import conform
from .textio import read_text

FORMAT = "gauntlet-csv"
TABLES = ("gauntlet",)
REQUIRED = ("task", "model", "seconds")
OPTIONAL = ("task_id", "checks_total", "checks_met", "self_verified", "answer", "notes")
TRUE, FALSE = {"true", "yes", "y", "1"}, {"false", "no", "n", "0"}


def _header_line(text: str) -> tuple[int, str | None]:
    """(line number, text) of the first line that is not a comment or blank."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            return n, line
    return 0, None


def sniff(head: str, path: str | Path | None = None) -> bool:
    _, line = _header_line(head.lstrip("\ufeff"))
    if line is None:
        return False
    cols = {c.strip().lower() for c in next(csv.reader([line]), [])}
    return set(REQUIRED) <= cols


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Every graded answer of the file as a row of the gauntlet table."""
    path = Path(path)
    result = IngestResult(path=str(path), format=FORMAT)
    text = read_text(path)
    start, header = _header_line(text)
    if header is None:
        raise IngestError(path, None, f"no header line; expected: {','.join(REQUIRED + OPTIONAL)}")
    body = "\n".join(text.splitlines()[start - 1:])
    reader = csv.reader(io.StringIO(body))
    names = [c.strip().lower() for c in next(reader)]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise IngestError(path, f"line {start}", f"header lacks column(s) {', '.join(missing)}; "
                          f"expected at least {', '.join(REQUIRED)} (found {', '.join(names)})")
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise IngestError(path, f"line {start}", f"column(s) {', '.join(dupes)} appear twice in the header")
    rows = []
    prev = reader.line_num
    for cells in reader:
        n, prev = start + prev, reader.line_num  # first physical line of the row (quoted newlines allowed)
        if not any(c.strip() for c in cells):
            result.ignore("empty row")
            continue
        if len(cells) != len(names):
            raise IngestError(path, f"line {n}", f"{len(cells)} cells; the header has {len(names)} columns")
        result.read += 1
        rows.append(_row(dict(zip(names, (c.strip() for c in cells))), path, n))
    result.tables = {"gauntlet": conform(pd.DataFrame(rows), "gauntlet")}
    return result


def _row(cells: dict, path: Path, n: int) -> dict:
    where = lambda col: f"line {n}, column {col!r}"  # noqa: E731
    for col in ("task", "model"):
        if not cells.get(col):
            raise IngestError(path, where(col), "empty; every row names its task and model")
    total = _whole(cells.get("checks_total", ""), path, where("checks_total"))
    met = _whole(cells.get("checks_met", ""), path, where("checks_met"))
    if total is not pd.NA and met is not pd.NA and met > total:
        raise IngestError(path, where("checks_met"), f"{met} checks met but only {total} checks in total")
    out = {
        **{k: v for k, v in cells.items() if k not in REQUIRED + OPTIONAL},
        "source_file": str(path),
        "line": n,
        "task_id": cells.get("task_id") or None,
        "task": redact(cells["task"]),
        "model": cells["model"],
        "checks_total": total,
        "checks_met": met,
        "self_verified": _bool(cells.get("self_verified", ""), path, where("self_verified")),
        "seconds": _seconds(cells["seconds"], path, where("seconds")),
        "answer": redact(cells.get("answer")) or None,
        "notes": redact(cells.get("notes")) or None,
    }
    return out


def _whole(text: str, path, where):
    if text == "":
        return pd.NA
    try:
        value = int(text)
    except ValueError:
        raise IngestError(path, where, f"expected a whole number, found {text!r}") from None
    if value < 0:
        raise IngestError(path, where, f"expected a count >= 0, found {value}")
    return value


def _bool(text: str, path, where):
    word = text.strip().lower()
    if word == "":
        return pd.NA
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise IngestError(path, where, f"expected true or false, found {text!r}")


def _seconds(text: str, path, where) -> float:
    if text == "":
        return math.nan
    try:
        value = float(text.removesuffix("s").strip())
    except ValueError:
        raise IngestError(path, where, f"expected seconds as a number (e.g. 9.4), found {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise IngestError(path, where, f"expected seconds >= 0, found {text!r}")
    return value

"""Decode and prefill by concurrency from llama-benchy (benchbook.analysis.closed_loop), on the
DGX Spark harness's real tests: the numbers shown are the lines of the raw tables, read here
with a regex, and a test whose table is in both its .md and its .log is shown once."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from benchbook import ingest
from benchbook.analysis import closed_loop
from realdata import DGX, needs_shared

FOLDER = "qwen-3.6-35b-a3b/fp8"
ROW = re.compile(r"^\|\s*\S+\s*\|\s*(tg|pp)(\d+)(?: @ d(\d+))? \(c(\d+)\)\s*"  # | model | test (cN) |
                 r"\|\s*([0-9.]+) ± ([0-9.]+)\s*\|\s*([0-9.]+)")  # | total ± sd | per request


def _read(names) -> pd.DataFrame:
    frames = []
    for name in names:
        res = ingest.read(DGX / FOLDER / name)
        frames.append(res.tables["llama_benchy"].assign(config="c", source_file=f"raw/{name}"))
    return pd.concat(frames, ignore_index=True)


@needs_shared
def test_a_test_in_both_its_md_and_its_log_is_shown_once_from_the_md():
    both = _read(["01-chat.md", "01-chat.log", "02-rag-8k.log"])
    pts = closed_loop.points(both, ["c"])
    assert set(pts["source_file"]) == {"raw/01-chat.md", "raw/02-rag-8k.log"}  # a log alone is kept
    assert len(pts) == len(_read(["01-chat.md"])) + len(_read(["02-rag-8k.log"]))


@needs_shared
def test_the_decode_and_prefill_tables_are_the_raw_lines():
    names = sorted(p.name for p in (DGX / FOLDER).glob("0[1-6]-*.md"))
    pts = closed_loop.points(_read(names), ["c"])
    raw = []
    for name in names:
        for line in (DGX / FOLDER / name).read_text(encoding="utf-8").splitlines():
            if m := ROW.match(line):
                raw.append((m[1], int(m[4]), float(m[5]), float(m[6]), float(m[7])))
    for kind in ("tg", "pp"):
        shown = closed_loop.display(pts, kind, {"c": "label"})
        mine = [r for r in raw if r[0] == kind]
        assert len(shown) == len(mine) > 0
        for (_, row), (_, conc, total, sd, req) in zip(shown.iterrows(), mine):
            assert row["concurrency"] == conc
            assert row["t/s in total"] == f"{total:,.1f} ± {sd:,.1f}"
            assert row["t/s per request"].startswith(f"{req:,.1f}")
    glued = closed_loop.glue_values(pts)
    assert glued["closed_points"] == sum(r[0] == "tg" for r in raw) and glued["closed_runs"] == "3"
    assert glued["closed_concurrency"] == "1, 5, 10, 20"


def test_no_tests_no_rows():
    empty = closed_loop.points(pd.DataFrame(), ["c"])
    assert empty.empty and closed_loop.glue_values(empty)["closed_runs"] == "not stated"


@pytest.mark.parametrize("kind", ["tg", "pp"])
def test_an_empty_table_displays_empty(kind):
    assert closed_loop.display(pd.DataFrame(columns=closed_loop.COLUMNS), kind, {}).empty

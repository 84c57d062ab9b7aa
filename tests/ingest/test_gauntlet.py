"""The gauntlet CSV reader: documented header, typed values, clear errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import gauntlet as g

HEADER = "task_id,task,model,checks_total,checks_met,self_verified,seconds,answer,notes\n"
ROWS = (
    'lru,"LRU cache, 6 strict constraints",qwen3.6-27b-coder,6,6,true,11.5,,"all 6; ran its own checks"\n'
    "bugs,Find ALL bugs,qwen3.6-35b-a3b,3,3,,1.4,,terse\n"
    "train,Train/bird,qwen3.6-35b-a3b,1,1,no,6.1s,271.4,1900/7\n"
)


def write(tmp_path: Path, text: str, name: str = "gauntlet.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_rows_with_types_and_line_numbers(tmp_path):
    path = write(tmp_path, "# graded by hand\n# second comment\n" + HEADER + ROWS)
    result = ingest.read(path)
    assert result.format == "gauntlet-csv" and result.read == 3 and result.ignored == 0
    df = result.tables["gauntlet"]
    assert list(df["line"]) == [4, 5, 6]
    assert list(df["task"])[0] == "LRU cache, 6 strict constraints"
    assert list(df["checks_met"]) == [6, 3, 1] and str(df["checks_met"].dtype) == "Int64"
    assert df["self_verified"].tolist()[0] is True and pd.isna(df["self_verified"].iloc[1])
    assert df["self_verified"].iloc[2] == False  # noqa: E712
    assert list(df["seconds"]) == [11.5, 1.4, 6.1]  # "6.1s" accepted
    assert df["answer"].iloc[2] == "271.4" and pd.isna(df["answer"].iloc[0])


def test_columns_in_any_order_extra_columns_kept_and_blank_rows_counted(tmp_path):
    text = "model,seconds,task,grader\nm1,2.5,t1,ana\n,,,\nm2,,t2,ben\n"
    result = g.read(write(tmp_path, text))
    df = result.tables["gauntlet"]
    assert list(df["model"]) == ["m1", "m2"] and list(df["grader"]) == ["ana", "ben"]
    assert pd.isna(df["seconds"].iloc[1]) and pd.isna(df["checks_total"].iloc[0])
    assert result.ignored == 1 and result.reasons["empty row"] == 1


def test_quoted_newline_keeps_the_rows_first_line(tmp_path):
    text = HEADER + 'lru,LRU,m,6,6,true,9.4,,"line one\nline two"\nbugs,B,m,3,3,,1.4,,x\n'
    df = g.read(write(tmp_path, text)).tables["gauntlet"]
    assert list(df["line"]) == [2, 4] and df["notes"].iloc[0] == "line one\nline two"


def test_notes_are_redacted(tmp_path):
    text = HEADER + "lru,LRU,m,6,6,true,9.4,,used --api-key abcdef123456789 to call it\n"
    df = ingest.read(write(tmp_path, text)).tables["gauntlet"]
    assert "abcdef123456789" not in df["notes"].iloc[0]


@pytest.mark.parametrize("row,where,words", [
    ("lru,LRU,m,6,7,true,9.4,,x\n", "column 'checks_met'", "7 checks met but only 6"),
    ("lru,LRU,m,six,6,true,9.4,,x\n", "column 'checks_total'", "whole number"),
    ("lru,LRU,m,6,6,maybe,9.4,,x\n", "column 'self_verified'", "true or false"),
    ("lru,LRU,m,6,6,true,-1,,x\n", "column 'seconds'", ">= 0"),
    ("lru,LRU,m,6,6,true,fast,,x\n", "column 'seconds'", "as a number"),
    ("lru,,m,6,6,true,9.4,,x\n", "column 'task'", "empty"),
    ("lru,LRU,m,6,6,true,9.4\n", "line 2", "7 cells; the header has 9"),
])
def test_bad_values_name_line_and_column(tmp_path, row, where, words):
    path = write(tmp_path, HEADER + row)
    with pytest.raises(IngestError) as exc:
        g.read(path)
    msg = str(exc.value)
    assert str(path) in msg and "line 2" in msg and where in msg and words in msg


def test_header_problems(tmp_path):
    with pytest.raises(IngestError, match="header lacks column.*seconds"):
        g.read(write(tmp_path, "task,model,time\nt,m,1\n"))
    with pytest.raises(IngestError, match="appear twice"):
        g.read(write(tmp_path, "task,model,seconds,model\nt,m,1,m\n"))
    with pytest.raises(IngestError, match="no header"):
        g.read(write(tmp_path, "# only a comment\n"))


def test_sniff():
    assert g.sniff("# c\n" + HEADER, None)
    assert not g.sniff("index, timestamp, name, memory.used [MiB]\n", None)
    assert not g.sniff('{"task": "x", "model": "y", "seconds": 1}\n', None)

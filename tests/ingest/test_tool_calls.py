"""The tool-call log reader: format, classification of denied calls, redaction, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import tool_calls as tc

ROOT = Path(__file__).resolve().parents[2]
PERMS = {"event": "permissions", "ts": "2026-04-14T09:30:00.000Z", "harness": "oac 0.9.3",
         "tools": ["bash", "read", "write", "edit"],
         "rules": {"bash": {"uv run scripts/db_query.py --sql *": "allow", "uv run scripts/ralf.py *": "allow",
                            "*": "deny"},
                   "read": {"/srv/agents/workspace/**": "allow", "*": "deny"}}}


def call(n, tool, target, decision, session="ses_a", message=1, **extra):
    args = {"command": target} if tool == "bash" else {"filePath": target} if tool == "read" else target
    rec = {"event": "tool.call", "ts": f"2026-04-14T09:31:{n:02d}.000Z", "session": session,
           "agent": "ralf/step_runner", "model": "vllm/cyankiwi/Qwen3.5-27B-AWQ-BF16-INT8",
           "message": message, "call": f"call_{n:04d}", "tool": tool, "args": args, "decision": decision}
    rec.update(extra)
    return rec


def write(path: Path, records, tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def test_reads_calls_and_classifies_denied_ones(tmp_path):
    recs = [
        PERMS,
        call(1, "bash", "uv run scripts/db_query.py --sql 'SELECT 1'", "allow"),
        call(2, "bash", "uv run scripts/db_query.py --sql 'SELECT 1' | head -5", "deny", message=2),
        call(3, "bash", "uv run scripts/food_management.py --list", "deny", message=2),
        call(4, "read", "/data/rendered/stg_1_chart.png", "deny", session="ses_b", message=1),
        call(5, "emit_guidance", {"stage": "stg_1"}, "deny", session="ses_b", message=2),
        call(6, "bash", "uv run scripts/ralf.py update-stage-status --stage s --status awaiting_eval", "allowed",
             session="ses_b", message=3),
        {"event": "session.end", "session": "ses_b", "messages": 3},
    ]
    result = ingest.read(write(tmp_path / "calls.jsonl", recs))
    assert result.format == "tool-call-log"
    df = result.tables["tool_calls"]
    assert len(df) == 6 and result.read == 8 and result.ignored == 1
    assert "not a tool call (event 'session.end')" in result.reasons
    assert list(df["line"]) == [2, 3, 4, 5, 6, 7]
    assert list(df["allowed"]) == [True, False, False, False, False, True]
    assert list(df["failure_class"].fillna("")) == [
        "", "pipe-filter", "script-not-allowed", "blocked-read-path", "hallucinated-tool", ""]
    assert df.loc[3, "target"] == "/data/rendered/stg_1_chart.png"
    assert json.loads(df.loc[4, "target"]) == {"stage": "stg_1"}
    assert df["session"].nunique() == 2
    assert df[["session", "message"]].drop_duplicates().shape[0] == 5
    assert str(df["message"].dtype) == "Int64"


def test_without_permissions_allowed_scripts_come_from_allowed_calls(tmp_path):
    recs = [call(1, "bash", "uv run scripts/db_query.py --sql x", "allow"),
            call(2, "bash", "uv run scripts/db_query.py --sql \"$(cat q)\"", "deny"),
            call(3, "bash", "uv run scripts/other.py", "deny")]
    df = tc.read(write(tmp_path / "c.jsonl", recs)).tables["tool_calls"]
    assert list(df["failure_class"])[1:] == ["other", "script-not-allowed"]


def test_records_without_event_key_and_decision_words(tmp_path):
    recs = [{k: v for k, v in call(1, "bash", "ls", "DENIED").items() if k != "event"},
            {k: v for k, v in call(2, "bash", "ls", "Allowed").items() if k != "event"}]
    path = write(tmp_path / "c.jsonl", recs)
    assert ingest.detect(path) is tc
    df = tc.read(path).tables["tool_calls"]
    assert list(df["allowed"]) == [False, True] and df.loc[0, "failure_class"] == "bare-binary"


def test_secrets_in_commands_and_reasons_are_redacted(tmp_path):
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0"
    recs = [call(1, "bash", f"curl -s -H 'Authorization: Bearer {key}' https://api.example.org | jq .", "deny",
                 reason=f"denied; env OPENAI_API_KEY={key}")]
    result = ingest.read(write(tmp_path / "c.jsonl", recs))
    df = result.tables["tool_calls"]
    text = df.to_csv()
    assert key not in text and "[REDACTED" in df.loc[0, "target"]
    assert df.loc[0, "failure_class"] == "pipe-filter"  # classified on the command, not the redacted text


def test_truncated_last_line_is_counted_not_fatal(tmp_path):
    path = write(tmp_path / "c.jsonl", [PERMS, call(1, "bash", "ls", "deny")], tail='{"event": "tool.call", "sess')
    result = tc.read(path)
    assert len(result.tables["tool_calls"]) == 1 and result.ignored == 1
    assert any("cut short" in r for r in result.reasons)


def test_gzip_log(tmp_path):
    raw = "".join(json.dumps(r) + "\n" for r in [PERMS, call(1, "bash", "ls", "deny")])
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(gzip.compress(raw.encode()))
    assert len(ingest.read(path).tables["tool_calls"]) == 1


@pytest.mark.parametrize("bad,where,words", [
    ('{"event": "tool.call", "session": "s"\n', "line 2", "not a JSON object"),
    ("[1, 2]\n", "line 2", "found a JSON list"),
])
def test_bad_json_names_the_line(tmp_path, bad, where, words):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(PERMS) + "\n" + bad + json.dumps(call(1, "bash", "ls", "deny")) + "\n")
    with pytest.raises(IngestError) as exc:
        tc.read(path)
    assert where in str(exc.value) and words in str(exc.value) and str(path) in str(exc.value)


@pytest.mark.parametrize("change,where,words", [
    ({"model": None}, "key 'model'", "missing"),
    ({"session": ""}, "key 'session'", "missing"),
    ({"decision": "maybe"}, "key 'decision'", "unknown decision 'maybe'"),
    ({"message": "3"}, "key 'message'", "message index"),
    ({"message": -1}, "key 'message'", "message index"),
])
def test_bad_records_name_line_and_key(tmp_path, change, where, words):
    rec = call(1, "bash", "ls", "deny")
    rec.update(change)
    path = write(tmp_path / "c.jsonl", [PERMS, rec])
    with pytest.raises(IngestError) as exc:
        tc.read(path)
    assert "line 2" in str(exc.value) and where in str(exc.value) and words in str(exc.value)


def test_sniff_tells_the_format_apart():
    assert tc.sniff(json.dumps(PERMS) + "\n", None)
    assert tc.sniff(json.dumps(call(1, "bash", "ls", "deny")), None)
    assert not tc.sniff('{"build_commit": "abc", "n_prompt": 512}\n', None)  # llama-bench jsonl
    assert not tc.sniff('{"date": "20260606-191412", "num_prompts": 10, "completed": 10}', None)
    assert not tc.sniff("index, timestamp, memory.used [MiB]\n", None)


def test_empty_log_gives_an_empty_table(tmp_path):
    path = write(tmp_path / "c.jsonl", [PERMS])
    result = tc.read(path)
    assert len(result.tables["tool_calls"]) == 0 and result.read == 1
    assert "failure_class" in result.tables["tool_calls"].columns


def test_committed_logs_reproduce_the_published_counts():
    data = ROOT / "data/3090-dense-vs-sparse/raw/agent-logs"
    if not data.is_dir():
        pytest.skip("reconstructed data not present")
    df = tc.read(data / "qwen35-122b.jsonl").tables["tool_calls"]
    denied = df[~df["allowed"]]
    assert (len(df), len(denied), df["session"].nunique()) == (128, 13, 17)
    assert denied["failure_class"].value_counts().to_dict() == {
        "shell-chain": 3, "pipe-filter": 2, "timeout-prefix": 2, "blocked-read-path": 2,
        "hallucinated-tool": 2, "heredoc": 1, "script-not-allowed": 1}

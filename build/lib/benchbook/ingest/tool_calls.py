"""Reader for an agent harness's tool-call log (JSON Lines, one record per line).

Seed 003's reliability tables count an orchestrator's tool calls and the ones its
permission rules denied. No public tool writes such a log, so the format is the
harness's own, documented here (and in the book's methods page):

    {"event": "permissions", "ts": "...", "harness": "oac 0.9.3",
     "tools": ["bash", "read", ...],
     "rules": {"bash": {"uv run scripts/db_query.py *": "allow", "*": "deny"},
               "read": {"/srv/agents/workspace/**": "allow", "*": "deny"}}}
    {"event": "tool.call", "ts": "2026-05-12T09:14:07.312+03:00",
     "session": "ses_5b1e9c0f", "agent": "ralf/step_runner", "model": "vllm/Qwen/...",
     "message": 3, "call": "call_8d2f61", "tool": "bash",
     "args": {"command": "uv run scripts/db_query.py --sql \"...\"", "description": "..."},
     "decision": "deny", "reason": "no allow rule matches; default rule '*': deny"}

- `tool.call` records (also any record without `event` that has session, tool and
  decision) become rows of the `tool_calls` table. Required: session, model, tool,
  decision (allow/allowed or deny/denied); message is the index of the assistant message
  within the session (0-based or 1-based, as the harness counts); args holds the tool's
  arguments. The command (bash) or path (read, glob, grep, list) is kept as `target`.
- `permissions` records list the harness's tools and rules: they tell the classifier
  which scripts are allowed and which tool names exist. Without one, the scripts seen in
  allowed calls of the same file count as allowed, and OpenCode's tool names as known.
- The failure class of a denied call is not in the log: it is computed by
  `benchbook.ingest.tool_failures` from the tool name and the command or path.
- Commands, paths and reasons go through `benchbook.ingest.redact` before they are stored.

Counting: `read` = non-blank lines that are JSON objects. Ignored, with the reason:
other events (session start/end, messages), and a last line cut short by a crash.
Invalid JSON elsewhere, or a tool call missing a required key, is an error naming the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import conform
from .textio import read_text
from .tool_failures import KNOWN_TOOLS, SHELL_TOOLS, classify, parse, script_of, scripts_in_allow_rules

FORMAT = "tool-call-log"
TABLES = ("tool_calls",)

ALLOW = {"allow", "allowed", "ok", "approved"}
DENY = {"deny", "denied", "reject", "rejected", "blocked"}
CALL_EVENTS = {"tool.call", "tool_call", "toolcall"}
_REQUIRED = ("session", "model", "tool", "decision")
_PATH_KEYS = ("filePath", "file_path", "path", "pattern", "url")
_FIRST_LINE = re.compile(r'^\s*\{.*"(?:event)"\s*:\s*"(?:permissions|tool\.call|tool_call)"')


def sniff(head: str, path: str | Path | None = None) -> bool:
    """True when the first line is a permissions or tool-call record of this format."""
    first = head.lstrip("\ufeff").lstrip().split("\n", 1)[0]
    if not first.startswith("{"):
        return False
    if _FIRST_LINE.match(first):
        return True
    return all(f'"{k}"' in first for k in ("session", "tool", "decision"))


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read every record of the log into the tool_calls table, classifying denied calls."""
    path = Path(path)
    result = IngestResult(path=str(path), format=FORMAT)
    text = read_text(path)
    lines = text.splitlines()
    calls, perms = [], []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as exc:
            if n == len(lines) and not text.endswith("\n"):
                result.ignore("last line cut short (no closing newline; the writer stopped mid-record)")
                continue
            raise IngestError(path, f"line {n}",
                              f"not a JSON object ({exc.msg}); expected one tool-call log record per line") from exc
        if not isinstance(rec, dict):
            raise IngestError(path, f"line {n}",
                              f"found a JSON {type(rec).__name__}; expected one record object per line")
        result.read += 1
        event = rec.get("event")
        if event == "permissions":
            perms.append(rec)
        elif event in CALL_EVENTS or (event is None and all(k in rec for k in ("session", "tool", "decision"))):
            calls.append((n, rec))
        else:
            result.ignore(f"not a tool call (event {event!r})")
    known, allowed_scripts = _permissions(perms, calls, path)
    rows = [_row(n, rec, path, known, allowed_scripts) for n, rec in calls]
    result.tables = {"tool_calls": conform(pd.DataFrame(rows), "tool_calls")}
    return result


def _decision(value, path, n) -> bool:
    word = str(value).strip().lower()
    if word in ALLOW:
        return True
    if word in DENY:
        return False
    raise IngestError(path, f"line {n}, key 'decision'",
                      f"unknown decision {value!r}; expected one of: allow, deny (or allowed, denied)")


def _target(tool: str, args) -> str | None:
    """The command (shell tools) or path (file tools); other tools: their arguments as JSON."""
    if not isinstance(args, dict):
        return None if args is None else str(args)
    if tool in SHELL_TOOLS and "command" in args:
        return str(args["command"])
    for key in _PATH_KEYS:
        if key in args:
            return str(args[key])
    if "command" in args:
        return str(args["command"])
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def _permissions(perms: list[dict], calls, path: Path):
    """Known tool names and allowed scripts, from permissions records or, failing that, the calls."""
    known = set()
    allow_patterns = []
    for rec in perms:
        known |= {str(t).lower() for t in rec.get("tools") or []}
        rules = rec.get("rules") or {}
        bash = rules.get("bash") if isinstance(rules, dict) else None
        if isinstance(bash, dict):
            allow_patterns += [p for p, v in bash.items() if str(v).lower() == "allow"]
    if not known:
        known = set(KNOWN_TOOLS)
    if allow_patterns:
        return known, scripts_in_allow_rules(allow_patterns)
    seen = set()
    for n, rec in calls:
        tool = str(rec.get("tool", "")).lower()
        if tool in SHELL_TOOLS and str(rec.get("decision", "")).lower() in ALLOW:
            cmd = _target(tool, rec.get("args"))
            for s in parse(cmd or "").simples():
                script = script_of(s)
                if script:
                    seen.add(script)
    return known, seen


def _row(n: int, rec: dict, path: Path, known, allowed_scripts) -> dict:
    for key in _REQUIRED:
        if rec.get(key) in (None, ""):
            raise IngestError(path, f"line {n}, key {key!r}",
                              f"missing; a tool-call record needs {', '.join(_REQUIRED)}")
    message = rec.get("message")
    if message is not None and (isinstance(message, bool) or not isinstance(message, int) or message < 0):
        raise IngestError(path, f"line {n}, key 'message'",
                          f"expected a message index (whole number >= 0), found {message!r}")
    tool = str(rec["tool"])
    allowed = _decision(rec["decision"], path, n)
    target = _target(tool.lower(), rec.get("args"))
    failure = None
    if not allowed:
        failure = classify(tool, target, known_tools=known, allowed_scripts=allowed_scripts)
    reason = rec.get("reason")
    return {
        "source_file": str(path),
        "line": n,
        "session": redact(str(rec["session"])),
        "model": str(rec["model"]),
        "message": message,
        "tool": redact(tool),
        "target": redact(target) if target is not None else None,
        "allowed": allowed,
        "failure_class": failure,
        "ts": rec.get("ts"),
        "agent": redact(str(rec["agent"])) if rec.get("agent") is not None else None,
        "call_id": rec.get("call"),
        "reason": redact(str(reason)) if reason is not None else None,
    }


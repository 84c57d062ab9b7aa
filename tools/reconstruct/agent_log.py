"""Synthesise an orchestrator's tool-call log (the `tool-call-log` format) for one model.

Seed 003 published, per model, the sessions, messages, tool calls and errors of a
subsampled set of identical workloads, and the errors per 100 calls by failure class.
This module writes a JSONL log with exactly those counts: sessions of the same agent
workloads, one record per tool call, denied calls written as the kind of command the
write-up describes for that model and class. The class is never written: the reader's
classifier must find it again, and the generator checks that it does.

Recovery after a denial follows the write-up's description (the 3.6-35B retries shell
variants, the 27B pivots to another allowed script); how often is our assumption.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

# Allowed scripts and the bash allow rules the harness logs at start (OpenCode style).
ALLOW_RULES = {
    "uv run scripts/db_query.py --sql *": "allow",
    "uv run scripts/fetch_context.py --no-attach --agent *": "allow",
    "uv run scripts/embedding_search.py --query *": "allow",
    "uv run scripts/context_cache.py *": "allow",
    "uv run scripts/ralf.py *": "allow",
    "uv run scripts/ralf_spawn.py *": "allow",
    "uv run scripts/emit_guidance.py *": "allow",
    "uv run scripts/lights.py *": "allow",
    "uv run scripts/mail.py *": "allow",
    "uv run scripts/drafts.py *": "allow",
    "uv run scripts/calendar.py *": "allow",
    "uv run scripts/report.py *": "allow",
    "*": "deny",
}
READ_RULES = {"/srv/agents/workspace/**": "allow", "/srv/agents/skills/**": "allow", "*": "deny"}
TOOLS = ["bash", "read", "write", "edit", "glob", "grep", "list", "todowrite", "todoread", "task"]

# The workloads every model ran (identical prompts): agent, topic, stage id.
WORKLOADS = [
    ("ralf/step_runner", "heat pump noise at night", "stg_4821"),
    ("home/lights", "evening scene in the kitchen", None),
    ("mail/triage", "invoices from the electricity supplier", None),
    ("research/web", "quiet hours automation ideas", None),
    ("ralf/step_runner", "window film for the south room", "stg_4833"),
    ("calendar/planner", "plan the week around the school run", None),
    ("drafts/writer", "reply to the plumber about Thursday", None),
    ("ralf/step_runner", "compare heat pump tariffs", "stg_4840"),
    ("research/web", "videos on insulating a loft hatch", None),
    ("mail/triage", "newsletters to archive", None),
    ("ralf/step_runner", "battery storage payback", "stg_4852"),
    ("home/lights", "turn off the garden lights at 23:00", None),
    ("drafts/writer", "note to the neighbours about the hedge", None),
    ("calendar/planner", "move the dentist appointment", None),
    ("research/web", "best practice for dehumidifier placement", None),
    ("ralf/step_runner", "solar inverter fault codes", "stg_4866"),
    ("mail/triage", "flag messages from the school", None),
    ("home/lights", "dim the living room for a film", None),
    ("drafts/writer", "weekly summary for the family chat", None),
    ("calendar/planner", "find a free evening for the boiler service", None),
    ("research/web", "compare robot vacuum reviews", None),
]


def _allowed_commands(agent: str, topic: str, stage: str | None, k: int) -> str:
    """The k-th allowed bash command of a session of this agent (cycles through its pool)."""
    q = topic.replace('"', "")
    pools = {
        "ralf/step_runner": [
            f'uv run scripts/context_cache.py get --key stage:{stage}:notes',
            f'uv run scripts/db_query.py --sql "SELECT id, status, updated_at FROM attempts '
            f'WHERE stage_id = \'{stage}\' ORDER BY updated_at DESC LIMIT 5"',
            f'uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}"',
            f'uv run scripts/embedding_search.py --query "{q}" --k 8',
            f'uv run scripts/emit_guidance.py --stage {stage} --text "next: check sources for {q}"',
        ],
        "home/lights": [
            'uv run scripts/lights.py list --room all',
            'uv run scripts/lights.py scene --room kitchen --name evening',
            'uv run scripts/lights.py schedule --group garden --off 23:00',
            'uv run scripts/db_query.py --sql "SELECT name, state FROM devices WHERE kind = \'light\'"',
        ],
        "mail/triage": [
            'uv run scripts/mail.py search --since 2026-03-01 --limit 20',
            'uv run scripts/mail.py label --query "from:billing" --add invoices',
            'uv run scripts/mail.py archive --query "list:newsletter older_than:14d"',
            'uv run scripts/db_query.py --sql "SELECT sender, count(*) FROM mail GROUP BY sender '
            'ORDER BY 2 DESC LIMIT 10"',
        ],
        "research/web": [
            f'uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}"',
            f'uv run scripts/embedding_search.py --query "{q}" --k 10',
            f'uv run scripts/context_cache.py put --key research:{zlib.crc32(q.encode()) % 10000:04d} --from-last',
            'uv run scripts/db_query.py --sql "SELECT url, title FROM sources ORDER BY fetched_at DESC LIMIT 8"',
        ],
        "calendar/planner": [
            'uv run scripts/calendar.py list --days 7',
            'uv run scripts/calendar.py free --days 14 --min 90',
            'uv run scripts/calendar.py move --event evt_2231 --to 2026-04-09T16:30',
        ],
        "drafts/writer": [
            'uv run scripts/context_cache.py get --key drafts:style',
            f'uv run scripts/drafts.py write --subject "{q}" --tone friendly',
            'uv run scripts/drafts.py list --status pending',
        ],
    }
    pool = pools[agent]
    return pool[k % len(pool)]


def _handshake(stage: str) -> list[str]:
    """The three closing calls of a ralf stage, in order."""
    return [
        f'uv run scripts/ralf.py update-attempt-outcome --stage {stage} --outcome done '
        '--summary "findings stored in context cache"',
        f'uv run scripts/ralf.py update-stage-status --stage {stage} --status awaiting_eval',
        f'uv run scripts/ralf_spawn.py step_evaluator --stage {stage}',
    ]


def _read_path(stage: str | None, k: int) -> str:
    return f"/srv/agents/workspace/{stage or 'shared'}/notes-{k}.md"


# Denied calls as the write-up describes them, per model and class: (tool, command or path).
DENIED = {
    "qwen36_35b": {
        "pipe-filter": [
            ("bash", 'uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}" | head -50'),
            ("bash", 'ls scripts/ | grep -E "search|web"'),
            ("bash", 'uv run scripts/embedding_search.py --query "{q}" --k 20 | head -n 30'),
            ("bash", 'uv run scripts/youtube_fetcher.py --query "{q}" | jq \'.items[].title\''),
            ("bash", 'uv run scripts/db_query.py --sql "SELECT * FROM attempts" | tail -20'),
            ("bash", 'uv run scripts/mail.py search --since 2026-03-01 | grep -i invoice'),
            ("bash", 'uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}" | tail -n 40'),
            ("bash", 'uv run scripts/calendar.py list --days 7 | head -20'),
            ("bash", 'uv run scripts/context_cache.py get --key research:last | jq .summary'),
            ("bash", 'uv run scripts/lights.py list --room all | grep -v off'),
        ],
        "shell-chain": [
            ("bash", 'pkill -f fetch_context.py || true'),
            ("bash", 'cd /srv/agents/workspace && uv run scripts/db_query.py --sql "SELECT id FROM stages LIMIT 5"'),
            ("bash", 'uv run scripts/context_cache.py clear --key research:last && '
                     'uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}"'),
            ("bash", 'cd /srv/agents && uv run scripts/ralf.py update-stage-status --stage {stage} --status running'),
        ],
        "bare-binary": [
            ("bash", 'ls scripts/'),
        ],
        "other": [
            ("bash", "curl -s 'https://www.googleapis.com/youtube/v3/search?part=snippet&q={qp}'"),
            ("bash", 'uv run scripts/fetch_context.py --no-agent --command search-videos --topic "{q}"'),
            ("bash", 'curl -s "https://html.duckduckgo.com/html/?q={qp}"'),
            ("bash", 'uv run scripts/fetch_context.py --command search --topic "{q}"'),
        ],
    },
    "qwen35_27b": {
        "pipe-filter": [
            ("bash", 'uv run scripts/db_query.py --sql "SELECT id, title FROM sources" | head -20'),
        ],
        "stderr-redirect": [
            ("bash", 'uv run scripts/embedding_search.py --query "{q}" --k 8 2>&1'),
        ],
        "python-c": [
            ("bash", 'uv run python -c "import json; '
                     'print(json.load(open(\'/srv/agents/workspace/{stage}/result.json\'))[\'score\'])"'),
        ],
        "script-not-allowed": [
            ("bash", 'uv run scripts/food_management.py --list-pantry'),
            ("bash", 'uv run scripts/data_query.py --table meals --since 2026-03-01'),
        ],
        "other": [
            ("bash", "uv run scripts/db_query.py --sql 'SELECT body FROM notes WHERE body LIKE '%pump%''"),
        ],
        "blocked-read-path": [
            ("read", "/data/rendered/{stage}_overview.png"),
            ("read", "/data/rendered/{stage}_tariffs.png"),
            ("read", "/data/rendered/{stage}_chart.png"),
        ],
    },
    "qwen35_122b": {
        "pipe-filter": [
            ("bash", "uv run scripts/ralf.py get-attempt --stage {stage} | jq '.attempt.session_id'"),
            ("bash", "uv run scripts/db_query.py --sql \"SELECT * FROM stages WHERE id = '{stage}'\" "
                     "| jq '.rows[0].status'"),
        ],
        "shell-chain": [
            ("bash", 'cd /srv/agents/workspace && uv run scripts/context_cache.py get --key stage:{stage}:notes'),
            ("bash", 'uv run scripts/lights.py scene --room kitchen --name evening && '
                     'uv run scripts/lights.py list --room kitchen'),
            ("bash", 'pkill -f embedding_search.py || true'),
        ],
        "heredoc": [
            ("bash", 'cat << REPORT_EOF | uv run scripts/report.py --stage {stage} --value "$(cat)"\n'
                     '## Findings\n- tariffs compared for 3 suppliers | see cache\n- next: evaluator\nREPORT_EOF'),
        ],
        "timeout-prefix": [
            ("bash", 'timeout 60 uv run scripts/fetch_context.py --no-attach --agent research --topic "{q}"'),
            ("bash", 'timeout 120 uv run scripts/embedding_search.py --query "{q}" --k 8'),
        ],
        "script-not-allowed": [
            ("bash", 'uv run scripts/thought_transfer.py --from {stage} --to evaluator'),
        ],
        "blocked-read-path": [
            ("read", "/data/rendered/{stage}_summary.png"),
            ("read", "/data/rendered/{stage}_sources.png"),
        ],
        "hallucinated-tool": [
            ("emit_guidance", '{{"stage": "{stage}", "text": "evaluate the tariff comparison"}}'),
            ("emit_guidance", '{{"stage": "{stage}", "text": "check payback assumptions"}}'),
        ],
    },
}

REASONS = {
    "bash": "permission denied: no allow rule matches this command (default rule '*': deny)",
    "read": "permission denied: external_directory: path is outside the allowed directories",
    "tool": "unknown tool '{tool}': available tools are {tools}",
}


@dataclass
class Call:
    tool: str
    target: str  # command, path, or JSON arguments (unknown tools)
    allowed: bool
    kind: str = ""  # failure class intended, or 'handshake' / 'work'


@dataclass
class Session:
    sid: str
    agent: str
    topic: str
    stage: str | None
    messages: list[list[Call]] = field(default_factory=list)


def _split_messages(rng, total: int, n: int, minimum: int, weights: np.ndarray) -> list[int]:
    """n positive counts (each >= minimum) summing to total, larger where weights are larger."""
    base = np.full(n, minimum)
    rest = total - base.sum()
    if rest < 0:
        raise ValueError(f"{total} messages cannot give {n} sessions at least {minimum} each")
    extra = rng.multinomial(rest, weights / weights.sum())
    return [int(x) for x in base + extra]


def build(model: str, counts: dict, target: dict, style: dict, rng: np.random.Generator) -> list[Session]:
    """Sessions whose calls match the target counts exactly.

    counts: failure class -> denied calls; target: sessions, messages, tool_calls;
    style: burst (denials per retry burst), handshake_complete (ralf sessions that emit all three
    closing calls), handshake_partial (further ralf sessions that skip update-attempt-outcome).
    """
    n_sess, n_msg, n_calls = target["sessions"], target["messages"], target["tool_calls"]
    work = WORKLOADS[:n_sess]
    ralf = np.array([w[0] == "ralf/step_runner" for w in work])
    msgs = _split_messages(rng, n_msg, n_sess, 3, np.where(ralf, 1.6, 1.0))
    # which ralf sessions emit the full handshake (3 closing calls, in their last messages)
    ralf_ids = [i for i, r in enumerate(ralf) if r]
    n_full, n_part = style["handshake_complete"], style.get("handshake_partial", 0)
    complete = {i: 3 for i in ralf_ids[:n_full]} | {i: 2 for i in ralf_ids[n_full:n_full + n_part]}
    denied = [(cls, c) for cls, items in DENIED[model].items() for c in items[: counts.get(cls, 0)]]
    for cls in counts:
        have = sum(1 for c, _ in denied if c == cls)
        if have != counts[cls]:
            raise ValueError(f"{model}: {counts[cls]} denied '{cls}' calls wanted, {have} templates")
    order = rng.permutation(len(denied))
    denied = [denied[i] for i in order]
    # slots: one call per message first; extra calls go to random messages (2 calls there)
    extra = n_calls - n_msg
    calls_per = [[1] * m for m in msgs]
    flat = [(s, k) for s, m in enumerate(msgs) for k in range(m)]
    for j in rng.choice(len(flat), size=extra, replace=False):
        s, k = flat[j]
        calls_per[s][k] += 1
    sessions = []
    for s, (agent, topic, stage) in enumerate(work):
        sess = Session(f"ses_{rng.integers(16**10):010x}", agent, topic, stage)
        sess.messages = [[None] * c for c in calls_per[s]]
        sessions.append(sess)
    _place(sessions, denied, complete, style, rng)
    return sessions


def _slots(sess: Session) -> list[tuple[int, int]]:
    return [(m, c) for m, calls in enumerate(sess.messages) for c in range(len(calls))]


def _place(sessions, denied, complete, style, rng) -> None:
    """Denied calls in bursts (retry style) or alone (pivot style); the rest allowed work."""
    reserved = _reserve_handshakes(sessions, complete)
    placed = {}
    for group, fits in _denial_groups(denied, style["burst"], rng):
        _place_burst(sessions, group, fits, reserved, placed, rng)
    _fill(sessions, reserved, placed)


def _reserve_handshakes(sessions, complete) -> dict:
    """Handshake slots first: the last call slots of ralf sessions that close (3 calls) or
    half-close (the last 2, update-attempt-outcome skipped)."""
    reserved = {}
    for i, sess in enumerate(sessions):
        n = complete.get(i, 0)
        if n:
            for slot, cmd in zip(_slots(sess)[-n:], _handshake(sess.stage)[-n:]):
                reserved[(i, slot)] = Call("bash", cmd, True, "handshake")
    return reserved


def _denial_groups(denied, burst, rng) -> list:
    """Groups of denials: bursts of consecutive denied calls in one session, each member fitting
    the session's agent (a ralf stage command goes to a ralf session, a lights pipe to lights)."""
    denied = sorted(denied, key=lambda d: sorted(_affinity(d[1][1])))
    groups, k = [], 0
    while k < len(denied):
        size = burst[int(rng.integers(len(burst)))]
        group, fits = [denied[k]], _affinity(denied[k][1][1])
        k += 1
        while len(group) < size and k < len(denied) and fits & _affinity(denied[k][1][1]):
            fits &= _affinity(denied[k][1][1])
            group.append(denied[k])
            k += 1
        groups.append((group, fits))
    return groups


def _place_burst(sessions, group, fits, reserved, placed, rng) -> None:
    """One group on a run of consecutive free slots of a fitting session, tried at random sessions."""
    candidates = [i for i, s in enumerate(sessions) if s.agent in fits]
    for _ in range(400):
        i = candidates[int(rng.integers(len(candidates)))]
        free = [sl for sl in _slots(sessions[i]) if (i, sl) not in reserved and (i, sl) not in placed]
        # a run of len(group) consecutive free slots, not the session's first call
        slots = _slots(sessions[i])
        runs = [j for j in range(1, len(free) - len(group) + 1)
                if all(_next(free[j + t], free[j + t + 1], sessions[i]) for t in range(len(group) - 1))
                and not _touches(slots, free[j], free[j + len(group) - 1], i, placed)]
        if runs:
            j = runs[int(rng.integers(len(runs)))]
            for t, (cls, (tool, tmpl)) in enumerate(group):
                placed[(i, free[j + t])] = (cls, tool, tmpl)
            return
    raise ValueError(  # pragma: no cover - the counts always leave room
        f"could not place a burst of {len(group)} denied calls in {sorted(fits)} sessions")


def _fill(sessions, reserved, placed) -> None:
    """Every call slot: its handshake, its placed denial, or allowed work (every fifth a read)."""
    for i, sess in enumerate(sessions):
        q = sess.topic
        stage = sess.stage or "stg_0000"
        work_k = 0
        for m, calls in enumerate(sess.messages):
            for c in range(len(calls)):
                key = (i, (m, c))
                if key in reserved:
                    calls[c] = reserved[key]
                elif key in placed:
                    cls, tool, tmpl = placed[key]
                    text = tmpl.format(q=q, qp=q.replace(" ", "+"), stage=stage)
                    calls[c] = Call(tool, text, False, cls)
                elif (work_k + i) % 5 == 4:
                    calls[c] = Call("read", _read_path(sess.stage, work_k), True, "work")
                    work_k += 1
                else:
                    calls[c] = Call("bash", _allowed_commands(sess.agent, q, stage, work_k), True, "work")
                    work_k += 1


AGENTS = sorted({w[0] for w in WORKLOADS})
_AFFINITY = (  # (text in the command, agents whose sessions it belongs to); first match wins
    ("{stage}", {"ralf/step_runner"}), ("ralf", {"ralf/step_runner"}),
    ("lights.py", {"home/lights"}), ("mail.py", {"mail/triage"}), ("calendar.py", {"calendar/planner"}),
    ("drafts.py", {"drafts/writer"}),
    ("fetch_context", {"ralf/step_runner", "research/web"}), ("embedding_search", {"ralf/step_runner", "research/web"}),
    ("youtube", {"ralf/step_runner", "research/web"}), ("curl", {"ralf/step_runner", "research/web"}),
    ("ls scripts", {"ralf/step_runner", "research/web"}), ("research:", {"ralf/step_runner", "research/web"}),
)


def _affinity(template: str) -> set[str]:
    """The agents in whose sessions a denied command makes sense."""
    for text, agents in _AFFINITY:
        if text in template:
            return set(agents)
    return set(AGENTS)


def _touches(slots, first, last, i, placed) -> bool:
    """A burst would run into another burst (its neighbours are denied calls already)."""
    a, b = slots.index(first), slots.index(last)
    return (a > 0 and (i, slots[a - 1]) in placed) or (b + 1 < len(slots) and (i, slots[b + 1]) in placed)


def _next(a: tuple[int, int], b: tuple[int, int], sess: Session) -> bool:
    """b is the call right after a in the session."""
    slots = _slots(sess)
    return slots.index(b) == slots.index(a) + 1


def records(sessions: list[Session], model_id: str, day_start: datetime, rng,
            spacing: tuple[float, float]) -> list[dict]:
    """Log records (permissions first), timestamps in session order within the day window."""
    out = [{
        "event": "permissions", "ts": _ts(day_start - timedelta(seconds=41.3)), "harness": "oac 0.9.3",
        "tools": TOOLS, "rules": {"bash": ALLOW_RULES, "read": READ_RULES},
    }]
    t = day_start
    for sess in sessions:
        t += timedelta(seconds=float(rng.uniform(*spacing)))
        for m, calls in enumerate(sess.messages, 1):
            t += timedelta(seconds=float(rng.gamma(4.0, 2.2)))  # the model's turn
            for c, call in enumerate(calls):
                t += timedelta(milliseconds=float(rng.uniform(3, 40)))
                out.append(_record(sess, m, call, model_id, t, rng))
    return out


def _record(sess: Session, m: int, call: Call, model_id: str, t: datetime, rng) -> dict:
    if call.tool == "bash":
        args = {"command": call.target, "description": _describe(call.target)}
    elif call.tool == "read":
        args = {"filePath": call.target}
    else:
        args = json.loads(call.target)
    if call.allowed:
        reason = None
    elif call.tool == "bash":
        reason = REASONS["bash"]
    elif call.tool == "read":
        reason = REASONS["read"]
    else:
        reason = REASONS["tool"].format(tool=call.tool, tools=", ".join(TOOLS))
    rec = {
        "event": "tool.call", "ts": _ts(t), "session": sess.sid, "agent": sess.agent,
        "model": model_id, "message": m, "call": f"call_{rng.integers(16**12):012x}",
        "tool": call.tool, "args": args, "decision": "allow" if call.allowed else "deny",
    }
    if reason:
        rec["reason"] = reason
    return rec


def _describe(command: str) -> str:
    first = command.split("\n", 1)[0]
    words = first.split()
    if len(words) >= 3 and words[:2] == ["uv", "run"]:
        return f"Run {words[2].rsplit('/', 1)[-1]}"
    return f"Run {words[0]}" if words else "Run command"


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def dumps(recs: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in recs)

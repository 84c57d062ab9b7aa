"""The failure-class rules: each class on real-looking commands, and look-alikes that must not match."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.ingest import tool_failures as tf
from benchbook.ledger.published import load_published

ALLOWED = {"scripts/db_query.py", "scripts/fetch_context.py", "scripts/embedding_search.py",
           "scripts/context_cache.py", "scripts/ralf.py", "scripts/report.py", "scripts/lights.py"}

# (command, class): one block per class, tricky cases included.
CASES = [
    # pipe into a text filter
    ('uv run scripts/fetch_context.py --no-attach --agent research --topic "heat pumps" | head -50', "pipe-filter"),
    ('ls scripts/ | grep -E "search|web"', "pipe-filter"),
    ("uv run scripts/ralf.py get-attempt --stage stg_1 | jq '.attempt.session_id'", "pipe-filter"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' | sed -n '1,20p'", "pipe-filter"),
    ("uv run scripts/db_query.py --sql 'x' 2>&1 | tail -5", "pipe-filter"),  # pipe outranks stderr
    ("cd /srv && uv run scripts/db_query.py --sql 'x' | head", "pipe-filter"),  # and the chain
    ('uv run scripts/a.py --id "$(uv run scripts/b.py | jq -r .id)"', "pipe-filter"),  # inside $(...)
    ('bash -c "uv run scripts/db_query.py --sql \'x\' | head -n 3"', "pipe-filter"),  # inside bash -c
    ("timeout 30 uv run scripts/fetch_context.py --agent x | tail -n 20", "pipe-filter"),
    # stderr redirect
    ('uv run scripts/embedding_search.py --query "loft hatch" --k 8 2>&1', "stderr-redirect"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' 2>/dev/null", "stderr-redirect"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' 2> /tmp/err.log", "stderr-redirect"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' &>/dev/null", "stderr-redirect"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' |& cat", "stderr-redirect"),
    ("uv run scripts/db_query.py --sql 'SELECT 1' >& out.txt", "stderr-redirect"),
    # shell chain
    ("pkill -f fetch_context.py || true", "shell-chain"),
    ('cd /srv/agents/workspace && uv run scripts/db_query.py --sql "SELECT id FROM stages"', "shell-chain"),
    ("uv run scripts/context_cache.py clear --key k; uv run scripts/fetch_context.py --agent x", "shell-chain"),
    ("uv run scripts/lights.py list\nuv run scripts/lights.py scene --room kitchen", "shell-chain"),
    ("timeout 60 uv run scripts/a.py && echo done", "shell-chain"),  # chain outranks timeout
    # heredoc into an interpreter
    ('cat << REPORT_EOF | uv run scripts/report.py --stage s --value "$(cat)"\n- a | b\n- c && d\nREPORT_EOF',
     "heredoc"),
    ("uv run python - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF", "heredoc"),
    ("python3 <<-EOF\n\tprint(1)\n\tEOF", "heredoc"),
    ('uv run scripts/report.py --stage s --value - <<< "done"', "heredoc"),
    # timeout prefix
    ('timeout 60 uv run scripts/fetch_context.py --no-attach --agent research --topic "x"', "timeout-prefix"),
    ("timeout -s KILL 120 uv run scripts/embedding_search.py --query y", "timeout-prefix"),
    # bare disallowed binary
    ("ls scripts/", "bare-binary"),
    ("ls -la /srv/agents/workspace", "bare-binary"),
    ("head -n 40 notes/plan.md", "bare-binary"),
    ("cat /srv/agents/workspace/stg_1/notes.md", "bare-binary"),
    ('find . -name "*.py" -newer scripts/ralf.py', "bare-binary"),
    ("grep a\\|b notes.md", "bare-binary"),  # an escaped | is no pipe
    ("/usr/bin/cat notes.md", "bare-binary"),
    ("bash -c 'ls scripts'", "bare-binary"),  # bash -c "X" is X
    # python -c
    ('uv run python -c "import json; print(json.load(open(\'r.json\'))[\'score\'])"', "python-c"),
    ("python3 -c 'print(1 | 2)'", "python-c"),  # the | and ; inside quotes are Python
    ("uv run --with requests python -c 'import requests'", "python-c"),
    # script not on the allow list
    ("uv run scripts/food_management.py --list-pantry", "script-not-allowed"),
    ("uv run scripts/youtube_fetcher.py --query 'x'", "script-not-allowed"),
    ("FOO=1 uv run scripts/thought_transfer.py --from a --to b", "script-not-allowed"),
    ("python scripts/data_query.py --table meals", "script-not-allowed"),
    ("uv run --project /srv/agents scripts/food_management.py", "script-not-allowed"),
    # other
    ("curl -s 'https://www.googleapis.com/youtube/v3/search?part=snippet&q=x'", "other"),
    ('uv run scripts/fetch_context.py --no-agent --command search-videos --topic "x"', "other"),  # allowed script
    ("uv run scripts/db_query.py --sql 'SELECT body FROM notes WHERE body LIKE '%pump%''", "other"),
    ('uv run scripts/db_query.py --sql "$(cat q.sql)"', "other"),
    ('uv run scripts/db_query.py --sql "unbalanced', "other"),
    ("uv run scripts/db_query.py --sql 'x' &", "other"),  # background, not a chain
    ("uv run scripts/db_query.py --sql 'x' > out.txt", "other"),  # stdout only
    ("echo 'a && b | head'", "other"),  # operators in quotes are text
    ('echo "x; y || z 2>&1"', "other"),
    ("uv run python -m json.tool r.json", "other"),
    ("", "other"),
]


@pytest.mark.parametrize("command,expected", CASES, ids=[f"{c}-{i}" for i, (_, c) in enumerate(CASES)])
def test_command_class(command, expected):
    assert tf.classify_command(command, ALLOWED) == expected


def test_every_shell_class_has_cases():
    shell = set(tf.CLASS_IDS) - {"blocked-read-path", "hallucinated-tool"}
    assert shell <= {c for _, c in CASES}
    assert sum(1 for _, c in CASES if c == "pipe-filter") >= 5


def test_without_an_allow_list_an_unknown_script_is_other():
    assert tf.classify_command("uv run scripts/food_management.py --list", None) == "other"
    assert tf.classify_command("uv run scripts/food_management.py --list", set()) == "script-not-allowed"
    # matching is by file name: a path prefix does not matter
    assert tf.classify_command("uv run ./scripts/db_query.py --x", {"db_query.py"}) == "other"


def test_tool_level_classes():
    assert tf.classify("emit_guidance", '{"stage": "s"}', allowed_scripts=ALLOWED) == "hallucinated-tool"
    assert tf.classify("read", "/data/rendered/stg_1_chart.png") == "blocked-read-path"
    assert tf.classify("glob", "/data/rendered/*.png") == "blocked-read-path"
    assert tf.classify("Bash", "ls scripts/") == "bare-binary"  # tool names are case-insensitive
    assert tf.classify("webfetch", "https://example.org") == "other"
    assert tf.classify("read", "x", known_tools={"bash"}) == "hallucinated-tool"  # the log's own tool list
    assert tf.classify("bash", None) == "other"


def test_parse_keeps_quoted_operators_and_drops_heredoc_bodies():
    p = tf.parse('grep -E "a|b" f && echo \'x; y\'')
    assert [s.words for s in p.simples()] == [["grep", "-E", "a|b", "f"], ["echo", "x; y"]]
    assert p.chain_ops == ["&&"] and p.pipe_ops == []
    p = tf.parse("cat <<EOF | python3\nrm -rf / | head\nEOF\n")
    assert [s.words[0] for s in p.simples()] == ["cat", "python3"]
    assert p.chain_ops == []  # the body's lines and the trailing newline chain nothing
    p = tf.parse("uv run a.py 2>&1 >out")
    assert p.simples()[0].redirs == ["2>&1", ">out"]


def test_bash_c_and_substitutions_are_examined():
    p = tf.parse('bash -lc "cd /x && ls"')
    assert any(n.chain_ops == ["&&"] for n in p.walk())
    assert tf.classify_command('sh -c "cd /x && uv run scripts/a.py"', ALLOWED) == "shell-chain"
    assert tf.classify_command("uv run scripts/a.py --v `cat x | head -1`", ALLOWED) == "pipe-filter"


def test_scripts_in_allow_rules():
    rules = ["uv run scripts/db_query.py --sql *", "uv run scripts/ralf.py *", "*"]
    assert tf.scripts_in_allow_rules(rules) == {"scripts/db_query.py", "scripts/ralf.py"}


def test_published_breakdown_rows_follow_the_class_order():
    published = load_published(Path(__file__).parents[2] / "data/3090-dense-vs-sparse/published.yml")
    table = next(t for t in published.tables if t.id == "failure-classes")
    ids = [exprs[1].split("_per100_")[1].replace("_", "-") for exprs in table.values]
    assert ids[:-1] == list(tf.CLASS_IDS) and ids[-1] == "total"


LEX_CASES = [
    # (command, tokens, nested commands, unbalanced)
    ("a\\\nb", [("word", "ab")], [], False),  # a line continuation joins the word
    ("echo x\\", [("word", "echo"), ("word", "x\\")], [], False),  # a trailing backslash is kept
    ("echo 'abc", [("word", "echo"), ("word", "abc")], [], True),
    ('echo "abc', [("word", "echo"), ("word", "abc")], [], True),
    ('echo "a\\"b\\$c\\n $(ls | wc) `pwd` d"',
     [("word", "echo"), ("word", 'a"b$c\\n $(ls | wc) `pwd` d')], ["ls | wc", "pwd"], False),
    ("echo a#b # comment | x\nls", [("word", "echo"), ("word", "a#b"), ("op", "\n"), ("word", "ls")], [], False),
    ("cat <<-'EOF' >f\n\tbody | x\n\tEOF\nls",
     [("word", "cat"), ("op", "<<-"), ("word", "EOF"), ("op", ">"), ("word", "f"), ("op", "\n"), ("word", "ls")],
     [], False),
    ('cat <<"E1" <<E2\nx\nE1\ny\nE2\nnext',
     [("word", "cat"), ("op", "<<"), ("word", "E1"), ("op", "<<"), ("word", "E2"), ("op", "\n"), ("word", "next")],
     [], False),
    ("cmd 2>&1 1>x 2>>y &>z a>b",
     [("word", "cmd"), ("op", "2>&"), ("word", "1"), ("op", "1>"), ("word", "x"), ("op", "2>>"), ("word", "y"),
      ("op", "&>"), ("word", "z"), ("word", "a"), ("op", ">"), ("word", "b")], [], False),
    ("a\tb\rc", [("word", "a"), ("word", "b"), ("word", "c")], [], False),
]


@pytest.mark.parametrize("command,tokens,nested,unbalanced", LEX_CASES)
def test_lex_tokens(command, tokens, nested, unbalanced):
    assert tf._lex(command) == (tokens, nested, unbalanced)


@pytest.mark.parametrize("command", ['echo "$(ls', 'echo "`ls', "echo $(ls", "echo `ls"])
def test_lex_unclosed_substitution_is_unbalanced_and_kept_as_text(command):
    tokens, nested, unbalanced = tf._lex(command)
    assert unbalanced and tokens == [("word", "echo"), ("word", command[5:].lstrip('"'))] and len(nested) == 1

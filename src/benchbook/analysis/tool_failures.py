"""Failure class of a denied agent tool call, assigned by ordered rules from its text.

Seed 003 counts denied tool calls by what the model did wrong (piping an allowed script
into `head`, chaining with `&&`, reading a blocked path, ...). A harness log records the
call and the decision, not the class: the class is computed here, so the rules are
visible, tested, and the same for every model. The first rule that matches wins; the
order is the published table's.

Commands are read with a small quote-aware shell lexer (not a regex), so a `|` inside
quotes is not a pipe, `2>&1` is a redirection, heredoc bodies are data, and the command
inside `bash -c "..."` or `$(...)` is examined as a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# (id, label) in rule order: the published breakdown's rows.
CLASSES: tuple[tuple[str, str], ...] = (
    ("pipe-filter", "Pipe to head / tail / grep / jq / sed"),
    ("stderr-redirect", "stderr redirect (2>&1 / 2>/dev/null)"),
    ("shell-chain", "Shell chain (&& / || / ;)"),
    ("heredoc", "Heredoc (<<EOF) into uv run / python"),
    ("timeout-prefix", "timeout N prefix"),
    ("bare-binary", "Bare disallowed binary (ls, head, cat, find)"),
    ("python-c", "python -c \"...\""),
    ("script-not-allowed", "uv run of a script not on the allow list"),
    ("other", "Other (arg quoting, complex uv run, network clients, ...)"),
    ("blocked-read-path", "Read tool with a blocked path"),
    ("hallucinated-tool", "Hallucinated tool name"),
)
CLASS_IDS = tuple(c for c, _ in CLASSES)
LABELS = dict(CLASSES)

# OpenCode's built-in tools; a harness log may name its own set.
KNOWN_TOOLS = frozenset({
    "bash", "read", "write", "edit", "patch", "glob", "grep", "list", "ls", "webfetch",
    "websearch", "todowrite", "todoread", "task", "skill", "multiedit",
})
SHELL_TOOLS = frozenset({"bash", "shell", "sh"})
PATH_TOOLS = frozenset({"read", "glob", "grep", "list", "ls"})
# Text filters a model pipes output into to trim or reshape it.
FILTERS = frozenset({
    "head", "tail", "grep", "egrep", "fgrep", "rg", "jq", "yq", "sed", "awk", "gawk", "cut",
    "sort", "uniq", "wc", "tr", "less", "more", "column",
})
# File-inspection utilities run on their own instead of an allowed script.
BARE = frozenset({
    "ls", "cat", "head", "tail", "find", "grep", "egrep", "rg", "wc", "tree", "less", "more",
    "stat", "file", "du", "df", "pwd", "which", "jq", "sed", "awk", "sort",
})
INTERPRETERS = frozenset({"uv", "uvx", "python", "python3", "bash", "sh", "zsh", "node"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
WRAPPERS = frozenset({"env", "sudo", "command", "nohup", "exec", "nice"})
_PYTHON = re.compile(r"^python(3(\.\d+)?)?$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_UV_VALUE_OPTS = frozenset({
    "--with", "--with-requirements", "--with-editable", "--python", "-p", "--project",
    "--directory", "--env-file", "--group", "--extra", "--package", "--index", "--module", "-m",
})
CHAIN_OPS = frozenset({"&&", "||", ";", "\n"})


# ---------------------------------------------------------------- lexing


@dataclass
class Simple:
    """One simple command: its words (quotes removed) and redirections."""

    words: list[str] = field(default_factory=list)
    redirs: list[str] = field(default_factory=list)  # e.g. "2>&1", "2>/dev/null", ">out", "<<EOF"


@dataclass
class Parsed:
    """A command line: pipelines joined by chain operators, plus nested commands."""

    pipelines: list[list[Simple]] = field(default_factory=list)
    chain_ops: list[str] = field(default_factory=list)
    pipe_ops: list[str] = field(default_factory=list)
    nested: list["Parsed"] = field(default_factory=list)
    unbalanced: bool = False

    def simples(self) -> list[Simple]:
        return [s for p in self.pipelines for s in p]

    def walk(self):
        """This command line and every nested one."""
        yield self
        for n in self.nested:
            yield from n.walk()


_OPS = ("&>>", "<<<", "<<-", "&&", "||", "|&", "&>", ">>", ">&", ">|", "<<", "<&", "|", "&", ";", ">", "<", "(", ")")


def _match_paren(text: str, i: int) -> int:
    """Index just past the `)` closing the `$(` whose `(` is at text[i-1]; -1 if none."""
    depth, j, quote = 1, i, None
    while j < len(text):
        ch = text[j]
        if quote == "'":
            if ch == "'":
                quote = None
        elif ch == "\\":
            j += 1
        elif quote == '"':
            if ch == '"':
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return -1


def _lex(text: str):
    """Tokens ('word', value) / ('op', op), nested command texts, and whether quotes balance."""
    tokens, nested = [], []
    i, n = 0, len(text)
    word, in_word = [], False
    pending_heredocs: list[tuple[str, bool]] = []
    unbalanced = False

    def flush():
        nonlocal word, in_word
        if in_word:
            tokens.append(("word", "".join(word)))
        word, in_word = [], False

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":  # line continuation
                i += 2
                continue
            word.append(text[i + 1])
            in_word = True
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                unbalanced, end = True, n
            word.append(text[i + 1:end])
            in_word = True
            i = end + 1
            continue
        if ch == '"':
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`':
                    buf.append(text[j + 1])
                    j += 2
                    continue
                if text.startswith("$(", j):
                    end = _match_paren(text, j + 2)
                    if end < 0:
                        unbalanced, end = True, n
                    nested.append(text[j + 2:end - 1])
                    buf.append(text[j:end])
                    j = end
                    continue
                if text[j] == "`":
                    end = text.find("`", j + 1)
                    if end < 0:
                        unbalanced, end = True, n - 1
                    nested.append(text[j + 1:end])
                    buf.append(text[j:end + 1])
                    j = end + 1
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                unbalanced = True
            word.append("".join(buf))
            in_word = True
            i = j + 1
            continue
        if text.startswith("$(", i):
            end = _match_paren(text, i + 2)
            if end < 0:
                unbalanced, end = True, n
            nested.append(text[i + 2:end - 1])
            word.append(text[i:end])
            in_word = True
            i = end
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            if end < 0:
                unbalanced, end = True, n - 1
            nested.append(text[i + 1:end])
            word.append(text[i:end + 1])
            in_word = True
            i = end + 1
            continue
        if ch == "\n":
            flush()
            tokens.append(("op", "\n"))
            i += 1
            if pending_heredocs:  # skip heredoc bodies: they are data, not commands
                for delim, strip_tabs in pending_heredocs:
                    while i < n:
                        end = text.find("\n", i)
                        line = text[i:] if end < 0 else text[i:end]
                        i = n if end < 0 else end + 1
                        if (line.lstrip("\t") if strip_tabs else line) == delim:
                            break
                pending_heredocs = []
            continue
        if ch in " \t\r":
            flush()
            i += 1
            continue
        op = next((o for o in _OPS if text.startswith(o, i)), None)
        if op is not None:
            fd = ""
            if op[0] in "<>" and in_word and "".join(word).isdigit():
                fd, word, in_word = "".join(word), [], False  # 2>, 1>&, ...
            flush()
            tokens.append(("op", fd + op))
            i += len(op)
            if op in ("<<", "<<-"):
                m = re.match(r"[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", text[i:])
                if m:
                    pending_heredocs.append((m.group(2), op == "<<-"))
                    tokens.append(("word", m.group(2)))
                    i += m.end()
            continue
        if ch == "#" and not in_word:  # comment to end of line
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        word.append(ch)
        in_word = True
        i += 1
    flush()
    return tokens, nested, unbalanced


_REDIR = re.compile(r"^\d*(>>|>&|>\||>|<<<|<<-|<<|<&|<)$|^&>>?$")


def parse(command: str, _depth: int = 0) -> Parsed:
    """Structure of a shell command line (pipelines, chain operators, nested commands)."""
    tokens, nested_texts, unbalanced = _lex(command or "")
    out = Parsed(unbalanced=unbalanced)
    pipeline: list[Simple] = []
    cur = Simple()
    k = 0
    while k < len(tokens):
        kind, value = tokens[k]
        if kind == "word":
            cur.words.append(value)
        elif _REDIR.match(value):
            target = tokens[k + 1][1] if k + 1 < len(tokens) and tokens[k + 1][0] == "word" else ""
            cur.redirs.append(value + target)
            k += 1 if target else 0
        elif value in ("|", "|&"):
            pipeline.append(cur)
            cur = Simple()
            out.pipe_ops.append(value)
        elif value in CHAIN_OPS or value == "&":
            pipeline.append(cur)
            pipeline = [s for s in pipeline if s.words or s.redirs]
            if pipeline:
                out.pipelines.append(pipeline)
                out.chain_ops.append(value)
            pipeline, cur = [], Simple()
        # "(" and ")" (subshells) only group; their contents are still examined
        k += 1
    pipeline.append(cur)
    pipeline = [s for s in pipeline if s.words or s.redirs]
    if pipeline:
        out.pipelines.append(pipeline)
    # a chain operator only chains when a command follows it (trailing ';' or newline does not)
    out.chain_ops = out.chain_ops[: max(len(out.pipelines) - 1, 0)]
    if _depth < 5:
        out.nested = [parse(t, _depth + 1) for t in nested_texts]
        for s in out.simples():
            inner = shell_c_argument(s)
            if inner is not None:
                out.nested.append(parse(inner, _depth + 1))
    return out


# ---------------------------------------------------------------- command anatomy


def program(s: Simple) -> tuple[str, list[str]]:
    """The program a simple command runs and its arguments (assignments and wrappers skipped)."""
    words = list(s.words)
    while words:
        w = words[0]
        if _ASSIGN.match(w):
            words.pop(0)
        elif w in WRAPPERS:
            words.pop(0)
            while words and (words[0].startswith("-") or _ASSIGN.match(words[0])):
                words.pop(0)
        else:
            break
    if not words:
        return "", []
    return words[0].rsplit("/", 1)[-1], words[1:]


def shell_c_argument(s: Simple) -> str | None:
    """The command string of `bash -c "..."` (also -lc, sh, zsh), else None."""
    prog, args = program(s)
    if prog not in SHELLS:
        return None
    for k, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return args[k + 1] if k + 1 < len(args) else ""
    return None


def uv_target(s: Simple) -> tuple[str, list[str]]:
    """What `uv run [options] X ...` runs: (X, its arguments); the plain program otherwise."""
    prog, args = program(s)
    if prog == "uvx":
        return (args[0].rsplit("/", 1)[-1], args[1:]) if args else ("", [])
    if prog != "uv" or not args or args[0] != "run":
        return prog, args
    rest = args[1:]
    while rest and rest[0].startswith("-"):
        opt = rest.pop(0)
        if opt == "--":
            break
        if opt in _UV_VALUE_OPTS and rest:
            rest.pop(0)
    if not rest:
        return "", []
    return rest[0], rest[1:]


def script_of(s: Simple) -> str | None:
    """The Python script a command runs (`uv run x.py`, `python x.py`, `./x.py`), else None."""
    target, args = uv_target(s)
    name = target.rsplit("/", 1)[-1]
    if _PYTHON.match(name):
        for a in args:
            if a in ("-c", "-m"):
                return None
            if not a.startswith("-"):
                return a if a.endswith(".py") else None
        return None
    return target if target.endswith(".py") else None


def _is_python_c(s: Simple) -> bool:
    target, args = uv_target(s)
    return bool(_PYTHON.match(target.rsplit("/", 1)[-1])) and "-c" in args


def _stderr(redir: str) -> bool:
    if redir.startswith(("2>", "&>")):
        return True
    m = re.match(r"^>&(.*)$", redir)  # `>& file` sends both streams to the file
    return bool(m) and not m.group(1).isdigit()


def _norm_script(path: str) -> str:
    return path.rsplit("/", 1)[-1]


# ---------------------------------------------------------------- the rules


def classify_command(command: str, allowed_scripts: set[str] | frozenset | None = None) -> str:
    """Failure class of a denied shell command (one of CLASS_IDS, never the tool-level ones).

    `allowed_scripts`: scripts the harness allows (paths or file names). Without it the
    "script not on the allow list" rule cannot be told apart and such calls fall to other.
    """
    parsed = parse(command)
    top = parsed.simples()
    if len(top) == 1 and len(parsed.pipelines) == 1 and not top[0].redirs:
        inner = shell_c_argument(top[0])
        if inner is not None and inner.strip():
            return classify_command(inner, allowed_scripts)  # bash -c "X" is X
    every = [p for p in parsed.walk()]
    simples = [s for p in every for s in p.simples()]

    # 1. pipe into a text filter, anywhere (also inside $(...) or bash -c)
    for p in every:
        for pipeline in p.pipelines:
            if any(program(s)[0] in FILTERS for s in pipeline[1:]):
                return "pipe-filter"
    # 2. stderr redirected or merged
    if any(_stderr(r) for s in simples for r in s.redirs) or any("|&" in p.pipe_ops for p in every):
        return "stderr-redirect"
    # 3. commands chained with && / || / ; / newline
    if any(op in CHAIN_OPS for p in every for op in p.chain_ops):
        return "shell-chain"
    # 4. a heredoc (or here-string) feeding an interpreter on the same line
    for p in every:
        ss = p.simples()
        if any(r.startswith(("<<", "0<<")) for s in ss for r in s.redirs) and \
                any(uv_target(s)[0].rsplit("/", 1)[-1] in INTERPRETERS or program(s)[0] in INTERPRETERS
                    or _PYTHON.match(uv_target(s)[0].rsplit("/", 1)[-1]) for s in ss):
            return "heredoc"
    # 5. wrapped in `timeout N`
    if any(program(s)[0] in ("timeout", "gtimeout") for s in simples):
        return "timeout-prefix"
    # 6. a file-inspection utility run on its own
    if len(top) == 1 and program(top[0])[0] in BARE:
        return "bare-binary"
    # 7. inline Python
    if any(_is_python_c(s) for s in simples):
        return "python-c"
    # 8. a script the allow list does not name
    if allowed_scripts is not None and len(top) == 1 and not parsed.nested:
        script = script_of(top[0])
        allowed = {_norm_script(a) for a in allowed_scripts}
        if script is not None and _norm_script(script) not in allowed:
            return "script-not-allowed"
    return "other"


def classify(tool: str, target: str | None, *, known_tools=KNOWN_TOOLS,
             allowed_scripts: set[str] | frozenset | None = None) -> str:
    """Failure class of one denied call from its tool name and its command or path."""
    name = (tool or "").strip().lower()
    if name not in {t.lower() for t in known_tools}:
        return "hallucinated-tool"
    if name in SHELL_TOOLS:
        return classify_command(target or "", allowed_scripts)
    if name in PATH_TOOLS:
        return "blocked-read-path"
    return "other"


def scripts_in_allow_rules(patterns) -> set[str]:
    """Script paths named by allow rules such as 'uv run scripts/db_query.py *'."""
    out = set()
    for pattern in patterns:
        for word in str(pattern).split():
            if word.endswith(".py"):
                out.add(word)
    return out

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
    nested: list[Parsed] = field(default_factory=list)
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


_HEREDOC_WORD = re.compile(r"[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


class _Lexer:
    """One pass over a command line; one method per token kind, each returning the next index."""

    def __init__(self, text: str):
        self.text, self.n = text, len(text)
        self.tokens: list[tuple[str, str]] = []
        self.nested: list[str] = []
        self.word: list[str] = []
        self.in_word = False
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs) awaiting their body
        self.unbalanced = False

    def run(self):
        i = 0
        while i < self.n:
            i = self._step(i)
        self._flush()
        return self.tokens, self.nested, self.unbalanced

    def _step(self, i: int) -> int:
        """Dispatch on the character at i; the order decides what wins (quotes before operators)."""
        text, ch = self.text, self.text[i]
        if ch == "\\" and i + 1 < self.n:
            return self._escape(i)
        if ch == "'":
            return self._single_quote(i)
        if ch == '"':
            return self._double_quote(i)
        if text.startswith("$(", i) or ch == "`":
            raw, i = self._substitution(i)
            self._add(raw)
            return i
        if ch == "\n":
            return self._newline(i)
        if ch in " \t\r":
            self._flush()
            return i + 1
        op = next((o for o in _OPS if text.startswith(o, i)), None)
        if op is not None:
            return self._operator(op, i)
        if ch == "#" and not self.in_word:  # comment to end of line
            end = text.find("\n", i)
            return self.n if end < 0 else end
        self._add(ch)
        return i + 1

    def _add(self, part: str) -> None:
        self.word.append(part)
        self.in_word = True

    def _flush(self) -> None:
        if self.in_word:
            self.tokens.append(("word", "".join(self.word)))
        self.word, self.in_word = [], False

    def _escape(self, i: int) -> int:
        if self.text[i + 1] != "\n":  # a backslash-newline is a line continuation: dropped
            self._add(self.text[i + 1])
        return i + 2

    def _single_quote(self, i: int) -> int:
        end = self.text.find("'", i + 1)
        if end < 0:
            self.unbalanced, end = True, self.n
        self._add(self.text[i + 1:end])
        return end + 1

    def _double_quote(self, i: int) -> int:
        """Escaped quote, backslash, $ and backtick are resolved; substitutions inside stay text, examined too."""
        text, n = self.text, self.n
        j, buf = i + 1, []
        while j < n and text[j] != '"':
            if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`':
                buf.append(text[j + 1])
                j += 2
            elif text.startswith("$(", j) or text[j] == "`":
                raw, j = self._substitution(j)
                buf.append(raw)
            else:
                buf.append(text[j])
                j += 1
        if j >= n:
            self.unbalanced = True
        self._add("".join(buf))
        return j + 1

    def _substitution(self, i: int) -> tuple[str, int]:
        """The raw text of the `$(...)` or backtick command at i, noted as a nested command; and the next index."""
        text, n = self.text, self.n
        if text.startswith("$(", i):
            end = _match_paren(text, i + 2)
            if end < 0:
                self.unbalanced, end = True, n
            self.nested.append(text[i + 2:end - 1])
            return text[i:end], end
        end = text.find("`", i + 1)
        if end < 0:
            self.unbalanced, end = True, n - 1
        self.nested.append(text[i + 1:end])
        return text[i:end + 1], end + 1

    def _newline(self, i: int) -> int:
        """A newline ends a command; pending heredoc bodies follow it and are data, not commands."""
        self._flush()
        self.tokens.append(("op", "\n"))
        i += 1
        for delim, strip_tabs in self.heredocs:
            i = self._skip_heredoc_body(i, delim, strip_tabs)
        self.heredocs = []
        return i

    def _skip_heredoc_body(self, i: int, delim: str, strip_tabs: bool) -> int:
        text, n = self.text, self.n
        while i < n:
            end = text.find("\n", i)
            line = text[i:] if end < 0 else text[i:end]
            i = n if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delim:
                break
        return i

    def _operator(self, op: str, i: int) -> int:
        """An operator token; digits just before a redirection are its fd (2>, 1>&, ...)."""
        fd = ""
        if op[0] in "<>" and self.in_word and "".join(self.word).isdigit():
            fd, self.word, self.in_word = "".join(self.word), [], False
        self._flush()
        self.tokens.append(("op", fd + op))
        i += len(op)
        if op in ("<<", "<<-"):
            i = self._heredoc_delimiter(i, strip_tabs=op == "<<-")
        return i

    def _heredoc_delimiter(self, i: int, strip_tabs: bool) -> int:
        m = _HEREDOC_WORD.match(self.text, i)
        if not m:
            return i
        self.heredocs.append((m.group(2), strip_tabs))
        self.tokens.append(("word", m.group(2)))
        return m.end()


def _lex(text: str):
    """Tokens ('word', value) / ('op', op), nested command texts, and whether quotes balance."""
    return _Lexer(text).run()


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

r"""Reader for vLLM server logs: stats windows, access lines, spec decoding, start-up facts.

Users keep months of `vllm serve` output, so the file is read in 8 MB chunks of whole lines
and never held at once. Each chunk valid as UTF-8 goes through a columnar pass
(`vllm_log_scan`, polars string kernels, two chunks at once) that finds the candidate lines,
parses those on the strict templates and counts the rest; any other chunk, and the lines
the columnar pass hands back, go through the byte path below, which gives the same rows
(tests compare the two on every log the project ships). `LogStream` yields the tables in
batches for logs too big to hold as tables; `read` is its one-batch case.

The byte path:

- one regex scan per chunk, anchored on the end of vLLM's log header (`file.py:N] `),
  counts the header lines and notes those whose message starts like a periodic stats line,
  a `SpecDecoding metrics:` line or a start-up fact;
- one scan finds the uvicorn access lines (`INFO:     ip:port - "POST /path HTTP/1.1" 200`);
- newlines are counted with numpy, so line numbers are exact. A line ends at `\n` (as for
  `grep -n` and `sed -n Np`): a `\r` from a progress bar does not start a new line, and a
  `\r\n` line ending is tolerated.

A candidate message is matched from its start to the end of the line by a strict template
(its parts in vLLM's order, benchbook.ingest.vllm_templates); the time, process and call site come from the header
by position (the polars pass strips ANSI colour codes first; the byte path sends a line
with colour codes to the full-line templates). Lines that miss (other prefixes, other field
orders) go through full-line templates with ANSI codes stripped. A line saying `Avg prompt throughput`
is never dropped silently: each chunk's count of that phrase is checked against the stats
lines found, and the rest are reported as "stats line of an unknown template".

Templates (benchbook/ingest/vllm_templates.py; the formats with their vLLM sources in docs/formats.md,
section 2): V1 `Engine 000:` and `N Engines Aggregated:`
lines of 0.10.1-0.11, 0.12-0.19, 0.20-0.22.1 and 0.33 (`log_format` v1-0.10, v1-0.12,
v1-0.20, v1-0.33: the newest template the optional fields need, or the newer version the
`loggers.py:N` call site names), and V0 lines (`Swapped`/`Pending`; v0), with or without the
`(APIServer pid=N)` tag and any date, docker or journald prefix. A line that starts with an
RFC 3339 time (`docker logs -t`, `kubectl logs --timestamps`: `2026-04-07T14:03:21.123456789Z `,
or with an offset such as `+02:00`) gives its window's `timestamp`: that wall time as
written, to the nanosecond, the offset dropped (so UTC for the usual `Z`); `time` stays
the `MM-DD HH:MM:SS` vLLM printed. Percentages become
fractions; `nan%` becomes NaN and the row is kept. Optional fields without a schema column
(`Corrupted`, external and MM cache hit rates, `KV fetch`, V0's CPU KV usage and CPU prefix
hit rate, a KV device other than GPU) are extra columns, present only when printed.
Access lines keep the client host without its ephemeral port, redacted.

The stats interval (how long a window's rates average) is measured, never assumed: each
window's `gap_s` is the time since the previous stats line of its process and engine (also
across LogStream batches), and each engine's interval is the median of the gaps after a
line with throughput (`measure_interval`), stated in the result's notes and `intervals`;
`stats_intervals` and `with_intervals` give the same from a windows table. Fewer than two
lines: unknown (NaN), never 10 s.

Counting: `read` = lines (a last line without a newline counts). `ignored` = lines that
gave no row, by reason. "other log line" counts lines with a vLLM header; lines without one
(tracebacks, progress bars, uvicorn start-up text, blank lines) are "traceback/continuation
line". The split is counted from header matches, so a line quoting a second `file.py:N] `
inside its message can move one line between these two reasons; the total is exact.
Candidate lines that are not valid UTF-8 are counted, never decoded with replacements.
"""

from __future__ import annotations

import functools
import gc
import re
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import vllm_templates as T
from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import SCHEMAS, Column, categorical, columns
from .textio import ANSI, GZIP_ERRORS, open_text
from .vllm_log_scan import KINDS, ChunkScan, Scanner

FORMAT = "vllm-server-log"
TABLES = ("windows", "access", "spec_decode", "boot")

CHUNK_BYTES = 8 << 20  # read per step; the working memory does not grow with the file
WORKERS = 2  # chunks scanned at once (polars releases the GIL)
COLUMNAR = True  # False: every chunk through the byte path (tests compare the two)

OTHER = "other log line"
CONTINUATION = "traceback/continuation line"
UNKNOWN_STATS = "stats line of an unknown template"
HEADERLESS_STATS = "stats line without a vLLM log header (no time)"
UNKNOWN_SPEC = "SpecDecoding line of an unknown template"
UNKNOWN_BOOT = "start-up line of an unknown template"
ORPHAN_V0_PREFIX = "V0 prefix-cache line with no V0 stats line just before it"
BAD_ACCESS = "access line with an unreadable request line"
NOT_UTF8 = "candidate line is not valid UTF-8"
PARTIAL = "partial last line (no newline at the end)"
NOT_ASKED = "not read: no line of the table(s) asked for"

# the kinds of line each table is made from: access lines take the window they end in
_TABLE_KINDS = {"windows": {"stats", "v0prefix"}, "access": {"stats", "v0prefix", "access"},
                "spec_decode": {"spec"}, "boot": {"boot"}}


def _kinds(tables) -> frozenset:
    """The kinds of line to parse for these tables (all of them for None)."""
    if tables is None:
        return KINDS
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"unknown table(s) {sorted(unknown)}; a server log has {', '.join(TABLES)}")
    return frozenset().union(*(_TABLE_KINDS[t] for t in tables))

# ---------------------------------------------------------------- templates (bytes)
# Every message template comes from vllm_templates.TEMPLATES and .BOOT; this section only
# adds the header, ANSI codes and the access line around them.

_ANSI = re.compile(ANSI.encode())
_ESC = rb"(?:\x1b\[[0-9;]*m)?"
_NUMBER = T.NUMBER
_END = rb"[ \t]*"

# `(APIServer pid=1) INFO 05-30 07:55:21 [loggers.py:271] `, with anything before the tag or
# the level (a date, docker or journald prefix); V0 printed `metrics.py:396]` without `[`.
_HEAD = (rb"[^\n]*?(?:\((?P<proc>[^()\s]+) pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
         rb"(?P<time>\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)? (?P<site>\[?[^\]\s]+?:\d+\]) ")
_PROC = re.compile(rb"\(([^()\s]+) pid=\d+\)")


def _message(family: str) -> re.Pattern:
    """A family's message, its parts in vLLM's order (the fast path)."""
    return re.compile(T.message_regex(family) + _END)


def _line(family: str) -> re.Pattern:
    """A family's whole line, header included (optional parts in any order where allowed)."""
    return re.compile(_HEAD + T.message_regex(family, T.family_of(family).any_order) + _END)


_V1_MSG, _V1 = _message("v1"), _line("v1")
_V1_HEAD_LEN = T.head_length("v1")  # where the polars pass splits the stats template
_V0_MSG, _V0 = _message("v0"), _line("v0")
# V0 printed the prefix-cache rate on its own line right after the stats line
_V0_PREFIX_MSG, _V0_PREFIX = _message("v0prefix"), _line("v0prefix")
_SPEC_MSG, _SPEC = _message("spec"), _line("spec")
_HEAD_RX = re.compile(_HEAD)
# `docker logs -t` / `kubectl logs --timestamps`: an RFC 3339 time (any offset) before the line
_STAMP = rb"(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?)(?:Z|[+-]\d\d:?\d\d) "
_STAMP_RX = re.compile(_STAMP)
_NEVER = re.compile(rb"(?!)")  # start-up lines always take the full-line path
_PHRASES = T.boot_phrases()  # start-up lines found anywhere (progress bars)
_BOOT_START = re.compile(T.boot_starts().decode().replace(r"\x80-\xff", "\u0080-\U0010ffff"))  # on str
_STATS_KEY = b"Avg prompt throughput"
_STATS_LOOSE = re.compile(rb"(?:(?:Engine \d+|\d+ Engines Aggregated): )?Avg prompt throughput: " + _NUMBER)

# Where a header ends, and what its message starts with (lookaheads: the match ends at the
# message). The one scan over every chunk.
_KINDS = {
    "stats": rb"(?:Engine \d+: |\d+ Engines Aggregated: )?Avg prompt throughput",
    "spec": rb"(?:Engine \d+: )?(?:SpecDecoding metrics|Draft acceptance rate)",
    "v0prefix": rb"Prefix cache hit rate: GPU",
    "boot": T.boot_starts(),
}
_ANCHOR = re.compile(rb"\.py:\d+\]" + _ESC + rb" (?:"
                     + b"|".join(rb"(?=(?P<%s>%s))" % (k.encode(), p) for k, p in _KINDS.items()) + rb")?")

# client host (the ephemeral port is dropped), request line, status
_HOST_NAME = rb"[^\s:\[\]]+|\[[^\]\s]*\]"
_HOST = rb"(" + _HOST_NAME + rb")(?::\d+)?"
_ACCESS = re.compile(rb'INFO:     ' + _HOST + rb' - "([^"\n]*)" (\d{3})')
_ACCESS_ANSI = re.compile(  # chunks where uvicorn coloured its lines (it ran on a TTY)
    rb"INFO" + _ESC + rb": +" + _ESC + _HOST + _ESC + rb' - "([^"\n]*)" ' + _ESC + rb"(\d{3})")
_REQUEST_LINE = re.compile(r"([A-Z]+) (.*) HTTP/(\d(?:\.\d)?)")


def _fields(rx: re.Pattern, skip: int = 0) -> list[str]:
    """Group names in group order (every group of these templates is named)."""
    assert rx.groups == len(rx.groupindex), rx.pattern
    return sorted(rx.groupindex, key=rx.groupindex.get)[skip:]


_HEAD_GROUPS = _HEAD_RX.groups
_V1_FIELDS, _V0_FIELDS, _SPEC_FIELDS = _fields(_V1_MSG), _fields(_V0_MSG), _fields(_SPEC_MSG)
_V0_PREFIX_FIELDS = _fields(_V0_PREFIX_MSG)
_RATE_FIRST, _RATE_LAST = _SPEC_FIELDS.index("rate_first"), _SPEC_FIELDS.index("rate_last")
assert _fields(_V1, _HEAD_GROUPS) == _V1_FIELDS and _fields(_SPEC, _HEAD_GROUPS) == _SPEC_FIELDS
assert _fields(_V0_PREFIX, _HEAD_GROUPS) == _V0_PREFIX_FIELDS

# Start-up facts (str patterns, searched in the message of a `boot` candidate line):
# (pattern, [(fact, group, unit), ...]); unit None = the value is text.
_BOOT = T.boot_facts()

# ---------------------------------------------------------------- detection

_SNIFF_HEAD = re.compile(
    r"(?m)^[^\n]{0,120}?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[?[\w./-]+\.py:\d+\] ")
_SNIFF_ACCESS = re.compile(r'(?m)^[^\n]{0,60}?INFO: +\S+ - "[A-Z]+ \S+ HTTP/[\d.]+" \d{3}')
_ANSI_S = re.compile(ANSI)


def sniff(head: str, path=None) -> bool:
    """True when the first bytes hold a vLLM log header line or a uvicorn access line."""
    text = head.lstrip("\ufeff \t\r\n")
    if text.startswith("{") or re.match(r"\[\s*[\[{\]]", text):  # JSON, not a log
        return False
    text = _ANSI_S.sub("", head)
    if BENCH_CONSOLE.search(text):  # the client's console, whose lines look like a server's
        return False
    return bool(_SNIFF_HEAD.search(text) or _SNIFF_ACCESS.search(text))


# What `vllm bench serve` prints to its console: its arguments and its result table. Its
# INFO lines have a server log's header, but no server line is in it.
BENCH_CONSOLE = re.compile(r"^Namespace\(subparser='bench'|^=+ Serving Benchmark Result =+\s*$", re.MULTILINE)


# ---------------------------------------------------------------- reading


@dataclass
class LogIngestResult(IngestResult):
    """An IngestResult whose summary speaks of lines and windows; `rows` counts the rows
    per table (also when the tables were taken in batches by LogStream)."""

    rows: Counter = field(default_factory=Counter)
    intervals: list[Interval] = field(default_factory=list)  # the stats interval of each engine

    def summary(self) -> str:
        rows = self.rows or Counter({name: len(df) for name, df in self.tables.items()})
        text = (f"{self.path} [{self.format}]: {self.read} lines read, {rows['windows']} windows found, "
                f"{self.ignored} lines ignored")
        rows = ", ".join(f"{name} {n}" for name, n in rows.items())
        if rows:
            text += f" -> rows: {rows}"
        text += self.notes_text()
        if self.reasons:
            text += "; ignored because: " + "; ".join(
                f"{reason} ({n})" for reason, n in self.reasons.most_common())
        return text


def read(path: Path, run_prefix: str | None = None, tables=None) -> IngestResult:
    """Read one vLLM server log (plain or .gz) into windows, access, spec_decode and boot,
    or only the `tables` named (only their lines are parsed; the others' lines are counted
    as ignored, NOT_ASKED, with the header and continuation lines).

    `run_prefix` is accepted for the reader interface; log rows carry no run id."""
    log = LogStream(path, batch_rows=None, tables=tables)
    for tables in log:  # one batch: the whole file
        pass
    log.result.tables = tables
    log.result.rows = Counter()  # the tables say it
    return log.result


class LogStream:
    """A log's tables in batches of about `batch_rows` rows, in line order, for logs too big
    to hold as tables (the memory stays bounded whatever the file size).

    Iterate to get dicts of the four tables; each row comes in exactly one batch, and an
    access line's window may be in a later batch (its `window_line` and `window_time` are
    set all the same). Every batch has the same columns: the optional ones too, empty
    where not printed. Batches end between chunks, so one can hold a chunk's rows more
    than `batch_rows`. After the loop, `result` holds the whole file's counts (`read`,
    `ignored`, `reasons`, and row counts per table in `rows`) with no tables. With
    `batch_rows=None` the only batch is the whole file (that is `read`).

    `tables` (default: all four) names the tables to make: only the lines they need are
    parsed, and each batch holds only those tables.
    """

    def __init__(self, path: Path, batch_rows: int | None = 100_000, tables=None):
        self.path = Path(path)
        if not self.path.is_file():
            raise IngestError(self.path, None, "file not found; expected a vLLM server log")
        self.kinds = _kinds(tables)
        self.tables = tuple(TABLES if tables is None else [t for t in TABLES if t in tables])
        self.batch_rows = batch_rows
        self.result: LogIngestResult | None = None
        self.rows: Counter = Counter()

    def __iter__(self):
        state = _State(str(self.path), all_columns=self.batch_rows is not None, kinds=self.kinds,
                       tables=self.tables)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # millions of small tuples: the cyclic collector would only slow this down
        try:
            windowed = "stats" in self.kinds  # batches end before a stats line; else anywhere
            for _ in _scan_file(self.path, state):
                if (self.batch_rows and (state.last_window is not None or not windowed)
                        and state.rows() >= self.batch_rows):
                    yield self._counted(state.take(everything=not windowed))
                    gc.collect(1)  # the batch's frames (pandas keeps reference cycles; young objects only: cheap)
            yield self._counted(state.take(everything=True))
            self.result = state.counts(self.rows)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _counted(self, tables: dict) -> dict:
        tables = {name: tables[name] for name in self.tables}
        for name, df in tables.items():
            self.rows[name] += len(df)
        return tables


def _scan_file(path: Path, state: _State):
    """Feed the file's chunks to `state` in order (two scanned at once); yields after each."""
    with ThreadPoolExecutor(WORKERS) as pool:
        pending: deque = deque()  # (chunk, its columnar scan) in file order
        for buf, partial in _chunks(path):
            if partial or not COLUMNAR:  # a cut-off last line: the byte path decides
                while pending:
                    state.merge(*pending.popleft())
                state.scan(buf, partial)
                yield
                continue
            pending.append((buf, pool.submit(_scanner().scan, buf, 1, state.kinds)))
            while len(pending) > WORKERS:  # bounded: the memory does not grow with the file
                state.merge(*pending.popleft())
                yield
        while pending:
            state.merge(*pending.popleft())
            yield


@functools.cache
def _scanner() -> Scanner:
    """The columnar scanner, built from this module's byte templates."""
    return Scanner(_V1_MSG.pattern, _SPEC_MSG.pattern,
                   {k: p for k, p in _KINDS.items() if k != "stats"}, _ESC, _HOST_NAME, _TEXT, _PRINTED, _STAMP,
                   _V1_HEAD_LEN, _PHRASES, _V0_MSG.pattern, _V0_PREFIX_MSG.pattern)


def _chunks(path: Path):
    """(bytes ending with a newline, is-a-cut-off-last-line) pieces of the decompressed file."""
    fh = open_text(path)  # plain or gzip; the encoding from the byte-order mark
    utf16 = fh.encoding == "utf-16"
    if utf16:
        fh.reconfigure(newline="")  # keep "\r" as it is: lines end at "\n" only
    raw = fh if utf16 else fh.buffer  # UTF-8 is scanned as bytes, candidate lines decoded
    carry, first, offset = b"", True, 0
    newline = "\n" if utf16 else b"\n"
    try:
        with fh:
            while data := raw.read(CHUNK_BYTES):
                data = _to_line_end(raw, data, newline)
                if utf16:
                    data = data.encode("utf-8")
                elif first and data.startswith(b"\xef\xbb\xbf"):
                    data = data[3:]
                first = False
                offset += len(data)
                if data.endswith(b"\n"):
                    yield data, False
                    continue
                cut = data.rfind(b"\n")  # the file ends without a newline
                if cut >= 0:
                    yield data[: cut + 1], False
                carry = data[cut + 1:]
    except GZIP_ERRORS as exc:
        raise IngestError(path, f"byte {offset} of the decompressed stream",
                          f"cannot read on (corrupt or cut-off gzip?): {exc}") from exc
    except UnicodeDecodeError as exc:
        raise IngestError(path, None, f"not UTF-16 text ({exc.reason}) despite its byte-order mark") from exc
    if carry:
        yield carry + b"\n", True


def _to_line_end(raw, data, newline):
    """`data` with the rest of its last line read on (one copy, no carry between chunks); at
    the end of the file it may still lack the newline. (UTF-16 text stops at a "\r" too.)"""
    while not data.endswith(newline):
        more = raw.readline()
        if not more:
            break
        data += more
    return data


class _State:
    """What the chunks gave so far: column arrays per chunk, counts and reasons."""

    def __init__(self, source: str, all_columns: bool = False, kinds: frozenset = KINDS,
                 tables: tuple = TABLES):
        self.source = source
        self.kinds, self.tables = kinds, tables  # the kinds of line parsed; the tables asked for
        self.all_columns = all_columns  # every optional column in every table, printed or not
        self.lines = 0  # lines of the chunks scanned so far
        self.windows: list[dict] = []  # column arrays, one dict per chunk and template
        self.spec: list[dict] = []
        self.v0_prefix: list[dict] = []  # V0's own prefix-cache lines: column arrays per chunk, as windows
        self.boot: list[tuple] = []  # (line, time, process, fact, value, value_num, unit)
        self.boot_lines = 0
        self.access_lines: list[np.ndarray] = []
        self.access_codes: list[np.ndarray] = []
        self.access_keys: dict[tuple, int] = {}  # distinct (host, request, status) -> code
        self.access_lines_seen: dict[tuple, int] = {}  # (port-less line, coloured) -> code or -1
        self.procs: dict[bytes, bytes] = {}  # text before the time -> process name
        self.header_lines = 0  # lines with a vLLM header that are none of the kinds
        self.reasons: Counter = Counter()
        self.merged = 0  # V0 prefix-cache lines joined to their window (batches taken so far)
        self.last_window: int | None = None  # line of the latest stats line (batches end before it)
        self.last_window_time: bytes = b""
        # per (process, engine) as bytes: the latest stats line's (printed seconds, RFC 3339 seconds,
        # had throughput), and every gap so far with whether the line before it had throughput
        self.last_seen: dict[tuple, tuple] = {}
        self.engine_gaps: dict[tuple, list[tuple]] = {}

    def merge(self, buf: bytes, scan: Future) -> None:
        """Add one chunk's columnar scan, parsing the lines it handed back; a chunk that is
        not UTF-8 goes through the byte path instead."""
        cs: ChunkScan | None = scan.result()
        if cs is None:
            self.scan(buf, False)
            return
        base = self.lines  # the scan numbered the chunk's lines from 1
        moved = lambda lines: [(n + base, line) for n, line in lines]  # noqa: E731
        for cols in (cs.stats, cs.v0, cs.v0prefix, cs.spec):
            if cols is not None:
                cols["line"] += base
        if cs.access_lines is not None:
            cs.access_lines += base
        if cs.stats is not None:
            self._add_v1(cs.stats)
        if cs.v0 is not None:
            self._add_v0(cs.v0)
        if cs.v0prefix is not None:
            self.v0_prefix.append(cs.v0prefix)
        self._stats_slow(moved(cs.slow["stats"]))
        if cs.spec is not None:
            self.spec.append(cs.spec)
        self.reasons[UNKNOWN_SPEC] += cs.spec_two_rates
        self._spec_slow(moved(cs.slow["spec"]), _Rows())
        self._v0prefix_slow(moved(cs.slow["v0prefix"]), _Rows())
        self._boot_lines(moved(cs.slow["boot"]))
        if cs.access_lines is not None:
            coloured = b"\x1b" in buf and b"INFO\x1b[" in buf  # (memchr first: the long search costs 4 ms per chunk)
            keys = [self._access_key(k, coloured) for k in cs.access_keys]
            known = np.array([k >= 0 for k in keys], dtype=bool)
            codes = np.array(keys, dtype=np.int32)[cs.access_codes]
            keep = known[cs.access_codes]
            self.access_lines.append(cs.access_lines[keep])
            self.access_codes.append(codes[keep])
        self.header_lines += cs.header_lines
        self.lines += cs.lines

    def _add_windows(self, cols: dict) -> None:
        """Keep one template's stats rows of a chunk; note the latest window."""
        self.windows.append(cols)
        i = int(np.argmax(cols["line"]))
        if self.last_window is None or cols["line"][i] > self.last_window:
            self.last_window, self.last_window_time = int(cols["line"][i]), bytes(cols["time"][i])

    def _access_key(self, line: bytes, coloured: bool) -> int:
        """The code of the (host, request, status) an access-line key holds; -1 when the
        line holds none."""
        code = self.access_lines_seen.get((line, coloured))
        if code is None:
            m = (_ACCESS_ANSI if coloured else _ACCESS).search(line)
            known = self.access_keys
            code = -1 if m is None else known.setdefault(m.group(1, 2, 3), len(known))
            self.access_lines_seen[line, coloured] = code
        return code

    def rows(self) -> int:
        """Rows parsed and not yet taken as tables (V0 prefix-cache lines included)."""
        return (sum(len(c["line"]) for c in self.windows + self.spec + self.v0_prefix)
                + len(self.boot) + sum(map(len, self.access_lines)))

    # -- one chunk

    def scan(self, buf: bytes, partial: bool) -> None:
        """Find and parse the candidate lines of `buf` (whole lines); count the rest."""
        if partial:
            before = (self.rows(), Counter(self.reasons), self.header_lines)
        nl = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8) == 10)
        cands: dict[str, list] = {kind: [] for kind in _KINDS}
        headers = 0
        for m in _ANCHOR.finditer(buf):
            kind = m.lastgroup
            if kind is None:
                headers += 1
            else:
                cands[kind].append(m.span())
        if buf.count(_STATS_KEY) > len(cands["stats"]):  # stats text the anchor did not see
            headers -= self._unanchored_stats(buf, cands["stats"])
        if "boot" in self.kinds:
            headers -= _progress_lines(buf, cands)
        coloured = b"\x1b" in buf
        for kind, spans in cands.items():
            if spans and kind in self.kinds:
                getattr(self, "_" + kind)(buf, nl, spans, coloured)
        if "access" in self.kinds:
            self._access(buf, nl, coloured and b"INFO\x1b[" in buf)
        if partial and self.rows() == before[0]:  # the cut-off line gave nothing
            self.reasons, self.header_lines, headers = before[1], before[2], 0
            self.reasons[PARTIAL] += 1
        self.header_lines += headers
        self.lines += len(nl)

    @staticmethod
    def _unanchored_stats(buf: bytes, spans: list) -> int:
        """Add the lines holding the stats phrase that the anchor did not classify (no
        header, or text before the phrase); return how many of them were counted as headers."""
        seen = {buf.rfind(b"\n", 0, a) + 1 for a, _ in spans}
        moved, i = 0, buf.find(_STATS_KEY)
        while i >= 0:
            s = buf.rfind(b"\n", 0, i) + 1
            if s not in seen:
                seen.add(s)
                spans.append((s, s))  # no anchor: the full-line templates decide
                moved += len(_ANCHOR.findall(buf, s, buf.find(b"\n", i)))
            i = buf.find(_STATS_KEY, i + 1)
        spans.sort()
        return moved

    def _candidates(self, buf: bytes, nl: np.ndarray, spans: list, fast: re.Pattern, coloured: bool):
        """Match each candidate message with the `fast` template (message start to line end).

        Returns the fast rows as (line numbers, matches, times, processes, call sites, RFC
        3339 stamps) and the other lines as (line number, line bytes with ANSI codes
        stripped) for the full-line templates. The header is read by position: the time is
        the 14 bytes before the space that precedes the file name."""
        index = np.searchsorted(nl, [a for a, _ in spans])  # newlines before each line
        starts = np.append(0, nl + 1)[index].tolist()
        ends = nl[index].tolist()
        if b"\r" in buf:  # "\r\n" line ends
            ends = [e - 1 if buf[e - 1] == 13 else e for e in ends]
        numbers = (index + (self.lines + 1)).tolist()
        rfind = buf.rfind
        spaces = [rfind(b" ", s, a) for (a, _), s in zip(spans, starts)]
        matches = [fast.fullmatch(buf, p, e) if a != p else None for (a, p), e in zip(spans, ends)]
        times = [buf[q - 14:q] if q - 15 >= s else b"" for q, s in zip(spaces, starts)]
        good = np.array([m is not None for m in matches]) & _time_like(times)
        slow = [(numbers[i], starts[i], ends[i]) for i in np.flatnonzero(~good).tolist()]
        if slow:
            keep = np.flatnonzero(good).tolist()
            spans, starts, numbers, spaces, matches, times = (
                [seq[i] for i in keep] for seq in (spans, starts, numbers, spaces, matches, times))
        heads = [buf[s:q - 15] for s, q in zip(starts, spaces)]
        sites = [buf[q + 1:p] for q, (_, p) in zip(spaces, spans)]
        stamps = [_stamp(buf, s) for s in starts]
        lines = []
        for n, s, e in slow:
            line = buf[s:e]
            lines.append((n, _ANSI.sub(b"", line) if coloured and b"\x1b" in line else line))
        return (numbers, matches, times, self._procs(heads), sites, stamps), lines

    def _procs(self, heads: list[bytes]) -> list[bytes]:
        """Process names from the text before the level word, e.g. `(APIServer pid=1) `."""
        cache = self.procs
        if len(cache) > 4096:  # date-prefixed lines make every head new: keep the cache small
            cache.clear()
        for head in set(heads) - cache.keys():
            found = _PROC.search(head)
            cache[head] = found.group(1) if found else b""
        return [cache[h] for h in heads]

    def _stats(self, buf: bytes, nl: np.ndarray, spans: list, coloured: bool) -> None:
        fast, others = self._candidates(buf, nl, spans, _V1_MSG, coloured)
        self._stats_slow(others, _Rows(fast[0], [m.groups() for m in fast[1]], *fast[2:]))

    def _stats_slow(self, others: list, v1: _Rows | None = None) -> None:
        """Parse stats lines with the full-line templates (V1 in any field order, V0); add
        them, and the `v1` rows already parsed, to the windows."""
        v1, v0 = v1 or _Rows(), _Rows()
        for n, line in others:
            line = _ANSI.sub(b"", line) if b"\x1b" in line else line
            if (m := _V1.fullmatch(line)) is not None:
                v1.add(n, m.groups()[_HEAD_GROUPS:], m["time"], m["proc"] or b"", m["site"], _stamp(line))
            elif (m := _V0.fullmatch(line)) is not None:
                v0.add(n, m.groups()[_HEAD_GROUPS:], m["time"], m["proc"] or b"", m["site"], _stamp(line))
            elif _HEAD_RX.match(line) is None and _STATS_LOOSE.search(line):
                self.reasons[HEADERLESS_STATS] += 1
            else:
                self.reasons[UNKNOWN_STATS] += 1
        if v1.numbers:
            self._add_v1(v1.columns(_V1_FIELDS))
        if v0.numbers:
            self._add_v0(v0.columns(_V0_FIELDS))

    def _add_v1(self, cols: dict) -> None:
        """V1 stats rows as column arrays: engine index or "aggregated", template."""
        engine, engines = cols.get("engine", np.full(len(cols["line"]), b"")), cols.pop("engines", None)
        cols["engine"] = engine if engines is None else np.where(engines != b"", b"aggregated", engine)
        cols["log_format"] = _log_format("v1", cols)
        self._add_windows(cols)

    def _add_v0(self, cols: dict) -> None:
        cols["log_format"] = _log_format("v0", cols)
        self._add_windows(cols)

    def _v0prefix(self, buf: bytes, nl: np.ndarray, spans: list, coloured: bool) -> None:
        fast, others = self._candidates(buf, nl, spans, _V0_PREFIX_MSG, coloured)
        self._v0prefix_slow(others, _Rows(fast[0], [m.groups() for m in fast[1]], *fast[2:]))

    def _v0prefix_slow(self, others: list, rows: _Rows) -> None:
        """V0's separate prefix-cache lines by the full-line template, added with the `rows`
        parsed (as column arrays, joined to their windows when the tables are made)."""
        for n, line in others:
            line = _ANSI.sub(b"", line) if b"\x1b" in line else line
            if (m := _V0_PREFIX.fullmatch(line)) is not None:
                rows.add(n, m.groups()[_HEAD_GROUPS:], m["time"], m["proc"] or b"", m["site"], _stamp(line))
            else:
                self.header_lines += 1  # an ordinary log line after all
        if rows.numbers:
            self.v0_prefix.append(rows.columns(_V0_PREFIX_FIELDS))

    def _spec(self, buf: bytes, nl: np.ndarray, spans: list, coloured: bool) -> None:
        fast, others = self._candidates(buf, nl, spans, _SPEC_MSG, coloured)
        groups = [m.groups() for m in fast[1]]
        one = [(g[_RATE_FIRST] is None) != (g[_RATE_LAST] is None) for g in groups]
        if not all(one):
            self.reasons[UNKNOWN_SPEC] += one.count(False)
            fast = [[v for v, ok in zip(seq, one) if ok] for seq in fast]
            groups = [g for g, ok in zip(groups, one) if ok]
        self._spec_slow(others, _Rows(fast[0], groups, *fast[2:]))

    def _spec_slow(self, others: list, rows: _Rows) -> None:
        """SpecDecoding lines by the full-line template, added with the `rows` parsed."""
        for n, line in others:
            line = _ANSI.sub(b"", line) if b"\x1b" in line else line
            m = _SPEC.fullmatch(line)
            if m is not None and _one_rate(m):
                rows.add(n, m.groups()[_HEAD_GROUPS:], m["time"], m["proc"] or b"", m["site"], _stamp(line))
            else:
                self.reasons[UNKNOWN_SPEC] += 1
        if rows.numbers:
            self.spec.append(rows.columns(_SPEC_FIELDS))

    def _boot(self, buf: bytes, nl: np.ndarray, spans: list, coloured: bool) -> None:
        self._boot_lines(self._candidates(buf, nl, spans, _NEVER, True)[1])

    def _boot_lines(self, others: list) -> None:
        """Start-up facts of candidate lines (any number per line)."""
        for n, line in others:
            line = _ANSI.sub(b"", line) if b"\x1b" in line else line
            head = _HEAD_RX.match(line)
            try:
                message = line[head.end():].decode() if head else line.decode()
            except UnicodeDecodeError:
                self.reasons[NOT_UTF8] += 1
                continue
            facts = _boot_facts(message)
            if not facts:
                self._no_facts(line, head, message)
                continue
            self.boot_lines += 1
            time = head["time"].decode() if head else None
            tag = head["proc"] if head else (m[1] if (m := _PROC.search(line)) else None)
            proc = tag.decode("utf-8", "replace") if tag else None
            self.boot.extend((n, time, proc, *fact) for fact in facts)

    def _no_facts(self, line: bytes, head, message: str) -> None:
        """Count a candidate start-up line that gave no fact: one that begins like a start-up
        line is of an unknown template; a progress bar of another kind or not finished
        stays what it was (a continuation line, or an ordinary log line if it has a header)."""
        if any(p in line for p in _PHRASES) and not (head and _BOOT_START.match(message)):
            self.header_lines += head is not None
        else:
            self.reasons[UNKNOWN_BOOT] += 1

    def _access(self, buf: bytes, nl: np.ndarray, coloured: bool) -> None:
        starts: list[int] = []
        keys: list[tuple] = []
        add_start, add_key = starts.append, keys.append
        for m in (_ACCESS_ANSI if coloured else _ACCESS).finditer(buf):
            add_start(m.start())
            add_key(m.group(1, 2, 3))
        if not starts:
            return
        # (host, request, status) repeats: a code per row, each distinct one parsed once
        codes, uniques = pd.factorize(np.fromiter(keys, dtype=object, count=len(keys)))
        known = self.access_keys
        remap = np.fromiter((known.setdefault(k, len(known)) for k in uniques),
                            dtype=np.int32, count=len(uniques))
        self.access_lines.append(np.searchsorted(nl, starts) + (self.lines + 1))
        self.access_codes.append(remap[codes])

    # -- the tables

    def take(self, everything: bool) -> dict[str, pd.DataFrame]:
        """The tables of the rows parsed so far, removed from the state: all of them, or
        those before the latest stats line (a batch).

        A batch ends just before a stats line, so the access lines of the batch know their
        window, and a V0 prefix-cache line (printed after its stats line) stays with it."""
        keep = _Later(self, None if everything else self.last_window)
        windows, merged = self._windows_table()
        self.merged += merged
        tables = {"windows": windows, "access": self._access_table(windows, keep.window),
                  "spec_decode": self._spec_table(), "boot": self._boot_table()}
        keep.restore(self)
        return tables

    def counts(self, rows: Counter) -> LogIngestResult:
        """The whole file's counts, once every row was taken: `rows` per table."""
        res = LogIngestResult(path=self.source, format=FORMAT, rows=rows)
        res.read = self.lines
        res.intervals = self.intervals()
        res.notes = [i.text() for i in res.intervals]
        asked = set(self.tables)
        used = sum(rows[t] for t in ("windows", "access", "spec_decode") if t in asked)
        ignored = (self.lines - used - (self.boot_lines if "boot" in asked else 0)
                   - (self.merged if "windows" in asked else 0))
        reasons = Counter({r: n for r, n in self.reasons.items() if n})
        specific = sum(reasons.values())
        if asked != set(TABLES):  # other header lines were not told apart from the rest
            if ignored - specific > 0:
                reasons[NOT_ASKED] = ignored - specific
            res.reasons = reasons
            res.ignored = sum(reasons.values())
            return res
        other = max(0, min(self.header_lines, ignored - specific))
        if other:
            reasons[OTHER] = other
        if ignored - specific - other > 0:
            reasons[CONTINUATION] = ignored - specific - other
        res.reasons = reasons
        res.ignored = sum(reasons.values())
        return res

    def _windows_table(self) -> tuple[pd.DataFrame, int]:
        raw = _concat(self.windows)
        n = len(raw.setdefault("line", np.zeros(0, dtype=np.int64)))
        for name in _V1_FIELDS + _V0_FIELDS + ["proc", "time", "stamp"]:  # fields of a template not used
            raw.setdefault(name, np.full(n, b"", dtype="S1") if name in _TEXT else np.full(n, np.nan))
        merged = self._merge_v0_prefix(raw)
        stamps = _stamps(raw["stamp"])
        cols = {"line": raw["line"], "time": _strs(raw["time"]), "timestamp": stamps, "gap_s": self._gaps(raw, stamps),
                "process": raw["proc"], "engine": raw["engine"], "log_format": raw.get("log_format"),
                "prompt_tps": raw["prompt_tps"], "generation_tps": raw["generation_tps"],
                "kv_usage": raw["kv_usage"] / 100, "prefix_hit_rate": raw["prefix_hit_rate"] / 100}
        for name in ("running", "waiting", "swapped", "preemptions", "deferred"):
            cols[name] = _ints(raw[name])
        # fields without a schema column: kept only when the log printed them (in every
        # batch of a LogStream, so that its batches have the same columns)
        for name in ("corrupted", "kv_fetch_waiting", "kv_fetch_in_progress", "kv_fetch_completed"):
            if self.all_columns or not np.isnan(raw[name]).all():
                cols[name] = _ints(raw[name])
        for name in ("external_prefix_hit_rate", "mm_hit_rate", "cpu_kv_usage", "cpu_prefix_hit_rate"):
            if self.all_columns or not np.isnan(raw[name]).all():
                cols[name] = raw[name] / 100
        if self.all_columns or ((raw["device"] != b"") & (raw["device"] != b"GPU")).any():
            cols["kv_device"] = _strs(raw["device"])
        return _frame("windows", cols, n, self.source), merged

    def _gaps(self, raw: dict, stamps: np.ndarray) -> np.ndarray:
        """Seconds since the previous stats line of the same process and engine (the one of
        an earlier batch too): by the RFC 3339 times where both lines have one, else by the
        printed times. NaN on an engine's first line and where the time goes back. Each
        engine's gaps are kept for its interval (`intervals`)."""
        n = len(raw["line"])
        gaps = np.full(n, np.nan)
        if not n:
            return gaps
        printed = _printed_seconds(raw["time"])
        ns, has_ns = stamps.astype(np.int64), ~np.isnat(stamps)  # nanoseconds: exact differences
        busy = (raw["prompt_tps"] > 0) | (raw["generation_tps"] > 0)
        for key, at in _engines(raw["proc"], raw["engine"]):
            last = self.last_seen.get(key, (np.nan, 0, False, False))
            p, t, has, b = printed[at], ns[at], has_ns[at], busy[at]
            by_print = p - np.append(last[0], p[:-1])
            by_print[by_print < -_WRAP_S] += _YEAR_S  # December 31 -> January 1 (the year is not printed)
            both = has & np.append(last[2], has[:-1])
            by_stamp = (t - np.append(last[1], t[:-1])) / 1e9
            g = np.where(both, by_stamp, by_print)
            g[g < 0] = np.nan
            gaps[at] = g
            self.last_seen[key] = (p[-1], t[-1], bool(has[-1]), bool(b[-1]))
            self.engine_gaps.setdefault(key, []).append((g, np.append(last[3], b[:-1]).astype(bool)))
        return gaps

    def intervals(self) -> list[Interval]:
        """Each engine's stats interval, from the gaps of all its lines so far."""
        out = []
        for key, parts in self.engine_gaps.items():
            proc, engine = (v.decode("utf-8", "replace") or None for v in key)
            out.append(measure_interval(proc, engine, np.concatenate([g for g, _ in parts]),
                                        np.concatenate([a for _, a in parts])))
        return out

    def _merge_v0_prefix(self, raw: dict) -> int:
        """Put V0's separate `Prefix cache hit rate: GPU: x%, CPU: y%` line into the V0
        window printed just before it (same process, at most 3 lines earlier, no prefix
        rate of its own; the first such line of a window). The others are counted as
        orphans. Returns how many were put in."""
        prefix = _concat(self.v0_prefix)
        n = len(prefix.get("line", ()))
        lines = raw["line"]
        if not n or not len(lines):
            self.reasons[ORPHAN_V0_PREFIX] += n
            return 0
        at = np.searchsorted(lines, prefix["line"]) - 1  # the window printed just before each
        i = np.maximum(at, 0)
        ok = ((at >= 0) & (raw["log_format"][i] == "v0") & (raw["proc"][i] == prefix["proc"])
              & (prefix["line"] - lines[i] <= 3) & np.isnan(raw["prefix_hit_rate"][i]))
        first = np.flatnonzero(ok)
        first = first[np.unique(i[first], return_index=True)[1]]  # one line per window: the first
        raw["prefix_hit_rate"][i[first]] = prefix["prefix_hit_rate"][first]
        raw["cpu_prefix_hit_rate"][i[first]] = prefix["cpu_prefix_hit_rate"][first]
        self.reasons[ORPHAN_V0_PREFIX] += n - len(first)
        return len(first)

    def _access_table(self, windows: pd.DataFrame, later: tuple | None = None) -> pd.DataFrame:
        """Access rows with the window each ends in: the next stats line, which may be
        `later` (line, time) when it belongs to the next batch."""
        if not self.access_lines:
            return _frame("access", {}, 0, self.source)
        lines = np.concatenate(self.access_lines)
        codes = np.concatenate(self.access_codes)
        self.access_lines, self.access_codes = [], []
        parsed = [_access_fields(key) for key in self.access_keys]  # in code order
        ok = np.array([p is not None for p in parsed], dtype=bool)
        if not ok.all():
            keep = ok[codes]
            self.reasons[BAD_ACCESS] += int((~keep).sum())
            lines, codes = lines[keep], codes[keep]
            parsed = [p or ("", "", 0, "") for p in parsed]
        status = np.array([p[2] for p in parsed], dtype=np.int64)
        # an access line has no time: it belongs to the next stats line (the window it ends in)
        wlines = windows["line"].to_numpy(dtype=np.int64)
        wtimes = windows["time"]
        if later is not None:
            wlines = np.append(wlines, later[0])
            wtimes = pd.concat([wtimes, pd.Series([later[1]], dtype=wtimes.dtype)], ignore_index=True)
        nxt = np.searchsorted(wlines, lines, side="right")
        wtime = pd.Categorical(wtimes)
        cols = {"line": _ints(lines), "status": _ints(status[codes]),
                "window_time": pd.Categorical.from_codes(np.append(wtime.codes, -1)[nxt], wtime.categories)
                .remove_unused_categories(),  # categories: the values (a batch's windows may have none)
                "window_line": pd.arrays.IntegerArray(np.append(wlines, 0)[nxt], nxt == len(wlines))}
        del nxt
        for name, k in (("method", 0), ("path", 1), ("client", 3)):  # one code per row, text once
            per_key = pd.Categorical([p[k] for p in parsed])
            cols[name] = pd.Categorical.from_codes(per_key.codes[codes], per_key.categories)
        return _frame("access", cols, len(lines), self.source)

    def _spec_table(self) -> pd.DataFrame:
        raw = _concat(self.spec)
        n = len(raw.get("line", ()))
        if not n:
            return _frame("spec_decode", {"log_format": np.zeros(0, dtype=object)} if self.all_columns else {},
                          0, self.source)
        for name in _SPEC_FIELDS:  # fields no line printed
            raw.setdefault(name, np.full(n, np.nan))
        first = raw["rate_first_printed"]
        fmt = _log_format("spec", raw)
        cols = {
            "origin": "log-line", "line": raw["line"], "time": _strs(raw["time"]),
            "draft_tokens": _ints(raw["draft_tokens"]), "accepted_tokens": _ints(raw["accepted_tokens"]),
            "mean_acceptance_length": raw["mean_acceptance_length"],
            "acceptance_rate": np.where(first, raw["rate_first"], raw["rate_last"]) / 100,
            "accepted_tps": raw["accepted_tps"], "drafted_tps": raw["drafted_tps"],
            "per_position": np.array([p.decode().replace(", ", ",") for p in raw["per_position"]], dtype=object),
            "log_format": fmt,
        }
        return _frame("spec_decode", cols, n, self.source)

    def _boot_table(self) -> pd.DataFrame:
        names = ["line", "time", "process", "fact", "value", "value_num", "unit"]
        cols = {name: np.array(col, dtype=object) for name, col in zip(names, zip(*self.boot))}
        if self.boot:
            cols["value_num"] = cols["value_num"].astype(np.float64)
        elif self.all_columns:
            cols = {name: np.zeros(0, dtype=object) for name in ("time", "process")}
        return _frame("boot", cols, len(self.boot), self.source)


class _Later:
    """The rows at or after a batch's cutoff line, set aside while the batch's tables are
    built from the state, then put back."""

    def __init__(self, state: _State, cutoff: int | None):
        self.window = None
        if cutoff is None:
            self.windows, self.spec, self.v0_prefix, self.boot, self.access = [], [], [], [], ([], [])
            return
        self.windows = _split_parts(state.windows, cutoff)
        self.spec = _split_parts(state.spec, cutoff)
        self.v0_prefix = _split_parts(state.v0_prefix, cutoff)
        self.boot = [row for row in state.boot if row[0] >= cutoff]
        state.boot = [row for row in state.boot if row[0] < cutoff]
        now, later = ([], []), ([], [])
        for lines, codes in zip(state.access_lines, state.access_codes):
            before = lines < cutoff
            for side, mask in ((now, before), (later, ~before)):
                if mask.any():
                    side[0].append(lines[mask])
                    side[1].append(codes[mask])
        state.access_lines, state.access_codes = now
        self.access = later
        self.window = (cutoff, state.last_window_time.decode("utf-8", "replace"))

    def restore(self, state: _State) -> None:
        state.windows, state.spec = self.windows, self.spec
        state.v0_prefix, state.boot = self.v0_prefix, self.boot
        state.access_lines, state.access_codes = self.access


def _split_parts(parts: list[dict], cutoff: int) -> list[dict]:
    """Keep the rows before `cutoff` in `parts` (in place); return those at or after it."""
    later, now = [], []
    for p in parts:
        before = p["line"] < cutoff
        if before.all():
            now.append(p)
        elif not before.any():
            later.append(p)
        else:
            now.append({k: v[before] for k, v in p.items()})
            later.append({k: v[~before] for k, v in p.items()})
    parts[:] = now
    return later


# ---------------------------------------------------------------- helpers

_TEXT = {"proc", "time", "site", "stamp"} | T.text_fields()
_PRINTED = T.presence_fields()  # presence tells templates apart (a printed `nan` is NaN too)


class _Rows:
    """One chunk's matches of one template, turned into column arrays at the chunk's end
    so that millions of lines never live as Python tuples at once."""

    def __init__(self, numbers=None, groups=None, times=None, procs=None, sites=None, stamps=None):
        self.numbers, self.groups = numbers or [], groups or []
        self.times, self.procs, self.sites = times or [], procs or [], sites or []
        self.stamps = stamps or []

    def add(self, n: int, groups: tuple, time: bytes, proc: bytes, site: bytes, stamp: bytes) -> None:
        self.numbers.append(n)
        self.groups.append(groups)
        self.times.append(time)
        self.procs.append(proc)
        self.sites.append(site)
        self.stamps.append(stamp)

    def columns(self, names: list[str]) -> dict[str, np.ndarray]:
        """float64 for numbers (absent -> NaN), compact bytes for text (absent -> b"")."""
        out = {"line": np.array(self.numbers, dtype=np.int64), "time": np.array(self.times, dtype="S14"),
               "proc": np.array(self.procs, dtype=bytes), "site": np.array(self.sites, dtype=bytes),
               "stamp": np.array(self.stamps, dtype=bytes)}
        n = len(self.numbers)
        for name, col in zip(names, zip(*self.groups)):
            absent = col.count(None)
            if name in _PRINTED:
                out[name + "_printed"] = (np.full(n, True) if not absent else
                                          np.array([v is not None for v in col], dtype=bool))
            if absent == n:  # not printed in this chunk: left out, filled in by _concat
                continue
            if absent:
                col = [(b"" if name in _TEXT else b"nan") if v is None else v for v in col]
            out[name] = (np.array(col, dtype=bytes) if name in _TEXT
                         else np.fromiter(map(float, col), dtype=np.float64, count=n))
        return out


def _progress_lines(buf: bytes, cands: dict) -> int:
    """Add to the boot candidates the lines holding a progress-bar phrase (vllm_templates:
    start-up lines without a header) that are no candidate yet; return how many of their
    header matches were counted as other header lines."""
    taken = {buf.rfind(b"\n", 0, a) + 1 for spans in cands.values() for a, _ in spans}
    found = set()
    for phrase in _PHRASES:
        i = buf.find(phrase)
        while i >= 0:  # (a chunk ends with a newline)
            found.add(buf.rfind(b"\n", 0, i) + 1)
            i = buf.find(phrase, buf.find(b"\n", i) + 1)
    moved = 0
    for s in sorted(found - taken):
        cands["boot"].append((s, s))  # no message start: the full-line path reads it
        moved += sum(m.lastgroup is None for m in _ANCHOR.finditer(buf, s, buf.find(b"\n", s)))
    if found - taken:
        cands["boot"].sort()
    return moved


def _stamp(buf: bytes, start: int = 0) -> bytes:
    """The wall time of an RFC 3339 prefix of the line at `start` (offset dropped), or b""."""
    m = _STAMP_RX.match(buf, start)
    return m["stamp"] if m else b""


def _stamps(values: np.ndarray) -> np.ndarray:
    """RFC 3339 wall times (b"" = none) as datetime64[ns]; NaT where none or not a date."""
    out = np.full(len(values), np.datetime64("NaT"), dtype="datetime64[ns]")
    has = values != b""
    if has.any():
        text = [v.decode() for v in values[has].tolist()]
        out[has] = pd.to_datetime(text, format="ISO8601", errors="coerce").to_numpy(dtype="datetime64[ns]")
    return out


# Printed times have no year: they are placed in a leap year (so that 02-29 is a date), and a
# gap that goes back by more than 300 days is the turn of a year (366 days in that year).
_CUM_DAYS = np.array([0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335])
_YEAR_S, _WRAP_S = 366 * 86400.0, 300 * 86400.0
_DIGITS = [0, 1, 3, 4, 6, 7, 9, 10, 12, 13]  # the digits of MM-DD HH:MM:SS


def _engines(procs: np.ndarray, engines: np.ndarray):
    """((process, engine), row positions) of each engine in a batch, in the order of their
    first rows; one engine (the usual log) costs two comparisons, not a sort."""
    if not len(procs):
        return
    if (procs == procs[0]).all() and (engines == engines[0]).all():
        yield (bytes(procs[0]), bytes(engines[0])), np.arange(len(procs))
        return
    p, pc = np.unique(procs, return_inverse=True)
    e, ec = np.unique(engines, return_inverse=True)
    codes = pc.reshape(-1) * len(e) + ec.reshape(-1)
    found, first = np.unique(codes, return_index=True)
    for code in found[np.argsort(first)].tolist():
        yield (bytes(p[code // len(e)]), bytes(e[code % len(e)])), np.flatnonzero(codes == code)


def _printed_seconds(times: np.ndarray) -> np.ndarray:
    """`MM-DD HH:MM:SS` byte strings as seconds since January 1 of a leap year (NaN where
    the text is not such a time)."""
    t = np.asarray(times, dtype="S14")
    if not len(t):
        return np.zeros(0)
    d = t.view(np.uint8).reshape(len(t), 14)[:, _DIGITS].astype(np.int32) - 48
    month, day, hour, minute, second = (d[:, i] * 10 + d[:, i + 1] for i in (0, 2, 4, 6, 8))
    ok = _time_like(t) & (d.min(axis=1) >= 0) & (d.max(axis=1) <= 9) & (month >= 1) & (month <= 12) & (day >= 1)
    days = _CUM_DAYS[np.clip(month - 1, 0, 11)] + day - 1
    return np.where(ok, days * 86400.0 + hour * 3600 + minute * 60 + second, np.nan)


@dataclass(frozen=True)
class Interval:
    """How often one engine of a log printed its stats line, measured from the lines' times:
    no line of vLLM's log states VLLM_LOG_STATS_INTERVAL (V0 used a fixed 5 s)."""

    process: str | None
    engine: str | None
    seconds: float  # median gap; NaN = unknown
    q1: float  # the middle half of the gaps: from q1 to q3 seconds
    q3: float
    gaps: int  # gaps the median was taken over
    lines: int  # stats lines of this engine

    def text(self) -> str:
        who = " ".join(filter(None, [f"engine {self.engine}" if self.engine else "",
                                     f"({self.process})" if self.process else ""])) or "the log"
        if not self.gaps:
            return (f"stats interval of {who} unknown: {self.lines} stats line{'s' if self.lines != 1 else ''} "
                    "and no two whose times give a gap")
        spread = (f"at least half of them exactly {_sec(self.q1)} s" if self.q1 == self.q3 else
                  f"the middle half between {_sec(self.q1)} and {_sec(self.q3)} s")
        return (f"stats interval of {who} {_sec(self.seconds)} s (median of {self.gaps:,} gap"
                f"{'s' if self.gaps != 1 else ''} between its consecutive stats lines; {spread})")


def _sec(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def measure_interval(process, engine, gaps: np.ndarray, after_busy: np.ndarray) -> Interval:
    """An engine's interval from the gaps between its consecutive stats lines (NaN: none).

    The median is taken over the gaps that follow a line with throughput: vLLM prints the
    next line of those at INFO, while after an idle line it may print the following idle
    lines at DEBUG, so such a gap can span several intervals. A log without such gaps uses
    all of them."""
    ok = np.isfinite(gaps)
    regular = ok & after_busy
    used = gaps[regular] if regular.any() else gaps[ok]
    lines = int(len(gaps))
    if not len(used):
        return Interval(process, engine, np.nan, np.nan, np.nan, 0, lines)
    q1, median, q3 = (float(v) for v in np.percentile(used, [25, 50, 75]))
    return Interval(process, engine, median, q1, q3, int(len(used)), lines)


INTERVAL_COLUMNS = ["source_file", "process", "engine", "interval_s", "q1_s", "q3_s", "gaps", "lines"]


def stats_intervals(windows: pd.DataFrame) -> pd.DataFrame:
    """One row per log and engine (source file, process, engine) of a windows table: its
    measured stats interval (`interval_s`, NaN when unknown), the middle half of its gaps
    and how many gaps and lines it rests on. The same measure as the reader's summary."""
    rows = []
    if len(windows):
        w = windows.sort_values(["source_file", "line"])
        busy = (w["prompt_tps"] > 0) | (w["generation_tps"] > 0)
        for key, g in w.groupby(_engine_keys(w), sort=False):
            after = busy[g.index].shift(1, fill_value=False).to_numpy(dtype=bool)
            i = measure_interval(key[1] or None, key[2] or None, g["gap_s"].to_numpy(dtype=float), after)
            rows.append([key[0], i.process, i.engine, i.seconds, i.q1, i.q3, i.gaps, i.lines])
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def with_intervals(windows: pd.DataFrame) -> pd.DataFrame:
    """`windows` with `interval_s`: the measured stats interval of each line's log and engine
    (NaN when unknown), the length of the window the line's rates average over."""
    out = windows.copy()
    out["interval_s"] = np.nan
    if len(out):
        per = stats_intervals(out)
        keys = pd.MultiIndex.from_frame(per[["source_file", "process", "engine"]].fillna(""))
        out["interval_s"] = per.set_index(keys)["interval_s"].reindex(
            pd.MultiIndex.from_arrays(_engine_keys(out))).to_numpy()
    return out


def _engine_keys(w: pd.DataFrame) -> list[pd.Series]:
    """(source file, process, engine) per row as text ("" for a missing process or engine)."""
    return [w["source_file"].astype(str), w["process"].astype("string").fillna("").astype(str),
            w["engine"].astype("string").fillna("").astype(str)]


def _time_like(times: list[bytes]) -> np.ndarray:
    """Which byte strings look like `MM-DD HH:MM:SS`."""
    t = np.array(times, dtype="S14")
    if not len(t):
        return np.zeros(0, dtype=bool)
    b = t.view(np.uint8).reshape(len(t), 14)
    return (b[:, 2] == 45) & (b[:, 5] == 32) & (b[:, 8] == 58) & (b[:, 11] == 58)


def _one_rate(m: re.Match) -> bool:
    """Exactly one of the two acceptance-rate fields: one of the three SpecDecoding forms
    (the 0.11+ form prints it last, the 0.10.1 and PR #24127 forms first)."""
    return (m["rate_first"] is None) != (m["rate_last"] is None)


def _concat(parts: list[dict]) -> dict[str, np.ndarray]:
    """Chunks' column arrays joined (emptying `parts` field by field, to keep the peak
    memory low) and sorted by line; a field a part lacks is NaN, b"" or False."""
    kinds = {}
    for p in parts:
        for name, values in p.items():
            kinds.setdefault(name, values.dtype.kind)
    fill = {"f": np.nan, "b": False, "O": None}
    sizes = [len(p["line"]) for p in parts]
    out = {}
    for name, kind in kinds.items():
        out[name] = np.concatenate([
            p.pop(name) if name in p else
            np.full(n, fill.get(kind, b""), dtype=object if kind == "O" else ("S1" if kind == "S" else None))
            for p, n in zip(parts, sizes)])
    parts.clear()
    lines = out.get("line", ())
    if len(lines) and (np.diff(lines) < 0).any():  # rows read by the full-line templates
        order = np.argsort(lines, kind="stable")
        out = {k: v[order] for k, v in out.items()}
    return out


def _strs(values: np.ndarray) -> np.ndarray:
    """Compact bytes -> object array of str; b"" -> None. ASCII without empty values (the
    times, mostly distinct) is decoded by numpy, one object per value and no sort; other
    text one object per distinct value."""
    if values.dtype.kind == "S" and len(values) and (values != b"").all():
        try:
            out = np.empty(len(values), dtype=object)
            out[:] = values.astype(f"U{values.dtype.itemsize}").tolist()
            return out
        except UnicodeDecodeError:
            pass
    uniques, codes = np.unique(values, return_inverse=True)  # sorts in C: no hashing of objects
    text = np.array([v.decode("utf-8", "replace") if v else None for v in uniques.tolist()] + [None], dtype=object)
    return text[codes.reshape(-1)]  # (not through `_categories`: no need to merge equal texts here)


def _categories(values: np.ndarray) -> pd.Categorical:
    """Compact bytes -> categorical of str (each distinct text stored once); b"" -> missing."""
    uniques, codes = np.unique(values, return_inverse=True)  # sorts in C: no hashing of objects
    return categorical(codes.reshape(-1), [v.decode("utf-8", "replace") if v else None for v in uniques.tolist()])


def _ints(values: np.ndarray) -> pd.arrays.IntegerArray:
    """float (NaN = missing) or int array -> nullable Int64."""
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)
    return pd.arrays.IntegerArray(values.astype(np.int64, copy=False), np.zeros(len(values), dtype=bool))


def _boot_facts(message: str) -> list[tuple]:
    """(fact, value as printed, number or NaN, unit) for each start-up fact in a message."""
    out, seen = [], set()
    for rx, facts in _BOOT:
        m = rx.search(message)
        if m is None:
            continue
        for fact, group, unit in facts:
            value = m.group(group)
            if value is None or fact in seen:
                continue
            seen.add(fact)
            value = redact(value.strip())
            num = float(value.replace(",", "")) if unit else float("nan")
            out.append((fact, value, num, unit))
    return out


def _access_fields(key: tuple[bytes, bytes, bytes]):
    """(method, path, status, client) of one distinct (host, request, status), or None."""
    try:
        client, request = (_ANSI.sub(b"", g).decode() for g in key[:2])
    except UnicodeDecodeError:
        return None
    req = _REQUEST_LINE.fullmatch(request)
    if req is None:
        return None
    return req.group(1), redact(req.group(2)), int(key[2]), redact(client)


def _present(cols: dict, name: str, n: int) -> np.ndarray:
    """Which rows printed a field: its presence flag, else a value that is not NaN or b""."""
    if name + "_printed" in cols:
        return cols[name + "_printed"]
    values = cols.get(name)
    if values is None:
        return np.zeros(n, dtype=bool)
    return ~np.isnan(values) if values.dtype.kind == "f" else values != b""


def _admitted(rule: T.Rule, present: dict, cols: dict, n: int) -> np.ndarray:
    """Rows whose printed fields this template prints (all it requires, none it lacks)."""
    ok = np.ones(n, dtype=bool)
    for name, has in present.items():
        if name in rule.required:
            ok &= has
        elif name not in rule.allowed:
            ok &= ~has
    for name, value in rule.fixed.items():
        ok &= cols[name] == value.encode()
    return ok


def _log_format(family: str, cols: dict) -> np.ndarray:
    """Which template of the family printed each row: the first (vllm_templates order) that
    admits the fields the row printed, or the template of its call site when that is later."""
    n = len(cols["line"])
    rules = T.rules(family)
    present = {name: _present(cols, name, n) for name in T.discriminating(family)}
    index = np.full(n, len(rules) - 1, dtype=np.int64)
    for i in range(len(rules) - 1, -1, -1):
        index[_admitted(rules[i], present, cols, n)] = i
    if T.family_of(family).by_site:
        index = np.maximum(index, _site_index(family, cols["site"]))
    return np.array([r.name for r in rules], dtype=object)[index]


def _site_index(family: str, sites: np.ndarray) -> np.ndarray:
    """Index of the template each row's call site names (0 for a site the family lacks)."""
    known = T.site_map(family)
    uniques, codes = np.unique(sites, return_inverse=True)  # a few call sites per chunk
    index = []
    for site in uniques.tolist():
        file, _, num = _ANSI.sub(b"", site).strip(b"[] ").rpartition(b":")
        hits = [i for (f, line), i in known.items() if num.isdigit() and int(num) == line
                and file.endswith(f.encode())]
        index.append(hits[0] if hits else 0)
    return np.array(index, dtype=np.int64)[codes.reshape(-1)]


_PYTHON_STRINGS = pd.api.types.pandas_dtype("string") == pd.StringDtype("python")


def _frame(table: str, cols: dict, n: int, source: str) -> pd.DataFrame:
    """A frame in the table's schema (column order and dtypes) built without a copy per
    column: `conform` gives the same frame but copies every column, which matters for
    millions of access lines. Columns outside the schema are kept at the end."""
    index = pd.RangeIndex(n)
    out = {}
    extra = [Column(name, "string" if getattr(values, "dtype", None) is np.dtype(object) else None, "")
             for name, values in cols.items() if name not in columns(table)]
    specs = [*SCHEMAS[table], *extra]
    for col in specs:
        values = source if col.name == "source_file" else cols.get(col.name)
        if isinstance(values, str):
            if col.dtype == "category":
                values = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), [values])
            else:
                values, text = np.empty(n, dtype=object), values
                values.fill(text)  # np.full is several times slower for objects
        if col.dtype == "category" and isinstance(values, np.ndarray) and values.dtype.kind == "S":
            values = _categories(values)
        if values is None:
            out[col.name] = pd.Series(index=index, dtype=col.dtype)
        elif col.dtype == "string" and _PYTHON_STRINGS and isinstance(values, np.ndarray):
            out[col.name] = pd.Series(pd.arrays.StringArray(values), index=index, copy=False)
        else:
            out[col.name] = pd.Series(values, index=index, dtype=col.dtype, copy=False)
    return pd.DataFrame(out, copy=False)


def add_timestamps(windows: pd.DataFrame, year: int) -> pd.DataFrame:
    """`windows` with `timestamp` filled from `time` (MM-DD HH:MM:SS) and the year the log
    starts in. A month that goes down (December -> January) starts the next year, per source
    file in line order. Timestamps already set are kept."""
    out = windows.copy()
    if out.empty:
        out["timestamp"] = out["timestamp"].astype("datetime64[ns]")
        return out
    order = out.sort_values(["source_file", "line"]).index
    files = out.loc[order, "source_file"]
    time = out.loc[order, "time"].astype("string")
    step = pd.to_numeric(time.str.slice(0, 2), errors="coerce").diff().where(files.eq(files.shift()), 0)
    # +1 on December -> January; -1 when a line of the old year follows the new year's
    # first line (processes interleave), so that it stays in December.
    jump = (step <= -6).astype(int) - (step >= 6).astype(int)
    years = (year + jump.groupby(files).cumsum()).astype("string")
    stamp = pd.to_datetime(years + "-" + time, format="%Y-%m-%d %H:%M:%S", errors="coerce")
    out.loc[order, "timestamp"] = out.loc[order, "timestamp"].fillna(stamp)
    out["timestamp"] = out["timestamp"].astype("datetime64[ns]")
    return out

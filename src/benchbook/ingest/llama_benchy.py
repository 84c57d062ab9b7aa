"""Reader for llama-benchy output: its markdown table, its JSON and CSV, and its console output.

llama-benchy (github.com/eugr/llama-benchy, MIT) benchmarks an OpenAI-compatible server with
llama-bench-like tests: for every depth, pp, tg and concurrency (in that loop order) it sends
`concurrency` streamed requests at once, `--runs` times after one untimed warmup, and prints a
pp row and a tg row per test. Read in the llama-benchy 0.4.0 source (the PyPI sdist
llama_benchy-0.4.0.tar.gz, sha256 43994a6e..., read 2026-11-27; the GitHub repository's newest
stored commit, ae09cab5 of 2026-02-07, v0.3.0 plus two, prints the same table):

- `results.py` `_generate_rows` / `_generate_md_report`: the table `| model | test | t/s (total)
  | t/s (req) | peak t/s | peak t/s (req) | ttfr (ms) | est_ppt (ms) | e2e_ttft (ms) |` (tabulate
  "pipe"); when every test ran at concurrency 1 it is `| model | test | t/s | peak t/s | ttfr (ms)
  | est_ppt (ms) | e2e_ttft (ms) |`. Each cell is `f"{mean:.2f} ± {std:.2f}"`, or empty where the
  row has no such value (a pp row has no peak, a tg row no ttfr). `std` is `np.std`: the
  population standard deviation (ddof 0), over runs for t/s (total) and peak t/s at
  concurrency > 1, and over every request of every run for t/s (req), peak t/s (req), ttfr,
  est_ppt and e2e_ttft. At concurrency 1 the total and per-request rates are one value.
- Test names: `pp{pp}` / `tg{tg}`, then ` @ d{depth}` when depth > 0, then ` (c{concurrency})`
  when any test of the run had concurrency > 1; with --enable-prefix-caching and depth > 0 a
  test first loads the context (`ctx_pp @ d{depth}`, `ctx_tg @ d{depth}` rows).
- `--format json` (`save_report`): the metadata (version, timestamp: UTC at the end of the run,
  latency_mode, latency_ms, model, prefix_caching_enabled, max_concurrency) and `benchmarks`, one
  object per test with each metric as {mean, std, values}; `--format csv`: the rows of the table
  as `model,test_name,t_s_mean,t_s_std,...,e2e_ttft_std` (times in ms). Without --save-result the
  output goes to the console after `Printing results in MD|JSON|CSV format:`, between the start
  banner (`llama-benchy (VERSION)`, `Date: ...`, `__main__.py`) with progress lines (`runner.py`,
  `client.py`, `corpus.py`) and the footer `llama-benchy (VERSION)` / `date: ... | latency mode: ...`.

One record is one test row (a row of the table or CSV, or a row the JSON's test object gives,
as `_generate_rows` would print it). `read` counts rows that reached the `llama_benchy` table;
`ignored` counts rows with a value that is not `mean ± sd` or the wrong number of cells, and
every other text line with its reason: llama-benchy's own progress and status lines, and text
around its output (another program's messages in a console log, a wrapper's headings and
notes). Blank lines, the table's header and separator, the CSV header, the lines of the JSON
and the footer are structure, not records.

What the table does not print, the reader takes from the file when it says it, and notes it:
the run sequence (the console's `Running test: pp=..., tg=..., depth=..., concurrency=...`
lines, else a llama-benchy command line in the file), which gives a tg row the pp of its test and
a pp row its tg; without either, the adjacent pp/tg row of the same depth and concurrency.
`--runs` from that command line (or the console's `Run k/N` lines, or the default 3 of a command
that does not give it); the latency est_ppt subtracts from the console's `Average latency`.

A file with llama-benchy's banner or table header and no row reads as 0 records, and the notes
say why (the results went to a --save-result file, `No results collected`, the run stopped on an
error, or was cut off). Format names start with `benchy-`, not `llama-bench`: `benchbook new`
takes any format named `llama-bench...` for llama-bench's.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shlex
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import columns, conform
from .textio import ANSI, read_text

FORMAT = "llama-benchy"
FORMATS = ("benchy-md", "benchy-json", "benchy-csv", "benchy-log")
TABLES = ("llama_benchy",)

PROGRESS = "llama-benchy progress/status line"
OTHER = "text around llama-benchy's output (another program's messages, a wrapper's headings and notes)"

# The metrics, by the name the table uses: (markdown header(s), CSV / JSON name, column prefix, ms?)
_METRICS = (
    ("tps_total", ("t/s (total)", "t/s"), "t_s", False),
    ("tps_req", ("t/s (req)",), "t_s_req", False),
    ("peak_tps", ("peak t/s",), "peak_ts", False),
    ("peak_tps_req", ("peak t/s (req)",), "peak_ts_req", False),
    ("ttfr", ("ttfr (ms)",), "ttfr", True),
    ("est_ppt", ("est_ppt (ms)",), "est_ppt", True),
    ("e2e_ttft", ("e2e_ttft (ms)",), "e2e_ttft", True),
)
_MD_NAMES = {h: name for name, headers, _, _ in _METRICS for h in headers}
# JSON BenchmarkRun fields of a pp row and a tg row, as `_generate_rows` picks them
_JSON_PP = {"tps_total": "pp_throughput", "tps_req": "pp_req_throughput", "ttfr": "ttfr",
            "est_ppt": "est_ppt", "e2e_ttft": "e2e_ttft"}
_JSON_TG = {"tps_total": "tg_throughput", "tps_req": "tg_req_throughput", "peak_tps": "peak_throughput",
            "peak_tps_req": "peak_req_throughput"}
_CSV_HEAD = "model,test_name,t_s_mean"

_ANSI = re.compile(ANSI)
_MD_HEADER = re.compile(r"^\|\s*model\s*\|\s*test\s*\|.*\|\s*(?:t/s \(total\)|ttfr \(ms\)|est_ppt \(ms\)|"
                        r"e2e_ttft \(ms\))\s*\|", re.M)
_MD_SEP = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")
_BANNER = re.compile(r"^llama-benchy \(([^()\s]*)\)$")
_CONSOLE = re.compile(r"^llama-benchy \([^()\s]*\)\r?\n(?:Date|date): ", re.M)
_START_DATE = re.compile(r"^Date: (.+)$")
_FOOTER_DATE = re.compile(r"^date: (.*?) \| latency mode: (\S*)$")
_RUNNING = re.compile(r"^Running test: pp=(\d+), tg=(\d+), depth=(\d+), concurrency=(\d+)$")
_RUN_K = re.compile(r"^Run \d+/(\d+) \(")
_LEVELS = re.compile(r"^Concurrency levels: \[([\d, ]*)\]$")
_LATENCY = re.compile(r"^Average latency \((\w+)\): ([\d.]+) ms$")
_MEASURING = re.compile(r"^Measuring latency using mode: (\w+)\.\.\.$")
_PRINTING = re.compile(r"^(?:Printing results in|Saving results to (.+) in) (MD|JSON|CSV) format")
_STOPPED = re.compile(r"^\[Error\] Stopping due to error in (.+?): (.*)$")
_REQUEST_ERROR = re.compile(r"^(?:HTTP \d{3}: |Error during run: )(.*)$")
_NO_RESULTS = "No results collected. Check if the model is generating tokens."
_PARTIAL = "[Interrupted/Failed] Saving partial results..."
# a llama-benchy command line: `llama-benchy`, `uvx llama-benchy==0.4.0`, `python -m llama_benchy`, then a flag
_COMMAND = re.compile(r"(?:^|[\s/])(?:llama-benchy|llama_benchy)(?:==[\w.+!-]+|@[\w.+!-]+)?(?=\s+-)")
_PIN = re.compile(r"llama-benchy==([\w.+!-]+)")
# what llama-benchy itself prints (__main__.py, config.py, runner.py, client.py, corpus.py, results.py)
_OWN = ("llama-benchy (", "Date: ", "Benchmarking model: ", "Concurrency levels: ", "Total tokens available",
        "No model specified", "Auto-detected HF model", "Error: ", "Warming up...", "Warmup ",
        "Running coherence test", "Coherence test ", "Skipping coherence test", "Benchmark failed due to",
        "Measuring latency using mode", "Skipping latency measurement", "Error measuring latency",
        "Average latency", "Running test: ", "Run ", "Post-run command failed", "[Error] Stopping",
        "[Interrupted/Failed]", "[Failed] Results discarded", "Printing results in ", "Saving results to ",
        "Error during run: ", "HTTP ", "Loading text from cache: ", "Downloading book from ",
        "Saved text to cache: ", "Error downloading or processing book", "Error loading tokenizer ",
        "Falling back to 'gpt2'", "No complete token_ids", "No token_ids", _NO_RESULTS)
_TEST = re.compile(r"^(?:(?P<kind>pp|tg)(?P<n>\d+)|ctx_(?P<ctx>pp|tg))(?: @ d(?P<depth>\d+))?"
                   r"(?: \(c(?P<c>\d+)\))?$")
_CELL = re.compile(r"^(\S+)(?:\s*(?:±|\+/-)\s*(\S+))?$")
# argparse defaults of llama-benchy 0.4.0 (config.py) for a command line that leaves a flag out
_DEFAULTS = {"--pp": [2048], "--tg": [32], "--depth": [0], "--concurrency": [1]}
_DEFAULT_RUNS = 3
_DEFAULT_LATENCY_MODE = "api"


def sniff(head: str, path=None) -> bool:
    """True for llama-benchy's markdown table, JSON, CSV or console output."""
    return _form(head) is not None


def _form(text: str) -> str | None:
    s = text.lstrip("\ufeff \t\r\n")
    if s.startswith("{"):
        keys = ('"benchmarks"', '"latency_mode"', '"max_concurrency"')
        return "benchy-json" if all(k in s for k in keys) else None
    if s.startswith(_CSV_HEAD):
        return "benchy-csv"
    if _CONSOLE.search(text):
        return "benchy-log"  # the form of its results is known after reading
    return "benchy-md" if _MD_HEADER.search(text) else None


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read one llama-benchy file into the `llama_benchy` table."""
    path = Path(path)
    text = _ANSI.sub("", read_text(path))
    if _form(text) is None:
        raise IngestError(path, "line 1", "not llama-benchy output; expected its markdown table (a `| model | "
                          "test | t/s (total) | ... | e2e_ttft (ms) |` header), its --format json or csv output, or "
                          "its console output (starting `llama-benchy (VERSION)`)")
    res = IngestResult(path=str(path), format="benchy-log")
    segments = _Scanner(text, path, res).scan()
    rows, forms, notes = [], [], []
    for seg in segments:
        rows += _finish(seg, res, notes)
        forms += [seg.form] if seg.form else []
    res.format = forms[0] if forms else ("benchy-md" if any(s.header for s in segments) else "benchy-log")
    for row in rows:
        row.update(source_file=str(path), format=res.format)
    res.read = len(rows)
    if not rows:
        notes.append(f"no test rows: {_why_empty(segments)}")
    res.notes = list(dict.fromkeys(redact(n) for n in notes))
    res.tables["llama_benchy"] = conform(pd.DataFrame(rows, columns=columns("llama_benchy")), "llama_benchy")
    return res


# ---------------------------------------------------------------- scanning


@dataclass
class _Segment:
    """What one run of llama-benchy left in the file: up to its footer."""

    records: list = field(default_factory=list)  # dicts: line, model, test, values {name: (mean, sd)}
    form: str | None = None  # benchy-md, -json or -csv once results are seen
    header: list | None = None  # the markdown table's column names
    console: bool = False  # the start banner or progress lines are here
    version: str | None = None
    date: str | None = None
    latency_mode: str | None = None
    latency_s: float | None = None
    command: str | None = None
    args: dict | None = None  # the command's flags -> values
    tests: list = field(default_factory=list)  # (pp, tg, depth, concurrency) of `Running test:` lines
    levels: list = field(default_factory=list)  # `Concurrency levels: [...]`
    runs_seen: int | None = None  # N of `Run k/N`
    saved_to: str | None = None
    no_results: bool = False
    partial: bool = False
    stopped: str | None = None
    request_errors: list = field(default_factory=list)
    json_meta: dict | None = None  # the JSON report's metadata
    seven_columns: bool = False  # the concurrency-1 table: one t/s column, no per-request columns


class _Scanner:
    def __init__(self, text: str, path: Path, res: IngestResult):
        self.text, self.path, self.res = text, path, res
        self.lines = text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.segments = [_Segment()]
        self.csv_header: list | None = None

    @property
    def seg(self) -> _Segment:
        return self.segments[-1]

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def scan(self) -> list[_Segment]:
        i, n = 0, len(self.lines)
        while i < n:
            s = self.lines[i].strip().lstrip("\ufeff")
            if not s:
                self.csv_header = None
                i += 1
                continue
            if (m := _BANNER.match(s)) and i + 1 < n and (f := _FOOTER_DATE.match(self.lines[i + 1].strip())):
                self._footer(m.group(1), f)  # the footer closes the run above it
                i += 2
                continue
            if s.startswith("{") and (end := self._json(i)) is not None:
                i = end
                continue
            if s.startswith(_CSV_HEAD):
                self.csv_header = next(csv.reader([s]))
                self.seg.form = "benchy-csv"
                i += 1
                continue
            if self.csv_header is not None and not s.startswith(_OWN):
                self._csv_row(i + 1, s)
                i += 1
                continue
            if s.startswith("|"):
                self._md_line(i + 1, s)
            else:
                self._text(i + 1, s)
            i += 1
        return self.segments

    def _footer(self, version: str, m: re.Match) -> None:
        seg = self.seg
        seg.version, seg.date, seg.latency_mode = version, m.group(1), m.group(2)
        self.segments.append(_Segment())
        self.csv_header = None

    # --- text lines: progress lines (and the facts they carry), the command line, other text

    def _text(self, n: int, s: str) -> None:
        seg = self.seg
        if _COMMAND.search(s) and not s.startswith(_OWN):
            if seg.command is None:
                seg.command, seg.args = s, _args(s)
            self.res.ignore(OTHER)
            return
        if not s.startswith(_OWN):
            self.res.ignore(OTHER)
            return
        self.res.ignore(PROGRESS)
        for rx, take in _PROGRESS_FACTS:
            if m := rx.match(s):
                take(seg, m)
                break

    # --- markdown table

    def _md_line(self, n: int, s: str) -> None:
        seg = self.seg
        cells = [c.strip() for c in (s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]).split("|")]
        if len(cells) >= 2 and cells[:2] == ["model", "test"]:
            seg.header, seg.form = cells, "benchy-md"
            seg.seven_columns = "t/s" in cells and "t/s (req)" not in cells
            return
        if _MD_SEP.match(s):
            return
        if seg.header is None:
            self.res.ignore(redact(f"line {n}: table row before a llama-benchy table header"))
            return
        if len(cells) != len(seg.header):
            self.res.ignore(f"line {n}: table row has {len(cells)} cells, header has {len(seg.header)}")
            return
        values, bad = {}, None
        for name, cell in zip(seg.header[2:], cells[2:]):
            key = _MD_NAMES.get(name)
            if key is None:
                continue
            value = _cell(cell)
            if value is None:
                bad = f"line {n}: {name!r} is not a number `mean ± sd`: {cell!r}"
                break
            values[key] = value
        if bad:
            self.res.ignore(redact(bad))
            return
        seg.records.append({"line": n, "model": cells[0], "test": cells[1], "values": values})

    # --- CSV

    def _csv_row(self, n: int, s: str) -> None:
        header = self.csv_header
        cells = next(csv.reader([s]), [])
        if len(cells) != len(header):
            self.res.ignore(f"line {n}: CSV row has {len(cells)} values, header has {len(header)}")
            return
        rec = dict(zip(header, cells))
        values = {}
        for name, _, prefix, _ in _METRICS:
            mean, sd = rec.get(f"{prefix}_mean", ""), rec.get(f"{prefix}_std", "")
            pair = (_number(mean), _number(sd))
            if (mean and pair[0] is None) or (sd and pair[1] is None):
                self.res.ignore(redact(f"line {n}: {prefix}_mean/_std is not a number: {mean!r}, {sd!r}"))
                return
            if mean:
                values[name] = (pair[0], pair[1] if sd else math.nan)
        self.seg.records.append({"line": n, "model": rec.get("model", ""), "test": rec.get("test_name", ""),
                                 "values": values})

    # --- JSON (a --format json file, or the report printed to the console)

    def _json(self, i: int) -> int | None:
        """The line after the JSON report that starts at line i (0-based), or None when the
        text there is no report (then it is other text)."""
        seg, pos = self.seg, self.starts[i] + self.lines[i].index("{")
        expected = seg.form == "benchy-json" or not self.text[:pos].strip()
        try:
            doc, end = json.JSONDecoder().raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            if not expected:
                return None
            raise IngestError(self.path, f"line {exc.lineno}", f"broken JSON ({exc.msg}); expected the report "
                              "llama-benchy writes with --format json") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            if not expected:
                return None
            raise IngestError(self.path, f"line {i + 1}", "expected a JSON object with a `benchmarks` list "
                              "(llama-benchy --format json)")
        seg.form, seg.json_meta = "benchy-json", doc
        for k, (obj, at) in enumerate(zip(doc["benchmarks"], _element_offsets(self.text, pos, doc)), 1):
            self._json_entry(k, obj, self.line_of(at), doc)
        return self.line_of(end)  # (0-based index of the line after the one `end` is on)

    def _json_entry(self, k: int, obj, n: int, doc: dict) -> None:
        where = f"line {n}: benchmark {k}"
        if not isinstance(obj, dict):
            self.res.ignore(f"{where} is not an object")
            return
        ints = {}
        for key in ("concurrency", "context_size", "prompt_size", "response_size"):
            v = obj.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                self.res.ignore(redact(f"{where}: {key} is not a whole number: {v!r}"))
                return
            ints[key] = v
        ctx = bool(obj.get("is_context_prefill_phase"))
        max_c = doc.get("max_concurrency")
        c_suffix = f" (c{ints['concurrency']})" if isinstance(max_c, int) and max_c > 1 else ""
        d = ints["context_size"]
        d_suffix = f" @ d{d}" if ctx or d > 0 else ""
        rows, bad = [], False
        for kind, fields, has_row in (("pp", _JSON_PP, obj.get("pp_throughput")),
                                      ("tg", _JSON_TG, obj.get("tg_throughput") or obj.get("peak_throughput"))):
            if not has_row:
                continue
            values = _json_values(obj, fields)
            if isinstance(values, str):  # one bad metric: this row goes, the entry's other row stays
                self.res.ignore(redact(f"{where}: {values}"[:300]))
                bad = True
                continue
            size = ints["prompt_size"] if kind == "pp" else ints["response_size"]
            test = f"ctx_{kind}{d_suffix}{c_suffix}" if ctx else f"{kind}{size}{d_suffix}{c_suffix}"
            rows.append({"line": n, "model": str(doc.get("model") or ""), "test": test, "values": values,
                         "exact": (ints["prompt_size"], ints["response_size"], d, ints["concurrency"])})
        if not rows and bad:
            return
        if not rows:
            self.res.ignore(f"{where}: no pp or tg measurement (every request failed; llama-benchy prints no row)")
        self.seg.records += rows


def _set(**fixed):
    """A `_PROGRESS_FACTS` handler: set attributes of the segment, each from a group or a value
    (a callable takes the match)."""
    def take(seg: _Segment, m: re.Match) -> None:
        for key, value in fixed.items():
            setattr(seg, key, value(m) if callable(value) else value)
    return take


def _add(key: str, value):
    def take(seg: _Segment, m: re.Match) -> None:
        getattr(seg, key).append(value(m))
    return take


def _running(seg: _Segment, m: re.Match) -> None:
    seg.tests.append(tuple(int(g) for g in m.groups()))
    seg.console = True


def _printing(seg: _Segment, m: re.Match) -> None:
    seg.saved_to = m.group(1)
    seg.form = seg.form or f"benchy-{m.group(2).lower()}"


# progress lines that say something the table does not (`runner.py`, `client.py`, `__main__.py`)
_PROGRESS_FACTS = (
    (_BANNER, _set(version=lambda m: m.group(1), console=True)),
    (_START_DATE, _set(date=lambda m: m.group(1))),
    (_RUNNING, _running),
    (_RUN_K, _set(runs_seen=lambda m: int(m.group(1)))),
    (_LEVELS, _set(levels=lambda m: [int(v) for v in m.group(1).replace(" ", "").split(",") if v])),
    (_LATENCY, _set(latency_mode=lambda m: m.group(1), latency_s=lambda m: float(m.group(2)) / 1000)),
    (re.compile(r"^Skipping latency measurement"), _set(latency_mode="none", latency_s=0.0)),
    (_MEASURING, _set(latency_mode=lambda m: m.group(1))),
    (_PRINTING, _printing),
    (_STOPPED, _set(stopped=lambda m: f"{m.group(1)}: {m.group(2)}")),
    (_REQUEST_ERROR, _add("request_errors", lambda m: m.group(1))),
    (re.compile(re.escape(_NO_RESULTS) + "$"), _set(no_results=True)),
    (re.compile(re.escape(_PARTIAL) + "$"), _set(partial=True)),
)


def _json_values(obj: dict, fields: dict) -> dict | str:
    """{column: (mean, sd)} of one row from a test object's metrics, or what is wrong."""
    values = {}
    for name, key in fields.items():
        metric = obj.get(key)
        if metric is None:
            continue
        mean = metric.get("mean") if isinstance(metric, dict) else None
        sd = metric.get("std") if isinstance(metric, dict) else None
        if not _real(mean) or not (sd is None or _real(sd)):
            return f"{key} is not a metric {{mean, std}} of numbers: {metric!r}"
        values[name] = (float(mean), float(sd) if sd is not None else math.nan)
    return values


def _element_offsets(text: str, pos: int, doc: dict) -> list[int]:
    """Where each element of the report's `benchmarks` array starts (offsets into text)."""
    m = re.compile(r'"benchmarks"\s*:\s*\[').search(text, pos)
    out, decoder = [], json.JSONDecoder()
    at = m.end() if m else pos
    for _ in doc["benchmarks"]:
        at = re.compile(r"[\s,]*").match(text, at).end()
        out.append(at)
        try:
            _, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:  # pragma: no cover - the whole report decoded already
            break
    return out + [pos] * (len(doc["benchmarks"]) - len(out))


# ---------------------------------------------------------------- rows


def _finish(seg: _Segment, res: IngestResult, notes: list) -> list[dict]:
    """The table rows of one segment, with what the file says about their run."""
    if not seg.records:
        return []
    records = []
    for rec in seg.records:
        if m := _TEST.match(rec["test"]):
            records.append((rec, m))
        else:
            res.ignore(redact(f"line {rec['line']}: unparsable test name {rec['test']!r}"))
    if not records:
        return []
    mine: list = []
    common = _run_facts(seg, mine)
    rows = [_row(rec, m, size, seg, common) for (rec, m), size in zip(records, _run_sizes(seg, records, mine))]
    notes += mine + _segment_notes(seg, records)
    return rows


def _run_facts(seg: _Segment, notes: list) -> dict:
    """The columns every row of the segment shares: what its banner, footer, command line,
    progress lines or JSON metadata say."""
    meta = seg.json_meta or {}
    args = seg.args or {}
    version = seg.version or _str(meta.get("version"))
    if version is None and seg.command and (m := _PIN.search(seg.command)):
        version = m.group(1)
        notes.append(f"tool_version {version} from the command line's `llama-benchy=={version}`")
    runs = _int_arg(args, "--runs")
    if runs is not None:
        notes.append("runs from the command line's --runs")
    elif seg.runs_seen is not None:
        runs = seg.runs_seen
        notes.append("runs from the console's `Run k/N` lines")
    elif seg.args is not None:
        runs = _DEFAULT_RUNS
        notes.append(f"runs {_DEFAULT_RUNS}: llama-benchy's default (the command line gives no --runs)")
    latency_mode = seg.latency_mode or _str(meta.get("latency_mode")) or _str_arg(args, "--latency-mode")
    if latency_mode is None and seg.args is not None:
        latency_mode = _DEFAULT_LATENCY_MODE
        notes.append(f"latency_mode {_DEFAULT_LATENCY_MODE}: llama-benchy's default (the command line gives "
                     "no --latency-mode)")
    latency_s = seg.latency_s
    if latency_s is None and _real(meta.get("latency_ms")):
        latency_s = float(meta["latency_ms"]) / 1000
    return {"tool_version": version, "date": seg.date or _str(meta.get("timestamp")),
            "latency_mode": latency_mode, "latency_s": latency_s, "runs": runs,
            "command": redact(seg.command), "source_kind": "console" if seg.console else "results"}


def _row(rec: dict, m: re.Match, size: tuple, seg: _Segment, common: dict) -> dict:
    values = dict(rec["values"])
    if seg.seven_columns:  # one t/s and one peak column: the total and per-request values are one
        values.setdefault("tps_req", values.get("tps_total", (math.nan, math.nan)))
        values.setdefault("peak_tps_req", values.get("peak_tps", (math.nan, math.nan)))
    row = {"line": rec["line"], "model": redact(rec["model"]) or None, "test": rec["test"],
           "kind": m["kind"] or m["ctx"], "context_load": m["ctx"] is not None,
           "prompt_tokens": size[0], "gen_tokens": size[1], "depth": int(m["depth"] or 0),
           "concurrency": int(m["c"] or 1), **common}
    if "exact" in rec:  # the JSON says them
        row.update(zip(("prompt_tokens", "gen_tokens", "depth", "concurrency"), rec["exact"]))
    for name, _, _, ms in _METRICS:
        mean, sd = values.get(name, (math.nan, math.nan))
        if ms:
            row[f"{name}_s"], row[f"{name}_sd_s"] = mean / 1000, sd / 1000
        else:
            row[name], row[f"{name}_sd"] = mean, sd
    return row


def _segment_notes(seg: _Segment, records: list) -> list[str]:
    out = []
    if seg.seven_columns:
        out.append("tps_req and peak_tps_req are the table's t/s and peak t/s: every test ran at concurrency 1, "
                   "where llama-benchy prints one value for both")
    if not seg.json_meta and any(m["c"] is None for _, m in records):
        out.append("concurrency 1 where a test name has no `(cN)`: llama-benchy adds it only when a test of "
                   "the run had concurrency > 1")
    if seg.partial or seg.stopped:
        out.append("llama-benchy stopped early" + (f" on an error in {seg.stopped}" if seg.stopped else "")
                   + ": the table holds the tests finished before")
    if seg.request_errors:
        out.append(f"the console shows {len(seg.request_errors)} failed request(s) (first: "
                   f"{seg.request_errors[0][:120]}); llama-benchy leaves failed requests out of every value")
    return out


def _run_sizes(seg: _Segment, records: list, notes: list) -> list[tuple]:
    """(prompt_tokens, gen_tokens) of each row: the test's pp and tg. A row names one of them
    (a ctx row neither); the other comes from the run sequence the file states, where the row
    fits it, else from the adjacent row of the same run (pp row, then its tg row)."""
    out: list = [rec["exact"][:2] if "exact" in rec else None for rec, _ in records]
    todo = [k for k in range(len(records)) if out[k] is None]
    if not todo:
        return out
    expected, source = _expected(seg)
    at, fitted = 0, 0
    for k in todo:  # in order: each row fits the next test of the sequence that prints its name
        name = " ".join(records[k][0]["test"].split())
        j = next((j for j in range(at, len(expected)) if expected[j][0] == name), None)
        if j is not None:
            out[k], at, fitted = expected[j][1:], j + 1, fitted + 1
    left = [k for k in todo if out[k] is None]
    _by_adjacency(records, left, out)
    if fitted:
        notes.append(f"prompt_tokens of tg rows and gen_tokens of pp rows from {source}")
    if left:
        notes.append("prompt_tokens of tg rows and gen_tokens of pp rows from the adjacent pp/tg row of the same "
                     "depth and concurrency" + (f" for {len(left)} row(s) that do not fit {source}" if source else
                                                 " (the file states no run sequence: no `Running test:` lines or "
                                                 "command line)"))
    return out


def _by_adjacency(records: list, left: list[int], out: list) -> None:
    """Sizes of the rows `left` (indices) from their neighbours: `_generate_rows` prints a test's
    pp row, then its tg row; a context-load pair (ctx_pp, ctx_tg) comes before its test's."""
    for k in left:
        m = records[k][1]
        n = int(m["n"]) if m["n"] else None
        out[k] = (n, None) if m["kind"] == "pp" else (None, n) if m["kind"] == "tg" else (None, None)
    same = {k: (records[k][1]["depth"], records[k][1]["c"]) for k in left}
    for k, nxt in zip(left, left[1:]):
        if (nxt == k + 1 and records[k][1]["kind"] == "pp" and records[nxt][1]["kind"] == "tg"
                and same[k] == same[nxt]):
            out[k] = out[nxt] = (out[k][0], out[nxt][1])
    for k in left:
        if records[k][1]["ctx"] is None:
            continue
        for j in range(k + 1, min(k + 3, len(records))):
            if j not in same or same[j] != same[k]:
                break
            if records[j][1]["kind"] == "pp":
                out[k] = out[j]
                break


def _expected(seg: _Segment) -> tuple[list, str | None]:
    """The rows llama-benchy would print for the run sequence the file states, in order:
    (test name, pp, tg); and where that sequence comes from."""
    if seg.tests:
        tests, source = seg.tests, "the console's `Running test:` lines"
        levels = seg.levels or [c for *_, c in tests]
    elif seg.args is not None:
        lists = {k: _ints(seg.args.get(k)) or v for k, v in _DEFAULTS.items()}
        tests = [(pp, tg, d, c) for d in lists["--depth"] for pp in lists["--pp"] for tg in lists["--tg"]
                 for c in lists["--concurrency"]]
        source, levels = "the command line's --pp, --tg, --depth and --concurrency", lists["--concurrency"]
    else:
        return [], None
    cs = max(levels) > 1 if levels else False
    out = []
    for pp, tg, d, c in tests:  # runner.py: a context-load pass first with prefix caching and depth > 0
        c_suffix, d_suffix = f" (c{c})" if cs else "", f" @ d{d}" if d > 0 else ""
        if d > 0:
            out += [(f"ctx_pp @ d{d}{c_suffix}", pp, tg), (f"ctx_tg @ d{d}{c_suffix}", pp, tg)]
        out += [(f"pp{pp}{d_suffix}{c_suffix}", pp, tg), (f"tg{tg}{d_suffix}{c_suffix}", pp, tg)]
    return out, source


def _why_empty(segments: list[_Segment]) -> str:
    for seg in reversed(segments):
        if seg.saved_to:
            return f"llama-benchy wrote its results to {seg.saved_to} (--save-result); read that file"
        if seg.no_results:
            return f"llama-benchy printed `{_NO_RESULTS}` (no request produced a token)"
        if seg.stopped:
            return f"the run stopped on an error before a test finished ({seg.stopped})"
        if seg.json_meta is not None:
            return "the JSON report's `benchmarks` list has no test llama-benchy would print a row for"
        if seg.header is not None or seg.form == "benchy-csv":
            return "the file holds the table's header and no row; the run failed before its first test or was cut off"
    return "the console output ends before llama-benchy printed its results (cut off, or failed before its first test)"


# ---------------------------------------------------------------- values


def _cell(cell: str) -> tuple[float, float] | None:
    """(mean, sd) of a `mean ± sd` cell; NaNs for an empty cell; None when it is no number."""
    if not cell:
        return math.nan, math.nan
    m = _CELL.match(cell)
    if not m:
        return None
    mean, sd = _number(m.group(1)), _number(m.group(2)) if m.group(2) else math.nan
    return None if mean is None or sd is None else (mean, sd)


def _number(text: str) -> float | None:
    """A finite, non-negative number (every llama-benchy value is a rate, a time or an sd)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _str(value) -> str | None:
    return str(value) if value not in (None, "") else None


def _args(line: str) -> dict[str, list[str]]:
    """The flags after llama-benchy on a command line and their values (nargs='+': every value
    up to the next flag; `--runs=3` too)."""
    m = _COMMAND.search(line)
    try:
        tokens = shlex.split(line[m.end():])
    except ValueError:  # an unbalanced quote
        tokens = line[m.end():].split()
    out: dict[str, list[str]] = {}
    flag = None
    for tok in tokens:
        if tok.startswith("--"):
            flag, _, value = tok.partition("=")
            out[flag] = [value] if value else []
        elif flag is not None:
            out[flag].append(tok)
    return out


def _ints(values) -> list[int]:
    out = [int(v) for v in values or [] if re.fullmatch(r"\d+", v)]
    return out if values and len(out) == len(values) else []


def _int_arg(args: dict, flag: str) -> int | None:
    values = _ints(args.get(flag))
    return values[0] if len(values) == 1 else None


def _str_arg(args: dict, flag: str) -> str | None:
    values = args.get(flag) or []
    return values[0] if len(values) == 1 else None

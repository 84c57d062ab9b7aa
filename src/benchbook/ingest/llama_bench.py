"""Reader for llama.cpp `llama-bench` output: `-o json`, `-o jsonl`, `-o csv` and markdown.

One record is one test row, or one run that crashed. `read` counts the rows that reached
the `llama_bench` table; `ignored` counts test rows that were rejected (missing or absurd
values) and stray lines (device banners, `--progress` lines, a crash's own output, other
text), each with a reason. Structural lines (JSON brackets, the markdown header and
separator, the `build:` footer, blank lines) are not records. Fields are read by name,
because the field set changes between builds.

A run that crashed (stderr captured with 2>&1: `terminate called after throwing an instance
of ...` and its `what():`, `GGML_ASSERT(...) failed`, a backend's `CUDA error: ...`, or only
the shell's `Segmentation fault` / `Aborted (core dumped)`) gives one row with status
"failed", the error as one line, avg_ts NaN, the backend from the device banner and the
model and test from a printed `llama-bench ...` command line when it names one (else
empty). Rows printed before the crash are kept as they are; the failed rows come after
them. A file with such output and no table at all is the form `llama-bench-log`: it is
recognised when it also holds a device banner or the command line.

A file that holds llama-bench's header and no test row at all (a CSV header line, or the
markdown table's header: llama-bench prints it before the first test, so a run whose model
failed to load leaves just that) reads as 0 records, and the result says why (`empty`).

A build llama.cpp compiled without git prints as `unknown (0)` (cmake/build-info.cmake sets
BUILD_COMMIT "unknown" and BUILD_NUMBER 0 when git fails): the commit stays "unknown" and
the number is left empty, since 0 is no build number.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import columns, conform
from .textio import ANSI, read_text

FORMAT = "llama-bench"
FORMATS = ("llama-bench-json", "llama-bench-jsonl", "llama-bench-csv", "llama-bench-md", "llama-bench-log")
TABLES = ("llama_bench",)

BANNER = "banner/progress line"
CRASH = "crash output line (error text, backtrace)"
CUT = "test object cut off by the crash"
MAX_TS = 1e7  # tokens/s above this is not a measurement

# stderr lines that end up in the same file when a user captures 2>&1
_BANNER = re.compile(r"^\s*(?:ggml_\w+:|llama-bench:|load_backend:|register_backend:|Device \d+:)")
_MD_HEADER = re.compile(r"^\|\s*model\s*\|.*\|\s*t/s\s*\|\s*$", re.M)
_MD_SEP = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")
_FOOTER = re.compile(r"^build:\s*(\S+)\s*\((\d+)\)\s*$")
_TEST = re.compile(r"^(?:pp\s?(\d+))?(\+)?(?:tg\s?(\d+))?(?:\s*@\s*d(\d+))?$")
_TS_CELL = re.compile(r"^(\S+)\s*(?:±|\+/-)\s*(\S+)$")
_SIZE = re.compile(r"^([\d.]+)\s*(GiB|MiB|KiB|B)?$")
_COUNT = re.compile(r"^([\d.]+)\s*([BMK])?$")
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_WS = re.compile(r"\s*")
_SEP = re.compile(r"[\s,]*")
_UNITS = {None: 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_SCALE = {None: 1, "K": 10**3, "M": 10**6, "B": 10**9}

# markdown column names -> field names (`get_field_display_name` and its older versions)
_MD_FIELDS = {
    "model": "model_type", "size": "model_size", "params": "model_n_params", "backend": "backends",
    "ngl": "n_gpu_layers", "threads": "n_threads", "sm": "split_mode", "nkvo": "no_kv_offload",
    "fa": "flash_attn", "mmap": "use_mmap", "lm": "load_mode", "embd": "embeddings",
    "nopo": "no_op_offload", "noh": "no_host", "dev": "devices", "ts": "tensor_split",
    "ot": "tensor_buft_overrides", "fitt": "fit_target", "fitc": "fit_min_ctx", "mmq": "mul_mat_q",
}
# llama-bench defaults (normalised by _fmt); a parameter at its default is left out of `params`
_DEFAULTS = {
    "n_batch": "2048", "n_ubatch": "512", "type_k": "f16", "type_v": "f16", "cpu_mask": "0x0",
    "cpu_strict": "0", "poll": "50", "n_cpu_moe": "0", "split_mode": "layer", "main_gpu": "0",
    "no_kv_offload": "0", "devices": "auto", "tensor_split": "0", "tensor_buft_overrides": "none",
    "use_mmap": "1", "use_direct_io": "0", "load_mode": "mmap", "embeddings": "0",
    "no_op_offload": "0", "no_host": "0", "defrag_thold": "-1", "fit_target": "0",
    "fit_min_ctx": "0", "mul_mat_q": "1",
}
_UNKNOWN_DEFAULTS = {"", "0", "none", "auto"}  # for fields newer than this reader
# very old builds had one bool per backend instead of `backends`
_OLD_BACKENDS = {"cuda": "CUDA", "vulkan": "Vulkan", "metal": "Metal", "sycl": "SYCL",
                 "kompute": "Kompute", "opencl": "OpenCL", "blas": "BLAS"}
_NOT_PARAMS = {
    "build_commit", "build_number", "cpu_info", "gpu_info", "backends", "model_filename",
    "model_type", "model_size", "model_n_params", "n_gpu_layers", "flash_attn", "n_prompt",
    "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
    "samples_ns", "samples_ts", "gpu_blas", *_OLD_BACKENDS,
}


def sniff(head: str, path=None) -> bool:
    """True when the first bytes look like llama-bench JSON, JSONL, CSV or markdown."""
    return _form(head) is not None


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read one llama-bench output file into the `llama_bench` table."""
    path = Path(path)
    text = read_text(path)
    form = _form(text)
    if form is None:
        raise IngestError(path, "line 1", "not llama-bench output; expected its JSON, JSONL, "
                          "CSV or markdown table (a `| model | ... | t/s |` header)")
    crashes = _crashes(text)
    res = LlamaBenchResult(path=str(path), format=form, failures=[redact(run.error) for run in crashes])
    records = _READERS[form](text, path, res, bool(crashes)) + crashes  # failed runs after the rows
    prefix = run_prefix or _stem(path)
    rows = []
    for i, rec in enumerate(records):
        row = _failed_row(rec) if isinstance(rec, _Run) else _row(rec) if isinstance(rec, dict) else rec
        if isinstance(row, str):
            res.ignore(redact(row))  # reasons quote raw values
            continue
        row.update(run_id=f"{prefix}:{i}", source_file=str(path), format=form)
        rows.append(row)
    res.read = len(rows)
    if not records:
        res.empty = _EMPTY.get(form, f"the file holds no test row; {_CUT_SHORT}")
    res.tables["llama_bench"] = conform(pd.DataFrame(rows, columns=columns("llama_bench")), "llama_bench")
    return res


@dataclass
class LlamaBenchResult(IngestResult):
    """An IngestResult whose summary also says which runs crashed, and why."""

    failures: list = field(default_factory=list)
    empty: str | None = None  # why a file llama-bench wrote holds no test row

    def summary(self) -> str:
        empty = f"; no test rows: {self.empty}" if self.empty else ""
        return super().summary() + empty + "".join(f"; run failed: {error}" for error in self.failures)


_CUT_SHORT = "the run failed before its first test (a model that did not load) or was cut off"
_EMPTY = {
    "llama-bench-csv": f"the file holds the CSV header and no row; {_CUT_SHORT}",
    "llama-bench-md": f"the file holds the table header and no row; {_CUT_SHORT}",
}


# --- the four forms: each returns raw records (dicts by field name) or reasons (str) ---

def _json(text: str, path: Path, res: IngestResult, crashed: bool) -> list:
    kept = []
    for line in text.split("\n"):  # blank stray lines out so JSON line numbers stay right
        if reason := _stray(line):
            res.ignore(reason)
            line = ""
        kept.append(line)
    doc, pos, out = "\n".join(kept), 0, []
    decoder = json.JSONDecoder()
    while (pos := _WS.match(doc, pos).end()) < len(doc):  # appended runs: [..][..]
        try:
            value, pos = decoder.raw_decode(doc, pos)
        except json.JSONDecodeError as exc:
            if crashed and doc.startswith("[", pos):
                return out + _objects_before_crash(doc, pos + 1, res)
            raise IngestError(path, f"line {exc.lineno}", f"broken JSON ({exc.msg}); "
                              "expected the array written by llama-bench -o json") from exc
        if not isinstance(value, list):
            raise IngestError(path, f"line {doc.count(chr(10), 0, pos) + 1}",
                              "expected a JSON array of llama-bench test objects")
        out += [v if isinstance(v, dict) else "array element is not an object" for v in value]
    return out


def _objects_before_crash(doc: str, pos: int, res: IngestResult) -> list:
    """The whole test objects of an array that a crash cut off (from `pos`, after its `[`);
    the object the crash cut, or the crash's own text after them, is counted."""
    decoder, out = json.JSONDecoder(), []
    while (pos := _SEP.match(doc, pos).end()) < len(doc):
        try:
            value, pos = decoder.raw_decode(doc, pos)
        except json.JSONDecodeError:
            rest = [line for line in doc[pos:].split("\n") if line.strip()]
            res.ignore(CUT) if doc.startswith("{", pos) else res.ignore(CRASH, len(rest))
            break
        out.append(value if isinstance(value, dict) else "array element is not an object")
    return out


def _jsonl(text: str, path: Path, res: IngestResult, crashed: bool) -> list:
    lines, out = text.split("\n"), []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if reason := _stray(line):
            res.ignore(reason)
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines):  # last line without a newline: the run was cut off
                res.ignore("partial last line")
                continue
            if crashed:  # a line the crash cut, or more of its text
                res.ignore(CUT if line.lstrip().startswith("{") else CRASH)
                continue
            raise IngestError(path, f"line {n}", f"not valid JSON ({exc.msg}); expected one "
                              "llama-bench -o jsonl object per line") from exc
        out.append(obj if isinstance(obj, dict) else "line is not a JSON object")
    return out


def _csv(text: str, path: Path, res: IngestResult, crashed: bool) -> list:
    header, out = None, []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if reason := _stray(line):
            res.ignore(reason)
            continue
        values = next(csv.reader([line]))
        if "build_commit" in values and "avg_ts" in values:  # header (again, if runs were appended)
            header = values
        elif crashed and not line.lstrip().startswith('"'):  # llama-bench quotes every value
            res.ignore(CRASH)
        elif header is None or len(values) != len(header):
            out.append(f"CSV line has {len(values)} values, header has {len(header or [])}")
        else:
            out.append(dict(zip(header, values)))
    return out


def _md(text: str, path: Path, res: IngestResult, crashed: bool) -> list:
    header, out, pending = None, [], []
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        if m := _FOOTER.match(s):  # the build footer closes the table above it
            for rec in pending:
                rec.update(build_commit=m.group(1), build_number=m.group(2))
            pending = []
            continue
        if not s.startswith("|"):
            res.ignore(_stray(line) or "non-table line")
            continue
        cells = [c.strip() for c in (s[1:-1] if s.endswith("|") and len(s) > 1 else s[1:]).split("|")]
        if cells[0] == "model":
            header = [_MD_FIELDS.get(c, c) for c in cells]
        elif _MD_SEP.match(s):
            continue
        elif header is None or len(cells) != len(header):
            out.append(f"table row has {len(cells)} cells, header has {len(header or [])}")
        else:
            rec = _md_record(dict(zip(header, cells)))
            out.append(rec)
            if isinstance(rec, dict):
                pending.append(rec)
    return out


def _md_record(rec: dict) -> dict | str:
    """Turn markdown display cells into the fields the JSON form has."""
    test = rec.pop("test", "")
    m = _TEST.match(test)
    if not m or not (m.group(1) or m.group(3)):
        return f"unparsable test name {test!r}"
    rec.update(n_prompt=int(m.group(1) or 0), n_gen=int(m.group(3) or 0), n_depth=int(m.group(4) or 0))
    ts = rec.pop("t/s", "")
    if t := _TS_CELL.match(ts):
        rec.update(avg_ts=t.group(1), stddev_ts=t.group(2))
    else:
        rec["avg_ts"] = ts or None
    if "model_size" in rec:
        s = _SIZE.match(rec["model_size"])
        rec["model_size"] = round(float(s.group(1)) * _UNITS[s.group(2)]) if s else None
    if "model_n_params" in rec:
        c = _COUNT.match(rec["model_n_params"])
        rec["model_n_params"] = round(float(c.group(1)) * _SCALE[c.group(2)]) if c else None
    return rec


_READERS = {"llama-bench-json": _json, "llama-bench-jsonl": _jsonl,
            "llama-bench-csv": _csv, "llama-bench-md": _md, "llama-bench-log": _md}


# --- runs that crashed ---

_ANSI = re.compile(ANSI)
_CRASH_HINT = re.compile(r"terminate called|what\(\)|GGML_ASSERT|error: |Segmentation fault|Aborted|"
                         r"Illegal instruction|Bus error|Killed|Floating point exception")
# what a crash prints as its cause: libstdc++, ggml_abort, the backends' error macros, llama-bench
_CAUSES = (
    re.compile(r"terminate called after throwing an instance of .+"),
    re.compile(r"what\(\):\s*\S.*"),
    re.compile(r"(?:\S*?(?P<site>[\w.+-]+:\d+): )?(?P<msg>GGML_ASSERT\(.*\) failed)"),
    re.compile(r"(?:CUDA|ROCm|HIP|MUSA|SYCL|CANN|Vulkan|Metal|OpenCL) error: \S.*"),
    re.compile(r"(?:\w+: )?error: failed to load model.*"),
)
# the shell's word for the signal, maybe after `script: line N: PID `, maybe `(core dumped)`
_SIGNAL = re.compile(r"(?:\S+: line \d+: +\d+ +)?(Segmentation fault|Aborted|Illegal instruction|Bus error|"
                     r"Killed|Floating point exception)(?:\s+(\(core dumped\)))?(?:\s|$)")
_TRACE = re.compile(  # backtrace lines: gdb, glibc's backtrace_symbols, a backend's error context
    r"#\d+\s+0x[0-9a-fA-F]+|0x[0-9a-fA-F]+ in |\S+\(\S*\)\s*\[0x[0-9a-fA-F]+\]|\[(?:New LWP|New Thread|"
    r"Inferior \d+|Thread debugging)|ptrace: |No stack\.|The program is not being run\.|"
    r"Using host libthread_db|warning: process \d+ is already traced|current device: \d+, in function")
# a printed command line: maybe after a prompt (`user@host:~$ `, `+ `), variables, sudo or time
_COMMAND = re.compile(r"^(?:.*?[$#>]\s+|\+\s+)?(?:\w+=\S*\s+|sudo\s+|time\s+)*(?:\S*[/\\])?"
                      r"llama-bench(?:\.exe)?(\s.*)?$")
_FOUND = re.compile(r"found \d+ (\w+) devices", re.I)  # ggml_cuda_init: found 1 ROCm devices
_LOADED = re.compile(r"^(?:load_backend: loaded|register_backend: registered backend) (\w+)")
_GGML = re.compile(r"^ggml_(vulkan|cuda|hip|metal|sycl|opencl|cann|musa)")
_DEVICE_BANNER = re.compile(r"^(?:ggml_\w+|load_backend|register_backend|llama-bench):")
_BACKENDS = {"vulkan": "Vulkan", "cuda": "CUDA", "rocm": "ROCm", "hip": "ROCm", "metal": "Metal",
             "sycl": "SYCL", "opencl": "OpenCL", "cann": "CANN", "musa": "MUSA", "blas": "BLAS",
             "rpc": "RPC", "cpu": "CPU"}
_TEST_FLAGS = {"-p": "n_prompt", "--n-prompt": "n_prompt", "-n": "n_gen", "--n-gen": "n_gen",
               "-pg": "pg", "-d": "n_depth", "--n-depth": "n_depth", "-m": "model", "--model": "model"}


@dataclass
class _Run:
    """One llama-bench run's stderr as far as a crash needs it."""

    args: dict = field(default_factory=dict)  # flag -> [values], from the printed command line
    tool: bool = False  # a device banner or the command line was seen
    found: list = field(default_factory=list)  # backends that found devices or were loaded
    prefixed: list = field(default_factory=list)  # backends only named by a ggml_<name>: prefix
    build: tuple | None = None
    causes: list = field(default_factory=list)
    signal: str | None = None

    def note(self, line: str) -> None:
        if _DEVICE_BANNER.match(line):
            self.tool = True
        for rx, names in ((_FOUND, self.found), (_LOADED, self.found), (_GGML, self.prefixed)):
            m = rx.search(line)
            name = _BACKENDS.get(m.group(1).lower()) if m else None
            if name and name not in names:
                names.append(name)
        if m := _FOOTER.match(line):
            self.build = m.groups()

    @property
    def backend(self) -> str | None:
        """GPU backends as llama-bench joins them (CPU only when nothing else ran)."""
        names = self.found or self.prefixed
        return ",".join([n for n in names if n != "CPU"] or names) or None

    @property
    def error(self) -> str:
        return " — ".join(self.causes) or self.signal


def _cause(line: str) -> str | None:
    """The crash message a line holds, on one line with single spaces, or None."""
    for rx in _CAUSES:
        if m := rx.match(line):
            text = m.group(0) if "msg" not in rx.groupindex else f"{m['site'] or ''}: {m['msg']}".lstrip(": ")
            return " ".join(text.split())
    return None


def _crashes(text: str) -> list[_Run]:
    """The runs of `text` that crashed. A run starts at a printed command line, or at a
    device banner after a crash (appended runs)."""
    if not _CRASH_HINT.search(text):
        return []
    runs = [_Run()]
    for raw in text.split("\n"):
        line = _ANSI.sub("", raw).strip()
        run = runs[-1]
        if m := _COMMAND.match(line):
            runs.append(_Run(args=_args(m.group(1) or ""), tool=True))
            continue
        if run.error and (_FOUND.search(line) or _LOADED.match(line)):
            run = _Run()
            runs.append(run)
        run.note(line)
        if cause := _cause(line):
            if cause not in run.causes:
                run.causes.append(cause)
        elif (m := _SIGNAL.match(line)) and run.signal is None:
            run.signal = " ".join(g for g in m.groups() if g)
    return [r for r in runs if r.error]


def _crash_line(line: str) -> bool:
    line = _ANSI.sub("", line).strip()
    return bool(_cause(line) or _SIGNAL.match(line) or _TRACE.match(line))


def _args(text: str) -> dict[str, list[str]]:
    """A command line's flags and their values (`-p 512,1024 -p 2048` -> -p: three values)."""
    try:
        tokens = shlex.split(text)
    except ValueError:  # an unbalanced quote
        tokens = text.split()
    out: dict[str, list[str]] = {}
    for i, tok in enumerate(tokens):
        if not tok.startswith("-") or re.fullmatch(r"-\d.*", tok):
            continue
        value = tokens[i + 1] if i + 1 < len(tokens) and not re.fullmatch(r"-[^\d].*", tokens[i + 1]) else ""
        values = [value] if tok == "-pg" else value.split(",")  # -pg 4096,128 is one pair
        out.setdefault(tok, []).extend(v for v in values if v)
    return out


def _failed_row(run: _Run) -> dict:
    """The row of a run that crashed: what its stderr and command line say, no rate."""
    args = {_TEST_FLAGS.get(k, k.lstrip("-")): v for k, v in run.args.items()}
    model = args.pop("model", [])
    test = _only_test(args)
    n_prompt, n_gen, n_depth = test or (None, None, None)
    return {
        "status": "failed", "error": redact(run.error), "backend": run.backend,
        "build_commit": run.build[0] if run.build else None,
        "build_number": _build_number(run.build[1]) if run.build else None,
        "model_filename": redact(model[0]) if len(model) == 1 else None,
        "params": redact(";".join(f"{k}={','.join(v)}" if v else k for k, v in args.items()) or None),
        "test": _test(n_prompt, n_gen) if test else None,
        "n_prompt": n_prompt, "n_gen": n_gen, "n_depth": n_depth, "avg_ts": math.nan,
    }


def _only_test(args: dict) -> tuple[int, int, int] | None:
    """(n_prompt, n_gen, n_depth) when the command line runs exactly one test; llama-bench's
    defaults differ between builds, so -p and -n must both be given."""
    if "n_prompt" not in args or "n_gen" not in args:
        return None
    values = {k: [_int(v) for v in args.get(k, [])] for k in ("n_prompt", "n_gen", "n_depth")}
    pairs = [v.split(",") for v in args.get("pg", [])]
    if None in sum(values.values(), []) or len(values["n_depth"]) > 1:
        return None
    tests = ([(p, 0) for p in values["n_prompt"] if p > 0] + [(0, g) for g in values["n_gen"] if g > 0]
             + [tuple(map(_int, pg)) for pg in pairs])
    depth = values["n_depth"][0] if values["n_depth"] else 0
    return (*tests[0], depth) if len(tests) == 1 and None not in tests[0] else None


def _test(n_prompt: int, n_gen: int) -> str:
    return "pp+tg" if n_prompt and n_gen else ("pp" if n_prompt else "tg")


# --- shared ---

def _form(text: str) -> str | None:
    """Which llama-bench form the text is, judged from its first line that is not a banner,
    the command line or a crash's; `llama-bench-log` for a crash's output with no table."""
    for line in text.splitlines():
        s = line.strip()
        if not s or _BANNER.match(line) or _COMMAND.match(s) or _crash_line(s):
            continue
        if s.startswith("["):
            return "llama-bench-json" if _has_keys(text) else None
        if s.startswith("{"):
            return "llama-bench-jsonl" if _has_keys(s) else None
        if not s.startswith("|"):
            fields = [f.strip().strip('"') for f in s.split(",")]
            if "build_commit" in fields and "avg_ts" in fields:
                return "llama-bench-csv"
        break
    if _MD_HEADER.search(text):
        return "llama-bench-md"
    return "llama-bench-log" if any(run.tool for run in _crashes(text)) else None


def _stray(line: str) -> str | None:
    """Why a line outside the results is there: a banner, or a crash's output."""
    return BANNER if _BANNER.match(line) else CRASH if _crash_line(line) else None


def _has_keys(text: str) -> bool:
    return '"build_commit"' in text and '"avg_ts"' in text


def _row(rec: dict) -> dict | str:
    """One table row from a record keyed by llama-bench field names, or why it is ignored."""
    n_prompt, n_gen = _int(rec.get("n_prompt")), _int(rec.get("n_gen"))
    if n_prompt is None or n_gen is None:
        return "missing n_prompt/n_gen"
    if n_prompt < 0 or n_gen < 0 or n_prompt + n_gen == 0:
        return f"no test: n_prompt={n_prompt}, n_gen={n_gen}"
    raw = rec.get("avg_ts")
    if raw is None or raw == "":
        return "missing avg_ts"
    avg = _float(raw)
    if avg is None or math.isnan(avg):
        return f"avg_ts is not a number: {raw!r}"
    if not 0 <= avg <= MAX_TS:
        return f"avg_ts out of range: {raw!r}"
    backend = rec.get("backends") or next(
        (name for flag, name in _OLD_BACKENDS.items() if _fmt(rec.get(flag)) == "1"), None)
    samples = rec.get("samples_ts")
    return {
        "backend": backend,
        "build_commit": rec.get("build_commit"),
        "build_number": _build_number(rec.get("build_number")),
        "model": redact(rec.get("model_type")),
        "model_filename": redact(rec.get("model_filename")),  # a path: may name hosts
        "model_size_bytes": _int(rec.get("model_size")),
        "model_n_params": _int(rec.get("model_n_params")),
        "n_gpu_layers": _int(rec.get("n_gpu_layers")),
        "flash_attn": _int(rec.get("flash_attn")),
        "params": redact(_params(rec)),  # unknown fields are free text
        "test": _test(n_prompt, n_gen),
        "n_prompt": n_prompt,
        "n_gen": n_gen,
        "n_depth": _int(rec.get("n_depth", 0)),
        "avg_ts": avg,
        "stddev_ts": _float(rec.get("stddev_ts")),
        "n_samples": len(samples) if isinstance(samples, list) else None,
        "test_time": rec.get("test_time"),
        "status": "ok",
    }


def _params(rec: dict) -> str | None:
    """Non-default run parameters as a sorted `k=v;k=v` string."""
    out = []
    for key in sorted(set(rec) - _NOT_PARAMS):
        value = rec[key]
        if isinstance(value, (list, dict)) or value is None:
            continue
        text = _fmt(value)
        if key == "tensor_split" and all(_float(p) == 0 for p in text.split("/")):
            continue
        if text == _DEFAULTS.get(key) or (key not in _DEFAULTS and key != "n_threads"
                                           and text.lower() in _UNKNOWN_DEFAULTS):
            continue
        out.append(f"{key}={text}")
    return ";".join(out) or None


def _fmt(value) -> str:
    """A value as llama-bench's CSV would print it: bools 1/0, floats without trailing zeros."""
    if isinstance(value, bool):
        return "1" if value else "0"
    text = str(value).strip()
    if text.lower() in ("true", "false"):
        return "1" if text.lower() == "true" else "0"
    if _NUMBER.match(text):
        number = float(text)
        return str(int(number)) if number.is_integer() else f"{number:g}"
    return text


def _int(value) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    text = _fmt(value) if value is not None else ""
    return int(text) if re.fullmatch(r"[-+]?\d+", text) else None


def _build_number(value) -> int | None:
    """llama.cpp's build number; 0 is what a build without git prints (`unknown (0)`), not a build."""
    number = _int(value)
    return None if number == 0 else number


def _float(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _stem(path: Path) -> str:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return Path(name).stem


def test_name(row) -> str:
    """llama-bench's own test label: pp512, tg128, pp512+tg128, with @ d<depth>; empty for
    a failed run whose test is unknown."""
    parts = []
    if pd.notna(row["n_prompt"]) and row["n_prompt"] > 0:
        parts.append(f"pp{int(row['n_prompt'])}")
    if pd.notna(row["n_gen"]) and row["n_gen"] > 0:
        parts.append(f"tg{int(row['n_gen'])}")
    name = "+".join(parts)
    depth = row.get("n_depth")
    if pd.notna(depth) and depth > 0:
        name += f" @ d{int(depth)}"
    return name

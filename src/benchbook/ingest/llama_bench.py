"""Reader for llama.cpp `llama-bench` output: `-o json`, `-o jsonl`, `-o csv` and markdown.

One record is one test row. `read` counts the test rows that reached the `llama_bench`
table; `ignored` counts test rows that were rejected (missing or absurd values) and stray
lines (device banners, `--progress` lines, other text), each with a reason. Structural
lines (JSON brackets, the markdown header and separator, the `build:` footer, blank lines)
are not records. Fields are read by name, because the field set changes between builds.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pandas as pd

from ..redact import redact
from ..tables import columns, conform
from .errors import IngestError
from .result import IngestResult
from .textio import read_text

FORMAT = "llama-bench"
FORMATS = ("llama-bench-json", "llama-bench-jsonl", "llama-bench-csv", "llama-bench-md")
TABLES = ("llama_bench",)

BANNER = "banner/progress line"
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
    res = IngestResult(path=str(path), format=form)
    records = _READERS[form](text, path, res)
    prefix = run_prefix or _stem(path)
    rows = []
    for i, rec in enumerate(records):
        row = rec if isinstance(rec, str) else _row(rec)
        if isinstance(row, str):
            res.ignore(redact(row))  # reasons quote raw values
            continue
        row.update(run_id=f"{prefix}:{i}", source_file=str(path), format=form)
        rows.append(row)
    res.read = len(rows)
    res.tables["llama_bench"] = conform(pd.DataFrame(rows, columns=columns("llama_bench")), "llama_bench")
    return res


# --- the four forms: each returns raw records (dicts by field name) or reasons (str) ---

def _json(text: str, path: Path, res: IngestResult) -> list:
    kept = []
    for line in text.split("\n"):  # blank banners out so JSON line numbers stay right
        if _BANNER.match(line):
            res.ignore(BANNER)
            line = ""
        kept.append(line)
    doc, pos, out = "\n".join(kept), 0, []
    decoder = json.JSONDecoder()
    while (pos := _WS.match(doc, pos).end()) < len(doc):  # appended runs: [..][..]
        try:
            value, pos = decoder.raw_decode(doc, pos)
        except json.JSONDecodeError as exc:
            raise IngestError(path, f"line {exc.lineno}", f"broken JSON ({exc.msg}); "
                              "expected the array written by llama-bench -o json") from exc
        if not isinstance(value, list):
            raise IngestError(path, f"line {doc.count(chr(10), 0, pos) + 1}",
                              "expected a JSON array of llama-bench test objects")
        out += [v if isinstance(v, dict) else "array element is not an object" for v in value]
    return out


def _jsonl(text: str, path: Path, res: IngestResult) -> list:
    lines, out = text.split("\n"), []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if _BANNER.match(line):
            res.ignore(BANNER)
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines):  # last line without a newline: the run was cut off
                res.ignore("partial last line")
                continue
            raise IngestError(path, f"line {n}", f"not valid JSON ({exc.msg}); expected one "
                              "llama-bench -o jsonl object per line") from exc
        out.append(obj if isinstance(obj, dict) else "line is not a JSON object")
    return out


def _csv(text: str, path: Path, res: IngestResult) -> list:
    header, out = None, []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if _BANNER.match(line):
            res.ignore(BANNER)
            continue
        values = next(csv.reader([line]))
        if "build_commit" in values and "avg_ts" in values:  # header (again, if runs were appended)
            header = values
        elif header is None or len(values) != len(header):
            out.append(f"CSV line has {len(values)} values, header has {len(header or [])}")
        else:
            out.append(dict(zip(header, values)))
    return out


def _md(text: str, path: Path, res: IngestResult) -> list:
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
            res.ignore(BANNER if _BANNER.match(line) else "non-table line")
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
            "llama-bench-csv": _csv, "llama-bench-md": _md}


# --- shared ---

def _form(text: str) -> str | None:
    """Which llama-bench form the text is, judged from its first non-banner line."""
    for line in text.splitlines():
        s = line.strip()
        if not s or _BANNER.match(line):
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
    return "llama-bench-md" if _MD_HEADER.search(text) else None


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
        "build_number": _int(rec.get("build_number")),
        "model": redact(rec.get("model_type")),
        "model_filename": redact(rec.get("model_filename")),  # a path: may name hosts
        "model_size_bytes": _int(rec.get("model_size")),
        "model_n_params": _int(rec.get("model_n_params")),
        "n_gpu_layers": _int(rec.get("n_gpu_layers")),
        "flash_attn": _int(rec.get("flash_attn")),
        "params": redact(_params(rec)),  # unknown fields are free text
        "test": "pp+tg" if n_prompt and n_gen else ("pp" if n_prompt else "tg"),
        "n_prompt": n_prompt,
        "n_gen": n_gen,
        "n_depth": _int(rec.get("n_depth", 0)),
        "avg_ts": avg,
        "stddev_ts": _float(rec.get("stddev_ts")),
        "n_samples": len(samples) if isinstance(samples, list) else None,
        "test_time": rec.get("test_time"),
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

"""Readers for native benchmark formats, with format detection.

Each reader module exposes ``FORMAT`` (a name), ``TABLES`` (tables it can yield),
``sniff(head: str, path: Path) -> bool`` and ``read(path, run_prefix=None) -> IngestResult``.
`detect` asks each reader in turn to recognise the file's first bytes.

`read` is the one way in (the CLI and `load` use it), so it also holds the guarantees every
reader gets for free: an empty file, undecodable bytes, a damaged gzip stream or a reader
bug become an IngestError naming the file, never a bare traceback; and every text column
and skip reason passes through `benchbook.ingest.redact`, so a reader that forgets cannot leak.
"""

from __future__ import annotations

import gzip
from collections import Counter
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from .errors import IngestError
from .redact import has_secret, redact
from .result import IngestResult
from .tables import categorical
from .textio import GZIP_ERRORS, read_bytes, read_head

# Order matters: more specific sniffers first.
_READER_MODULES = ("vllm_bench", "bench_spark", "llama_benchy", "llama_bench", "prometheus", "nvidia_smi",
                   "power_series", "tool_calls", "vllm_log", "gauntlet")


def readers() -> dict[str, ModuleType]:
    """Reader modules by format name."""
    out = {}
    for name in _READER_MODULES:
        mod = import_module(f"{__name__}.{name}")
        for fmt in getattr(mod, "FORMATS", (mod.FORMAT,)):
            out[fmt] = mod
    return out


def detect(path: str | Path) -> ModuleType:
    """The reader that recognises this file, or an error listing the known formats."""
    path = Path(path)
    if not path.is_file():
        raise IngestError(path, None, "file not found")
    raw = read_head(path, 8192)
    if not raw.strip():
        raise IngestError(path, None, "file is empty; expected a benchmark result or log")
    utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))  # e.g. PowerShell's `>`
    head = raw.decode("utf-16" if utf16 else "utf-8", errors="replace").lstrip("\ufeff")
    seen = set()
    for mod in readers().values():
        if mod in seen:
            continue
        seen.add(mod)
        if mod.sniff(head, path):
            return mod
    known = ", ".join(sorted(readers()))
    if m := import_module(f"{__name__}.vllm_log").BENCH_CONSOLE.search(head):
        raise IngestError(path, f"line {head.count(chr(10), 0, m.start()) + 1}",
                          "the console output of `vllm bench serve`, not a server log: its numbers are in "
                          "the result JSON it saves with --save-result; give that file")
    if not utf16:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(raw) - 4:  # not just a character cut by the 8 KiB head
                raise IngestError(path, f"byte {exc.start}", f"not UTF-8 text ({exc.reason}); expected a "
                                  f"text file of one of: {known}") from None
    raise IngestError(path, "line 1", f"unrecognised format; expected one of: {known}")


def read(path: str | Path, *, fmt: str | None = None, run_prefix: str | None = None) -> IngestResult:
    """Read one raw file into tidy tables, detecting its format unless `fmt` is given."""
    _must_be_file(path)
    if fmt is not None:
        try:
            mod = readers()[fmt]
        except KeyError:
            raise IngestError(path, None, f"unknown format {fmt!r}; known: {', '.join(sorted(readers()))}")
    else:
        mod = detect(path)
    path = Path(path)
    if fmt is not None and not read_head(path, 8192).strip():
        raise IngestError(path, None, f"file is empty; expected {fmt} data")
    with _reader_errors(path, mod):
        result = mod.read(path, run_prefix=run_prefix)
    return _redacted(result)


def _must_be_file(path: str | Path) -> None:
    if not Path(path).is_file():
        raise IngestError(path, None, "is a folder; expected a file" if Path(path).is_dir() else "file not found")


@contextmanager
def _reader_errors(path: Path, mod: ModuleType):
    """Whatever goes wrong inside a reader comes out as an IngestError naming the file."""
    try:
        yield
    except IngestError:
        raise
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"byte {_first_bad_byte(path, exc)}",
                          f"not UTF-8 text ({exc.reason}); expected a UTF-8 text file") from exc
    except GZIP_ERRORS as exc:
        if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) and exc.errno is not None:
            raise IngestError(path, None, f"cannot read file: {exc}") from exc
        raise IngestError(path, None, f"corrupt or truncated gzip stream ({exc})") from exc
    except Exception as exc:  # a reader bug must still name the file, not print a traceback
        raise IngestError(path, None, f"the {getattr(mod, 'FORMAT', mod.__name__)} reader failed unexpectedly "
                          f"({type(exc).__name__}: {exc}); this is a bug in benchbook: please report it "
                          "with this file") from exc


class Batches:
    """A raw file's tables in batches, for files too big to hold as tables: a reader that
    can stream (the vLLM server log) gives batches of about `batch_rows` rows; any other
    gives its tables as one batch. Each batch is redacted like `read`'s tables. After the
    loop, `result` holds the counts and reasons for the whole file (and no tables).

    `tables` (default: all) names the tables wanted: a streaming reader parses only the
    lines they need; any other reader's batch holds only those of them it has."""

    def __init__(self, path: str | Path, *, fmt: str | None = None, batch_rows: int = 100_000,
                 tables=None):
        self.path, self.fmt, self.batch_rows = Path(path), fmt, batch_rows
        self.tables = None if tables is None else tuple(tables)
        self.result: IngestResult | None = None

    def __iter__(self):
        _must_be_file(self.path)
        mod = detect(self.path) if self.fmt is None else readers().get(self.fmt)
        if mod is None or not hasattr(mod, "LogStream"):  # (read names an unknown format)
            res = read(self.path, fmt=self.fmt)
            tables, res.tables = res.tables, {}
            self._check_wanted(list(tables))
            self.result = res
            yield {k: v for k, v in tables.items() if self.tables is None or k in self.tables}
            return
        self._check_wanted(list(mod.TABLES))
        wanted = None if self.tables is None else [t for t in self.tables if t in mod.TABLES]
        stream = mod.LogStream(self.path, batch_rows=self.batch_rows, tables=wanted)
        batches = iter(stream)
        while True:
            with _reader_errors(self.path, mod):
                tables = next(batches, None)
            if tables is None:
                break
            yield _redacted(IngestResult(path=str(self.path), format=mod.FORMAT, tables=tables)).tables
        self.result = _redacted(stream.result)

    def _check_wanted(self, has: list[str]) -> None:
        """An error when tables were named and the file has none of them."""
        if self.tables is not None and not set(self.tables) & set(has):
            raise IngestError(self.path, None, f"has no table {' or '.join(map(repr, self.tables))}; it "
                              f"yields: {', '.join(has)}")


# Identity columns are left alone: they join tables and name files, and hold no free text.
_NOT_REDACTED = {"run_id", "source_file", "format"}


def _redacted(result: IngestResult) -> IngestResult:
    """Every text cell and skip reason through `redact` (unique values only: cheap)."""

    for name, df in result.tables.items():
        for col, values in list(df.items()):  # each column looked up once (a wide runs table has 60)
            if col in _NOT_REDACTED:
                continue
            if isinstance(values.dtype, pd.CategoricalDtype):  # text stored once: redact the categories
                redacted = _redacted_categories(values)
                if redacted is not None:
                    df = df.copy() if df is result.tables[name] else df
                    df[col] = redacted
                continue
            if getattr(values.dtype, "kind", "O") != "O":  # object or string columns only: numbers,
                continue  # times and flags hold no text (a `dtype == object` test parses dtype names)
            unique = np.asarray(values.dropna().unique(), dtype=object)  # (no pandas call per value)
            text = [v for v in unique.tolist() if isinstance(v, str)]
            if not text or not has_secret("\n".join(text)):
                continue
            changed = {v: r for v in text if (r := redact(v)) != v}
            if changed:
                mask = values.isin(list(changed))
                df = df.copy() if df is result.tables[name] else df
                df.loc[mask, col] = df.loc[mask, col].map(changed)
        result.tables[name] = df
    if any(redact(r) != r for r in result.reasons):
        reasons = Counter()
        for reason, n in result.reasons.items():
            reasons[redact(reason)] += n
        result.reasons = reasons
    result.notes = [redact(note) for note in result.notes]
    return result


def _redacted_categories(values: pd.Series) -> pd.Categorical | None:
    """A categorical column with its text categories redacted (two categories may become
    one), or None when none holds a secret."""

    cats = values.cat.categories
    text = [c for c in cats if isinstance(c, str)]
    if not text or not has_secret("\n".join(text)):
        return None
    return categorical(values.cat.codes.to_numpy(), [redact(c) if isinstance(c, str) else c for c in cats])


def _first_bad_byte(path: Path, exc: UnicodeDecodeError) -> int:
    """Offset of the first undecodable byte in the whole (decompressed) file.

    A reader that decodes in chunks reports an offset within its chunk; recount from the start.
    """
    try:
        raw = read_bytes(path)
        bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        raw[bom:].decode("utf-8")
    except UnicodeDecodeError as full:
        return full.start + bom
    except IngestError:
        pass
    return exc.start


__all__ = ["IngestError", "IngestResult", "detect", "read", "readers"]

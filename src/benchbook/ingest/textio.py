"""Open raw files the way users have them: plain or gzip, UTF-8 with or without BOM."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

import yaml

from .errors import IngestError

GZIP_MAGIC = b"\x1f\x8b"
# an ANSI escape sequence: colour codes a tool printed on a terminal that a log kept (vLLM's
# and llama.cpp's); every reader strips them with this pattern (`.encode()` for bytes)
ANSI = r"\x1b\[[0-9;]*[A-Za-z]"
# what a damaged or cut-off gzip stream raises (zlib.error is not an OSError)
GZIP_ERRORS = (OSError, EOFError, zlib.error)


def read_head(path: str | Path, n: int = 4096) -> bytes:
    """The first bytes of a file's content, decompressing gzip transparently."""
    with open(path, "rb") as fh:
        raw = fh.read(2)
        fh.seek(0)
        if raw == GZIP_MAGIC:
            try:
                with gzip.open(fh) as gz:
                    return gz.read(n)
            except GZIP_ERRORS as exc:
                raise IngestError(path, None, f"corrupt gzip stream ({exc})") from exc
        return fh.read(n)


def open_text(path: str | Path) -> io.TextIOBase:
    """A text stream over a plain or gzip file; UTF-8 (a BOM is dropped), UTF-16 by BOM."""
    path = Path(path)
    head = read_head(path, 4)
    if head.startswith(GZIP_MAGIC):  # pragma: no cover - double-compressed, unusual
        raise IngestError(path, None, "file is gzip inside gzip; decompress it once")
    binary = gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    return io.TextIOWrapper(binary, encoding=encoding, errors="strict", newline=None)


def read_bytes(path: str | Path) -> bytes:
    """The whole decompressed content as bytes (for parsers that take bytes)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        return gzip.decompress(raw) if raw[:2] == GZIP_MAGIC else raw
    except GZIP_ERRORS as exc:
        raise IngestError(path, None, f"cannot read file (corrupt gzip stream?): {exc}") from exc


def read_text(path: str | Path) -> str:
    """The whole file as text, with a clear error for undecodable bytes."""
    try:
        with open_text(path) as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise IngestError(
            path, f"byte {exc.start}", f"not UTF-8 text ({exc.reason}); expected a UTF-8 text file "
            "(or UTF-16 with a BOM); convert Latin-1/Windows-1252 with `iconv -f cp1252 -t utf-8`"
        ) from exc
    except GZIP_ERRORS as exc:
        raise IngestError(path, None, f"cannot read file: {exc}") from exc


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


# libyaml's parser when PyYAML was built with it (the wheels are): the same documents, the same
# errors with their line and column, five to ten times faster on the ledgers and assumptions
# that every chapter reads; the pure-Python loader otherwise.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | bytes):
    """yaml.safe_load, on libyaml when present (every YAML file of the project goes through here)."""
    return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader

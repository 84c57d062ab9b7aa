"""Readers for native benchmark formats, with format detection.

Each reader module exposes ``FORMAT`` (a name), ``TABLES`` (tables it can yield),
``sniff(head: str, path: Path) -> bool`` and ``read(path, run_prefix=None) -> IngestResult``.
`detect` asks each reader in turn to recognise the file's first bytes.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from types import ModuleType

from .errors import IngestError
from .result import IngestResult
from .textio import read_head

# Order matters: more specific sniffers first.
_READER_MODULES = ("vllm_bench", "llama_bench", "prometheus", "nvidia_smi", "tool_calls", "vllm_log")


def readers() -> dict[str, ModuleType]:
    """Reader modules by format name."""
    out = {}
    for name in _READER_MODULES:
        try:
            mod = import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a reader not written yet
            if exc.name != f"{__name__}.{name}":
                raise
            continue
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
    head = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    seen = set()
    for mod in readers().values():
        if mod in seen:
            continue
        seen.add(mod)
        if mod.sniff(head, path):
            return mod
    known = ", ".join(sorted(readers()))
    raise IngestError(path, "line 1", f"unrecognised format; expected one of: {known}")


def read(path: str | Path, *, fmt: str | None = None, run_prefix: str | None = None) -> IngestResult:
    """Read one raw file into tidy tables, detecting its format unless `fmt` is given."""
    if fmt is not None:
        try:
            mod = readers()[fmt]
        except KeyError:
            raise IngestError(path, None, f"unknown format {fmt!r}; known: {', '.join(sorted(readers()))}")
    else:
        mod = detect(path)
    return mod.read(Path(path), run_prefix=run_prefix)


__all__ = ["IngestError", "IngestResult", "detect", "read", "readers"]

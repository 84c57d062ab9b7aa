"""Deterministic reconstruction of raw benchmark files from published tables.

Some write-ups publish only tables. To let the book recompute those tables from native
raw files, we rebuild plausible raw files that reproduce every published number exactly
(to its printed precision), label them "reconstructed", and record every assumption in the
data folder's assumptions.yml and PROVENANCE.md (templates/provenance.md.j2). The files are
checked with the library's public readers and definitions. Same seed, same bytes.

A development tool, outside the library: run it from the repository root,

    python -m tools.reconstruct {h100|strix|dense-sparse|power-sweep|gb10} OUT_DIR [--published PATH] [--seed N]

or `make data` for all five committed folders. `generate(..., moved={id: value})` writes the
folder with some of a generator's choices (its ASSUMPTIONS) set to other values, one way for
tools/marks_check.py to see where each choice lands.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

STUDIES = {
    "h100": "h100",
    "strix": "strix",
    "dense-sparse": "dense_sparse",
    "gb10": "gb10",
    "power-sweep": "power_sweep",
}
H100_STUDY = "h100-dense-vs-moe-mtp"


def default_published(which: str, out_dir: Path) -> Path:
    """The H100 study's published.yml: in OUT_DIR for h100, beside OUT_DIR for strix."""
    if which in ("h100", "dense-sparse", "gb10", "power-sweep"):  # the study's own published.yml
        return out_dir / "published.yml"
    return out_dir.parent / H100_STUDY / "published.yml"


def module(which: str):
    """The generator module of a study key ('h100', 'gb10', ...)."""
    return import_module(f"{__name__}.{STUDIES[which]}")


@contextmanager
def moving(mod, moved: dict) -> Iterator[None]:
    """The generator `mod` with these choices (id -> value) in place of its ASSUMPTIONS' values,
    restored after. Every generator reads a choice through its ASSUMPTIONS when it uses it."""
    unknown = sorted(set(moved) - set(mod.ASSUMPTIONS))
    if unknown:
        raise KeyError(f"{mod.__name__} has no choice {', '.join(unknown)}")
    kept = {k: mod.ASSUMPTIONS[k] for k in moved}
    try:
        mod.ASSUMPTIONS.update({k: (v, kept[k][1]) for k, v in moved.items()})
        yield
    finally:
        mod.ASSUMPTIONS.update(kept)


def generate(which: str, out_dir: Path, published: Path | None = None, seed: int | None = None,
             moved: dict | None = None) -> None:
    """Write one study's folder; `moved` (choice id -> value) sets some of its choices otherwise."""
    mod = module(which)
    out_dir = Path(out_dir)
    published = Path(published) if published else default_published(which, out_dir)
    with moving(mod, moved or {}):
        mod.generate(out_dir, published, mod.SEED if seed is None else seed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.reconstruct", description=__doc__.split("\n\n")[0])
    p.add_argument("study", choices=sorted(STUDIES))
    p.add_argument("out_dir", type=Path)
    p.add_argument("--published", type=Path, default=None,
                   help="published.yml with the targets (default: OUT_DIR's; for strix the H100 study's beside it)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the module's SEED)")
    args = p.parse_args(argv)
    generate(args.study, args.out_dir, args.published, args.seed)
    print(f"wrote {args.out_dir}")
    return 0

"""The bookkeeping files of a reconstructed data folder: study.yml, assumptions.yml,
PROVENANCE.md, SHA256SUMS.

PROVENANCE.md is templates/provenance.md.j2 filled with the study's facts (a Provenance)
and the assumptions.yml just written, read back by the library's reader, so the document
lists exactly the machine-readable choices. Nothing here depends on where the folder is
written, so two runs with the same seed give the same bytes wherever they land.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import jinja2
import yaml

from benchbook.study.assumptions import FILE as ASSUMPTIONS_FILE
from benchbook.study.assumptions import load_assumptions
from benchbook.study.folder import CHECKSUMS, MANIFEST, write_checksums

from . import lands
from .targets import Target

PROVENANCE = "PROVENANCE.md"
TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class Table:
    """A markdown table of a PROVENANCE.md section (cells printed with str, `|` escaped)."""

    header: list[str]
    rows: list[list]


@dataclass
class Section:
    """`## title` and its blocks: markdown text (ending in a newline) or Tables."""

    title: str
    blocks: list


@dataclass
class Provenance:
    """The study's facts the template needs; the assumptions come from assumptions.yml."""

    study: str  # the data folder's name
    summary: str  # what was published and what we rebuilt, after the RECONSTRUCTED banner
    generator: str  # the module, as `python -m` would name it
    helpers: list[str]  # the generator's sibling modules it uses
    command: str  # the one command that rebuilds the folder
    seed: int
    seeding: str = ""  # how the seed reaches the random streams
    identical_note: str = ""  # what byte-identical takes beyond the seed
    made: list[str] = field(default_factory=list)  # more bullets on how the files were made
    sections: list[Section] = field(default_factory=list)  # before the assumptions
    after: list[Section] = field(default_factory=list)  # after them (what was synthesised, ...)
    hand_written: list[str] = field(default_factory=list)  # files of the folder no generator writes


def command(key: str, study: str, seed: int, published: str | None = None) -> str:
    """`python -m tools.reconstruct ...` that rebuilds data/<study> (see __init__.py)."""
    pub = f" --published {published}" if published else ""
    return f"python -m {__package__} {key} data/{study}{pub} --seed {seed}"


def render(p: Provenance, assumed) -> str:
    """PROVENANCE.md text: the template filled with `p` and the assumptions (objects with
    id, value, why, columns, as benchbook.study.assumptions.load_assumptions returns them)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                             autoescape=False)
    env.filters.update(code=lambda x: f"`{x}`", pyrepr=repr, cell=lambda c: str(c).replace("|", "\\|"))
    return env.get_template("provenance.md.j2").render(p=p, assumptions=assumed)


def reset(out_dir: Path) -> None:
    """Remove what a previous run wrote (raw/ and the three bookkeeping files), nothing else."""
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out_dir / "raw", ignore_errors=True)
    for name in (MANIFEST, CHECKSUMS, PROVENANCE, ASSUMPTIONS_FILE):
        (out_dir / name).unlink(missing_ok=True)


def sources(published, ids) -> dict:
    """The seeds a study draws on, copied from published.yml (dates as plain strings)."""
    out = {}
    for sid in ids:
        s = dict(published.sources[sid])
        out[sid] = {k: (v.isoformat() if isinstance(v, (date, datetime)) else v) for k, v in s.items()}
    return out


def study(name: str, title: str, description: str, *, generator: str, seed: int, sources: dict, configs: dict,
          files: list[dict]) -> dict:
    """study.yml of a reconstructed folder, labelled with the generator (its module name) and seed."""
    return {
        "study": name,
        "title": title,
        "label": f"reconstructed ({generator}, seed {seed})",
        "reconstructed": True,
        "description": description,
        "sources": sources,
        "configs": configs,
        "files": files,
    }


def serve_args(shared: dict, **own) -> dict:
    """A configuration's serve_args for study.yml: `shared` (the launch arguments of a study's
    servers, in their order) with the configuration's own values; a None leaves an argument out."""
    return {k: v for k, v in {**shared, **own}.items() if v is not None}


def write_study(out_dir: Path, doc: dict) -> None:
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    (out_dir / MANIFEST).write_text(text, encoding="utf-8")


def finish(out_dir: Path, provenance: Provenance, assumed: dict, shows_in: dict | None = None,
           rows: dict | None = None) -> None:
    """assumptions.yml (the generator's choices as data), PROVENANCE.md from it, SHA256SUMS.
    Where tools/marks_check.py has moved a choice (lands/<study>.yml), what it found replaces
    the generator's own SHOWS_IN/ROWS for that choice."""
    write_assumptions(out_dir, assumed, shows_in or {}, rows or {}, lands.load(provenance.study))
    text = render(provenance, load_assumptions(out_dir))
    (out_dir / PROVENANCE).write_text(text, encoding="utf-8")
    write_checksums(out_dir)


def write_assumptions(out_dir: Path, assumed: dict, shows_in: dict, rows: dict | None = None,
                      checked: dict | None = None) -> None:
    """One entry per ASSUMPTIONS key: its value, why, the tidy columns it lands in and, where
    it covers only some of their rows, which (`rows`, benchbook.study.assumptions). `checked`
    (lands.load) gives, per choice the perturbation check moved, the columns and rows it found,
    or `moves: nothing`, in place of `shows_in` and `rows`."""
    rows, checked = rows or {}, checked or {}
    unknown = sorted(set(shows_in) - set(assumed)) + sorted(set(rows) - set(shows_in))
    if unknown:
        raise ValueError(f"SHOWS_IN or ROWS names no assumption with columns: {', '.join(unknown)}")
    entries = [{"id": k, "value": _plain(v), "why": why, **_landing(k, shows_in, rows, checked)}
               for k, (v, why) in assumed.items()]
    head = ("# What the generator chose where the write-up printed no number (benchbook.assumptions).\n"
            "# `columns`: the tidy-table columns each choice lands in; `rows`, when given, the rows of\n"
            "# those columns it covers (column: values it matches; a list: any of them). A page marks\n"
            "# every cell, series, number and claim computed from such a cell, and the sections that\n"
            "# read one. `sorted`: per request column and run, the positions of the run's sorted values\n"
            "# the choice moved (a P95 or median rests on its own positions). `moves: nothing`: moving\n"
            "# the choice (make marks) changed no tidy cell.\n"
            "# Written by the generator from tools/reconstruct/lands/; do not edit.\n")
    text = yaml.safe_dump({"assumptions": entries}, sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=None)  # lists of plain values on a line: rows stay compact
    (out_dir / ASSUMPTIONS_FILE).write_text(head + text, encoding="utf-8")


def _landing(key: str, shows_in: dict, rows: dict, checked: dict) -> dict:
    """An entry's columns and rows: the check's where it ran, else the generator's own."""
    if key in checked:
        return _plain(checked[key])
    return {"columns": list(shows_in.get(key, ())), **({"rows": _plain(rows[key])} if key in rows else {})}


def _plain(v):
    """YAML-safe: tuples as lists, mapping keys as they are."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def target_rows(targets: dict[str, Target], fitted: dict[str, float], run_of) -> list[list]:
    """Published number | source | table/claim | value name | run shaped | our value."""
    rows = []
    for name, t in targets.items():
        for c in t.used + t.approximate:
            shown = c.quantity.display(_printed_value(c, fitted.get(name), name))
            rows.append([c.text, c.source, c.where, c.printed_name, run_of(name), shown])
    return rows


def conflict_rows(targets: dict[str, Target], fitted: dict[str, float]) -> list[list]:
    rows = []
    for name, t in targets.items():
        for c in t.conflicts:
            ours = c.quantity.display(_printed_value(c, fitted.get(name), name))
            kept = ", ".join(f"{u.text} ({u.where})" for u in t.used)
            rows.append([c.text, c.source, c.where, c.printed_name, ours, kept])
    return rows


def _printed_value(c, value, name):
    return None if value is None else c.printed(value)

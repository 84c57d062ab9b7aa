"""Marks proven by perturbation: `python -m tools.marks_check [--folder F] [--choice ID] [--write]`.

For each choice a data generator made (an entry of its folder's assumptions.yml), the folder is
generated again with that choice moved (tools.reconstruct.generate(moved=...)), one at a time,
into a temporary copy of the project's data. Then:

- the tidy tables of the base and the moved folder are compared cell by cell (marks_tidy.same):
  the columns, and the rows of them, where the choice lands;
- every page that reads the folder is run in-process from its notebook on the base and on the
  moved folder, capturing what it shows (every HTML table cell, every line of Markdown, every
  glued value, every figure), with the marks (ᵃ) the library put on each.

A page place that moves must carry the mark naming the choice, and a place that carries it must
move. `--write` records in tools/reconstruct/lands/<folder>.yml, per choice, the tidy columns
and rows it moved (or that it moves nothing), which the generator writes into assumptions.yml
(`make data`). A development tool, outside the library, like tools/reconstruct.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchbook.ledger.claims import GLUE_KEYS
from benchbook.study.assumptions import load_assumptions
from benchbook.study.load import ingest_study

from . import reconstruct
from .folders import FOLDERS, REPO
from .marks_page import Page, page_places
from .marks_tidy import landing, merged_sorted, relanded, same, sorted_diff, tidy_diff

HEX = re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{8,64}\b")  # a digest has a letter; a float's digits do not
FILE = re.compile(r"[\w./-]+\.(?:json|jsonl|log|csv|gz|txt|prom|yml)\b")  # a raw file's name
# a folder's data hash (16 hex digits) even when it has no letter (`make marks`: 2893350945469798),
# not the digits of a fraction printed in full (1.1904761896184985)
DATA_HASH = re.compile(r"(?<![\d.])[0-9a-f]{16}(?![\d.])")
SCALES = (1.1, 0.9, 1.02, 0.98, 1.3)  # numbers are moved by these factors, the first the generator accepts
# after a first move left marked places alone: far enough to cross a margin (a run brought over
# the client-idle caveat's 5 % line), where the generator accepts it
FAR = (2.0, 0.5)


# ---- moving a choice ------------------------------------------------------------------


def moves(value, siblings=(), further: bool = False) -> list:
    """Other values for a choice, the likeliest the generator accepts first; none equal to it.
    A text choice also tries the other texts of its generator's choices (`siblings`): a name
    the generator knows (another backend, say) is one it can use. `further`: the moves tried
    after a first one left marked places unmoved, the least like it first (the largest scale,
    a rotation, one number at a time: scaling every loser's ratio alike never changes which
    build is slowest, moving one of them does)."""
    scaled = [_scaled(value, s) for s in SCALES]
    if further:  # every number on its own: a choice of 20 (the 3090 runs) needs each of them moved
        out = [scaled[-1], *(_scaled(value, f) for f in FAR), _rotated(value), *_one_at_a_time(value, limit=None),
               *scaled[:-1]]
    else:
        out = scaled + [_rotated(value)] + _one_at_a_time(value)
    if isinstance(value, str):
        out += [t for t in siblings if isinstance(t, str)]
    return [v for i, v in enumerate(out) if v != value and v not in out[:i]]


def _one_at_a_time(v, limit: int | None = 12) -> list:
    """The value with one of its numbers moved (each in turn, however deep), and with one unit
    shifted between the first two integers of a list (a split whose total is published), for
    generators that read some entries as names or totals and refuse them all moved."""
    out = []
    for path, leaf in _leaves(v, lists=True):
        if len(leaf) > 1 and all(isinstance(x, int) and not isinstance(x, bool) for x in leaf[:2]):
            out.append(_replaced(v, path, type(leaf)([leaf[0] + 1, leaf[1] - 1, *leaf[2:]])))
    per_leaf = [[_replaced(v, path, m) for s in SCALES[:2] if (m := _scaled(leaf, s)) != leaf]
                for path, leaf in _leaves(v)]
    # every number's first move before any number's second, so a limit reaches each of them
    # (make marks: the twelve moves of the 3090 tool logs' numbers never reached the 27B's burst)
    out += [moves[0] for moves in per_leaf if moves]
    named = list(_texts(v))
    for path, leaf in named:  # a name replaced by another of its kind: one build wins both tests
        alike = [t for q, t in named if len(q) == len(path) and (len(path) == 1 or q[-1] == path[-1])]
        out += [_replaced(v, path, t) for t in dict.fromkeys(alike) if t != leaf]
    out += [m for moves in per_leaf for m in moves[1:]]
    return out[:limit] if isinstance(v, (dict, list, tuple)) else []


def _texts(v, path=()):
    """(path, text) of a mapping's or list's text values (not its keys). A text's kind is its key:
    another model's id may replace a model id, a date may not (`make marks`)."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _texts(x, (*path, k))
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            yield from _texts(x, (*path, i))
    elif isinstance(v, str) and path:
        yield path, v


def _per_leaf(v) -> list[list]:
    """Moves of one number of the value at a time, grouped by the number (a lone number: none)."""
    if not isinstance(v, (dict, list, tuple)):
        return []
    return [[_replaced(v, path, m) for s in SCALES[:2] if (m := _scaled(leaf, s)) != leaf]
            for path, leaf in _leaves(v)]


def merged(a: dict, b: dict) -> dict:
    """Two tidy comparisons as one: a cell moved when it moved in either."""
    out = {t: dict(cols) for t, cols in a.items()}
    for t, cols in b.items():
        for c, mask in cols.items():
            have = out.setdefault(t, {}).get(c)
            out[t][c] = mask if have is None else (have | mask.reindex(have.index, fill_value=False))
    return out


def _leaves(v, path=(), lists: bool = False):
    """(path, value) of a value's numbers, or of its lists when `lists`."""
    if lists and isinstance(v, (list, tuple)):
        yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _leaves(x, (*path, k), lists)
    elif isinstance(v, (list, tuple)) and not lists:
        for i, x in enumerate(v):
            yield from _leaves(x, (*path, i), lists)
    elif isinstance(v, (int, float)) and not lists:
        yield path, v


def _replaced(v, path: tuple, new):
    """A copy of `v` with the entry at `path` set to `new`."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(v, dict):
        return {**v, head: _replaced(v[head], rest, new)}
    items = list(v)
    items[head] = _replaced(items[head], rest, new)
    return type(v)(items)


def texts(v) -> list:
    """Every text inside a value (keys of mappings too), in order."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [t for k, x in v.items() for t in texts(k) + texts(x)]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in texts(x)]
    return []


def _scaled(v, s: float):
    """Every number of a value moved by factor s (integers by at least one), flags flipped,
    text left as it is (text is moved by _rotated)."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return round(v * s) if round(v * s) != v else v + (1 if s > 1 else -1)
    if isinstance(v, float):
        return v * s if v else (0.01 if s > 1 else -0.01)
    if isinstance(v, (list, tuple)):
        return type(v)(_scaled(x, s) for x in v)
    if isinstance(v, dict):
        return {k: _scaled(x, s) for k, x in v.items()}
    return v


def _rotated(v):
    """A mapping's or list's values shifted by one place (which backend wins, which file is
    which); a text value with a suffix; anything else as it is."""
    if isinstance(v, dict) and len(v) > 1:
        keys, vals = list(v), list(v.values())
        return dict(zip(keys, vals[1:] + vals[:1]))
    if isinstance(v, (list, tuple)) and len(v) > 1:
        return type(v)(list(v[1:]) + [v[0]])
    if isinstance(v, str):
        return _later(v) or v + "-moved"
    return v


def _later(v: str) -> str | None:
    """An ISO date or time one day and one minute later, in the same form; None for other text."""
    from datetime import date, datetime, timedelta

    try:
        when = datetime.fromisoformat(v)
    except ValueError:
        return None
    if len(v) == 10:
        return (date.fromisoformat(v) + timedelta(days=1)).isoformat()
    return (when + timedelta(days=1, minutes=1)).isoformat()


def copy_data(tmp: Path) -> Path:
    """A copy of the project's five data folders (with their hand-written files)."""
    data = tmp / "data"
    for folder in FOLDERS:
        shutil.copytree(REPO / "data" / folder, data / folder)
    return data


def generate(folder: str, out: Path, moved: dict | None = None) -> None:
    """Write `out` (a copy of data/<folder>) as `make data` does, with `moved` choices."""
    key = FOLDERS[folder]
    published = out.parent / reconstruct.H100_STUDY / "published.yml" if key == "strix" else out / "published.yml"
    reconstruct.generate(key, out, published, moved=moved)


# ---- one choice ------------------------------------------------------------------------


@dataclass
class Verdict:
    """What moving one choice did: the tidy cells and page places that moved, and the marks."""

    folder: str
    choice: str
    moved_to: object = None
    error: str = ""  # why no move was possible
    tidy: dict = field(default_factory=dict)  # table -> {column: row mask}
    ordered: dict = field(default_factory=dict)  # requests.column -> {run: sorted positions moved}
    landing: dict = field(default_factory=dict)  # columns/rows as assumptions.yml writes them, or {}
    moved: set = field(default_factory=set)  # page places that moved
    marked: set = field(default_factory=set)  # page places that carry the choice's mark
    shown: dict = field(default_factory=dict)  # place -> (text before, text after), for the report
    refused: list = field(default_factory=list)  # (move, page) of earlier moves a page stopped on
    also: list = field(default_factory=list)  # (move, places it moved) of the further moves tried
    seconds: float = 0.0

    @property
    def unmarked(self) -> set:
        return self.moved - self.marked

    @property
    def unmoved(self) -> set:
        return self.marked - self.moved

    @property
    def ok(self) -> bool:
        return not self.error and not self.unmarked and not self.unmoved


class Check:
    """The base pages of every folder, computed once; each choice moved against them."""

    def __init__(self, tmp: Path, pages: bool = True, leaves: bool = True, only: tuple = ()):
        self.tmp, self.pages, self.leaves = tmp, pages, leaves  # leaves: move each number on its own too
        self.only = tuple(only)  # run only these pages (the tests' fast subset); every reader by default
        self.data = copy_data(tmp / "base")
        self._base: dict = {}
        self._shapes: dict = {}
        self._tables: dict = {}

    def base_places(self, folder: str) -> dict:
        if folder not in self._base:
            self._base[folder] = page_places(self._pages(folder), self.data, self.data, self.tmp / "out")
        return self._base[folder]

    def _pages(self, folder: str) -> list[Page]:
        return [p for p in Page.reading(REPO, folder) if not self.only or p.id in self.only]

    def choice(self, folder: str, choice: str, refusals: int = 3, further: int | None = None) -> Verdict:
        """Move one choice and compare. A move a page stops on (its contract refuses the data:
        Strix Halo's one-client run moved to two clients stops the H100 page) shows every place
        of that page as moved; the next move is tried instead, up to `refusals` times.

        One move shows what rests on a choice, not what does not: a move of a tenth can leave a
        value where it was although a larger one, or one of another of its numbers, moves it. So while marked
        places have not moved, up to `further` other moves are tried (`moves(further=True)`), and a
        place counts as moved when any move moved it (and must then carry the mark)."""
        start = time.perf_counter()
        value = next(a.value for a in load_assumptions(REPO / "data" / folder) if a.id == choice)
        if further is None:  # eight, and one more per number of a choice of several
            further = 6 + len(FAR) + len(list(_leaves(value)))
        refused = []
        while True:
            verdict = Verdict(folder, choice, refused=list(refused))
            moved_data = self._moved(folder, choice, value, verdict, skip=[m for m, _ in refused])
            if moved_data is None:
                break
            self._compare(folder, choice, moved_data, verdict)
            shutil.rmtree(moved_data.parent)
            stopped = sorted({k[0] for k in verdict.moved if k[1:] == ("error",) and verdict.shown[k][1]})
            if not stopped or len(refused) >= refusals:
                break
            refused.append((verdict.moved_to, ", ".join(stopped)))
        tried = [m for m, _ in refused] + [verdict.moved_to]
        if not verdict.error and self.leaves:
            # (its moves are compared in the tidy tables only: the pages see them as further moves)
            self._each_leaf(folder, choice, value, verdict, list(tried))
        while self.pages and not verdict.error and verdict.unmoved and len(verdict.also) < further:
            other = Verdict(folder, choice)
            # a further move is taken as the generator accepts it, rows that come or go matched by
            # name: Strix Halo's request count moved alone was passed over for moves that kept
            # the tables' shape, each of them to two clients, which stops the pages
            moved_data = self._moved(folder, choice, value, other, reshaped=0, skip=tried, further=True)
            if moved_data is None:
                break
            self._compare(folder, choice, moved_data, other)
            shutil.rmtree(moved_data.parent)
            tried.append(other.moved_to)
            # a page this move stopped shows every place as moved: none of them counts
            stopped = {k[0] for k in other.moved if k[1:] == ("error",) and other.shown[k][1]}
            fresh = {k for k in other.moved - verdict.moved if k[1:] != ("error",) and k[0] not in stopped}
            verdict.also.append((other.moved_to, len(fresh)))
            if not stopped:  # cells a larger move reaches are where the choice lands too
                verdict.tidy = merged(verdict.tidy, other.tidy)
                verdict.ordered = merged_sorted(verdict.ordered, other.ordered)
                verdict.landing = landing(self._base_tables(folder), verdict.tidy, verdict.ordered)
            verdict.moved |= fresh
            verdict.shown.update({k: other.shown[k] for k in fresh})
        verdict.seconds = time.perf_counter() - start
        return verdict

    def _each_leaf(self, folder: str, choice: str, value, verdict: Verdict, tried: list) -> None:
        """Where a choice of several numbers lands is where any of them does: each number is moved
        on its own too (the first of its moves the generator accepts), and the tidy cells any move
        moved make the landing. One move of them all can miss a number's cells (`make marks`: the
        H100 prefill run's first accepted move changed its concurrency only, so its landing lost
        the prompt and answer lengths the one-request table prints)."""
        base = self._base_tables(folder)
        for group in _per_leaf(value):
            for candidate in group:
                if candidate in tried:
                    break
                data = self._generated(folder, choice, candidate, [])
                if data is None:
                    continue
                tried.append(candidate)
                moved = ingest_study(data / folder).tables
                verdict.tidy = merged(verdict.tidy, tidy_diff(base, moved))
                verdict.ordered = merged_sorted(verdict.ordered, sorted_diff(base, moved))
                shutil.rmtree(data.parent)
                break
        verdict.landing = landing(base, verdict.tidy, verdict.ordered)

    def _base_tables(self, folder: str) -> dict:
        if folder not in self._tables:
            self._tables[folder] = ingest_study(self.data / folder).tables
        return self._tables[folder]

    def _moved(self, folder: str, choice: str, value, verdict: Verdict, reshaped: int = 3,
               skip: list = (), further: bool = False) -> Path | None:
        """A copy of the data with the choice moved to the first value the generator accepts
        (other than those in `skip`) that keeps every tidy table's number of rows (rows that
        come or go are matched by name, which a generated log may not keep); after `reshaped`
        such values, the first of them."""
        errors, kept = [], None
        choices = reconstruct.module(FOLDERS[folder]).ASSUMPTIONS
        for candidate in moves(value, dict.fromkeys(texts([v for v, _ in choices.values()])), further):
            if candidate in skip:
                continue
            data = self._generated(folder, choice, candidate, errors)
            if data is None:
                continue
            if self._shape(data / folder) == self._base_shape(folder) or reshaped == 0:
                if kept:
                    shutil.rmtree(kept[1].parent)
                verdict.moved_to = candidate
                return data
            reshaped -= 1
            if kept:
                shutil.rmtree(data.parent)
            else:
                kept = (candidate, data)
        if kept:
            verdict.moved_to = kept[0]
            return kept[1]
        verdict.error = "no move the generator accepts" + ("".join(f"\n    {e}" for e in errors) or "")
        return None

    def _generated(self, folder: str, choice: str, candidate, errors: list) -> Path | None:
        """A copy of the data with `folder` generated with the choice at `candidate`; None (and
        the reason in `errors`) when the generator refuses it."""
        work = Path(tempfile.mkdtemp(dir=self.tmp))
        data = work / "data"
        shutil.copytree(self.data, data)
        try:
            generate(folder, data / folder, {choice: candidate})
        except Exception as exc:  # noqa: BLE001 - a move the generator refuses: try the next
            errors.append(f"{candidate!r}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            shutil.rmtree(work)
            return None
        for name in ("assumptions.yml", "PROVENANCE.md"):  # the list of choices is no page value
            shutil.copy2(self.data / folder / name, data / folder / name)
        return data

    def _base_shape(self, folder: str) -> dict:
        if folder not in self._shapes:
            self._shapes[folder] = self._shape(self.data / folder)
        return self._shapes[folder]

    @staticmethod
    def _shape(root: Path) -> dict:
        """Rows per tidy table of a folder."""
        return {t: len(df) for t, df in ingest_study(root).tables.items()}

    def _compare(self, folder: str, choice: str, moved_data: Path, verdict: Verdict) -> None:
        base, moved = ingest_study(self.data / folder).tables, ingest_study(moved_data / folder).tables
        verdict.tidy, verdict.ordered = tidy_diff(base, moved), sorted_diff(base, moved)
        verdict.landing = landing(base, verdict.tidy, verdict.ordered)
        if not self.pages or same_files(self.data / folder, moved_data / folder):
            return
        before = self.base_places(folder)
        after = page_places(self._pages(folder), moved_data, self.data, self.tmp / "out")
        moved = {k for k in before.keys() | after.keys() if not same_text(_text(before.get(k)), _text(after.get(k)))}
        verdict.shown = {k: (_text(before.get(k)), _text(after.get(k))) for k in before.keys() | after.keys()}
        own = {p.id for p in self._pages(folder) if p.folders.get("data_dir") == folder}
        verdict.marked = marked_places(before, after, folder, choice, own)
        # a claim's marked value, verdict and note moved with its row (a printed-as-published value
        # the ledger leaves unmarked is the write-up's number, which no move changes at its digits)
        verdict.moved = moved | (claims_moved(moved, before) & verdict.marked)


CLAIM_PARTS = ("recomputed", "verdict", "note")  # a ledger row's parts that say what its value is
# A table's verdict column and the columns of its row it decides on (a GB10 comparison's
# "within noise" reads its Δ and seed spread): the verdict moves when they do, as a claim's does.
DECIDED_BY = {"verdict": ("Δ", "seed spread")}
# A page's counts of its ledger's verdicts move when a verdict of its ledger does.
VERDICT_COUNTS = tuple(GLUE_KEYS.values())


def claims_moved(moved: set, places: dict) -> set:
    """A claims ledger row moves when its recomputed value does, which its *difference* shows in
    full, or for a bound the note that says how far it holds ("1.9× the stated one", in full): the
    recomputed value prints at the write-up's digits, and a verdict that holds 1.9× over does not
    flip. Its value, verdict and note rest on what moved it, as the ledger marks them
    (claims.mark_ledger). Likewise a table's verdict moves with the cells it decides on
    (DECIDED_BY), and a page's counts of verdicts with any of its ledger's rows (VERDICT_COUNTS).
    A place is (page, output, 'cell', table, row, column) or (page, output, 'glue', key)."""
    rows = {k[:-1] for k in moved if len(k) == 6 and k[2] == "cell" and k[-1] in ("difference", "note")}
    decided = {(k[:-1], c) for k in moved if len(k) == 6 and k[2] == "cell"
               for c, by in DECIDED_BY.items() if k[-1] in by}
    pages = {k[0] for k in rows}
    return {k for k in places if (len(k) == 6 and ((k[:-1] in rows and k[-1] in CLAIM_PARTS)
                                                   or (k[:-1], k[-1]) in decided))
            or (len(k) == 4 and k[2] == "glue" and k[3] in VERDICT_COUNTS and k[0] in pages)}


def marked_places(before: dict, after: dict, folder: str, choice: str, own: set) -> set:
    """The places carrying the choice's mark: on the base pages, and, for a place the move
    brought in (a caveat whose condition now holds, `make marks`: the 3090 client-idle caveat),
    on the moved pages, where a reader meets it."""
    def marks(places: dict, keys) -> set:
        return {k for k in keys if _names(places[k][1], folder, choice, k[0] in own)}
    return marks(before, before) | marks(after, after.keys() - before.keys())


def same_files(a: Path, b: Path) -> bool:
    """The pages' inputs (study.yml and raw/) byte for byte alike: then no page can move."""
    def files(root: Path) -> dict:
        return {p.relative_to(root): p.read_bytes() for p in [root / "study.yml", *sorted((root / "raw").rglob("*"))]
                if p.is_file()}
    return files(a) == files(b)


def _text(place) -> object:
    """A place's text as printed, with file fingerprints (hex digests) and raw files' names
    left out: they name the files (whose run, date and concurrency the page shows in their own
    cells), they are no value a choice could be mistaken for."""
    return None if place is None else FILE.sub("#file", DATA_HASH.sub("#", HEX.sub("#", str(place[0]))))


NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")  # a fraction as repr or JSON writes it


def same_text(a, b) -> bool:
    """A place's text before and after alike, its fractions compared as the tidy tables' are
    (marks_tidy.same): a value glued or charted at its full repr regenerates as 929.10233526592
    or 929.1023352659203 with the order of a sum, and no reader sees that digit."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    x, y = NUMBER.split(a), NUMBER.split(b)
    if x != y:
        return False
    return all(same(float(u), float(v)) for u, v in zip(NUMBER.findall(a), NUMBER.findall(b)))


def _names(ids, folder: str, choice: str, own: bool) -> bool:
    """Do these mark ids name the choice? A page names its own folder's choices by id and a
    folder it reads by 'folder/id' (a bare id there is its own folder's choice of that name)."""
    return (choice if own else f"{folder}/{choice}") in ids


# ---- the report ------------------------------------------------------------------------


def report(v: Verdict, out=sys.stdout, limit: int = 8) -> None:
    head = f"{v.folder} / {v.choice}"
    if v.error:
        print(f"FAIL {head}: {v.error}", file=out)
        return
    lands = ", ".join(_landing_text(v.landing)) or "moves nothing in the tidy tables"
    print(f"{'ok  ' if v.ok else 'FAIL'} {head} -> {v.moved_to!r} ({v.seconds:.1f} s): {lands}; "
          f"page: {len(v.moved)} moved, {len(v.marked)} marked", file=out)
    for move, pages in v.refused:
        print(f"     a page stopped on the move to {move!r} ({pages}); the next move was tried", file=out)
    for move, fresh in v.also:
        print(f"     marked places had not moved; the move to {move!r} moved {fresh} more", file=out)
    for what, places in (("moved, not marked", v.unmarked), ("marked, not moved", v.unmoved)):
        for p in sorted(places, key=str)[:limit]:
            was, now = v.shown.get(p, (None, None))
            change = f"{_short(was)!r} -> {_short(now)!r}" if was != now else f"{_short(was)!r}"
            print(f"     {what}: {_place_text(p)}: {change}", file=out)
        if len(places) > limit:
            print(f"     ... {len(places) - limit} more {what}", file=out)


def _landing_text(landing: dict) -> list[str]:
    out = list(landing.get("columns", ()))
    if landing.get("rows"):
        out.append(f"rows {landing['rows']}")
    return out


def _short(text, limit: int = 90):
    return text if not isinstance(text, str) or len(text) <= limit else text[:limit - 1] + "…"


def _place_text(place) -> str:
    return " | ".join(str(x) for x in place)


def choices(folders: list[str], only: list[str] | None) -> dict[str, list[str]]:
    """Folder -> the ids of its choices to move (all, or those of `only` it has)."""
    ids = {f: [a.id for a in load_assumptions(REPO / "data" / f)] for f in folders}
    unknown = sorted(set(only or ()) - {i for found in ids.values() for i in found})
    if unknown:
        raise SystemExit(f"no choice {', '.join(unknown)} in {', '.join(folders)}")
    return {f: [i for i in found if not only or i in only] for f, found in ids.items()}


def made(folder: str) -> set:
    """The choices the folder's generator makes today (ASSUMPTIONS)."""
    return set(reconstruct.module(FOLDERS[folder]).ASSUMPTIONS)


def rows_again(folders: list[str]) -> int:
    """lands/<folder>.yml with every landing's rows written again (marks_tidy.relanded)."""
    from .reconstruct import lands

    for folder in folders:
        base = ingest_study(REPO / "data" / folder).tables
        lands.record(folder, {k: relanded(base, k, v) for k, v in lands.load(folder).items()}, made(folder))
        print(f"{folder}: {lands.path(folder).stat().st_size:,} bytes")
    return 0


def sorted_again(folders: list[str], only: list[str] | None) -> int:
    """lands/<folder>.yml with `sorted` found again (the tidy moves of each choice that lands in an
    ORDERED table); the columns and rows, which page runs may have widened, stay as recorded."""
    from benchbook.study.assumptions import ORDERED

    from .reconstruct import lands

    with tempfile.TemporaryDirectory(prefix="marks-check-") as tmp:
        check = Check(Path(tmp), pages=False)
        for folder, ids in choices(folders, only).items():
            kept, found = lands.load(folder), {}
            for choice in ids:
                entry = kept.get(choice) or {}
                if not any(str(c).split(".")[0] in ORDERED for c in entry.get("columns", ())):
                    continue
                v = check.choice(folder, choice)
                if v.error or not set(ORDERED) & set(v.tidy):  # no tidy move reached them: rows stand
                    print(f"{folder} / {choice}: left as recorded ({v.error or 'no tidy move reaches them'})")
                    continue
                found[choice] = {**{k: x for k, x in entry.items() if k != "sorted"}, "sorted": v.landing["sorted"]}
                print(f"{folder} / {choice}: sorted {sum(len(r) for r in v.landing['sorted'].values())} run columns "
                      f"({v.seconds:.0f} s)")
            lands.record(folder, found, made(folder))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.marks_check", description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", action="append", choices=sorted(FOLDERS), help="only this data folder (repeatable)")
    p.add_argument("--choice", action="append", help="only this choice id (repeatable)")
    p.add_argument("--show", type=int, default=8, help="failing places listed per choice and kind")
    p.add_argument("--tidy-only", action="store_true", help="compare the tidy tables only, not the pages")
    p.add_argument("--rows-again", action="store_true",
                   help="write the recorded landings' rows again with the current selectors (moves nothing)")
    p.add_argument("--write", action="store_true",
                   help="record where each checked choice lands in tools/reconstruct/lands/<folder>.yml")
    p.add_argument("--sorted-only", action="store_true",
                   help="record only where each recorded choice that lands in requests moves runs' sorted "
                        "values (tidy moves), keeping the columns and rows recorded before")
    args = p.parse_args(argv)
    from .reconstruct import lands

    if args.rows_again:
        return rows_again(args.folder or list(FOLDERS))
    if args.sorted_only:
        return sorted_again(args.folder or list(FOLDERS), args.choice)
    failed, start = 0, time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="marks-check-") as tmp:
        check = Check(Path(tmp), pages=not args.tidy_only)
        for folder, ids in choices(args.folder or list(FOLDERS), args.choice).items():
            found = {}
            for choice in ids:
                v = check.choice(folder, choice)
                report(v, limit=args.show)
                failed += not v.ok if not args.tidy_only else bool(v.error)
                if not v.error:
                    found[choice] = v.landing
            if args.write:
                lands.record(folder, found, made(folder))
    print(f"{failed} choice(s) failed; {time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())


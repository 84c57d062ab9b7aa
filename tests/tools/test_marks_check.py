"""Marks proven by perturbation (tools/marks_check.py): a fast subset of `make marks`.

Each test moves a real generator choice and regenerates a real folder, except two that test the
check's own control flow (moves a page stops on, further moves) with stand-ins for the generator
and the pages, whose real cases take minutes.
"""

from __future__ import annotations

import io
from datetime import datetime

import pytest
import yaml

from benchbook.study.assumptions import load_assumptions
from tools import marks_check
from tools.folders import FOLDERS, REPO
from tools.marks_tidy import NOTHING

# One or two choices per folder whose moves regenerate in seconds: spreads and clocks landing in
# some rows, a choice landing in rows of several tables (rows_of), a power limit of some samples.
SUBSET = [
    ("strix-halo-baseline", "rep_cv"),
    ("strix-halo-baseline", "test_overhead_s"),
    ("h100-dense-vs-moe-mtp", "dense_p99_ttft_s"),
    ("3090-dense-vs-sparse", "tpot_ttft_short_ratio"),
    ("power-sweep", "previous_limit_w"),
    ("gb10-mtp", "load_s"),
]


def _entries(folder: str) -> dict:
    doc = yaml.safe_load((REPO / "data" / folder / "assumptions.yml").read_text(encoding="utf-8"))
    return {e["id"]: e for e in doc["assumptions"]}


@pytest.fixture(scope="module")
def tidy(tmp_path_factory):
    # the first move only: each number moved on its own too would regenerate a folder per number
    return marks_check.Check(tmp_path_factory.mktemp("marks"), pages=False, leaves=False)


@pytest.mark.parametrize("value", [4, 0.0013, True, (0.2, 0.8), {"a": 1, "b": "x"}, "2026-05-29T21:14:05",
                                   "2026-06-01", {"pp": "rocm", "tg": "vulkan"}])
def test_every_move_is_another_value_the_generator_can_read(value):
    found = marks_check.moves(value)
    assert found and value not in found
    if isinstance(value, str):  # a date moves to another date in the same form
        assert all(datetime.fromisoformat(v) != datetime.fromisoformat(value) for v in found[:1])


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_no_choice_is_left_without_a_place_or_the_check_saying_it_moves_nothing(folder):
    """`columns: []` is no longer an escape: each entry names where it lands, or says that
    moving it changed no tidy cell."""
    empty = [i for i, e in _entries(folder).items() if not e.get("columns") and e.get("moves") != "nothing"]
    assert empty == []


@pytest.mark.parametrize(("folder", "choice"), SUBSET)
def test_assumptions_yml_says_where_moving_the_choice_lands(tidy, folder, choice):
    """The committed entry covers every cell moving the choice moves in the regenerated tidy
    tables (it may cover more: a page run of the check also tries larger moves, whose cells it
    records too)."""
    from benchbook.study.assumptions import row_mask

    verdict = tidy.choice(folder, choice)
    assert not verdict.error and verdict.landing != NOTHING  # the subset's choices do land somewhere
    entry = next(a for a in load_assumptions(REPO / "data" / folder) if a.id == choice)
    base = tidy._base_tables(folder)
    for table, columns in verdict.tidy.items():
        for column, moved in columns.items():
            assert f"{table}.{column}" in entry.columns, (table, column)
            covered = row_mask(base[table], entry, table, column).to_numpy()
            assert covered[moved.reindex(base[table].index, fill_value=False).to_numpy()].all(), (table, column)


def test_a_choice_without_its_entry_shows_as_moved_and_unmarked(tmp_path_factory):
    """The check sees what the marks miss: with rep_cv's entry emptied in the base folder,
    the page places it moves carry no mark, and the check says so."""
    # the Strix Halo page alone (the H100 page reads the folder too, and doubles the time)
    check = marks_check.Check(tmp_path_factory.mktemp("unmarked"), pages=True, only=("strix-halo-baseline",))
    path = check.data / "strix-halo-baseline" / "assumptions.yml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for e in doc["assumptions"]:
        if e["id"] == "rep_cv":
            e.pop("rows", None)
            e.pop("rows_of", None)
            e["columns"] = []
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    verdict = check.choice("strix-halo-baseline", "rep_cv")
    assert verdict.moved and verdict.unmarked == verdict.moved and not verdict.ok
    # and a choice whose move reaches no page place carries no mark on any page
    clock = check.choice("strix-halo-baseline", "utc_offset_h")
    assert clock.landing != NOTHING and clock.moved == set() and clock.marked == set() and clock.ok


def test_a_page_s_numbers_are_compared_in_full_not_as_printed():
    """A median that moves in its fifth digit rests on the choice that moved it: the check runs
    pages with every number the formatting module prints in full, and compares them so."""
    from benchbook.format import exact_numbers, fmt_rate, fmt_seconds

    assert fmt_rate(75.51234, 1) == fmt_rate(75.51239, 1) == "75.5"
    with exact_numbers():
        a, b = fmt_rate(75.51234, 1), fmt_seconds(0.0245)
    assert (a, b) == ("75.51234", "0.0245 s") and fmt_seconds(0.0245) == "24.5 ms"  # restored after
    assert not marks_check.same_text(a, "75.51239") and marks_check.same_text(a, "75.512340000000001")
    from benchbook.format import fmt_change

    with exact_numbers():  # a claim's difference from the published value, to a ten-millionth
        assert fmt_change(-7e-10) == fmt_change(0.0) == "0.0 (fraction)"
        assert fmt_change(-0.0003163) != fmt_change(-0.0003164)
    assert fmt_change(-0.0003163) == "-0.0%"


def test_a_digest_and_a_file_name_are_no_value_but_a_number_s_digits_are():
    text = marks_check._text(("run-20260101-100451.json 929.12345678 sha 3f9a1c0e2b", ()))
    assert text == "#file 929.12345678 sha #"
    # a data hash without a letter is still a hash; a fraction's sixteen digits are not
    assert marks_check._text(("(reconstructed, hash 2893350945469798) 1.1904761896184985×", ())) == \
        "(reconstructed, hash #) 1.1904761896184985×"


def test_scattered_moved_rows_are_written_as_the_runs_holding_them_never_fewer():
    """Beyond 40 values a selector covers the runs holding every moved row (a choice that
    shifts later random draws moves rows scattered over a run), and never leaves one out."""
    import pandas as pd

    from benchbook.study.assumptions import _entry, row_mask
    from tools.marks_tidy import landing

    df = pd.DataFrame({"config": ["a"] * 100 + ["b"] * 100, "line": range(200), "v": 0.0})
    hit = pd.Series([i < 100 and i % 2 == 0 for i in range(200)])  # 50 rows
    found = landing({"windows": df}, {"windows": {"v": hit}})
    assert found == {"columns": ["windows.v"], "rows": {"config": ["a"]}}
    a = _entry({"id": "x", "value": 1, "why": "", **found}, "x")
    assert row_mask(df, a, "windows", "v")[hit].all()
    few = pd.Series([i in (3, 150) for i in range(200)])
    assert landing({"windows": df}, {"windows": {"v": few}})["rows"] == {"line": [150, 3]}


def test_rows_are_selected_by_a_run_s_kind_before_a_setting_another_choice_moves():
    """make marks: the H100 `prompts_per_slot` selected the sweep runs by `input_len: [4096]`,
    which `sweep_lengths` moves; the moved folder's small-samples caveat then lost the mark."""
    import pandas as pd

    from tools.marks_tidy import landing

    df = pd.DataFrame({"name": [f"r{i}" for i in range(6)], "input_len": [512, 4096, 4096, 4096, 4096, 128],
                       "kind": ["prefill", *["sweep"] * 4, "short"], "completed": 0})
    hit = df["kind"] == "sweep"
    assert landing({"runs": df}, {"runs": {"completed": hit}})["rows"] == {"kind": ["sweep"]}


def test_a_caveat_s_opening_words_naming_choices_are_its_mark_not_its_value():
    """make marks: on a folder with `sweep_lengths` moved, `prompts_per_slot` (selected by the
    sweep's input length) left the small-samples caveat's opening words, which read as a move."""
    from tools.marks_page import markdown_places

    def caveat(ids: str) -> str:
        return ("- **data rule: small-samples**: Assumed, not measured: this rests on values the data generator "
                f"chose ({ids}; see PROVENANCE.md). P99 figures come from runs with fewer than 100 requests: c1 (10).")

    key = ("item", "data rule: small-samples", 0)
    before = markdown_places(caveat("prompts\\_per\\_slot; prefill\\_run"))[key]
    after = markdown_places(caveat("x"))[key]
    assert before == after and before[0].endswith("P99 figures come from runs with fewer than 100 requests: c1 (10).")
    moved = markdown_places(caveat("x").replace("c1 (10)", "c1 (11)"))[key]
    assert moved != before


def test_an_interactive_chart_carries_the_choices_its_points_rest_on():
    """A chart's JSON is one place; the ids in its Chart.js spec's `assumed` (each point's
    tooltip names them) are its marks, so a chart drawn from a choice is not read as unmarked."""
    from tools.marks_page import html_places

    spec = '{"kind":"lines","series":[{"y":[1,2]}],"assumed":{"gpu_host":"the host"}}'  # as the page writes it
    found = html_places(f'<div><script type="application/json">{spec}</script></div>')
    assert [ids for _, ids in found.values()] == [("gpu_host",)]
    bare = '<script type="application/json">{"kind":"lines","series":[]}</script>'
    assert [ids for _, ids in html_places(bare).values()] == [()]


def test_rows_a_move_adds_move_only_themselves_not_every_row_after_them():
    """A move that adds a restart to one log (the power sweep's `crash`) adds start-up facts; the
    rows were compared by position, so every cell of every log read as moved and the choice
    covered all 387 start-up facts, power limits included (the build test then read the page's
    '200' W limits as covered and unmarked). Rows are matched by what names them: the facts of
    the other logs and of the first start stay where they were."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["a", "a", "b", "b"], "fact": ["kv", "load_s", "kv", "load_s"],
                         "power_limit_w": [200, 200, 300, 300], "value": [1.0, 2.0, 3.0, 4.0]})
    moved = pd.DataFrame({"config": ["a", "a", "a", "a", "b", "b"],
                          "fact": ["kv", "load_s", "kv", "load_s", "kv", "load_s"],
                          "power_limit_w": [200, 200, 200, 200, 300, 300], "value": [1.0, 2.0, 1.0, 7.0, 3.0, 5.0]})
    found = tidy_diff({"boot": base}, {"boot": moved})
    assert list(found["boot"]) == ["value"] and found["boot"]["value"].tolist() == [False, False, False, True]
    nameless = tidy_diff({"t": base[["value"]]}, {"t": moved[["value"]]})  # nothing names a row: all moved
    assert nameless["t"]["value"].all()


def test_a_table_empty_before_and_after_moves_nowhere_and_one_emptied_moves_everywhere():
    """The 3090 folder has no stats lines or drafts (windows and spec_decode are empty): read as
    rows that came or went, every column of both tables moved with any choice. A table whose
    rows all went moved in every cell, as one whose rows came."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    empty = pd.DataFrame({"config": pd.Series(dtype="string"), "value": pd.Series(dtype="float64")})
    rows = pd.DataFrame({"config": ["a", "b"], "value": [1.0, 2.0]})
    assert tidy_diff({"windows": empty}, {"windows": empty.copy()}) == {}
    gone = tidy_diff({"windows": rows}, {"windows": empty})
    assert list(gone["windows"]) == ["config", "value"] and gone["windows"]["value"].tolist() == [True, True]
    came = tidy_diff({"windows": empty}, {"windows": rows})
    assert came["windows"]["value"].tolist() == [True, True]


def test_a_move_a_page_stops_on_gives_way_to_the_next_move(tmp_path):
    """Strix Halo's server_run moved to two clients made the H100 page stop (its contract wants
    one client for that run), which read as 1,643 places moved and unmarked; the check tries the
    next move the generator accepts instead, and says which it passed over. (The generator and
    the pages are stood in for here: the real case takes minutes.)"""
    class Stand(marks_check.Check):
        def __init__(self):
            self.tmp, self.pages, self.tried, self.leaves = tmp_path, True, [], False

        def _base_tables(self, folder):
            return {}

        def _moved(self, folder, choice, value, verdict, reshaped=3, skip=(), further=False):
            verdict.moved_to = next(m for m in (2, 3, 4) if m not in skip)
            self.tried.append(verdict.moved_to)
            (tmp_path / "w" / "data").mkdir(parents=True, exist_ok=True)
            return tmp_path / "w" / "data"

        def _compare(self, folder, choice, moved_data, verdict):
            stops = verdict.moved_to == 2
            verdict.moved = {("h100", "error")} if stops else {("strix", 1)}
            verdict.shown = {("h100", "error"): (None, "StudyError: one client") if stops else (None, None),
                             ("strix", 1): ("1", "2")}
            verdict.marked = {("strix", 1)}

    check = Stand()
    verdict = check.choice("strix-halo-baseline", "server_run")
    assert check.tried == [2, 3] and verdict.moved_to == 3 and verdict.ok
    assert verdict.refused == [(2, "h100")]


def test_a_marked_place_one_move_leaves_is_tried_with_further_moves():
    """One move shows what rests on a choice, not what does not: Strix Halo's losing_ratios moved
    by a tenth alike left every build's rank as it was. While marked places have not moved, further moves
    are tried; a place any of them moves counts as moved (and must carry the mark), a place
    none moves stays "marked, not moved". (Stand-ins as above: the real case takes minutes.)"""
    class Stand(marks_check.Check):
        def __init__(self, tmp):
            self.tmp, self.pages, self.tried, self.leaves = tmp, True, [], False

        def _base_tables(self, folder):
            return {}

        def _moved(self, folder, choice, value, verdict, reshaped=3, skip=(), further=False):
            verdict.moved_to = next((m for m in (1.1, 0.9, 1.3, 2.0, 3.0) if m not in skip), None)
            if verdict.moved_to is None:  # no move left that the generator accepts
                return None
            self.tried.append(verdict.moved_to)
            (self.tmp / "w" / "data").mkdir(parents=True, exist_ok=True)
            return self.tmp / "w" / "data"

        def _compare(self, folder, choice, moved_data, verdict):
            places = {("strix", "small"): 1.05, ("strix", "large"): 1.25, ("strix", "never"): 99}
            verdict.moved = {p for p, at in places.items() if abs(verdict.moved_to - 1) > at - 1}
            verdict.shown = {p: ("before", "after") for p in places}
            verdict.marked = {("strix", "small"), ("strix", "large"), ("strix", "never")}
            import pandas as pd  # a larger move reaches cells the first did not
            verdict.tidy = {"llama_bench": {"avg_ts" if verdict.moved_to < 1.2 else "test_time": pd.Series([True])}}
            if verdict.moved_to == 2.0:  # this move stops the page: every place of it reads as moved
                verdict.moved = {*places, ("strix", "error")}
                verdict.shown[("strix", "error")] = (None, "StudyError: refused")
                verdict.tidy = {"llama_bench": {"n_samples": pd.Series([True])}}

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        check = Stand(Path(tmp))
        verdict = check.choice("strix-halo-baseline", "losing_ratios")
    assert check.tried == [1.1, 0.9, 1.3, 2.0, 3.0] and verdict.moved_to == 1.1  # every further move left
    assert verdict.moved == {("strix", "small"), ("strix", "large")}
    assert verdict.also == [(0.9, 0), (1.3, 1), (2.0, 0), (3.0, 0)]  # the page 2.0 stopped counts for nothing
    assert verdict.unmoved == {("strix", "never")} and not verdict.ok
    # where it lands is where any move the pages read landed (not the stopped one's cells)
    # (llama_bench is a table of sorted rates: the stand-in moved none of their positions)
    assert verdict.landing == {"columns": ["llama_bench.avg_ts", "llama_bench.test_time"], "sorted": {}}
    out = io.StringIO()
    marks_check.report(verdict, out)
    assert "the move to 1.3 moved 1 more" in out.getvalue()


def test_a_number_moved_alone_for_the_tidy_tables_is_still_a_further_move_for_the_pages(monkeypatch):
    """make marks: each number of the 3090 tool logs' choice was moved alone for the landing
    (tidy tables only) and then skipped as a further move, so no page ever saw the 27B's burst
    moved and the recovery row resting on it stayed "marked, not moved"."""
    class Stand(marks_check.Check):
        def __init__(self, tmp):
            self.tmp, self.pages, self.leaves, self.paged = tmp, True, True, []

        def _base_tables(self, folder):
            return {}

        def _generated(self, folder, choice, candidate, errors):
            (self.tmp / "g" / "data").mkdir(parents=True, exist_ok=True)
            return self.tmp / "g" / "data"

        def _moved(self, folder, choice, value, verdict, reshaped=3, skip=(), further=False):
            verdict.moved_to = next((m for m in marks_check.moves(value, further=further) if m not in skip), None)
            if verdict.moved_to is None:
                return None
            (self.tmp / "w" / "data").mkdir(parents=True, exist_ok=True)
            return self.tmp / "w" / "data"

        def _compare(self, folder, choice, moved_data, verdict):
            self.paged.append(verdict.moved_to)
            verdict.moved, verdict.shown = set(), {("p", "row"): ("a", "a")}
            verdict.marked = {("p", "row")}  # never moves: every further move is tried

    import tempfile
    from pathlib import Path

    monkeypatch.setattr(marks_check, "ingest_study", lambda root: type("D", (), {"tables": {}})())
    monkeypatch.setattr(marks_check, "load_assumptions",
                        lambda root: [type("A", (), {"id": "c", "value": {"a": [2, 3], "b": [1]}})()])
    with tempfile.TemporaryDirectory() as tmp:
        check = Stand(Path(tmp))
        check.choice("3090-dense-vs-sparse", "c")
    assert {"a": [2, 3], "b": [2]} in check.paged  # the burst of one moved alone reached the pages


def test_a_fraction_moved_in_its_tenth_significant_digit_is_rounding_not_a_move():
    """Regenerating Strix Halo with `rep_cv` moved the winning pp512 mean from 1387.740928 to
    1387.740929 (its repetitions are written rounded), which marked every best-of figure with a
    choice that cannot move it. Such noise is no move; whole numbers (a counter of 2.2e9 moved by
    one) and a start time moved by 50 ms still are."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["a", "b"], "avg_ts": [1387.740928, 51.268505],
                         "tokens": [2217400000.0, 5.0], "start_s": [423705.136, 1.5]})
    moved = base.assign(avg_ts=[1387.740929, 51.268505], tokens=[2217400001.0, 5.0], start_s=[423705.186, 1.5])
    found = tidy_diff({"runs": base}, {"runs": moved})["runs"]
    assert set(found) == {"tokens", "start_s"} and found["tokens"].tolist() == [True, False]


def test_a_rate_written_as_a_whole_number_or_not_is_rounding_and_a_clock_moved_by_a_gap_is_a_move():
    """Placed at its printed value, Strix Halo's winning pp512 rate regenerates as 1387.999999 or
    1388.0 (six decimals of rounded repetitions): one side whole is still rounding. A request's
    start near 106,936 s moved by a tenth of a 2.1 ms client gap is two billionths of the clock,
    but a move: the column's own range (20 s) is the scale, not the clock's offset."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["a", "b", "c"], "avg_ts": [1387.999999, 51.3, 1165.92],
                         "start_s": [106936.00731, 106946.1, 106956.2]})
    moved = base.assign(avg_ts=[1388.0, 51.3, 1165.92], start_s=[106936.00731, 106946.10021, 106956.2])
    found = tidy_diff({"runs": base}, {"runs": moved})["runs"]
    assert set(found) == {"start_s"} and found["start_s"].tolist() == [False, True, False]


def test_a_page_place_moved_only_in_a_sum_s_last_bit_has_not_moved():
    """make marks: the H100 page glues its top throughput at full precision and its chart carries
    every point's value; regenerated with a client gap moved, 929.10233526592 came back as
    929.1023352659203 (the order of a sum), which no reader sees. Texts whose fractions agree to
    a hundred-millionth are alike; a printed digit or a word that moved is a move."""
    assert marks_check.same_text("929.10233526592", "929.1023352659203")
    assert marks_check.same_text('{"y": [1.5, 929.10233526592]}', '{"y": [1.5, 929.1023352659203]}')
    assert not marks_check.same_text("12.4×", "12.3×") and not marks_check.same_text("5,044 ms", "5,042 ms")
    assert not marks_check.same_text("holds", "does not hold") and not marks_check.same_text(None, "1.0")


def test_further_moves_start_with_the_least_like_the_first():
    """Scaling every losing build's ratio alike never changes which build is slowest (Strix
    Halo's `losing_ratios`); the further moves start with the largest scales (a margin such as
    the client-idle caveat's 5 % line is crossed only far away), a rotation and one number at a
    time, which do."""
    value = {"pp512": {"vulkan": 0.84, "rocm": 0.92}}
    first, further = marks_check.moves(value), marks_check.moves(value, further=True)
    far = [marks_check._scaled(value, f) for f in marks_check.FAR]
    assert sorted(map(str, first + far)) == sorted(map(str, further))  # the same moves and far ones
    assert further[:3] == [{"pp512": {"vulkan": 0.84 * s, "rocm": 0.92 * s}} for s in (1.3, 2.0, 0.5)]
    slowest = [min(m["pp512"], key=m["pp512"].get) for m in further[:6]]
    assert "rocm" in slowest  # one of the first few makes another build the slowest


def test_a_name_of_a_choice_is_moved_to_another_name_it_holds():
    """make marks: rotating Strix Halo's winners still had two builds win the two tests, so the
    note that says so never moved though it rests on them; one name replaced by the other makes one
    build win both."""
    value = {"pp512": "rocm", "tg128": "vulkan"}
    found = marks_check.moves(value, further=True)
    assert {"pp512": "vulkan", "tg128": "vulkan"} in found and {"pp512": "rocm", "tg128": "rocm"} in found
    logs = {"a": {"model": "m1", "date": "2026-04-24"}, "b": {"model": "m2", "date": "2026-04-14"}}
    moved = marks_check.moves(logs, further=True)
    assert {**logs, "a": {"model": "m2", "date": "2026-04-24"}} in moved
    assert not any(m["a"]["model"].startswith("2026") for m in moved if isinstance(m, dict) and "a" in m)


def test_further_moves_move_every_number_of_a_choice_of_many_on_its_own():
    """make marks: the 3090 `runs` choice holds 20 numbers (five runs' lengths, counts and
    concurrency); the first twelve moved alone never reached the prefill run, so the marks on its
    rate stayed unproven. Further moves reach every number, and the check tries one more move per
    number."""
    value = {f"run{i}": {"input_len": 64 + i, "num_prompts": 20 + i} for i in range(10)}
    further = marks_check.moves(value, further=True)
    for i in range(10):
        for key in ("input_len", "num_prompts"):
            alone = [m for m in further if m[f"run{i}"][key] != value[f"run{i}"][key]
                     and all(m[k] == v for k, v in value.items() if k != f"run{i}")]
            assert alone, (i, key)


def test_the_further_moves_a_check_tries_move_every_number_once_before_any_twice():
    """make marks: the 3090 tool logs' choice holds twelve numbers; the budget of further moves
    ran out on the first model's second moves, and the 27B's one-denial bursts never moved,
    so the recovery row resting on them stayed "marked, not moved"."""
    value = {"a": {"burst": [2, 3, 3, 4], "complete": 0, "partial": 2}, "b": {"burst": [1], "complete": 5},
             "c": {"burst": [1, 1, 2], "complete": 3}}
    leaves = len(list(marks_check._leaves(value)))
    tried = marks_check.moves(value, further=True)[:6 + len(marks_check.FAR) + leaves]
    assert any(m["b"]["burst"] != [1] and m["a"] == value["a"] and m["c"] == value["c"] for m in tried)
    base = dict(marks_check._leaves(value))
    for path in base:  # each number is moved on its own by some move tried
        assert any({p for p, x in marks_check._leaves(m) if x != base.get(p)} == {path} for m in tried), path


def test_a_glued_value_counts_only_where_prose_the_page_keeps_pastes_it():
    """make marks: the H100 opening's "9 fixed-concurrency runs, 3 single-stream runs" moved with
    the prefill run's concurrency, unmarked; but it is pasted only by prose about another setup,
    which the build drops on the write-up's own. A glued value is a place where kept prose pastes
    it, as a role or as a figure or Markdown block, with each format it is pasted with."""
    import nbformat

    from tools.marks_page import glue_formats

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("On {glue:text}`data_runs` and {glue:text}`rate:,.0f` t/s.",
                                      metadata={"tags": ["needs-other-setup"]}),
        nbformat.v4.new_markdown_cell("```{glue:figure} fig_speed\n:name: x\n```\n\n{glue:text}`rate:.1f`"),
        nbformat.v4.new_markdown_cell("```{glue:md} findings_md\n```"),
        nbformat.v4.new_code_cell("{glue:text}`not_prose`"),
    ])
    kept = glue_formats(nb, {"other-setup"})
    assert kept == {"fig_speed": ("",), "rate": (".1f",), "findings_md": ("",)}
    assert glue_formats(nb)["rate"] == (",.0f", ".1f") and "data_runs" in glue_formats(nb)


def test_a_request_s_place_moves_when_its_run_gains_or_loses_requests():
    """make marks: ten prompts per client more took an H100 bench file from 81 records read to 89,
    and the ingest report printed the count unmarked: the requests matched by name, so no cell
    had moved. A request's index names it and its place in the run; when the run's count of
    requests changes, the index of every request of that run moved, and only of that run."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"run_id": ["r1"] * 3 + ["r2"] * 2, "request_index": [0, 1, 2, 0, 1],
                         "ttft_s": [0.1, 0.2, 0.3, 0.4, 0.5]})
    moved = pd.DataFrame({"run_id": ["r1"] * 4 + ["r2"] * 2, "request_index": [0, 1, 2, 3, 0, 1],
                          "ttft_s": [0.1, 0.2, 0.3, 0.35, 0.4, 0.5]})
    found = tidy_diff({"requests": base}, {"requests": moved})["requests"]
    assert list(found) == ["request_index"] and found["request_index"].tolist() == [True, True, True, False, False]


def test_a_log_s_lines_move_when_lines_come_to_its_end():
    """make marks: a longer 3090 run added six samples at the end of its GPU log (740 lines read to
    746) and moved no earlier line, so no cell moved and the ingest report's count moved unmarked.
    A row's line moves when its file gains or loses rows, and only in that file."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["d"] * 3 + ["m"] * 2, "source_file": ["a.csv"] * 3 + ["b.csv"] * 2,
                         "line": [2, 3, 4, 2, 3], "power_draw_w": [100.0, 110.0, 120.0, 90.0, 95.0]})
    moved = pd.concat([base, pd.DataFrame({"config": ["d"], "source_file": ["a.csv"], "line": [5],
                                           "power_draw_w": [125.0]})], ignore_index=True)
    found = tidy_diff({"gpu_samples": base}, {"gpu_samples": moved})["gpu_samples"]
    assert list(found) == ["line"] and found["line"].tolist() == [True, True, True, False, False]


def test_a_request_that_went_away_moved_in_its_own_values_not_in_its_configuration_s():
    """make marks: one prompt fewer took a Strix Halo request away, and every cell of it read as
    moved, its engine and serve arguments too, which then marked the configuration tables. A row
    without a match moved in the cells its run does not hold alike."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["s"] * 3, "name": ["srv"] * 3, "request_index": [0, 1, 2],
                         "engine": ["llama.cpp b9187"] * 3, "ttft_s": [0.7, 0.8, 0.9]})
    found = tidy_diff({"requests": base}, {"requests": base.iloc[:2]})["requests"]
    assert set(found) == {"request_index", "ttft_s"} and found["ttft_s"].tolist() == [False, False, True]


def test_a_run_renamed_by_its_file_is_matched_by_its_configuration_and_name():
    """make marks: a bench run's id is its file's name, which carries its concurrency and time;
    moving Strix Halo's server run renamed every request, so every cell of them, the engine's
    name too, read as moved. Rows are matched by configuration, name and request index where
    those tell them apart; the run id counts only where they do not (a build's two tests)."""
    import pandas as pd

    from tools.marks_tidy import tidy_diff

    base = pd.DataFrame({"config": ["s"] * 2, "name": ["srv"] * 2, "run_id": ["c1-1200.json#0"] * 2,
                         "request_index": [0, 1], "engine": ["b9187"] * 2, "ttft_s": [0.43, 0.44]})
    moved = base.assign(run_id=["c2-1201.json#0"] * 2, ttft_s=[0.43, 0.45])
    found = tidy_diff({"requests": base}, {"requests": moved})["requests"]
    assert set(found) == {"run_id", "ttft_s"} and found["ttft_s"].tolist() == [False, True]
    more = pd.concat([moved, moved.iloc[[1]].assign(request_index=2)], ignore_index=True)
    assert set(tidy_diff({"requests": base}, {"requests": more})["requests"]) == {"run_id", "ttft_s", "request_index"}
    tests = pd.DataFrame({"config": ["b", "b"], "name": ["b", "b"], "run_id": ["b:0", "b:1"], "avg_ts": [1388.0, 54.0]})
    swapped = tests.iloc[::-1].reset_index(drop=True)  # the same rows read in another order
    assert tidy_diff({"llama_bench": tests}, {"llama_bench": swapped}) == {}


def test_a_choice_of_several_numbers_lands_where_any_of_them_moved_alone_lands():
    """make marks: the H100 prefill run's first accepted move changed only its concurrency, so
    its landing lost the prompt and answer lengths that the one-request table prints (they moved
    there, unmarked). Each number is moved on its own too, and a cell any move moved is covered."""
    import pandas as pd

    value = {"concurrency": 1, "input_len": 512, "output_len": 1}
    groups = marks_check._per_leaf(value)
    assert [g[0] for g in groups] == [{"concurrency": 2, "input_len": 512, "output_len": 1},
                                      {"concurrency": 1, "input_len": 563, "output_len": 1},
                                      {"concurrency": 1, "input_len": 512, "output_len": 2}]
    assert marks_check._per_leaf(0.03) == []
    first = {"runs": {"concurrency": pd.Series([True, False])}}
    alone = {"runs": {"concurrency": pd.Series([False, True]), "input_len": pd.Series([True, False])}}
    both = marks_check.merged(first, alone)
    assert both["runs"]["concurrency"].tolist() == [True, True] and both["runs"]["input_len"].tolist() == [True, False]
    assert first["runs"]["concurrency"].tolist() == [True, False]  # the first comparison is left as it was


def test_a_figure_is_compared_by_what_it_draws_in_full():
    """A figure's place is every number and word it draws: a point moved in its fifth digit moved
    (it rests on what moved it, below a pixel or not), the same data redrawn has not."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tools.marks_page import figure_data

    def place(ys, label="aggregate t/s") -> str:
        fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
        ax.plot([1, 4, 8, 16, 32], ys, marker="o", label=label)
        ax.bar([1, 2], [ys[0], ys[1]])
        ax.legend()
        ax.set_ylim(0, 2400)
        try:
            return figure_data(fig)
        finally:
            plt.close(fig)

    base = [75.0, 290.0, 440.9, 1653.5, 2229.27]
    assert "2229.27" in place(base) and "aggregate t/s" in place(base)
    assert marks_check.same_text(place(base), place(list(base)))
    assert not marks_check.same_text(place(base), place([*base[:4], 2229.2701]))
    assert not marks_check.same_text(place(base), place([76.0, *base[1:]]))  # a bar moved too
    assert not marks_check.same_text(place(base), place(base, "per request t/s"))


def test_a_claim_moves_when_its_recomputed_value_does_even_where_its_verdict_holds_by_a_margin():
    """make marks: Strix Halo's server spread moved the recomputed P99 of a bound claim below the
    write-up's digits ("742 ms"), and its verdict, which holds 1.9× over, never flips; the ledger
    marks both with what the value rests on. The row's difference shows the value in full, so
    when it moved, the row's value, verdict and note moved with it; another row's did not."""
    page = ("strix", 83, "cell", 0)
    places = {(*page, row, col): ("x", ()) for row in (14, 15) for col in ("recomputed", "difference", "verdict",
                                                                           "note", "claim")}
    moved = {(*page, 14, "difference")}
    assert marks_check.claims_moved(moved, places) == {(*page, 14, c) for c in ("recomputed", "verdict", "note")}
    assert marks_check.claims_moved(set(), places) == set()
    # a bound has no difference: its note says how far it holds, in full
    assert marks_check.claims_moved({(*page, 15, "note")}, places) == {(*page, 15, c) for c in marks_check.CLAIM_PARTS}


def test_a_comparison_s_verdict_moves_with_the_delta_and_spread_it_decides_on():
    """make marks: GB10's "within noise" rests on the row's Δ and seed spread, which a seed
    spread move moved; the verdict, with a margin, did not flip and read "marked, not moved"."""
    page = ("gb10", 87, "cell", 0)
    places = {(*page, row, col): ("x", ()) for row in (1, 2) for col in ("Δ", "seed spread", "verdict", "metric")}
    assert marks_check.claims_moved({(*page, 1, "seed spread")}, places) == {(*page, 1, "verdict")}
    assert marks_check.claims_moved({(*page, 2, "metric")}, places) == set()


def test_a_page_s_counts_of_verdicts_move_with_its_ledger_rows():
    """make marks: a Strix Halo server-run move turned a claim from holds to does not hold; the
    counts "38 hold, 6 do not" moved with it. They count as moved when a ledger row of the page
    moved, and carry what the page's claims rest on (claims.ledger_glue)."""
    ledger = ("strix", 83, "cell", 0)
    places = {(*ledger, 3, "difference"): ("x", ()), ("strix", 41, "glue", "claims_holds"): ("38", ()),
              ("strix", 40, "glue", "claims_total"): ("44", ()), ("h100", 41, "glue", "claims_holds"): ("20", ())}
    found = marks_check.claims_moved({(*ledger, 3, "difference")}, places)
    assert ("strix", 41, "glue", "claims_holds") in found
    assert ("strix", 40, "glue", "claims_total") not in found and ("h100", 41, "glue", "claims_holds") not in found
    assert marks_check.claims_moved(set(), places) == set()


def test_the_counts_of_verdicts_carry_what_the_claims_rest_on():
    import pandas as pd

    from benchbook.ledger.claims import ledger_glue

    ledger = pd.DataFrame({"id": ["a", "b", "c"], "verdict": ["holds", "holds", "does not hold"]})
    g = ledger_glue(ledger, None, {"a": ("x",), "c": ("y",)})
    assert g["claims_holds"] == 2 and g.assumed["claims_holds"] == ("x", "y")
    assert "claims_total" not in g.assumed


def test_a_caveat_a_move_brings_in_is_judged_by_its_own_marks_and_shifts_no_other():
    """make marks: moving the 3090 P99/median TTFT ratio made the client-idle caveat hold; the
    caveats after it, keyed by their line, all read as moved and unmarked, and the new one had no
    base place to carry a mark. Caveats are keyed by their label, and a place that came with the
    move is marked where it now stands."""
    from tools.marks_page import markdown_places

    base = "- **data rule: unlike-models**: a\n- **data rule: kv-arithmetic**: b\n"
    moved = "- **data rule: client-idle**: Assumed, c ᵃ\n" + base
    before, after = markdown_places(base), markdown_places(moved)
    assert before.keys() < after.keys() and all(before[k] == after[k] for k in before)
    page = "3090-dense-vs-sparse"
    before = {(page, *k): v for k, v in before.items()}
    after = {(page, *k): (t, ("ttft_p99_ratio",) if "client-idle" in t else ()) for k, (t, _) in after.items()}
    marked = marks_check.marked_places(before, after, page, "ttft_p99_ratio", {page})
    assert marked == {(page, "item", "data rule: client-idle", 0)}


def test_where_a_move_deals_values_to_other_requests_only_the_sorted_positions_that_moved_count():
    """A move that swaps two requests' latencies and stretches the slowest moves three cells but
    one position of the run's sorted values; a run that lost a request moved every position."""
    import pandas as pd

    from tools.marks_tidy import ALL, landing, sorted_diff

    def requests(ttft: list, run="c4") -> pd.DataFrame:
        n = len(ttft)
        return pd.DataFrame({"name": [run] * n, "request_index": range(n), "ok": [True] * n, "ttft_s": ttft,
                             "output_tokens": [100] * n, "e2el_s": [2.0] * n, "tpot_s": [0.02] * n})

    base = {"requests": requests([0.10, 0.20, 0.30, 0.40])}
    moved = {"requests": requests([0.20, 0.10, 0.30, 0.45])}
    found = sorted_diff(base, moved)
    assert found == {"requests.ttft_s": {"c4": frozenset({3})}}
    cells = {"requests": {"ttft_s": pd.Series([True, True, False, True])}}
    assert landing(base, cells, found)["sorted"] == {"requests.ttft_s": {"c4": "3"}}
    fewer = {"requests": requests([0.10, 0.20, 0.30])}
    assert sorted_diff(base, fewer)["requests.ttft_s"] == {"c4": ALL}

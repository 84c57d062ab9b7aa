"""The raised 'ᵃ' stays with its value, and a page part's legends merge into one."""

from __future__ import annotations

from benchbook.study import marks

WHY = {"tails": "chosen: no P99 published", "draw": "chosen: the draw of the power sweep"}


def test_the_marker_shares_a_no_wrap_span_with_its_value_s_last_word():
    out = marks.marked_html("1.2% (s42) / 0.8% (s12)", ["tails"], WHY)
    assert out.startswith('1.2% (s42) / 0.8% <span class="benchbook-marked">(s12)<span class="benchbook-assumed-mark"')
    assert out.endswith("ᵃ</span></span>")
    short = marks.marked_html("8.2×", ["tails"], WHY)
    assert short.startswith('<span class="benchbook-marked">8.2×<span class="benchbook-assumed-mark"')


def test_a_value_ending_in_markup_keeps_its_markup_and_a_word_joiner_holds_the_marker():
    link = '<a href="#claim-x">does not hold</a>'
    out = marks.marked_html(link, ["tails"], WHY)
    assert out.startswith(link + "\u2060<span class=\"benchbook-assumed-mark\"")
    code = marks.marked_html("see `a b`", ["tails"], WHY)  # a code span split at its space would break
    assert code.startswith("see `a b`\u2060<span")
    # a glue role may paste a whole phrase: a no-wrap span around it would run past a phone's edge
    glued = marks.marked_html("{glue:text}`gb10_control_verdict`", ["tails"], WHY)
    assert glued.startswith("{glue:text}`gb10_control_verdict`\u2060<span") and "benchbook-marked" not in glued


def test_a_value_without_assumptions_is_left_as_it_is():
    assert marks.marked_html("8.2×", (), WHY) == "8.2×"


def test_legends_are_taken_out_and_merged_each_assumption_once():
    text = ("<table>…</table>" + marks.legend_html(["tails"], WHY) + "\n\nProse."
            + "\n\n" + marks.legend_html(["draw", "tails"], WHY))
    items = marks.legend_items(text)
    rest = marks.replace_legends(text)
    assert "benchbook-assumed-legend" not in rest and rest.startswith("<table>…</table>") and "Prose." in rest
    merged = marks.merge_legends(items)
    one = marks.replace_legends(text, merged)  # the first legend's place holds the merged one
    assert one.count("benchbook-assumed-legend") == 1 and one.index("benchbook-assumed-legend") < one.index("Prose.")
    assert merged.count('class="benchbook-assumed-legend"') == 1
    assert merged.count("<code>tails</code>") == 1 and merged.count("<code>draw</code>") == 1
    assert merged.index("<code>tails</code>") < merged.index("<code>draw</code>")  # first seen first
    assert marks.merge_legends([]) == ""


def test_a_marker_is_short_and_names_its_choices_in_its_title():
    """A page marks hundreds of values: the marker carries only the ids (the legend says why),
    so a marked page stays light on a phone; title_ids reads them back."""
    from benchbook.study.marks import marker_html, title_ids

    mark = marker_html(("a", "strix-halo-baseline/winners", "a"), {"a": "a long reason " * 20})
    assert mark == '<span class="benchbook-assumed-mark" title="assumed: a; strix-halo-baseline/winners">ᵃ</span>'
    assert title_ids("assumed: a; strix-halo-baseline/winners") == ("a", "strix-halo-baseline/winners")


def test_frames_computed_from_a_marked_frame_share_its_marks_instead_of_copying_them():
    """pandas deep-copies attrs on every operation; a page's marks are large and never changed
    in place, so every derived frame shares them (this cost the synthesis a third of its run)."""
    import pandas as pd

    df = marks.with_marks(pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}), {"a": {0: ("y", "x")}}, {"x": "", "y": ""})
    derived = df.copy(deep=True)[["a"]].head(1)
    assert derived.attrs[marks.MARKS] is df.attrs[marks.MARKS] and derived.attrs[marks.WHY] is df.attrs[marks.WHY]
    assert marks.cell_ids(derived) == {(0, "a"): ("x", "y")}

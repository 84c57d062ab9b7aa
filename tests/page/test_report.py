import re
from pathlib import Path

import pandas as pd
import pytest

from benchbook.format import fmt_args
from benchbook.page import report
from benchbook.page.report import html


def test_cells_are_escaped_but_markup_columns_are_kept():
    df = pd.DataFrame({"command": ["cat <<EOF | python"], "link": ['<a href="x.html">x</a>']})
    out = html(df, "Calls", markup=("link",)).data
    assert "cat &lt;&lt;EOF | python" in out
    assert '<a href="x.html">x</a>' in out
    assert "<caption>Calls</caption>" in out or "Calls</caption>" in out


def test_serve_args_are_redacted():
    assert "sk-" not in fmt_args({"api_key": "sk-abcdefghijklmnopqrstu", "port": 8000})
    assert "[REDACTED" in fmt_args("--api-key s3cret-value --port 8000")


def _page(own, read):
    """What comparability_note reads of a chapter's results: its own and a cross-read setup."""
    from types import SimpleNamespace

    from benchbook.ledger.comparable import compare_setup

    setup = {"candidate": {"model": "Qwen3.6-35B-A3B", "quantisation": "FP8"}}
    read_setup = {"backend": {"model": "Qwen3.6-35B-A3B", "quantisation": "Q8_0"}}
    return SimpleNamespace(
        spec=SimpleNamespace(id="h100"), data=SimpleNamespace(study=SimpleNamespace(reconstructed=False)),
        comparability=compare_setup(setup, {"c": {"model": own}}, {"c": "candidate"}),
        read_setups={"strix_data_dir": compare_setup(read_setup, {"b": {"model": read}}, {"b": "backend"})},
        reads={"strix_data_dir": SimpleNamespace(study=SimpleNamespace(id="strix"))},
        kept_apart=lambda param: None)  # both folders of one kind (pipeline.ChapterResults.kept_apart)


def test_the_setup_note_says_whether_all_or_part_of_the_data_is_another_setup():
    from benchbook.page.report import comparability_note

    same, other = "Qwen/Qwen3.6-35B-A3B-FP8", "gpt-oss-20b-F16.gguf"
    assert "independent replication" in comparability_note(_page(same, "Qwen3.6-35B-A3B-Q8_0.gguf"))
    part = comparability_note(_page(same, other))
    assert "Partly not the write-up's setup" in part and "checked as usual" in part
    assert "gpt-oss-20b" in part and "caveats are left out" not in part  # its own setup is the write-up's
    whole = comparability_note(_page("Qwen/Qwen3-30B-A3B-FP8", other))
    assert whole.startswith(":::{admonition} Not the write-up's setup") and "Qwen3-30B-A3B" in whole


def test_a_collapsed_table_says_what_it_is_and_how_many_rows_it_folds():
    df = pd.DataFrame({"run": ["a", "b", "c"], "tps": [1.0, 2.0, 3.0]})
    out = html(df, "Runs <and files>", collapsed=True).data
    assert out.startswith('<details class="benchbook-details"><summary>Runs &lt;and files&gt; ')
    assert "(3 rows)</span></summary>" in out and "<caption>" not in out
    assert "<details" not in html(df, "Runs").data
    assert "(1 row)" in html(df.head(1), "Runs", collapsed=True).data


def test_a_long_table_is_folded_with_its_caption_and_a_line_that_says_how_long():
    """Over FOLD_ROWS rows a table is folded unless told otherwise; the ledger (filterable:
    searched, filtered, linked to) is not; the caption stays inside the fold for readers
    and tools, the summary line says what the table is and how many rows it holds."""
    from benchbook.page.report import FOLD_ROWS

    df = pd.DataFrame({"test": [f"pp{2 ** i}" for i in range(FOLD_ROWS + 1)], "tps": range(FOLD_ROWS + 1)})
    out = html(df, "Every run").data
    assert out.startswith('<details class="benchbook-details"><summary>Every run ')
    assert f"({FOLD_ROWS + 1} rows)</span></summary>" in out and "Every run</caption>" in out
    assert "<details" not in html(df.head(FOLD_ROWS), "Every run").data
    assert "<details" not in html(df, "Every run", collapsed=False).data
    assert "<details" not in html(df, "Claims ledger", filterable=True).data


def test_the_ledger_is_filterable_and_each_row_can_be_linked_to():
    from benchbook.page.report import anchor, ledger_table

    ledger = pd.DataFrame({"id": ["dense-gen-ratio", '<img src=x onerror="alert(1)">'], "claim": ["c", "d"],
                           "published": ["1×", "2"], "recomputed": ["1×", "3"],
                           "verdict": ["holds", "does not hold"], "basis": ["measured data", "by construction"],
                           "difference": ["", ""], "tolerance": ["", ""], "kind": ["data", "data"], "note": ["", ""]})
    out = ledger_table(ledger).data
    # the column the note under every ledger explains, beside the verdict it qualifies
    headers = re.findall(r'<th [^>]*class="col_heading[^"]*"[^>]*>([^<]*)</th>', out)
    assert headers[headers.index("verdict") + 1] == "basis"
    assert ">by construction</td>" in out
    assert 'class="benchbook-table benchbook-filterable"' in out
    assert '<span id="claim-dense-gen-ratio">dense-gen-ratio</span>' in out
    assert anchor(ledger["id"][1]) == "claim-img-src-x-onerror-alert-1"
    assert "<img" not in out and "&lt;img src=x" in out


@pytest.mark.slow
def test_downloads_come_as_parquet_too(tmp_path):
    """Every chapter's tidy tables are also in `<bundle>-parquet.zip`: the same rows and
    columns, text as text, numbers as numbers (no formula neutralising: no spreadsheet opens
    Parquet as text)."""
    import io
    import zipfile
    from pathlib import Path

    import polars as pl

    from benchbook.chapters.dense_sparse import analysis as dense_sparse
    from benchbook.chapters.gb10 import analysis as gb10
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.power_sweep import analysis as power_sweep
    from benchbook.chapters.strix import analysis as strix
    from benchbook.page.report import ASSUMED_FLAG, write_downloads
    from benchbook.study import marks

    root = Path(__file__).resolve().parents[2] / "data"
    for mod in (dense_sparse, gb10, h100, power_sweep, strix):
        tables = mod.downloads(mod.analyse(root / mod.STUDY))
        paths = write_downloads(tables, tmp_path / mod.STUDY, "t")
        with zipfile.ZipFile(paths["parquet_zip"]) as zf:
            assert sorted(zf.namelist()) == sorted(f"{name}.parquet" for name in tables)
            for name, df in tables.items():
                got = pl.read_parquet(io.BytesIO(zf.read(f"{name}.parquet")))
                flagged = [ASSUMED_FLAG] if marks.cell_ids(df) else []  # the cells the page marks, named
                assert got.columns == [str(c) for c in df.columns] + flagged and got.height == len(df), \
                    (mod.STUDY, name)
                for col in df.columns:
                    if pd.api.types.is_float_dtype(df[col]):
                        assert got[str(col)].dtype == pl.Float64
                        assert got[str(col)].fill_nan(None).to_list() == [None if pd.isna(v) else v for v in df[col]]
    bad = pd.DataFrame({"name": ["=cmd|' /C calc'!A0"], "n": [1]})
    with zipfile.ZipFile(write_downloads({"bad": bad}, tmp_path / "x", "t")["parquet_zip"]) as zf:
        assert pl.read_parquet(io.BytesIO(zf.read("bad.parquet")))["name"].to_list() == ["=cmd|' /C calc'!A0"]


# ---- marks: what rests on a data generator's choice, cell by cell (benchbook.study.marks) ------

def _sweep() -> pd.DataFrame:
    return pd.DataFrame({"config": ["dense"] * 3 + ["moe"] * 2, "concurrency": [1, 4, 16, 1, 4],
                         "seed": [1, 1, 1, 1, 2],
                         "p99_ttft_s": [0.262, 1.41, 2.9, 0.2, 0.22], "output_tps": [75.0, 259, 900, 230, 240]},
                        index=[7, 8, 9, 10, 11])


def _cells(df, *assumed):
    from benchbook.study.assumptions import assumed_ids
    from benchbook.study.marks import Cells

    return Cells(assumed_ids(df, "runs", list(assumed)), {a.id: a.why for a in assumed})



def _tails():
    from benchbook.study.assumptions import Assumption

    return Assumption("tails", {}, "dense P99 TTFT at c=1 and 4: not published; tails that widen", ("runs.p99_ttft_s",),
                      ((("config", ("dense",)), ("concurrency", (1, 4))),))


def _marked(html_text: str) -> dict:
    """(row, column header) -> the marker's title, for every marked cell of a table."""
    import lxml.html

    doc = lxml.html.fromstring(html_text)
    heads = [th.text_content() for th in doc.iter("th")]
    out = {}
    for i, tr in enumerate(doc.xpath("//tbody/tr")):
        for j, td in enumerate(tr.iter("td")):
            marks = td.find_class("benchbook-assumed-mark")
            if marks:
                assert "benchbook-assumed-cell" in td.get("class")
                out[(i, heads[j])] = marks[0].get("title")
    return out


def test_the_same_tables_give_byte_identical_downloads(tmp_path):
    """A rerun on the same data writes the same bytes: zip members carry a fixed date, not the
    time they were written, and a cell's ids come sorted whatever order they were met in."""
    import zipfile

    from benchbook.page.report import ASSUMED_FLAG, ZIP_DATE, write_downloads
    from benchbook.study import marks

    def tables(order):
        df = pd.DataFrame({"tps": [1.5, 2.5], "name": ["a", "b"]})
        return {"runs": marks.with_marks(df, {"tps": {0: order}}, {"x": "", "y": ""})}

    first = write_downloads(tables(("y", "x")), tmp_path / "one", "t")
    second = write_downloads(tables(("x", "y")), tmp_path / "two", "t")
    for kind in ("zip", "parquet_zip"):
        assert first[kind].read_bytes() == second[kind].read_bytes(), kind
        with zipfile.ZipFile(first[kind]) as zf:
            assert {i.date_time for i in zf.infolist()} == {ZIP_DATE}
    assert pd.read_csv(first["runs"])[ASSUMED_FLAG].fillna("").tolist() == ["tps: x, y", ""]


def test_a_table_built_from_tidy_columns_marks_exactly_the_cells_resting_on_an_assumption():
    from benchbook.format import fmt_seconds
    from benchbook.study.marks import Col, table

    df = _sweep()
    shown = table(df[df["config"] == "dense"], {
        "c": Col("concurrency"), "TTFT p99": Col("p99_ttft_s", fmt_seconds),
        "tokens per TTFT": Col(("output_tps", "p99_ttft_s"), lambda t, s: f"{t * s:.0f}"),  # several cells: any
        "aggregate": Col("output_tps"),
    }, _cells(df, _tails()))
    out = html(shown, "Sweep").data
    marked = _marked(out)
    assert set(marked) == {(0, "TTFT p99"), (1, "TTFT p99"), (0, "tokens per TTFT"), (1, "tokens per TTFT")}
    assert set(marked.values()) == {"assumed: tails"}  # the marker names the choice; its legend says why
    # the value stays, the marker follows it, held to its last word by a no-wrap span
    assert '262.0 <span class="benchbook-marked">ms<span class="benchbook-assumed-mark"' in out
    assert "2.90 s</td>" in out
    legend = out.split("</table>", 1)[1]
    assert legend.count('class="benchbook-assumed-legend"') == 1
    assert "assumed: not in the write-up" in legend and "<code>tails</code> (dense P99 TTFT at c=1 and 4)" in legend


def test_an_aggregate_is_marked_when_any_of_its_cells_is_and_measured_data_never():
    from benchbook.study.marks import NONE, Cells, Col, table

    df = _sweep()
    cells = _cells(df, _tails())
    means = df.groupby("config", sort=False).agg(p99_ttft_s=("p99_ttft_s", "mean"))
    shown = table(means.assign(config=means.index), {"config": Col("config"), "mean P99": Col("p99_ttft_s")},
                  cells.group(df, "config"))
    assert set(_marked(html(shown, "Means").data)) == {(0, "mean P99")}  # dense: two of its three seeds' cells
    for measured in (NONE, Cells()):
        plain = table(df, {"TTFT p99": Col("p99_ttft_s")}, measured)
        out = html(plain, "Measured").data
        assert "benchbook-assumed" not in out and not _marked(out)


def test_a_marked_cell_from_data_stays_escaped():
    from benchbook.study.assumptions import Assumption
    from benchbook.study.marks import Col, table

    df = pd.DataFrame({"config": ["<img src=x onerror=alert(1)>"], "p99_ttft_s": [0.3]})
    a = Assumption("x", 1, "a <b>reason</b>", ("runs.config",))
    out = html(table(df, {"config": Col("config")}, _cells(df, a)), "T").data
    assert "<img" not in out and "&lt;img src=x " in out
    assert 'onerror=alert(1)&gt;<span class="benchbook-assumed-mark"' in out
    assert "<b>reason" not in out and "&lt;b&gt;reason" in out


def test_figure_series_drawn_from_assumed_cells_say_so_in_the_legend_and_interactive_names():
    import matplotlib

    matplotlib.use("Agg")
    from benchbook.page import interactive, plots
    from benchbook.study.marks import tagged

    df = _sweep()
    sweep = tagged(df[df["seed"] == 1].assign(median_ttft_s=0.1, median_tpot_s=0.01, per_agent_tps=1.0,
                                              cost_per_m=1.0), _cells(df, _tails()))
    fig = plots.ttft(sweep)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "dense (P99 partly assumed)" in texts and "moe" in texts  # c=16 was published
    assert set(fig.benchbook_assumed) == {"tails"}
    tput = plots.throughput(sweep)
    assert not hasattr(tput, "benchbook_assumed")
    chart = interactive.lines(sweep.assign(p99=sweep["p99_ttft_s"].map(str)), "concurrency", "output_tps", "config",
                              "t", "x", "y",
                              hover={"p99": "P99"}, reads={"p99": "p99_ttft_s"})
    assert [s["name"] for s in chart.series] == ["dense (partly assumed)", "moe"]
    assert "assumed: not in the write-up: tails" in interactive.tooltip_lines(chart, 0, 0)[-1]
    assert "assumed" not in interactive.tooltip_lines(chart, 0, 2)[-1]
    assert "benchbook-assumed-legend" in interactive.show(chart).data


def test_the_build_marks_glued_numbers_and_figure_captions_resting_on_an_assumption():
    """report.glue puts the ids beside the glued value; the runner marks each reference to
    it in the prose, adds the legend under the paragraph and a line to a figure's caption."""
    import nbformat

    from benchbook.site.runner import _mark_assumed_glue

    def glued(name, ids):
        meta = {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}}
        if ids:
            meta["benchbook"] = {"assumed": [{"id": i, "why": "chosen: no number published"} for i in ids]}
        return nbformat.v4.new_output("display_data", data={"application/papermill.record/text/plain": "1"},
                                      metadata=meta)

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("")
    code.outputs = [glued("p99", ["tails"]), glued("p50", []), glued("fig_ttft", ["tails"]), glued("fig_tpot", [])]
    prose = nbformat.v4.new_markdown_cell("P99 {glue:text}`p99:.2f` s against {glue:text}`p50:.2f` s.")
    plain = nbformat.v4.new_markdown_cell("Only {glue:text}`p50` here.")
    figs = [nbformat.v4.new_markdown_cell(f"```{{glue:figure}} {k}\n:name: {k}\n\nCaption of {k}.\n```")
            for k in ("fig_ttft", "fig_tpot")]
    nb.cells = [code, prose, plain, *figs]
    _mark_assumed_glue(nb)
    # a word joiner holds the marker to the glued value (which may paste a whole phrase; the
    # page's script then puts its last word and the marker in a no-wrap span)
    assert prose.source.startswith('P99 {glue:text}`p99:.2f`\u2060<span class="benchbook-assumed-mark"')
    assert "{glue:text}`p50:.2f` s." in prose.source and prose.source.count("benchbook-assumed-mark") == 2
    assert 'class="benchbook-assumed-legend"' in prose.source and "<code>tails</code> (chosen)" in prose.source
    assert plain.source == "Only {glue:text}`p50` here."
    assert "Caption of fig_ttft.\nᵃ assumed: not in the write-up: series labelled (assumed)" in figs[0].source
    assert figs[0].source.endswith("\n```") and figs[1].source.endswith("Caption of fig_tpot.\n```")


@pytest.mark.slow
def test_key_results_say_when_the_data_fills_none_of_the_chapter_s_analyses(tmp_path):
    """Only serving lines: the 3090 chapter reads a server log for its start-up lines alone,
    so nothing below is this data's result, and the opening box must not say otherwise; the
    power sweep draws its generation by concurrency from the same lines."""
    from benchbook.chapters.dense_sparse import analysis as dense_sparse
    from benchbook.chapters.power_sweep import analysis as power_sweep
    from benchbook.page.report import key_results
    from files import serving_only_folder

    data = Path(__file__).parents[2] / "data"
    r = dense_sparse.analyse(serving_only_folder(tmp_path, "3090-dense-vs-sparse", "dense"),
                             data / "3090-dense-vs-sparse" / "published.yml")
    assert r.sections and all(m is not None for m in r.sections.values())
    box = key_results(r).data
    assert "none of the chapter's analyses can be made from it" in box
    assert "show its own results" not in box

    r = power_sweep.analyse(serving_only_folder(tmp_path, "power-sweep", "model"),
                            data / "power-sweep" / "published.yml")
    assert any(m is None for m in r.sections.values())
    assert "none of the chapter's analyses" not in key_results(r).data


@pytest.mark.slow
def test_a_download_keeps_its_header_when_the_data_has_no_rows_for_it(tmp_path):
    """On a log of serving lines only, several tidy tables have no rows (failure classes
    without tool-call logs, tokens per kW without a power limit, …). Each is still written
    with its columns: a reader of the CSV or Parquet file sees an empty table of known shape,
    not a file without a header."""
    from pathlib import Path

    from benchbook.chapters.dense_sparse import analysis as dense_sparse
    from benchbook.chapters.power_sweep import analysis as power_sweep
    from benchbook.page.report import write_downloads
    from files import serving_only_folder

    data = Path(__file__).parents[2] / "data"
    empty = set()
    for mod, role in ((dense_sparse, "dense"), (power_sweep, "model")):
        r = mod.analyse(serving_only_folder(tmp_path, mod.STUDY, role), data / mod.STUDY / "published.yml")
        tables = mod.downloads(r)
        empty |= {(mod.STUDY, name) for name, df in tables.items() if not len(df)}
        for name, path in write_downloads(tables, tmp_path / "out" / mod.STUDY, "t").items():
            if path.suffix == ".csv":
                header = path.read_text(encoding="utf-8").partition("\n")[0]
                assert header.split(",") == [str(c) for c in tables[name].columns] and header, (mod.STUDY, name)
    assert {("3090-dense-vs-sparse", "failure_classes"), ("power-sweep", "tokens_per_kw")} <= empty


@pytest.mark.slow
def test_the_columns_declared_for_empty_tables_are_those_their_rows_have():
    """The header an empty download gets is the one the same table has with rows."""
    from pathlib import Path

    from benchbook.chapters.dense_sparse import analysis as dense_sparse
    from benchbook.chapters.power_sweep import analysis as power_sweep

    data = Path(__file__).parents[2] / "data"
    ds = dense_sparse.analyse(data / dense_sparse.STUDY)
    assert list(dense_sparse.breakdown(ds).columns) == dense_sparse.BREAKDOWN_COLUMNS
    ps = power_sweep.analyse(data / power_sweep.STUDY)
    assert list(ps.limits.columns) == [*power_sweep.POWER_LIMIT_COLUMNS, "agrees"]
    assert list(power_sweep.concurrency_table(ps, ps.models["config"].iloc[0]).columns) == \
        power_sweep.CONCURRENCY_COLUMNS
    assert list(power_sweep.tokens_per_kw_table(ps).columns) == power_sweep.TOKENS_PER_KW_COLUMNS


def test_the_opening_box_lists_what_the_folder_leaves_open_and_so_off_the_page(tmp_path):
    """A configuration whose role is a to-do, a run without a kind, a failed run and files no
    reader knows are named on the page, so a reader knows what the tables leave out."""
    import yaml

    from bad_corpus import bench
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.page.report import banner, open_items_note
    from benchbook.scaffold.new import new_study
    from benchbook.study.folder import MANIFEST, write_checksums

    data = Path(__file__).parents[2] / "data"
    files = [bench(tmp_path / "in", "a.json", c=1), bench(tmp_path / "in", "b.json", c=4, completed=0, failed=3)]
    (tmp_path / "in" / "notes.txt").write_text("my notes\n")
    out = tmp_path / "out"
    new_study("h100-dense-vs-moe-mtp", out, [tmp_path / "in"], log=lambda m: None)
    r = h100.analyse(out, None, data / "h100-dense-vs-moe-mtp" / "published.yml")
    note = open_items_note(r)
    assert "failed, so not used: raw/b.json (no request completed (of 3 sent))" in note
    assert "1 file(s) given to `benchbook new` that no reader knows" in note
    assert note in banner(r)
    doc = yaml.safe_load((out / MANIFEST).read_text(encoding="utf-8"))
    doc["configs"][next(iter(doc["configs"]))]["role"] = "TODO"
    doc["todo"] = [f"configs.{next(iter(doc['configs']))}.role: set one"]
    (out / MANIFEST).write_text(yaml.safe_dump(doc))
    write_checksums(out)
    assert files and "1 configuration(s) without a role, so not shown" in open_items_note(
        h100.analyse(out, None, data / "h100-dense-vs-moe-mtp" / "published.yml"))


def test_the_basis_note_says_a_data_claim_can_rest_on_the_write_up_s_own_numbers():
    from benchbook.ledger.claims import BY_CONSTRUCTION, FAILS, HOLDS, SELF
    from benchbook.page.report import ledger_basis_note

    def ledger(rows):
        return pd.DataFrame(rows, columns=["kind", "verdict", "basis"])

    checks = ledger([("consistency", FAILS, SELF), ("data", HOLDS, BY_CONSTRUCTION)])
    text = ledger_basis_note(checks).data
    assert "**1** verdicts are checks" in text and "disagreeing with itself" not in text
    assert "**1** hold only because" in text and "agree (or not)" not in text
    text = ledger_basis_note(ledger([("data", FAILS, SELF)])).data
    assert "disagreeing with itself" in text


def test_a_table_sets_numbers_in_the_book_s_style_and_right_aligns_number_columns(tmp_path):
    """Displayed cells get a true minus, no negative zero and '×'; a column of numbers is
    right-aligned in tabular figures, a column of words is not; the CSV keeps the numbers."""
    import lxml.html

    from benchbook.page.report import write_downloads

    df = pd.DataFrame({"config": ["dense", "MoE -1"], "Δ": ["-7.2%", "-0.0%"], "ratio": ["8.2x", "–"],
                       "tokens": [-0.5, 2.0], "verdict": ["holds", "does not hold"]})
    page = lxml.html.fromstring(html(df, "T").data)
    cells = {th.text_content(): [row[j] for row in page.xpath("//tbody/tr")]
             for j, th in enumerate(page.xpath("//thead//th"))}
    assert [td.text_content() for td in cells["Δ"]] == ["\u22127.2%", "0.0%"]
    assert [td.text_content() for td in cells["ratio"]] == ["8.2×", "–"]
    assert cells["tokens"][0].text_content() == "\u22120.5000"
    numeric = {name for name, tds in cells.items() if all("benchbook-num" in td.get("class") for td in tds)}
    assert numeric == {"Δ", "ratio", "tokens"}
    assert not any("benchbook-num" in td.get("class") for td in cells["config"] + cells["verdict"])
    paths = write_downloads({"t": df}, tmp_path, "bundle")
    csv = paths["t"].read_text(encoding="utf-8")
    assert "-0.5" in csv and "-7.2%" in csv and "\u2212" not in csv


def test_a_download_says_which_cells_rest_on_a_generator_s_choice(tmp_path):
    """The page marks a cell with a raised 'ᵃ'; its CSV and Parquet rows name the same choice."""
    import io
    import zipfile

    from benchbook.page.report import ASSUMED_FLAG, write_downloads
    from benchbook.study.marks import with_marks

    df = pd.DataFrame({"config": ["a", "b", "c"], "tps": [1.0, 2.0, 3.0], "ttft": [0.1, 0.2, 0.3]})
    with_marks(df, {"tps": {1: ["h100/mtp_acceptance"]}, "ttft": {1: ["h100/seed"], 2: ["h100/seed"]}},
               {"h100/mtp_acceptance": "MTP", "h100/seed": "seed"})
    paths = write_downloads({"runs": df, "plain": pd.DataFrame({"x": [1]})}, tmp_path, "bundle")
    csv = pd.read_csv(paths["runs"], keep_default_na=False)
    assert list(csv[ASSUMED_FLAG]) == ["", "tps: h100/mtp_acceptance; ttft: h100/seed", "ttft: h100/seed"]
    assert ASSUMED_FLAG not in pd.read_csv(paths["plain"]).columns  # a table resting on no choice: no column
    import polars as pl

    with zipfile.ZipFile(paths["parquet_zip"]) as zf:
        parquet = pl.read_parquet(io.BytesIO(zf.read("runs.parquet")))
    assert parquet[ASSUMED_FLAG].to_list() == list(csv[ASSUMED_FLAG])


def test_every_body_cell_names_its_column_for_the_phone_s_stacked_rows():
    """cell_labels gives each cell of each body row its column's name, in order, whatever the
    Styler writes on the cell (ids only on styled cells; a wide column's class)."""
    df = pd.DataFrame({"claim": ["a long claim that wraps", "b"], "this data": ["2.1×", "3"],
                       "verdict": ["holds", "does not hold"]})
    table = report.cell_labels(report.html(df, None, wide=("claim",)).data, list(df.columns))
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    assert len(rows) == 2
    for row in rows:
        assert re.findall(r'<td data-label="([^"]+)"', row) == ["claim", "this data", "verdict"], row
    assert "data-label" not in table.split("<tbody>")[0]  # the header row keeps its own names
    assert " row0 " not in table and "_row0_col1" not in table  # no position classes or ids on plain cells

import pandas as pd

from benchbook.report import fmt_args, html


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

    from benchbook.comparable import compare_setup

    setup = {"candidate": {"model": "Qwen3.6-35B-A3B", "quantisation": "FP8"}}
    read_setup = {"backend": {"model": "Qwen3.6-35B-A3B", "quantisation": "Q8_0"}}
    return SimpleNamespace(
        spec=SimpleNamespace(id="h100"), data=SimpleNamespace(study=SimpleNamespace(reconstructed=False)),
        comparability=compare_setup(setup, {"c": {"model": own}}, {"c": "candidate"}),
        read_setups={"strix_data_dir": compare_setup(read_setup, {"b": {"model": read}}, {"b": "backend"})},
        reads={"strix_data_dir": SimpleNamespace(study=SimpleNamespace(id="strix"))})


def test_the_setup_note_says_whether_all_or_part_of_the_data_is_another_setup():
    from benchbook.report import comparability_note

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


def test_the_ledger_is_filterable_and_each_row_can_be_linked_to():
    from benchbook.report import anchor, ledger_table

    ledger = pd.DataFrame({"id": ["dense-gen-ratio", '<img src=x onerror="alert(1)">'], "claim": ["c", "d"],
                           "published": ["1×", "2"], "recomputed": ["1×", "3"],
                           "verdict": ["holds", "does not hold"], "difference": ["", ""],
                           "tolerance": ["", ""], "kind": ["data", "data"], "note": ["", ""]})
    out = ledger_table(ledger).data
    assert 'class="benchbook-table benchbook-filterable"' in out
    assert '<span id="claim-dense-gen-ratio">dense-gen-ratio</span>' in out
    assert anchor(ledger["id"][1]) == "claim-img-src-x-onerror-alert-1"
    assert "<img" not in out and "&lt;img src=x" in out


def test_downloads_come_as_parquet_too(tmp_path):
    """Every chapter's tidy tables are also in `<bundle>-parquet.zip`: the same rows and
    columns, text as text, numbers as numbers (no formula neutralising: no spreadsheet opens
    Parquet as text)."""
    import io
    import zipfile
    from pathlib import Path

    import polars as pl

    from benchbook.chapters import dense_sparse, gb10, h100, power_sweep, strix
    from benchbook.report import write_downloads

    root = Path(__file__).resolve().parents[1] / "data"
    for mod in (dense_sparse, gb10, h100, power_sweep, strix):
        tables = mod.downloads(mod.analyse(root / mod.STUDY))
        paths = write_downloads(tables, tmp_path / mod.STUDY, "t")
        with zipfile.ZipFile(paths["parquet_zip"]) as zf:
            assert sorted(zf.namelist()) == sorted(f"{name}.parquet" for name in tables)
            for name, df in tables.items():
                got = pl.read_parquet(io.BytesIO(zf.read(f"{name}.parquet")))
                assert got.columns == [str(c) for c in df.columns] and got.height == len(df), (mod.STUDY, name)
                for col in df.columns:
                    if pd.api.types.is_float_dtype(df[col]):
                        assert got[str(col)].dtype == pl.Float64
                        assert got[str(col)].fill_nan(None).to_list() == [None if pd.isna(v) else v for v in df[col]]
    bad = pd.DataFrame({"name": ["=cmd|' /C calc'!A0"], "n": [1]})
    with zipfile.ZipFile(write_downloads({"bad": bad}, tmp_path / "x", "t")["parquet_zip"]) as zf:
        assert pl.read_parquet(io.BytesIO(zf.read("bad.parquet")))["name"].to_list() == ["=cmd|' /C calc'!A0"]

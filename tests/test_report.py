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

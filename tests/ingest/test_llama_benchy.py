"""llama-benchy reader: every real .md and .log of the DGX Spark harness (checked against a
small parse of the raw lines, not against the reader), and the JSON, CSV, concurrency-1 table
and console forms written here as llama-benchy 0.4.0 writes them (results.py `save_report`,
`_generate_rows`, `_generate_md_report`; __main__.py's banner and footer)."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bad_corpus as corpus
from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import llama_bench as lb
from benchbook.ingest import llama_benchy as lbb
from files import assert_detect_picks_it_for_no_other_format, assert_sniffs_no_other_format, write
from realdata import DGX, LHL, REAL

FOLDERS = ("qwen-3.6-27b/bf16", "qwen-3.6-27b/fp8", "qwen-3.6-35b-a3b/bf16", "qwen-3.6-35b-a3b/fp8",
           "qwen-3.6-35b-a3b/nvfp4")
REAL_FILES = sorted(p for f in FOLDERS for p in (DGX / f).glob("0[1-6]-*") if p.suffix in (".md", ".log"))
ABSENT = pytest.mark.skip(reason="../shared/samples/real is not here")


def real_params(files):
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.parent.name}/{p.name}") for p in files] or \
        [pytest.param(None, marks=ABSENT)]


def table(res):
    return res.tables["llama_benchy"]


# ---------------------------------------------------------------- a tiny independent parse of the raw files

PAIR = re.compile(r"^([\d.]+) ± ([\d.]+)$")
# the table's columns after model and test, in llama-benchy's order, and the reader's column names
CELLS = (("tps_total", 1), ("tps_req", 1), ("peak_tps", 1), ("peak_tps_req", 1),
         ("ttfr_s", 1000), ("est_ppt_s", 1000), ("e2e_ttft_s", 1000))


def raw_rows(text: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every table row: lines `| ...` but the header and separator."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("| ") and not line.startswith("| model "):
            out.append((n, [c.strip() for c in line.strip().strip("|").split("|")]))
    return out


def sd_col(col: str) -> str:
    return col[:-2] + "_sd_s" if col.endswith("_s") else col + "_sd"


# ---------------------------------------------------------------- every real file


def test_the_five_folders_hold_sixty_files():
    if not REAL.is_dir():
        pytest.skip("../shared/samples/real is not here")
    assert len(REAL_FILES) == 60  # 6 tests x (.md, .log) x 5 folders


@pytest.mark.parametrize("path", real_params(REAL_FILES))
def test_real_file_every_row_and_value(path):
    text = path.read_text(encoding="utf-8")
    rows = raw_rows(text)
    res = ingest.read(path)  # detection and the redacting wrapper, as the CLI reads it
    df = table(res)
    assert res.format == "benchy-md" and len(rows) in (2, 6, 24)
    assert res.read == len(df) == len(rows)
    lines = text.split("\n")
    nonblank = [ln for ln in lines if ln.strip()]
    footer = [k for k in range(len(lines) - 1)
              if re.fullmatch(r"llama-benchy \(\S+\)", lines[k]) and lines[k + 1].startswith("date: ")]
    assert len(footer) == 1
    # every other text line is counted: progress lines and a wrapper's or another program's text
    assert res.ignored == len(nonblank) - sum(ln.startswith("|") for ln in nonblank) - 2
    assert set(res.reasons) <= {lbb.PROGRESS, lbb.OTHER}

    assert list(df.line) == [n for n, _ in rows]
    assert list(df.test) == [cells[1] for _, cells in rows]
    assert set(df.model) == {cells[0] for _, cells in rows}
    for k, (n, cells) in enumerate(rows):
        row = df.iloc[k]
        test = cells[1]
        assert row.kind == test[:2] and not row.context_load
        assert row.concurrency == int(re.search(r"\(c(\d+)\)$", test).group(1))
        depth = re.search(r" @ d(\d+) ", test)
        assert row.depth == (int(depth.group(1)) if depth else 0)
        # a tg row is printed right after the pp row of its test: its pp is that row's
        pp_test = test if test.startswith("pp") else rows[k - 1][1][1]
        tg_test = test if test.startswith("tg") else rows[k + 1][1][1]
        assert row.prompt_tokens == int(re.match(r"pp(\d+)", pp_test).group(1))
        assert row.gen_tokens == int(re.match(r"tg(\d+)", tg_test).group(1))
        for (col, scale), cell in zip(CELLS, cells[2:]):
            if not cell:
                assert math.isnan(row[col]) and math.isnan(row[sd_col(col)]), (n, col)
                continue
            mean, sd = PAIR.match(cell).groups()
            assert row[col] == pytest.approx(float(mean) / scale, abs=1e-12), (n, col)
            assert row[sd_col(col)] == pytest.approx(float(sd) / scale, abs=1e-12), (n, col)

    date, mode = re.search(r"^date: (.+?) \| latency mode: (\S+)$", text, re.M).groups()
    version = re.search(r"^llama-benchy \((\S+)\)$", text, re.M).group(1)
    assert set(df.date) == {date} and set(df.latency_mode) == {mode} and set(df.tool_version) == {version}
    if path.suffix == ".md":
        runs = int(re.search(r" --runs (\d+) ", text).group(1))
        command = next(ln for ln in lines if "uvx llama-benchy==" in ln)
        assert set(df.source_kind) == {"results"} and set(df.command) == {command}
        assert df.latency_s.isna().all()
    else:
        runs = int(re.search(r"^  Run \d+/(\d+) ", text, re.M).group(1))
        latency = float(re.search(r"^Average latency \(generation\): ([\d.]+) ms$", text, re.M).group(1))
        assert set(df.source_kind) == {"console"} and df.command.isna().all()
        assert df.latency_s.to_list() == [pytest.approx(latency / 1000)] * len(df)
    assert set(df.runs) == {runs}
    assert any(n.startswith("runs from") for n in res.notes)
    assert any(n.startswith("prompt_tokens of tg rows") for n in res.notes)


def md_log_pairs():
    return real_params([p for p in REAL_FILES if p.suffix == ".md"])


@pytest.mark.parametrize("md", md_log_pairs())
def test_real_md_and_log_of_one_test_hold_the_same_rows(md):
    """The harness's .md is a copy of the table its .log (llama-benchy's console) ends with."""
    log = md.with_suffix(".log")
    assert [ln for ln in md.read_text().split("\n") if ln.startswith("|")] == \
        [ln for ln in log.read_text().split("\n") if ln.startswith("|")]
    a, b = table(lbb.read(md)), table(lbb.read(log))
    differ = ["source_file", "line", "source_kind", "command", "latency_s"]  # where the two files differ
    pd.testing.assert_frame_equal(a.drop(columns=differ), b.drop(columns=differ))
    assert set(a.source_kind) == {"results"} and set(b.source_kind) == {"console"}


@pytest.mark.parametrize("path", real_params([p for p in REAL_FILES if p.name.startswith("05-")][:1]))
def test_real_big_context_several_pp_lengths(path):
    df = table(lbb.read(path))
    tg = df[df.kind == "tg"]
    assert sorted(set(tg.prompt_tokens)) == [4096, 8192, 16384, 25000] and set(tg.gen_tokens) == {256}
    assert list(df.concurrency[:6]) == [1, 1, 5, 5, 10, 10]


@pytest.mark.parametrize("path", real_params([p for p in REAL_FILES if p.name.startswith("04-")][:1]))
def test_real_multi_turn_depth_is_tokens(path):
    """`--depth 4` is 4 tokens of earlier context (config.py: "previous conversation tokens")."""
    df = table(lbb.read(path))
    assert set(df.depth) == {4} and df.test.str.contains(" @ d4 ").all()


@pytest.mark.parametrize("path", real_params(REAL_FILES[:2]))
def test_real_file_gzipped_reads_the_same(path, tmp_path):
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert lbb.sniff(ingest.textio.read_head(gz, 8192).decode(), gz)
    a, b = ingest.read(path), ingest.read(gz)
    assert (a.read, a.ignored, a.format) == (b.read, b.ignored, b.format)
    pd.testing.assert_frame_equal(table(a).drop(columns="source_file"), table(b).drop(columns="source_file"))


@pytest.mark.parametrize("path", real_params(REAL_FILES))
def test_real_files_detected_as_llama_benchy_never_llama_bench(path):
    head = path.read_text(encoding="utf-8")[:8192]
    assert ingest.detect(path) is lbb
    assert not lb.sniff(head, path)
    with pytest.raises(IngestError):
        lb.read(path)


# ---------------------------------------------------------------- a table written here

# _generate_md_report at concurrency > 1 (tabulate "pipe", colalign left then right)
MD = (
    "| model   |          test |     t/s (total) |       t/s (req) |     peak t/s |   peak t/s (req) "
    "|         ttfr (ms) |      est_ppt (ms) |     e2e_ttft (ms) |\n"
    "|:--------|--------------:|----------------:|----------------:|-------------:|-----------------:"
    "|------------------:|------------------:|------------------:|\n"
    "| m-bf16  |   pp4096 (c1) | 1198.06 ± 13.00 | 1198.06 ± 13.00 |              |                  "
    "|   3326.85 ± 34.94 |   3071.27 ± 34.94 |   3326.85 ± 34.94 |\n"
    "| m-bf16  |    tg256 (c1) |     4.53 ± 0.00 |     4.53 ± 0.00 |  5.00 ± 0.00 |      5.00 ± 0.00 "
    "|                   |                   |                   |\n"
    "| m-bf16  |   pp4096 (c5) |  1121.22 ± 1.94 | 439.82 ± 255.40 |              |                  "
    "|  9165.53 ± 454.03 |  8909.96 ± 454.03 |  9165.53 ± 454.03 |\n"
    "| m-bf16  |    tg256 (c5) |    17.57 ± 0.01 |     3.95 ± 0.23 | 25.00 ± 0.00 |      5.00 ± 0.00 "
    "|                   |                   |                   |\n"
    "| m-bf16  |   pp8192 (c1) | 1152.26 ± 14.93 | 1152.26 ± 14.93 |              |                  "
    "|   6709.13 ± 44.95 |   6453.56 ± 44.95 |   6709.13 ± 44.95 |\n"
    "| m-bf16  |    tg256 (c1) |     4.53 ± 0.00 |     4.53 ± 0.00 |  5.00 ± 0.00 |      5.00 ± 0.00 "
    "|                   |                   |                   |\n"
)
FOOTER = "\nllama-benchy (0.4.0)\ndate: 2026-08-14 00:44:33 | latency mode: generation\n"


def test_bare_table_pairs_pp_and_tg_rows_and_says_so(tmp_path):
    res = lbb.read(write(tmp_path, "t.md", MD))
    df = table(res)
    assert (res.format, res.read, res.ignored) == ("benchy-md", 6, 0)
    assert list(df.prompt_tokens) == [4096, 4096, 4096, 4096, 8192, 8192]
    assert list(df.gen_tokens) == [256] * 6 and list(df.line) == [3, 4, 5, 6, 7, 8]
    assert df.tool_version.isna().all() and df.runs.isna().all() and set(df.source_kind) == {"results"}
    assert df.loc[2, "est_ppt_s"] == pytest.approx(8.90996) and df.loc[2, "est_ppt_sd_s"] == pytest.approx(0.45403)
    assert any("adjacent pp/tg row" in n for n in res.notes)


def test_a_missing_row_is_placed_by_the_command_line(tmp_path):
    """Without the pp8192 (c1) row, its tg row follows another tg row: the command line's
    run sequence still gives it pp 8192 (adjacency could not)."""
    lines = MD.split("\n")
    del lines[6]
    command = ("```bash\nuvx llama-benchy==0.4.0 --base-url http://localhost:8000/v1 --model m-bf16 --pp 4096 8192 "
               "--tg 256 --concurrency 1 5 --api-key sk-abcdefghijklmnopqrstuvwx\n```\n\n")
    res = ingest.read(write(tmp_path, "t.md", command + "\n".join(lines) + FOOTER))
    df = table(res)
    assert list(df.test) == ["pp4096 (c1)", "tg256 (c1)", "pp4096 (c5)", "tg256 (c5)", "tg256 (c1)"]
    assert list(df.prompt_tokens) == [4096, 4096, 4096, 4096, 8192]
    assert set(df.runs) == {3}  # llama-benchy's default: the command gives no --runs
    assert set(df.tool_version) == {"0.4.0"} and set(df.date) == {"2026-08-14 00:44:33"}
    assert "sk-abcdef" not in df.command.iloc[0] and "--api-key [REDACTED]" in df.command.iloc[0]
    assert res.reasons == {lbb.OTHER: 3}  # the fences and the command line; the footer is structure


def test_bad_cells_are_ignored_naming_the_line(tmp_path):
    lines = MD.split("\n")
    lines[2] = lines[2].replace("1198.06 ± 13.00 | 1198.06", "abc ± 13.00 | 1198.06")
    lines[3] = lines[3].replace("|  5.00 ± 0.00 |      5.00 ± 0.00 |", "|  5.00 ± 0.00 |")  # a cell short
    lines[4] = lines[4].replace("pp4096 (c5)", "pp4096 (x5)")
    lines[6] = lines[6].replace("6709.13 ± 44.95 |   6453", "-1 ± 44.95 |   6453")
    res = lbb.read(write(tmp_path, "bad.md", "\n".join(lines)))
    assert res.read == 2 and list(table(res).line) == [6, 8]
    assert res.reasons == {
        "line 3: 't/s (total)' is not a number `mean ± sd`: 'abc ± 13.00'": 1,
        "line 4: table row has 8 cells, header has 9": 1,
        "line 5: unparsable test name 'pp4096 (x5)'": 1,
        "line 7: 'ttfr (ms)' is not a number `mean ± sd`: '-1 ± 44.95'": 1,
    }


def test_header_only_table_is_no_rows_with_the_reason(tmp_path):
    res = ingest.read(write(tmp_path, "h.md", "\n".join(MD.split("\n")[:2]) + "\n"))
    assert (res.format, res.read, res.ignored, len(table(res))) == ("benchy-md", 0, 0, 0)
    assert res.notes == ["no test rows: the file holds the table's header and no row; the run failed before "
                         "its first test or was cut off"]
    assert "no test rows" in res.summary()


@pytest.mark.parametrize("path", real_params([p for p in REAL_FILES if p.suffix == ".log"][:1]))
def test_console_cut_off_before_results_is_no_rows(path, tmp_path):
    head = path.read_text(encoding="utf-8").split("Printing results")[0]
    res = ingest.read(write(tmp_path, "cut.log", head))
    nonblank = [ln for ln in head.split("\n") if ln.strip()]
    assert (res.format, res.read, res.ignored) == ("benchy-log", 0, len(nonblank))
    assert res.notes == ["no test rows: the console output ends before llama-benchy printed its results (cut "
                         "off, or failed before its first test)"]


def test_console_of_results_saved_elsewhere_names_that_file(tmp_path):
    text = ("llama-benchy (0.4.0)\nDate: 2026-11-27 21:00:00\nRunning test: pp=512, tg=32, depth=0, concurrency=1\n"
            "Saving results to out/run.json in JSON format...\n\n\n" + FOOTER.replace("generation", "api"))
    res = ingest.read(write(tmp_path, "c.log", text))
    assert res.read == 0 and res.ignored == 4
    assert res.notes == ["no test rows: llama-benchy wrote its results to out/run.json (--save-result); read that file"]


# _generate_md_report with max concurrency 1: one `t/s` and one `peak t/s` column, no (cN)
MD_C1 = (  # --save-result writes no final newline
    "| model   |           test |             t/s |     peak t/s "
    "|        ttfr (ms) |     est_ppt (ms) |    e2e_ttft (ms) |\n"
    "|:--------|---------------:|----------------:|-------------:"
    "|-----------------:|-----------------:|-----------------:|\n"
    "| m/x     |  pp512 @ d4096 |  997.19 ± 30.71 |              "
    "| 4626.67 ± 145.22 | 4625.47 ± 145.22 | 4627.17 ± 145.22 |\n"
    "| m/x     |   tg32 @ d4096 |    47.74 ± 2.02 | 49.28 ± 2.08 "
    "|                  |                  |                  |"
)


def test_concurrency_one_table(tmp_path):
    assert lbb.sniff(MD_C1) and not lb.sniff(MD_C1)
    res = lbb.read(write(tmp_path, "c1.md", MD_C1))  # --save-result writes no final newline
    df = table(res)
    assert list(df.concurrency) == [1, 1] and list(df.depth) == [4096, 4096]
    assert list(df.prompt_tokens) == [512, 512] and list(df.gen_tokens) == [32, 32]
    assert df.tps_req.tolist() == df.tps_total.tolist() == [997.19, 47.74]
    assert df.peak_tps_req.iloc[1] == df.peak_tps.iloc[1] == 49.28 and math.isnan(df.peak_tps_req.iloc[0])
    assert any(n.startswith("tps_req and peak_tps_req are the table's") for n in res.notes)
    assert any(n.startswith("concurrency 1 where a test name has no") for n in res.notes)


# ---------------------------------------------------------------- JSON and CSV, written as results.py writes them


def metric(values, scale=1.0):
    """BenchmarkResults._calculate_metric: numpy mean and population std, values scaled."""
    return {"mean": float(np.mean(values)) * scale, "std": float(np.std(values)) * scale,
            "values": [v * scale for v in values]}


def bench(concurrency, depth, pp, tg, ctx=False, pp_vals=(1000.0, 1010.0, 990.0), tg_vals=(50.0, 51.0, 49.0),
          ttfr=(0.5, 0.52, 0.48), latency=0.0012):
    """One BenchmarkRun.model_dump(), fields in the model's order; ttfr etc. in seconds,
    scaled by 1000 as `add` does."""
    pp_m = metric(pp_vals) if pp_vals else None
    tg_m = metric(tg_vals) if tg_vals else None
    lat = [t * 1000 for t in ttfr]
    return {
        "concurrency": concurrency, "context_size": depth, "prompt_size": pp, "response_size": tg,
        "is_context_prefill_phase": ctx,
        "pp_throughput": pp_m, "pp_req_throughput": pp_m if pp_vals and concurrency == 1 else (
            metric([v / concurrency for v in pp_vals]) if pp_vals else None),
        "tg_throughput": tg_m, "tg_req_throughput": tg_m if tg_vals and concurrency == 1 else (
            metric([v / concurrency for v in tg_vals]) if tg_vals else None),
        "peak_throughput": metric([v + 2 for v in tg_vals]) if tg_vals else None,
        "peak_req_throughput": metric([v + 1 for v in tg_vals]) if tg_vals else None,
        "ttfr": metric(ttfr, 1000) if pp_vals else None,
        "est_ppt": metric([t - latency for t in ttfr], 1000) if pp_vals else None,
        "e2e_ttft": metric([t + 0.0005 for t in ttfr], 1000) if pp_vals else None,
        "throughput_over_time": None, "requests_throughput_over_time": None,
    } | ({} if lat else {})


BENCHMARKS = [
    bench(1, 0, 512, 32),
    bench(2, 0, 512, 32),
    bench(1, 4096, 512, 32, ctx=True),  # --enable-prefix-caching: the context-load pass
    bench(1, 4096, 512, 32),
    bench(2, 0, 2048, 32, pp_vals=()),  # no pp measurement: only the tg row
    bench(2, 0, 4096, 32, pp_vals=(), tg_vals=()),  # every request failed: no row at all
]
# _generate_rows for max_concurrency 2
JSON_TESTS = ["pp512 (c1)", "tg32 (c1)", "pp512 (c2)", "tg32 (c2)", "ctx_pp @ d4096 (c1)", "ctx_tg @ d4096 (c1)",
              "pp512 @ d4096 (c1)", "tg32 @ d4096 (c1)", "tg32 (c2)"]


def json_report():
    """save_report(format="json"): the metadata flattened, then `benchmarks`, json.dumps(indent=2)."""
    meta = {"version": "0.4.0", "timestamp": "2026-11-27 20:00:00Z", "latency_mode": "api", "latency_ms": 1.2,
            "model": "Qwen/Qwen3-8B", "prefix_caching_enabled": True, "max_concurrency": 2}
    return json.dumps(meta | {"benchmarks": BENCHMARKS}, indent=2)


def test_json_report_rows_as_the_table_would_print_them(tmp_path):
    text = json_report()
    res = ingest.read(write(tmp_path, "r.json", text))
    df = table(res)
    assert lbb.sniff(text[:8192]) and not lb.sniff(text[:8192])
    assert (res.format, res.read) == ("benchy-json", len(JSON_TESTS)) and list(df.test) == JSON_TESTS
    starts = [n for n, ln in enumerate(text.split("\n"), 1) if ln == "    {"]  # each test object's first line
    assert res.reasons == {f"line {starts[5]}: benchmark 6: no pp or tg measurement (every request failed; "
                           "llama-benchy prints no row)": 1}
    assert list(df.line) == [starts[0]] * 2 + [starts[1]] * 2 + [starts[2]] * 2 + [starts[3]] * 2 + [starts[4]]
    assert list(df.context_load) == [False] * 4 + [True] * 2 + [False] * 3
    assert list(df.concurrency) == [1, 1, 2, 2, 1, 1, 1, 1, 2] and list(df.depth) == [0] * 4 + [4096] * 4 + [0]
    assert list(df.prompt_tokens) == [512] * 8 + [2048] and set(df.gen_tokens) == {32}
    pp, tg = df.iloc[2], df.iloc[3]
    b = BENCHMARKS[1]
    assert (pp.tps_total, pp.tps_total_sd) == (b["pp_throughput"]["mean"], b["pp_throughput"]["std"])
    assert pp.tps_req == b["pp_req_throughput"]["mean"] and math.isnan(pp.peak_tps)
    assert pp.ttfr_s == pytest.approx(b["ttfr"]["mean"] / 1000) and pp.est_ppt_sd_s == pytest.approx(
        b["est_ppt"]["std"] / 1000)
    assert tg.peak_tps == b["peak_throughput"]["mean"] and tg.peak_tps_req_sd == b["peak_req_throughput"]["std"]
    assert math.isnan(tg.ttfr_s) and math.isnan(tg.e2e_ttft_sd_s)
    assert set(df.model) == {"Qwen/Qwen3-8B"} and set(df.date) == {"2026-11-27 20:00:00Z"}
    assert set(df.latency_s) == {0.0012} and set(df.latency_mode) == {"api"} and df.runs.isna().all()
    assert set(df.source_kind) == {"results"}


def test_json_printed_to_the_console(tmp_path):
    """Without --save-result: `Printing results in JSON format:` (print(f"{msg}\\n")), the JSON,
    then the footer of __main__.py."""
    text = ("llama-benchy (0.4.0)\nDate: 2026-11-27 21:00:00\nBenchmarking model: Qwen/Qwen3-8B at http://x:8000/v1\n"
            "Concurrency levels: [1, 2]\nAverage latency (api): 1.20 ms\n"
            "Printing results in JSON format:\n\n\n" + json_report() + "\n"
            "\nllama-benchy (0.4.0)\ndate: 2026-11-27 21:00:00 | latency mode: api\n")
    res = ingest.read(write(tmp_path, "console.log", text))
    df, saved = table(res), table(lbb.read(write(tmp_path, "r.json", json_report())))
    assert res.format == "benchy-json" and list(df.test) == JSON_TESTS
    assert res.reasons[lbb.PROGRESS] == 6 and res.ignored == 7
    assert set(df.date) == {"2026-11-27 21:00:00"} and set(df.source_kind) == {"console"}
    same = ["test", "prompt_tokens", "gen_tokens", "tps_total", "tps_req_sd", "peak_tps", "e2e_ttft_s", "latency_s"]
    pd.testing.assert_frame_equal(df[same], saved[same])


def test_broken_json_report_names_the_line(tmp_path):
    text = json_report().replace('"prompt_size": 2048,', '"prompt_size": ,')
    line = text.split("\n").index('      "prompt_size": ,') + 1
    with pytest.raises(IngestError) as err:
        ingest.read(write(tmp_path, "b.json", text))
    assert err.value.where == f"line {line}" and "--format json" in err.value.problem


def test_json_bad_values_are_ignored_naming_the_line(tmp_path):
    doc = json.loads(json_report())
    doc["benchmarks"][0]["concurrency"] = "one"
    doc["benchmarks"][1]["ttfr"]["mean"] = "fast"
    text = json.dumps(doc, indent=2)
    starts = [n for n, ln in enumerate(text.split("\n"), 1) if ln == "    {"]
    res = lbb.read(write(tmp_path, "b.json", text))
    assert res.read == len(JSON_TESTS) - 3  # both rows of benchmark 1, the pp row of benchmark 2
    assert f"line {starts[0]}: benchmark 1: concurrency is not a whole number: 'one'" in res.reasons
    assert any(r.startswith(f"line {starts[1]}: benchmark 2: ttfr is not a metric") for r in res.reasons)


CSV_HEADERS = ["model", "test_name", "t_s_mean", "t_s_std", "t_s_req_mean", "t_s_req_std", "peak_ts_mean",
               "peak_ts_std", "peak_ts_req_mean", "peak_ts_req_std", "ttfr_mean", "ttfr_std", "est_ppt_mean",
               "est_ppt_std", "e2e_ttft_mean", "e2e_ttft_std"]


def csv_report():
    """save_report(format="csv"): _generate_rows as csv.DictWriter rows (None prints empty, \\r\\n)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_HEADERS)
    writer.writeheader()
    for b, tests in zip(BENCHMARKS[:2], (JSON_TESTS[0:2], JSON_TESTS[2:4])):
        for test, fields in zip(tests, (("pp_throughput", "pp_req_throughput", None, None, "ttfr", "est_ppt",
                                         "e2e_ttft"),
                                        ("tg_throughput", "tg_req_throughput", "peak_throughput",
                                         "peak_req_throughput", None, None, None))):
            row = {"model": "Qwen/Qwen3-8B", "test_name": test}
            for prefix, key in zip(("t_s", "t_s_req", "peak_ts", "peak_ts_req", "ttfr", "est_ppt", "e2e_ttft"), fields):
                row[f"{prefix}_mean"] = b[key]["mean"] if key else None
                row[f"{prefix}_std"] = b[key]["std"] if key else None
            writer.writerow(row)
    return out.getvalue()


def test_csv_report(tmp_path):
    text = csv_report()
    assert "\r\n" in text and lbb.sniff(text) and not lb.sniff(text)
    res = ingest.read(write(tmp_path, "r.csv", text))
    df = table(res)
    assert (res.format, res.read, res.ignored) == ("benchy-csv", 4, 0) and list(df.test) == JSON_TESTS[:4]
    assert list(df.line) == [2, 3, 4, 5]
    b = BENCHMARKS[1]
    assert df.tps_req.iloc[2] == b["pp_req_throughput"]["mean"]
    assert df.e2e_ttft_sd_s.iloc[2] == pytest.approx(b["e2e_ttft"]["std"] / 1000)
    assert math.isnan(df.peak_tps.iloc[2]) and math.isnan(df.ttfr_s.iloc[3])
    lines = text.split("\r\n")
    lines[2] = lines[2].replace("Qwen/Qwen3-8B,tg32 (c1),", "tg32 (c1),")
    lines[3] = lines[3].replace(f",{b['pp_throughput']['mean']!r},", ",n/a,", 1)
    bad = "\r\n".join(lines)
    res = lbb.read(write(tmp_path, "bad.csv", bad))
    assert res.read == 2 and set(res.reasons) == {
        "line 3: CSV row has 15 values, header has 16",
        f"line 4: t_s_mean/_std is not a number: 'n/a', {repr(b['pp_throughput']['std'])!r}"}


# ---------------------------------------------------------------- sniffing: llama-bench and llama-benchy apart


def llama_bench_tests():
    """tests/ingest/test_llama_bench.py, for the llama-bench samples its tests write."""
    spec = importlib.util.spec_from_file_location("_llama_bench_tests", Path(__file__).with_name("test_llama_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_llama_bench_samples_are_not_llama_benchy(tmp_path):
    t = llama_bench_tests()
    samples = {"md": t.MD, "json": t.json_text([t.FIELDS_6865]), "jsonl": t.jsonl_line(t.FIELDS_10269),
               "csv": t.CSV_FIELDS + "\n" + t.csv_row()}
    for form, text in samples.items():
        assert lb.sniff(text) and not lbb.sniff(text), form
        path = write(tmp_path, f"x.{form}", text)
        assert ingest.detect(path) is lb
        with pytest.raises(IngestError):
            lbb.read(path)


def test_real_llama_bench_files_are_not_llama_benchy():
    files = sorted(p for p in [*(REAL / "llama-bench").glob("*"), *LHL.glob("*")] if not p.name.startswith("LICENSE"))
    if not files:
        pytest.skip("../shared/samples is not here")
    for path in files:
        head = ingest.textio.read_head(path, 8192).decode("utf-8", errors="replace")
        assert not lbb.sniff(head, path), path
        assert ingest.detect(path) is lb, path


def test_llama_benchy_samples_are_not_llama_bench(tmp_path):
    for name, text in {"t.md": MD, "c1.md": MD_C1, "r.json": json_report(), "r.csv": csv_report(),
                       "c.log": "llama-benchy (0.4.0)\nDate: 2026-11-27 21:00:00\n"}.items():
        assert lbb.sniff(text) and not lb.sniff(text), name
        assert ingest.detect(write(tmp_path, name, text)) is lbb, name


def test_sniff_takes_no_other_format(tmp_path):
    assert_sniffs_no_other_format(lbb, "benchy-md")
    assert_detect_picks_it_for_no_other_format(lbb, "benchy-md", tmp_path)
    for fmt in lbb.FORMATS:
        assert ingest.readers()[fmt] is lbb
    # a table that only looks alike: no `test` second column, or no llama-benchy column
    assert not lbb.sniff("| model | size | t/s (total) |\n|---|---|---|\n")
    assert not lbb.sniff("| model | test | t/s |\n|---|---|---|\n| m | pp512 | 1.00 ± 0.00 |\n")
    assert not lbb.sniff('{"benchmarks": [], "model": "m"}')


# ---------------------------------------------------------------- encodings and damaged files


@pytest.mark.parametrize("variant", ["utf16-bom", "utf8-bom", "crlf", "gzip"])
def test_encodings_read_like_the_clean_file(variant, tmp_path):
    sample = (MD + FOOTER).encode()
    clean = ingest.read(write(tmp_path, "clean.md", sample.decode()))
    data = {"utf16-bom": sample.decode().encode("utf-16"), "utf8-bom": b"\xef\xbb\xbf" + sample,
            "crlf": sample.replace(b"\n", b"\r\n"), "gzip": gzip.compress(sample)}[variant]
    path = tmp_path / f"v.{'gz' if variant == 'gzip' else 'md'}"
    path.write_bytes(data)
    got = ingest.read(path)
    assert (got.read, got.ignored, got.format) == (clean.read, clean.ignored, clean.format) == (6, 0, "benchy-md")
    pd.testing.assert_frame_equal(table(got).drop(columns="source_file"), table(clean).drop(columns="source_file"))


@pytest.mark.parametrize("case", sorted(corpus.GENERIC))
def test_damaged_files_give_a_clear_error_or_a_counted_skip(case, tmp_path):
    make, expect = corpus.GENERIC[case]
    path = tmp_path / f"{case}.{'gz' if 'gzip' in case else 'md'}"
    path.write_bytes(make((MD + FOOTER).encode()))
    try:
        res = ingest.read(path, fmt="benchy-md")
    except IngestError as exc:
        assert str(exc).startswith(str(path)) and "failed unexpectedly" not in str(exc)
        for part in expect.parts if expect else ():
            assert part in str(exc)
        return
    assert expect is None, res.summary()
    assert res.ignored >= 1 and res.ignored == sum(res.reasons.values()), res.summary()
    if case == "truncated":  # the footer's date line cut: it and the banner before it are counted
        assert (res.read, res.reasons) == (6, {lbb.PROGRESS: 1, lbb.OTHER: 1})


def test_a_cut_last_row_is_counted(tmp_path):
    res = lbb.read(write(tmp_path, "cut.md", corpus.truncated(MD.encode()).decode()))
    assert res.read == 5 and res.reasons == {"line 8: table row has 5 cells, header has 9": 1}


def test_latin1_byte_is_named(tmp_path):
    data, at = corpus.latin1((MD + FOOTER).encode())
    path = tmp_path / "latin1.md"
    path.write_bytes(data)
    with pytest.raises(IngestError) as err:
        ingest.read(path)
    assert err.value.where == f"byte {at}" and "not UTF-8" in err.value.problem

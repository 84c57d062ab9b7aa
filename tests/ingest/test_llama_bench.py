"""llama-bench reader: the four output forms, written the way llama-bench.cpp prints them."""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbook.ingest import IngestError
from benchbook.ingest import llama_bench as lb

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "llama-bench-lhl"

# (field, JSON literal) in get_fields() order; build 6865 style: flash_attn is a bool.
FIELDS_6865 = [
    ("build_commit", '"1c1409e1"'), ("build_number", "6865"),
    ("cpu_info", '"AMD Eng Sample: 100-000001243-50_Y"'), ("gpu_info", '"Radeon 8060S Graphics"'),
    ("backends", '"ROCm"'), ("model_filename", '"/models/gguf/gpt-oss-20b-F16.gguf"'),
    ("model_type", '"gpt-oss 20B F16"'), ("model_size", "13779630336"),
    ("model_n_params", "20914757184"), ("n_batch", "2048"), ("n_ubatch", "256"),
    ("n_threads", "16"), ("cpu_mask", '"0x0"'), ("cpu_strict", "false"), ("poll", "50"),
    ("type_k", '"f16"'), ("type_v", '"f16"'), ("n_gpu_layers", "99"), ("n_cpu_moe", "0"),
    ("split_mode", '"layer"'), ("main_gpu", "0"), ("no_kv_offload", "false"),
    ("flash_attn", "true"), ("devices", '"auto"'), ("tensor_split", '"0.00"'),
    ("tensor_buft_overrides", '"none"'), ("use_mmap", "false"), ("embeddings", "false"),
    ("no_op_offload", "0"), ("no_host", "false"), ("n_prompt", "512"), ("n_gen", "0"),
    ("n_depth", "0"), ("test_time", '"2025-10-28T17:58:04Z"'), ("avg_ns", "338223825"),
    ("stddev_ns", "1200000"), ("avg_ts", "1513.790461"), ("stddev_ts", "5.250000"),
]
# build 10269 style: flash_attn is an int, load_mode replaces use_mmap, fit_* are new.
FIELDS_10269 = [
    ("build_commit", '"0253fb21f"'), ("build_number", "10269"), ("cpu_info", '"AMD RYZEN AI MAX+ 395"'),
    ("gpu_info", '"AMD Radeon 8060S Graphics (RADV GFX1151)"'), ("backends", '"Vulkan"'),
    ("model_filename", '"/m/qwen3.gguf"'), ("model_type", '"qwen3moe 30B.A3B Q4_K - Medium"'),
    ("model_size", "17709692928"), ("model_n_params", "30532122624"), ("n_batch", "2048"),
    ("n_ubatch", "512"), ("n_threads", "16"), ("cpu_mask", '"0x0"'), ("cpu_strict", "false"),
    ("poll", "50"), ("type_k", '"q8_0"'), ("type_v", '"q8_0"'), ("n_gpu_layers", "99"),
    ("n_cpu_moe", "0"), ("split_mode", '"layer"'), ("main_gpu", "0"), ("no_kv_offload", "false"),
    ("flash_attn", "1"), ("devices", '"auto"'), ("tensor_split", '"0.00"'),
    ("tensor_buft_overrides", '"none"'), ("load_mode", '"mmap"'), ("embeddings", "false"),
    ("no_op_offload", "0"), ("no_host", "false"), ("fit_target", "0"), ("fit_min_ctx", "0"),
    ("n_prompt", "0"), ("n_gen", "128"), ("n_depth", "4096"), ("test_time", '"2026-01-05T10:00:00Z"'),
    ("avg_ns", "2560000000"), ("stddev_ns", "2000000"), ("avg_ts", "50.000000"), ("stddev_ts", "0.040000"),
]
SAMPLES_NS = [338000000, 338223825, 338447650]
SAMPLES_TS = [1514.79, 1513.79, 1512.79]


def with_(fields, **changes):
    """A copy of a field list with some JSON literals replaced (None drops the field)."""
    out = [(k, changes.get(k, v)) for k, v in fields]
    return [(k, v) for k, v in out if v is not None]


def json_text(objects, samples=None):
    """`-o json`: json_printer from llama-bench.cpp: each object's fields (JSON literals), then
    its two sample arrays (`samples`: (ns, ts) per object; SAMPLES_NS / SAMPLES_TS by default)."""
    parts = []
    for i, fields in enumerate(objects):
        ns, ts = samples[i] if samples else (SAMPLES_NS, SAMPLES_TS)
        body = "".join(f'    "{k}": {v},\n' for k, v in fields)
        body += f'    "samples_ns": [ {", ".join(map(str, ns))} ],\n'
        body += f'    "samples_ts": [ {", ".join(map(str, ts))} ]\n'
        parts.append("  {\n" + body + "  }")
    return "[\n" + ",\n".join(parts) + "\n]\n"


def jsonl_line(fields):
    """`-o jsonl`: jsonl_printer; note no space before "samples_ts"."""
    body = "".join(f'"{k}": {v}, ' for k, v in fields)
    return ("{" + body + f'"samples_ns": [ {", ".join(map(str, SAMPLES_NS))} ],'
            f'"samples_ts": [ {", ".join(map(str, SAMPLES_TS))} ]' + "}\n")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def table(result):
    return result.tables["llama_bench"]


# --- JSON ---

def test_json_array_parses_values_and_normalises_flash_attn_true(tmp_path):
    depth = with_(FIELDS_6865, n_prompt="0", n_gen="128", n_depth="4096", avg_ts="61.250000")
    path = write(tmp_path, "strix.json", json_text([FIELDS_6865, depth]))
    res = lb.read(path, run_prefix="study")
    df = table(res)
    assert (res.format, res.read, res.ignored) == ("llama-bench-json", 2, 0)
    assert list(df.run_id) == ["study:0", "study:1"]
    first = df.iloc[0]
    assert first.avg_ts == pytest.approx(1513.790461)
    assert first.stddev_ts == pytest.approx(5.25)
    assert first.flash_attn == 1  # JSON `true`
    assert first.build_number == 6865 and first.build_commit == "1c1409e1"
    assert first.model_size_bytes == 13779630336 and first.model_n_params == 20914757184
    assert first.n_samples == 3 and first.test == "pp" and first.backend == "ROCm"
    assert first.model == "gpt-oss 20B F16" and first.test_time == "2025-10-28T17:58:04Z"
    # only non-default parameters: n_ubatch 256 and use_mmap false; n_threads has no fixed default
    assert first.params == "n_threads=16;n_ubatch=256;use_mmap=0"
    second = df.iloc[1]
    assert (second.test, second.n_prompt, second.n_gen, second.n_depth) == ("tg", 0, 128, 4096)
    assert second.avg_ts == pytest.approx(61.25)


def test_json_with_captured_stderr_banner_counts_it(tmp_path):
    banner = "ggml_vulkan: Found 1 Vulkan devices:\n"
    path = write(tmp_path, "b.json", banner + json_text([FIELDS_6865]))
    res = lb.read(path)
    assert res.read == 1 and res.reasons == {lb.BANNER: 1}


def test_broken_json_raises_naming_the_line(tmp_path):
    text = json_text([FIELDS_6865]).replace('"n_gen": 0,', '"n_gen": ,')
    line = text.split("\n").index('    "n_gen": ,') + 1
    with pytest.raises(IngestError) as err:
        lb.read(write(tmp_path, "bad.json", text))
    assert err.value.where == f"line {line}"


# --- JSONL ---

def test_jsonl_parses_new_build_and_int_flash_attn(tmp_path):
    path = write(tmp_path, "vulkan-run.jsonl", jsonl_line(FIELDS_10269) + jsonl_line(FIELDS_6865))
    assert '"samples_ns": [ 338000000, 338223825, 338447650 ],"samples_ts"' in path.read_text()
    res = lb.read(path)
    df = table(res)
    assert (res.format, res.read) == ("llama-bench-jsonl", 2)
    row = df.iloc[0]
    assert row.run_id == "vulkan-run:0"
    assert row.flash_attn == 1 and row.backend == "Vulkan" and row.build_number == 10269
    assert (row.test, row.n_depth, row.avg_ts, row.stddev_ts) == ("tg", 4096, 50.0, 0.04)
    assert row.params == "n_threads=16;type_k=q8_0;type_v=q8_0"
    assert df.iloc[1].flash_attn == 1 and df.iloc[1].backend == "ROCm"


def test_flash_attn_false_and_auto(tmp_path):
    lines = [jsonl_line(with_(FIELDS_10269, flash_attn=fa)) for fa in ("false", "-1")]
    df = table(lb.read(write(tmp_path, "fa.jsonl", "".join(lines))))
    assert list(df.flash_attn) == [0, -1]


def test_rejected_rows_are_counted_with_reasons(tmp_path):
    lines = [
        jsonl_line(FIELDS_10269),
        jsonl_line(with_(FIELDS_10269, avg_ts=None)),
        jsonl_line(with_(FIELDS_10269, avg_ts="-5.000000")),
        jsonl_line(with_(FIELDS_10269, avg_ts="20000000.000000")),
        jsonl_line(with_(FIELDS_10269, n_prompt=None)),
        jsonl_line(with_(FIELDS_10269, n_gen="0")),  # pp0/tg0: no test
        "llama-bench: benchmark 7/7: starting\n",
        jsonl_line(FIELDS_10269),
    ]
    res = lb.read(write(tmp_path, "r.jsonl", "".join(lines)))
    assert res.read == 2 and res.ignored == 6
    assert res.reasons == {
        "missing avg_ts": 1,
        "avg_ts out of range: -5.0": 1,
        "avg_ts out of range: 20000000.0": 1,
        "missing n_prompt/n_gen": 1,
        "no test: n_prompt=0, n_gen=0": 1,
        lb.BANNER: 1,
    }
    assert list(table(res).run_id) == ["r:0", "r:6"]  # ids keep the row's position in the file


def test_partial_last_jsonl_line_is_counted_not_fatal(tmp_path):
    full = jsonl_line(FIELDS_10269)
    res = lb.read(write(tmp_path, "cut.jsonl", full + full[:200]))
    assert res.read == 1 and res.reasons == {"partial last line": 1}


def test_broken_jsonl_line_in_the_middle_raises(tmp_path):
    full = jsonl_line(FIELDS_10269)
    with pytest.raises(IngestError) as err:
        lb.read(write(tmp_path, "mid.jsonl", full + full[:200] + "\n" + full))
    assert err.value.where == "line 2"


def test_gzip_jsonl_and_run_id_stem(tmp_path):
    path = tmp_path / "bench.jsonl.gz"
    path.write_bytes(gzip.compress(jsonl_line(FIELDS_10269).encode()))
    res = lb.read(path)
    assert res.format == "llama-bench-jsonl" and list(table(res).run_id) == ["bench:0"]


# --- CSV ---

CSV_FIELDS = ("build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,"
              "model_n_params,n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v,n_gpu_layers,"
              "split_mode,main_gpu,no_kv_offload,flash_attn,tensor_split,tensor_buft_overrides,defrag_thold,"
              "use_mmap,embeddings,no_op_offload,n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts")


def csv_row(**changes):
    values = dict(zip(CSV_FIELDS.split(","), [
        "086cf81e", "5921", "AMD Eng Sample, 16 cores", "AMD Radeon Graphics", "ROCm", "/models/q.gguf",
        "qwen3moe 30B.A3B Q4_K - Medium", "17709692928", "30532122624", "256", "512", "16", "0x0", "0",
        "50", "f16", "f16", "99", "layer", "0", "0", "1", "0.00", "none", "-1.000000", "0", "0", "0",
        "512", "0", "0", "2025-07-17T17:13:58Z", "600000000", "1000000", "853.333333", "1.420000",
    ]))
    values.update(changes)
    return ",".join(f'"{v}"' for v in values.values()) + "\n"


def test_csv_quoted_values(tmp_path):
    tg = csv_row(flash_attn="0", n_prompt="0", n_gen="128", avg_ts="64.5")
    text = CSV_FIELDS + "\n" + csv_row() + tg
    res = lb.read(write(tmp_path, "b5921.csv", text))
    df = table(res)
    assert (res.format, res.read, res.ignored) == ("llama-bench-csv", 2, 0)
    first = df.iloc[0]
    assert first.avg_ts == pytest.approx(853.333333) and first.stddev_ts == pytest.approx(1.42)
    assert first.flash_attn == 1 and first.build_number == 5921 and first.n_gen == 0
    assert first.model_size_bytes == 17709692928
    # defrag_thold -1 and tensor_split 0.00 are defaults; the quoted comma stays inside cpu_info
    assert first.params == "n_batch=256;n_threads=16;use_mmap=0"
    assert pd.isna(first.n_samples)
    assert (df.iloc[1].flash_attn, df.iloc[1].test, df.iloc[1].avg_ts) == (0, "tg", 64.5)


# --- markdown ---

MD = """\
ggml_cuda_init: found 1 ROCm devices (Total VRAM: 126976 MiB):
  Device 0: AMD Radeon 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32, VRAM: 126976 MiB
llama-bench: benchmark 1/3: starting
| model                          |       size |     params | backend    | ngl | fa | mmap |\
            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | -: | ---: |\
 --------------: | -------------------: |
| deepseek2 30B.A3B BF16         |  55.79 GiB |    29.94 B | ROCm       |  99 |  1 |    0 |\
           pp512 |        812.34 ± 3.21 |
llama-bench: benchmark 2/3: starting
| deepseek2 30B.A3B BF16         |  55.79 GiB |    29.94 B | ROCm       |  99 |  1 |    0 |\
           tg128 |         45.67 ± 0.12 |
| deepseek2 30B.A3B BF16         |  55.79 GiB |    29.94 B | ROCm       |  99 |  1 |    0 |\
 pp2048 @ d32768 |        109.96 ± 0.16 |

build: 0253fb21f (9187)
ggml_vulkan: 0 = AMD Radeon 8060S Graphics (RADV GFX1151) (radv) | uma: 1 | fp16: 1 | bf16: 0 | warp size: 64 |\
 shared memory: 65536 | int dot: 1 | matrix cores: KHR_coopmat
| model                          |       size |     params | backend    | ngl | threads |\
          test |              t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------: |\
 ------------: | ---------------: |
| qwen2 0.5B Q8_0                | 638.72 MiB |   494.03 M | Vulkan     |  99 |       8 |\
        pp 512 |  1234.56 ± 12.34 |
| qwen2 0.5B Q8_0                | 638.72 MiB |   494.03 M | Vulkan     |  99 |       8 |\
   pp512+tg128 |    300.00 ± 1.00 |

build: 1234abcd (1500)
"""


def test_markdown_table_with_banners_depth_old_test_names_and_footers(tmp_path):
    res = lb.read(write(tmp_path, "strix.md", MD))
    df = table(res)
    assert (res.format, res.read) == ("llama-bench-md", 5)
    assert res.reasons == {lb.BANNER: 5}
    assert list(df.test) == ["pp", "tg", "pp", "pp", "pp+tg"]
    assert list(df.n_prompt) == [512, 0, 2048, 512, 512]
    assert list(df.n_gen) == [0, 128, 0, 0, 128]
    assert list(df.n_depth) == [0, 0, 32768, 0, 0]
    assert list(df.build_number) == [9187, 9187, 9187, 1500, 1500]
    assert list(df.build_commit) == ["0253fb21f"] * 3 + ["1234abcd"] * 2
    depth = df.iloc[2]
    assert (depth.avg_ts, depth.stddev_ts) == (109.96, 0.16)
    assert depth.model_size_bytes == pytest.approx(55.79 * 2**30, rel=1e-6)
    assert depth.model_n_params == 29_940_000_000
    assert depth.flash_attn == 1 and depth.backend == "ROCm" and depth.params == "use_mmap=0"
    old = df.iloc[3]
    assert old.model_size_bytes == pytest.approx(638.72 * 2**20, rel=1e-6)
    assert old.model_n_params == 494_030_000
    assert old.avg_ts == 1234.56 and old.params == "n_threads=8" and pd.isna(old.flash_attn)
    assert old.backend == "Vulkan" and old.model == "qwen2 0.5B Q8_0"


def test_markdown_bad_rows_are_counted(tmp_path):
    lines = MD.split("\n")
    lines[5] = lines[5].replace("          pp512 |", "          bogus |")
    lines[7] = lines[7].replace("|  1 |    0 |", "|  1 |")  # a cell short
    res = lb.read(write(tmp_path, "bad.md", "\n".join(lines)))
    assert res.read == 3
    assert res.reasons["unparsable test name 'bogus'"] == 1
    assert res.reasons["table row has 8 cells, header has 9"] == 1


# --- sniffing ---

VLLM_SERVE = ('{"date": "20260722-060114", "endpoint_type": "openai", "backend": "openai", "label": null, '
              '"model_id": "Qwen/Qwen3-8B", "num_prompts": 200, "request_rate": "inf", "max_concurrency": null, '
              '"duration": 204.454, "completed": 199, "failed": 1, "output_throughput": 310.5, '
              '"rtfx": 0.0, "mean_ttft_ms": 97.5096, "p99_itl_ms": 38.2546}')


def test_sniff_recognises_all_four_forms(tmp_path):
    texts = {
        "json": json_text([FIELDS_6865]),
        "jsonl": jsonl_line(FIELDS_10269),
        "csv": CSV_FIELDS + "\n" + csv_row(),
        "md": MD,
    }
    for form, text in texts.items():
        assert lb.sniff(text[:8192], tmp_path / f"x.{form}"), form
        assert lb._form(text) == f"llama-bench-{form}"


def test_sniff_rejects_other_files(tmp_path):
    assert not lb.sniff(VLLM_SERVE, tmp_path / "vllm.json")
    assert not lb.sniff("index, timestamp, power.draw [W]\n0, 2019/08/23 14:54:47.307, 208.36 W\n", None)
    assert not lb.sniff("| model | size |\n| --- | --- |\n| a | b |\n", None)  # no t/s column
    assert not lb.sniff('[{"date": "x", "backend": "vllm"}]', None)
    with pytest.raises(IngestError):
        lb.read(write(tmp_path, "vllm.json", VLLM_SERVE))


def test_detect_picks_this_reader(tmp_path):
    pytest.importorskip("benchbook.ingest.vllm_bench", reason="detect() needs every registered reader")
    from benchbook.ingest import detect, readers

    for fmt in lb.FORMATS:
        assert readers()[fmt] is lb
    assert detect(write(tmp_path, "a.md", MD)) is lb
    assert detect(write(tmp_path, "a.jsonl", jsonl_line(FIELDS_10269))) is lb
    assert detect(write(tmp_path, "vllm.json", VLLM_SERVE)) is not lb


# --- real samples (lhl/strix-halo-testing, Apache-2.0), absent in a user's clone ---

def sample_files():
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples not present at {SAMPLES}")
    files = sorted(SAMPLES.glob("*.jsonl"))
    if not files:
        pytest.skip(f"no .jsonl samples in {SAMPLES}")
    return files


def test_real_samples_read_every_line():
    backends = set()
    for path in sample_files():
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        assert lb.sniff(path.read_text()[:8192], path)
        res = lb.read(path)
        df = table(res)
        assert len(df) == len(lines) == res.read and res.ignored == 0
        assert (df.avg_ts > 0).all() and df.avg_ts.map(math.isfinite).all()
        assert df.n_samples.notna().all() and set(df.test) <= {"pp", "tg", "pp+tg"}
        backends |= set(df.backend)
        if "b6865" in path.name:
            assert set(df.flash_attn) == {1}  # `"flash_attn": true`
            assert set(df.n_depth) == {0, 1024, 4096, 16384, 65536}
    assert {"ROCm", "Vulkan"} <= backends


def test_real_samples_detected():
    files = sample_files()
    pytest.importorskip("benchbook.ingest.vllm_bench", reason="detect() needs every registered reader")
    from benchbook.ingest import detect

    for path in files:
        assert detect(path) is lb


# --- the real samples rewritten in the other three forms, as llama-bench's printers do ---

class _Lit(str):
    """A JSON number kept exactly as printed (llama-bench prints floats with 6 decimals)."""


def _real_records(path):
    """(field, value) lists of a real JSONL file, numbers kept as their printed text."""
    import json

    return [list(json.loads(ln, parse_float=_Lit, parse_int=_Lit).items())
            for ln in path.read_text().splitlines() if ln.strip()]


def _json_literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, _Lit) else '"' + v + '"'


def _as_json(records):
    """`-o json`: one field per line, then the two sample arrays."""
    fields = [[(k, _json_literal(v)) for k, v in rec if not k.startswith("samples_")] for rec in records]
    return json_text(fields, [(dict(rec)["samples_ns"], dict(rec)["samples_ts"]) for rec in records])


def _as_csv(records):
    """`-o csv`: a header, then every value double-quoted; bools print as 0/1."""
    def value(v):
        return ("1" if v else "0") if isinstance(v, bool) else str(v)

    header = [k for k, _ in records[0] if not k.startswith("samples_")]
    lines = [",".join(header)]
    for rec in records:
        d = dict(rec)
        lines.append(",".join(f'"{value(d[k])}"' for k in header))
    return "\n".join(lines) + "\n"


def _as_markdown(records):
    """The default table: one table per build, `%.2f GiB`, `%.2f B`, `avg ± sd`, a build footer."""
    out, build = [], None
    for rec in records:
        d = dict(rec)
        if (d["build_commit"], d["build_number"]) != build:
            if build:
                out.append(f"\nbuild: {build[0]} ({build[1]})\n")
            build = (d["build_commit"], d["build_number"])
            out.append("| model | size | params | backend | ngl | fa | mmap | test | t/s |")
            out.append("| --- | ---: | ---: | --- | --: | -: | ---: | ---: | ---: |")
        n_p, n_g, depth = int(d["n_prompt"]), int(d["n_gen"]), int(d["n_depth"])
        test = "+".join(([f"pp{n_p}"] if n_p else []) + ([f"tg{n_g}"] if n_g else []))
        test += f" @ d{depth}" if depth else ""
        fa = d["flash_attn"] if not isinstance(d["flash_attn"], bool) else int(d["flash_attn"])
        out.append(
            f"| {d['model_type']} | {int(d['model_size']) / 2**30:.2f} GiB | {int(d['model_n_params']) / 1e9:.2f} B "
            f"| {d['backends']} | {d['n_gpu_layers']} | {fa} | {int(d['use_mmap'])} | {test} "
            f"| {float(d['avg_ts']):.2f} ± {float(d['stddev_ts']):.2f} |")
    out.append(f"\nbuild: {build[0]} ({build[1]})\n")
    return "\n".join(out)


@pytest.mark.parametrize("form", ["json", "csv", "md"])
def test_real_samples_read_alike_in_every_form(tmp_path, form):
    """The same real measurements, printed as -o json, -o csv and markdown, give the JSONL's rows."""
    writers = {"json": _as_json, "csv": _as_csv, "md": _as_markdown}
    keys = ["backend", "build_commit", "build_number", "model", "test", "n_prompt", "n_gen", "n_depth",
            "n_gpu_layers", "flash_attn"]
    for path in sample_files():
        records = _real_records(path)
        want = table(lb.read(path))
        res = lb.read(write(tmp_path, f"{path.stem}.{form}", writers[form](records)))
        got = table(res)
        assert (res.format, res.read, res.ignored) == (f"llama-bench-{form}", len(records), 0)
        pd.testing.assert_frame_equal(got[keys], want[keys], check_dtype=False)
        if form == "md":  # the table prints two decimals and sizes in GiB
            assert np.allclose(got.avg_ts, want.avg_ts, atol=0.005)
            assert np.allclose(got.stddev_ts, want.stddev_ts, atol=0.005)
            assert np.allclose(got.model_size_bytes, want.model_size_bytes, atol=0.005 * 2**30)
            continue
        exact = ["avg_ts", "stddev_ts", "model_size_bytes", "model_n_params", "params", "test_time"]
        pd.testing.assert_frame_equal(got[exact], want[exact], check_dtype=False)
        if form == "json":
            assert list(got.n_samples) == list(want.n_samples)
        else:
            assert got.n_samples.isna().all()  # CSV has no sample arrays


def test_real_build_5921_rows_keep_old_fields_out_of_params():
    """Build 5921's field set: defrag_thold (an unquoted float), bool flash_attn, no n_cpu_moe."""
    path = next((p for p in sample_files() if "b5921" in p.name), None)
    if path is None:
        pytest.skip("no build-5921 sample")
    df = table(lb.read(path))
    assert df.build_number.min() == 5921 and df.build_number.max() > 5921
    assert set(df.flash_attn) <= {0, 1} and df.params.notna().all()
    assert not df.params.str.contains("defrag_thold|n_cpu_moe|devices|no_host").any()
    assert set(df.backend) == {"ROCm", "Vulkan"}


# --- runs that crashed: stderr captured with 2>&1, written the way llama.cpp and the shell print it ---

REAL = Path(__file__).resolve().parents[3] / "shared" / "samples" / "real" / "llama-bench"
GEERLING = REAL / "geerlingguy_ai-benchmarks_20_rx580_vulkan.log"

VK_CMD = "$ ./build/bin/llama-bench -m models/Llama-3.2-3B-Instruct-Q4_K_M.gguf -p 512 -n 0 -ngl 99\n"
VK_BANNER = """\
ggml_vulkan: Found 1 Vulkan devices:
ggml_vulkan: 0 = AMD Radeon 8060S Graphics (RADV GFX1151) (radv) | uma: 1 | fp16: 1 | bf16: 0 | warp size: 64 |\
 shared memory: 65536 | int dot: 1 | matrix cores: KHR_coopmat
load_backend: loaded Vulkan backend from /opt/llama.cpp/build/bin/libggml-vulkan.so
load_backend: loaded CPU backend from /opt/llama.cpp/build/bin/libggml-cpu-zen4.so
"""
MD_HEAD = """\
| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
"""
DEVICE_LOST = """\
/opt/llama.cpp/build/bin/libggml-base.so(+0x16bbb) [0x7f3c1d2a6bbb]
/opt/llama.cpp/build/bin/libggml-base.so(ggml_print_backtrace+0x21f) [0x7f3c1d2a701f]
/lib/x86_64-linux-gnu/libstdc++.so.6(+0xbb0da) [0x7f3c1d0bb0da]
terminate called after throwing an instance of 'vk::DeviceLostError'
  what():  vk::Device::waitForFences: ErrorDeviceLost
Aborted (core dumped)
"""
DEVICE_LOST_ERROR = ("terminate called after throwing an instance of 'vk::DeviceLostError' — "
                     "what(): vk::Device::waitForFences: ErrorDeviceLost")
ROCM_OOM = """\
ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no
ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no
ggml_cuda_init: found 1 ROCm devices:
  Device 0: AMD Radeon 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32
ggml_cuda_compute_forward: MUL_MAT failed
ROCm error: out of memory
  current device: 0, in function ggml_cuda_compute_forward at /src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2313
  err
/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:73: ROCm error
Segmentation fault (core dumped)
"""
ASSERT = """\
/src/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp:5123:\
 GGML_ASSERT(buf != nullptr && "failed to allocate buffer") failed
#0  0x00007f3c1d2a6bbb in __GI___wait4 (pid=1234, stat_loc=0x0, options=0, usage=0x0)\
 at ../sysdeps/unix/sysv/linux/wait4.c:30
#1  0x00007f3c1d2a701f in ggml_print_backtrace () from /src/llama.cpp/build/bin/libggml-base.so
Aborted (core dumped)
"""


def test_crashed_run_without_rows_is_one_failed_row(tmp_path):
    path = write(tmp_path, "vk-crash.log", VK_CMD + VK_BANNER + MD_HEAD + DEVICE_LOST)
    assert lb.sniff(path.read_text(), path)
    res = lb.read(path)
    df = table(res)
    assert (res.format, res.read, len(df)) == ("llama-bench-md", 1, 1)
    row = df.iloc[0]
    assert (row.status, row.error, row.backend) == ("failed", DEVICE_LOST_ERROR, "Vulkan")
    assert row.model_filename == "models/Llama-3.2-3B-Instruct-Q4_K_M.gguf"
    # -p 512 -n 0: the command line runs one test, so the row names it
    assert (row.test, row.n_prompt, row.n_gen, row.n_depth) == ("pp", 512, 0, 0)
    assert math.isnan(row.avg_ts) and row.params == "n_prompt=512;n_gen=0;ngl=99"
    assert res.reasons == {lb.CRASH: 6, lb.BANNER: 4, "non-table line": 1}  # the command line
    assert f"run failed: {DEVICE_LOST_ERROR}" in res.summary()


def test_crash_without_table_header_is_recognised_by_its_banner(tmp_path):
    pytest.importorskip("benchbook.ingest.vllm_bench", reason="detect() needs every registered reader")
    from benchbook.ingest import detect, read

    path = write(tmp_path, "rocm.txt", ROCM_OOM)
    assert detect(path) is lb
    res = read(path)
    row = table(res).iloc[0]
    assert (res.format, res.read) == ("llama-bench-log", 1)
    assert (row.status, row.error, row.backend) == ("failed", "ROCm error: out of memory", "ROCm")  # not CUDA
    assert pd.isna(row.test) and pd.isna(row.n_prompt) and pd.isna(row.model_filename)


def test_crash_after_rows_keeps_the_rows_and_adds_the_failed_run(tmp_path):
    cmd = "user@box:~/llama.cpp$ ./build/bin/llama-bench -m /m/qwen3.gguf -p 512,4096 -n 128 -fa 1\n"
    rows = MD.split("\n")[3:6]  # the header, the separator and the pp512 row of the ROCm table
    path = write(tmp_path, "partial.md", cmd + VK_BANNER + "\n".join(rows) + "\n" + ASSERT)
    res = lb.read(path)
    df = table(res)
    assert (res.read, list(df.status)) == (2, ["ok", "failed"])
    assert df.iloc[0].avg_ts == 812.34 and pd.isna(df.iloc[0].error)
    failed = df.iloc[1]
    assert failed.error == ('ggml-vulkan.cpp:5123: GGML_ASSERT(buf != nullptr && "failed to allocate buffer") '
                            "failed")  # the signal line is not repeated after the cause
    assert failed.backend == "Vulkan" and failed.model_filename == "/m/qwen3.gguf"
    assert pd.isna(failed.test) and pd.isna(failed.n_prompt)  # pp512, pp4096 or tg128: unknown
    assert failed.params == "n_prompt=512,4096;n_gen=128;fa=1"
    assert list(df.run_id) == ["partial:0", "partial:1"]


def test_signal_alone_is_the_error_and_appended_runs_each_count(tmp_path):
    second = "$ llama-bench -m b.gguf -p 0 -n 64\n" + ROCM_OOM.replace("ROCm error: out of memory\n", "")
    res = lb.read(write(tmp_path, "two.log", VK_CMD + VK_BANNER + DEVICE_LOST + second))
    df = table(res)
    assert list(df.error) == [DEVICE_LOST_ERROR, "Segmentation fault (core dumped)"]
    assert list(df.backend) == ["Vulkan", "ROCm"] and list(df.test) == ["pp", "tg"]
    assert res.summary().count("run failed:") == 2


def test_crash_in_jsonl_and_json_keeps_the_complete_tests(tmp_path):
    jsonl = jsonl_line(FIELDS_10269) + jsonl_line(FIELDS_6865)[:150] + "\n" + DEVICE_LOST
    res = lb.read(write(tmp_path, "cut.jsonl", VK_BANNER + jsonl))
    assert (res.format, list(table(res).status)) == ("llama-bench-jsonl", ["ok", "failed"])
    assert res.reasons[lb.CUT] == 1 and res.reasons[lb.CRASH] == 6
    whole = json_text([FIELDS_6865, FIELDS_10269])
    cut = whole[: whole.index('"build_number": 10269')]  # the array stops inside the second object
    res = lb.read(write(tmp_path, "cut.json", VK_BANNER + cut + "\n" + DEVICE_LOST))
    df = table(res)
    assert (res.format, list(df.status)) == ("llama-bench-json", ["ok", "failed"])
    assert df.iloc[0].avg_ts == pytest.approx(1513.790461) and res.reasons[lb.CUT] == 1


def test_banner_or_crash_text_alone_is_not_llama_bench(tmp_path):
    assert not lb.sniff(VK_BANNER, None)  # a banner with no crash and no table
    assert not lb.sniff("Segmentation fault (core dumped)\n", None)  # nothing says llama-bench
    assert not lb.sniff(DEVICE_LOST, None)
    with pytest.raises(IngestError, match="not llama-bench output"):
        lb.read(write(tmp_path, "crash.txt", DEVICE_LOST))


def test_failed_rows_only_may_leave_required_values_empty():
    from benchbook.ingest.tables import SchemaError, conform

    row = dict(run_id="a:0", source_file="a", format="llama-bench-md", test=None, n_prompt=None,
               n_gen=None, n_depth=None, avg_ts=math.nan)
    assert len(conform(pd.DataFrame([{**row, "status": "failed"}]), "llama_bench")) == 1
    for status in ("ok", None):
        with pytest.raises(SchemaError, match=r"column 'test'.*'a:0'.*unless status is 'failed'"):
            conform(pd.DataFrame([{**row, "status": status}]), "llama_bench")


def test_failed_rows_stay_out_of_best_of_and_values(tmp_path):
    from benchbook.analysis.llama import best_of, llama_values, ok_rows

    ok = table(lb.read(write(tmp_path, "ok.md", MD)))
    crashed = table(lb.read(write(tmp_path, "vk.log", VK_CMD + VK_BANNER + DEVICE_LOST)))
    both = pd.concat([ok.assign(config="rocm"), crashed.assign(config="vulkan")], ignore_index=True)
    assert len(ok_rows(both)) == len(ok) and (ok_rows(both).status == "ok").all()
    best = best_of(both)
    assert "vulkan" not in set(best.best_config) and best.avg_ts.notna().all()
    assert llama_values(both, "s") == llama_values(ok, "s")
    assert llama_values(crashed, "s") == {}


def test_real_rx580_log_with_a_crash_appended(tmp_path):
    """geerlingguy's real run (command line, ggml_vulkan banner, build line, table), as if
    a fifth test had then lost the device."""
    if not GEERLING.is_file():
        pytest.skip(f"real samples not present at {REAL}")
    real = GEERLING.read_text()
    want = table(lb.read(GEERLING))
    res = lb.read(write(tmp_path, "rx580.log", real + DEVICE_LOST))
    df = table(res)
    assert res.read == len(want) + 1 == 5 and set(want.status) == {"ok"}
    pd.testing.assert_frame_equal(df.iloc[:-1].drop(columns=["run_id", "source_file"]),
                                  want.drop(columns=["run_id", "source_file"]))
    failed = df.iloc[-1]
    assert (failed.status, failed.error, failed.backend) == ("failed", DEVICE_LOST_ERROR, "Vulkan")
    assert failed.build_number == 4696 and failed.build_commit == "e598697d"
    assert failed.model_filename == "models/Llama-3.2-3B-Instruct-Q4_K_M.gguf"
    assert failed.params == "n_gen=128;n_prompt=512,4096;pg=4096,128;ngl=99;r=2" and pd.isna(failed.test)
    # only the banner and the command line survive of the real run: a crash before the table
    head = real[: real.index("| model")]
    res = lb.read(write(tmp_path, "rx580-crash.log", head + DEVICE_LOST))
    assert lb.sniff(head + DEVICE_LOST, None) and res.format == "llama-bench-log"
    assert list(table(res).status) == ["failed"] and table(res).iloc[0].backend == "Vulkan"


# --- a run that failed before its first test; a build made without git ---


def test_header_only_file_is_no_rows_with_the_reason(tmp_path):
    """llama-bench prints its header before loading the model and returns on a load failure, so
    stdout keeps the header alone (-o csv: the field line; markdown: the table head)."""
    records = _real_records(sample_files()[0])
    forms = {"csv": _as_csv(records).splitlines()[0] + "\n",
             "md": "\n".join(_as_markdown(records).strip().splitlines()[:2]) + "\n"}
    for form, text in forms.items():
        path = write(tmp_path, f"failed.{form}", text)
        assert lb.sniff(text, path)
        res = lb.read(path)
        assert (res.format, res.read, res.ignored, len(table(res))) == (f"llama-bench-{form}", 0, 0, 0)
        assert "header and no row" in res.empty and "failed before its first test" in res.empty
        assert res.summary().endswith(f"0 records read, 0 ignored -> rows: llama_bench 0; no test rows: {res.empty}")
    full = lb.read(write(tmp_path, "full.csv", _as_csv(records)))
    assert full.empty is None and "no test rows" not in full.summary()


def _unknown_build(line: str) -> str:
    """A real record as a llama.cpp built without git prints it (build-info.cmake's fallback)."""
    line = re.sub(r'"build_commit": "[^"]*"', '"build_commit": "unknown"', line)
    return re.sub(r'"build_number": \d+', '"build_number": 0', line)


def test_unknown_build_keeps_its_text_and_no_build_number(tmp_path):
    path = sample_files()[0]
    lines = [_unknown_build(ln) for ln in path.read_text().splitlines() if ln.strip()]
    assert all('"build_number": 0,' in ln for ln in lines)
    jsonl = table(lb.read(write(tmp_path, "unknown.jsonl", "\n".join(lines) + "\n")))
    md_text = _as_markdown(_real_records(write(tmp_path, "u.jsonl", "\n".join(lines) + "\n")))
    assert "build: unknown (0)" in md_text
    md = table(lb.read(write(tmp_path, "unknown.md", md_text)))
    for df in (jsonl, md):
        assert len(df) == len(lines) and set(df.build_commit) == {"unknown"} and df.build_number.isna().all()
    assert table(lb.read(path)).build_number.notna().all()  # a real build number stays

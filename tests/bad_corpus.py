"""The bad-input corpus: small raw files and study folders as users really have them.

Generated, not checked in, so the bytes are exact (BOMs, CRLF, latin-1, gzip, NaN).
Each case says what must happen: `Error` (an IngestError/StudyError whose message holds
every listed part: the file name, the line/key/byte, and what was expected), `Skip` (the
file reads, and the listed reasons are counted in `ignored`) or `Reads` (it reads, same
as the clean file). `GENERIC` cases are run against every registered reader.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import projects  # tests/ is on sys.path

# ---------------------------------------------------------------- expectations


@dataclass(frozen=True)
class Error:
    parts: tuple[str, ...]  # each must appear in the message (besides the file name)


@dataclass(frozen=True)
class Skip:
    reasons: dict  # reason substring -> count in IngestResult.reasons
    read: int | None = None  # records read, when it matters


@dataclass(frozen=True)
class Reads:
    read: int
    check: dict = field(default_factory=dict)  # table.column -> expected first value


@dataclass(frozen=True)
class Case:
    id: str
    name: str  # file name (the message must name it)
    data: bytes
    expect: Error | Skip | Reads
    fmt: str | None = None  # None: detect the format
    what: str = ""  # one line for the report table


# ---------------------------------------------------------------- valid content


def vllm_result(**over) -> dict:
    """A `vllm bench serve --save-result --save-detailed` object (0.19 keys, 3 requests)."""
    d = {
        "date": "20260722-060114", "endpoint_type": "openai", "backend": "openai", "label": None,
        "model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 3,
        "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 4, "duration": 2.0,
        "completed": 3, "failed": 0, "total_input_tokens": 300, "total_output_tokens": 9,
        "request_throughput": 1.5, "request_goodput": None, "output_throughput": 4.5,
        "total_token_throughput": 154.5,
        "input_lens": [100, 100, 100], "output_lens": [3, 3, 3], "ttfts": [0.1, 0.2, 0.3],
        "itls": [[0.02, 0.02], [0.03, 0.03], [0.04, 0.04]],
        "start_times": [1000.0, 1000.1, 1000.2], "generated_texts": ["a", "b", "c"],
        "errors": ["", "", ""],
        "mean_ttft_ms": 200.0, "median_ttft_ms": 200.0, "std_ttft_ms": 81.6, "p99_ttft_ms": 298.0,
    }
    d.update(over)
    return d


def vllm_json(**over) -> bytes:
    return json.dumps(vllm_result(**over)).encode()  # vLLM writes one line, no newline


DENSE, MOE = "Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-35B-A3B-FP8"  # model ids of the two H100 roles

def bench(folder: Path, name: str, i=100, o=3, c=4, model=DENSE, **over) -> Path:
    """A `vllm bench serve` result of three requests of i prompt and o output tokens at concurrency c."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(vllm_json(input_lens=[i] * 3, output_lens=[o] * 3, total_input_tokens=3 * i,
                               total_output_tokens=3 * o, max_concurrency=c, model_id=model, tokenizer_id=model,
                               **over))
    return path


LB_FIELDS = {
    "build_commit": "0253fb21f", "build_number": 10269, "cpu_info": "AMD RYZEN AI MAX+ 395",
    "gpu_info": "AMD Radeon 8060S Graphics (RADV GFX1151)", "backends": "Vulkan",
    "model_filename": "/m/qwen3.gguf", "model_type": "qwen3moe 30B.A3B Q4_K - Medium",
    "model_size": 17709692928, "model_n_params": 30532122624, "n_batch": 2048, "n_ubatch": 512,
    "n_threads": 16, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 99, "flash_attn": 1,
    "n_prompt": 512, "n_gen": 0, "n_depth": 0, "test_time": "2026-01-05T10:00:00Z",
    "avg_ns": 338223825, "stddev_ns": 1200000, "avg_ts": 1513.790461, "stddev_ts": 5.25,
}


def lb_line(**over) -> str:
    """One `llama-bench -o jsonl` line (fields by name; None drops a field)."""
    rec = {k: v for k, v in {**LB_FIELDS, **over}.items() if v is not None}
    body = json.dumps(rec)[:-1]
    return body + ', "samples_ns": [ 338000000, 338447650 ],"samples_ts": [ 1514.79, 1512.79 ]}'


def lb_jsonl(*lines: str, end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode()


TG = dict(n_prompt=0, n_gen=128, avg_ts=50.0, stddev_ts=0.04)

LB_MD = (
    "| model                          |       size |     params | backend    | ngl |            test |"
    "                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: |"
    " -------------------: |\n"
    "| qwen3moe 30B.A3B Q4_K - Medium |  16.49 GiB |    30.53 B | Vulkan     |  99 |           pp512 |"
    "      1513.79 ± 5.25 |\n"
    "| qwen3moe 30B.A3B Q4_K - Medium |  16.49 GiB |    30.53 B | Vulkan     |  99 |           tg128 |"
    "         50.00 ± 0.04 |\n"
    "\n"
    "build: 0253fb21f (10269)\n"
)

LB_CSV_HEADER = "build_commit,build_number,backends,model_type,n_prompt,n_gen,avg_ts,stddev_ts"


def lb_csv(*rows: str) -> bytes:
    return ("\n".join([LB_CSV_HEADER, *rows]) + "\n").encode()


THROUGHPUT_JSON = json.dumps({  # what `vllm bench throughput --output-json` writes
    "elapsed_time": 12.5, "num_requests": 100, "total_num_tokens": 51200,
    "requests_per_second": 8.0, "tokens_per_second": 4096.0,
}, indent=4).encode()

PACKAGE_JSON = json.dumps({
    "name": "my-app", "version": "1.0.0", "scripts": {"test": "jest"}, "dependencies": {"left-pad": "^1.3.0"},
}, indent=2).encode()

ANSI_BANNER = "\x1b[1;32mggml_vulkan: Found 1 Vulkan devices:\x1b[0m\n"


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _cut(data: bytes, at: float = 0.5) -> bytes:
    return data[: int(len(data) * at)]


# ---------------------------------------------------------------- per-file cases

_LB_MD_PLUSMINUS = LB_MD.encode("latin-1").index(b"\xb1")  # offset of the first ± byte
_nan_ttft = json.dumps(vllm_result(ttfts=[0.1, float("nan"), 0.3])).encode()  # json writes NaN
_append = vllm_json() + b"\n" + _cut(vllm_json(completed=2), 0.6)

FILE_CASES: list[Case] = [
    # --- vllm bench serve JSON
    Case("vllm-truncated-json", "run.json", _cut(vllm_json()),
         Error(("line 1, column", "truncated JSON", "expected a `vllm bench serve")),
         what="bench JSON cut off mid-file"),
    Case("vllm-truncated-append", "appended.json", _append, Error(("line 2, column", "truncated JSON")),
         what="`--append-result` file whose second object is cut off"),
    Case("vllm-throughput-json", "throughput.json", THROUGHPUT_JSON,
         Error(("line 1", "unrecognised format", "vllm-bench-serve")),
         what="`vllm bench throughput` JSON (another tool)"),
    Case("vllm-throughput-json-forced", "throughput.json", THROUGHPUT_JSON,
         Error(("line 1", "missing key(s) 'completed', 'num_prompts', 'duration'", "has 'completed'")),
         fmt="vllm-bench-serve", what="the same, read with --format vllm-bench-serve"),
    Case("vllm-package-json", "package.json", PACKAGE_JSON, Error(("line 1", "unrecognised format", "expected one of")),
         what="an npm package.json"),
    Case("vllm-empty", "empty.json", b"", Error(("file is empty", "expected")), what="empty file"),
    Case("vllm-empty-forced", "empty.json", b"  \n", Error(("file is empty", "expected vllm-bench-serve")),
         fmt="vllm-bench-serve", what="whitespace-only file, format given"),
    Case("vllm-binary", "junk.json", bytes(range(256)) * 2, Error(("byte 128", "not UTF-8", "expected a UTF-8")),
         fmt="vllm-bench-serve", what="binary junk"),
    Case("vllm-utf16-bom", "utf16.json", "\ufeff".encode("utf-16-le") + vllm_json().decode().encode("utf-16-le"),
         Reads(4, {"runs.completed": 3}), what="UTF-16 LE with BOM (PowerShell `>`)"),
    Case("vllm-utf8-bom", "bom.json", b"\xef\xbb\xbf" + vllm_json(), Reads(4, {"runs.completed": 3}),
         what="UTF-8 with BOM"),
    Case("vllm-latin1", "latin1.json", vllm_json(label="cafQQ").replace(b"QQ", b"\xe9"),
         Error((f"byte {vllm_json(label='cafQQ').index(b'QQ')}", "not UTF-8", "iconv")),
         fmt="vllm-bench-serve", what="latin-1 byte in the label"),
    Case("vllm-crlf", "crlf.json", json.dumps(vllm_result(), indent=2).replace("\n", "\r\n").encode(),
         Reads(4, {"runs.duration_s": 2.0}), what="pretty-printed with CRLF line ends"),
    Case("vllm-gzip", "run.json.gz", _gz(vllm_json()), Reads(4, {"runs.completed": 3}), what="gzip-compressed"),
    Case("vllm-corrupt-gzip", "run.json.gz", b"\x1f\x8b\x08\x00" + bytes(range(200)), Error(("corrupt", "gzip")),
         what="gzip magic followed by junk"),
    Case("vllm-truncated-gzip", "cut.json.gz", _cut(_gz(vllm_json() * 20), 0.5), Error(("gzip", "ended before")),
         fmt="vllm-bench-serve", what="gzip stream cut off"),
    Case("vllm-unknown-keys", "future.json", vllm_json(new_metric_2031={"x": 1}, goodput_slo_ms=[1, 2]),
         Reads(4, {"runs.completed": 3}), what="keys from a newer vLLM"),
    Case("vllm-missing-core-array", "noitls.json",
         json.dumps({k: v for k, v in vllm_result().items() if k != "itls"}).encode(),
         Error(("line 1, key 'itls'", "missing while 'input_lens' is present")),
         what="per-request arrays with `itls` missing"),
    Case("vllm-missing-core-key", "old.json",
         json.dumps({k: v for k, v in vllm_result().items() if k not in ("completed", "duration")}).encode(),
         Error(("line 1", "missing key(s) 'completed', 'duration'")), fmt="vllm-bench-serve",
         what="summary without `completed` and `duration`"),
    Case("vllm-array-length", "short.json", vllm_json(ttfts=[0.1, 0.2]),
         Error(("key 'ttfts'", "has 2 entries; expected 3")),
         what="one per-request array shorter than the others"),
    Case("vllm-negative-ttft", "neg.json", vllm_json(ttfts=[0.1, -0.2, 0.3]),
         Skip({"request excluded from metrics: ttft negative": 1}, read=4), what="TTFT < 0 in one request"),
    Case("vllm-absurd-ttft", "slow.json", vllm_json(ttfts=[0.1, 2e6, 0.3]),
         Skip({"request excluded from metrics: ttft too large": 1}, read=4), what="TTFT of 23 days"),
    Case("vllm-nan-ttft", "nan.json", _nan_ttft, Skip({"request excluded from metrics: ttft not a number": 1}, read=4),
         what="NaN TTFT (json writes a bare NaN)"),
    Case("vllm-negative-duration", "negdur.json", vllm_json(duration=-2.0),
         Error(("line 1, key 'duration'", "negative value -2.0", "expected >= 0")), what="negative reported duration"),
    Case("vllm-string-count", "str.json", vllm_json(completed="three"),
         Error(("key 'completed'", "expected a number, found 'three'")), what="a count written as text"),
    Case("vllm-request-rate-text", "rate.json", vllm_json(request_rate="fast"),
         Error(("key 'request_rate'", "expected a number or 'inf'")), what="request_rate neither number nor inf"),
    # --- llama-bench
    Case("lb-partial-last-line", "cut.jsonl", lb_jsonl(lb_line(), lb_line(**TG), end="\n")[:-40],
         Skip({"partial last line": 1}, read=1), what="JSONL whose last line was cut off"),
    Case("lb-crlf", "crlf.jsonl", lb_jsonl(lb_line(), lb_line(**TG), end="\r\n"),
         Reads(2, {"llama_bench.avg_ts": 1513.790461}), what="JSONL with CRLF line ends"),
    Case("lb-ansi-banner", "ansi.md", (ANSI_BANNER + LB_MD).encode(), Skip({"non-table line": 1}, read=2),
         what="markdown after a colour-coded device banner (2>&1)"),
    Case("lb-md-crlf", "crlf.md", LB_MD.replace("\n", "\r\n").encode(), Reads(2, {"llama_bench.avg_ts": 1513.79}),
         what="markdown table with CRLF"),
    Case("lb-utf16-md", "ps.md", LB_MD.encode("utf-16"), Reads(2, {"llama_bench.stddev_ts": 5.25}),
         what="markdown saved as UTF-16 with BOM (± intact)"),
    Case("lb-latin1-md", "cp1252.md", LB_MD.encode("latin-1"), Error((f"byte {_LB_MD_PLUSMINUS}", "not UTF-8")),
         what="markdown with ± as a latin-1 byte"),
    Case("lb-gzip", "run.jsonl.gz", _gz(lb_jsonl(lb_line(), lb_line(**TG))), Reads(2, {"llama_bench.n_prompt": 512}),
         what="gzip JSONL"),
    Case("lb-truncated-json", "cut.json",
         _cut(("[\n" + json.dumps(LB_FIELDS, indent=4) + ",\n" + json.dumps(LB_FIELDS, indent=4) + "\n]\n").encode(),
              0.75),
         Error(("line", "broken JSON", "expected the array written by llama-bench -o json")),
         what="`-o json` array cut off"),
    Case("lb-absurd-ts", "fast.jsonl", lb_jsonl(lb_line(avg_ts=2e7), lb_line(**TG)),
         Skip({"avg_ts out of range": 1}, read=1), what="t/s > 1e7"),
    Case("lb-negative-ts", "neg.jsonl", lb_jsonl(lb_line(avg_ts=-5.0), lb_line(**TG)),
         Skip({"avg_ts out of range": 1}, read=1), what="negative t/s"),
    Case("lb-nan-ts", "nan.csv",
         lb_csv('"abc","1","ROCm","m","512","0","nan","0"', '"abc","1","ROCm","m","0","128","50.0","0.1"'),
         Skip({"avg_ts is not a number": 1}, read=1), what="CSV row with t/s `nan`"),
    Case("lb-csv-short-row", "short.csv", lb_csv('"abc","1","ROCm"', '"abc","1","ROCm","m","0","128","50.0","0.1"'),
         Skip({"CSV line has 3 values, header has 8": 1}, read=1), what="CSV row with too few values"),
    Case("lb-unknown-field", "new.jsonl", lb_jsonl(lb_line(fancy_new_knob=7)),
         Reads(1, {"llama_bench.params": "fancy_new_knob=7;n_threads=16"}), what="a field from a newer build"),
    Case("lb-missing-n-gen", "nogen.jsonl", lb_jsonl(lb_line(n_gen=None), lb_line(**TG)),
         Skip({"missing n_prompt/n_gen": 1}, read=1), what="one row without n_gen"),
    Case("lb-missing-avg-ts-key", "noavg.jsonl", lb_jsonl(lb_line(avg_ts=None)),
         Error(("line 1", "not llama-bench output")),
         fmt="llama-bench-jsonl", what="no row has avg_ts (core key)"),
    Case("lb-banner-only", "stderr.txt", (ANSI_BANNER + "llama-bench: benchmark 1/2: starting\n").encode(),
         Error(("unrecognised format",)), what="only the stderr banner was captured"),
]

# ---------------------------------------------------------------- study folders

MANIFEST = projects.demo_manifest("raw/one.jsonl")


@dataclass(frozen=True)
class StudyCase:
    id: str
    manifest: str | bytes
    files: dict  # relative path -> bytes
    expect: tuple[str, ...]  # parts, each in some problem line; () means valid
    checksums: bool = True  # write SHA256SUMS after the files
    after: dict = field(default_factory=dict)  # files (over)written after the checksums
    what: str = ""


ONE = {"raw/one.jsonl": lb_jsonl(lb_line(), lb_line(**TG))}

STUDY_CASES: list[StudyCase] = [
    StudyCase("m-valid", MANIFEST, ONE, (), what="a valid study (control)"),
    StudyCase("m-missing-fields", MANIFEST.replace("title: Demo\n", "").replace("label: demo data v1\n", ""), ONE,
              ("study.yml: missing key 'title'", "study.yml: missing key 'label'"),
              what="manifest without title and label"),
    StudyCase("m-unknown-key", MANIFEST + "colour: blue\n", ONE, ("study.yml: unknown key 'colour' (known:",),
              what="unknown top-level key"),
    StudyCase("m-unknown-file-key", MANIFEST.replace("name: one}", "name: one, speed: 3}"), ONE,
              ("study.yml: files[0]: unknown key 'speed'",), what="unknown key in a file entry"),
    StudyCase("m-missing-file-key", MANIFEST.replace("config: a, ", ""), ONE,
              ("study.yml: files[0]: missing key 'config'",), what="file entry without config"),
    StudyCase("m-path-escape", MANIFEST + "  - {path: ../outside.jsonl, config: a}\n", ONE,
              ("files[1]: path '../outside.jsonl' escapes the data folder",), what="a `../` path"),
    StudyCase("m-absolute-path", MANIFEST + "  - {path: /etc/passwd, config: a}\n", ONE,
              ("files[1]: path '/etc/passwd' escapes the data folder",), what="an absolute path"),
    StudyCase("m-listed-missing", MANIFEST + "  - {path: raw/two.jsonl, config: a, name: two}\n", ONE,
              ("files[1]: listed file 'raw/two.jsonl' does not exist",), what="a listed file is missing"),
    StudyCase("m-unlisted", MANIFEST, {**ONE, "raw/extra.jsonl": lb_jsonl(lb_line())},
              ("raw/extra.jsonl: present in the data folder but not listed in study.yml",),
              what="a file present but not listed"),
    StudyCase("m-not-yaml", MANIFEST + "files: [\n", ONE, ("study.yml:", "not valid YAML"), what="broken YAML"),
    StudyCase("m-empty-manifest", "", ONE, ("study.yml: expected a mapping at the top level",), what="empty study.yml"),
    StudyCase("m-binary-manifest", bytes(range(256)), ONE, ("study.yml:byte", "not UTF-8"), what="binary study.yml"),
    StudyCase("m-utf16-manifest", MANIFEST.encode("utf-16"), ONE, (), what="study.yml in UTF-16 with BOM (reads)"),
    StudyCase("m-crlf-manifest", MANIFEST.replace("\n", "\r\n"), ONE, (), what="study.yml with CRLF (reads)"),
    StudyCase("m-config-not-mapping", MANIFEST.replace("a: {platform: X}", "a: [1, 2]"), ONE,
              ("configs.a: expected a mapping",), what="a config that is a list"),
    StudyCase("m-checksum-changed", MANIFEST, ONE,
              ("raw/one.jsonl: content changed since its checksum", "--update-checksums"),
              after={"raw/one.jsonl": lb_jsonl(lb_line(avg_ts=1600.0), lb_line(**TG))},
              what="a raw file edited after checksumming"),
    StudyCase("m-no-checksums", MANIFEST, ONE, ("SHA256SUMS: missing", "--update-checksums"), checksums=False,
              what="no SHA256SUMS"),
    StudyCase("m-bad-checksums", MANIFEST, ONE, ("SHA256SUMS:1: expected '<sha256>  <path>'",),
              after={"SHA256SUMS": b"not a checksum line\n"}, what="SHA256SUMS not in sha256sum format"),
    StudyCase("s-duplicate-run-ids",
              MANIFEST.replace("  - {path: raw/one.jsonl, config: a, name: one}\n",
                               "  - {path: raw/a/run.jsonl, config: a}\n  - {path: raw/b/run.jsonl, config: a}\n"),
              {"raw/a/run.jsonl": lb_jsonl(lb_line()), "raw/b/run.jsonl": lb_jsonl(lb_line())},
              ("duplicate run ids ['run:0']", "raw/a/run.jsonl, raw/b/run.jsonl", "unique 'name'"),
              what="two files whose run ids collide"),
    StudyCase("s-duplicate-names", MANIFEST + "  - {path: raw/two.jsonl, config: a, name: one}\n",
              {**ONE, "raw/two.jsonl": lb_jsonl(lb_line())}, ("files[1]: run name 'one' is used twice",),
              what="the same run name twice"),
    StudyCase("s-bad-file-among-good", MANIFEST + "  - {path: raw/two.json, config: a, name: two}\n",
              {**ONE, "raw/two.json": _cut(vllm_json())}, ("raw/two.json:line 1, column", "truncated JSON"),
              what="one unreadable file among readable ones"),
]


def write_file(case: Case, folder: Path) -> Path:
    path = folder / case.id / case.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(case.data)
    return path


def write_study(case: StudyCase, folder: Path) -> Path:
    from benchbook.study.folder import write_checksums

    root = folder / case.id
    for rel, data in case.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    manifest = case.manifest if isinstance(case.manifest, bytes) else case.manifest.encode()
    (root / "study.yml").write_bytes(manifest)
    if case.checksums:
        write_checksums(root)
    for rel, data in case.after.items():
        (root / rel).write_bytes(data)
    return root


# ---------------------------------------------------------------- generic cases (every reader)

# Small valid samples written to the templates of docs/formats.md, one per format
# known today; a reader that lands later is sampled from data/ or tests/fixtures/ instead.
SAMPLES: dict[str, bytes] = {
    "vllm-bench-serve": vllm_json(),
    "llama-benchy": "\n".join((  # llama-benchy 0.4.0's markdown table (ingest/llama_benchy.py)
        "| model | test | t/s (total) | t/s (req) | peak t/s | peak t/s (req) | ttfr (ms) | est_ppt (ms) "
        "| e2e_ttft (ms) |",
        "|:--|--:|--:|--:|--:|--:|--:|--:|--:|",
        "| m | pp1024 (c1) | 4453.68 ± 91.47 | 4453.68 ± 91.47 | | | 291.26 ± 4.55 | 221.01 ± 4.55 | 291.26 ± 4.55 |",
        "| m | tg1024 (c1) | 51.86 ± 0.18 | 51.86 ± 0.18 | 53.67 ± 0.94 | 53.67 ± 0.94 | | | |", "",
        "llama-benchy (0.4.0)", "date: 2026-08-14 14:34:20 | latency mode: generation", "")).encode(),
    "power-series-csv": b"elapsed_s,power_w,temp_c\n10,37.12,63\n20,37.43,64\n30,37.74,65\n",
    "bench-spark-meta": (b'{"profile": "fp8", "model": "Qwen/Qwen3.6-27B-FP8", "vllm_version_reported": "0.26.0",\n'
                         b' "server_config": {"kv_cache_dtype": "fp8", "max_model_len": 131072}}\n'),
    "llama-bench": lb_jsonl(lb_line(), lb_line(**TG)),
    "nvidia-smi-csv": (
        b"index, timestamp, name, power.draw [W], power.limit [W], memory.used [MiB]\n"
        b"0, 2026/06/05 14:12:54.307, NVIDIA H100 80GB HBM3, 208.36 W, 700.00 W, 1003 MiB\n"
        b"0, 2026/06/05 14:12:55.307, NVIDIA H100 80GB HBM3, 512.80 W, 700.00 W, 70321 MiB\n"
    ),
    "prometheus-text": (
        b"# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
        b"# TYPE vllm:prompt_tokens_total counter\n"
        b'vllm:prompt_tokens_total{engine="0",model_name="opt-125m-tp2"} 339968.0\n'
        b"# HELP vllm:generation_tokens_total Number of generation tokens processed.\n"
        b"# TYPE vllm:generation_tokens_total counter\n"
        b'vllm:generation_tokens_total{engine="0",model_name="opt-125m-tp2"} 12345.0\n'
    ),
    "gauntlet-csv": (
        b"# graded by hand\n"
        b"task_id,task,model,checks_total,checks_met,self_verified,seconds,answer,notes\n"
        b"t1,parse a log,Qwen3-8B,5,4,true,31.5,done,missed one edge case\n"
        b"t2,fix the bug,Qwen3-8B,3,3,false,12.0,patched,\n"
    ),
    "tool-call-log": (
        b'{"event": "permissions", "ts": "2026-05-12T09:00:00+03:00", "harness": "oac 0.9.3", '
        b'"tools": ["bash", "read"], "rules": {"bash": {"uv run scripts/db_query.py *": "allow", "*": "deny"}, '
        b'"read": {"/srv/agents/workspace/**": "allow", "*": "deny"}}}\n'
        b'{"event": "tool.call", "ts": "2026-05-12T09:14:07.312+03:00", "session": "ses_5b1e9c0f", '
        b'"agent": "ralf/step_runner", "model": "vllm/Qwen/Qwen3-8B", "message": 3, "call": "call_8d2f61", '
        b'"tool": "bash", "args": {"command": "uv run scripts/db_query.py --sql \\"select 1\\"", '
        b'"description": "query"}, "decision": "allow"}\n'
        b'{"event": "tool.call", "ts": "2026-05-12T09:14:09.100+03:00", "session": "ses_5b1e9c0f", '
        b'"agent": "ralf/step_runner", "model": "vllm/Qwen/Qwen3-8B", "message": 4, "call": "call_8d2f62", '
        b'"tool": "bash", "args": {"command": "rm -rf /tmp/x"}, "decision": "deny", '
        b'"reason": "no allow rule matches; default rule \'*\': deny"}\n'
    ),
    "vllm-server-log": (
        b"(APIServer pid=1) INFO 05-30 07:54:10 [api_server.py:1800] vLLM API server version 0.22.1\n"
        b"(APIServer pid=1) INFO 05-30 07:55:21 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        b"Avg generation throughput: 54.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
        b"Prefix cache hit rate: 0.0%\n"
        b'(APIServer pid=1) INFO:     127.0.0.1:48374 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        b"(APIServer pid=1) INFO 05-30 07:55:31 [loggers.py:271] Engine 000: Avg prompt throughput: 412.3 tokens/s, "
        b"Avg generation throughput: 60.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.2%, "
        b"Prefix cache hit rate: 0.0%\n"
    ),
}


def truncated(sample: bytes) -> bytes:
    """The sample cut in the middle of its last non-empty line (a build killed mid-write)."""
    text = sample.rstrip(b"\r\n")
    start = text.rfind(b"\n") + 1
    return text[: start + max(1, (len(text) - start) // 2)]


def latin1(sample: bytes) -> tuple[bytes, int]:
    """The sample with one latin-1 byte (é) put in the middle of its first line; its offset."""
    end = sample.find(b"\n")
    at = (end if end > 0 else len(sample)) // 2
    return sample[:at] + b"\xe9" + sample[at:], at


GENERIC = {
    "empty": (lambda s: b"", Error(("file is empty", "expected"))),
    "whitespace": (lambda s: b"\n \n\t\n", Error(("file is empty", "expected"))),
    "binary": (lambda s: bytes(range(256)) * 4, Error(("byte 128", "not UTF-8", "expected"))),
    "nul-bytes": (lambda s: b"\x00" * 64 + b"\x01\x02\x03\n" * 8, None),  # valid UTF-8 junk: error, or no rows
    "truncated": (truncated, None),  # error, or the cut line counted as ignored
    "corrupt-gzip": (lambda s: b"\x1f\x8b\x08\x00" + bytes(range(200)), Error(("corrupt", "gzip"))),
    "truncated-gzip": (lambda s: _gz(s * 50)[: len(_gz(s * 50)) // 2], Error(("gzip",))),
}

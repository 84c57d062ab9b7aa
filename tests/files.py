"""Small file helpers the tests share: write a fixture file, read a folder back as bytes, and
one small sample of each format the readers know, to show a reader takes only its own."""

from __future__ import annotations

import gzip
from pathlib import Path

REPO_DATA = Path(__file__).resolve().parents[1] / "data"


def write(tmp_path: Path, name: str, text: str, *, gz: bool = False) -> Path:
    """A UTF-8 text file (gzip-compressed when `gz`) named `name` under `tmp_path`."""
    path = tmp_path / name
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def two_gpu_log(src: Path, dst: Path, second, skip=()) -> Path:
    """A two-GPU nvidia-smi log made from a real one-GPU log, as nvidia-smi prints one when
    the query has no index column: after each data line, the second GPU's line of the same
    sample time, `second(values)` (the line's values, changed: another draw, another uuid).
    The samples numbered in `skip` (0 = the first) lose their second line."""
    lines = src.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for k, line in enumerate(lines[1:]):
        out.append(line)
        if k not in skip:
            out.append(", ".join(second(line.split(", "))))
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


def more_draw(watts: float):
    """For `two_gpu_log`: the second GPU draws `watts` more (power.draw is the last column of
    the real one-GPU logs)."""
    def second(values: list[str]) -> list[str]:
        return [*values[:-1], f"{float(values[-1].removesuffix(' W')) + watts:.2f} W"]
    return second


def serving_log(path: Path, windows: int = 6) -> Path:
    """A short vLLM server log of serving lines only, as club-3090's excerpts are: a stats
    line with one request running every 10 s and an access line after each, no start-up
    lines and no year in the times."""
    lines = []
    for k in range(windows):
        t = f"05-06 06:50:{10 * k:02d}"
        lines += [f"(APIServer pid=1) INFO {t} [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, "
                  f"Avg generation throughput: {80 + k}.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
                  "GPU KV cache usage: 3.1%, Prefix cache hit rate: 0.0%",
                  f'(APIServer pid=1) INFO:     172.19.0.1:5210{k} - "POST /v1/chat/completions HTTP/1.1" 200 OK']
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def serving_only_folder(tmp_path: Path, chapter: str, role: str) -> Path:
    """A data folder made by `benchbook new` for `chapter` from one `serving_log`, its
    configuration given `role` where no rule of the chapter picked one (as a user would)."""
    import yaml

    from benchbook.scaffold.new import new_study
    from benchbook.study.folder import MANIFEST, write_checksums

    out = tmp_path / chapter
    new_study(chapter, out, [serving_log(tmp_path / f"{chapter}.log")], log=lambda msg: None)
    doc = yaml.safe_load((out / MANIFEST).read_text(encoding="utf-8"))
    for config in doc["configs"].values():
        if config.get("role") in (None, "TODO"):
            config["role"] = role
    (out / MANIFEST).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    write_checksums(out)
    return out


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative path: equal dicts mean byte-identical folders."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# file name -> (the reader that owns it, or "" for none, a few lines of it)
FORMAT_SAMPLES = {
    "nvidia.csv": ("nvidia-smi-csv", (
        "index, timestamp, power.draw [W], clocks.current.sm [MHz], clocks.current.memory [MHz], "
        "clocks.current.graphics [MHz]\n0, 2019/08/23 14:54:47.307, 208.36 W, 1545 MHz, 6800 MHz, 1545 MHz\n")),
    "metrics.prom": ("prometheus-text", (
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{engine="0",model_name="m"} 1.0\n')),
    "vllm.log": ("vllm-server-log", (
        "(APIServer pid=1) INFO 05-30 07:55:21 [loggers.py:271] Engine 000: Avg prompt throughput: "
        "0.0 tokens/s, Avg generation throughput: 54.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
        '(APIServer pid=1) INFO:     172.18.0.3:48374 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n')),
    "bench.csv": ("llama-bench-csv", (
        "build_commit,build_number,model_type,n_prompt,n_gen,avg_ts\n"
        '"1c1409e1","6865","gpt-oss 20B F16","512","0","1513.790461"\n')),
    "bench.md": ("llama-bench-md", (
        "| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
        "| qwen3moe 30B.A3B Q4_K - Medium | 16.49 GiB | 30.53 B | ROCm | 99 | pp512 | 1000.00 ± 1.00 |\n")),
    "tools.jsonl": ("tool-call-log",
                    '{"session": "s1", "model": "m", "tool": "bash", "target": "ls", "allowed": true}\n'),
    "meta.json": ("bench-spark-meta", '{"profile": "fp8", "model": "Qwen/Qwen3.6-27B-FP8", "vllm_version_reported": '
                  '"0.26.0", "server_config": {"kv_cache_dtype": "fp8"}}\n'),
    "11-rate-sweep.json": ("bench-spark-capacity",
                           '{"model": "m", "capacity_by_slo_ms": {"2000": null}, "steps": []}\n'),
    "other.csv": ("", "time, power, memory\n10:00, 200, 1000\n"),
    "notes.md": ("", "# Notes\n\nSome text about metrics.\n"),
}


def others(reader: str) -> dict[str, str]:
    """The samples of every format but this reader's (all the formats of its module)."""
    from benchbook.ingest import readers

    mine = readers()[reader]
    return {name: text for name, (owner, text) in FORMAT_SAMPLES.items() if readers().get(owner) is not mine}


def assert_sniffs_no_other_format(module, reader: str) -> None:
    """The reader's sniff refuses every other format's sample and the committed bench JSON."""
    for name, text in others(reader).items():
        assert not module.sniff(text), name
    for path in sorted(REPO_DATA.glob("*/raw/*/*.json*"))[:4]:
        with open(path, encoding="utf-8") as fh:
            assert not module.sniff(fh.read(8192)), path


def assert_detect_picks_it_for_no_other_format(module, reader: str, tmp_path: Path) -> None:
    """benchbook.ingest.detect never hands another format's sample to this reader."""
    from benchbook import ingest
    from benchbook.ingest import IngestError

    for name, text in others(reader).items():
        try:
            mod = ingest.detect(write(tmp_path, name, text))
        except IngestError:
            continue
        assert mod is not module, name
    assert ingest.readers()[reader] is module

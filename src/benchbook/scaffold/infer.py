"""What a raw file says about itself: run context and configuration facts for `benchbook new`.

`describe(path)` reads one raw file with the project's readers (`benchbook.ingest`) and
returns what the file itself records about its run (the run-context keys of a study.yml
file entry) and about the configuration that produced it (keys of a `configs` entry),
each value with the place it was read (`Fact.source`). The raw text is read again only
for what the readers drop: llama-bench device banners, its command line and `gpu_info`;
the vLLM start-up lines that print the engine arguments; `--metadata` keys of a bench
JSON; the year a docker prefix gives a log line.

Nothing is guessed: a key the file does not record goes to `todo` as a one-line message
that starts with the key (`"date: ..."`), so a caller can drop it when another file of the
same configuration supplies the key. A file no reader accepts gives `problems` (the
IngestError message) and format "unknown"; `describe` never raises for a file.

Files holding several runs (bench JSONL written with `--append-result`, llama-bench output
over several backends, builds or models) list each run in `runs`; a key whose value
differs between runs is left out of the file-level facts and named in `todo`.
"""

from __future__ import annotations

import ast
import csv
import gzip
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date as _date
from pathlib import Path, PurePosixPath, PureWindowsPath

import orjson
import pandas as pd

from ..ingest import Batches
from ..ingest.errors import IngestError
from ..ingest.redact import redact
from ..ingest.result import IngestResult
from ..ingest.textio import ANSI, GZIP_ERRORS, GZIP_MAGIC, read_bytes, read_head, read_text

CONTEXT_KEYS = ("concurrency", "request_rate", "input_len", "output_len", "dataset", "ignore_eos", "seed", "date",
                "power_limit_w", "failed")
CONFIG_KEYS = ("model", "quantisation", "engine", "engine_version", "platform", "accelerators",
               "backend", "build", "speculative", "kv_dtype", "tensor_parallel")

# Keys a user must supply when the file does not say them, by reader format family.
_CORE_CONFIG = ("model", "quantisation", "engine", "engine_version", "platform", "accelerators")
_WANTED = {
    "vllm-bench-serve": (("concurrency", "input_len", "output_len", "dataset", "ignore_eos", "seed", "date"),
                         _CORE_CONFIG),
    "vllm-server-log": (("date",), _CORE_CONFIG),
    "llama-bench": (("date",), _CORE_CONFIG),
    "prometheus-text": (("date",), _CORE_CONFIG),
    "nvidia-smi-csv": (("date",), ("platform", "accelerators")),
    "tool-call-log": (("date",), ("model",)),
    "gauntlet-csv": (("date",), ("model",)),
    "bench-spark-meta": ((), ()),
    "bench-spark-capacity": (("date",), ("model",)),
    "power-series-csv": (("date",), ()),
    "llama-benchy": (("date",), _CORE_CONFIG),
    "bench-spark-runner-log": (("date",), ()),
}
_WHY_MISSING = {
    "dataset": "vllm bench serve does not write the dataset into its JSON",
    "ignore_eos": "vllm bench serve does not write --ignore-eos into its JSON",
    "seed": "vllm bench serve does not write --seed into its JSON",
    "engine": "the bench JSON names only the client backend, not the server that answered",
    "engine_version": "the file does not print the engine version",
    "platform": "the file names no GPU or machine",
    "accelerators": "the file names no GPU",
    "model": "the file names no model",
}


@dataclass
class Fact:
    value: object
    source: str  # where it was read, e.g. "max_concurrency in the JSON", "line 12: device banner"


@dataclass
class FileFacts:
    path: Path
    format: str  # the detected reader format
    tables: dict[str, int] = field(default_factory=dict)  # table -> rows read
    context: dict[str, Fact] = field(default_factory=dict)  # run-context keys of a file entry
    config: dict[str, Fact] = field(default_factory=dict)  # configuration keys
    runs: list[dict] = field(default_factory=list)  # {"id", "context", "config", "settings", "todo"} per run
    settings: dict[str, Fact] = field(default_factory=dict)  # a one-run file's workload settings (load, rate)
    todo: list[str] = field(default_factory=list)  # "key: why it is unknown; what to do"
    problems: list[str] = field(default_factory=list)  # why the file cannot be read


def describe(path: str | Path, *, result: IngestResult | None = None) -> FileFacts:
    """Facts one raw file records about its run and configuration.

    Pass `result` when the caller has read the file already, so it is not read twice."""
    path = Path(path)
    try:
        tables = _read(path, result)
    except IngestError as exc:
        return FileFacts(path, "unknown", problems=[str(exc)])
    facts = FileFacts(path, tables.format, tables.counts)
    family = _family(tables.format)
    try:
        _HANDLERS.get(family, _nothing)(facts, tables)
        _date_from_name(facts)
    except Exception as exc:  # a bug here must not hide the facts of a file that reads fine
        facts.problems.append(f"{path}: facts could not be inferred ({type(exc).__name__}: {exc}); "
                              "this is a bug in benchbook.scaffold.infer: please report it with this file")
    _missing(facts, family)
    return facts


# ---------------------------------------------------------------- reading


@dataclass
class _Tables:
    format: str
    counts: dict[str, int]
    frames: dict[str, pd.DataFrame]


def _read(path: Path, result: IngestResult | None) -> _Tables:
    """The reader's tables, in batches so that a long server log is never held whole:
    access lines are only counted, and of the windows only the first is kept."""
    if result is not None:
        return _Tables(result.format, {n: len(df) for n, df in result.tables.items()}, dict(result.tables))
    batches = Batches(path)
    counts: Counter = Counter()
    parts: dict[str, list[pd.DataFrame]] = {}
    for batch in batches:
        for name, df in batch.items():
            counts[name] += len(df)
            if name == "access" or (name == "windows" and name in parts):
                continue
            parts.setdefault(name, []).append(df.head(1) if name == "windows" else df)
    frames = {n: (dfs[0] if len(dfs) == 1 else pd.concat(dfs, ignore_index=True)) for n, dfs in parts.items()}
    return _Tables(batches.result.format, dict(counts), frames)


def _family(fmt: str) -> str:
    return "llama-bench" if fmt.startswith("llama-bench") else "llama-benchy" if fmt.startswith("benchy-") else fmt


def _nothing(facts: FileFacts, tables: _Tables) -> None:
    """A format with nothing to infer."""


# ---------------------------------------------------------------- shared helpers


def _plain(value):
    """numpy / pandas scalars as Python values (YAML-friendly); NA as None."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):
        value = value.item()
    return value


def _round(x: float) -> int:
    return int(math.floor(x + 0.5))


def _num(value) -> str:
    """A number as people write it: 10 not 10.0, inf."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _model_name(name: str) -> str:
    """A model as a config names it: a local path (or a GGUF file's) becomes its last
    component, because the directories are the user's own and say nothing about the model."""
    text = str(name).strip()
    if text.startswith(("/", "~", ".")) or re.match(r"^[A-Za-z]:[\\/]", text) or text.lower().endswith(".gguf"):
        cls = PureWindowsPath if "\\" in text else PurePosixPath
        return cls(text).name or text
    return text


_QUANT = re.compile(r"""(?<![A-Za-z0-9])(
      (?:NV|MX)FP4(?:[-_]MOE)? | FP8(?:[-_](?:dynamic|static|block))? | FP4
    | W\d{1,2}A\d{1,2} | INT[248] | AWQ | GPTQ | AutoRound | EXL[23] | HQQ | bnb | [248]-?bits?
    | BF16 | FP16 | F16 | FP32 | F32
    | (?:UD-)?I?Q[1-8](?:_[0-9A-Z]{1,3})* | TQ[12]_0
)(?![A-Za-z0-9])""", re.I | re.X)


def _quant_tokens(name: str) -> str | None:
    """The quantisation a model id or GGUF file name spells (FP8, AWQ, Q4_K_M, ...), as written."""
    seen, out = set(), []
    for m in _QUANT.finditer(_model_name(name)):
        token = m.group(1)
        if token.lower() not in seen:
            seen.add(token.lower())
            out.append(token)
    return " ".join(out) or None


def _quant_fact(model: str | None, where: str) -> Fact | None:
    tokens = _quant_tokens(model) if model else None
    return Fact(tokens, f"{where} '{_model_name(model)}'") if tokens else None


def _ymd(y, m, d) -> str | None:
    try:
        return _date(int(y), int(m), int(d)).isoformat()
    except ValueError:
        return None


_NAME_DATE = re.compile(r"(?<!\d)(20\d\d)([-_]?)(\d\d)\2(\d\d)(?!\d)")
_ISO_DATE = re.compile(r"(20\d\d)[-/](\d\d)[-/](\d\d)")


def _date_in(text: str) -> str | None:
    """The first valid date a text spells as YYYYMMDD, YYYY-MM-DD or YYYY_MM_DD."""
    for m in _NAME_DATE.finditer(text):
        if d := _ymd(m.group(1), m.group(3), m.group(4)):
            return d
    return None


def _date_from_name(facts: FileFacts) -> None:
    """A date in the file name: after a bench JSON's own `date`, before any timestamp of the
    content (log prefixes, test_time, samples), which may be UTC where the name is local."""
    if any(t.startswith("date:") and "differs" in t for t in facts.todo):
        return
    old = facts.context.get("date")
    if (old and facts.format == "vllm-bench-serve") or not (d := _date_in(facts.path.name)):
        return
    other = f"; the content says {old.value} ({old.source})" if old and old.value != d else ""
    facts.context["date"] = Fact(d, f"file name '{facts.path.name}'{other}")
    facts.todo[:] = [t for t in facts.todo if not t.startswith("date:")]


def _missing(facts: FileFacts, family: str) -> None:
    """A todo for every key this kind of file should give and did not."""
    context, config = _WANTED.get(family, ((), ()))
    named = {t.split(":", 1)[0] for t in facts.todo}
    for section, keys in ((facts.context, context), (facts.config, config)):
        for key in keys:
            if key == "concurrency" and "request_rate" in facts.context:
                continue  # a rate-limited run is described by its rate
            if key not in section and key not in named:
                why = _WHY_MISSING.get(key, f"this {facts.format} file does not record it")
                if key == "quantisation" and "model" in facts.config:
                    why = f"the model name '{facts.config['model'].value}' names none and the file records none"
                facts.todo.append(f"{key}: {why}; set it by hand")


def _accelerators(names: list[str], count_known: bool = True) -> str:
    """'2x NVIDIA GeForce RTX 3090, 1x NVIDIA RTX A4000' from one name per device."""
    counts = Counter(names)
    if not count_known:
        return ", ".join(counts)
    return ", ".join(f"{n}x {name}" for name, n in counts.items())


def _hashable(value):
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (list, dict)) else value


def _merge_runs(facts: FileFacts, runs: list[dict], what: str) -> None:
    """File-level facts from several runs: a key the runs agree on, or a todo naming the
    values when they differ (the caller splits the file or sets the key per run)."""
    n = len(runs)
    for section in ("context", "config"):
        target = getattr(facts, section)
        keys = list(dict.fromkeys(k for r in runs for k in r[section]))
        for key in keys:
            got = [r[section].get(key) for r in runs]
            values = list(dict.fromkeys(_hashable(f.value) for f in got if f is not None))
            if len(values) == 1 and all(f is not None for f in got):
                target.setdefault(key, Fact(got[0].value, f"{got[0].source} (the same in all {n} {what})"))
                continue
            shown = ", ".join(str(v) for v in values[:6]) + (", ..." if len(values) > 6 else "")
            given = "" if all(f is not None for f in got) else f"known for {sum(f is not None for f in got)} of them, "
            facts.todo.append(f"{key}: differs between the {n} {what} of this file ({given}{shown}); "
                              "split the file or set it per run")
    # distinguishing config only: what every run shares is at file level already
    for r in runs:
        r["config"] = {k: v for k, v in r["config"].items() if k not in facts.config}
    facts.runs = runs


def _todo_for(facts: FileFacts, key: str) -> bool:
    return any(t.startswith(key + ":") for t in facts.todo)


def _todo(facts: FileFacts, key: str, text: str) -> None:
    if not _todo_for(facts, key):
        facts.todo.append(f"{key}: {text}")


# ---------------------------------------------------------------- vllm bench serve


# keys `vllm bench serve` / benchmark_serving.py write themselves; any other scalar key is
# a `--metadata KEY=VALUE` entry of the user's
_BENCH_KEYS = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
    "max_concurrent_requests", "rtfx", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps",
    "input_lens", "output_lens", "ttfts", "itls", "start_times", "errors", "latencies",
    "generated_texts",
}
_STAT_KEY = re.compile(r"^(mean|median|std|p[0-9.]+)_[a-z0-9_]+_ms$")
# --metadata keys users commonly pass -> (section, study key)
_METADATA = {
    "dataset": ("context", "dataset"), "dataset_name": ("context", "dataset"),
    "ignore_eos": ("context", "ignore_eos"), "seed": ("context", "seed"),
    "concurrency": ("context", "concurrency"),
    "input_len": ("context", "input_len"), "random_input_len": ("context", "input_len"),
    "output_len": ("context", "output_len"), "random_output_len": ("context", "output_len"),
    "gpu": ("config", "accelerators"), "gpus": ("config", "accelerators"),
    "accelerator": ("config", "accelerators"), "accelerators": ("config", "accelerators"),
    "hardware": ("config", "platform"), "platform": ("config", "platform"),
    "engine": ("config", "engine"), "engine_version": ("config", "engine_version"),
    "vllm_version": ("config", "engine_version"), "quantization": ("config", "quantisation"),
    "quantisation": ("config", "quantisation"), "kv_cache_dtype": ("config", "kv_dtype"),
    "tensor_parallel_size": ("config", "tensor_parallel"), "tp": ("config", "tensor_parallel"),
}
_INT_KEYS = {"seed", "concurrency", "input_len", "output_len", "tensor_parallel"}


def _bench(facts: FileFacts, tables: _Tables) -> None:
    """vLLM bench JSON: one run per result object."""
    runs = tables.frames.get("runs", pd.DataFrame())
    objects = _json_objects(facts.path)
    if len(objects) != len(runs):
        objects = [{} for _ in range(len(runs))]
    requests = tables.frames.get("requests", pd.DataFrame())
    stats = tables.frames.get("run_stats", pd.DataFrame())
    out = []
    for i, (row, obj) in enumerate(zip(runs.to_dict("records"), objects), 1):
        where = ("the JSON" if len(runs) == 1 else
                 f"the JSON object on line {obj['__line__']}" if "__line__" in obj else f"JSON object {i}")
        run = {"id": row["run_id"], "context": {}, "config": {}, "settings": {}, "todo": {}}
        reqs = requests[requests["run_id"] == row["run_id"]] if len(requests) else requests
        _bench_run(run, row, obj, reqs, _spec_positions(stats, row["run_id"]), where)
        out.append(run)
    todos = [r.pop("todo") for r in out]
    if len(out) == 1:
        facts.context.update(out[0]["context"])
        facts.config.update(out[0]["config"])
        facts.settings.update(out[0]["settings"])
        rate = out[0]["settings"].get("request_rate")
        if "concurrency" not in facts.context and rate is not None and math.isfinite(float(rate.value)):
            facts.context["request_rate"] = rate  # a rate-limited run: its rate, not a concurrency
            todos[0].pop("concurrency", None)
        facts.todo.extend(f"{k}: {v}; set it by hand" for k, v in todos[0].items())
        return
    for run, todo in zip(out, todos):
        run["todo"] = [f"{k}: {v}; set it by hand" for k, v in todo.items()]
    _merge_runs(facts, out, "runs")
    missing = [r for r in out if "concurrency" not in r["context"]]
    if missing and "concurrency" not in facts.context:
        rates = ", ".join(dict.fromkeys(_num(r["settings"]["request_rate"].value) for r in missing
                                        if "request_rate" in r["settings"]))
        _todo(facts, "concurrency", f"max_concurrency is null in {len(missing)} of the {len(out)} runs "
                                    f"(request rates {rates or 'not recorded'}): a rate-limited run has no fixed "
                                    "concurrency and an all-at-once run no client-side cap; set it per run by hand")


def _json_objects(path: Path) -> list[dict]:
    """The file's result objects as written, for the `--metadata` keys the reader drops."""
    try:
        raw = read_bytes(path)
        try:
            value = orjson.loads(raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw)
            return [value] if isinstance(value, dict) else []
        except orjson.JSONDecodeError:
            pass
        text, out, pos = read_text(path), [], 0
        decoder, blank = json.JSONDecoder(), re.compile(r"\s*")
        pos = blank.match(text, 0).end()
        while pos < len(text):
            value, end = decoder.raw_decode(text, pos)
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if not isinstance(v, list)}
                value["__line__"] = text.count("\n", 0, pos) + 1
            out.append(value if isinstance(value, dict) else {})
            pos = blank.match(text, end).end()
        return out
    except (IngestError, ValueError, *GZIP_ERRORS):
        return []


def _spec_positions(stats: pd.DataFrame, run_id: str) -> int:
    if not len(stats):
        return 0
    mine = stats[(stats["run_id"] == run_id) & stats["metric"].str.startswith("spec_accept_pos")]
    return len(mine)


def _bench_run(run: dict, row: dict, obj: dict, reqs: pd.DataFrame, positions: int, where: str) -> None:
    ctx, cfg, settings, todo = run["context"], run["config"], run["settings"], run["todo"]
    rate = _plain(row.get("request_rate"))
    if rate is not None:
        settings["request_rate"] = Fact(rate, f"request_rate in {where}")
    for key in ("num_prompts", "label", "backend"):
        if (v := _plain(row.get(key))) is not None:
            settings[key] = Fact(v, f"{key} in {where}")
    if (load := _plain(row.get("load"))) is not None:
        settings["load"] = Fact(load, f"max_concurrency and request_rate in {where}")
    _bench_concurrency(ctx, todo, row, rate, where)
    for key, column, total in (("input_len", "input_tokens", "total_input_tokens"),
                               ("output_len", "output_tokens", "total_output_tokens")):
        if fact := _mean_len(row, reqs, column, total, where):
            ctx[key] = fact
    if d := _bench_date(row.get("date")):
        ctx["date"] = Fact(d, f"date in {where} ({row['date']})")
    if _plain(row.get("completed")) == 0:
        n = _plain(row.get("num_prompts"))
        ctx["failed"] = Fact(f"no request completed (of {n if n is not None else 'the'} sent)",
                             f"completed in {where}")
    model = _plain(row.get("model_id"))
    if model:
        cfg["model"] = Fact(_model_name(model), f"model_id in {where} (the name sent to the server)")
        if q := _quant_fact(model, f"model_id in {where}:"):
            cfg["quantisation"] = q
    if _plain(row.get("spec_num_drafts")) is not None or _plain(row.get("spec_acceptance_length")) is not None:
        text = f"speculative decoding, num_speculative_tokens={positions}" if positions else "speculative decoding"
        more = f" ({positions} per-position acceptance rates)" if positions else ""
        cfg["speculative"] = Fact(text, f"spec_decode_* keys in {where}{more}")
    _bench_metadata(run, obj, where)


def _bench_concurrency(ctx: dict, todo: dict, row: dict, rate, where: str) -> None:
    """Concurrency is max_concurrency; a rate-limited or all-at-once run without a cap has none."""
    conc = _plain(row.get("max_concurrency"))
    if conc is not None:
        ctx["concurrency"] = Fact(int(conc), f"max_concurrency in {where}")
    elif rate is not None and math.isfinite(rate):
        todo["concurrency"] = (f"max_concurrency is null in {where} (request rate {_num(rate)}/s: a "
                               "rate-limited run has no fixed concurrency)")
    elif rate is not None:
        n = _plain(row.get("num_prompts"))
        todo["concurrency"] = (f"max_concurrency is null and request_rate is inf in {where} (all "
                               f"{n if n is not None else 'the'} prompts sent at once, no client-side cap)")
    else:
        todo["concurrency"] = f"neither max_concurrency nor request_rate is in {where}"


def _mean_len(row: dict, reqs: pd.DataFrame, column: str, total: str, where: str) -> Fact | None:
    """Mean tokens per completed request: the setting itself when every request had it."""
    if len(reqs) and column in reqs:
        lens = reqs.loc[reqs["ok"].fillna(False).astype(bool), column].dropna()
        if len(lens):
            lo, hi, mean = int(lens.min()), int(lens.max()), float(lens.mean())
            if lo == hi:
                return Fact(lo, f"{column.split('_')[0]}_lens in {where}: every one of the {len(lens)} "
                                f"completed requests had {lo} tokens")
            return Fact(_round(mean), f"mean of {column.split('_')[0]}_lens over the {len(lens)} completed "
                                      f"requests in {where} ({mean:.1f}; range {lo}-{hi})")
    tokens, done = _plain(row.get(total)), _plain(row.get("completed"))
    if tokens is None or not done:
        return None
    return Fact(_round(tokens / done), f"mean per completed request in {where}: {total} / completed = "
                                       f"{tokens}/{done} = {tokens / done:.1f}")


def _bench_date(value) -> str | None:
    text = _plain(value)
    if not text:
        return None
    m = re.match(r"^(\d{4})(\d\d)(\d\d)-\d{6}$", str(text)) or _ISO_DATE.match(str(text))
    return _ymd(*m.groups()) if m else None


def _bench_metadata(run: dict, obj: dict, where: str) -> None:
    """`--metadata KEY=VALUE` entries: settings a user recorded with the run. A length the
    user wrote down is the setting, so it wins over the measured mean (named in the source)."""
    for key, value in obj.items():
        if key in _BENCH_KEYS or key == "__line__" or _STAT_KEY.match(key) or key.startswith("spec_decode"):
            continue
        if isinstance(value, (list, dict)) or value is None:
            continue
        target = _METADATA.get(key.lower())
        source = f"{key} in {where} (a --metadata entry)"
        if target is None:
            run["settings"][key] = Fact(redact(value) if isinstance(value, str) else value, source)
            continue
        section, name = target
        parsed = _metadata_value(name, value)
        if parsed is None:
            continue
        old = run[section].get(name)
        if old is not None and name in ("input_len", "output_len"):
            source += f"; {old.source.split(' in ')[0]}: {old.value}"
        elif old is not None:
            continue  # what vLLM itself wrote comes first
        run[section][name] = Fact(parsed, source)
        run["todo"].pop(name, None)


def _metadata_value(name: str, value):
    if name == "ignore_eos":
        text = str(value).strip().lower()
        return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(text)
    if name in _INT_KEYS:
        try:
            return int(str(value).strip())
        except ValueError:
            return None
    return redact(str(value)) if isinstance(value, str) else value


# ---------------------------------------------------------------- llama-bench


# one GPU per line, as llama.cpp's backends print them to stderr
_DEVICE_LINES = [
    (re.compile(r"^ggml_vulkan: (\d+) = (.+?) \([^()]*\)(?: \|.*)?$"), "Vulkan device banner", 2, None),
    (re.compile(r"^\s*Device (\d+): ([^,]+)(?:, (compute capability [\d.]+|gfx\w+))?"), "device banner", 2, 3),
    (re.compile(r"^ggml_metal\w*: (?:found device|GPU name): +(.+?)\s*$"), "Metal device banner", 1, None),
    (re.compile(r"^ggml_sycl\w*: .*?\b(Intel\(R\) .+?)\s*$"), "SYCL device banner", 1, None),
]
_FOUND = re.compile(r"^(?:ggml_vulkan: Found|ggml_cuda_init: found) (\d+) (\w+) devices")
_BUILD_LINE = re.compile(r"^build: (\S+) \((\d+)\)")
_COMMAND = re.compile(r"(?:^|[\s/\\])llama-bench(?:\.exe)?\s+(-.*)$")
_GGUF = re.compile(r"[^\s|'\"`,]+\.gguf\b", re.I)
UNKNOWN_BUILD = "unknown"  # llama.cpp's BUILD_COMMIT when it was built without git
_RUN_COLUMNS = ["backend", "build_commit", "build_number", "model_filename", "model", "n_gpu_layers",
                "flash_attn", "params"]


def _llama(facts: FileFacts, tables: _Tables) -> None:
    """llama-bench output: one run per backend/build/model/settings group of test rows."""
    rows = tables.frames.get("llama_bench", pd.DataFrame())
    text = read_text(facts.path)
    raw = _llama_raw(text, tables.format)
    facts.config["engine"] = Fact("llama.cpp", "llama-bench output (llama.cpp's benchmark tool)")
    facts.config["speculative"] = Fact("none", "llama-bench measures without speculative decoding")
    facts.context["concurrency"] = Fact(1, "llama-bench runs one sequence at a time")
    if raw["command"]:
        line, cmd = raw["command"]
        facts.config["command"] = Fact(redact(cmd), f"line {line}: llama-bench command line")
    runs = [_llama_run(group, raw) for group in _blocks(rows)]
    if len(runs) == 1:
        run = runs[0]
        facts.context.update(run["context"])
        facts.config.update(run["config"])
    elif runs:
        _merge_runs(facts, runs, "llama-bench runs")
    if not runs:
        _llama_empty(facts)
    _llama_unknowns(facts, rows)


def _llama_empty(facts: FileFacts) -> None:
    """A file llama-bench wrote no test row into names no model, build or GPU: each is a to-do
    (the model's says why), so the file is never taken for a run of another file's model."""
    why = "the file holds llama-bench's header and no test row"
    _todo(facts, "model", f"{why}: the run failed before its first test (a model that did not load) or was "
                          "cut off, so its model and build are unknown; set them by hand, or leave the file out")
    for key in ("quantisation", "build", "engine_version", "platform", "accelerators"):
        _todo(facts, key, f"unknown: {why}; set it by hand")
    _todo(facts, "date", f"{why}, so no test_time; set it by hand")


def _llama_unknowns(facts: FileFacts, rows: pd.DataFrame) -> None:
    """What llama-bench output leaves unknown, said for what it is: a build without git, the
    markdown table's missing date; tests on several days are dated by the first."""
    if getattr(facts.config.get("build"), "value", None) == UNKNOWN_BUILD:
        _todo(facts, "engine_version", "llama-bench prints this build as `unknown (0)` (llama.cpp built without "
                                       "git), so the file does not say which release ran; set it if you know it")
    if facts.format in ("llama-bench-md", "llama-bench-log") and "date" not in facts.context:
        _todo(facts, "date", "llama-bench's markdown table records no date (test_time is only in its json, "
                             "jsonl, csv and sql output); set it by hand")
    days = sorted({d for t in rows.get("test_time", pd.Series(dtype=object)).dropna().astype(str)
                   if (d := _bench_date_iso(t))})
    if len(days) > 1 and "date" not in facts.context:
        facts.context["date"] = Fact(days[0], f"test_time of the file's first test (UTC); its tests ran on "
                                              f"{len(days)} days, the last on {days[-1]}")
        facts.todo[:] = [t for t in facts.todo if not t.startswith("date:")]
        shown = ", ".join(days[:6]) + (", ..." if len(days) > 6 else "")
        facts.todo.append(f"date: {days[0]} is the first test's day (test_time, UTC); the tests ran on {shown}: "
                          "split the file by day if its runs need dates of their own")


def _blocks(rows: pd.DataFrame) -> list[pd.DataFrame]:
    """Consecutive test rows of one backend, build, model and settings: one llama-bench
    invocation (the same settings measured again later are a run of their own)."""
    if not len(rows):
        return []
    cols = [c for c in _RUN_COLUMNS if c in rows]
    key = rows[cols].astype("string").fillna("<NA>").agg("\x1f".join, axis=1)
    block = key.ne(key.shift()).cumsum()
    return [g for _, g in rows.groupby(block, sort=True)]


def _llama_raw(text: str, fmt: str) -> dict:
    """What the reader drops: device banners, the command line, GGUF names outside the
    table and, per backend/build, gpu_info and cpu_info of the JSON/CSV records."""
    out = {"devices": [], "found": None, "command": None, "ggufs": [], "info": {}, "builds": []}
    for n, line in enumerate(text.splitlines(), 1):
        if m := _BUILD_LINE.match(line.strip()):
            out["builds"].append((n, m.group(1), int(m.group(2))))
        if (m := _FOUND.match(line)) and out["found"] is None:
            out["found"] = (n, int(m.group(1)), m.group(2))
        for rx, kind, name_group, arch_group in _DEVICE_LINES:
            if m := rx.match(line):
                arch = m.group(arch_group) if arch_group else None
                out["devices"].append((n, kind, m.group(name_group).strip(), arch))
                break
        if out["command"] is None and (m := _COMMAND.search(line)):
            out["command"] = (n, line.strip().lstrip("$# ").strip())
        if not line.lstrip().startswith(("|", "{", "[", '"')):
            out["ggufs"] += [(n, g) for g in _GGUF.findall(line)]
    for rec in _llama_records(text, fmt):
        key = (rec.get("backends"), str(rec.get("build_commit")))
        info = out["info"].setdefault(key, {"gpu_info": set(), "cpu_info": set(), "type_k": set(), "type_v": set()})
        for name in info:
            if rec.get(name) not in (None, ""):
                info[name].add(str(rec[name]))
    return out


def _llama_records(text: str, fmt: str) -> list[dict]:
    """The raw records of JSON, JSONL or CSV output (markdown has no gpu_info)."""
    out = []
    if fmt == "llama-bench-jsonl":
        for line in text.splitlines():
            if line.lstrip().startswith("{"):
                try:
                    out.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    continue
    elif fmt == "llama-bench-json":
        for m in re.finditer(r"\{[^{}]*\}", text):
            try:
                out.append(json.loads(m.group(0)))
            except json.JSONDecodeError:
                continue
    elif fmt == "llama-bench-csv":
        header = None
        for values in csv.reader(line for line in text.splitlines() if line.strip()):
            if "build_commit" in values and "avg_ts" in values:
                header = values
            elif header and len(values) == len(header):
                out.append(dict(zip(header, values)))
    return [r for r in out if isinstance(r, dict)]


def _llama_run(group: pd.DataFrame, raw: dict) -> dict:
    first = group.iloc[0]
    ctx, cfg, settings = {}, {}, {}
    backend = _plain(first.get("backend"))
    if backend:
        cfg["backend"] = Fact(backend, "backend column")
    commit = _llama_build(cfg, first, raw)
    _llama_model(cfg, first, raw)
    _llama_devices(cfg, raw, backend, commit)
    _llama_kv(cfg, first, raw, backend, commit)
    serve = {k: _plain(first.get(k)) for k in ("n_gpu_layers", "flash_attn") if _plain(first.get(k)) is not None}
    for item in str(_plain(first.get("params")) or "").split(";"):
        if "=" in item:
            k, v = item.split("=", 1)
            serve[k] = v
    if serve:
        cfg["serve_args"] = Fact(serve, "n_gpu_layers, flash_attn and the non-default parameters of the rows")
    times = sorted(t for t in group["test_time"].dropna().astype(str)) if "test_time" in group else []
    if times and (d := _bench_date_iso(times[0])):
        last = _bench_date_iso(times[-1])
        more = f"; its last test ran on {last}" if last and last != d else ""
        ctx["date"] = Fact(d, f"test_time of the run's first test ({times[0]}, UTC){more}")
    ctx["concurrency"] = Fact(1, "llama-bench runs one sequence at a time")
    tests = list(dict.fromkeys(_test_name(r) for r in group.to_dict("records")))
    settings["tests"] = Fact(tests, f"n_prompt / n_gen / n_depth of the {len(group)} test rows")
    if "status" in group and (failed := int((group["status"] == "failed").sum())):
        settings["failed_rows"] = Fact(failed, "status column: rows of a run that crashed")
    ids = group["run_id"].astype(str)
    return {"id": ids.iloc[0] if len(ids) == 1 else f"{ids.iloc[0]}..{ids.iloc[-1].rsplit(':', 1)[-1]}",
            "context": ctx, "config": cfg, "settings": settings, "todo": []}


def _llama_build(cfg: dict, first, raw: dict):
    """build and engine_version from the rows (or a `build:` line); returns the commit as
    printed. A build without git prints `unknown (0)`: shown as unknown, with no version."""
    commit, number = _plain(first.get("build_commit")), _plain(first.get("build_number"))
    where = "build_commit / build_number"
    if not commit and number is None and len({b[1:] for b in raw["builds"]}) == 1:
        # the reader takes a `build:` footer for the rows above it; printed first, it is dropped
        line, commit, number = raw["builds"][0]
        where = f"line {line}: build line"
    number = number or None  # 0 is no build number (the reader leaves it empty too)
    if str(commit).lower() == UNKNOWN_BUILD and number is None:
        cfg["build"] = Fact(UNKNOWN_BUILD, f"{where}: '{commit}' and no build number, as llama.cpp prints a build "
                                           "made without git (`build: unknown (0)`)")
    elif commit or number is not None:
        cfg["build"] = Fact(f"{commit} ({number})" if number is not None else commit, where)
    if number is not None:
        cfg["engine_version"] = Fact(f"b{number}", f"{where} (llama.cpp release tags are b<build number>)")
    return commit


def _bench_date_iso(text: str) -> str | None:
    m = _ISO_DATE.match(text)
    return _ymd(*m.groups()) if m else None


def _test_name(row: dict) -> str:
    p, g, d = (int(_plain(row.get(k)) or 0) for k in ("n_prompt", "n_gen", "n_depth"))
    name = "+".join(x for x in (f"pp{p}" if p else "", f"tg{g}" if g else "") if x) or "(no test)"
    return f"{name} @ d{d}" if d else name


def _llama_model(cfg: dict, first, raw: dict) -> None:
    """The GGUF file name says model and quantisation best; the model type is the fallback."""
    filename, model_type = _plain(first.get("model_filename")), _plain(first.get("model"))
    gguf = None
    if filename:
        gguf = (_model_name(filename), "model_filename")
    elif raw["command"] and len(ms := re.findall(r"(?:^|\s)(?:-m|--model)[ =](\S+)", raw["command"][1])) == 1 \
            and "," not in ms[0]:
        gguf = (_model_name(ms[0]), f"line {raw['command'][0]}: -m of the llama-bench command line")
    elif len({g for _, g in raw["ggufs"]}) == 1:
        line, name = raw["ggufs"][0]
        gguf = (_model_name(name), f"line {line}: GGUF file named in the file")
    if gguf:
        cfg["model"] = Fact(gguf[0], gguf[1])
        if tokens := _quant_tokens(gguf[0]):
            more = f" (llama-bench model type: {model_type})" if model_type else ""
            cfg["quantisation"] = Fact(tokens, f"GGUF file name '{gguf[0]}' ({gguf[1]}){more}")
    elif model_type:
        cfg["model"] = Fact(model_type, "model type as llama-bench prints it (the file names no GGUF file)")
    if "quantisation" not in cfg and model_type and (m := re.match(r"^\S+ \S+ (.+)$", model_type)):
        cfg["quantisation"] = Fact(m.group(1), f"file type in the model type '{model_type}'")


def _llama_devices(cfg: dict, raw: dict, backend, commit) -> None:
    """GPUs from gpu_info (JSON/CSV) or the device banners; none for the CPU backend."""
    info = raw["info"].get((backend, str(commit)), {})
    gpus = sorted(info.get("gpu_info", ()))
    cpus = sorted(info.get("cpu_info", ()))
    names, arch, source = [], [], None
    if len(gpus) == 1 and gpus[0]:
        names, source = gpus[0].split(", "), "gpu_info"
    elif raw["devices"]:
        names = [d[2] for d in raw["devices"]]
        arch = [d[3] for d in raw["devices"] if d[3]]
        source = f"line {raw['devices'][0][0]}: {raw['devices'][0][1]}"
        if raw["found"]:
            source += f" (found {raw['found'][1]} {raw['found'][2]} device{'s' * (raw['found'][1] != 1)})"
    if names:
        cfg["accelerators"] = Fact(_accelerators(names), source)
        gpu = ", ".join(dict.fromkeys(names)) + (f" ({', '.join(dict.fromkeys(arch))})" if arch else "")
        parts = [gpu] + [f"CPU {c}" for c in cpus]
        cfg["platform"] = Fact("; ".join(parts), source + (" and cpu_info" if cpus else ""))
    elif backend and str(backend).upper() in ("CPU", "BLAS"):
        cfg["accelerators"] = Fact("none (CPU backend)", f"backend column '{backend}' and no GPU device banner")
        if cpus:
            cfg["platform"] = Fact(f"CPU {cpus[0]}", "cpu_info")
    elif cpus:
        cfg["platform"] = Fact(f"CPU {cpus[0]}", "cpu_info (no GPU named)")


def _llama_kv(cfg: dict, first, raw: dict, backend, commit) -> None:
    """type_k/type_v: in params when not llama-bench's default f16, so absent means f16."""
    params = dict(p.split("=", 1) for p in str(_plain(first.get("params")) or "").split(";") if "=" in p)
    k, v = params.get("type_k"), params.get("type_v")
    info = raw["info"].get((backend, str(commit)), {})
    if k or v:
        kv = k if (k or "f16") == (v or "f16") else f"K {k or 'f16'}, V {v or 'f16'}"
        cfg["kv_dtype"] = Fact(kv, "type_k / type_v in the rows")
    elif info.get("type_k") == {"f16"} or not info:
        cfg["kv_dtype"] = Fact("f16", "type_k / type_v at llama-bench's default (f16)")


# ---------------------------------------------------------------- vLLM server log


# what the reader drops: the engine arguments and GPU names of start-up lines
_LOG_NEEDLES = (b"non-default args: ", b"args: Namespace(", b"with config: ", b"device_name=",
                b"in world size ", b"compute capability")
_ANSI = re.compile(ANSI)
_LOG_HEAD = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d)-(\d\d) \d\d:\d\d:\d\d")
_PREFIX_DATE = re.compile(r"^\s*(20\d\d)-(\d\d)-(\d\d)[T ]\d\d:\d\d")
# non-default args that name the model, the network or a key: not settings of the engine
_NOT_SERVE_ARGS = {"model_tag", "model", "served_model_name", "host", "port", "api_key", "ssl_keyfile",
                   "ssl_certfile", "ssl_ca_certs", "allowed_origins", "allowed_methods", "allowed_headers",
                   "root_path", "uds"}
_MAX_HITS = 200  # per needle: start-up lines are few; a flood of one kind is not needed


def _log(facts: FileFacts, tables: _Tables) -> None:
    """vLLM server log: start-up facts from the boot table, engine arguments from the raw lines."""
    facts.config["engine"] = Fact("vLLM", "vLLM server log format")
    boot = tables.frames.get("boot", pd.DataFrame())
    found: dict[str, list[tuple[object, str, int]]] = {}  # key -> (value, source, rank) candidates

    def add(key, value, source, rank):
        if value not in (None, ""):
            found.setdefault(key, []).append((value, source, rank))

    for row in boot.to_dict("records") if len(boot) else []:
        if row["fact"] == "engine_version":
            add("engine_version", row["value"], f"line {row['line']}: version line", 0)
        elif row["fact"] == "model":
            add("model", _model_name(row["value"]), f"line {row['line']}: model of the start-up lines", 0)
        elif row["fact"] == "architecture":
            add("architecture", row["value"], f"line {row['line']}: Resolved architecture", 0)
    for n, line in _grep(facts.path, _LOG_NEEDLES):
        _log_line(n, _ANSI.sub("", line), add)
    _spec_from_lines(tables, add)
    for key, cands in found.items():
        _log_fact(facts, key, cands)
    if "quantisation" not in facts.config and "model" in facts.config and not _todo_for(facts, "quantisation"):
        if q := _quant_fact(facts.config["model"].value, "model name"):
            facts.config["quantisation"] = q
    _log_accelerators(facts, found)
    _log_date(facts, tables)
    _log_failed(facts, tables)


_EXCEPTION = re.compile(r"(?:^|\s)((?:\w+\.)*\w*(?:Error|Exception)): (.+)$")


def _log_failed(facts: FileFacts, tables: _Tables) -> None:
    """A server that never served: no stats window and no request, and an exception is the
    last thing it printed (a start-up crash). Its start-up facts stay facts of that attempt;
    the run is marked failed so no section takes a number from it."""
    if tables.counts.get("windows") or tables.counts.get("access"):
        return
    hits = [(n, m) for n, line in _grep(facts.path, (b"Error: ", b"Exception: "))
            if (m := _EXCEPTION.search(_ANSI.sub("", line)))]
    if hits:
        n, m = hits[-1]
        facts.context["failed"] = Fact(f"the server did not start: {m.group(1)}: {m.group(2).strip()[:200]}",
                                       f"line {n}: the last exception the log prints, with no stats line "
                                       "and no request after it")


def _log_line(n: int, line: str, add) -> None:
    """Facts of one start-up line, ranked: engine config 0, arguments 1, other lines 2."""
    if (i := line.find("with config: ")) >= 0:
        conf = _pairs(line[i + len("with config: "):])
        _engine_args(n, "engine config", conf, add, 0, full=True)
    elif (i := line.find("non-default args: ")) >= 0:
        args = _literal(line[i + len("non-default args: "):])
        if args is not None:
            _engine_args(n, "non-default args", args, add, 1, full=False)
            serve = {k: redact(v) if isinstance(v, str) else v for k, v in args.items() if k not in _NOT_SERVE_ARGS}
            add("serve_args", serve or None, f"line {n}: non-default args (model, network and key left out)", 1)
    elif (i := line.find("args: Namespace(")) >= 0:
        body = line[i + len("args: Namespace("):].rstrip()
        _engine_args(n, "args", _pairs(body[:-1] if body.endswith(")") else body), add, 1, full=True)
    if m := re.search(r"device_name=([A-Za-z0-9_.-]+?)(?:,|\.json|$)", line):
        add("gpu_name", m.group(1).replace("_", " "), f"line {n}: device_name= in a kernel config path", 2)
    if m := re.search(r"Your (.+?) GPU has compute capability ([\d.]+)", line):
        add("gpu_name", m.group(1), f"line {n}: compute capability line", 2)
    if m := re.search(r"in world size (\d+) is assigned as .*?\bTP rank (\d+)", line):
        add("world_size", int(m.group(1)), f"line {n}: world size", 2)
        add("tp_rank", int(m.group(2)), f"line {n}", 2)


def _literal(text: str):
    """The dict vLLM prints as its non-default args (a Python literal), else its pairs."""
    try:
        value = ast.literal_eval(text.strip())
        return value if isinstance(value, dict) else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        body = text.strip()
        return {k.strip("'\" "): v for k, v in _pairs(body[1:-1] if body.startswith("{") else body, ": ").items()}


def _pairs(text: str, sep: str = "=") -> dict[str, str]:
    """`k=v, k2=v2(...)` split at top-level commas (brackets and quotes respected)."""
    out, depth, quote, start = {}, 0, None, 0
    parts = []
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote and text[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        key, eq, value = part.strip().partition(sep)
        if eq and re.fullmatch(r"['\"]?\w+['\"]?", key.strip()):
            out[key.strip().strip("'\"")] = value.strip()
    return out


def _unquote(value):
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _engine_args(n: int, what: str, args: dict, add, rank: int, full: bool) -> None:
    """Config facts from an argument mapping. In `non-default args` a missing key is at its
    default, which says TP 1, KV cache dtype auto and no speculative decoding."""
    src = f"line {n}: {what}"

    def get(key):
        value = args.get(key)
        if isinstance(value, (list, tuple)) and len(value) == 1:
            value = value[0]
        return _unquote(value) if isinstance(value, str) else value

    model = get("model") or get("model_tag")
    if model and model != "None":
        served = get("served_model_name")
        extra = f" (served as {served})" if served and served != model else ""
        add("model", _model_name(model), f"{src}: model{extra}", rank)
    tp = get("tensor_parallel_size")
    if tp not in (None, ""):
        try:
            add("tensor_parallel", int(tp), f"{src}: tensor_parallel_size", rank)
        except (TypeError, ValueError):
            pass
    elif not full:
        add("tensor_parallel", 1, f"{src}: tensor_parallel_size not among them (default 1)", rank)
    for key in ("pipeline_parallel_size", "data_parallel_size"):
        if (v := get(key)) not in (None, "") and str(v).isdigit():
            add(key, int(v), f"{src}: {key}", rank)
    q = get("quantization")
    if q is not None:
        dtype = get("dtype")
        text = "none" if q == "None" else str(q)
        note = f" (no quantisation method; dtype {dtype})" if q == "None" and dtype else ""
        add("quantisation", text, f"{src}: quantization={q}{note}", rank)
    kv = get("kv_cache_dtype")
    if kv not in (None, ""):
        add("kv_dtype", str(kv), f"{src}: kv_cache_dtype", rank)
    elif not full:
        add("kv_dtype", "auto", f"{src}: kv_cache_dtype not among them (default auto: the model's dtype)", rank)
    spec = _speculative(args)
    if spec:
        add("speculative", spec, f"{src}: speculative_config", rank)
    elif not full and not any(k.startswith("speculative") or k == "num_speculative_tokens" for k in args):
        add("speculative", "none", f"{src}: no speculative_config among them", rank)


def _speculative(args: dict) -> str | None:
    """'mtp, num_speculative_tokens=3' from a speculative config in any of its printed forms."""
    spec = args.get("speculative_config")
    if isinstance(spec, str):
        if spec.strip() in ("None", "{}", ""):
            return "none" if "speculative_model" not in args else None
        inner = re.sub(r"^\w*\(|\)$", "", spec.strip())
        spec = _literal(inner) if inner.startswith("{") else {k: _unquote(v) for k, v in _pairs(inner).items()}
    if isinstance(spec, dict) and spec:
        method = spec.get("method")
        n = spec.get("num_speculative_tokens") or spec.get("num_spec_tokens")
        model = spec.get("model")
        if not method and model:
            method = f"draft model {_model_name(model)}"
        parts = [str(method) if method else "", f"num_speculative_tokens={n}" if n else ""]
        return ", ".join(x for x in parts if x) or None
    if (m := args.get("speculative_model")) not in (None, "None", ""):
        n = args.get("num_speculative_tokens")
        return f"draft model {_model_name(_unquote(m))}" + (f", num_speculative_tokens={n}" if n else "")
    return None


def _spec_from_lines(tables: _Tables, add) -> None:
    """SpecDecoding lines: speculation is on, with one per-position rate per draft token."""
    spec = tables.frames.get("spec_decode", pd.DataFrame())
    if not len(spec) or "per_position" not in spec:
        return
    pos = spec["per_position"].dropna().astype(str).str.count(",") + 1
    for k, line in spec.loc[pos.index, "line"].groupby(pos.values).first().items():
        add("speculative", f"speculative decoding, num_speculative_tokens={k}",
            f"line {line}: SpecDecoding metrics ({k} per-position acceptance rates)", 2)


_LOG_CONFIG = {"model", "engine_version", "architecture", "tensor_parallel", "quantisation", "kv_dtype",
               "speculative", "serve_args"}


def _log_fact(facts: FileFacts, key: str, cands: list) -> None:
    """The best-ranked source of a key; several values there mean several start-ups."""
    if key not in _LOG_CONFIG:
        return
    best = min(r for _, _, r in cands)
    top = [(v, s) for v, s, r in cands if r == best]
    values = list(dict.fromkeys(_hashable(v) for v, _ in top))
    if len(values) == 1:
        facts.config[key] = Fact(top[0][0], top[0][1])
        return
    where = "; ".join(f"{v} ({next(s for w, s in top if _hashable(w) == v).split(':')[0]})" for v in values[:5])
    facts.todo.append(f"{key}: the log prints different values ({where}): several server start-ups? "
                      "split the log or set it by hand")


def _log_accelerators(facts: FileFacts, found: dict) -> None:
    """A GPU name a start-up line prints, counted by the world size (or the TP ranks)."""
    if "tensor_parallel" not in facts.config and "tp_rank" in found and not _todo_for(facts, "tensor_parallel"):
        ranks = sorted({v for v, _, _ in found["tp_rank"]})
        facts.config["tensor_parallel"] = Fact(ranks[-1] + 1, f"TP ranks {ranks[0]}-{ranks[-1]} in the "
                                                              f"parallel_state lines ({found['tp_rank'][0][1]})")
    names = list(dict.fromkeys(v for v, _, _ in found.get("gpu_name", [])))
    if len(names) != 1:
        return
    source = found["gpu_name"][0][1]
    sizes = {v for v, _, _ in found.get("world_size", [])}
    if len(sizes) == 1:
        n = sizes.pop()
        facts.config["accelerators"] = Fact(f"{n}x {names[0]}", f"{source}; {found['world_size'][0][1]} {n}")
    else:
        facts.config["accelerators"] = Fact(names[0], f"{source} (the GPU count is not printed)")
    facts.config["platform"] = Fact(names[0], source)


def _log_date(facts: FileFacts, tables: _Tables) -> None:
    """A year only comes from a prefix such as docker's `-t` RFC 3339 time; the vLLM header
    gives month and day in the server's local time, so it decides them when present."""
    head = read_head(facts.path, 1 << 16).decode("utf-8", "replace")
    first_prefix = None
    for n, line in enumerate(head.splitlines()[:-1] or head.splitlines(), 1):
        line = _ANSI.sub("", line)
        if not (p := _PREFIX_DATE.match(line)):
            continue
        first_prefix = first_prefix or (n, p)
        if h := _LOG_HEAD.search(line):
            year = int(p.group(1)) + (int(h.group(1)) == 1 and p.group(2) == "12") - \
                (int(h.group(1)) == 12 and p.group(2) == "01")
            if d := _ymd(year, h.group(1), h.group(2)):
                facts.context["date"] = Fact(d, f"line {n}: year of the time prefix ({p.group(0).strip()}), "
                                                f"month and day of the vLLM header")
                return
    if first_prefix:
        n, p = first_prefix
        if d := _ymd(*p.groups()):
            facts.context["date"] = Fact(d, f"line {n}: time prefix {p.group(0).strip()}")
            return
    first = _first_time(tables)
    where = f" (the first at line {first[0]}: {first[1]})" if first else ""
    facts.todo.append(f"date: the log's timestamps carry no year{where}; set it by hand")


def _first_time(tables: _Tables) -> tuple[int, str] | None:
    best = None
    for name in ("boot", "windows", "spec_decode"):
        df = tables.frames.get(name)
        if df is None or not len(df) or "time" not in df:
            continue
        row = df.dropna(subset=["time"]).sort_values("line").head(1)
        if len(row) and (best is None or int(row["line"].iloc[0]) < best[0]):
            best = (int(row["line"].iloc[0]), str(row["time"].iloc[0]))
    return best


def _grep(path: Path, needles: tuple[bytes, ...]) -> list[tuple[int, str]]:
    """(line number, text) of the lines holding any needle, read in chunks of whole lines
    with bytes.find (C speed), so a log of gigabytes costs one pass and little memory."""
    out, base, hits = [], 0, Counter()
    for chunk in _byte_chunks(path):
        starts = set()
        for needle in needles:
            i = chunk.find(needle)
            while i >= 0 and hits[needle] < _MAX_HITS:
                starts.add(chunk.rfind(b"\n", 0, i) + 1)
                hits[needle] += 1
                end = chunk.find(b"\n", i)
                i = chunk.find(needle, end) if end >= 0 else -1
        last, line = 0, base + 1
        for s in sorted(starts):
            line += chunk.count(b"\n", last, s)
            last = s
            end = chunk.find(b"\n", s)
            out.append((line, chunk[s: end if end >= 0 else len(chunk)].decode("utf-8", "replace").rstrip("\r")))
        base += chunk.count(b"\n")
    out.sort()
    return out


def _byte_chunks(path: Path, size: int = 8 << 20):
    """The decompressed file in pieces that end at a newline (UTF-16 re-encoded as UTF-8)."""
    head = read_head(path, 4)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        yield read_text(path).encode("utf-8")
        return
    with open(path, "rb") as fh:
        gz = fh.read(2) == GZIP_MAGIC
        fh.seek(0)
        stream = gzip.open(fh) if gz else fh
        carry = b""
        while data := stream.read(size):
            data = carry + data
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            yield data[: cut + 1]
            carry = data[cut + 1:]
        if carry:
            yield carry


# ---------------------------------------------------------------- nvidia-smi


def _smi(facts: FileFacts, tables: _Tables) -> None:
    """nvidia-smi CSV: GPU names, the first sample's date and the enforced power limit."""
    gpu = tables.frames.get("gpu_samples", pd.DataFrame())
    if not len(gpu):
        return
    if gpu["name"].notna().any():
        has_index = gpu["gpu_index"].notna().any()
        told = _told_apart(gpu) if not has_index else None
        per_gpu = (gpu.dropna(subset=["name"]).groupby("gpu_index")["name"].first().tolist() if has_index
                   else gpu.dropna(subset=["name", "gpu"]).groupby("gpu", sort=False)["name"].first().tolist() if told
                   else list(dict.fromkeys(gpu["name"].dropna())))
        line = int(gpu.loc[gpu["name"].notna(), "line"].iloc[0])
        src = f"name column (line {line})" + ("; count from the index column" if has_index else
                                              f"; count from the {told} (no index column)" if told else
                                              "; no index column, so the GPU count is not known")
        facts.config["accelerators"] = Fact(_accelerators(per_gpu, has_index or bool(told)), src)
        facts.config["platform"] = Fact(", ".join(dict.fromkeys(per_gpu)), f"name column (line {line})")
    stamps = gpu.dropna(subset=["timestamp"])
    if len(stamps):
        first = stamps.iloc[0]
        facts.context["date"] = Fact(first["timestamp"].date().isoformat(),
                                     f"line {int(first['line'])}: first sample's timestamp (local time)")
    _power_limit(facts, gpu)


def _told_apart(gpu: pd.DataFrame) -> str | None:
    """How the nvidia-smi reader told a log's GPUs apart without an index column ('GPUs
    told apart by row order within each sample time'), or None when it did not."""
    told = gpu["gpu"].dropna() if "gpu" in gpu else ()
    if not len(told):
        return None
    how = re.search(r"\(by (.+)\)$", str(told.iloc[0]))
    by = how.group(1) if how else "?"
    return "GPUs told apart by row order within each sample time" if by == "row order" else \
        f"GPUs told apart by the {by} column"


def _power_limit(facts: FileFacts, gpu: pd.DataFrame) -> None:
    """The enforced limit when the column holds one value, or one value on every GPU for at
    least 90% of its samples (a limit set just after the log started); else a todo. GPUs
    are those of the index column, else those the reader told apart (`gpu`)."""
    lim = gpu.dropna(subset=["power_limit_w"])
    if not len(lim):
        return
    key = ("gpu_index" if lim["gpu_index"].notna().any() else
           "gpu" if "gpu" in lim and lim["gpu"].notna().any() else None)
    groups = lim.groupby(key, sort=key == "gpu_index") if key else [(None, lim)]
    modes, notes = {}, []
    for idx, g in groups:
        counts = g["power_limit_w"].value_counts()
        modes[idx] = (float(counts.index[0]), counts.iloc[0] / len(g))
        label = f"GPU {idx}" if idx is not None else "all rows"
        notes.append(f"{label}: " + ", ".join(f"{_num(float(v))} W" for v in counts.index[:3]))
    values = {v for v, _ in modes.values()}
    share = min(s for _, s in modes.values())
    if len(values) == 1 and share >= 0.9:
        value = values.pop()
        value = int(value) if value.is_integer() else value
        if share == 1:
            facts.context["power_limit_w"] = Fact(value, "power.limit column (one value on every sample)")
        else:
            facts.context["power_limit_w"] = Fact(
                value, f"power.limit column: {_num(value)} W on every GPU for at least {share:.0%} of "
                       f"its samples ({'; '.join(notes)})")
        return
    facts.todo.append(f"power_limit_w: the power.limit column holds several values ({'; '.join(notes[:6])}); "
                      "set the limit the runs used")


# ---------------------------------------------------------------- Prometheus, tool calls, gauntlet


def _prom(facts: FileFacts, tables: _Tables) -> None:
    """/metrics dump: vLLM metric names, the model_name label, spec-decode counters."""
    prom = tables.frames.get("prom_samples", pd.DataFrame())
    vllm = prom[prom["metric"].str.startswith("vllm:")] if len(prom) else prom
    if len(vllm):
        facts.config["engine"] = Fact("vLLM", "vllm:* metric names")
        models = list(dict.fromkeys(m for lab in vllm["labels"].dropna().unique()
                                    for m in re.findall(r"(?:^|,)model_name=((?:[^,\\]|\\.)*)", lab)))
        models = [re.sub(r"\\(.)", r"\1", m) for m in models]
        if len(models) == 1:
            facts.config["model"] = Fact(_model_name(models[0]), "model_name label of the vllm:* metrics")
            if q := _quant_fact(models[0], "model_name label"):
                facts.config["quantisation"] = q
        elif models:
            facts.todo.append(f"model: the dump serves several models ({', '.join(models)}); set it by hand")
        info = vllm[vllm["metric"] == "vllm:cache_config_info"]["labels"].dropna()
        for lab in info.unique()[:1]:
            if m := re.search(r"(?:^|,)cache_dtype=([^,]*)", lab):
                facts.config["kv_dtype"] = Fact(m.group(1), "cache_dtype label of vllm:cache_config_info")
    spec = tables.frames.get("spec_decode", pd.DataFrame())
    if len(spec):
        k = spec["per_position"].dropna().astype(str).map(lambda s: len(s.split(",")))
        text = f"speculative decoding, num_speculative_tokens={k.max()}" if len(k) else "speculative decoding"
        facts.config["speculative"] = Fact(text, "vllm:spec_decode_* counters"
                                           + (f" ({k.max()} positions)" if len(k) else ""))
    _prom_date(facts, spec)


def _prom_date(facts: FileFacts, spec: pd.DataFrame) -> None:
    """The date a comment such as `# dump 2026-04-19 04:56:00` gives a dump."""
    times = spec["time"].dropna().astype(str).tolist() if len(spec) and "time" in spec else []
    head = read_head(facts.path, 1 << 16).decode("utf-8", "replace").splitlines()
    for n, line in enumerate(head, 1):
        if line.startswith("#") and not re.match(r"#\s*(HELP|TYPE|EOF)\b", line):
            times.append(f"{line.strip()}@{n}")
    for t in times:
        if m := _ISO_DATE.search(t):
            where = f"line {t.rsplit('@', 1)[1]}: comment '{t.rsplit('@', 1)[0]}'" if "@" in t else f"dump time {t}"
            if d := _ymd(*m.groups()):
                facts.context["date"] = Fact(d, where)
                return


def _tool_calls(facts: FileFacts, tables: _Tables) -> None:
    """Agent tool-call log: the model(s) that made the calls and the first record's date."""
    calls = tables.frames.get("tool_calls", pd.DataFrame())
    _models(facts, calls, "model field of the tool calls")
    head = read_head(facts.path, 1 << 16).decode("utf-8", "replace")
    for n, line in enumerate(head.splitlines(), 1):
        if (m := re.search(r'"ts"\s*:\s*"(20\d\d)-(\d\d)-(\d\d)', line)) and (d := _ymd(*m.groups())):
            facts.context["date"] = Fact(d, f"line {n}: ts of the first record")
            return


def _gauntlet(facts: FileFacts, tables: _Tables) -> None:
    _models(facts, tables.frames.get("gauntlet", pd.DataFrame()), "model column")


def _harness_meta(facts: FileFacts, tables: _Tables) -> None:
    """bench-spark's meta.json: the server the harness measured (vLLM's reported version, its
    settings, the machine) and when the run began. `benchbook new` lends these facts to the
    runs in the same folder that do not state them (scaffold.new), naming meta.json."""
    meta = tables.frames.get("run_meta", pd.DataFrame())
    values = dict(zip(meta["key"], meta["value"])) if len(meta) else {}
    name = facts.path.name

    def put(key: str, value, field_name: str) -> None:
        if value not in (None, ""):
            facts.config[key] = Fact(value, f"{field_name} in {name}")

    model = values.get("model")
    put("model", model and _model_name(model), "model")
    if values.get("served_name"):  # the name clients used: llama-benchy prints this one
        facts.settings["served_name"] = Fact(values["served_name"], f"served_name in {name}")
    if values.get("vllm_version_reported") or values.get("vllm_image"):
        put("engine", "vLLM", "vllm_version_reported" if values.get("vllm_version_reported") else "vllm_image")
    put("engine_version", values.get("vllm_version_reported"), "vllm_version_reported")
    quant = _quant_fact(model, "model") if model else None
    if quant:
        facts.config["quantisation"] = Fact(quant.value, f"{quant.source} in {name}")
    else:
        put("quantisation", (values.get("profile") or "").upper() or None, "profile")
    put("kv_dtype", values.get("server_config.kv_cache_dtype"), "server_config.kv_cache_dtype")
    hardware = values.get("hardware")
    put("platform", hardware, "hardware")
    chip = re.search(r"\bNVIDIA\s+([A-Z]{1,3}\d{1,4}\w*)", hardware or "")
    if chip:  # the string names the chip, not how many: the count stays unknown
        facts.config["accelerators"] = Fact(f"NVIDIA {chip.group(1)}", f"hardware in {name} (no count given)")
    began = values.get("generated_at") or ""
    if re.match(r"\d{4}-\d{2}-\d{2}", began):
        facts.context["date"] = Fact(began[:10], f"generated_at in {name} (the run's start, {began})")
        facts.settings["generated_at"] = Fact(began, f"generated_at in {name}")


def _benchy(facts: FileFacts, tables: _Tables) -> None:
    """llama-benchy: the model as the server was asked for it (the served name), and the date
    its run began. The server's engine and machine are not in it."""
    rows = tables.frames.get("llama_benchy", pd.DataFrame())
    if not len(rows):
        return
    _models(facts, rows, "model column of the results table")
    dates = rows["date"].dropna().astype(str)
    day = next((d[:10] for d in dates if re.match(r"\d{4}-\d{2}-\d{2}", d)), None)
    if day:
        facts.context["date"] = Fact(day, f"llama-benchy's date line ({dates.iloc[0]})")


def _harness_summary(facts: FileFacts, tables: _Tables) -> None:
    """bench-spark's sweep summary names the model (its date is left to the user: the summary
    records none, and the step files beside it are other files)."""
    for name in ("harness_capacity", "harness_steps"):
        df = tables.frames.get(name, pd.DataFrame())
        if len(df):
            _models(facts, df, f"model in {facts.path.name}")
            break
    model = facts.config.get("model")
    quant = _quant_fact(model.value, "model") if model and isinstance(model.value, str) else None
    if quant:
        facts.config["quantisation"] = quant


def _models(facts: FileFacts, df: pd.DataFrame, where: str) -> None:
    models = list(dict.fromkeys(df["model"].dropna())) if len(df) and "model" in df else []
    if len(models) == 1:
        facts.config["model"] = Fact(models[0], where)
    elif models:
        facts.config["model"] = Fact(models, f"{where} ({len(models)} models)")


_HANDLERS = {
    "vllm-bench-serve": _bench,
    "llama-bench": _llama,
    "vllm-server-log": _log,
    "nvidia-smi-csv": _smi,
    "prometheus-text": _prom,
    "tool-call-log": _tool_calls,
    "gauntlet-csv": _gauntlet,
    "bench-spark-meta": _harness_meta,
    "bench-spark-capacity": _harness_summary,
    "llama-benchy": _benchy,
}

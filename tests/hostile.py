"""The hostile corpus: data folders whose free text is written to attack the published site.

Every free-text field of `study.yml` and of the raw files a chapter reads (bench JSON
model and tokenizer names, llama-bench model, build and device names, nvidia-smi GPU
names, tool-call agent text, vLLM log versions and model arguments, Prometheus model
labels) gets a payload with live markup, MyST roles and directives, Markdown links with
script targets, math, a substitution, Unicode direction overrides and one very long name.
Each active part sets `window.__pwned` if it ever runs, so a browser test can tell; each
inert part carries a literal the page must show as text.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import yaml

from benchbook.study.folder import write_checksums

# Each part: what would run or render if the text were trusted.
ACTIVE = (
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    '<svg onload="window.__pwned=3"></svg>',
    "[click](javascript:window.__pwned=4)",
    '<a href="javascript:window.__pwned=5">link</a>',
)
INERT = (
    "<b>bold</b>",
    "{download}`passwd <../../../../etc/passwd>`",
    "$\\frac{a}{b}$",
    "{{ sub }}",
    "\u202eRLO\u202c",
)
PAYLOAD = "Evil " + " ".join(ACTIVE + INERT)
# a directive needs lines of its own; raw HTML through it would run
DIRECTIVE = "\n```{raw} html\n<script>window.__pwned=6</script>\n```\n"
LONG = "L" * 400
# one token without spaces, for fields a reader takes up to the next space (a version)
TOKEN = "0.19<img/src=x/onerror=window.__pwned=7>"
# what the page must show literally somewhere (some part of the payload, as text)
LITERALS = ('onerror="window.__pwned=1"', "<script>window.__pwned=2</script>", "<b>bold</b>")

STUDY_TEXT = ("title", "description", "label")
CONFIG_TEXT = ("label", "platform", "accelerators", "model_arch", "quantisation", "speculative", "note", "notes")
BENCH_TEXT = ("model_id", "tokenizer_id")
LLAMA_TEXT = ("model_type", "model_filename", "cpu_info", "gpu_info", "build_commit")


def _text(i: int) -> str:
    """Field i's payload: one in three carries the directive, one in five is the long name."""
    return LONG if i % 5 == 4 else PAYLOAD + (DIRECTIVE if i % 3 == 0 else "")


def plant(folder: Path) -> list[str]:
    """Write the payload into every free-text field of a data folder, in place; return what
    was changed (file: field) so a test can say which field leaked."""
    changed, counter = [], iter(range(10_000))
    study_file = folder / "study.yml"
    study = yaml.safe_load(study_file.read_text(encoding="utf-8"))
    for key in STUDY_TEXT:
        if key in study:
            study[key] = _text(next(counter))
            changed.append(f"study.yml: {key}")
    for sid, source in (study.get("sources") or {}).items():
        source["title"] = _text(next(counter))
        changed.append(f"study.yml: sources.{sid}.title")
    for cid, config in (study.get("configs") or {}).items():
        for key in CONFIG_TEXT:
            if key in config or key == "label":
                # labels name configurations, so each stays distinct (a study rule)
                config[key] = _text(next(counter)) + (f" {cid}" if key == "label" else "")
                changed.append(f"study.yml: configs.{cid}.{key}")
    for n, entry in enumerate(study.get("files") or []):
        if "notes" in entry:
            entry["notes"] = _text(next(counter))
            changed.append(f"study.yml: files[{n}].notes")
    study_file.write_text(yaml.safe_dump(study, sort_keys=False, allow_unicode=True), encoding="utf-8")
    for path in sorted(p for p in (folder / "raw").rglob("*") if p.is_file()):
        changed += _plant_raw(path, folder, next(counter))
    write_checksums(folder)
    return changed


def _plant_raw(path: Path, folder: Path, i: int) -> list[str]:
    """Plant the payload in one raw file, in place (gzip kept); return its changed fields."""
    rel = path.relative_to(folder).as_posix()
    name = path.name.removesuffix(".gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    planter = _planter(name)
    out, fields = planter(text, i) if planter else (text, [])
    if out != text:
        with opener(path, "wt", encoding="utf-8") as fh:
            fh.write(out)
    return [f"{rel}: {f}" for f in sorted(set(fields))]


def _planter(name: str):
    """The planter for a raw file's format, by its name (without .gz); None for a format with no free text."""
    if name.endswith(".json"):
        return _plant_bench_json
    if name.endswith(".jsonl"):
        return _plant_jsonl
    if name.startswith("nvidia-smi") and name.endswith(".csv"):
        return _plant_gpu_csv
    if name.endswith(".log"):
        return _plant_log
    if name.endswith(".prom"):
        return _plant_prom
    return None


def _plant_bench_json(text: str, i: int) -> tuple[str, list[str]]:
    doc, fields = json.loads(text), []
    for key in BENCH_TEXT:
        if isinstance(doc.get(key), str):
            doc[key], fields = _text(i), fields + [key]
    return json.dumps(doc), fields


def _plant_jsonl(text: str, i: int) -> tuple[str, list[str]]:
    """llama-bench rows and tool-call records: every free-text key of each record (blank lines kept)."""
    lines, fields = [], []
    for line in text.splitlines():
        if not line.strip():
            lines.append(line)
            continue
        doc = json.loads(line)
        for key in LLAMA_TEXT + ("agent", "model", "error", "detail"):
            if isinstance(doc.get(key), str):
                doc[key] = _text(i)
                fields.append(key)
        lines.append(json.dumps(doc))
    return "\n".join(lines) + "\n", fields


def _plant_gpu_csv(text: str, i: int) -> tuple[str, list[str]]:
    """The GPU name column of an nvidia-smi log; unchanged when it has none."""
    lines = text.splitlines()
    header = [h.strip() for h in lines[0].split(",")]
    if "name" not in header:
        return text, []
    col = header.index("name")
    safe = PAYLOAD.replace(",", ";").replace("\n", " ")  # one CSV cell
    rows = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        if len(cells) > col:
            cells[col] = " " + safe
        rows.append(",".join(cells))
    return "\n".join(rows) + "\n", ["name"]


def _plant_log(text: str, i: int) -> tuple[str, list[str]]:
    """A vLLM log's version and model arguments."""
    quoted = PAYLOAD.replace("'", "").replace("\\", "/")  # inside a Python-literal string
    out = re.sub(r"(version v?)\S+", lambda m: m.group(1) + TOKEN, text)
    out = re.sub(r"('model(?:_tag)?': ')[^']*(')", lambda m: m.group(1) + quoted + m.group(2), out)
    out = re.sub(r"(model=')[^']*(')", lambda m: m.group(1) + quoted + m.group(2), out)
    return out, ["version", "model"]


def _plant_prom(text: str, i: int) -> tuple[str, list[str]]:
    """A Prometheus dump's model_name labels."""
    label = PAYLOAD.replace('"', "'").replace("\\", "/")
    return re.sub(r'(model_name=")[^"]*(")', lambda m: m.group(1) + label + m.group(2), text), ["model_name"]


def hostile_copy(src: Path, dest: Path) -> list[str]:
    """A copy of data folder `src` at `dest` with the payload planted."""
    shutil.copytree(src, dest)
    return plant(dest)

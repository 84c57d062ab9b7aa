"""Secrets in raw files never reach the site.

Unit tests for every kind `benchbook.ingest.redact` removes; the readers' own redaction and the
registry's second pass; and one real build of a copy of the book with one secret of each
kind planted in the raw files, searching every file of the site (HTML, sources, CSV and
zip downloads, executed notebooks) for each of them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import nbformat
import pandas as pd
import pytest

import bad_corpus as corpus
import benchbook.ingest as ingest
from benchbook.ingest.redact import has_secret, kinds, redact
from benchbook.ingest.result import IngestResult
from benchbook.site.runner import Chapter
from benchbook.study.folder import write_checksums

ROOT = Path(__file__).parents[2]
BIN = Path(sys.executable).parent

# kind -> (text as a log or file has it, the secret that must go, what must stay)
CASES = {
    "url-credentials": ("model from https://benchuser:Pl4ntedUrlPassw0rd@models.example.com/q", "Pl4ntedUrlPassw0rd",
                        "models.example.com/q"),
    "auth-header": ("curl -H 'Authorization: Basic UGxhbnRlZEJhc2ljQXV0aA==' http://x", "UGxhbnRlZEJhc2ljQXV0aA",
                    "Authorization: [REDACTED]"),
    "api-key": ("vllm serve Qwen/Qwen3-8B --api-key plantedApiKeyValue42 --port 8000", "plantedApiKeyValue42",
                "--api-key [REDACTED] --port 8000"),
    "env-secret": ("HUGGING_FACE_HUB_TOKEN=plantedEnvSecret99 vllm serve m", "plantedEnvSecret99",
                   "HUGGING_FACE_HUB_TOKEN=[REDACTED] vllm serve m"),
    "password-arg": ("psql --password plantedPassw0rd5 -h db", "plantedPassw0rd5", "--password [REDACTED] -h db"),
    "hf-token": ("login with hf_PlantedHuggingFaceToken0123456789 done", "hf_PlantedHuggingFaceToken0123456789",
                 "login with [REDACTED-HF-TOKEN] done"),
    "secret-key": ("client key sk-plantedOpenAIkey0123456789abcd used", "sk-plantedOpenAIkey0123456789abcd",
                   "client key [REDACTED-KEY] used"),
    "github-token": ("pushed with ghp_PlantedGithubToken0123456789abcdefgh", "ghp_PlantedGithubToken0123456789abcdefgh",
                     "pushed with"),
    "aws-key-id": ("aws key AKIAPLANTED0000KEYID in env", "AKIAPLANTED0000KEYID", "aws key [REDACTED-KEY] in env"),
    "bearer-token": ("401 for Bearer plantedBearerToken.abc123", "plantedBearerToken.abc123",
                     "401 for Bearer [REDACTED]"),
    "token-arg": ("vllm serve m --hf-token plantedTokenArg8888", "plantedTokenArg8888", "--hf-token [REDACTED]"),
    "private-ip": ('INFO:     10.77.66.55:48374 - "POST /v1/chat/completions HTTP/1.1" 200 OK', "10.77.66.55",
                   '[private-ip] - "POST /v1/chat/completions HTTP/1.1" 200 OK'),
    "internal-host": ("serving on http://gpu-node-7.corp:8000/v1", "gpu-node-7.corp", "serving on http://[internal-host]/v1"),
}

MORE = [  # further forms of the same kinds, as real logs print them
    ("non-default args: {'model': 'm', 'api_key': ['plantedListKey77', 'second-key-1'], 'port': 8000}",
     ["plantedListKey77", "second-key-1"], "'port': 8000"),
    ("Namespace(host=None, api_key='plantedNsKey', hf_token='hf_PlantedHuggingFaceToken0123456789')",
     ["plantedNsKey", "hf_PlantedHuggingFaceToken0123456789"], "Namespace(host=None"),
    ('{"authorization": "Bearer plantedJsonBearer99"}', ["plantedJsonBearer99"], '"authorization"'),
    ("OPENAI_API_KEY=sk-x HF_TOKEN=plainvalue12 AWS_SECRET_ACCESS_KEY=abc/def+ghi",
     ["plainvalue12", "abc/def+ghi"], "HF_TOKEN="),
    ("peers 172.20.1.9, 192.168.77.12:9000 and tailscale 100.101.5.6",
     ["172.20.1.9", "192.168.77.12", "100.101.5.6"], "peers"),
    ("nfs at nas01.lan, k8s vllm.svc.cluster.local, box.internal",
     ["nas01.lan", "svc.cluster.local", "box.internal"], "nfs at"),
]

BENIGN = [  # must come through unchanged
    "Qwen/Qwen3.6-27B-FP8", "qwen3moe 35B.A3B Q8_0", "/models/Qwen3.6-35B-A3B-Q8_0.gguf",
    "max_tokens=512 num_speculative_tokens=2 --max-num-batched-tokens 8192 MAX_TOKENS=4",
    "Per-position acceptance rate: 0.798, 0.628, 0.457", "GPU KV cache usage: 1.0%, version 0.10.1",
    "INFO:     127.0.0.1:54946 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK", "8.8.8.8 and 172.32.0.1",
    "token 123", "tokens: 12345678", "n_threads=16;type_k=q8_0", "https://huggingface.co/Qwen/Qwen3-8B",
]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_kind_is_removed(kind):
    text, secret, kept = CASES[kind]
    counts = Counter()
    out = redact(text, counts)
    assert secret not in out and kept in out, out
    assert counts[kind] >= 1, counts
    assert redact(out) == out  # idempotent: a second pass changes nothing


def test_every_kind_has_a_case():
    assert set(kinds()) == set(CASES)


@pytest.mark.parametrize("text,secrets,kept", MORE)
def test_log_forms(text, secrets, kept):
    out = redact(text)
    assert not [s for s in secrets if s in out], out
    assert kept in out and redact(out) == out


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_is_left_alone(text):
    assert redact(text) == text


def test_the_fast_column_check_agrees_with_redact():
    """`has_secret` (used on whole columns) says yes exactly where redact changes something."""
    texts = [t for t, _, _ in CASES.values()] + [t for t, _, _ in MORE] + BENIGN
    for text in texts:
        assert has_secret(text) == (redact(text) != text), text
    assert has_secret("\n".join(BENIGN)) is False
    assert has_secret("\n".join([*BENIGN, CASES["aws-key-id"][0]])) is True


# ---------------------------------------------------------------- readers and the registry


PLANT = {kind: secret for kind, (_, secret, _) in CASES.items()}


def cells(result: IngestResult) -> str:
    """Every cell of every table and every skip reason, as one text to search."""
    parts = [df.astype(str).to_csv(index=False) for df in result.tables.values()]
    return "\n".join(parts + list(result.reasons))


def test_vllm_bench_keeps_no_secret(tmp_path):
    errors = ["", CASES["bearer-token"][0] + " " + CASES["private-ip"][0], ""]
    path = tmp_path / "run.json"
    path.write_bytes(corpus.vllm_json(label=CASES["api-key"][0], model_id=CASES["url-credentials"][0], errors=errors))
    result = ingest.read(path)
    text = cells(result)
    for kind in ("bearer-token", "private-ip", "api-key", "url-credentials"):
        assert PLANT[kind] not in text, kind
    assert result.tables["runs"]["label"].iloc[0] == redact(CASES["api-key"][0])
    assert "[REDACTED]" in result.tables["requests"]["error"].iloc[1]


def test_llama_bench_keeps_no_secret(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(corpus.lb_jsonl(
        corpus.lb_line(model_filename="/mnt/nas01.lan/" + PLANT["hf-token"] + "/m.gguf",
                       gpu_info=CASES["internal-host"][0], notes=CASES["aws-key-id"][0]),
        corpus.lb_line(avg_ts=PLANT["secret-key"]),  # refused: the reason quotes the value
        corpus.lb_line(**corpus.TG)))
    result = ingest.read(path)
    text = cells(result)
    for kind in ("hf-token", "internal-host", "aws-key-id", "secret-key"):
        assert PLANT[kind] not in text, kind
    assert "nas01.lan" not in text
    assert result.ignored == 1 and "avg_ts is not a number: '[REDACTED-KEY]'" in result.reasons


def test_registry_redacts_every_text_column_a_reader_forgets():
    """`ingest.read` passes any reader's text cells and reasons through redact once more."""
    result = IngestResult(path="x", format="demo")
    result.tables["t"] = pd.DataFrame({
        "run_id": ["r:gpu-node-7.corp"], "note": pd.array([CASES["env-secret"][0]], dtype="string"),
        "obj": [CASES["password-arg"][0]], "n": [1.5],
        "cat": pd.Categorical([CASES["api-key"][0]]),
    })
    result.ignore("bad value " + PLANT["github-token"])
    out = ingest._redacted(result)
    text = cells(out)
    assert PLANT["env-secret"] not in text and PLANT["password-arg"] not in text and PLANT["github-token"] not in text
    assert PLANT["api-key"] not in text and isinstance(out.tables["t"]["cat"].dtype, pd.CategoricalDtype)
    assert out.tables["t"]["run_id"].iloc[0] == "r:gpu-node-7.corp"  # identity columns are not rewritten
    assert out.ignored == 1 and sum(out.reasons.values()) == 1


LOG = "\n".join([
    "(APIServer pid=1) INFO 05-30 07:54:01 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', "
    f"'host': 'gpu-node-7.corp', 'api_key': ['{PLANT['api-key']}'], 'hf_token': '{PLANT['hf-token']}'}}",
    "(APIServer pid=1) INFO 05-30 07:54:09 [launcher.py:29] Starting vLLM API server 0 on http://192.168.77.12:8000",
    corpus.SAMPLES["vllm-server-log"].decode().strip(),
    f'(APIServer pid=1) INFO:     {PLANT["private-ip"]}:48374 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    '(APIServer pid=1) INFO:     172.20.1.9:48375 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(APIServer pid=1) INFO 05-30 07:55:41 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 12.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, "
    "Prefix cache hit rate: 0.0%",
]) + "\n"


def test_vllm_log_keeps_no_secret(tmp_path):
    if importlib.util.find_spec("benchbook.ingest.vllm_log") is None:
        pytest.skip("the vLLM log reader has not landed yet")
    path = tmp_path / "server.log"
    path.write_text(LOG)
    text = cells(ingest.read(path))
    for secret in (PLANT["api-key"], PLANT["hf-token"], "gpu-node-7.corp", "192.168.77.12", PLANT["private-ip"],
                   "172.20.1.9"):
        assert secret not in text, secret


# ---------------------------------------------------------------- the whole built site

STUDY = "h100-dense-vs-moe-mtp"


def plant(project: Path) -> list[str]:
    """One secret of each kind in raw files whose text the readers keep; returns them all."""
    h100, strix = project / "data" / STUDY, project / "data/strix-halo-baseline"
    run = sorted((h100 / "raw/h100-dense").glob("*.json"))[-1]
    doc = json.loads(run.read_text())
    doc["label"] = f"sweep on {CASES['internal-host'][0]} {CASES['api-key'][0]} {CASES['token-arg'][0]}"
    doc["model_id"] = CASES["url-credentials"][0]
    doc["tokenizer_id"] = PLANT["hf-token"]  # not kept by the reader; must not appear either
    doc["errors"][1] = "upstream 192.168.77.12: " + " ".join(
        CASES[k][0] for k in ("private-ip", "auth-header", "bearer-token", "env-secret"))
    run.write_text(json.dumps(doc))

    lb = strix / "raw/llama-bench/rocm-723.jsonl"
    lines = lb.read_text().splitlines()
    first = json.loads(lines[0])
    first.update(model_filename=f"/mnt/nas01.lan/{PLANT['hf-token']}/Qwen3.6-35B-A3B-Q8_0.gguf",
                 gpu_info="Radeon on vllm.svc.cluster.local",
                 notes=f"{CASES['github-token'][0]} from 172.20.1.9, {CASES['aws-key-id'][0]}")
    bad = dict(first, avg_ts=PLANT["secret-key"])
    lines[0] = json.dumps(first)
    lb.write_text("\n".join([*lines, json.dumps(bad)]) + "\n")

    server = next((strix / "raw/llama-server").glob("*.json"))
    doc = json.loads(server.read_text())
    doc["label"] = (f"non-default args: {{'api_key': ['plantedListKey77'], 'host': '100.101.5.6'}} "
                    f"{CASES['password-arg'][0]}")
    server.write_text(json.dumps(doc))
    for folder in (h100, strix):
        write_checksums(folder)

    secrets = [*PLANT.values(), "plantedListKey77", "100.101.5.6", "172.20.1.9", "nas01.lan",
               "svc.cluster.local", "192.168.77.12"]
    raw = b"".join(p.read_bytes() for p in (run, lb, server))
    assert not [s for s in secrets if s.encode() not in raw]  # the test plants what it searches for
    return secrets


def site_files(project: Path):
    """(path, bytes) of every published or executed file; zip members unpacked."""
    for folder in (project / "book/_build/html", project / "book/studies"):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            yield path, data
            if path.suffix == ".zip":
                with zipfile.ZipFile(path) as zf:
                    for name in zf.namelist():
                        yield path / name, zf.read(name)


@pytest.mark.build
def test_planted_secrets_appear_nowhere_in_the_built_site(tmp_path):
    from projects import copy_project

    (tmp_path / "book-copy").mkdir()
    project = copy_project(tmp_path / "book-copy")
    secrets = plant(project)
    chapter = Chapter(project, STUDY)  # as after `benchbook run --data`: parameters injected
    chapter.remember({"data_dir": str(project / "data" / STUDY),
                      "strix_data_dir": str(project / "data/strix-halo-baseline")})
    proc = subprocess.run([str(BIN / "jupyter-book"), "build", "book"], cwd=project,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"executed {STUDY}" in proc.stdout + proc.stderr

    files = list(site_files(project))
    assert any(p.suffix == ".csv" for p, _ in files) and any(p.suffix == ".ipynb" for p, _ in files)
    leaks = [(str(p.relative_to(project)), s) for p, data in files for s in secrets if s.encode() in data]
    assert not leaks, leaks

    # the planted fields did reach the site, redacted (so the search above looked at them)
    runs = pd.read_csv(project / "book/studies" / STUDY / "runs.csv")
    assert runs["label"].astype(str).str.contains(r"\[internal-host\].*--api-key \[REDACTED\]").any()
    requests = (project / "book/studies" / STUDY / "requests.csv").read_text()
    assert "Authorization: [REDACTED]" in requests
    lb = pd.read_csv(project / "book/studies" / STUDY / "strix_llama_bench.csv")
    assert lb["params"].astype(str).str.contains("notes=").any()
    page = (project / "book/_build/html/studies" / f"{STUDY}.html").read_text(encoding="utf-8")
    assert "avg_ts is not a number: &#39;[REDACTED-KEY]&#39;" in page or "[REDACTED-KEY]" in page

    # no execution reports or tracebacks are published
    site = project / "book/_build/html"
    assert not (site / "reports").exists()
    for page in site.rglob("*.html"):
        assert "Traceback (most recent call last)" not in page.read_text(encoding="utf-8"), page

    # the injected parameters (a user's data path) are not published as text in the sources copy
    source = site / "_sources/studies" / f"{STUDY}.ipynb"
    nb = nbformat.read(source, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and all("remove-cell" in c.metadata["tags"] for c in injected)
    assert all(str(project) not in c.source for c in injected), injected[0].source
    assert "data_dir" in injected[0].source  # the names stay, the values do not
    assert not {"parameters", "input_path", "output_path"} & set(nb.metadata.get("papermill", {}))
    assert nb.metadata["benchbook"]["parameters"] == ["data_dir", "strix_data_dir"]
    assert not [c.source for c in nb.cells if str(project) in c.source]
    assert str(project) not in json.dumps(nb.metadata)

"""ingest_study: manifest context on every row, and log windows dated by the manifest."""

import pandas as pd

from benchbook.study.folder import write_checksums
from benchbook.study.load import ingest_study

LOG = (
    "INFO 12-31 23:59:55 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 50.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
    "INFO 01-01 00:00:05 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 40.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n"
)


def study(tmp_path, date_line: str):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw/server.log").write_text(LOG)
    (tmp_path / "study.yml").write_text(
        "study: s\ntitle: S\nlabel: l\nreconstructed: false\nconfigs:\n  a: {platform: X, model: M}\n"
        f"files:\n  - {{path: raw/server.log, config: a, name: srv{date_line}}}\n"
    )
    write_checksums(tmp_path)
    return ingest_study(tmp_path)


def test_windows_take_their_year_from_the_manifest_date(tmp_path):
    w = study(tmp_path, ", date: '2025-12-31'")["windows"]
    assert list(w["timestamp"]) == [pd.Timestamp("2025-12-31 23:59:55"), pd.Timestamp("2026-01-01 00:00:05")]
    assert set(w["config"]) == {"a"} and set(w["model"]) == {"M"} and set(w["run_date"]) == {"2025-12-31"}


def test_without_a_date_timestamps_stay_empty_rather_than_guessed(tmp_path):
    w = study(tmp_path, "")["windows"]
    assert len(w) == 2 and w["timestamp"].isna().all()


def test_a_run_s_context_overrides_a_file_wide_value_of_another_type(tmp_path):
    """study.yml gives the file `request_rate: 1` and one of its runs `.inf` (a burst): the
    run's value wins, in its row only, instead of a pandas TypeError (int column, float value)."""
    import yaml

    from bad_corpus import vllm_json

    (tmp_path / "raw").mkdir()
    lines = [vllm_json(request_rate=rate, max_concurrency=None).decode().replace("\n", " ") for rate in (1, "inf")]
    (tmp_path / "raw/r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = {"study": "s", "title": "S", "label": "l", "reconstructed": False, "configs": {"a": {"model": "M"}},
           "files": [{"path": "raw/r.jsonl", "config": "a", "name": "r", "request_rate": 1,
                      "runs": [{"config": "a", "request_rate": 1}, {"config": "a", "request_rate": float("inf")}]}]}
    (tmp_path / "study.yml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    write_checksums(tmp_path)
    runs = ingest_study(tmp_path)["runs"].sort_values("run_id")
    assert [float(v) for v in runs["request_rate"]] == [1.0, float("inf")]

"""benchbook.page.opening: the words a page opens with on data of another setup, read from the
data folder and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from benchbook.chapters.dense_sparse import analysis as dense_sparse
from benchbook.page.opening import opening_words
from benchbook.scaffold.new import new_study
from realdata import REAL, needs_shared

DATA = Path(__file__).parents[2] / "data"
DGX = REAL / "dgx-spark-djangodevreng" / "results" / "qwen-3.6"


@needs_shared
def test_the_opening_counts_runs_by_load_pattern_and_names_what_the_files_do_not(tmp_path):
    out = tmp_path / "d"
    new_study("3090-dense-vs-sparse", out, [DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"],
              log=lambda m: None)
    r = dense_sparse.analyse(out, DATA / "3090-dense-vs-sparse" / "published.yml")
    words = opening_words(r)
    # 6 steps + 3 workloads per model are open loop; 10-monday-peak is capped at 25; one crash log each
    folders = [DGX / "qwen-3.6-35b-a3b" / "fp8", DGX / "qwen-3.6-27b" / "fp8"]
    power = sum(len(list(f.glob("*-telemetry.csv"))) for f in folders)
    benchy = sum(len(list(f.glob("0[1-6]-*.md"))) + len(list(f.glob("0[1-6]-*.log"))) for f in folders)
    assert words["data_runs"] == ("18 open-loop request-rate runs, 2 fixed-concurrency runs, 2 server logs, "
                                  f"{power} power logs, {benchy} llama-benchy test files; 2 of these failed")
    assert words["data_models"] == "Qwen/Qwen3.6-35B-A3B-FP8, Qwen/Qwen3.6-27B-FP8"
    # bench JSONs name no GPU; the harness's meta.json beside them does (benchbook new lends it)
    meta = json.loads((DGX / "qwen-3.6-27b" / "fp8" / "meta.json").read_text(encoding="utf-8"))
    assert words["data_hardware"] == meta["hardware"]
    assert words["data_dates"] == "between 2026-08-14 and 2026-08-15"  # the JSONs' own dates
    assert "Qwen3.6-27B, INT4 on 2x RTX 3090" in words["writeup_setup"]  # published.yml's, not the data's


def test_on_the_write_up_s_own_folder_the_words_are_its_own():
    r = dense_sparse.analyse(DATA / "3090-dense-vs-sparse", DATA / "3090-dense-vs-sparse" / "published.yml")
    words = opening_words(r)
    assert words["data_label"] == r.data.study.label
    assert "RTX 3090" in words["data_hardware"]

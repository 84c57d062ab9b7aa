"""What a page's opening says about its data when the data is not the write-up's setup.

A chapter is written around a write-up; run on someone's own files, its first paragraph
must be about those files (their models, hardware, runs and dates, read from study.yml
and the tidy tables), with the write-up's framing kept and named as the write-up's. The
notebooks quote these words through glue, in cells tagged `needs-other-setup` (dropped on
the write-up's own setup; report.prose_conditions). The Strix Halo chapter says more about
llama-bench builds (chapters/strix.data_words) and uses these words for the rest.
"""

from __future__ import annotations

import pandas as pd

from ..ingest import load_pattern
from ..ledger.comparable import describe_setup

_RUNS = {load_pattern.SINGLE: "single-stream", load_pattern.CONCURRENCY: "fixed-concurrency",
         load_pattern.RATE: "open-loop request-rate", load_pattern.ALL_AT_ONCE: "all-at-once",
         load_pattern.UNKNOWN: "bench"}
_FILES = {"vllm-server-log": "server log", "nvidia-smi-csv": "nvidia-smi log", "prometheus-text": "/metrics dump",
          "tool-call-log": "tool-call log", "gauntlet-csv": "gauntlet file", "power-series-csv": "power log",
          **{f"benchy-{form}": "llama-benchy test file" for form in ("md", "log", "json", "csv")}}


def opening_words(r) -> dict[str, str]:
    """data_label, data_models, data_hardware, data_runs, data_dates and writeup_setup."""
    study = r.data.study
    return {
        "data_label": study.label,
        "data_models": _models(r),
        "data_hardware": _hardware(r),
        "data_runs": _runs(r),
        "data_dates": _dates(study),
        "writeup_setup": _writeup(r),
    }


def _models(r) -> str:
    """Each configuration with a role: its model and weights, as study.yml records them."""
    out = []
    for cid, role in r.roles.of_config.items():
        c = r.config(cid)
        model, quant = str(c.get("model") or "").strip(), str(c.get("quantisation") or "").strip()
        if not model:
            out.append(f"{cid} (a model study.yml does not name)")
            continue
        spec = str(c.get("speculative") or "")
        extra = f" with speculative decoding ({spec})" if spec and not spec.lower().startswith("none") else ""
        out.append((model if not quant or quant.lower() in model.lower() else f"{model} at {quant}") + extra)
    return ", ".join(dict.fromkeys(out)) or "no configuration with a role yet"


def _hardware(r) -> str:
    names = [str(r.config(c).get("platform") or r.config(c).get("accelerators") or "").strip()
             for c in r.roles.of_config]
    names = [n for n in dict.fromkeys(names) if n]
    return "; ".join(names) if names else "hardware the files do not name"


def _runs(r) -> str:
    """How many runs of each load pattern, and the other files, as the runs table and
    study.yml describe them; failed ones counted apart."""
    parts = []
    runs = r.data.tables.get("runs")
    if runs is not None and len(runs) and "load" in runs:
        for pattern, n in runs["load"].fillna(load_pattern.UNKNOWN).value_counts().items():
            parts.append(f"{n} {_RUNS.get(pattern, pattern)} run{'s' if n != 1 else ''}")
    report = r.data.report  # one row per file read, with the format its reader detected
    formats = report["format"].astype(str) if "format" in report else pd.Series(dtype=str)
    counts = formats.map(_FILES).value_counts()
    for word in dict.fromkeys(_FILES.values()):  # in _FILES' order, a word once for all its formats
        n = int(counts.get(word, 0))
        if n:
            parts.append(f"{n} {word}{'s' if n != 1 else ''}")
    failed = sum(1 for run in r.data.study.run_entries() if run.context.get("failed"))
    text = ", ".join(parts) or "no run the chapter reads"
    return text + (f"; {failed} of these failed" if failed else "")


def _dates(study) -> str:
    dates = sorted({str(run.context["date"]) for run in study.run_entries() if run.context.get("date")})
    if not dates:
        return "on dates the files do not record"
    return f"on {dates[0]}" if len(dates) == 1 else f"between {dates[0]} and {dates[-1]}"


def _writeup(r) -> str:
    entries = [e for v in (r.published.setup or {}).values() for e in (v if isinstance(v, list) else [v])]
    described = [d for d in dict.fromkeys(describe_setup(e) for e in entries if isinstance(e, dict) and e.get("model"))
                 if d]
    return "; ".join(described) if described else "a setup its published.yml does not state"

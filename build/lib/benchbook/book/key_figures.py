"""One module per chapter: everything a chapter computes, so its notebook only shows it."""

from __future__ import annotations

import pandas as pd

from ..study.marks import rows_table

# A chapter module (named in benchbook.book.registry) provides `analyse(...)`, whose arguments are
# named like its notebook's parameters and whose result has `.ledger` (claims.check_claims)
# and `.caveats` (origin, caveat); it may provide `key_figures(results) -> pandas.DataFrame`
# with the columns below (rows from key_figure_row, the table from key_figures_table), which
# the synthesis chapter sets against physical limits, prices and power.
# key_figures: one row per configuration. Strings as the study's data give them (study.yml);
# the synthesis maps platform, model, quantisation and kv_dtype to data/facts/ entries.
KEY_FIGURES = {
    "study": "the study id",
    "platform": "platform as study.yml gives it (or a data/facts/platforms.yml key)",
    "config": "configuration id from study.yml",
    "model": "model as study.yml gives it (or a data/facts/models.yml key)",
    "quantisation": "weight format as study.yml gives it (or a data/facts/quantisation.yml key)",
    "single_stream_decode_tps": "decode rate of one stream, t/s (e.g. 1 / median TPOT at concurrency 1)",
    "acceptance_length": "speculative decoding: mean tokens per verification step (1 + accepted/drafts); NaN without",
    "ttft_s": "median time to first token of a single request, s",
    "ttft_input_tokens": "input tokens of that request",
    "best_aggregate_tps": "highest measured aggregate output t/s",
    "best_aggregate_concurrency": "concurrency of that run",
    "cost_per_m": "cost per million output tokens at the best aggregate, in `currency`; NaN if unpriced",
    "currency": "ISO code of cost_per_m (EUR, USD); empty if unpriced",
    "power_w": "measured power at the best aggregate, W (all accelerators); NaN if not measured",
    "power_kind": "'measured' (a draw), 'limit' (a power cap: an upper bound) or empty",
    "anchor": "section anchor of the chapter page the row's numbers come from",
}
KEY_FIGURES_OPTIONAL = {  # column -> default
    "label": "",
    "accelerators": 1,  # devices serving the model (tensor parallel)
    "kv_dtype": "",  # KV-cache data type as study.yml gives it (auto, fp8, f16, ...)
    "speculative": "",  # e.g. "MTP, 2 draft tokens"; empty without speculative decoding
    "decode_context_tokens": float("nan"),  # mean context during the single-stream decode
    "decode_basis": "",  # how single_stream_decode_tps was measured
    "prefill_tps": float("nan"),  # single-request prefill rate, t/s
    "prefill_tokens": float("nan"),  # prompt tokens of that measurement
    "notes": "",
}


def key_figures_table(rows: list[dict], why: dict) -> pd.DataFrame:
    """A chapter's key_figures rows (key_figure_row) as its output table, cells marked. With no
    row (no configuration has the runs they need) the table still has the columns, so the
    synthesis reads "no key figures", not a file without a header."""

    return rows_table(rows, why, columns=None if rows else [*KEY_FIGURES, *KEY_FIGURES_OPTIONAL])


def conform_key_figures(df: pd.DataFrame, study: str) -> pd.DataFrame:
    """Check a chapter's key_figures frame and complete its optional columns."""
    missing = [c for c in KEY_FIGURES if c not in df.columns]
    if missing:
        raise ValueError(f"{study}: key_figures lacks column(s) {', '.join(missing)}; "
                         f"see benchbook.book.key_figures.KEY_FIGURES")
    out = df.copy()
    for col, default in KEY_FIGURES_OPTIONAL.items():
        if col not in out:
            out[col] = default
        elif not (isinstance(default, float) and default != default):
            out[col] = out[col].astype(object).where(out[col].notna(), default)
    for col in ("study", "platform", "config", "model", "quantisation", "anchor", "currency", "power_kind",
                "label", "kv_dtype", "speculative", "decode_basis", "notes"):  # text: empty, never NaN
        out[col] = out[col].astype(object).where(out[col].notna(), "")
    bad = sorted(set(out["power_kind"].fillna("")) - {"", "measured", "limit"})
    if bad:
        raise ValueError(f"{study}: key_figures power_kind {bad}; expected 'measured', 'limit' or empty")
    return out[list(KEY_FIGURES) + list(KEY_FIGURES_OPTIONAL) +
               [c for c in out.columns if c not in KEY_FIGURES and c not in KEY_FIGURES_OPTIONAL]]


def accelerator_count(text) -> int:
    """Devices from a study.yml `accelerators` string such as '2x NVIDIA RTX 3090' (1 if absent)."""
    import re

    m = re.match(r"\s*(\d+)\s*[x×]", str(text or ""))
    return int(m.group(1)) if m else 1


def speculative(c: dict) -> str:
    """A configuration's speculative decoding as its study.yml entry says it; empty without."""
    spec = str(c.get("speculative") or "")
    return "" if spec.lower().startswith("none") else spec


def decode_context(run) -> float:
    """Mean context while a run decodes: its prompt and half of its answer after the first token."""
    return float(run["input_len"]) + (float(run["output_len"]) - 1) / 2


# key_figures columns a chapter that did not measure them leaves at these values
UNMEASURED = dict(ttft_s=float("nan"), ttft_input_tokens=float("nan"), cost_per_m=float("nan"), currency="",
                  power_w=float("nan"), power_kind="")


def key_figure_row(study: str, config: str, c: dict, **columns) -> dict:
    """One key_figures row: what the configuration's study.yml entry `c` says (platform,
    model, weight format, devices, KV type, speculative decoding), what the chapter measured
    (`columns`, which win), UNMEASURED for the rest, in the order of KEY_FIGURES."""
    row = dict(study=study, config=config, platform=c.get("platform"), model=c.get("model"),
               quantisation=c.get("quantisation"), accelerators=accelerator_count(c.get("accelerators")),
               kv_dtype=c.get("kv_dtype") or "", speculative=speculative(c)) | UNMEASURED | columns
    order = [*KEY_FIGURES, *KEY_FIGURES_OPTIONAL]
    return {k: row[k] for k in order if k in row} | {k: v for k, v in row.items() if k not in order}

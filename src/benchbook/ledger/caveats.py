"""Caveats: the authors' own (from published.yml) and those the data raises by rule.

Each rule looks at the tidy tables and returns a caveat only when its condition holds,
with the evidence, so a caveat disappears when better data arrives.
"""

from __future__ import annotations

import pandas as pd

from ..analysis.llama import ok_rows, variants
from ..format import fmt_rate
from ..ingest.tables import conform
from .claims import UNKNOWN


def authors_caveats(published) -> list[dict]:
    return [dict(origin=f"authors ({c['source']})", caveat=c["text"]) for c in published.caveats]


def data_caveats(study_data, runs: pd.DataFrame, ledger: pd.DataFrame | None = None,
                 compared: list[tuple[str, str]] | None = None, extra_configs: dict | None = None,
                 best_of: bool = True) -> list[dict]:
    """Caveats raised by rules over the data; `compared` lists config pairs set side by side.
    `runs` is a chapter's runs table, or any frame of its rows: the rules read the runs
    table's columns, so a frame without them (a chapter with no bench runs) is given them
    empty rather than failing on a missing column. `best_of`: the page quotes llama.cpp
    figures as the best of several builds (a page that shows every build apart does not)."""
    runs = conform(runs, "runs", check_required=False)
    out = []
    configs = {**study_data.study.configs, **(extra_configs or {})}
    checks = [_reconstructed, _synthetic_traffic, _small_samples, _summary_only, _ignored_records, _client_idle]
    for check in checks + ([_best_of_backends] if best_of else []):
        out += check(study_data, runs)
    out += _unlike_models(configs, compared or [])
    if ledger is not None:
        out += _currency(ledger)
    return out


def rule(name: str, text: str, *rests: tuple, ids=()) -> dict:
    """A caveat of a data rule. Each of `rests` is (reads, runs): tidy columns its text rests on
    and the run ids read in them (None: every run), so that one resting on a generator's
    assumption is marked (pipeline.finish). A choice landing in runs it does not read moves
    none of it. `ids`: choices a chapter found its numbers rest on itself (from value ids)."""
    out = dict(origin=f"data rule: {name}", caveat=text)
    if rests:
        out["rests"] = [(tuple(reads), None if runs is None else [str(x) for x in runs]) for reads, runs in rests]
    if ids:
        out["ids"] = tuple(ids)
    return out


def _reconstructed(sd, runs):
    if not sd.study.reconstructed:
        return []
    return [rule("reconstructed", (
        f"The raw files ({sd.study.label}) are reconstructed from the published tables, not "
        "measured: agreement with the write-up is by construction. Consistency checks between "
        "published numbers and the structure of the runs remain informative."))]


def _synthetic_traffic(sd, runs):
    if "dataset" not in runs:
        return []
    synth = runs[(runs["dataset"] == "random") & (runs.get("ignore_eos", False) == True)]  # noqa: E712
    if not len(synth):
        return []
    return [rule("synthetic-traffic", (
        f"{len(synth)} of {len(runs)} runs use random-token prompts with `--ignore-eos`: every request "
        "generates its full output budget, and speculative decoding sees unusually predictable text. "
        "Real agent traffic has varied lengths and lower MTP acceptance."))]


def _small_samples(sd, runs):
    few = runs[runs["completed"].fillna(0) < 100]
    if not len(few):
        return []
    names = ", ".join(f"{n} ({int(c)})" for n, c in zip(few["name"], few["completed"]))
    return [rule("small-samples", (
        f"P99 figures come from runs with fewer than 100 requests: {names}. With n requests the P99 "
        "is interpolated between the largest one or two samples, so it is close to the maximum."),
        (("runs.completed",), few["run_id"]))]  # the counts it quotes (make marks)


def _summary_only(sd, runs):
    summ = runs[runs["summary_only"].fillna(False)]
    if not len(summ):
        return []
    return [rule("summary-only", (
        f"{len(summ)} runs have no per-request data; their statistics are the tool's own "
        f"summary values, not recomputed: {', '.join(summ['name'].astype(str))}."))]


def _ignored_records(sd, runs):
    bad = sd.report[sd.report["ignored"] > 0]
    if not len(bad):
        return []
    detail = "; ".join(f"{r.file}: {r.ignored} ({r.reasons})" for r in bad.itertuples())
    return [rule("ignored-records", f"Some records were ignored while reading: {detail}.")]


def _client_idle(sd, runs, threshold: float = 0.05):
    """Where per-request speed exceeds aggregate / concurrency, clients sat idle."""
    if "per_request_tps" not in runs:
        return []
    r = runs.dropna(subset=["per_request_tps", "per_agent_tps"])
    prefill = r[r["total_output_tokens"] <= r["completed"]]  # one-token runs measure prefill, not streaming
    r = r.drop(prefill.index)
    gap = r[(r["per_request_tps"] / r["per_agent_tps"] - 1) > threshold]
    if not len(gap):
        return []
    detail = ", ".join(
        f"{n}: {fmt_rate(a, 1)} vs {fmt_rate(b, 1)} t/s"
        for n, a, b in zip(gap["name"], gap["per_request_tps"], gap["per_agent_tps"])
    )
    return [rule("client-idle", (
        "In some runs a request streams faster than aggregate ÷ concurrency, so clients spent time "
        f"between requests and 'per-agent t/s' understates what one request sees ({detail})."),
        (CLIENT_IDLE_READS, gap["run_id"]),  # the runs it quotes: a run far from the line stays out
        (ONE_TOKEN_READS, prefill["run_id"]))]  # under ×2 and ×½ moves; a one-token run is on the line


# what its numbers are computed from: per-request t/s (the median of requests' tokens ÷ latency, which
# rests on the requests at its median: pipeline.ORDER_READS), aggregate ÷ concurrency
CLIENT_IDLE_READS = ("requests.per_request_tps", "runs.output_tps", "runs.concurrency")
# what leaves a run out as a prefill measurement: one token per request (a second one brings it in)
ONE_TOKEN_READS = ("runs.total_output_tokens", "runs.completed")


def _best_of_backends(sd, runs):
    lb = ok_rows(sd["llama_bench"])
    builds = variants(lb) if len(lb) else lb.get("config", pd.Series(dtype=object))
    if not len(lb) or builds.nunique() < 2:
        return []
    names = sorted(builds.unique())
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return [rule("best-of-backends", (
        f"llama.cpp figures are the best of {len(names)} builds/backends per test ({shown}): an "
        "optimistic envelope that no single build reaches on every test."))]


def _unlike_models(configs: dict, compared: list[tuple[str, str]]):
    out = []
    for a, b in compared:
        ca, cb = configs.get(a, {}), configs.get(b, {})
        diffs = [k for k in ("model", "quantisation", "engine", "platform") if ca.get(k) != cb.get(k)]
        if "model" in diffs or "quantisation" in diffs:
            meaning = ("their ratio mixes hardware with model and software choices" if "platform" in diffs
                       else "on the same hardware, their ratio reflects the model and serving configuration")
            out.append(rule("unlike-models", (
                f"{a} and {b} differ in {', '.join(diffs)} ({_on(ca)} vs {_on(cb)}): {meaning}.")))
    return out


def _on(config: dict) -> str:
    return f"{config.get('model') or 'model not stated'} on {config.get('platform') or 'platform not stated'}"


def _currency(ledger: pd.DataFrame):
    mixed = ledger[(ledger["verdict"] == UNKNOWN) & ledger["note"].str.contains("amounts in", na=False)]
    if not len(mixed):
        return []
    return [rule("currency", (
        f"{len(mixed)} claims compare costs in euros with prices in US dollars ({', '.join(mixed['id'])}). "
        "They are not derivable without a dated exchange rate (parameter usd_per_eur); the ledger "
        "shows the rate at which each would hold."))]

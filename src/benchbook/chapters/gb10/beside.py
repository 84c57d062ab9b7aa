"""The write-up's runs beside this data's nearest llama-benchy points, never judged.

Data of the write-up's setup for the model under test (role vanilla: its platform, model and
weights) may come from another harness, whose tests are not the write-up's A-D. Then no
published number can be checked, but a reader still wants them side by side. Each published
test is set beside the llama-benchy point of the vanilla configuration at the nearest
concurrency whose prompt is closest in size, with every difference named: the workload, and
the tool (llama-benchy times generation and prefill apart; `vllm bench serve`'s output
throughput is a whole run's output tokens over its duration, prefill included). The verdict is
always "not comparable" (book/methods.md, like with like).
"""

from __future__ import annotations

import math
import re

import pandas as pd

from ...format import fmt_rate
from ...study.contract import Contract

METRICS = {"output_tps": "output t/s", "mean_ttft_s": "mean TTFT"}
COLUMNS = ["test", "prompt_tokens", "answer_tokens", "clients", "published_output_tps", "published_mean_ttft",
           "config", "decode_file", "decode_concurrency", "decode_prompt_tokens", "decode_answer_tokens",
           "decode_tps_total", "prefill_file", "prefill_concurrency", "prefill_prompt_tokens", "ttfr_s", "comparable"]


def workloads(contract: Contract) -> dict[str, tuple[int, int, int]]:
    """Test letter -> (prompt tokens, answer tokens, clients), from the contract's test kinds."""
    out = {}
    for kind in contract.kinds:
        if m := re.fullmatch(r"test-([a-d])", kind.name):
            when = {key: value for key, _, value in kind.when}
            out[m.group(1)] = (int(when["input_len"]), int(when["output_len"]), int(when["concurrency"]))
    return out


def published_cells(published, key: str = "van") -> dict[tuple[str, str], str]:
    """(test, metric) -> the cell the write-up printed for the role with value-name key `key`."""
    out: dict[tuple[str, str], str] = {}
    pattern = re.compile(rf"{key}_([a-d])_({'|'.join(METRICS)})")
    for t in published.tables:
        for cells, values in zip(t.rows, t.values):
            for cell, expr in zip(cells, values):
                if expr and (m := pattern.fullmatch(str(expr))):
                    out.setdefault((m.group(1), m.group(2)), str(cell))
    return out


def _log_gap(values: pd.Series, target: float) -> pd.Series:
    return values.astype(float).map(lambda v: abs(math.log(v / target)) if v > 0 else math.inf)


def nearest(points: pd.DataFrame, kind: str, concurrency: int, prompt: int) -> pd.Series | None:
    """The point of `kind` ('tg' or 'pp') at the concurrency closest in ratio to `concurrency`,
    and among those the one whose prompt (context included) is closest in ratio to `prompt`;
    None when there is no point of that kind."""
    at = points[(points["kind"] == kind) & points["concurrency"].notna()]
    if not len(at):
        return None
    gap = _log_gap(at["concurrency"], concurrency)
    at = at[gap == gap.min()]
    size = at["prompt_tokens"].astype(float) + at["depth"].fillna(0).astype(float)
    return at.loc[_log_gap(size, prompt).idxmin()]


def _size(row: pd.Series) -> int:
    return int(row["prompt_tokens"] + (0 if pd.isna(row["depth"]) else row["depth"]))


def _file(row: pd.Series) -> str:
    return str(row["source_file"]).rsplit("/", 1)[-1]


def _differences(tg: pd.Series | None, prompt: int, answer: int, clients: int) -> str:
    if tg is None:
        return "not comparable: no llama-benchy generation test"
    out = []
    if int(tg["concurrency"]) != clients:
        out.append(f"concurrency {int(tg['concurrency'])} against {clients}")
    if _size(tg) != prompt:
        out.append(f"prompts of {_size(tg):,} tokens against {prompt:,}")
    if not pd.isna(tg["gen_tokens"]) and int(tg["gen_tokens"]) != answer:
        out.append(f"answers of {int(tg['gen_tokens']):,} against {answer:,}")
    out.append("another tool (generation timed without prefill)")
    return "not comparable: " + "; ".join(out)


def table(points: pd.DataFrame, configs: list[str], contract: Contract, published) -> pd.DataFrame:
    """One row per write-up test and configuration of `configs` (the vanilla ones): the
    published numbers, the nearest llama-benchy decode and prefill points, and what differs."""
    cells = published_cells(published)
    rows = []
    for test, (prompt, answer, clients) in workloads(contract).items():
        if not any((test, m) in cells for m in METRICS):
            continue
        for config in configs:
            mine = points[points["config"] == config]
            if not len(mine):
                continue
            tg, pp = nearest(mine, "tg", clients, prompt), nearest(mine, "pp", clients, prompt)
            rows.append({
                "test": test.upper(), "prompt_tokens": prompt, "answer_tokens": answer, "clients": clients,
                "published_output_tps": cells.get((test, "output_tps")),
                "published_mean_ttft": cells.get((test, "mean_ttft_s")), "config": config,
                "decode_file": None if tg is None else _file(tg),
                "decode_concurrency": None if tg is None else int(tg["concurrency"]),
                "decode_prompt_tokens": None if tg is None else _size(tg),
                "decode_answer_tokens": None if tg is None or pd.isna(tg["gen_tokens"]) else int(tg["gen_tokens"]),
                "decode_tps_total": None if tg is None else float(tg["tps_total"]),
                "prefill_file": None if pp is None else _file(pp),
                "prefill_prompt_tokens": None if pp is None else _size(pp),
                "prefill_concurrency": None if pp is None else int(pp["concurrency"]),
                "ttfr_s": None if pp is None or pd.isna(pp["ttfr_s"]) else float(pp["ttfr_s"]),
                "comparable": _differences(tg, prompt, answer, clients),
            })
    return pd.DataFrame(rows, columns=COLUMNS)


def _dash(v, shown) -> str:
    return "–" if v is None or pd.isna(v) else shown(v)


def display(rows: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """The table as the page shows it: one row per test, the nearest points named by file."""
    out = pd.DataFrame({
        "write-up test": [f"{t}: {p:,} in, {a:,} out, {c} client{'s' if c != 1 else ''}"
                          for t, p, a, c in zip(rows["test"], rows["prompt_tokens"], rows["answer_tokens"],
                                                rows["clients"])],
        "published output t/s": rows["published_output_tps"].map(lambda v: _dash(v, str)),
        "published mean TTFT": rows["published_mean_ttft"].map(lambda v: _dash(v, str)),
        "configuration": rows["config"].map(lambda v: labels.get(v, v)),
        "nearest decode point": [_dash(f, lambda f: f"{f}: {int(p):,} in, {_dash(a, lambda a: f'{int(a):,}')} out, "
                                                    f"concurrency {int(c)}")
                                 for f, p, a, c in zip(rows["decode_file"], rows["decode_prompt_tokens"],
                                                       rows["decode_answer_tokens"], rows["decode_concurrency"])],
        "decode t/s in total": rows["decode_tps_total"].map(lambda v: _dash(v, lambda x: fmt_rate(x, 1))),
        "time to first response": [_dash(t, lambda t: f"{t:,.2f} s ({f}: {int(p):,} in, concurrency {int(c)})")
                                   for t, f, p, c in zip(rows["ttfr_s"], rows["prefill_file"],
                                                         rows["prefill_prompt_tokens"], rows["prefill_concurrency"])],
        "comparable": rows["comparable"],
    })
    return out

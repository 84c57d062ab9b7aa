"""The reconstructed GB10 MTP folder: deterministic, and faithful to every published number.

Every published value is recomputed here from the committed raw files with plain numpy,
json and regular expressions, independently of the generator's and the chapter's code;
then the project's readers are checked against the same numbers.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from benchbook.ledger.expr import evaluate
from benchbook.ledger.published import load_published, parse_quantity
from benchbook.study.folder import load_study
from files import tree_bytes  # noqa: E402  (tests/ is on sys.path)
from reconstructed import assert_deterministic, generate_twice  # noqa: E402
from tools.reconstruct import gb10

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "gb10-mtp"
PUBLISHED = DATA / "published.yml"
SCALED = re.compile(r"^(?:(?P<k>\d+(?:\.\d+)?)\s*\*\s*)?(?P<name>[a-z][a-z0-9_]*)$")
DELTA = re.compile(r"^100 \* \((?P<x>[a-z][a-z0-9_]*) / (?P<y>[a-z][a-z0-9_]*) - 1\)$")
# Published figures that contradict vLLM's definitions of the counters (PROVENANCE.md):
# draft tokens = 2 x drafts, acceptance rate = (length - 1) / 2. Checked below, not reproduced.
CONFLICTS = {"mtp_c_spec_draft_tokens", "mtp_c_spec_acceptance_rate"}
# Data claims that cannot hold once the published values they restate are reproduced
# (test_claims_that_cannot_hold shows why).
CANNOT_HOLD = {"claim load-longer"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return generate_twice(tmp_path_factory, gb10, PUBLISHED, "gb10_")


def test_generation_is_deterministic_and_matches_committed_data(built):
    assert_deterministic(built, DATA)
    assert {k: v for k, v in tree_bytes(built[0]).items() if k.startswith("raw/")} == \
           {k: v for k, v in tree_bytes(DATA).items() if k.startswith("raw/")}


def test_folder_is_compact_and_listed():
    study = load_study(DATA)  # verifies every checksum
    assert study.reconstructed and "reconstructed" in study.label
    sizes = [p.stat().st_size for p in (DATA / "raw").rglob("*") if p.is_file()]
    assert max(sizes) < 4_000_000 and sum(sizes) < 10_000_000
    kinds = [e.context["kind"] for e in study.files]
    assert kinds.count("server-log") == 4 and kinds.count("metrics") == 1
    assert sum(k.startswith("test-") for k in kinds) == 4 + 3 * 7  # old: A-D once; others: A + B-D twice


# ---------------------------------------------------------------- independent recomputation


def _metrics(path: Path) -> dict[str, float]:
    d = json.loads(path.read_text(encoding="utf-8"))
    ttft = np.array(d["ttfts"], dtype=float)
    out = np.array(d["output_lens"], dtype=float)
    sums = np.array([sum(r) for r in d["itls"]], dtype=float)
    tpot = sums / (out - 1)
    flat = np.array([x for r in d["itls"] for x in r], dtype=float)
    starts = np.array(d["start_times"], dtype=float)
    m = {"output_tps": out.sum() / d["duration"], "mean_ttft_s": ttft.mean(),
         "p95_ttft_s": np.percentile(ttft, 95), "p99_ttft_s": np.percentile(ttft, 99),
         "mean_tpot_s": tpot.mean(), "p99_tpot_s": np.percentile(tpot, 99), "mean_itl_s": flat.mean(),
         "p99_itl_s": np.percentile(flat, 99), "ttft_outliers": float((ttft > 2 * np.median(ttft)).sum()),
         "start": starts.min(), "end": (starts + ttft + sums).max()}
    if "spec_decode_num_drafts" in d:
        m.update(spec_acceptance_rate=d["spec_decode_acceptance_rate"] / 100,
                 spec_acceptance_length=d["spec_decode_acceptance_length"],
                 spec_num_drafts=d["spec_decode_num_drafts"], spec_draft_tokens=d["spec_decode_draft_tokens"],
                 spec_accepted_tokens=d["spec_decode_accepted_tokens"],
                 spec_pos0=d["spec_decode_per_position_acceptance_rates"][0],
                 spec_pos1=d["spec_decode_per_position_acceptance_rates"][1])
    return {k: float(v) for k, v in m.items()}


def _dumps(path: Path) -> list[dict]:
    """Each `# dump` section of the /metrics file as {(metric, labels): value}."""
    out = []
    for section in path.read_text(encoding="utf-8").split("# dump ")[1:]:
        samples = {}
        for line in section.splitlines()[1:]:
            if line.startswith("#") or not line.strip():
                continue
            head, value = line.rsplit(" ", 1)
            name, _, labels = head.partition("{")
            samples[(name, labels.rstrip("}"))] = float(value)
        out.append(samples)
    return out


def _spec(dump: dict) -> dict[str, float]:
    get = lambda name, pos=None: sum(v for (n, lab), v in dump.items()  # noqa: E731
                                     if n == name and (pos is None or f'position="{pos}"' in lab))
    return {"num_drafts": get("vllm:spec_decode_num_drafts_total"),
            "draft_tokens": get("vllm:spec_decode_num_draft_tokens_total"),
            "accepted_tokens": get("vllm:spec_decode_num_accepted_tokens_total"),
            "accepted_pos0": get("vllm:spec_decode_num_accepted_tokens_per_pos_total", 0),
            "accepted_pos1": get("vllm:spec_decode_num_accepted_tokens_per_pos_total", 1)}


SPEC_LINE = re.compile(r"(\d\d):(\d\d):(\d\d) \[metrics\.py:\d+\] SpecDecoding metrics: Mean acceptance length: "
                       r"([\d.]+), .*Accepted: (\d+) tokens, Drafted: (\d+) tokens, Per-position acceptance rate: "
                       r"([\d., ]+), Avg Draft acceptance rate: ([\d.]+)%")
BOOT = {"kv_cache_tokens": r"GPU KV cache size: ([\d,]+) tokens",
        "max_model_len": r"Maximum concurrency for ([\d,]+) tokens",
        "max_concurrency": r"tokens per request: ([\d.]+)x",
        "weights_load_s": r"Loading weights took ([\d.]+) seconds",
        "weights_gib": r"Model loading took ([\d.]+) GiB",
        "checkpoint_shards": r"checkpoint shards: 100% Completed \| (\d+)/",
        "graphs_piecewise": r"Capturing CUDA graphs \([^)]*PIECEWISE\): 100%\|[^|]*\| (\d+)/",
        "graphs_full": r"Capturing CUDA graphs \([^)]*FULL\): 100%\|[^|]*\| (\d+)/",
        "moe_experts": r"/E=(\d+),N=\d+,"}


@pytest.fixture(scope="module")
def values() -> dict[str, float]:
    study = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))
    vals, groups = {}, {}
    for e in study["files"]:
        path, name = DATA / e["path"], e["name"]
        if e["kind"].startswith("test-"):
            group = re.sub(r"_s\d+$", "", name)
            for k, v in _metrics(path).items():
                vals[f"{name}_{k}"] = v
                groups.setdefault(group, {}).setdefault(k, []).append(v)
        elif e["kind"] == "server-log":
            cfg, text = name.split("_")[0], path.read_text(encoding="utf-8")
            for fact, rx in BOOT.items():
                if found := re.search(rx, text):  # (only some servers captured full graphs)
                    vals[f"{cfg}_{fact}"] = float(found.group(1).replace(",", ""))
            for m in SPEC_LINE.finditer(text):
                key = f"specline_{m.group(1)}{m.group(2)}{m.group(3)}"
                vals[f"{key}_mean_acceptance_length"] = float(m.group(4))
                vals[f"{key}_acceptance_rate"] = float(m.group(8)) / 100
        elif e["kind"] == "metrics":
            for k, v in _spec(_dumps(path)[-1]).items():
                vals[f"prom_{k}"] = v
    for group, ms in groups.items():
        for k, v in ms.items():
            vals[f"{group}_{k}"] = float(np.mean(v))
    fresh = [g for g in groups if g.startswith("fresh_")]
    vals["fresh_session_s"] = max(max(groups[g]["end"]) for g in fresh) - min(min(groups[g]["start"]) for g in fresh)
    return vals


def _same_print(text: str, value: float, scale: float = 1.0) -> bool:
    """The value rounds to the printed number (or, for '~' numbers, lies within their tolerance)."""
    q = parse_quantity(text)
    v = value * scale
    if q.approx:
        return abs(v - q.value) <= q.tolerance * abs(q.value)
    return q.value - q.step / 2 <= v < q.value + q.step / 2


def _items():
    """(where, printed text, expression) of every table cell and data claim with an expression."""
    pub = load_published(PUBLISHED)
    for t in pub.tables:
        for i, (cells, exprs) in enumerate(zip(t.rows, t.values)):
            for cell, expr in zip(cells, exprs):
                if expr:
                    yield f"{t.id}[{i}] {cell}", cell, expr
    for c in pub.claims:
        if c.get("kind", "data") == "data" and not c.get("approx"):
            yield f"claim {c['id']}", c["published"], c["recompute"]


@pytest.mark.parametrize("where,cell,expr", list(_items()), ids=lambda x: x if " " not in str(x) else None)
def test_every_published_number_is_reproduced(values, where, cell, expr):
    if where in CANNOT_HOLD:
        q = parse_quantity(cell)
        assert abs(evaluate(expr, values) - q.value) > q.tolerance * abs(q.value), f"{where} now holds"
        return
    m, d = SCALED.match(expr), DELTA.match(expr)
    if m:
        name = m.group("name")
        if name in CONFLICTS:
            assert not _same_print(cell, values[name], float(m.group("k") or 1)), f"{where} now reproduced"
            return
        assert name in values, f"no raw file gives {name}"
        assert _same_print(cell, values[name], float(m.group("k") or 1)), (where, values[name])
    elif d:  # a change in %: reproduced to its printed digit
        got = 100 * (values[d.group("x")] / values[d.group("y")] - 1)
        q = parse_quantity(cell)
        if where.startswith("claim"):  # prose rounds more loosely: its own tolerance
            assert abs(got - q.value) <= q.tolerance * abs(q.value), (where, got)
        else:
            assert _same_print(cell, got), (where, got)
    else:  # any other expression, with the project's small evaluator
        got = evaluate(expr, values)
        q = parse_quantity(cell)
        if where.startswith("claim"):
            assert abs(got - q.value) <= q.tolerance * abs(q.value), (where, got)
        else:
            assert _same_print(cell, got), (where, got)


def test_conflicting_figures_really_contradict_the_counters():
    """26,500 draft tokens and a 72.9 % rate cannot go with 13,400 drafts and length 2.44 (k = 2)."""
    q = lambda t: (parse_quantity(t).value - parse_quantity(t).step / 2,  # noqa: E731
                   parse_quantity(t).value + parse_quantity(t).step / 2)
    drafts, tokens, length, rate = q("13,400"), q("26,500"), q("2.44"), q("72.9")
    assert 2 * drafts[0] >= tokens[1]  # draft tokens would have to be 26,799 or more
    assert (length[1] - 1) / 2 * 100 <= rate[0]  # the rate could be at most 72.25 %


def test_claims_that_cannot_hold():
    """'3.5 minutes longer' from loads of 289 s and 87 s: at most 203 s, 3.38 minutes."""
    hi = (289.5 - 86.5) / 60
    q = parse_quantity("3.5 minutes")
    assert abs(hi * 60 - q.value) > q.tolerance * q.value


def test_seeds_and_means(values):
    """B-D ran twice on the fresh stack; the published B P99 ITL with MTP is the mean of 1063 and 1043 ms."""
    for cfg in ("fresh", "van", "mtp"):
        for test in "bcd":
            for metric in ("output_tps", "mean_ttft_s"):
                s42, s123 = values[f"{cfg}_{test}_s42_{metric}"], values[f"{cfg}_{test}_s123_{metric}"]
                assert s42 != s123
                assert values[f"{cfg}_{test}_{metric}"] == pytest.approx((s42 + s123) / 2)
    assert round(values["mtp_b_s42_p99_itl_s"] * 1000) == 1063
    assert round(values["mtp_b_s123_p99_itl_s"] * 1000) == 1043


def test_counters_reconcile_across_json_log_and_metrics():
    study = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))
    files = {e["name"]: DATA / e["path"] for e in study["files"]}
    dumps = _dumps(files["mtp_metrics"])
    before, after = _spec(dumps[0]), _spec(dumps[-1])
    assert (after["num_drafts"], after["draft_tokens"], after["accepted_tokens"]) == (41568, 83136, 60298)
    assert (after["accepted_pos0"], after["accepted_pos1"]) == (33909, 26389)
    assert 0 < before["num_drafts"] < after["num_drafts"]  # a real before/after pair
    lines = SPEC_LINE.findall(files["mtp_log"].read_text(encoding="utf-8"))
    assert sum(int(m[4]) for m in lines) == after["accepted_tokens"]
    assert sum(int(m[5]) for m in lines) == after["draft_tokens"]
    bench = [json.loads(p.read_text()) for n, p in files.items() if n.startswith("mtp_") and p.suffix == ".json"]
    assert len(bench) == 7
    drafts = sum(b["spec_decode_num_drafts"] for b in bench)
    assert drafts == sum(sum(len(r) for r in b["itls"]) for b in bench)  # one draft per streamed chunk
    assert drafts < after["num_drafts"] - before["num_drafts"]  # warm-ups are counted by the server only
    for b in bench:
        assert b["spec_decode_draft_tokens"] == 2 * b["spec_decode_num_drafts"]
        per_pos = [round(x * b["spec_decode_num_drafts"]) for x in b["spec_decode_per_position_acceptance_rates"]]
        assert sum(per_pos) == b["spec_decode_accepted_tokens"]
        assert b["spec_decode_acceptance_length"] == pytest.approx(
            1 + b["spec_decode_accepted_tokens"] / b["spec_decode_num_drafts"])


def test_start_up_logs_carry_the_stated_facts():
    texts = {cfg: (DATA / "raw" / cid / "vllm-serve.log").read_text(encoding="utf-8")
             for cfg, cid in gb10.CONFIG_ID.items()}
    assert "Qwen3_5MoeForConditionalGeneration" in texts["van"]
    assert "setting cudagraph_mode=PIECEWISE" in texts["mtp"] and "CUDAGraphMode.FULL_AND_PIECEWISE" in texts["mtp"]
    assert not any("setting cudagraph_mode" in texts[c] for c in ("old", "fresh", "van"))
    assert "Sharing target model embedding weights" in texts["mtp"]
    assert "| 42/42 [" in texts["van"] and "| 14/14 [" in texts["fresh"]
    assert "PIECEWISE): 100%|██████████| 11/11" in texts["fresh"] and "FULL): 100%|██████████| 7/7" in texts["fresh"]
    assert "0.19.1rc1.dev231" in texts["old"] and "0.19.1rc1.dev328" in texts["fresh"]
    for text in texts.values():  # every timestamped line in time order
        stamps = re.findall(r" (\d\d-\d\d \d\d:\d\d:\d\d) \[", text)
        assert stamps == sorted(stamps)


def test_bench_files_are_internally_consistent():
    study = yaml.safe_load((DATA / "study.yml").read_text(encoding="utf-8"))
    for e in study["files"]:
        if not e["kind"].startswith("test-"):
            continue
        text = (DATA / e["path"]).read_text(encoding="utf-8")
        d = json.loads(text)
        assert "\n" not in text
        starts, ttft = np.array(d["start_times"]), np.array(d["ttfts"])
        ends = starts + ttft + np.array([sum(r) for r in d["itls"]])
        assert 0 <= d["duration"] - (ends.max() - starts.min()) < 0.005, e["name"]
        assert np.all(np.diff(starts) >= 0)
        assert d["completed"] == d["num_prompts"] == len(ttft) and d["max_concurrency"] == e["concurrency"]
        assert d["mean_ttft_ms"] == pytest.approx(ttft.mean() * 1000)
        lens = [len(r) for r in d["itls"]]
        out = e["output_len"]
        if "spec_decode_num_drafts" in d:
            assert all((out - 1) / 3 <= n < out - 1 for n in lens)
        else:
            assert set(lens) == {out - 1}


def test_other_seed_gives_other_files_but_the_same_published_values(tmp_path, values):
    gb10.generate(tmp_path, PUBLISHED, seed=7)
    assert (tmp_path / "SHA256SUMS").read_text() != (DATA / "SHA256SUMS").read_text()
    other = json.loads(next(tmp_path.glob("raw/q36-mtp/*concurrency16-*.json")).read_text())
    mine = json.loads(next(DATA.glob("raw/q36-mtp/*concurrency16-*.json")).read_text())
    assert other["ttfts"] != mine["ttfts"]


# ---------------------------------------------------------------- the project's readers agree


def test_readers_agree_with_the_independent_numbers(values):
    from benchbook.study.load import ingest_study

    data = ingest_study(DATA)
    runs = data["runs"].set_index("name")
    for name in runs.index:
        for metric in ("output_tps", "mean_ttft_s", "p99_ttft_s", "mean_tpot_s", "p99_tpot_s", "mean_itl_s",
                       "p99_itl_s"):
            assert runs.loc[name, metric] == pytest.approx(values[f"{name}_{metric}"], rel=1e-9), (name, metric)
    boot = data["boot"]
    for cfg in gb10.CFGS:
        b = boot[boot["name"] == f"{cfg}_log"].set_index("fact")["value_num"]
        for fact in BOOT:
            if f"{cfg}_{fact}" in values:
                assert b[fact] == pytest.approx(values[f"{cfg}_{fact}"]), (cfg, fact)
            else:
                assert fact not in b.index, (cfg, fact)
    sd = data["spec_decode"]
    prom = sd[sd["origin"] == "prometheus"].sort_values("line").iloc[-1]
    assert (prom["num_drafts"], prom["draft_tokens"], prom["accepted_tokens"]) == (41568, 83136, 60298)
    delta = sd[sd["origin"] == "prometheus-delta"]
    assert len(delta) == 1 and delta["num_drafts"].iloc[0] < 41568
    lines = sd[sd["origin"] == "log-line"]
    quoted = lines[lines["time"].astype(str).str.endswith("05:00:39")]
    assert len(quoted) == 1
    assert quoted["mean_acceptance_length"].iloc[0] == pytest.approx(2.50)
    assert quoted["acceptance_rate"].iloc[0] == pytest.approx(0.749)
    assert int(lines[lines["name"] == "mtp_log"]["accepted_tokens"].sum()) == 60298
    assert not math.isnan(values["fresh_session_s"])

r"""Reader for Prometheus text exposition dumps of a vLLM server (`curl .../metrics > file`).

Every sample goes to `prom_samples` (labels as sorted `k=v` joined by `,`, with `\` and `,`
inside values escaped by a backslash; `split_labels` undoes it). The speculative-decoding
counters become one `spec_decode` row per dump and engine/model (origin `prometheus`, `line`
= dump index, extra columns `engine`, `model_name`); because counters are cumulative, the
differences between consecutive dumps of one file become `prometheus-delta` rows (`line` =
the later dump, `from_dump` = the earlier). `counter_delta` gives chapters the same
difference for any counter.

Several dumps may be concatenated in one file. A new dump starts at
  - a `# HELP` or `# TYPE` line for a metric already declared in the current dump,
  - a sample whose metric name and labels already occurred in the current dump
    (dumps filtered with `grep '^vllm:'` have no HELP/TYPE lines),
  - a comment line other than HELP/TYPE once the current dump has samples, e.g.
    `# dump 2026-06-05 14:12:54` written by a loop between two curls; its text (minus a
    leading word `dump`) is kept as the dump's `time`. A comment before any sample labels
    the dump it precedes,
  - the line after `# EOF` (OpenMetrics' end marker).
Without separators the boundary is the first repeated metric, which is exact for vLLM: its
page always begins with the same process metrics (`python_gc_...`).

One record is one sample line. `read` counts the samples kept. `ignored` counts a cut-off
last line, and each pair of consecutive dumps with no delta row (a counter went down: the
server restarted; or the spec-decode counters of an engine are missing from one dump).
Any other line that does not follow the exposition format is corruption: an IngestError
names the line. Sample timestamps (rare, never written by vLLM) are accepted and dropped.

A small strict parser is used instead of `prometheus_client.parser`: that parser is lax by
its own account (it keeps the first of several values and ignores stray text), does not say
which line is wrong, and renames counter samples lacking `_total`, while this table keeps
names exactly as exposed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import IngestError
from .redact import redact
from .result import IngestResult
from .tables import columns, conform
from .textio import read_text

FORMAT = "prometheus-text"
TABLES = ("prom_samples", "spec_decode")

SPEC = "vllm:spec_decode_"
DRAFTS = SPEC + "num_drafts_total"
DRAFT_TOKENS = SPEC + "num_draft_tokens_total"
ACCEPTED = SPEC + "num_accepted_tokens_total"
PER_POS = SPEC + "num_accepted_tokens_per_pos_total"
_SPEC_COUNTERS = {"num_drafts": DRAFTS, "draft_tokens": DRAFT_TOKENS, "accepted_tokens": ACCEPTED}

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_FLOAT = r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|[Ii]nf|NaN|nan)"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})?[ \t]+({_FLOAT})(?:[ \t]+(-?\d+))?[ \t]*$")
_LABEL = re.compile(r'[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\\n]|\\[\\"n])*)"[ \t]*(,|$)')
_HELP = re.compile(rf"^#[ \t]+HELP[ \t]+({_NAME})(?:[ \t]+(.*))?$")
_TYPE = re.compile(rf"^#[ \t]+TYPE[ \t]+({_NAME})[ \t]+(counter|gauge|histogram|summary|untyped|"
                   r"unknown|info|stateset|gaugehistogram)[ \t]*$")
_KEYWORD = re.compile(r"^#[ \t]+(HELP|TYPE)\b")
_UNESCAPE = re.compile(r'\\([\\"n])')
_SUFFIX_TYPES = {"_bucket": ("histogram", "gaugehistogram"), "_sum": ("histogram", "summary"),
                 "_count": ("histogram", "summary"), "_created": ("histogram", "summary", "counter"),
                 "_total": ("counter",), "_gsum": ("gaugehistogram",), "_gcount": ("gaugehistogram",),
                 "_info": ("info",)}
FORMAT_HINT = ("expected Prometheus text exposition lines: `# HELP name text`, "
               "`# TYPE name type` or `name{label=\"value\",...} value`")


def sniff(head: str, path: str | Path | None = None) -> bool:
    """True for text that starts (after blank or free comment lines) like a /metrics dump."""
    for line in head.lstrip("\ufeff").splitlines()[:20]:
        s = line.strip()
        if not s:
            continue
        if _HELP.match(s) or _TYPE.match(s):
            return True
        if s.startswith("#") and not _KEYWORD.match(s):
            continue  # a separator such as `# dump <time>`
        m = _SAMPLE.match(s)
        return bool(m and m.group(1).startswith("vllm:") and _labels(m.group(2) or "") is not None)
    return False


# ---------------------------------------------------------------- reading


@dataclass
class _Dump:
    label: str | None = None
    declared: set = field(default_factory=set)  # (keyword, metric)
    series: set = field(default_factory=set)  # (metric, labels)
    samples: int = 0


def read(path: Path, run_prefix: str | None = None) -> IngestResult:
    """Read one file of one or more /metrics dumps into `prom_samples` and `spec_decode`."""
    path = Path(path)
    text = read_text(path)
    res = IngestResult(path=str(path), format=FORMAT)
    lines = text.split("\n")
    cut = not text.endswith("\n")
    parser = _Parser(path, res)
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if line:
            parser.line(n, line, last=cut and n == len(lines))
    dumps, rows = parser.dumps, parser.rows
    res.read = len(rows)
    samples = conform(pd.DataFrame(rows, columns=columns("prom_samples") + ["line"]), "prom_samples")
    res.tables["prom_samples"] = samples
    filled = [i for i, d in enumerate(dumps) if d.samples]
    pairs = list(zip(filled, filled[1:]))
    resets = _resets(samples, pairs)
    for a, b in resets:
        res.ignore(f"counter reset between dumps {a} and {b}")
    res.tables["spec_decode"] = _spec_decode(samples, [d.label for d in dumps], pairs, resets,
                                             str(path), res)
    return res


@dataclass
class _Parser:
    """The state carried from line to line: the dumps so far, the declared types, the sample rows."""

    path: Path
    res: IngestResult
    dumps: list[_Dump] = field(default_factory=lambda: [_Dump()])
    types: dict[str, str] = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    ended: bool = False  # the previous dump closed with `# EOF`

    def line(self, n: int, line: str, last: bool) -> None:
        """One non-blank stripped line; `last` when it is a last line cut off without its newline."""
        if self.ended:
            self.dumps.append(_Dump())
            self.ended = False
        if line.startswith("#"):
            self._comment(n, line, last)
        else:
            self._sample_line(n, line, last)

    def _comment(self, n: int, line: str, last: bool) -> None:
        cur = self.dumps[-1]
        if line == "# EOF":
            self.ended = True
            return
        keyword = _KEYWORD.match(line)
        if keyword is None:  # a free comment: a separator between dumps
            if cur.samples:
                self.dumps.append(cur := _Dump())
            cur.label = _comment_label(line)
            return
        m = (_HELP if keyword.group(1) == "HELP" else _TYPE).match(line)
        if m is None:
            self._malformed(n, last, f"malformed # {keyword.group(1)} line {_show(line)}; {FORMAT_HINT}")
            return
        key = (keyword.group(1), m.group(1))
        if key in cur.declared:
            self.dumps.append(cur := _Dump())
        cur.declared.add(key)
        if keyword.group(1) == "TYPE":
            self.types[m.group(1)] = m.group(2)

    def _sample_line(self, n: int, line: str, last: bool) -> None:
        cur = self.dumps[-1]
        sample = _sample(line)
        if sample is None:
            self._malformed(n, last, f"malformed sample line {_show(line)}; {FORMAT_HINT}")
            return
        metric, labels, value = sample
        if (metric, labels) in cur.series:
            self.dumps.append(cur := _Dump())
        cur.series.add((metric, labels))
        cur.samples += 1
        self.rows.append(dict(source_file=str(self.path), dump=len(self.dumps) - 1, metric=metric,
                              labels=labels, value=value, type=_type(metric, self.types), line=n))

    def _malformed(self, n: int, last: bool, problem: str) -> None:
        """A cut-off last line is counted; any other malformed line is corruption."""
        if last:
            self.res.ignore("partial last line")
            return
        raise IngestError(self.path, f"line {n}", problem)


def _sample(line: str) -> tuple[str, str, float] | None:
    """(metric, sorted label string, value) of a sample line, or None when malformed."""
    m = _SAMPLE.match(line)
    if not m:
        return None
    labels = _labels(m.group(2) or "")
    if labels is None:
        return None
    text = m.group(3)
    value = float(text.replace("Inf", "inf").replace("NaN", "nan"))
    pairs = ",".join(f"{k}={_escape(redact(v))}" for k, v in sorted(labels.items()))
    return m.group(1), pairs, value


def _labels(body: str) -> dict[str, str] | None:
    """Label names to unescaped values; None unless the whole body is `k="v",...`."""
    out: dict[str, str] = {}
    pos = 0
    while pos < len(body):
        if not body[pos:].strip():
            break
        m = _LABEL.match(body, pos)
        if not m or m.group(1) in out:
            return None
        out[m.group(1)] = _UNESCAPE.sub(lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
        pos = m.end()
        if m.group(3) == "" and pos < len(body):
            return None
    return out


def _escape(value: str) -> str:
    """Label values in the `labels` column: backslash and comma escaped so it splits back."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("\n", "\\n")


def _type(metric: str, types: dict[str, str]) -> str | None:
    """The # TYPE that covers this sample name (`x_bucket` is covered by histogram `x`)."""
    if metric in types:
        return types[metric]
    for suffix, kinds in _SUFFIX_TYPES.items():
        if metric.endswith(suffix):
            base = types.get(metric[: -len(suffix)])
            if base in kinds:
                return base
    return None


def _comment_label(line: str) -> str | None:
    text = re.sub(r"^dump\b[:\s]*", "", line.lstrip("#").strip(), flags=re.I)
    return redact(text) or None


def _show(line: str) -> str:
    return repr(line if len(line) <= 120 else line[:117] + "...")


# ---------------------------------------------------------------- labels and deltas


def split_labels(labels: str) -> dict[str, str]:
    """The `labels` column back into a dict (undoing the escaping of `\\` and `,`)."""
    out = {}
    for m in re.finditer(r"([a-zA-Z_][a-zA-Z0-9_]*)=((?:[^\\,]|\\.)*)(?:,|$)", labels or ""):
        out[m.group(1)] = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(2))
    return out


def counter_delta(prom_samples: pd.DataFrame, metric: str, dump_a: int, dump_b: int, **labels) -> float:
    """How much a counter grew from dump `dump_a` to dump `dump_b` of one file.

    `labels` select series by label value (e.g. `engine="0"`); the deltas of all series
    that match are summed (e.g. `vllm:request_success_total` over `finished_reason`).
    A series first seen in `dump_b` counts from 0 (prometheus_client creates labelled
    series lazily). Raises ValueError when nothing matches, when the rows come from more
    than one file, for a gauge, or when a series went down (a server restart).
    """
    rows = prom_samples[(prom_samples["metric"] == metric) & prom_samples["dump"].isin([dump_a, dump_b])]
    want = {k: str(v) for k, v in labels.items()}
    if len(rows):
        keep = rows["labels"].map(lambda s: all(split_labels(s).get(k) == v for k, v in want.items()))
        rows = rows[keep.astype(bool)]
    where = f"{metric}{{{','.join(f'{k}={v}' for k, v in want.items())}}}"
    if rows.empty:
        raise ValueError(f"no samples of {where} in dumps {dump_a} and {dump_b}")
    if rows["source_file"].nunique() > 1:
        raise ValueError(f"{where}: samples from several files {sorted(rows['source_file'].unique())}; "
                         "select one file's rows first")
    if (rows["type"] == "gauge").any():
        raise ValueError(f"{where} is a gauge; a difference between dumps is not a count")
    a = rows[rows["dump"] == dump_a].set_index("labels")["value"]
    b = rows[rows["dump"] == dump_b].set_index("labels")["value"]
    if b.empty:
        raise ValueError(f"{where} is missing from dump {dump_b}")
    gone = sorted(set(a.index) - set(b.index))
    if gone:
        raise ValueError(f"{where}: series {gone} are in dump {dump_a} but not in dump {dump_b}")
    delta = b - a.reindex(b.index).fillna(0.0)
    if (delta < 0).any():
        raise ValueError(f"{where} went down between dumps {dump_a} and {dump_b} "
                         "(the server restarted); no delta")
    return float(delta.sum())


# ---------------------------------------------------------------- spec decode


def _resets(samples: pd.DataFrame, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Pairs of consecutive dumps between which some counter went down (a restart).

    Counters are `counter` series other than `_created`, histogram and summary `_count`,
    and, in dumps without # TYPE lines, any metric named `..._total`.
    """
    metric, kind = samples["metric"], samples["type"]
    counting = (((kind == "counter") & ~metric.str.endswith("_created"))
                | (kind.isin(["histogram", "summary"]) & metric.str.endswith("_count"))
                | (kind.isna() & metric.str.endswith("_total"))).fillna(False).astype(bool)
    series = samples[counting].set_index(["dump", "metric", "labels"])["value"]
    out = []
    for a, b in pairs:
        if a not in series.index.get_level_values(0) or b not in series.index.get_level_values(0):
            continue
        va, vb = series.xs(a, level="dump"), series.xs(b, level="dump")
        both = va.index.intersection(vb.index)
        if (vb[both] < va[both]).any():
            out.append((a, b))
    return out


def _spec_decode(samples: pd.DataFrame, labels: list[str | None], pairs: list[tuple[int, int]],
                 resets: list[tuple[int, int]], path: str, res: IngestResult) -> pd.DataFrame:
    """Spec-decode counters per dump and engine/model, plus deltas between dumps."""
    spec = samples[samples["metric"].isin([*_SPEC_COUNTERS.values(), PER_POS])]
    counts: dict[int, dict[tuple, dict]] = {}
    for r in spec.itertuples(index=False):
        lab = split_labels(r.labels)
        pos = lab.pop("position", None)
        group = tuple(sorted(lab.items()))
        c = counts.setdefault(int(r.dump), {}).setdefault(group, {"per_pos": {}})
        if r.metric == PER_POS:
            if pos is not None and pos.isdigit():
                c["per_pos"][int(pos)] = r.value
        else:
            c[r.metric] = r.value
    rows = []
    for dump in sorted(counts):
        for group, c in counts[dump].items():
            rows.append(_spec_row(c, dict(group), dump, labels[dump], path, "prometheus"))
    for a, b in pairs:
        if (a, b) in resets:
            continue  # counted once in `read`
        groups = set(counts.get(a, {})) | set(counts.get(b, {}))
        for group in sorted(groups):
            ca, cb = counts.get(a, {}).get(group), counts.get(b, {}).get(group)
            if ca is None or cb is None:
                res.ignore(f"spec-decode counters of {_group_text(group)} missing from dump "
                           f"{a if ca is None else b}; no delta between dumps {a} and {b}")
                continue
            delta = _subtract(cb, ca)
            if delta is None:
                res.ignore(f"counter reset between dumps {a} and {b}")
                continue
            row = _spec_row(delta, dict(group), b, labels[b], path, "prometheus-delta")
            row["from_dump"] = a
            rows.append(row)
    cols = columns("spec_decode") + ["engine", "model_name", "from_dump"]
    df = pd.DataFrame(rows, columns=cols)
    for col in ("engine", "model_name"):
        df[col] = df[col].astype("string")
    df["from_dump"] = df["from_dump"].astype("Int64")
    return conform(df, "spec_decode")


def _subtract(b: dict, a: dict) -> dict | None:
    """Counter differences b - a; None if any counter present in both went down."""
    out = {"per_pos": {}}
    for metric in _SPEC_COUNTERS.values():
        if metric in a and metric in b:
            if b[metric] < a[metric]:
                return None
            out[metric] = b[metric] - a[metric]
    for pos, vb in b["per_pos"].items():
        va = a["per_pos"].get(pos, 0.0)
        if vb < va:
            return None
        out["per_pos"][pos] = vb - va
    if any(pos not in b["per_pos"] for pos in a["per_pos"]):
        return None
    return out


def _spec_row(c: dict, group: dict, dump: int, label: str | None, path: str, origin: str) -> dict:
    drafts, drafted, accepted = (c.get(m) for m in _SPEC_COUNTERS.values())
    per_pos = c["per_pos"]
    if per_pos and drafts:
        rates = [per_pos.get(i, math.nan) / drafts for i in range(max(per_pos) + 1)]
        per_position = ",".join(f"{x:.6g}" for x in rates)
    else:
        per_position = None
    return dict(
        source_file=path, origin=origin, line=dump, time=label,
        num_drafts=_count(drafts), draft_tokens=_count(drafted), accepted_tokens=_count(accepted),
        mean_acceptance_length=1 + accepted / drafts if accepted is not None and drafts else math.nan,
        acceptance_rate=accepted / drafted if accepted is not None and drafted else math.nan,
        per_position=per_position,
        engine=group.get("engine"), model_name=group.get("model_name"),
    )


def _count(value: float | None) -> int | None:
    return None if value is None or not math.isfinite(value) else int(round(value))


def _group_text(group: tuple) -> str:
    return ",".join(f"{k}={v}" for k, v in group) or "(no labels)"

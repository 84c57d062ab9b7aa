"""Reconstruct seed 003's power sweep as vLLM 0.19 server logs and nvidia-smi CSV logs.

The write-up parsed the periodic engine stats lines of its live agent servers
(Qwen3.5-27B, Qwen3.5-122B-A10B, Qwen3.6-35B-A3B on 4x RTX 3090 at 200, 250 and 300 W)
and published per-concurrency and per-power tables; the logs themselves were never
released. For each model and limit this module writes one server log whose 10-second
windows, bucketed by their Running count, give every published cell, plus the
nvidia-smi log that ran beside it. Targets come only from published.yml (via
`power_targets`); every choice the write-up does not pin is an entry of ASSUMPTIONS,
and PROVENANCE.md lists both, with the published inconsistencies found on the way.

    python -m tools.reconstruct power-sweep data/power-sweep
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchbook.chapters.power_sweep.analysis import P95_METHOD
from benchbook.ledger.published import load_published

from . import docs
from .agent_day import DayPlan, Slot, arrange
from .power_checks import LEVELS
from .power_targets import Target, targets

if TYPE_CHECKING:
    from . import live_logs
from .window_fit import CellSpec, Conflict, FitError, GroupSpec, Interval, RangeTarget, fit_group

SEED = 20260407
STUDY = "power-sweep"
# study.yml: the folder's title, what it holds, and the write-ups it rebuilds (published.yml's sources).
TITLE = ("4x RTX 3090 power sweep: Qwen3.5-27B, Qwen3.5-122B-A10B and Qwen3.6-35B-A3B at 200/250/300 W "
         "(vLLM 0.19, live agent logs)")
DESCRIPTION = (
    "Three models served by vLLM 0.19.0 with tensor parallelism over four RTX 3090s, each "
    "run for a working session of live multi-agent traffic at a GPU power limit of 200, 250 "
    "and 300 W (seed 003). Per model and limit: the server's log (10-second engine stats "
    "lines, uvicorn access lines, start-up and errors) and the nvidia-smi log that ran "
    "beside it. The files are reconstructed from the published tables, not measured; see "
    "PROVENANCE.md.")
SOURCES = ("seed-003",)
LIMITS = (200, 250, 300)

# Everything below is our choice, not a published number. (value, why)
ASSUMPTIONS = {
    "approx_band": (0.02,
                    "numbers printed with '~', 'about' or 'around' (peaks) are aimed within 2 % of the printed value"),
    "c7_c8_windows": ({"q35-122b": {200: (29, 35), 250: (7, 8), 300: (2, 2)}},
                      "the 122B (max-num-seqs 8) also ran 7 and 8 requests; the write-up gives only their "
                      "total (power-table samples minus the concurrency table), split here between 7 and 8"),
    "c7_c8_gen_mean": ({200: (20.0, 26.5), 250: (5.0, 90.0), 300: (5.0, 90.0)},
                       "range allowed for the mean generation of the 7- and 8-request "
                       "windows; at 200 W the write-up says those cells 'collapse to ~20-26 t/s'"),
    "c7_c8_completions_per_min": ({200: 4.2, 250: 9.0, 300: 10.0},
                                  "completions per minute in the 7- and 8-request "
                                  "windows (unpublished; near the 5-6 request cells)"),
    "c7_c8_idle_share": (0.2, "share of 7- and 8-request windows without prompt throughput (unpublished)"),
    "idle_share_from_250w": (True,
                             "at 200 and 300 W, where only pooled prefill is published, the share of windows "
                             "without prefill at each concurrency follows the same model's 250 W table"),
    "prefill_profile_from_250w": (True,
                                  "at 200 and 300 W the relative prefill rate of each "
                                  "concurrency cell follows the same model's 250 W active-only "
                                  "table before the published means pull it into place"),
    "prefill_cell_box": ((0.15, 4.0),
                         "an unpublished cell's mean prefill stays within this multiple of its group's published mean"),
    "prefill_floor": (5.0, "smallest non-zero prompt throughput of a window, t/s"),
    "prefill_sigma": (0.75, "log-normal spread of prompt throughput within a cell"),
    "gen_sigma_unpublished": (0.7, "log-normal spread of generation within the unpublished 7- and 8-request cells"),
    "prefill_peak_cell": ({"q35-27b": (250, 5), "q35-122b": (200, 4)},
                          "which limit and concurrency holds each model's largest "
                          "prefill window (the write-up names only the peak)"),
    "tail_gen_tps": ((2.0, 45.0),
                     "generation in a burst's last window, logged after the last request finished (Running 0)"),
    "mean_burst_windows": ({"q35-27b": 12.0, "q35-122b": 14.0, "q36-35b": 9.0},
                           "mean length of a burst of agent activity, in 10-second windows"),
    "p95_method": (P95_METHOD,
                   "the P95 of windows is numpy's 'lower' rule (the sorted value at index floor(0.95 (n-1))): "
                   "with linear interpolation no set of windows gives the 3.6-35B's 330.0 at 200 W together "
                   "with its concurrency table (PROVENANCE.md shows why)"),
    "days": ({"q35-27b": {250: ("2026-04-07", "08:52:14"), 200: ("2026-04-08", "09:05:40"),
                          300: ("2026-04-09", "09:31:02")},
              "q35-122b": {200: ("2026-04-13", "10:14:37"), 250: ("2026-04-14", "13:02:11"),
                           300: ("2026-04-15", "14:26:50")},
              "q36-35b": {250: ("2026-04-20", "08:47:33"), 200: ("2026-04-21", "16:40:05"),
                          300: ("2026-04-22", "10:12:48")}},
             "date and local start time of each server run (the write-up "
             "gives no dates: Qwen3.5 runs first, the 3.6-35B after its release)"),
    "gaps": ({"q35-27b": {"first_gap_ticks": 18, "mean_gap_ticks": 30.0, "long_gap_after": 6,
                          "long_gap_ticks": 330.0, "tail_idle_s": 420.0},
              "q35-122b": {"first_gap_ticks": 12, "mean_gap_ticks": 22.0, "tail_idle_s": 300.0},
              "q36-35b": {"first_gap_ticks": 15, "mean_gap_ticks": 26.0, "long_gap_after": 9,
                          "long_gap_ticks": 240.0, "tail_idle_s": 360.0}},
             "idle time between bursts, in 10-second ticks (exponential around the mean, at least 3; one long "
             "break on the daily-driver days), before the first burst, and after the last before shutdown"),
    "tick_drift_s": (0.0023,
                     "the stats loop sleeps 10 s plus its own run time, so "
                     "the printed second drifts forward now and then"),
    "log_style": ({"q35-27b": {"colour": False, "request_log": True, "gz": True, "extra_fields": False,
                               "tool_errors": 0, "bad_requests": 2},
                   "q35-122b": {"colour": True, "request_log": False, "gz": True, "extra_fields": False,
                                "tool_errors": 3, "bad_requests": 0},
                   "q36-35b": {"colour": False, "request_log": False, "gz": False, "extra_fields": True,
                               "tool_errors": 0, "bad_requests": 1}},
                  "how each server's log looks: the 27B ran with --enable-log-requests; the 122B container "
                  "had a TTY (tty: true), so vLLM and uvicorn wrote ANSI colours; the 122B's garbled tool "
                  "calls show as parser tracebacks; logs of the Qwen3.5 runs were kept gzipped"),
    "engine": ({"q35-27b": {"kv_tokens": 1084832, "kv_gib": 9.71, "weights_gib": 7.9231, "load_s": 38.4,
                            "compile_s": 71.2, "graph_s": 14, "graph_gib": 0.69, "boot_s": 168.0,
                            "restart_boot_s": 96.0},
                "q35-122b": {"kv_tokens": 1431520, "kv_gib": 6.12, "weights_gib": 16.4187, "load_s": 71.9,
                             "compile_s": 118.6, "graph_s": 19, "graph_gib": 0.83, "boot_s": 262.0,
                             "restart_boot_s": 141.0},
                "q36-35b": {"kv_tokens": 912384, "kv_gib": 11.38, "weights_gib": 9.1446, "load_s": 29.7,
                            "compile_s": 66.4, "graph_s": 12, "graph_gib": 0.61, "boot_s": 151.0,
                            "restart_boot_s": 88.0}},
               "start-up facts printed by each server (KV cache size, memory, load and "
               "compile times): plausible for these models on 4x 24 GB, not published"),
    "prefix_hit_rate": ({"q35-27b": 91.0, "q35-122b": 88.5, "q36-35b": 90.0},
                        "level of the logged prefix-cache hit rate, which wanders a little around it"),
    "spec_acceptance": ((2.35, 0.09),
                        "MTP (2 speculative tokens) on agent text: mean acceptance length per "
                        "window ~ normal(2.35, 0.09); position 0 accepts ~60 % of the accepted tokens"),
    "gpu_host": ([{"index": 0, "name": "NVIDIA GeForce RTX 3090", "mem_total": 24576,
                   "idle_w": 24.0, "demand_w": 292.0},
                  {"index": 1, "name": "NVIDIA RTX A4000", "mem_total": 16376,
                   "limit": 140.0, "draw": (11.0, 38.0), "mem_used": 5234},
                  {"index": 2, "name": "NVIDIA GeForce RTX 3090", "mem_total": 24576,
                   "idle_w": 22.0, "demand_w": 286.0},
                  {"index": 3, "name": "NVIDIA GeForce RTX 3090", "mem_total": 24576,
                   "idle_w": 25.0, "demand_w": 289.0},
                  {"index": 4, "name": "NVIDIA GeForce RTX 3090 Ti", "mem_total": 24564,
                   "idle_w": 31.0, "demand_w": 318.0}],
                 "the host's cards as nvidia-smi lists them (four 3090s, one a Ti, plus the A4000 at index 1); "
                 "idle draw with a model loaded and the draw a card would reach unlimited under full load"),
    "previous_limit_w": (175,
                         "the limit the cards were pinned at before each run (the author's "
                         "usual 175 W); `nvidia-smi -pl` switches it shortly before the server starts"),
    "nvidia_smi": ({"interval_s": 5.0, "pre_roll_s": 150.0, "limit_set_before_s": 60.0, "post_roll_s": 45.0},
                   "nvidia-smi -l 5, started 150 s before the server, "
                   "limit set 60 s before it, stopped 45 s after shutdown"),
    "crash": ({"q35-122b": (200, 8)},
              "the write-up says both MoE models crash under heavy load: one engine crash (worker CUDA "
              "error) at 8 requests in the 122B's 200 W log, followed by the container's automatic restart"),
}

# Which tidy columns each assumption lands in (assumptions.yml; a chapter section reading one is marked).
SHOWS_IN = {
    "gpu_host": ("gpu_samples.power_draw_w",),
    "prefix_hit_rate": ("windows.prefix_hit_rate",),
    "spec_acceptance": ("spec_decode.mean_acceptance_length", "spec_decode.acceptance_rate"),
    "engine": ("boot.value_num",),
    "crash": ("boot.fact",),
}


def a(name: str):
    return ASSUMPTIONS[name][0]


# What the write-up says of the host, not chosen: four RTX 3090s in the tensor-parallel group
# (its "4x RTX 3090"; its power table's 800/1000/1200 W are 4 x the limit), and the compose
# file's NVIDIA_VISIBLE_DEVICES=0,2,3,4, which skips index 1, the A4000 (make marks: these were
# choices, and a page marked what rests on them as assumed).
CARDS = 4
GPU_INDICES = [0, 2, 3, 4]
# Its agents' prompts "ranging between 30-60k tokens" (for the KV-cache usage column and the
# request log's max_tokens). The cards' memory share is each compose file's
# --gpu-memory-utilization, read from CONFIGS, as the visible devices are.
CONTEXT_TOKENS = (30000, 60000)


# Which rows of those columns an assumption covers, where not all (benchbook.study.assumptions):
# the start-up facts `engine` sets (max concurrency follows from the KV cache), and the
# start-up after the crash (the log of that model and limit).
ROWS = {
    "engine": {"fact": ["kv_cache_tokens", "kv_cache_gib", "max_concurrency", "weights_gib", "weights_load_s",
                        "model_load_s", "graph_capture_s", "graph_capture_gib"]},
    "crash": [{"config": [m], "power_limit_w": [limit]} for m, (limit, _) in a("crash").items()],
}


@dataclass(frozen=True)
class Model:
    config: str
    prefix: str  # value-name prefix in published.yml
    label: str
    max_seqs: int


MODELS = (
    Model("q35-27b", "q35_27b", "Qwen3.5-27B", 12),
    Model("q35-122b", "q35_122b", "Qwen3.5-122B-A10B", 8),
    Model("q36-35b", "q36_35b", "Qwen3.6-35B-A3B", 8),
)


@dataclass
class Window:
    """One stats line: what the log prints for a 10-second window."""

    running: int
    gen: float
    prefill: float
    completions: int
    arrivals: int
    kind: str = "window"  # window | tail | zero


@dataclass
class GroupPlan:
    model: Model
    limit: int
    bursts: list[tuple[list[Window], str]]  # (windows, end) with end tail | crash
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.model.prefix}_{self.limit}W"

    def windows(self) -> list[Window]:
        return [w for ws, _ in self.bursts for w in ws]


def _t(T: dict[str, Target], name: str, direct: bool = False) -> Interval | None:
    t = T.get(name)
    if not t:
        return None
    return (t.direct or t.interval) if direct else t.interval


def _levels(T, m: Model, limit: int) -> dict[int, int]:
    """Windows per concurrency level: published cells plus the 7-8 split for the 122B."""
    p = f"{m.prefix}_{limit}W"
    counts = {}
    for c in range(1, m.max_seqs + 1):
        iv = _t(T, f"{p}_c{c}_gen_n")
        if iv is not None and iv.hi > 0.5:
            counts[c] = int(round((iv.lo + iv.hi) / 2))
    extra = a("c7_c8_windows").get(m.config, {}).get(limit)
    if extra:
        total = _t(T, f"{p}_gen_n")
        rest = int(round((total.lo + total.hi) / 2)) - sum(counts.values())
        if rest != sum(extra):
            raise FitError(f"{p}: the 7-8 split {extra} does not add up to the {rest} windows the tables leave")
        counts.update({7: extra[0], 8: extra[1]})
    return counts


def gen_spec(T, m: Model, limit: int, counts: dict[int, int], cap: float,
             direct_only: frozenset = frozenset()) -> GroupSpec:
    """Generation targets of one group; cells in `direct_only` leave out their per-request
    cell (used when, together with it, the power table's mean cannot be met)."""
    p = f"{m.prefix}_{limit}W"
    cells = {}
    for c, n in counts.items():
        if c <= 6:
            cells[c] = CellSpec(c, n, _t(T, f"{p}_c{c}_gen_mean", direct=c in direct_only),
                                _t(T, f"{p}_c{c}_gen_median"), _t(T, f"{p}_c{c}_gen_max"))
        else:
            lo, hi = a("c7_c8_gen_mean")[limit]
            cells[c] = CellSpec(c, n, Interval(lo, hi), natural_mean=(lo + hi) / 2)
    ranges = []
    for k, scope in enumerate(("c1to6", "c1to3")):
        members = LEVELS[scope]
        iv = _t(T, f"{p}_{scope}_gen_mean")
        if iv is not None:
            ranges.append(RangeTarget(f"{p}_{scope}_gen_mean", tuple(c for c in members if c in counts), iv, k + 1))
    return GroupSpec(p, cells, _t(T, f"{p}_gen_mean"), _t(T, f"{p}_gen_median"), _t(T, f"{p}_gen_p95"),
                     ranges, floor=0.0, cap=cap, sigma=a("gen_sigma_unpublished"), p95_method=a("p95_method"),
                     pooled_name=f"{p}_gen_mean")


def _relax_per_request(T, m: Model, limit: int, counts, cap, first, rng):
    """Drop per-request cells, those that narrow their cell's mean most first, until the
    power table's mean is reachable; the dropped ones become reported conflicts."""
    p = f"{m.prefix}_{limit}W"
    pooled = f"{p}_gen_mean"
    why = next(c.reason for c in first.conflicts if c.name == pooled)
    narrowing = []
    for c, n in counts.items():
        full, direct = _t(T, f"{p}_c{c}_gen_mean"), _t(T, f"{p}_c{c}_gen_mean", direct=True)
        if full is not None and direct is not None and (full.lo, full.hi) != (direct.lo, direct.hi):
            narrowing.append((n * ((direct.hi - direct.lo) - (full.hi - full.lo)), c))
    dropped: list[int] = []
    for _, c in sorted(narrowing, reverse=True):
        dropped.append(c)
        fit = fit_group(gen_spec(T, m, limit, counts, cap, frozenset(dropped)), rng)
        if not any(x.name == pooled for x in fit.conflicts):
            fit.conflicts += [Conflict(f"{p}_c{d}_gen_mean", "", (
                f"with this per-request cell the power table's average {T[pooled].used[0].text} is out of "
                f"reach ({why}); the power table is kept")) for d in dropped]
            return fit
    return first


def _budgets(T, m: Model, limit: int, counts: dict[int, int]) -> dict[int, int]:
    """Completions per level: the count whose rate (x 6 / windows) prints like the cell."""
    p = f"{m.prefix}_{limit}W"
    out = {}
    for c, n in counts.items():
        iv = _t(T, f"{p}_c{c}_completions_per_min")
        if iv is None:
            out[c] = int(round(a("c7_c8_completions_per_min")[limit] * n / 6))
            continue
        fits = [k for k in range(0, 20 * n + 1) if iv.admits(6 * k / n)]
        if not fits:
            raise FitError(f"{p} c={c}: no whole number of completions gives {iv.text} per minute over {n} windows")
        out[c] = fits[len(fits) // 2]
    return out


def _idle_targets(T, m: Model, limit: int, counts) -> dict[int, tuple[int, int]]:
    """(least, most) windows without prefill per level."""
    out = {}
    for c, n in counts.items():
        fixed = _t(T, f"{m.prefix}_{limit}W_c{c}_prefill_active_n")
        if fixed is not None:
            idle = n - int(round((fixed.lo + fixed.hi) / 2))
            out[c] = (idle, idle)
            continue
        share = _idle_share(T, m, c)
        want = n * share
        slack = max(1, int(round(0.25 * n * share + 0.5)))
        out[c] = (max(0, int(want) - slack), min(n - (1 if n > 1 else 0), int(np.ceil(want)) + slack))
    return out


def _idle_share(T, m: Model, c: int) -> float:
    n = _t(T, f"{m.prefix}_250W_c{c}_gen_n")
    na = _t(T, f"{m.prefix}_250W_c{c}_prefill_active_n")
    if n is None or na is None:
        return a("c7_c8_idle_share")
    n, na = round((n.lo + n.hi) / 2), round((na.lo + na.hi) / 2)
    return (n - na) / n if n else 0.0


def _active_profile(T, m: Model) -> dict[int, float]:
    """Relative active prefill by level at 250 W (the shape used where no cell is published)."""
    vals = {}
    for c in range(1, 7):
        iv = _t(T, f"{m.prefix}_250W_c{c}_prefill_active_mean")
        if iv is not None:
            vals[c] = (iv.lo + iv.hi) / 2
    if not vals:
        return {}
    mean = sum(vals.values()) / len(vals)
    prof = {c: v / mean for c, v in vals.items()}
    for c in (7, 8):
        prof[c] = prof.get(6, 1.0)
    return prof


def prefill_spec(T, m: Model, limit: int, active: dict[int, int], counts: dict[int, int],
                 peak: float, peak_here: int | None) -> GroupSpec:
    """Prefill targets over the windows with prompt throughput > 0.

    Published means over all windows (the write-up's "sustained" view, and the 3.6-35B's
    power table) become targets on the active windows' sum; a median over all windows
    becomes a quantile of the active values shifted past the zeros.
    """
    p = f"{m.prefix}_{limit}W"
    n_all, n_act = sum(counts.values()), sum(active.values())
    sustained = _t(T, f"{p}_prefill_sustained_mean") is not None
    if sustained:
        pooled_name, scale = f"{p}_prefill_sustained_mean", n_all / n_act
        pooled = _t(T, pooled_name).scaled(scale)
        median = _t(T, f"{p}_prefill_sustained_median")
        median_q = (0.5 * (n_all - 1) - (n_all - n_act)) / (n_act - 1)
    else:
        pooled_name, scale = f"{p}_prefill_active_mean", 1.0
        pooled = _t(T, pooled_name)
        median, median_q = _t(T, f"{p}_prefill_active_median"), 0.5
    centre = (pooled.lo + pooled.hi) / 2
    prof = _active_profile(T, m)
    lo_k, hi_k = a("prefill_cell_box")
    cells = {}
    for c, na in active.items():
        if na <= 0:
            continue
        act = _t(T, f"{p}_c{c}_prefill_active_mean")
        sus = _t(T, f"{p}_c{c}_prefill_sustained_mean")
        if act is not None:
            box = act
            if sus is not None:
                box = act.intersect(sus.scaled(counts[c] / na)) or act
            cells[c] = CellSpec(c, na, box)
        else:
            nat = centre * prof.get(c, 1.0)
            cells[c] = CellSpec(c, na, Interval(centre * lo_k, min(centre * hi_k, peak)), natural_mean=nat)
    ranges = []
    for k, scope in enumerate(("c1to6", "c1to3")):
        members = LEVELS[scope]
        inside = tuple(c for c in members if c in cells)
        for kind in ("active", "sustained"):
            iv = _t(T, f"{p}_{scope}_prefill_{kind}_mean")
            if iv is None or not inside:
                continue
            k_s = 1.0
            if kind == "sustained":
                k_s = sum(counts[c] for c in members if c in counts) / sum(active[c] for c in inside)
                iv = iv.scaled(k_s)
            ranges.append(RangeTarget(f"{p}_{scope}_prefill_{kind}_mean", inside, iv,
                                      2 * k + 1 + (kind == "active"), k_s))
    spec = GroupSpec(p + " prefill", cells, pooled, median, None, ranges,
                     floor=a("prefill_floor"), cap=peak - 0.1, sigma=a("prefill_sigma"), median_q=median_q,
                     pooled_name=pooled_name, pooled_scale=scale)
    if peak_here is not None:
        spec.extra_pins = {peak_here: peak}
        spec.cap = peak
    return spec


def plan_group(T, m: Model, limit: int, rng: np.random.Generator, prefill_peak: float | None,
               gen_cap: float) -> GroupPlan:
    """Fit one model at one limit: window values, their order and the completions."""
    counts = _levels(T, m, limit)
    pooled = f"{m.prefix}_{limit}W_gen_mean"
    gen = fit_group(gen_spec(T, m, limit, counts, gen_cap), rng)
    if any(c.name == pooled for c in gen.conflicts):
        gen = _relax_per_request(T, m, limit, counts, gen_cap, gen, rng)
    crash = a("crash").get(m.config)
    plan: DayPlan = arrange(counts, _budgets(T, m, limit, counts), _idle_targets(T, m, limit, counts), rng,
                            mean_burst=a("mean_burst_windows")[m.config],
                            crash_level=crash[1] if crash and crash[0] == limit else None)
    slots: dict[int, list[Slot]] = {}
    for s in plan.windows():
        slots.setdefault(s.running, []).append(s)
    active = {c: sum(s.active for s in ss) for c, ss in slots.items()}
    peak_cell = a("prefill_peak_cell").get(m.config)
    here = peak_cell[1] if peak_cell and peak_cell[0] == limit else None
    pre = fit_group(prefill_spec(T, m, limit, active, counts, prefill_peak or 1e9, here), rng)
    values = {}
    for c, ss in slots.items():
        values.update(_assign(ss, gen.values[c], pre.values.get(c, np.array([])), rng))
    lo, hi = a("tail_gen_tps")
    bursts = []
    for b in plan.bursts:
        ws = []
        for s in b.slots:
            if s.kind == "window":
                g, pf = values[id(s)]
            elif s.kind == "tail":
                g, pf = round(float(rng.uniform(lo, min(hi, gen_cap))), 1), 0.0
            else:
                g, pf = 0.0, 0.0
            ws.append(Window(s.running, g, pf, s.completions, s.arrivals, s.kind))
        bursts.append((ws, b.end))
    return GroupPlan(m, limit, bursts, gen.conflicts + pre.conflicts)


def _assign(slots: list[Slot], gen: np.ndarray, prefill: np.ndarray, rng) -> dict[int, tuple[float, float]]:
    """Put a level's values on its windows: windows without prefill (pure decoding) tend to
    get the higher generation rates, and the largest prefills go with low generation."""
    order = sorted(range(len(slots)), key=lambda i: -((0.0 if slots[i].active else 1.0) + 0.9 * rng.random()))
    gen_sorted = np.sort(gen)[::-1]
    out, gen_of = {}, {}
    for rank, i in enumerate(order):
        gen_of[i] = float(gen_sorted[rank])
    act = [i for i in range(len(slots)) if slots[i].active]
    if len(act) != len(prefill):
        raise FitError(f"{len(act)} windows with prefill but {len(prefill)} prefill values")
    act.sort(key=lambda i: gen_of[i] * (0.6 + 0.8 * rng.random()))
    pre_sorted = np.sort(prefill)[::-1]
    for rank, i in enumerate(act):
        out[id(slots[i])] = (gen_of[i], float(pre_sorted[rank]))
    for i, s in enumerate(slots):
        if not s.active:
            out[id(s)] = (gen_of[i], 0.0)
    return out


# What the three compose files share: the host, vLLM 0.19.0 over the four 3090s, and the vLLM
# arguments, in the files' order. A model's own values fill the None entries; an argument its file
# does not set stays None and is left out (docs.serve_args).
_PLATFORM = "4x RTX 3090 (one a 3090 Ti; two NVLinked), undervolted, plus an A4000 for other models"
_SERVE_ARGS = {
    "tensor_parallel_size": 4,
    "enable_expert_parallel": True,
    "max_model_len": 262144,
    "gpu_memory_utilization": None,
    "max_num_seqs": None,
    "max_num_batched_tokens": 8192,
    "kv_cache_dtype": "fp8",
    "enable_prefix_caching": True,
    "disable_custom_all_reduce": True,
    "optimization_level": 3,
    "attention_backend": "FLASHINFER",
    "cudagraph_capture_sizes": None,
    "speculative_config": None,
}


def _config(model: dict, **serve_args) -> dict:
    """A model's entry in study.yml: the shared host and engine, `model` (the model's own facts, in
    order), its vLLM arguments (_SERVE_ARGS with `serve_args`). Built afresh on each call, so that
    no two entries share a list (YAML would print an alias)."""
    args = docs.serve_args(_SERVE_ARGS, **serve_args)
    parallel = "tensor parallel 4, expert parallel" if args.get("enable_expert_parallel") else "tensor parallel 4"
    return {"role": "model", "platform": _PLATFORM,
            "accelerators": f"4x NVIDIA GeForce RTX 3090 24 GB ({parallel})", "cards": 4, "gpus": [0, 2, 3, 4],
            "engine": "vLLM", "engine_version": "0.19.0", **model, "serve_args": args, "source": "seed-003"}


CONFIGS = {
    "q35-27b": _config(
        {"model": "cyankiwi/Qwen3.5-27B-AWQ-BF16-INT8", "model_label": "Qwen3.5-27B",
         "model_arch": "dense, 27B parameters", "quantisation": "INT8 weights (AWQ-BF16-INT8, compressed-tensors)",
         "speculative": "MTP (qwen3_next_mtp), 2 speculative tokens", "kv_dtype": "fp8"},
        enable_expert_parallel=None, gpu_memory_utilization=0.9, max_num_seqs=12,
        cudagraph_capture_sizes=[1, 2, 4, 8, 12],
        speculative_config={"method": "qwen3_next_mtp", "num_speculative_tokens": 2}),
    "q35-122b": _config(
        {"model": "QuantTrio/Qwen3.5-122B-A10B-AWQ", "model_label": "Qwen3.5-122B-A10B",
         "model_arch": "MoE, 122B total / 10B active parameters", "quantisation": "AWQ INT4 (awq_marlin)",
         "speculative": "none", "kv_dtype": "fp8"},
        gpu_memory_utilization=0.94, max_num_seqs=8, cudagraph_capture_sizes=[1, 2, 4, 8]),
    "q36-35b": _config(
        {"model": "Qwen/Qwen3.6-35B-A3B-FP8", "model_label": "Qwen3.6-35B-A3B",
         "model_arch": "MoE, 35B total / 3B active parameters", "quantisation": "FP8 weights",
         "speculative": "none", "kv_dtype": "auto (FP16)"},
        gpu_memory_utilization=0.94, max_num_seqs=8, kv_cache_dtype=None, cudagraph_capture_sizes=[1, 2, 4, 8]),
}


def plan_all(published_path: Path, seed: int = SEED) -> tuple[dict[str, Target], list[GroupPlan]]:
    published = load_published(published_path)
    T = targets(published, CARDS, a("approx_band"))
    plans = []
    for mi, m in enumerate(MODELS):
        peak_t = T.get(f"{m.prefix}_prefill_max")
        peak = round(peak_t.interval.middle, 1) if peak_t else None
        gen_t = T.get(f"{m.prefix}_gen_max")
        cap = gen_t.interval.hi if gen_t else 1e9
        for li, limit in enumerate(LIMITS):
            plans.append(plan_group(T, m, limit, _rng(seed, mi, li), peak, cap))
    return T, plans


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([seed, *keys]))


# ---------------------------------------------------------------- files, manifest, provenance


def _facts(m: Model) -> live_logs.EngineFacts:
    from .live_logs import EngineFacts

    cfg, e = CONFIGS[m.config], a("engine")[m.config]
    args = {"model_tag": cfg["model"], "host": "0.0.0.0", "model": cfg["model"], "trust_remote_code": True,
            "max_model_len": 262144, "served_model_name": [cfg["model"]],
            "generation_config": "auto",
            "override_generation_config": {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0,
                                           "presence_penalty": 1.5, "repetition_penalty": 1.0},
            "reasoning_parser": "qwen3", "enable_auto_tool_choice": True, "tool_call_parser": "qwen3_coder"}
    args.update({k: v for k, v in cfg["serve_args"].items() if k not in ("optimization_level",)})
    if m.config == "q35-27b":
        args["quantization"] = "compressed-tensors"
        args["enable_log_requests"] = True
    if m.config == "q35-122b":
        args["quantization"] = "awq_marlin"
    spec = cfg["serve_args"].get("speculative_config")
    engine_config = (f"model='{cfg['model']}', speculative_config={spec!r}, tokenizer='{cfg['model']}', "
                     "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=True, "
                     f"dtype=torch.bfloat16, max_seq_len=262144, download_dir=None, load_format=auto, "
                     f"tensor_parallel_size=4, pipeline_parallel_size=1, data_parallel_size=1, "
                     f"disable_custom_all_reduce=True, quantization={args.get('quantization', 'fp8')}, "
                     f"enforce_eager=False, kv_cache_dtype={cfg['serve_args'].get('kv_cache_dtype', 'auto')}, "
                     f"device_config=cuda, seed=0, served_model_name={cfg['model']}, enable_prefix_caching=True, "
                     "enable_chunked_prefill=True, pooler_config=None, compilation_config={'level': 3, "
                     f"'cudagraph_capture_sizes': {cfg['serve_args']['cudagraph_capture_sizes']}}}")
    warning = ("CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend "
               "FlashInferBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting "
               "cudagraph_mode=PIECEWISE") if spec else ""
    arch = "Qwen3_5ForConditionalGeneration" if m.config == "q35-27b" else "Qwen3_5MoeForConditionalGeneration"
    return EngineFacts(cfg["model"], arch, args, e["kv_tokens"], e["kv_gib"], e["weights_gib"], e["load_s"],
                       e["compile_s"], e["graph_s"], e["graph_gib"], e["boot_s"], e["restart_boot_s"],
                       engine_config, ep=bool(cfg["serve_args"].get("enable_expert_parallel")),
                       spec_tokens=spec["num_speculative_tokens"] if spec else 0, cudagraph_warning=warning)


def _day(m: Model, limit: int, gen_ref: float, prefill_ref: float) -> live_logs.DaySpec:
    from .live_logs import DaySpec

    date, boot = a("days")[m.config][limit]
    st = a("log_style")[m.config]
    gaps = dict(a("gaps")[m.config], tick_drift_s=a("tick_drift_s"))
    spec = CONFIGS[m.config]["serve_args"].get("speculative_config")
    return DaySpec(date=date, boot=boot, limit_w=limit, previous_limit_w=a("previous_limit_w"),
                   colour=st["colour"], request_log=st["request_log"], extra_field_warnings=st["extra_fields"],
                   tool_parser_errors=st["tool_errors"], bad_requests=st["bad_requests"], gz_log=st["gz"],
                   gz_smi=st["gz"], max_seqs=m.max_seqs, gen_ref=gen_ref, prefill_ref=prefill_ref,
                   hit_rate=a("prefix_hit_rate")[m.config], ctx_tokens=CONTEXT_TOKENS,
                   spec_acceptance=a("spec_acceptance") if spec else None, gaps=gaps)


def generate(out_dir: Path, published_path: Path, seed: int = SEED) -> None:
    """Write raw/, study.yml, PROVENANCE.md and SHA256SUMS into out_dir (published.yml kept)."""
    from . import live_logs
    from .power_checks import window_values

    out_dir = Path(out_dir)
    published = load_published(published_path)
    T, plans = plan_all(published_path, seed)
    docs.reset(out_dir)
    entries, printed, days = [], {}, {}
    for mi, m in enumerate(MODELS):
        mine = [p for p in plans if p.model is m]
        gen_ref = max(w.gen for p in mine for w in p.windows())
        pf_ref = max(w.prefill for p in mine for w in p.windows())
        for plan in sorted(mine, key=lambda p: a("days")[m.config][p.limit]):
            day_spec = _day(m, plan.limit, gen_ref, pf_ref)
            rng = _rng(seed, mi, plan.limit, 1)
            day = live_logs.server_log(plan.bursts, day_spec, _facts(m), rng)
            folder = f"raw/{m.config}/{plan.limit}w"
            log_rel = f"{folder}/vllm-serve.log" + (".gz" if day_spec.gz_log else "")
            smi_rel = f"{folder}/nvidia-smi.csv" + (".gz" if day_spec.gz_smi else "")
            live_logs.write_text(out_dir / log_rel, day.lines, day_spec.gz_log)
            share = CONFIGS[m.config]["serve_args"]["gpu_memory_utilization"]  # the compose file's
            smi = live_logs.smi_log(day, day_spec, a("gpu_host"), GPU_INDICES, share, _rng(seed, mi, plan.limit, 2),
                                    a("nvidia_smi"))
            live_logs.write_text(out_dir / smi_rel, smi, day_spec.gz_smi)
            common = {"config": m.config, "power_limit_w": plan.limit, "date": day_spec.date}
            entries.append({"path": log_rel, "name": f"{plan.name}_log", "kind": "server-log", **common})
            entries.append({"path": smi_rel, "name": f"{plan.name}_gpu", "kind": "gpu-log", **common})
            printed[(m.prefix, plan.limit)] = day.printed
            days[(m.prefix, plan.limit)] = day
    values = window_values(printed, {m.prefix: m.max_seqs for m in MODELS}, CARDS)
    report = verify(T, values, plans)
    docs.write_study(out_dir, docs.study(STUDY, TITLE, DESCRIPTION, generator=__name__, seed=seed,
                                         sources=docs.sources(published, SOURCES), configs=CONFIGS, files=entries))
    docs.finish(out_dir, _provenance(published, seed, T, values, report, plans, days), ASSUMPTIONS, SHOWS_IN, ROWS)


def verify(T: dict[str, Target], values: dict[str, float], plans: list[GroupPlan]) -> list[list[str]]:
    """Rows for every published constraint the files miss; unexplained misses are errors."""
    explained = {c.name for p in plans for c in p.conflicts}
    rows, problems = [], []
    for name, t in sorted(T.items()):
        v = values.get(name)
        for con in t.used + t.conflicts + t.checked:
            if v is not None and con.interval.admits(v):
                continue
            why = ""
            if con in t.checked:
                why = "a claim restating a table cell: checked by the claims ledger, not aimed at"
            elif con in t.conflicts:
                kept = ", ".join(f"{u.text} ({u.where})" for u in t.used)
                why = f"cannot print alike together with {kept}"
            elif name in explained:
                why = next(c.reason for p in plans for c in p.conflicts if c.name == name)
            if not why:
                problems.append(f"{name}: computed {v!r}, published {con.text} ({con.where})")
                continue
            shown = "n/a" if v is None else _show(con.text, v, con.derived)
            rows.append([con.text, con.where, name, shown, why])
    if problems:
        raise FitError("reconstruction misses published numbers:\n" + "\n".join(problems))
    return rows


def _show(text: str, value: float, derived: str) -> str:
    """Our value printed the way the published cell was (per request, per kW)."""
    from benchbook.ledger.published import parse_quantity

    q = parse_quantity(text)
    if derived.startswith("/ ") and derived.endswith("kW"):
        value /= float(derived[2:-3])
    elif derived.startswith("/ "):
        value /= float(derived[2:])
    return q.display(value)


def _provenance(published, seed: int, T, values, missed, plans, days) -> docs.Provenance:
    from .power_checks import published_checks
    from .power_targets import constraints

    rows = []
    for con in constraints(published, CARDS, a("approx_band")):
        v = values.get(con.name)
        rows.append([con.text, con.where, con.name, "n/a" if v is None else _show(con.text, v, con.derived)])
    checks = published_checks(published, CARDS)
    bad = [r for r in checks if r[-1] != "consistent"]
    windows = sum(len([w for w in d.printed if w["running"] >= 1]) for d in days.values())
    lines = sum(len(d.lines) for d in days.values())
    return docs.Provenance(
        study=STUDY,
        summary="Seed 003 published tables computed from its author's vLLM server logs (10-second engine "
        "stats lines bucketed by their Running count) but not the logs. We rebuilt one vLLM 0.19 server log "
        "per model and power limit, plus the nvidia-smi log beside it, so that the book can recompute every "
        "table from native files. Window order, request arrivals, start-up lines, errors and GPU samples are "
        "synthetic; only the published summaries are meant to be read from them.",
        generator=__name__,
        helpers=["power_targets", "window_fit", "agent_day", "live_logs", "vllm_serve_log", "power_checks"],
        command=docs.command("power-sweep", STUDY, seed), seed=seed,
        seeding="numpy `Generator(PCG64([seed, model, limit, ...]))`",
        identical_note="gzip written with no name and mtime 0",
        made=[f"Content: {len(days)} server logs ({windows:,} stats windows with at least one request "
              f"running, {lines:,} log lines in all) and {len(days)} nvidia-smi logs.",
              "Formats: vLLM 0.19 logger lines (`(APIServer pid=1) INFO MM-DD HH:MM:SS [loggers.py:259] "
              "Engine 000: ...`), uvicorn access lines without timestamps, `SpecDecoding metrics` lines for "
              "the MTP model, `nvidia-smi --query-gpu=timestamp,index,name,power.draw,power.limit,"
              "utilization.gpu,memory.used,memory.total,temperature.gpu,clocks.sm --format=csv -l 5`.",
              "Targets are read from `published.yml` only. The generator recomputes every value from the "
              "stats lines it printed and refuses to finish if a published number is missed for any reason "
              "other than those listed below."],
        sections=[
            docs.Section("How to read the logs as the write-up did", [
                "A window is one `Engine 000:` stats line. Windows are bucketed by `Running`; windows with "
                "`Running: 0` (the last window of a burst and the one all-zero line after it) belong to no "
                "bucket. Active-only prefill averages windows whose prompt throughput is above zero. "
                "Completions per minute count `POST /v1/chat/completions ... 200` access lines between the "
                "previous stats line and a window's own line, times 6, averaged over the bucket's windows. "
                "The P95 is numpy's `lower` rule (see the inconsistencies). The power limit of a window is "
                "the `power.limit` of the vLLM cards (indices 0, 2, 3, 4) in the nvidia-smi log beside it.\n"]),
            docs.Section("Published numbers used as targets", [
                "Each value must print like the published cell (per-request cells: average / concurrency; "
                "tokens per kW: average / (4 x limit)). Numbers printed with `~`, `about` or `around` are "
                f"aimed within {a('approx_band'):.0%} of the printed value.\n\n",
                docs.Table(["Published", "Where", "Value", "Ours, printed alike"], rows)]),
            docs.Section("Published numbers we could not reproduce together with the others", [
                "Priority: the concurrency tables, then the power tables, the prefill and completion tables, "
                "the per-request and tokens-per-kW cells, the claims. A number that cannot hold together "
                "with those before it is listed here with what the data gives instead.\n\n",
                docs.Table(["Published", "Where", "Value", "Ours", "Why"], missed) if missed else "None.\n"]),
            docs.Section("Inconsistencies found in the write-up", [
                "Computed from the printed cells alone (each printed number stands for the interval of values "
                "that round to it), independently of the reconstruction.\n\n",
                docs.Table(["Check", "Where", "Published", "The other cells allow", "Finding"], bad)
                if bad else "None.\n"]),
        ],
        after=[docs.Section("What was synthesised", [
            "- Window values: per concurrency cell, the median and peak are pinned inside their printed "
            "intervals, the other windows are drawn right-skewed around them and shifted to the cell mean; "
            "the pooled median and P95 of each power table are placed by anchoring the windows at their "
            "ranks (`window_fit`). Cells not in the published tables (7-8 requests on the 122B, prefill at "
            "200 and 300 W) follow the assumptions above.\n"
            "- Order: bursts built by a walk over concurrency levels in which every change of `Running` is "
            "explained by arrivals and completions, no window without prefill has a new request, and each "
            "level receives exactly the completions its published rate requires (`agent_day`).\n"
            "- Within a cell, windows without prefill get the higher generation rates and the largest "
            "prefills go with low generation (a prefill-heavy window decodes less).\n"
            "- Log text: start-up block (banner, arguments, KV cache size, graph capture), request log "
            "lines where enabled, `GET /health` every 30 s, `GET /v1/models` at the start of bursts, "
            "speculative-decoding lines for the 27B, tool-parser tracebacks (122B), over-long prompts "
            "answered with 400, one engine crash with tracebacks, 500 responses and a restart (122B at "
            "200 W), shutdown lines. Waiting, KV-cache usage, prefix-cache hit rate and preemptions are "
            "drawn per window.\n"
            "- GPU log: every card the host has (the A4000 at index 1 included), sampled every 5 s; power "
            "draw follows each window's work and is capped by the limit; the limit switches from the "
            "previous value shortly before each server starts.\n"])],
        hand_written=["published.yml"],
    )

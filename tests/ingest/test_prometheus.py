"""Prometheus /metrics reader: dumps written the way prometheus_client exposes vLLM's metrics.

Conventions from docs/formats.md section 3: labels in alphabetical order, every counter `..._total`
followed by a `..._created` gauge, histograms as `_bucket{le}` / `_count` / `_sum`.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from benchbook import ingest
from benchbook.ingest import IngestError
from benchbook.ingest import prometheus as prom
from files import (  # noqa: E402  (tests/ is on sys.path)
    assert_detect_picks_it_for_no_other_format,
    assert_sniffs_no_other_format,
    write,
)

MODEL = "Qwen/Qwen3.6-35B-A3B-FP8"
TTFT_BUCKETS = ("0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.5,0.75,1.0,2.5,5.0,7.5,10.0,"
                "20.0,40.0,80.0,160.0,640.0,2560.0").split(",")


def _labels(**labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def counter(name, value, help_text="A counter.", created=1.7795e9, **labels):
    """prometheus_client's exposition of a counter: `_total` sample plus a `_created` gauge."""
    lab = _labels(**labels)
    return (f"# HELP {name}_total {help_text}\n# TYPE {name}_total counter\n"
            f"{name}_total{lab} {float(value)!r}\n"
            f"# HELP {name}_created {help_text}\n# TYPE {name}_created gauge\n"
            f"{name}_created{lab} {created!r}\n")


def gauge(name, value, **labels):
    return f"# HELP {name} A gauge.\n# TYPE {name} gauge\n{name}{_labels(**labels)} {float(value)!r}\n"


def histogram(name, counts, total, **labels):
    """Cumulative bucket counts per `le` (alphabetically placed between engine and model_name)."""
    out = f"# HELP {name} A histogram.\n# TYPE {name} histogram\n"
    for le, c in zip([*TTFT_BUCKETS, "+Inf"], counts):
        out += f"{name}_bucket{_labels(le=le, **labels)} {float(c)!r}\n"
    out += f"{name}_count{_labels(**labels)} {float(counts[-1])!r}\n"
    out += f"{name}_sum{_labels(**labels)} {float(total)!r}\n"
    out += f"# HELP {name}_created A histogram.\n# TYPE {name}_created gauge\n"
    out += f"{name}_created{_labels(**labels)} 1.7795e9\n"
    return out


def spec_block(drafts, draft_tokens, accepted, per_pos, engine="0", model=MODEL):
    lab = dict(engine=engine, model_name=model)
    out = counter("vllm:spec_decode_num_drafts", drafts, **lab)
    out += counter("vllm:spec_decode_num_draft_tokens", draft_tokens, **lab)
    out += counter("vllm:spec_decode_num_accepted_tokens", accepted, **lab)
    name = "vllm:spec_decode_num_accepted_tokens_per_pos"
    out += f"# HELP {name}_total Accepted tokens per draft position.\n# TYPE {name}_total counter\n"
    for i, v in enumerate(per_pos):
        out += f"{name}_total{_labels(position=i, **lab)} {float(v)!r}\n"
    out += f"# HELP {name}_created Accepted tokens per draft position.\n# TYPE {name}_created gauge\n"
    for i in range(len(per_pos)):
        out += f"{name}_created{_labels(position=i, **lab)} 1.7795e9\n"
    return out


def vllm_dump(*, prompt=339968, gen=120000, drafts=1000, draft_tokens=2000, accepted=1450,
              per_pos=(800, 650), ttft_n=166, ok_stop=150, ok_length=16, spec=True):
    """A /metrics page as vLLM 0.22 serves it (abridged), process metrics first."""
    lab = dict(engine="0", model_name=MODEL)
    text = ("# HELP python_gc_objects_collected_total Objects collected during gc\n"
            "# TYPE python_gc_objects_collected_total counter\n"
            'python_gc_objects_collected_total{generation="0"} 12512.0\n'
            'python_gc_objects_collected_total{generation="1"} 3203.0\n'
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\n"
            "process_resident_memory_bytes 1.23456512e+09\n")
    text += gauge("vllm:num_requests_running", 2, **lab)
    text += gauge("vllm:num_requests_waiting", 0, **lab)
    text += gauge("vllm:kv_cache_usage_perc", 0.042, **lab)
    text += counter("vllm:prompt_tokens", prompt, **lab)
    text += counter("vllm:generation_tokens", gen, **lab)
    name = "vllm:request_success"
    text += f"# HELP {name}_total Count of successfully processed requests.\n# TYPE {name}_total counter\n"
    for reason, n in (("length", ok_length), ("stop", ok_stop)):
        text += f"{name}_total{_labels(finished_reason=reason, **lab)} {float(n)!r}\n"
    counts = [0, 0, 2, 10, 40, 80, 120, 150, 160, 164, 165, 165, 166, 166, 166, 166, 166, 166,
              166, 166, 166, 166, 166]
    text += histogram("vllm:time_to_first_token_seconds", [min(c, ttft_n) for c in counts], 12.5, **lab)
    if spec:
        text += spec_block(drafts, draft_tokens, accepted, per_pos)
    return text


def sample_lines(text):
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


# ---------------------------------------------------------------- one dump


def test_every_sample_line_becomes_a_row_with_sorted_labels_and_its_type(tmp_path):
    text = vllm_dump()
    res = prom.read(write(tmp_path, "metrics.prom", text))
    df = res.tables["prom_samples"]
    assert res.read == len(df) == len(sample_lines(text))
    assert res.ignored == 0 and not res.reasons
    assert (df["dump"] == 0).all()
    one = df.set_index(["metric", "labels"])
    assert one.loc[("vllm:prompt_tokens_total", f"engine=0,model_name={MODEL}"), "value"] == 339968.0
    assert one.loc[("vllm:prompt_tokens_total", f"engine=0,model_name={MODEL}"), "type"] == "counter"
    assert one.loc[("vllm:prompt_tokens_created", f"engine=0,model_name={MODEL}"), "type"] == "gauge"
    bucket = one.loc[("vllm:time_to_first_token_seconds_bucket", f"engine=0,le=0.1,model_name={MODEL}")]
    assert bucket["value"] == 150.0 and bucket["type"] == "histogram"
    inf = one.loc[("vllm:time_to_first_token_seconds_bucket", f"engine=0,le=+Inf,model_name={MODEL}")]
    assert inf["value"] == 166.0
    assert one.loc[("vllm:time_to_first_token_seconds_sum", f"engine=0,model_name={MODEL}"), "type"] == "histogram"
    assert one.loc[("process_resident_memory_bytes", ""), "value"] == 1.23456512e9
    assert set(df.loc[df["metric"] == "vllm:request_success_total", "labels"]) == {
        f"engine=0,finished_reason=length,model_name={MODEL}", f"engine=0,finished_reason=stop,model_name={MODEL}"}
    # every row points back at its line
    lines = text.split("\n")
    for row in df.sample(10, random_state=0).itertuples():
        assert lines[row.line - 1].startswith(row.metric)


def test_the_real_example_lines_of_formats_md(tmp_path):
    text = ('# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n'
            '# TYPE vllm:prompt_tokens_total counter\n'
            'vllm:prompt_tokens_total{engine="0",model_name="opt-125m-tp2"} 339968.0\n'
            '# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n'
            '# TYPE vllm:time_to_first_token_seconds histogram\n'
            'vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="opt-125m-tp2"} 166.0\n')
    df = prom.read(write(tmp_path, "m.txt", text)).tables["prom_samples"]
    assert df[["metric", "labels", "value", "type"]].values.tolist() == [
        ["vllm:prompt_tokens_total", "engine=0,model_name=opt-125m-tp2", 339968.0, "counter"],
        ["vllm:time_to_first_token_seconds_bucket", "engine=0,le=0.1,model_name=opt-125m-tp2", 166.0, "histogram"],
    ]


def test_labels_written_out_of_order_are_sorted(tmp_path):
    text = 'vllm:num_requests_running{model_name="m",engine="1"} 3.0\n'
    df = prom.read(write(tmp_path, "m.txt", text)).tables["prom_samples"]
    assert df["labels"].tolist() == ["engine=1,model_name=m"]
    assert df["type"].isna().all()  # no # TYPE line: unknown, not guessed


def test_spec_decode_row_from_the_counters(tmp_path):
    res = prom.read(write(tmp_path, "m.prom", vllm_dump(drafts=1000, draft_tokens=2000,
                                                         accepted=1450, per_pos=(800, 650))))
    sd = res.tables["spec_decode"]
    assert len(sd) == 1
    row = sd.iloc[0]
    assert row["origin"] == "prometheus" and row["line"] == 0
    assert (row["num_drafts"], row["draft_tokens"], row["accepted_tokens"]) == (1000, 2000, 1450)
    assert row["acceptance_rate"] == pytest.approx(1450 / 2000)
    assert row["mean_acceptance_length"] == pytest.approx(1 + 1450 / 1000)
    assert [float(x) for x in row["per_position"].split(",")] == pytest.approx([0.8, 0.65])
    assert row["engine"] == "0" and row["model_name"] == MODEL
    assert pd.isna(row["accepted_tps"])  # a dump has no window to make a rate from


def test_no_spec_decode_counters_no_spec_rows(tmp_path):
    res = prom.read(write(tmp_path, "m.prom", vllm_dump(spec=False)))
    assert res.tables["spec_decode"].empty
    assert list(res.tables["spec_decode"].columns[:3]) == ["source_file", "origin", "line"]


def test_one_spec_row_per_engine(tmp_path):
    text = vllm_dump(spec=False)
    text += spec_block(10, 20, 15, (9, 6), engine="0")
    # a second data-parallel engine: its series follow under the same HELP/TYPE blocks
    other = spec_block(30, 60, 30, (20, 10), engine="1")
    text += "\n".join(line for line in other.splitlines() if not line.startswith("#")) + "\n"
    res = prom.read(write(tmp_path, "dp2.prom", text))
    sd = res.tables["spec_decode"].set_index("engine")
    assert len(sd) == 2 and res.tables["prom_samples"]["dump"].eq(0).all()
    assert sd.loc["0", "accepted_tokens"] == 15 and sd.loc["1", "accepted_tokens"] == 30
    assert sd.loc["1", "mean_acceptance_length"] == pytest.approx(2.0)


def test_legacy_metric_names(tmp_path):
    """V0-era names: gpu_cache_usage_perc, time_per_output_token; spec decode without num_drafts."""
    lab = dict(model_name="m")
    text = gauge("vllm:gpu_cache_usage_perc", 0.25, **lab)
    text += histogram("vllm:time_per_output_token_seconds", [0] * 22 + [4], 0.2, **lab)
    text += counter("vllm:spec_decode_num_draft_tokens", 400, **lab)
    text += counter("vllm:spec_decode_num_accepted_tokens", 300, **lab)
    text += counter("vllm:spec_decode_num_emitted_tokens", 380, **lab)
    res = prom.read(write(tmp_path, "v0.prom", text))
    df = res.tables["prom_samples"].set_index("metric")
    assert df.loc["vllm:gpu_cache_usage_perc", "value"] == 0.25
    assert df.loc["vllm:gpu_cache_usage_perc", "type"] == "gauge"
    assert df.loc["vllm:time_per_output_token_seconds_count", "value"] == 4.0
    row = res.tables["spec_decode"].iloc[0]
    assert pd.isna(row["num_drafts"]) and row["draft_tokens"] == 400
    assert row["acceptance_rate"] == pytest.approx(0.75)
    assert math.isnan(row["mean_acceptance_length"])  # needs num_drafts
    assert pd.isna(row["engine"]) and row["model_name"] == "m"


def test_special_values_escapes_and_timestamps(tmp_path):
    text = ('# TYPE g gauge\n'
            'g{a="x"} NaN\ng{a="y"} +Inf\ng{a="z"} -Inf\n'
            'g{a="w"} 1.5e-3 1717000000000\n'
            'g{a="q\\"uote\\\\back, comma",b="new\\nline",} 7\n')
    df = prom.read(write(tmp_path, "m.txt", text)).tables["prom_samples"].set_index("labels")
    assert math.isnan(df.loc["a=x", "value"])
    assert df.loc["a=y", "value"] == math.inf and df.loc["a=z", "value"] == -math.inf
    assert df.loc["a=w", "value"] == 0.0015
    odd = [label for label in df.index if label.startswith("a=q")][0]
    assert prom.split_labels(odd) == {"a": 'q"uote\\back, comma', "b": "new\nline"}


def test_gzip_dump(tmp_path):
    text = vllm_dump()
    res = ingest.read(write(tmp_path, "metrics.prom.gz", text, gz=True))
    assert res.format == "prometheus-text" and res.read == len(sample_lines(text))


# ---------------------------------------------------------------- several dumps


def test_two_dumps_with_separator_comments_give_delta_rows(tmp_path):
    text = ("# dump 2026-06-05 14:12:54\n" + vllm_dump(gen=1000, drafts=100, draft_tokens=200,
                                                          accepted=140, per_pos=(80, 60))
            + "# dump 2026-06-05 14:20:10\n" + vllm_dump(gen=5000, drafts=400, draft_tokens=800,
                                                          accepted=590, per_pos=(330, 260)))
    res = prom.read(write(tmp_path, "two.prom", text))
    ps = res.tables["prom_samples"]
    assert sorted(ps["dump"].unique()) == [0, 1]
    assert res.ignored == 0
    sd = res.tables["spec_decode"]
    assert sd["origin"].tolist() == ["prometheus", "prometheus", "prometheus-delta"]
    assert sd["time"].tolist() == ["2026-06-05 14:12:54", "2026-06-05 14:20:10", "2026-06-05 14:20:10"]
    delta = sd.iloc[2]
    assert (delta["line"], delta["from_dump"]) == (1, 0)
    assert (delta["num_drafts"], delta["draft_tokens"], delta["accepted_tokens"]) == (300, 600, 450)
    assert delta["acceptance_rate"] == pytest.approx(450 / 600)
    assert delta["mean_acceptance_length"] == pytest.approx(1 + 450 / 300)
    assert [float(x) for x in delta["per_position"].split(",")] == pytest.approx([250 / 300, 200 / 300])
    assert prom.counter_delta(ps, "vllm:generation_tokens_total", 0, 1) == 4000.0


def test_dumps_concatenated_without_separator_split_at_repeated_help(tmp_path):
    text = vllm_dump(gen=10) + vllm_dump(gen=30) + vllm_dump(gen=70)
    res = prom.read(write(tmp_path, "three.prom", text))
    ps = res.tables["prom_samples"]
    per_dump = ps.groupby("dump").size()
    assert per_dump.tolist() == [len(sample_lines(vllm_dump()))] * 3
    assert prom.counter_delta(ps, "vllm:generation_tokens_total", 1, 2) == 40.0
    assert res.tables["spec_decode"]["origin"].value_counts().to_dict() == {
        "prometheus": 3, "prometheus-delta": 2}
    assert res.tables["spec_decode"]["time"].isna().all()


def test_a_repeated_help_starts_a_dump_even_when_the_series_differ(tmp_path):
    block = "# HELP vllm:request_success_total Requests.\n# TYPE vllm:request_success_total counter\n"
    text = (block + 'vllm:request_success_total{finished_reason="stop"} 4.0\n'
            + block + 'vllm:request_success_total{finished_reason="length"} 1.0\n')
    ps = prom.read(write(tmp_path, "help.prom", text)).tables["prom_samples"]
    assert ps["dump"].tolist() == [0, 1]


def test_grep_filtered_dumps_split_at_a_repeated_series(tmp_path):
    """`curl .../metrics | grep '^vllm:' >> file`: no HELP/TYPE lines at all."""
    one = "\n".join(line for line in vllm_dump(gen=10).splitlines() if line.startswith("vllm:")) + "\n"
    two = "\n".join(line for line in vllm_dump(gen=25).splitlines() if line.startswith("vllm:")) + "\n"
    assert prom.sniff(one)
    res = prom.read(write(tmp_path, "grep.txt", one + two))
    ps = res.tables["prom_samples"]
    assert sorted(ps["dump"].unique()) == [0, 1]
    assert ps["type"].isna().all()
    assert prom.counter_delta(ps, "vllm:generation_tokens_total", 0, 1) == 15.0


def test_openmetrics_eof_ends_a_dump(tmp_path):
    text = "# TYPE c counter\nc_total 1.0\n# EOF\n# TYPE c counter\nc_total 4.0\n# EOF\n"
    ps = prom.read(write(tmp_path, "om.txt", text)).tables["prom_samples"]
    assert ps["dump"].tolist() == [0, 1]


def test_counter_reset_between_dumps_is_reported_and_gives_no_delta(tmp_path):
    text = (vllm_dump(gen=1000, drafts=500, draft_tokens=1000, accepted=700, per_pos=(400, 300))
            + vllm_dump(gen=50, drafts=20, draft_tokens=40, accepted=30, per_pos=(18, 12))  # restarted
            + vllm_dump(gen=90, drafts=60, draft_tokens=120, accepted=80, per_pos=(50, 30)))
    res = prom.read(write(tmp_path, "reset.prom", text))
    assert res.reasons["counter reset between dumps 0 and 1"] == 1
    assert res.ignored == 1
    sd = res.tables["spec_decode"]
    delta = sd[sd["origin"] == "prometheus-delta"]
    assert delta[["from_dump", "line"]].values.tolist() == [[1, 2]]
    assert (delta.iloc[0]["num_drafts"], delta.iloc[0]["accepted_tokens"]) == (40, 50)
    ps = res.tables["prom_samples"]
    with pytest.raises(ValueError, match="went down between dumps 0 and 1"):
        prom.counter_delta(ps, "vllm:generation_tokens_total", 0, 1)
    assert prom.counter_delta(ps, "vllm:generation_tokens_total", 1, 2) == 40.0


def test_a_reset_of_another_counter_also_blocks_the_spec_delta(tmp_path):
    """A restart that happens to leave spec counters higher is still a restart."""
    text = (vllm_dump(gen=1000, drafts=5, draft_tokens=10, accepted=7, per_pos=(4, 3))
            + vllm_dump(gen=100, drafts=50, draft_tokens=100, accepted=70, per_pos=(40, 30)))
    res = prom.read(write(tmp_path, "reset2.prom", text))
    assert res.reasons == {"counter reset between dumps 0 and 1": 1}
    assert "prometheus-delta" not in set(res.tables["spec_decode"]["origin"])


def test_spec_counters_missing_from_one_dump_are_reported(tmp_path):
    text = vllm_dump(spec=False) + "# dump later\n" + vllm_dump()
    res = prom.read(write(tmp_path, "late.prom", text))
    assert res.ignored == 1
    (reason,) = res.reasons
    assert "missing from dump 0" in reason and "engine=0" in reason
    assert res.tables["spec_decode"]["origin"].tolist() == ["prometheus"]


# ---------------------------------------------------------------- counter_delta


def test_counter_delta_sums_matching_series_and_filters_by_label(tmp_path):
    text = vllm_dump(ok_stop=10, ok_length=2) + vllm_dump(ok_stop=25, ok_length=3)
    ps = prom.read(write(tmp_path, "two.prom", text)).tables["prom_samples"]
    m = "vllm:request_success_total"
    assert prom.counter_delta(ps, m, 0, 1) == 16.0
    assert prom.counter_delta(ps, m, 0, 1, finished_reason="stop") == 15.0
    assert prom.counter_delta(ps, m, 0, 1, finished_reason="stop", engine=0) == 15.0
    assert prom.counter_delta(ps, "vllm:time_to_first_token_seconds_count", 0, 1) == 0.0
    with pytest.raises(ValueError, match="no samples"):
        prom.counter_delta(ps, m, 0, 1, finished_reason="abort")
    with pytest.raises(ValueError, match="gauge"):
        prom.counter_delta(ps, "vllm:num_requests_running", 0, 1)
    with pytest.raises(ValueError, match="missing from dump 2"):
        prom.counter_delta(ps, m, 0, 2)


def test_counter_delta_counts_a_series_created_later_from_zero(tmp_path):
    lab = _labels(engine="0", finished_reason="stop", model_name="m")
    lab2 = _labels(engine="0", finished_reason="length", model_name="m")
    head = "# TYPE vllm:request_success_total counter\n"
    text = (head + f"vllm:request_success_total{lab} 4.0\n"
            + head + f"vllm:request_success_total{lab} 9.0\nvllm:request_success_total{lab2} 2.0\n")
    ps = prom.read(write(tmp_path, "lazy.prom", text)).tables["prom_samples"]
    assert prom.counter_delta(ps, "vllm:request_success_total", 0, 1) == 7.0


def test_counter_delta_refuses_rows_of_several_files(tmp_path):
    a = prom.read(write(tmp_path, "a.prom", vllm_dump() + vllm_dump())).tables["prom_samples"]
    b = prom.read(write(tmp_path, "b.prom", vllm_dump() + vllm_dump())).tables["prom_samples"]
    with pytest.raises(ValueError, match="several files"):
        prom.counter_delta(pd.concat([a, b]), "vllm:prompt_tokens_total", 0, 1)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", [
    'vllm:x{engine=0} 1.0',                 # unquoted label value
    'vllm:x{engine="0" 1.0',                # unclosed label set
    'vllm:x{engine="0"} 1_000',             # Python would accept this as a float
    'vllm:x{engine="0"} 1.0 2.0 3.0',       # stray fields
    'vllm:x{engine="0"}',                   # no value
    'vllm:x{engine="0",engine="1"} 1.0',    # duplicate label
    'vllm:x{engine="\\t"} 1.0',             # escape the format does not have
    "# TYPE vllm:x countr",                 # unknown type
    "# HELP",                               # no metric name
    "INFO 05-30 07:55:21 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s",
])
def test_malformed_line_is_an_error_naming_file_and_line(tmp_path, bad):
    text = vllm_dump()
    lines = text.splitlines()
    lines.insert(7, bad)
    path = write(tmp_path, "bad.prom", "\n".join(lines) + "\n")
    with pytest.raises(IngestError) as err:
        prom.read(path)
    assert err.value.path == str(path) and err.value.where == "line 8"
    assert "expected Prometheus text exposition" in err.value.problem


def test_partial_last_line_is_counted_not_fatal(tmp_path):
    text = vllm_dump() + 'vllm:generation_tokens_total{engine="0",model_na'
    res = prom.read(write(tmp_path, "cut.prom", text))
    assert res.reasons == {"partial last line": 1} and res.ignored == 1
    assert res.read == len(sample_lines(vllm_dump()))


def test_a_cut_off_type_line_is_counted_and_a_malformed_one_named(tmp_path):
    res = prom.read(write(tmp_path, "cut.prom", vllm_dump() + "# TYPE vllm:x coun"))
    assert res.reasons == {"partial last line": 1} and res.read == len(sample_lines(vllm_dump()))
    with pytest.raises(IngestError, match=r"malformed # TYPE line '# TYPE vllm:x coun'; expected Prometheus"):
        prom.read(write(tmp_path, "bad.prom", vllm_dump() + "# TYPE vllm:x coun\n"))


def test_eof_may_repeat_and_a_comment_after_samples_starts_a_dump(tmp_path):
    text = ("# first\n# TYPE c counter\nc_total 1.0\n# EOF\n# EOF\n# dump: later\nc_total 4.0\n"
            "  \n# dump last\n# HELP c again\nc_total 5.0\n")
    ps = prom.read(write(tmp_path, "om.txt", text)).tables["prom_samples"]
    assert ps["dump"].tolist() == [0, 2, 3] and ps["line"].tolist() == [3, 7, 11]
    assert ps["type"].tolist() == ["counter"] * 3


def test_a_complete_last_line_without_newline_is_kept(tmp_path):
    res = prom.read(write(tmp_path, "nonl.prom", vllm_dump().rstrip("\n")))
    assert res.ignored == 0 and res.read == len(sample_lines(vllm_dump()))


def test_label_values_are_redacted(tmp_path):
    text = 'vllm:cache_config_info{engine="0",host="gpu1.corp",served="10.1.2.3:8000"} 1.0\n'
    labels = prom.read(write(tmp_path, "m.txt", text)).tables["prom_samples"]["labels"].iloc[0]
    assert "10.1.2.3" not in labels and "gpu1.corp" not in labels


# ---------------------------------------------------------------- format detection

def test_sniff_matrix(tmp_path):
    assert prom.sniff(vllm_dump())
    assert prom.sniff("# dump 2026-06-05\n" + vllm_dump())
    assert prom.sniff("\ufeff# TYPE vllm:num_requests_running gauge\n")
    assert prom.sniff('vllm:num_requests_running{engine="0",model_name="m"} 1.0\n')
    assert not prom.sniff('process_resident_memory_bytes 1.0\n')  # bare non-vLLM sample: too little
    assert_sniffs_no_other_format(prom, "prometheus-text")


def test_detect_picks_this_reader_only_for_dumps(tmp_path):
    for i, text in enumerate((vllm_dump(), "# dump 1\n" + vllm_dump() + vllm_dump())):
        assert ingest.detect(write(tmp_path, f"m{i}.prom", text)) is prom
    assert_detect_picks_it_for_no_other_format(prom, "prometheus-text", tmp_path)


def test_a_study_reads_its_dumps(tmp_path):
    from benchbook.study.folder import write_checksums
    from benchbook.study.load import ingest_study

    (tmp_path / "raw").mkdir()
    text = vllm_dump(drafts=10, draft_tokens=20, accepted=15) + vllm_dump(drafts=30, draft_tokens=60, accepted=40)
    (tmp_path / "raw" / "mtp-metrics.prom").write_text(text)
    (tmp_path / "study.yml").write_text(
        "study: demo\ntitle: Demo\nlabel: demo\nreconstructed: false\n"
        "configs:\n  mtp: {platform: GB10}\nfiles:\n"
        "  - {path: raw/mtp-metrics.prom, config: mtp, name: mtp-a}\n")
    write_checksums(tmp_path)
    data = ingest_study(tmp_path)
    sd = data["spec_decode"]
    assert sd["source_file"].eq("raw/mtp-metrics.prom").all() and sd["config"].eq("mtp").all()
    assert sd.loc[sd["origin"] == "prometheus-delta", "accepted_tokens"].tolist() == [25]
    assert len(data["prom_samples"]) == 2 * len(sample_lines(vllm_dump()))
    assert data.report.iloc[0]["format"] == "prometheus-text"

"""The generators' assumptions as data (benchbook.study.assumptions)."""

import pandas as pd
import pytest
import yaml

from benchbook.book import registry
from benchbook.study.assumptions import (
    FILE,
    Assumption,
    AssumptionsError,
    assumed_cells,
    assumed_ids,
    load_assumptions,
    resting_on,
    row_mask,
)
from benchbook.study.folder import load_study
from projects import ROOT  # noqa: E402  (tests/ is on sys.path)


def test_every_reconstructed_folder_lists_its_generator_s_choices():
    for spec in registry.chapters():
        if spec.contract is None:
            continue
        folder = ROOT / "data" / spec.id
        study = load_study(folder)
        assumed = load_assumptions(folder)
        assert bool(assumed) == study.reconstructed, spec.id
        if assumed:
            assert all(a.why for a in assumed) and len({a.id for a in assumed}) == len(assumed)
            tables = {c.split(".")[0] for a in assumed for c in a.columns}
            from benchbook.study.load import ingest_study

            read = ingest_study(folder).tables  # the tidy tables with the context study.yml gives each row
            for a in assumed:  # every column named is a real tidy column of this folder
                for c in a.columns:
                    t, col = c.split(".")
                    assert col in read[t].columns, (spec.id, a.id, c)
            assert tables, spec.id  # at least one choice lands in a table a chapter reads


def test_an_assumption_marks_only_sections_that_read_its_columns():
    a = Assumption("draw", 1, "why", ("gpu_samples.power_draw_w",))
    b = Assumption("texture", 2, "why", ())
    assert resting_on([a, b], ("gpu_samples.power_draw_w", "windows.prompt_tps")) == [a]
    assert resting_on([a, b], ("windows.prompt_tps",)) == []


@pytest.mark.parametrize("text, message", [
    ("assumptions: nope", "expected a mapping with an 'assumptions' list"),
    ("assumptions:\n  - {id: x, value: 1}", r"assumptions\[0\]: expected a mapping with id, value and why"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [power_draw_w]}", r"\(x\): columns \['power_draw_w'\]"),
    ("assumptions: [", "not valid YAML"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a], rows: [1, 4]}",
     r"assumptions\[0\] \(x\): rows\[0\]: expected a mapping from a column"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a], rows: {concurrency: 4}}",
     r"\(x\): rows.concurrency: expected a non-empty list of values, got 4"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a], rows: {concurrency: []}}",
     r"\(x\): rows.concurrency: expected a non-empty list"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a], rows: {config: [[a]]}}",
     r"\(x\): rows.config: values must be numbers or text"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a], rows: []}",
     r"\(x\): rows: an empty list selects nothing"),
    ("assumptions:\n  - {id: x, value: 1, why: w, rows: {config: [a]}}",
     r"\(x\): rows given but no columns"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: [runs.a, windows.b], rows: {config: [a]}}",
     r"\(x\): rows select rows of one table, but columns name runs, windows"),
    ("assumptions:\n  - {id: x, value: 1, why: w, columns: runs.a}", r"\(x\): columns: expected a list"),
])
def test_a_broken_assumptions_file_names_the_entry(tmp_path, text, message):
    (tmp_path / FILE).write_text(text)
    with pytest.raises(AssumptionsError, match=message):
        load_assumptions(tmp_path)


def test_a_folder_without_the_file_assumes_nothing(tmp_path):
    assert load_assumptions(tmp_path) == []
    (tmp_path / FILE).write_text(yaml.safe_dump({"assumptions": [{"id": "x", "value": [1], "why": "w"}]}))
    assert load_assumptions(tmp_path) == [Assumption("x", [1], "w", ())]


@pytest.mark.slow
def test_a_caveat_resting_on_a_generator_s_choice_says_so_first():
    """Derived from assumptions.yml: each data-rule caveat reading an assumed column is marked."""
    from benchbook.chapters.power_sweep import analysis as power_sweep

    folder = ROOT / "data" / "power-sweep"
    r = power_sweep.analyse(folder, published_file=folder / "published.yml")
    marked = r.caveats[r.caveats["caveat"].str.startswith("Assumed, not measured")]
    rules = {o.split(": ", 1)[1] for o in marked["origin"]}
    assert {"limit-is-not-draw", "prefix-cache", "engine-restarts"} <= rules
    assumed = {a.id for a in load_assumptions(folder)}
    for text in marked["caveat"]:  # each names the choices it rests on
        named = text.split("chose (", 1)[1].split(";")[0]
        assert named in assumed
    assert not r.caveats[r.caveats["origin"].str.startswith("authors")]["caveat"].str.startswith("Assumed").any()


def _runs() -> pd.DataFrame:
    """A runs frame as a chapter holds it: two configurations swept at three concurrencies."""
    return pd.DataFrame({
        "config": ["dense"] * 3 + ["moe"] * 3,
        "concurrency": pd.array([1, 4, 16] * 2, dtype="Int64"),
        "p99_ttft_s": [0.3, 1.4, 2.9, 0.2, 0.9, 1.8],
        "output_tps": [70.0, 250, 900, 230, 650, 1600],
        "per_agent_tps": [70.0, 62.5, 56.25, 230, 162.5, 100],
    }, index=[10, 11, 12, 20, 21, 22])


def test_rows_select_the_cells_an_assumption_covers():
    """A selector is a conjunction over columns; a list of them is a union; numbers match
    whatever their dtype; the mask is aligned with the frame, other columns untouched."""
    tails = Assumption("tails", {}, "w", ("runs.p99_ttft_s",), ((("config", ("dense",)), ("concurrency", (1.0, 4))),))
    moe16 = Assumption("moe16", 1, "w", ("runs.output_tps", "windows.kv_usage"),
                       ((("config", ("moe",)), ("concurrency", (16,))), (("concurrency", ("1",)),)))
    everywhere = Assumption("all", 1, "w", ("runs.output_tps",))
    df = _runs()
    mask = assumed_cells(df, "runs", [tails, moe16])
    assert mask.index.equals(df.index) and list(mask.columns) == list(df.columns)
    assert list(mask["p99_ttft_s"]) == [True, True, False, False, False, False]
    assert list(mask["output_tps"]) == [True, False, False, True, False, True]  # c=1 of both, and moe c=16
    assert not mask[["config", "concurrency", "per_agent_tps"]].to_numpy().any()
    ids = assumed_ids(df, "runs", [moe16, everywhere], derived={"per_agent_tps": ("output_tps",)})
    assert ids.loc[22, "output_tps"] == ("all", "moe16") and ids.loc[11, "output_tps"] == ("all",)  # sorted
    assert ids.loc[22, "per_agent_tps"] == ("all", "moe16")  # a derived column holds what it reads
    assert not assumed_cells(df, "windows", [tails, moe16]).to_numpy().any()  # another table: nothing


def test_a_selector_on_a_column_the_frame_lacks_is_an_error():
    a = Assumption("tails", {}, "w", ("runs.p99_ttft_s",), ((("kind", ("sweep",)),),))
    with pytest.raises(AssumptionsError, match="assumption tails: rows select on kind, which the runs frame"):
        row_mask(_runs(), a, "runs")
    assert not row_mask(_runs().iloc[:0], a, "runs").any()  # an empty frame has nothing to select


def test_rows_round_trip_through_the_file(tmp_path):
    doc = {"assumptions": [{"id": "x", "value": 1, "why": "w", "columns": ["runs.p99_ttft_s"],
                            "rows": {"config": ["dense"], "concurrency": [1, 4]}}]}
    (tmp_path / FILE).write_text(yaml.safe_dump(doc, sort_keys=False))
    [a] = load_assumptions(tmp_path)
    assert a.rows == ((("config", ("dense",)), ("concurrency", (1, 4))),)
    assert list(row_mask(_runs(), a, "runs")) == [True, True, False, False, False, False]


def test_the_generators_scope_what_covers_only_part_of_a_column():
    """The examples of issue 16: the H100 dense P99 TTFT at c=1, 4, 8 only (16 and 32 were
    published) and the Strix Halo losing backends only."""
    from benchbook.book import pipeline

    h100 = pipeline.load(ROOT / "data/h100-dense-vs-moe-mtp", registry.get("h100-dense-vs-moe-mtp").contract)
    runs = h100.tables["runs"]
    p99 = {a.id: a for a in load_assumptions(h100.study.root)}["dense_p99_ttft_s"]
    hit = runs[row_mask(runs, p99, "runs", "p99_ttft_s")]
    assert set(hit["config"]) == {"h100-dense"} and sorted(hit["concurrency"]) == [1, 4, 8]
    assert set(hit["kind"]) == {"sweep"}
    strix = pipeline.load(ROOT / "data/strix-halo-baseline", registry.get("strix-halo-baseline").contract)
    lb = strix.tables["llama_bench"]
    by_id = {a.id: a for a in load_assumptions(strix.study.root)}
    losers, winners = (lb[row_mask(lb, by_id[k], "llama_bench", "avg_ts")] for k in ("losing_ratios", "winners"))
    assert len(losers) == 4 and set(losers["run_id"]) == set(lb["run_id"]) - {"strix_rocm_pr21344:0",
                                                                              "strix_vulkan_radv:1"}
    # another winner swaps the rates of the two builds that win a test, and leaves ROCm 7.2.3's
    assert set(winners["config"]) == {"strix-rocm-pr21344", "strix-vulkan-radv"}


def test_a_claim_whose_number_reads_an_assumed_cell_is_marked_and_a_consistency_claim_is_not():
    """Derived from assumptions.yml: the MTP acceptance length was chosen, so the claim
    recomputed from it has its value and verdict marked; claims on the write-up's own
    numbers, and on published cells, are not."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.study.marks import cell_ids

    root = ROOT / "data"
    r = h100.analyse(root / "h100-dense-vs-moe-mtp", root / "strix-halo-baseline",
                     root / "h100-dense-vs-moe-mtp/published.yml")
    assert "mtp_acceptance" in r.claim_ids["moe-mtp-two-plus"]
    consistency = set(r.ledger.loc[r.ledger["kind"] == "consistency", "id"])
    assert consistency and not consistency & set(r.claim_ids)
    marked = cell_ids(r.ledger)
    row = r.ledger.index[r.ledger["id"] == "moe-mtp-two-plus"][0]
    assert marked[(row, "recomputed")] == marked[(row, "verdict")] == r.claim_ids["moe-mtp-two-plus"]
    assert {label for label, c in marked if c != "difference"} == set(r.ledger.index[r.ledger["id"].isin(r.claim_ids)])
    # the dense sweep's published tails (c=16, 32) are not marked; the chosen ones are
    ids = r.value_ids
    assert "dense_p99_ttft_s" in ids["h100_dense_c1_p99_ttft_s"]
    assert "dense_p99_ttft_s" not in ids.get("h100_dense_c16_p99_ttft_s", ())


def test_on_measured_data_nothing_carries_an_assumption():
    from benchbook.chapters.strix import analysis as strix

    r = strix.analyse(ROOT / "data" / "strix-halo-qwen3-30b-lhl",
                      published_file=ROOT / "data/strix-halo-baseline/published.yml")
    assert r.assumptions_of() == [] and not r.claim_ids
    assert not any(strix.backend_table(r).attrs.get("benchbook_assumed", {}).values())
    assert not strix.glue_values(r).assumed


def test_a_published_number_the_files_were_fit_to_is_not_marked_as_assumed():
    """Issue 34: the Strix Halo key result '1,388 t/s' is the write-up's number: the generator fit
    the best-of backends to print as published, so which backend wins and by how much the
    others lose do not move it. A claim recomputed only from published table cells carries no
    mark; one that reads a chosen value still does."""
    from benchbook.ledger.expr import names_in
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    tables = {n for t in r.published.tables for exprs in t.values for e in exprs if e for n in names_in(e)}
    exprs = {c["id"]: c.get("recompute") for c in r.published.claims if c.get("kind", "data") == "data"}
    fitted = {cid for cid, e in exprs.items() if e and names_in(e) - set(r.params) <= tables}
    assert "strix-prefill-rate" in fitted
    row = r.ledger.index[r.ledger["id"] == "strix-prefill-rate"][0]
    assert r.ledger.loc[row, "recomputed"] == "1,388 t/s"
    assert "strix-prefill-rate" not in r.claim_ids and (row, "recomputed") not in cell_ids(r.ledger)
    assert not fitted & set(r.claim_ids)
    h100 = Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed()
    assert "mtp_acceptance" in h100.claim_ids["moe-mtp-two-plus"]


def test_a_claim_holding_by_construction_at_the_write_up_s_digits_is_not_marked():
    """Issue 34: "2.12×ᵃ holdsᵃ". The GB10 KV pools were fit to print every published pool size
    and ratio, so the block size they are multiples of (kv_block_tokens) moves the pools below
    the printed digits only: moving it (make marks, 128 to 141 tokens) moves no printed digit of
    "2.12×", "368k tokens" or "−10%". A claim that holds by construction and prints the write-up's
    own number is the write-up's number, not a generator's choice; a claim whose number differs
    from the write-up's keeps its marks."""
    from benchbook.ledger.claims import BY_CONSTRUCTION, SELF
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "gb10-mtp").analysed()
    rows = r.ledger.set_index("id")
    for cid in ("kv-growth", "kv-fresh", "kv-old", "mtp-kv-drop"):
        assert rows.loc[cid, "basis"] == BY_CONSTRUCTION, cid
        assert cid not in r.claim_ids, (cid, r.claim_ids.get(cid))
    assert not {label for label, c in cell_ids(r.ledger) if c != "difference"} & set(r.ledger.index[r.ledger["id"].isin(
        ["kv-growth", "kv-fresh", "kv-old", "mtp-kv-drop"])])  # the difference shows the digits below
    # printed otherwise than the write-up and resting on a choice ("26,800" draft tokens against
    # "26,500", from the seeds' spread): still marked
    assert rows.loc["c-draft-tokens", "recomputed"] != rows.loc["c-draft-tokens", "published"]
    assert "seed_spread" in r.claim_ids["c-draft-tokens"]
    # printed otherwise, but from the write-up's own numbers only: the load times are placed at
    # their printed values (289 s, 87 s), which give 3.4 minutes, not the 3.5 it says
    assert rows.loc["load-longer", "recomputed"] != rows.loc["load-longer", "published"]
    assert "load-longer" not in r.claim_ids and rows.loc["load-longer", "basis"] == SELF


def test_the_ingest_report_marks_a_file_s_counts_with_what_moves_its_lines():
    """Issue 34: moving the power sweep's log gaps (`gaps`) took the 35B's 200 W log from 383 lines
    read to 382 (make marks), and the ingest report printed the count unmarked. A file's counts
    carry the choices its rows' line numbers hold; measured data carries none."""
    from benchbook.chapters.power_sweep import analysis as ps
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "power-sweep").analysed()
    table = ps.ingest_table(r)
    marked = cell_ids(table)
    row = table.index[table["file"] == "raw/q36-35b/200w/vllm-serve.log"][0]
    assert "gaps" in marked[(row, "read")] and marked[(row, "read")] == marked[(row, "ignored")]
    assert not any(column in ("file", "format") for _, column in marked)
    strix = Chapter(ROOT, "strix-halo-baseline").analysed({"data_dir": "data/strix-halo-qwen3-30b-lhl"})
    assert not strix.file_ids()


def test_a_ledger_difference_carries_what_its_value_rests_on_even_when_the_number_does_not():
    """make marks: moving where in the printing interval the generator put each published cell
    (a choice then) moved the ledger's differences ('−1.2%' to '−1.3%'), which carried no mark;
    the recomputed numbers they compare print as the write-up's and stay unmarked. GB10's mean
    ITL of test D is fit to "55 ms" over seeds whose spread is a choice."""
    from benchbook.ledger.claims import BY_CONSTRUCTION
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "gb10-mtp").analysed()
    marked = cell_ids(r.ledger)
    row = r.ledger.index[r.ledger["id"] == "d-itl"][0]
    assert r.ledger.loc[row, "basis"] == BY_CONSTRUCTION and "d-itl" not in r.claim_ids
    assert "seed_spread" in marked[(row, "difference")] and (row, "recomputed") not in marked
    unjudged = r.ledger.index[r.ledger["difference"].astype(str) == ""]
    assert not {(label, "difference") for label in unjudged} & set(marked)


def test_a_best_of_figure_rests_on_its_winner_not_on_the_backends_below_it():
    """make marks: moving Strix Halo's losing_ratios (how far the other backends fall below the
    best) moved none of the best-of figures ('1,387.7', the winning backend, the H100 page's
    ratios to them), which carried its mark. The best holds what its winning row holds."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    for test in ("pp512", "tg128"):  # the best rates are published: the files print them as such
        assert f"strix_best_{test}_tps" not in r.value_ids, test
        ids = r.value_ids[f"strix_rocm_723_{test}_tps"]  # the slowest build rests on its ratio
        assert "losing_ratios" in ids, (test, ids)
    best, spread = cell_ids(strix.best_table(r)), cell_ids(strix.spread_table(r))
    assert best and not any("losing_ratios" in ids for ids in best.values())
    assert all("winners" in ids for (_, column), ids in best.items() if column != "test")
    worst = [ids for (_, column), ids in spread.items() if column == "worst"]
    assert worst and all("losing_ratios" in ids for ids in worst)  # the slowest build is one of them
    assert not any("losing_ratios" in ids for (_, column), ids in spread.items() if column == "best")
    glued = {k: {a["id"] for a in strix.glue_values(r).payload(k)} for k in ("pp_best_tps", "tg_best_config",
                                                                            "pp_worst_tps", "envelope_note")}
    assert "losing_ratios" not in glued["pp_best_tps"] | glued["tg_best_config"] | glued["envelope_note"]
    assert "losing_ratios" in glued["pp_worst_tps"]
    # a winner's own share is 100 % however far the others fall, and rests on which build wins
    shares = cell_ids(strix.backend_table(r))
    top = [i for i, v in enumerate(strix.backend_table(r)["of best"]) if v == "100.0%"]
    assert top and all(shares[(i, "of best")] == ("winners",) for i in top)
    from benchbook.chapters.h100 import analysis as h100  # the H100 page's table of the same figures

    # a published best rate is the write-up's number, whichever build a generator made win it
    assert not strix.glue_values(r).payload("pp_best_tps") and strix.glue_values(r).payload("pp_best_config")
    on_h100 = cell_ids(h100.strix_backends(Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed()))
    assert not any(column == "best t/s" for _, column in on_h100)
    assert all("strix-halo-baseline/winners" in ids for (_, column), ids in on_h100.items() if column == "best backend")
    assert on_h100 and not any("strix-halo-baseline/losing_ratios" in ids for (_, column), ids in on_h100.items()
                               if column in ("best backend", "best t/s"))
    assert any("strix-halo-baseline/losing_ratios" in ids for (_, column), ids in on_h100.items()
               if column == "best / worst backend")


def test_a_configuration_s_build_and_arguments_carry_the_choices_they_rest_on():
    """make marks: moving Strix Halo's builds, engine_versions or llama_bench_args moved the
    configuration tables' engine ('b9263' to 'b10189') and arguments on the Strix Halo and H100
    pages, unmarked: a reconstructed folder's study.yml is its generator's."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    table, marked = strix.configs_table(r), cell_ids(strix.configs_table(r))
    bench = [i for i, e in enumerate(table["engine"]) if "llama-bench" in str(e) or "b9" in str(e)]
    assert bench and all({"builds", "engine_versions"} <= set(marked[(i, "engine")]) for i in bench)
    assert any("llama_bench_args" in marked.get((i, "arguments"), ()) for i in bench)
    assert not any(column in ("config", "model", "platform") for _, column in marked)
    h = Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed()
    table, marked = h100.configs_table(h), cell_ids(h100.configs_table(h))
    strix_rows = {i for i, c in enumerate(table["config"]) if c in r.data.study.configs}
    assert strix_rows and any("strix-halo-baseline/builds" in marked.get((i, "engine"), ()) for i in strix_rows)
    # the llama-server's flags and backend are study.yml's only: each row carries them (serve_args)
    server = [i for i, c in enumerate(table["config"]) if c == "strix-llama-server"]
    assert server and {"strix-halo-baseline/server_args", "strix-halo-baseline/server_backend"} <= set(
        marked[(server[0], "serve_args")])
    table, marked = strix.configs_table(r), cell_ids(strix.configs_table(r))
    server = [i for i, c in enumerate(table["config"]) if c == "strix-llama-server"]
    assert {"server_args", "server_backend"} <= set(marked[(server[0], "arguments")])


def test_the_strix_halo_opening_and_best_builds_carry_the_choices_of_the_builds_dates_and_run_they_print():
    """make marks: moving builds moved the opening's "ROCm b9201, b9263; Vulkan b9187" and the best
    table's builds ('b9263' to 'b10189'); moving the server run's prompt length moved its glued
    4,096 and the sequential TTFT at the prefill rate; all unmarked."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    glued = strix.glue_values(r)
    ids = {k: {a["id"] for a in glued.payload(k)} for k in ("data_builds", "data_dates", "server_input_len",
                                                             "ttft_at_pp_rate_s")}
    assert "builds" in ids["data_builds"] and "bench_date_local" in ids["data_dates"]
    assert not {"utc_offset_h", "test_overhead_s", "between_backends_s"} & ids["data_dates"]  # times of day
    assert "server_run" in ids["server_input_len"] and "server_run" in ids["ttft_at_pp_rate_s"]
    best = cell_ids(strix.best_table(r))
    assert all("builds" in v for (_, column), v in best.items() if column == "build")


def test_a_start_up_choice_covers_only_the_start_up_facts_it_moves():
    """Issue 34: one GB10 choice (the MoE config file name, the graph counts) covered every
    start-up fact with no row filter, so the published KV pool (323,456 tokens), weights
    (35.02 GiB) and checkpoint shards (42 and 14) were marked as assumed. Where each choice
    lands is what moving it changed (make marks), row by row."""
    from benchbook.site.runner import Chapter

    r = Chapter(ROOT, "gb10-mtp").analysed()
    printed = ("mtp_kv_cache_tokens", "mtp_weights_gib", "van_checkpoint_shards", "fresh_checkpoint_shards")
    assert all(name in r.values for name in printed)
    for name in printed:
        assert not {"moe_config", "graph_counts"} & set(r.value_ids.get(name, ())), name
    boot = r.data["boot"]
    landing = [a for a in load_assumptions(ROOT / "data" / "gb10-mtp") if "boot.value_num" in a.columns]
    assert landing
    for a in landing:  # no start-up choice moves every start-up number
        assert row_mask(boot, a, "boot", "value_num").sum() < len(boot), a.id


def test_rows_of_scopes_each_table_of_an_entry_that_spans_several(tmp_path):
    """A choice that moves start-up facts and log windows (GB10's start-up timings) covers the
    facts it moved and every window: `rows` could name one table only, so such an entry once
    covered every start-up fact, published ones too."""
    entry = {"id": "boot_s", "value": 1, "why": "w", "columns": ["boot.value_num", "windows.time"],
             "rows_of": {"boot": {"fact": ["weights_load_s"]}}}
    (tmp_path / FILE).write_text(yaml.safe_dump({"assumptions": [entry]}), encoding="utf-8")
    (a,) = load_assumptions(tmp_path)
    boot = pd.DataFrame({"fact": ["weights_load_s", "kv_cache_tokens"], "value_num": [289.15, 323456.0]})
    windows = pd.DataFrame({"time": [1.0, 2.0]})
    assert assumed_cells(boot, "boot", [a])["value_num"].tolist() == [True, False]
    assert assumed_cells(windows, "windows", [a])["time"].tolist() == [True, True]
    # per column: the load time moves in its own row, the clock of every row after it
    entry.update(columns=["boot.value_num", "boot.time"],
                 rows_of={"boot.value_num": {"fact": ["weights_load_s"]}, "boot.time": {"fact": ["kv_cache_tokens"]}})
    (tmp_path / FILE).write_text(yaml.safe_dump({"assumptions": [entry]}), encoding="utf-8")
    (a,) = load_assumptions(tmp_path)
    cells = assumed_cells(boot.assign(time=[1.0, 2.0]), "boot", [a])
    assert cells["value_num"].tolist() == [True, False] and cells["time"].tolist() == [False, True]
    entry["rows_of"] = {"runs": {"kind": ["x"]}}
    (tmp_path / FILE).write_text(yaml.safe_dump({"assumptions": [entry]}), encoding="utf-8")
    with pytest.raises(AssumptionsError, match="rows_of names runs"):
        load_assumptions(tmp_path)


def test_a_page_computes_the_cells_of_one_frame_once_and_again_when_the_frame_changes():
    """The Strix Halo serving model asks for the H100 runs' cells once per agent count; the
    answer is kept with its frame (a copy to each caller), equal to a fresh computation, and a
    frame of another shape is computed anew."""
    from benchbook.site.runner import Chapter

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    frame = r.h100_runs
    first = r.cells(frame, "runs", r.h100)
    kept = len(r._cells)
    again = r.cells(frame, "runs", r.h100)
    assert len(r._cells) == kept and again.ids.equals(first.ids) and again.ids is not first.ids
    again.ids.iloc[0, 0] = ("changed by a caller",)
    assert r.cells(frame, "runs", r.h100).ids.equals(first.ids)  # a caller's change stays its own
    fresh = Chapter(ROOT, "strix-halo-baseline").analysed()
    assert fresh.cells(fresh.h100_runs, "runs", fresh.h100).ids.equals(first.ids)
    wider = frame.assign(extra=1)
    assert "extra" in r.cells(wider, "runs", r.h100).ids.columns and len(r._cells) == kept + 1


def test_the_one_output_token_dash_rests_on_the_answer_length():
    """make marks: the H100 prefill run's answer length moved from one token to two turned the
    one-request table's TPOT from "– (one output token)" into "0.0 ms", unmarked: the dash says
    something about the run's length, which the generator chose ("~512 input tokens" only)."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed()
    table = h100.common_display(r)
    marked = cell_ids(table)
    dashes = [(i, c) for c in table.columns for i, v in enumerate(table[c]) if v == "– (one output token)"]
    assert dashes and all("prefill_run" in marked[place] for place in dashes)


def test_the_ingest_tables_of_both_pages_mark_a_bench_file_s_records_with_its_request_count():
    """make marks: nine prompts instead of ten took the Strix Halo server run's file from 11
    records read to 10 on both pages that list it, unmarked (their tables were plain copies of
    the reports). A count of none (nothing ignored) stays unmarked."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    for table, ours in ((strix.files_table(Chapter(ROOT, "strix-halo-baseline").analysed()), True),
                        (h100.ingest_table(Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed()), False)):
        marked = cell_ids(table)
        row = table.index[table["file"].str.startswith("raw/llama-server/")][0]
        assert ("server_run" if ours else "strix-halo-baseline/server_run") in marked[(row, "read")]
        assert table.loc[row, "ignored"] == 0 and (row, "ignored") not in marked


def test_a_count_the_prose_and_a_caveat_quote_rests_on_the_chosen_request_count():
    """make marks: nine prompts instead of ten moved the Strix Halo page's glued request count and
    the small-samples caveat ("… strix_server_c1 (10)") on both pages, unmarked. The caveat reads
    the runs' completed counts, also when it is the other folder's, shown on the H100 page."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    assert "server_run" in {a["id"] for a in strix.glue_values(r).payload("server_requests")}
    for page, origin, choice in (("strix-halo-baseline", "data rule: small-samples", "server_run"),
                                 ("h100-dense-vs-moe-mtp", "data rule: small-samples (strix-halo-baseline)",
                                  "strix-halo-baseline/server_run")):
        cav = Chapter(ROOT, page).analysed().caveats
        row = cav.index[cav["origin"] == origin][0]
        assert choice in cell_ids(cav)[(row, "caveat")], page
    # it quotes the runs of fewer than 100 requests: the 320-prompt short-prompts run is not one
    cav = Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed().caveats
    marked = cell_ids(cav)[(cav.index[cav["origin"] == "data rule: small-samples"][0], "caveat")]
    assert "prompts_per_slot" in marked and "short_prompts_run" not in marked


def test_a_p95_rests_on_the_run_s_whole_distribution_not_only_on_its_published_median_and_p99():
    """make marks: ten prompts per client more moved the H100 common-load table's P95 TTFTs
    ("258.9 ms" to "255.1 ms"), which rested on the median and P99, both published and so
    unmarked. A P95 reads the whole distribution, which the run's mean stands for."""
    from benchbook.chapters.h100 import analysis as h100
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    table = h100.common_display(Chapter(ROOT, "h100-dense-vs-moe-mtp").analysed())
    marked = cell_ids(table)
    sweep = [i for i, w in enumerate(table["workload"]) if str(w).startswith("4,096 → 512")]
    assert sweep and all("prompts_per_slot" in marked[(i, "TTFT p95")] for i in sweep)
    assert not any("prompts_per_slot" in marked.get((i, "TTFT p50"), ()) for i in sweep)  # a median is published


def test_a_batched_time_with_prompts_rests_on_the_prompt_length_its_ttft_was_measured_at():
    """make marks: the H100 sweep's prompt length (read from "4k" as 4,096, a choice) moved the
    Strix Halo page's batched times with prompts ("6.10 s" to "5.97 s"), unmarked: the TTFT is
    scaled from the length it was measured at to the scenario's."""
    from benchbook.chapters.strix import analysis as strix
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    r = Chapter(ROOT, "strix-halo-baseline").analysed()
    table = strix.serving_display(r)
    marked = cell_ids(table)
    batched = [c for c in table.columns if "batched" in c]
    prompts = [i for i, p in enumerate(strix.serving(r)["prompt_tokens"]) if p]
    assert batched and prompts
    assert all("h100-dense-vs-moe-mtp/sweep_lengths" in marked[(i, c)] for c in batched for i in prompts)


def test_the_3090_memory_table_rests_on_the_start_up_log_and_nvidia_smi_choices():
    """make marks: moving the 3090 start-up facts (`boot`) moved the memory table's "weights per
    GPU (log) 10.17 GiB" and KV memory, unmarked: the table was a plain frame of values. The card's
    memory is the RTX 3090's 24 GB (the facts registry) and the memory used per card the write-up's
    number, so neither the utilisation budget nor the memory used rests on a choice."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    table = ds.memory_table(Chapter(ROOT, "3090-dense-vs-sparse").analysed())
    marked = cell_ids(table)
    assert all("boot" in marked[(i, "weights per GPU (log)")] for i in range(len(table)))
    assert not any(c in ("utilisation budget per card", "memory used per card (nvidia-smi)", "both cards")
                   for _, c in marked)
    assert not any(column == "model" for _, column in marked)
    kv = cell_ids(ds.kv_check_display(Chapter(ROOT, "3090-dense-vs-sparse").analysed()))  # "20.74 GiB" reserved
    assert all("boot" in kv[(0, c)] for c in ("KV memory the log reserves", "concurrency the reserved memory allows"))


def test_the_3090_recovery_table_rests_on_the_tool_call_logs_a_generator_wrote():
    """make marks: moving the 3090 tool-call logs' models (bursts of denials, handshakes) moved
    every count of the recovery table ("10 (53%)" to "11 (58%)"), unmarked."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.site.runner import Chapter
    from benchbook.study.marks import cell_ids

    table = ds.recovery_display(Chapter(ROOT, "3090-dense-vs-sparse").analysed())
    marked = cell_ids(table)
    assert len(table) and all("tool_log_models" in marked[(i, "next call denied again (retry)")]
                              for i in range(len(table)))
    assert not any(column == "model" for _, column in marked)


def test_sorted_positions_read_and_write_as_runs_of_consecutive_positions():
    from benchbook.study.assumptions import ALL, parse_positions, positions_text

    assert parse_positions("0-2 157 159") == {0, 1, 2, 157, 159} and parse_positions("all") == ALL
    assert positions_text({159, 0, 1, 2, 157}) == "0-2 157 159" and positions_text(ALL) == "all"
    with pytest.raises(AssumptionsError, match="sorted.requests.ttft_s.c1"):
        load_entry = {"id": "j", "value": 1, "why": "w", "columns": ["requests.ttft_s"],
                      "sorted": {"requests.ttft_s": {"c1": "first-last"}}}
        from benchbook.study.assumptions import _entry

        _entry(load_entry, "assumptions[0]")


def test_a_quantile_rests_on_a_choice_only_where_it_moved_the_quantile_s_own_positions():
    """make marks: the H100 extreme-jitter choice moves the fastest and slowest requests and deals
    the other latencies to other requests, so every request's TTFT moved and no P95 did. An entry
    that says where it moved runs' sorted values marks a quantile by its own positions; one that
    does not falls back on the run's rows."""
    from benchbook.study.assumptions import _entry, order_ids

    ends = _entry({"id": "ends", "value": 0.03, "why": "w", "columns": ["requests.ttft_s"],
                   "sorted": {"requests.ttft_s": {"c16": "0 159", "c4": "all"}}}, "e")
    told_nothing = _entry({"id": "rows", "value": 1, "why": "w", "columns": ["requests.ttft_s"]}, "e")
    assumed = [ends, told_nothing]
    # 160 values: the P95 sits between positions 151 and 152, the median between 79 and 80
    assert order_ids(assumed, "requests.ttft_s", "c16", 160, 0.95, rows=("ends", "rows")) == ("rows",)
    assert order_ids(assumed, "requests.ttft_s", "c16", 160, 1.0, rows=("ends", "rows")) == ("ends", "rows")
    assert order_ids(assumed, "requests.ttft_s", "c4", 40, 0.5, rows=()) == ("ends",)  # the run's count moved
    assert order_ids(assumed, "requests.ttft_s", "c1", 10, 0.5, rows=("ends",)) == ()  # a run it does not name
    assert order_ids(assumed, "requests.tpot_s", "c16", 160, 1.0, rows=("ends",)) == ()  # nor a column


def test_an_h100_p95_and_one_client_median_do_not_rest_on_a_choice_that_deals_latencies_around():
    """make marks: the H100 extreme jitter moves each run's fastest and slowest requests and deals
    the other latencies to other requests; no P95 TTFT and not the one-client median per-request
    rate moved, though they carried its mark. With `sorted` they rest on it only where their own
    positions moved: the 16-client median per-request rate does."""
    from benchbook.chapters.h100 import analysis as h100

    r = h100.analyse(ROOT / "data/h100-dense-vs-moe-mtp", ROOT / "data/strix-halo-baseline",
                     ROOT / "data/h100-dense-vs-moe-mtp/published.yml")
    run = dict(zip(r.runs["key"], r.runs["run_id"]))
    rate, p95 = r.request_order_ids("per_request_tps", 0.5), r.request_order_ids("ttft_s", 0.95)
    assert "extreme_jitter" not in rate.get(run["h100_dense_c1"], ())
    assert "extreme_jitter" in rate[run["h100_dense_c16"]]
    assert p95 and not any("extreme_jitter" in ids for ids in p95.values())
    assert all(ids for ids in p95.values())  # other choices (the TTFT spread) still move them


def test_the_values_whose_order_a_page_reads_come_from_measured_rows_of_any_llama_bench_frame():
    from benchbook.study.assumptions import order_groups, ordered_values

    lb = pd.DataFrame({"n_prompt": [512, 0, 512], "n_gen": [0, 128, 0], "n_depth": [0, 0, 4096],
                       "avg_ts": [1388.0, 54.0, 900.0]})
    assert order_groups("llama_bench", lb).tolist() == ["pp512", "tg128", "pp512 @ d4096"]
    assert ordered_values("llama_bench", lb)["avg_ts"].tolist() == [1388.0, 54.0, 900.0]  # no status column
    failed = lb.assign(status=["ok", "failed", "ok"])
    assert ordered_values("llama_bench", failed)["avg_ts"].tolist() == [1388.0, 900.0]


def test_a_tool_call_count_the_write_up_published_carries_no_choice():
    """make marks: moving how the tool-call logs were written never moved the denied-call counts
    or the 3.6-35B's and 27B's closed ralf stages, which the files were fit to print as published;
    the 122B's closed stages, which the write-up does not give, keep the mark."""
    from benchbook.chapters.dense_sparse import analysis as ds
    from benchbook.study.marks import cell_ids

    r = ds.analyse(ROOT / "data/3090-dense-vs-sparse", ROOT / "data/3090-dense-vs-sparse/published.yml")
    t = ds.recovery_display(r)
    marked = cell_ids(t)
    rows = dict(zip(ds.recovery(r)["name"], t.index))
    assert not any((rows[m], "denied calls") in marked for m in rows)
    ralf = "ralf stages closed with all 3 handshake calls"
    assert (rows["qwen36_35b"], ralf) not in marked and (rows["qwen35_27b"], ralf) not in marked
    assert "tool_log_models" in marked[(rows["qwen35_122b"], ralf)]
    assert "tool_log_models" in marked[(rows["qwen36_35b"], "longest run of denials")]

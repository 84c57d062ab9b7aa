"""Data-rule caveats: which runs a caveat says it rests on (pipeline._marked marks it with the
choices landing in those runs only)."""

import pandas as pd

from benchbook.ledger.caveats import _client_idle


def test_client_idle_rests_on_the_runs_it_quotes():
    """make marks: the H100 client-idle caveat was marked with every streaming run's choices,
    while ×2 and ×½ moves of a run far below the 5 % line never brought it into the list; and
    a prefill run moved to two-token answers came in unmarked."""
    runs = pd.DataFrame({
        "run_id": ["idle", "busy", "prefill"], "name": ["idle", "busy", "prefill"],
        "per_request_tps": [50.0, 40.2, 900.0], "per_agent_tps": [40.0, 40.0, 10.0],
        "total_output_tokens": [4000, 4000, 20], "completed": [20, 20, 20]})
    (caveat,) = _client_idle(None, runs)
    (quoted_reads, quoted), (one_token_reads, one_token) = caveat["rests"]
    assert quoted == ["idle"] and "requests.per_request_tps" in quoted_reads
    # a one-token run is left out by its answers' length, which a second token would change
    assert one_token == ["prefill"] and "runs.total_output_tokens" in one_token_reads
    assert "idle: 50.0 vs 40.0 t/s" in caveat["caveat"] and "busy" not in caveat["caveat"]
    assert _client_idle(None, runs[runs["run_id"] != "idle"]) == []

"""The adaptive log file sync rule on frames built by hand: log file sync degrades when the
LGWR trace says the foregrounds switched to polling, the transport waits stay in line, and the
finding says so instead of the generic commit chain naming whatever lines up."""

from __future__ import annotations

from kits.analysis import frame
from test_analysis import _run, waits

from sgmon.verdicts import Finding


def _ticks(polling: float | None) -> list[Finding]:
    ticks = []
    for t in range(60):
        bad = t >= 40
        lfs = {"avg": 9.0 if bad else 1.0, "p99": 64.0 if bad else 2.0}
        srw = {"avg": 0.8 + (t % 3) * 0.05, "p99": 1.0}
        cpu = {"all": {"busy": 30.0 if bad else 10.0}}  # lines up with the jump, is no cause
        trace = {"lgwr": {"polling": polling if bad else 0.0}}
        p = frame(
            "p",
            t,
            role="primary",
            oracle_waits=waits(log_file_sync=lfs, SYNC_Remote_Write=srw),
            oracle_trace=trace,
            cpu=cpu,
        )
        ticks.append([p])
    return _run(ticks)


def test_polling_explains_a_slower_log_file_sync_not_sync_transport() -> None:
    found = _ticks(polling=1.0)
    rules = [f.rule for f in found]
    assert "adaptive_sync" in rules and "commit_chain" not in rules
    f = next(f for f in found if f.rule == "adaptive_sync")
    assert "not SYNC transport" in f.title
    assert any("switching to polling" in e for e in f.evidence)


def test_in_post_wait_the_commit_chain_still_speaks() -> None:
    found = _ticks(polling=0.0)
    rules = [f.rule for f in found]
    assert "commit_chain" in rules and "adaptive_sync" not in rules

"""The commits and redo left on no standby, counted from the frames alone, against what the
simulation itself knows it made while the destination did not protect (``sgmon.sim.truth``):
within 5 % for each SYNC fault that stops protection (the transport stopped, a failover that
leaves the new primary alone, a silent link that waits out NET_TIMEOUT), and for the ASYNC
standbys' redo not yet received (an IOPS-capped one, a RAC thread over a slow link)."""

from __future__ import annotations

import pytest

from sgmon.analysis import Analyzer
from sgmon.outcomes import Unprotected
from sgmon.sim import SimPair
from sgmon.sim.truth import Truth

START = 1_800_000_000.0
TOLERANCE = 0.05
SECONDS = 90.0  # check's default run: the onset's 30 s, then 60 s of the fault


def _run(scenario: str, async_host: str | None = None) -> tuple[list[Unprotected], Truth, float]:
    """The analysis' exposures at the end of the run, the simulation's truth, and the redo
    the ASYNC standby ``async_host`` had not received at the end."""
    pair = SimPair(scenario, seed=3, start=START)
    truth = Truth(pair)
    a = Analyzer()
    try:
        while pair.t < SECONDS:
            for f in pair.step():
                a.feed(f)
            truth.step()
        late = truth.unreceived(async_host) if async_host else 0.0
    finally:
        pair.close()
    return a.state().unprotected, truth, late


def _near(measured: float, true: float) -> bool:
    return true > 0 and abs(measured - true) <= TOLERANCE * true


@pytest.mark.parametrize(
    "scenario", ["transport-stopped", "failover", "standby-unreachable", "rac-thread-lag"]
)
def test_sync_commits_and_redo_on_no_standby(scenario: str) -> None:
    got, truth, _ = _run(scenario)
    sync = [u for u in got if u.sync]
    assert sync, f"{scenario}: no SYNC destination counted as not protecting"
    commits = sum(u.commits for u in sync)
    redo = sum(u.redo_bytes for u in sync)
    print(f"{scenario}: commits {commits:.0f} vs {truth.commits:.0f}, "
          f"redo {redo:.0f} vs {truth.redo_bytes:.0f}, {sync[0].text()}")  # fmt: skip
    assert _near(commits, truth.commits), (commits, truth.commits)
    assert _near(redo, truth.redo_bytes), (redo, truth.redo_bytes)
    assert all(u.active for u in sync)


def test_healthy_leaves_nothing_unprotected() -> None:
    got, truth, _ = _run("healthy")
    assert truth.commits == 0
    assert [u for u in got if u.sync] == []


@pytest.mark.parametrize(
    ("scenario", "host", "target"),
    [("async-iops-cap", "standby_a", "STBY_A"), ("rac-thread-slow", "standby_a", "STBY_A")],
)
def test_async_redo_not_yet_received(scenario: str, host: str, target: str) -> None:
    got, _, late = _run(scenario, host)
    behind = [u for u in got if not u.sync and u.target == target]
    assert behind, f"{scenario}: no ASYNC destination counted behind"
    redo = sum(u.redo_bytes for u in behind)
    print(f"{scenario}: redo not received {redo:.0f} vs {late:.0f}; "
          f"{'; '.join(u.text() for u in behind)}")  # fmt: skip
    assert _near(redo, late), (redo, late)
    assert [u for u in got if u.sync] == []  # the SYNC standby protected throughout

"""The commits and redo left on no standby, counted from the frames alone, against what the
simulation itself knows it made while the destination did not protect (``sgmon.sim.truth``):
within 5 % for each SYNC fault that stops protection (the transport stopped, a failover that
leaves the new primary alone, a silent link that waits out NET_TIMEOUT, a far sync whose
destination to its terminal standby fails), its seconds as well (the NET_TIMEOUT hang's among
them), and for the ASYNC
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
    "scenario",
    [
        "transport-stopped",
        "failover",
        "standby-unreachable",
        "rac-thread-lag",
        "far-sync-terminal-down",
    ],
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
    seconds = max(u.seconds for u in sync)  # RAC: each instance's destination, the same span
    assert _near(seconds, truth.seconds), (seconds, truth.seconds)


def test_the_net_timeout_hang_is_in_the_span_and_said() -> None:
    """The silent link holds every commit for NET_TIMEOUT (30 s) before the destination
    errors: those seconds are unprotected too, and the sentence says how many of them hung."""
    got, truth, _ = _run("standby-unreachable")
    (u,) = [u for u in got if u.sync]
    assert 28 <= u.hung <= 32 and _near(u.seconds, truth.seconds), (u.hung, u.seconds)
    assert f", {u.hung:g} of them hung waiting on the standby" in u.text()


def test_a_far_sync_forwarding_to_no_standby_is_said() -> None:
    got, _, _ = _run("far-sync-terminal-down")
    (u,) = [u for u in got if u.sync]
    assert (u.dest, u.target, u.alone) == ("dest_2", "FS1", True)
    assert u.relay == "dest_3 of far sync FS1 to STBY: ERROR", u.relay
    assert "held by the far sync alone" in u.text()


def test_a_far_sync_forwarding_on_leaves_nothing_unprotected() -> None:
    got, truth, _ = _run("far-sync-terminal-cap")  # the terminal standby is slow, not cut off
    assert truth.commits == 0
    assert [u for u in got if u.sync] == []


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

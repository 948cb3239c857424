"""Per-thread lag on a RAC primary's standby and the standbys' own (onward) destinations, read by
the real oracle_dg collector with its exact SQL from the SQLite stand-in (issue 15)."""

from __future__ import annotations

import pytest

from collectors.oracle.dg import ONWARD_EVERY, OracleDgCollector
from sgmon.analysis import Analyzer
from sgmon.config import Config, HostConfig
from sgmon.model import CollectorResult, Frame, Status
from sgmon.oracle.session import Session
from sgmon.sim import SimPair
from sgmon.sim.standin import StandIn
from sgmon.topology import build, thread_lags

START = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.t = START

    def __call__(self) -> float:
        return self.t


def _collector(db: StandIn, role: str, clock: Clock | None = None) -> OracleDgCollector:
    s = Session(role=role, connect=db.connect)
    c = OracleDgCollector({"session": s, "clock": clock or Clock()})
    c.open()
    return c


def _frame(host: str, c: OracleDgCollector, role: str) -> Frame:
    rows = c.derive(None, c.sample(), 1.0)
    return Frame(
        host, START, 1, 1.0, {"oracle_dg": CollectorResult(Status.OK, rows=rows)}, (), role
    )


def _analysed(
    scenario: str, seed: int, onset: float, until: float
) -> tuple[dict[str, Frame], Analyzer]:
    """Run a scenario's hosts through one analyzer until simulated time ``until``: the last
    frame of each host, and the analyzer."""
    pair = SimPair(scenario, seed=seed, start=START, onset=onset)
    a = Analyzer()
    frames: dict[str, Frame] = {}
    try:
        while pair.t < until:
            frames = {f.host: f for f in pair.step()}
            for f in frames.values():
                a.feed(f)
    finally:
        pair.close()
    return frames, a


@pytest.mark.parametrize("version", ["19.21.0.0.0", "11.2.0.4.0"])
def test_a_stalled_thread_lags_while_the_other_moves(version: str):
    """V$DATAGUARD_PROCESS (19c, "rfs" in lower case) or V$MANAGED_STANDBY (11.2): thread 1's
    RFS stops at one block while thread 2's moves; the lag is capped at the transport lag."""
    db = StandIn(version=version, role="PHYSICAL STANDBY", db_unique_name="STBY")
    clock = Clock()
    c = _collector(db, "standby", clock)
    try:
        lags = []
        for tick in range(8):
            db.set_receiving(1, 7, 100)  # thread 1 stands still
            db.set_receiving(2, 9, 100 + 50 * tick)
            db.set_dg_stats(5.0, 5.0, datum_time="11/21/2026 15:00:01")
            rows = c.derive(None, c.sample(), 1.0)
            lags.append((rows["thread_1"]["thread_lag"], rows["thread_2"]["thread_lag"]))
            clock.t += 1.0
        assert lags[0] == (0.0, 0.0)
        assert lags[3] == (3.0, 0.0)
        assert lags[-1] == (5.0, 0.0)  # at most the database's transport lag
        assert rows["thread_1"]["recv_seq"] == 7 and rows["thread_2"]["recv_seq"] == 9
        db.set_receiving(1, None)  # its RFS gone: the thread keeps standing still
        rows = c.derive(None, c.sample(), 1.0)
        assert rows["thread_1"]["thread_lag"] == 5.0
        db.set_dg_stats(0.0, 0.0, datum_time="11/21/2026 15:00:09")  # all current: no lag
        rows = c.derive(None, c.sample(), 1.0)
        assert rows["thread_1"]["thread_lag"] == 0.0
        assert rows["db"]["apply_state"] == "APPLYING_LOG"  # MRP0 read from the same rows
    finally:
        c.close()
        db.close()


def test_a_threads_receive_rate_counts_blocks_within_one_log():
    """BLOCK# x 512 B per second over RATE_S; the interval across a log switch is left out
    (the old log's tail is unknown), and a thread whose RFS is gone receives nothing."""
    db = StandIn(version="19.21.0.0.0", role="PHYSICAL STANDBY", db_unique_name="STBY")
    clock = Clock()
    c = _collector(db, "standby", clock)
    try:
        db.set_dg_stats(0.0, 0.0, datum_time="11/21/2026 15:00:01")
        rates = []
        for tick in range(30):
            seq, block = (7, 1000 + 200 * tick) if tick < 20 else (8, 300 * (tick - 20))
            db.set_receiving(1, seq, block)
            db.set_receiving(2, 9, 100 + 2000 * tick)
            rows = c.derive(None, c.sample(), 1.0)
            rates.append((rows["thread_1"]["recv_rate"], rows["thread_2"]["recv_rate"]))
            clock.t += 1.0
        assert rates[0] == (None, None)  # one position: no rate yet
        assert rates[5] == (200 * 512, 2000 * 512)
        assert rates[20][0] == 200 * 512  # the switch's interval is not counted
        assert rates[21][0] == (8 * 200 + 300) * 512 / 9  # ticks 11-21 but the switch's
        assert rates[29][0] == 300 * 512
        assert rows["thread_1"]["thread_lag"] == 0.0  # it moves: no stood-still lag
        db.set_receiving(1, None)
        rows = c.derive(None, c.sample(), 1.0)
        assert rows["thread_1"]["recv_rate"] == 0.0
    finally:
        c.close()
        db.close()


def test_a_thread_that_arrives_slowly_is_named_with_its_shortfall():
    """rac-thread-slow: node 1's link to the ASYNC standby A carries less than node 1 writes.
    Thread 1 never stands still (no stood-still lag), yet the finding on A names it, with what
    it arrives short of; thread 2 and the rest stay clean."""
    frames, a = _analysed("rac-thread-slow", seed=4, onset=15.0, until=60)
    rows = frames["standby_a"].rows("oracle_dg")
    made = {n: frames[n].value("oracle_redo", "db", "redo_size") for n in ("node1", "node2")}
    assert rows["thread_1"]["recv_rate"] < 0.8 * made["node1"]
    assert rows["thread_2"]["recv_rate"] > 0.9 * made["node2"]
    assert rows["thread_1"]["thread_lag"] == rows["thread_2"]["thread_lag"] == 0.0
    assert rows["db"]["transport_lag"] >= 10
    active = [f for f in a.state().findings if f.active and f.severity != "info"]
    top = active[0]
    assert (top.rule, top.host) == ("lag_risk", "standby_a")
    assert "thread 1 (node1) arrives" in top.title and "node2" not in top.title
    said = next(e for e in top.evidence if e.startswith("per thread, redo received"))
    assert "further behind every minute" in said
    assert {f.host for f in active} == {"standby_a"}


@pytest.mark.parametrize(
    ("scenario", "blamed"), [("far-sync-slow", "farsync"), ("far-sync-terminal-cap", "standby")]
)
def test_a_far_sync_is_on_the_commit_path_and_its_terminal_standby_is_not(
    scenario: str, blamed: str
):
    """No config: the far sync is known by its destination's TYPE and its DATABASE_ROLE, has
    no apply to judge, and is the cause when its SRL volume is capped; the standby behind it
    is a lag risk, named with the far sync that feeds it, when the cap is its own."""
    frames, a = _analysed(scenario, seed=2, onset=15.0, until=45)
    topo = build(Config(hosts=[]), frames)
    assert topo.far_sync == {"farsync"}
    assert topo.places == {"farsync": "commit path", "standby": "lag risk"}
    assert topo.upstream("standby") == "behind far sync farsync (dest_3 ASYNC)"
    fs = frames["farsync"].rows("oracle_dg")["db"]
    assert fs.get("apply_state") is None and fs.get("apply_lag") is None
    active = [f for f in a.state().findings if f.active and f.severity != "info"]
    assert active[0].host == blamed
    if blamed == "farsync":
        assert active[0].rule == "standby_io" and " <- " in active[0].title
        assert "far sync I/O saturated" in active[0].title
    else:
        assert {f.rule for f in active if f.host == "standby"} == {"lag_risk"}
        assert all("behind far sync farsync" in f.title for f in active if f.host == "standby")
        assert not [f for f in active if f.host in ("farsync", "primary")]


def test_thread_lags_are_shown_only_when_the_threads_differ():
    def frame(lags: dict[int, float]) -> Frame:
        rows = {"db": {}, **{f"thread_{t}": {"thread_lag": v} for t, v in lags.items()}}
        return Frame("s", START, 1, 1.0, {"oracle_dg": CollectorResult(Status.OK, rows)}, ())

    assert thread_lags(frame({1: 14.0, 2: 0.0})) == {"1": 14.0, "2": 0.0}
    assert thread_lags(frame({1: 4.0, 2: 4.0})) == {}
    assert thread_lags(frame({1: 4.0})) == {}


def test_the_rac_standbys_lag_finding_names_the_lagging_threads_instance():
    _, a = _analysed("rac-thread-lag", seed=3, onset=10.0, until=40)
    lag = [f for f in a.state().findings if f.host == "standby" and f.rule == "dg_state"]
    assert lag and "thread 1 (node1)" in lag[0].title and "node2" not in lag[0].title
    assert any("thread 2 (node2) 0 s" in e for e in lag[0].evidence)


def _standby(name: str, **dests: dict) -> StandIn:
    db = StandIn(version="11.2.0.4.0", role="PHYSICAL STANDBY", db_unique_name=name)
    for dest_id, cols in dests.items():
        db.set_dest(int(dest_id.removeprefix("d")), **cols)
    return db


def test_cascade_and_far_sync_are_named_with_the_destination_that_feeds_them():
    p = StandIn(version="11.2.0.4.0", role="PRIMARY", db_unique_name="PROD")
    p.set_dest(2, db_unique_name="STBY_B", transmit_mode="SYNCHRONOUS", affirm="YES")
    p.set_dest(3, db_unique_name="FS1", transmit_mode="SYNCHRONOUS", affirm="YES", type="FAR SYNC")
    dbs = {
        "p": p,
        "b": _standby(
            "STBY_B",
            d2={"db_unique_name": "STBY_C", "transmit_mode": "ASYNCHRONOUS", "affirm": "NO"},
            # back to the primary for after a switchover: not valid in the standby role now
            d4={"db_unique_name": "PROD", "valid_now": "WRONG VALID_ROLE"},
        ),
        "c": _standby("STBY_C"),
        "fs1": _standby(
            "FS1", d3={"db_unique_name": "STBY_D", "transmit_mode": "ASYNCHRONOUS", "affirm": "NO"}
        ),
        "d": _standby("STBY_D"),
    }
    roles = {"p": "primary"}
    cs = {h: _collector(db, roles.get(h, "standby")) for h, db in dbs.items()}
    try:
        frames = {h: _frame(h, c, roles.get(h, "standby")) for h, c in cs.items()}
    finally:
        for c in cs.values():
            c.close()
        for db in dbs.values():
            db.close()
    hosts = [HostConfig(name=h, far_sync=h == "fs1") for h in frames]
    topo = build(Config(hosts=hosts), frames)
    assert [(d.source, d.inst, d.hosts) for d in topo.onward] == [
        ("b", "dest_2", ("c",)),
        ("fs1", "dest_3", ("d",)),
    ]
    assert topo.upstream("c") == "cascaded from b (dest_2 ASYNC)"
    assert topo.upstream("d") == "behind far sync fs1 (dest_3 ASYNC)"
    assert topo.upstream("b") == "" and topo.upstream("fs1") == ""
    assert topo.places == {
        "b": "commit path",
        "c": "lag risk",
        "fs1": "commit path",
        "d": "lag risk",
    }
    assert topo.cascaded("c") and topo.cascaded("d") and not topo.cascaded("b")
    lines = topo.lines()
    assert (
        "b dest_2 STBY_C (stby_c): ASYNC, VALID -> c, by db_unique_name: onward, off the "
        "commit path"
    ) in lines
    assert "standby c: lag risk (cascaded from b (dest_2 ASYNC))" in lines
    assert "standby d: lag risk (behind far sync fs1 (dest_3 ASYNC))" in lines
    assert not any("PROD" in line and line.startswith("b ") for line in lines)


def test_a_standby_reads_its_destinations_once_every_n_ticks():
    db = _standby("STBY_B", d2={"db_unique_name": "STBY_C", "transmit_mode": "ASYNCHRONOUS"})
    s = Session(role="standby", connect=db.connect)
    c = OracleDgCollector({"session": s, "clock": Clock()})
    c.open()
    try:
        counts, seen = [], []
        for _ in range(ONWARD_EVERY + 1):
            before = s.statements
            rows = c.sample()
            counts.append(s.statements - before)
            seen.append("dest_2" in rows)
        assert all(seen), "the destination is repeated between reads"
        # the first sample also connects (version, instance, container): its reads start at 1
        assert counts[ONWARD_EVERY] == counts[1] + 1
        assert len(set(counts[1:ONWARD_EVERY])) == 1
    finally:
        c.close()
        db.close()

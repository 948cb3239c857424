"""Commits on no standby, counted from the primary's own rows: its destinations as the real
oracle_dg collector reads them from the stand-in, its V$SYSSTAT rates; and the sentences a DBA
reads of them and of the share of extra commit time explained."""

from __future__ import annotations

import pytest

from collectors.oracle.dg import OracleDgCollector
from sgmon.analysis.context import HostView
from sgmon.analysis.rules.exposure import _why
from sgmon.analysis.unprotected import Ledger
from sgmon.config import Config
from sgmon.fields import ORACLE_REDO
from sgmon.grading import Grader
from sgmon.model import CollectorResult, Frame, Status
from sgmon.oracle.session import Session
from sgmon.outcomes import Explained, Unprotected, fmt_bytes
from sgmon.sim.standin import StandIn
from sgmon.sinks.prometheus import FrameCollector
from sgmon.topology import build
from sgmon.verdicts import AnalysisState, Judgement

START = 1_800_000_000.0
COMMITS, REDO = 900.0, 4_700_000.0  # per second


def _frame(db: StandIn, t: float, commits: float | None = COMMITS) -> Frame:
    """The primary's frame at ``t``: one real oracle_dg sample, and its redo rates."""
    c = OracleDgCollector({"session": Session(role="primary", connect=db.connect)})
    c.open()
    try:
        dg = c.derive(None, c.sample(), 1.0)
    finally:
        c.close()
    redo = {ORACLE_REDO.user_commits.name: commits, ORACLE_REDO.redo_size.name: REDO}
    results = {
        "oracle_dg": CollectorResult(Status.OK, rows=dg),
        ORACLE_REDO.name: CollectorResult(Status.OK, rows={ORACLE_REDO.Rows.db.fixed: redo}),
    }
    return Frame("p", START + t, int(t), 1.0, results, (), "primary")


def _count(ledger: Ledger, frame: Frame) -> None:
    views = {"p": HostView("p", "primary", frame)}
    ledger.update(views, build(Config(), {"p": frame}))


def test_a_destination_in_error_counts_every_tick_until_it_is_back(primary):
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS")
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    assert ledger.now() == []
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", status="ERROR")
    for t in range(2, 6):
        _count(ledger, _frame(primary, t))
    _count(ledger, _frame(primary, 5))  # the same frame again counts once
    (u,) = ledger.now()
    assert (u.commits, u.redo_bytes, u.seconds) == (4 * COMMITS, 4 * REDO, 4.0)
    assert u.active and u.alone and u.since == START + 1 and u.target == "STBY"
    assert u.text() == "3,600 commits, 18.8 MB of redo on no standby for 4 s"
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS")
    _count(ledger, _frame(primary, 6))
    (u,) = ledger.now()
    assert not u.active and u.commits == 4 * COMMITS  # the totals stay for the report


def test_one_sync_standby_down_while_another_protects_is_not_alone(primary):
    primary.set_dest(2, db_unique_name="STBY_B", transmit_mode="SYNCHRONOUS", status="ERROR")
    primary.set_dest(3, db_unique_name="STBY_C", transmit_mode="SYNCHRONOUS")
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    (u,) = ledger.now()
    assert not u.alone and u.dest == "dest_2"
    assert u.text() == "900 commits, 4.7 MB of redo not on STBY_B for 1 s"


@pytest.mark.parametrize(
    ("dest", "db", "counted"),
    [
        ({"status": "DEFERRED"}, {}, True),  # switched off by hand: nothing protects
        ({}, {"protection_level": "RESYNCHRONIZATION"}, True),  # VALID, still catching up
        ({"valid_role": "STANDBY_ROLE", "status": "ERROR"}, {}, False),  # not in this role
        ({"transmit_mode": "ASYNCHRONOUS", "status": "ERROR"}, {}, False),  # never held commits
    ],
)
def test_what_counts_as_not_protecting(primary, dest, db, counted):
    primary.set_dest(2, db_unique_name="STBY", **{"transmit_mode": "SYNCHRONOUS", **dest})
    if db:
        primary.set_database(**db)
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    assert bool([u for u in ledger.now() if u.sync]) is counted


def test_unknown_commits_still_count_the_seconds(primary):
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", status="ERROR")
    ledger = Ledger()
    _count(ledger, _frame(primary, 1, commits=None))
    (u,) = ledger.now()
    assert (u.commits, u.seconds) == (0.0, 1.0)


def test_a_hang_as_long_as_net_timeout_before_the_error_is_in_the_span(primary):
    """Thirty seconds in which no commit completed, then the destination in error: LGWR waited
    out NET_TIMEOUT (30 s), and those seconds were unprotected too."""
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", net_timeout=30)
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    for t in range(2, 32):
        _count(ledger, _frame(primary, t, commits=0.0))
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", status="ERROR")
    _count(ledger, _frame(primary, 32, commits=3 * COMMITS))
    (u,) = ledger.now()
    assert (u.hung, u.seconds, u.since) == (30.0, 31.0, START + 1)
    assert u.commits == 3 * COMMITS  # the hung commits complete after, unprotected
    assert u.text().endswith(" for 31 s, 30 of them hung waiting on the standby")
    assert "for the destination's whole NET_TIMEOUT before marking it failed" in " ".join(_why(u))


@pytest.mark.parametrize("quiet", [5, 60])
def test_a_quiet_spell_not_net_timeout_long_is_no_hang(primary, quiet):
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", net_timeout=30)
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    for t in range(2, 2 + quiet):
        _count(ledger, _frame(primary, t, commits=0.0))
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", status="ERROR")
    _count(ledger, _frame(primary, 2 + quiet))
    (u,) = ledger.now()
    assert (u.hung, u.seconds) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("stall", "error", "hung"),
    [
        (5, "ORA-03135: connection lost contact", 5.0),  # a reset cut the hang short
        (5, "ORA-16198: Timeout incurred on internal channel during remote archival", 0.0),
        (60, "ORA-03113: end-of-file on communication channel", 0.0),  # longer than NET_TIMEOUT
    ],
)
def test_a_hang_a_lost_connection_cut_short_is_in_the_span(primary, stall, error, hung):
    """Commits stopped, then the destination in error with its connection lost before
    NET_TIMEOUT: the standby's host answered the retransmission with a reset, and the seconds
    LGWR waited until then were unprotected too."""
    primary.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", net_timeout=30)
    ledger = Ledger()
    _count(ledger, _frame(primary, 1))
    for t in range(2, 2 + stall):
        _count(ledger, _frame(primary, t, commits=0.0))
    primary.set_dest(
        2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", status="ERROR", error=error
    )
    _count(ledger, _frame(primary, 2 + stall))
    (u,) = ledger.now()
    assert (u.hung, u.seconds) == (hung, hung + 1.0)
    assert u.cut_by == (error if hung else "")
    if hung:  # the finding says what ended the wait
        assert f"until its connection was reset ({error}), before" in " ".join(_why(u))


def _far_sync(onward: str | None) -> tuple[StandIn, StandIn]:
    """A primary shipping SYNC to far sync FS1, which forwards ASYNC to STBY (status
    ``onward``; None: no destination at all)."""
    p = StandIn(db_unique_name="PROD")
    p.set_dest(2, db_unique_name="FS1", transmit_mode="SYNCHRONOUS", type="FAR SYNC")
    fs = StandIn(role="FAR SYNC", db_unique_name="FS1")
    if onward is not None:
        fs.set_dest(3, db_unique_name="STBY", transmit_mode="ASYNCHRONOUS", status=onward,
                    valid_role="STANDBY_ROLE")  # fmt: skip
    return p, fs


def _far_sync_frame(db: StandIn) -> Frame:
    c = OracleDgCollector({"session": Session(role="standby", connect=db.connect)})
    c.open()
    try:
        dg = c.derive(None, c.sample(), 1.0)
    finally:
        c.close()
    return Frame("fs", START + 1, 1, 1.0, {"oracle_dg": CollectorResult(Status.OK, rows=dg)})


@pytest.mark.parametrize(
    ("onward", "counted"), [("ERROR", True), ("DEFERRED", True), ("VALID", False), (None, False)]
)
def test_a_far_sync_forwarding_to_no_standby_leaves_the_commits_on_none(onward, counted):
    p, fs = _far_sync(onward)
    try:
        pf, ff = _frame(p, 1), _far_sync_frame(fs)
        views = {"p": HostView("p", "primary", pf), "fs": HostView("fs", "standby", ff)}
        ledger = Ledger()
        ledger.update(views, build(Config(), {"p": pf, "fs": ff}))
    finally:
        p.close()
        fs.close()
    got = [u for u in ledger.now() if u.sync]
    assert bool(got) is counted
    if counted:
        (u,) = got
        assert (u.dest, u.target, u.commits) == ("dest_2", "FS1", COMMITS)
        assert u.relay == f"dest_3 of far sync FS1 to STBY: {onward}"
        assert u.text() == (
            f"900 commits, 4.7 MB of redo on no standby for 1 s (held by the far sync alone: "
            f"dest_3 of far sync FS1 to STBY: {onward})"
        )


def test_a_far_sync_reads_its_destinations_every_tick():
    """A cascading standby's are read every 30 ticks; a far sync's failing is the moment the
    commits it acknowledges are on no standby, so it is read every tick."""
    _, fs = _far_sync("VALID")
    c = OracleDgCollector({"session": Session(role="standby", connect=fs.connect)})
    c.open()
    try:
        c.sample()
        fs.set_dest(3, db_unique_name="STBY", transmit_mode="ASYNCHRONOUS", status="ERROR")
        assert c.sample()["dest_3"]["status"] == "ERROR"
    finally:
        c.close()
        fs.close()


def test_the_sentences():
    a = Unprotected("p", "dest_3", "STBY_A", "ASYNC", 0.0, 12_300_000.0, 36.0, True, START)
    assert a.text() == "12.3 MB of redo not yet received by STBY_A (transport lag 36 s)"
    assert a.to_dict()["redo_bytes"] == 12_300_000
    assert [fmt_bytes(n) for n in (512, 1500, 2e9)] == ["512 B", "1.5 kB", "2.0 GB"]
    e = Explained("p", START, 14.8, 0.94, (("standby disk", 0.81), ("network", 0.13)), ())
    assert e.text() == (
        "94 % of the extra commit time is explained by: standby disk 81 %, network 13 %"
    )
    unclear = Explained("p", START, 7.4, 0.0, (), (), "LGWR overhead rose (98 % of it)")
    assert unclear.unclear
    assert unclear.text() == (
        "cause unclear: 7.40 ms of extra commit time; LGWR overhead rose (98 % of it)"
    )
    some = Explained("p", START, 10.0, 0.3, (("network", 0.3),), (), "the rest")
    assert some.text() == (
        "cause unclear: 10 ms of extra commit time, 30 % explained (network 30 %); the rest"
    )


def test_the_exporter_counts_the_hung_seconds_apart() -> None:
    """A scrape after a NET_TIMEOUT hang: the seconds on no standby, and those of them the
    commits hung, each a counter of its own (a dashboard tells a hang from an outage)."""
    u = Unprotected("prim1", "dest_2", "STBY", "SYNC", 27318, 1.4e8, 60.0, True, hung=30.0)
    prom = FrameCollector(lambda host: {})
    frame = Frame("prim1", 1.8e9, 1, 1.0, {})
    prom(frame, Judgement(frame, Grader(), AnalysisState(1.8e9, unprotected=[u])))
    got = {
        s.name: (s.labels["dest"], s.value)
        for m in prom.collect()
        for s in m.samples
        if s.name.startswith("sgmon_unprotected_")
    }
    assert got == {
        "sgmon_unprotected_commits_total": ("dest_2", 27318),
        "sgmon_unprotected_redo_bytes_total": ("dest_2", 1.4e8),
        "sgmon_unprotected_seconds_total": ("dest_2", 60.0),
        "sgmon_unprotected_hung_seconds_total": ("dest_2", 30.0),
    }

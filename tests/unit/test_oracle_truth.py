"""What real databases do in the outages sgmon is for, served by the stand-in as they do it.

A standby whose transport stopped shows a NULL transport lag (DGMGRL: "Transport Lag:
(unknown)"), not a growing one, and a DATUM_TIME that stops moving (Oracle Database Reference,
V$DATAGUARD_STATS); redo apply can stop (no MRP0, or MRP0 not APPLYING_LOG); logs can go
missing (V$ARCHIVE_GAP); a failover or flashback opens RESETLOGS and sequences start again at 1.
Each behaviour runs through the real oracle_dg collector's SQL against the stand-in, and the
state reaches the analysis as a finding that says what happened.
"""

from __future__ import annotations

import time

import pytest

from collectors.oracle.dg import OracleDgCollector
from sgmon.analysis import Analyzer
from sgmon.model import CollectorResult, Frame, Status
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn

T0 = 1_800_000_000.0


def _dg(version: str = "19.21.0.0.0", role: str = "PHYSICAL STANDBY"):
    db = StandIn(version=version, role=role, db_unique_name="STBY")
    c = OracleDgCollector({"session": Session(connect=db.connect)})
    c.open()
    return db, c


def _stamp(t: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(t))


def _findings(db: StandIn, c: OracleDgCollector, step, ticks: int = 8) -> list:
    """Feed ``ticks`` frames of the standby's oracle_dg rows to the analysis; ``step(i)`` sets
    the stand-in's state before tick i.  Returns the findings opened."""
    analyzer = Analyzer()
    prev = None
    opened = []
    for i in range(ticks):
        step(i)
        raw = c.sample()
        rows = c.derive(prev, raw, 1.0)
        prev = raw
        res = {"oracle_dg": CollectorResult(Status.OK, rows)}
        analyzer.feed(Frame("stby", T0 + i, i, 1.0, res, role="standby"))
        opened += analyzer.changes()[0]
    return opened


def test_a_null_transport_lag_is_unknown_and_an_alarm() -> None:
    db, c = _dg()

    def step(i: int) -> None:
        now = T0 + i
        # healthy for 3 ticks, then transport stops: VALUE goes NULL, the datum stays put
        lag = 0.0 if i < 3 else None
        db.set_dg_stats(lag, 0.0, datum_time=_stamp(min(now, T0 + 2)), computed=_stamp(now))

    found = _findings(db, c, step)
    row = c.derive(None, c.sample(), 1.0)["db"]
    assert row["transport_lag"] is None and row["lag_unknown"] == 1
    dg = [f for f in found if f.rule == "dg_state"]
    assert dg, found
    assert dg[0].severity == "crit"
    assert "receives no redo" in dg[0].title and "unknown" in dg[0].title


def test_a_datum_that_stops_moving_is_an_alarm_though_the_lag_reads_zero() -> None:
    db, c = _dg()

    def step(i: int) -> None:
        # the lag keeps reading 0 but its datum froze at T0: nothing has arrived since
        db.set_dg_stats(0.0, 0.0, datum_time=_stamp(T0), computed=_stamp(T0 + 70 * i))

    found = _findings(db, c, step)
    row = c.derive(None, c.sample(), 1.0)["db"]
    assert row["datum_age"] == 70 * 7
    dg = [f for f in found if f.rule == "dg_state"]
    assert dg and "receives no redo" in dg[0].title and "DATUM_TIME" in " ".join(dg[0].evidence)


def test_datum_age_reads_the_stamp_formats_oracle_prints() -> None:
    from collectors.oracle.dg import datum_age

    assert datum_age("11/24/2026 10:00:30", "11/24/2026 10:00:00") == 30.0
    assert datum_age("24-JUL-2007 15:31:13", "24-JUL-2007 15:31:03") == 10.0  # 10.2's format
    assert datum_age("", "11/24/2026 10:00:00") is None


@pytest.mark.parametrize("version", ["11.2.0.4.0", "19.21.0.0.0"])
@pytest.mark.parametrize(("state", "severity"), [(None, "crit"), ("WAIT_FOR_GAP", "crit")])
def test_redo_apply_not_running_is_a_finding(version: str, state, severity: str) -> None:
    """MRP0 from V$MANAGED_STANDBY before 12.2, V$DATAGUARD_PROCESS after."""
    db, c = _dg(version)
    assert c.derive(None, c.sample(), 1.0)["db"]["apply_state"] == "APPLYING_LOG"

    def step(i: int) -> None:
        db.set_dg_stats(0.0, 0.0)
        db.set_apply("APPLYING_LOG" if i < 3 else state)

    found = [f for f in _findings(db, c, step) if f.rule == "dg_state"]
    assert found and found[0].severity == severity
    assert "redo apply" in found[0].title


def test_an_archive_gap_is_critical() -> None:
    db, c = _dg()

    def step(i: int) -> None:
        db.set_gap([(1, 120, 125)] if i >= 2 else [])

    found = [f for f in _findings(db, c, step) if f.rule == "dg_state"]
    assert found and found[0].severity == "crit" and "1:120-125" in found[0].title


def test_log_switches_survive_resetlogs() -> None:
    """After OPEN RESETLOGS the old incarnation's history stays; sequences restart at 1."""
    db, c = _dg(role="PRIMARY")
    for _ in range(50):
        db.log_switch(1)
    first = c.sample()
    db.resetlogs()
    db.log_switch(1)
    second = c.sample()
    assert second["thread_1"]["sequence"] == 1  # not 50: the current incarnation only
    for _ in range(3):
        db.log_switch(1)
    third = c.sample()
    assert c.derive(second, third, 1.0)["thread_1"]["log_switches"] == 3
    assert c.derive(first, second, 1.0)["thread_1"]["log_switches"] is None  # the reset itself


def test_a_connect_that_hangs_is_bounded_and_holds_no_lock() -> None:
    """A standby that accepts TCP and never answers (python-oracledb's tcp_connect_timeout does
    not cover it) must not hold the session's lock, nor a caller past the connect timeout."""
    import threading

    from sgmon.oracle.errors import OracleError
    from sgmon.oracle.session import Session

    release = threading.Event()
    closed = threading.Event()

    class Late:
        def close(self) -> None:
            closed.set()

    def hang() -> Late:
        release.wait(30)
        return Late()

    s = Session(connect=hang)
    s.connect_timeout = 1.0
    errors: list[str] = []

    def call() -> None:
        try:
            s.query("database")
        except OracleError as e:
            errors.append(str(e))

    caller = threading.Thread(target=call, daemon=True)
    notes = threading.Thread(target=s.take_notes, daemon=True)  # takes the session's lock
    try:
        caller.start()
        notes.start()
        notes.join(0.8)
        assert not notes.is_alive(), "the lock was held while connecting"
        caller.join(10)
        assert not caller.is_alive() and errors and "no answer to the connect" in errors[0]
    finally:
        release.set()
    assert closed.wait(10)  # the connection that came too late is closed, not leaked


def test_thick_mode_dsns_carry_their_own_connect_timeouts() -> None:
    from sgmon.oracle.session import timed_dsn

    assert timed_dsn("stby1:1521/PRODSTBY", 5) == (
        "stby1:1521/PRODSTBY?connect_timeout=5&transport_connect_timeout=5"
    )
    assert timed_dsn("h/S?expire_time=1", 4).endswith(
        "&connect_timeout=4&transport_connect_timeout=4"
    )
    desc = (
        "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=h)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=S)))"
    )
    assert timed_dsn(desc, 3).startswith(
        "(DESCRIPTION=(CONNECT_TIMEOUT=3)(TRANSPORT_CONNECT_TIMEOUT=3)(ADDRESS="
    )
    assert timed_dsn("PRODSTBY", 3) == "PRODSTBY"  # a TNS alias: its tnsnames.ora decides
    assert timed_dsn("h/S?connect_timeout=9", 3) == "h/S?connect_timeout=9"


@pytest.mark.parametrize(("container", "refused"), [((3, "PDB1"), True), ((1, "CDB$ROOT"), False)])
def test_a_session_in_a_pdb_is_refused_with_what_to_do(container, refused: bool) -> None:
    from sgmon.oracle.errors import OracleError
    from sgmon.oracle.session import Session

    db = StandIn(version="19.21.0.0.0", container=container)
    s = Session(connect=db.connect)
    if not refused:
        assert s.query("database")
        return
    with pytest.raises(OracleError) as e:
        s.query("database")
    assert e.value.fatal and "pluggable database PDB1" in str(e.value) and "CDB$ROOT" in str(e)
    assert "\n" not in str(e.value)
    with pytest.raises(OracleError):  # fatal: no reconnect loop
        s.query("database")


def _primary_frames(ticks: int, rows_at) -> list:
    """Findings over primary frames whose oracle_* rows ``rows_at(i)`` gives."""
    analyzer = Analyzer()
    opened = []
    for i in range(ticks):
        res = {c: CollectorResult(Status.OK, rows) for c, rows in rows_at(i).items()}
        analyzer.feed(Frame("prim", T0 + i, i, 1.0, res, role="primary"))
        opened += analyzer.changes()[0]
    return opened


@pytest.mark.parametrize(
    ("event", "says"),
    [
        ("log file switch (checkpoint incomplete)", "too few or too small redo logs"),
        ("log file switch (archiving needed)", "archiver"),
        ("log buffer space", "LGWR does not free the log buffer"),
    ],
)
def test_sessions_stalled_on_log_space_are_named_for_what_holds_them(event: str, says: str):
    def rows(i: int) -> dict:
        spent = 250.0 if i >= 4 else 0.0
        return {"oracle_waits": {event: {"waits": 5.0, "time_waited": spent, "avg": 50.0}}}

    found = [f for f in _primary_frames(8, rows) if f.rule == "log_space"]
    assert found and found[0].severity == "warn" and event in found[0].title
    assert any(says in e for e in found[0].evidence)


def test_commits_that_poll_are_adaptive_sync_from_the_statistics_alone() -> None:
    """No LGWR trace configured: V$SYSSTAT's redo synch polls say the foregrounds poll."""

    def rows(i: int) -> dict:
        lfs = 2.0 if i < 30 else 12.0
        waits = {
            "log file sync": {"waits": 900.0, "avg": lfs, "p90": lfs, "p99": lfs * 2},
            "SYNC Remote Write": {"waits": 700.0, "avg": 0.8, "p90": 1.0, "p99": 2.0},
            "log file parallel write": {"waits": 700.0, "avg": 0.5, "p90": 1.0, "p99": 1.0},
        }
        redo = {"db": {"redo_synch_polls": 850.0 if i >= 30 else 0.0, "user_commits": 900.0}}
        return {"oracle_waits": waits, "oracle_redo": redo}

    found = [f for f in _primary_frames(40, rows) if f.rule == "adaptive_sync"]
    assert found and any("redo synch polls 850/s" in e for e in found[0].evidence)


@pytest.mark.parametrize("version", ["11.2.0.4.0", "19.21.0.0.0"])
def test_redo_synch_polls_and_overhead_from_v_sysstat(version: str) -> None:
    from collectors.oracle.redo import OracleRedoCollector

    db = StandIn(version=version)
    c = OracleRedoCollector({"session": Session(connect=db.connect)})
    c.open()
    base = {"redo synch writes": 1000, "redo synch polls": 0, "redo synch poll writes": 0}
    db.publish_stats({**base, "redo synch time overhead (usec)": 0})
    first = c.sample()
    db.publish_stats(
        {
            "redo synch writes": 1600,
            "redo synch polls": 480,
            "redo synch poll writes": 300,
            "redo synch time overhead (usec)": 90_000,
        }
    )
    row = c.derive(first, c.sample(), 2.0)["db"]
    assert row["redo_synch_polls"] == 240.0 and row["redo_synch_poll_writes"] == 150.0
    if version.startswith("11"):
        assert row["redo_synch_overhead"] is None  # no (usec) statistics before 12.1
    else:
        assert row["redo_synch_overhead"] == 0.15  # 90 ms over 600 commit waits


def test_broadcast_ack_time_is_per_redo_write_in_ms() -> None:
    """RAC's 'redo write broadcast ack time' (microseconds, beyond the write) per redo write."""
    from collectors.oracle.redo import OracleRedoCollector

    db = StandIn()
    c = OracleRedoCollector({"session": Session(connect=db.connect)})
    c.open()
    db.publish_stats({"redo writes": 5000, "redo write broadcast ack time": 1_000_000})
    first = c.sample()
    db.publish_stats({"redo writes": 5800, "redo write broadcast ack time": 5_800_000})
    row = c.derive(first, c.sample(), 1.0)["db"]
    assert row["redo_bcast_ack"] == 6.0  # 4.8 s of acks over 800 writes


def test_a_long_call_timeout_does_not_stretch_the_connect() -> None:
    """An AWR import's call timeout (60 s and more) made a listener that accepts and never
    answers cost 120 s before one line said so; the connect is bounded on its own."""
    from sgmon.config import DbConfig
    from sgmon.oracle.session import CONNECT_MAX, CONNECT_TIMEOUT, Session

    def s(call: float) -> float:
        return Session(DbConfig(dsn="h/S", user="u", call_timeout=call)).connect_timeout

    assert s(2.0) == CONNECT_TIMEOUT and s(4.0) == 8.0
    assert s(60.0) == s(600.0) == CONNECT_MAX <= 20.0

"""A trace read ``from_start``: its slow writes count in the first interval that has a delta
(the first recorded tick), and the analysis names them, with the times the trace gives.

Before, the backlog was read in the engine's priming tick, which is the counters' base and is
never emitted: a trace with 144 slow writes up to 1.9 s recorded 144 events, 0 in every tick's
row and no finding.  The excerpt is written in the shape of a 19c LGWR trace of a CDB (header,
``*** <ISO stamp with offset> (CDB$ROOT(1))`` lines, ``Warning: log write elapsed time``), as in
the 12.2 LG00 trace of tests/data/traces and the public lgwr-trace-parse material.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from collectors.oracle.trace import OracleTraceCollector
from sgmon.analysis import Analyzer
from sgmon.model import CollectorResult, Event, Frame, Rows, Status

HEADER = """\
Trace file /u01/app/oracle/diag/rdbms/prod_a/PROD1/trace/PROD1_lgwr_48213.trc
Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production
Version 19.21.0.0.0
Build label:    RDBMS_19.21.0.0.0DBRU_LINUX.X64_230930
ORACLE_HOME:    /u01/app/oracle/product/19.0.0/dbhome_1
System name:\tLinux
Node name:\tprim1
Release:\t5.4.17-2136.324.5.3.el8uek.x86_64
Version:\t#2 SMP Wed Sep 27 16:43:47 PDT 2023
Machine:\tx86_64
Instance name: PROD1
Redo thread mounted by this instance: 1
Oracle process number: 22
Unix process pid: 48213, image: oracle@prim1 (LGWR)


*** 2026-11-20T08:16:00.800213-06:00 (CDB$ROOT(1))
*** SESSION ID:(1521.46386) 2026-11-20T08:16:00.800261-06:00
*** CLIENT ID:() 2026-11-20T08:16:00.800266-06:00
*** SERVICE NAME:(SYS$BACKGROUND) 2026-11-20T08:16:00.800270-06:00
*** MODULE NAME:() 2026-11-20T08:16:00.800275-06:00
*** ACTION NAME:() 2026-11-20T08:16:00.800279-06:00
*** CLIENT DRIVER:() 2026-11-20T08:16:00.800283-06:00
*** CONTAINER ID:(1) 2026-11-20T08:16:00.800288-06:00

"""
WRITES = [(1, 612, 4), (3, 1900, 4), (4, 845, 212), (7, 530, 18), (9, 1204, 4)]
"""(seconds after 08:16:00, ms, KB) of each warning."""


def _trace(writes: list[tuple[int, int, int]]) -> str:
    body = "".join(
        f"\n*** 2026-11-20T08:16:{s:02d}.114502-06:00 (CDB$ROOT(1))\n"
        f"Warning: log write elapsed time {ms}ms, size {kb}KB\n"
        for s, ms, kb in writes
    )
    return HEADER + body


def _at(second: int) -> float:
    tz = _dt.timezone(_dt.timedelta(hours=-6))
    return _dt.datetime(2026, 11, 20, 8, 16, second, 114502, tzinfo=tz).timestamp()


def _first_tick(tmp_path: Path, text: str) -> tuple[Rows, list[Event]]:
    """The collector as the engine runs it: the priming sample (the counters' base), then the
    first tick, derived against it; the events of both, as the engine carries them."""
    trc = tmp_path / "PROD1_lgwr_48213.trc"
    trc.write_text(text)
    c = OracleTraceCollector({"lgwr": str(trc), "from_start": True, "timezone": "UTC"})
    c.open()
    try:
        base = c.sample()
        second = c.sample()
        return c.derive(base, second, 1.0), c.take_events()
    finally:
        c.close()


def test_the_backlog_counts_in_the_first_recorded_tick(tmp_path: Path) -> None:
    rows, events = _first_tick(tmp_path, _trace(WRITES))
    assert rows["lgwr"]["slow_writes"] == len(WRITES)
    assert rows["lgwr"]["max_write"] == 1900
    slow = [e for e in events if e.kind == "lgwr_slow_write"]
    assert [e.value for e in slow] == [ms for _, ms, _ in WRITES]
    assert [e.time for e in slow] == [pytest.approx(_at(s)) for s, _, _ in WRITES]


def test_a_later_tick_counts_only_its_own_writes(tmp_path: Path) -> None:
    trc = tmp_path / "PROD1_lgwr_48213.trc"
    trc.write_text(_trace(WRITES))
    c = OracleTraceCollector({"lgwr": str(trc), "from_start": True, "timezone": "UTC"})
    c.open()
    try:
        base = c.sample()
        first = c.sample()
        with trc.open("a") as f:
            f.write("\n*** 2026-11-20T08:17:02.000000-06:00 (CDB$ROOT(1))\n")
            f.write("Warning: log write elapsed time 702ms, size 8KB\n")
        row = c.derive(first, c.sample(), 1.0)["lgwr"]
        assert c.derive(base, first, 1.0)["lgwr"]["slow_writes"] == len(WRITES)
    finally:
        c.close()
    assert (row["slow_writes"], row["max_write"]) == (1, 702)


DAY_AFTER = _at(9) + 86400.0
"""When the backlog is read: the day after the incident."""
CALM_WAITS: Rows = {"log file sync": {"avg": 1.1, "p99": 4.0, "waits": 900.0}}
"""The database's log file sync read now, in line: the incident is over."""


def _frame(rows: Rows, events: list[Event], t: float, waits: Rows | None = None) -> Frame:
    collectors = {"oracle_trace": CollectorResult(Status.OK, rows=rows)}
    if waits is not None:
        collectors["oracle_waits"] = CollectorResult(Status.OK, rows=waits)
    return Frame(
        host="prim1",
        time=t,
        seq=1,
        interval=1.0,
        role="primary",
        collectors=collectors,
        events=tuple(events),
    )


def _found(frame: Frame) -> list:
    a = Analyzer()
    a.feed(frame)
    return [f for f in a.state().findings if f.rule == "lgwr_slow_writes"]


def test_the_analysis_names_the_backlog_with_the_traces_own_times(tmp_path: Path) -> None:
    rows, events = _first_tick(tmp_path, _trace(WRITES))
    found = _found(_frame(rows, events, DAY_AFTER))
    assert len(found) == 1
    f = found[0]
    assert f.severity == "crit"  # 1.9 s: over the 500 ms Oracle warns from by default
    assert f.title == (  # read the day after: the title says when they were
        "LGWR log write 1900 ms (prim1): 5 slow log writes in the LGWR trace, traced "
        "2026-11-20 14:16:01 to 14:16:09 UTC"
    )
    assert "at 2026-11-20 14:16:03 UTC" in f.evidence[0]
    assert "trace times 2026-11-20 14:16:01 to 2026-11-20 14:16:09 UTC" in f.evidence[0]


def test_writes_under_the_limit_make_no_finding(tmp_path: Path) -> None:
    """A lowered _long_log_write_warning_threshold prints 60 ms writes: under the 100 ms limit
    of the longest write, no finding (the events and the counts stay)."""
    rows, events = _first_tick(tmp_path, _trace([(1, 60, 4), (2, 75, 4)]))
    assert rows["lgwr"]["slow_writes"] == 2
    assert not _found(_frame(rows, events, DAY_AFTER))


def test_a_past_incident_is_named_beside_the_database_s_calm_waits_of_now(
    tmp_path: Path,
) -> None:
    """Logged in, the waits read now are today's and in line: the backlog of yesterday is
    still named, as nothing else can speak for it."""
    rows, events = _first_tick(tmp_path, _trace(WRITES))
    assert len(_found(_frame(rows, events, DAY_AFTER, CALM_WAITS))) == 1


def test_writes_of_now_beside_the_database_s_waits_are_left_to_the_commit_chain(
    tmp_path: Path,
) -> None:
    """Writes of this very tick while the waits are read: the commit chain opens once log file
    sync has moved for more than a blip and names the cause; a finding of the trace's own for
    the same seconds would be the same fault twice."""
    rows, events = _first_tick(tmp_path, _trace(WRITES))
    assert not _found(_frame(rows, events, _at(9) + 1.0, CALM_WAITS))
    (alone,) = _found(_frame(rows, events, _at(9) + 1.0))  # no login: the trace alone speaks
    assert alone.title.endswith("5 slow log writes in the LGWR trace")  # of now: no date

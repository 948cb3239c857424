"""``NSS2 is not running anymore.`` in the LGWR trace: a redo transport process died.

Before, the line was skipped like any line the reader does not know.  The excerpts are written
in the shape of a 19c LGWR trace (``*** <ISO stamp> (CDB$ROOT(1))``) and of an 11.2 one
(offset-less stamps, ``LNS1``); the hostile variants cut the line, bury it in a huge one and
wrap it in binary bytes.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from collectors.oracle.trace import OracleTraceCollector
from sgmon.analysis import Analyzer
from sgmon.model import CollectorResult, Event, Frame, Status

V19 = b"""\
Trace file /u01/app/oracle/diag/rdbms/prod_a/PROD1/trace/PROD1_lgwr_48213.trc
Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - Production
Version 19.21.0.0.0
Unix process pid: 48213, image: oracle@prim1 (LGWR)


*** 2026-11-20T08:16:00.800213-06:00 (CDB$ROOT(1))
Warning: log write elapsed time 1900ms, size 4KB

*** 2026-11-20T08:16:31.002717-06:00 (CDB$ROOT(1))
NSS2 is not running anymore.
"""
V11 = b"""\
Trace file /u01/app/oracle/diag/rdbms/prod/PROD/trace/PROD_lgwr_17884.trc
Oracle Database 11g Enterprise Edition Release 11.2.0.4.0 - 64bit Production
Unix process pid: 17884, image: oracle@prim1 (LGWR)

*** 2015-03-10 14:09:08.402
LNS1 is not running anymore.
"""


def _events(tmp_path: Path, data: bytes) -> list[Event]:
    trc = tmp_path / "PROD1_lgwr_48213.trc"
    trc.write_bytes(data)
    c = OracleTraceCollector({"lgwr": str(trc), "from_start": True, "timezone": "UTC"})
    c.open()
    try:
        c.sample()
        c.sample()
        return [e for e in c.take_events() if e.kind == "transport_stopped"]
    finally:
        c.close()


def test_19c_nss_line_is_an_event_at_the_traces_time(tmp_path: Path) -> None:
    (e,) = _events(tmp_path, V19)
    assert e.text == "NSS2 is not running anymore"
    when = _dt.datetime.fromisoformat("2026-11-20T08:16:31.002717-06:00").timestamp()
    assert e.time == pytest.approx(when)


def test_11_2_lns_line_is_an_event_in_the_instances_zone(tmp_path: Path) -> None:
    (e,) = _events(tmp_path, V11)
    assert e.text == "LNS1 is not running anymore"
    assert e.time == pytest.approx(_dt.datetime(2015, 3, 10, 14, 9, 8, 402000, _dt.UTC).timestamp())


def test_a_cut_line_is_no_event(tmp_path: Path) -> None:
    assert _events(tmp_path, V19.replace(b"is not running anymore.", b"is not runn")) == []


def test_a_huge_line_and_binary_bytes_cost_their_line_only(tmp_path: Path) -> None:
    """Half a megabyte of damage on the line before, NUL and invalid UTF-8 around the line:
    read as the one event it is, nothing else taken for one."""
    junk = b"\x00\xff\xfe" * 170_000 + b"NSS3 is not run\n"
    data = V19.replace(b"NSS2 is not running anymore.", b"\xff\x00NSS2 is not running anymore.\xc3")
    got = _events(tmp_path, junk + data)
    assert [e.text for e in got] == ["NSS2 is not running anymore"]


@pytest.mark.parametrize("name", [b"ARC2", b"xNSS2", b"NSS2222"])
def test_a_name_that_is_not_a_transport_process_is_not_taken(tmp_path: Path, name: bytes) -> None:
    assert _events(tmp_path, V19.replace(b"NSS2 is not", name + b" is not")) == []


def test_the_finding_names_the_process_and_the_traces_time(tmp_path: Path) -> None:
    events = _events(tmp_path, V19)
    frame = Frame(
        host="prim1",
        time=events[0].time + 86400.0,
        seq=1,
        interval=1.0,
        role="primary",
        collectors={"oracle_trace": CollectorResult(Status.OK, rows={"lgwr": {}})},
        events=tuple(events),
    )
    a = Analyzer()
    a.feed(frame)
    (f,) = [f for f in a.state().findings if f.rule == "transport_stopped"]
    assert f.title == (  # read a day later: the title says when it was
        "NSS2 stopped (prim1): a redo transport process died (LGWR trace), traced "
        "2026-11-20 14:16:31 UTC"
    )
    assert f.severity == "warn"
    assert "at 2026-11-20 14:16:31 UTC" in f.evidence[0]


def test_the_dashboard_lists_it_among_the_data_guard_events(tmp_path: Path) -> None:
    from sgmon.tui.panels.dataguard import EVENT_KINDS

    assert [e.kind for e in _events(tmp_path, V19)] == ["transport_stopped"]
    assert "transport_stopped" in EVENT_KINDS

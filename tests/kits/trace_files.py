"""What the unit and the system tests of trace files share."""

from __future__ import annotations

import datetime as _dt
import time
import zoneinfo
from pathlib import Path

import pytest
from paths import DATA as TEST_DATA

from collectors.oracle.trace import OracleTraceCollector
from sgmon.model import Event

DATA = TEST_DATA / "traces"


V11 = DATA / "oravm1_lgwr_17884.trc"


@pytest.fixture
def other_tz(monkeypatch):
    """sgmon itself runs in a zone unlike any trace's."""
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _read_whole(path: Path, **opts: object) -> tuple[OracleTraceCollector, list[Event]]:
    c = OracleTraceCollector({"lgwr": str(path), "from_start": True, **opts})
    c.open()
    c.sample()
    return c, c.take_events()


def _epoch(text: str, zone: str) -> float:
    t = _dt.datetime.fromisoformat(text).replace(tzinfo=zoneinfo.ZoneInfo(zone))
    return t.timestamp()

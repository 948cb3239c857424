"""What the unit and the system tests of import awr share."""

from __future__ import annotations

from sgmon.importers.awr import Window, import_awr
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn

T0 = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC


def _import(db: StandIn, start: float, end: float, **kw: object) -> tuple:
    s = Session(connect=db.connect)
    imp = import_awr(s, Window(start, end, **kw))  # type: ignore[arg-type]
    return imp, s

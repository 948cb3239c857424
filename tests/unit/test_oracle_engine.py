"""The database collectors under the real engine: one shared session per database, one
statement handful per tick, whatever thread each collector samples on."""

from __future__ import annotations

from collectors.oracle.dg import OracleDgCollector
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.trace import OracleTraceCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.engine import Engine
from sgmon.model import Status
from sgmon.oracle.session import _shared
from sgmon.sim.standin import StandIn


def test_engine_collectors_share_one_session_and_close_it():
    db = StandIn(version="19.21.0.0.0")
    opts = {"connect": db.connect, "role": "primary"}
    cs = [cls(dict(opts)) for cls in (OracleWaitsCollector, OracleRedoCollector, OracleDgCollector)]
    engine = Engine(cs, interval=1.0, host="prim1", role="primary")
    try:
        db.add_waits("log file sync", [800.0] * 10)
        engine.tick()
        db.add_waits("log file sync", [800.0] * 30)
        db.log_switch(1)
        db.log_switch(1)
        frame = engine.tick()
        sessions = {id(c.session) for c in cs}
        assert len(sessions) == 1
        session = cs[0].session
        assert session is not None
        for name in ("oracle_waits", "oracle_redo", "oracle_dg"):
            assert frame.collectors[name].status is Status.OK, frame.collectors[name].error
        assert frame.value("oracle_waits", "log file sync", "waits") > 0
        assert frame.value("oracle_dg", "db", "role") == "primary"
        # a fixed handful per tick: startup check, events, histogram, sysstat, database,
        # destinations, response histogram, log history (+1 identify on the first tick)
        assert 8 <= session.statements / 2 <= 10
    finally:
        engine.close()
    assert not _shared  # the last collector out closed the session


def test_not_enabled_without_a_database():
    for cls in (OracleWaitsCollector, OracleRedoCollector, OracleDgCollector, OracleTraceCollector):
        assert cls.default_enabled is False
    engine = Engine([OracleWaitsCollector({})], interval=1.0)
    try:
        res = engine.tick().collectors["oracle_waits"]
    finally:
        engine.close()
    assert res.status is Status.UNAVAILABLE and "[host.db]" in (res.error or "")

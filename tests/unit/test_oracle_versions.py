"""Version selection: each query's text per version, run against a stand-in with that version's
column set, and every statement parsed as Oracle SQL."""

from __future__ import annotations

import pytest
import sqlglot

from collectors.oracle.dg import OracleDgCollector
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.oracle import queries
from sgmon.oracle.session import Session
from sgmon.sim.standin import StandIn

VERSIONS = ["11.2.0.4.0", "12.1.0.2.0", "19.21.0.0.0", "23.5.0.24.7"]


def _pair(version: str, role: str = "PRIMARY"):
    db = StandIn(version=version, role=role)
    s = Session(connect=db.connect)
    cs = [c({"session": s}) for c in (OracleWaitsCollector, OracleRedoCollector, OracleDgCollector)]
    for c in cs:
        c.open()
    return db, s, cs


def _tick(db: StandIn, n: int) -> None:
    db.add_waits("log file sync", [300.0 * (i % 7 + 1) for i in range(n)])
    db.add_waits("RFS write", [700.0] * n)
    db.publish_stats(
        {
            "redo size": 5000 * n,
            "redo writes": n,
            "redo write time": n // 10,
            "redo write time (usec)": 1000 * n,
            "redo synch writes": n,
            "redo synch time (usec)": 1500 * n,
            "redo synch time": 15 * n // 100,
        }
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_every_statement_parses_as_oracle_sql(version):
    v = queries.parse_version(version)
    texts = [queries.render(n, v, ("my event", "it's quoted")) for n in queries.QUERIES]
    assert any(texts)
    for text in filter(None, texts):
        tree = sqlglot.parse_one(text, read="oracle")
        assert tree.find(sqlglot.exp.Table) is not None, text


def test_query_choice_per_version():
    pick = queries.pick
    assert "v$event_histogram " in pick("histogram", (11, 2, 0, 4))
    assert "v$event_histogram_micro" in pick("histogram", (12, 1, 0, 2))
    assert "v$event_histogram_micro" in pick("histogram", (23, 5))
    assert pick("version_full", (12, 2)) is None
    assert pick("version_full", (19, 0)) is not None
    assert pick("system_event", (10, 2)) is None  # FG/micro columns: 11.2 is the floor
    assert queries.default_events((11, 2)) == (
        *queries.EVENTS_11G,
        *queries.LOG_SPACE,
        *queries.RAC_EVENTS,
    )
    assert "LGWR any worker group" not in queries.default_events((11, 2))
    assert "LGWR any worker group" in queries.default_events((19, 0))
    assert "log file switch (checkpoint incomplete)" in queries.default_events((11, 2))
    assert "SYNC Remote Write" in queries.default_events((12, 1))


@pytest.mark.parametrize("version", VERSIONS)
def test_collectors_on_each_version(version):
    db, s, (waits, redo, dg) = _pair(version)
    _tick(db, 100)
    prev = [c.sample() for c in (waits, redo, dg)]
    _tick(db, 300)
    rows = [c.derive(p, c.sample(), 1.0) for c, p in zip((waits, redo, dg), prev, strict=True)]
    w, r, d = rows
    lfs = w["log file sync"]
    assert lfs["waits"] == 300
    assert sum(n for _, n in lfs["hist"]) == 300
    bounds = [b for b, _ in lfs["hist"]]
    if version.startswith("11."):
        assert bounds[0] == 1.0  # milliseconds: the sub-millisecond waits collapse into < 1 ms
        assert r["db"]["redo_write_time"] == 200.0  # from the centisecond statistic
    else:
        assert bounds[0] < 1.0  # microsecond buckets shown in ms
        assert r["db"]["redo_write_time"] == 200.0  # from 'redo write time (usec)'
    assert r["db"]["redo_write_size"] == round(5000 / 1024, 3)
    assert d["db"]["version"] == version  # VERSION_FULL where it exists
    assert s.take_notes() == []  # nothing missing on any version


def test_version_full_preferred_over_base_release():
    db, s, _ = _pair("19.21.0.0.0")
    s.refresh()
    assert db.connect().execute("SELECT version FROM v$instance").fetchone()[0] == "19.0.0.0.0"
    assert s.version_text == "19.21.0.0.0"
    assert s.version == (19, 21, 0, 0, 0)


@pytest.mark.parametrize("upper", [False, True])  # SQL*Plus shows lower; the reference, upper
@pytest.mark.parametrize("version", ["11.2.0.4.0", "19.21.0.0.0", "23.5.0.24.7"])
def test_standby_lags_whatever_the_name_case(version, upper):
    db, _s, (_, _, dg) = _pair(version, role="PHYSICAL STANDBY")
    db.set_dg_stats(
        transport_lag=2.0, apply_lag=3725.0, datum_time="11/21/2026 15:00:01", upper=upper
    )
    row = dg.derive(None, dg.sample(), 1.0)["db"]
    assert row["role"] == "standby"
    assert row["transport_lag"] == 2.0
    assert row["apply_lag"] == 3725.0
    assert row["lag_datum"] == "11/21/2026 15:00:01"


def test_config_events_extend_the_list():
    from sgmon.config import DbConfig

    db = StandIn(version="19.21.0.0.0")
    cfg = DbConfig(dsn="prim1/PROD", events=("db file sequential read",))
    s = Session(db=cfg, connect=db.connect)
    c = OracleWaitsCollector({"session": s})
    c.open()
    db.add_waits("db file sequential read", [250.0, 4000.0])
    db.add_waits("not in any list", [10.0])
    assert set(c.sample()) - {"_epoch"} == {"db file sequential read"}

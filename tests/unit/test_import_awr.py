"""`sgmon import awr`: the importer's exact SQL against the stand-in's DBA_HIST_* tables.

The stand-in's AWR (``sgmon.sim.awr``) snapshots its own cumulative V$ counters, as MMON does, so
every expected value below is the difference of what was published between two snapshots,
computed here from the published numbers, not read back from the importer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.import_awr import T0, _import

from sgmon import buckets
from sgmon.errors import Unreachable, UsageError
from sgmon.hosts.replay import ReplaySource
from sgmon.importers.awr import statements
from sgmon.importers.write import write
from sgmon.sim.awr import Awr
from sgmon.sim.standin import StandIn

STEP = 900.0  # AWR snapshots every 15 minutes


# seed 001: 'log file sync', 15404 waits, AWR "% of waits" <32ms .. <1s (Wait Event Histogram)
SEED001_TOTAL = 15404


SEED001_PCT = {64: 0.7, 128: 0.5, 256: 3.7, 512: 0.2, 1024: 0.2}  # the rest (94.8 %) < 32 ms


class Counters:
    """Cumulative V$ counters of one instance, published into a stand-in before each snapshot."""

    def __init__(self, db: StandIn) -> None:
        self.db = db
        self.waits = 0
        self.micro = 0.0
        self.milli: dict[int, int] = {}
        self.stats = dict.fromkeys(
            (
                "redo size",
                "user commits",
                "redo size for lost write detection",
                "physical reads cache",
                "redo synch writes",
                "redo synch time (usec)",
            ),
            0.0,
        )
        self.os = dict.fromkeys(("USER_TIME", "SYS_TIME", "IDLE_TIME", "IOWAIT_TIME"), 0.0)

    def add(self, buckets_ms: dict[int, int], avg_us: float, **stats: float) -> None:
        for b, n in buckets_ms.items():
            self.milli[b] = self.milli.get(b, 0) + n
            self.waits += n
            self.micro += n * avg_us
        for k, v in stats.items():
            key = k.replace("_", " ").replace("usec", "(usec)")
            self.stats[key] += v
        milli = sorted(self.milli.items())
        self.db.publish_event("log file sync", self.waits, self.micro, milli=milli)
        self.db.publish_stats(self.stats)

    def cpu(self, user: float, sys_: float, idle: float, iowait: float) -> None:
        for k, v in zip(self.os, (user, sys_, idle, iowait), strict=True):
            self.os[k] += v
        self.db.publish_osstat({**self.os, "LOAD": 3.5})


def test_deltas_per_snapshot_interval_in_the_live_fields_and_units():
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db, tz_offset=7200)  # a database host at UTC+2
    c = Counters(db)
    c.add({1: 10}, 600.0)
    awr.snapshot(T0)
    c.add({1: 900, 2: 50}, 600.0, redo_size=9e8, user_commits=9000, physical_reads_cache=450)
    c.cpu(user=1200, sys_=300, idle=5700, iowait=200)
    awr.snapshot(T0 + STEP)
    c.add(
        {1: 1800, 256: 30},
        2400.0,
        redo_size=1.8e9,
        user_commits=18000,
        physical_reads_cache=9e5,
        redo_size_for_lost_write_detection=8.1e8,
        redo_synch_writes=1830,
        redo_synch_time_usec=1830 * 2400.0,
    )
    c.cpu(user=1200, sys_=300, idle=5000, iowait=900)
    awr.snapshot(T0 + 2 * STEP, tz_offset=3600)  # a DST switch between the two: still 900 s

    imp, s = _import(db, T0 - 60, T0 + 3 * STEP, host="prim1", role="primary")
    assert list(imp.frames) == ["prim1"] and imp.interval == STEP and not imp.notes
    f1, f2 = imp.frames["prim1"]
    assert [f1.time, f2.time] == [T0 + STEP, T0 + 2 * STEP]  # UTC = local - SNAP_TIMEZONE
    assert f2.interval == STEP and f2.role == "primary"
    lfs = f2.collectors["oracle_waits"].rows["log file sync"]
    assert lfs["waits"] == pytest.approx(1830 / STEP)
    assert lfs["avg"] == pytest.approx(2.4)  # ms: TIME_WAITED_MICRO delta / TOTAL_WAITS delta
    assert lfs["hist"] == [[1.0, 1800], [2.0, 0], [256.0, 30]]
    assert lfs["p50"] == 1.0 and lfs["p99"] == 256.0 and lfs["max_bucket"] == 256.0
    redo = f2.collectors["oracle_redo"].rows["db"]
    assert redo["redo_size"] == pytest.approx(1.8e9 / STEP)
    assert redo["user_commits"] == pytest.approx(20.0)
    assert redo["redo_size_lwd"] == pytest.approx(9e5)
    assert redo["phys_reads_cache"] == pytest.approx(1000.0)
    assert redo["redo_synch_time"] == pytest.approx(2.4)  # ms per commit wait, from (usec)
    cpu = f2.collectors["cpu"].rows["all"]
    # of USER+SYS+IDLE_TIME = 6500 cs, where IDLE_TIME includes IOWAIT_TIME (as AWR's %WIO)
    assert cpu["usr"] == pytest.approx(1200 / 6500 * 100)
    assert cpu["iowait"] == pytest.approx(900 / 6500 * 100)
    assert cpu["idle"] == pytest.approx(4100 / 6500 * 100)
    assert cpu["load1"] == 3.5 and cpu.get("irq") is None
    f1w = f1.collectors["oracle_waits"].rows["log file sync"]
    assert f1w["hist"] == [[1.0, 900], [2.0, 50]] and f1w["p99"] == 2.0
    assert s.statements < 12  # connect + DBID + snapshots + four history statements


def test_seed001_histogram_rows_give_the_seeds_percentages():
    """Seed 001's 30 s AWR interval: 15404 log file syncs, 94.8 % under 32 ms, 3.7 % in
    128-256 ms; as DBA_HIST_EVENT_HISTOGRAM rows, imported, in the % of waits columns."""
    rows = {b: round(SEED001_TOTAL * p / 100) for b, p in SEED001_PCT.items()}
    under32 = SEED001_TOTAL - sum(rows.values())
    rows |= {1: under32 // 2, 8: under32 // 4, 32: under32 - under32 // 2 - under32 // 4}
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db)
    c = Counters(db)
    c.add({1: 5000}, 500.0)  # history before the interval
    awr.snapshot(T0)
    c.add(rows, 15_900.0)
    awr.snapshot(T0 + 30)
    imp, _ = _import(db, T0, T0 + 30)
    (f,) = imp.frames["sim"]
    lfs = f.collectors["oracle_waits"].rows["log file sync"]
    assert lfs["waits"] * 30 == pytest.approx(SEED001_TOTAL)
    shares = buckets.shares(lfs["hist"])
    assert shares is not None
    pct = dict(zip(buckets.HEADERS, (round(x * 100, 1) for x in shares), strict=True))
    # <1ms .. <32: 94.8 in the seed, whose rounded row adds up to 100.1 %
    assert sum(shares[:6]) * 100 == pytest.approx(94.8, abs=0.15)
    assert (pct["<64"], pct["<128"], pct["<256"], pct["≥256"]) == (0.7, 0.5, 3.7, 0.4)
    assert lfs["p90"] == 32.0 and lfs["p99"] == 256.0  # 96.0 % under 128 ms, 99.7 % under 256


def test_a_restart_between_snapshots_is_a_gap_event_never_a_delta():
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db)
    c = Counters(db)
    c.add({1: 10_000}, 500.0, redo_size=5e9)
    awr.snapshot(T0)
    c.add({1: 1000}, 500.0, redo_size=5e8)
    awr.snapshot(T0 + STEP)
    db.restart(startup=T0 + STEP + 300)  # counters back to zero
    c = Counters(db)
    c.add({1: 200}, 500.0, redo_size=1e8)
    awr.snapshot(T0 + 2 * STEP)
    c.add({1: 900}, 500.0, redo_size=4.5e8)
    awr.snapshot(T0 + 3 * STEP)
    imp, _ = _import(db, T0, T0 + 3 * STEP)
    frames = imp.frames["sim"]
    assert [f.seq for f in frames] == [1, 2, 3]  # from 1, as live ticks: the restart's too
    before, gap, after = frames
    assert gap.time == T0 + 2 * STEP and gap.collectors == {}
    assert [e.kind for e in gap.events] == ["restart"] and "no delta" in gap.events[0].text
    assert len(imp.notes) == 1 and "restarted" in imp.notes[0] and "\n" not in imp.notes[0]
    for f, waits, redo in ((before, 1000, 5e8), (after, 900, 4.5e8)):
        assert f.collectors["oracle_waits"].rows["log file sync"]["waits"] * STEP == waits
        assert f.collectors["oracle_redo"].rows["db"]["redo_size"] * STEP == pytest.approx(redo)


def test_rac_instances_become_hosts_named_by_their_host_and_skip_nothing():
    one = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    two = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    one.set_instance(T0 - 86400, instance_name="PROD1", host_name="racnode1")
    two.set_instance(T0 - 86400, instance_name="PROD2", host_name="racnode2")
    awr = Awr(one)
    cs = {1: Counters(one), 2: Counters(two)}
    for k in range(3):
        for inst, src in ((1, one), (2, two)):
            cs[inst].add({1: 100 * inst}, 500.0)
            awr.snapshot(T0 + k * STEP, source=src, instance_number=inst, snap_id=10 + k)
    imp, _ = _import(one, T0, T0 + 2 * STEP)
    assert sorted(imp.frames) == ["racnode1", "racnode2"]
    for inst, host in ((1, "racnode1"), (2, "racnode2")):
        fs = imp.frames[host]
        assert [f.collectors["oracle_waits"].rows["log file sync"]["waits"] * STEP for f in fs] == [
            100 * inst,
            100 * inst,
        ]
    imp, _ = _import(one, T0, T0 + 2 * STEP, host="prod")
    assert sorted(imp.frames) == ["prod-PROD1", "prod-PROD2"]


def test_window_uses_the_snapshot_before_it_as_baseline_and_says_what_exists():
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db)
    c = Counters(db)
    for k in range(6):
        c.add({1: 100 * (k + 1)}, 500.0)
        awr.snapshot(T0 + k * STEP)
    imp, _ = _import(db, T0 + 3 * STEP - 1, T0 + 4 * STEP + 1)
    fs = imp.frames["sim"]
    assert [f.time for f in fs] == [T0 + 3 * STEP, T0 + 4 * STEP]
    assert [f.collectors["oracle_waits"].rows["log file sync"]["waits"] * STEP for f in fs] == [
        400,
        500,
    ]
    with pytest.raises(UsageError, match=r"repository holds .* to .* UTC") as e:
        _import(db, T0 + 10 * STEP, T0 + 11 * STEP)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("view", ["dba_hist_event_histogram", "dba_hist_snapshot"])
def test_a_missing_view_is_one_line_naming_the_grant_and_the_licence(view):
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db)
    Counters(db).add({1: 1}, 500.0)
    awr.snapshot(T0)
    awr.snapshot(T0 + STEP)
    awr.drop(view)
    with pytest.raises(Unreachable) as e:
        _import(db, T0, T0 + STEP)
    line = str(e.value)
    assert "\n" not in line and line.startswith("ORA-00942 " + view.upper())
    assert "GRANT SELECT_CATALOG_ROLE" in line and "Diagnostics Pack" in line


def test_before_11202_there_is_no_snap_timezone_and_tz_gives_the_offset():
    db = StandIn(version="11.2.0.1.0", startup=T0 - 86400)
    awr = Awr(db, tz_offset=-5 * 3600)
    c = Counters(db)
    for k in range(2):
        c.add({1: 10}, 500.0)
        awr.snapshot(T0 + k * STEP)
    imp, _ = _import(db, T0 - 86400, T0 + 86400)
    assert len(imp.notes) == 1 and "--tz" in imp.notes[0]
    assert imp.frames["sim"][0].time == T0 + STEP - 5 * 3600  # local time taken as UTC
    imp, _ = _import(db, T0 - 86400, T0 + 86400, tz=-5 * 3600.0)
    assert not imp.notes and imp.frames["sim"][0].time == T0 + STEP


def test_the_statements_are_single_selects_over_the_documented_views():
    texts = statements(("my event",))
    views = {"events": "dba_hist_system_event", "histogram": "dba_hist_event_histogram",
             "sysstat": "dba_hist_sysstat", "osstat": "dba_hist_osstat"}  # fmt: skip
    for name, text in texts.items():
        assert text.startswith("SELECT ") and f"FROM {views[name]} WHERE" in text
        assert ":dbid" in text and ":lo" in text and ":hi" in text
    assert "'my event'" in texts["events"] and "'RFS%'" in texts["histogram"]
    assert "'redo size for lost write detection'" in texts["sysstat"]


def test_written_archive_replays_with_provenance(tmp_path: Path):
    db = StandIn(version="19.21.0.0.0", startup=T0 - 86400)
    awr = Awr(db)
    c = Counters(db)
    for k in range(3):
        c.add({1: 100, 128: k}, 900.0, redo_size=1e8)
        c.cpu(user=100, sys_=50, idle=700, iowait=10)
        awr.snapshot(T0 + k * STEP)
    imp, _ = _import(db, T0, T0 + 2 * STEP, host="prim1", role="primary")
    assert write(tmp_path, imp) > 0
    meta = json.loads((tmp_path / "meta.json").read_text())
    src = meta["hosts"]["prim1"]["sources"]
    assert meta["hosts"]["prim1"]["interval"] == STEP
    assert "DBA_HIST_EVENT_HISTOGRAM" in src["oracle_waits"]["hist"]
    assert "redo size for lost write detection" in src["oracle_redo"]["redo_size_lwd"]
    assert src["oracle_redo"]["redo_synch_polls"].startswith("not imported")
    assert "DBA_HIST_OSSTAT" in src["cpu"]["usr"]
    frames = ReplaySource(tmp_path).frames("prim1")
    assert [f.time for f in frames] == [T0 + STEP, T0 + 2 * STEP]
    got = frames[1].collectors["oracle_waits"].rows["log file sync"]
    assert got["p99"] == 128.0 and got["waits"] * STEP == pytest.approx(102, abs=0.5)

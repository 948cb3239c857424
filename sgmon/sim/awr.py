"""The stand-in's Workload Repository: DBA_HIST_* tables filled by snapshots of its V$ state.

AWR copies V$SYSTEM_EVENT, V$EVENT_HISTOGRAM, V$SYSSTAT and V$OSSTAT into DBA_HIST_* rows keyed
by (DBID, INSTANCE_NUMBER, SNAP_ID) every snapshot, and records each snapshot's instance
STARTUP_TIME and interval in DBA_HIST_SNAPSHOT.  ``Awr`` does the same from a ``StandIn``'s
cumulative counters, so a simulated run (or a test) can be snapshotted every N simulated seconds
and the AWR importer's exact SQL runs against it.  Columns follow the Oracle Database Reference
(DBA_HIST_SNAPSHOT, _DATABASE_INSTANCE, _SYSTEM_EVENT, _EVENT_HISTOGRAM, _SYSSTAT, _OSSTAT),
only those sgmon reads plus the keys; SNAP_TIMEZONE exists from 11.2.0.2 as in Oracle.

Times are written as Oracle keeps them: END_INTERVAL_TIME in the database host's local time
(``tz_offset`` seconds east of UTC, which may change between snapshots, as at a DST switch),
SNAP_TIMEZONE that offset as SQL*Plus prints an INTERVAL DAY(0) TO SECOND(0) (``+0 02:00:00``)::

    awr = Awr(db)                         # the DBA_HIST tables in db's own SQLite database
    awr.snapshot(when=epoch_seconds)      # one snapshot of db's V$ counters, instance 1
    awr.snapshot(when, source=db2, instance_number=2, snap_id=n)   # RAC: the same SNAP_ID
    awrs = run_with_awr(pair, steps=120, every=15)  # a SimPair snapshotted every 15 intervals
"""

from __future__ import annotations

import sqlite3
import zlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sgmon.sim.standin import StandIn

if TYPE_CHECKING:
    from sgmon.sim.pair import SimPair

TABLES: dict[str, tuple[str, ...]] = {
    "dba_hist_snapshot": (
        "snap_id",
        "dbid",
        "instance_number",
        "startup_time",
        "begin_interval_time",
        "end_interval_time",
        "snap_flag",
        "snap_timezone",
    ),
    "dba_hist_database_instance": (
        "dbid",
        "instance_number",
        "startup_time",
        "version",
        "db_name",
        "instance_name",
        "host_name",
    ),
    "dba_hist_system_event": (
        "snap_id",
        "dbid",
        "instance_number",
        "event_id",
        "event_name",
        "wait_class",
        "total_waits",
        "total_timeouts",
        "time_waited_micro",
    ),
    "dba_hist_event_histogram": (
        "snap_id",
        "dbid",
        "instance_number",
        "event_id",
        "event_name",
        "wait_time_milli",
        "wait_count",
    ),
    "dba_hist_sysstat": ("snap_id", "dbid", "instance_number", "stat_id", "stat_name", "value"),
    "dba_hist_osstat": ("snap_id", "dbid", "instance_number", "stat_id", "stat_name", "value"),
}
KEYS: dict[str, tuple[str, ...]] = {
    "dba_hist_snapshot": ("dbid", "instance_number", "snap_id"),
    "dba_hist_database_instance": ("dbid", "instance_number", "startup_time"),
    "dba_hist_system_event": ("dbid", "instance_number", "snap_id", "event_id"),
    "dba_hist_event_histogram": (
        "dbid",
        "instance_number",
        "snap_id",
        "event_id",
        "wait_time_milli",
    ),
    "dba_hist_sysstat": ("dbid", "instance_number", "snap_id", "stat_id"),
    "dba_hist_osstat": ("dbid", "instance_number", "snap_id", "stat_id"),
}
SNAP_TIMEZONE_SINCE = (11, 2, 0, 2)


def _id(name: str) -> int:
    """A stable EVENT_ID / STAT_ID for a name (Oracle's are hashes of the name too)."""
    return zlib.crc32(name.encode())


def local_text(when: float, tz_offset: float) -> str:
    """Epoch seconds as a TIMESTAMP(3) of a host ``tz_offset`` seconds east of UTC."""
    t = datetime.fromtimestamp(when + tz_offset, UTC)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def interval_text(seconds: float) -> str:
    """An INTERVAL DAY(0) TO SECOND(0) as SQL*Plus prints it: ``+0 02:00:00``, ``-0 05:00:00``."""
    sign = "-" if seconds < 0 else "+"
    s = abs(round(seconds))
    return f"{sign}{s // 86400} {s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Awr:
    """DBA_HIST_* tables inside one stand-in, filled by ``snapshot`` (see the module docstring)."""

    def __init__(self, db: StandIn, tz_offset: float = 0.0) -> None:
        self.db = db
        self.tz_offset = tz_offset
        self.conn = db.connect()
        self._sources: dict[int, sqlite3.Connection] = {id(db): self.conn}
        self._last: dict[int, tuple[str, str]] = {}  # instance -> (startup, last end text)
        self.snap_id = 0
        for table, cols in TABLES.items():
            if table == "dba_hist_snapshot" and db.version < SNAP_TIMEZONE_SINCE:
                cols = tuple(c for c in cols if c != "snap_timezone")
            keys = ", ".join(KEYS[table])
            self.conn.execute(
                f'CREATE TABLE IF NOT EXISTS "{table}" ({", ".join(cols)}, PRIMARY KEY ({keys}))'
            )

    def drop(self, table: str) -> None:
        """Make a DBA_HIST view unreadable (ORA-00942, as without SELECT_CATALOG_ROLE)."""
        self.conn.execute(f'DROP TABLE IF EXISTS "{table}"')

    def snapshot(
        self,
        when: float,
        source: StandIn | None = None,
        instance_number: int = 1,
        snap_id: int | None = None,
        tz_offset: float | None = None,
    ) -> int:
        """Copy ``source``'s (default: this database's) V$ counters as of epoch ``when`` into one
        snapshot of ``instance_number``; returns its SNAP_ID (RAC: pass the same one per
        instance)."""
        src = source or self.db
        conn = self._sources.get(id(src))
        if conn is None:
            conn = self._sources[id(src)] = src.connect()
        if tz_offset is not None:
            self.tz_offset = tz_offset
        if snap_id is None:
            self.snap_id += 1
            snap_id = self.snap_id
        else:
            self.snap_id = max(self.snap_id, snap_id)
        name, host, version, startup = conn.execute(
            'SELECT instance_name, host_name, version, startup_time FROM "v$instance"'
        ).fetchone()
        dbid, db_name = conn.execute('SELECT dbid, db_unique_name FROM "v$database"').fetchone()
        end = local_text(when, self.tz_offset)
        prev = self._last.get(instance_number)
        begin = prev[1] if prev and prev[0] == startup else startup
        self._last[instance_number] = (startup, end)
        key = (snap_id, dbid, instance_number)
        snap = dict(zip(TABLES["dba_hist_snapshot"], (*key, startup, begin, end, 0), strict=False))
        if self.db.version >= SNAP_TIMEZONE_SINCE:
            snap["snap_timezone"] = interval_text(self.tz_offset)
        inst = (dbid, instance_number, startup, version, db_name, name, host)
        rows: dict[str, list[tuple]] = {
            "dba_hist_snapshot": [tuple(snap.values())],
            "dba_hist_database_instance": [inst],
            "dba_hist_system_event": [
                (*key, _id(e), e, c, w, t, m)
                for e, c, w, t, m in conn.execute(
                    "SELECT event, wait_class, total_waits, total_timeouts, time_waited_micro"
                    ' FROM "v$system_event"'
                )
            ],
            "dba_hist_event_histogram": [
                (*key, _id(e), e, b, n)
                for e, b, n in conn.execute(
                    'SELECT event, wait_time_milli, wait_count FROM "v$event_histogram"'
                )
            ],
            "dba_hist_sysstat": [
                (*key, _id(n), n, v) for n, v in conn.execute('SELECT name, value FROM "v$sysstat"')
            ],
            "dba_hist_osstat": [
                (*key, _id(n), n, v)
                for n, v in conn.execute('SELECT stat_name, value FROM "v$osstat"')
            ],
        }
        cols = {"dba_hist_snapshot": tuple(snap)}
        self.conn.execute("BEGIN")  # one transaction per snapshot, as MMON's flush
        for table, values in rows.items():
            names = cols.get(table, TABLES[table])
            self.conn.executemany(
                f'INSERT OR REPLACE INTO "{table}" ({", ".join(names)})'
                f" VALUES ({', '.join('?' for _ in names)})",
                values,
            )
        self.conn.execute("COMMIT")
        return snap_id


def run_with_awr(pair: SimPair, steps: int, every: int, tz_offset: float = 0.0) -> dict[str, Awr]:
    """Step a simulated pair ``steps`` intervals with an AWR snapshot of both stand-ins at the
    start and every ``every`` intervals, V$OSSTAT fed from each host's simulated CPU rows
    (centiseconds of all CPUs; IDLE_TIME includes IOWAIT_TIME, as Oracle's does)."""
    from sgmon.model import number
    from sgmon.sim.hostos import NCPU

    awrs = {h: Awr(db, tz_offset) for h, db in pair.dbs.items()}
    names = ("USER_TIME", "SYS_TIME", "IDLE_TIME", "IOWAIT_TIME", "BUSY_TIME")
    cpu = {h: dict.fromkeys(names, 0.0) for h in pair.dbs}
    for a in awrs.values():
        a.snapshot(pair.now())
    for k in range(steps):
        for frame in pair.step():  # every host's: a scenario may have more standbys
            host = frame.host
            row = frame.collectors["cpu"].rows["all"]
            pct = {f: number(row.get(f)) or 0.0 for f in ("usr", "sys", "idle", "iowait")}
            cs = pair.interval * NCPU  # centiseconds of all CPUs per percent of the interval
            o = cpu[host]
            o["USER_TIME"] += pct["usr"] * cs
            o["SYS_TIME"] += pct["sys"] * cs
            o["BUSY_TIME"] = o["USER_TIME"] + o["SYS_TIME"]
            o["IOWAIT_TIME"] += pct["iowait"] * cs
            o["IDLE_TIME"] += (pct["idle"] + pct["iowait"]) * cs
            pair.dbs[host].publish_osstat({**o, "LOAD": number(row.get("load1")) or 0.0})
        if (k + 1) % every == 0:
            for a in awrs.values():
                a.snapshot(pair.now())
    return awrs

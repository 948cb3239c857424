"""A stand-in Oracle database: SQLite tables named and shaped like the V$ views sgmon reads.

No Oracle database runs on our machines, so the database collectors are tested by running their
exact SQL text against this: SQLite accepts ``v$`` table names, and the columns Oracle spells
with ``#`` are created (and queried) as quoted upper-case identifiers.  Counters are cumulative,
like Oracle's, and only the column set of the chosen version exists (no V$EVENT_HISTOGRAM_MICRO
before 12.1, no VERSION_FULL before 18c, no ``(usec)`` statistics before 12.1, lower-case
V$DATAGUARD_STATS names from 23ai), so version selection is exercised too.

Publishing API (used by the simulation and by the lab, which publishes real measured waits)::

    db = StandIn(":memory:", version="19.0.0.0.0", role="PHYSICAL STANDBY")
    db.add_waits("RFS write", [812.0, 1430.5])         # durations in us: binned, accumulated
    db.publish_event("log file sync", waits, time_us, micro=[(bound_us, cumulative), ...])
    db.publish_stats({"redo size": 123456, "user commits": 42})
    db.publish_osstat({"BUSY_TIME": 5000, "IDLE_TIME": 95000, "LOAD": 1.2})
    db.set_dest(2, db_unique_name="STBY", transmit_mode="SYNCHRONOUS", affirm="YES")
    db.set_receiving(thread=1, seq=42, block=8190)     # an RFS row: where the thread's redo is
    db.set_archived(2, seq=41)                         # ARCHIVED_SEQ# of the destination
    db.publish_resp_hist(2, {1: 5000, 2: 1})
    db.set_dg_stats(transport_lag=0.0, apply_lag=1.0, datum_time="11/21/2026 15:00:01")
    db.log_switch(thread=1)
    db.set_standby_logs(thread=1, active=1)             # SRLs: 4 of 4 GiB, one member each
    db.set_online_logs(thread=2, groups=3)             # V$LOG and its V$LOGFILE members
    db.set_parameter("db_lost_write_protect", "TYPICAL")
    db.restart()                                       # new startup_time, counters zeroed
    conn = db.connect()                                # a DB-API connection for the collector

A file path instead of ``":memory:"`` lets another process (the lab) publish while sgmon reads.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import functools
import itertools
import math
import operator
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sgmon import buckets
from sgmon.oracle.queries import parse_version

_ids = itertools.count()

# view -> columns; columns are created as quoted identifiers (so "THREAD#" works)
VIEWS: dict[str, tuple[str, ...]] = {
    "v$instance": (
        "instance_name",
        "instance_number",
        "host_name",
        "version",
        "status",
        "startup_time",
        "THREAD#",
    ),
    "v$database": (
        "database_role",
        "protection_mode",
        "protection_level",
        "open_mode",
        "db_unique_name",
        "switchover_status",
        "RESETLOGS_CHANGE#",
        "dbid",
    ),
    "v$system_event": (
        "event",
        "total_waits",
        "total_timeouts",
        "time_waited",
        "average_wait",
        "time_waited_micro",
        "wait_class",
    ),
    "v$event_histogram": ("EVENT#", "event", "wait_time_milli", "wait_count"),
    "v$event_histogram_micro": ("EVENT#", "event", "wait_time_micro", "wait_count"),
    "v$sysstat": ("STATISTIC#", "name", "class", "value"),
    "v$archive_dest": (
        "dest_id",
        "dest_name",
        "status",
        "target",
        "transmit_mode",
        "affirm",
        "net_timeout",
        "db_unique_name",
        "error",
        "destination",
        "valid_role",
        "valid_now",
    ),
    "v$archive_dest_status": (
        "dest_id",
        "status",
        "type",
        "gap_status",
        "error",
        "synchronized",
        "ARCHIVED_THREAD#",
        "ARCHIVED_SEQ#",
    ),
    "v$redo_dest_resp_histogram": ("dest_id", "time", "duration", "frequency"),
    "v$dataguard_stats": ("name", "value", "unit", "time_computed", "datum_time"),
    "v$log_history": ("RECID", "THREAD#", "SEQUENCE#", "first_time", "RESETLOGS_CHANGE#"),
    "v$managed_standby": ("process", "pid", "status", "THREAD#", "SEQUENCE#", "BLOCK#"),
    "v$dataguard_process": ("name", "pid", "role", "action", "THREAD#", "SEQUENCE#", "BLOCK#"),
    "v$archive_gap": ("THREAD#", "LOW_SEQUENCE#", "HIGH_SEQUENCE#"),
    "v$standby_log": ("GROUP#", "THREAD#", "SEQUENCE#", "bytes", "used", "status"),
}
KEYS = {
    "v$system_event": ("event",),
    "v$event_histogram": ("event", "wait_time_milli"),
    "v$event_histogram_micro": ("event", "wait_time_micro"),
    "v$sysstat": ("name",),
    "v$archive_dest": ("dest_id",),
    "v$archive_dest_status": ("dest_id",),
    "v$redo_dest_resp_histogram": ("dest_id", "duration"),
    "v$dataguard_stats": ("name",),
    "v$standby_log": ("GROUP#",),
    "v$managed_standby": ("process", "pid"),
    "v$dataguard_process": ("name", "pid"),
    "v$archive_gap": ("THREAD#",),
}
USEC_STATS = (
    "redo write time (usec)",
    "redo synch time (usec)",
    "redo synch time overhead (usec)",
)

# -- the host's OS counters as the database sees them (cumulative centiseconds, LOAD a gauge),
# which AWR keeps in DBA_HIST_OSSTAT (``sgmon.sim.awr``)
VIEWS["v$osstat"] = ("stat_name", "value")
KEYS["v$osstat"] = ("stat_name",)

# -- trace files (the oracle_trace reader): the trace directory and each process's OS pid, which
# names its trace (<sid>_<pname>_<spid>.trc); a respawned process has a new spid
VIEWS["v$diag_info"] = ("name", "value")
VIEWS["v$process"] = ("pid", "pname", "spid")
KEYS["v$diag_info"] = ("name",)
KEYS["v$process"] = ("pid",)

# -- the redo log layout and the parameters `check --symmetry` compares once (seed 000: SRLs one
# per online group + 1, of the online size, one member each; seed 003: DB_LOST_WRITE_PROTECT)
VIEWS["v$log"] = (
    "GROUP#", "THREAD#", "SEQUENCE#", "bytes", "blocksize", "members", "archived", "status"
)  # fmt: skip
VIEWS["v$logfile"] = ("GROUP#", "status", "type", "member", "is_recovery_dest_file")
VIEWS["v$parameter"] = ("num", "name", "type", "value", "display_value", "isdefault")
# -- the Data Guard broker's summary of the configuration, as 23ai has it (`sgmon discover`)
VIEWS["v$dg_broker_config"] = (
    "database", "connect_identifier", "dataguard_role", "redo_source", "enabled", "status",
    "severity",
)  # fmt: skip
KEYS["v$dg_broker_config"] = ("database",)
KEYS["v$log"] = ("GROUP#",)
KEYS["v$logfile"] = ("member",)
KEYS["v$parameter"] = ("name",)
LOG_BYTES = 4 << 30
"""Online and standby redo log size: seed 000's "redo log size = 4GB" for most redo rates."""


def _now_text(when: float | None = None) -> str:
    t = _dt.datetime.now() if when is None else _dt.datetime.fromtimestamp(when)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def dg_stamp(when: float | None = None) -> str:
    """A V$DATAGUARD_STATS DATUM_TIME / TIME_COMPUTED as 11g and later print it (now, or the
    epoch seconds ``when``), for every writer of the view's times."""
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(when))


class Buckets:
    """Cumulative power-of-two histogram of durations, as both V$ histogram views count them.

    ``add`` only keeps a wait; the waits kept are binned when the totals are read, sorted once
    and bisected (the simulation adds thousands a second and reads them once a tick).
    Bad input (a negative, NaN or infinite wait) is refused then, as a ValueError."""

    def __init__(self) -> None:
        self._waits = 0
        self._time_us = 0.0
        self._micro: dict[int, int] = {}
        self._milli: dict[int, int] = {}
        self._kept: list[float] = []
        self.add: Callable[[float], object] = self._kept.append
        """Count one wait of ``us`` microseconds (bucket b holds [b/2, b))."""
        self.add_all: Callable[[Iterable[float]], object] = self._kept.extend
        """Count waits, in order."""

    def _fold(self) -> None:
        """Bin the waits kept since the last read: summed in the order they came (the float
        total of adding them one by one), then sorted, so that a bucket's count is the distance
        between two bisections.  An accumulator is read each tick or given no waits: it keeps
        every wait until then (``sim.model.Uncounted`` for the waits no one reads)."""
        kept = self._kept
        if not kept:
            return
        total = functools.reduce(operator.add, kept, self._time_us)
        kept.sort()
        if not math.isfinite(total) or kept[0] < 0:
            raise ValueError(f"a wait of {kept[0] if kept[0] < 0 else total} us")
        _bin(self._micro, kept, MICRO_BOUNDS)
        _bin(self._milli, kept, MILLI_BOUNDS)
        self._waits += len(kept)
        self._time_us = total
        kept.clear()  # in place: ``add`` is this list's append

    @property
    def waits(self) -> int:
        self._fold()
        return self._waits

    @property
    def time_us(self) -> float:
        self._fold()
        return self._time_us

    @property
    def micro(self) -> dict[int, int]:
        self._fold()
        return self._micro

    @property
    def milli(self) -> dict[int, int]:
        self._fold()
        return self._milli


MICRO_BOUNDS = [2.0**k for k in range(1024)] + [math.inf]
"""Where each bucket's waits begin, V$EVENT_HISTOGRAM_MICRO: bucket 2**(k+1) at 2**k us (as
``int(us)`` reaches 2**k), for every power of two a float holds; then infinity, reached by none."""
MILLI_BOUNDS = [b * 1000.0 for b in MICRO_BOUNDS if b * 1000.0 < math.inf] + [math.inf]
"""V$EVENT_HISTOGRAM: bucket 2**(k+1) at 2**k ms, where ``int(us / 1000.0)`` reaches 2**k (the
float below 1000 * 2**k us, divided, does not round up to 2**k)."""


def _bin(bins: dict[int, int], waits: list[float], bounds: list[float]) -> None:
    """Add sorted, non-negative waits (us) to their buckets, as ``1 << int(x).bit_length()``
    names them (x: the wait in the view's unit): a wait's bit length is the number of
    ``bounds`` it reaches, and each bucket's waits end where the next bound begins."""
    lo = 0
    while lo < len(waits):
        bits = bisect.bisect_right(bounds, waits[lo])  # the bucket of the least wait left
        hi = bisect.bisect_left(waits, bounds[bits], lo)
        bins[1 << bits] = bins.get(1 << bits, 0) + hi - lo
        lo = hi


class StandIn:
    """The V$ tables of one simulated database (see the module docstring)."""

    def __init__(
        self,
        path: str = ":memory:",
        version: str = "19.0.0.0.0",
        role: str = "PRIMARY",
        db_unique_name: str = "PROD",
        startup: float | None = None,
        container: tuple[int, str] = (0, "PROD"),
        dbid: int = 2841073655,
    ) -> None:
        self.container = container
        """SYS_CONTEXT('USERENV', 'CON_ID' / 'CON_NAME') of its sessions: (0, name) a non-CDB,
        (1, 'CDB$ROOT') the root, (3, 'PDB1') a session opened on a PDB's service."""
        self.version_text = version
        self.version = parse_version(version)
        self.dbid = dbid
        """V$DATABASE.DBID: a physical standby has its primary's, so both default to one."""
        if path == ":memory:":
            self._uri = f"file:sgmon-standin-{next(_ids)}-{id(self)}?mode=memory&cache=shared"
        else:
            self._uri = f"file:{path}"
        self._lock = threading.Lock()
        self._db = self.connect()  # keeps an in-memory database alive
        if path != ":memory:":  # readers in other processes never wait for the publisher
            self._db.execute("PRAGMA journal_mode=WAL")
        self._buckets: dict[str, Buckets] = {}
        self._seq: dict[int, int] = {}
        self._resetlogs = 1
        self._dropped: set[str] = set()
        self._create()
        self.set_instance(startup)
        self.db_unique_name = db_unique_name
        self.set_database(database_role=role, db_unique_name=db_unique_name)
        self.set_online_logs(thread=1)
        self.set_parameter("db_lost_write_protect", _lwp_default(self.version), default=True)
        if "STANDBY" in role.upper():
            self.set_apply("APPLYING_LOG")  # a healthy standby applies what it receives

    def connect(self) -> sqlite3.Connection:
        """A new DB-API connection to this stand-in (what the collector's session is given),
        with Oracle's DUAL and SYS_CONTEXT('USERENV', ...) for the container check."""
        return open_session(self._uri, self.container)

    def close(self) -> None:
        """Drop the keeper connection (an in-memory stand-in then disappears)."""
        self._db.close()

    # -- schema --------------------------------------------------------------------------------

    def columns(self, view: str) -> tuple[str, ...]:
        """The columns this version has for a view (empty when the view does not exist)."""
        cols = VIEWS[view]
        if view in self._dropped:
            return ()
        if view == "v$event_histogram_micro" and self.version < (12, 1):
            return ()
        if view == "v$dataguard_process" and self.version < (12, 2):
            return ()
        if view == "v$managed_standby" and self.version >= (21,):
            return ()  # deprecated in 12.2, desupported in 21c
        if view == "v$dg_broker_config" and self.version < (23,):
            return ()
        if view == "v$instance" and self.version >= (18,):
            cols = (*cols, "version_full")
        return cols

    def _create(self) -> None:
        with self._lock:
            self._db.execute('CREATE TABLE IF NOT EXISTS "dual" ("DUMMY")')
            if not self._db.execute('SELECT COUNT(*) FROM "dual"').fetchone()[0]:
                self._db.execute("INSERT INTO \"dual\" VALUES ('X')")
            for view in VIEWS:
                cols = self.columns(view)
                if not cols:
                    continue
                key = KEYS.get(view)
                pk = f", PRIMARY KEY ({', '.join(_q(k) for k in key)})" if key else ""
                self._db.execute(
                    f"CREATE TABLE IF NOT EXISTS {_q(view)} ({', '.join(map(_q, cols))}{pk})"
                )

    def drop_view(self, view: str) -> None:
        """Make a view disappear (a test of the one-note path)."""
        self._dropped.add(view)
        with self._lock:
            self._db.execute(f"DROP TABLE IF EXISTS {_q(view)}")

    def _upsert(self, view: str, rows: Iterable[Mapping[str, object]]) -> None:
        for cols, same in itertools.groupby(rows, key=tuple):  # one statement a column set
            sql = (
                f"INSERT OR REPLACE INTO {_q(view)} ({', '.join(map(_q, cols))}) "
                f"VALUES ({', '.join('?' for _ in cols)})"
            )
            self._db.executemany(sql, ([row[c] for c in cols] for row in same))

    def _single(self, view: str, values: Mapping[str, object]) -> None:
        cur = self._db.execute(f"SELECT COUNT(*) FROM {_q(view)}").fetchone()[0]
        if not cur:
            self._upsert(view, [values])
            return
        sets = ", ".join(f"{_q(c)} = ?" for c in values)
        self._db.execute(f"UPDATE {_q(view)} SET {sets}", list(values.values()))

    # -- publishing ------------------------------------------------------------------------------

    def set_instance(self, startup: float | None = None, **cols: object) -> None:
        """V$INSTANCE: version, status, and the startup time (epoch seconds)."""
        values: dict[str, object] = {
            "instance_name": "sgmon",
            "host_name": "sim",
            "version": self.version_text if self.version < (18,) else _base(self.version),
            "status": "OPEN",
            "startup_time": _now_text(startup),
            "instance_number": 1,
            "THREAD#": 1,
        }
        if self.version >= (18,):
            values["version_full"] = self.version_text
        values.update(cols)
        with self._lock:
            self._single("v$instance", values)

    def set_database(self, **cols: object) -> None:
        """V$DATABASE columns (database_role, protection_mode, open_mode ...)."""
        role = str(cols.get("database_role", "PRIMARY"))
        values: dict[str, object] = {
            "database_role": role,
            "protection_mode": "MAXIMUM AVAILABILITY",
            "protection_level": "MAXIMUM AVAILABILITY",
            "open_mode": "READ WRITE" if role == "PRIMARY" else "MOUNTED",
            "db_unique_name": "PROD",
            "switchover_status": "TO STANDBY" if role == "PRIMARY" else "NOT ALLOWED",
            "RESETLOGS_CHANGE#": self._resetlogs,
            "dbid": self.dbid,
        }
        values.update(cols)
        with self._lock:
            self._single("v$database", values)

    def publish_event(
        self,
        name: str,
        waits: int,
        time_us: float,
        micro: Sequence[tuple[int, int]] | None = None,
        milli: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """Set one event's cumulative totals and buckets (bucket bound, cumulative count).

        ``milli`` defaults to ``micro`` regrouped as Oracle names the buckets (1024 us is "1
        millisecond", everything below it falls in the 1 ms bucket; ``sgmon.buckets``).
        """
        if milli is None and micro is not None:
            regroup: dict[int, int] = {}
            for bound, count in micro:
                m = max(1, round(buckets.nominal(bound / 1000.0) or 1))
                regroup[m] = regroup.get(m, 0) + count
            milli = sorted(regroup.items())
        with self._lock:
            self._upsert(
                "v$system_event",
                [
                    {
                        "event": name,
                        "total_waits": waits,
                        "total_timeouts": 0,
                        "time_waited": int(time_us // 10000),
                        "average_wait": round(time_us / 10000 / waits, 2) if waits else 0,
                        "time_waited_micro": int(time_us),
                        "wait_class": "Other",
                    }
                ],
            )
            if milli:
                self._upsert(
                    "v$event_histogram",
                    ({"event": name, "wait_time_milli": b, "wait_count": c} for b, c in milli),
                )
            if micro and self.columns("v$event_histogram_micro"):
                self._upsert(
                    "v$event_histogram_micro",
                    ({"event": name, "wait_time_micro": b, "wait_count": c} for b, c in micro),
                )

    def add_waits(self, name: str, durations_us: Iterable[float]) -> None:
        """Accumulate measured waits (microseconds) into an event and publish its counters."""
        b = self._buckets.setdefault(name, Buckets())
        b.add_all(durations_us)
        self.publish_buckets(name, b)

    def publish_buckets(self, name: str, b: Buckets) -> None:
        """Publish a ``Buckets`` accumulator as the event's cumulative counters."""
        self.publish_event(
            name, b.waits, b.time_us, sorted(b.micro.items()), sorted(b.milli.items())
        )

    def publish_stats(self, stats: Mapping[str, float]) -> None:
        """Set cumulative V$SYSSTAT values; ``(usec)`` names are dropped before 12.1."""
        with self._lock:
            self._upsert(
                "v$sysstat",
                (
                    {"name": n, "value": v}
                    for n, v in stats.items()
                    if self.version >= (12, 1) or n not in USEC_STATS
                ),
            )

    def publish_osstat(self, stats: Mapping[str, float]) -> None:
        """Set V$OSSTAT values (BUSY_TIME, IDLE_TIME ... cumulative centiseconds; LOAD)."""
        with self._lock:
            self._upsert("v$osstat", ({"stat_name": n, "value": v} for n, v in stats.items()))

    def set_dest(self, dest_id: int, **cols: object) -> None:
        """A remote destination: V$ARCHIVE_DEST and V$ARCHIVE_DEST_STATUS columns together."""
        status_cols = {"gap_status", "synchronized", "type", "ARCHIVED_THREAD#", "ARCHIVED_SEQ#"}
        uname = str(cols.get("db_unique_name", "STBY"))
        dest: dict[str, object] = {
            "dest_id": dest_id,
            "dest_name": f"LOG_ARCHIVE_DEST_{dest_id}",
            "status": "VALID",
            "target": "STANDBY",
            "transmit_mode": "SYNCHRONOUS",
            "affirm": "YES",
            "net_timeout": 30,
            "db_unique_name": uname,
            "error": "",
            "destination": uname.lower(),  # a TNS alias, as LOG_ARCHIVE_DEST_n SERVICE= names it
            "valid_role": "ALL_ROLES",
            "valid_now": "YES",
        }
        st: dict[str, object] = {
            "dest_id": dest_id,
            "status": "VALID",
            "type": "PHYSICAL",
            "gap_status": "NO GAP",
            "error": "",
            "synchronized": "YES",
            "ARCHIVED_THREAD#": 1,
            "ARCHIVED_SEQ#": 0,
        }
        for k, v in cols.items():
            (st if k in status_cols else dest)[k] = v
        st["status"], st["error"] = dest["status"], dest["error"]
        with self._lock:
            self._upsert("v$archive_dest", [dest])
            self._upsert("v$archive_dest_status", [st])

    def set_broker_member(
        self,
        database: str,
        connect_identifier: str,
        role: str = "PHYSICAL STANDBY",
        enabled: str = "TRUE",
        status: int = 0,
        severity: str = "SUCCESS",
    ) -> None:
        """A row of V$DG_BROKER_CONFIG (23ai): one member of the broker's configuration."""
        row = {
            "database": database,
            "connect_identifier": connect_identifier,
            "dataguard_role": role,
            "redo_source": "",
            "enabled": enabled,
            "status": status,
            "severity": severity,
        }
        with self._lock:
            self._upsert("v$dg_broker_config", [row])

    def set_archived(self, dest_id: int, seq: int, thread: int = 1) -> None:
        """V$ARCHIVE_DEST_STATUS: the last sequence the destination has archived."""
        with self._lock:
            self._db.execute(
                f'UPDATE {_q("v$archive_dest_status")} SET "ARCHIVED_THREAD#" = ?, '
                '"ARCHIVED_SEQ#" = ? WHERE dest_id = ?',
                (thread, seq, dest_id),
            )

    def publish_resp_hist(self, dest_id: int, freq: Mapping[int, int]) -> None:
        """Cumulative V$REDO_DEST_RESP_HISTOGRAM frequencies per 1-second duration bucket."""
        with self._lock:
            self._upsert(
                "v$redo_dest_resp_histogram",
                (
                    {"dest_id": dest_id, "time": _now_text(), "duration": d, "frequency": f}
                    for d, f in freq.items()
                ),
            )

    def set_dg_stats(
        self,
        transport_lag: float | None,
        apply_lag: float | None,
        datum_time: str = "",
        computed: str | None = None,
        upper: bool = False,
    ) -> None:
        """V$DATAGUARD_STATS lags (seconds, shown as Oracle's interval text).

        As real standbys show it: names in lower case ("transport lag", as SQL*Plus prints them
        from 10.2 to 19c; ``upper`` for the upper case the reference pages write), a lag of None
        is a NULL VALUE (transport stopped), and ``computed`` (TIME_COMPUTED, default: the datum
        time) moves on while a ``datum_time`` that stays put says nothing arrives.
        """
        rows = []
        for name, lag in (("transport lag", transport_lag), ("apply lag", apply_lag)):
            rows.append(
                {
                    "name": name.upper() if upper else name,
                    "value": _interval(lag),
                    "unit": "day(2) to second(0) interval",
                    "time_computed": datum_time if computed is None else computed,
                    "datum_time": datum_time,
                }
            )
        with self._lock:
            self._upsert("v$dataguard_stats", rows)

    def log_switch(self, thread: int = 1, when: float | None = None) -> int:
        """Add one V$LOG_HISTORY row (the next sequence of the thread); returns the sequence."""
        seq = self._seq.get(thread, 0) + 1
        self._seq[thread] = seq
        with self._lock:
            self._upsert(
                "v$log_history",
                [
                    {
                        "RECID": self._recid(),
                        "THREAD#": thread,
                        "SEQUENCE#": seq,
                        "first_time": _now_text(when),
                        "RESETLOGS_CHANGE#": self._resetlogs,
                    }
                ],
            )
        return seq

    def _recid(self) -> int:
        return int(self._db.execute('SELECT COUNT(*) FROM "v$log_history"').fetchone()[0]) + 1

    def resetlogs(self, change: int | None = None) -> None:
        """OPEN RESETLOGS (a failover, a flashback): a new incarnation whose sequences start at 1
        again; the old incarnation's history stays in V$LOG_HISTORY, as on a real database."""
        self._resetlogs = change if change is not None else self._resetlogs + 1_000_000
        self._seq.clear()
        with self._lock:
            self._single("v$database", {"RESETLOGS_CHANGE#": self._resetlogs})

    def set_apply(self, state: str | None) -> None:
        """MRP0's state (APPLYING_LOG, WAIT_FOR_LOG ...), or None for no MRP at all: in
        V$DATAGUARD_PROCESS from 12.2, in V$MANAGED_STANDBY before 21c."""
        with self._lock:
            for view, name in (("v$dataguard_process", "name"), ("v$managed_standby", "process")):
                if self.columns(view):
                    self._db.execute(f"DELETE FROM {_q(view)} WHERE {name} LIKE 'MRP%'")
            if state is None:
                return
            if self.columns("v$dataguard_process"):
                row = {"name": "MRP0", "pid": 4242, "role": "managed recovery", "action": state}
                self._upsert("v$dataguard_process", [row])
            if self.columns("v$managed_standby"):
                row = {"process": "MRP0", "pid": 4242, "status": state, "THREAD#": 1}
                self._upsert("v$managed_standby", [row])

    def set_receiving(self, thread: int, seq: int | None, block: int = 0) -> None:
        """The RFS process receiving a thread (one per sending primary instance) at ``seq`` and
        ``block``; ``seq`` None: it is gone (its instance's transport stopped).  19c names it
        "rfs" in V$DATAGUARD_PROCESS, as real standbys print it; V$MANAGED_STANDBY says RFS."""
        pid = 5000 + thread
        with self._lock:
            for view, name in (("v$dataguard_process", "name"), ("v$managed_standby", "process")):
                if self.columns(view):
                    self._db.execute(
                        f"DELETE FROM {_q(view)} WHERE UPPER({name}) = 'RFS' AND pid = ?", (pid,)
                    )
            if seq is None:
                return
            at = {"pid": pid, "THREAD#": thread, "SEQUENCE#": seq, "BLOCK#": block}
            if self.columns("v$dataguard_process"):
                row = {"name": "rfs", "role": "RFS sync", "action": "RECEIVING", **at}
                self._upsert("v$dataguard_process", [row])
            if self.columns("v$managed_standby"):
                self._upsert("v$managed_standby", [{"process": "RFS", "status": "RECEIVING", **at}])

    def set_gap(self, gaps: Iterable[tuple[int, int, int]] = ()) -> None:
        """V$ARCHIVE_GAP rows (thread, low sequence, high sequence); none: no gap."""
        with self._lock:
            self._db.execute(f"DELETE FROM {_q('v$archive_gap')}")
            self._upsert(
                "v$archive_gap",
                ({"THREAD#": t, "LOW_SEQUENCE#": lo, "HIGH_SEQUENCE#": hi} for t, lo, hi in gaps),
            )

    def set_standby_logs(
        self,
        thread: int = 1,
        active: int = 1,
        groups: int = 4,
        size: int = LOG_BYTES,
        members: int = 1,
    ) -> None:
        """V$STANDBY_LOG: the thread's groups, now ``groups`` of ``size`` bytes, ``active`` of
        them ACTIVE; each with ``members`` V$LOGFILE rows of TYPE STANDBY (seed 000: one)."""
        numbers = [thread * 100 + g for g in range(groups)]
        rows = [
            {
                "GROUP#": n,
                "THREAD#": thread,
                "SEQUENCE#": self._seq.get(thread, 0) + 1 if g < active else 0,  # the current
                "bytes": size,
                "used": 0,
                "status": "ACTIVE" if g < active else "UNASSIGNED",
            }
            for g, n in enumerate(numbers)
        ]
        with self._lock:
            self._replace("v$standby_log", thread, rows)
            self._members(numbers, "STANDBY", members, f"srl_t{thread}")

    def set_online_logs(
        self, thread: int = 1, groups: int = 3, size: int = LOG_BYTES, members: int = 1
    ) -> None:
        """V$LOG: the thread's online log groups, now ``groups`` of ``size`` bytes (the first one
        CURRENT, the others the sequences before it), each with ``members`` V$LOGFILE rows of
        TYPE ONLINE."""
        numbers = [(thread - 1) * groups + 1 + g for g in range(groups)]
        rows = [
            {
                "GROUP#": n,
                "THREAD#": thread,
                "SEQUENCE#": max(0, self._seq.get(thread, 0) + 1 - g),
                "bytes": size,
                "blocksize": 512,
                "members": members,
                "archived": "NO" if g == 0 else "YES",
                "status": "CURRENT" if g == 0 else "INACTIVE",
            }
            for g, n in enumerate(numbers)
        ]
        with self._lock:
            self._replace("v$log", thread, rows)
            self._members(numbers, "ONLINE", members, f"redo_t{thread}")

    def _replace(self, view: str, thread: int, rows: Iterable[Mapping[str, object]]) -> None:
        """Under the lock: a thread's log groups (and their members) replaced by ``rows``."""
        where = f'FROM {_q(view)} WHERE "THREAD#" = ?'
        self._db.execute(
            f'DELETE FROM {_q("v$logfile")} WHERE "GROUP#" IN (SELECT "GROUP#" {where})',
            (thread,),
        )
        self._db.execute(f"DELETE {where}", (thread,))
        self._upsert(view, rows)

    def _members(self, groups: list[int], kind: str, members: int, stem: str) -> None:
        """Under the lock: each group's V$LOGFILE rows, ``members`` of them (the first on
        +REDO, further ones on +RECO, as a multiplexed group is laid out)."""
        self._upsert(
            "v$logfile",
            (
                {
                    "GROUP#": g,
                    "status": None,  # NULL: the member is in use
                    "type": kind,
                    "member": f"+{'REDO' if m == 0 else 'RECO'}/{self.db_unique_name}/"
                    f"onlinelog/{stem}_g{g}_m{m + 1}.log",
                    "is_recovery_dest_file": "NO",
                }
                for g in groups
                for m in range(members)
            ),
        )

    def set_parameter(self, name: str, value: str, default: bool = False) -> None:
        """A V$PARAMETER row (``name`` in lower case, as Oracle lists it)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT num FROM {_q('v$parameter')} WHERE name = ?", (name,)
            ).fetchone()
            num = (
                row[0]
                if row
                else self._db.execute(f"SELECT COUNT(*) + 1 FROM {_q('v$parameter')}").fetchone()[0]
            )
            self._upsert(
                "v$parameter",
                [
                    {
                        "num": num,
                        "name": name,
                        "type": 2,  # string
                        "value": value,
                        "display_value": value,
                        "isdefault": "TRUE" if default else "FALSE",
                    }
                ],
            )

    def restart(self, startup: float | None = None) -> None:
        """An instance restart: new startup time, every cumulative counter back to zero."""
        self._buckets.clear()
        with self._lock:
            for view in ("v$system_event", "v$event_histogram", "v$sysstat"):
                self._db.execute(f"DELETE FROM {_q(view)}")
            if self.columns("v$event_histogram_micro"):
                self._db.execute(f"DELETE FROM {_q('v$event_histogram_micro')}")
            self._db.execute(f"DELETE FROM {_q('v$redo_dest_resp_histogram')}")
        self.set_instance(startup)

    # -- trace files ---------------------------------------------------------------------------

    def set_trace_dir(self, path: str) -> None:
        """V$DIAG_INFO's ``Diag Trace`` row: where the background processes write their traces."""
        with self._lock:
            self._upsert("v$diag_info", [{"name": "Diag Trace", "value": path}])

    def set_process(self, pname: str, spid: int, pid: int | None = None) -> None:
        """A background process (``LGWR``, ``LG00``, ``NSS2``, ``RFS``) and its OS pid.  Without
        ``pid`` (Oracle's process number) it replaces the process of that name, a respawn (its
        trace is a new file); with one it adds another of the name (an RFS per client)."""
        with self._lock:
            if pid is None:
                row = self._db.execute(
                    f"SELECT pid FROM {_q('v$process')} WHERE pname = ?", (pname,)
                ).fetchone()
                n = self._db.execute(f"SELECT COUNT(*) FROM {_q('v$process')}").fetchone()[0]
                pid = row[0] if row else n + 1
            self._upsert("v$process", [{"pid": pid, "pname": pname, "spid": str(spid)}])

    # -- logins ----------------------------------------------------------------------------------

    def add_user(
        self,
        name: str,
        password: str,
        admin: Iterable[str] = (),
        grants: Iterable[str] = ("SELECT_CATALOG_ROLE",),
    ) -> None:
        """A user the stand-in's ``login`` accepts: its administrative privileges (``sysdg``,
        ``sysdba``) and its grants (``SELECT_CATALOG_ROLE``, or views as ``V_$SYSTEM_EVENT``)."""
        with self._lock:
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {_q(USERS)} (name PRIMARY KEY, pw, admin, grants)"
            )
            self._db.execute(
                f"INSERT OR REPLACE INTO {_q(USERS)} VALUES (?, ?, ?, ?)",
                (
                    name.upper(),
                    password,
                    ",".join(a.lower() for a in admin),
                    ",".join(g.upper() for g in grants),
                ),
            )


USERS = "sgmon$users"
"""The stand-in's users (``StandIn.add_user``): what its ``login`` checks."""
_VIEW = re.compile(r"\bv\$(\w+)", re.IGNORECASE)


class LoginRefused(sqlite3.OperationalError):
    """A login the stand-in refuses, with Oracle's code and text (``sgmon.oracle.errors`` reads
    the code from the text, as from the driver's message)."""


class _Login:
    """A logged-on session: its statements fail as a lost connection's (ORA-03113) once the
    stand-in's file is gone (the database taken away), and an ordinary user's read only the
    views granted (ORA-00942 for another, as Oracle answers for a view the user may not see)."""

    def __init__(self, conn: sqlite3.Connection, path: str, views: frozenset[str] | None) -> None:
        self._conn = conn
        self._path = path
        self._views = views

    def cursor(self) -> _LoginCursor:
        return _LoginCursor(self._conn.cursor(), self._path, self._views)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


class _LoginCursor:
    def __init__(self, cur: sqlite3.Cursor, path: str, views: frozenset[str] | None) -> None:
        self._cur = cur
        self._path = path
        self._views = views

    def execute(self, sql: str, *args: Any) -> _LoginCursor:
        if not os.path.exists(self._path):
            raise sqlite3.OperationalError("ORA-03113: end-of-file on communication channel")
        granted = self._views
        if granted is not None and any(
            f"V_${v.upper()}" not in granted for v in _VIEW.findall(sql)
        ):
            raise sqlite3.OperationalError("ORA-00942: table or view does not exist")
        self._cur.execute(sql, *args)
        return self

    def __getattr__(self, name: str) -> object:
        return getattr(self._cur, name)


def login(path: str, user: str, password: str, mode: str = "normal") -> Any:
    """A session on the stand-in file at ``path`` as a database would grant it: ORA-01017 for an
    unknown user or a wrong password, ORA-01031 for an administrative login (``sysdg``,
    ``sysdba``) the user does not hold, ORA-01033 for an ordinary login while the database is
    not open (mounted, or starting), ORA-12541 when there is no file (no database there); then
    see ``_Login``.  For ``dsn = "standin:PATH"``."""
    if not os.path.exists(path):
        raise LoginRefused("ORA-12541: TNS:no listener")
    conn = open_session(f"file:{path}?mode=ro")
    try:
        row = conn.execute(
            f"SELECT pw, admin, grants FROM {_q(USERS)} WHERE name = ?", (user.upper(),)
        ).fetchone()
        if row is None or row[0] != password:
            raise LoginRefused("ORA-01017: invalid username/password; logon denied")
        admin, grants = row[1].split(","), set(row[2].split(","))
        if mode != "normal":
            if mode not in admin:
                raise LoginRefused("ORA-01031: insufficient privileges")
            return _Login(conn, path, None)
        state = conn.execute(f"SELECT open_mode FROM {_q('v$database')}").fetchone()
        if state is None or not str(state[0]).startswith("READ"):
            raise LoginRefused("ORA-01033: ORACLE initialization or shutdown in progress")
    except sqlite3.OperationalError:
        conn.close()
        raise
    return _Login(conn, path, None if "SELECT_CATALOG_ROLE" in grants else frozenset(grants))


def _lwp_default(version: tuple[int, ...]) -> str:
    """DB_LOST_WRITE_PROTECT's default (Database Reference): AUTO from 19c RU 19.26 and in 23ai
    and later, NONE before (and in 21c)."""
    return "AUTO" if (19, 26) <= version < (20,) or version >= (23,) else "NONE"


def _q(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def _base(version: tuple[int, ...]) -> str:
    return f"{version[0]}.0.0.0.0"


def _interval(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    s = round(seconds)
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"+{d:02d} {h:02d}:{m:02d}:{s:02d}"


def open_session(
    uri: str, container: tuple[int, str] = (0, "PROD"), read_only: bool = False
) -> sqlite3.Connection:
    """A DB-API connection to a stand-in by its SQLite URI (``file:/path``), as a collector's
    session opens one: with SYS_CONTEXT('USERENV', 'CON_ID' / 'CON_NAME') answering for the
    ``container`` (a non-CDB by default).  ``read_only``: a reader in another process (the lab)."""
    if read_only:
        uri += ("&" if "?" in uri else "?") + "mode=ro"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    names: dict[str, str | int] = {"CON_ID": container[0], "CON_NAME": container[1]}

    def sys_context(namespace: str, name: str) -> str | int | None:
        return names.get(str(name).upper()) if str(namespace).upper() == "USERENV" else None

    conn.create_function("SYS_CONTEXT", 2, sys_context)
    return conn

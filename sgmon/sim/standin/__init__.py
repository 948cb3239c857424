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
The views are published by area: the tables (``views``), the waits and statistics (``waits``),
Data Guard (``dataguard``), the redo logs (``redo``) and the logins (``logins``).
"""

from __future__ import annotations

from sgmon.sim.standin.dataguard import DataGuard
from sgmon.sim.standin.histograms import MICRO_BOUNDS, MILLI_BOUNDS, Buckets
from sgmon.sim.standin.logins import USERS, LoginRefused, Users, login
from sgmon.sim.standin.redo import LOG_BYTES, RedoLogs
from sgmon.sim.standin.views import KEYS, VIEWS, dg_stamp, now_text, open_session, quoted
from sgmon.sim.standin.waits import Waits

__all__ = [
    "KEYS",
    "LOG_BYTES",
    "MICRO_BOUNDS",
    "MILLI_BOUNDS",
    "USERS",
    "VIEWS",
    "Buckets",
    "LoginRefused",
    "StandIn",
    "dg_stamp",
    "login",
    "open_session",
]


class StandIn(Waits, DataGuard, RedoLogs, Users):
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
        super().__init__(path, version, container)
        self.dbid = dbid
        """V$DATABASE.DBID: a physical standby has its primary's, so both default to one."""
        self._buckets = {}
        self._seq = {}
        self._resetlogs = 1
        self.set_instance(startup)
        self.db_unique_name = db_unique_name
        self.set_database(database_role=role, db_unique_name=db_unique_name)
        self.set_online_logs(thread=1)
        self.set_parameter("db_lost_write_protect", _lwp_default(self.version), default=True)
        if "STANDBY" in role.upper():
            self.set_apply("APPLYING_LOG")  # a healthy standby applies what it receives

    def set_instance(self, startup: float | None = None, **cols: object) -> None:
        """V$INSTANCE: version, status, and the startup time (epoch seconds)."""
        values: dict[str, object] = {
            "instance_name": "sgmon",
            "host_name": "sim",
            "version": self.version_text if self.version < (18,) else _base(self.version),
            "status": "OPEN",
            "startup_time": now_text(startup),
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

    def set_parameter(self, name: str, value: str, default: bool = False) -> None:
        """A V$PARAMETER row (``name`` in lower case, as Oracle lists it)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT num FROM {quoted('v$parameter')} WHERE name = ?", (name,)
            ).fetchone()
            num = (
                row[0]
                if row
                else self._db.execute(
                    f"SELECT COUNT(*) + 1 FROM {quoted('v$parameter')}"
                ).fetchone()[0]
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
                self._db.execute(f"DELETE FROM {quoted(view)}")
            if self.columns("v$event_histogram_micro"):
                self._db.execute(f"DELETE FROM {quoted('v$event_histogram_micro')}")
            self._db.execute(f"DELETE FROM {quoted('v$redo_dest_resp_histogram')}")
        self.set_instance(startup)

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
                    f"SELECT pid FROM {quoted('v$process')} WHERE pname = ?", (pname,)
                ).fetchone()
                n = self._db.execute(f"SELECT COUNT(*) FROM {quoted('v$process')}").fetchone()[0]
                pid = row[0] if row else n + 1
            self._upsert("v$process", [{"pid": pid, "pname": pname, "spid": str(spid)}])


def _lwp_default(version: tuple[int, ...]) -> str:
    """DB_LOST_WRITE_PROTECT's default (Database Reference): AUTO from 19c RU 19.26 and in 23ai
    and later, NONE before (and in 21c)."""
    return "AUTO" if (19, 26) <= version < (20,) or version >= (23,) else "NONE"


def _base(version: tuple[int, ...]) -> str:
    return f"{version[0]}.0.0.0.0"

"""The stand-in's tables: the V$ views sgmon reads, with the columns each version has, and the
SQLite database that holds them (``Tables``, the base of ``StandIn``)."""

from __future__ import annotations

import datetime as _dt
import itertools
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping

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


def now_text(when: float | None = None) -> str:
    """A DATE column's text: now, or the epoch seconds ``when``."""
    t = _dt.datetime.now() if when is None else _dt.datetime.fromtimestamp(when)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def dg_stamp(when: float | None = None) -> str:
    """A V$DATAGUARD_STATS DATUM_TIME / TIME_COMPUTED as 11g and later print it (now, or the
    epoch seconds ``when``), for every writer of the view's times."""
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(when))


def quoted(ident: str) -> str:
    """An identifier as SQL quotes it (``"THREAD#"``, ``"v$sysstat"``)."""
    return '"' + ident.replace('"', '""') + '"'


class Tables:
    """The V$ tables of one stand-in, in a SQLite database of their own (in memory, shared by
    the connections to it, or a file that another process may read)."""

    def __init__(self, path: str, version: str, container: tuple[int, str]) -> None:
        self.container = container
        """SYS_CONTEXT('USERENV', 'CON_ID' / 'CON_NAME') of its sessions: (0, name) a non-CDB,
        (1, 'CDB$ROOT') the root, (3, 'PDB1') a session opened on a PDB's service."""
        self.version_text = version
        self.version = parse_version(version)
        if path == ":memory:":
            self._uri = f"file:sgmon-standin-{next(_ids)}-{id(self)}?mode=memory&cache=shared"
        else:
            self._uri = f"file:{path}"
        self._lock = threading.Lock()
        self._db = self.connect()  # keeps an in-memory database alive
        if path != ":memory:":  # readers in other processes never wait for the publisher
            self._db.execute("PRAGMA journal_mode=WAL")
        self._dropped: set[str] = set()
        self._create()

    def connect(self) -> sqlite3.Connection:
        """A new DB-API connection to this stand-in (what the collector's session is given),
        with Oracle's DUAL and SYS_CONTEXT('USERENV', ...) for the container check."""
        return open_session(self._uri, self.container)

    def close(self) -> None:
        """Drop the keeper connection (an in-memory stand-in then disappears)."""
        self._db.close()

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
                pk = f", PRIMARY KEY ({', '.join(quoted(k) for k in key)})" if key else ""
                names = ", ".join(map(quoted, cols))
                self._db.execute(f"CREATE TABLE IF NOT EXISTS {quoted(view)} ({names}{pk})")

    def drop_view(self, view: str) -> None:
        """Make a view disappear (a test of the one-note path)."""
        self._dropped.add(view)
        with self._lock:
            self._db.execute(f"DROP TABLE IF EXISTS {quoted(view)}")

    def _upsert(self, view: str, rows: Iterable[Mapping[str, object]]) -> None:
        for cols, same in itertools.groupby(rows, key=tuple):  # one statement a column set
            sql = (
                f"INSERT OR REPLACE INTO {quoted(view)} ({', '.join(map(quoted, cols))}) "
                f"VALUES ({', '.join('?' for _ in cols)})"
            )
            self._db.executemany(sql, ([row[c] for c in cols] for row in same))

    def _single(self, view: str, values: Mapping[str, object]) -> None:
        cur = self._db.execute(f"SELECT COUNT(*) FROM {quoted(view)}").fetchone()[0]
        if not cur:
            self._upsert(view, [values])
            return
        sets = ", ".join(f"{quoted(c)} = ?" for c in values)
        self._db.execute(f"UPDATE {quoted(view)} SET {sets}", list(values.values()))


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

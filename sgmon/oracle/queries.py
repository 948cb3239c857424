"""The SQL the database collectors run, kept as data: one text per query and minimum version.

Each query maps ``(major, minor)`` -> SQL text; the text used is the one with the highest minimum
version at or below the database's version, and a query with no such entry is not run on that
version (the view does not exist there).  Every statement is a single SELECT over one documented V$
view (the destination query joins the two views it needs), fetched in one round trip.  Names that
Oracle spells with ``#`` are written as quoted upper-case identifiers (``"THREAD#"``), which Oracle
resolves to the same column and which the SQLite stand-in also accepts, so the exact text runs in
both.  The wait-event list is data too: the built-in names per version below, plus the config's
``events``, rendered once per session as a literal IN list (no binds: the text never changes, so
the statement cache and the shared cursor are reused every tick).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sgmon.events import GC_BUSY, GCS_LOG_FLUSH

Version = tuple[int, ...]

# seed 000 Table 4 (12.1 onward) and the commit-path events every version has
EVENTS_12C = (
    "log file sync",
    "log file parallel write",
    "SYNC Remote Write",
    "Redo Transport MISC",
    "ASYNC Remote Write",
    "ARCH Remote Write",
    "Redo Transport Attach",
    "Redo Transport Close",
    "Redo Transport Detach",
    "Redo Transport Open",
    "Redo Transport Ping",
    "Redo Transport Slave Shutdown",
    "Redo Transport Slave Startup",
    "Redo Writer Remote Sync Complete",
    "Redo Writer Remote Sync Notify",
    "Remote SYNC Ping",
    "Standby redo I/O",
    # scalable LGWR (12c): LGWR waiting for its LGnn workers, which a CPU shortage stretches
    "LGWR any worker group",
    "LGWR all worker groups",
    "LGWR worker group ordering",
    "LGWR intra group sync",
    "LGWR intra group IO completion",
)
LOG_SPACE = (
    "log buffer space",
    "log file switch completion",
    "log file switch (checkpoint incomplete)",
    "log file switch (archiving needed)",
    "log file switch (private strand flush incomplete)",
)
"""Sessions stalled before they can commit: LGWR behind, or a log switch waiting (all versions)."""
RAC_EVENTS = (GCS_LOG_FLUSH, *GC_BUSY)
"""RAC's waits for another instance's redo (``sgmon.events``): every version since 10g; a single
instance never waits on them, so they add no rows there."""
# seed 000 Table 3 (11.2)
EVENTS_11G = (
    "log file sync",
    "log file parallel write",
    "ARCH wait on ATTACH",
    "ARCH wait on SENDREQ",
    "ARCH wait on DETACH",
    "LNS wait on ATTACH",
    "LNS wait on SENDREQ",
    "LNS wait on DETACH",
    "LGWR wait on LNS",
    "LNS wait on LGWR",
    "LGWR-LNS wait on channel",
    "Standby redo I/O",
)
# receiving side: every RFS event (RFS write, RFS random i/o, RFS sequential i/o, RFS dispatch...)
EVENT_PATTERNS = ("RFS%",)

RATE_S = 10.0
"""Seconds over which the RFS positions of the "apply" query (THREAD#, SEQUENCE#, BLOCK#) become
a thread's receive rate (the dg collector, the log rules): long enough that one late sample does
not look like a slow link, short enough to see a thread fall behind within seconds."""

SYSSTATS = (
    "redo size",
    "redo writes",
    "redo write time",
    "redo write time (usec)",
    "redo synch writes",
    "redo synch time",
    "redo synch time (usec)",
    "user commits",
    "user rollbacks",
    "redo size for lost write detection",
    "physical reads cache",
    # adaptive log file sync: commits that poll instead of being posted, and the overhead
    "redo synch polls",
    "redo synch poll writes",
    "redo synch time overhead (usec)",
    # RAC broadcast on commit (seed 000 commit steps 4 and 9): LGWR's wait for the other
    # instances' SCN acks beyond its own write, microseconds, and how many writes waited
    "redo write broadcast ack time",
    "redo write broadcast ack count",
)

QUERIES: dict[str, dict[Version, str]] = {
    # run on every (re)connect: version, the startup time that marks a restart, and which RAC
    # instance and redo thread this is (every row of this session belongs to that one instance)
    "instance": {
        (0,): 'SELECT instance_name, version, status, startup_time, instance_number, "THREAD#"'
        " FROM v$instance",
    },
    "version_full": {
        (18, 0): "SELECT version_full FROM v$instance",
    },
    # the container the session is in: a PDB sees its own statistics while LGWR and NSS wait in
    # the root (CON_ID 0: not a CDB, 1: the root, 2 and up: a PDB)
    "container": {
        (12, 1): "SELECT SYS_CONTEXT('USERENV', 'CON_ID'), SYS_CONTEXT('USERENV', 'CON_NAME')"
        " FROM dual",
    },
    # run every tick (restart detection), one row
    "startup": {
        (0,): "SELECT startup_time FROM v$instance",
    },
    "database": {
        (0,): "SELECT database_role, protection_mode, protection_level, open_mode, db_unique_name,"
        " switchover_status FROM v$database",
    },
    "system_event": {
        (11, 2): "SELECT event, total_waits, time_waited_micro FROM v$system_event"
        " WHERE event IN ({events}) OR {patterns}",
    },
    "histogram": {
        (0,): "SELECT event, wait_time_milli, wait_count FROM v$event_histogram"
        " WHERE event IN ({events}) OR {patterns} ORDER BY event, wait_time_milli",
        (12, 1): "SELECT event, wait_time_micro, wait_count FROM v$event_histogram_micro"
        " WHERE event IN ({events}) OR {patterns} ORDER BY event, wait_time_micro",
    },
    "sysstat": {
        (0,): "SELECT name, value FROM v$sysstat WHERE name IN ({stats})",
    },
    "dest": {
        (11, 2): "SELECT d.dest_id, d.status, d.target, d.transmit_mode, d.affirm,"
        " d.net_timeout, d.db_unique_name, d.error, s.status, s.gap_status, s.error,"
        ' d.destination, d.valid_role, s.type, s."ARCHIVED_SEQ#", s."ARCHIVED_THREAD#",'
        " d.valid_now"
        " FROM v$archive_dest d JOIN v$archive_dest_status s ON s.dest_id = d.dest_id"
        " WHERE d.target IN ('STANDBY', 'REMOTE') AND d.status <> 'INACTIVE'"
        " ORDER BY d.dest_id",
    },
    "resp_histogram": {
        (11, 1): "SELECT dest_id, duration, frequency FROM v$redo_dest_resp_histogram"
        " WHERE frequency > 0 ORDER BY dest_id, duration",
    },
    "dg_stats": {
        (11, 2): "SELECT name, value, unit, time_computed, datum_time FROM v$dataguard_stats"
        " WHERE LOWER(name) IN ('transport lag', 'apply lag')",
    },
    "log_history": {
        # the current incarnation only: after a RESETLOGS (failover, flashback) sequences start
        # again at 1, and MAX over every incarnation would freeze at the old one's last
        (0,): 'SELECT "THREAD#", MAX("SEQUENCE#") FROM v$log_history'
        ' WHERE "RESETLOGS_CHANGE#" = (SELECT "RESETLOGS_CHANGE#" FROM v$database)'
        ' GROUP BY "THREAD#" ORDER BY "THREAD#"',
    },
    "apply": {
        # MRP0: absent, or not APPLYING_LOG, means the standby receives but does not apply; the
        # RFS rows in the same statement say where each redo thread's reception stands (THREAD#,
        # SEQUENCE#, BLOCK#: one RFS per sending primary instance).  19c prints RFS's NAME in
        # lower case ("rfs"), so it is compared upper-cased.
        (0,): 'SELECT process, status, "THREAD#", "SEQUENCE#", "BLOCK#" FROM v$managed_standby'
        " WHERE process LIKE 'MRP%' OR UPPER(process) LIKE 'RFS%'",
        (12, 2): 'SELECT name, action, "THREAD#", "SEQUENCE#", "BLOCK#" FROM v$dataguard_process'
        " WHERE name LIKE 'MRP%' OR UPPER(name) LIKE 'RFS%'",
    },
    "archive_gap": {
        (0,): 'SELECT "THREAD#", "LOW_SEQUENCE#", "HIGH_SEQUENCE#" FROM v$archive_gap'
        ' ORDER BY "THREAD#"',
    },
    "standby_log": {
        (0,): 'SELECT "THREAD#", COUNT(*) FROM v$standby_log'
        ' WHERE status = \'ACTIVE\' GROUP BY "THREAD#" ORDER BY "THREAD#"',
    },
    # read once by `check --symmetry` (sgmon.symmetry), never per tick: the redo log layout
    # seed 000 asks of both sides (SRLs = online groups + 1 per thread, of the online size, one
    # member each) and DB_LOST_WRITE_PROTECT (seed 003); all controlfile or memory based, so a
    # mounted standby answers them
    "online_logs": {
        (0,): 'SELECT "GROUP#", "THREAD#", bytes, members FROM v$log ORDER BY "THREAD#", "GROUP#"',
    },
    "standby_logs": {
        (0,): 'SELECT "GROUP#", "THREAD#", bytes FROM v$standby_log ORDER BY "THREAD#", "GROUP#"',
    },
    "standby_log_members": {
        (0,): "SELECT \"GROUP#\", member FROM v$logfile WHERE type = 'STANDBY'"
        ' ORDER BY "GROUP#", member',
    },
    # read by `sgmon discover`: the configuration's other members.  The broker's view lists every
    # member from any member (23ai adds SEVERITY); before, or without the broker, the
    # destinations this database ships redo to.  Columns: unique name, connect identifier, role,
    # enabled, status (ORA- number, or the destination's status), severity.
    "members": {
        (0,): "SELECT db_unique_name, destination, 'STANDBY', 'TRUE', status, NULL"
        " FROM v$archive_dest WHERE target = 'STANDBY' AND status <> 'INACTIVE'"
        " ORDER BY dest_id",
        (23, 0): "SELECT database, connect_identifier, dataguard_role, enabled, status, severity"
        " FROM v$dg_broker_config ORDER BY database",
    },
    "lost_write_protect": {
        (0,): "SELECT value FROM v$parameter WHERE name = 'db_lost_write_protect'",
    },
}


def parse_version(text: str) -> Version:
    """``'19.0.0.0.0'`` -> ``(19, 0, 0, 0, 0)``; unparseable parts stop the tuple."""
    out = []
    for part in str(text).split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
    return tuple(out) or (0,)


def variants(name: str, version: Version) -> list[str]:
    """The texts of query ``name`` that ``version`` may run, preferred (newest) first; the
    older ones are fallbacks for a view the version should have but the database lacks."""
    usable = [(m, t) for m, t in QUERIES[name].items() if m <= version]
    return [t for _, t in sorted(usable, reverse=True)]


def pick(name: str, version: Version) -> str | None:
    """The preferred text of query ``name`` for ``version``, None when it has no such view."""
    texts = variants(name, version)
    return texts[0] if texts else None


def histogram_unit_us(text: str) -> int:
    """Microseconds per unit of a histogram query's bucket column."""
    return 1 if "wait_time_micro" in text else 1000


def default_events(version: Version) -> tuple[str, ...]:
    """The built-in event list for a version (LNS names before 12.1, NSS/TT names and the LGWR
    worker events after), with the log space and log switch stalls and RAC's block flush waits
    of every version."""
    return (*(EVENTS_12C if version >= (12, 1) else EVENTS_11G), *LOG_SPACE, *RAC_EVENTS)


def literal_list(values: Iterable[str]) -> str:
    """A SQL IN-list of string literals, quotes doubled."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in dict.fromkeys(values))


def render_all(name: str, version: Version, events: Iterable[str] = ()) -> list[str]:
    """The final texts of a query for a version and event list, preferred first."""
    evs = tuple(default_events(version)) + tuple(events)
    return [
        text.format(
            events=literal_list(evs),
            patterns=" OR ".join("event LIKE " + literal_list([p]) for p in EVENT_PATTERNS),
            stats=literal_list(SYSSTATS),
        )
        for text in variants(name, version)
    ]


def render(name: str, version: Version, events: Iterable[str] = ()) -> str | None:
    """The preferred final text (None: no such view on this version)."""
    texts = render_all(name, version, events)
    return texts[0] if texts else None

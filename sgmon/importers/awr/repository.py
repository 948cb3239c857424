"""Reading the AWR repository: its history statements, its snapshots with their ends in UTC,
the window's (with the baseline before it) per instance, and each instance's host name (see
the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sgmon.errors import Unreachable
from sgmon.oracle import queries
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session

LICENCE = "AWR is part of the Oracle Diagnostics Pack: query it only where that licence is held"
VIEWS = (
    "DBA_HIST_SNAPSHOT",
    "DBA_HIST_DATABASE_INSTANCE",
    "DBA_HIST_SYSTEM_EVENT",
    "DBA_HIST_EVENT_HISTOGRAM",
    "DBA_HIST_SYSSTAT",
    "DBA_HIST_OSSTAT",
)
OSSTATS = ("USER_TIME", "NICE_TIME", "SYS_TIME", "IDLE_TIME", "IOWAIT_TIME", "BUSY_TIME", "LOAD")

_SNAPSHOTS = (
    "SELECT s.instance_number, s.snap_id, s.startup_time, s.end_interval_time, {tz},"
    " i.instance_name, i.host_name"
    " FROM dba_hist_snapshot s JOIN dba_hist_database_instance i"
    " ON i.dbid = s.dbid AND i.instance_number = s.instance_number"
    " AND i.startup_time = s.startup_time"
    " WHERE s.dbid = :dbid ORDER BY s.instance_number, s.snap_id"
)
SNAPSHOTS = _SNAPSHOTS.format(tz="s.snap_timezone")
SNAPSHOTS_NO_TZ = _SNAPSHOTS.format(tz="NULL")  # before 11.2.0.2: no SNAP_TIMEZONE column
_RANGE = "dbid = :dbid AND snap_id BETWEEN :lo AND :hi"


def statements(extra_events: Sequence[str] = ()) -> dict[str, str]:
    """The four history statements, event and statistic lists rendered as literal IN lists (the
    live collectors' lists: both versions' Data Guard event names, since history may span an
    upgrade, every RFS event, and the config's extra events)."""
    events = queries.literal_list(
        (
            *queries.EVENTS_12C,
            *queries.EVENTS_11G,
            *queries.LOG_SPACE,
            *queries.RAC_EVENTS,
            *extra_events,
        )
    )
    like = " OR ".join(
        "event_name LIKE " + queries.literal_list([p]) for p in queries.EVENT_PATTERNS
    )
    where = f"{_RANGE} AND (event_name IN ({events}) OR {like})"
    return {
        "events": "SELECT instance_number, snap_id, event_name, total_waits, time_waited_micro"
        f" FROM dba_hist_system_event WHERE {where}",
        "histogram": "SELECT instance_number, snap_id, event_name, wait_time_milli, wait_count"
        f" FROM dba_hist_event_histogram WHERE {where}",
        "sysstat": "SELECT instance_number, snap_id, stat_name, value FROM dba_hist_sysstat"
        f" WHERE {_RANGE} AND stat_name IN ({queries.literal_list(queries.SYSSTATS)})",
        "osstat": "SELECT instance_number, snap_id, stat_name, value FROM dba_hist_osstat"
        f" WHERE {_RANGE} AND stat_name IN ({queries.literal_list(OSSTATS)})",
    }


@dataclass(frozen=True, slots=True)
class Snap:
    """One snapshot of one instance, its end in UTC epoch seconds."""

    instance: int
    snap_id: int
    startup: Any
    end: float
    name: str
    host: str


@dataclass
class Window:
    """What to import: the UTC time range, the DBID, and how to name and place the hosts."""

    start: float
    end: float
    dbid: int | None = None
    host: str = ""
    role: str = ""
    tz: float | None = None  # seconds east of UTC, for databases without SNAP_TIMEZONE


def select(session: Session, text: str, binds: Mapping[str, Any] | None = None) -> list[tuple]:
    """One statement; an unreadable view becomes the one line naming the grant."""
    try:
        return session.select(text, binds)
    except OracleError as e:
        raise _unreadable(session, text, e) from None


def _unreadable(session: Session, text: str, e: OracleError) -> Unreachable:
    """The error as one line; a missing view or privilege names the grant and the licence."""
    if e.code not in ("ORA-00942", "ORA-01031"):
        return Unreachable(str(e))
    view = next((v for v in VIEWS if v.lower() in text), "V$DATABASE")
    who = session.where.user or "this user"
    return Unreachable(
        f"{e.code} {view} is not readable by {who}: GRANT SELECT_CATALOG_ROLE TO {who} "
        f"(or SELECT on {', '.join(VIEWS)}); {LICENCE}"
    )


def snapshots(session: Session, dbid: int, win: Window, notes: list[str]) -> list[Snap]:
    """Every snapshot of the DBID, ends converted to UTC (see the module docstring)."""
    binds = {"dbid": dbid}
    try:
        rows = session.select(SNAPSHOTS, binds)
    except OracleError as e:
        if e.code != "ORA-00904":  # ORA-00904: no SNAP_TIMEZONE before 11.2.0.2
            raise _unreadable(session, SNAPSHOTS, e) from None
        rows = select(session, SNAPSHOTS_NO_TZ, binds)
    if rows and any(r[4] is None for r in rows) and win.tz is None:
        notes.append(
            "DBA_HIST_SNAPSHOT has no SNAP_TIMEZONE (before 11.2.0.2): END_INTERVAL_TIME taken "
            "as UTC; give --tz +HH:MM, the database host's offset, if it is not"
        )
    out = []
    for inst, snap_id, startup, end, tz, name, host in rows:
        offset = _offset(tz) if tz is not None else (win.tz or 0.0)
        utc = _naive(end).replace(tzinfo=UTC) - timedelta(seconds=offset)
        out.append(Snap(int(inst), int(snap_id), startup, utc.timestamp(), name or "", host or ""))
    return out


def in_window(snaps: list[Snap], win: Window) -> dict[int, list[Snap]]:
    """Per instance: the snapshots ending in (start, end], and the one before (the baseline)."""
    out: dict[int, list[Snap]] = {}
    for s in sorted(snaps, key=lambda s: (s.instance, s.end)):
        kept = out.setdefault(s.instance, [])
        if s.end <= win.start:  # its interval ends before the window: a baseline only
            kept[:] = [s]  # the latest before the window so far
        elif s.end <= win.end:
            kept.append(s)
    return {i: v for i, v in out.items() if v and v[-1].end >= win.start}


def nothing(snaps: list[Snap], dbid: int, win: Window) -> str:
    span = f"between {iso(win.start)} and {iso(win.end)} UTC"
    if not snaps:
        return f"AWR holds no snapshot of DBID {dbid} (is this the database? --dbid N)"
    first, last = min(s.end for s in snaps), max(s.end for s in snaps)
    return (
        f"no two AWR snapshots of DBID {dbid} {span}: the repository holds {iso(first)} to "
        f"{iso(last)} UTC; give --from/--to or --days inside it"
    )


def host_names(chosen: dict[int, list[Snap]], win: Window) -> dict[int, str]:
    """Instance number -> archive host name (see the module docstring)."""
    last = {i: v[-1] for i, v in chosen.items()}
    if len(last) == 1:
        ((i, s),) = last.items()
        return {i: win.host or s.host or s.name or f"instance{i}"}
    if win.host:
        return {i: f"{win.host}-{s.name or i}" for i, s in last.items()}
    names = [s.host for s in last.values()]
    return {
        i: s.host if s.host and names.count(s.host) == 1 else (s.name or f"instance{i}")
        for i, s in last.items()
    }


def _naive(v: Any) -> datetime:
    """A TIMESTAMP as python-oracledb returns it (datetime) or as text (the stand-in)."""
    if isinstance(v, datetime):
        return v.replace(tzinfo=None)
    return datetime.fromisoformat(str(v))


def _offset(v: Any) -> float:
    """SNAP_TIMEZONE in seconds east of UTC: a timedelta (python-oracledb's INTERVAL DAY TO
    SECOND) or SQL*Plus's text ``+0 02:00:00``."""
    if isinstance(v, timedelta):
        return v.total_seconds()
    text = str(v).strip()
    sign = -1.0 if text.startswith("-") else 1.0
    days, _, hms = text.lstrip("+-").partition(" ")
    h, m, s = (float(x) for x in hms.split(":"))
    return sign * (float(days) * 86400 + h * 3600 + m * 60 + s)


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")

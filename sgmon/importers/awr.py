"""`sgmon import awr`: AWR history (the DBA_HIST_* views) through python-oracledb.

AWR is part of the Oracle Diagnostics Pack: query it only where that licence is held.  The user
needs SELECT_CATALOG_ROLE (or SELECT on the DBA_HIST_* views read here); a missing grant is one
``sgmon:`` line that names it.

The connection is the live collectors' own (``sgmon.oracle.session.Session``): a config
host's ``[host.db]`` (``--config F --db HOST``) or the same keys as options (``--dsn``,
``--user``, ``--mode``, ``--password-env``, ``--wallet-dir``, ``--password-prompt``,
``--thick``), with a longer call timeout (history queries are not 2-second polls).

What is read, per DBID (default: the connected database's), INSTANCE_NUMBER and SNAP_ID, in five
statements after the connect: every snapshot of the DBID (DBA_HIST_SNAPSHOT joined to
DBA_HIST_DATABASE_INSTANCE for the host and instance names), then, for the snapshots in the
window plus the one before it, the commit-path events of DBA_HIST_SYSTEM_EVENT and
DBA_HIST_EVENT_HISTOGRAM, the redo statistics of DBA_HIST_SYSSTAT and the CPU times of
DBA_HIST_OSSTAT.  Each pair of consecutive snapshots of an instance with the same STARTUP_TIME
becomes one frame: time = the later END_INTERVAL_TIME, interval = the time between the two,
values = the live collectors' own computation (``oracle_waits``, ``oracle_redo``) on the two
cumulative snapshots, so fields and units are the live ones.  A different STARTUP_TIME (an
instance restart: counters start again at zero) gives no delta: a ``restart`` event and a note
instead; missing SNAP_IDs give a longer interval and a note.

Histograms: DBA_HIST_EVENT_HISTOGRAM is V$EVENT_HISTOGRAM's history, in ms buckets
(WAIT_TIME_MILLI); AWR keeps no history of V$EVENT_HISTOGRAM_MICRO, so every wait under 1 ms is
in the ``<1ms`` bucket, which the archive stores in its 1024 us column (``sgmon.buckets``).

Time zone: END_INTERVAL_TIME is the database host's local time without a zone.  From 11.2.0.2
DBA_HIST_SNAPSHOT.SNAP_TIMEZONE holds each snapshot's offset from UTC, so UTC = END_INTERVAL_TIME
- SNAP_TIMEZONE, right across a daylight-saving switch; before that, ``--tz +HH:MM`` gives the
offset, else the times are taken as UTC and a note says so.

Hosts: ``--host NAME`` names a single instance; else (and per instance for RAC, where each
instance becomes its own host) DBA_HIST_DATABASE_INSTANCE.HOST_NAME, or the instance name when
two instances share a host name; ``--host`` with RAC gives ``NAME-<instance>``.  A 12.2+ Active
Data Guard standby's own snapshots (remote AWR) live on the primary under the standby's DBID:
``--dbid``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from collectors.cpu import cpu_percentages
from collectors.oracle import redo, waits
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.config import DbConfig, db_config, load_config
from sgmon.errors import Unreachable, UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import Builder
from sgmon.model import Event, Rows, Value
from sgmon.oracle import queries
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.units import parse_duration, parse_instant, parse_offset

HELP = (
    "AWR history (DBA_HIST_* views) through python-oracledb; AWR needs the Oracle Diagnostics "
    "Pack licence, and the user SELECT_CATALOG_ROLE or SELECT on the DBA_HIST views"
)
LICENCE = "AWR is part of the Oracle Diagnostics Pack: query it only where that licence is held"
VIEWS = (
    "DBA_HIST_SNAPSHOT",
    "DBA_HIST_DATABASE_INSTANCE",
    "DBA_HIST_SYSTEM_EVENT",
    "DBA_HIST_EVENT_HISTOGRAM",
    "DBA_HIST_SYSSTAT",
    "DBA_HIST_OSSTAT",
)
CALL_TIMEOUT = 60.0
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Connection (as the config's [host.db]), time range, DBID and host naming."""
    parser.epilog = f"{LICENCE}.  Privileges: SELECT_CATALOG_ROLE, or SELECT on {', '.join(VIEWS)}."
    c = parser.add_argument_group("database (the keys of a config's [host.db])")
    c.add_argument("--config", metavar="F", help="sgmon.toml holding the host given by --db")
    c.add_argument("--db", metavar="HOST", help="use this config host's [host.db], name and role")
    c.add_argument("--dsn", help="host:port/service, a TNS alias or a descriptor")
    c.add_argument("--user", default="", help="database user (SELECT_CATALOG_ROLE)")
    c.add_argument("--mode", default="normal", help="normal, sysdba or sysdg")
    c.add_argument("--password-env", default="", metavar="VAR", help="variable with the password")
    c.add_argument("--wallet-dir", default="", metavar="DIR", help="external password store")
    c.add_argument("--password-prompt", action="store_true", help="ask for the password")
    c.add_argument("--thick", action="store_true", help="thick mode (Instant Client; 11.2)")
    c.add_argument(
        "--call-timeout", default=f"{CALL_TIMEOUT:g}s", metavar="T", help="per statement"
    )
    w = parser.add_argument_group("what to import")
    w.add_argument("--from", dest="start", metavar="T", help="UTC start (ISO or HH:MM)")
    w.add_argument("--to", dest="end", metavar="T", help="UTC end (default: now)")
    w.add_argument("--days", type=float, help="the last N days (default 1 without --from)")
    w.add_argument("--dbid", type=int, help="DBID to read (default: the connected database's)")
    w.add_argument("--host", default="", help="host name for the archive (RAC: NAME-<inst>)")
    w.add_argument("--role", choices=("primary", "standby"), help="default: V$DATABASE's now")
    w.add_argument("--tz", help="the database host's UTC offset (+HH:MM), when AWR has none")


def read(args: argparse.Namespace) -> Imported:
    """Connect as the config or the options say, read the window, close."""
    db, host, role = _database(args)
    session = Session(db, role)
    try:
        return import_awr(session, window(args, host, role))
    finally:
        session.close()


def window(args: argparse.Namespace, host: str = "", role: str = "") -> Window:
    """The options' time range (UTC), DBID, names and offset."""
    now = time.time()
    try:
        end = parse_instant(args.end, now) if args.end else now
        if args.start:
            start = parse_instant(args.start, end)
        else:
            start = end - (args.days if args.days is not None else 1.0) * 86400
        tz = parse_offset(args.tz) if args.tz else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if start >= end:
        raise UsageError(f"--from {_iso(start)} is not before --to {_iso(end)} (UTC)")
    return Window(start, end, args.dbid, args.host or host, args.role or role, tz)


def _database(args: argparse.Namespace) -> tuple[DbConfig, str, str]:
    """The DbConfig to connect with, and the config host's name and role if one was named."""
    try:
        timeout = parse_duration(args.call_timeout)
    except ValueError as e:
        raise UsageError(f"--call-timeout: {e}") from None
    if args.db:
        config = load_config(args.config)
        h = next((h for h in config.hosts if h.name == args.db), None)
        if h is None or h.db is None:
            names = ", ".join(x.name for x in config.hosts if x.db) or "none"
            raise UsageError(f"--db {args.db}: no such host with a [host.db] (have: {names})")
        return replace(h.db, call_timeout=max(h.db.call_timeout, timeout)), h.name, h.role
    if not args.dsn:
        raise UsageError("say which database: --dsn host:port/service --user U, or --db HOST")
    d = {
        "dsn": args.dsn,
        "user": args.user,
        "mode": args.mode,
        "password_env": args.password_env,
        "wallet_dir": args.wallet_dir,
        "password": "prompt" if args.password_prompt else "",
        "thick": args.thick,
        "call_timeout": timeout,
    }
    return db_config(d, "sgmon import awr"), "", ""


def import_awr(session: Session, win: Window) -> Imported:
    """Read the window's snapshots through ``session`` and turn them into frames per host."""
    try:
        session.refresh()
    except OracleError as e:  # one attempt: the live session's "retrying" does not apply
        raise Unreachable(
            re.sub(r";? retrying.*$| \(next attempt in \d+s\)$", "", str(e))
        ) from None
    notes: list[str] = []
    dbid = (
        win.dbid if win.dbid is not None else _select(session, "SELECT dbid FROM v$database")[0][0]
    )
    snaps = _snapshots(session, dbid, win, notes)
    chosen = _in_window(snaps, win)
    if not any(len(v) > 1 for v in chosen.values()):
        raise UsageError(_nothing(snaps, dbid, win))
    lo = min(s.snap_id for v in chosen.values() for s in v)
    hi = max(s.snap_id for v in chosen.values() for s in v)
    binds = {"dbid": dbid, "lo": lo, "hi": hi}
    texts = statements(session.events())
    data = {name: _select(session, text, binds) for name, text in texts.items()}
    return _frames(chosen, data, win, notes, session.role)


def _select(session: Session, text: str, binds: Mapping[str, Any] | None = None) -> list[tuple]:
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


def _snapshots(session: Session, dbid: int, win: Window, notes: list[str]) -> list[Snap]:
    """Every snapshot of the DBID, ends converted to UTC (see the module docstring)."""
    binds = {"dbid": dbid}
    try:
        rows = session.select(SNAPSHOTS, binds)
    except OracleError as e:
        if e.code != "ORA-00904":  # ORA-00904: no SNAP_TIMEZONE before 11.2.0.2
            raise _unreadable(session, SNAPSHOTS, e) from None
        rows = _select(session, SNAPSHOTS_NO_TZ, binds)
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


def _in_window(snaps: list[Snap], win: Window) -> dict[int, list[Snap]]:
    """Per instance: the snapshots ending in (start, end], and the one before (the baseline)."""
    out: dict[int, list[Snap]] = {}
    for s in sorted(snaps, key=lambda s: (s.instance, s.end)):
        kept = out.setdefault(s.instance, [])
        if s.end <= win.start:  # its interval ends before the window: a baseline only
            kept[:] = [s]  # the latest before the window so far
        elif s.end <= win.end:
            kept.append(s)
    return {i: v for i, v in out.items() if v and v[-1].end >= win.start}


def _nothing(snaps: list[Snap], dbid: int, win: Window) -> str:
    span = f"between {_iso(win.start)} and {_iso(win.end)} UTC"
    if not snaps:
        return f"AWR holds no snapshot of DBID {dbid} (is this the database? --dbid N)"
    first, last = min(s.end for s in snaps), max(s.end for s in snaps)
    return (
        f"no two AWR snapshots of DBID {dbid} {span}: the repository holds {_iso(first)} to "
        f"{_iso(last)} UTC; give --from/--to or --days inside it"
    )


def _hosts(chosen: dict[int, list[Snap]], win: Window) -> dict[int, str]:
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


def _frames(
    chosen: dict[int, list[Snap]],
    data: dict[str, list[tuple]],
    win: Window,
    notes: list[str],
    db_role: str,
) -> Imported:
    """Deltas of consecutive snapshots through the live collectors' computation."""
    by: dict[tuple[int, int], dict[str, list]] = {}
    for name, rows in data.items():
        for row in rows:
            by.setdefault((int(row[0]), int(row[1])), {}).setdefault(name, []).append(row[2:])
    hosts = _hosts(chosen, win)
    role = win.role or db_role
    waits_c, redo_c = OracleWaitsCollector(), OracleRedoCollector()
    b = Builder(0.0)  # the interval is known once every pair of snapshots is read
    b.imp.notes.extend(notes)
    steps: list[float] = []
    for inst, snaps in chosen.items():
        host = hosts[inst]
        raw = {s.snap_id: _raw(by.get((inst, s.snap_id), {})) for s in snaps}
        has_os = any(raw[s.snap_id][2] for s in snaps)
        for prev, cur in itertools.pairwise(snaps):
            dt = cur.end - prev.end
            if cur.startup != prev.startup or dt <= 0:
                text = (
                    f"instance {cur.name or inst} restarted (startup {cur.startup}) between AWR "
                    f"snapshots {prev.snap_id} and {cur.snap_id}: no delta across it"
                    if cur.startup != prev.startup
                    else f"AWR snapshot {cur.snap_id} does not end after {prev.snap_id}: skipped"
                )
                b.note(f"{host}: {text}")
                kind = "restart" if cur.startup != prev.startup else "note"
                ev = Event(cur.end, "awr", kind, cur.name or str(inst), text)
                b.sample(host, role, cur.end, max(dt, 0.0), {}, (ev,))
                continue
            if cur.snap_id != prev.snap_id + 1:
                b.note(
                    f"{host}: AWR snapshots {prev.snap_id + 1}..{cur.snap_id - 1} missing: one "
                    f"interval of {dt / 60:.0f} min"
                )
            (pw, pr, po), (cw, cr, co) = raw[prev.snap_id], raw[cur.snap_id]
            results = {
                "oracle_waits": waits_c.compute(pw, cw, dt),
                "oracle_redo": redo_c.compute(pr, cr, dt),
            }
            if has_os:
                results["cpu"] = {"all": _cpu(po, co)}
            b.sample(host, role, cur.end, dt, results)
            steps.append(dt)
        b.source(host, provenance(raw.values(), has_os))
    b.imp.interval = statistics.median_high(steps) if steps else 0.0  # as regrid.usual_step
    return b.imp


def _raw(rows: dict[str, list]) -> tuple[Rows, Rows, dict[str, float]]:
    """One snapshot's cumulative rows: oracle_waits', oracle_redo's, and the OS statistics."""
    w = waits.raw_rows(rows.get("events", ()), rows.get("histogram", []), 1.0)
    r = redo.raw_rows(dict(rows.get("sysstat", ())))
    return w, r, {name: float(value) for name, value in rows.get("osstat", ())}


def _cpu(prev: Mapping[str, float], cur: Mapping[str, float]) -> dict[str, Value]:
    """mpstat's percentages from V$OSSTAT times (centiseconds over all CPUs; IDLE_TIME includes
    IOWAIT_TIME), the load at the snapshot; what V$OSSTAT lacks stays unknown."""
    row: dict[str, Value] = dict.fromkeys(("usr", "nice", "sys", "iowait", "idle"))
    need = ("USER_TIME", "SYS_TIME", "IDLE_TIME")
    if all(k in prev and k in cur for k in need):

        def ticks(o: Mapping[str, float]) -> list[int]:
            io = o.get("IOWAIT_TIME", 0.0)
            parts = (
                o["USER_TIME"],
                o.get("NICE_TIME", 0.0),
                o["SYS_TIME"],
                o["IDLE_TIME"] - io,
                io,
            )
            return [round(x) for x in parts] + [0] * 5

        pct = cpu_percentages(ticks(prev), ticks(cur))
        row.update({k: pct[k] for k in row})
    row["load1"] = cur.get("LOAD")
    return row


def provenance(
    raws: Iterable[tuple[Rows, Rows, dict[str, float]]], has_os: bool
) -> dict[str, dict[str, str]]:
    """Where each field came from (meta.json ``hosts.<host>.sources``)."""
    stats = {k for _, r, _ in raws for row in r.values() for k in row}
    ev = "DBA_HIST_SYSTEM_EVENT"
    hist = "DBA_HIST_EVENT_HISTOGRAM.WAIT_TIME_MILLI (ms buckets: all under 1 ms in <1ms)"
    out: dict[str, dict[str, str]] = {
        "oracle_waits": {
            "waits": f"AWR {ev}.TOTAL_WAITS, delta per snapshot interval",
            "time_waited": f"AWR {ev}.TIME_WAITED_MICRO, delta per snapshot interval",
            "avg": f"AWR {ev}: TIME_WAITED_MICRO delta / TOTAL_WAITS delta",
            "hist": f"AWR {hist}, delta per snapshot interval",
            **dict.fromkeys(("p50", "p90", "p99"), f"AWR {hist}: bucket of the interval"),
            "max_bucket": f"AWR {hist}: highest bucket hit in the interval",
        },
        "oracle_redo": {},
    }
    for f, choices in redo.SOURCES.items():
        names = [s for s, _ in choices]
        text = (
            f"AWR DBA_HIST_SYSSTAT '{names[0]}'" + (f" (or '{names[1]}')" if len(names) > 1 else "")
            if f in stats
            else f"not imported: DBA_HIST_SYSSTAT has no {' / '.join(repr(n) for n in names)}"
        )
        out["oracle_redo"][f] = text
    out["oracle_redo"]["redo_write_size"] = "AWR DBA_HIST_SYSSTAT 'redo size' / 'redo writes'"
    if has_os:
        os_ = "AWR DBA_HIST_OSSTAT"
        out["cpu"] = {
            "usr": f"{os_} USER_TIME share of USER+NICE+SYS+IDLE_TIME",
            "nice": f"{os_} NICE_TIME share",
            "sys": f"{os_} SYS_TIME share",
            "iowait": f"{os_} IOWAIT_TIME share (part of IDLE_TIME)",
            "idle": f"{os_} IDLE_TIME less IOWAIT_TIME, share",
            "load1": f"{os_} LOAD at the snapshot (not an interval average)",
        }
    return out


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


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")

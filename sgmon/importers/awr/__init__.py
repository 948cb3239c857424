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
from collections.abc import Iterable, Mapping

from collectors.cpu import cpu_percentages
from collectors.oracle import redo, waits
from collectors.oracle.redo import OracleRedoCollector
from collectors.oracle.waits import OracleWaitsCollector
from sgmon.errors import Unreachable, UsageError
from sgmon.importers import Imported
from sgmon.importers.awr.options import add_arguments as add_arguments
from sgmon.importers.awr.options import database, window
from sgmon.importers.awr.repository import (
    Snap,
    Window,
    host_names,
    in_window,
    nothing,
    select,
    snapshots,
    statements,
)
from sgmon.importers.frames import Builder
from sgmon.model import Event, Rows, Value
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session
from sgmon.readers.deadline import Deadline

HELP = (
    "AWR history (DBA_HIST_* views) through python-oracledb; AWR needs the Oracle Diagnostics "
    "Pack licence, and the user SELECT_CATALOG_ROLE or SELECT on the DBA_HIST views"
)


def read(args: argparse.Namespace) -> Imported:
    """Connect as the config or the options say, read the window, close."""
    db, host, role = database(args)
    session = Session(db, role)
    try:
        return import_awr(session, window(args, host, role), getattr(args, "deadline", None))
    finally:
        session.close()


def import_awr(session: Session, win: Window, deadline: Deadline | None = None) -> Imported:
    """Read the window's snapshots through ``session`` and turn them into frames per host;
    past ``deadline`` between two statements, stop with one line (a delta needs every
    statement's rows: nothing is written)."""
    try:
        session.refresh()
    except OracleError as e:  # one attempt: the live session's "retrying" does not apply
        raise Unreachable(
            re.sub(r";? retrying.*$| \(next attempt in \d+s\)$", "", str(e))
        ) from None
    notes: list[str] = []
    dbid = (
        win.dbid if win.dbid is not None else select(session, "SELECT dbid FROM v$database")[0][0]
    )
    snaps = snapshots(session, dbid, win, notes)
    chosen = in_window(snaps, win)
    if not any(len(v) > 1 for v in chosen.values()):
        raise UsageError(nothing(snaps, dbid, win))
    lo = min(s.snap_id for v in chosen.values() for s in v)
    hi = max(s.snap_id for v in chosen.values() for s in v)
    binds = {"dbid": dbid, "lo": lo, "hi": hi}
    texts = statements(session.events())
    data: dict[str, list[tuple]] = {}
    for name, text in texts.items():
        if deadline is not None and deadline.passed():
            got = f"{len(snaps)} snapshot(s) listed and {len(data)} of {len(texts)} statements"
            raise Unreachable(deadline.said(got, f"{name} and the rest; nothing imported"))
        data[name] = select(session, text, binds)
    return _frames(chosen, data, win, notes, session.role)


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
    hosts = host_names(chosen, win)
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
                _no_delta(b, host, role, inst, prev, cur)
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


def _no_delta(b: Builder, host: str, role: str, inst: int, prev: Snap, cur: Snap) -> None:
    """Two snapshots with no delta between them: an instance restart (counters start again at
    zero), or one that does not end after the other; a note and an event, an empty frame."""
    dt = cur.end - prev.end
    restarted = cur.startup != prev.startup
    text = (
        f"instance {cur.name or inst} restarted (startup {cur.startup}) between AWR "
        f"snapshots {prev.snap_id} and {cur.snap_id}: no delta across it"
        if restarted
        else f"AWR snapshot {cur.snap_id} does not end after {prev.snap_id}: skipped"
    )
    b.note(f"{host}: {text}")
    ev = Event(cur.end, "awr", "restart" if restarted else "note", cur.name or str(inst), text)
    b.sample(host, role, cur.end, max(dt, 0.0), {}, (ev,))


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

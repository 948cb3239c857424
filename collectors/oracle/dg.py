"""`oracle_dg`: Data Guard state, destinations, lags and log switches.

Instances:

* ``db``: role, protection mode and level, open mode, version, db_unique_name; on a standby the
  transport and apply lag (V$DATAGUARD_STATS, seconds) with the datum time they were computed
  from.  Two things make a standby that receives nothing visible, because its lag does not grow:
  when transport stops, TRANSPORT LAG's VALUE is NULL (DGMGRL prints "Transport Lag: (unknown)"),
  which sets ``lag_unknown``; and DATUM_TIME stops moving ("an unchanging value ... indicates that
  the standby database is not receiving data", Oracle Database Reference), which ``datum_age``
  measures as TIME_COMPUTED - DATUM_TIME, both the standby's own clock.  Also on a standby: redo
  apply's state (MRP0 in V$DATAGUARD_PROCESS from 12.2, V$MANAGED_STANDBY before; "not running"
  when there is no MRP) and the gaps of V$ARCHIVE_GAP.
* ``dest_<N>``: each remote destination's target, transmit mode (SYNC/ASYNC), affirm,
  net_timeout, status, error and gap status, its service (DESTINATION), VALID_ROLE, VALID_NOW,
  type and last archived thread and sequence, which ``sgmon.topology`` maps to the configured
  hosts (V$ARCHIVE_DEST + V$ARCHIVE_DEST_STATUS), and on a primary the interval's SYNC
  response-time histogram (V$REDO_DEST_RESP_HISTOGRAM, 1-second buckets: it only shows stalls;
  latency is in oracle_waits).  A primary's are read every tick (a SYNC destination's status is
  the commit path's).  A standby's or far sync instance's (its onward destinations: a cascaded
  standby, the terminal standby behind a far sync) are read every ``ONWARD_EVERY`` ticks and
  repeated in between: destinations change with a DBA's ALTER SYSTEM, not with load, and an
  onward destination is never on the commit path, so one statement per ``ONWARD_EVERY`` ticks
  (1/30 of a statement per tick at the default) is what knowing the cascade costs.  A far sync
  instance's are read every tick: while all of them fail, the commits it acknowledges are on no
  standby database, which the count of unprotected commits must see when it starts.
* ``thread_<N>``: log switches in the interval (V$LOG_HISTORY's highest sequence in the current
  incarnation, so a RESETLOGS restarts the count instead of freezing it), the sequence,
  and on a standby the standby redo logs in use and the thread's own lag.  Each switch on the
  primary is also a ``log_switch`` event (the standby's history only echoes them).

A RAC primary writes one redo thread per instance, and its standby receives each over its own RFS
connection; V$DATAGUARD_STATS has one transport lag for all of them, so a thread that falls
behind (its instance's link down, its RFS gone) hides in it.  Per thread, ``thread_lag`` is how
long that thread's reception has not moved (the highest THREAD#/SEQUENCE#/BLOCK# of its RFS rows,
compared tick to tick), capped at the database's transport lag: an idle instance generates no
redo, and its reception standing still is no lag while the transport lag says all is current.
The RFS rows come in the statement that already reads MRP0's state (V$DATAGUARD_PROCESS from
12.2, V$MANAGED_STANDBY before), so the per-thread view costs no extra statement per tick.  A
thread that still receives, only slower than its instance generates, does not stand still:
``recv_rate`` is how fast its RFS position moves (BLOCK# x 512 bytes over the last ``RATE_S``
seconds, within one log), which the analysis compares with the 'redo size' rate of the primary
instance writing that thread (``oracle_redo``, read there every tick anyway); the primary's
V$LOG_HISTORY sequence of the thread, against ``recv_seq``, says how many logs behind it is.
Redo blocks carry headers and LGWR's partly filled last block ('redo wastage'), so a thread
receives a little more than 'redo size': a shortfall is never overstated.  Apply is not per
thread: MRP0 merges the threads.  The standby views' texts and rows become these values in
sgmon/readers/standby.py.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from collectors.oracle.base import OracleCollector
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.oracle.queries import RATE_S
from sgmon.oracle.session import Session, role_of
from sgmon.rates import percentile_from_buckets
from sgmon.readers import roles
from sgmon.readers.standby import apply_state, datum_age, parse_lag, rfs_positions, rfs_rate

G, D, H, T = Kind.GAUGE, Kind.DELTA, Kind.HISTOGRAM, Kind.TEXT

FIELDS = (
    Field("role", "", T, "database role (primary, standby)", label="oracle_db_role"),
    Field("protection_mode", "", T, "configured protection mode"),
    Field("protection_level", "", T, "protection level in effect (drops when SYNC fails)"),
    Field(
        "open_mode",
        "",
        T,
        "MOUNTED, READ WRITE, READ ONLY WITH APPLY ...",
        label="oracle_db_open_mode",
    ),
    Field(
        "switchover_status",
        "",
        T,
        "V$DATABASE.SWITCHOVER_STATUS: TO STANDBY, SESSIONS ACTIVE, NOT ALLOWED, FAILED "
        "DESTINATION, RESOLVABLE GAP ...: whether a switchover could run now",
    ),
    Field(
        "version",
        "",
        T,
        "database version (VERSION_FULL where it exists)",
        label="oracle_db_version",
    ),
    Field("db_unique_name", "", T, "DB_UNIQUE_NAME", export=False),
    Field(
        "instance_name",
        "",
        T,
        "INSTANCE_NAME of the instance this host's session reads",
        label="oracledb_instance_name",
    ),
    Field("inst_id", "", G, "INSTANCE_NUMBER (RAC: which instance; every row is of this one)"),
    Field("thread", "", G, "THREAD# the instance writes its redo to"),
    Field(
        "transport_lag",
        "s",
        G,
        "standby: redo not yet received (V$DATAGUARD_STATS)",
        1,
        10,
        combine="max",
    ),
    Field(
        "apply_lag",
        "s",
        G,
        "standby: redo received, not yet applied (V$DATAGUARD_STATS)",
        combine="max",
    ),
    Field(
        "lag_datum",
        "",
        T,
        "standby: when the data the lags are computed from arrived",
        export=False,
    ),
    Field(
        "lag_unknown", "", G, "standby: 1 when TRANSPORT LAG has no value (transport stopped)", 1, 1
    ),
    Field(
        "datum_age",
        "s",
        G,
        "standby: TIME_COMPUTED - DATUM_TIME; grows when nothing arrives",
        60,
        300,
    ),
    Field("apply_state", "", T, "standby: MRP0's action or status; 'not running' without MRP"),
    Field("valid_now", "", T, "destination: VALID_NOW (YES, WRONG VALID_ROLE ...)"),
    Field("archived_thread", "", G, "destination: thread of ARCHIVED_SEQ# (ARCHIVED_THREAD#)"),
    Field("archive_gap", "", T, "standby: missing log sequences (V$ARCHIVE_GAP), thread:low-high"),
    Field("target", "", T, "destination: DB_UNIQUE_NAME of the target (else its service)"),
    Field("service", "", T, "destination: DESTINATION, the service redo is shipped to"),
    Field("valid_role", "", T, "destination: VALID_ROLE (ALL_ROLES, PRIMARY_ROLE ...)"),
    Field("dest_type", "", T, "destination: V$ARCHIVE_DEST_STATUS.TYPE (PHYSICAL, FAR SYNC)"),
    Field(
        "archived_seq",
        "",
        G,
        "destination: last log sequence archived there (ARCHIVED_SEQ#)",
        combine="max",
    ),
    Field("transmit_mode", "", T, "destination: SYNC, ASYNC or PARALLELSYNC"),
    Field("affirm", "", T, "destination: YES (SYNC AFFIRM) or NO (FASTSYNC / ASYNC)"),
    Field("status", "", T, "destination: VALID, ERROR, DEFERRED ..."),
    Field("error", "", T, "destination: last error text"),
    Field("gap_status", "", T, "destination: NO GAP, RESOLVABLE GAP ..."),
    Field("net_timeout", "s", G, "destination: seconds LGWR waits for the SYNC ack"),
    Field("resp_hist", "s", H, "destination: SYNC responses in the interval per 1-s bucket"),
    Field(
        "resp_p99",
        "s",
        G,
        "destination: 99th percentile SYNC response (whole seconds)",
        2,
        combine="q:0.99:resp_hist",
        export=False,
    ),
    Field("log_switches", "count", D, "thread: log switches in the interval", 1, 4),
    Field("sequence", "", G, "thread: highest log sequence in V$LOG_HISTORY"),
    Field("srl_in_use", "", G, "thread (standby): standby redo log groups ACTIVE"),
    Field("recv_seq", "", G, "thread (standby): sequence its RFS is receiving", combine="max"),
    Field(
        "recv_rate",
        "B/s",
        G,
        "thread (standby): redo its RFS received per second over the last RATE_S seconds",
    ),
    Field(
        "thread_lag",
        "s",
        G,
        "thread (standby): seconds its reception has not moved, at most the transport lag",
        1,
        10,
        combine="max",
    ),
)

ONWARD_EVERY = 30
"""Ticks between two reads of a standby's or far sync instance's own destinations."""
_MODES = {"SYNCHRONOUS": "SYNC", "ASYNCHRONOUS": "ASYNC"}


class OracleDgCollector(OracleCollector):
    """Data Guard role, destinations, response histogram, lags and log switches."""

    name = "oracle_dg"
    rows = (
        RowKind("db", fixed="db"),
        RowKind("dest", label="dest", prefix="dest_"),
        RowKind("thread", label="thread", prefix="thread_"),
    )
    description = "Oracle Data Guard state, destinations, lags, log switches"
    fields = FIELDS
    sparse = True  # database, destination and thread rows have different fields

    def __init__(self, options=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(options)
        self._seq: dict[str, int] = {}
        self._epoch = -1
        self._role = ""
        self._recv: dict[Any, tuple[tuple[Any, Any], float]] = {}
        """thread -> (its RFS position (sequence, block), when that position was first seen)."""
        self._rfs: dict[Any, tuple[Any, Any]] | None = None
        """This tick's furthest RFS position per thread; None when the view is not readable."""
        self._path: dict[Any, deque[tuple[float, Any, Any]]] = {}
        """thread -> its RFS positions (when, sequence, block) over the last ``RATE_S``."""
        self._onward: Rows = {}
        self._onward_at = -ONWARD_EVERY
        self._ticks = 0

    def read(self, s: Session) -> Rows:
        """State rows; log switches since the previous sample become events."""
        rows: Rows = {}
        name, inst_id, thread = s.instance
        db: dict[str, Value] = {
            "version": s.version_text,
            "instance_name": name,
            "inst_id": inst_id,
            "thread": thread,
        }
        far = False
        for role, pmode, plevel, omode, name, switchover in s.query("database") or ():
            far = str(role).upper() == "FAR SYNC"
            s.role = role_of(role)
            roles.observe(str(self.options.get("host") or ""), s.role)
            db.update(
                role=s.role,
                protection_mode=pmode,
                protection_level=plevel,
                open_mode=omode,
                db_unique_name=name,
                switchover_status=switchover,
            )
        if self._role and s.role and s.role != self._role:  # a switchover or failover
            self.emit_event(
                Event(self.clock(), self.name, "role_change", "db", f"{self._role} -> {s.role}")
            )
            self._onward_at = self._ticks - ONWARD_EVERY  # a new role: its destinations now
        self._role = s.role or self._role
        if s.role == "standby":
            self._standby(s, db, far)
        rows["db"] = db
        self._ticks += 1
        if s.role == "primary":
            self._dests(s, rows)
        elif far or self._ticks - self._onward_at >= ONWARD_EVERY:
            self._onward = {}
            self._dests(s, self._onward, histogram=False)
            self._onward_at = self._ticks
        if s.role != "primary":
            rows.update({i: dict(r) for i, r in self._onward.items()})
        self._threads(s, rows)
        return rows

    def _standby(self, s: Session, db: dict[str, Value], far: bool = False) -> None:
        """Lags, whether they are known and how old their datum is, apply and gaps.  A far sync
        instance (``far``) has SRLs and a transport lag but no datafiles: no apply state."""
        for name, value, _unit, computed, datum in s.query("dg_stats") or ():
            key = "transport_lag" if str(name).lower() == "transport lag" else "apply_lag"
            db[key] = parse_lag(value)
            if key == "transport_lag":
                db["lag_datum"] = datum
                db["lag_unknown"] = 0 if db[key] is not None else 1
                age = datum_age(computed, datum)
                db["datum_age"] = age
        apply = s.query("apply")
        self._rfs = None
        if apply is not None and not far:
            db["apply_state"] = apply_state(apply)
        if apply is not None:
            self._rfs = rfs_positions(apply)
        gaps = s.query("archive_gap")
        if gaps is not None:
            db["archive_gap"] = " ".join(f"{t}:{lo}-{hi}" for t, lo, hi in gaps)

    def _dests(self, s: Session, rows: Rows, histogram: bool = True) -> None:
        """The destinations, and with ``histogram`` (a primary) their SYNC response times."""
        for dest in s.query("dest") or ():
            dest_id, status, target, mode, affirm, timeout, uname, err, _st, gap, err2 = dest[:11]
            service, valid_role, dtype, archived, archived_thread, valid_now = dest[11:17]
            named = uname and str(uname).upper() != "NONE"  # NONE: no DB_UNIQUE_NAME attribute
            rows[f"dest_{dest_id}"] = {
                "target": uname if named else service or target,
                "service": service,
                "valid_role": valid_role,
                "dest_type": dtype,
                "archived_seq": archived,
                "archived_thread": archived_thread,
                "valid_now": valid_now,
                "transmit_mode": _MODES.get(str(mode), mode),
                "affirm": affirm,
                "status": status,
                "error": err or err2 or "",
                "gap_status": gap,
                "net_timeout": timeout,
                "resp_hist": [],
            }
        for dest_id, duration, freq in s.query("resp_histogram") or () if histogram else ():
            row = rows.setdefault(f"dest_{dest_id}", {"resp_hist": []})
            row["resp_hist"].append([duration, freq])  # type: ignore[union-attr]

    def _threads(self, s: Session, rows: Rows) -> None:
        if s.epoch != self._epoch:  # restart or first sample: no switches to report yet
            self._seq.clear()
            self._recv.clear()
            self._path.clear()
            self._epoch = s.epoch
        for thread, seq in s.query("log_history") or ():
            inst = f"thread_{thread}"
            rows[inst] = {"sequence": seq, "log_switches": seq, "srl_in_use": None}
            last = self._seq.get(inst)
            # the standby's history follows the primary's switches: events come from the primary
            if s.role == "primary" and last is not None and seq is not None and seq > last:
                now = self.clock()
                for n in range(last + 1, seq + 1):
                    self.emit_event(
                        Event(
                            now,
                            self.name,
                            "log_switch",
                            inst,
                            f"log switch thread {thread} seq {n}",
                        )
                    )
            if seq is not None:
                self._seq[inst] = seq
        if s.role == "standby":
            for thread, active in s.query("standby_log") or ():
                rows.setdefault(f"thread_{thread}", {"sequence": None, "log_switches": None})
                rows[f"thread_{thread}"]["srl_in_use"] = active
            self._thread_lags(rows)

    def _thread_lags(self, rows: Rows) -> None:
        """Each thread's reception position and how long it has stood still, capped at the
        transport lag (see the module docstring); a thread whose RFS is gone keeps standing."""
        if self._rfs is None:  # nothing to compare: no per-thread lag rather than a false one
            self._recv.clear()
            self._path.clear()
            return
        now = self.clock()
        for thread, at in self._rfs.items():
            seen = self._recv.get(thread)
            if seen is None or seen[0] != at:
                self._recv[thread] = (at, now)
            path = self._path.setdefault(thread, deque())
            path.append((now, *at))
            while len(path) > 2 and now - path[0][0] > RATE_S:
                path.popleft()
        lag = rows["db"].get("transport_lag")
        for thread, (at, since) in self._recv.items():
            row = rows.setdefault(f"thread_{thread}", {"sequence": None, "log_switches": None})
            still = max(0.0, now - since)
            row["recv_seq"] = at[0]
            row["thread_lag"] = min(still, lag) if isinstance(lag, int | float) else still
            row["recv_rate"] = rfs_rate(self._path[thread]) if thread in self._rfs else 0.0

    def compute(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Deltas by kind, and the destinations' p99 from the interval histogram."""
        out = super().compute(prev, cur, dt)
        for inst, row in out.items():
            if inst.startswith("dest_"):
                hist = row.get("resp_hist")
                row["resp_p99"] = percentile_from_buckets(hist, 0.99) if hist else None  # type: ignore[arg-type]
        return out

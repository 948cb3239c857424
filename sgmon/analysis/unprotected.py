"""Commits and redo on no standby: what a destination that did not protect left exposed.

While a SYNC destination of a primary instance is not protecting (its status ERROR, DISABLED
or DEFERRED, or the database's protection level RESYNCHRONIZATION or UNPROTECTED), every commit
(V$SYSSTAT ``user commits``) and every byte of redo (``redo size``) the instance makes is on the
primary alone: a failover then loses them.  The ledger adds them up tick by tick, each primary
frame once.  An ASYNC destination never holds commits back; what a failover to it would lose is
the redo it has not received yet, its transport lag times the redo the instance made in that
time (the primary's own ``redo size`` of those seconds, so a burst counts as it came).

A far sync instance acknowledges the primary's SYNC redo and forwards it: while every one of
its own destinations is down, the commits it acknowledges are in its standby redo logs alone,
and a far sync has no datafiles and cannot be failed over to, so they count as on no standby,
against the primary's destination to the far sync (``Unprotected.relay`` says what failed).

A silent standby holds the commits before its destination is marked failed: LGWR waits up to
NET_TIMEOUT for it and no commit completes.  When a destination goes down right after a run of
intervals in which the instance's commits stopped, about NET_TIMEOUT long, those seconds count
too (``Unprotected.hung``): the commits were neither protected nor done.  A reset ends that
wait early (a silent standby's host back up, or a firewall dropping its state, answers the
retransmission with RST): when the destination's error says the connection was lost, any stall
up to NET_TIMEOUT long before it is the hang the reset cut short.

On RAC each instance ships its own thread: the standby's one transport lag is its oldest
thread's, so it is applied to the threads that arrive short of what their instance makes
(``recv_rate`` against ``redo size``), or to every thread when none visibly does.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from sgmon.analysis.context import HostView
from sgmon.contract import Row
from sgmon.fields import ORACLE_DG, ORACLE_REDO
from sgmon.model import Frame
from sgmon.outcomes import Unprotected
from sgmon.topology import Topology
from sgmon.topology.dests import OFF, is_sync

DB = ORACLE_DG.Rows.db.fixed
REDO_DB = ORACLE_REDO.Rows.db.fixed
DOWN = frozenset({"ERROR", "DISABLED", "DEFERRED"})
"""A SYNC destination's statuses in which nothing it is sent is held by its standby."""
UNSYNCED = frozenset({"RESYNCHRONIZATION", "UNPROTECTED"})
"""Protection levels at which no SYNC standby holds every commit (V$DATABASE)."""
KEEP_S = 3600.0
"""Seconds of each instance's redo kept to weigh an ASYNC lag against (an hour's lag is far
past any alarm)."""
SHORT = 0.9
"""A thread that arrives below this share of what its instance makes is the one behind."""
LOST = ("ORA-03113", "ORA-03135", "ORA-12547", "ORA-12571")
"""A destination's errors for a connection lost mid-write (end-of-file, lost contact, the packet
writer failing), where NET_TIMEOUT's own is ORA-16198: the wait ended before NET_TIMEOUT did."""
NET_TIMEOUT = 30.0
"""Seconds LGWR waits where the destination's NET_TIMEOUT was not read (the broker's default)."""
STALLED = 0.05
"""An interval whose commits are below this share of the instance's last flowing one's: its
commits stopped (a hang waits out NET_TIMEOUT with none completing)."""


@dataclass(slots=True)
class _Tally:
    """One SYNC destination's running totals."""

    target: str
    commits: float = 0.0
    redo: float = 0.0
    seconds: float = 0.0
    active: bool = False
    alone: bool = True
    since: float | None = None
    hung: float = 0.0
    relay: str = ""
    cut_by: str = ""


@dataclass(slots=True)
class _Flow:
    """One primary instance's commits: the last rate that flowed, and the run of stalled
    intervals since (its start, its seconds)."""

    rate: float = 0.0
    start: float = 0.0
    stalled: float = 0.0

    def add(self, frame: Frame, commits: float | None) -> None:
        """One frame's commit rate (None: unknown, which ends a run)."""
        if commits is not None and self.rate > 0 and commits <= STALLED * self.rate:
            if not self.stalled:
                self.start = frame.time - frame.interval
            self.stalled += frame.interval
            return
        self.rate, self.stalled = commits or 0.0, 0.0

    def hang(self, timeout: float | None, dt: float, cut: bool) -> float:
        """The stalled run before now, when it is NET_TIMEOUT long (within two intervals), or
        up to that long when a lost connection (``cut``) ended the wait first."""
        if not self.stalled:
            return 0.0
        if cut:
            return self.stalled if self.stalled <= (timeout or NET_TIMEOUT) + 2 * dt else 0.0
        if not timeout or abs(self.stalled - timeout) > 2 * dt:
            return 0.0
        return self.stalled


@dataclass(slots=True)
class Ledger:
    """The run's unprotected commits and redo, per destination of each primary instance."""

    _sync: dict[tuple[str, str], _Tally] = field(default_factory=dict)
    _async: dict[tuple[str, str], Unprotected] = field(default_factory=dict)
    _redo: dict[str, deque[tuple[float, float, float]]] = field(default_factory=dict)
    """Per primary instance: (frame time, its interval, redo bytes) of its recent frames."""
    _counted: dict[str, float] = field(default_factory=dict)
    _flow: dict[str, _Flow] = field(default_factory=dict)

    def update(self, views: Mapping[str, HostView], topo: Topology) -> None:
        """Count each primary instance's new frame; weigh each ASYNC destination's lag now."""
        relays = _relays(views, topo)
        for name in topo.primaries:
            view = views.get(name)
            if view is None or view.frame.time <= self._counted.get(name, -math.inf):
                continue
            self._counted[name] = view.frame.time
            self._remember(view.frame)
            self._sync_tick(view.frame, relays)
        instances = [views[n].frame for n in topo.primaries if n in views]
        for frame in instances:
            self._async_now(views, topo, frame, instances)

    def now(self) -> list[Unprotected]:
        """Every destination that did not protect during the run, SYNC ones first."""
        out = [
            Unprotected(host, dest, t.target, "SYNC", t.commits, t.redo, t.seconds,
                        t.active, t.since, t.alone, t.hung, t.relay, t.cut_by)
            for (host, dest), t in self._sync.items()
        ]  # fmt: skip
        return out + list(self._async.values())

    def _remember(self, frame: Frame) -> None:
        redo = ORACLE_REDO.redo_size.at(frame, REDO_DB)
        if redo is None:
            return
        kept = self._redo.setdefault(frame.host, deque())
        kept.append((frame.time, frame.interval, redo * frame.interval))
        while kept and kept[0][0] < frame.time - KEEP_S:
            kept.popleft()

    def _sync_tick(self, frame: Frame, relays: Mapping[str, str]) -> None:
        """Add one primary frame's commits and redo to each of its SYNC destinations that did
        not protect at its end (down, or a far sync forwarding to no standby: ``relays``)."""
        rows, down = _sync_dests(frame)
        down |= {inst for inst in rows if inst in relays}
        dt = frame.interval
        rate = ORACLE_REDO.user_commits.at(frame, REDO_DB)
        flow = self._flow.setdefault(frame.host, _Flow())
        commits = (rate or 0.0) * dt
        redo = (ORACLE_REDO.redo_size.at(frame, REDO_DB) or 0.0) * dt
        for inst, row in rows.items():
            tally = self._sync.get((frame.host, inst))
            if inst not in down:
                if tally is not None:
                    tally.active = False
                continue
            if tally is None:
                target = ORACLE_DG.target.of(row) or ORACLE_DG.service.of(row) or inst
                tally = self._sync[(frame.host, inst)] = _Tally(target)
            if not tally.active:
                cut_by = _lost(row)
                hung = flow.hang(ORACLE_DG.net_timeout.of(row), dt, bool(cut_by))
                tally.since = flow.start if hung else frame.time - dt
                tally.hung += hung
                if hung:
                    tally.cut_by = cut_by
                tally.seconds += hung
            tally.active, tally.alone = True, down == set(rows)
            tally.relay = relays.get(inst, "")
            tally.commits += commits
            tally.redo += redo
            tally.seconds += dt
        flow.add(frame, rate)

    def _async_now(
        self, views: Mapping[str, HostView], topo: Topology, frame: Frame, instances: list[Frame]
    ) -> None:
        """Each ASYNC destination of the instance: the redo its standby has not received."""
        hosts = {d.target: d.hosts for d in topo.dests}
        for inst, row in ORACLE_DG.Rows.dest.of(frame.rows(ORACLE_DG.name)).items():
            if is_sync(ORACLE_DG.transmit_mode.of(row)) or not _in_role(row):
                continue
            target = ORACLE_DG.target.of(row) or ""
            far = next((views[h] for h in hosts.get(target, ()) if h in views), None)
            lag = ORACLE_DG.transport_lag.at(far.frame, DB) if far is not None else None
            if far is None or lag is None or not _behind(frame, far, instances):
                continue  # unknown, or the lag is another instance's thread's
            self._behind_now((frame.host, inst), target, far.frame.time, lag)

    def _behind_now(self, key: tuple[str, str], target: str, now: float, lag: float) -> None:
        """One ASYNC destination ``key`` (instance, destination) ``lag`` seconds behind at
        ``now``: the redo it has not received, since when it is behind."""
        last = self._async.get(key)
        if last is None and lag <= 0:
            return  # never behind: nothing to say
        since = now - lag
        if last is not None and (last.active or lag <= 0):
            since = last.since or since  # the same episode, or the last one's start
        redo = self._made(key[0], now, lag)
        self._async[key] = Unprotected(*key, target, "ASYNC", 0.0, redo, lag, lag > 0, since)

    def _made(self, host: str, now: float, lag: float) -> float:
        """The redo ``host`` made in the last ``lag`` seconds before ``now`` (each frame's by
        the share of its interval that falls in them): the newest frames only, not the hour
        kept, as this runs every tick."""
        lo, total = now - lag, 0.0
        for t, dt, redo in reversed(self._redo.get(host, ())):
            if t <= lo:
                break  # it and every older frame end before the window
            overlap = min(t, now) - max(t - dt, lo)
            if overlap > 0 and dt > 0:
                total += redo * min(1.0, overlap / dt)
        return total


def _relays(views: Mapping[str, HostView], topo: Topology) -> dict[str, str]:
    """The primary's destinations to far sync instances whose every own destination is down
    now, each with what failed: ``dest_3 of far sync FS1 to STBY: ERROR``."""
    out: dict[str, str] = {}
    for d in topo.dests:
        far = next((views[h] for h in d.hosts if h in topo.far_sync and h in views), None)
        if far is None or not d.commit_path:
            continue
        rows = ORACLE_DG.Rows.dest.of(far.frame.rows(ORACLE_DG.name))
        onward = {i: r for i, r in rows.items() if _ships(r)}
        failed = {i: (ORACLE_DG.status.of(r) or "").upper() for i, r in onward.items()}
        if onward and all(s in DOWN for s in failed.values()):
            out[d.inst] = ", ".join(
                f"{i} of far sync {d.target} to {ORACLE_DG.target.of(onward[i]) or i}: {s}"
                for i, s in failed.items()
            )
    return out


def _lost(row: Row) -> str:
    """A destination's error when it says the connection was lost (``LOST``), else ""."""
    error = (ORACLE_DG.error.of(row) or "").strip()
    return error if any(code in error.upper() for code in LOST) else ""


def _ships(row: Row) -> bool:
    """Whether a standby's or far sync's destination ships in its role (VALID_NOW)."""
    return (ORACLE_DG.valid_now.of(row) or "").upper() in ("", "YES")


def _sync_dests(frame: Frame) -> tuple[dict[str, Row], set[str]]:
    """The primary instance's SYNC destinations that ship in its role, and those of them not
    protecting (down, or every one while the database is not synchronized)."""
    dg = frame.rows(ORACLE_DG.name)
    rows = {
        inst: row
        for inst, row in ORACLE_DG.Rows.dest.of(dg).items()
        if is_sync(ORACLE_DG.transmit_mode.of(row)) and _in_role(row)
    }
    level = (ORACLE_DG.protection_level.at(frame, DB) or "").upper()
    down = {
        inst
        for inst, row in rows.items()
        if level in UNSYNCED or (ORACLE_DG.status.of(row) or "").upper() in DOWN
    }
    return rows, down


def _in_role(row: Row) -> bool:
    """Whether a destination ships in the primary role and is switched on by configuration
    (an INACTIVE one or one valid only for the standby role never protected anything)."""
    valid_now = (ORACLE_DG.valid_now.of(row) or "").upper()
    status = (ORACLE_DG.status.of(row) or "").upper()
    role = (ORACLE_DG.valid_role.of(row) or "").upper()
    return valid_now in ("", "YES") and role != "STANDBY_ROLE" and status not in set(OFF) - DOWN


def _behind(primary: Frame, far: HostView, instances: list[Frame]) -> bool:
    """Whether the standby's transport lag is this instance's thread's: always for a single
    instance; on RAC, when its thread arrives short of what the instance makes, or when no
    instance's thread visibly does (the lag is then the oldest thread's, whichever)."""
    if len(instances) < 2:
        return True
    threads = ORACLE_DG.Rows.thread.of(far.frame.rows(ORACLE_DG.name))

    def short(frame: Frame) -> bool:
        n = ORACLE_DG.thread.at(frame, DB)
        made = ORACLE_REDO.redo_size.at(frame, REDO_DB)
        row = threads.get(ORACLE_DG.Rows.thread.instance(f"{n:g}")) if n is not None else None
        got = ORACLE_DG.recv_rate.of(row)
        return made is not None and got is not None and got < SHORT * made

    return short(primary) or not any(short(f) for f in instances)

"""How much of an incident's extra commit time its named causes explain.

An incident is a primary instance's degraded commit path (its chain, ``Context.chain``), from
its first tick to its last, a pause shorter than ``GAP_S`` being the same incident.  Its extra
commit time is log file sync's average during it above the average of the calm intervals
before it.  The commit budget (``sgmon.analysis.budget``) splits each interval's log file sync
into parts that add up to it: the slower write (the standby's SRL write and the network for a
remote write, the local disk for a local one), the wait queued behind writes in flight (on the
part it queues behind), and LGWR's overhead (its CPU wait, its post of the sessions and their
wake-up, and theirs).  Each part's rise over its own calm average is its share of the extra.

A finding drawn as the cause of the incident names the parts its mechanism moves
(``NAMES``): a standby disk its SRL write, a lossy or slow link the network, a starved CPU or
a late RAC broadcast acknowledgement LGWR's overhead.  The share explained is the named parts'
rises over log file sync's; the generic "commit path degraded" names none.  Under half
(``sgmon.outcomes.UNCLEAR``), the cause is unclear, and the text says which part rose unnamed
and what in it sgmon does not measure.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Set
from dataclasses import dataclass, field

from sgmon.events import LOCAL_WRITE, LOG_FILE_SYNC, REMOTE_WRITES, STANDBY_WRITES
from sgmon.fields import BIOLAT, CPU, DISK, NETDEV, ORACLE_WAITS, PROCS, TCP
from sgmon.model import Frame
from sgmon.outcomes import Explained
from sgmon.verdicts import SYMPTOM_RULE, Budget, Finding

GAP_S = 30.0
"""A commit path back in line for less than this is the same incident when it degrades again
(log switches every few seconds make one incident, not dozens)."""
CALM = 120
"""Calm intervals whose average is the baseline the incident's parts rise above."""
TOPS = 16
"""Intervals whose longest write a commit may have queued behind."""
MIN_EXTRA_MS = 0.05
"""Below this rise of log file sync there is nothing to explain."""
NOTED = 0.1
"""An unnamed part's share of the extra worth saying it rose unmeasured."""
STANDBY, NETWORK, LOCAL, OVERHEAD, REMOTE = (
    "standby disk",
    "network",
    "local disk",
    "LGWR overhead",
    "remote write",
)
QUEUED = {"standby": STANDBY, "network": NETWORK, "local": LOCAL, "remote write": REMOTE}
"""``Budget.queue_on`` -> the part whose writes the commits queued behind."""
NAMES: dict[str, dict[str, str]] = {
    "standby_io": {STANDBY: STANDBY, REMOTE: STANDBY},
    "log_switches": dict.fromkeys((STANDBY, REMOTE), "standby disk (log switches)"),
    "rto_stall": dict.fromkeys((NETWORK, REMOTE), "network (retransmits)"),
    "dg_loss": dict.fromkeys((NETWORK, REMOTE), "network (packet loss)"),
    "network_latency": {NETWORK: NETWORK, REMOTE: NETWORK},
    "nic": {NETWORK: NETWORK, REMOTE: NETWORK},
    "socket_buffers": {NETWORK: NETWORK, REMOTE: NETWORK},
    "cpu_starvation": {OVERHEAD: "CPU wait"},
    "rac_broadcast": {OVERHEAD: "SCN broadcast ack"},
    "adaptive_sync": {OVERHEAD: "polling"},
    "rac_log_flush": {LOCAL: LOCAL},
    # the generic chain, by what lines up with it (``_causes``)
    "chain:local": {LOCAL: LOCAL},
    "chain:standby": {STANDBY: STANDBY, REMOTE: STANDBY},
    "chain:network": {NETWORK: NETWORK, REMOTE: NETWORK},
    "chain:cpu": {OVERHEAD: "CPU wait"},
}
"""A cause rule -> the budget parts its mechanism moves, with the name each is shown under."""
UNMEASURED = {
    OVERHEAD: "LGWR overhead rose with no cause found: sgmon measures LGWR's CPU wait, not "
    "its post of the committing sessions nor their wake-up",
    STANDBY: "the standby's SRL write rose with no cause found on the standby host",
    NETWORK: "the network part of the remote write rose with no loss or latency found on the "
    "DG socket",
    LOCAL: "the local redo write rose with no cause found on the primary's redo disk",
    REMOTE: "the remote write rose, and the standby's own waits are not in the data to split it",
}


def parts(b: Budget) -> dict[str, float]:
    """One interval's log file sync by part, adding up to it: the slower write's parts, the
    queue on the part it waits behind, LGWR's overhead."""
    out: dict[str, float] = {}
    local, remote = b.local_write_ms or 0.0, b.remote_write_ms or 0.0
    if remote >= local and b.standby_io_ms is not None and b.network_ms is not None:
        out = {STANDBY: b.standby_io_ms, NETWORK: b.network_ms}
    elif remote >= local:
        out = {REMOTE: remote}
    else:
        out = {LOCAL: local}
    if b.queue_ms:
        on = QUEUED.get(b.queue_on, REMOTE)
        out[on] = out.get(on, 0.0) + b.queue_ms
    out[OVERHEAD] = b.overhead_ms or 0.0
    return out


def movable(b: Budget, longest: float) -> tuple[str, float]:
    """The part the interval's commits queued behind, and how much of what the budget leaves
    as LGWR overhead may be more of that queue: up to the ``longest`` write (ms) a commit may
    have waited behind (one in flight, counted in its own interval or in one its longest log
    file sync reaches back to); the budget's queue, the residual life from the buckets'
    midpoints, undershoots stalls of seconds.  Moved only when a cause names that part and
    none names the overhead (``_Sums.mean``)."""
    queue, overhead = b.queue_ms or 0.0, b.overhead_ms or 0.0
    on = QUEUED.get(b.queue_on, REMOTE)
    return on, min(overhead, max(0.0, longest - queue)) if queue else 0.0


def longest(frame: Frame, events: Iterable[str] = (LOCAL_WRITE, *REMOTE_WRITES)) -> float:
    """The upper bound (ms) of the slowest bucket the interval's ``events`` (the local and
    remote writes) reached (infinite for the open bucket; 0 when none was counted)."""
    top = 0.0
    for event in events:
        h = ORACLE_WAITS.hist.at(frame, event)
        for bound, count in h.pairs if h is not None else ():
            if count > 0:
                top = max(top, math.inf if bound is None else bound)
    return top


@dataclass(slots=True)
class _Sums:
    """Running sums of intervals' log file sync and parts: an incident of hours costs its
    averages no more than one of seconds."""

    n: int = 0
    lfs: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    movable: dict[str, float] = field(default_factory=dict)

    def add(self, b: Budget, longest: float) -> None:
        """Count one interval, whose longest write a commit may have waited behind."""
        self.n += 1
        self.lfs += b.lfs_ms or 0.0
        for k, v in parts(b).items():
            self.parts[k] = self.parts.get(k, 0.0) + v
        on, m = movable(b, longest)
        self.movable[on] = self.movable.get(on, 0.0) + m

    def mean(self, named: Set[str]) -> tuple[float, dict[str, float]]:
        """Log file sync's and each part's average, the overhead a named part's writes may
        account for moved into its queue (``movable``)."""
        total = dict(self.parts)
        if OVERHEAD not in named:
            for on, m in self.movable.items():
                if on in named:
                    total[on] = total.get(on, 0.0) + m
                    total[OVERHEAD] = total.get(OVERHEAD, 0.0) - m
        n = max(1, self.n)
        return self.lfs / n, {k: v / n for k, v in total.items()}


@dataclass(slots=True)
class _Incident:
    start: float
    last: float
    calm: _Sums
    """The calm intervals before it, its baseline."""
    during: _Sums = field(default_factory=_Sums)
    later: list[tuple[Budget, float]] = field(default_factory=list)
    """Intervals after its last degraded tick, its own if it degrades again within GAP_S."""
    causes: dict[str, int] = field(default_factory=dict)
    """What the findings drawn as its cause named, and in how many of its ticks."""
    ticks: int = 0


@dataclass(slots=True)
class _Instance:
    calm: deque[tuple[Budget, float]] = field(default_factory=lambda: deque(maxlen=CALM))
    incidents: list[_Incident] = field(default_factory=list)
    tops: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=TOPS))
    """(time, longest write) of its recent intervals: a commit may wait behind a write that
    ended in an earlier interval than its own wait did."""
    seen: float | None = None
    """The time of the last budget taken (an evaluation may see the same interval again)."""

    def degraded(self, now: float, causes: Set[str]) -> _Incident:
        """The incident a degraded tick at ``now`` belongs to (a new one after a pause of
        ``GAP_S``), with the causes drawn at it counted."""
        inc = self.incidents[-1] if self.incidents else None
        if inc is None or now - inc.last > GAP_S:
            inc = _Incident(now, now, _sums(self.calm))
            self.incidents.append(inc)
            del self.incidents[:-10]  # the latest ten are enough to report
        inc.last = now
        inc.ticks += 1
        for late in inc.later:  # a pause shorter than GAP_S: the same incident
            inc.during.add(*late)
        inc.later.clear()
        for c in causes:
            inc.causes[c] = inc.causes.get(c, 0) + 1
        return inc

    def longest(self, frame: Frame) -> float:
        """The longest write a commit of this interval may have queued behind: in the
        intervals its longest log file sync reaches back to."""
        self.tops.append((frame.time, longest(frame)))
        reach = min(longest(frame, (LOG_FILE_SYNC,)), TOPS * frame.interval * 1000.0)
        since = frame.time - frame.interval - reach / 1000.0
        return max(top for t, top in self.tops if t >= since)


@dataclass(slots=True)
class Shares:
    """Each primary instance's incidents and the share of their extra commit time explained."""

    _of: dict[str, _Instance] = field(default_factory=dict)

    def update(
        self,
        frame: Frame,
        now: float,
        budget: Budget | None,
        degraded: bool,
        found: list[Finding],
    ) -> None:
        """One evaluation of the instance whose frame is ``frame``: its interval's budget
        (None: no commits), whether its commit path is degraded, and the findings drawn as
        its cause."""
        mine = self._of.setdefault(frame.host, _Instance())
        inc = mine.incidents[-1] if mine.incidents else None
        if degraded:
            inc = mine.degraded(now, {c for f in found if f.drawn for c in _causes(f, frame.host)})
        if budget is not None and budget.time != mine.seen:
            mine.seen = budget.time
            interval = (budget, mine.longest(frame))
            if degraded and inc is not None:
                inc.during.add(*interval)
            elif inc is not None and now - inc.last <= GAP_S:
                inc.later.append(interval)
            else:
                mine.calm.append(interval)

    def unclear(self, host: str, now: float) -> Explained | None:
        """The incident of ``host`` going on at ``now`` when its named causes explain less
        than half of its extra commit time; None otherwise."""
        mine = self._of.get(host)
        inc = mine.incidents[-1] if mine is not None and mine.incidents else None
        if inc is None or inc.last != now:
            return None
        e = _explain(host, inc)
        return e if e is not None and e.unclear else None

    def now(self) -> list[Explained]:
        """Every instance's incidents with something to explain, oldest first."""
        out = []
        for host, mine in self._of.items():
            for inc in mine.incidents:
                e = _explain(host, inc)
                if e is not None:
                    out.append(e)
        return sorted(out, key=lambda e: e.start)


SHORT_OF_CPU = frozenset(
    (CPU.name, f.name) for f in (CPU.usr, CPU.sys, CPU.steal, CPU.idle, CPU.runq_sz, CPU.load1)
)
"""The whole-host CPU series that say the CPUs are short (a process's own run delay is
``procs``'): not the tasks blocked on I/O, nor interrupts or context switches."""
MOST = 0.5
"""A cause is the incident's when a finding drew it in at least this share of its ticks (a
series that lined up for a moment is no cause)."""


def _causes(f: Finding, primary: str) -> list[str]:
    """What a finding drawn as the incident's cause names (keys of ``NAMES``): its rule, or
    for the generic chain, the kind of each series that lines up with it (its first series is
    the symptom itself)."""
    if f.rule != SYMPTOM_RULE:
        return [f.rule] if f.rule in NAMES else []
    out = []
    for host, collector, inst, name in f.series[1:]:
        if collector in (DISK.name, BIOLAT.name) or inst in (LOCAL_WRITE, *STANDBY_WRITES):
            local = host == primary and inst not in STANDBY_WRITES
            out.append("chain:local" if local else "chain:standby")
        elif collector in (TCP.name, NETDEV.name):
            out.append("chain:network")
        elif collector == PROCS.name or (collector, name) in SHORT_OF_CPU:
            out.append("chain:cpu")
    return out


def _sums(intervals: Iterable[tuple[Budget, float]]) -> _Sums:
    out = _Sums()
    for b, top in intervals:
        out.add(b, top)
    return out


def _named(causes: Iterable[str], rise: dict[str, float]) -> dict[str, float]:
    """The share of the extra under each name the causes give the parts that rose (a part
    two causes name counts once)."""
    named: dict[str, float] = {}
    counted: set[str] = set()
    for rule in causes:
        for part, label in NAMES[rule].items():
            if part not in counted and rise.get(part, 0.0) > 0:
                counted.add(part)
                named[label] = named.get(label, 0.0) + rise[part]
    return named


def _explain(host: str, inc: _Incident) -> Explained | None:
    """The incident's extra commit time and the share its named parts explain."""
    causes = [c for c, n in inc.causes.items() if n >= MOST * inc.ticks]
    moved = {part for r in causes for part in NAMES[r]}
    if not inc.calm.n or not inc.during.n:
        return None
    lfs0, base = inc.calm.mean(moved)
    lfs1, now = inc.during.mean(moved)
    extra = lfs1 - lfs0
    if extra < MIN_EXTRA_MS:
        return None
    rises = {k: max(0.0, v - base.get(k, 0.0)) for k, v in now.items()}
    whole = max(extra, sum(rises.values()))  # other parts may have fallen meanwhile
    rise = {k: v / whole for k, v in rises.items()}
    named = _named(causes, rise)
    share = min(1.0, sum(named.values()))
    shown = tuple(sorted(((k, v) for k, v in named.items()), key=lambda kv: -kv[1]))
    return Explained(host, inc.start, extra, share, shown, tuple(causes), _unmeasured(rise, moved))


def _unmeasured(rise: dict[str, float], named: Set[str]) -> str:
    """What rose that no cause names (its two largest parts), and what in it sgmon does not
    measure."""
    unnamed = [p for p in sorted(rise, key=lambda p: -rise[p]) if p not in named]
    return "; ".join(
        f"{UNMEASURED[p]} ({round(rise[p] * 100)} % of it)" for p in unnamed[:2] if rise[p] >= NOTED
    )

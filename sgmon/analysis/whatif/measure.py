"""What a what-if prediction is made from: the commit path's waits over a window of intervals.

A ``Window`` is a frame sink: per interval it keeps the primary's log file sync, local and remote
write histograms and times, its DG socket's round trip and RTO, the destination's AFFIRM, and
the standby's SRL write histogram.  ``measured`` sums the intervals of a time range (an incident)
and takes the calm level of each part from the intervals before it.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sgmon import events
from sgmon.analysis.whatif.dist import Dist, counts_of
from sgmon.contract import Row
from sgmon.fields import ORACLE_DG, ORACLE_WAITS, TCP
from sgmon.model import Frame
from sgmon.topology.dests import off_path_sender, ships_sync

if TYPE_CHECKING:
    from sgmon.analysis.whatif.run import WhatIf
    from sgmon.topology import Topology
    from sgmon.verdicts import AnalysisState

KEEP = 3600  # intervals kept per host (an hour at 1 s)


@dataclass(slots=True)
class Wait:
    """One event's waits over one or more intervals: bucket counts, count, total ms."""

    counts: Counter[int] = field(default_factory=Counter)
    n: float = 0.0
    ms: float = 0.0

    def add(self, other: Wait) -> None:
        """Count ``other``'s waits too."""
        self.counts.update(other.counts)
        self.n += other.n
        self.ms += other.ms

    @property
    def avg(self) -> float | None:
        """The average wait (ms); None without waits."""
        return self.ms / self.n if self.n > 0 else None

    def dist(self) -> Dist | None:
        """The distribution; None without waits."""
        return Dist(self.counts) if self.n > 0 and self.counts else None


def _wait(frame: Frame, names: Iterable[str]) -> Wait:
    """The first of ``names`` that has waits in ``frame``'s interval."""
    rows = frame.rows(ORACLE_WAITS.name)
    for name in names:
        row = rows.get(name)
        n = (ORACLE_WAITS.waits.of(row) or 0.0) * frame.interval
        avg = ORACLE_WAITS.avg.of(row)
        if 0 < n < math.inf and avg is not None and 0 <= avg < math.inf:
            return Wait(counts_of(ORACLE_WAITS.hist.of(row)), n, n * avg)
    return Wait()


@dataclass(slots=True)
class Tick:
    """One interval of one host."""

    time: float
    seconds: float
    waits: dict[str, Wait]
    rtt: float | None = None
    rto: float | None = None
    rto_min: float | None = None
    affirm: str | None = None
    lns: bool = False
    """The remote write is 11.2's ``LNS wait on SENDREQ``: a release without Fast Sync."""


PARTS: dict[str, tuple[str, ...]] = {
    "lfs": (events.LOG_FILE_SYNC,),
    "local": (events.LOCAL_WRITE,),
    "remote": events.REMOTE_WRITES,
    "rfs": events.STANDBY_WRITES,
}


def _socket(frame: Frame) -> Row | None:
    """The primary's SYNC DG socket: the one its commit path ships on that carried most."""
    rows = [
        r
        for r in TCP.Rows.socket.of(frame.rows(TCP.name)).values()
        if TCP.rtt.of(r) is not None and not off_path_sender(TCP.process.of(r))
    ]
    return max(rows, key=lambda r: TCP.bytes_acked.of(r) or 0.0, default=None)


def _affirm(frame: Frame) -> str | None:
    """AFFIRM (YES/NO) of the SYNC destination shipping now."""
    for row in ORACLE_DG.Rows.dest.of(frame.rows(ORACLE_DG.name)).values():
        if ships_sync(row):
            return ORACLE_DG.affirm.of(row)
    return None


def _ms(x: float | None) -> float | None:
    """A socket's time (ms) where it is one (a recording may hold NaN, inf or a negative)."""
    return x if x is not None and 0 < x < math.inf else None


def tick(frame: Frame) -> Tick:
    """What one frame's interval says of the commit path."""
    waits = {part: _wait(frame, names) for part, names in PARTS.items()}
    sock = _socket(frame)
    return Tick(
        frame.time,
        frame.interval,
        waits,
        _ms(TCP.rtt.of(sock)),
        _ms(TCP.rto.of(sock)),
        _ms(TCP.rto_min.of(sock)),
        _affirm(frame),
        events.LNS_SENDREQ in frame.rows(ORACLE_WAITS.name),
    )


class Window:
    """The recent intervals of every host (a sink: ``window(frame)``)."""

    def __init__(self) -> None:
        self.ticks: dict[str, deque[Tick]] = {}
        self._memo: tuple[tuple[int, tuple[str, ...]], WhatIf | None] | None = None

    def tee(self, sink: Callable[[Frame], object]) -> Callable[[Frame], None]:
        """A sink that keeps each frame here, then hands it to ``sink``."""

        def feed(frame: Frame) -> None:
            self(frame)
            sink(frame)

        return feed

    def what_if(self, state: AnalysisState, topo: Topology | None) -> WhatIf | None:
        """The run's what-if (``run.what_if``) from the frames kept here, made once for the
        same frames and findings."""
        from sgmon.analysis.whatif.run import what_if

        key = (sum(map(len, self.ticks.values())), tuple(f.key for f in state.findings))
        if self._memo is None or self._memo[0] != key:
            self._memo = (key, what_if(self, state.findings, topo))
        return self._memo[1]

    def quoted(self, state: AnalysisState, topo: Topology | None) -> AnalysisState:
        """``state`` with the advice of its findings quoting what a change would buy."""
        from sgmon.analysis.whatif.run import quoted

        return replace(state, findings=quoted(state.findings, self.what_if(state, topo)))

    def json(self, state: AnalysisState, topo: Topology | None) -> dict[str, Any] | None:
        """``check --format json``'s ``what_if``: None when nothing could be predicted."""
        what = self.what_if(state, topo)
        return what.to_dict() if what is not None else None

    def lines(
        self, state: AnalysisState, topo: Topology | None, clock: Callable[[float], str]
    ) -> list[str]:
        """``check``'s text lines of what a change would buy (none when nothing could be)."""
        what = self.what_if(state, topo)
        return what.lines(clock) if what is not None else []

    def __call__(self, frame: Frame) -> None:
        """Keep one frame's interval."""
        self.ticks.setdefault(frame.host, deque(maxlen=KEEP)).append(tick(frame))


@dataclass(frozen=True, slots=True)
class Measured:
    """The commit path over a window: each part's waits there (``parts``) and at its calm
    level (``calm``: the calmer half of the intervals before the window, or of the window's
    own when nothing came before; log file sync's only from before), the DG
    socket's round trip and RTO, whether the destination is Fast Sync, and whether the release
    predates it (11.2)."""

    seconds: float
    parts: dict[str, Wait]
    calm: dict[str, Wait]
    rtt: float | None = None
    calm_rtt: float | None = None
    rto: float | None = None
    rto_min: float | None = None
    fast_sync: bool = False
    before_12c: bool = False
    calm_load: tuple[float, float] | None = None
    """Commits per second and log file sync's average (ms) over the calmer half of the
    intervals before the window (None: nothing before it): how the sessions committed when
    their commits were fast."""
    rto_tick: float = 1.0
    """The kernel's timer tick (ms) as the socket's RTOs show it (``_tick``)."""

    @property
    def commits(self) -> float:
        """Commits per second (log file sync waits)."""
        return self.parts["lfs"].n / self.seconds if self.seconds > 0 else 0.0


def _summed(ticks: Iterable[Tick], part: str) -> Wait:
    out = Wait()
    for t in ticks:
        out.add(t.waits[part])
    return out


def _calmer(ticks: list[Tick], part: str) -> list[Tick]:
    """``ticks``' calmer half for ``part`` (lowest averages): a window that starts when a
    finding opened has the fault's first seconds before it."""
    had = sorted((t for t in ticks if t.waits[part].n > 0), key=lambda t: t.waits[part].avg or 0)
    return had[: max(1, len(had) // 2)]


def _calmest(ticks: list[Tick], part: str) -> Wait:
    """``part`` over its calmer half of intervals."""
    return _summed(_calmer(ticks, part), part)


def _load(calm: list[Tick], lfs: Wait) -> tuple[float, float] | None:
    """Commits per second and log file sync's average (``lfs``, summed over ``calm``) over the
    calmer half of the intervals before the window."""
    seconds = sum(t.seconds for t in calm)
    if seconds <= 0 or lfs.avg is None:
        return None
    return lfs.n / seconds, lfs.avg


LINUX_RTO_MIN = 200.0  # ms: a route without rto_min set
MAX_TICK = 10.0  # ms: HZ=100


def _tick(ticks: list[Tick]) -> float:
    """The kernel's timer tick (ms) as the window's RTOs show it: Linux keeps the RTO in ticks
    and ss shows it in whole ms, so every RTO and the route's floor are whole ticks (204 and
    200 ms: 4 ms, HZ=250), and a lower rto_min is rounded up to one (10 ms: 12; the lab's
    socket then showed 16).  1 where they tell nothing finer (RTOs that are not whole ms)."""
    tick = 0
    for t in ticks:
        if t.rto is None:
            continue
        for ms in (t.rto, t.rto_min or LINUX_RTO_MIN):
            if abs(ms - round(ms)) > 1e-6:
                return 1.0
            tick = math.gcd(tick, round(ms))
    return float(tick) if 1 < tick <= MAX_TICK else 1.0


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def measured(
    primary: Iterable[Tick], standby: Iterable[Tick], start: float, end: float
) -> Measured | None:
    """The window [``start``, ``end``] of a primary and its SYNC standby (None: no commits
    in it)."""
    ps, ss = list(primary), list(standby)
    inside = [t for t in ps if start <= t.time <= end]
    stby = [t for t in ss if start <= t.time <= end]
    before = [t for t in ps if t.time < start]
    sbefore = [t for t in ss if t.time < start]
    parts = {p: _summed(stby if p == "rfs" else inside, p) for p in PARTS}
    if parts["lfs"].n <= 0:
        return None
    calm = {
        p: _calmest(b or w, p)
        for p, b, w in (
            ("local", before, inside),
            ("remote", before, inside),
            ("rfs", sbefore, stby),
        )
    }
    quiet = _calmer(before, "lfs")  # log file sync's calm level from before only: the window's
    calm["lfs"] = _summed(quiet, "lfs")  # is not calm
    last = inside[-1]
    return Measured(
        sum(t.seconds for t in inside),
        parts,
        calm,
        _mean(t.rtt for t in inside),
        _mean(t.rtt for t in before) if before else None,
        _mean(t.rto for t in inside),
        last.rto_min,
        (last.affirm or "").upper() == "NO",
        any(t.lns for t in inside),
        _load(quiet, calm["lfs"]),
        _tick(inside),
    )

"""What a change to the commit path would buy: log file sync predicted under Fast Sync, ASYNC,
a lower ``rto_min``, a faster standby or primary redo disk, another network round trip.

Made from what sgmon measures only (``measure``): the commit path is replayed (``chain``) from
the measured local write, and a remote write rebuilt from its parts: the standby's SRL write
(its measured histogram), the retransmission timeouts (the remote writes above the DG socket's
RTO that the SRL writes do not explain) and the rest (network and transport, the measured
average left over).  A change replaces one part; the replay of the measured path, fitted to the
measured log file sync, is the yardstick each prediction is scaled by, and what the replay
misses in the calm seconds before the window (commit time it does not model) each keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from sgmon.analysis.whatif.chain import Outcome, Path, Remote, fitted, outcome, sessions
from sgmon.analysis.whatif.changes import CHANGES
from sgmon.analysis.whatif.dist import Dist, bucket_of
from sgmon.analysis.whatif.measure import Measured, Wait, Window, measured
from sgmon.buckets import nominal_ms
from sgmon.units import fmt_num

__all__ = ["Change", "Measured", "Prediction", "Window", "measured", "predict", "timeouts"]


@dataclass(frozen=True, slots=True)
class Change:
    """One change: ``noaffirm``, ``async``, ``rto_min``, ``standby_write``, ``primary_write`` or
    ``round_trip``, with its value in ms (None: ``rto_min`` 10 ms, the others their calm
    level)."""

    kind: str
    value: float | None = None


DEFAULT = (
    Change("noaffirm"),
    Change("async"),
    Change("rto_min", 10.0),
    Change("standby_write"),
    Change("primary_write"),
    Change("round_trip"),
)


@dataclass(frozen=True, slots=True)
class Figures:
    """Log file sync: average and p50 (ms), p99 (the Oracle bucket holding it, ms)."""

    avg: float
    p50: float
    p99: float

    def text(self) -> str:
        """``avg 15.9 ms, p50 6.1 ms, p99 <256 ms``."""
        return f"avg {fmt_num(self.avg)} ms, p50 {fmt_num(self.p50)} ms, p99 <{self.p99:g} ms"

    def to_dict(self) -> dict[str, float]:
        """JSON form, in ms."""
        return {"avg_ms": round(self.avg, 3), "p50_ms": round(self.p50, 3), "p99_ms": self.p99}


@dataclass(frozen=True, slots=True)
class Prediction:
    """One change: its name, what the prediction assumes, log file sync now and predicted
    (None: it cannot be predicted from what was measured), and where it does not hold."""

    name: str
    assumptions: str
    now: Figures
    predicted: Figures | None
    limits: str = ""
    kind: str = ""
    """The ``Change.kind`` it predicts."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "assumptions": self.assumptions,
            "now": self.now.to_dict(),
            "predicted": None if self.predicted is None else self.predicted.to_dict(),
            "does_not_hold": self.limits,
        }

    def text(self) -> str:
        """One line: the change, log file sync predicted, where it does not hold."""
        if self.predicted is None:
            return f"{self.name}: not predicted ({self.assumptions})"
        limit = f"; {self.limits}" if self.limits else ""
        return f"{self.name}: {self.predicted.text()}{limit}"


def _scaled(w: Wait) -> tuple[Dist, float] | None:
    """A part's distribution and the factor that brings its mean to the measured average."""
    d, avg = w.dist(), w.avg
    if d is None or avg is None:
        return None
    return d, avg / max(d.mean(), 1e-9)


def _remote(m: Measured) -> Remote | None:
    """The remote write rebuilt from its parts (None: no remote write was measured)."""
    srw, rfs = m.parts["remote"], m.parts["rfs"]
    whole = srw.dist()
    if whole is None or srw.avg is None:
        return None
    ack = None if m.fast_sync else _scaled(rfs)
    # the RTO timer fires on the tick after it is due, half a tick late on average (the lab,
    # 2 % loss, 4 ms ticks: RTO 204 ms, timeouts took 206.1 ms; RTO 16 ms, 18.0)
    hit, penalty = 0.0, m.rto + m.rto_tick / 2 if m.rto else 0.0
    tail = bucket_of(0.9 * penalty) if penalty else 1 << 30  # a timeout waits about the RTO
    if penalty:
        have = ack[0].above(tail) / ack[0].total if ack else 0.0
        hit = max(0.0, whole.above(tail) / whole.total - have)  # share of the remote writes
    if ack is None and not m.fast_sync:  # no SRL write measured: the remote write as a whole
        body = Dist({e: n for e, n in whole.counts.items() if not hit or e < tail})
        ack = (body, 1.0) if body else None
    held = (ack[0].mean() * ack[1]) if ack else 0.0
    repairs = _repairs(whole, ack[0] if ack else None, tail) if hit else None
    fixed = repairs.total * repairs.mean() if repairs else 0.0
    base = max(0.0, srw.avg - held - hit * penalty - fixed)
    return Remote(base, ack[0] if ack else None, ack[1] if ack else 1.0, hit, penalty, repairs)


def timeouts(m: Measured) -> float:
    """How many of the window's remote writes waited out a retransmission timeout, as the
    prediction counts them: what a prediction under another ``rto_min`` rests on, and by chance
    alone a count that varies by its own square root from one window to the next."""
    r, whole = _remote(m), m.parts["remote"].dist()
    return r.loss * whole.total if r is not None and whole is not None else 0.0


REPAIRED = 4.0  # a remote write this many times its median or more: a loss repaired in it


def _repairs(whole: Dist, ack: Dist | None, tail: int) -> Dist | None:
    """The remote writes far above their median and below a timeout that the SRL writes do not
    explain, bucket by bucket, as shares of all remote writes (``Remote.repairs``).  Only
    where timeouts show the link losing packets: else such writes are the standby's (a capped
    disk queues the reply behind other writes, which its SRL write's histogram does not show
    write by write) and stay in the transfer's average."""
    excess = {}
    for e in range(bucket_of(REPAIRED * whole.at(0.5)), min(tail, whole.exps[-1] + 1)):
        srl = ack.counts.get(e, 0.0) / ack.total if ack else 0.0
        excess[e] = max(0.0, whole.counts.get(e, 0.0) / whole.total - srl)
    return Dist(excess) or None


def _figures(o: Outcome) -> Figures:
    """An outcome as shown: p99 as the Oracle bucket that holds it."""
    return Figures(o.avg, o.p50, nominal_ms(bucket_of(o.p99)))


def _scaled_by(alt: Outcome, ref: Outcome, now: Outcome) -> Outcome:
    """``alt`` corrected by how far the replay of the measured path (``ref``) is from the
    measurement (``now``), each figure in proportion to the share of its replayed value the
    change leaves (a change that removes what the replay missed takes none of its miss; one
    that leaves the median as it was, as a shorter timeout does, keeps the measured median)."""

    def fix(a: float, r: float, n: float) -> float:
        return a * (n / max(r, 1e-9)) ** min(1.0, a / max(r, 1e-9))

    return Outcome(
        fix(alt.avg, ref.avg, now.avg),
        fix(alt.p50, ref.p50, now.p50),
        fix(alt.p99, ref.p99, now.p99),
    )


PRIMARY_SIDE = "no transport change touches"


def _primary_side(local_only: Outcome, now: Outcome) -> str:
    """Where the commit time is mostly the primary's own: with no remote write at all, log
    file sync would keep two thirds or more of it."""
    if local_only.avg * 3 >= now.avg * 2:
        return (
            f"with no remote write at all log file sync would still be {fmt_num(local_only.avg)} "
            f"of its {fmt_num(now.avg)} ms: a primary-side cause (LGWR's CPU, posting, the local "
            f"write) that {PRIMARY_SIDE}"
        )
    return ""


def _idle(m: Measured) -> float:
    """The ms a write that the measured redo writes leave between them (each write's phase is
    at least the longer of its local and remote write's averages)."""
    local, remote = m.parts["local"], m.parts["remote"]
    if local.n <= 0 or m.seconds <= 0:
        return math.inf
    phase = max(local.avg or 0.0, remote.avg or 0.0)
    return max(0.0, m.seconds * 1000.0 / local.n - phase)


TRANSPORT = ("noaffirm", "async", "rto_min", "standby_write", "round_trip")


NO_MISS = Outcome(0.0, 0.0, 0.0)


def _calm_miss(m: Measured, path: Path) -> Outcome:
    """What the replay misses of log file sync in the calm intervals before the window: the
    replay of the path with every part at its calm level (the same fitted sessions and LGWR
    time, no timeouts) against the calm log file sync.  That is commit time the chain does not
    model (the sessions' and LGWR's own: the lab's Python, 0.41 ms replayed against 0.54
    measured), which no change on the path removes.  ``NO_MISS``: no calm level measured, or a
    replay above the calm log file sync: the window's fitted LGWR time and sessions are then
    not the calm ones (a primary-side cause, which the fit took in: a CPU-starved primary's
    replay was 11.6 ms over its calm 1.06 ms), and the calm seconds say nothing of what the
    path misses."""
    lfs = m.calm.get("lfs", Wait())
    d = lfs.dist()
    local = CHANGES["primary_write"](m, path, None)[2]
    if d is None or lfs.avg is None or local is None:
        return NO_MISS
    remote = None
    if path.remote is not None:
        calm = {"remote": m.calm["remote"], "rfs": m.calm["rfs"]}
        remote = _remote(replace(m, parts={**m.parts, **calm}, rto=None))
        if remote is None:
            return NO_MISS
    c = outcome(replace(local, remote=remote))
    if c.avg > lfs.avg:
        return NO_MISS
    # time not modelled is no less than none: a figure replayed above its measure is the
    # replay's own spread (the simulation's calm p50, 0.04 ms over)
    gap = (lfs.avg - c.avg, d.at(0.5) - c.p50, d.at(0.99) - c.p99)
    return Outcome(*(max(0.0, g) for g in gap))


def _plus(o: Outcome, miss: Outcome) -> Outcome:
    """``o`` with the calm miss added."""
    return Outcome(o.avg + miss.avg, o.p50 + miss.p50, o.p99 + miss.p99)


def predict(m: Measured, changes: tuple[Change, ...] = DEFAULT) -> list[Prediction]:
    """Log file sync under each change, from the window ``m`` (none without local writes)."""
    lfs, local = m.parts["lfs"], _scaled(m.parts["local"])
    d = lfs.dist()
    if local is None or d is None or lfs.avg is None:
        return []
    now = Outcome(lfs.avg, d.at(0.5), d.at(0.99))
    closed = sessions(m.commits, lfs.avg, m.calm_load)
    path = fitted(Path(local[0], _remote(m), local[1]), d, m.commits, _idle(m), closed)
    ref = outcome(path)
    miss = _calm_miss(m, path)
    ref = _plus(ref, miss)
    side = _primary_side(
        _scaled_by(_plus(outcome(replace(path, remote=None)), miss), ref, now), now
    )
    out = []
    for c in changes:
        name, assumes, alt, limits = CHANGES[c.kind](m, path, c.value)
        pred = None
        if alt is not None:
            pred = _figures(_scaled_by(_plus(outcome(alt), miss), ref, now))
        if alt is not None and c.kind in TRANSPORT:
            limits = "; ".join(x for x in (limits, side) if x)
        out.append(Prediction(name, assumes, _figures(now), pred, limits, c.kind))
    return out

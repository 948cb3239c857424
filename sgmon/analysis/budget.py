"""The commit-time budget: where one interval's average "log file sync" went.

MAA (seed 000, Tables 7 to 9 and the 13-step commit chain) reads a SYNC commit as: LGWR gets the
CPU, starts the remote write (``SYNC Remote Write``; 11.2: ``LNS wait on SENDREQ``, or the overall
write latency ``redo write time / redo writes``), issues the local write (``log file parallel
write``), waits for both, then posts the foregrounds.  So:

- local write = ``log file parallel write`` average;
- remote write = ``SYNC Remote Write`` average (or its 11.2 equivalent);
- standby I/O = the standby's ``RFS write`` / ``RFS random i/o`` average, whichever is larger
  (versions report the SRL write under one name or the other; adding them would count one write
  twice), capped at the remote write; network and transport = remote write - standby I/O
  (Table 7's reasoning: "of the 1.87 ms remote write we spent 1 ms on the network");
- LGWR overhead = log file sync - max(local, remote): the writes overlap, what is left is LGWR
  waiting for CPU, posting, and the foregrounds waiting for CPU (steps 2, 10 to 12).

When the trace collector split long remote writes this interval by msgid (event 16410, seed
000 "Diagnosing High Log File SYNC Waits"), those writes count with their measured network and
RFS parts, and only the rest of the interval's remote write time is split by the averages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sgmon import events
from sgmon.fields import ORACLE_DG, ORACLE_REDO, ORACLE_WAITS
from sgmon.model import Frame, Rows, Value
from sgmon.rates import bucket_midpoints
from sgmon.topology import ships_sync
from sgmon.verdicts import Budget

LFS = events.LOG_FILE_SYNC
LOCAL = events.LOCAL_WRITE
REMOTE = events.REMOTE_WRITES
STANDBY_IO = events.STANDBY_WRITES


def _avg(waits: Rows, event: str) -> float | None:
    return ORACLE_WAITS.avg.of(waits.get(event))


def _has_sync_dest(frame: Frame) -> bool:
    """Whether a SYNC destination ships now (else the commits are local only)."""
    return any(
        ships_sync(row) for row in ORACLE_DG.Rows.dest.of(frame.rows(ORACLE_DG.name)).values()
    )


def remote_write(frame: Frame) -> float | None:
    """Average remote write this interval: the 12c event, the 11.2 one, or Table 7's formula
    where neither is read (never when one is read with no waits: no remote write happened)."""
    waits = frame.rows(ORACLE_WAITS.name)
    for event in REMOTE:
        v = _avg(waits, event)
        if v is not None:
            return v
    if any(e in waits for e in REMOTE) or not _has_sync_dest(frame):
        return None
    db = ORACLE_REDO.Rows.db.fixed
    t, n = ORACLE_REDO.redo_write_time.at(frame, db), ORACLE_REDO.redo_writes.at(frame, db)
    if t is not None and n is not None and n > 0:
        return t / n  # ms/s over writes/s: Table 7's "overall write latency"
    return None


def standby_io(standby: Frame | None) -> float | None:
    """The standby's SRL write average this interval (larger of the two RFS events)."""
    if standby is None:
        return None
    waits = standby.rows(ORACLE_WAITS.name)
    vals = [v for v in (_avg(waits, e) for e in STANDBY_IO) if v is not None]
    return max(vals) if vals else None


_SPLIT = re.compile(r"([\d.]+) ms network \+ ([\d.]+) ms RFS")


def traced_split(frames: tuple[Frame | None, ...]) -> tuple[float, float] | None:
    """(network ms, RFS ms) summed over this interval's traced long remote writes.

    The trace collector's ``remote_write_split`` events read ``... N ms = A ms network + B ms
    RFS`` (msgid matched across the NSS and RFS traces).
    """
    net = rfs = 0.0
    for frame in frames:
        for ev in frame.events if frame is not None else ():
            m = _SPLIT.search(ev.text) if ev.kind == "remote_write_split" else None
            if m:
                net += float(m.group(1))
                rfs += float(m.group(2))
    return (net, rfs) if net + rfs > 0 else None


def _waits(frame: Frame) -> float | None:
    """Remote writes in the interval (count), for weighting the traced ones."""
    for event in REMOTE:
        n = ORACLE_WAITS.waits.at(frame, event)
        if n is not None and n > 0:
            return n * frame.interval
    return None


def _standby_share(primary: Frame, standby: Frame | None, remote: float) -> float | None:
    """Standby I/O ms per remote write: traced long writes exactly, the rest by the averages."""
    s = standby_io(standby)
    guess = None if s is None else min(s, remote)
    traced, n = traced_split((primary, standby)), _waits(primary)
    if traced is None or not n:
        return guess
    net, rfs = traced
    rest = max(0.0, remote * n - net - rfs)  # time of the untraced (short) remote writes
    rest_share = guess / remote if guess is not None and remote > 0 else 0.0
    return min(remote, (rfs + rest * rest_share) / n)


def commit_budget(primary: Frame, standby: Frame | None, fast_sync: bool = False) -> Budget | None:
    """The budget of one primary interval, or None when log file sync had no waits (its
    average is then no commit's).
    ``fast_sync``: the standby acknowledges on receipt (SYNC NOAFFIRM), so no part of the
    remote write is its SRL write, however slow that is."""
    waits = primary.rows(ORACLE_WAITS.name)
    lfs = _avg(waits, LFS)
    if lfs is None or ORACLE_WAITS.waits.of(waits.get(LFS)) == 0:
        return None  # no commits this interval: nothing to split
    local = _avg(waits, LOCAL)
    remote = remote_write(primary)
    sio = net = None
    if remote is not None:
        sio = 0.0 if fast_sync else _standby_share(primary, standby, remote)
        net = None if sio is None else remote - sio
    writes = [w for w in (local, remote) if w is not None]
    if not writes:
        return Budget(primary.host, primary.time, lfs, local, remote, sio, net, None)
    excess = max(0.0, lfs - max(writes))
    queue, on = _queue(primary, standby, excess)
    return Budget(
        primary.host, primary.time, lfs, local, remote, sio, net, excess - (queue or 0.0), queue, on
    )


def _hist(frame: Frame, event: str) -> Value:
    """``event``'s interval histogram in ``frame`` as the row holds it (``residual_life``'s
    input; None where the event has none)."""
    return ORACLE_WAITS.hist.raw_at(frame, event)


def residual_life(hist: object) -> float | None:
    """E[D^2] / 2E[D] of one interval's write histogram (ms): how long a commit that arrives
    during a write waits for that write to end, each bucket counted at its midpoint
    (``bucket_midpoints``)."""
    if not isinstance(hist, list):
        return None
    s1 = s2 = 0.0
    for (_bound, count), d in zip(hist, bucket_midpoints(hist), strict=True):
        s1 += (count or 0) * d
        s2 += (count or 0) * d * d
    return s2 / (2 * s1) if s1 > 0 else None


def _queue(primary: Frame, standby: Frame | None, excess: float) -> tuple[float | None, str]:
    """The commits' wait behind writes in flight, and what it queues behind (see Budget)."""
    remote = next(  # the 12c event's histogram, else the 11.2 one's: a version has one of them
        (h for e in REMOTE if (h := _hist(primary, e)) is not None), None
    )
    lives = {
        "remote": residual_life(remote),
        "local": residual_life(_hist(primary, LOCAL)),
    }
    res = {k: v for k, v in lives.items() if v is not None}
    if not res:
        return None, ""
    part = max(res, key=res.__getitem__)
    if part == "remote":
        rfs = [
            r
            for e in STANDBY_IO
            if standby is not None and (r := residual_life(_hist(standby, e))) is not None
        ]
        if not rfs:  # the standby's waits are not in the data (an AWR import of the primary)
            part = "remote write"
        else:
            part = "standby" if max(rfs) >= 0.5 * res["remote"] else "network"
    return min(excess, max(res.values())), part


def smooth(budgets: Iterable[Budget]) -> Budget:
    """Field-wise mean of recent budgets (a single interval's split is noisy)."""
    budgets = list(budgets)
    last = budgets[-1]
    parts = zip(
        *(
            (b.lfs_ms, b.local_write_ms, b.remote_write_ms, b.standby_io_ms, b.network_ms,
             b.overhead_ms, b.queue_ms)
            for b in budgets
        ),
        strict=True,
    )  # fmt: skip
    lfs, local, remote, sio, net, over, queue = map(mean, parts)
    return Budget(last.host, last.time, lfs, local, remote, sio, net, over, queue, last.queue_on)


def mean(vals: Iterable[float | None]) -> float | None:
    """The mean of the known values, None when none is."""
    xs = [v for v in vals if v is not None]
    return sum(xs) / len(xs) if xs else None

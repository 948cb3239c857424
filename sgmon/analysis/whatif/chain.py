"""The SYNC commit chain replayed from measured distributions (a small Monte Carlo).

Seed 000's 13 steps, reduced to what the waits measure: commits arrive at the measured rate;
when LGWR is free it takes every commit queued so far as one redo write, whose write phase is
max(local, remote) (they run in parallel) plus LGWR's own overhead (CPU, post); each commit's
log file sync ends with that write.  A commit arriving while a write is in flight so waits for
its residual and the next write, which is where one slow write turns into many slow commits.
Each write's local and remote durations are drawn from the measured histograms.

Two things the waits do not give are fitted to the measured log file sync: LGWR's overhead (an
exponential wait per write, fitted to its fast commits) and the sessions.  Sessions commit in a
closed loop: each commits, waits for its commit, thinks, commits again, so a faster write brings
the next commits sooner and a slower one holds them back.  How many there are is told by the
commit rate at two loads (Little's law: the calm intervals before the window and the window),
else by the share of slow commits (a stall holds at most that many), never fewer than are in a
commit on average; a commit rate that neither fell nor needs the limit is an open stream.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, replace

from sgmon.analysis.whatif.dist import Dist, binned, bucket_of

RECEIPT_MS = 0.03
"""Fast Sync: the standby's acknowledgement on receipt, before its SRL write."""
COMMITS = 60000  # commits per replay: a minute or more of commits
SEED = 41
FAST = 0.10  # the quantile of log file sync the LGWR overhead is fitted to


@dataclass(frozen=True, slots=True)
class Remote:
    """How a remote write is drawn: the network and transport part, the SRL write the
    acknowledgement waits for (None: Fast Sync's receipt), the share of writes that wait out a
    retransmission timeout and what one adds (ms).  A share of writes, not a rate in time: a
    timeout is a write's last segment lost (one lost before it is resent at the next ACK), so
    each write has the same chance whatever its size, and more writes a second bring more
    timeouts a second (the lab: 2 % packet loss, 157 writes a second with timeouts on 0.49 %
    of them; 186 a second under ``rto_min 10ms``, on 0.81 %)."""

    base: float
    ack: Dist | None
    ack_scale: float = 1.0
    loss: float = 0.0
    penalty: float = 0.0
    repairs: Dist | None = None
    """How long the remote writes repaired short of a timeout took (a loss resent at the next
    ACK or the tail loss probe: 1-8 ms in the lab), counted as shares of all remote writes (its
    ``total``: the share repaired): a few slow writes hold many commits, which the same time
    spread over every write as ``base`` does not."""

    def draw(self, u: float, hit: bool, repair: float = 1.0) -> float:
        """One remote write (ms): its SRL write at quantile ``u``; ``hit``: a loss fell on its
        redo and waited a timeout; ``repair`` (uniform) below the share repaired: one was
        repaired sooner."""
        ack = self.ack.at(u) * self.ack_scale if self.ack else RECEIPT_MS
        fixed = 0.0
        if self.repairs is not None and repair < self.repairs.total:
            fixed = self.repairs.at(repair / self.repairs.total)
        return self.base + ack + (self.penalty if hit else 0.0) + fixed


@dataclass(frozen=True, slots=True)
class Path:
    """A commit path: the local write's distribution (times ``local_scale``), the remote write
    (None: not on the commit path, ASYNC), and the fitted load: commit rate (per s), sessions
    (a stall holds at most this many commits; 0: no limit), LGWR overhead per write (ms)."""

    local: Dist
    remote: Remote | None
    local_scale: float = 1.0
    rate: float = 1000.0
    sessions: int = 0
    overhead: float = 0.0
    think: float = 0.0
    """Each session's mean think time between its commits (ms; 0: commits arrive at ``rate``
    whatever the commit time, an open stream)."""


class _Writer:
    """LGWR's redo writes through ``path``, each drawn from its own random streams (local
    writes, SRL writes, overhead, the link's losses), so two replays of paths that differ in
    one part draw the same values for the others, write by write: their difference is the
    change's, not the dice's."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.local, self.ack, self.cpu, self.losses, self.repairs = (
            random.Random(f"{SEED}/{k}") for k in range(1, 6)
        )

    def end(self, start: float) -> float:
        """When a write started at ``start`` ends and posts its commits (ms)."""
        path, log = self.path, math.log
        r = path.remote
        if r:
            hit = self.losses.random() < r.loss
            repair = self.repairs.random() if r.repairs is not None else 1.0
            remote = r.draw(self.ack.random(), hit, repair)
        else:
            remote = 0.0
        phase = max(path.local.at(self.local.random()) * path.local_scale, remote)
        return start + phase - log(1.0 - self.cpu.random()) * path.overhead


def _open(path: Path, commits: int) -> tuple[list[float], float]:
    """Commits arriving at ``path.rate`` (at most ``sessions`` held by a write)."""
    arrive, log, write = random.Random(f"{SEED}/0"), math.log, _Writer(path)
    mean_gap = 1000.0 / max(path.rate, 1e-3)
    cap = path.sessions or 1 << 30
    out: list[float] = []
    free, nxt = 0.0, -log(1.0 - arrive.random()) * mean_gap
    while len(out) < commits:
        start = max(free, nxt)
        batch: list[float] = []
        while nxt <= start and len(batch) < cap:
            batch.append(nxt)
            nxt += -log(1.0 - arrive.random()) * mean_gap
        if nxt <= start:  # every session waits: the rest never arrive (memoryless: skip them)
            nxt = start - log(1.0 - arrive.random()) * mean_gap
        free = write.end(start)
        out.extend(free - a for a in batch)
    return out, len(out) / max(free, 1e-9) * 1000.0


def _closed(path: Path, commits: int) -> tuple[list[float], float]:
    """``path.sessions`` sessions, each committing, waiting for its commit, then thinking
    ``path.think`` ms on average before the next: a faster write brings the next commits
    sooner, and LGWR takes whatever is waiting when it is free."""
    arrive, log, write = random.Random(f"{SEED}/0"), math.log, _Writer(path)
    think = path.think
    due = [-log(1.0 - arrive.random()) * think for _ in range(path.sessions)]
    heapq.heapify(due)
    out: list[float] = []
    free = 0.0
    while len(out) < commits:
        start = max(free, due[0])
        batch = []
        while due and due[0] <= start:
            batch.append(heapq.heappop(due))
        free = write.end(start)
        out.extend(free - a for a in batch)
        for _ in batch:
            heapq.heappush(due, free - log(1.0 - arrive.random()) * think)
    return out, len(out) / max(free, 1e-9) * 1000.0


def replay(path: Path, commits: int = COMMITS) -> tuple[list[float], float]:
    """Log file syncs (ms) of ``commits`` commits through ``path``, and the commits per second
    that completed: a closed loop of sessions when ``path.think`` is set, else commits arriving
    at ``path.rate`` (fewer completed than arrived when ``sessions`` holds a stall's arrivals
    back)."""
    return _closed(path, commits) if path.think > 0 and path.sessions else _open(path, commits)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _tail(xs: list[float], e: int) -> float:
    """Share of ``xs`` in bucket ``e`` and above."""
    lo = 2.0 ** (e - 1) / 1000.0
    return sum(1 for x in xs if x >= lo) / max(len(xs), 1)


def _sessions(path: Path, lfs: Dist) -> Path:
    """``path`` with the sessions that fit the measured share of slow commits (0: the
    measured share needs no limit)."""
    slow = max(bucket_of(16.0), bucket_of(lfs.at(0.5) * 8))
    want = lfs.above(slow) / lfs.total
    if _tail(replay(path, COMMITS // 3)[0], slow) <= want * 1.25 + 1e-4:
        return path
    lo, hi = 1.0, 4096.0
    for _ in range(10):
        mid = math.sqrt(lo * hi)
        share = _tail(replay(replace(path, sessions=round(mid)), COMMITS // 3)[0], slow)
        lo, hi = (mid, hi) if share < want else (lo, mid)
    return replace(path, sessions=max(1, round(math.sqrt(lo * hi))))


def _rate(path: Path, measured: float) -> Path:
    """``path`` with the arrival rate whose completed commits match the measured rate (the
    commits a stall held back never arrived)."""
    for _ in range(3):
        done = replay(path, COMMITS // 3)[1]
        path = replace(path, rate=path.rate * measured / max(done, 1e-3))
    return path


def _quantile(xs: list[float], q: float) -> float:
    return sorted(xs)[int(q * (len(xs) - 1))] if xs else 0.0


def _overhead(path: Path, lfs: Dist, most: float) -> Path:
    """``path`` with the LGWR overhead whose replay gives the measured fast commits (p10: an
    overhead slows every commit, a stall only some), at most ``most`` ms a write."""
    want = lfs.at(FAST)
    if most <= 0 or _quantile(replay(path, COMMITS // 3)[0], FAST) >= want:
        return path
    lo, hi = 0.0, min(want, most)
    for _ in range(12):
        mid = (lo + hi) / 2
        got = _quantile(replay(replace(path, overhead=mid), COMMITS // 3)[0], FAST)
        lo, hi = (mid, hi) if got < want else (lo, mid)
    return replace(path, overhead=(lo + hi) / 2)


MOST_SESSIONS = 4096  # beyond this many the loop is an open stream of commits


def sessions(rate: float, avg: float, calm: tuple[float, float] | None) -> int:
    """The sessions of a closed loop, from Little's law over two loads: each session commits
    once per its commit time and think time, so ``rate * (avg + think)`` is the same number
    of sessions at the measured load and at the calm one (``calm``: its commits per second
    and log file sync average, ms).  0: the commit rate did not fall as the commits slowed
    (an open stream, or too few sessions waiting to tell)."""
    if calm is None or rate <= 0:
        return 0
    c_rate, c_avg = calm
    if c_rate <= rate * 1.02 or c_avg >= avg:
        return 0
    think = (rate * avg - c_rate * c_avg) / (c_rate - rate) / 1000.0  # s
    n = rate * (avg / 1000.0 + think)
    return round(n) if 1 <= n <= MOST_SESSIONS else 0


def _think(path: Path, rate: float) -> Path:
    """``path``'s sessions with the think time whose replay completes the measured commit
    rate (``sessions / (commit time + think)``)."""
    for _ in range(3):
        xs, _ = replay(path, COMMITS // 3)
        think = path.sessions * 1000.0 / max(rate, 1e-3) - _mean(xs)
        path = replace(path, think=max(think, 1e-3))
    return path


def fitted(path: Path, lfs: Dist, rate: float, idle: float = math.inf, closed: int = 0) -> Path:
    """``path`` fitted to the measured log file sync (its fast commits and its share of slow
    ones) and commit rate.  LGWR's overhead is at most ``idle``, the ms a write that the
    measured writes leave between them: where few sessions commit in step, every commit can
    wait a whole slow write while half the writes are fast, and the fast commits are then
    slow for want of sessions, not for LGWR's overhead (the lab's capped standby).

    ``closed``: that many sessions in a closed loop (``sessions``), their think time fitted
    to the commit rate.  Else an open stream, unless a stall holds fewer commits than would
    arrive: then as many sessions as fit the slow commits, but never fewer than are in a
    commit on average (the rate times log file sync's average), in a closed loop."""
    if not closed:
        path = _overhead(replace(path, rate=rate), lfs, idle)
        path = _sessions(path, lfs)
        if not path.sessions:
            return path
        closed = max(path.sessions, math.ceil(rate * lfs.mean() / 1000.0))
    path = _think(replace(path, sessions=closed, think=closed * 1000.0 / rate), rate)
    return _think(_overhead(path, lfs, idle), rate)


@dataclass(frozen=True, slots=True)
class Outcome:
    """Log file sync: average, p50 and p99 (ms, each quantile within its bucket)."""

    avg: float
    p50: float
    p99: float


def outcome(path: Path) -> Outcome:
    """What a replay of ``path`` gives, counted into buckets as the database would."""
    lfs = replay(path)[0]
    d = binned(lfs)
    return Outcome(_mean(lfs), d.at(0.5), d.at(0.99))

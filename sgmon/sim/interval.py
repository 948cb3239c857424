"""What one simulated interval did (``TickStats``): the commit model's totals, from which the
OS rows of both hosts, the trace files and the standbys off the commit path are drawn."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class TickStats:
    """What one interval did, for the OS rows of both hosts."""

    commits: int = 0
    writes: int = 0
    redo_bytes: float = 0.0
    local_ms: float = 0.0  # sum over writes
    remote_ms: float = 0.0
    rfs_ms: float = 0.0
    lfs_ms: float = 0.0  # sum over commits
    losses: int = 0
    stall_ms: float = 0.0  # longest remote write
    switches: int = 0
    reads_cache: float = 0.0
    lwd_bytes: float = 0.0
    busy_frac: float = 0.0  # share of the interval LGWR was writing
    capped: float = 1.0
    """Share of the interval the capped volume's queue was full."""
    unacked: int = 0
    """Segments of a write still waiting for its retransmission when the interval ends: what
    ss shows at the tick, while NSS sleeps on the socket (seed 001)."""
    silent_s: float = 0.0
    """Seconds the standby has not acknowledged anything, at the interval's end, while LGWR
    still waits for it (a silent link, before NET_TIMEOUT): the socket backs its RTO off."""
    slow: list[tuple[float, float, float]] = field(default_factory=list)
    """LGWR writes at least ``SLOW_MS`` long: (end time, ms, KB)."""
    bcast: list[tuple[float, float, int]] = field(default_factory=list)
    """RAC: SCN acks that came at least ``SLOW_MS`` after the write: (when, ms, SCN)."""
    remote: list[tuple[int, int, float, float, float, float, float]] = field(default_factory=list)
    """Remote writes at least ``SPLIT_MS`` long: (msgid, sequence, NSS send, RFS received,
    RFS done, NSS received, RFS write ms), times in simulated seconds."""

    def wrote(
        self, commits: int, size: float, local: float, remote: float, rfs: float, lost: int
    ) -> None:
        """Count one redo write of ``commits`` commits and ``size`` bytes: its local, remote
        and SRL write times (ms) and whether a loss hit it."""
        self.commits += commits
        self.writes += 1
        self.redo_bytes += size
        self.local_ms += local
        self.remote_ms += remote
        self.rfs_ms += rfs
        self.losses += lost
        self.stall_ms = max(self.stall_ms, remote)


FALL_BEHIND = 0.6
"""Seconds of lag a capped standby adds per second while it cannot keep up (seed 003: CL_B and
CL_C stayed busy 1.5 hours past the primary's 28-minute job)."""


def lag_after(lag: float, behind: bool, dt: float) -> float:
    """A standby's lag after ``dt`` seconds: growing while it cannot keep up, else draining."""
    return lag + dt * FALL_BEHIND if behind else max(0.0, lag - dt)


def blocks(st: TickStats) -> int:
    """The 512-byte redo blocks an interval's redo fills: its commits' and lost write
    detection's, as 'redo size' counts them (shipped alike)."""
    return math.ceil((st.redo_bytes + st.lwd_bytes) / 512)


def merged(stats: list[TickStats]) -> TickStats:
    """What a standby receives in one interval from several primary instances (RAC threads)."""
    if len(stats) == 1:
        return stats[0]
    out = TickStats()
    for st in stats:
        for name in ("commits", "writes", "redo_bytes", "local_ms", "remote_ms", "rfs_ms",
                     "lfs_ms", "losses", "switches", "reads_cache", "lwd_bytes"):  # fmt: skip
            setattr(out, name, getattr(out, name) + getattr(st, name))
        out.stall_ms = max(out.stall_ms, st.stall_ms)
        out.busy_frac = max(out.busy_frac, st.busy_frac)
        out.slow += st.slow
        out.bcast += st.bcast
        out.remote += st.remote
    return out


def expiries(draw: Callable[[], float], p_loss: float, burst: float) -> int:
    """The retransmission timeouts one remote write waits out: none without a loss, one for a
    loss, and a second, the RTO doubled (Linux's backoff), when the resent segment is lost again
    in the same burst (chance ``burst``; no draw without bursts).  No third: seed 001 has no
    commit over 1 s."""
    n = int(draw() < p_loss)
    return n + int(bool(n and burst) and draw() < burst)


def rate(ms: float) -> float:
    """An exponential wait's rate from its mean (ms); 0 for no wait."""
    return 1.0 / ms if ms > 0 else 0.0


def expo(draw: Callable[[], float], rate: float) -> float:
    """One exponential wait (ms) of ``rate`` (the formula of random.expovariate written out:
    the same values for every seed); no draw for a rate of 0."""
    return -math.log(1.0 - draw()) / rate if rate else 0.0

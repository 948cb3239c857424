"""The SYNC commit path of seed 000 (13 steps), simulated write by write.

Commits arrive at LGWR as a Poisson stream.  When LGWR is free it takes every commit queued so
far as one batch (step 1) and, for that redo write: waits for a CPU (2), starts the remote write
(5) and the local write (6) in parallel, waits for both (7-8: the write phase is max(local,
remote), not their sum), updates the on-disk SCN and posts (10-11); each foreground then waits
for a CPU (12) and its 'log file sync' ends (13).  A commit that arrives while a write is in
flight waits for that write and the next one, which is how one slow remote write turns into
hundreds of slow commits (seed 000, "Why log file sync averages lie").

The remote write is the network round trip plus the transfer plus the standby's SRL write
('RFS write'), plus one retransmission timeout when a TCP tail loss hits it (seed 001), doubled
each time the resent segment is lost again.  Every wait lands in cumulative ``Buckets``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
import random
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from sgmon.sim.capped import CappedVolume
from sgmon.sim.counters import (
    LGWR_LNS,
    NAMES_11G,
    PRIMARY_EVENTS,
    STANDBY_EVENTS,
    Uncounted,
    count,
    primary_stats,
    standby_waits,
)
from sgmon.sim.interval import TickStats, blocks, expiries, expo, lag_after, rate
from sgmon.sim.scenarios import Conditions
from sgmon.sim.standin import Buckets, StandIn, dg_stamp

SLOW_MS = 100.0  # the sim's _long_log_write_warning_threshold, and its broadcast ack's
SLOW_MS_11G = 500.0
"""11.2's LGWR warns of a slow log write only from 500 ms (every 11.2 warning seen, seed 003's
among them, is 501 ms or more)."""
SCN = 0xA50C01D0000
"""The commit SCN of the simulated workload's first write (its hex as a 12.2 LGWR trace prints
it); each redo write adds one."""
RECEIPT_MS = 0.03
"""Fast Sync: the standby's RFS takes the redo into memory and acknowledges (no SRL write)."""
SPLIT_MS = 50.0  # remote writes traced in detail (event 16410 on NSS and RFS)
MSS = 1448  # bytes of redo per TCP segment
# Draws per commit and per write are random.Random's own formulas written out (CPython 3.11:
# expovariate(l) is -log(1.0 - random()) / l, lognormvariate(mu, s) exp(normalvariate(mu, s))):
# a call costs more than the draw, and the same formulas give every seed the same values.
_exp, _log = math.exp, math.log
Rates = tuple[float, float, float]
"""The exponential waits of a write, per ms: LGWR's CPU wait, the broadcast ack, a committing
foreground's CPU wait (0: no wait, and no draw)."""


class CommitModel:
    """Cumulative V$ counters of a primary and its SYNC standby, advanced interval by interval."""

    def __init__(
        self,
        rng: random.Random,
        primary: StandIn,
        standby: StandIn,
        standby_name: str = "STBY",
        thread: int = 1,
        beside: CommitModel | None = None,
        affirm: bool = True,
        far_sync: bool = False,
    ) -> None:
        """``thread``: the redo thread this (RAC) instance writes; ``beside``: another
        instance's model shipping to the same standby, whose RFS waits and statistics this one
        adds to (the standby's V$ counters are of all threads); ``affirm``: SYNC AFFIRM, else
        Fast Sync (NOAFFIRM: the remote write ends at the standby's receipt, its SRL write
        follows on its own, seed 000); ``far_sync``: the destination is a far sync instance
        (V$ARCHIVE_DEST_STATUS.TYPE FAR SYNC), which writes SRLs and forwards but has no
        datafiles to apply redo to, so it has a transport lag and no apply lag."""
        self.rng = rng
        self.primary = primary
        self.standby = standby
        self.standby_name = standby_name
        self.thread = thread
        self.affirm = affirm
        self.kind = "FAR SYNC" if far_sync else "PHYSICAL"
        self.names = (
            NAMES_11G if primary.version < (12, 1) else {n: n for n in PRIMARY_EVENTS}
        )  # published name of each primary event on this version
        self.slow_ms = SLOW_MS_11G if primary.version < (12, 1) else SLOW_MS
        self._volume = CappedVolume(rng)
        self.events = {
            n: Buckets() if n in self.names or n in STANDBY_EVENTS else Uncounted()
            for n in (*PRIMARY_EVENTS, LGWR_LNS, *STANDBY_EVENTS)
        }
        self.stats = primary_stats()
        self.standby_stats: dict[str, float] = {"physical reads cache": 0, "redo size": 0.0}
        self.received: dict[int, float] = {}
        """Thread -> when the standby last received its redo (epoch seconds): V$DATAGUARD_STATS
        has one transport lag for every thread, the oldest one's."""
        if beside is not None:
            self.events.update({n: beside.events[n] for n in STANDBY_EVENTS})
            self.standby_stats = beside.standby_stats
            self.received = beside.received
        self.resp: dict[int, int] = {1: 0}
        self._pending: list[float] = []
        self._next_arrival: float | None = None
        self._lgwr_free = float("-inf")
        self._held = 0
        """Sessions the write in flight holds: they commit nothing new until it ends."""
        self._next_switch: float | None = None
        self._last_switch = -1e9
        self.apply_lag = 0.0
        self._stopped = False
        self._shipping = True
        self._block = 0
        self.sequence = 1
        self.net_timeout = 30.0
        """The destination's NET_TIMEOUT: how long LGWR waits for a silent standby."""
        self._down_at: float | None = None
        self._unacked = 0
        self._after_loss = False  # the last remote write lost a segment: the next is in its burst
        self._later: list[tuple[float, Callable[[TickStats], None]]] = []
        """What a write that hangs past its interval counts when it ends (end, how): V$SYSTEM_EVENT
        counts a wait, V$SYSSTAT its time and an LGWR trace its warning when the wait is over,
        so a 30 s hang shows when it ends, not when it starts."""
        self._msgid = 100000
        self.wall: Callable[[float], float] = lambda t: t
        """Simulated seconds -> epoch seconds (the pair sets it), for the lag datum time."""
        primary.set_dest(
            2,
            db_unique_name=standby_name,
            net_timeout=30,
            affirm="YES" if affirm else "NO",
            type=self.kind,
        )
        standby.set_standby_logs(thread, active=1)

    def advance(self, t0: float, dt: float, c: Conditions) -> TickStats:
        """Simulate [t0, t0 + dt) and publish the counters; returns the interval's totals."""
        st = TickStats()
        t1 = t0 + dt
        c = self._link(t0, t1, c, st)
        for _end, settle in [x for x in self._later if x[0] < t1]:
            settle(st)
        self._later = [x for x in self._later if x[0] >= t1]
        self._shipping = not c.transport_stopped and not c.link_down
        self._switches(t0, t1, c, st)
        self._arrivals(t0, t1, c, st)
        busy = self._writes(t1, c, st)
        if st.silent_s and not st.writes:  # the hung write began in an earlier interval
            st.unacked = self._unacked
        st.busy_frac = min(1.0, busy / dt)
        if c.cap_duty < 1.0:  # the standbys off the commit path may be the capped ones
            st.capped = self._volume.full_share(t0, t1, c)
        st.reads_cache = c.reads_cache * dt * (0.9 + 0.2 * self.rng.random())
        st.lwd_bytes = st.reads_cache * c.lwd_per_read
        count(self.stats, self.standby_stats, st, c)
        self.apply_lag = lag_after(self.apply_lag, c.standby_cap and st.busy_frac > 0.5, dt)
        if self._shipping:  # RFS's block in the thread's current log (all of 'redo size')
            self._block += blocks(st)
        self._publish(t1, c)
        return st

    def _link(self, t0: float, t1: float, c: Conditions, st: TickStats) -> Conditions:
        """The interval's conditions as LGWR lives them over a link that is down: it waits
        for the silent standby (``st.silent_s``) until NET_TIMEOUT, then gives up on it and
        writes locally only."""
        if not c.link_down:
            return c
        self._down_at = t0 if self._down_at is None else self._down_at
        if t0 >= self._down_at + self.net_timeout:
            return replace(c, transport_stopped=True)
        st.silent_s = min(t1, self._down_at + self.net_timeout) - self._down_at
        return c

    def _switches(self, t0: float, t1: float, c: Conditions, st: TickStats) -> None:
        """The log switches due by ``t1``, every ``switch_every`` seconds or so."""
        rng = self.rng
        if self._next_switch is None or self._next_switch - t0 > c.switch_every:
            self._next_switch = t0 + c.switch_every * (0.5 + rng.random())
        while self._next_switch <= t1:
            self._switch(self._next_switch, st)
            self._next_switch += c.switch_every * (0.8 + 0.4 * rng.random())

    def _arrivals(self, t0: float, t1: float, c: Conditions, st: TickStats) -> None:
        """The commits that arrive by ``t1`` (a Poisson stream), queued for LGWR."""
        pending, draw = self._pending, self.rng.random
        a = t0 if self._next_arrival is None else self._next_arrival
        while a < t1:
            if not st.silent_s or len(pending) < c.sessions:  # the rest are stuck
                pending.append(a)
            a += -_log(1.0 - draw()) / c.commits
        self._next_arrival = a

    def _writes(self, t1: float, c: Conditions, st: TickStats) -> float:
        """The redo writes LGWR starts before ``t1``, each taking every commit queued by its
        start; returns the time LGWR was busy in the interval."""
        pending = self._pending
        rates = (rate(c.lgwr_cpu_ms), rate(c.boc_ms), rate(c.fg_cpu_ms))
        busy, free = 0.0, self._lgwr_free
        i = 0  # pending[:i] are in a write; arrivals only grow, so a batch is one bisection
        while i < len(pending):
            start = max(free, pending[i])
            if start >= t1:
                break
            j = bisect.bisect_right(pending, start, i)  # every arrival up to the start
            # once every session waits in its commit, no more commits arrive until one ends;
            # those that came during the last write came from the sessions it did not hold
            room = c.sessions - (self._held if pending[i] < free else 0)
            batch, i = pending[i : min(j, i + max(room, 1))], j
            self._held = len(batch)
            free = self._redo_write(start, batch, t1, c, rates, st)
            busy += min(free, t1) - start
        self._lgwr_free = free
        del pending[:i]
        return busy

    def _redo_write(
        self,
        start: float,
        batch: list[float],
        t1: float,
        c: Conditions,
        rates: Rates,
        st: TickStats,
    ) -> float:
        """One redo write from ``start`` of the commits that arrived at ``batch``: its steps
        (CPU, the write phase, the broadcast ack, the post), counted now or, when it hangs past
        the interval, when it ends; returns when it ends."""
        draw, size = self.rng.random, len(batch) * c.redo_per_commit
        local, remote, rfs, lost, wire = self._write(start, len(batch), c)
        cpu = expo(draw, rates[0])
        phase = max(local, remote)
        ack = expo(draw, rates[1])  # steps 4 and 9
        if ack:
            self.stats["redo write broadcast ack time"] += ack * 1000.0
            self.stats["redo write broadcast ack count"] += 1
        end = start + (cpu + phase + ack + c.post_ms) / 1000.0
        self._msgid += 1
        if ack >= SLOW_MS:  # LGWR traces the late ack as it ends (seed 000 steps 4, 9)
            st.bcast.append((start + (cpu + phase + ack) / 1000.0, ack, SCN + self._msgid))
        hung = c.link_down and end >= t1  # counted when it ends, intervals later
        slow = None
        if (end - start) * 1000.0 >= self.slow_ms:
            slow = (end, (end - start) * 1000.0, size / 1024)
        if remote >= SPLIT_MS and not hung:  # a hung write reached no RFS to split it
            st.remote.append(self._split(start + cpu / 1000.0, remote, rfs, wire))
        lfs = [(end - arrival) * 1000.0 + expo(draw, rates[2]) for arrival in batch]
        if hung:
            ended = partial(self._ended, slow=slow, lfs=lfs, phase=phase, remote=remote)
            self._later.append((end, ended))
        else:
            self._ended(st, slow, lfs, phase, remote)
        st.wrote(len(batch), size, local, remote, rfs, lost)
        if (lost or st.silent_s) and end > t1:  # sampled mid-stall: still unacked
            st.unacked = max(1, math.ceil(size / MSS))
            self._unacked = st.unacked
        return end

    def _split(
        self, send: float, remote: float, rfs: float, wire: float
    ) -> tuple[int, int, float, float, float, float, float]:
        """A remote write sent at ``send`` as NSS and RFS trace it: (msgid, sequence, NSS
        send, RFS received, RFS done, NSS received, RFS write ms)."""
        waited = rfs if self.affirm else RECEIPT_MS  # the RFS part of the remote write
        got = send + (remote - waited - wire / 2) / 1000.0  # out, with any resend
        done = got + waited / 1000.0
        return (self._msgid, self.sequence, send, got, done, send + remote / 1000.0, waited)

    def _ended(
        self,
        st: TickStats,
        slow: tuple[float, float, float] | None,
        lfs: list[float],
        phase: float,
        remote: float,
    ) -> None:
        """One redo write, counted as it ends: its warning in the LGWR trace when it is slow
        (end, ms, KB), its commits' log file syncs (ms, in commit order), its time and its
        destination's response."""
        if slow is not None:
            st.slow.append(slow)
        self.events["log file sync"].add_all(map(operator.mul, lfs, itertools.repeat(1000.0)))
        st.lfs_ms = functools.reduce(operator.add, lfs, st.lfs_ms)
        self.stats["redo write time (usec)"] += phase * 1000.0
        bucket = max(1, math.ceil(remote / 1000.0))  # whole seconds, rounded up
        self.resp[bucket] = self.resp.get(bucket, 0) + 1

    def _waited(self, st: TickStats, name: str, us: float) -> None:
        """One wait of ``name``, counted as it ends."""
        self.events[name].add(us)

    def _write(self, start: float, n: int, c: Conditions) -> tuple:
        """One redo write: local and remote durations (ms), the SRL write, whether a loss hit."""
        rng = self.rng
        size = n * c.redo_per_commit
        local = _exp(rng.normalvariate(_log(c.local_ms), c.local_sigma)) + size / 400e6 * 1000
        if c.standby_cap and c.cap_duty < 1.0 and not self._volume.full_at(start, c):
            rfs = _exp(rng.normalvariate(_log(c.calm_rfs_ms), c.calm_rfs_sigma))
            if self._volume.near_at(start, c):  # behind a short queue of reads
                rfs += -_log(1.0 - rng.random()) * c.near_ms
        else:
            rfs = _exp(rng.normalvariate(_log(c.rfs_ms), c.rfs_sigma))
        if c.standby_cap:  # the volume holds every I/O while its allowance refills
            rfs = self._volume.held_ms(start, rfs, c)
        since = start - self._last_switch
        # after a switch: SRL header updates and a standby checkpoint (seed 000)
        if c.switch_spike_ms and 0.0 <= since < 1.5:
            rfs += c.switch_spike_ms * math.exp(-since / 0.4) * (0.5 + rng.random())
        wire = c.rtt_ms * (0.9 + 0.2 * rng.random()) + size * 8 / (c.link_mbit * 1e3)
        ev = self.events
        ev["log file parallel write"].add(local * 1000)
        if c.transport_stopped:  # the destination is in error: LGWR writes locally only
            return local, 0.0, 0.0, 0, 0.0
        if c.link_down and self._down_at is not None:  # NSS waits out NET_TIMEOUT for an ack
            remote = max(0.0, self._down_at + self.net_timeout - start) * 1000.0
            end = start + remote / 1000.0
            waits = {
                "SYNC Remote Write": remote * 1000,
                "Redo Transport MISC": (remote + 0.004) * 1000,
                LGWR_LNS: max(0.0, remote - local) * 1000,
            }
            self._later += [
                (end, partial(self._waited, name=name, us=us)) for name, us in waits.items()
            ]
            return local, remote, 0.0, 0, wire
        lost = expiries(rng.random, c.next_loss if self._after_loss else c.tail_loss, c.loss_burst)
        self._after_loss = lost > 0
        acked = rfs if self.affirm else RECEIPT_MS  # Fast Sync: the receipt, not the SRL write
        resend = c.rto_min_ms * (2**lost - 1) + c.rtt_ms + rng.random() * 8 if lost else 0.0
        remote = wire + acked + resend
        ev["SYNC Remote Write"].add(remote * 1000)
        ev["Redo Transport MISC"].add((remote + 0.004) * 1000)
        ev["Redo Writer Remote Sync Complete"].add(-_log(1.0 - rng.random()) / (1 / 0.006) * 1000)
        ev[LGWR_LNS].add(max(0.0, remote - local) * 1000)  # no draw: other scenarios unchanged
        standby_waits(rng, ev, rfs)
        return local, remote, rfs, int(lost), wire

    def _switch(self, when: float, st: TickStats) -> None:
        self._last_switch = when
        st.switches += 1
        self.sequence += 1
        self._block = 0
        self.primary.log_switch(self.thread)
        if self._shipping:  # a stopped transport: the standby hears of no switch
            self.standby.log_switch(self.thread)
            self.standby.set_standby_logs(self.thread, active=1)
            self.primary.set_archived(2, self.sequence - 1, self.thread)

    def _publish(self, now: float, c: Conditions) -> None:
        for name, shown in self.names.items():
            self.primary.publish_buckets(shown, self.events[name])
        for name in STANDBY_EVENTS:
            self.standby.publish_buckets(name, self.events[name])
        self.primary.publish_stats({k: round(v) for k, v in self.stats.items()})
        self.standby.publish_stats({k: round(v) for k, v in self.standby_stats.items()})
        self.primary.publish_resp_hist(2, self.resp)
        wall = self.wall(now)
        stamp = dg_stamp(wall)
        if c.transport_stopped and not self._stopped:  # what a real pair shows: dest in error
            self._stopped = True
            self.primary.set_dest(
                2,
                db_unique_name=self.standby_name,
                affirm="YES" if self.affirm else "NO",
                type=self.kind,
                status="ERROR",
                error="ORA-16198: Timeout incurred on internal channel during remote archival"
                if c.link_down
                else "ORA-03135: connection lost contact",
            )
            self.primary.set_database(
                protection_level="RESYNCHRONIZATION", switchover_status="FAILED DESTINATION"
            )
        if self._shipping:
            self.received[self.thread] = wall
        self.standby.set_receiving(self.thread, self.sequence if self._shipping else None,
                                   self._block)  # fmt: skip
        applied = round(self.apply_lag) if self.kind != "FAR SYNC" else None
        if any(t >= wall for t in self.received.values()):
            # some thread arrives: the datum moves, the lag is the oldest thread's
            lag = wall - min(self.received.values())
            self.standby.set_dg_stats(round(lag), applied, datum_time=stamp)
        else:
            # no thread arrives: a NULL transport lag, and a datum that no longer moves
            datum = dg_stamp(max(self.received.values())) if self.received else ""
            self.standby.set_dg_stats(None, applied, datum, computed=stamp)

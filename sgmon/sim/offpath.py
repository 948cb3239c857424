"""Standbys off the commit path: ASYNC destinations and cascaded standbys (seed 003).

They receive the same redo as the SYNC standby, but nothing on the primary waits for them: their
SRL writes ('RFS write') are their own, and when their volume is capped they fall behind, which
shows as a growing transport and apply lag, never as a slower commit.  The model reuses the
interval's ``TickStats`` (the writes LGWR shipped) with this standby's own SRL write times, so the
OS rows of ``hostos`` follow its own disk.

Each redo thread (a RAC primary's instance each) arrives over its own link, which may carry
less than the instance generates (``Conditions.async_mbit``): the thread's RFS position then
trails the primary's, its transport lag grows while the other threads stay current, and yet
it never stands still.

A far sync instance's destination to its terminal standby may fail (``Conditions.onward_down``):
the far sync shows it in ERROR, and the terminal standby receives nothing from then on, its
transport lag NULL and its datum standing still, as the SYNC standby's when its transport stops.

Not modelled: the ASYNC transport's own socket on the primary (the primary's tcp rows show the
full rate even on a capped link) and the cascading standby's forwarding cost.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace

from sgmon.sim.model import STANDBY_EVENTS, TickStats, blocks, lag_after, standby_waits
from sgmon.sim.scenarios import Conditions, Standby, uncapped
from sgmon.sim.standin import Buckets, StandIn, dg_stamp

Feeder = tuple[StandIn, int, str]
"""The standby (a far sync, a cascading one) whose destination ships to an off-path standby, that
destination's number and its transmit mode."""
Shipped = tuple[int, int, TickStats, float]
"""One thread's interval for an off-path standby: thread, the instance's current sequence, what
it generated, and the bytes per second its link carries (0: no cap)."""


class Reception:
    """One thread's redo on its way to an off-path standby, in 512-byte blocks: generated,
    received (at most what the link carries, the backlog first), and when each was generated."""

    def __init__(self, db: StandIn, thread: int) -> None:
        self.db, self.thread = db, thread
        self.made = self.got = 0
        self.logs: deque[tuple[int, int]] = deque([(1, 0)])
        """(sequence, block at which it began) of the logs not yet received whole."""
        self.marks: deque[tuple[int, float]] = deque()
        """(blocks generated, when) at each interval's end, from the oldest not received."""

    def advance(
        self, seq: int, st: TickStats, cap: float, dt: float, wall: float, down: bool = False
    ) -> float:
        """Receive one interval (nothing while its sender's destination is ``down``); the
        thread's transport lag (seconds) afterwards."""
        if seq != self.logs[-1][0]:  # the instance switched logs: the next one begins here
            self.logs.append((seq, self.made))
        self.made += blocks(st)
        self.marks.append((self.made, wall))
        room = 0 if down else cap * dt / 512 if cap else self.made
        self.got = min(self.made, self.got + int(room))
        while len(self.logs) > 1 and self.logs[1][1] <= self.got:
            (was, _), (now, _) = self.logs.popleft(), self.logs[0]
            for _ in range(now - was):  # a log received whole: the standby switches SRLs
                self.db.log_switch(self.thread)
            self.db.set_standby_logs(self.thread, active=1)
        while len(self.marks) > 1 and self.marks[0][0] < self.got:
            self.marks.popleft()
        seq0, start = self.logs[0]
        self.db.set_receiving(self.thread, seq0, self.got - start)
        return wall - self.marks[0][1] if self.marks[0][0] > self.got else 0.0


class OffPathStandby:
    """Cumulative V$ counters and lag of one standby nothing on the primary waits for."""

    def __init__(
        self, rng: random.Random, db: StandIn, capped: bool, feeder: Feeder | None = None
    ) -> None:
        """``feeder``: the far sync or cascading standby whose destination ships to this one
        (None: the primary's do)."""
        self.rng = rng
        self.db = db
        self.capped = capped
        self.feeder = feeder
        self.down = False
        """Its feeder's destination to it has failed: it receives nothing."""
        self._heard = ""
        self.events = {n: Buckets() for n in STANDBY_EVENTS}
        self.lag = 0.0
        self.redo = 0.0
        self.threads: dict[int, Reception] = {}
        db.set_standby_logs(1, active=1)

    def conditions(self, c: Conditions) -> Conditions:
        """The fault's conditions where they reach this standby (the cap only if it is
        capped), the healthy ones elsewhere."""
        return c if self.capped else uncapped(c)

    def advance(
        self, st: TickStats, mine: Conditions, dt: float, wall: float, shipped: Sequence[Shipped]
    ) -> TickStats:
        """Receive the interval's redo (``st``, every thread's; ``shipped``, each thread's own)
        under this standby's own conditions (``conditions``); publish counters and lag; the
        interval as this standby saw it (its SRL write times)."""
        rng, rfs, mu = self.rng, 0.0, math.log(mine.rfs_ms)
        for _ in range(0 if self.down else st.writes):
            ms = math.exp(rng.normalvariate(mu, mine.rfs_sigma))  # lognormvariate's own formula
            rfs += ms
            standby_waits(rng, self.events, ms)
        behind = mine.standby_cap and rfs > 0.5 * dt * 1000
        self.lag = lag_after(self.lag, behind, dt)
        late = 0.0  # the oldest thread's: V$DATAGUARD_STATS has one transport lag
        for thread, seq, mine_st, cap in shipped:
            got = self.threads.setdefault(thread, Reception(self.db, thread))
            late = max(late, got.advance(seq, mine_st, cap, dt, wall, self.down))
        for name, b in self.events.items():
            self.db.publish_buckets(name, b)
        if self.down:  # nothing arrives: a NULL transport lag, a datum that no longer moves
            self.db.set_dg_stats(None, round(late), self._heard, computed=dg_stamp(wall))
            return TickStats()
        self.redo += st.redo_bytes
        self.db.publish_stats({"redo size": round(self.redo)})
        lag = round(max(self.lag, late))  # nothing unreceived is applied
        self._heard = dg_stamp(wall)
        self.db.set_dg_stats(lag, lag, datum_time=self._heard)
        return replace(st, rfs_ms=rfs, losses=0)

    def begin(self, c: Conditions) -> None:
        """An interval under ``c`` begins: the feeder's destination to this standby fails if
        ``c`` says so, as a lost connection shows, before any host's views are read."""
        if not c.onward_down or self.feeder is None or self.down:
            return
        sender, dest_id, mode = self.feeder
        self.down = True
        uname = self.db.db_unique_name
        sender.set_dest(dest_id, db_unique_name=uname, transmit_mode=mode, affirm="NO",
                        net_timeout=30, valid_role="STANDBY_ROLE", status="ERROR",
                        error="ORA-03135: connection lost contact")  # fmt: skip


def off_path(
    standbys: Sequence[Standby], dbs: Mapping[str, StandIn], seed: int
) -> dict[str, OffPathStandby]:
    """The off-path standbys of a layout, each with its own random stream and its feeder."""
    return {
        sb.name: OffPathStandby(
            random.Random(f"sgmon-sim/{seed}/db/{sb.name}"),
            dbs[sb.name],
            sb.capped,
            (dbs[sb.via], sb.dest_id, sb.mode) if sb.via else None,
        )
        for sb in standbys
    }

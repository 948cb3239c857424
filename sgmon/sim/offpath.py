"""Standbys off the commit path: ASYNC destinations and cascaded standbys (seed 003).

They receive the same redo as the SYNC standby, but nothing on the primary waits for them: their
SRL writes ('RFS write') are their own, and when their volume is capped they fall behind, which
shows as a growing transport and apply lag, never as a slower commit.  The model reuses the
interval's ``TickStats`` (the writes LGWR shipped) with this standby's own SRL write times, so the
OS rows of ``hostos`` follow its own disk.

Not modelled: the ASYNC transport's own socket on the primary (the primary's tcp rows show the
SYNC socket only) and the cascading standby's forwarding cost.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

from sgmon.sim.model import STANDBY_EVENTS, TickStats, lag_after, standby_waits
from sgmon.sim.scenarios import Conditions, uncapped
from sgmon.sim.standin import Buckets, StandIn


class OffPathStandby:
    """Cumulative V$ counters and lag of one standby nothing on the primary waits for."""

    def __init__(self, rng: random.Random, db: StandIn, capped: bool) -> None:
        self.rng = rng
        self.db = db
        self.capped = capped
        self.events = {n: Buckets() for n in STANDBY_EVENTS}
        self.lag = 0.0
        self.redo = 0.0
        db.set_standby_logs(1, active=1)

    def conditions(self, c: Conditions) -> Conditions:
        """The fault's conditions where they reach this standby (the cap only if it is
        capped), the healthy ones elsewhere."""
        return c if self.capped else uncapped(c)

    def advance(self, st: TickStats, mine: Conditions, dt: float, stamp: str) -> TickStats:
        """Receive the interval's redo under this standby's own conditions (``conditions``);
        publish counters and lag; the interval as this standby saw it (its SRL write times)."""
        rng, rfs = self.rng, 0.0
        for _ in range(st.writes):
            ms = rng.lognormvariate(math.log(mine.rfs_ms), mine.rfs_sigma)
            rfs += ms
            standby_waits(rng, self.events, ms)
        for _ in range(st.switches):
            self.db.log_switch(1)
            self.db.set_standby_logs(1, active=1)
        behind = mine.standby_cap and rfs > 0.5 * dt * 1000
        self.lag = lag_after(self.lag, behind, dt)
        for name, b in self.events.items():
            self.db.publish_buckets(name, b)
        self.redo += st.redo_bytes
        self.db.publish_stats({"redo size": round(self.redo)})
        self.db.set_dg_stats(round(self.lag), round(self.lag), datum_time=stamp)
        return replace(st, rfs_ms=rfs, losses=0)

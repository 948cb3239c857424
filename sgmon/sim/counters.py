"""The V$ counters of the simulated commit path: its wait events, as each version names and
publishes them, and its statistics.

The primary's five waits of a SYNC commit (seed 000's 13 steps) and the standby's three around
its SRL write; 11.2 names two of them differently and lacks two (``NAMES_11G``).  A wait a
version does not have is still drawn, so that every version draws alike, but counted nowhere
(``Uncounted``).  The statistics are V$SYSSTAT's, cumulative, of both databases.
"""

from __future__ import annotations

import math
import random

from sgmon.sim.interval import TickStats
from sgmon.sim.scenarios import Conditions
from sgmon.sim.standin import Buckets

PRIMARY_EVENTS = (
    "log file sync",
    "log file parallel write",
    "SYNC Remote Write",
    "Redo Transport MISC",
    "Redo Writer Remote Sync Complete",
)
STANDBY_EVENTS = ("RFS write", "RFS random i/o", "RFS dispatch")
LGWR_LNS = "LGWR-LNS wait on channel"
NAMES_11G = {
    "log file sync": "log file sync",
    "log file parallel write": "log file parallel write",
    "SYNC Remote Write": "LNS wait on SENDREQ",
    LGWR_LNS: LGWR_LNS,
}
"""11.2's names for the same waits (seed 000 Table 3, seed 003's snapper): LNS waits on
SENDREQ for the remote write, LGWR on the LNS channel for what outlasts its local write; 11.2
has no Redo Transport MISC or Redo Writer Remote Sync Complete."""
RFS_IO_MU = math.log(0.28)  # 'RFS random i/o': lognormal, median 0.28 ms
_exp, _log = math.exp, math.log  # random.Random's formulas written out (see ``sim.model``)


class Uncounted(Buckets):
    """The accumulator of a wait this version does not have (11.2's Redo Transport MISC, 19c's
    LGWR-LNS wait on channel): its waits are still drawn, so that every version draws alike,
    but kept nowhere (kept, as ``Buckets`` keeps waits until read, they were never read)."""

    def __init__(self) -> None:
        super().__init__()
        self.add = self.add_all = _uncounted


def _uncounted(_: object) -> None:
    """A wait of an event the version does not publish."""


def standby_waits(rng: random.Random, events: dict[str, Buckets], rfs_ms: float) -> None:
    """One SRL write as the standby's V$ counters see it: the RFS write, and the random i/o
    and dispatch around it."""
    events["RFS write"].add(rfs_ms * 1000)
    events["RFS random i/o"].add(_exp(rng.normalvariate(RFS_IO_MU, 0.3)) * 1000)
    events["RFS dispatch"].add(-_log(1.0 - rng.random()) / (1 / 0.01) * 1000)


def primary_stats() -> dict[str, float]:
    """The primary's V$SYSSTAT statistics the model keeps, before its first interval."""
    return {
        "redo size": 0.0,
        "redo writes": 0,
        "redo write time": 0,
        "redo write time (usec)": 0.0,
        "redo synch writes": 0,
        "redo synch time": 0,
        "redo synch time (usec)": 0.0,
        "user commits": 0,
        "user rollbacks": 0,
        "redo size for lost write detection": 0.0,
        "physical reads cache": 0,
        "redo write broadcast ack time": 0.0,
        "redo write broadcast ack count": 0,
    }


def count(stats: dict[str, float], standby: dict[str, float], st: TickStats, c: Conditions) -> None:
    """An interval's totals added to the primary's statistics (``stats``) and the standby's."""
    s = stats
    s["redo size"] += st.redo_bytes + st.lwd_bytes
    s["redo writes"] += st.writes
    s["redo synch writes"] += st.commits
    s["redo synch time (usec)"] += st.lfs_ms * 1000.0
    s["user commits"] += st.commits
    s["user rollbacks"] += round(st.commits * 0.013)
    s["redo size for lost write detection"] += st.lwd_bytes
    s["physical reads cache"] += round(st.reads_cache)
    s["redo write time"] = int(s["redo write time (usec)"] // 10000)
    s["redo synch time"] = int(s["redo synch time (usec)"] // 10000)
    standby["redo size"] += st.redo_bytes + st.lwd_bytes
    standby["physical reads cache"] += round(st.reads_cache * (1.0 if c.standby_cap else 0.05))

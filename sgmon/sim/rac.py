"""RAC: the blocks one primary instance's sessions take from another's over the interconnect,
each once the holder's LGWR has flushed the block's redo (seed 001's 'gc current block busy')."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sgmon.events import GC_BUSY, GCS_LOG_FLUSH
from sgmon.sim.scenarios import Conditions
from sgmon.sim.standin import Buckets

if TYPE_CHECKING:
    from sgmon.sim.model import CommitModel

GC_CURRENT = GC_BUSY[0]
INTERCONNECT_MS = 0.15
"""A block's trip over the interconnect (gc current block 2-way: seed 001's AWR 0.18 ms)."""


def ship_blocks(sender: CommitModel, n: int, c: Conditions, to: CommitModel) -> None:
    """``n`` blocks ``sender``'s instance ships to ``to``'s sessions this interval, each once its
    LMS has had LGWR flush the block's redo ('gcs log flush sync', one local write under
    ``c``); ``to``'s sessions wait for the flush and the interconnect ('gc current block
    busy')."""
    for name in (GCS_LOG_FLUSH, GC_CURRENT):
        sender.events.setdefault(name, Buckets())
        to.events.setdefault(name, Buckets())
    flushed, waited = sender.events[GCS_LOG_FLUSH].add, to.events[GC_CURRENT].add
    normal, draw, mu = sender.rng.normalvariate, sender.rng.random, math.log(c.local_ms)
    for _ in range(n):
        flush = math.exp(normal(mu, c.local_sigma))
        flushed(flush * 1000)
        waited((flush + INTERCONNECT_MS * (0.8 + 0.4 * draw())) * 1000)
    for model in (sender, to):
        for name in (GCS_LOG_FLUSH, GC_CURRENT):
            model.primary.publish_buckets(name, model.events[name])

"""A scenario's commit path changed as a DBA would change it, so a what-if prediction can be
checked against the run it predicts.

A ``Change`` applies to the whole run (before and after the onset): the same route, the same
disks, the same destination attributes, only the fault still starting at the onset.  ASYNC is
run as the commit path that waits for the local write only (the model's stopped-transport
path): its log file sync is ASYNC's, its standby-side frames are not an ASYNC standby's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sgmon.sim.scenarios import HEALTHY, Conditions, Layout


@dataclass(frozen=True, slots=True)
class Change:
    """Conditions fields set on every phase, and the SYNC destination's AFFIRM (None: as is)."""

    name: str
    fields: tuple[tuple[str, float | bool], ...] = ()
    affirm: bool | None = None

    def conditions(self, c: Conditions) -> Conditions:
        """``c`` with the change made."""
        fields: dict[str, Any] = dict(self.fields)
        return replace(c, **fields) if fields else c

    def layout(self, lay: Layout) -> Layout:
        """``lay`` with the SYNC destination's AFFIRM changed (its first standby's)."""
        if self.affirm is None:
            return lay
        sync, *others = lay.standbys
        return replace(lay, standbys=(replace(sync, affirm=self.affirm), *others))


AS_IS = Change("as is")
NOAFFIRM = Change("noaffirm", affirm=False)
ASYNC = Change("async", (("transport_stopped", True),))
RTO_MIN_10 = Change("rto_min 10ms", (("rto_min_ms", 10.0),))


def standby_write(ms: float = HEALTHY.rfs_ms) -> Change:
    """Every SRL write of the SYNC standby at a median of ``ms``, with a healthy disk's spread
    (the IOPS cap and the post-switch spikes gone)."""
    return Change(
        f"standby write {ms:g} ms",
        (
            ("standby_cap", False),
            ("rfs_ms", ms),
            ("rfs_sigma", HEALTHY.rfs_sigma),
            ("switch_spike_ms", 0.0),
        ),
    )


def primary_write(ms: float) -> Change:
    """The primary's redo writes at a median of ``ms``, their spread unchanged."""
    return Change(f"primary write {ms:g} ms", (("local_ms", ms),))


def round_trip(ms: float) -> Change:
    """The network round trip to the standby at ``ms``."""
    return Change(f"round trip {ms:g} ms", (("rtt_ms", ms),))

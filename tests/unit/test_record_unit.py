"""The shipped systemd unit lets the recorder finish its own stop: a TimeoutStopSec shorter than
the recorder's bounded drain SIGKILLs it while it writes what the hosts sent (the unit said 15 s
while the drain may take 60)."""

from __future__ import annotations

from kits.record import unit_stop_timeout

from sgmon import monitor
from sgmon.hosts import kin


def test_the_unit_waits_longer_than_the_recorders_own_stop() -> None:
    # the drain, then an ssh end's graces
    assert unit_stop_timeout() > monitor.DRAIN_S + 2 * kin.GRACE

"""The shipped systemd unit lets the recorder finish its own stop: a TimeoutStopSec shorter than
the recorder's bounded drain SIGKILLs it while it writes what the hosts sent (the unit said 15 s
while the drain may take 60)."""

from __future__ import annotations

import re

from paths import REPO

from sgmon import monitor
from sgmon.hosts import kin

UNIT = REPO / "deploy" / "sgmon-record.service"


def test_the_unit_waits_longer_than_the_recorders_own_stop() -> None:
    text = UNIT.read_text()
    assert re.search(r"^KillSignal=SIGTERM$", text, re.M)
    [value] = re.findall(r"^TimeoutStopSec=(\d+)$", text, re.M)
    assert float(value) > monitor.DRAIN_S + 2 * kin.GRACE  # the drain, then an ssh end's graces

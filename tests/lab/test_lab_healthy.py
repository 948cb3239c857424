"""A healthy lab is quiet: a minute of it gives sgmon's analysis nothing above info."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_sixty_seconds_of_healthy_lab_give_no_finding_above_info(run):
    frames = run.collect(60)
    hosts = {f.host for f in frames}
    assert hosts == {"primary", "standby"}
    lfs = [f.value("oracle_waits", "log file sync", "waits") for f in frames if f.host == "primary"]
    assert sum(v or 0 for v in lfs) > 0, "the lab committed nothing"
    assert run.above_info() == []

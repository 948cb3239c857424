"""bench/analysis_cost.py states the analysis target as set: 2 primary instances and 3 standbys at
most 1.5 ms a tick, and at most 0.35 ms more for each host added up to 10, each line saying
whether it is met; the shapes it measures are what the lines say they are."""

from __future__ import annotations

import sys

import pytest
from paths import REPO

sys.path.insert(0, str(REPO / "bench"))
import analysis_cost


def test_target_lines_say_both_numbers_and_whether_met() -> None:
    met = analysis_cost.targets({n: 1.2 + 0.3 * (n - 5) for n in range(5, 11)})
    assert met[0] == "- 2 primary instances + 3 standbys: 1.200 ms/tick, target <= 1.5 ms: met"
    assert met[1].startswith("- growth from 5 to 10 hosts: 0.300 ms per added host")
    assert met[1].endswith("target <= 0.35 ms: met")
    missed = analysis_cost.targets({n: 1.6 + 0.4 * (n - 5) for n in range(5, 11)})
    assert all(line.endswith("NOT met") for line in missed), missed


@pytest.mark.slow
def test_the_shapes_are_five_hosts_then_up_to_ten() -> None:
    five = analysis_cost.five_hosts(2)
    ten = analysis_cost.more_hosts(five, 5, 2)
    assert len(five) == len(ten) == analysis_cost.WARM + 2
    assert [f.host for f in five[-1]] == ["node1", "node2", "standby", "standby_a", "standby_c"]
    assert len({f.host for f in ten[-1]}) == 10
    assert {f.time for f in ten[-1]} == {five[-1][0].time}  # one time axis

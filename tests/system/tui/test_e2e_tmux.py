"""End to end: `sgmon demo --scenario rto-stall` in a real tmux, read the way a person reads it.

A private tmux server (``-L``) at 160x48 runs the real command; the test sends keys and checks
the captured pane: both host panes, the scenario's finding, pause, and one cursor for both panes.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from collections.abc import Iterator

import pytest
from tmuxkit import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PANE_TIME = re.compile(r"at (\d\d:\d\d:\d\d)")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    t = Tmux()
    try:
        yield t
    finally:
        t.kill()


def pane_times(screen: str) -> list[str]:
    """The instant each host pane says it shows (its border's subtitle)."""
    return PANE_TIME.findall(screen)


def test_demo_rto_stall_as_a_person_sees_it(tmux: Tmux) -> None:
    # 5x speed and an onset 15 simulated seconds in: the stall starts ~3 s after launch.
    tmux.start(f"{sys.executable} -m sgmon demo --scenario rto-stall --speed 5 --onset 15s")
    screen = tmux.settled(
        lambda s: "PRIMARY" in s and "STANDBY" in s and "log file sync" in s, "both panes"
    )
    assert "WAIT EVENTS" in screen and "DG SOCKETS" in screen
    # the finding's title, wrapped in the findings panel: CRIT, the cause, then the fix (it
    # opens once the stall has held, as a warning, and rises to CRIT as it goes on)
    screen = tmux.wait_for(
        lambda s: (
            "rto_min" in s
            and any("CRIT" in line and "retransmi" in line for line in s.splitlines())
        ),
        "the rto-stall finding at CRIT",
        timeout=60,
    )
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if "CRIT" in line and "retransmi" in line)
    assert any("rto_min" in line for line in lines[start : start + 3])

    tmux.keys("p")
    screen = tmux.settled(lambda s: "PAUSED" in s, "pause")
    held = pane_times(screen)
    assert len(held) == 2 and held[0] == held[1]
    time.sleep(1.5)  # frames keep coming; the view must not move
    assert pane_times(tmux.screen()) == held

    tmux.keys("Left")
    screen = tmux.settled(
        lambda s: "PAUSED" in s and pane_times(s) != held, "the cursor to move back"
    )
    moved = pane_times(screen)
    assert len(moved) == 2 and moved[0] == moved[1]  # both panes at the same instant
    back = time.strptime(moved[0], "%H:%M:%S")
    then = time.strptime(held[0], "%H:%M:%S")
    assert (time.mktime(then) - time.mktime(back)) % 86400 == 1  # one interval earlier

    tmux.keys("End")
    tmux.wait_for(lambda s: "LIVE" in s, "back to live")
    tmux.keys("q")
    tmux.wait_for(lambda s: "PRIMARY" not in s, "the dashboard to quit", timeout=10)

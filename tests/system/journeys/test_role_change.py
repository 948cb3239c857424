"""Journey: a role change watched live, in a real terminal.

A DBA has the dashboard open when the primary fails (or is switched over). At every moment the
screen names one primary: the header, and the pane titles; once the old primary is the former
one, the header and its pane say so, and the findings say who is the primary now.  The screen
is read as tmux shows it, at the smallest size sgmon supports and at a roomy one.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
from tmuxkit import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SPEED = 4
"""Simulated seconds per real second: the role change (at 5 s, plus 12 or 20 s) within ~10 s."""
WATCH_S = 16.0
"""Real seconds the screen is read: past the role change and a few ticks of the new roles."""
PRIMARY = re.compile(r"(?<!former )\bprimary (site_\w+)")


def _header(screen: str) -> str:
    """The header line (the first), as the terminal shows it."""
    return screen.splitlines()[0] if screen else ""


def _titles(screen: str) -> list[str]:
    """The pane titles on the screen: the words after a box's top-left corner."""
    return re.findall(r"╭─ ([A-Z][A-Z ]+?)  ", screen)


@pytest.mark.parametrize(("scenario", "size"), [("failover", (120, 40)), ("switchover", (80, 24))])
def test_one_primary_on_screen_at_every_moment(
    scenario: str, size: tuple[int, int], tmp_path: Path
) -> None:
    t = Tmux(f"role{size[0]}")
    cmd = (
        f"{shlex.quote(sys.executable)} -m sgmon demo --scenario {scenario} --speed {SPEED} "
        "--onset 5s"
    )
    t.start(f"cd {shlex.quote(str(tmp_path))} && {cmd}; echo EXITED $?; sleep 600", *size)
    screens: list[str] = []
    try:
        t.wait_for(lambda s: "FINDINGS" in s, "the first frames", 60)
        end = time.monotonic() + WATCH_S
        while time.monotonic() < end:
            screens.append(t.screen())
            time.sleep(0.4)
        last = t.screen()
    finally:
        t.kill()
    assert len(screens) >= 20, len(screens)
    for screen in screens:
        header = _header(screen)
        assert len(set(PRIMARY.findall(header))) <= 1, header
        assert sum(title.strip() == "PRIMARY" for title in _titles(screen)) <= 1, screen
        assert "Traceback" not in screen, screen
    named = [set(PRIMARY.findall(_header(s))) for s in screens]
    assert {"site_a"} in named and {"site_b"} in named, named  # the role did change on screen
    if scenario == "failover":
        assert "former primary site_a" in _header(last), last
        assert "site_b is the primary now" in " ".join(last.split()), last

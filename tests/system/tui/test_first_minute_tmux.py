"""The first minute at 80x24 in a real terminal: the help is read to its end with the scroll
keys (a letter no longer closes it), and Ctrl+C quits (Textual only said how to quit)."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tmuxkit import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

LAST_HELP_LINE = "without a pane: place"
"""The colour legend's last line: off the screen at 80x24 until the help is scrolled."""


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Tmux]:
    """The rto-stall demo at 80x24; the shell says how it ended."""
    t = Tmux("firstmin")
    cmd = f"{shlex.quote(sys.executable)} -m sgmon demo --speed 2 --onset 5s"
    t.start(f"cd {shlex.quote(str(tmp_path))} && {cmd}; echo EXITED $?; sleep 600", 80, 24)
    try:
        t.wait_for(lambda s: "FINDINGS" in s, "the first frames", 60)
        yield t
    finally:
        t.kill()


def test_the_help_scrolls_to_its_end_and_closes_on_its_own_keys(small: Tmux) -> None:
    small.keys("?")
    top = small.wait_for(lambda s: "sgmon keys" in s, "the help")
    assert LAST_HELP_LINE not in top
    small.keys("End")
    small.wait_for(lambda s: LAST_HELP_LINE in s, "the help's last line")
    small.keys("x")  # not a key of the help: it stays
    small.keys("Home")
    small.wait_for(lambda s: "sgmon keys" in s and LAST_HELP_LINE not in s, "the help's top")
    small.keys("Escape")
    small.wait_for(lambda s: "sgmon keys" not in s and "FINDINGS" in s, "the dashboard")


def test_ctrl_c_quits(small: Tmux) -> None:
    small.keys("C-c")
    small.wait_for(lambda s: "EXITED 0" in s, "sgmon to quit")

"""The dashboard does not crash on keys: 500 seeded random keys 12 ms apart in a real tmux, after
the sequences that crashed it (Ctrl+P then PageDown 10 ms later, in Textual's command palette or
in the theme picker it opens: KeyError; keys typed ahead while the help or the palette closes:
ScreenStackError, NoMatches), and no traceback."""

from __future__ import annotations

import random
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
from tmuxkit import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

KEYS = (
    list("abcdefghijklmnoprstuvwxyzABCDEFGHIJKLMNOPRSTUVWXYZ0123456789")
    + list("?/[]+-=.,:;!@#$%^&*()_{}|<>'`~\\")
    + ["Space", "Enter", "Escape", "Tab", "BTab", "Up", "Down", "Left", "Right", "NPage",
       "PPage", "Home", "End", "BSpace", "DC", "IC", "F1", "F2", "C-p"]
)  # fmt: skip
"""Every key a person may hit, but the ones that quit (q, Ctrl+C, Ctrl+Q)."""

CRASHED = (
    ["C-p", "NPage"],  # the palette's list is not laid out yet
    ["C-p", "PPage"],
    ["?", "x", "y", "z"],  # keys queued while the help closes
    ["?", "C-p", "x", "Escape"],  # the palette above the help
    ["?", "?", "?", "Escape"],
    ["C-p", "t", "h", "Enter", "x", "Enter"],  # its search still running as it closes
    ["C-p", "k", "Escape", "Escape", "C-p", "Enter", "Enter"],
    ["C-p", *"Theme", "Enter", "NPage"],  # the theme picker it opens: KeyError: 1
)


def _send(t: Tmux, key: str) -> None:
    t.run("send-keys", "-t", t.session, *(["-l", key] if len(key) == 1 else [key]))


def test_random_keys_give_no_traceback(tmp_path: Path) -> None:
    rng = random.Random(31)
    t = Tmux("keys31")
    cmd = f"{shlex.quote(sys.executable)} -m sgmon demo --speed 2 --onset 5s"
    t.start(f"cd {shlex.quote(str(tmp_path))} && {cmd}; echo EXITED $?; sleep 600", 160, 48)
    try:
        t.wait_for(lambda s: "busiest" in s, "the first frames", 60)
        sequence = [k for seq in CRASHED for k in [*seq, "Escape", "Escape"]]
        sequence += [rng.choice(KEYS) for _ in range(500)]
        for key in sequence:
            _send(t, key)
            time.sleep(0.012)
        time.sleep(2)
        for _ in range(4):
            _send(t, "Escape")
        time.sleep(1)
        screen = t.run("capture-pane", "-p", "-t", t.session, "-S", "-2000")
        assert "Traceback" not in screen and "Error" not in screen, screen
        assert "EXITED" not in screen, screen  # still running: no quit key was sent
    finally:
        t.kill()

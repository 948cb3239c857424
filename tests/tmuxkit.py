"""A private tmux server (``-L``) running a real sgmon command, read the way a person reads it."""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Callable

import pytest

_SERVERS = itertools.count()


class Tmux:
    """One private tmux server with one session."""

    def __init__(self, name: str = "e2e") -> None:
        # a socket of its own per server: a test's new server must not meet the previous
        # test's server still exiting on the same socket ("server exited unexpectedly")
        self.socket = f"sgmon-{name}-{os.getpid()}-{next(_SERVERS)}"
        self.session = "demo"

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return out.stdout

    def start(self, command: str, width: int = 160, height: int = 48) -> None:
        env = {**os.environ, "TERM": "xterm-256color", "TZ": "UTC"}
        subprocess.run(
            ["tmux", "-L", self.socket, "new-session", "-d", "-s", self.session,
             "-x", str(width), "-y", str(height), command],
            check=True, env=env, timeout=10,
        )  # fmt: skip

    def resize(self, width: int, height: int) -> None:
        """Resize the window, as a person dragging the terminal's corner does."""
        self.run("resize-window", "-t", self.session, "-x", str(width), "-y", str(height))

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, check: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """Poll the screen until ``check`` holds; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.2)
        pytest.fail(f"waited {timeout:.0f}s for {what}; the screen was:\n{screen}")

    def settled(self, check: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        """``wait_for(check)``, then until two screens 0.2 s apart are the same: a pane renders
        its panels one message at a time, so the first paused screen may hold some panels of
        the instant before."""
        screen = self.wait_for(check, what, timeout)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            time.sleep(0.2)
            again = self.screen()
            if again == screen and check(again):
                return again
            screen = again
        return self.wait_for(check, what, timeout)

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)

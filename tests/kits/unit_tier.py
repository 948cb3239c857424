"""The unit tier's guard (tests/unit/conftest.py applies it to every unit test; test_tier.py
proves it): what an in-process test may not do, and the message that says where it belongs.

A test that starts a process, sleeps, runs the engine on the wall clock (``Engine.run`` starts a
ticker and a watchdog thread that wait for interval boundaries: tick it with ``Engine.tick(t)``
at chosen times instead) or starts a ``threading.Timer`` fails at once, naming what it did.  One
that leaves a thread of its own running fails when it ends: a thread that outlives its test
works on in the next ones (an engine not closed keeps its collector thread), so the tests would
depend on their order, and one that is no daemon holds up the interpreter's exit.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Any

import pytest

from sgmon.engine import Engine

MOVE = "move the test to tests/system/"

LEFT_GRACE_S = 2.0
"""How long the threads a test started may take, all together, to end after it did (a thread
told to stop as the test ended is not a leak)."""


class NotAUnitTest(AssertionError):
    """Raised by what the unit tier forbids."""


def _forbid(what: str, instead: str = "") -> Any:
    def refuse(*args: object, **kwargs: object) -> None:
        raise NotAUnitTest(f"{what} in a unit test: {instead}{MOVE}")

    return refuse


def forbid_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make processes, sleeps, wall-clock engine runs and timers raise for this test."""
    sleep = time.sleep

    def no_sleep(seconds: float) -> None:
        if seconds > 0:
            raise NotAUnitTest(f"time.sleep({seconds}) in a unit test: {MOVE}")
        sleep(seconds)

    monkeypatch.setattr(subprocess.Popen, "__init__", _forbid("a subprocess"))
    monkeypatch.setattr(os, "fork", _forbid("os.fork"))
    monkeypatch.setattr(os, "posix_spawn", _forbid("os.posix_spawn"))
    monkeypatch.setattr(os, "posix_spawnp", _forbid("os.posix_spawnp"))
    monkeypatch.setattr(time, "sleep", no_sleep)
    monkeypatch.setattr(
        Engine,
        "run",
        _forbid(
            "a wall-clock engine run (Engine.run's ticker and watchdog threads)",
            "tick the engine with Engine.tick(t) at chosen times, or ",
        ),
    )
    monkeypatch.setattr(threading.Timer, "start", _forbid("a threading.Timer"))


def refuse_left_threads(before: set[threading.Thread], grace: float = LEFT_GRACE_S) -> None:
    """Fail the test when a thread started since ``before`` still runs ``grace`` seconds on."""
    left = [t for t in threading.enumerate() if t not in before]
    end = time.monotonic() + grace
    for t in left:
        t.join(max(0.0, end - time.monotonic()))
    running = [f"{t.name}{' (daemon)' if t.daemon else ''}" for t in left if t.is_alive()]
    if running:
        pytest.fail(
            f"the test left {len(running)} thread(s) running: {', '.join(running)}; close or "
            f"join what it started (an engine: Engine.close), or {MOVE}",
            pytrace=False,
        )

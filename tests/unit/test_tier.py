"""The unit tier's own guard (tests/unit/conftest.py, tests/kits/unit_tier.py) can fail a test."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from kits.core_engine import Counter
from kits.unit_tier import refuse_left_threads

from sgmon.engine import Engine
from sgmon.hosts.local import LocalSource

REFUSED = r"in a unit test: .*move the test to tests/system/"


@pytest.mark.parametrize(
    "attempt",
    [
        lambda: subprocess.run(["true"]),
        lambda: time.sleep(0.01),
        lambda: threading.Timer(0.01, print).start(),
    ],
    ids=["process", "sleep", "timer"],
)
def test_the_unit_tier_refuses_processes_sleep_and_timers(attempt) -> None:
    with pytest.raises(AssertionError, match=REFUSED):
        attempt()


def test_the_unit_tier_refuses_a_wall_clock_engine_run() -> None:
    """Engine.run, directly or through a source that runs one, is refused before it starts a
    thread; Engine.tick at a chosen time is what a unit test does instead."""
    engine = Engine([Counter()], 0.1)
    local = LocalSource([Counter()], 0.1, duration=0.3)
    try:
        with pytest.raises(AssertionError, match=r"wall-clock engine run .*Engine\.tick"):
            engine.run(print, threading.Event(), 0.3)
        with pytest.raises(AssertionError, match=r"wall-clock engine run"):
            local.run(print, threading.Event())
        assert engine.tick(1000.0).time == 1000.0
    finally:
        engine.close()
        local.close()


def test_a_thread_left_running_fails_the_test_naming_it() -> None:
    before = set(threading.enumerate())
    release = threading.Event()
    left = threading.Thread(target=release.wait, name="left-behind", daemon=True)
    left.start()
    try:
        with pytest.raises(pytest.fail.Exception, match=r"left 1 thread.*left-behind \(daemon\)"):
            refuse_left_threads(before, grace=0.05)
    finally:
        release.set()
        left.join()


def test_an_unclosed_engine_is_a_thread_left_running() -> None:
    before = set(threading.enumerate())
    engine = Engine([Counter()], 1.0)
    try:
        with pytest.raises(pytest.fail.Exception, match=r"sgmon-collect .*Engine\.close"):
            refuse_left_threads(before, grace=0.05)
    finally:
        engine.close()
    refuse_left_threads(before)  # closed, its thread ends: nothing is left


def test_a_thread_that_ends_within_the_grace_is_not_left() -> None:
    before = set(threading.enumerate())
    release = threading.Event()
    ending = threading.Thread(target=release.wait, name="ending")
    ending.start()
    release.set()  # told to stop as the test ends: it is gone within the grace
    refuse_left_threads(before)
    assert not ending.is_alive()

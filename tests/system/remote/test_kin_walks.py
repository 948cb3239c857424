"""Hundreds of ssh sessions ending at once (a recording's stop) share walks of /proc, and each
finds what was there when it asked; the other hosts' ssh commands are never read as orphans.
Each session walking /proc on its own, and reading every other session's environment, made a
300-host stop take 29 s of the interpreter, past the shipped unit's TimeoutStopSec, and on a
slower machine dropped frames the recorder had received."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from sgmon.hosts import kin

CALLERS = 40


def test_callers_at_once_share_walks_each_begun_after_it_asked(monkeypatch) -> None:
    begun: list[float] = []

    def slow_walk() -> dict[int, list[kin.Kin]]:
        begun.append(time.monotonic())
        time.sleep(0.05)
        return {len(begun): []}  # which walk this was

    monkeypatch.setattr(kin, "_walk", slow_walk)
    walks = kin._Walks()
    asked: dict[int, float] = {}
    got: dict[int, int] = {}

    def call(i: int) -> None:
        asked[i] = time.monotonic()
        [got[i]] = walks.children()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(CALLERS)]
    for i, t in enumerate(threads):
        t.start()
        if i % 8 == 7:
            time.sleep(0.02)  # in waves, some arriving while a walk runs
    for t in threads:
        t.join(10)
    assert len(got) == CALLERS
    assert len(begun) < CALLERS / 4, len(begun)
    for i, walk in got.items():
        assert begun[walk - 1] >= asked[i], f"caller {i} got walk {walk}, begun before it asked"


def test_a_walk_that_fails_fails_its_caller_alone(monkeypatch) -> None:
    calls = iter([OSError("proc gone"), {1: []}])

    def walk() -> dict[int, list[kin.Kin]]:
        out = next(calls)
        if isinstance(out, Exception):
            raise out
        return out

    monkeypatch.setattr(kin, "_walk", walk)
    walks = kin._Walks()
    try:
        walks.children()
        raise AssertionError("the failed walk was not raised")
    except OSError:
        pass
    assert walks.children() == {1: []}  # the next caller walks again, nothing stuck


def test_another_sessions_command_is_not_its_orphan() -> None:
    """Both are children of this process; only a process that came to it by its parent ending
    is an orphan, and the commands are known from their start."""
    sleep = [sys.executable, "-c", "import time; time.sleep(30)"]
    ours = kin.start_command(sleep, "a")
    theirs = kin.start_command(sleep, "b")
    stray = subprocess.Popen(sleep, env={kin.MARK: "a"})  # marked, not started as a command
    try:
        children = kin._walk()
        found = [pid for pid, _ in kin.orphans("a", children)]
        assert stray.pid in found
        assert ours.pid not in found and theirs.pid not in found
    finally:
        for p in (ours, theirs, stray):
            p.kill()
            p.wait()
        kin.end_command(ours, [])
        kin.end_command(theirs, [])
    assert ours.pid not in kin._commands and theirs.pid not in kin._commands

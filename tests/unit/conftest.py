"""The unit tier: in-process tests only, so that it stays the fast loop a contributor runs while
working (`python -m pytest tests/unit -q`).

A test here that starts a process or sleeps fails at once, naming what it did: such a test
belongs in tests/system/.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest


class NotAUnitTest(AssertionError):
    """Raised by what the unit tier forbids."""


def _forbid(what: str) -> Any:
    def refuse(*args: object, **kwargs: object) -> None:
        raise NotAUnitTest(f"{what} in a unit test: move the test to tests/system/")

    return refuse


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    sleep = time.sleep

    def no_sleep(seconds: float) -> None:
        if seconds > 0:
            raise NotAUnitTest(f"time.sleep({seconds}) in a unit test: move it to tests/system/")
        sleep(seconds)

    monkeypatch.setattr(subprocess.Popen, "__init__", _forbid("a subprocess"))
    monkeypatch.setattr(os, "fork", _forbid("os.fork"))
    monkeypatch.setattr(os, "posix_spawn", _forbid("os.posix_spawn"))
    monkeypatch.setattr(os, "posix_spawnp", _forbid("os.posix_spawnp"))
    monkeypatch.setattr(time, "sleep", no_sleep)
    yield

"""The unit tier: in-process tests only, so that it stays the fast loop a contributor runs while
working (`python -m pytest tests/unit -q`).

A test here that starts a process, sleeps, runs the engine on the wall clock or starts a timer
fails at once, naming what it did; one that leaves a thread running fails when it ends
(tests/kits/unit_tier.py says why).  Such a test belongs in tests/system/.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from kits.unit_tier import forbid_waiting, refuse_left_threads


@pytest.fixture(autouse=True)
def _in_process_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    forbid_waiting(monkeypatch)
    before = set(threading.enumerate())
    yield
    refuse_left_threads(before)

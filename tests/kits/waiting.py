"""Waiting for what a running sgmon writes, bounded in time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(cond: Callable[[], object], seconds: float = 30.0) -> bool:
    """Whether ``cond()`` came true within ``seconds`` (looked at ten times a second)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return bool(cond())

"""The dashboard tests' environment, unit and system alike: a UTC clock and no user themes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def fixed_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Clock times in UTC, and no user themes from the tester's ~/.config."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()

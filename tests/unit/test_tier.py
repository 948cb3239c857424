"""The unit tier's own guard (tests/unit/conftest.py) can fail a test."""

from __future__ import annotations

import subprocess
import time

import pytest


@pytest.mark.parametrize(
    "attempt",
    [lambda: subprocess.run(["true"]), lambda: time.sleep(0.01)],
    ids=["process", "sleep"],
)
def test_the_unit_tier_refuses_processes_and_sleep(attempt) -> None:
    with pytest.raises(AssertionError, match=r"in a unit test: move .* tests/system/"):
        attempt()

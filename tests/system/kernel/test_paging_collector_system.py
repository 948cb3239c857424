"""The paging collector's parsers: which vmstat line makes which field; None for the absent."""

from __future__ import annotations

import time

import pytest

from sgmon.readers.procfile import ProcFile


def test_proc_file_reads_whole_and_fresh() -> None:
    """A seq_file longer than a page (/proc/zoneinfo, one record per zone) comes back whole,
    every read starts again from the top with current values, and a closed file says so."""
    zones = ProcFile("/proc/zoneinfo")
    try:
        for _ in range(3):
            text = zones.read()
            with open("/proc/zoneinfo") as f:
                expected = f.read()
            assert len(text) > 4096
            assert _shape(text) == _shape(expected)
    finally:
        zones.close()
    uptime = ProcFile("/proc/uptime")
    first = float(uptime.read().split()[0])
    time.sleep(0.05)
    assert float(uptime.read().split()[0]) > first
    uptime.close()
    uptime.close()
    with pytest.raises(ValueError, match="closed"):
        uptime.read()


def _shape(text: str) -> tuple[list[str], str]:
    """The zone headers and the last line's key: the same however the values moved."""
    lines = text.splitlines()
    return [line for line in lines if line.startswith("Node")], lines[-1].split()[0]

"""The dashboard titles an episode by its worst moment, as ``check`` and the report do: while a
finding is active its latest assertion may be milder (a cell's four-minute episode ending with
only sda mildly queued), and the list said "sda ... %util 7.88" where sdc had been at 100 %."""

from __future__ import annotations

import time

from sgmon.analysis.findings import FindingBook
from sgmon.tui.palette import Palette
from sgmon.tui.panels.findings import render_finding
from sgmon.verdicts import Finding
from themes import load_themes

T0 = 1_800_000_000.0
PEAK = "standby disk sdc await 513 ms, %util 100 (s): standby I/O saturated"
NOW = "standby disk sda await 20 ms, %util 7.88 (s): standby I/O saturated"


def _asserted(t: float, title: str, badness: float) -> Finding:
    f = Finding("standby_io:s:io", "warn", "s", title, ["now: sda"], [], "standby_io", "003", t)
    f.moment = (0.0, 1.0, badness)
    return f


def test_an_active_episode_is_titled_by_its_peak_with_when_and_how_long() -> None:
    book = FindingBook()
    book.update(T0, [_asserted(T0, PEAK, 40.0)])
    for t in range(1, 241):
        book.update(T0 + t, [_asserted(T0 + t, PEAK if t < 180 else NOW, 40.0 if t < 180 else 2.0)])
    (f,) = book.findings()
    assert f.active and f.title == NOW  # what the panes show now
    spec = load_themes()["sgmon-dark"]
    text = render_finding(f, Palette.from_variables("sgmon-dark", spec["variables"])).plain
    first = text.splitlines()[0]
    peak = time.strftime("%H:%M:%S", time.localtime(f.peak_at or 0))
    assert first.startswith(f"WARN s: {PEAK}  (peak {peak} of 4 min)")
    assert "sda" not in first

"""Deterministic dashboards for the Pilot and snapshot tests: the simulated pair at a fixed time.

The simulator is stepped in the test, not on a thread, and the frames go through the app's own
ingest path (history, analysis, redraw), so every run draws the same screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot

from sgmon.sim import SimPair
from sgmon.tui.app import SgmonApp

START = 1763712000.0  # 2025-11-21 08:00:00 UTC
TICKS = 100
ONSET = 40.0


def feed(app: SgmonApp, pair: SimPair, ticks: int) -> None:
    """Step the pair ``ticks`` times into the app (every host of the scenario's layout)."""
    for _ in range(ticks):
        for frame in pair.step():
            app.ingest(frame, pair.schema(frame.host))


def make_app(scenario: str = "rto-stall") -> tuple[SgmonApp, SimPair]:
    """An app with no sources (the test feeds the frames) and no self-measurement.  No host
    goes stale on the wall clock: the test feeds frames at its own pace, and a loaded machine
    (a parallel test run) must not make a host STALE between two of them; a test of staleness
    sets its own ``stale_after``."""
    app = SgmonApp([], measure_self=False)
    app.timeline.stale_after = lambda: float("inf")  # type: ignore[method-assign]
    return app, SimPair(scenario, seed=1, start=START, onset=ONSET)


async def until(pilot: Pilot, cond: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until ``cond()`` holds: a loaded machine redraws later than a quiet one."""
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause(0.05)
        if cond():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout:g}s: {cond}")


def drawn(app: SgmonApp) -> bool:
    """Every panel of every pane that shows a host shows the instant under the cursor (live: the
    newest); a pane the terminal has no room for shows none."""
    from sgmon.tui.pane import HostPane
    from sgmon.tui.panels.base import Panel

    want = app.cursor_time
    panes = [p for p in app.query(HostPane) if not p.has_class("-empty")]
    return bool(panes) and all(
        {p.view.frame.time for p in pane.query(Panel) if p.view and p.view.frame} == {want}
        for pane in panes
    )

"""Deterministic dashboards for the Pilot and snapshot tests: the simulated pair at a fixed time.

The simulator is stepped in the test, not on a thread, and the frames go through the app's own
ingest path (history, analysis, redraw), so every run draws the same screen.
"""

from __future__ import annotations

from sgmon.sim import SimPair
from sgmon.tui.app import SgmonApp

START = 1763712000.0  # 2025-11-21 08:00:00 UTC
TICKS = 100
ONSET = 40.0


def feed(app: SgmonApp, pair: SimPair, ticks: int) -> None:
    """Step the pair ``ticks`` times into the app."""
    for _ in range(ticks):
        primary, standby = pair.step()
        app.ingest(primary, pair.schema("primary"))
        app.ingest(standby, pair.schema("standby"))


def make_app(scenario: str = "rto-stall") -> tuple[SgmonApp, SimPair]:
    """An app with no sources (the test feeds the frames) and no self-measurement."""
    return SgmonApp([], measure_self=False), SimPair(scenario, seed=1, start=START, onset=ONSET)

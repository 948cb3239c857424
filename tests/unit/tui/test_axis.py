"""The dashboard's one time axis holds one instant per tick of the hosts, though each remote
host stamps it a fraction of a millisecond apart (its far side's clock placed on this
machine's by a measured offset): on an axis of every stamp each pane had a frame at every other
instant, its sparklines blank in every other column, and the header counted every other instant
as a redraw skipped (seen on two pumped hosts: 1796002099.0001922 and .0002532)."""

from __future__ import annotations

import themes
from sgmon.config import Config
from sgmon.hosts import HostInfo
from sgmon.judgement import Judge
from sgmon.model import Frame
from sgmon.monitor import Monitor
from sgmon.tui.feed import Feed
from sgmon.tui.palette import Palette
from sgmon.tui.timeline import Timeline, instants

START = 1_796_002_099.0
TICKS = 30
PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])
STAMPS = {"prim1": 0.0001922, "stby1": 0.0002532}
"""Each host's stamp past the second, as two pumped hosts stamped it."""


def _timeline(stamps: dict[str, float]) -> Timeline:
    mon = Monitor([], history=100, judge=Judge(schema_of=lambda h: {}, live=False))
    for k in range(TICKS):
        for host, late in stamps.items():
            mon.history.add(Frame(host, START + k + late, k, 1.0, {}))
    return Timeline(mon, Feed(mon.history, mon.judge), Config())


def test_the_hosts_frames_of_one_tick_are_one_instant_with_a_frame_of_each() -> None:
    tl = _timeline(STAMPS)
    axis = tl.axis()
    assert len(axis) == TICKS
    for host in STAMPS:
        view = tl.pane_view(HostInfo(host, ""), axis[-1], axis, None, PALETTE, live=False)
        assert all(f is not None for f in view.window), host
        assert [f.seq for f in view.window if f] == list(range(TICKS))
        assert view.frame is not None and view.frame.seq == TICKS - 1


def test_hosts_half_a_tick_apart_stay_two_instants() -> None:
    """Frames that are not of one tick are not merged: each keeps its own instant."""
    assert len(_timeline({"a": 0.0, "b": 0.5}).axis()) == 2 * TICKS


def test_instants_merge_a_run_into_its_newest() -> None:
    assert instants([1.0, 1.1, 1.2, 2.0, 2.05, 3.0], 0.25) == [1.2, 2.05, 3.0]
    assert instants([1.0, 1.2, 1.4], 0.25) == [1.2, 1.4]  # a run ends within its begin's reach

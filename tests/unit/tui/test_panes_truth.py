"""Each pane shows its own host's truth: a standby draws no primary's commit budget, a primary
lists no RFS rows after a switchover, a far sync instance is titled so, the budget's largest
part is labelled for what it is, and the legend never cuts a number."""

from __future__ import annotations

import re

from rich.style import Style

import themes
from sgmon.config import Config
from sgmon.fields import ORACLE_DG
from sgmon.hosts import HostInfo
from sgmon.judgement import Judge
from sgmon.monitor import Monitor
from sgmon.sim import SimPair
from sgmon.tui.feed import Feed
from sgmon.tui.palette import Palette
from sgmon.tui.panels.budget import legs, render_budget
from sgmon.tui.panels.waits import events
from sgmon.tui.timeline import Timeline
from sgmon.tui.view import PaneView
from sgmon.verdicts import Budget

START = 1_800_000_000.0
PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])


def _timeline(scenario: str, seconds: float, onset: float = 10.0) -> tuple[Timeline, Feed]:
    """The dashboard's timeline fed the simulated pair, as the Monitor feeds it."""
    pair = SimPair(scenario, seed=3, start=START, onset=onset)
    judge = Judge(schema_of=pair.schema, live=False)
    mon = Monitor([], history=400, judge=judge)
    feed = Feed(mon.history, judge)
    try:
        while pair.t < seconds:
            for f in pair.step():
                feed.add(f, judge(f), in_history=False)
    finally:
        pair.close()
    return Timeline(mon, feed, Config()), feed


def _views(timeline: Timeline, feed: Feed) -> dict[str, PaneView]:
    out = {}
    for h in timeline.hosts():
        latest = timeline.history.latest(h.name)
        assert latest is not None
        out[h.name] = timeline.pane_view(
            h, latest.time, [], feed.state_at(latest.time), PALETTE, live=False
        )
    return out


def _lines(renderable) -> list[str]:
    return [t.plain for t in renderable.renderables]


def test_after_a_switchover_each_pane_draws_its_own_side() -> None:
    """site_a was the primary, site_b is now: the new standby draws no commit budget of a
    primary and no log file sync rows; the new primary no RFS rows."""
    timeline, feed = _timeline("switchover", 50)
    views = _views(timeline, feed)
    new_primary, new_standby = views["site_b"], views["site_a"]
    assert (new_primary.role, new_standby.role) == ("primary", "standby")
    shown = _lines(render_budget(new_standby, 100))
    assert shown[1].strip() == "measured on the primary", shown
    assert not [e for e in events(new_primary) if e.startswith("RFS")], events(new_primary)
    rows = new_standby.rows("oracle_waits")
    idle = [e for e in events(new_standby) if not e.startswith("RFS ") and not rows[e]["waits"]]
    assert not idle, idle  # log file sync, Redo Writer Remote Sync... of its primary days
    assert "log file sync" in events(new_primary)


def test_a_far_sync_instance_is_titled_far_sync() -> None:
    timeline, feed = _timeline("far-sync-slow", 15)
    views = _views(timeline, feed)
    assert views["farsync"].kind == "far sync" and views["standby"].kind == ""
    states = {s.name: s.role for s in timeline.host_states(timeline.hosts())}
    assert states["farsync"] == "far sync" and states["standby"] == "standby"


def test_an_unsplit_remote_write_is_labelled_remote_write() -> None:
    """transport-stopped: no standby waits split the remote write; its part is the remote
    write, not "remote other"."""
    b = Budget("p", START, 0.62, 0.45, 0.45, None, None, 0.0, 0.16, "local")
    assert next(label for label, _, _ in legs(b)) == "remote write"
    split = Budget("p", START, 10.0, 0.5, 8.0, 1.0, 6.0, 2.0)
    assert "remote other" in [label for label, _, _ in legs(split)]


def test_the_budget_legend_never_cuts_a_number() -> None:
    """primary-cpu-starved's overhead, the cause, was drawn ``overhead 3.`` or without its
    number: at every width each part's number is whole on one line."""
    b = Budget("p", START, 12.345, 0.456, 1.234, 0.789, 0.445, 3.125, 7.5, "standby")
    view = PaneView("p", "primary", PALETTE, None, budget=b)
    for width in range(36, 221, 7):  # a pane of an 80-column terminal is 38 wide
        lines = _lines(render_budget(view, width))
        legend = [ln for ln in lines if "■" in ln]
        assert all(len(ln) <= width for ln in legend), (width, legend)
        parts = [p.strip() for ln in legend for p in ln.split("■") if p.strip()]
        assert parts == [f"{label} {n}" for label, n in _expected(b)], (width, parts)


def _expected(b: Budget) -> list[tuple[str, str]]:
    from sgmon.units import fmt_num

    return [(label, fmt_num(ms)) for label, _, ms in legs(b)]


def test_the_dead_primarys_border_says_stale_since_when() -> None:
    from sgmon.tui.panels.header import clock

    timeline, feed = _timeline("failover", 20)
    view = _views(timeline, feed)["site_a"]
    assert view.stale_since is not None
    assert re.fullmatch(r"\d\d:\d\d:\d\d", clock(view.stale_since))
    assert HostInfo("site_a", "primary") in timeline.hosts()


def test_transport_stopped_the_standby_disk_writes_nothing_and_commits_are_local() -> None:
    """No redo arrives: the standby's redo disk shows no writes (it showed the primary's 868
    writes/s at 0 %util), and the primary's budget has no remote write part (the largest was
    an unsplit "remote other" of 0.45 ms, Table 7's formula reading the local write)."""
    from sgmon.analysis.budget import commit_budget

    pair = SimPair("transport-stopped", seed=3, start=START, onset=10.0)
    try:
        while pair.t < 25:
            frames = {f.host: f for f in pair.step()}
    finally:
        pair.close()
    assert frames["standby"].rows("disk")["sdb"]["w_s"] == 0.0
    assert frames["primary"].rows("disk")["sdb"]["w_s"] > 100
    b = commit_budget(frames["primary"], frames["standby"])
    assert b is not None and b.remote_write_ms is None
    assert next(label for label, _, _ in legs(b)) == "local write"


def test_cited_panels_get_lines_first_and_no_row_is_blank_while_one_is_folded() -> None:
    from sgmon.tui.pane import allot, citing_panel
    from sgmon.tui.panels.waits import WaitsPanel

    # the cited log file sync row is in the events table, not the budget drawn from it
    assert citing_panel("oracle_waits", "p99") is WaitsPanel
    # two cited panels (0: processes, 10 lines; 2: waits, 9): both show, not the first alone
    assert allot([10, 4, 9, 7], [0, 2, 1, 3], 13, cited=2) == [9, 0, 3, 0]
    for sizes in ([4, 8, 7, 13, 6], [10, 4, 9, 7], [2, 5, 5, 5], [6, 6, 6, 6, 6]):
        for height in range(4, sum(sizes)):
            given = allot(sizes, range(len(sizes)), height)
            assert all(g == 0 or g >= min(3, n) for g, n in zip(given, sizes, strict=True))
            assert sum(given) <= height - 1
            donors = sum(max(0, g - 3) for g in given)
            blank = height - 1 - sum(given)
            if blank and 0 in given:  # only when no panel can give what a folded one lacks
                need = min(3, sizes[given.index(0)])
                assert need - blank > donors, (sizes, height, given)


def test_an_async_standbys_lag_is_no_worse_than_its_finding() -> None:
    """async-iops-cap: standby_a falls behind, a lag risk (warn); its strip entry drew the
    lag crit beside that warning."""
    from sgmon.tui.strip import entry, place

    timeline, feed = _timeline("async-iops-cap", 60)
    host = next(h for h in timeline.hosts() if h.name == "standby_a")
    latest = timeline.history.latest("standby_a")
    assert latest is not None
    state = feed.state_at(latest.time)
    assert state is not None
    finding = next(f for f in state.findings if f.active and f.host == "standby_a")
    assert finding.severity == "warn"
    view = timeline.glance(host, latest.time, PALETTE)
    lag = latest.value("oracle_dg", "db", "transport_lag")
    assert isinstance(lag, float | int) and lag >= 30  # past its crit limit of its own
    assert view.grade(ORACLE_DG.transport_lag, "db") == "warn"
    head, _ = entry(view, place(host, feed.topology), None, (), finding)
    crit = Style.parse(str(PALETTE.sev("crit"))).color
    colours = [Style.parse(str(s.style)).color for s in head.spans]
    assert crit not in colours, (head.plain, colours)

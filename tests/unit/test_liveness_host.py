"""A dead host is news at once: a critical finding naming it and how long, what it means for the
commits by its place, no budget of it drawn as now, a hollow header dot and a pane that says
STALE since when."""

from __future__ import annotations

from collections.abc import Callable

import themes
from sgmon.analysis import Analyzer
from sgmon.hosts import HostInfo
from sgmon.judgement import Judge
from sgmon.model import CollectorResult, Frame, Status, silence
from sgmon.monitor import Monitor
from sgmon.sim import SimPair
from sgmon.tui.feed import Feed
from sgmon.tui.palette import Palette
from sgmon.tui.panels.budget import render_budget
from sgmon.tui.panels.header import HeaderView, render_header
from sgmon.tui.timeline import Timeline
from sgmon.verdicts import AnalysisState, Finding

START = 1_800_000_000.0
PALETTE = Palette.from_variables("sgmon-dark", themes.load_themes()["sgmon-dark"]["variables"])


def _silenced(f: Frame, since: float) -> Frame:
    """What a remote source emits for a host gone silent: every collector stale."""
    err = silence(f.host, f.time - since)
    results = {c: CollectorResult(Status.STALE, error=err) for c in f.collectors}
    return Frame(f.host, f.time, 0, f.interval, results, (), f.role)


def _run(
    scenario: str, seconds: float, alter: Callable[[Frame, float], Frame | None] | None = None
) -> list[tuple[float, AnalysisState]]:
    """Step the pair (fault at 30 s) through the analysis: (seconds since onset, state)."""
    pair = SimPair(scenario, seed=3, start=START, onset=30.0)
    a = Analyzer()
    out = []
    try:
        while pair.t < seconds:
            for f in pair.step():
                g = alter(f, pair.t - pair.onset) if alter else f
                if g is not None:
                    a.feed(g)
            out.append((pair.t - pair.onset, a.state()))
    finally:
        pair.close()
    return out


def _silent(st: AnalysisState, host: str) -> Finding | None:
    return next(
        (f for f in st.findings if f.active and f.rule == "host_silent" and f.host == host), None
    )


def test_a_dead_primary_is_a_crit_finding_at_once_and_its_budget_is_not_now() -> None:
    """failover: site_a dies at the onset; 20 s later site_b opens as the primary.  Before,
    nothing said so for 21 s and the budget of site_a stayed its last healthy one."""
    run = _run("failover", 70)
    first = next((t for t, st in run if _silent(st, "site_a")), None)
    assert first is not None and 0 <= first <= 2, first
    st = next(st for t, st in run if t >= 5)
    f = _silent(st, "site_a")
    assert f is not None and f.severity == "crit" and st.findings[0] is f
    assert "site_a (primary) sent nothing for" in f.title
    assert "no commit completes" in f.title
    assert "site_a" not in st.budget  # its last healthy split is not drawn as now
    end = run[-1][1]
    f = _silent(end, "site_a")
    assert f is not None and "former primary" in f.title and "site_b is the primary" in f.title


def test_a_dead_sync_standby_says_what_the_primary_will_do() -> None:
    """The SYNC standby stops answering (its agent's stand-in frames): the finding names the
    primary's NET_TIMEOUT and the destination that errors then."""

    def kill(f: Frame, t: float) -> Frame:
        return _silenced(f, START + 30) if f.host == "standby" and t > 0 else f

    run = _run("healthy", 45, kill)
    first = next(t for t, st in run if _silent(st, "standby"))
    assert 0 < first <= 2
    f = _silent(run[-1][1], "standby")
    assert f is not None and f.severity == "crit"
    assert "standby (SYNC standby) sent nothing for 1" in f.title, f.title
    assert "NET_TIMEOUT 30 s" in f.title and "dest_2 errors" in f.title, f.title
    assert "unprotected" in f.title
    # its frames come back: the finding closes after the hold
    revived = _run("healthy", 75, lambda f, t: kill(f, t) if t < 20 else f)
    assert _silent(revived[-1][1], "standby") is None


def test_frames_that_stop_without_a_stand_in_are_a_silent_host_too() -> None:
    """A recording (or a source) whose standby's frames just stop: the analysis does not wait
    for it past three ticks, and then says it is silent."""
    run = _run("healthy", 40, lambda f, t: None if f.host == "standby" and t > 0 else f)
    first = next((t for t, st in run if _silent(st, "standby")), None)
    assert first is not None and first <= 4, first


def test_the_pane_and_header_of_a_dead_host_say_stale_and_draw_no_budget() -> None:
    """The dashboard's timeline on the failover, 10 s after site_a died: its header dot is
    hollow with STALE since its last frame, its pane's stale_since is that frame's time and its
    commit budget draws no bar."""
    pair = SimPair("failover", seed=3, start=START, onset=10.0)
    judge = Judge(schema_of=pair.schema, live=False)
    mon = Monitor([], history=200, judge=judge)
    feed = Feed(mon.history, judge)
    from sgmon.config import Config

    timeline = Timeline(mon, feed, Config())
    try:
        while pair.t < 20:
            for f in pair.step():
                feed.add(f, judge(f), in_history=False)
    finally:
        pair.close()
    last_heard = START + 10
    hosts = [HostInfo("site_a", "primary"), HostInfo("site_b", "standby")]
    states = timeline.host_states(hosts)
    header = render_header(HeaderView(PALETTE, "demo", states, 1.0, "live", START + 20)).plain
    assert "○ primary site_a STALE since" in header and "● standby site_b" in header, header
    assert states[0].last is not None and abs(states[0].last - last_heard) <= 1
    latest = mon.history.latest("site_a")
    assert latest is not None
    state = feed.state_at(latest.time)
    view = timeline.pane_view(hosts[0], latest.time, [], state, PALETTE)
    assert view.stale_since is not None and abs(view.stale_since - last_heard) <= 1
    assert view.budget is None
    lines = [t.plain for t in render_budget(view, 80).renderables]  # type: ignore[attr-defined]
    assert "nothing heard since" in lines[1] and len(lines) == 2, lines


def test_the_rules_see_no_budget_of_a_silent_primary(monkeypatch) -> None:
    """failover: once site_a is silent, the rules get no commit budget for it (its last heard
    seconds' split is not now's), where they had been given the smoothed pre-silence one."""
    import sgmon.analysis as analysis

    seen: list[tuple[float, str | None, object]] = []
    evaluate = analysis.evaluate

    def spy(ctx, hosts):  # type: ignore[no-untyped-def]
        seen.append((ctx.now, ctx.primary_name, ctx.budget))
        return evaluate(ctx, hosts)

    monkeypatch.setattr(analysis, "evaluate", spy)
    run = _run("failover", 45)
    dead = next(t for t, st in run if _silent(st, "site_a"))
    onset = START + 30.0
    before = [b for now, name, b in seen if name == "site_a" and now < onset]
    after = [b for now, name, b in seen if name == "site_a" and now > onset + dead]
    assert any(b is not None for b in before)  # the spy sees budgets when there are some
    assert after and all(b is None for b in after)

"""The status line names the cause every other reader leads with (the largest impact first),
after the host it is on, so a glance at tmux says where to look, not only that commits are slow."""

from __future__ import annotations

import os
from pathlib import Path

from kits.analysis import analysed

from sgmon.grading import Grader
from sgmon.model import Frame
from sgmon.sim import SimPair
from sgmon.sinks.statefile import CAUSE_MAX, StatePublisher, cause_item
from sgmon.status import render
from sgmon.verdicts import AnalysisState, Finding, Judgement, by_impact

START = 1_800_000_000.0


def _finding(key: str, severity: str, host: str, title: str, cost_ms: float) -> Finding:
    return Finding(key, severity, host, title, [], [], key, "003", START, cost_ms=cost_ms)


def test_the_capped_standby_is_named_on_its_host() -> None:
    state = analysed(SimPair("standby-iops-cap", seed=1, start=START, onset=20.0), 60.0).state()
    cause = cause_item(state)
    assert cause is not None
    host, (label, text, severity) = cause
    lead = next(f for f in state.findings if f.active and f.severity != "info")
    assert (host, label, severity) == ("standby", "<-", lead.severity)
    assert lead.rule == "standby_io" and text.startswith("standby disk sdb await"), text


def test_a_healthy_pair_names_no_cause() -> None:
    state = analysed(SimPair("healthy", seed=1, start=START, onset=20.0), 40.0).state()
    assert cause_item(state) is None
    assert cause_item(None) is None


def test_the_largest_impact_leads_not_the_latest_and_never_info() -> None:
    small = _finding("cpu", "crit", "standby", "CPU busy 91.9% (standby): CPU saturated", 5.0)
    big = _finding(
        "io", "warn", "standby",
        "log file sync p99 <1024 ms <- standby disk sdc await 513 ms vs svctm 1.2 ms, queue 80, "
        "for the whole cap and more words than a status bar holds (standby): saturated", 9e5,
    )  # fmt: skip
    note = _finding("fs", "info", "primary", "consider Fast Sync (primary): advice", 1e9)
    state = AnalysisState(START, {}, sorted([small, note, big], key=by_impact), {})
    host, (_, text, severity) = cause_item(state) or ("", ("", "", ""))
    assert (host, severity) == ("standby", "warn")
    assert text.startswith("standby disk sdc await 513 ms") and text.endswith("…"), text
    assert len(text) <= CAUSE_MAX


def test_the_line_shows_it_and_tmux_takes_it_as_text(tmp_path: Path) -> None:
    hostile = _finding("x", "crit", "standby", "#(touch /tmp/owned) #[fg=red]disk (standby): x", 1)
    frame = Frame(host="standby", time=START, seq=1, interval=1.0, role="standby", collectors={})
    publisher = StatePublisher(tmp_path, "PROD")
    try:
        publisher(frame, Judgement(frame, Grader(), AnalysisState(START, {}, [hostile], {})))
        plain = render("plain", directory=tmp_path, name="PROD")
        tmux = render("tmux", directory=tmp_path, name="PROD")
    finally:
        publisher.close()
    assert "<- #(touch /tmp/owned) #[fg=red]disk" in plain, plain
    assert "##(touch /tmp/owned) ##[fg=red]disk" in tmux, tmux
    assert not os.path.exists("/tmp/owned")

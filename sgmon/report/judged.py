"""An archive judged for the report: the frames in range, the findings and the commit budget.

The frames go through ``judge_for`` exactly as ``sgmon check --from`` feeds them, so the report
names the findings check names.  The ticks before ``start`` are judged too (the analysis learns
its baselines from them, as ``replay --from`` does) but not drawn; judging stops at ``end``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sgmon.judgement import judge_for
from sgmon.model import data_guard_role

if TYPE_CHECKING:
    from sgmon.config import Config
    from sgmon.hosts.replay import ReplaySource
    from sgmon.model import Frame
    from sgmon.verdicts import AnalysisState, Budget, Finding

ROLE_ORDER = {"primary": 0, "standby": 1}
EPS = 1e-6
"""Slack at the range's bounds, so that a tick at a bound (its time read back from text) is in."""


def within(t: float, lo: float, hi: float) -> bool:
    """Whether ``t`` lies in the range [lo, hi]."""
    return lo - EPS <= t <= hi + EPS


@dataclass(slots=True)
class Judged:
    """What the report draws: hosts (primary first), their frames within [start, end], the
    commit budget of each primary tick in range, and the findings that overlap the range."""

    hosts: list[tuple[str, str]]
    """(name, role) in the order the report shows them."""
    frames: dict[str, list[Frame]]
    start: float
    end: float
    interval: float
    budgets: list[Budget] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    note: str = ""
    """Why there are no findings, when the analysis did not run."""
    regridded: float | None = None
    """The common step, when hosts of different steps were put on the coarsest (as ``check
    --from`` judges them, ``sgmon.regrid``)."""
    outcomes: AnalysisState | None = None
    """The analysis' state at the range's end: what the incidents left unprotected and how
    much of their extra commit time their causes explain."""
    what_if: list[str] = field(default_factory=list)
    """What a change would buy, as ``check`` prints it: a heading, then a line per change (the
    command fills it in; empty when nothing could be predicted)."""


def judge_archive(src: ReplaySource, config: Config, lo: float, hi: float) -> Judged:
    """Judge the archive up to ``hi`` and keep what lies in [lo, hi] (the command's range,
    which holds a tick)."""
    every = {h.name: src.frames(h.name) for h in src.hosts}
    judge = judge_for(config, [src])
    stop = threading.Event()
    budgets: dict[tuple[str, float], Budget] = {}

    def feed(frame: Frame) -> None:
        if frame.time > hi + EPS:
            stop.set()
            return
        j = judge(frame)
        if j.state is not None and frame.time >= lo - EPS:
            for b in j.state.budget.values():
                if b.time >= lo - EPS:
                    budgets[(b.host, b.time)] = b

    src.run(feed, stop)
    findings: list[Finding] = []
    state = judge.analyzer.state() if judge.analyzer is not None else None
    if state is not None:
        findings = [f for f in state.findings if (f.end or hi) >= lo]
    frames = {h: [f for f in fl if within(f.time, lo, hi)] for h, fl in every.items()}
    roles = {
        h.name: data_guard_role(every[h.name][0] if every[h.name] else None, h.role)
        for h in src.hosts
    }
    hosts = sorted(roles.items(), key=lambda hr: ROLE_ORDER.get(hr[1], 2))
    return Judged(
        hosts,
        frames,
        lo,
        hi,
        src.interval,
        sorted(budgets.values(), key=lambda b: (b.host, b.time)),
        findings,
        judge.note,
        src.regridded,
        state,
    )

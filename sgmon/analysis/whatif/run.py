"""The what-if of a whole run (``sgmon check``): which primary, which standby, which window.

The window is the incident of the largest-impact finding above info on the primary or its SYNC
standby (from when it opened to when it closed), else the whole run (its last ``KEEP`` intervals:
an hour at 1 s); the calm level is taken from before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sgmon.analysis.whatif import PRIMARY_SIDE, Prediction, predict
from sgmon.analysis.whatif.measure import Window, measured
from sgmon.topology import Topology
from sgmon.units import fmt_num
from sgmon.verdicts import Finding

WHOLE = "the whole run"
UNMEASURED = "log file sync's and the local redo write's histograms are not both in the data"


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The predictions of one primary over one window."""

    primary: str
    standby: str | None
    start: float
    end: float
    why: str
    predictions: list[Prediction]

    def lines(self, clock: Callable[[float], str]) -> list[str]:
        """The text form: log file sync now over the window, then each change's."""
        over = "the whole run" if self.why == WHOLE else "the first finding's incident"
        head = f"what a change would buy on {self.primary}, {clock(self.start)}-{clock(self.end)}"
        if not self.predictions:
            return [f"{head} ({over}): not predicted: {UNMEASURED}"]
        now = self.predictions[0].now.text()
        return [
            f"{head} ({over}): log file sync now {now}; predicted:",
            *(f"  {p.text()}" for p in self.predictions),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``check --format json``'s ``what_if``)."""
        return {
            "primary": self.primary,
            "standby": self.standby,
            "window": [self.start, self.end],
            "from": self.why,
            "changes": [p.to_dict() for p in self.predictions],
            "not_predicted": "" if self.predictions else UNMEASURED,
        }


def _standby(window: Window, topo: Topology) -> str | None:
    """The SYNC standby on the commit path whose SRL writes were measured."""
    for h in topo.standbys:
        if topo.on_commit_path(h) and any(t.waits["rfs"].n for t in window.ticks.get(h, ())):
            return h
    return None


def what_if(window: Window, findings: Sequence[Finding], topo: Topology | None) -> WhatIf | None:
    """The run's what-if: for the primary instance of the largest-impact finding on the commit
    path (``findings`` largest impact first; else the first primary), over its incident, the
    changes its advice names first (a small screen shows the first few); None without a
    primary's commits."""
    if topo is None or not topo.primaries:
        return None
    standby = _standby(window, topo)
    path = (*topo.primaries, standby)
    f = next((f for f in findings if f.severity != "info" and f.host in path), None)
    primary = f.host if f is not None and f.host in topo.primaries else topo.primaries[0]
    ticks = window.ticks.get(primary)
    if not ticks:
        return None
    start, end, why = ticks[0].time, ticks[-1].time, WHOLE
    if f is not None and (f.end is None or f.end >= start):  # an incident still kept here
        start, end = f.start, f.end if f.end is not None else ticks[-1].time
        why = f"{f.host}: {f.episode}"
    m = measured(ticks, window.ticks.get(standby or "", ()), start, end)
    if m is None:
        return None
    rank = {kind: i for i, kind in enumerate(QUOTED.get(f.rule, ()) if f is not None else ())}
    first = sorted(predict(m), key=lambda p: rank.get(p.kind, len(rank)))
    return WhatIf(primary, standby, start, end, why, first)


QUOTED = {
    "fast_sync": ("noaffirm",),
    "rto_stall": ("rto_min",),
    "dg_loss": ("rto_min",),
    "standby_io": ("noaffirm", "standby_write"),
}
"""The findings whose advice a prediction answers, and which (``Change.kind``'s, in order)."""


def quoted(findings: Sequence[Finding], what: WhatIf | None) -> list[Finding]:
    """``findings``, each whose advice a prediction answers with the prediction quoted in its
    evidence ("Fast Sync would bring log file sync here from 429 to about 1.3 ms on
    average ..."); the others as they are."""
    if what is None:
        return list(findings)
    by = {p.kind: p for p in what.predictions if p.predicted is not None}
    mine = (what.primary, what.standby)
    out = []
    for f in findings:
        said = [_quote(by[k]) for k in QUOTED.get(f.rule, ()) if k in by and f.host in mine]
        out.append(replace(f, evidence=[*f.evidence, *said]) if said else f)
    return out


def _quote(p: Prediction) -> str:
    """One prediction as the advice quotes it."""
    now, got = p.now, p.predicted
    assert got is not None
    side = ": most of it is on the primary" if PRIMARY_SIDE in p.limits else ""
    return (
        f"what a change would buy: {p.name} would bring log file sync here from "
        f"{fmt_num(now.avg)} to about {fmt_num(got.avg)} ms on average (p50 {fmt_num(now.p50)} "
        f"-> {fmt_num(got.p50)} ms, p99 <{now.p99:g} -> <{got.p99:g} ms){side}"
    )

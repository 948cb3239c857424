"""The findings book: what the rules concluded, deduplicated, kept while active, remembered.

Rules re-assert their findings on every evaluation under a stable key (rule, host, subject), so
one incident is one finding.  A finding about a state (a CPU, memory, a disk, an interface, a
socket) opens only once the state persists (``Persist``: by default asserted in 3 of the last 5
ticks, or for the rule's own minimum duration), unless it lined up with the commit path's
symptom (``Finding.drawn``): a one-second CPU peak beside a capped disk is no finding.  It then
starts at its first assertion.  A finding stays active until its rule has not asserted it for
``hold`` seconds (an intermittent fault such as a retransmit every few seconds is one finding,
not a string of them); its severity rises at once and falls only after the same hold.  Each
change of severity is a step of its own with its own time (``Finding.steps``).  An episode keeps
its worst moment's title and time (``Finding.peak_title``, ``peak_at``; ``moment``: the extra
commit time of the tick, then severity, then how far its series are out of line) and adds up its
impact, the extra commit time it accounted for; while active its title, evidence and series are
the latest (what the panes show now), once closed its title is its worst moment's.  Closed
findings are remembered up to ``memory`` of them, with their start and end times; ``findings``
lists them all in the order of ``by_impact``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from sgmon.grading import RANK
from sgmon.verdicts import Finding, by_impact


@dataclass(frozen=True, slots=True)
class Persist:
    """How long a rule's finding must hold before it opens: in ``ticks`` of the last ``of``
    evaluations, or in samples that cover ``seconds`` (one 10-minute sar sample already
    averages a state; one 1-second sample does not)."""

    ticks: int = 3
    of: int = 5
    seconds: float = 30.0
    hold: float | None = None
    """Seconds it stays active after its last assertion (None: the book's ``hold``)."""

    def holds(self, hits: int, interval: float) -> bool:
        """Whether ``hits`` assertions within the window of samples of ``interval`` seconds
        make a state rather than a blip."""
        return hits >= self.ticks or hits * interval >= self.seconds


STATE = Persist()
"""The default: a state holds in 3 of the last 5 ticks, or over 30 s of samples."""
AT_ONCE = Persist(1, 1, 0.0)
"""Events and states read from the database, which have their own timing: open at once."""
ADVICE_HOLD = Persist(hold=60.0)
"""Advice that follows an incident's budget ("consider Fast Sync"): its share of the commit time
crosses the rule's line tick by tick under a bursty cause, and one recommendation per incident
is what a reader wants, not one per burst (a capped standby gave three in 45 s)."""


class FindingBook:
    """Open, refresh and close findings as the rules assert them."""

    def __init__(
        self, hold: float = 10.0, memory: int = 200, persist: Mapping[str, Persist] | None = None
    ) -> None:
        self.hold = hold
        self.interval = 1.0
        """The sampling step, seconds (``Persist.seconds`` counts samples of it)."""
        self.persist = dict(persist or {})
        """Per rule name, how long its findings must hold (``STATE`` when not named)."""
        self._n = 0  # evaluations so far
        self._pending: dict[str, Finding] = {}  # asserted, not yet persistent
        self._hits: dict[str, deque[int]] = {}  # key -> the evaluations that asserted it
        self._active: dict[str, Finding] = {}
        self._seen: dict[str, float] = {}  # key -> last time asserted
        self._peak: dict[str, float] = {}  # key -> last time asserted at its current severity
        self._closed: deque[Finding] = deque(maxlen=memory)
        self.opened: list[Finding] = []
        """Findings opened by the last ``update`` (for the findings log)."""
        self.closed: list[Finding] = []
        """Findings closed by the last ``update``."""
        self.changed: list[Finding] = []
        """Findings whose severity changed with the last ``update`` (still active)."""

    def update(self, now: float, asserted: Iterable[Finding]) -> None:
        """Merge one evaluation's findings; close those not asserted within the hold time."""
        self.opened, self.closed, self.changed = [], [], []
        self._n += 1
        for f in asserted:
            old = self._active.get(f.key)
            if old is None:
                if (opened := self._persisted(now, f)) is None:
                    continue
                self._open(now, opened)
            else:
                self._refresh(now, old, f)
            self._seen[f.key] = now
        for key in [k for k, t in self._seen.items() if now - t >= self._hold(k)]:
            self._close(key)
        for key in [k for k, h in self._hits.items() if h[-1] <= self._n - (h.maxlen or 1)]:
            self._hits.pop(key)
            self._pending.pop(key, None)  # a blip: it never held

    def _hold(self, key: str) -> float:
        """How long the active finding ``key`` outlives its last assertion."""
        f = self._active.get(key)
        own = self.persist.get(f.rule, STATE).hold if f is not None else None
        return self.hold if own is None else own

    def _persisted(self, now: float, f: Finding) -> Finding | None:
        """The finding once it has held long enough (its episode from its first assertion,
        with the rises of severity it went through meanwhile), None while it is pending."""
        rule = self.persist.get(f.rule, STATE)
        hits = self._hits.setdefault(f.key, deque(maxlen=rule.of))
        hits.append(self._n)
        first = self._pending.get(f.key)
        if first is None:
            f = _first(now, f)
        elif RANK[f.severity] > RANK[first.severity]:
            f = replace(_merged(now, first, f), steps=(*first.steps, (now, f.severity)))
        else:
            f = replace(_merged(now, first, f), severity=first.severity, steps=first.steps)
        held = sum(1 for n in hits if n > self._n - rule.of)
        if not (f.drawn or rule.holds(held, self.interval)):
            self._pending[f.key] = f
            return None
        self._pending.pop(f.key, None)
        self._hits.pop(f.key)
        return f

    def _open(self, now: float, f: Finding) -> None:
        """Open a finding that has held: the findings log hears it open in its first form and
        rise at each step it took while pending, at the step's own time."""
        self._active[f.key] = replace(f, end=None)
        self._peak[f.key] = now
        steps = f.steps
        self.opened.append(replace(f, end=None, severity=steps[0][1], steps=steps[:1]))
        self.changed += [
            replace(f, end=None, severity=sev, steps=steps[: i + 1])
            for i, (_, sev) in enumerate(steps)
            if i
        ]

    def _refresh(self, now: float, old: Finding, f: Finding) -> None:
        """An active finding asserted again: its severity rises at once and falls only after
        the hold; its episode keeps its worst moment and adds up its cost."""
        severity = f.severity
        if RANK[severity] >= RANK[old.severity]:
            self._peak[f.key] = now
        elif now - self._peak[f.key] < self.hold:
            severity = old.severity
        else:
            self._peak[f.key] = now
        steps = old.steps
        if severity != old.severity:
            steps = (*steps, (now, severity))
        f = replace(_merged(now, old, f), severity=severity, end=None, steps=steps)
        self._active[f.key] = f
        if severity != old.severity:
            self.changed.append(f)

    def retract_causes(self, host: str, keep: str) -> None:
        """Close at once every finding on ``host`` but those of rule ``keep``: the host has
        turned out to be off the commit path (its destination was read a tick after its first
        frame), so what was raised about it as a cause of commit time is false."""
        for key in [k for k, f in self._active.items() if f.host == host and f.rule != keep]:
            self._close(key)

    def retract(
        self,
        rule: str,
        host: str | None = None,
        reword: Callable[[Finding], Finding] | None = None,
    ) -> None:
        """Close a rule's findings (of one host) at once, without the hold: what they say has
        become false (a cause now explains the commit path the generic finding said nothing
        explained); ``reword`` says what they remain true of, as they are remembered."""
        for key in [
            k for k, f in self._active.items() if f.rule == rule and host in (None, f.host)
        ]:
            if reword is not None:
                self._active[key] = reword(self._active[key])
            self._close(key)

    def _close(self, key: str) -> None:
        """Close an active finding at its last assertion; one asserted at a single tick lasts
        that tick's sample (no finding opens and closes at the same time)."""
        f = self._active.pop(key)
        end = max(self._seen.pop(key), f.start + self.interval)
        f = replace(f, end=end, seen=end, title=f.episode)  # an episode, by its worst moment
        self._peak.pop(key, None)
        self._closed.appendleft(f)
        self.closed.append(f)

    def findings(self) -> list[Finding]:
        """Active and remembered findings, largest impact first (``by_impact``)."""
        return sorted([*self._active.values(), *self._closed], key=by_impact)


def _first(now: float, f: Finding) -> Finding:
    """A finding at its first assertion: its episode and its worst moment start now."""
    return replace(
        f, start=now, seen=now, peak_at=now, peak_title=f.title, steps=((now, f.severity),)
    )


def _merged(now: float, old: Finding, new: Finding) -> Finding:
    """An episode asserted again: the latest title, evidence and series (what the panes show
    now), the worse moment's title and time (the later one on a tie), the cost of both, the
    episode's start."""
    worse = new.moment >= old.moment
    return replace(
        new,
        peak_title=new.title if worse else old.peak_title,
        moment=new.moment if worse else old.moment,
        peak_at=now if worse else old.peak_at,
        start=old.start,
        seen=now,
        cost_ms=old.cost_ms + new.cost_ms,
        commits=old.commits + new.commits,
    )

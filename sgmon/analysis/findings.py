"""The findings book: what the rules concluded, deduplicated, kept while active, remembered.

Rules re-assert their findings on every evaluation under a stable key (rule, host, subject), so
one incident is one finding whose title and evidence follow the numbers.  A finding stays active
until its rule has not asserted it for ``hold`` seconds (an intermittent fault such as a
retransmit every few seconds is one finding, not a string of them); its severity rises at once
and falls only after the same hold.  A finding keeps the start of its first, mildest form, and
each change of severity is a step of its own with its own time (``Finding.steps``), so that a
warning which became critical says when it became what.  Closed findings are remembered,
newest first, up to ``memory`` of them, with their start and end times.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import replace

from sgmon.grading import RANK
from sgmon.verdicts import Finding


class FindingBook:
    """Open, refresh and close findings as the rules assert them."""

    def __init__(self, hold: float = 10.0, memory: int = 200) -> None:
        self.hold = hold
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
        for f in asserted:
            old = self._active.get(f.key)
            if old is None:
                f = replace(f, start=now, end=None, steps=((now, f.severity),))
                self._active[f.key] = f
                self._peak[f.key] = now
                self.opened.append(f)
            else:
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
                f = replace(f, severity=severity, start=old.start, end=None, steps=steps)
                self._active[f.key] = f
                if severity != old.severity:
                    self.changed.append(f)
            self._seen[f.key] = now
        for key in [k for k, t in self._seen.items() if now - t >= self.hold]:
            self._close(key)

    def retract_causes(self, host: str, keep: str) -> None:
        """Close at once every finding on ``host`` but those of rule ``keep``: the host has
        turned out to be off the commit path (its destination was read a tick after its first
        frame), so what was raised about it as a cause of commit time is false."""
        for key in [k for k, f in self._active.items() if f.host == host and f.rule != keep]:
            self._close(key)

    def retract(self, rule: str, host: str | None = None) -> None:
        """Close a rule's findings (of one host) at once, without the hold: what they say has
        become false (a cause now explains the commit path the generic finding said nothing
        explained)."""
        for key in [
            k for k, f in self._active.items() if f.rule == rule and host in (None, f.host)
        ]:
            self._close(key)

    def _close(self, key: str) -> None:
        f = replace(self._active.pop(key), end=self._seen.pop(key))
        self._peak.pop(key, None)
        self._closed.appendleft(f)
        self.closed.append(f)

    def findings(self) -> list[Finding]:
        """Active findings ranked (severity, then score), then the remembered ones."""
        active = sorted(self._active.values(), key=lambda f: (-RANK[f.severity], -f.score, f.key))
        return active + list(self._closed)

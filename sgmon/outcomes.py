"""What an incident left behind, as every sink reads it: the commits and redo that no standby
held while a destination was not protecting (``Unprotected``), and how much of the extra commit
time the named causes explain (``Explained``).

Plain frozen dataclasses with ``to_dict`` and the sentence a DBA reads, beside the verdicts
(``sgmon.verdicts``' ``AnalysisState`` carries them); the analysis makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sgmon.units import fmt_num

RULE = "unprotected"
"""The rule of the finding that counts a SYNC destination's commits on no standby."""
UNCLEAR = 0.5
"""Below this share explained, the cause of an incident is unclear: the named causes leave
most of the extra commit time to something no collector measured."""


def fmt_bytes(n: float) -> str:
    """``12.3 MB``: redo in decimal units, as a manager reads it."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def pct(share: float) -> str:
    """``81 %``."""
    return f"{share * 100:.0f} %"


@dataclass(frozen=True, slots=True)
class Unprotected:
    """One destination of one primary instance that was not protecting.

    SYNC: ``commits`` and ``redo_bytes`` made while it was not (ERROR, transport stopped, the
    database in RESYNCHRONIZATION), running totals over ``seconds``; ``alone`` when no other
    SYNC destination of the instance protected meanwhile.  ASYNC: ``redo_bytes`` is the redo
    not yet received now (its transport lag, ``seconds``, times the redo the instance made in
    that time); ``commits`` is 0, as a lag says nothing about which commits.
    """

    host: str
    dest: str
    target: str
    mode: str
    commits: float
    redo_bytes: float
    seconds: float
    active: bool
    """Not protecting now (SYNC), or behind now (ASYNC)."""
    since: float | None = None
    """When its current (or last) episode began."""
    alone: bool = True
    hung: float = 0.0
    """Of ``seconds``, those the instance's commits hung waiting on a silent standby before the
    destination was marked failed, at NET_TIMEOUT or at a reset (no commit completed in them)."""
    relay: str = ""
    """When the destination is a far sync instance that forwards to no standby now: what failed
    (``dest_3 of far sync FS1 to STBY: ERROR``); the commits are in the far sync's standby redo
    logs only, and a far sync cannot be failed over to."""
    cut_by: str = ""
    """The destination's error when a reset ended the last hang before NET_TIMEOUT did
    (``ORA-03135: connection lost contact``); empty when NET_TIMEOUT ended it."""

    @property
    def sync(self) -> bool:
        """A SYNC destination (its figures are running totals, not a gauge)."""
        return self.mode != "ASYNC"

    def text(self) -> str:
        """``4,211 commits, 12.3 MB of redo on no standby for 58 s, 30 of them hung waiting on
        the standby``, or for an ASYNC destination ``12.3 MB of redo not yet received by STBY_A
        (transport lag 36 s)``."""
        if not self.sync:
            return (
                f"{fmt_bytes(self.redo_bytes)} of redo not yet received by {self.target} "
                f"(transport lag {fmt_num(self.seconds)} s)"
            )
        where = "on no standby" if self.alone else f"not on {self.target}"
        hung = f", {fmt_num(self.hung)} of them hung waiting on the standby" if self.hung else ""
        relay = f" (held by the far sync alone: {self.relay})" if self.relay else ""
        return (
            f"{self.commits:,.0f} commits, {fmt_bytes(self.redo_bytes)} of redo {where} "
            f"for {fmt_num(self.seconds)} s{hung}{relay}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form, with its sentence."""
        return {
            "host": self.host,
            "dest": self.dest,
            "target": self.target,
            "mode": self.mode,
            "commits": round(self.commits),
            "redo_bytes": round(self.redo_bytes),
            "seconds": self.seconds,
            "active": self.active,
            "since": self.since,
            "hung_seconds": self.hung,
            "relay": self.relay,
            "hang_cut_by": self.cut_by,
            "text": self.text(),
        }


@dataclass(frozen=True, slots=True)
class Explained:
    """The share of one incident's extra commit time (log file sync above its baseline) that
    its named causes explain, from the commit budget's parts: each part's rise over its own
    baseline against log file sync's rise.  ``parts`` are the named ones (label, share of the
    extra); ``unmeasured`` says what the rest could be, when it is most of it."""

    host: str
    start: float
    extra_ms: float
    """Log file sync's average during the incident above its baseline, ms."""
    share: float
    parts: tuple[tuple[str, float], ...]
    causes: tuple[str, ...]
    """The findings' causes the parts are named by (their rules)."""
    unmeasured: str = ""

    @property
    def unclear(self) -> bool:
        """Whether the named causes explain less than half of it."""
        return self.share < UNCLEAR

    def text(self) -> str:
        """``94 % of the extra commit time is explained by: standby disk 81 %, network 13 %``;
        under half, ``cause unclear: ...`` and what was not measured."""
        named = ", ".join(f"{label} {pct(s)}" for label, s in self.parts)
        if self.unclear:
            said = f", {pct(self.share)} explained ({named})" if named else ""
            return (
                f"cause unclear: {fmt_num(self.extra_ms)} ms of extra commit time{said}; "
                f"{self.unmeasured}"
            )
        return f"{pct(self.share)} of the extra commit time is explained by: {named}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form, with its sentence."""
        return {
            "host": self.host,
            "start": self.start,
            "extra_ms": round(self.extra_ms, 3),
            "share": round(self.share, 3),
            "parts": {label: round(s, 3) for label, s in self.parts},
            "causes": list(self.causes),
            "unclear": self.unclear,
            "text": self.text(),
        }

"""What one host pane shows at the cursor: the frame there, the shared time window, the analysis.

A ``PaneView`` is plain data built by the app for each redraw; the panels' render functions take
one and return Rich renderables, so they can be tested without running an App.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import is_
from typing import Any, TypeVar

from rich.text import Text

from sgmon.contract import Num, Ref
from sgmon.grading import Grader, rank
from sgmon.model import Frame, Status, Value, number
from sgmon.tui.palette import Palette
from sgmon.units import fmt_num
from sgmon.verdicts import Judgement

SeriesKey = tuple[str, str, str]
"""(collector, instance, field) within one host."""


Frames = tuple[Frame | None, ...]
T = TypeVar("T")


class SeriesMemo:
    """A host's sparkline series as last read, so the next tick reads one new value per series.

    Each redraw reads every drawn series over the shared window (65 to 200 instants); from one
    tick to the next the window moves on by one instant (or grows by one, while the history is
    younger than the window), so all but its newest value are the ones read a second earlier.
    Held by the timeline per host, handed to every view of it.  An entry is keyed by what was
    asked, not by the window's length: keyed by length, each length the window had while it
    grew kept its own entry, and with it the first frames the dashboard saw, for good.
    """

    LIMIT = 1024
    """Series kept; past it the memo starts again (sockets and devices come and go)."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, ...], tuple[Frames, list[Any]]] = {}

    def series(
        self, frames: Frames, ref: Num, instance: str, last: int | None = None
    ) -> list[float | None]:
        """One field's value of ``instance`` in each frame (None where unknown or not a
        number); ``last``: the length asked for (a window's sparkline, its zoomed one), a part
        of the key.  The list is shared with later calls, so callers must not change it."""
        return self.column(
            frames, (ref.collector, instance, ref.name, last), lambda f: ref.at(f, instance)
        )

    def column(
        self, frames: Frames, key: tuple[Any, ...], read: Callable[[Frame], T]
    ) -> list[T | None]:
        """``read(frame)`` of each frame (None where there is none), memoised under ``key``
        (what is read, and how much of the window); shared with later calls, like ``series``."""
        old = self._known.get(key)
        values: list[T | None] | None = None
        if old is not None:
            was, kept = old
            n = len(frames)
            # frames compare by identity: a Frame's own == compares every value
            if len(was) == n and all(map(is_, was, frames)):
                return kept
            if n and len(was) == n and all(map(is_, was[1:], frames[:-1])):  # moved on one
                values = kept[1:]
            elif len(was) + 1 == n and all(map(is_, was, frames)):  # grew by one
                values = kept[:]
        if values is None:
            values = [read(f) if f is not None else None for f in frames]
        else:
            newest = frames[-1]
            values.append(read(newest) if newest is not None else None)
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        self._known[key] = (frames, values)
        return values


@dataclass(frozen=True)
class PaneView:
    """One host at the cursor time, with the window of frames that ends there."""

    host: str
    role: str
    palette: Palette
    frame: Frame | None
    """The host's newest frame at or before the cursor (None before its first frame)."""
    window: tuple[Frame | None, ...] = ()
    """This host's frame at each instant of the shared time axis of the sparklines and heatmaps,
    oldest first, the last at the cursor (None where it had none)."""
    judgement: Judgement | None = None
    """The Judge's verdict on ``frame``: every cell's grade, raised by the analysis' outliers."""
    grader: Grader = field(default_factory=Grader)
    """The limits the verdict was graded with; the sparklines grade past values with them."""
    highlight: frozenset[SeriesKey] = frozenset()
    """Series named by the selected finding."""
    kind: str = ""
    """The title's word for the host when its role says too little or too much: ``far sync``,
    ``former primary`` (a failover's old primary, ``Timeline.kind``)."""
    role_note: str = ""
    """Said beside the role when the database's role is not the configured one (a switchover)."""
    budget: Any = None
    """The analysis' commit-time Budget for this host at the cursor, when there is one."""
    what_if: tuple[str, ...] = ()
    """What a change would buy (``w``), under a primary's budget bar; none when not asked."""
    pinned: tuple[str, ...] = ()
    """Devices named in the host's config (the redo logs): always listed first."""
    filter: str = ""
    """Only devices, interfaces and sockets whose name contains this (case-insensitive)."""
    cap: str = ""
    """The worst colour of this host's cells: ``warn`` for a standby off the commit path,
    whose faults the analysis calls lag risks, at most warnings (its strip entry drew a lag
    crit beside its warning)."""
    stale_since: float | None = None
    """Time of the last frame when the host has gone quiet, else None."""
    memo: SeriesMemo = field(default_factory=SeriesMemo, compare=False)
    """The host's series as last read (the timeline keeps one per host)."""

    def rows(self, collector: str) -> dict[str, dict[str, Value]]:
        """Rows of one collector at the cursor."""
        return dict(self.frame.rows(collector)) if self.frame else {}

    def status(self, collector: str) -> tuple[str, str]:
        """(status, error) of one collector at the cursor; ("missing", "") when absent."""
        res = self.frame.collectors.get(collector) if self.frame else None
        if res is None:
            return "missing", ""
        return res.status.value, res.error or ""

    def value(self, ref: Ref, instance: str) -> Value:
        """One value at the cursor, as its row holds it."""
        return ref.raw_at(self.frame, instance)

    def series(self, ref: Num, instance: str, last: int | None = None) -> list[float | None]:
        """One numeric series over the shared window (None where unknown); its ``last`` instants
        only, when given (a sparkline shows 65 of the 160).  Not to be changed: it is the
        memo's."""
        frames = self.window if last is None else self.window[max(0, len(self.window) - last) :]
        return self.memo.series(frames, ref, instance, last)

    def matches(self, name: str) -> bool:
        """Whether a device, interface or socket passes the filter."""
        return not self.filter or self.filter.lower() in name.lower()

    def marked(self, ref: Ref, instance: str) -> bool:
        """Whether the selected finding names this series."""
        return (ref.collector, instance, ref.name) in self.highlight

    def grade(self, ref: Ref, instance: str, value: Value = None) -> str:
        """The grade of a cell now (the Judge's); of ``value`` by the same limits when a panel
        shows a figure of its own in the cell (switches per minute)."""
        return self.severity(ref.collector, instance, ref.name, value)

    def severity(self, collector: str, instance: str, name: str, value: Value = None) -> str:
        """``grade`` of a cell named by its collector, instance and field: for a reader that
        walks every cell of a frame (a test comparing the sinks' grades)."""
        j = self.judgement
        f = self.frame
        if j is not None and (
            value is None or (f is not None and value == f.value(collector, instance, name))
        ):
            sev = j.grade(collector, instance, name)
        else:
            row = f.rows(collector).get(instance, {}) if f else {}
            ncpu = j.ncpu if j is not None else 0
            sev = self.grader.grade(self.host, collector, instance, name, value, row, ncpu)
        return self.cap if self.cap and rank(sev) > rank(self.cap) else sev

    def lingers(self, ref: Ref, instance: str) -> bool:
        """Whether the series had an outlier that is still open but quiet at this instant."""
        j = self.judgement
        return j is not None and j.lingers(ref.collector, instance, ref.name)

    def judge(self, ref: Ref, instance: str = "") -> Callable[[float], str]:
        """``value -> grade`` by one field's limits, for its history: sparklines colour every
        past value with it; the analysis' outliers belong to the cursor instant only, so they
        colour the current value, not the history."""
        ncpu = self.judgement.ncpu if self.judgement is not None else 0
        return self.grader.judge(self.host, ref.collector, instance, ref.name, ncpu)

    def cell(self, ref: Ref, instance: str, width: int = 0, value: Value = None) -> Text:
        """A value formatted, coloured by severity and marked when the selected finding names it."""
        v = self.value(ref, instance) if value is None else value
        shown = v if isinstance(v, str) else fmt_num(number(v), width)
        if v is None:
            return Text(shown, style=self.palette.muted)
        # one style for the whole cell, not a span per mark: a line of cells whose spans do
        # not overlap is drawn on the fast path (panels.lines._segments)
        style = self.palette.sev(self.grade(ref, instance, value))
        if self.lingers(ref, instance):
            style = style + self.palette.lingering
        if self.marked(ref, instance):
            style = style + self.palette.highlight
        return Text(shown, style=style)

    def collector_problem(self, collector: str) -> Text | None:
        """A one-line note when a collector is stale, failed or unavailable at the cursor."""
        status, error = self.status(collector)
        if status in (Status.OK.value,):
            return None
        if status == "missing":
            return Text(f"  no {collector} data", style=self.palette.muted)
        style = self.palette.sev("crit" if status == Status.ERROR.value else "warn")
        return Text(f"  {collector} {status}: {error}"[:200], style=style)

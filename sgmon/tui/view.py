"""What one host pane shows at the cursor: the frame there, the shared time window, the analysis.

A ``PaneView`` is plain data built by the app for each redraw; the panels' render functions take
one and return Rich renderables, so they can be tested without running an App.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from sgmon.analysis.thresholds import idle_rto
from sgmon.model import Field, Frame, Status, Value
from sgmon.tui.palette import Palette, worst
from sgmon.units import fmt_num


def _always_ok(_: float) -> str:
    return "ok"


SeriesKey = tuple[str, str, str]
"""(collector, instance, field) within one host."""


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
    fields: Mapping[tuple[str, str], Field] = field(default_factory=dict)
    """(collector, field name) -> declared Field, for units and static thresholds."""
    outliers: Mapping[SeriesKey, tuple[str, str]] = field(default_factory=dict)
    """Series the analysis flags at the cursor -> (severity, reason)."""
    highlight: frozenset[SeriesKey] = frozenset()
    """Series named by the selected finding."""
    role_note: str = ""
    """Said beside the role when the database's role is not the configured one (a switchover)."""
    lingering: frozenset[SeriesKey] = frozenset()
    """Flagged series whose outlier is still open but whose value is back in line now."""
    budget: Any = None
    """The analysis' commit-time Budget for this host at the cursor, when there is one."""
    pinned: tuple[str, ...] = ()
    """Devices named in the host's config (the redo logs): always listed first."""
    filter: str = ""
    """Only devices, interfaces and sockets whose name contains this (case-insensitive)."""
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Config overrides of static thresholds, keyed ``collector.field``."""
    stale_since: float | None = None
    """Time of the last frame when the host has gone quiet, else None."""

    def rows(self, collector: str) -> dict[str, dict[str, Value]]:
        """Rows of one collector at the cursor."""
        return dict(self.frame.rows(collector)) if self.frame else {}

    def status(self, collector: str) -> tuple[str, str]:
        """(status, error) of one collector at the cursor; ("missing", "") when absent."""
        res = self.frame.collectors.get(collector) if self.frame else None
        if res is None:
            return "missing", ""
        return res.status.value, res.error or ""

    def value(self, collector: str, instance: str, name: str) -> Value:
        """One value at the cursor."""
        return self.frame.value(collector, instance, name) if self.frame else None

    def series(self, collector: str, instance: str, name: str) -> list[float | None]:
        """One numeric series over the shared window (None where unknown)."""
        out: list[float | None] = []
        for f in self.window:
            v = f.value(collector, instance, name) if f is not None else None
            out.append(float(v) if isinstance(v, int | float) else None)
        return out

    def matches(self, name: str) -> bool:
        """Whether a device, interface or socket passes the filter."""
        return not self.filter or self.filter.lower() in name.lower()

    def severity(self, collector: str, instance: str, name: str, value: Value) -> str:
        """Severity of the value now: its static thresholds, raised by the analysis while the
        series is out of line this very tick.  An outlier still open but quiet now (it closes
        after a few quiet ticks) does not colour the value; ``lingers`` marks it instead."""
        key = (collector, instance, name)
        flagged = self.outliers.get(key)
        now = flagged[0] if flagged and key not in self.lingering else None
        if idle_rto(
            collector, name, self.frame.rows(collector).get(instance, {}) if self.frame else {}
        ):
            return worst(now, "ok")
        return worst(now, self.static_severity(collector, name, value))

    def lingers(self, collector: str, instance: str, name: str) -> bool:
        """Whether the series had an outlier that is still open but quiet at this instant."""
        return (collector, instance, name) in self.lingering

    def static_severity(self, collector: str, name: str, value: Value) -> str:
        """warn/crit from the field's thresholds (config overrides first)."""
        if not isinstance(value, int | float):
            return "ok"
        return self.judge(collector, name)(value)

    def judge(self, collector: str, name: str) -> Callable[[float], str]:
        """A function value -> "ok"/"warn"/"crit" from one field's static thresholds.

        Sparklines colour every past value with it; the analysis' outliers belong to the cursor
        instant only, so they colour the current value, not the history.
        """
        f = self.fields.get((collector, name))
        over = self.thresholds.get(f"{collector}.{name}", {})
        warn = over.get("warn", f.warn if f else None)
        crit = over.get("crit", f.crit if f else None)
        if warn is None and crit is None:
            return _always_ok
        sign = 1.0 if (f.higher_is_worse if f else True) else -1.0
        w = None if warn is None else sign * warn
        c = None if crit is None else sign * crit

        def judge(v: float) -> str:
            x = sign * v
            return (
                "crit" if c is not None and x >= c else "warn" if w is not None and x >= w else "ok"
            )

        return judge

    def cell(
        self, collector: str, instance: str, name: str, width: int = 0, value: Value = None
    ) -> Text:
        """A value formatted, coloured by severity and marked when the selected finding names it."""
        v = self.value(collector, instance, name) if value is None else value
        text = Text(fmt_num(v if not isinstance(v, list) else None, width))
        if v is None:
            text.stylize(self.palette.muted)
            return text
        text.stylize(self.palette.sev(self.severity(collector, instance, name, v)))
        if self.lingers(collector, instance, name):
            text.stylize(self.palette.lingering)
        if (collector, instance, name) in self.highlight:
            text.stylize(self.palette.highlight)
        return text

    def collector_problem(self, collector: str) -> Text | None:
        """A one-line note when a collector is stale, failed or unavailable at the cursor."""
        status, error = self.status(collector)
        if status in (Status.OK.value,):
            return None
        if status == "missing":
            return Text(f"  no {collector} data", style=self.palette.muted)
        style = self.palette.sev("crit" if status == Status.ERROR.value else "warn")
        return Text(f"  {collector} {status}: {error}"[:200], style=style)

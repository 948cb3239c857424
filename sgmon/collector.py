"""The collector contract.

A collector reads one source of numbers.  It declares ``name`` and ``fields`` as class attributes
(so they are known without opening anything), acquires its resources and imports its heavy driver
in ``open()`` (raising ``Unavailable`` when it cannot run here), and each tick returns *raw* rows
from ``sample()``: cumulative counters stay cumulative.  The engine keeps the previous sample and
calls ``derive(prev, cur, dt)`` to produce the frame's values; the default ``derive`` does the
generic conversions by field kind (rate, delta, histogram) with wrap and reset handling, and a
collector whose fields combine several counters (iostat's await, %util) overrides it.

``sample()`` runs off the engine's thread (a worker shared with the other collectors, or one of
its own with ``solo = True``), so it may block; the engine bounds it by ``timeout`` and marks it
stale instead of waiting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.rates import counter_delta, histogram_delta


class Unavailable(Exception):
    """The collector cannot run on this host; the message says why and what to do."""


class ConfigError(ValueError):
    """A collector option is wrong; the message is one line that says what to do."""


class Collector:
    """Base class for collectors; subclasses set ``name`` and ``fields`` and implement sample()."""

    name: ClassVar[str] = ""
    """Entry-point name, collector prefix in metric names and CSV file names."""
    fields: ClassVar[tuple[Field, ...]] = ()
    """Declared fields, in display and CSV column order."""
    description: ClassVar[str] = ""
    """One line for `sgmon collectors`."""
    default_enabled: ClassVar[bool] = True
    """Whether the collector runs when the config does not mention it."""
    timeout: ClassVar[float] = 0.5
    """Seconds one sample() may take before the tick goes on without it (capped by interval)."""
    solo: ClassVar[bool] = False
    """Run on a thread of its own: the driver is bound to the thread that opened it (pyroute2's
    per-thread asyncio loop, a database session), or a call may block for long."""
    wrap_bits: ClassVar[Mapping[str, int]] = {}
    """Counter fields that wrap at 2**bits (e.g. 32-bit diskstats ms fields)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        """Keep the options; validation that needs no I/O belongs here (raise ConfigError)."""
        self.options: Mapping[str, Any] = dict(options or {})
        self._events: list[Event] = []

    def open(self) -> None:
        """Acquire resources and import drivers; raise Unavailable if this host cannot serve."""

    def sample(self) -> Rows:
        """Read the source once and return raw rows keyed by instance."""
        raise NotImplementedError

    def derive(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Turn raw rows into frame values (see ``derive_by_kind``)."""
        return derive_by_kind(self.fields, prev, cur, dt, self.wrap_bits)

    def close(self) -> None:
        """Release resources; must be idempotent."""

    def emit_event(self, event: Event) -> None:
        """Queue an event (log switch, slow write) for the current frame; thread-safe enough."""
        self._events.append(event)

    def take_events(self) -> list[Event]:
        """Events queued since the last call (the engine calls this once per tick)."""
        events, self._events = self._events, []
        return events

    @classmethod
    def field(cls, name: str) -> Field:
        """Look up a declared field by name."""
        for f in cls.fields:
            if f.name == name:
                return f
        raise KeyError(f"{cls.name} has no field {name!r}")


def derive_by_kind(
    fields: tuple[Field, ...],
    prev: Rows | None,
    cur: Rows,
    dt: float,
    wrap_bits: Mapping[str, int] | None = None,
) -> Rows:
    """Generic raw->frame conversion: gauges and text pass through, counters become rates or
    deltas, cumulative histograms become interval bucket counts.

    An instance absent from ``prev`` (first sample, device re-created) and a counter that went
    backwards without a declared wrap (reset) give ``None`` for that field this interval.
    """
    wrap_bits = wrap_bits or {}
    out: Rows = {}
    for inst, raw in cur.items():
        before = prev.get(inst) if prev else None
        row: dict[str, Value] = {}
        for f in fields:
            v = raw.get(f.name)
            if f.kind in (Kind.GAUGE, Kind.TEXT):
                row[f.name] = v
                continue
            b = before.get(f.name) if before else None
            if f.kind is Kind.HISTOGRAM:
                row[f.name] = histogram_delta(b, v)  # type: ignore[arg-type]
                continue
            d = counter_delta(b, v, wrap_bits.get(f.name))  # type: ignore[arg-type]
            if d is None:
                row[f.name] = None
            elif f.kind is Kind.RATE:
                row[f.name] = d / dt if dt > 0 else None
            else:
                row[f.name] = d
        out[inst] = row
    return out

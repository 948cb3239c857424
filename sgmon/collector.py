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

Every collector takes the option ``root`` (default ``/``), as node_exporter's ``--path.procfs``
and ``--path.sysfs`` do: a directory holding the host's ``proc/`` and ``sys/``, such as the
host's /proc and /sys mounted into a container at /host, or a tree stored for a test.  A
collector joins its paths with ``path()`` once, in ``__init__`` or ``open()``, never per tick.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from sgmon.contract import RowKind
from sgmon.errors import ConfigError  # the plugin API raises the user-facing config error
from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.rates import counter_delta, counter_rate, histogram_delta

RawRows = Mapping[str, Any]
"""What ``sample()`` returns and ``derive()`` reads: rows of field values keyed by instance, as
the frame has them but with counters still cumulative, for the default ``derive``; a collector
that overrides ``derive`` may keep whatever it reads fastest (tcp keeps each socket's decoded
reply as one tuple)."""


class Unavailable(Exception):
    """The collector cannot run on this host; the message says why and what to do."""


class Collector:
    """Base class for collectors; subclasses set ``name`` and ``fields`` and implement sample()."""

    name: ClassVar[str] = ""
    """Entry-point name, collector prefix in metric names and CSV file names."""
    fields: ClassVar[tuple[Field, ...]] = ()
    """Declared fields, in display and CSV column order."""
    rows: ClassVar[tuple[RowKind, ...]] = (
        RowKind("all", fixed="all"),
        RowKind("db", fixed="db"),
        RowKind("host", fixed="host"),
        RowKind("item", label="item"),
    )
    """The kinds of rows it keeps (``sgmon.contract.RowKind``): a whole-host row, the rows of
    a kind that share a prefix, the rest; an exporter labels each kind's rows by it."""
    description: ClassVar[str] = ""
    """One line for `sgmon collectors`."""
    option_rules: ClassVar[Mapping[str, Callable[[Any], object]] | None] = None
    """The options of its [collectors.NAME] table beside ``enabled`` and ``root``, each with the
    rule its value must meet (``sgmon.config.rules``: ``boolean``, ``seconds_in(...)``...; the
    rule raises ``Invalid`` saying why): the config refuses any other key, and a value out of
    its rule, in one line.  None (a plug-in that declares none): any key is taken."""
    default_enabled: ClassVar[bool] = True
    """Whether the collector runs when the config does not mention it."""
    timeout: ClassVar[float] = 0.5
    """Seconds one sample() may take before the tick goes on without it (capped by interval)."""
    solo: ClassVar[bool] = False
    """Run on a thread of its own: the driver is bound to the thread that opened it (a database
    session), or a call may block for long."""
    wrap_bits: ClassVar[Mapping[str, int]] = {}
    """Counter fields that wrap at 2**bits (e.g. 32-bit diskstats ms fields)."""
    lines: ClassVar[Mapping[str, str]] = {}
    """Host file -> a regular expression of the lines sample() reads in it, matched against the
    file with a newline put before it (so each match starts with one): a remote pump ships only
    those matches, joined.  A file not named here is shipped whole; a collector reading a file
    another names must name its lines too."""
    remote_files: ClassVar[Mapping[str, str]] = {}
    """Host file (or glob) -> when a remote pump reads it, so that this collector finds it under
    ``root`` in the pump's mirror: "tick" (every tick), "retrans" (when TCP's RetransSegs moved,
    and with the slow files: /proc/net/netstat), "slow" (every few seconds: settings a collector
    caches; a glob is expanded on the far side).  A file a collector reads that no collector
    declares is not in a pumped host's tree; one that reads nothing a pump can ship (processes,
    kernel tracing) declares none."""
    sparse: ClassVar[bool] = False
    """Frame rows keep only the fields their raw row has: rows of different kinds (a socket
    and the host totals, a destination and a thread) share one declared field list."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        """Keep the options; validation that needs no I/O belongs here (raise ConfigError)."""
        self.options: Mapping[str, Any] = dict(options or {})
        self.root = _root(self.options.get("root", "/"), self.name)
        """Where the host's proc/ and sys/ are: ``/`` for this machine's own."""
        self._events: list[Event] = []

    def path(self, host_path: str) -> str:
        """Where the host's ``host_path`` (e.g. ``/proc/stat``) is: under ``root`` if one is set."""
        return os.path.join(self.root, host_path.lstrip("/"))

    def open(self) -> None:
        """Acquire resources and import drivers; raise Unavailable if this host cannot serve."""

    def sample(self) -> RawRows:
        """Read the source once and return raw rows keyed by instance."""
        raise NotImplementedError

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Turn raw rows into frame values (see ``derive_by_kind``)."""
        return derive_by_kind(self.fields, prev, cur, dt, self.wrap_bits, self.sparse)

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


def _root(value: object, name: str) -> str:
    """Validate the ``root`` option: an existing directory (normalised, so "/host/" is "/host")."""
    if not isinstance(value, str) or not value or not os.path.isdir(value):
        raise ConfigError(
            f"collectors.{name}.root: {value!r} is not a directory; use the one that holds the "
            'host\'s proc/ and sys/, e.g. root = "/host"'
        )
    return os.path.normpath(value)


class _Plan(NamedTuple):
    """A field tuple sorted by what derivation does to it, built once per collector class."""

    names: tuple[str, ...]  # every field, in declared order
    known: frozenset[str]  # the same, for subset tests
    counters: tuple[tuple[str, int | None, bool], ...]  # (name, wrap bits, per second)
    histograms: tuple[str, ...]


_PLANS: dict[tuple[int, int], tuple[object, object, _Plan]] = {}


def _plan(fields: tuple[Field, ...], wrap_bits: Mapping[str, int]) -> _Plan:
    """The derivation plan of ``fields``, cached by identity: a collector's fields are one
    class-level tuple, and hashing 30 Field objects every tick would cost more than it saves."""
    key = (id(fields), id(wrap_bits))
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is fields and hit[1] is wrap_bits:
        return hit[2]
    plan = _Plan(
        tuple(f.name for f in fields),
        frozenset(f.name for f in fields),
        tuple(
            (f.name, wrap_bits.get(f.name), f.kind is Kind.RATE)
            for f in fields
            if f.kind in (Kind.RATE, Kind.DELTA)
        ),
        tuple(f.name for f in fields if f.kind is Kind.HISTOGRAM),
    )
    _PLANS[key] = (fields, wrap_bits, plan)
    return plan


_NO_WRAP: Mapping[str, int] = {}

IdleMemory = dict[str, tuple[Any, dict[str, Value]]]
"""instance -> the raw row kept since the last sample and the figures derived for it as idle."""


def derive_moved(
    c: Collector, prev: RawRows | None, cur: RawRows, dt: float, idle: IdleMemory
) -> Rows:
    """``c.derive`` for the instances whose raw row moved; the others get their idle figures.

    A collector that finds nothing changed for an instance (the same /proc line, the same
    netlink message, a process that did not run) returns the previous sample's row object
    itself.  That row's figures are the same every tick it stays, so they are derived once (the
    row against itself over ``dt``) and copied after: an idle device or process costs a lookup,
    not the arithmetic.  The engine keeps ``idle`` per collector.
    """
    if not prev or dt <= 0:
        idle.clear()
        return c.derive(prev, cur, dt)
    moved = {k: row for k, row in cur.items() if prev.get(k) is not row}
    if len(moved) == len(cur):
        idle.clear()
        return c.derive(prev, cur, dt)
    derived = c.derive(prev, moved, dt) if moved else {}
    out: Rows = {}
    for k, row in cur.items():
        if k in moved:
            out[k] = derived[k]
            continue
        hit = idle.get(k)
        if hit is None or hit[0] is not row:
            hit = idle[k] = (row, c.derive({k: row}, {k: row}, dt)[k])
        out[k] = dict(hit[1])
    for k in [k for k in idle if k in moved or k not in cur]:
        del idle[k]
    return out


def derive_by_kind(
    fields: tuple[Field, ...],
    prev: Mapping[str, Mapping[str, Value]] | None,
    cur: Mapping[str, Mapping[str, Value]],
    dt: float,
    wrap_bits: Mapping[str, int] | None = None,
    sparse: bool = False,
) -> Rows:
    """Generic raw->frame conversion: gauges and text pass through, counters become rates or
    deltas, cumulative histograms become interval bucket counts.

    An instance absent from ``prev`` (first sample, device re-created) and a counter that went
    backwards without a declared wrap (reset) give ``None`` for that field this interval.  Rows
    carry every declared field (None where the raw row has none), or with ``sparse`` only the
    fields their raw row has.
    """
    plan = _plan(fields, _NO_WRAP if wrap_bits is None else wrap_bits)
    out: Rows = {}
    for inst, raw in cur.items():
        if raw.keys() <= plan.known:  # the usual case: copy in C, no loop over the fields
            row = dict(raw) if sparse else {**dict.fromkeys(plan.names), **raw}
        elif sparse:
            row = {n: raw[n] for n in plan.names if n in raw}
        else:
            row = {n: raw.get(n) for n in plan.names}
        before = prev.get(inst) if prev else None
        for name, wrap, per_second in plan.counters:
            if name in row:
                b = before.get(name) if before else None
                row[name] = (
                    counter_rate(b, row[name], dt, wrap)  # type: ignore[arg-type]
                    if per_second
                    else counter_delta(b, row[name], wrap)  # type: ignore[arg-type]
                )
        for name in plan.histograms:
            if name in row:
                b = before.get(name) if before else None
                row[name] = histogram_delta(b, row[name])  # type: ignore[arg-type]
        out[inst] = row
    return out

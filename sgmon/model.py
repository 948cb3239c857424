"""The data model every part of sgmon shares: field declarations and frames.

A *collector* declares its fields up front (name, unit, kind, meaning, thresholds), so the CSV
header, the Prometheus HELP/TYPE lines and the dashboard's columns are known before the first
sample.  Each tick the engine turns what the collectors read into one *frame* per host: plain
numbers, strings and lists keyed by collector, instance and field, JSON-serialisable as is.  Every
sink (recorder, status line, dashboard, exporter, agent stream) consumes the same frame.

Frame layout (``Frame.to_dict``), format version ``FRAME_VERSION``::

    {"v": 1, "host": "primary", "role": "primary", "time": 1763712000.0, "seq": 42,
     "interval": 1.0,
     "collectors": {
        "disk": {"status": "ok", "duration_ms": 0.21, "error": null,
                 "rows": {"vda": {"r_s": 0.0, "w_await": 1.3, ...}, ...}},
        "oracle": {"status": "stale", "duration_ms": 2000.0, "error": "call timeout", "rows": {}},
        ...},
     "events": [{"time": ..., "collector": "oracle", "kind": "log_switch", "instance": "1",
                 "text": "log switch thread 1 seq 812"}]}

Values: ``float``/``int`` for gauge, rate and delta fields, ``str`` for text fields, and for
histogram fields a list of ``[upper_bound, count]`` pairs (upper bound in the field's unit,
``None`` for the open last bucket) holding the counts *of this interval*.  A value that is not
known this tick (first sample of a rate, a counter reset, a missing column) is ``None`` or absent,
never a fake zero.
"""

from __future__ import annotations

import enum
import functools
import json
import sys
import weakref
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sgmon.errors import redact

FRAME_VERSION = 1

Value = float | int | str | list[Any] | None
Rows = dict[str, dict[str, Value]]


def number(v: object) -> float | None:
    """A cell's value as a number, None when it is not one (text, a histogram, a bool, None):
    the one check every reader of a row makes.  Most cells are floats: they are returned as
    they are (what ``float`` returns for one) without the subclass checks."""
    if type(v) is float:
        return v
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


class Kind(enum.StrEnum):
    """How a field's value is produced and how sinks should treat it."""

    GAUGE = "gauge"
    """A level read as is (load, %idle, rto_ms, lag)."""
    RATE = "rate"
    """A cumulative counter at the source, shown per second over the interval."""
    DELTA = "delta"
    """A cumulative counter at the source, shown as the increase over the interval."""
    HISTOGRAM = "histogram"
    """Cumulative buckets at the source, shown as this interval's bucket counts."""
    TEXT = "text"
    """A label or state (role, status, peer address)."""


class Status(enum.StrEnum):
    """Health of one collector in one frame."""

    OK = "ok"
    STALE = "stale"  # did not answer within its time bound; rows empty this tick
    ERROR = "error"  # raised; rows empty this tick
    UNAVAILABLE = "unavailable"  # cannot run on this host (reason in error)


@dataclass(frozen=True, slots=True)
class Field:
    """One declared field of a collector.

    ``unit`` is what the number means (``ms``, ``%``, ``/s``, ``kB/s``, ``B``, ``pages/s``,
    ``s``, ``count``, or ``""`` for a pure number or text).  ``warn``/``crit`` are static
    thresholds where the seeds give one; ``higher_is_worse`` says which way they point.

    ``combine`` says how values of several intervals make the value of their union (history
    at sar's or AWR's step, ``sgmon.regrid``), where the kind alone would be wrong: ``max``
    (the longest write of the interval), ``per:F`` or ``per:F+G`` (an average per event,
    weighted by the events, rate field F or F+G: await per I/O, avg per wait), or ``q:Q:H``
    (the Q-quantile, or ``max`` bucket, of the row's histogram field H, recomputed).  Empty:
    by kind (gauges and rates the time-weighted mean, deltas and buckets the sum).

    What an exporter needs lives on the field too: ``export`` False leaves it out of the
    exposition (derivable from another metric, or churn as a label), and ``label`` names the
    label a text field is exported as (else the field's name).
    """

    name: str
    unit: str
    kind: Kind
    help: str
    warn: float | None = None
    crit: float | None = None
    higher_is_worse: bool = True
    combine: str = ""
    export: bool = True
    label: str = ""

    @property
    def column(self) -> str:
        """The field's name with its unit, as CSV columns and metric names carry it."""
        return column_name(self.name, self.unit)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, for archive metadata and the agent's schema header."""
        d: dict[str, Any] = {
            "name": self.name,
            "unit": self.unit,
            "kind": self.kind.value,
            "help": self.help,
        }
        if self.warn is not None:
            d["warn"] = self.warn
        if self.crit is not None:
            d["crit"] = self.crit
        if not self.higher_is_worse:
            d["higher_is_worse"] = False
        if self.combine:
            d["combine"] = self.combine
        if not self.export:
            d["export"] = False
        if self.label:
            d["label"] = self.label
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Field:
        """Inverse of ``to_dict``."""
        return cls(
            name=d["name"],
            unit=d["unit"],
            kind=Kind(d["kind"]),
            help=d.get("help", ""),
            warn=d.get("warn"),
            crit=d.get("crit"),
            higher_is_worse=d.get("higher_is_worse", True),
            combine=d.get("combine", ""),
            export=d.get("export", True),
            label=d.get("label", ""),
        )


_UNIT_SUFFIX = {
    "": "",
    "count": "",
    "%": "pct",
    "/s": "per_s",
    "kB/s": "kb_per_s",
    "B/s": "bytes_per_s",
    "pages/s": "pages_per_s",
    "B": "bytes",
    "kB": "kb",
    "ms": "ms",
    "us": "us",
    "s": "s",
    "segs": "",
    "Mbit/s": "mbit_per_s",
}


@functools.cache  # asked for every cell of every row a recording is read back from
def column_name(name: str, unit: str) -> str:
    """``w_await`` + ``ms`` -> ``w_await_ms``; a name that already ends in its unit is kept."""
    suffix = _UNIT_SUFFIX.get(unit, unit.replace("/", "_per_").lower())
    if not suffix or name.endswith("_" + suffix) or name == suffix:
        return name
    if unit.endswith("/s") and name.endswith("_s"):  # iostat-style names: r_s, wkb_s
        return name
    return f"{name}_{suffix}"


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened at a point in time (a log switch, a slow LGWR write)."""

    time: float
    collector: str
    kind: str
    instance: str
    text: str
    value: float | None = None

    def __post_init__(self) -> None:
        """An event's text goes to the screen, the archive and the exporter: never a password."""
        object.__setattr__(self, "text", redact(self.text))

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "time": self.time,
            "collector": self.collector,
            "kind": self.kind,
            "instance": self.instance,
            "text": self.text,
            "value": self.value,
        }


class _Pairs(tuple[Value, ...]):
    """A histogram's ``[[bound, count], ...]`` in a packed row, flattened to ``(bound, count,
    bound, count, ...)``: one object instead of a list and a list per bucket; read back as the
    list of pairs it was."""

    __slots__ = ()

    def unpacked(self) -> list[list[Value]]:
        """The list of ``[bound, count]`` pairs (a new one: no reader can change the frame)."""
        return [[self[i], self[i + 1]] for i in range(0, len(self), 2)]


def _kept(v: Value) -> Kept:
    """How packed rows keep a value that is not a float."""
    if type(v) is str:
        return sys.intern(v)
    if type(v) is list and all(type(p) is list and len(p) == 2 for p in v):
        return _Pairs(x for pair in v for x in pair)
    return v


Kept = Value | _Pairs
"""A value as packed rows keep it (``_kept``)."""


class PackedRow(Mapping[str, Value]):
    """One row of a frame kept in a history (``PackedRows``), read-only: a view, made when it is
    read, of where the row's values are in its collector's packed values."""

    __slots__ = ("_floats", "_index", "_others")

    def __init__(
        self, index: Mapping[str, int], floats: array[float], others: tuple[Kept, ...]
    ) -> None:
        self._index = index
        self._floats = floats
        self._others = others

    def __getitem__(self, name: str) -> Value:
        return self._at(self._index[name])

    def get(self, name: str, default: Any = None) -> Any:
        """The value of ``name``, or ``default`` when the row has no such field."""
        i = self._index.get(name)
        return default if i is None else self._at(i)

    def _at(self, i: int) -> Value:
        if i >= 0:
            return self._floats[i]
        v = self._others[~i]
        return v.unpacked() if isinstance(v, _Pairs) else v

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"PackedRow({dict(self)!r})"


class _Shape:
    """Where each value of a collector's packed rows is: instance -> field -> position (``>= 0``
    in the floats, ``< 0`` the others' ``~position``); shared by the rows of every frame with the
    same instances, fields and float fields.  ``key`` lists those, as ``pack_rows`` makes it."""

    __slots__ = ("__weakref__", "rows")

    def __init__(self, key: tuple[Any, ...]) -> None:
        kinds: str = key[-1]
        self.rows: dict[str, dict[str, int]] = {}
        i = nf = no = 0
        while i < len(key) - 1:
            instance, n = key[i], key[i + 1]
            index: dict[str, int] = {}
            for name in key[i + 2 : i + 2 + n]:
                if kinds[nf + no] == "f":
                    index[name] = nf
                    nf += 1
                else:
                    index[name] = ~no
                    no += 1
            self.rows[instance] = index
            i += 2 + n


_SHAPES: weakref.WeakValueDictionary[tuple[Any, ...], _Shape] = weakref.WeakValueDictionary()
"""The shapes some frame's packed rows have; a shape goes with the last frame that has it, so
instances that come and go (processes, sockets) do not grow the table."""
_NO_FLOATS: array[float] = array("d")
"""The floats of packed rows that have none (shared: packed rows are never written)."""


class PackedRows(Mapping[str, Mapping[str, Value]]):
    """A collector's rows in a frame kept by a history, read-only.  Its float values are in one
    array (8 bytes each, not a 24-byte object and a pointer in a row's own tuple), the other
    values in one tuple (strings interned: a state or a name repeats in every frame; histograms
    flattened, ``_Pairs``), and where each one is in a ``_Shape`` shared with the other frames;
    a row is a view made when read."""

    __slots__ = ("_floats", "_others", "_shape")

    def __init__(self, shape: _Shape, floats: array[float], others: tuple[Kept, ...]) -> None:
        self._shape = shape
        self._floats = floats
        self._others = others

    def __getitem__(self, instance: str) -> PackedRow:
        return PackedRow(self._shape.rows[instance], self._floats, self._others)

    def get(self, instance: str, default: Any = None) -> Any:
        """The row of ``instance``, or ``default`` when there is none."""
        index = self._shape.rows.get(instance)
        return default if index is None else PackedRow(index, self._floats, self._others)

    def __contains__(self, instance: object) -> bool:
        return instance in self._shape.rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._shape.rows)

    def __len__(self) -> int:
        return len(self._shape.rows)

    def __repr__(self) -> str:
        return f"PackedRows({ {i: dict(r) for i, r in self.items()}!r})"


def pack_rows(rows: Rows) -> Rows:
    """``rows`` packed (``PackedRows``): the same values in a fraction of the memory.  Typed as
    ``Rows`` for its readers; packed rows cannot be written, and no one writes a frame once it
    is made."""
    if isinstance(rows, PackedRows):
        return rows
    key: list[Any] = []
    kinds: list[str] = []
    floats: list[float] = []
    others: list[Kept] = []
    for instance, row in rows.items():
        key += (instance, len(row), *row)
        for v in row.values():
            if type(v) is float:
                floats.append(v)
                kinds.append("f")
            else:
                others.append(_kept(v))
                kinds.append("o")
    key.append("".join(kinds))
    shape_key = tuple(key)
    shape = _SHAPES.get(shape_key)
    if shape is None:
        shape = _SHAPES[shape_key] = _Shape(shape_key)
    packed = PackedRows(shape, array("d", floats) if floats else _NO_FLOATS, tuple(others))
    return packed  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class CollectorResult:
    """One collector's contribution to a frame."""

    status: Status
    rows: Rows = field(default_factory=dict)
    duration_ms: float | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        """A collector's error is shown, recorded and exported: never a password (a driver may
        quote its connect string)."""
        if self.error:
            object.__setattr__(self, "error", redact(self.error))

    def to_dict(self) -> dict[str, Any]:
        """JSON form (a history's packed rows as the dicts they were; a fresh frame's as is)."""
        rows = self.rows
        if isinstance(rows, PackedRows):
            rows = {i: dict(r) for i, r in rows.items()}
        return {
            "status": self.status.value,
            "duration_ms": self.duration_ms,
            "error": self.error,
            "rows": rows,
        }


@dataclass(frozen=True, slots=True)
class Frame:
    """Everything one host produced in one tick.  Treat as immutable: sinks share it."""

    host: str
    time: float  # the tick's wall-clock time, epoch seconds, on the sampled host's clock
    seq: int
    interval: float
    collectors: Mapping[str, CollectorResult]
    events: tuple[Event, ...] = ()
    role: str = ""

    def rows(self, collector: str) -> Rows:
        """Rows of one collector, empty when it is missing, stale or failed."""
        res = self.collectors.get(collector)
        return res.rows if res is not None else {}

    def value(self, collector: str, instance: str, name: str) -> Value:
        """One value or None."""
        return self.rows(collector).get(instance, {}).get(name)

    def pack(self) -> None:
        """Pack its rows in place (``pack_rows``): a frame of a history, once newer frames are
        in.  Its content does not change, so whoever holds it reads the same values."""
        for res in self.collectors.values():
            if res.rows:
                object.__setattr__(res, "rows", pack_rows(res.rows))

    def to_dict(self) -> dict[str, Any]:
        """JSON form (see the module docstring)."""
        return {
            "v": FRAME_VERSION,
            "host": self.host,
            "role": self.role,
            "time": self.time,
            "seq": self.seq,
            "interval": self.interval,
            "collectors": {k: r.to_dict() for k, r in self.collectors.items()},
            "events": [e.to_dict() for e in self.events],
        }

    def to_json(self) -> str:
        """One line of JSON (NDJSON-safe)."""
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Frame:
        """Inverse of ``to_dict``; raises ValueError on a frame of another format version."""
        if d.get("v") != FRAME_VERSION:
            raise ValueError(f"frame format version {d.get('v')!r}, expected {FRAME_VERSION}")
        return cls(
            host=d["host"],
            role=d.get("role", ""),
            time=float(d["time"]),
            seq=int(d["seq"]),
            interval=float(d["interval"]),
            collectors={
                k: CollectorResult(
                    status=Status(r["status"]),
                    rows=r.get("rows") or {},
                    duration_ms=r.get("duration_ms"),
                    error=r.get("error"),
                )
                for k, r in d["collectors"].items()
            },
            events=tuple(Event(**e) for e in d.get("events", ())),
        )

    @classmethod
    def from_json(cls, line: str) -> Frame:
        """Parse one NDJSON line."""
        return cls.from_dict(json.loads(line))


Schema = dict[str, tuple[Field, ...]]
"""Collector name -> its declared fields, for one host."""


def schema_to_dict(schema: Schema) -> dict[str, list[dict[str, Any]]]:
    """JSON form of a schema."""
    return {name: [f.to_dict() for f in fields] for name, fields in schema.items()}


def schema_from_dict(d: Mapping[str, Any]) -> Schema:
    """Inverse of ``schema_to_dict``."""
    return {name: tuple(Field.from_dict(f) for f in fields) for name, fields in d.items()}


def silence(source: str, seconds: float) -> str:
    """Why every collector of a host is stale: its host has sent nothing for ``seconds``."""
    return f"unreachable: no frames from {source} for {seconds:.0f}s"


SILENT_INTERVALS = 2
"""Intervals without a frame after which a host counts as silent: a finding, a hollow dot."""


def unheard(frame: Frame) -> bool:
    """Whether the frame stands in for a host that sent nothing: every collector stale (what a
    remote source emits for a silent agent, and the simulation for a dead host)."""
    return bool(frame.collectors) and all(
        r.status is Status.STALE for r in frame.collectors.values()
    )


def data_guard_role(frame: Frame | None, configured: str = "") -> str:
    """A host's Data Guard role: its database's own (V$DATABASE via oracle_dg), which follows a
    switchover at once, else the frame's (the configured one), else ``configured``."""
    if frame is None:
        return configured
    db = str(frame.value("oracle_dg", "db", "role") or "").lower()
    if db in ("primary", "standby"):
        return db
    return frame.role if frame.role in ("primary", "standby") else configured

"""The metric contract's names and labels: what a field is called once exposed, in which base
unit, and which label each of a collector's rows carries.

Nothing here names a collector or a field: a field's own declaration says whether it is exposed
(``Field.export``) and under which label a text field goes (``Field.label``), and its
collector's row kinds (``Collector.rows``, ``sgmon.contract.RowKind``) say which rows stand for
the whole host or database and which label the others are keyed by.
"""

from __future__ import annotations

import functools
import re

from sgmon import registry
from sgmon.collector import Collector
from sgmon.contract import RowKind, row_kind
from sgmon.model import Field, Kind

CONTRACT = "2"
"""The version of the metric contract in docs/metrics.md; raised when a name, a label or a
unit changes, and exported as ``sgmon_build_info{contract=...}``."""

DB_LABEL = "db_unique_name"
"""The identity label of the database; a whole row's field of that name reports it."""

IDENTITY = ("dg_config", DB_LABEL, "host")
"""Labels on every series: which Data Guard configuration, which database, which machine."""

RESERVED = frozenset({*IDENTITY, "instance", "job", "le", "__name__"})
"""Labels a text field never becomes: Prometheus' own, and the identity."""

GAUGE_UNIT: dict[str, tuple[str, float]] = {
    "%": ("ratio", 0.01),
    "ms": ("seconds", 1e-3),
    "us": ("seconds", 1e-6),
    "s": ("seconds", 1.0),
    "B": ("bytes", 1.0),
    "kB": ("bytes", 1024.0),
    "B/s": ("bytes_per_second", 1.0),
    "kB/s": ("bytes_per_second", 1024.0),
    "/s": ("per_second", 1.0),
    "pages/s": ("pages_per_second", 1.0),
    "Mbit/s": ("bytes_per_second", 1e6 / 8),  # bytes, Prometheus' base unit (contract 2)
}
"""A gauge's unit -> its base-unit suffix and the factor to it."""

COUNTED_UNIT: dict[str, tuple[str, float]] = {
    "/s": ("", 1.0),
    "B/s": ("bytes", 1.0),
    "kB/s": ("bytes", 1024.0),
    "ms/s": ("seconds", 1e-3),
    "%": ("seconds", 0.01),  # % of one CPU, per second of the interval: CPU seconds
    "pages/s": ("pages", 1.0),
}
"""A rate's unit -> the suffix and factor of what it counts (``_total`` follows)."""

HIST_SCALE = {"ms": 1e-3, "us": 1e-6, "s": 1.0}
"""A histogram's unit -> the factor of its bounds to seconds."""

COUNTED = (Kind.RATE, Kind.DELTA)
"""The kinds exposed as counters."""

_PID = re.compile(r"\[\d+\]$")
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_]")


def metric_stem(collector: str, f: Field) -> str:
    """``sgmon_<collector>_<field>`` with the unit spelled in the field name taken off (``r_s``,
    ``rx_kb``, ``hist``), as the base-unit suffix will say it."""
    name = f.name
    if f.unit.endswith("/s") and name.endswith("_s"):
        name = name[:-2]
    if f.unit.startswith("kB") and name.endswith("kb"):
        name = name[:-2].rstrip("_")
    if f.kind is Kind.HISTOGRAM and name.endswith("hist"):
        name = name[:-4].rstrip("_")
    return _NOT_IN_NAME.sub("_", "_".join(p for p in ("sgmon", collector, name) if p))


def _suffixed(stem: str, suffix: str) -> str:
    if not suffix or stem.endswith("_" + suffix) or (suffix == "bytes" and "bytes" in stem):
        return stem
    return f"{stem}_{suffix}"


@functools.cache  # asked for every cell of every frame
def metric_name(collector: str, f: Field) -> str | None:
    """The exposed name of a field under the contract (None: not exposed).  Counters and
    histograms are named without ``_total`` / ``_bucket``, as their families are."""
    if not f.export or f.kind is Kind.TEXT:
        return None
    stem = metric_stem(collector, f)
    if f.kind is Kind.GAUGE:
        suffix, _ = GAUGE_UNIT.get(f.unit, ("", 1.0))
        return _suffixed(stem, suffix)
    if f.kind in COUNTED:
        suffix, _ = COUNTED_UNIT.get(f.unit, ("", 1.0)) if f.kind is Kind.RATE else ("", 1.0)
        return _suffixed(stem, suffix)
    return _suffixed(stem, "seconds" if f.unit in HIST_SCALE else "")


def gauge_factor(f: Field) -> float:
    """What a gauge's value is multiplied by to be in its base unit."""
    return GAUGE_UNIT.get(f.unit, ("", 1.0))[1]


def counted_factor(f: Field) -> float:
    """What a rate's value times the interval is multiplied by to be what its counter counts."""
    return COUNTED_UNIT.get(f.unit, ("", 1.0))[1]


# --- rows -----------------------------------------------------------------------------------


@functools.cache  # one import per collector name, for the exporter's life
def row_kinds(collector: str) -> tuple[RowKind, ...]:
    """The row kinds ``collector`` declares; an unknown one's (a remote agent's plugin not
    installed here) are the base default's, as any third-party collector's are."""
    try:
        return registry.load(collector).rows
    except KeyError:
        return Collector.rows


def kind_of(collector: str, row: str) -> RowKind:
    """The kind of one of ``collector``'s rows; a row none of its kinds declares is taken as a
    third-party collector's would be (a whole row, or one labelled ``item``)."""
    kind = row_kind(row_kinds(collector), row) or row_kind(Collector.rows, row)
    assert kind is not None, "the base default's kinds end in a catch-all"
    return kind


def row_key(row: str) -> str:
    """The row as its series know it: without a PID (``RFS[5151]`` is ``RFS``)."""
    return _PID.sub("", row)


def dimension(kind: RowKind, row: str) -> tuple[str, str] | None:
    """The dimension label and value of a row of ``kind`` (None for a whole row)."""
    if kind.fixed:
        return None
    return kind.label, row_key(kind.ident(row))


def info_family(collector: str, kind: RowKind) -> str:
    """The ``*_info`` family of a row's text fields: the collector's, or a kind of its own for
    a kind told apart by a prefix (a destination, a thread), whose text fields are its own."""
    if kind.prefix:
        return f"sgmon_{collector}_{kind.label}_info"
    return f"sgmon_{collector}_info"


def info_label(collector: str, f: Field, dim: tuple[str, str] | None) -> str:
    """The label a text field becomes on ``*_info``: the one it declares (an OpenTelemetry
    name), else its name, and never a label Prometheus, the identity or the row's dimension
    already holds (a third-party collector's ``host`` field is ``<collector>_host``)."""
    name = f.label or _NOT_IN_NAME.sub("_", f.name)
    if name in RESERVED or (dim and name == dim[0]) or name.startswith("__"):
        return f"{collector}_{name.lstrip('_')}"
    return name

"""The CSV archive layout, shared by the recorder (writes it) and replay (reads it back).

Layout, like OSWatcher's: ``DIR/meta.json`` plus ``DIR/<host>/<collector>_<YYYYmmdd_HH>.csv``
(``.csv.gz`` once closed with ``--compress``) and ``DIR/<host>/events.csv``.

Columns: ``time`` (ISO 8601, UTC, with its ``+00:00`` offset, millisecond precision), ``host``,
``instance``, then the collector's declared fields in declaration order, named with their unit
(``Field.column``: ``w_await_ms``).  The header depends on the declared fields only, so it never
drifts with what a tick contained; an unknown value is an empty cell.

Histograms get one column per bucket with *fixed* bounds per unit, so the header is known before
the first sample.  A ``ms`` histogram is written in Oracle's V$EVENT_HISTOGRAM_MICRO buckets,
powers of two microseconds named in microseconds (``hist_le_1_us`` .. ``hist_le_1024_us`` ..
``hist_le_67108864_us``, i.e. 1 us to 67 s); an ``s`` histogram (V$REDO_DEST_RESP_HISTOGRAM) in
powers of two seconds up to 256 (``resp_hist_le_1_s``); each has an open ``_le_inf`` bucket.  A
source bound within 10 % below a fixed bound lands in it (11.2's 1 ms bucket in 1024 us), any
other in the next larger one (a 3 s response in ``le_4_s``), so the recorded histogram is what a
percentile needs and re-recording a replay is exact.

Values: integers as integers, other numbers rounded to 3 decimals (microseconds for ms fields).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path

from sgmon.errors import ArchiveError
from sgmon.model import Field, Kind, Value, column_name

ARCHIVE_FORMAT = 1
"""Bumped when the column layout or meta.json changes meaning; files of another format are
never appended to (a new file is started beside them)."""

FIXED_COLUMNS = ("time", "host", "instance")
EVENT_COLUMNS = ("time", "host", "collector", "kind", "instance", "text", "value", "tick")
"""``tick`` is the time of the frame that carried the event (events may be stamped later)."""
STATUS_KIND = "collector_"  # events.csv kind prefix for a collector's status change

_BOUNDS: dict[str, tuple[str, float, tuple[int, ...]]] = {
    # field unit: (column unit, column unit in field units, bounds in column units)
    "ms": ("us", 1e-3, tuple(2**k for k in range(27))),
    "us": ("us", 1.0, tuple(2**k for k in range(27))),
    "s": ("s", 1.0, tuple(2**k for k in range(9))),
}

FILE_RE = re.compile(
    r"^(?P<collector>.+)_(?P<stamp>\d{8}_\d{2}(?:\d{2})?)(?:-(?P<n>\d+))?\.csv(?P<gz>\.gz)?$"
)


def _bucket_spec(f: Field) -> tuple[str, float, tuple[int, ...]]:
    return _BOUNDS.get(f.unit, (f.unit, 1.0, tuple(2**k for k in range(17))))


def hist_bounds(f: Field) -> tuple[float | None, ...]:
    """The fixed bucket bounds of a histogram field in its unit, the open bucket last (None)."""
    _, scale, bounds = _bucket_spec(f)
    return (*(b * scale for b in bounds), None)


def field_columns(f: Field) -> list[str]:
    """The CSV column(s) of one field."""
    if f.kind is Kind.HISTOGRAM:
        unit, _, bounds = _bucket_spec(f)
        return [column_name(f"{f.name}_le_{b}", unit) for b in bounds] + [f"{f.name}_le_inf"]
    return [f.column]


def header(fields: tuple[Field, ...]) -> list[str]:
    """The whole header of a collector's table."""
    return [*FIXED_COLUMNS, *(c for f in fields for c in field_columns(f))]


def fmt_time(t: float) -> str:
    """Epoch seconds -> ``2026-11-21T14:41:01.123+00:00`` (exactly reversible to the ms)."""
    ms = round(t * 1000)
    dt = datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=(ms % 1000) * 1000)
    return dt.isoformat(timespec="milliseconds")


def parse_time(text: str) -> float:
    """Inverse of ``fmt_time`` (any ISO 8601 with an offset; no offset is taken as UTC)."""
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000) / 1000


def fmt_value(v: Value) -> str:
    """One cell: empty for unknown, integers without a point, floats to 3 decimals."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        r = round(v, 3)
        return str(int(r)) if r == int(r) and abs(r) < 1e15 else repr(r)
    return " ".join(str(v).splitlines())  # one physical line per row, whatever a message holds


def _fold(f: Field, buckets: list) -> list[int | float]:
    """Interval bucket counts folded onto the fixed bounds."""
    bounds = hist_bounds(f)
    out: list[int | float] = [0] * len(bounds)
    for bound, count in buckets:
        if not count:
            continue
        i = len(bounds) - 1
        if bound is not None:
            lim = float(bound) * 0.9
            i = next((k for k, b in enumerate(bounds[:-1]) if b is not None and b >= lim), i)
        out[i] += count
    return out


def encode_row(time: float, host: str, instance: str, row: dict, fields: tuple[Field, ...]):
    """One CSV row (list of cells) for one instance of one collector."""
    cells = [fmt_time(time), host, instance]
    for f in fields:
        v = row.get(f.name)
        if f.kind is Kind.HISTOGRAM:
            n = len(hist_bounds(f))
            if isinstance(v, list):
                cells.extend(fmt_value(c) for c in _fold(f, v))
            else:
                cells.extend([""] * n)
        else:
            cells.append(fmt_value(v))
    return cells


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        v = float(text)
        if not math.isfinite(v):
            raise ValueError(f"not a finite number: {text!r}") from None
        return v


def decode_row(
    cols: list[str], cells: list[str], fields: tuple[Field, ...]
) -> tuple[float, str, str, dict[str, Value]]:
    """Inverse of ``encode_row`` by column name (older files may lack columns).

    Raises ValueError on a malformed row; the reader skips and counts it.
    """
    if len(cells) != len(cols):
        raise ValueError(f"{len(cells)} cells for {len(cols)} columns")
    by = dict(zip(cols, cells, strict=True))
    t = parse_time(by["time"])
    row: dict[str, Value] = {}
    for f in fields:
        if f.kind is Kind.HISTOGRAM:
            names = field_columns(f)
            if not any(by.get(c) for c in names):
                continue
            row[f.name] = [
                [b, _number(by[c]) if by.get(c) else 0]
                for b, c in zip(hist_bounds(f), names, strict=True)
            ]
            continue
        text = by.get(f.column, "")
        if text == "":
            continue
        row[f.name] = text if f.kind is Kind.TEXT else _number(text)
    return t, by["host"], by["instance"], row


def period_stamp(t: float, rotate: float) -> str:
    """The file-name stamp of the rotation period holding ``t`` (UTC)."""
    start = math.floor(t / rotate) * rotate
    fmt = "%Y%m%d_%H" if rotate >= 3600 else "%Y%m%d_%H%M"
    return datetime.fromtimestamp(start, UTC).strftime(fmt)


def safe_name(name: str) -> str:
    """A host name usable as a directory name of its own inside the archive (never ``.`` or
    ``..``, which name the archive itself and its parent)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return safe if safe.strip(".") else f"_{safe}"


def data_files(host_dir: Path) -> dict[str, list[Path]]:
    """Collector -> its table files in a host directory, oldest first."""
    out: dict[str, list[Path]] = {}
    for p in sorted(host_dir.iterdir()):
        m = FILE_RE.match(p.name)
        if m and p.is_file():
            out.setdefault(m["collector"], []).append(p)
    for files in out.values():
        files.sort(key=_file_order)
    return out


def read_meta(root: Path) -> dict | None:
    """The archive's meta.json, None when there is none; ArchiveError when it is unreadable."""
    import json

    p = root / "meta.json"
    try:
        meta = json.loads(p.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ArchiveError(
            f"{p} is corrupt ({e}); move it aside (the CSV files are intact) and record again"
        ) from None
    if not isinstance(meta, dict) or "format" not in meta:
        raise ArchiveError(f"{p} is not sgmon archive metadata; use another directory")
    return meta


def write_meta(root: Path, meta: dict) -> None:
    """Replace meta.json atomically, so a crash never leaves half of it."""
    import json
    import os

    tmp = root / f".meta.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, root / "meta.json")


def _file_order(p: Path) -> tuple[str, int]:
    m = FILE_RE.match(p.name)
    assert m is not None
    return m["stamp"], int(m["n"] or 1)

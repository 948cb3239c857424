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
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sgmon.errors import ArchiveError
from sgmon.model import Field, Kind, Value, column_name
from sgmon.safefs import Dir, Refused

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


EARLIEST, LATEST = 315532800.0, 4102444800.0
"""1980 and 2100, UTC: a tick outside them (year 0001 or 9999 in a damaged file) is not one."""


def parse_time(text: str) -> float:
    """Inverse of ``fmt_time`` (any ISO 8601 with an offset; no offset is taken as UTC);
    ValueError for a time no recording can hold (before 1980, from 2100)."""
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        t = round(dt.timestamp() * 1000) / 1000
    except OverflowError as e:
        raise ValueError(str(e)) from None
    if not EARLIEST <= t < LATEST:
        raise ValueError(f"{text}: not a time a recording holds")
    return t


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
    # one physical line per row whatever a message holds, and no NUL (the csv reader refuses it)
    return " ".join(str(v).splitlines()).replace("\0", "")


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
    cells = [fmt_time(time), fmt_value(host), fmt_value(instance)]
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


NONNEGATIVE = frozenset(("ms", "us", "s", "count"))
"""Units no value may be negative in: a duration, a count (a negative one is damage)."""


def _possible(text: str, nonnegative: bool) -> int | float:
    """A cell's number; ValueError for one no source measures (inf, nan, a negative duration
    or count)."""
    v = _number(text)
    if nonnegative and v < 0:
        raise ValueError(f"negative: {text}")
    return v


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``), for names read from a file that
    a terminal will print: an ESC sequence in a host name must not reach the screen raw."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def decode_row(
    cols: list[str],
    cells: list[str],
    fields: tuple[Field, ...],
    impossible: list[str] | None = None,
) -> tuple[float, str, str, dict[str, Value]]:
    """Inverse of ``encode_row`` by column name (older files may lack columns).

    Raises ValueError on a malformed row; the reader skips and counts it.  A value no source
    measures (inf, a negative duration, count or bucket) is left out of the row and its column
    appended to ``impossible``, so it never reaches a finding.
    """
    if len(cells) != len(cols):
        raise ValueError(f"{len(cells)} cells for {len(cols)} columns")
    by = dict(zip(cols, cells, strict=True))
    t = parse_time(by["time"])
    row: dict[str, Value] = {}
    for f in fields:
        try:
            if f.kind is Kind.HISTOGRAM:
                names = field_columns(f)
                if any(by.get(c) for c in names):
                    row[f.name] = [
                        [b, _possible(by[c], True) if by.get(c) else 0]
                        for b, c in zip(hist_bounds(f), names, strict=True)
                    ]
                continue
            text = by.get(f.column, "")
            if text != "":
                row[f.name] = (
                    printable(text)
                    if f.kind is Kind.TEXT
                    else _possible(text, f.unit in NONNEGATIVE)
                )
        except ValueError:
            if impossible is None:
                raise
            impossible.append(f.column)
    return t, printable(by["host"]), printable(by["instance"]), row


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


LINE_MAX = 1 << 20
"""Bytes of one CSV line a reader holds: a longer one (a 200 MB field, 200 M commas) is
passed over in chunks and counted, never read whole."""


class Lines:
    """(line number, text) of the complete lines of a plain or gzipped archive file, read in
    chunks with memory bounded by ``LINE_MAX``; the lines passed over are counted in ``lost``
    (too long, or a torn last line without its newline), the first at ``lost_at``; ``cut`` says
    why a compressed file ended early (cut short, or not gzip at all)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n = 0
        self.lost = 0
        self.lost_at = 0
        self.cut: str | None = None

    def _lose(self) -> None:
        self.n += 1
        self.lost += 1
        self.lost_at = self.lost_at or self.n

    def __iter__(self) -> Iterator[tuple[int, str]]:
        import gzip
        import zlib

        from sgmon.readers.regular import open_regular

        pending = b""
        over = False  # inside a line already longer than LINE_MAX: skipped to its end
        raw = open(open_regular(self.path, follow=False), "rb")  # noqa: SIM115 - closed with fh below
        with gzip.GzipFile(fileobj=raw) if self.path.suffix == ".gz" else raw as fh, raw:
            while True:
                try:
                    block = fh.read(LINE_MAX)
                except (EOFError, OSError, zlib.error) as e:
                    self.cut = str(e) or type(e).__name__  # keep what decompressed
                    block = b""
                if not block:
                    break
                parts = block.split(b"\n")
                last = parts.pop()
                if parts:
                    first = parts[0]
                    if over or len(pending) + len(first) > LINE_MAX:
                        self._lose()
                        over = False
                        yield from self._decoded(parts[1:])
                    else:
                        parts[0] = pending + first
                        yield from self._decoded(parts)
                    pending = b""
                if not over:
                    pending += last
                    if len(pending) > LINE_MAX:
                        over, pending = True, b""
        if pending or over:
            self._lose()

    def _decoded(self, lines: list[bytes]) -> Iterator[tuple[int, str]]:
        """Each line as text; one that is not UTF-8 (cut inside a character, or not written
        by sgmon) is passed over and counted, never read with a replacement character."""
        for line in lines:
            if len(line) > LINE_MAX:
                self._lose()
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                self._lose()
                continue
            self.n += 1
            yield self.n, text


def header_of(path: Path) -> list[str]:
    """The columns of an archive table, from its first line (``[]`` when it has none or is no
    file: reading it says why)."""
    try:
        for _, line in Lines(path):
            return line.split(",")
    except OSError:
        pass
    return []


def data_files(host_dir: Path) -> dict[str, list[Path]]:
    """Collector -> its table files in a host directory, oldest first: whatever bears a
    table's name, so that a symlink, a FIFO or a directory planted there is refused with a
    note when read (``Lines``), never read through."""
    out: dict[str, list[Path]] = {}
    for p in sorted(host_dir.iterdir()):
        m = FILE_RE.match(p.name)
        if m and _entry(p):
            out.setdefault(m["collector"], []).append(p)
    for files in out.values():
        files.sort(key=_file_order)
    return out


EVENTS_RE = re.compile(r"^events(?:-(?P<n>\d+))?\.csv$")
"""``events.csv``, and ``events-2.csv`` ... where the recorder wrote when the first was not a
file it could write (a symlink or a FIFO planted there: it is left alone)."""


def event_files(host_dir: Path) -> list[Path]:
    """A host directory's event files, in the order the recorder opened them (as
    ``data_files``: anything so named, refused when read if not a file)."""
    found = [(m, p) for p in host_dir.iterdir() if (m := EVENTS_RE.match(p.name)) and _entry(p)]
    return [p for m, p in sorted(found, key=lambda mp: int(mp[0]["n"] or 1))]


def _entry(p: Path) -> bool:
    """Whether ``p`` is (still) a directory entry."""
    try:
        p.lstat()
    except OSError:
        return False
    return True


META = "meta.json"
"""The archive's own file beside the host directories: no host may be named so."""
META_MAX = 16 << 20
"""Bytes of meta.json read: sgmon writes a few kilobytes per host."""


def read_meta(root: Path, at: Dir | None = None) -> dict | None:
    """The archive's meta.json, None when there is none; ArchiveError when it is unreadable
    (corrupt, nested beyond reason, huge, or not an object with a format and a hosts table).
    ``at``: the archive's directory held by the recorder, in which a meta.json that is not a
    regular file (a symlink to a file elsewhere, a FIFO) is refused, never read through."""
    import json

    from sgmon.readers.regular import open_regular

    p = root / META
    try:
        if at is None:
            with open(open_regular(p), "rb") as fh:
                raw = fh.read(META_MAX + 1)
        else:
            raw = at.read(META, META_MAX + 1)
        if len(raw) > META_MAX:
            raise ValueError(f"larger than {META_MAX >> 20} MB")
        meta = json.loads(raw)
    except FileNotFoundError:
        return None
    except Refused as e:
        raise ArchiveError(
            f"{e}, not sgmon archive metadata; move it aside (the CSV files are intact) and "
            "record again"
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e)
        raise ArchiveError(
            f"{p} is corrupt ({why}); move it aside (the CSV files are intact) and record again"
        ) from None
    if (
        not isinstance(meta, dict)
        or "format" not in meta
        or not isinstance(meta.get("hosts", {}), dict)
    ):
        raise ArchiveError(f"{p} is not sgmon archive metadata; use another directory")
    return meta


def host_specs(meta: dict, notes: list[str]) -> dict[str, dict[str, Any]]:
    """Host -> its (dir, role, steps, schema) from meta.json, each piece checked: a host or
    collector entry that is damaged is left out with a note, never a traceback.  Host names
    come back with control characters escaped (``printable``); ``dir`` is always a plain name
    inside the archive."""
    out: dict[str, dict[str, Any]] = {}
    for raw, h in meta.get("hosts", {}).items():
        name = printable(str(raw))
        if not isinstance(h, dict):
            notes.append(f"meta.json: host {name}: not a table; left out")
            continue
        d = h.get("dir", raw)
        if not isinstance(d, str) or safe_name(d) != d or d in (".", ".."):
            notes.append(
                f"meta.json: host {name}: its directory {printable(str(d))!r} is not a name "
                "in the archive; left out"
            )
            continue
        schema: dict[str, tuple[Field, ...]] = {}
        collectors = h.get("collectors", {})
        for c, spec in collectors.items() if isinstance(collectors, dict) else ():
            try:
                schema[str(c)] = tuple(_field(f) for f in spec["fields"])
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                notes.append(
                    f"meta.json: host {name} collector {printable(str(c))}: "
                    f"damaged field list ({type(e).__name__}: {printable(str(e))[:80]}); left out"
                )
        role = h.get("role", "")
        out[name] = {
            "dir": d,
            "role": printable(role) if isinstance(role, str) else "",
            "steps": h.get("steps") or {"": h.get("interval")},
            "schema": schema,
        }
    return out


_FIELD_TYPES = {
    "name": (str,),
    "unit": (str,),
    "kind": (str,),
    "help": (str,),
    "warn": (int, float, type(None)),
    "crit": (int, float, type(None)),
    "higher_is_worse": (bool,),
    "combine": (str,),
}


def _field(d: object) -> Field:
    """A field of meta.json, each key of the type sgmon writes (a threshold "abc" or a unit 5
    would only fail later, in the analysis); ValueError or KeyError otherwise."""
    if not isinstance(d, dict):
        raise ValueError("a field is not a table")
    for key, types in _FIELD_TYPES.items():
        if key in d and not isinstance(d[key], types):
            raise ValueError(f"{key} is {type(d[key]).__name__}")
    for key in ("warn", "crit"):
        if isinstance(d.get(key), float) and not math.isfinite(d[key]):
            raise ValueError(f"{key} is {d[key]}")
    return Field.from_dict(d)


def valid_step(value: object) -> float | None:
    """A sampling step from meta.json, None when it is no step (-5, 0, inf, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if math.isfinite(v) and 0.01 <= v <= 86400 else None


def write_meta(at: Dir, meta: dict) -> None:
    """Replace meta.json atomically and durably (a temporary file of a name nobody could plant,
    flushed, renamed over it), so neither a crash nor a power cut leaves half of it."""
    import json

    at.write_replace(META, (json.dumps(meta, indent=1, sort_keys=False) + "\n").encode(), True)


def _file_order(p: Path) -> tuple[str, int]:
    m = FILE_RE.match(p.name)
    assert m is not None
    return m["stamp"], int(m["n"] or 1)

"""Parsing and formatting of durations and numbers, shared by the CLI, the sinks and the TUI."""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo

MIN_INTERVAL, MAX_INTERVAL = 0.1, 60.0
"""The tick intervals the engine keeps (seconds): the config checks against the same bounds."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def cut(text: str, most: int = 40) -> str:
    """``text`` as an error message quotes it: cut short, as a value may be huge."""
    return text if len(text) <= most else text[: most - 3] + "..."


def parse_duration(text: str | float | int) -> float:
    """``"500ms"``, ``"1s"``, ``"10m"``, ``"2h"``, ``"1d"`` or plain seconds -> seconds.

    Raises ValueError with a message that shows the accepted forms.
    """
    if isinstance(text, int | float):
        return float(text)
    m = _DURATION.match(text)
    if not m:
        raise ValueError(
            f"bad duration {cut(text)!r}: use e.g. 500ms, 1s, 10m, 2h or plain seconds"
        )
    return float(m.group(1)) * _SCALE[m.group(2)]


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(i?[bB])?\s*$")
_SIZE_SCALE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str | int) -> int:
    """``"8k"``, ``"1M"``, ``"4096"`` -> bytes (binary multiples, as oratcptest uses)."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"bad size {cut(text)!r}: use e.g. 512, 8k, 1M")
    return int(float(m.group(1)) * _SIZE_SCALE[m.group(2).lower()])


def fmt_num(v: float | int | None, width: int = 0) -> str:
    """Compact human number: 3 significant figures, k/M/G suffix past 10,000, '-' for unknown."""
    if v is None:
        s = "-"
    elif isinstance(v, (int, float)):  # a tuple: isinstance with a union is slower
        a = abs(v)
        if a >= 1e10:
            s = f"{v / 1e9:.0f}G"
        elif a >= 1e7:
            s = f"{v / 1e6:.0f}M"
        elif a >= 1e4:
            s = f"{v / 1e3:.0f}k"
        elif a >= 100 or v == int(v):
            s = f"{v:.0f}"
        elif a >= 10:
            s = f"{v:.1f}"
        else:
            s = f"{v:.2f}"
    else:
        s = str(v)
    return s.rjust(width) if width else s


def parse_instant(text: str, reference: float, utc: bool = True) -> float:
    """An instant a person types: ``2026-11-24T10:31:02`` (ISO, with or without an offset),
    ``10:31:02`` or ``10:31`` on the day of ``reference``, or ``+5m`` / ``-30s`` from it.

    Clock times are UTC with ``utc`` (what recordings and replay print) or the local zone (what
    the dashboard shows).  ValueError says what to type.
    """
    from datetime import UTC, datetime

    s = text.strip()
    if s[:1] in "+-" and len(s) > 1:
        sign = -1.0 if s[0] == "-" else 1.0
        return reference + sign * parse_duration(s[1:])
    zone = UTC if utc else None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        dt = None
    if dt is not None and ("-" in s[:10] or "T" in s):
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=zone) if zone else dt.astimezone()
        return dt.timestamp()
    for pattern in ("%H:%M:%S", "%H:%M"):
        try:
            hms = datetime.strptime(s, pattern)
        except ValueError:
            continue
        day = datetime.fromtimestamp(reference, zone) if zone else datetime.fromtimestamp(reference)
        at = day.replace(hour=hms.hour, minute=hms.minute, second=hms.second, microsecond=0)
        return at.timestamp()
    where = "UTC" if utc else "local time"
    raise ValueError(
        f"{cut(text)!r}: use 10:31:02 ({where}), 2026-11-24T10:31:02+00:00, or +5m / -30s"
    )


def bdp_bytes(bytes_per_s: float, rtt_ms: float) -> float:
    """Bandwidth-delay product: the bytes a link of that rate holds in flight over one round
    trip (seed 000 and oratcptest size socket buffers at 3 x this)."""
    return bytes_per_s * rtt_ms / 1000.0


def mbit_bytes(mbit_s: float) -> float:
    """A link speed in Mbit/s (ethtool's, netdev's ``speed``) as bytes per second."""
    return mbit_s * 1e6 / 8


def fmt_step(seconds: float) -> str:
    """A sampling step as a reader says it: ``30-second``, ``1-minute``, ``15-minute``."""
    for size, unit in ((3600.0, "hour"), (60.0, "minute")):
        if seconds >= size and seconds % size < 1:
            return f"{fmt_num(seconds / size)}-{unit}"
    return f"{fmt_num(seconds)}-second"


def parse_offset(text: str) -> float:
    """A UTC offset ``+02:00`` / ``-05:30`` / ``+2`` -> seconds east of UTC (the database host's
    zone, for history kept in its local time)."""
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    h, _, m = s.lstrip("+-").partition(":")
    if not h.isdigit() or (m and not m.isdigit()) or int(h) > 14 or int(m or 0) > 59:
        raise ValueError(f"--tz {cut(text)!r}: use the offset from UTC such as +02:00 or -05:30")
    return sign * (int(h) * 3600 + int(m or 0) * 60)


def fmt_utc(t: float) -> str:
    """``2026-11-24 13:20:13``: an instant in UTC to the second, as reports and stderr say it."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


FIELD_LABELS = {
    "aqu_sz": "aqu-sz",
    "util": "%util",
    "r_s": "r/s",
    "w_s": "w/s",
    "rkb_s": "rkB/s",
    "wkb_s": "wkB/s",
    "runq_sz": "runq-sz",
    "transport_lag": "transport lag",
    "apply_lag": "apply lag",
    "datum_age": "lag datum age",
    "thread_lag": "thread lag",
    "max_write": "longest write",
    "slow_writes": "slow writes",
    "retrans_segs": "segments resent",
}
"""A field as iostat, sar or DGMGRL name it, for the text a DBA reads (titles, reasons)."""


def field_label(name: str) -> str:
    """``aqu-sz`` for ``aqu_sz``: the tool's own name where the archive's column differs."""
    return FIELD_LABELS.get(name, name)


def plural(n: float | None, noun: str) -> str:
    """``1 segment``, ``3 segments``."""
    return f"{fmt_num(n)} {noun}{'' if n == 1 else 's'}"


_ZONE_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


class ZoneError(ValueError):
    """A timezone option that names no zone."""


def zone_named(text: str) -> _dt.tzinfo:
    """``America/Chicago``, ``UTC`` or ``-06:00`` (as DBTIMEZONE prints it) -> tzinfo; ZoneError
    for anything else (an offset of a day or more, a name in the wrong case, a path)."""
    m = _ZONE_OFFSET.match(text.strip())
    if m and int(m.group(2)) < 24 and int(m.group(3)) < 60:
        sign = -1 if m.group(1) == "-" else 1
        return _dt.timezone(sign * _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        if m or text.strip().startswith(("/", ".")):
            raise ValueError(text)
        return zoneinfo.ZoneInfo(text.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as e:  # OSError: a huge name
        raise ZoneError(
            f'timezone = "{cut(text)}" names no zone: use an IANA name ("Europe/Paris") or an '
            'offset ("-06:00")'
        ) from e

"""Trace timestamps to epoch seconds, in the database instance's zone, not sgmon's.

12.2 onward stamps carry their offset (``*** 2023-01-29T01:00:52.031166-06:00 (CDB$ROOT(1))``,
jkstill/lgwr-trace-parse) and keep it.  11.2 stamps (``*** 2015-03-10 14:08:53.050``) are the
instance's local time, which is the zone the instance was started in: sgmon may run with another
``TZ`` (a user's shell, a systemd unit), so the zone comes from the config
(``[collectors.oracle_trace] timezone``), else the ``TZ`` in the environment of the traced process
itself (``/proc/<pid>/environ``, the pid being in the file name), else the host's
``/etc/localtime`` (what an instance started without ``TZ`` uses).
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo

_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


class ZoneError(ValueError):
    """A timezone option that names no zone."""


def zone_named(text: str) -> _dt.tzinfo:
    """``America/Chicago``, ``UTC`` or ``-06:00`` (as DBTIMEZONE prints it) -> tzinfo."""
    m = _OFFSET.match(text.strip())
    if m:
        sign = -1 if m.group(1) == "-" else 1
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(sign * delta)
    try:
        return zoneinfo.ZoneInfo(text.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise ZoneError(
            f'timezone = "{text}" names no zone: use an IANA name ("Europe/Paris") or an '
            'offset ("-06:00")'
        ) from e


def process_zone(pid: int) -> _dt.tzinfo | None:
    """The zone in the ``TZ`` of a running process (the traced one), when readable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    for item in env:
        if item.startswith(b"TZ="):
            try:
                return zone_named(item[3:].decode().lstrip(":"))
            except (ZoneError, UnicodeDecodeError):
                return None
    return None


def host_zone() -> _dt.tzinfo:
    """The host's zone from /etc/localtime, whatever sgmon's own ``TZ`` says."""
    try:
        with open("/etc/localtime", "rb") as f:
            return zoneinfo.ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return _dt.UTC


def parse_ts(text: str, zone: _dt.tzinfo) -> float:
    """A trace timestamp -> epoch seconds; ``zone`` applies only to a stamp without offset."""
    t = _dt.datetime.fromisoformat(text.replace(" ", "T", 1))
    if t.tzinfo is None:
        t = t.replace(tzinfo=zone)
    return t.timestamp()

"""Trace timestamps to epoch seconds, in the database instance's zone, not sgmon's.

12.2 onward stamps carry their offset (``*** 2023-01-29T01:00:52.031166-06:00 (CDB$ROOT(1))``,
jkstill/lgwr-trace-parse) and keep it.  11.2 stamps (``*** 2015-03-10 14:08:53.050``) are the
instance's local time, which is the zone the instance was started in: sgmon may run with another
``TZ`` (a user's shell, a systemd unit), so the zone comes from the config
(``[collectors.oracle_trace] timezone``), else the ``TZ`` in the environment of the traced process
itself (``/proc/<pid>/environ``, the pid being in the file name) *when that pid is still the
Oracle process the file names* (its ``comm`` is ``ora_<proc>_<sid>``: a trace copied from another
host, or a pid reused since, would otherwise lend an unrelated process's zone), else the host's
``/etc/localtime`` (what an instance started without ``TZ`` uses), said once in a note.
"""

from __future__ import annotations

import datetime as _dt
import zoneinfo

from sgmon.units import ZoneError as ZoneError  # where the trace reader finds it
from sgmon.units import zone_named

COMM_LEN = 15
"""Characters of a process name the kernel keeps in /proc/<pid>/comm."""


def is_process(pid: int, sid: str, proc: str) -> bool:
    """Whether ``pid`` runs the Oracle process ``proc`` of instance ``sid``: background
    processes name themselves ``ora_<proc>_<sid>`` (``ora_lgwr_PROD``, cut to 15 characters in
    comm), a dedicated server such as RFS runs as ``oracle<sid>``."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            comm = f.read().decode("utf-8", "replace").strip()
    except OSError:
        return False
    wanted = (f"ora_{proc}_{sid}", f"oracle{sid}")
    return any(comm.lower() == w[:COMM_LEN].lower() for w in wanted)


def process_zone(pid: int) -> _dt.tzinfo | None:
    """The zone in the ``TZ`` of a running process (the traced one: check ``is_process``
    first), when readable."""
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
    try:
        return t.timestamp()
    except OverflowError as e:  # 0001-01-01T00:00:00+14:00 is before year 1 in UTC
        raise ValueError(f"{text}: {e}") from None

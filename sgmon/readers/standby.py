"""What a standby's Data Guard views say, as values: V$DATAGUARD_STATS's lags (INTERVAL DAY TO
SECOND text) and how old their datum is, redo apply's state and each redo thread's RFS position
(the rows of V$DATAGUARD_PROCESS from 12.2, V$MANAGED_STANDBY before: name, status, thread,
sequence, block), and how fast those positions move.
"""

from __future__ import annotations

import re
from collections import deque
from datetime import datetime
from itertools import pairwise
from typing import Any

REDO_BLOCK = 512
"""Bytes per BLOCK# of an RFS row (V$MANAGED_STANDBY: "512-byte blocks")."""

_LAG = re.compile(r"^\s*([+-])?(\d+) (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?\s*$")


def parse_lag(value: str | None) -> float | None:
    """``'+00 00:00:03'`` (INTERVAL DAY TO SECOND as text) -> 3.0; None when empty or odd."""
    if not value:
        return None
    m = _LAG.match(str(value))
    if not m:
        return None
    sign, days, h, mi, sec, frac = m.groups()
    total = int(days) * 86400 + int(h) * 3600 + int(mi) * 60 + int(sec) + float(f"0.{frac or 0}")
    return -total if sign == "-" else total


_STAMPS = ("%m/%d/%Y %H:%M:%S", "%d-%b-%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S")
"""TIME_COMPUTED / DATUM_TIME as 11g+ print them, as 10g did, and as ISO."""


def _stamp(text: object) -> datetime | None:
    """A TIME_COMPUTED or DATUM_TIME text as a (naive, the standby's local) datetime."""
    for fmt in _STAMPS:
        try:
            return datetime.strptime(str(text).strip(), fmt)
        except ValueError:
            continue
    return None


def datum_age(computed: object, datum: object) -> float | None:
    """Seconds between when a lag was computed and when its datum arrived (both the standby's
    local time, so no clock of sgmon's enters); None when either is missing or unreadable."""
    a, b = _stamp(computed), _stamp(datum)
    return None if a is None or b is None else max(0.0, (a - b).total_seconds())


def rfs_rate(path: deque[tuple[float, Any, Any]]) -> float | None:
    """Bytes per second a thread's RFS moved over its recent positions, counting only the
    intervals within one log (across a switch the old log's tail is unknown without its size);
    None until two positions in one log are known."""
    secs = blocks = 0.0
    for (t0, s0, b0), (t1, s1, b1) in pairwise(path):
        if s0 == s1 and t1 > t0 and isinstance(b0, int | float) and isinstance(b1, int | float):
            secs += t1 - t0
            blocks += b1 - b0
    return max(0.0, blocks) * REDO_BLOCK / secs if secs else None


def apply_state(apply: list[tuple[Any, ...]]) -> str:
    """Redo apply's state from the apply processes' rows: MRP's action when it applies a log,
    else its status, else "not running"."""
    states = [str(st or "") for name, st, *_ in apply if str(name).upper().startswith("MRP")]
    running = [x for x in states if x.upper() == "APPLYING_LOG"]
    return (running or states or ["not running"])[0]


def rfs_positions(apply: list[tuple[Any, ...]]) -> dict[Any, tuple[Any, Any]]:
    """Thread -> the furthest (sequence, block) its RFS rows are at (a gap fetch lags behind
    the thread's live RFS)."""
    rfs: dict[Any, tuple[Any, Any]] = {}
    for name, _st, thread, seq, block in apply:
        if str(name).upper().startswith("RFS") and thread and seq is not None:
            at = (seq, block or 0)
            rfs[thread] = max(rfs.get(thread, at), at)
    return rfs

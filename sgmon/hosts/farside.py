"""What comes from the far side of an ssh host is untrusted input: its clocks, lengths, lines and
words are bounded and checked here before anything else reads them.

A remote host whose clock, shell or program has gone wrong costs that host its figures and one
line on stderr a minute at most; never another host's tick, the recording, or this machine's
memory (every buffer below has a size, and what would not fit is counted, not kept).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import IO

from sgmon.archive import printable
from sgmon.errors import redact
from sgmon.model import CollectorResult, Event, Rows, Schema, Value, schema_from_dict
from sgmon.units import fmt_utc

Message = tuple[bytes, bytes]
"""What a reader thread hands the session: a kind and its payload."""

CLOCK_SLACK = 86400.0
"""A far clock more than a day from this machine's is not a clock the figures can be placed by:
a tick, a frame or a pong stamped so is refused."""
STDERR_LINE = 4096
"""Bytes of one far-side stderr line kept; the rest of a longer line is read and dropped."""
AGENT_LINE = 4 << 20
"""Bytes of one agent line (one frame's JSON, tens of kB); a longer line is skipped whole."""
DRAIN = 64 << 10
"""Bytes read at a time from the rest of a line too long to keep."""
SHOWN = 300
"""Characters of a far-side line shown in one note."""
INBOX = 16 << 20
"""Bytes of messages waiting for the session: beyond it the reader waits, and so does the far
side's write (back-pressure, not memory)."""
NOTE_EVERY = 60.0
"""Seconds between two notes of the same far-side line (the repeats are counted)."""
DISTINCT = 8
"""Distinct far-side lines said per NOTE_EVERY; more are counted and said as a number."""


def far_text(raw: bytes | str, most: int = SHOWN) -> str:
    """A far-side string fit for a terminal or a log: decoded, cut to ``most`` characters, every
    control or formatting character escaped (``\\x1b``), anything password-like redacted."""
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    text = text.strip()
    cut = len(text) > most
    return redact(printable(text[:most])) + ("…" if cut else "")


def stamp(t: float) -> str:
    """A far-side time as a date where it is one (``9999-12-31 23:59:59 UTC``, as sgmon says an
    instant), else as the number it is (``nan``, ``1e+300``)."""
    try:
        return f"{fmt_utc(t)} UTC"
    except (ValueError, OverflowError, OSError):
        return repr(t)


def plausible(t: float, now: float) -> bool:
    """Whether a far-side wall clock reading is within a day of ours (NaN and ±inf are not)."""
    return math.isfinite(t) and abs(t - now) <= CLOCK_SLACK


BAD_HEADER = "a header from the agent that sgmon cannot read dropped"
"""The note (and its key) for an agent header ``agent_header`` refuses."""
UNTIL_HEADER = (
    "this host's frames are not read until one it can read comes (is the sgmon there of "
    "another version?)"
)


def agent_header(d: dict, name: str, interval: float) -> tuple[str, Schema, float]:
    """What an agent's header says: the far host whose frames are ``name``'s (that one, or
    the first it names), its fields, its interval (``interval`` if it gives none).
    ValueError, saying what is wrong, for a header none of that can be read from."""
    hosts, schemas = d.get("hosts"), d.get("schemas", {})
    listed = hosts if isinstance(hosts, list) else []
    names = [h["name"] for h in listed if isinstance(h, dict) and isinstance(h.get("name"), str)]
    if not names or not isinstance(schemas, dict):
        raise ValueError("no list of hosts" if not names else "its fields are not a table")
    remote = name if name in names else names[0]
    try:
        schema = schema_from_dict(schemas.get(remote, {}))
    except (KeyError, ValueError, TypeError, AttributeError):
        raise ValueError("a field it declares is not one sgmon knows") from None
    every = d.get("interval", interval)
    if not isinstance(every, int | float) or not 0.01 <= every <= 3600:
        raise ValueError("its interval is not a number of seconds from 0.01 to 3600")
    return remote, schema, float(every)


NOT_A_NUMBER = (
    "a value from the far side that is not a number or a text (NaN, inf, a table) dropped"
)
"""The note (and its key) for the values ``finite`` drops."""
INT_MAX = 1 << 63
"""The largest integer a far value may be (a 64-bit counter's)."""


def _value(v: object) -> bool:
    """Whether ``v`` is a value a row may hold: a finite number, a text, unknown, or a
    histogram's list of such."""
    if v is None or isinstance(v, str):
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return abs(v) < INT_MAX
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_value(x) for x in v)
    return False


def _row(row: dict) -> tuple[dict[str, Value], int]:
    """A far row with each value that is not one (``_value``) unknown, and how many were."""
    kept = {str(k): v if _value(v) else None for k, v in row.items()}
    return kept, sum(1 for v in row.values() if not _value(v))


def _event(e: Event) -> Event | None:
    """A far event with its value dropped if it is no number; None when its time or its
    words are not a time and words."""
    words = (e.collector, e.kind, e.instance, e.text)
    timed = isinstance(e.time, int | float) and not isinstance(e.time, bool) and _value(e.time)
    if not timed or not all(isinstance(w, str) for w in words):
        return None
    if not _value(e.value) or isinstance(e.value, str | list):
        return Event(e.time, e.collector, e.kind, e.instance, e.text, None)
    return e


def finite(
    results: Mapping[str, CollectorResult], events: tuple[Event, ...]
) -> tuple[dict[str, CollectorResult], tuple[Event, ...], int]:
    """A far frame's results and events with every value that is not a finite number, a
    text or a histogram dropped (a row's value unknown, a row that is no table left out, an
    event's value None, an event at no time left out), and how many were: the sinks, the
    analysis and the exporter meet only what a collector of sgmon's could have sent."""
    bad = 0
    out: dict[str, CollectorResult] = {}
    for name, r in results.items():
        rows: Rows = {}
        for inst, row in (r.rows if isinstance(r.rows, dict) else {}).items():
            if isinstance(row, dict):
                rows[str(inst)], n = _row(row)
                bad += n
            else:
                bad += 1
        bad += not isinstance(r.rows, dict)
        took = (
            r.duration_ms
            if _value(r.duration_ms) and not isinstance(r.duration_ms, str | list)
            else None
        )
        out[name] = CollectorResult(r.status, rows, took, r.error)
    kept = [_event(e) for e in events]
    bad += sum(1 for e, k in zip(events, kept, strict=True) if k is not e)
    return out, tuple(k for k in kept if k is not None), bad


class Notes:
    """A host's far-side notes: each said once, then its repeats counted and said with their
    count at most every NOTE_EVERY seconds (``… (repeated 2,031 times)``); beyond DISTINCT new
    lines in that time, only their number.  A flood of 20,000 distinct lines is a few lines."""

    def __init__(self, warn: Callable[[str], None], every: float = NOTE_EVERY) -> None:
        self.warn = warn
        self.every = every
        self._repeats: dict[str, int] = {}
        self._hidden = 0
        self._since = time.monotonic()

    def say(self, text: str, key: str | None = None) -> None:
        """Say ``text`` unless its ``key`` (the text itself by default: a phrase without the
        changing figures) was said in this period; then count it."""
        self.tick()
        key = text if key is None else key
        if key in self._repeats:
            self._repeats[key] += 1
        elif len(self._repeats) >= DISTINCT:
            self._hidden += 1
        else:
            self._repeats[key] = 0
            self.warn(text)

    def tick(self) -> None:
        """At the end of a period, say what was counted."""
        if time.monotonic() - self._since >= self.every:
            self.flush()

    def flush(self) -> None:
        """Say the counts now, and start a new period."""
        for key, n in self._repeats.items():
            if n:
                self.warn(f"{key} (repeated {n:,} time{'s' if n > 1 else ''})")
        if self._hidden:
            self.warn(f"{self._hidden:,} more distinct line(s) from the far side not shown")
        self._repeats.clear()
        self._hidden = 0
        self._since = time.monotonic()


def bounded_lines(stream: IO[bytes], most: int, put: Callable[[bytes | None], None]) -> int:
    """Copy lines from a pipe to ``put`` (``None`` at the end), each at most ``most`` bytes: of a
    longer line, ``put`` gets its first ``most`` bytes, marked by ending without a newline, and
    the rest is read and dropped.  Returns how many lines were that long."""
    long = 0
    try:
        while line := stream.readline(most):
            put(line)
            if len(line) < most or line.endswith(b"\n"):
                continue
            long += 1
            while (rest := stream.readline(DRAIN)) and not rest.endswith(b"\n"):
                pass
    except (OSError, ValueError):
        pass
    put(None)
    return long


class Inbox:
    """The queue from a reader thread to the session, bounded in bytes: a reader ahead of the
    session waits (and with it the far side's writes), so a flood costs no memory here."""

    def __init__(self, most: int = INBOX) -> None:
        self.most = most
        self._items: deque[Message | None] = deque()
        self._bytes = 0
        self._closed = False
        self._cv = threading.Condition()

    def put(self, msg: Message | None) -> None:
        """Queue a message (None: the end), waiting while the queue is full; dropped once
        closed."""
        with self._cv:
            while msg is not None and self._bytes >= self.most and not self._closed:
                self._cv.wait(0.5)
            if self._closed:
                return
            self._items.append(msg)
            self._bytes += len(msg[1]) if msg is not None else 0
            self._cv.notify_all()

    def get(self, timeout: float) -> Message | None:
        """The next message; TimeoutError when none came within ``timeout``."""
        with self._cv:
            if not self._items and not self._cv.wait_for(lambda: self._items, timeout):
                raise TimeoutError
            msg = self._items.popleft()
            self._bytes -= len(msg[1]) if msg is not None else 0
            self._cv.notify_all()
            return msg

    def close(self) -> None:
        """The session is over: a waiting reader returns, and nothing more is kept."""
        with self._cv:
            self._closed = True
            self._items.clear()
            self._bytes = 0
            self._cv.notify_all()


class Pace:
    """Which ticks the host's collectors read: one per interval of this machine's time axis
    (the slot the tick's time, placed by the clock offset, rounds to, as a local host's ticks
    fall on its boundaries), and on average at most 1.5 per interval of ours (with a burst of
    BURST, so a backlog after a pause here is read whole).  A far side ticking faster, honest
    or not, costs this machine no more than one that does not."""

    BURST = 10.0

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._tokens = self.BURST
        self._at = time.monotonic()
        self._slot: int | None = None
        self._offset = 0.0

    def take(self, local_time: float, offset: float = 0.0) -> bool:
        """Whether a tick stamped ``local_time`` (on this machine's axis, placed by the clock
        ``offset``) is read here: not when one of its slot was, unless the offset moved since
        (the first measure of a skewed clock moves the axis under two honest ticks); a clock
        stepped back starts again from its own slot."""
        now = time.monotonic()
        self._tokens = min(self.BURST, self._tokens + 1.5 * (now - self._at) / self.interval)
        self._at = now
        slot = round(local_time / self.interval)
        moved = abs(offset - self._offset) > self.interval / 4
        if (slot == self._slot and not moved) or self._tokens < 1:
            return False
        self._tokens -= 1
        self._slot, self._offset = slot, offset
        return True

"""Oracle trace lines to what they tell: the LGWR-path lines that explain log file sync, and the
NSS and RFS event 16410 messages of each remote write, matched by redo thread and msgid.

How the traces time a remote write (seed 000, "Diagnosing High Log File SYNC Waits"): NSS prints
"Client sending ... msgid=N" with its timestamp on the ``***`` line *below* it, and "Client
received ... response ... msgid=N" with the timestamp *above* it; RFS prints "Server received
... msgid=N" and "Server finished processing ... msgid=N", each with the timestamp below, and
its ``WAIT ... nam='RFS write' ela= us`` lines in between.  Each message names its redo thread
(``thrd=``) and msgid; msgids are counted per thread, so a write is matched on both.  A message
may run over several lines (its msgid on a following one).

The parser reads what it is fed, line by line, and keeps no file: one parser per file, all of a
collector's parsers filling one table of transits (a write's NSS side and its RFS side come from
two files).  The ``***`` stamps are turned into epoch seconds by the function it is given (the
instance's zone is the caller's to know).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

# 11.2 "*** 2015-03-10 14:08:53.050", 12.2+ "*** 2023-01-29T01:00:52.031166-06:00 (CDB$ROOT(1))"
_TS = re.compile(
    r"^\*\*\* (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?)"
)
_N = r"\d{1,15}"  # a number a trace prints; 5,000 digits is damage (and int() refuses them)
_SLOW = re.compile(rf"Warning: log write elapsed time ({_N})ms, size ({_N})KB")
_BROADCAST = re.compile(rf"Warning: log write broadcast wait time ({_N})ms")
_MODE = re.compile(r"Log file sync switching to (polling|post/wait)")
_WORKERS = re.compile(r"Adaptive scalable LGWR (enabling|disabling) workers")
# the LGWR trace when a redo transport process it started died: 12c+ "NSS2 is not running
# anymore.", 11.2 "LNS1 ..." (NSA: an ASYNC destination's, TT: 12.2+ transport workers)
_STOPPED = re.compile(r"\b((?:NSS|NSA|LNS|TT)[0-9A-Za-z]{1,2}) is not running anymore")
_OFFSET = re.compile(r"(?:[+-]\d{2}:\d{2}|Z)$")
_MSGID = re.compile(rf"msgid=({_N})\b")
_THRD = re.compile(rf"thrd=({_N})\b")
_SEQ = re.compile(rf"seq=({_N})\b")
_RFS_WRITE = re.compile(rf"nam='RFS write' ela= *({_N})\b")
# message start -> (kind, where its timestamp is: the *** line below it or the one above it)
_MESSAGES = (
    ("Client sending SQLNET request data", "nss_send", "below"),
    ("Client received SQLNET call", "nss_recv", "above"),
    ("Server received SQLNET data", "rfs_recv", "below"),
    ("Server finished processing SQLNET data", "rfs_done", "below"),
)
MAX_PENDING = 20000  # unmatched writes kept (oldest dropped)


@dataclass(slots=True)
class _Msg:
    kind: str
    text: str
    where: str


Key = tuple[int | None, int]  # (redo thread, msgid): msgids are per thread


@dataclass(slots=True)
class Transit:
    """What the traces tell about one remote write (times in epoch seconds)."""

    msgid: int
    thread: int | None = None
    seq: int | None = None
    nss_send: float | None = None
    nss_recv: float | None = None
    rfs_recv: float | None = None
    rfs_done: float | None = None
    rfs_write_us: float = 0.0


@dataclass(slots=True)
class Line:
    """A line that explains log file sync: (time, kind, value)."""

    when: float | None
    kind: str  # slow, broadcast, mode, workers, stopped
    value: float
    text: str


class TraceParser:
    """Turns LGWR and 16410/10046 trace lines into LGWR-path lines and transits; one parser
    per file.  ``stamp`` turns a ``***`` stamp's text into epoch seconds (ValueError when it
    names no time); ``assumed`` is the note to give at the first stamp without an offset."""

    def __init__(
        self,
        transits: OrderedDict[Key, Transit],
        stamp: Callable[[str], float],
        assumed: str | None = None,
    ) -> None:
        self.transits = transits
        self.stamp = stamp
        self.assumed = assumed
        """Said once (in ``notes``) at the first stamp without an offset: the zone was a guess."""
        self.notes: list[str] = []
        self._last_ts: float | None = None
        self._open: _Msg | None = None  # a message whose msgid is on a following line
        self._below: list[tuple[Key, str]] = []  # writes waiting for the *** line below them
        self._current: Key | None = None  # the RFS message being processed (for RFS write ela)
        self.found: list[Line] = []  # LGWR-path lines not yet taken

    def feed(self, lines: list[str]) -> None:
        """Consume lines in file order."""
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        if self._stamp(line) or self._lgwr_line(line) or self._rfs_write(line):
            return
        msg = self._message(line)
        if msg is None:
            return
        idm = _MSGID.search(msg.text)
        if idm is None:
            if msg.text.count(" ") > 60:  # not the message we thought: give up on it
                self._open = None
            return
        self._open = None
        self._place(msg, idm.group(1))

    def _stamp(self, line: str) -> bool:
        """A ``***`` line: the time of what follows, and of the writes waiting below."""
        m = _TS.match(line)
        if not m:
            return False
        try:
            self._last_ts = self.stamp(m.group(1))
        except ValueError:
            return True
        if self.assumed and not _OFFSET.search(m.group(1)):
            self.notes.append(self.assumed)
            self.assumed = None
        for key, kind in self._below:
            setattr(self._transit(key), kind, self._last_ts)
        self._below.clear()
        return True

    def _lgwr_line(self, line: str) -> bool:
        """The LGWR-path lines: slow writes, broadcast waits, sync mode and worker changes, a
        transport process that died."""
        if m := _SLOW.search(line):
            ms, kb = int(m.group(1)), int(m.group(2))
            self.found.append(Line(self._last_ts, "slow", ms, f"log write {ms} ms, {kb} KB"))
        elif m := _BROADCAST.search(line):
            ms = int(m.group(1))
            self.found.append(Line(self._last_ts, "broadcast", ms, f"broadcast wait {ms} ms"))
        elif m := _MODE.search(line):
            polling = m.group(1) == "polling"
            self.found.append(
                Line(self._last_ts, "mode", float(polling), f"log file sync {m.group(1)}")
            )
        elif m := _WORKERS.search(line):
            on = m.group(1) == "enabling"
            self.found.append(Line(self._last_ts, "workers", float(on), f"LGWR workers {m[1]}"))
        elif "not running anymore" in line and (m := _STOPPED.search(line)):
            text = f"{m[1]} is not running anymore"
            self.found.append(Line(self._last_ts, "stopped", 1.0, text))
        else:
            return False
        return True

    def _rfs_write(self, line: str) -> bool:
        """An ``RFS write`` wait of the RFS message being processed: its time is added."""
        m = _RFS_WRITE.search(line)
        if not m or self._current is None:
            return False
        self._transit(self._current).rfs_write_us += float(m.group(1))
        return True

    def _message(self, line: str) -> _Msg | None:
        """The message this line starts or continues, None when it is neither."""
        for start, kind, where in _MESSAGES:
            if start in line:
                self._open = _Msg(kind, line, where)
                return self._open
        if self._open is not None:
            self._open.text += " " + line
        return self._open

    def _place(self, msg: _Msg, msgid: str) -> None:
        """Record a whole message on its write: its time now (above) or at the next stamp."""
        thrd, seq = _THRD.search(msg.text), _SEQ.search(msg.text)
        key = (int(thrd.group(1)) if thrd else None, int(msgid))
        t = self._transit(key)
        t.seq = int(seq.group(1)) if seq else t.seq
        if msg.kind == "rfs_recv":
            self._current = key
        elif msg.kind == "rfs_done":
            self._current = None
        if msg.where == "above":
            setattr(t, msg.kind, self._last_ts)
        else:
            self._below.append((key, msg.kind))

    def _transit(self, key: Key) -> Transit:
        t = self.transits.get(key)
        if t is None:
            t = self.transits[key] = Transit(key[1], key[0])
            while len(self.transits) > MAX_PENDING:
                self.transits.popitem(last=False)
        return t


def split(t: Transit) -> tuple[float, float, float] | None:
    """(total, network, rfs) ms of a remote write known on both sides, else None.  Network
    time = NSS round trip - RFS processing time; the two hosts' clocks differ a little, so a
    negative network share is shown as 0."""
    if t.nss_send is None or t.nss_recv is None or t.rfs_recv is None or t.rfs_done is None:
        return None
    total = (t.nss_recv - t.nss_send) * 1000.0
    rfs = (t.rfs_done - t.rfs_recv) * 1000.0
    rfs = max(rfs, t.rfs_write_us / 1000.0)
    return total, max(0.0, total - rfs), rfs

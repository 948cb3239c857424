"""`oracle_trace`: slow LGWR writes from the LGWR trace, and long remote writes split into network
and RFS time by matching msgid across the NSS and RFS event 16410 traces (seed 000, "Diagnosing
High Log File SYNC Waits", done by hand there).

Options: ``lgwr`` (path of the primary's LGWR trace), ``nss`` and ``rfs`` (the primary's NSSn and
the standby's RFS traces with event 16410 level 16 and, for the RFS write time, 10046 level 12),
``threshold_ms`` (remote writes at least this long are split; default 50).  Files are followed
like ``tail -F``: from their end when the collector opens, across rotation (a new inode) and
truncation, with a partial last line kept until its newline arrives; unrelated lines are skipped.

How the traces time a remote write (seed 000): NSS prints "Client sending ... msgid=N" with its
timestamp on the ``***`` line *below* it, and "Client received ... response ... msgid=N" with the
timestamp *above* it; RFS prints "Server received ... msgid=N" and "Server finished processing
... msgid=N", each with the timestamp below, and its ``WAIT ... nam='RFS write' ela= us`` lines in
between.  Network time = NSS round trip - RFS processing time.  The two hosts' clocks differ a
little, so a negative network share is shown as 0.

Rows: ``lgwr`` (slow writes in the interval, longest of them) and ``remote`` (writes split, their
largest network and RFS shares).  Each slow write is a ``lgwr_slow_write`` event, each split a
``remote_write_split`` event.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass

from sgmon.collector import Collector, Unavailable
from sgmon.model import Event, Field, Kind, Rows, Value

G, D = Kind.GAUGE, Kind.DELTA

FIELDS = (
    Field("slow_writes", "count", D, "lgwr: 'Warning: log write elapsed time' lines", warn=1),
    Field("max_write", "ms", G, "lgwr: longest slow write of the interval", warn=100, crit=500),
    Field("splits", "count", D, "remote: long remote writes matched across NSS and RFS"),
    Field("max_network", "ms", G, "remote: largest network share of a long remote write"),
    Field("max_rfs", "ms", G, "remote: largest RFS share (standby SRL write) of one"),
)

_TS = re.compile(r"^\*\*\* (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?)")
_SLOW = re.compile(r"Warning: log write elapsed time (\d+)ms, size (\d+)KB")
_MSGID = re.compile(r"msgid=(\d+)")
_THRD = re.compile(r"thrd=(\d+)")
_SEQ = re.compile(r"seq=(\d+)")
_RFS_WRITE = re.compile(r"nam='RFS write' ela= *(\d+)")
# message start -> (kind, where its timestamp is: the *** line below it or the one above it)
_MESSAGES = (
    ("Client sending SQLNET request data", "nss_send", "below"),
    ("Client received SQLNET call", "nss_recv", "above"),
    ("Server received SQLNET data", "rfs_recv", "below"),
    ("Server finished processing SQLNET data", "rfs_done", "below"),
)
MAX_PENDING = 20000  # unmatched msgids kept (oldest dropped)
MAX_READ = 4 << 20  # bytes read from one file per tick


def parse_ts(text: str) -> float:
    """A trace timestamp (the database host's local time) -> epoch seconds."""
    return _dt.datetime.fromisoformat(text.replace(" ", "T", 1)).timestamp()


class Follower:
    """``tail -F`` of one file: complete new lines since the last call, across rotation."""

    def __init__(self, path: str, from_start: bool = False) -> None:
        self.path = path
        self._f = None
        self._ino: int | None = None
        self._partial = b""
        self._from_start = from_start
        if os.path.exists(path):
            self._open()

    def _open(self) -> None:
        self._f = open(self.path, "rb")  # noqa: SIM115 - kept open across calls
        self._ino = os.fstat(self._f.fileno()).st_ino
        if not self._from_start:
            self._f.seek(0, os.SEEK_END)
        self._from_start = True  # a file that appears (or reappears) later is read whole

    def lines(self) -> list[str]:
        """New complete lines (a partial last line waits for its newline)."""
        data = b""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        if self._f is not None and (st is None or st.st_ino != self._ino):
            data = self._partial + self._f.read()  # the rotated file's tail, then the new file
            if data and not data.endswith(b"\n"):
                data += b"\n"  # a line cut by the rotation ends there
            self._partial = b""
            self._close()
        elif self._f is not None and st is not None and st.st_size < self._f.tell():
            self._close()  # truncated in place: start again
            self._partial = b""
            self._from_start = True
        if self._f is None and st is not None:
            self._open()
        if self._f is not None:
            data += self._f.read(MAX_READ)  # a huge backlog is read over several ticks
        if not data:
            return []
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        if len(self._partial) > MAX_READ:  # no newline for megabytes: not a trace line
            self._partial = b""
        return [line.decode("utf-8", "replace").rstrip("\r") for line in complete]

    def _close(self) -> None:
        if self._f is not None:
            self._f.close()
        self._f = None
        self._ino = None

    def close(self) -> None:
        """Release the file."""
        self._close()


@dataclass(slots=True)
class _Msg:
    kind: str
    text: str
    where: str


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


class TraceParser:
    """Turns 16410/10046 trace lines into msgid timestamps; one parser per file."""

    def __init__(self, transits: OrderedDict[int, Transit]) -> None:
        self.transits = transits
        self._last_ts: float | None = None
        self._open: _Msg | None = None  # a message whose msgid is on a following line
        self._below: list[tuple[int, str]] = []  # msgids waiting for the *** line below them
        self._current: int | None = None  # the RFS message being processed (for RFS write ela)
        self.slow: list[tuple[float | None, int, int]] = []  # (time, ms, KB) of LGWR warnings

    def feed(self, lines: list[str]) -> None:
        """Consume lines in file order."""
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        m = _TS.match(line)
        if m:
            try:
                self._last_ts = parse_ts(m.group(1))
            except ValueError:
                return
            for msgid, kind in self._below:
                setattr(self._transit(msgid), kind, self._last_ts)
            self._below.clear()
            return
        m = _SLOW.search(line)
        if m:
            self.slow.append((self._last_ts, int(m.group(1)), int(m.group(2))))
            return
        m = _RFS_WRITE.search(line)
        if m and self._current is not None:
            self._transit(self._current).rfs_write_us += float(m.group(1))
            return
        for start, kind, where in _MESSAGES:
            if start in line:
                self._open = _Msg(kind, line, where)
                break
        else:
            if self._open is None:
                return
            self._open.text += " " + line
        msg = self._open
        idm = _MSGID.search(msg.text)
        if idm is None:
            if msg.text.count(" ") > 60:  # not the message we thought: give up on it
                self._open = None
            return
        self._open = None
        t = self._transit(int(idm.group(1)))
        thrd, seq = _THRD.search(msg.text), _SEQ.search(msg.text)
        t.thread = int(thrd.group(1)) if thrd else t.thread
        t.seq = int(seq.group(1)) if seq else t.seq
        if msg.kind == "rfs_recv":
            self._current = t.msgid
        elif msg.kind == "rfs_done":
            self._current = None
        if msg.where == "above":
            setattr(t, msg.kind, self._last_ts)
        else:
            self._below.append((t.msgid, msg.kind))

    def _transit(self, msgid: int) -> Transit:
        t = self.transits.get(msgid)
        if t is None:
            t = self.transits[msgid] = Transit(msgid)
            while len(self.transits) > MAX_PENDING:
                self.transits.popitem(last=False)
        return t


def split(t: Transit) -> tuple[float, float, float] | None:
    """(total, network, rfs) ms of a remote write known on both sides, else None."""
    if None in (t.nss_send, t.nss_recv, t.rfs_recv, t.rfs_done):
        return None
    total = (t.nss_recv - t.nss_send) * 1000.0  # type: ignore[operator]
    rfs = (t.rfs_done - t.rfs_recv) * 1000.0  # type: ignore[operator]
    rfs = max(rfs, t.rfs_write_us / 1000.0)
    return total, max(0.0, total - rfs), rfs


class OracleTraceCollector(Collector):
    """Slow LGWR writes and NSS/RFS remote-write splits, from trace files."""

    name = "oracle_trace"
    description = "LGWR slow-write warnings and NSS/RFS msgid splits from trace files"
    fields = FIELDS
    sparse = True  # the split counts and the per-file rows have different fields
    default_enabled = False  # needs trace paths

    def __init__(self, options=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(options)
        self.threshold_ms = float(self.options.get("threshold_ms", 50.0))
        self._files: dict[str, Follower] = {}
        self._parsers: dict[str, TraceParser] = {}
        self._transits: OrderedDict[int, Transit] = OrderedDict()
        self._slow_total = 0
        self._split_total = 0
        self.clock = self.options.get("clock") or time.time

    def open(self) -> None:
        """Start following the configured traces from their current end."""
        paths = {k: self.options.get(k) for k in ("lgwr", "nss", "rfs") if self.options.get(k)}
        if not paths:
            raise Unavailable(
                "no trace files configured: set [collectors.oracle_trace] lgwr = "
                '"<diag>/trace/<SID>_lgwr_<pid>.trc" (and nss, rfs for the msgid split)'
            )
        start = bool(self.options.get("from_start", False))
        for kind, path in paths.items():
            self._files[kind] = Follower(str(path), from_start=start)
            self._parsers[kind] = TraceParser(self._transits)

    def sample(self) -> Rows:
        """Read what the traces gained since the last tick."""
        for kind, f in self._files.items():
            self._parsers[kind].feed(f.lines())
        lgwr: dict[str, Value] = {"slow_writes": None, "max_write": None}
        if "lgwr" in self._parsers:
            slow = self._parsers["lgwr"].slow
            self._slow_total += len(slow)
            for when, ms, kb in slow:
                self.emit_event(
                    Event(
                        when if when is not None else self.clock(),
                        self.name,
                        "lgwr_slow_write",
                        "lgwr",
                        f"log write {ms} ms, {kb} KB",
                        float(ms),
                    )
                )
            lgwr = {
                "slow_writes": self._slow_total,
                "max_write": max((ms for _, ms, _ in slow), default=None),
            }
            slow.clear()
        rows: Rows = {"lgwr": lgwr}
        if "nss" in self._parsers and "rfs" in self._parsers:
            rows["remote"] = self._splits()
        return rows

    def _splits(self) -> dict[str, Value]:
        net_max: float | None = None
        rfs_max: float | None = None
        for msgid, t in list(self._transits.items()):
            parts = split(t)
            if parts is None:
                continue
            del self._transits[msgid]
            total, net, rfs = parts
            if total < self.threshold_ms:
                continue
            self._split_total += 1
            net_max = net if net_max is None else max(net_max, net)
            rfs_max = rfs if rfs_max is None else max(rfs_max, rfs)
            self.emit_event(
                Event(
                    t.nss_send or self.clock(),
                    self.name,
                    "remote_write_split",
                    f"thread_{t.thread}" if t.thread is not None else "remote",
                    f"msgid {msgid} thrd {t.thread} seq {t.seq}: {total:.0f} ms = "
                    f"{net:.0f} ms network + {rfs:.0f} ms RFS"
                    + (f" (RFS write {t.rfs_write_us / 1000:.1f} ms)" if t.rfs_write_us else ""),
                    round(total, 3),
                )
            )
        return {
            "splits": self._split_total,
            "max_network": None if net_max is None else round(net_max, 3),
            "max_rfs": None if rfs_max is None else round(rfs_max, 3),
        }

    def close(self) -> None:
        """Close the followed files."""
        for f in self._files.values():
            f.close()

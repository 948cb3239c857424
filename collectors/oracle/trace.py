"""`oracle_trace`: slow LGWR writes and the lines that explain log file sync, from the LGWR and
LGnn traces, and long remote writes split into network and RFS time by matching thread and msgid
across the NSS and RFS event 16410 traces (seed 000, "Diagnosing High Log File SYNC Waits", done
by hand there).

Options: ``lgwr`` (the primary's LGWR trace, or its trace directory), ``nss`` and ``rfs`` (the NSSn
and RFS traces with event 16410 level 16 and, for the RFS write time, 10046 level 12),
``threshold_ms`` (remote writes at least this long are split; default 50), ``timezone`` (the
instance's zone for 11.2's offset-less stamps, see tracetime.py), ``rescan_s`` (how long a file may
stay quiet before the current files are looked for again; default 30: one listing of a 20,000-file
trace directory takes 15 ms).  A path is where to look, not the file (tracefiles.py: a new
process's file is moved to, saying so; files are followed like ``tail -F``).  Unknown lines are
skipped; a file that cannot be read is one note, once, and its row stays empty rather than saying
0 slow writes.  A file is read at most a megabyte a tick, on the collector's own thread, so a slow
file system never holds up another collector's tick.  No database login is needed.

``from_start = true`` reads the files there at open from their first line (a trace already
written, e.g. an incident's).  Each event keeps its ``***`` time; a tick holds only the present,
so the first sample is the counters' base (its delta is unknown; the engine's priming tick is
never emitted) and what it read counts in the first recorded tick, beside its events.

Adaptive log file sync's switches (``Log file sync switching to polling`` / ``... to
post/wait``) are events and the ``polling`` field, which sgmon.analysis.adaptive_sync reads;
``Warning: log write broadcast wait time`` (RAC) and ``Adaptive scalable LGWR enabling/disabling
workers`` are events too.  How the NSS and RFS sides of a remote write are timed and matched is
sgmon/readers/trace.py's.  The RFS trace is written on the standby: run ``sgmon agent`` there
with ``rfs`` and the primary's NSS trace copied or mounted beside it (``nss``).

Rows: ``lgwr`` (slow writes in the interval, longest, polling or not) and ``remote`` (writes
split, their largest network and RFS shares); each slow write and split is an event as well.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from sgmon.collector import Collector, Unavailable
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.oracle.errors import OracleError
from sgmon.oracle.session import Session, acquire, release
from sgmon.oracle.tracedb import Layout, layout
from sgmon.oracle.tracefiles import Finder, Follower, trace_name
from sgmon.oracle.tracetime import (
    ZoneError,
    host_zone,
    is_process,
    parse_ts,
    process_zone,
    zone_named,
)
from sgmon.readers import trace
from sgmon.readers.trace import Key, Transit, split

G, D = Kind.GAUGE, Kind.DELTA

FIELDS = (
    Field("slow_writes", "count", D, "lgwr: 'Warning: log write elapsed time' lines", warn=1),
    Field(
        "max_write",
        "ms",
        G,
        "lgwr: longest slow write of the interval",
        warn=100,
        crit=500,
        combine="max",
    ),
    Field("polling", "", G, "lgwr: 1 while adaptive log file sync polls, 0 in post/wait"),
    Field("broadcast_waits", "count", D, "lgwr: RAC 'log write broadcast wait time' lines"),
    Field("max_broadcast", "ms", G, "lgwr: longest broadcast wait of the interval", combine="max"),
    Field("splits", "count", D, "remote: long remote writes matched across NSS and RFS"),
    Field(
        "max_network",
        "ms",
        G,
        "remote: largest network share of a long remote write",
        combine="max",
    ),
    Field(
        "max_rfs", "ms", G, "remote: largest RFS share (standby SRL write) of one", combine="max"
    ),
)


class TraceParser(trace.TraceParser):
    """The readers' parser (sgmon/readers/trace.py) with the stamps read as tracetime reads
    them: an offset-less stamp in ``zone``, the instance's."""

    def __init__(
        self, transits: OrderedDict[Key, Transit], zone: _dt.tzinfo, assumed: str | None = None
    ) -> None:
        super().__init__(transits, functools.partial(parse_ts, zone=zone), assumed)


_EVENT = {  # Line.kind -> event kind
    "slow": "lgwr_slow_write",
    "broadcast": "lgwr_broadcast_wait",
    "mode": "log_file_sync_mode",
    "workers": "lgwr_workers",
    "stopped": "transport_stopped",
}


@dataclass(slots=True)
class _Followed:
    follower: Follower
    parser: TraceParser
    quiet_since: float


UNREAD = (
    "of the file it was before a rename or a new process were left unread (too far behind to "
    "catch up)"
)
SKIPPED = (
    "skipped (a line of over a megabyte, or a flood of lines too far ahead to read): the lines "
    "after them are read"
)


class OracleTraceCollector(Collector):
    """LGWR-path trace lines and NSS/RFS remote-write splits, from trace files."""

    name = "oracle_trace"
    rows = (RowKind("process", label="process"),)
    description = "LGWR slow-write warnings and NSS/RFS msgid splits from trace files"
    option_rules: ClassVar[Mapping[str, Rule]] = {
        "lgwr": rules.text_or_texts,
        "nss": rules.text_or_texts,
        "rfs": rules.text_or_texts,
        "timezone": rules.zone,
        "threshold_ms": rules.number_in(1, 60_000),
        "rescan_s": rules.seconds_in(1.0, 3600.0),
        "from_start": rules.boolean,
    }
    fields = FIELDS
    sparse = True  # the split counts and the per-file rows have different fields
    solo = True  # file reads may block (NFS, a huge backlog): never on the shared thread
    default_enabled = False  # needs trace paths

    def __init__(self, options=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(options)
        self.threshold_ms = float(self.options.get("threshold_ms", 50.0))
        self.rescan_s = float(self.options.get("rescan_s", 30.0))
        self._finders: dict[str, Finder] = {}
        self._files: dict[str, dict[str, _Followed]] = {}  # kind -> group -> followed file
        self._transits: OrderedDict[Key, Transit] = OrderedDict()
        self._told: set[str] = set()  # unreadable files already said
        self._zone: _dt.tzinfo | None = None
        self.session: Session | None = None
        self._was_connected = False
        self._opened = 0.0  # wall time of open(), against file mtimes
        self._slow_total = 0
        self._broadcast_total = 0
        self._polling: float | None = None
        self._max_write: float | None = None
        self._max_broadcast: float | None = None
        self._split_total = 0
        self._based: set[str] = set()  # the rows whose counters' base (first sample) was given
        self._max_network: float | None = None
        self._max_rfs: float | None = None
        self.clock = self.options.get("clock") or time.time

    def open(self) -> None:
        """Find the current traces and follow them from their current end."""
        paths = {k: self.options.get(k) for k in ("lgwr", "nss", "rfs") if self.options.get(k)}
        if not paths:
            raise Unavailable(
                "no trace files configured: set [collectors.oracle_trace] lgwr = "
                '"<diag>/trace/<SID>_lgwr_<pid>.trc" (and nss, rfs for the msgid split)'
            )
        if self.options.get("timezone"):
            try:
                self._zone = zone_named(str(self.options["timezone"]))
            except ZoneError as e:
                raise Unavailable(f"[collectors.oracle_trace] {e}") from None
        if any(self.options.get(k) is not None for k in ("db", "connect", "session")):
            try:
                self.session = acquire(self.options)
            except OracleError:
                self.session = None  # the other database collectors say why
        start = bool(self.options.get("from_start", False))
        self._opened = time.time()
        for kind, path in paths.items():  # under a root (a pumped host): the tree's copies
            spec = self.path(str(path)) if self.root != "/" else str(path)
            self._finders[kind] = Finder(kind, spec)
            self._files[kind] = {}
            self._rescan(kind, from_start=start)

    def _follow(self, path: str, from_start: bool | None) -> _Followed:
        """``from_start`` None (a file found later): read whole, unless nothing was written to it
        since we opened (a process's trace from days ago holds no news)."""
        if from_start is None:
            from_start = True  # not there yet: whatever it gets is news
            with contextlib.suppress(OSError):
                from_start = os.stat(path).st_mtime >= self._opened
        zone, assumed = self._zone_of(path)
        return _Followed(
            Follower(path, from_start), TraceParser(self._transits, zone, assumed), self.clock()
        )

    def _zone_of(self, path: str) -> tuple[_dt.tzinfo, str | None]:
        """The zone of a file's offset-less stamps, and a note when it is a guess: the
        configured one, else the TZ of the process the file names (only while that pid is
        that Oracle process), else the host's."""
        if self._zone is not None:
            return self._zone, None
        name = trace_name(path)
        if name is not None and is_process(name.pid, name.sid, name.proc):
            zone = process_zone(name.pid)
            if zone is not None:
                return zone, None
        zone = host_zone()
        return zone, (
            f"{path}: stamps without an offset read in this host's zone ({_zone_text(zone)}), "
            "as no running process of that name says otherwise; set [collectors.oracle_trace] "
            "timezone to the instance's zone if it differs"
        )

    def _current(self, kind: str, lay: Layout | None) -> dict[str, str]:
        """The database's own names for the current files when it is connected, else a glob."""
        finder = self._finders[kind]
        if lay is not None and finder.dynamic and finder.sid in ("*", lay.sid):
            found = lay.files(kind)
            if found:
                return found
        return finder.current()

    def _rescan(self, kind: str, from_start: bool | None = None, lay: Layout | None = None) -> None:
        """Move each group to its current file: what is left of the old one is read first."""
        files = self._files[kind]
        current = self._current(kind, lay)
        for group in [g for g in files if g not in current]:  # e.g. an RFS whose client left
            self._retire(files.pop(group))
        for group, path in current.items():
            old = files.get(group)
            if old is not None and old.follower.path == path:
                continue
            files[group] = self._follow(path, from_start)
            if old is not None:
                self._retire(old)
                self.emit_event(
                    Event(
                        self.clock(),
                        self.name,
                        "note",
                        kind,
                        f"{old.follower.path} abandoned for {path} (a new process)",
                    )
                )

    def _retire(self, old: _Followed) -> None:
        """Read what the old file still holds, so nothing written before the switch is lost."""
        for lines in old.follower.rest():
            old.parser.feed(lines)
            self._take(old.parser)
        self._take(old.parser)
        self._say_dropped("", old.follower)
        old.follower.close()

    def _say_dropped(self, kind: str, follower: Follower) -> None:
        """One note for what was not read: of a file renamed away or abandoned, or jumped over
        in the file followed (a line of over a megabyte, a flood)."""
        for n, why in ((follower.dropped, UNREAD), (follower.skipped, SKIPPED)):
            if n:
                self._note(kind, f"{follower.path}: {n} bytes {why}")
        follower.dropped = follower.skipped = 0

    def _note(self, kind: str, text: str) -> None:
        self.emit_event(Event(self.clock(), self.name, "note", kind, text))

    def sample(self) -> Rows:
        """Read what the traces gained since the last tick; look for the current files again
        at each connect and when a file has been quiet for ``rescan_s``."""
        now = self.clock()
        connected = self.session is not None and self.session.connected
        fresh, self._was_connected = connected and not self._was_connected, connected
        lay: Layout | None = None
        readable: dict[str, bool] = {}
        errors: list[str] = []
        for kind, files in self._files.items():
            for f in list(files.values()):
                error = self._read(kind, f, now)
                readable[kind] = readable.get(kind, False) or not error
                if error:
                    errors.append(error)
            quiet = any(now - f.quiet_since >= self.rescan_s for f in files.values())
            if quiet or fresh or not files:
                if lay is None and self.session is not None:  # at each connect, when quiet
                    lay = layout(self.session)
                self._rescan(kind, lay=lay)
                for f in files.values():
                    f.quiet_since = now
        return self._rows(readable, errors)

    def _read(self, kind: str, f: _Followed, now: float) -> str | None:
        """Feed one file's new lines to its parser and say its notes; its error, if any."""
        lines = f.follower.lines()
        self._say_dropped(kind, f.follower)
        error = f.follower.error
        if error and error not in self._told:
            self._told.add(error)
            self._note(kind, error)
        if lines:
            f.quiet_since = now
            f.parser.feed(lines)
        for note in f.parser.notes:
            self._note(kind, note)
        f.parser.notes.clear()
        return error

    def _rows(self, readable: dict[str, bool], errors: list[str]) -> Rows:
        """The rows of the kinds whose files could be read; OSError when none could."""
        rows: Rows = {}
        if "lgwr" in self._files and readable.get("lgwr", True):
            rows["lgwr"] = self._lgwr()
        if all(readable.get(k, k in self._files) for k in ("nss", "rfs")):
            rows["remote"] = self._splits()
        if not rows and errors:
            raise OSError(errors[0])  # unknown, never "0 slow writes"
        return rows

    def _take(self, parser: TraceParser) -> None:
        """Turn a parser's LGWR-path lines into events and the row's running state."""
        for ln in parser.found:
            self.emit_event(
                Event(
                    ln.when if ln.when is not None else self.clock(),
                    self.name,
                    _EVENT[ln.kind],
                    "lgwr",
                    ln.text,
                    ln.value,
                )
            )
            if ln.kind == "slow":
                self._slow_total += 1
                self._max_write = max(self._max_write or 0, ln.value)
            elif ln.kind == "broadcast":
                self._broadcast_total += 1
                self._max_broadcast = max(self._max_broadcast or 0, ln.value)
            elif ln.kind == "mode":
                self._polling = ln.value
        parser.found.clear()

    def _lgwr(self) -> dict[str, Value]:
        """The LGWR row; the first is the counters' base, whatever it read (``from_start``)."""
        for f in self._files["lgwr"].values():
            self._take(f.parser)
        if "lgwr" not in self._based:
            self._based.add("lgwr")
            return {"slow_writes": 0, "polling": self._polling, "broadcast_waits": 0}
        row: dict[str, Value] = {
            "slow_writes": self._slow_total,
            "max_write": self._max_write,
            "polling": self._polling,
            "broadcast_waits": self._broadcast_total,
            "max_broadcast": self._max_broadcast,
        }
        self._max_write = self._max_broadcast = None  # maxima are per interval
        return row

    def _splits(self) -> dict[str, Value]:
        """The remote row; the first is the counters' base, as the LGWR row's (``_lgwr``)."""
        for key, t in list(self._transits.items()):
            parts = split(t)
            if parts is None:
                continue
            del self._transits[key]
            total, net, rfs = parts
            if total < self.threshold_ms:
                continue
            self._split_total += 1
            self._max_network = max(self._max_network or 0.0, net)
            self._max_rfs = max(self._max_rfs or 0.0, rfs)
            self.emit_event(
                Event(
                    t.nss_send or self.clock(),
                    self.name,
                    "remote_write_split",
                    f"thread_{t.thread}" if t.thread is not None else "remote",
                    f"msgid {t.msgid} thrd {t.thread} seq {t.seq}: {total:.0f} ms = "
                    f"{net:.0f} ms network + {rfs:.0f} ms RFS"
                    + (f" (RFS write {t.rfs_write_us / 1000:.1f} ms)" if t.rfs_write_us else ""),
                    round(total, 3),
                )
            )
        if "remote" not in self._based:
            self._based.add("remote")
            return {"splits": 0}
        row: dict[str, Value] = {
            "splits": self._split_total,
            "max_network": None if self._max_network is None else round(self._max_network, 3),
            "max_rfs": None if self._max_rfs is None else round(self._max_rfs, 3),
        }
        self._max_network = self._max_rfs = None  # maxima are per interval
        return row

    def close(self) -> None:
        """Close the followed files and leave the shared session."""
        for files in self._files.values():
            for f in files.values():
                f.follower.close()
        if self.session is not None:
            release(self.session)
            self.session = None


def _zone_text(zone: _dt.tzinfo) -> str:
    key = getattr(zone, "key", None)
    return key if key and key != "localtime" else str(_dt.datetime.now(zone).strftime("UTC%z"))

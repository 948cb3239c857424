"""The recorder's sink: frames -> the CSV archive described in ``sgmon.archive``.

Durability rules, each for a complaint users make about other recorders:
- Each tick's rows of a table go to the kernel in one ``write()`` on an ``O_APPEND`` descriptor,
  so a kill -9 loses at most the row being written; on reopening, a torn last line (no newline) is
  cut off before appending, so it never glues onto the next row.
- A failed write (disk full, quota) is undone with ``ftruncate`` to the last good size, reported
  once, and retried every tick once the file system has room again (``ROOM``), so one full-disk
  episode is one message when it starts and one when it ends; rows already written are never
  touched.
- ``meta.json`` is on disk before the first row of a host is written, so a recording killed at any
  moment can be read back.
- The archive directory and each host directory are checked at every tick: deleted or replaced
  under the recorder, the run ends at once with exit 1 (``SinkFailed``) rather than counting rows
  as written that are nowhere; a table file deleted alone is started again.
- A value the archive cannot hold (an event stamped in year 9999 or 0001 by a trace) is dropped
  with one note naming its host and collector; everything else is recorded.
- A file is appended to only when its header is byte-for-byte the one this version would write;
  otherwise a new file ``<collector>_<stamp>-2.csv`` is started beside it.
- The archive directory is a trust boundary: everything in it is opened by descriptor, never
  through a symlink, never blocking, and only when it is what sgmon writes there
  (``sgmon.sinks.archivedir``); a name planted at a table's or a host directory's place is left
  alone with one note, and nothing is ever written outside it.
- Rows reach the disk (``fdatasync``) at most 5 s after they are written, and when their file is
  closed (``sgmon.sinks.flush``): a power cut loses about 5 s, not the kernel's 30.

One file's appending lives in ``sgmon.sinks.csvfile``, what becomes of closed files
(``--compress``, ``--keep``) in ``sgmon.sinks.retention``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from sgmon import __version__
from sgmon.archive import (
    ARCHIVE_FORMAT,
    EARLIEST,
    EVENT_COLUMNS,
    LATEST,
    META,
    STATUS_KIND,
    encode_row,
    fmt_time,
    fmt_value,
    header,
    host_specs,
    period_stamp,
    safe_name,
    write_meta,
)
from sgmon.errors import ArchiveError, SinkFailed
from sgmon.model import Frame, Schema, Status
from sgmon.safefs import Dir
from sgmon.sinks.archivedir import ArchiveDir, meta_tables, prepare_dir, say
from sgmon.sinks.csvfile import ROOM_ERRNOS, AppendFile, gzip_file
from sgmon.sinks.flush import Flusher
from sgmon.sinks.retention import Retention
from sgmon.verdicts import Judgement

ROOM = 1 << 20
"""Free bytes the file system must have (a tenth of it when smaller, and at least 4 ticks'
worth) before writing resumes after a full disk: without a margin, a row that just fits after
the cut-back of a failed one makes every tick of an episode a "paused" and a "resumed"
message."""


class ArchiveWriter:
    """Sink that appends every frame to the archive; see the module docstring for the rules."""

    essential = True
    """A recording without its archive records nothing: a failure ends the run (exit 1)."""

    def __init__(
        self,
        root: Path,
        schema_of: Callable[[str], Schema],
        interval: float,
        rotate: float = 3600.0,
        keep: float | None = None,
        compress: bool = False,
        warn: Callable[[str], None] | None = None,
        flusher: Flusher | None = None,
        hosts: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.hosts = dict(hosts or {})
        """Every host of the run and its role: one first heard of lists in meta.json those that
        answered meanwhile, so hundreds of hosts coming up rewrite it a few times, not once each
        (it grows with the hosts: 9 MB at 300)."""
        self.schema_of = schema_of
        self.interval = interval
        self.rotate = rotate
        self.compress = compress
        self.warn = warn or say
        self.retention = Retention(rotate, keep, compress, self.warn)
        top, old = prepare_dir(root)
        self.dirs = ArchiveDir(root, top, self.warn, flusher)
        """The archive's directories by descriptor, shared with the findings log."""
        if old is not None and old.get("format") != ARCHIVE_FORMAT:
            self._set_aside(old.get("format"))
            old = None
        self.meta = old or {"format": ARCHIVE_FORMAT, "created": fmt_time(time.time())}
        self.meta.update(format=ARCHIVE_FORMAT, sgmon=__version__, interval=interval, rotate=rotate)
        self.meta.setdefault("hosts", {})
        self._files: dict[tuple[str, str], tuple[str, AppendFile]] = {}
        self._events: dict[str, AppendFile] = {}
        self._status: dict[tuple[str, str], str] = {}
        self._known: set[str] = set()
        self._early: set[str] = set()  # listed before their first frame
        self._failing: str | None = None
        self._full = False  # the failure is a full file system: resume only with room
        self._tick_bytes = 0
        self._lost = 0
        self._dropped: set[tuple[str, str]] = set()  # (host, collector) with a value dropped
        self._meta_saved = False
        self._closed = False
        try:
            self._save_meta()
        except OSError as e:
            self._fail(e)
        for host, h in host_specs(self.meta, []).items():  # our own directories only
            hdir = self.dirs.named(h["dir"], host, create=False)
            if hdir is not None:
                self._housekeep(h["dir"], hdir, rotated=False)
        self.rows_written = 0

    def _set_aside(self, fmt: object) -> None:
        """Rename another format's meta.json (``meta.v0.json``): its tables are never appended
        to, and replay still finds what it says of them."""
        try:
            self.dirs.root.replace(META, safe_name(f"meta.v{fmt}.json"))
        except OSError as e:
            self.dirs.close()
            raise ArchiveError(
                f"cannot move {self.root / META} aside: {e.strerror}; choose another --dir"
            ) from None

    # --- metadata -------------------------------------------------------------------------

    def _save_meta(self) -> None:
        """Write meta.json now (raises OSError); until it succeeds no row is written."""
        self.meta["updated"] = fmt_time(time.time())
        self._meta_saved = False
        write_meta(self.dirs.root, self.meta)
        self._meta_saved = True

    def _learn_hosts(self, frame: Frame) -> None:
        """The frame's host, and those of the run whose far side answered (their schema known),
        for meta.json; its role is the frame's, the others' their configured one until then."""
        self._learn(frame.host, frame.role)
        for host, role in self.hosts.items():
            if host not in self._known and self.schema_of(host):
                self._learn(host, role)
                self._early.add(host)

    def _learn(self, host: str, role: str) -> None:
        collectors = meta_tables(self.schema_of(host))
        # merged into what the archive already says of the host: an import of its AWR after
        # its sar, or a restart with another collector set, keeps the older tables readable
        known = self.meta["hosts"].get(host)
        known = known if isinstance(known, dict) else {}
        self.meta["hosts"][host] = {
            **known,
            "role": role or known.get("role", ""),
            "dir": safe_name(host),
            "collectors": {**known.get("collectors", {}), **collectors},
        }
        self._known.add(host)
        self._meta_saved = False  # written before this host's first row

    # --- writing --------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement | None = None) -> None:
        """Append one frame (the numbers only: findings.csv keeps the verdicts); never raises
        for I/O trouble (it is reported and retried)."""
        self._check_dirs(frame.host)
        if not EARLIEST <= frame.time < LATEST:  # NaN too: a far clock gone wrong
            self._bad_time(frame)
            return
        try:
            if self._full and not self._room():
                self._lost += 1
                return
            hdir = self.dirs.host(frame.host, create=True)
            if hdir is None:
                return  # not a directory sgmon made (said once): nothing of the host written
            if frame.host not in self._known:
                self._learn_hosts(frame)
            elif frame.host in self._early:  # its first frame: the role it names wins
                self._early.discard(frame.host)
                self.meta["hosts"][frame.host]["role"] = frame.role or self.hosts[frame.host]
            if not self._meta_saved:
                self._save_meta()
            self._write_frame(frame, hdir)
        except OSError as e:
            self._fail(e)
            return
        self.dirs.flusher.tick()
        if self._failing is not None:
            self.warn(
                f"{self.root}: writing again ({self._lost} tick(s) not recorded while "
                f"{self._failing})"
            )
            self._event(
                hdir,
                frame.host,
                [
                    fmt_time(frame.time),
                    frame.host,
                    "",
                    "gap",
                    "",
                    f"{self._lost} tick(s) not recorded: {self._failing}",
                    "",
                    fmt_time(frame.time),
                ],
            )
            self._failing, self._full, self._lost = None, False, 0

    def _check_dirs(self, host: str) -> None:
        """End the run when the archive's directory or this frame's host directory was deleted
        or replaced: its rows are gone with it, and nothing written from now on would be where
        the user looks.  Two stats a frame, whatever the number of hosts (each host's own frame
        checks its directory within a tick)."""
        gone = self.dirs.replaced(host)
        if gone is not None:
            raise SinkFailed(
                f"{gone} was deleted or replaced while recording into it ({self.rows_written} "
                "rows written this run were there); recording stopped: start it again"
            )

    def _room(self) -> bool:
        """Whether the file system has room again after it filled (``ROOM``)."""
        try:
            st = os.fstatvfs(self.dirs.root.fd)
        except OSError:
            return False
        want = max(min(ROOM, st.f_blocks * st.f_frsize // 10), 4 * self._tick_bytes)
        return st.f_bavail * st.f_frsize >= want

    def _drop(self, host: str, collector: str, what: str, e: Exception) -> None:
        """A value the archive cannot hold: one note per host and collector, never a stop."""
        if (host, collector) in self._dropped:
            return
        self._dropped.add((host, collector))
        self.warn(
            f"{self.root}: {host} {collector or 'engine'}: {what} cannot be stored ({e}); "
            "dropped, and any more like it from there, the rest is recorded"
        )

    def _bad_time(self, frame: Frame) -> None:
        """A frame stamped outside 1980-2100 (or NaN) is not a tick: dropped whole, one note
        per host, and the other hosts go on."""
        if (frame.host, "\0time") not in self._dropped:
            self._dropped.add((frame.host, "\0time"))
            self.warn(
                f"{self.root}: {frame.host}: a tick stamped {frame.time!r} is not a time a "
                "recording holds; dropped, and any more like it from there, the rest is recorded"
            )

    def _write_frame(self, frame: Frame, hdir: Dir) -> None:
        schema = self.schema_of(frame.host)
        self._tick_bytes = 0
        events: list[list[str]] = []
        for name, res in frame.collectors.items():
            status = res.status.value
            before = self._status.get((frame.host, name), Status.OK.value)
            if status != before:
                events.append(
                    [
                        fmt_time(frame.time),
                        frame.host,
                        name,
                        STATUS_KIND + status,
                        "",
                        fmt_value(res.error),
                        "",
                        fmt_time(frame.time),
                    ]
                )
            fields = schema.get(name)
            if fields is None or not res.rows:
                self._status[(frame.host, name)] = status
                continue
            rows = []
            for inst, row in res.rows.items():
                try:
                    rows.append(encode_row(frame.time, frame.host, inst, row, fields))
                except (ValueError, OverflowError) as err:
                    self._drop(frame.host, name, f"the row of {inst!r}", err)
            f = self._table(hdir, frame.host, name, fields, frame.time)
            size = f.size
            f.write(rows)
            self._tick_bytes += f.size - size
            self.rows_written += len(rows)
            self._status[(frame.host, name)] = status
        tick = fmt_time(frame.time)
        for e in frame.events:
            try:
                when = fmt_time(e.time)
            except (ValueError, OverflowError, OSError) as err:
                self._drop(frame.host, e.collector, f"a {e.kind} event's time", err)
                continue
            text, value = fmt_value(e.text), fmt_value(e.value)
            names = [fmt_value(x) for x in (frame.host, e.collector, e.kind, e.instance)]
            events.append([when, *names, text, value, tick])
        if events:
            self._events_file(hdir, frame.host).write(events)

    def _event(self, hdir: Dir, host: str, row: list[str]) -> None:
        with contextlib.suppress(OSError):
            self._events_file(hdir, host).write([row])

    def _open(self, hdir: Dir, base: str, head: list[str]) -> AppendFile:
        """A table of ``hdir`` to append to, flushed from now on."""
        f = AppendFile(hdir, base, head, self.warn)
        self.dirs.flusher.add(f)
        return f

    def _events_file(self, hdir: Dir, host: str) -> AppendFile:
        f = self._events.get(host)
        if f is not None and f.gone():
            self.warn(f"{f.path} was deleted while recording; a new one is started")
            self.dirs.flusher.retire(f)
            f = None
        if f is None:
            f = self._events[host] = self._open(hdir, "events", list(EVENT_COLUMNS))
        return f

    def _table(self, hdir: Dir, host: str, name: str, fields, t: float) -> AppendFile:
        stamp = period_stamp(t, self.rotate)
        cur = self._files.get((host, name))
        if cur is not None and cur[0] == stamp:
            if not cur[1].gone():
                return cur[1]
            self.warn(f"{cur[1].path} was deleted while recording; a new one is started")
            self.dirs.flusher.retire(cur[1])
            cur = None
        f = self._open(hdir, f"{name}_{stamp}", header(fields))
        self._files[(host, name)] = (stamp, f)
        if cur is not None:
            self.dirs.flusher.retire(cur[1])
            self._housekeep(safe_name(host), hdir, rotated=True)
        return f

    def _housekeep(self, name: str, hdir: Dir, rotated: bool) -> None:
        """Tidy the host directory ``name`` (``Retention``): only the tables this archive's
        meta.json says it holds, never another file."""
        hosts = self.meta["hosts"]
        ours = {c for h in hosts if safe_name(h) == name for c in hosts[h].get("collectors", {})}
        ours |= {c for h, c in self._files if safe_name(h) == name}
        open_names = {f.name for f in self._open_files() if f.dir is hdir}
        self.retention.tidy(hdir, ours, open_names, rotated, self._failing is not None)

    def _open_files(self) -> list[AppendFile]:
        return [f for _, f in self._files.values()]

    def _fail(self, e: OSError) -> None:
        self._lost += 1
        what = e.strerror or str(e)
        if self._failing is None:
            self._failing = what
            self._full = e.errno in ROOM_ERRNOS
            hint = "free some space" if e.errno in ROOM_ERRNOS else "fix the directory"
            self.warn(
                f"{self.root}: {what}; recording paused, nothing already written is damaged; "
                f"{hint} and it resumes by itself"
            )

    def close(self) -> None:
        """Close every file (the recorder's clean stop), each flushed to disk; compress them
        with --compress."""
        if self._closed:
            return
        self._closed = True
        files = self._open_files()
        self._files.clear()
        for f in [*files, *self._events.values()]:
            self.dirs.flusher.retire(f)
        self._events.clear()
        if self.compress:
            for f in files:
                with contextlib.suppress(OSError):
                    gzip_file(f.dir, f.name)
        with contextlib.suppress(OSError):  # the rows are on disk; meta.json has them already
            self._save_meta()
        self.dirs.close()

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

One file's appending lives in ``sgmon.sinks.csvfile``, what becomes of closed files
(``--compress``, ``--keep``) in ``sgmon.sinks.retention``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sgmon import __version__
from sgmon.archive import (
    ARCHIVE_FORMAT,
    EVENT_COLUMNS,
    STATUS_KIND,
    encode_row,
    field_columns,
    fmt_time,
    fmt_value,
    header,
    hist_bounds,
    host_specs,
    period_stamp,
    read_meta,
    safe_name,
    write_meta,
)
from sgmon.errors import ArchiveError, SinkFailed
from sgmon.model import Frame, Kind, Schema, Status
from sgmon.sinks.csvfile import ROOM_ERRNOS, AppendFile, gzip_file
from sgmon.sinks.retention import Retention
from sgmon.verdicts import Judgement

ROOM = 1 << 20
"""Free bytes the file system must have (a tenth of it when smaller, and at least 4 ticks'
worth) before writing resumes after a full disk: without a margin, a row that just fits after
the cut-back of a failed one makes every tick of an episode a "paused" and a "resumed"
message."""


def _host_dir_name(name: str) -> bool:
    """Whether an entry of the archive root counts against its being empty: not hidden, and not
    the root-only ``lost+found`` of a filesystem mounted there (an archive on its own volume)."""
    return not name.startswith(".") and name != "lost+found"


def prepare_dir(root: Path) -> dict | None:
    """Create or check the archive directory; returns the existing metadata.

    Raises ArchiveError for a foreign or unwritable directory, or a corrupt meta.json.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArchiveError(f"cannot create {root}: {e.strerror}; choose another --dir") from None
    if not root.is_dir():
        raise ArchiveError(f"{root} is not a directory; choose another --dir")
    meta = read_meta(root)
    if meta is None and any(_host_dir_name(p.name) for p in root.iterdir()):
        raise ArchiveError(f"{root} is not empty and not an sgmon archive; choose another --dir")
    probe = root / f".sgmon-write-test.{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ArchiveError(f"cannot write in {root}: {e.strerror}; choose another --dir") from None
    return meta


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
    ) -> None:
        self.root = root
        self.schema_of = schema_of
        self.interval = interval
        self.rotate = rotate
        self.compress = compress
        self.warn = warn or (lambda m: print(f"sgmon: {m}", file=sys.stderr, flush=True))
        self.retention = Retention(rotate, keep, compress, self.warn)
        old = prepare_dir(root)
        if old is not None and old.get("format") != ARCHIVE_FORMAT:
            os.replace(root / "meta.json", root / f"meta.v{old.get('format')}.json")
            old = None
        self.meta = old or {"format": ARCHIVE_FORMAT, "created": fmt_time(time.time())}
        self.meta.update(format=ARCHIVE_FORMAT, sgmon=__version__, interval=interval, rotate=rotate)
        self.meta.setdefault("hosts", {})
        self._files: dict[tuple[str, str], tuple[str, AppendFile]] = {}
        self._events: dict[str, AppendFile] = {}
        self._status: dict[tuple[str, str], str] = {}
        self._known: set[str] = set()
        self._failing: str | None = None
        self._full = False  # the failure is a full file system: resume only with room
        self._tick_bytes = 0
        self._lost = 0
        self._dropped: set[tuple[str, str]] = set()  # (host, collector) with a value dropped
        self._meta_saved = False
        self._dirs: dict[Path, tuple[int, int]] = {root: _identity(root)}
        """The directories written into, by identity: another one there is not ours."""
        self._host_paths: dict[str, Path] = {}
        try:
            self._save_meta()
        except OSError as e:
            self._fail(e)
        for h in host_specs(self.meta, []).values():  # our own directories, never a foreign one
            d = root / h["dir"]
            if d.is_dir() and not d.is_symlink():
                self._housekeep(d, rotated=False)
        self.rows_written = 0

    # --- metadata -------------------------------------------------------------------------

    def _save_meta(self) -> None:
        """Write meta.json now (raises OSError); until it succeeds no row is written."""
        self.meta["updated"] = fmt_time(time.time())
        self._meta_saved = False
        write_meta(self.root, self.meta)
        self._meta_saved = True

    def _learn_host(self, frame: Frame) -> None:
        schema = self.schema_of(frame.host)
        collectors = {}
        for name, fields in schema.items():
            collectors[name] = {
                "columns": header(fields),
                "fields": [
                    {
                        **f.to_dict(),
                        "columns": field_columns(f),
                        **({"bounds": list(hist_bounds(f))} if f.kind is Kind.HISTOGRAM else {}),
                    }
                    for f in fields
                ],
            }
        # merged into what the archive already says of the host: an import of its AWR after
        # its sar, or a restart with another collector set, keeps the older tables readable
        known = self.meta["hosts"].get(frame.host)
        known = known if isinstance(known, dict) else {}
        self.meta["hosts"][frame.host] = {
            **known,
            "role": frame.role or known.get("role", ""),
            "dir": safe_name(frame.host),
            "collectors": {**known.get("collectors", {}), **collectors},
        }
        self._known.add(frame.host)
        self._meta_saved = False  # written before this host's first row

    # --- writing --------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement | None = None) -> None:
        """Append one frame (the numbers only: findings.csv keeps the verdicts); never raises
        for I/O trouble (it is reported and retried)."""
        self._check_dirs(frame.host)
        if frame.host not in self._known:
            self._learn_host(frame)
        try:
            if self._full and not self._room():
                self._lost += 1
                return
            if not self._meta_saved:
                self._save_meta()
            self._write_frame(frame)
        except OSError as e:
            self._fail(e)
            return
        if self._failing is not None:
            self.warn(
                f"{self.root}: writing again ({self._lost} tick(s) not recorded while "
                f"{self._failing})"
            )
            self._event(
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
        for d in (self.root, self._host_path(host)):
            ident = self._dirs.get(d)
            if ident is None:
                continue  # the host's directory is made at its first row
            try:
                same = _identity(d) == ident
            except OSError:
                same = False
            if not same:
                raise SinkFailed(
                    f"{d} was deleted or replaced while recording into it ({self.rows_written} "
                    "rows written this run were there); recording stopped: start it again"
                )

    def _room(self) -> bool:
        """Whether the file system has room again after it filled (``ROOM``)."""
        try:
            st = os.statvfs(self.root)
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

    def _write_frame(self, frame: Frame) -> None:
        schema = self.schema_of(frame.host)
        hdir = self._host_dir(frame.host)
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
            self._events_file(frame.host).write(events)

    def _event(self, host: str, row: list[str]) -> None:
        with contextlib.suppress(OSError):
            self._events_file(host).write([row])

    def _host_path(self, host: str) -> Path:
        """Where the host's directory is (its safe name found once, not twice a frame)."""
        hdir = self._host_paths.get(host)
        if hdir is None:
            hdir = self._host_paths[host] = self.root / safe_name(host)
        return hdir

    def _host_dir(self, host: str) -> Path:
        """The host's directory, made (and its identity kept) at its first row."""
        hdir = self._host_path(host)
        if hdir not in self._dirs:
            hdir.mkdir(exist_ok=True)
            self._dirs[hdir] = _identity(hdir)
        return hdir

    def _events_file(self, host: str) -> AppendFile:
        f = self._events.get(host)
        if f is not None and f.gone():
            self.warn(f"{f.path} was deleted while recording; a new one is started")
            f.close()
            f = None
        if f is None:
            f = self._events[host] = AppendFile(self._host_dir(host), "events", list(EVENT_COLUMNS))
        return f

    def _table(self, hdir: Path, host: str, name: str, fields, t: float) -> AppendFile:
        stamp = period_stamp(t, self.rotate)
        cur = self._files.get((host, name))
        if cur is not None and cur[0] == stamp:
            if not cur[1].gone():
                return cur[1]
            self.warn(f"{cur[1].path} was deleted while recording; a new one is started")
            cur[1].close()
            cur = None
        f = AppendFile(hdir, f"{name}_{stamp}", header(fields))
        self._files[(host, name)] = (stamp, f)
        if cur is not None:
            cur[1].close()
            self._housekeep(hdir, rotated=True)
        return f

    def _housekeep(self, hdir: Path, rotated: bool) -> None:
        """Tidy a host's directory (``Retention``): only the tables this archive's meta.json
        says it holds, never another file."""
        if hdir.name in (".", "..") or hdir.resolve().parent != self.root.resolve():
            return  # a host named "..": its files are not in this archive
        hosts = self.meta["hosts"]
        ours = {
            c for h in hosts if safe_name(h) == hdir.name for c in hosts[h].get("collectors", {})
        }
        ours |= {n for h, n in self._files if safe_name(h) == hdir.name}
        open_paths = {f.path for _, f in self._files.values()}
        self.retention.tidy(hdir, ours, open_paths, rotated, self._failing is not None)

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
        """Close every file (the recorder's clean stop); compress them with --compress."""
        files = [f for _, f in self._files.values()]
        self._files.clear()
        for f in [*files, *self._events.values()]:
            f.close()
        self._events.clear()
        if self.compress:
            for f in files:
                with contextlib.suppress(OSError):
                    gzip_file(f.path)
        with contextlib.suppress(OSError):  # the rows are on disk; meta.json has them already
            self._save_meta()


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino

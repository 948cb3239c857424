"""The recorder's sink: frames -> the CSV archive described in ``sgmon.archive``.

Durability rules, each for a complaint users make about other recorders:
- Each tick's rows of a table go to the kernel in one ``write()`` on an ``O_APPEND`` descriptor,
  so a kill -9 loses at most the row being written; on reopening, a torn last line (no newline) is
  cut off before appending, so it never glues onto the next row.
- A failed write (disk full, quota) is undone with ``ftruncate`` to the last good size, reported
  once, and retried every tick; rows already written are never touched.
- A file is appended to only when its header is byte-for-byte the one this version would write;
  otherwise a new file ``<collector>_<stamp>-2.csv`` is started beside it.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import gzip
import io
import itertools
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sgmon import __version__
from sgmon.archive import (
    ARCHIVE_FORMAT,
    EVENT_COLUMNS,
    FILE_RE,
    STATUS_KIND,
    encode_row,
    field_columns,
    fmt_time,
    fmt_value,
    header,
    hist_bounds,
    period_stamp,
    read_meta,
    safe_name,
    write_meta,
)
from sgmon.errors import ArchiveError
from sgmon.model import Frame, Kind, Schema, Status
from sgmon.verdicts import Judgement

_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _csv_bytes(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode()


class AppendFile:
    """One CSV file with a fixed header; each ``write`` lands whole or not at all."""

    def __init__(self, directory: Path, base: str, head: list[str]) -> None:
        self.header = _csv_bytes([head])
        self.path, self.fd, self.size = self._open(directory, base)

    def _open(self, directory: Path, base: str) -> tuple[Path, int, int]:
        for n in itertools.count(1):
            path = directory / (f"{base}.csv" if n == 1 else f"{base}-{n}.csv")
            if path.with_name(path.name + ".gz").exists():
                continue  # closed and compressed earlier (the clock went back): never reopen
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            size = os.fstat(fd).st_size
            if size == 0:
                try:
                    self._write_all(fd, self.header, 0)
                except OSError:
                    os.close(fd)
                    path.unlink(missing_ok=True)
                    raise
                return path, fd, len(self.header)
            if os.pread(fd, len(self.header), 0) != self.header:
                os.close(fd)  # another format or field set: never mix headers
                continue
            return path, fd, self._cut_torn_tail(fd, size)
        raise AssertionError("unreachable")

    @staticmethod
    def _cut_torn_tail(fd: int, size: int) -> int:
        """Drop a last line without its newline (a row torn by a kill -9)."""
        if os.pread(fd, 1, size - 1) == b"\n":
            return size
        start = max(0, size - (1 << 20))
        tail = os.pread(fd, size - start, start)
        good = start + tail.rfind(b"\n") + 1
        os.ftruncate(fd, good)
        return good

    @staticmethod
    def _write_all(fd: int, data: bytes, good: int) -> None:
        try:
            done = os.write(fd, data)
            if done != len(data):  # a short write is the disk filling up
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, good)
            raise

    def write(self, rows: list[list[str]]) -> None:
        """Append rows in one write; on failure the file is cut back to its last good size."""
        data = _csv_bytes(rows)
        self._write_all(self.fd, data, self.size)
        self.size += len(data)

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def gzip_file(path: Path) -> None:
    """Compress a closed file to ``.gz`` (temp + rename, then remove the original)."""
    gz = path.with_name(path.name + ".gz")
    tmp = path.with_name(f".{gz.name}.tmp")
    try:
        with open(path, "rb") as src, gzip.open(tmp, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp, gz)
        path.unlink()
    except OSError:
        tmp.unlink(missing_ok=True)  # the plain file stays: replay reads both
        raise


def _plain_file(p: Path) -> bool:
    """A regular file, not a symlink to something elsewhere: retention never follows one."""
    return p.is_file() and not p.is_symlink()


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
        self.keep = keep
        self.compress = compress
        self.warn = warn or (lambda m: print(f"sgmon: {m}", file=sys.stderr, flush=True))
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
        self._lost = 0
        self._write_meta()
        for host in self.meta["hosts"]:  # our own directories, never a foreign one
            d = root / safe_name(host)
            if d.is_dir() and not d.is_symlink():
                self._housekeep(d, None)
        self.rows_written = 0

    # --- metadata -------------------------------------------------------------------------

    def _write_meta(self) -> None:
        self.meta["updated"] = fmt_time(time.time())
        try:
            write_meta(self.root, self.meta)
        except OSError as e:
            self._fail(e)

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
        known = self.meta["hosts"].get(frame.host, {})
        self.meta["hosts"][frame.host] = {
            **known,
            "role": frame.role or known.get("role", ""),
            "dir": safe_name(frame.host),
            "collectors": {**known.get("collectors", {}), **collectors},
        }
        self._known.add(frame.host)
        self._write_meta()

    # --- writing --------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement | None = None) -> None:
        """Append one frame (the numbers only: findings.csv keeps the verdicts); never raises
        for I/O trouble (it is reported and retried)."""
        if frame.host not in self._known:
            self._learn_host(frame)
        try:
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
            self._failing, self._lost = None, 0

    def _write_frame(self, frame: Frame) -> None:
        schema = self.schema_of(frame.host)
        hdir = self.root / safe_name(frame.host)
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
            f = self._table(hdir, frame.host, name, fields, frame.time)
            f.write(
                [
                    encode_row(frame.time, frame.host, inst, row, fields)
                    for inst, row in res.rows.items()
                ]
            )
            self.rows_written += len(res.rows)
            self._status[(frame.host, name)] = status
        events.extend(
            [
                fmt_time(e.time),
                frame.host,
                e.collector,
                e.kind,
                e.instance,
                fmt_value(e.text),
                fmt_value(e.value),
                fmt_time(frame.time),
            ]
            for e in frame.events
        )
        if events:
            self._events_file(frame.host).write(events)

    def _event(self, host: str, row: list[str]) -> None:
        with contextlib.suppress(OSError):
            self._events_file(host).write([row])

    def _events_file(self, host: str) -> AppendFile:
        f = self._events.get(host)
        if f is None:
            hdir = self.root / safe_name(host)
            hdir.mkdir(exist_ok=True)
            f = self._events[host] = AppendFile(hdir, "events", list(EVENT_COLUMNS))
        return f

    def _table(self, hdir: Path, host: str, name: str, fields, t: float) -> AppendFile:
        stamp = period_stamp(t, self.rotate)
        cur = self._files.get((host, name))
        if cur is not None and cur[0] == stamp:
            return cur[1]
        hdir.mkdir(exist_ok=True)
        f = AppendFile(hdir, f"{name}_{stamp}", header(fields))
        self._files[(host, name)] = (stamp, f)
        if cur is not None:
            cur[1].close()
            self._housekeep(hdir, cur[1].path)
        return f

    def _housekeep(self, hdir: Path, closed: Path | None) -> None:
        """Compress closed files and delete whole files older than --keep: only the tables this
        archive's meta.json says the host's directory holds, never another file."""
        if hdir.name in (".", "..") or hdir.resolve().parent != self.root.resolve():
            return  # a host named "..": its files are not in this archive
        hosts = self.meta["hosts"]
        ours = {
            c for h in hosts if safe_name(h) == hdir.name for c in hosts[h].get("collectors", {})
        }
        ours |= {n for h, n in self._files if safe_name(h) == hdir.name}
        open_paths = {f.path for _, f in self._files.values()}
        now = time.time()
        current = period_stamp(now, self.rotate)
        try:
            entries = sorted(hdir.iterdir())
        except OSError as e:
            self.warn(f"{hdir}: {e.strerror}; not tidied")
            return
        for p in entries:
            m = FILE_RE.match(p.name)
            if not m or m["collector"] not in ours or p in open_paths or not _plain_file(p):
                continue
            try:
                if self.keep is not None and p.stat().st_mtime < now - self.keep:
                    p.unlink()
                elif (
                    self.compress and not m["gz"] and (closed is not None or m["stamp"] != current)
                ):
                    gzip_file(p)
            except OSError as e:
                self.warn(f"{p}: {e.strerror}; left as it is")

    def _fail(self, e: OSError) -> None:
        self._lost += 1
        what = e.strerror or str(e)
        if self._failing is None:
            self._failing = what
            hint = "free some space" if e.errno in _ROOM else "fix the directory"
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
        self._write_meta()

"""One CSV file of the archive: its rows appended whole or not at all, compressed once closed.

- Each ``write`` goes to the kernel in one ``write()`` on an ``O_APPEND`` descriptor, so a
  kill -9 loses at most the rows being written; on reopening, a torn last line (no newline) is
  cut off before appending, so it never glues onto the next row.
- A failed write (disk full, quota) is undone with ``ftruncate`` to the last good size; rows
  already written are never touched.
- A file is appended to only when its header is byte-for-byte the one this version would write;
  otherwise a new file ``<base>-2.csv`` is started beside it.
- A file is opened in its host's directory by descriptor (``sgmon.safefs``): made exclusively,
  or appended to when it is a regular file with no other name.  A symlink, a FIFO, a device, a
  directory or a hard link planted at its name is left alone with one note, and the rows go to
  a new file beside it, as for another header.
- When the rows reach the disk is ``sgmon.sinks.flush``'s business: a file says whether it has
  rows not yet flushed (``unsynced``), and is closed by the flusher.
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
from collections.abc import Callable

from sgmon.safefs import Dir, Refused

ROOM_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""The errors of a file system without room (full, over quota, a file over its limit)."""


def _csv_bytes(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode(errors="backslashreplace")  # a lone surrogate from a source


class AppendFile:
    """One CSV file with a fixed header; each ``write`` lands whole or not at all."""

    def __init__(
        self, directory: Dir, base: str, head: list[str], warn: Callable[[str], None]
    ) -> None:
        self.dir = directory
        self.header = _csv_bytes([head])
        self.name, self.fd, self.size = self._open(base, warn)
        self.unsynced = False
        """Rows written since the last flush to disk."""

    @property
    def path(self) -> str:
        """Where the file is, for messages."""
        return self.dir.join(self.name)

    def _open(self, base: str, warn: Callable[[str], None]) -> tuple[str, int, int]:
        for n in itertools.count(1):
            name = f"{base}.csv" if n == 1 else f"{base}-{n}.csv"
            if self.dir.lstat(name + ".gz") is not None:
                continue  # closed and compressed earlier (the clock went back): never reopen
            try:
                fd = self.dir.open_append(name)
            except Refused as e:
                warn(f"{e}, not a file sgmon wrote; left alone, the rows go to a file beside it")
                continue
            size = os.fstat(fd).st_size
            if size == 0:
                try:
                    self._write_all(fd, self.header, 0)
                except OSError:
                    os.close(fd)
                    self.dir.unlink_quietly(name)
                    raise
                return name, fd, len(self.header)
            if os.pread(fd, len(self.header), 0) != self.header:
                os.close(fd)  # another format or field set: never mix headers
                continue
            return name, fd, self._cut_torn_tail(fd, size)
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

    def gone(self) -> bool:
        """Whether the file was deleted under us (rows written now would be nowhere)."""
        return self.fd >= 0 and os.fstat(self.fd).st_nlink == 0

    def write(self, rows: list[list[str]]) -> None:
        """Append rows in one write; on failure the file is cut back to its last good size."""
        data = _csv_bytes(rows)
        self._write_all(self.fd, data, self.size)
        self.size += len(data)
        self.unsynced = True

    def close(self) -> None:
        """Close the descriptor (idempotent); the flusher's to call, after the last flush."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def gzip_file(directory: Dir, name: str) -> None:
    """Compress the closed file ``name`` to ``name.gz``: written to a temporary file, flushed to
    disk, renamed, then the original removed, so a power cut leaves one of the two whole.  A
    ``name`` that is not a regular file with one name is ``Refused``."""
    gz = name + ".gz"
    with os.fdopen(directory.open_file(name, os.O_RDONLY), "rb") as src:
        tmp, fd = directory.temp(gz)
        try:
            with os.fdopen(fd, "wb") as raw:
                with gzip.GzipFile(name, "wb", 6, raw) as dst:
                    shutil.copyfileobj(src, dst)
                raw.flush()
                os.fsync(fd)
            directory.replace(tmp, gz)
        except OSError:
            directory.unlink_quietly(tmp)  # the plain file stays: replay reads both
            raise
    directory.unlink(name)

"""One CSV file of the archive: its rows appended whole or not at all, compressed once closed.

- Each ``write`` goes to the kernel in one ``write()`` on an ``O_APPEND`` descriptor, so a
  kill -9 loses at most the rows being written; on reopening, a torn last line (no newline) is
  cut off before appending, so it never glues onto the next row.
- A failed write (disk full, quota) is undone with ``ftruncate`` to the last good size; rows
  already written are never touched.
- A file is appended to only when its header is byte-for-byte the one this version would write;
  otherwise a new file ``<base>-2.csv`` is started beside it.
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
from pathlib import Path

ROOM_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""The errors of a file system without room (full, over quota, a file over its limit)."""


def _csv_bytes(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode(errors="backslashreplace")  # a lone surrogate from a source


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

    def gone(self) -> bool:
        """Whether the file was deleted under us (rows written now would be nowhere)."""
        return self.fd >= 0 and os.fstat(self.fd).st_nlink == 0

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

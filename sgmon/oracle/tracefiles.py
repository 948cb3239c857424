"""Which trace files to follow, and following one like ``tail -F``.

Oracle names a background process's trace ``<sid>_<process>_<ospid>.trc``
(``oravm1_lgwr_17884.trc``, ``XXXXXX_lg00_280164.trc`` in jkstill/lgwr-trace-parse), so an
instance restart, an NSS respawn or an RFS reconnect starts a new file, and from 12c the
LGWR-path warnings may be written by the LGnn workers instead of LGWR.  A configured path is
therefore a starting point, not the file: its directory, SID and process name are kept, and the
current file of each process (LGWR and every LGnn for ``lgwr``) is the newest one with that name.
A directory instead of a file follows every SID found there.  The set is derived again when a
followed file has been quiet for a while (``rescan_s``), which costs one directory listing.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sgmon.readers.regular import open_regular

MAX_READ = 1 << 20
"""Bytes read from one file per call: a 2 GB backlog costs memory of this order, not of 2 GB."""
REST_MAX = 16 << 20
"""Bytes read from a file being abandoned for a newer one (the rest is counted, not read)."""
TAIL = 64
"""Bytes before the read offset compared on each call, to see a file rewritten in place."""
BEHIND_MAX = 8 << 20
"""Bytes a followed file may be ahead of the reader (once a ``from_start`` backlog is read): past
it, a flood of lines, the reader jumps to the newest ``MAX_READ`` bytes, so a slow write logged
after the flood is read in the tick it is written, not minutes later or never."""
SCAN_MAX = 64 << 20
"""Bytes of one line longer than ``MAX_READ`` (or of a sparse hole) looked through for its end
in one call, a megabyte at a time, none of it kept: what follows it is read at once."""
# kind -> the process names (as in the file name) whose traces it reads; 11.2 calls NSSn LNSn
PROCESSES = {
    "lgwr": re.compile(r"lgwr|lg[0-9a-z]{2}"),
    "nss": re.compile(r"nss[0-9a-z]|lns[0-9a-z]"),
    "rfs": re.compile(r"rfs"),
}
_NAME = re.compile(r"^(?P<sid>.+)_(?P<proc>[a-z][0-9a-z]*)_(?P<pid>\d+)\.trc$")


@dataclass(frozen=True, slots=True)
class TraceName:
    """What a trace file's name says: the instance, the process and its OS pid."""

    sid: str
    proc: str
    pid: int

    @property
    def group(self) -> str:
        """One followed file per group: a newer file of the group replaces the older one."""
        return f"{self.sid}_{self.proc}"


def trace_name(path: str) -> TraceName | None:
    """``.../PROD_lg00_4711.trc`` -> (PROD, lg00, 4711); None for any other name (a segment
    ``..._4711_1.trc`` is an old piece, not the file being written)."""
    m = _NAME.match(os.path.basename(path))
    return TraceName(m["sid"], m["proc"], int(m["pid"])) if m else None


def wanted(kind: str, sid: str) -> str:
    """The name pattern of the trace files of one kind for one SID (``*``: any)."""
    pattern = ".+" if sid == "*" else re.escape(sid)
    return rf"{pattern}_(?:{PROCESSES[kind].pattern})_\d+\.trc"


def followed(kind: str, spec: str) -> tuple[str, str]:
    """The directory and the name pattern of the files a configured path follows, from the path
    alone (a remote host's, which this machine cannot list): a process's trace names its
    instance and kind, another ``.trc`` only itself, anything else a directory of any SID."""
    name = trace_name(spec)
    if name is not None and PROCESSES[kind].fullmatch(name.proc):
        return os.path.dirname(spec) or ".", wanted(kind, name.sid)
    if spec.endswith(".trc"):
        return os.path.dirname(spec) or ".", re.escape(os.path.basename(spec))
    return spec.rstrip("/") or "/", wanted(kind, "*")


class Finder:
    """The current trace files of one kind (``lgwr``, ``nss``, ``rfs``) from a configured path."""

    def __init__(self, kind: str, spec: str) -> None:
        self.kind = kind
        self.spec = spec
        self._fixed = False
        if os.path.isdir(spec):
            self.dir, self.sid = spec, "*"
        else:
            self.dir = os.path.dirname(spec) or "."
            name = trace_name(spec)
            self.sid = name.sid if name else ""
            self._fixed = name is None or not PROCESSES[kind].fullmatch(name.proc)
        self._want = re.compile(wanted(kind, self.sid))

    @property
    def dynamic(self) -> bool:
        """Whether the path names a process (so its current file may be another one)."""
        return not self._fixed

    def current(self) -> dict[str, str]:
        """Group -> the newest file of that group (a path that names no process: itself)."""
        if self._fixed:
            return {self.spec: self.spec}
        newest: dict[str, tuple[float, str]] = {}
        try:
            with os.scandir(self.dir) as entries:  # one listing, a stat only for our processes
                for e in entries:
                    name = trace_name(e.name) if self._want.fullmatch(e.name) else None
                    if name is None:
                        continue
                    try:
                        mtime = e.stat().st_mtime
                    except OSError:
                        continue
                    best = newest.get(name.group)
                    if best is None or (mtime, e.path) > best:
                        newest[name.group] = (mtime, e.path)
        except OSError:
            pass  # no directory (yet): the configured file is waited for below
        if not newest and self.sid != "*" and not os.path.isdir(self.spec):
            return {self.spec: self.spec}  # nothing there yet: wait for the configured file
        return {g: p for g, (_, p) in newest.items()}


class Follower:
    """``tail -F`` of one file: complete new lines since the last call, across rotation.

    Memory stays bounded whatever the file: at most ``MAX_READ`` bytes are read per call (a
    backlog is read over several calls, never whole), a "line" without a newline for
    ``MAX_READ`` bytes is dropped, and of a file renamed away or abandoned at most ``REST_MAX``
    more bytes are read before the follower moves on (the rest is counted in ``dropped``).  A
    file rewritten in place (cut and written again, even past the old end within one tick) is
    seen by its last bytes read having changed, and is read again from its start, so no line
    written after the cut is lost.  A file that appears after the follower was made is read
    from its first byte.  Anything but a regular file (a FIFO, a directory, a symlink loop, no
    permission) sets ``error`` and is never opened in a way that could block.
    """

    def __init__(self, path: str, from_start: bool = False) -> None:
        self.path = path
        self.error: str | None = None
        """Why the file cannot be read now, None while it can (or is not there yet)."""
        self.dropped = 0
        """Bytes of a renamed or abandoned file left unread; the reader says so and resets it."""
        self.skipped = 0
        """Bytes jumped over in the file followed: a line of over ``MAX_READ`` bytes, or a flood
        that left the reader ``BEHIND_MAX`` behind; the reader says so and resets it."""
        self._resync = False  # in the middle of a line: what comes before its newline is not read
        self._backlog = 0  # where a from_start backlog ends: no jump before it
        self._junk = 0  # bytes of the file being left that were no line
        self._fd: int | None = None
        self._id: tuple[int, int] | None = None
        self._pos = 0
        self._tail = b""  # the last bytes before _pos, to see a file rewritten in place
        self._partial = b""
        self._left = REST_MAX  # what may still be read of this file once it is renamed away
        self._from_start = from_start
        st = self._stat()
        if st is not None:
            self._open()
        elif self.error is None:
            self._from_start = True  # created later: every line it gets is news

    def _stat(self) -> os.stat_result | None:
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            self.error = None  # not there (yet): waited for, not a fault
            return None
        except OSError as e:  # a symlink loop, a directory we may not search
            self.error = f"cannot read {self.path}: {e.strerror or e}"
            return None
        return st

    def _open(self) -> None:
        try:
            fd = open_regular(self.path)
        except OSError as e:
            self.error = f"cannot read {self.path}: {e.strerror or e}"
            return
        self.error = None
        st = os.fstat(fd)
        self._fd, self._id = fd, (st.st_dev, st.st_ino)
        self._left, self._resync = REST_MAX, False
        self._pos = 0 if self._from_start else st.st_size
        self._backlog = st.st_size if self._from_start else 0
        keep = min(TAIL, self._pos)
        self._tail = os.pread(fd, keep, self._pos - keep) if keep else b""
        self._from_start = True  # a file that reappears later is read whole

    def _read(self, limit: int = MAX_READ) -> bytes:
        assert self._fd is not None
        data = os.pread(self._fd, limit, self._pos)
        self._pos += len(data)
        if data:
            self._tail = (self._tail + data[-TAIL:])[-TAIL:]
        return data

    def _rewritten(self, size: int) -> bool:
        """Cut in place since the last read (and maybe written past the old end since)."""
        if size < self._pos:
            return True
        assert self._fd is not None
        n = len(self._tail)
        return n > 0 and os.pread(self._fd, n, self._pos - n) != self._tail

    def lines(self) -> list[str]:
        """New complete lines (a partial last line waits for its newline)."""
        st = self._stat()
        data = b""
        if self._fd is not None:
            if st is None or (st.st_dev, st.st_ino) != self._id:
                if not self._abandon_chunk():  # the old file's tail first, a chunk a call
                    return self._leaving(self._read(MAX_READ))
                data = self._read(min(MAX_READ, self._left))
                if (data or self._partial) and not (data or self._partial).endswith(b"\n"):
                    data += b"\n"  # a line cut by the rotation ends there
                self._skip_rest()
                self._close()
            elif self._rewritten(st.st_size):
                self._pos, self._tail, self._partial = 0, b"", b""
                self._resync = False
            else:
                self._catch_up(st.st_size)
        if self._fd is None and st is not None:
            self._open()
        if self._fd is not None and not (self._resync and not self._scan()):
            data += self._read()
        return self._split(data)

    def _leaving(self, data: bytes) -> list[str]:
        """The lines of a chunk of the file being left: what of it is not a line counts as
        left unread (``dropped``), as the rest of that file does."""
        lines = self._split(data)
        self._junk += self.skipped  # said with the rest of that file, once, when it is left
        self.skipped, self._resync = 0, False
        return lines

    def _catch_up(self, size: int) -> None:
        """Past ``BEHIND_MAX`` behind (after the backlog), jump to the newest ``MAX_READ`` bytes:
        the line cut there is not read (``_resync``), and every byte jumped counts in
        ``skipped``."""
        behind = size - self._pos
        if behind <= BEHIND_MAX or self._pos < self._backlog:
            return
        jump = behind - MAX_READ
        self.skipped += jump + len(self._partial)
        self._pos += jump
        self._partial, self._resync = b"", True
        assert self._fd is not None
        self._tail = os.pread(self._fd, TAIL, self._pos - TAIL)  # not a rewrite: a jump

    def _scan(self) -> bool:
        """Look for the end of the line being skipped, a megabyte at a time up to ``SCAN_MAX``
        bytes a call: True once past its newline (what follows is read), False while not."""
        assert self._fd is not None
        for _ in range(SCAN_MAX // MAX_READ):
            chunk = os.pread(self._fd, MAX_READ, self._pos)
            if not chunk:
                return False
            end = chunk.find(b"\n")
            step = len(chunk) if end < 0 else end + 1
            self._pos += step
            self.skipped += step
            self._tail = (self._tail + chunk[:step][-TAIL:])[-TAIL:]
            if end >= 0:
                self._resync = False
                return True
        return False

    def _split(self, data: bytes) -> list[str]:
        if not data:
            return []
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        if len(self._partial) > MAX_READ:  # no newline for a megabyte: not a trace line
            self.skipped += len(self._partial)
            self._partial, self._resync = b"", True  # the rest of it is scanned, not read
        return [line.decode("utf-8", "replace").rstrip("\r") for line in complete]

    def _abandon_chunk(self) -> bool:
        """Whether what is left of a file being left (up to ``REST_MAX`` in all) fits in one
        more read; if not, one chunk of it is charged to the allowance."""
        assert self._fd is not None
        left = min(self._left, max(0, os.fstat(self._fd).st_size - self._pos))
        if left <= MAX_READ:
            return True
        self._left -= MAX_READ
        return False

    def _skip_rest(self) -> None:
        """Count what is left unread of the file being left."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.dropped += max(0, os.fstat(self._fd).st_size - self._pos) + self._junk
            self._junk = 0

    def rest(self) -> Iterator[list[str]]:
        """What is left of a file being abandoned, in chunks, its unfinished last line included;
        past ``REST_MAX`` bytes the rest is left unread and counted in ``dropped``."""
        while self._fd is not None and self._left > 0:
            data = self._read(min(MAX_READ, self._left))
            if not data:
                break
            self._left -= len(data)
            yield self._split(data)
        self._skip_rest()
        if self._partial:
            yield [self._partial.decode("utf-8", "replace")]
            self._partial = b""

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = None
        self._id = None

    def close(self) -> None:
        """Release the file."""
        self._close()

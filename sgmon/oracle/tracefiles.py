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

import os
import re
from dataclasses import dataclass
from typing import BinaryIO

MAX_READ = 4 << 20  # bytes read from one file per tick
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
    """``tail -F`` of one file: complete new lines since the last call, across rotation."""

    def __init__(self, path: str, from_start: bool = False) -> None:
        self.path = path
        self.error: str | None = None
        """Why the file cannot be read (set once; the reader says it once)."""
        self._f: BinaryIO | None = None
        self._ino: int | None = None
        self._partial = b""
        self._from_start = from_start
        if os.path.exists(path):
            self._open()

    def _open(self) -> None:
        try:
            self._f = open(self.path, "rb")  # noqa: SIM115 - kept open across calls
        except OSError as e:
            self.error = f"cannot read {self.path}: {e.strerror}"
            return
        f = self._f
        self._ino = os.fstat(f.fileno()).st_ino
        if not self._from_start:
            f.seek(0, os.SEEK_END)
        self._from_start = True  # a file that appears (or reappears) later is read whole

    def lines(self) -> list[str]:
        """New complete lines (a partial last line waits for its newline)."""
        data = b""
        try:
            st = os.stat(self.path)
        except OSError:
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

    def rest(self) -> list[str]:
        """What is left of a file being abandoned, its unfinished last line included."""
        out = self.lines()
        if self._partial:
            out.append(self._partial.decode("utf-8", "replace"))
            self._partial = b""
        return out

    def _close(self) -> None:
        if self._f is not None:
            self._f.close()
        self._f = None
        self._ino = None

    def close(self) -> None:
        """Release the file."""
        self._close()

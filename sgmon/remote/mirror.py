"""The consumer's side of the pump: what to ask for, and a local tree of what arrives.

The pump's files are written, each tick, into a private directory laid out like the host's
``/`` (``proc/stat``, ``sys/class/net/eth0/speed`` ...), in place (same inode), so the
collectors, opened once on it through their ``root`` option, re-read them as they re-read
/proc; the Data Guard sockets' netlink replies go to ``sock_diag`` there, where the ``tcp``
collector decodes them with the same reader as a local dump, and the routes toward their peers
(where rto_min is) to ``routes``.  Nothing is parsed twice and no
reader exists only for remote hosts.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import shutil
import struct
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sgmon.readers.inet_diag import SOCK_DIAG_DUMP, Selection
from sgmon.readers.rtnl import ROUTES_DUMP
from sgmon.readers.tracefs import PUMPED
from sgmon.remote.pump import DIAG, EXTRA, HEAD, PROCS, RETRANS, ROUTES, TRACE

WHEN = ("tick", "retrans", "slow")
"""When a pump reads a file a collector declares (``Collector.remote_files``): each tick; when
TCP's RetransSegs moved, and with the slow files (/proc/net/netstat, whose counters move only
with a retransmission, costs the kernel 2.5 times /proc/net/snmp); every SLOW_EVERY seconds
(settings the collectors cache for seconds anyway: socket buffer caps, which block devices are
partitions, link speeds; a glob is looked up again only when its directory lists other names)."""
SLOW_EVERY = 10.0
OPENS = {"out": [0], "in": [1], "both": [0, 1]}
"""The host's connection counters a new socket of a direction comes with (pump.TcpCounters:
ActiveOpens, PassiveOpens): a connection opened toward a Data Guard port, one accepted on it."""


def program() -> bytes:
    """The pump's source, as sent to the remote python3."""
    with open(os.path.join(os.path.dirname(__file__), "pump.py"), "rb") as fh:
        return fh.read()


BOOTSTRAP = (
    "import sys;b=sys.stdin.buffer;sys.version_info>=(3,6) or sys.exit("
    '"python3 "+sys.version.split()[0]+" is older than 3.6, which sgmon needs there");'
    "exec(b.read(int(b.readline())))"
)
"""What ``python3 -I -c`` runs on the far side: read the program's length, then the program,
from stdin (no single quotes inside, so it survives the remote shell in single quotes); an
interpreter too old to run it says so in one line."""


PROCESS_FILE = re.compile(
    r"/proc/\d+(?:/task/\d+)?/(?:comm|stat|io|wchan|schedstat|status)|/proc/net/tcp6?"
)
"""The files of a followed process a pump may name, and the socket tables that tell which
server processes hold a Data Guard socket (see pump.Processes)."""
SOCKET_LINK = re.compile(r"/proc/\d+/fd/\d+")
SOCKET = re.compile(r"socket:\[\d+\]")
"""A followed server process's descriptor of a Data Guard socket, as the pump names it: a
symbolic link here as there."""


@dataclass(frozen=True, slots=True)
class Shipped:
    """The host files a pump ships, by when it reads them (see WHEN), in the order of the
    tick's pieces, and the lines it keeps of some (host file -> a regular expression: the
    collectors' ``lines``)."""

    tick: tuple[str, ...] = ()
    retrans: tuple[str, ...] = ()
    slow: tuple[str, ...] = ()
    lines: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def declared(
        cls,
        files: Iterable[Mapping[str, str]],
        lines: Mapping[str, str],
    ) -> Shipped:
        """What the collectors declare (their ``remote_files``, in order): a file named twice
        is shipped once, when its first declaration says; one named for another time than
        WHEN's is not shipped."""
        when: dict[str, str] = {}
        for declared in files:
            for path, cadence in declared.items():
                when.setdefault(path, cadence)
        tick, retrans, slow = (tuple(p for p, w in when.items() if w == c) for c in WHEN)
        return cls(tick, retrans, slow, dict(lines))

    def is_slow(self, path: object) -> bool:
        """Whether a path the pump names as slow is one a slow glob can match."""
        return isinstance(path, str) and any(fnmatch.fnmatchcase(path, g) for g in self.slow)


def aim(sockets: Selection) -> dict[str, object]:
    """The pump's search for the DG sockets: the request, ``rediscover``, and the connection
    counters whose moves can bring one (sent in the request, and again after a switchover)."""
    diag = [r.hex() for r in sockets.requests()]
    return {"diag": diag, "rediscover": sockets.rediscover, "prompt": OPENS[sockets.direction]}


def request(
    interval: float,
    shipped: Shipped,
    sockets: Selection | None = None,
    tails: Iterable[tuple[str, str]] = (),
    orphan_after: float = 60.0,
    trace: Mapping[str, object] | None = None,
    processes: Mapping[str, object] | None = None,
) -> bytes:
    """The bytes written to the remote python3's stdin: the program, then the pump's request:
    the files, the DG sockets (``sockets``: the tcp collector's, None for none), the trace
    files to tail, as (directory, name pattern), the tracepoints to record there (the retrans
    collector's ``remote_trace``) and the processes to follow (the procs collector's
    ``remote_processes``), None for none."""
    spec = {
        "interval": interval,
        "files": list(shipped.tick),
        "on_retrans": list(shipped.retrans),
        "slow": list(shipped.slow),
        "slow_every": SLOW_EVERY,
        "tails": [list(t) for t in tails],
        "orphan_after": orphan_after,
        "keep": dict(shipped.lines),
    }
    if processes is not None:
        spec["procs"] = dict(processes)
    if trace is not None:
        spec["trace"] = dict(trace)
    if sockets is not None:
        spec.update(aim(sockets))
    code = program()
    return b"%d\n" % len(code) + code + json.dumps(spec).encode() + b"\n"


def _note(body: bytes, pos: int, flags: int) -> tuple[dict[str, object], int]:
    """A tick's note (the slow files, the trace tails; {} without one) and where its pieces'
    sizes start."""
    if not flags & EXTRA:
        return {}, pos
    (size,) = struct.unpack_from("<I", body, pos)
    note = json.loads(body[pos + 4 : pos + 4 + size])
    if not isinstance(note, dict):
        raise ValueError("its note is not an object")
    return note, pos + 4 + size


PREFIX = "sgmon-mirror-"
"""Mirror directories are named PREFIX<pid>-<host>-<random>: the pid tells one left by a
process that was killed (and so could not remove it) from one in use."""


def _remove_orphans(base: str) -> None:
    """Remove the mirrors of sgmon processes that are gone."""
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for e in entries:
            pid = e.name[len(PREFIX) :].split("-", 1)[0]
            if e.name.startswith(PREFIX) and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(e.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


@dataclass(frozen=True, slots=True)
class Tick:
    """When the remote read a tick: its wall clock and its monotonic clock, its number, and its
    flags (which pieces it carries: pump.RETRANS ...)."""

    time: float
    monotonic: float
    seq: int
    flags: int = 0

    @classmethod
    def of(cls, body: bytes) -> Tick:
        """A tick's head alone (ValueError when too short): its clocks are checked before its
        files are written."""
        try:
            wall, mono, seq, flags, _ = HEAD.unpack_from(body)
        except struct.error as e:
            raise ValueError(f"corrupt tick: {e}") from None
        return cls(wall, mono, seq, flags)

    def carries_news(self) -> bool:
        """Whether it carries what the next tick may not (retransmission counters, the slow
        files, trace tails, routes, a process's files that moved: the next tick names them
        unchanged): kept in the mirror even when not read."""
        return bool(self.flags & (RETRANS | EXTRA | ROUTES | PROCS | TRACE))


class Mirror:
    """A private directory holding the remote host's files as the pump last shipped them."""

    def __init__(
        self,
        name: str,
        shipped: Shipped,
        followed: Iterable[str] = (),
        traced: bool = False,
        processes: bool = False,
    ) -> None:
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
        _remove_orphans(base)
        self.root = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{name}-", dir=base)
        self.shipped = shipped
        """What the pump was asked for: the names of a tick's pieces."""
        self._fds: dict[str, int] = {}
        self._slow: set[str] = set()
        self._procs: list[str] = []
        """The followed processes' files, as the pump last named them."""
        self.traced = traced
        """Whether the pump was asked to trace (else a tick with trace records is refused)."""
        self.processes = processes
        """Whether the pump was asked to follow processes (else a tick naming one is refused)."""
        self._links: list[str] = []
        self._spooled = 0
        self.followed = frozenset(os.path.normpath(d) for d in followed)
        for directory in self.followed:  # there before a file arrives, as a directory to follow
            os.makedirs(self.local(directory), exist_ok=True)

    def apply(self, chunk: bytes) -> Tick:
        """Write one tick's files into the tree (raises ValueError on a malformed tick)."""
        try:
            return self._apply(chunk)
        except (struct.error, ValueError) as e:  # a JSON, Unicode or size error is a ValueError
            raise ValueError(f"corrupt tick: {e}") from None

    def _apply(self, body: bytes) -> Tick:
        wall, mono, seq, flags, count = HEAD.unpack_from(body)
        note, pos = _note(body, HEAD.size, flags)
        slow, tails, procs = note.get("slow"), note.get("tails", []), note.get("procs")
        if not (
            isinstance(slow, list | None)
            and isinstance(tails, list)
            and isinstance(procs, list | None)
        ):
            raise ValueError("its note names no list")
        if not all(map(self.shipped.is_slow, slow or ())) or not all(map(self._followed, tails)):
            raise ValueError("a file that was not asked for")
        links = note.get("links")
        if procs is not None and not all(map(self._process_file, procs)):
            raise ValueError("a file that was not asked for")
        if links is not None and not self._socket_links(links):
            raise ValueError("a file that was not asked for")
        sizes = struct.unpack_from(f"<{count}i", body, pos)
        pos += 4 * count
        names = self._names(flags, slow, procs)
        if len(names) + len(tails) != count or pos + sum(n for n in sizes if n > 0) != len(body):
            raise ValueError("its pieces do not add up")
        if slow is not None:
            for gone in self._slow - set(slow):
                self._drop(gone)
            self._slow = set(slow)
        if procs is not None:
            for gone in set(self._procs) - set(procs):
                self._drop(gone)
            self._procs = procs
        if isinstance(links, dict):
            self._link(links)
        self._write(body, pos, sizes, names + tails, len(names))
        return Tick(wall, mono, seq, flags)

    def _write(
        self, body: bytes, pos: int, sizes: tuple[int, ...], paths: list[str], files: int
    ) -> None:
        """Write each piece (from ``pos`` on) to its path: the first ``files`` in place, the
        rest (trace tails) appended."""
        for i, size in enumerate(sizes):
            data = body[pos : pos + max(size, 0)]
            pos += max(size, 0)
            if size == -2:
                continue  # the pump's UNCHANGED: as this side already has it
            if paths[i] == "/" + PUMPED and i < files:
                self._spool(data)
            elif i >= files:
                self._append(paths[i], data)
            elif size < 0:
                self._drop(paths[i])  # gone there, or unreadable: gone here too
            else:
                self._put(paths[i], data)

    def _names(self, flags: int, slow: list[str] | None, procs: list[str] | None) -> list[str]:
        """The files a tick's pieces are, in order, before the trace tails."""
        names = list(self.shipped.tick)
        if flags & RETRANS:
            names += [*self.shipped.retrans, *(slow or ())]
        names += self._procs if procs is None else procs
        names += ["/" + SOCK_DIAG_DUMP] if flags & DIAG else []
        names += ["/" + ROUTES_DUMP] if flags & ROUTES else []
        if flags & TRACE and not self.traced:
            raise ValueError("trace records that were not asked for")
        names += ["/" + PUMPED] if flags & TRACE else []
        return names

    def _process_file(self, path: object) -> bool:
        """Whether a process's file the pump names is one of those a followed process has,
        and processes were asked for."""
        return (
            self.processes and isinstance(path, str) and (PROCESS_FILE.fullmatch(path) is not None)
        )

    def _socket_links(self, links: object) -> bool:
        """Whether a walk's socket descriptors are all such, of processes asked for."""
        return (
            self.processes
            and isinstance(links, dict)
            and all(isinstance(t, str) and SOCKET.fullmatch(t) for t in links.values())
            and all(SOCKET_LINK.fullmatch(p) for p in links)
        )

    def _link(self, links: dict[str, str]) -> None:
        """Make a walk's socket descriptors, those of the last walk removed."""
        for path in self._links:
            with contextlib.suppress(OSError):
                os.unlink(self.local(path))
        for path, target in links.items():
            os.makedirs(os.path.dirname(self.local(path)), exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.local(path))
            os.symlink(target, self.local(path))
        self._links = list(links)

    def _followed(self, path: object) -> bool:
        """Whether a tail the pump names is in a trace directory this side asked it to follow
        (a far side gone wrong must not make this side keep a file open per name it invents)."""
        return isinstance(path, str) and os.path.dirname(os.path.normpath(path)) in self.followed

    def local(self, remote_path: str) -> str:
        """Where a remote absolute path is in the tree."""
        return os.path.join(self.root, os.path.normpath("/" + remote_path).lstrip("/"))

    def _fd(self, path: str, flags: int) -> int:
        fd = self._fds.get(path)
        if fd is None:
            target = self.local(path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd = self._fds[path] = os.open(target, flags | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return fd

    def _put(self, path: str, data: bytes) -> None:
        """Rewrite a file in place: a reader keeping it open reads the new content."""
        fd = self._fd(path, os.O_RDWR)
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))

    def _spool(self, data: bytes) -> None:
        """One tick's trace records, as a file of their own in PUMPED (written under another
        name and renamed: the retrans collector reads and removes whole files only)."""
        spool = self.local("/" + PUMPED)
        os.makedirs(spool, exist_ok=True)
        self._spooled += 1
        name = os.path.join(spool, f"{self._spooled:012d}")
        fd = os.open(name + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.rename(name + ".new", name)

    def _append(self, path: str, data: bytes) -> None:
        os.write(self._fd(path, os.O_WRONLY | os.O_APPEND), data)

    def _drop(self, path: str) -> None:
        """Remove a file this side wrote (every one is written through ``_fd``): a file the
        host never had, /proc/pressure on a kernel without PSI, costs no unlink each tick."""
        fd = self._fds.pop(path, None)
        if fd is None:
            return
        os.ftruncate(fd, 0)  # a collector keeping it open reads it empty: gone
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self.local(path))

    def close(self) -> None:
        """Remove the tree."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        shutil.rmtree(self.root, ignore_errors=True)

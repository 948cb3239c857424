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
import json
import os
import shutil
import socket
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from sgmon.readers.inet_diag import SOCK_DIAG_DUMP, dump_request
from sgmon.readers.rtnl import ROUTES_DUMP

EVERY_TICK = (
    "/proc/stat",
    "/proc/loadavg",
    "/proc/vmstat",
    "/proc/meminfo",
    "/proc/pressure/cpu",
    "/proc/pressure/io",
    "/proc/pressure/memory",
    "/proc/diskstats",
    "/proc/net/dev",
    "/proc/net/snmp",
)
"""What the cpu, paging, disk, netdev and tcp collectors read each tick under a root."""
ON_RETRANS = ("/proc/net/netstat",)
"""Read when RetransSegs moved and with the slow files, as the tcp collector reads it."""
SLOW = (
    "/proc/sys/net/core/rmem_max",
    "/proc/sys/net/core/wmem_max",
    "/proc/sys/net/ipv4/tcp_rmem",
    "/proc/sys/net/ipv4/tcp_wmem",
    "/sys/class/block/*/partition",
    "/sys/class/net/*/speed",
)
"""Settings the collectors cache for seconds anyway: socket buffer caps, which block devices
are partitions, link speeds."""
SLOW_EVERY = 10.0


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


def request(
    interval: float,
    ports: Iterable[int],
    peers: Iterable[str] = (),
    tails: Iterable[tuple[str, str]] = (),
    orphan_after: float = 60.0,
) -> bytes:
    """The bytes written to the remote python3's stdin: the program, then the pump's request."""
    ports, peers = tuple(ports), tuple(peers)
    spec = {
        "interval": interval,
        "files": list(EVERY_TICK),
        "on_retrans": list(ON_RETRANS),
        "slow": list(SLOW),
        "slow_every": SLOW_EVERY,
        "diag": [dump_request(fam, ports, peers).hex() for fam in (socket.AF_INET, socket.AF_INET6)]
        if ports
        else [],
        "tails": [list(t) for t in tails],
        "orphan_after": orphan_after,
    }
    code = program()
    return b"%d\n" % len(code) + code + json.dumps(spec).encode() + b"\n"


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
    """When the remote read a tick: its wall clock and its monotonic clock, and its number."""

    time: float
    monotonic: float
    seq: int


class Mirror:
    """A private directory holding the remote host's files as the pump last shipped them."""

    def __init__(self, name: str) -> None:
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
        _remove_orphans(base)
        self.root = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{name}-", dir=base)
        self._fds: dict[str, int] = {}
        self._slow: set[str] = set()
        self._inflate = zlib.decompressobj()

    def restart(self) -> None:
        """A new session: a new zlib stream (the files stay until overwritten)."""
        self._inflate = zlib.decompressobj()

    def apply(self, chunk: bytes) -> Tick:
        """Write one tick's files into the tree (raises ValueError on a malformed tick)."""
        try:
            body = self._inflate.decompress(chunk)
        except zlib.error as e:
            raise ValueError(f"corrupt tick: {e}") from None
        end = body.find(b"\n")
        head = json.loads(body[:end])
        pos = end + 1
        if "slow" in head:
            now = set(head["slow"])
            for gone in self._slow - now:
                self._drop(gone)
            self._slow = now
        for path, size in head["f"]:
            self._put(path, body[pos : pos + size])
            pos += size
        for key, name in (("diag", SOCK_DIAG_DUMP), ("routes", ROUTES_DUMP)):
            if key in head:
                self._put("/" + name, body[pos : pos + head[key]])
                pos += head[key]
        for path, size in head.get("tails", ()):
            self._append(path, body[pos : pos + size])
            pos += size
        return Tick(float(head["t"]), float(head["m"]), int(head["seq"]))

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

    def _append(self, path: str, data: bytes) -> None:
        os.write(self._fd(path, os.O_WRONLY | os.O_APPEND), data)

    def _drop(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self.local(path))

    def close(self) -> None:
        """Remove the tree."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        shutil.rmtree(self.root, ignore_errors=True)

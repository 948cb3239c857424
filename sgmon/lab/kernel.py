"""The lab's kernel plumbing: network namespaces joined by veth, packet loss, rto_min, and
loop devices whose backing device is IOPS-capped through cgroup v1 blkio.

Every resource made here is removed by the context manager that made it, also on failure and on
Ctrl-C.  Names carry a random suffix so parallel runs never collide.  Used by `sgmon lab` and,
through ``tests/nslab.py``, by the real-kernel tests.  Needs root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")


class LabUnavailable(Exception):
    """This machine cannot run the lab (no root, a missing tool or kernel feature); says which."""


def blkio_available() -> bool:
    """Whether cgroup v1 blkio throttling is mounted (the IOPS-cap recipe needs it)."""
    return (BLKIO / "blkio.throttle.write_iops_device").exists()


def missing(*tools: str) -> str | None:
    """Why this machine cannot run the lab (not root, a tool absent), or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, loop devices, cgroups)"
    for t in tools:
        if shutil.which(t) is None:
            return f"needs {t} (Debian package: see tests/run.sh)"
    return None


def sh(*cmd: str, check: bool = True, timeout: float = 30, ns: str | None = None) -> str:
    """Run a command (inside netns ``ns`` if given) and return stdout."""
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(full)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def unique(prefix: str) -> str:
    """A short name unique to this call (interface names are limited to 15 characters)."""
    return f"{prefix}{uuid.uuid4().hex[:6]}"


@dataclass
class NsPair:
    """Two namespaces joined by one veth pair: ``a`` (10.x.y.1) and ``b`` (10.x.y.2)."""

    a: str
    b: str
    a_if: str
    b_if: str
    a_ip: str
    b_ip: str
    net: str
    base_metrics: tuple[str, ...] = ()
    """Route metrics both sides keep whatever else ``set_route`` changes (``ip route change``
    replaces the whole set)."""

    def run(self, side: str, *cmd: str, check: bool = True, timeout: float = 30) -> str:
        """Run a command in side 'a' or 'b'."""
        return sh(*cmd, ns=self.a if side == "a" else self.b, check=check, timeout=timeout)

    def popen(self, side: str, *cmd: str, **kw) -> subprocess.Popen:
        """Start a process in side 'a' or 'b'."""
        ns = self.a if side == "a" else self.b
        return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], **kw)

    def add_loss(self, side: str, permille: int, port: int) -> None:
        """Drop permille/1000 of TCP packets arriving on ``side`` for ``port`` (nftables); 1000
        drops them all (nft's ``numgen ... mod 1000`` ranges over 0-999, so no numgen then)."""
        table = "sgmonloss"
        self.run(side, "nft", "add", "table", "inet", table)
        self.run(
            side,
            "nft",
            "add",
            "chain",
            "inet",
            table,
            "in",
            "{ type filter hook input priority 0 ; }",
        )
        self.run(
            side,
            "nft",
            "add",
            "rule",
            "inet",
            table,
            "in",
            "tcp",
            "dport",
            str(port),
            *(("numgen", "random", "mod", "1000", "lt", str(permille)) if permille < 1000 else ()),
            "drop",
        )

    def clear_loss(self, side: str) -> None:
        """Remove the loss rule."""
        self.run(side, "nft", "delete", "table", "inet", "sgmonloss", check=False)

    def set_rto_min(self, side: str, ms: int | None) -> None:
        """Set (or with None, clear) rto_min on ``side``'s route to the peer network."""
        self.set_route(side, *(["rto_min", f"{ms}ms"] if ms else []))

    def set_route(self, side: str, *metrics: str) -> None:
        """Replace the metrics of ``side``'s route to the peer network (``ip route change``),
        keeping ``base_metrics``."""
        dev, src = (self.a_if, self.a_ip) if side == "a" else (self.b_if, self.b_ip)
        self.run(
            side,
            "ip",
            "route",
            "change",
            self.net,
            "dev",
            dev,
            "proto",
            "kernel",
            "scope",
            "link",
            "src",
            src,
            *self.base_metrics,
            *metrics,
        )


@contextlib.contextmanager
def ns_pair(prefix: str = "sg") -> Iterator[NsPair]:
    """Create two namespaces joined by veth, addresses 10.<k>.0.1/24 and .2; removed on exit."""
    tag = uuid.uuid4().hex[:5]
    k = 200 + (int(tag, 16) % 50)
    a, b = f"{prefix}a{tag}", f"{prefix}b{tag}"
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        yield _join(a, b, tag, f"10.{k}.0")
    finally:
        _remove(a, b)


@contextlib.contextmanager
def ns_peer(pair: NsPair, prefix: str = "sg") -> Iterator[NsPair]:
    """A third namespace joined to ``pair.a`` by a veth pair of its own, on the next subnet
    (10.<k>.1.0/24 beside the pair's 10.<k>.0.0/24): its ``a`` is ``pair.a``, its ``b`` the new
    namespace.  On exit only the new namespace is removed, and its veth pair with it: the link is
    deleted first, as a namespace's deletion takes its veth ends down only later, from a kernel
    work queue (seen: the primary's end still listed right after ``ip netns del``)."""
    tag = uuid.uuid4().hex[:5]
    c = f"{prefix}c{tag}"
    k = pair.a_ip.split(".")[1]
    try:
        sh("ip", "netns", "add", c)
        yield _join(pair.a, c, tag, f"10.{k}.1")
    finally:
        subprocess.run(["ip", "-n", pair.a, "link", "del", f"va{tag}"], capture_output=True)
        _remove(c)


def _join(a: str, b: str, tag: str, net: str) -> NsPair:
    """Join namespaces ``a`` and ``b`` by a veth pair, addresses <net>.1/24 and <net>.2/24."""
    pair = NsPair(a, b, f"va{tag}", f"vb{tag}", f"{net}.1", f"{net}.2", f"{net}.0/24")
    sh(
        "ip",
        "link",
        "add",
        pair.a_if,
        "netns",
        a,
        "type",
        "veth",
        "peer",
        "name",
        pair.b_if,
        "netns",
        b,
    )
    for ns, ifc, ip in ((a, pair.a_if, pair.a_ip), (b, pair.b_if, pair.b_ip)):
        sh("ip", "addr", "add", f"{ip}/24", "dev", ifc, ns=ns)
        sh("ip", "link", "set", ifc, "up", ns=ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
    return pair


def _remove(*namespaces: str) -> None:
    """Kill what runs in the namespaces, then delete them (their veth ends go with them)."""
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in pids.stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), 9)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@dataclass
class LoopDevice:
    """A loop device with direct I/O over a file (a redo log volume)."""

    device: str  # /dev/loopN
    name: str  # loopN
    backing_file: Path


MEMORY = Path("/dev/shm")
"""Where a lab disk's backing file goes when it must not share this machine's disk: tmpfs takes
direct I/O (Linux 6.6 and later), so a loop device over it is a block device of its own whose
latency no other work here moves."""


@contextlib.contextmanager
def loop_device(size_mb: int = 64, in_memory: bool = False) -> Iterator[LoopDevice]:
    """A direct-I/O loop device over a zero-filled file under /var/tmp (this machine's disk) or,
    ``in_memory``, under /dev/shm; detached on exit."""
    tmpdir = Path(tempfile.mkdtemp(prefix="sgmon-loop-", dir=MEMORY if in_memory else "/var/tmp"))
    backing = tmpdir / "disk.img"
    dev = ""
    try:
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={backing}", "bs=1M", f"count={size_mb}", "conv=fsync"],
            capture_output=True,
            check=True,
        )
        dev = _attach(backing)
        yield LoopDevice(dev, Path(dev).name, backing)
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        shutil.rmtree(tmpdir, ignore_errors=True)


def _attach(backing: Path | str) -> str:
    """A new direct-I/O loop device over ``backing`` (a file or a block device)."""
    return sh("losetup", "-f", "--show", "--direct-io=on", str(backing)).strip()


@dataclass
class ThrottledLoop:
    """A loop device whose *backing* device is IOPS-capped for the processes in ``cgroup``."""

    device: str  # /dev/loopN
    name: str  # loopN
    backing_file: Path
    cgroup: Path  # cgroup v1 blkio directory; write a pid to cgroup/"cgroup.procs"
    backing_majmin: str = ""  # MAJ:MIN of the device under backing_file (what is capped)

    def add_pid(self, pid: int) -> None:
        """Put a process under the throttle."""
        (self.cgroup / "cgroup.procs").write_text(str(pid))

    def set_write_iops(self, iops: int | None) -> None:
        """Change the cap while running; None (or 0) lifts it."""
        (self.cgroup / "blkio.throttle.write_iops_device").write_text(
            f"{self.backing_majmin} {iops or 0}"
        )


def _backing_majmin(path: Path) -> str:
    src = sh("findmnt", "-no", "SOURCE", "-T", str(path)).strip()
    return _majmin(src)


def _majmin(device: str) -> str:
    return sh("lsblk", "-ndo", "MAJ:MIN", device).strip().split("\n")[0].strip()


@contextlib.contextmanager
def _capped_disk(size_mb: int, in_memory: bool) -> Iterator[tuple[str, Path, str]]:
    """A direct-I/O loop device and the disk the cap goes on: (device, backing, MAJ:MIN).

    On this machine's disk, the cap is on that disk, shared with everything else here.
    ``in_memory``, the loop device sits over a second one over /dev/shm, and the cap is on that
    second one: a volume whose calm writes take tens of microseconds, whatever else runs."""
    with loop_device(size_mb, in_memory) as loop:
        if not in_memory:
            yield loop.device, loop.backing_file, _backing_majmin(loop.backing_file)
            return
        dev = _attach(loop.device)
        try:
            yield dev, Path(loop.device), _majmin(loop.device)
        finally:
            subprocess.run(["losetup", "-d", dev], capture_output=True)


@contextlib.contextmanager
def throttled_loop(
    write_iops: int | None, size_mb: int = 64, in_memory: bool = False
) -> Iterator[ThrottledLoop]:
    """A direct-I/O loop device and a blkio cgroup capping its backing device's write IOPS.

    Recipe from shared/reference/linux-and-libraries.md: writers in the cgroup doing
    O_DIRECT|O_DSYNC writes to the loop device queue *in the loop device*, so its await,
    aqu-sz and %util rise as on a capped cloud volume.  ``write_iops`` None starts uncapped
    (``set_write_iops`` caps later); ``in_memory``: see ``_capped_disk``.  All removed on exit;
    processes left in the cgroup are killed.
    """
    if not blkio_available():
        raise LabUnavailable("needs cgroup v1 blkio throttling (/sys/fs/cgroup/blkio)")
    cg = BLKIO / unique("sgmon")
    with _capped_disk(size_mb, in_memory) as (device, backing, majmin):
        try:
            cg.mkdir()
            t = ThrottledLoop(device, Path(device).name, backing, cg, majmin)
            if write_iops:
                t.set_write_iops(write_iops)
            yield t
        finally:
            if cg.exists():
                for pid in (cg / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), 9)
                for _ in range(50):
                    try:
                        cg.rmdir()
                        break
                    except OSError:
                        time.sleep(0.1)


_HOLD = r"""
import resource, select, socket, sys
n, port, ttl = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 2 * n + 64)), hard))
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(n)
held = []
for _ in range(n):
    held.append(socket.create_connection(("127.0.0.1", port)))
    held.append(srv.accept()[0])
print(len(held), flush=True)
select.select([sys.stdin], [], [], ttl)
"""


def hold_loopback(n: int, port: int, ttl: float = 600, ns: str | None = None) -> subprocess.Popen:
    """A child process holding ``n`` established loopback connections (2n sockets) on ``port``
    (in namespace ``ns`` if given), for at most ``ttl`` seconds: the unrelated sockets a database
    host carries, which a Data Guard socket filter must not pay for.  Returns once they are all
    up; kill the process to release them."""
    cmd = [sys.executable, "-c", _HOLD, str(n), str(port), str(ttl)]
    proc = subprocess.Popen(
        ["ip", "netns", "exec", ns, *cmd] if ns else cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    got = proc.stdout.readline().strip()
    if got != str(2 * n):
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"holding {n} loopback connections on port {port} failed ({got!r})")
    return proc

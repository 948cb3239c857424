"""Two database hosts beside this machine, for the journeys a DBA walks from a jump host.

This machine is the jump host (the root namespaces).  Each database host is a network
namespace joined to it by a veth pair, with Debian's sshd running in a mount and UTS namespace
of its own: its own hostname, an ``oracle`` user (uid 54321, as Oracle's preinstall package
makes it) in its /etc/passwd, a python3 that sees no site-packages (nothing installed for
sgmon), and its own /proc/diskstats: a file bind-mounted over it that a bounded loop here
rewrites in place (same inode) every 0.5 s from the real one, a real device's line renamed to
the device the host is said to have, so its rows move.  A write and fsync each round keeps that
device busy.  Everything is removed on the way out, also when the test fails: the loop stopped,
the sshds and every process in the namespaces killed, the links and namespaces deleted, the
files removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import nslab

from kits.sshd import bare_python, keygen, sshd, veth
from sgmon.lab import kernel
from sgmon.lab.kernel import sh

ORACLE_UID = 54321
ROUND_S = 0.5
MAX_ROUNDS = 480
"""The diskstats loop ends by itself after 4 minutes, whatever the test does."""
WRAP = 'hostname "$1"; mount --bind "$2" /proc/diskstats; mount --bind "$3" /etc/passwd; shift 3'
"""What runs in the database host's own mount and UTS namespace before its sshd."""


@dataclass
class DbHost:
    """One database host: its name, address, the device it has, and its sshd."""

    name: str
    ip: str
    ns: str
    device: str
    sshd: subprocess.Popen

    def stop_sshd(self) -> None:
        """The host's sshd gone (its sessions too): ssh to it is refused."""
        self.sshd.kill()
        self.sshd.wait(5)
        for pid in sh("ip", "netns", "pids", self.ns, check=False).split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), 9)


@dataclass
class DbHosts:
    """The hosts by name, and what ssh needs to reach them from here."""

    hosts: dict[str, DbHost]
    port: int
    key: Path
    known_hosts: Path

    def ssh_options(self) -> list[str]:
        """Port, key and known_hosts for this machine's ssh (its own config left out)."""
        return [
            "-F", "/dev/null", "-p", str(self.port), "-i", str(self.key),
            "-o", "IdentitiesOnly=yes", "-o", f"UserKnownHostsFile={self.known_hosts}",
        ]  # fmt: skip


def real_device(near: Path) -> str:
    """The name of the block device holding ``near`` (else the busiest one) in /proc/diskstats."""
    st = os.stat(near)
    lines = [line.split() for line in Path("/proc/diskstats").read_text().splitlines()]
    lines = [parts for parts in lines if len(parts) >= 14]
    for parts in lines:
        if (int(parts[0]), int(parts[1])) == (os.major(st.st_dev), os.minor(st.st_dev)):
            return parts[2]
    return max(lines, key=lambda parts: int(parts[9]))[2]


def renamed(diskstats: str, real: str, device: str) -> str:
    """The diskstats text with ``real``'s line named ``device``."""
    out = []
    for line in diskstats.splitlines(keepends=True):
        parts = line.split()
        if len(parts) >= 3 and parts[2] == real:
            line = line.replace(f" {real} ", f" {device} ", 1)
        out.append(line)
    return "".join(out)


@contextlib.contextmanager
def database_hosts(tmp: Path, devices: Mapping[str, str], port: int) -> Iterator[DbHosts]:
    """The hosts named in ``devices`` (name -> the device it has), each reached on ``port``."""
    nslab.require_root("ip", "ssh", "ssh-keygen", "/usr/sbin/sshd", "unshare", "mount")
    shared = Path(tempfile.mkdtemp(prefix="sgmon-dbhosts-"))  # what the oracle user reads
    shared.chmod(0o755)
    tag = uuid.uuid4().hex[:5]
    k = 200 + int(tag, 16) % 50
    made: list[tuple[str, str]] = []  # (namespace, this machine's end of its link)
    stop = threading.Event()
    loop: threading.Thread | None = None
    lab = DbHosts({}, port, tmp / "user_key", tmp / "known_hosts")
    try:
        authorized = shared / "authorized_keys"
        authorized.write_text(keygen(lab.key) + "\n")
        authorized.chmod(0o644)
        home = shared / "home"
        home.mkdir()
        os.chown(home, ORACLE_UID, ORACLE_UID)
        passwd = shared / "passwd"
        passwd.write_text(
            Path("/etc/passwd").read_text()
            + f"oracle:x:{ORACLE_UID}:{ORACLE_UID}:Oracle Software Owner:{home}:/bin/sh\n"
        )
        extra = f"SetEnv PATH={bare_python(shared)}:/usr/bin:/bin\n"
        real = real_device(shared)
        files = {name: shared / f"diskstats-{name}" for name in devices}
        _rewrite(files, devices, real)
        known = ""
        for i, (name, device) in enumerate(devices.items()):
            ns, here, there = f"dbh{tag}{i}", f"vj{tag}{i}", f"vd{tag}{i}"
            sh("ip", "netns", "add", ns)
            made.append((ns, here))
            ip = f"10.{k}.{10 + i}.2"
            veth(ns, here, there, f"10.{k}.{10 + i}.1", ip)
            wrap = ["unshare", "--mount", "--propagation", "private", "--uts", "sh", "-ec",
                    f'{WRAP}; exec "$@"', "sh", name, str(files[name]), str(passwd)]  # fmt: skip
            proc, line = sshd(ns, ip, port, tmp / f"sshd-{name}", authorized, extra, wrap)
            lab.hosts[name] = DbHost(name, ip, ns, device, proc)
            known += line
        lab.known_hosts.write_text(known)
        loop = threading.Thread(target=_churn, args=(files, devices, real, shared, stop))
        loop.start()
        yield lab
    finally:
        stop.set()
        if loop is not None:
            loop.join(10)
        for h in lab.hosts.values():
            if h.sshd.poll() is None:
                h.sshd.kill()
                h.sshd.wait(5)
        for ns, here in made:
            subprocess.run(["ip", "link", "del", here], capture_output=True)
            kernel._remove(ns)  # what runs there killed, then the namespace deleted
        shutil.rmtree(shared, ignore_errors=True)


def _rewrite(files: Mapping[str, Path], devices: Mapping[str, str], real: str) -> None:
    """Each host's diskstats from the real one, rewritten in place (the bind mount holds the
    inode: a new file would not be seen)."""
    now = Path("/proc/diskstats").read_text()
    for name, path in files.items():
        data = renamed(now, real, devices[name]).encode()
        with open(path, "r+b" if path.exists() else "wb") as f:  # never replaced
            os.fchmod(f.fileno(), 0o644)  # /proc/diskstats: the host's ssh login reads it
            f.write(data)
            f.truncate()


def _churn(
    files: Mapping[str, Path],
    devices: Mapping[str, str],
    real: str,
    shared: Path,
    stop: threading.Event,
) -> None:
    """Every ROUND_S, a small synchronous write on the real device and the files rewritten;
    at most MAX_ROUNDS rounds."""
    fd = os.open(shared / "churn", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for i in range(MAX_ROUNDS):
            if stop.wait(ROUND_S):
                return
            os.pwrite(fd, os.urandom(4096), (i % 64) * 4096)
            os.fsync(fd)
            _rewrite(files, devices, real)
    finally:
        os.close(fd)

"""The lab: a SYNC Data Guard pair built from real kernel parts, watched by sgmon's collectors.

``Lab`` builds two network namespaces joined by veth, a log device for each side (the standby's
under a switchable IOPS cap), a V$ stand-in for each database, the standby receiver, the primary
(sessions and log writer), and one collector process per host; ``source()`` streams the hosts'
frames like any sgmon source.  With ``async_standby`` a third namespace, joined to the primary's
by a veth pair of its own, holds a second standby the primary ships to ASYNC, with its own
capped log device, stand-in and collector process (seed 003's ASYNC standby).  Everything is
bounded by ``duration`` and removed on exit, on failure and on Ctrl-C (the child processes also
die with their parent).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sgmon.lab import faults, kernel, standby
from sgmon.lab.primary import SID as PRIMARY_SID
from sgmon.lab.wire import PORT

ASYNC_HOST, ASYNC_SID = "standby_a", "STBY_A"
"""The ASYNC standby's host and DB_UNIQUE_NAME, as the simulation's ``async-iops-cap`` names
them."""


class LabFailed(Exception):
    """A lab process died while the lab ran; the message says which."""


@dataclass(frozen=True)
class LabOptions:
    """How big the workload is and how hard the faults hit."""

    duration: float = 120.0  # hard bound on everything the lab starts
    interval: float = 1.0
    sessions: int = 4
    think: float = 0.02  # seconds between one session's commits
    port: int = PORT
    loss_permille: int = 5
    rto_min_ms: int = 10
    iops: int = 300
    io_writers: int = 8
    cpu_hogs: int = 3
    log_mb: int = 64
    async_standby: bool = False  # a third namespace: a standby the primary ships to ASYNC


def assign_cpus(cpus: list[int], async_standby: bool) -> tuple[int, int, int, str]:
    """A CPU of its own for each lab host where the machine has them: (primary, SYNC standby,
    ASYNC standby, a note when some share one, "" otherwise).  Two hosts on one CPU see each
    other's load: an ASYNC standby's I/O wait on the SYNC standby's CPU would show there."""
    standby, primary = cpus[0], cpus[1 % len(cpus)]
    other = cpus[2] if len(cpus) > 2 else standby
    hosts = 3 if async_standby else 2
    if len(cpus) >= hosts:
        return primary, standby, other, ""
    shared = (
        "the primary and the standby share it"
        if len(cpus) == 1
        else "the ASYNC standby shares the SYNC standby's, so its load shows there too"
    )
    return primary, standby, other, (f"{len(cpus)} CPU(s) here for {hosts} lab hosts: {shared}")


@dataclass(frozen=True)
class LabHost:
    """What watching one lab host takes: its names, namespace, log device, stand-in and CPU."""

    name: str  # the host in sgmon's config and frames
    side: str  # its namespace: "a" primary, "b" SYNC standby, "c" ASYNC standby
    sid: str
    db: Path
    device: str  # loopN
    interface: str
    cpu: int

    @property
    def role(self) -> str:
        """``primary`` or ``standby``."""
        return "primary" if self.side == "a" else "standby"


class Lab:
    """Context manager: the running lab (see the module docstring)."""

    def __init__(self, opts: LabOptions | None = None) -> None:
        self.opts = opts or LabOptions()
        self._stack = contextlib.ExitStack()
        self._procs: list[subprocess.Popen] = []
        cpus = assign_cpus(sorted(os.sched_getaffinity(0)), self.opts.async_standby)
        self.primary_cpu, self.standby_cpu, self.async_cpu, self.cpu_note = cpus
        self.started = 0.0

    def __enter__(self) -> Lab:
        reason = kernel.missing("ip", "nft", "losetup", "dd", "findmnt", "lsblk")
        if reason:
            raise kernel.LabUnavailable(reason)
        if not kernel.blkio_available():
            raise kernel.LabUnavailable("needs cgroup v1 blkio throttling (/sys/fs/cgroup/blkio)")
        try:
            self._build()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _build(self) -> None:
        o = self.opts
        s = self._stack
        self.pair = s.enter_context(kernel.ns_pair("sl"))
        self.async_link = (
            s.enter_context(kernel.ns_peer(self.pair, "sl")) if o.async_standby else None
        )
        for link in (self.pair, self.async_link):
            if link is None:
                continue
            # Both kernels acknowledge at once, whenever the receiving process gets the CPU: a
            # delayed ACK outliving the sender's tail-loss probe timer would count as a
            # retransmission, and one on the standby's acks would inflate its smoothed rtt.
            link.base_metrics = ("quickack", "1")
            link.set_route("a")
            link.set_route("b")
        # Each log on a disk of its own in memory: on this machine's disk, the cap's writers
        # slowed the primary's own log writes and the calm level followed whatever else ran here.
        self.primary_log = s.enter_context(kernel.loop_device(o.log_mb, in_memory=True))
        self.standby_log = s.enter_context(kernel.throttled_loop(None, o.log_mb, in_memory=True))
        self.async_log = (
            s.enter_context(kernel.throttled_loop(None, o.log_mb, in_memory=True))
            if o.async_standby
            else None
        )
        # The stand-ins live in shared memory: publishing must not add I/O to the disks watched.
        self.dir = Path(tempfile.mkdtemp(prefix="sgmon-lab-", dir="/dev/shm"))
        s.callback(shutil.rmtree, self.dir, True)
        self.primary_db = self.dir / "primary.db"
        self.standby_db = self.dir / "standby.db"
        self.async_db = self.dir / "standby_a.db"
        self.standby = self._standby("b", self.standby_log, self.standby_db, standby.SID)
        self.async_standby = None
        ship: tuple[str, ...] = ()
        if self.async_link is not None and self.async_log is not None:
            self.async_standby = self._standby("c", self.async_log, self.async_db, ASYNC_SID)
            ship = ("--async-standby", self.async_link.b_ip, "--async-name", ASYNC_SID)
        self.primary = self.spawn(
            "a", "sgmon.lab.primary", "--standby", self.pair.b_ip, "--standby-name", standby.SID,
            *ship, "--port", str(o.port),
            "--log", self.primary_log.device, "--standin", str(self.primary_db),
            "--sessions", str(o.sessions), "--think", str(o.think),
            "--cpu", str(self.primary_cpu), "--duration", str(o.duration), stdout=subprocess.PIPE,
        )  # fmt: skip
        self._ready(self.primary, "primary")
        self.faults = faults.build(self)
        self.started = time.monotonic()

    def _standby(
        self, side: str, log: kernel.ThrottledLoop, db: Path, sid: str
    ) -> subprocess.Popen:
        """Start a standby receiver in ``side`` writing ``log`` (under its cgroup's cap)."""
        o = self.opts
        cpu = self.async_cpu if side == "c" else self.standby_cpu
        proc = self.spawn(
            side, "sgmon.lab.standby", "--port", str(o.port), "--log", log.device,
            "--standin", str(db), "--sid", sid, "--cpu", str(cpu),
            "--duration", str(o.duration), stdout=subprocess.PIPE,
        )  # fmt: skip
        log.add_pid(proc.pid)
        self._ready(proc, f"standby {sid}")
        return proc

    def namespace(self, side: str) -> str:
        """The network namespace of side 'a' (primary), 'b' (standby) or 'c' (ASYNC standby)."""
        if side == "c" and self.async_link is not None:
            return self.async_link.b
        if side in ("a", "b"):
            return self.pair.a if side == "a" else self.pair.b
        raise ValueError(f"the lab has no side {side!r}")

    def hosts(self) -> list[LabHost]:
        """The lab's hosts, primary first."""
        p = self.pair
        out = [
            LabHost("primary", "a", PRIMARY_SID, self.primary_db, self.primary_log.name, p.a_if,
                    self.primary_cpu),
            LabHost("standby", "b", standby.SID, self.standby_db, self.standby_log.name, p.b_if,
                    self.standby_cpu),
        ]  # fmt: skip
        if self.async_link is not None and self.async_log is not None:
            out.append(
                LabHost(ASYNC_HOST, "c", ASYNC_SID, self.async_db, self.async_log.name,
                        self.async_link.b_if, self.async_cpu)
            )  # fmt: skip
        return out

    def spawn(self, side: str, module: str, *args: str, **kw) -> subprocess.Popen:
        """Start ``python -m module`` inside side 'a', 'b' or 'c' (see ``namespace``)."""
        ns = self.namespace(side)
        kw.setdefault("stdout", subprocess.DEVNULL)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", module, *args], **kw
        )
        self._procs.append(proc)
        return proc

    def _ready(self, proc: subprocess.Popen, what: str) -> None:
        """Wait for the process's "ready" line; its exit or silence is a lab failure."""
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != b"ready":
            proc.wait(5)
            raise kernel.LabUnavailable(f"the lab {what} did not start (exit {proc.returncode})")

    def end(self, proc: subprocess.Popen) -> None:
        """Stop one child: SIGTERM, then SIGKILL after 3 s."""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(3)
        with contextlib.suppress(ValueError):
            self._procs.remove(proc)

    def check(self) -> None:
        """Raise LabFailed if the primary or a standby process has died."""
        procs = [("primary", self.primary), ("standby", self.standby)]
        if self.async_standby is not None:
            procs.append(("ASYNC standby", self.async_standby))
        for what, proc in procs:
            if proc.poll() is not None:
                raise LabFailed(f"the lab's {what} exited (code {proc.returncode})")

    def fault(self, name: str, on: bool = True) -> None:
        """Switch one injector (see ``faults.FAULTS``)."""
        if name not in self.faults:
            raise KeyError(f"unknown fault {name!r}; faults: {', '.join(self.faults)}")
        self.faults[name].set(on)

    def _faults_off(self) -> None:
        for f in getattr(self, "faults", {}).values():
            with contextlib.suppress(Exception):
                f.set(False)

    def config(self):
        """An sgmon Config naming the hosts, their roles and their redo devices."""
        from sgmon.config import Config, HostConfig

        return Config(
            name="lab",
            interval=self.opts.interval,
            hosts=tuple(HostConfig(h.name, h.role, devices=(h.device,)) for h in self.hosts()),
            ports=(self.opts.port,),
        )

    def source(self, interval: float | None = None):
        """A Source streaming every lab host's frames (starts the collectors)."""
        from sgmon.lab.source import LabSource

        return LabSource(self, interval or self.opts.interval)

    def __exit__(self, *exc: object) -> None:
        """Faults off, processes ended, then namespaces, devices, cgroup and files removed."""
        try:
            self._faults_off()
            for proc in reversed(self._procs):
                self.end(proc)
        finally:
            self._stack.close()

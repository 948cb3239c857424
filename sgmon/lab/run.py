"""The lab: a SYNC Data Guard pair built from real kernel parts, watched by sgmon's collectors.

``Lab`` builds two network namespaces joined by veth, a log device for each side (the standby's
under a switchable IOPS cap), a V$ stand-in for each database, the standby receiver, the primary
(sessions and log writer), and one collector process per host; ``source()`` streams both hosts'
frames like any sgmon source.  Everything is bounded by ``duration`` and removed on exit, on
failure and on Ctrl-C (the child processes also die with their parent).
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

from sgmon.lab import faults, kernel
from sgmon.lab.wire import PORT


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


class Lab:
    """Context manager: the running lab (see the module docstring)."""

    def __init__(self, opts: LabOptions | None = None) -> None:
        self.opts = opts or LabOptions()
        self._stack = contextlib.ExitStack()
        self._procs: list[subprocess.Popen] = []
        ncpu = len(os.sched_getaffinity(0))
        self.standby_cpu = 0
        self.primary_cpu = 1 if ncpu > 1 else 0
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
        # Both kernels acknowledge at once, whenever the receiving process gets the CPU: a
        # delayed ACK outliving the sender's tail-loss probe timer would count as a
        # retransmission, and one on the standby's acks would inflate its smoothed rtt.
        self.pair.base_metrics = ("quickack", "1")
        self.pair.set_route("a")
        self.pair.set_route("b")
        self.primary_log = s.enter_context(kernel.loop_device(o.log_mb))
        self.standby_log = s.enter_context(kernel.throttled_loop(None, o.log_mb))
        # The stand-ins live in shared memory: publishing must not add I/O to the disks watched.
        self.dir = Path(tempfile.mkdtemp(prefix="sgmon-lab-", dir="/dev/shm"))
        s.callback(shutil.rmtree, self.dir, True)
        self.primary_db = self.dir / "primary.db"
        self.standby_db = self.dir / "standby.db"
        d = str(o.duration)
        self.standby = self.spawn(
            "b", "sgmon.lab.standby", "--port", str(o.port), "--log", self.standby_log.device,
            "--standin", str(self.standby_db), "--cpu", str(self.standby_cpu), "--duration", d,
            stdout=subprocess.PIPE,
        )  # fmt: skip
        self.standby_log.add_pid(self.standby.pid)
        self._ready(self.standby, "standby")
        self.primary = self.spawn(
            "a", "sgmon.lab.primary", "--standby", self.pair.b_ip, "--port", str(o.port),
            "--log", self.primary_log.device, "--standin", str(self.primary_db),
            "--sessions", str(o.sessions), "--think", str(o.think),
            "--cpu", str(self.primary_cpu), "--duration", d, stdout=subprocess.PIPE,
        )  # fmt: skip
        self._ready(self.primary, "primary")
        self.faults = faults.build(self)
        self.started = time.monotonic()

    def spawn(self, side: str, module: str, *args: str, **kw) -> subprocess.Popen:
        """Start ``python -m module`` inside side 'a' (primary) or 'b' (standby)."""
        ns = self.pair.a if side == "a" else self.pair.b
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
        """Raise LabFailed if the primary or the standby process has died."""
        for what, proc in (("primary", self.primary), ("standby", self.standby)):
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
        """An sgmon Config naming the two hosts, their roles and their redo devices."""
        from sgmon.config import Config, HostConfig

        return Config(
            name="lab",
            interval=self.opts.interval,
            hosts=(
                HostConfig("primary", "primary", devices=(self.primary_log.name,)),
                HostConfig("standby", "standby", devices=(self.standby_log.name,)),
            ),
            ports=(self.opts.port,),
        )

    def source(self, interval: float | None = None):
        """A Source streaming the primary's and the standby's frames (starts the collectors)."""
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

"""`biolat`: the redo devices' I/O latency distribution, counted in the kernel by biolatency.

iostat's await is a mean over the second; a redo device that serves most writes in 0.1 ms and
one in ten in 100 ms (an IOPS cap releasing its queue in slices, seed 003) shows an await of
10 ms and no tail.  This collector gives, per configured redo / standby redo device and tick, the
log2 histogram of its I/O latencies from issue to completion (the driver's D to C, as
``btt``'s D2C and libbpf-tools' ``biolatency`` without ``-Q`` measure it), and its p50, p99
and max.

The counting happens in the kernel: one ``biolatency -T -d DISK 1`` child per disk (Debian
package libbpf-tools, a CO-RE BPF program: needs root, kernel BTF at /sys/kernel/btf/vmlinux,
no compiler or headers) sums each I/O into a BPF map and prints the histogram once a second.
Reading block tracepoints per event in Python cost 18-28 us per event and cut a 26k IOPS writer
by 43 %; here Python reads a few hundred bytes a second per device, whatever the IOPS.

Each tick reads, without blocking, what the children printed since the last tick: usually one
second's histogram (its second ends up to a second before the tick), sometimes none or two as
the child's one-second sleep drifts against the tick; ``intervals`` says how many, and a tick
with none reports no histogram rather than a false "no I/O".  Counts are kept cumulative here,
so a histogram split across two reads is never lost or counted twice.  The children are started
at the first sample, one per disk, each in its own session and under ``setpriv --pdeathsig
KILL`` so the kernel kills it when the thread that started it dies (kill -9 of sgmon included);
``close()`` kills them, and one that dies is started again at the next tick.

Options: ``devices`` (default: the host's ``devices``, its redo devices), ``command`` (the
biolatency program, default ``biolatency`` in PATH).  A partition (an ASM disk on ``sdc1``) is
traced as its whole disk, where its requests are queued, and its row is the disk's.  A bio-based
device-mapper volume (LVM's ``dm-N``) queues no requests of its own: name the disks under it
(``/sys/block/dm-N/slaves``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import ClassVar

from sgmon import buckets
from sgmon.collector import Collector, ConfigError, RawRows, Unavailable, derive_by_kind
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows

FIELDS = (
    Field(
        "lat",
        "ms",
        Kind.HISTOGRAM,
        "I/O latency from issue to completion (biolatency's D to C), this tick's I/Os per log2 "
        "bucket",
    ),
    Field("ios", "count", Kind.DELTA, "I/Os completed in this tick's histogram"),
    Field(
        "intervals",
        "count",
        Kind.DELTA,
        "biolatency's one-second histograms in this tick (usually 1; 0: none ended, no values)",
    ),
    Field("p50", "ms", Kind.GAUGE, "median I/O latency, as the bucket holding it (<N ms)"),
    Field(
        "p99",
        "ms",
        Kind.GAUGE,
        "99th percentile I/O latency, as the bucket holding it: 99 % of I/Os took under N ms",
    ),
    Field(
        "max",
        "ms",
        Kind.GAUGE,
        "upper bound of the highest non-empty bucket: the slowest I/O took under N ms "
        "(within a factor of 2)",
    ),
)

_ROW = re.compile(rb"^\s*(\d+)\s*->\s*(\d+)\s*:\s*(\d+)")
"""A histogram line: ``  2048 -> 4095       : 12       |****   |`` (usecs, upper inclusive)."""
_STAMP = re.compile(rb"^\d\d:\d\d:\d\d\s*$")
"""The ``-T`` time line that starts each interval's report, empty interval included."""
_READY = b"Tracing"
"""biolatency's first line, printed once its BPF program is attached."""
SLOTS = 27
"""biolatency's histogram slots (MAX_SLOTS): slot k holds [2**k, 2**(k+1)) us, slot 0 [0, 2)."""
BOUNDS_MS = tuple(buckets.exact_ms(k + 1) for k in range(SLOTS))
"""Each slot's exclusive upper bound in ms: the archive's fixed power-of-two-us buckets."""


class _Child:
    """One biolatency process for one device, and what it has counted so far."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, killed whole by close()
        )
        for pipe in (self.proc.stdout, self.proc.stderr):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
        self.partial = b""
        self.err = b""
        self.ready = False

    def read(self) -> list[bytes]:
        """The complete lines printed since the last call, never waiting (stderr kept last)."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        data = self.partial + _drain(self.proc.stdout.fileno())
        self.err = (self.err + _drain(self.proc.stderr.fileno()))[-2000:]
        *lines, self.partial = data.split(b"\n")
        return lines

    def why(self) -> str:
        """The child's last error line, for the collector's reason."""
        lines = [ln for ln in self.err.decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else f"exit status {self.proc.returncode}"

    def kill(self) -> None:
        """Kill its process group and reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def _drain(fd: int) -> bytes:
    """Everything readable on a non-blocking descriptor now."""
    out = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        out.append(chunk)
    return b"".join(out)


class _Counts:
    """One device's cumulative histogram, I/O and interval counts, and the row showing them."""

    def __init__(self) -> None:
        self.slots = [0] * SLOTS
        self.intervals = 0
        self.row: dict | None = None

    def add(self, lines: list[bytes]) -> None:
        """Count the histogram rows and interval starts among biolatency's lines."""
        moved = False
        for line in lines:
            m = _ROW.match(line)
            if m:
                count = int(m[3])
                if count:
                    k = min(SLOTS - 1, max(0, (int(m[2]) + 1).bit_length() - 2))
                    self.slots[k] += count
                    moved = True
            elif _STAMP.match(line):
                self.intervals += 1
                moved = True
        if moved or self.row is None:
            self.row = {
                "lat": [[b, c] for b, c in zip(BOUNDS_MS, self.slots, strict=True)],
                "ios": sum(self.slots),
                "intervals": self.intervals,
            }


class BiolatCollector(Collector):
    """Per redo device, the latency histogram libbpf-tools' biolatency counts in the kernel."""

    name = "biolat"
    rows = (RowKind("device", label="item"),)
    description = "redo devices' I/O latency histogram, p50/p99/max (libbpf-tools biolatency)"
    option_rules: ClassVar[Mapping[str, Rule]] = {
        "devices": rules.text_or_texts,
        "command": rules.text,
    }
    fields = FIELDS

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        """Take ``devices`` (else the host's redo devices) and ``command``."""
        super().__init__(options)
        devices = self.options.get("devices", self.options.get("pinned", []))
        if isinstance(devices, str):
            devices = [devices]
        if not isinstance(devices, list | tuple) or not all(
            isinstance(d, str) and d and "/" not in d for d in devices
        ):
            raise ConfigError(
                'collectors.biolat.devices: use a list of block device names, e.g. ["sdc"]'
            )
        self.devices: list[str] = list(dict.fromkeys(devices))
        command = self.options.get("command", "biolatency")
        if not isinstance(command, str) or not command:
            raise ConfigError(
                'collectors.biolat.command: use a program name or path, e.g. "biolatency"'
            )
        self.command = command
        self._argv: list[str] = []
        self._disks: dict[str, str] = {}
        """Configured device -> the disk biolatency traces (a partition's requests are its
        disk's)."""
        self._disk_list: list[str] = []
        """The traced disks, each once (two partitions of one disk share its child)."""
        self._children: dict[str, _Child] = {}
        self._counts: dict[str, _Counts] = {}

    def open(self) -> None:
        """Check what biolatency needs (devices, root, the program, BTF); start nothing yet."""
        if not self.devices:
            raise Unavailable(
                'no redo devices configured: name them with devices = ["sdc"] in the host\'s '
                "[[host]] table (or [collectors.biolat] devices)"
            )
        missing = [
            d for d in self.devices if not os.path.exists(self.path(f"/sys/class/block/{d}"))
        ]
        if missing:
            raise Unavailable(f"no block device {', '.join(missing)} on this host")
        self._disks = {d: self._disk_of(d) for d in self.devices}
        self._disk_list = list(dict.fromkeys(self._disks.values()))
        for disk in self._disks.values():
            self._counts.setdefault(disk, _Counts())
        if os.geteuid() != 0:
            raise Unavailable("needs root to load biolatency's BPF program")
        program = shutil.which(self.command)
        if program is None:
            raise Unavailable(
                f"{self.command} not found in PATH: install Debian package libbpf-tools "
                "(/usr/sbin/biolatency)"
            )
        if not os.path.exists(self.path("/sys/kernel/btf/vmlinux")):
            raise Unavailable(
                "needs kernel BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF) for the "
                "CO-RE biolatency"
            )
        setpriv, stdbuf = shutil.which("setpriv"), shutil.which("stdbuf")
        if setpriv is None or stdbuf is None:
            raise Unavailable("needs setpriv (util-linux) and stdbuf (coreutils)")
        # setpriv: the kernel kills the child when the starting thread dies; stdbuf: one line
        # per write, or the pipe would hold a whole 4 KiB stdio buffer (several seconds)
        self._argv = [setpriv, "--pdeathsig", "KILL", stdbuf, "-oL", program, "-T", "-d"]

    def _disk_of(self, name: str) -> str:
        """The whole disk under a partition (block requests, and so biolatency's -d, are the
        disk's), else the device itself."""
        where = self.path(f"/sys/class/block/{name}")
        if os.path.exists(os.path.join(where, "partition")):
            return os.path.basename(os.path.dirname(os.path.realpath(where)))
        return name

    def sample(self) -> RawRows:
        """Start the missing children, read what each printed since the last tick."""
        for disk in self._disk_list:
            child = self._children.get(disk)
            if child is None:
                child = self._children[disk] = _Child([*self._argv, disk, "1"])
            ended = child.proc.poll() is not None  # before the read: all it printed is there
            lines = child.read()
            child.ready = child.ready or any(ln.startswith(_READY) for ln in lines)
            self._counts[disk].add(lines)
            if ended:
                self._ended(disk, child)
        return {dev: self._counts[disk].row for dev, disk in self._disks.items()}

    def _ended(self, disk: str, child: _Child) -> None:
        """A child is gone: started again at the next tick, unless it never attached by itself
        (no BPF here: the collector cannot run)."""
        why = child.why()
        child.kill()
        del self._children[disk]
        if not child.ready and child.proc.returncode >= 0:
            raise Unavailable(f"biolatency -d {disk} failed: {why}")
        text = f"biolatency -d {disk} ended ({why}); started again"
        self.emit_event(Event(time.time(), self.name, "restart", disk, text))

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Interval counts from the cumulative ones, then the percentiles of this tick's
        histogram; a tick in which no interval ended has no values."""
        out = derive_by_kind(self.fields, prev, cur, dt)
        for row in out.values():
            hist = row.get("lat")
            if not isinstance(hist, list) or (not row.get("intervals") and not row.get("ios")):
                row.update(lat=None, ios=None, p50=None, p99=None, max=None)
                continue
            row["p50"] = buckets.percentile(hist, 0.5)
            row["p99"] = buckets.percentile(hist, 0.99)
            row["max"] = buckets.highest(hist)
        return out

    def close(self) -> None:
        """Kill every child; idempotent."""
        children, self._children = self._children, {}
        for child in children.values():
            child.kill()

"""The Oracle processes on the commit path, each measured by the kernel's own accounting.

Seed 000's commit chain has LGWR wait for CPU (step 2) and RFS for the standby's disk; host-wide
%idle only hints at the first, iostat's await only at the second.  This collector follows the
processes themselves, under the names a DBA uses (V$PROCESS's PNAME): LGWR and its LGnn workers,
NSSn (12c on; LNSn on 11.2), TTnn, ARCn, CKPT and DBWn on a primary; RFS, MRP0 and PRnn on a
standby.  Per process and tick:

* ``cpu``: % of one CPU (utime + stime, /proc/PID/stat);
* ``runq``: milliseconds per second it was runnable but not running (/proc/PID/task/*/schedstat,
  run_delay): step 2 measured instead of inferred.  Seed 000: LGWR's own run-queue delay during
  a log file sync spike is the evidence of CPU starvation, %idle is not;
* ``io_delay``: milliseconds per second it waited for block I/O (/proc/PID/stat field 42,
  delayacct_blkio_ticks; None unless delay accounting is on, ``sysctl kernel.task_delayacct``);
* ``state`` (R, S, D ...) at the tick and, in D, ``wchan``: the kernel function it sleeps in;
* ``vcsw``/``nvcsw``: voluntary and involuntary context switches per second;
* ``read_kb``/``write_kb``: block I/O it caused (/proc/PID/io; needs the owner or root).

Threads of a process are summed (threaded_execution).  Discovery walks /proc's ``comm`` names
(``ora_lgwr_PROD``) every ``DISCOVER_S`` seconds and whenever a followed process is gone (the
names of the pids and threads the last walk saw are taken from it: ``Names``); between
walks only the followed processes' files are read, kept open (sgmon/readers/procs.py reads
them).  psutil's process_iter was not used: it builds a Process object and reads /proc/PID/stat
for every process on the host at each walk, where ``comm`` alone names the ones wanted.  RFS
has no name of its own: it is the ``oracle<SID> (LOCAL=NO)`` server process holding a socket on
a Data Guard port, on a standby.
A process that restarts (a new pid under the same name) is followed, with an event.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from sgmon.collector import Collector, RawRows, Unavailable
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows
from sgmon.readers.procfile import keyed_pattern
from sgmon.readers.procs import (
    SWITCH_KEYS,
    Names,
    Process,
    comms,
    socket_holders,
    thread_comms,
    usage,
)

G, R, T = Kind.GAUGE, Kind.RATE, Kind.TEXT
DISCOVER_S = 15.0
"""Seconds between walks of /proc for new processes (a gone one triggers a walk at once)."""
BACKGROUND = re.compile(
    r"^ora_(lgwr|lg[0-9a-z]{2}|nss[0-9a-z]|lns[0-9a-z]|tt[0-9a-z]{2}|arc[0-9a-z]|ckpt"
    r"|dbw[0-9a-z]|bw[0-9a-z]{2}|mrp[0-9]|pr[0-9a-z]{2}|rfs)_(\w+)$",
    re.IGNORECASE,
)
"""Background processes of the commit path, by their comm name ``ora_<pname>_<SID>``."""
THREADED = re.compile(r"^ora_u\d{3}_\w+$", re.IGNORECASE)
"""threaded_execution=TRUE: the background processes are threads of these, named as above."""

FIELDS = (
    Field("pid", "", G, "process id", export=False),
    Field("cpu", "%", R, "CPU of this process, % of one CPU (utime + stime)"),
    Field(
        "runq",
        "ms/s",
        R,
        "time runnable but not running (schedstat run_delay): waiting for a CPU",
        warn=5.0,
        crit=100.0,
    ),
    Field("io_delay", "ms/s", R, "time waiting for block I/O (delay accounting)"),
    Field("state", "", T, "R running, S sleeping, D uninterruptible (I/O) ...", export=False),
    Field("wchan", "", T, "kernel function a process in D sleeps in", export=False),
    Field("vcsw", "/s", R, "voluntary context switches (it waited)", export=False),
    Field("nvcsw", "/s", R, "involuntary context switches (preempted)"),
    Field("read_kb", "kB/s", R, "block reads it caused", export=False),
    Field("write_kb", "kB/s", R, "block writes it caused", export=False),
)


class ProcsCollector(Collector):
    """LGWR, NSS, RFS and their kin, by name, from /proc."""

    name = "procs"
    rows = (RowKind("process", label="process"),)
    description = "Oracle commit-path processes: CPU, run-queue delay, I/O wait, state"
    option_rules: ClassVar[Mapping[str, Rule]] = {"sid": rules.text, "ports": rules.ports}
    fields = FIELDS
    remote_files: ClassVar[Mapping[str, str]] = {
        "/proc/self/schedstat": "slow",  # the kernel's CONFIG_SCHEDSTATS, as open() checks
        "/proc/sys/kernel/task_delayacct": "slow",
    }

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        sid = self.options.get("sid")
        self.sid = str(sid).upper() if sid else None
        self.role = str(self.options.get("role") or "")
        self.ports = {int(p) for p in self.options.get("ports", (1521,))}
        self._followed: dict[str, Process] = {}
        self._seen: dict[str, int] = {}  # name -> the pid it had, to tell a restart
        self._walked = float("-inf")
        self._names = Names()
        self._delayacct = False

    def remote_processes(self) -> dict[str, str]:
        """What a remote pump follows for this collector (sgmon/remote/pump.py, Processes):
        the processes whose names it walks for every DISCOVER_S seconds, and the lines of their
        status files it reads; off a primary, the server processes (``holders``) that hold an
        established socket on a Data Guard port (the lines of /proc/net/tcp and tcp6 it keeps:
        ``connections``), as ``_wanted`` finds RFS.  Their files land in the mirror where
        ``sample`` reads them as /proc's."""
        spec = {
            "names": "(?i)" + BACKGROUND.pattern,
            "threaded": "(?i)" + THREADED.pattern,
            "status": keyed_pattern(SWITCH_KEYS, ":"),
            "every": str(DISCOVER_S),
        }
        if self.role != "primary":
            ports = "|".join(f"{p:04X}" for p in sorted(self.ports))
            spec["holders"] = "oracle"
            spec["connections"] = rf"\n *\d+: [0-9A-F]+:(?:{ports}) [0-9A-F]+:[0-9A-F]+ 01 [^\n]*"
        return spec

    def open(self) -> None:
        """Check that /proc shows other processes (a container without the host's pid space
        would follow nothing)."""
        self.proc = self.path("/proc")
        if not os.path.exists(os.path.join(self.proc, "self", "schedstat")):
            raise Unavailable(
                f"{self.proc}/self/schedstat is missing: the kernel has no CONFIG_SCHEDSTATS"
            )
        try:
            with open(os.path.join(self.proc, "sys", "kernel", "task_delayacct")) as fh:
                self._delayacct = fh.read().strip() == "1"
        except OSError:
            self._delayacct = False  # kernels before 5.14 account always: field 42 is read

    def sample(self) -> RawRows:
        """One read of each followed process; a walk when due or when one has gone."""
        now = time.monotonic()
        if now - self._walked >= DISCOVER_S:
            self._walk(now)
        rows: dict[str, dict[str, Any]] = {}
        gone = [inst for inst, p in self._followed.items() if not self._read(p, inst, rows)]
        if gone:  # exited or restarted: look for its successor now, not in DISCOVER_S
            for inst in gone:
                self._followed.pop(inst).close()
            self._walk(now)
            for inst in gone:
                successor = self._followed.get(inst)
                if successor is not None:
                    self._read(successor, inst, rows)
        return rows

    def _read(self, p: Process, inst: str, rows: dict[str, dict[str, Any]]) -> bool:
        """Put one process's row in ``rows``; False when it is gone (or its pid reused)."""
        try:
            rows[inst] = usage(p, self._delayacct)
        except (OSError, ValueError, IndexError):
            return False
        return True

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Rates per process; a process with a new pid starts afresh (its first rates unknown)."""
        if prev:
            prev = {k: v for k, v in prev.items() if k in cur and cur[k].get("pid") == v.get("pid")}
        return super().derive(prev, cur, dt)

    def close(self) -> None:
        for p in self._followed.values():
            p.close()
        self._followed.clear()

    def _background(self, name: str) -> str | None:
        """``PNAME SID`` of a commit-path background process of the followed instance(s) by
        its comm name, else None."""
        m = BACKGROUND.match(name)
        if m is None or (self.sid is not None and m.group(2).upper() != self.sid):
            return None
        return f"{m.group(1).upper()} {m.group(2).upper()}"

    def _walk(self, now: float) -> None:
        """Find the processes to follow and follow them: the new ones opened (a new pid under
        a known name is a restart, with an event), the gone ones closed."""
        self._walked = now
        wanted = self._wanted()
        for inst in [i for i, p in self._followed.items() if wanted.get(i, ("",))[0] != p.base]:
            self._followed.pop(inst).close()
        for inst, (base, pid, thread) in wanted.items():
            if inst in self._followed:
                continue
            try:
                self._followed[inst] = Process(base, pid, thread)
            except (OSError, IndexError):
                continue
            if inst in self._seen and self._seen[inst] != pid:
                text = f"{inst} restarted: pid {self._seen[inst]} -> {pid}"
                self.emit_event(Event(time.time(), self.name, "restart", inst, text))
            self._seen[inst] = pid

    def _wanted(self) -> dict[str, tuple[str, int, bool]]:
        """Instance -> (/proc path, pid or tid, whether a thread) of each process to follow:
        the background ones by comm (named without the SID unless several instances show),
        RFS by its DG socket."""
        found: dict[str, tuple[str, int, bool]] = {}  # "PNAME SID" -> where
        servers: list[int] = []
        self._names.begin()
        for pid, path, name in comms(self.proc, self._names):
            key = self._background(name)
            if key is not None:
                found[key] = (path, pid, False)
            elif THREADED.match(name):  # never a BACKGROUND name: a process of threads
                for tid, base, thread_name in thread_comms(path, self._names):
                    if (key := self._background(thread_name)) is not None:
                        found[key] = (base, tid, True)
            elif name.startswith("oracle") and self.role != "primary":
                servers.append(pid)
        sids = {k.split(" ", 1)[1] for k in found}
        wanted = {(k.split(" ", 1)[0] if len(sids) <= 1 else k): at for k, at in found.items()}
        for pid in socket_holders(self.proc, servers, self.ports):
            wanted[f"RFS[{pid}]"] = (os.path.join(self.proc, str(pid)), pid, False)
        return wanted

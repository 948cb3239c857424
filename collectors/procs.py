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
(``ora_lgwr_PROD``) every ``DISCOVER_S`` seconds and whenever a followed process is gone; between
walks only the followed processes' files are read, kept open.  psutil's process_iter was not
used: it builds a Process object and reads /proc/PID/stat for every process on the host at each
walk, where ``comm`` alone names the ones wanted.  RFS has no name of its own: it is the
``oracle<SID> (LOCAL=NO)`` server process holding a socket on a Data Guard port, on a standby.
A process that restarts (a new pid under the same name) is followed, with an event.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, ValuesView
from typing import Any

from sgmon.collector import Collector, RawRows, Unavailable
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows
from sgmon.readers.procfile import ProcFile, stat_fields

G, R, T = Kind.GAUGE, Kind.RATE, Kind.TEXT
CLK_TCK = os.sysconf("SC_CLK_TCK")
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


class _Followed:
    """One followed process: its pid, start time and open /proc files."""

    __slots__ = (
        "base",
        "io",
        "last",
        "nthreads",
        "pid",
        "sched",
        "start",
        "stat",
        "tasks",
        "thread",
    )

    def __init__(self, base: str, pid: int, thread: bool = False) -> None:
        self.base = base
        """/proc/PID, or /proc/PID/task/TID for a thread of a threaded_execution process."""
        self.pid = pid
        self.stat = ProcFile(os.path.join(base, "stat"))
        self.start = stat_fields(self.stat.read())[19]
        self.io: ProcFile | None = _maybe(os.path.join(base, "io"))
        self.tasks: dict[str, tuple[ProcFile, ProcFile]] = {}
        self.thread = thread
        if thread:  # itself only: its process's other threads are other processes' work
            sched = ProcFile(os.path.join(base, "schedstat"))
            self.tasks[str(pid)] = (sched, ProcFile(os.path.join(base, "status")))
        self.nthreads = 1
        self.sched: list[bytes] = []
        """Its threads' schedstat texts at the last full read: equal now means it has not run."""
        self.last: dict[str, Any] | None = None

    def close(self) -> None:
        for f in (self.stat, self.io, *(x for pair in self.tasks.values() for x in pair)):
            if f is not None:
                f.close()


class ProcsCollector(Collector):
    """LGWR, NSS, RFS and their kin, by name, from /proc."""

    name = "procs"
    rows = (RowKind("process", label="process"),)
    description = "Oracle commit-path processes: CPU, run-queue delay, I/O wait, state"
    fields = FIELDS

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        sid = self.options.get("sid")
        self.sid = str(sid).upper() if sid else None
        self.role = str(self.options.get("role") or "")
        self.ports = {int(p) for p in self.options.get("ports", (1521,))}
        self._followed: dict[str, _Followed] = {}
        self._seen: dict[str, int] = {}  # name -> the pid it had, to tell a restart
        self._walked = float("-inf")
        self._delayacct = False

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
        gone = []
        for inst, p in self._followed.items():
            try:
                rows[inst] = _read(p, self._delayacct)
            except (OSError, ValueError, IndexError):
                gone.append(inst)
        if gone:  # exited or restarted: look for its successor now, not in DISCOVER_S
            for inst in gone:
                self._followed.pop(inst).close()
            self._walk(now)
            for inst in gone:
                successor = self._followed.get(inst)
                if successor is not None:
                    try:
                        rows[inst] = _read(successor, self._delayacct)
                    except (OSError, ValueError, IndexError):
                        continue
        return rows

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Rates per process; a process with a new pid starts afresh (its first rates unknown)."""
        if prev:
            prev = {k: v for k, v in prev.items() if k in cur and cur[k].get("pid") == v.get("pid")}
        return super().derive(prev, cur, dt)

    def close(self) -> None:
        for p in self._followed.values():
            p.close()
        self._followed.clear()

    def _threads(self, path: str) -> dict[str, tuple[str, int, bool]]:
        """The background threads of one threaded_execution process, by their comm names."""
        out: dict[str, tuple[str, int, bool]] = {}
        try:
            tids = os.listdir(os.path.join(path, "task"))
        except OSError:
            return out
        for tid in tids:
            base = os.path.join(path, "task", tid)
            try:
                with open(os.path.join(base, "comm"), "rb") as fh:
                    m = BACKGROUND.match(fh.read().decode("ascii", "replace").strip())
            except OSError:
                continue
            if m is not None and (self.sid is None or m.group(2).upper() == self.sid):
                out[f"{m.group(1).upper()} {m.group(2).upper()}"] = (base, int(tid), True)
        return out

    def _walk(self, now: float) -> None:
        """Find the processes to follow: background ones by comm, RFS by its DG socket."""
        self._walked = now
        found: dict[str, tuple[str, int, bool]] = {}  # name -> (/proc path, pid or tid, thread)
        servers: list[int] = []
        for entry in os.scandir(self.proc):
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "comm"), "rb") as fh:
                    comm = fh.read().decode("ascii", "replace").strip()
            except OSError:
                continue
            m = BACKGROUND.match(comm)
            if m is not None:
                pname, sid = m.group(1).upper(), m.group(2).upper()
                if self.sid is None or sid == self.sid:
                    found[f"{pname} {sid}"] = (entry.path, int(entry.name), False)
            elif THREADED.match(comm):
                found.update(self._threads(entry.path))
            elif comm.startswith("oracle") and self.role != "primary":
                servers.append(int(entry.name))
        sids = {k.split(" ", 1)[1] for k in found}
        names = {k: (k.split(" ", 1)[0] if len(sids) <= 1 else k) for k in found}
        wanted = {names[k]: where for k, where in found.items()}
        for pid in _rfs(self.proc, servers, self.ports):
            wanted[f"RFS[{pid}]"] = (os.path.join(self.proc, str(pid)), pid, False)
        for inst in [i for i, p in self._followed.items() if wanted.get(i, ("",))[0] != p.base]:
            self._followed.pop(inst).close()
        for inst, (base, pid, thread) in wanted.items():
            if inst in self._followed:
                continue
            try:
                self._followed[inst] = _Followed(base, pid, thread)
            except (OSError, IndexError):
                continue
            if inst in self._seen and self._seen[inst] != pid:
                text = f"{inst} restarted: pid {self._seen[inst]} -> {pid}"
                self.emit_event(Event(time.time(), self.name, "restart", inst, text))
            self._seen[inst] = pid


def _read(p: _Followed, delayacct: bool) -> dict[str, Any]:
    """One process's raw counters (threads summed) and state.

    Most of an instance's processes sleep through most ticks: one that was sleeping and has
    not been put on a CPU since (its schedstat text, time on a CPU, delay and run count, is the
    same bytes) has no new CPU time, delay, switch or I/O to count, so its last row stands and
    only its schedstat is read and compared (3 us instead of 25).  A process in R or D is read
    in full every tick.  Its CPU time is schedstat's nanoseconds on a CPU, not stat's utime +
    stime in clock ticks (10 ms each: a LGWR at 4 % of a CPU would read 0, 10 or 0 % from one
    second to the next).
    """
    tasks = _tasks(p, p.nthreads)
    raws = [sched.raw() for sched, _ in tasks]
    if raws == p.sched and p.last is not None and p.last["state"] not in ("R", "D"):
        return p.last
    scheds = [x.split() for x in raws]
    f = stat_fields(p.stat.read())
    if f[19] != p.start:
        raise ValueError("pid reused")
    state = f[0]
    vcsw = nvcsw = 0
    for _, status in tasks:
        vcsw, nvcsw = _ctxt(status.read(), vcsw, nvcsw)
    row: dict[str, Any] = {
        "pid": p.pid,
        "cpu": sum(int(x[0]) for x in scheds) / 1e7,  # ns -> % of one CPU per second
        "runq": sum(int(x[1]) for x in scheds) / 1e6,
        "io_delay": int(f[39]) * 1000.0 / CLK_TCK if delayacct and len(f) > 39 else None,
        "state": state,
        "vcsw": vcsw,
        "nvcsw": nvcsw,
    }
    if state == "D":
        row["wchan"] = _wchan(os.path.join(p.base, "wchan"))
    if p.io is not None:
        io = p.io.read()
        row["read_kb"] = _io(io, "read_bytes: ") / 1024
        row["write_kb"] = _io(io, "write_bytes: ") / 1024
    p.nthreads = int(f[17])  # a thread started or ended: the next read opens or drops its files
    p.sched, p.last = raws, row
    return row


def _tasks(p: _Followed, nthreads: int) -> ValuesView[tuple[ProcFile, ProcFile]]:
    """Each thread's schedstat and status, opened once (one task for a single-threaded one;
    a followed thread is its own only task)."""
    if len(p.tasks) != nthreads and not p.thread:
        base = os.path.join(p.base, "task")
        live = set(os.listdir(base))
        for tid in [t for t in p.tasks if t not in live]:
            for f in p.tasks.pop(tid):
                f.close()
        for tid in live - p.tasks.keys():
            try:
                sched = ProcFile(os.path.join(base, tid, "schedstat"))
            except OSError:
                continue  # the thread exited meanwhile
            try:
                p.tasks[tid] = (sched, ProcFile(os.path.join(base, tid, "status")))
            except OSError:
                sched.close()
    return p.tasks.values()


def _ctxt(status: str, vcsw: int, nvcsw: int) -> tuple[int, int]:
    i = status.find("voluntary_ctxt_switches:")
    j = status.find("nonvoluntary_ctxt_switches:")
    if i >= 0:
        vcsw += int(status[i + 24 : status.find("\n", i)])
    if j >= 0:
        nvcsw += int(status[j + 27 : status.find("\n", j)])
    return vcsw, nvcsw


def _io(text: str, key: str) -> int:
    i = text.find(key)
    return int(text[i + len(key) : text.find("\n", i)]) if i >= 0 else 0


def _wchan(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read().strip() or "?"
    except OSError:
        return "?"


def _maybe(path: str) -> ProcFile | None:
    """A /proc file another user's process may not let us read (io): None then."""
    try:
        pf = ProcFile(path)
        pf.read()
        return pf
    except OSError:
        return None


def _rfs(proc: str, servers: list[int], ports: set[int]) -> list[int]:
    """Server processes holding an established socket whose local port is a Data Guard port:
    on a standby, the RFS processes that receive redo (what ``ss -p`` would show)."""
    if not servers:
        return []
    inodes: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(os.path.join(proc, "net", table)) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    port = int(parts[1].rsplit(":", 1)[1], 16)
                    if parts[3] == "01" and port in ports:
                        inodes.add(parts[9])
        except (OSError, StopIteration, IndexError, ValueError):
            continue
    out = []
    for pid in servers:
        fd_dir = os.path.join(proc, str(pid), "fd")
        try:
            links = [os.readlink(os.path.join(fd_dir, fd)) for fd in os.listdir(fd_dir)]
        except OSError:
            continue
        if any(link.startswith("socket:[") and link[8:-1] in inodes for link in links):
            out.append(pid)
    return out

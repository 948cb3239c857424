"""Processes under a /proc tree: their command names, the sockets they hold, and one process's
scheduler, context-switch and I/O accounting read from files kept open.

``comms`` walks /proc's ``comm`` names (what discovery needs: psutil's process_iter would build
a Process object and read /proc/PID/stat for every process on the host); ``Process`` keeps one
process's (or thread's) files open and ``usage`` reads them, the whole set only when the process
has run since the last read.  The rows ``usage`` returns are keyed as the procs collector's
fields are (``pid``, ``cpu``, ``runq``, ``io_delay``, ``state``, ``wchan``, ``vcsw``, ``nvcsw``,
``read_kb``, ``write_kb``), raw: counters cumulative.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, ValuesView
from typing import Any

from sgmon.readers.procfile import KeyedLines, ProcFile, stat_fields

CLK_TCK = os.sysconf("SC_CLK_TCK")
SWITCH_KEYS = ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
"""The lines of /proc/PID/status read (a pump ships only these: collectors/procs.py)."""
_SWITCHES = KeyedLines(SWITCH_KEYS, ":")
_IO = KeyedLines(("read_bytes", "write_bytes"), ":")


def comm(path: str, encoding: str = "ascii") -> str | None:
    """The command name of the process or thread at ``path`` (``/proc/PID``), None when it is
    gone (or not ours to read).  Matched against Oracle's names it is read as ASCII (a byte
    outside it matches nothing); shown to a user, as UTF-8."""
    try:
        with open(os.path.join(path, "comm"), "rb") as fh:
            return fh.read().decode(encoding, "replace").strip()
    except OSError:
        return None


class Names:
    """The comm names a walk of /proc read, kept for the next walks: a walk reads only the names
    of the pids and threads the last one did not see, and every ``fresh``-th walk all of them
    (a name set after a walk read it, or a pid reused meanwhile, is seen within ``fresh``
    walks).  A threaded instance's hundred threads and a host's hundreds of processes then cost
    a walk a directory listing, not a file read each."""

    def __init__(self, fresh: int = 4) -> None:
        self.fresh = fresh
        self.walks = 0
        self.last: dict[str, str | None] = {}
        self.now: dict[str, str | None] = {}

    def begin(self) -> None:
        """A walk starts: the names kept, unless this one reads them all."""
        self.walks += 1
        self.last = self.now if self.walks % self.fresh else {}
        self.now = {}

    def of(self, path: str) -> str | None:
        """The comm of the process or thread at ``path``: the last walk's, else read."""
        name = self.last[path] if path in self.last else comm(path)
        self.now[path] = name
        return name


def comms(proc: str, names: Names | None = None) -> Iterator[tuple[int, str, str]]:
    """(pid, its /proc path, its comm) of every process under ``proc`` (``names``: the last
    walks' names, see Names)."""
    read = comm if names is None else names.of
    for entry in os.scandir(proc):
        if entry.name.isdigit() and (name := read(entry.path)) is not None:
            yield int(entry.name), entry.path, name


def thread_comms(path: str, names: Names | None = None) -> Iterator[tuple[int, str, str]]:
    """(tid, its /proc/PID/task/TID path, its comm) of each thread of the process at ``path``."""
    try:
        tids = os.listdir(os.path.join(path, "task"))
    except OSError:
        return
    read = comm if names is None else names.of
    for tid in tids:
        base = os.path.join(path, "task", tid)
        if (name := read(base)) is not None:
            yield int(tid), base, name


def socket_holders(proc: str, pids: Iterable[int], ports: set[int]) -> list[int]:
    """Those of ``pids`` holding an established socket whose local port is in ``ports`` (what
    ``ss -p`` would show): on a standby, the server processes receiving redo (RFS)."""
    pids = list(pids)
    if not pids:
        return []
    inodes = _established(proc, ports)
    out = []
    for pid in pids:
        fd_dir = os.path.join(proc, str(pid), "fd")
        try:
            links = [os.readlink(os.path.join(fd_dir, fd)) for fd in os.listdir(fd_dir)]
        except OSError:
            continue
        if any(link.startswith("socket:[") and link[8:-1] in inodes for link in links):
            out.append(pid)
    return out


def _established(proc: str, ports: set[int]) -> set[str]:
    """The inodes of the established TCP sockets (IPv4 and IPv6) whose local port is in
    ``ports``, from /proc/net/tcp and tcp6."""
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
    return inodes


class Process:
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
        """Close its files."""
        for f in (self.stat, self.io, *(x for pair in self.tasks.values() for x in pair)):
            if f is not None:
                f.close()


def usage(p: Process, delayacct: bool) -> dict[str, Any]:
    """One process's raw counters (threads summed) and state.

    Most of an instance's processes sleep through most ticks: one that was sleeping and has
    not been put on a CPU since (its schedstat text, time on a CPU, delay and run count, is the
    same bytes) has no new CPU time, delay, switch or I/O to count, so its last row stands and
    only its schedstat is read and compared (3 us instead of 25).  A process in R or D is read
    in full every tick.  Its CPU time is schedstat's nanoseconds on a CPU, not stat's utime +
    stime in clock ticks (10 ms each: a LGWR at 4 % of a CPU would read 0, 10 or 0 % from one
    second to the next).  ``delayacct``: the kernel accounts block I/O delay (field 42 read).
    Raises OSError, ValueError or IndexError when the process is gone or its pid reused.
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
        voluntary, involuntary = switches(status.read())
        vcsw, nvcsw = vcsw + voluntary, nvcsw + involuntary
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
        io = _IO.values(p.io.read())
        row["read_kb"] = int(io.get("read_bytes", 0)) / 1024
        row["write_kb"] = int(io.get("write_bytes", 0)) / 1024
    p.nthreads = int(f[17])  # a thread started or ended: the next read opens or drops its files
    p.sched, p.last = raws, row
    return row


def _tasks(p: Process, nthreads: int) -> ValuesView[tuple[ProcFile, ProcFile]]:
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


def switches(status: str) -> tuple[int, int]:
    """One thread's voluntary and involuntary context switches from its /proc status text,
    whole or as a pump ships it (only these lines, the last one without its newline)."""
    v = _SWITCHES.values(status)
    return int(v.get(SWITCH_KEYS[0], 0)), int(v.get(SWITCH_KEYS[1], 0))


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

"""The processes an ssh command started, found through /proc: a child that called setsid (a
far-side wrapper, a ProxyCommand, a ControlMaster) has left the command's process group and
session, so ending the group does not end it; it is still a descendant while its parent lives,
and is ended by its pid.

A child whose parent ended first (a user's ssh_command wrapper that exits, a daemon's double
fork) would be handed to init and lost: sgmon makes itself their subreaper
(PR_SET_CHILD_SUBREAPER, Linux), so such orphans become its children; each ssh command runs with
a MARK in its environment, which its descendants inherit, so an orphan is told from a child of
sgmon's own (a collector's command) and from another host's.  An orphan ended here is reaped
here, by its pid: never a wait for any child, which would take a ``subprocess.Popen``'s status.

A process is known by its pid and its start time (``/proc/PID/stat`` field 22), so a pid the
kernel gave to another process in the meantime is never signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.readers.procfile import stat_fields

Kin = tuple[int, int]
"""(pid, start time in clock ticks since boot)."""

GRACE = 2.0
"""Seconds the ssh command's process group has to end after SIGTERM before SIGKILL."""
MARK = "SGMON_SSH_SESSION"
"""The environment variable naming the ssh session a process descends from."""
PR_SET_CHILD_SUBREAPER = 36
_adopting: bool | None = None
"""Whether this process is its descendants' subreaper (None: not asked yet)."""
_commands: dict[int, int] = {}
"""pid -> start time of each ssh command running now (every host's): children of this
process, so ``orphans`` reads no environment of theirs (300 hosts ending at once read 90,000)."""


def adopt_orphans(warn: Callable[[str], None]) -> None:
    """Become the subreaper of this process's descendants, once; where the kernel refuses
    (not Linux, or before 3.4), ``warn`` says once what is then not ended."""
    global _adopting
    if _adopting is not None:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        err = 0 if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 else ctypes.get_errno()
    except (OSError, AttributeError):  # no libc, or no prctl in it
        err = -1
    _adopting = err == 0
    if not _adopting:
        why = os.strerror(err) if err > 0 else "not available here"
        warn(
            f"cannot adopt the orphans of the ssh commands ({why}): a process one of them "
            "started that outlives its parent is not ended with sgmon"
        )


def start_command(argv: list[str], session: str) -> subprocess.Popen:
    """Run an ssh command for ``session``: in a session (so a process group) of its own, with
    the session's MARK, its pipes to this process, and known here as a command, never taken
    for an orphan."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # our own process group: killed whole, never orphaned
        env={**os.environ, MARK: session},
    )
    st = _stat(proc.pid)  # not reaped yet: it is there, a zombie at worst
    if st is not None:
        _commands[proc.pid] = st[2]
    return proc


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process; None when it is gone."""
    try:
        fields = stat_fields(Path(f"/proc/{pid}/stat").read_text(errors="replace"))
        return fields[0], int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


class _Walks:
    """Walks of /proc, shared: each caller gets one begun after it asked (so nothing it must
    find is missed), and callers that ask while one runs share the next.  300 hosts ending at
    once made 300 walks of 20-30 ms of the interpreter each, which starved the archive's writer
    at the stop (29 s to stop; on a slower machine, frames dropped)."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._begun = self._done = 0
        self._walking = False
        self._last: dict[int, list[Kin]] = {}

    def children(self) -> dict[int, list[Kin]]:
        """Parent pid -> its live children (zombies left out), from a walk begun after the
        call."""
        with self._cv:
            want = self._begun + 1
            while self._done < want:
                if self._walking:
                    self._cv.wait()
                else:
                    self._walk_unlocked()
            return self._last

    def _walk_unlocked(self) -> None:
        """One walk, with the lock (held by the caller) let go meanwhile; the waiters are woken
        when it ends, and read it (or walk again, if it failed) once the caller lets go."""
        self._walking, self._begun = True, self._begun + 1
        mine = self._begun
        self._cv.release()
        try:
            walked = _walk()
        finally:
            self._cv.acquire()
            self._walking = False
            self._cv.notify_all()
        self._last, self._done = walked, mine


def _walk() -> dict[int, list[Kin]]:
    children: dict[int, list[Kin]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            st = _stat(int(d.name))
            if st is not None and st[0] != "Z":
                children.setdefault(st[1], []).append((int(d.name), st[2]))
    return children


_walks = _Walks()


def descendants(pid: int, children: dict[int, list[Kin]]) -> list[Kin]:
    """Every live descendant of ``pid`` (children, theirs, ...), whatever their group."""
    out: list[Kin] = []
    todo = [pid]
    while todo:
        for kin in children.get(todo.pop(), []):
            if kin not in out:
                out.append(kin)
                todo.append(kin[0])
    return out


def orphans(session: str, children: dict[int, list[Kin]]) -> list[Kin]:
    """The processes of ``session`` (its MARK) whose parent ended and that were handed to this
    process, with their descendants; never an ssh command (``start_command``: a child of this
    process, whose status is its ``subprocess.Popen``'s)."""
    mark = f"{MARK}={session}".encode()
    found: list[Kin] = []
    for pid, start in children.get(os.getpid(), []):
        if _commands.get(pid) == start:
            continue
        try:
            marked = mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marked:
            found += [(pid, start), *descendants(pid, children)]
    return found


def reap(kin: list[Kin]) -> None:
    """Wait for each process of ``kin`` that ended as a child of this one (an orphan it
    adopted), by its pid: no zombie is left, and no other child's status is taken."""
    me = os.getpid()
    for pid, start in kin:
        st = _stat(pid)
        if st is not None and st[0] == "Z" and st[1] == me and st[2] == start:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def alive(kin: Kin) -> bool:
    """Whether the very process ``kin`` names is still running (not a zombie, not reused)."""
    st = _stat(kin[0])
    return st is not None and st[0] != "Z" and st[2] == kin[1]


def end(kin: list[Kin], sig: signal.Signals) -> None:
    """Send ``sig`` to each process of ``kin`` still running."""
    for k in kin:
        if alive(k):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(k[0], sig)


def of_command(proc: subprocess.Popen, session: str) -> list[Kin]:
    """What the ssh command ``proc`` of ``session`` started, outside its process group: its
    descendants while it runs (found before its stdin closes, while their parents live), and
    those whose parent ended first (adopted: ``orphans``)."""
    children = _walks.children()
    running = descendants(proc.pid, children) if proc.poll() is None else []
    return [*running, *orphans(session, children)]


def end_command(proc: subprocess.Popen, others: list[Kin]) -> None:
    """End the ssh command ``proc``, its whole process group (its own session) and ``others``
    (``of_command``): SIGTERM, then SIGKILL after GRACE for what is left (a child that ignores
    SIGTERM or outlives its parent); then reap the adopted ones."""

    def left() -> bool:
        return proc.poll() is None or _group_alive(proc.pid) or any(map(alive, others))

    if left():
        _signal_group(proc.pid, signal.SIGTERM)
        end(others, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while left() and time.monotonic() < deadline:
            time.sleep(0.05)
        if _group_alive(proc.pid):  # never to a group that is gone: its id may be reused
            _signal_group(proc.pid, signal.SIGKILL)
        end(others, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(GRACE)
        while any(map(alive, others)) and time.monotonic() < deadline + GRACE:
            time.sleep(0.01)  # SIGKILL is not refused, but it takes a moment
    if proc.returncode is not None:  # reaped: its pid is free, and its Kin never comes back
        _commands.pop(proc.pid, None)
    reap(others)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group is left (the group outlives its leader)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)

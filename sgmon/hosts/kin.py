"""The processes an ssh command started, found through /proc: a child that called setsid (a
far-side wrapper, a ProxyCommand, a ControlMaster) has left the command's process group and
session, so ending the group does not end it; it is still a descendant while its parent lives,
and is ended by its pid.

A process is known by its pid and its start time (``/proc/PID/stat`` field 22), so a pid the
kernel gave to another process in the meantime is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from sgmon.readers.procfile import stat_fields

Kin = tuple[int, int]
"""(pid, start time in clock ticks since boot)."""


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time) of a process; None when it is gone."""
    try:
        fields = stat_fields(Path(f"/proc/{pid}/stat").read_text(errors="replace"))
        return fields[0], int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def descendants(pid: int) -> list[Kin]:
    """Every live descendant of ``pid`` (children, theirs, ...), whatever their group."""
    children: dict[int, list[Kin]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            st = _stat(int(d.name))
            if st is not None and st[0] != "Z":
                children.setdefault(st[1], []).append((int(d.name), st[2]))
    out: list[Kin] = []
    todo = [pid]
    while todo:
        for kin in children.get(todo.pop(), []):
            if kin not in out:
                out.append(kin)
                todo.append(kin[0])
    return out


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

"""A private ftrace instance of sgmon's own: made on open, every setting removed on close.

ftrace's global buffer and its settings belong to whoever else traces on the host (perf, trace-cmd,
an administrator), so sgmon never touches them: it makes its own instance under
``instances/`` (an independent ring buffer with its own events, filters and clock), enables its
events there only, and on close disables them, clears their filters and removes the directory.

The instance's name carries the owner's pid and start time (``sgmon-<pid>-<start>-<n>``): a
process killed with SIGKILL cannot clean up, so the next ``TraceInstance.open`` in any sgmon
removes every ``sgmon-*`` instance whose process is gone (no /proc/<pid>, or a different start
time there: the pid was reused).

tracefs is mounted at /sys/kernel/tracing if nothing is there yet (root only), and unmounted on
close only when this process mounted it and no other instance is left under it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import re

TRACEFS = "/sys/kernel/tracing"
PREFIX = "sgmon-"
_NAME = re.compile(r"sgmon-(\d+)-(\d+)-\d+$")
_seq = itertools.count()


class TraceUnavailable(Exception):
    """This host or this user cannot trace; the message says why."""


def start_time(pid: int | str) -> str | None:
    """A process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or None
    when the process does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()[19].decode()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount(where: str = TRACEFS) -> bool:
    """Mount tracefs at ``where`` unless something is mounted there; True when this call
    mounted it.  Raises TraceUnavailable with the reason when it cannot."""
    if os.path.ismount(where):
        return False
    if not os.path.isdir(where):
        raise TraceUnavailable(f"no {where} (kernel built without CONFIG_TRACING?)")
    if _libc().mount(b"nodev", where.encode(), b"tracefs", 0, None) != 0:
        e = ctypes.get_errno()
        hint = " (needs root: CAP_SYS_ADMIN)" if e in (errno.EPERM, errno.EACCES) else ""
        raise TraceUnavailable(f"cannot mount tracefs at {where}: {os.strerror(e)}{hint}")
    return True


def remove_instance(path: str, events: tuple[str, ...]) -> None:
    """Disable the events and clear their filters in an instance, then remove it; an event the
    instance lacks is skipped, and a directory already gone is fine."""
    for event in events:
        for name, off in (("enable", "0"), ("filter", "0")):
            with contextlib.suppress(OSError):
                _write(f"{path}/events/{event}/{name}", off)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def remove_stale(root: str, events: tuple[str, ...]) -> list[str]:
    """Remove the ``sgmon-*`` instances of processes that are gone; returns their names."""
    removed: list[str] = []
    try:
        names = os.listdir(f"{root}/instances")
    except OSError:
        return removed
    for name in names:
        m = _NAME.match(name)
        if m is None or start_time(m.group(1)) == m.group(2):
            continue  # not ours, or its process still runs
        with contextlib.suppress(OSError):  # another sgmon removing it at the same moment
            remove_instance(f"{root}/instances/{name}", events)
            removed.append(name)
    return removed


class TraceInstance:
    """``instances/sgmon-...`` with ``events`` enabled under their filters, read through a
    non-blocking ``trace_pipe``."""

    def __init__(
        self, events: dict[str, tuple[str, ...]], buffer_kb: int = 128, clock: str = "mono"
    ) -> None:
        self.events = events
        """event (``tcp/tcp_retransmit_skb``) -> filter expressions, the first the kernel
        accepts is used (a field only newer kernels record comes first); () for none."""
        self.filters: dict[str, str] = {}
        """event -> the filter in force."""
        self.buffer_kb = buffer_kb
        self.clock = clock
        self.root = TRACEFS
        self.path = ""
        self.stale: list[str] = []
        """Instances of dead sgmon processes removed by ``open``."""
        self._mounted = False
        self._pipe: int | None = None

    def open(self) -> None:
        """Mount if needed, clean up stale instances, make ours and enable the events; on any
        failure everything made so far is removed and TraceUnavailable says why."""
        self._mounted = mount(self.root)
        names = tuple(self.events)
        try:
            if not os.access(f"{self.root}/instances", os.W_OK | os.X_OK):
                raise TraceUnavailable(f"no write access to {self.root}/instances (needs root)")
            missing = [e for e in names if not os.path.isdir(f"{self.root}/events/{e}")]
            if missing:
                raise TraceUnavailable(f"this kernel has no tracepoint {', '.join(missing)}")
            self.stale = remove_stale(self.root, names)
            me = os.getpid()
            self.path = f"{self.root}/instances/{PREFIX}{me}-{start_time(me)}-{next(_seq)}"
            try:
                os.mkdir(self.path)
            except OSError as e:
                self.path = ""
                raise TraceUnavailable(f"cannot create a trace instance: {e.strerror}") from None
            _write(f"{self.path}/buffer_size_kb", str(self.buffer_kb))
            _write(f"{self.path}/trace_clock", self.clock)
            for event, exprs in self.events.items():
                self._filter(event, exprs)
                _write(f"{self.path}/events/{event}/enable", "1")
            self._pipe = os.open(f"{self.path}/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            self.close()
            raise TraceUnavailable(f"tracefs: {e}") from None
        except TraceUnavailable:
            self.close()
            raise

    def _filter(self, event: str, exprs: tuple[str, ...]) -> None:
        """Set the first filter the kernel accepts (EINVAL: a field this kernel's record of the
        event lacks, see its ``format`` file)."""
        for expr in exprs:
            try:
                _write(f"{self.path}/events/{event}/filter", expr)
            except OSError:
                continue
            self.filters[event] = expr
            return
        if exprs:
            raise TraceUnavailable(f"{event} rejects the filter {exprs[-1]!r}")

    def read(self) -> bytes:
        """Everything the buffer holds now (consumed), without waiting: b"" when empty."""
        if self._pipe is None:
            return b""
        chunks = []
        while True:
            try:
                chunk = os.read(self._pipe, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Close the pipe, remove every setting and the instance, and unmount tracefs if this
        process mounted it and nothing else traces through it (idempotent)."""
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if self.path:
            remove_instance(self.path, tuple(self.events))
            self.path = ""
        if self._mounted:
            self._mounted = False
            with contextlib.suppress(OSError):
                if not os.listdir(f"{self.root}/instances"):
                    _libc().umount2(self.root.encode(), 0)  # EBUSY: someone uses it; leave it

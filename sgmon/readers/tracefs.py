"""A private ftrace instance of sgmon's own: made on open, every setting removed on close.

Records are read in the ring buffer's binary form, per CPU (``per_cpu/cpuN/trace_pipe_raw``,
non-blocking), from the CPUs one poll() finds readable (``buffer_percent`` 0: readable with any
record), so a tick without records costs one syscall however many CPUs the host has.  They are
decoded with the offsets of each event's ``format`` file: the text ``trace_pipe`` made the
kernel print each record (~3 us) and Python parse it again (~3.5 us), twice as dear per event
(bench/retrans_cost.py).

ftrace's global buffer and its settings belong to whoever else traces on the host (perf, trace-cmd,
an administrator), so sgmon never touches them: it makes its own instance under
``instances/`` (an independent ring buffer with its own events, filters and clock), enables its
events there only, and on close disables them, clears their filters and removes the directory.

The instance's name carries the owner's pid and start time (``sgmon-<pid>-<start>-<n>``): a
process killed with SIGKILL cannot clean up, so the next ``TraceInstance.open`` in any sgmon
removes every ``sgmon-*`` instance whose process is gone (no /proc/<pid>, or a different start
time there: the pid was reused) and whose files nobody holds open.

tracefs is mounted at /sys/kernel/tracing if nothing is there yet (root only), and unmounted on
close only when this process mounted it and no other instance is left under it.

On a host reached over ssh with nothing installed, the pump makes the instance there
(sgmon/remote/pump.py, ``Trace``) and ships the raw pages; ``PumpedTrace`` reads them from the
pump's mirror and decodes them here with the same ``decode_page``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import re
import select
import struct
import time

from sgmon.readers.procfile import start_time

TRACEFS = "/sys/kernel/tracing"
PREFIX = "sgmon-"
_NAME = re.compile(r"sgmon-(\d+)-(\d+)-\d+$")
_seq = itertools.count()
_U32 = struct.Struct("=I")  # native byte order, as the kernel writes the buffer
_PAGE = struct.Struct("=QQ")  # ring buffer sub-buffer header: time stamp, commit (size, flags)
_MISSED_EVENTS, _MISSED_STORED = 1 << 31, 1 << 30
_PADDING, _TIME_EXTEND, _TIME_STAMP = 29, 30, 31
_FIELD = re.compile(r"field:[^;]*?(\w+)(?:\[\d+\])?;\s*offset:(\d+);\s*size:(\d+);")


def decode_page(page: bytes, out: list[tuple[int, bytes]]) -> int:
    """Append (time stamp in the trace clock's ns, record) for each record of one ring-buffer
    sub-buffer as ``trace_pipe_raw`` hands it out (include/linux/ring_buffer.h's compressed
    headers: events/header_page and header_event); returns the records the buffer lost before
    this page."""
    if len(page) < _PAGE.size:
        return 0
    ts, commit = _PAGE.unpack_from(page)
    size = min(commit & (_MISSED_STORED - 1), len(page) - _PAGE.size)
    lost = 0
    if commit & _MISSED_EVENTS:
        end = _PAGE.size + size
        stored = commit & _MISSED_STORED and len(page) >= end + 8
        lost = struct.unpack_from("=Q", page, end)[0] if stored else 1
    pos, end = _PAGE.size, _PAGE.size + size
    unpack, append = _U32.unpack_from, out.append
    while pos + 4 <= end:
        header = unpack(page, pos)[0]
        kind = header & 0x1F
        if 0 < kind < _PADDING:  # a short record (the usual): its length in 32-bit words
            ts += header >> 5
            pos += 4
            append((ts, page[pos : pos + 4 * kind]))
            pos += 4 * kind
        elif kind == 0:  # a long record: its length (with that word) in the next word
            length = unpack(page, pos + 4)[0]
            ts += header >> 5
            append((ts, page[pos + 8 : pos + 4 + length]))
            pos += 4 + length
        elif kind == _TIME_EXTEND:
            ts += (unpack(page, pos + 4)[0] << 27) + (header >> 5)
            pos += 8
        elif kind == _TIME_STAMP:
            ts = (unpack(page, pos + 4)[0] << 27) | header >> 5  # 59 bits: 18 years of ns
            pos += 8
        elif header >> 5 == 0:  # padding to the end of the page
            break
        else:  # padding over a discarded record
            pos += 4 + unpack(page, pos + 4)[0]
    return lost


def _read_pages(data: bytes, out: list[tuple[int, bytes]]) -> int:
    """Decode a pump's pages (each after its 4-byte length) into ``out``; the records lost."""
    lost, pos = 0, 0
    while pos + 4 <= len(data):
        (size,) = _U32LE.unpack_from(data, pos)
        lost += decode_page(data[pos + 4 : pos + 4 + size], out)
        pos += 4 + size
    return lost


_U32LE = struct.Struct("<I")
_OFFSET = struct.Struct("<d")


def event_format(root: str, event: str) -> tuple[int, dict[str, tuple[int, int]]]:
    """An event's type id and its record's fields under a tracefs ``root``: name -> (offset,
    size)."""
    base = f"{root}/events/{event}"
    with open(f"{base}/id") as f:
        ident = int(f.read())
    with open(f"{base}/format") as f:
        fields = {m[0]: (int(m[1]), int(m[2])) for m in _FIELD.findall(f.read())}
    return ident, fields


class TraceUnavailable(Exception):
    """This host or this user cannot trace; the message says why."""


def _first(record: tuple[int, bytes]) -> int:
    return record[0]


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


def remove_stale(root: str) -> list[str]:
    """Remove the ``sgmon-*`` instances of processes that are gone; returns their names.

    Removing the directory alone is enough (the kernel disables its events and frees its
    buffer with it), and it fails with EBUSY while any process holds one of its files open:
    an instance whose pid merely looks dead from this PID namespace (another container's
    sgmon) is left untouched, settings included."""
    removed: list[str] = []
    try:
        names = os.listdir(f"{root}/instances")
    except OSError:
        return removed
    for name in names:
        m = _NAME.match(name)
        if m is None or start_time(int(m.group(1))) == m.group(2):
            continue  # not ours, or its process still runs
        try:
            os.rmdir(f"{root}/instances/{name}")
        except OSError:  # in use, or another sgmon removed it at the same moment
            continue
        removed.append(name)
    return removed


class TraceInstance:
    """``instances/sgmon-...`` with ``events`` enabled under their filters, read through each
    CPU's non-blocking ``trace_pipe_raw``."""

    def __init__(
        self, events: dict[str, tuple[str, ...]], buffer_kb: int = 128, clock: str = "mono"
    ) -> None:
        self.events = events
        """event (``tcp/tcp_retransmit_skb``) -> filter expressions, the first the kernel
        accepts is used (a field only newer kernels record comes first); () for none."""
        self.buffer_kb = buffer_kb
        self.clock = clock
        self.root = TRACEFS
        self.path = ""
        self.stale: list[str] = []
        """Instances of dead sgmon processes removed by ``open``."""
        self._mounted = False
        self._pipes: list[int] = []  # per CPU trace_pipe_raw
        self._poll = select.poll()
        self._page = 4096

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
            self.stale = remove_stale(self.root)
            me = os.getpid()
            self.path = f"{self.root}/instances/{PREFIX}{me}-{start_time(me)}-{next(_seq)}"
            try:
                os.mkdir(self.path)
            except OSError as e:
                self.path = ""
                raise TraceUnavailable(f"cannot create a trace instance: {e.strerror}") from None
            _write(f"{self.path}/buffer_size_kb", str(self.buffer_kb))
            _write(f"{self.path}/trace_clock", self.clock)
            with contextlib.suppress(OSError):  # 0: a pipe polls readable with any record
                _write(f"{self.path}/buffer_percent", "0")
            for event, exprs in self.events.items():
                self._filter(event, exprs)
                _write(f"{self.path}/events/{event}/enable", "1")
            with (
                contextlib.suppress(OSError, ValueError),  # older kernels: the page size
                open(f"{self.path}/buffer_subbuf_size_kb") as f,
            ):
                self._page = int(f.read()) * 1024
            cpus = sorted(c for c in os.listdir(f"{self.path}/per_cpu") if c[3:].isdigit())
            for cpu in cpus:
                raw = f"{self.path}/per_cpu/{cpu}/trace_pipe_raw"
                self._pipes.append(os.open(raw, os.O_RDONLY | os.O_NONBLOCK))
                self._poll.register(self._pipes[-1], select.POLLIN)
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
            return
        if exprs:
            raise TraceUnavailable(f"{event} rejects the filter {exprs[-1]!r}")

    def format(self, event: str) -> tuple[int, dict[str, tuple[int, int]]]:
        """An event's type id and its record's fields: name -> (offset, size)."""
        return event_format(self.root, event)

    def clock_offset(self) -> float:
        """Wall clock minus the instance's clock (CLOCK_MONOTONIC) now: a record's time
        stamp plus it is its wall time."""
        return time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)

    def read(self) -> tuple[list[tuple[int, bytes]], int]:
        """The records every CPU's buffer holds now (consumed), without waiting, in time order
        as (time stamp in ns of the instance's clock, record); and how many were lost."""
        records: list[tuple[int, bytes]] = []
        lost = 0
        ready = self._poll.poll(0) if self._pipes else []  # one call, however many CPUs
        for fd, _ in ready:
            while True:
                try:
                    page = os.read(fd, self._page)
                except BlockingIOError:
                    break
                if not page:
                    break
                lost += decode_page(page, records)
        if len(ready) > 1:
            records.sort(key=_first)
        return records, lost

    def close(self) -> None:
        """Close the pipes, remove every setting and the instance, and unmount tracefs if this
        process mounted it and nothing else traces through it (idempotent)."""
        for fd in self._pipes:
            self._poll.unregister(fd)
            os.close(fd)
        self._pipes = []
        if self.path:
            remove_instance(self.path, tuple(self.events))
            self.path = ""
        if self._mounted:
            self._mounted = False
            with contextlib.suppress(OSError):
                if not os.listdir(f"{self.root}/instances"):
                    _libc().umount2(self.root.encode(), 0)  # EBUSY: someone uses it; leave it


PUMPED = "tracefs-pages"
"""The directory of a pump's mirror where the far side's trace records land
(sgmon/remote/mirror.py): one file per tick that carried any, named by an increasing number,
holding the far side's wall clock minus its trace clock (a little-endian double), then each
page after its 4-byte length."""


class PumpedTrace:
    """A far side's trace instance as its pump ships it (its reading side, as TraceInstance's):
    the event formats from the mirror's copy of tracefs, the records from PUMPED, each file
    consumed once read."""

    def __init__(self, root: str) -> None:
        self.root = os.path.join(root, TRACEFS.lstrip("/"))
        self.spool = os.path.join(root, PUMPED)
        self.path = "on the far side"
        self.stale: list[str] = []
        self._offset = 0.0

    def open(self) -> None:
        """TraceUnavailable when the far side made no instance (it said why in its message)."""
        if not os.path.isdir(self.spool):
            raise TraceUnavailable(
                "the far side traces nothing (the ssh user there needs root, and tracefs)"
            )

    def format(self, event: str) -> tuple[int, dict[str, tuple[int, int]]]:
        """As TraceInstance.format, from the far side's copy of the event's files."""
        return event_format(self.root, event)

    def clock_offset(self) -> float:
        """The far side's wall clock minus its trace clock, as its last records came."""
        return self._offset

    def read(self) -> tuple[list[tuple[int, bytes]], int]:
        """The records shipped since the last read, in time order, and how many were lost."""
        records: list[tuple[int, bytes]] = []
        lost = 0
        for name in sorted(n for n in os.listdir(self.spool) if n.isdigit()):
            path = os.path.join(self.spool, name)
            with open(path, "rb") as f:
                data = f.read()
            os.unlink(path)
            if len(data) >= _OFFSET.size:
                (self._offset,) = _OFFSET.unpack_from(data)
                lost += _read_pages(data[_OFFSET.size :], records)
        records.sort(key=_first)
        return records, lost

    def close(self) -> None:
        """Nothing to remove here: the pump removes its instance when it ends."""

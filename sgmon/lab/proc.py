"""What every lab child process shares: dying with its parent, a hard deadline, a pinned CPU,
and page-aligned buffers for direct I/O to a log device.

A lab process never outlives the lab: the kernel sends it SIGKILL when its parent dies
(PR_SET_PDEATHSIG), and it ends by itself at ``--duration`` even if nobody stops it.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import threading

PR_SET_PDEATHSIG = 1
BLOCK = 4096
"""Direct I/O unit: writes are padded to whole 4 KiB blocks, like redo blocks to the sector size."""


def bind_to_parent(duration: float, stop: threading.Event | None = None) -> threading.Event:
    """Die with the parent, stop on SIGTERM/SIGINT, and stop after ``duration`` seconds."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    stop = stop or threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    t = threading.Timer(duration, stop.set)
    t.daemon = True
    t.start()
    return stop


PRIORITY = -10
"""Nice value of the lab's database processes (and of the CPU hog that competes with them), so
that other work on a shared test machine does not look like a lab incident."""


def pin(cpu: int | None) -> None:
    """Run on one CPU (the lab gives each host its own), if that CPU exists, at PRIORITY."""
    if cpu is not None and cpu in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {cpu})
    os.setpriority(os.PRIO_PROCESS, 0, PRIORITY)


def name_thread(name: str) -> None:
    """Give the calling thread a comm name, as Oracle names its background processes (or, with
    threaded_execution, their threads): ``ora_lgwr_PROD``, so the procs collector finds it."""
    path = f"/proc/self/task/{threading.get_native_id()}/comm"
    try:
        with open(path, "w") as fh:
            fh.write(name[:15])
    except OSError:
        pass  # a name is for the watcher's sake; the lab runs without it


def padded(n: int) -> int:
    """n rounded up to whole direct-I/O blocks."""
    return max(BLOCK, -(-n // BLOCK) * BLOCK)


class LogDevice:
    """A log written circularly with O_DIRECT|O_DSYNC: each write returns once it is on disk."""

    def __init__(self, path: str, size: int, max_write: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
        self.size = size - size % BLOCK
        self.buf = mmap.mmap(-1, padded(max_write))  # page-aligned, as O_DIRECT needs
        self.offset = 0
        self._lock = threading.Lock()

    def write(self, data: bytes | memoryview) -> int:
        """Write data (padded to blocks) at the next offset; returns the bytes written."""
        n = padded(len(data))
        if n > len(self.buf):
            raise ValueError(f"write of {n} bytes exceeds the buffer")
        with self._lock:
            self.buf[: len(data)] = data
            if self.offset + n > self.size:
                self.offset = 0
            os.pwrite(self.fd, memoryview(self.buf)[:n], self.offset)
            self.offset += n
        return n

    def close(self) -> None:
        """Close the device."""
        os.close(self.fd)
        self.buf.close()


def device_size(path: str) -> int:
    """Size in bytes of a block device (or file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)

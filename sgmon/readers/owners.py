"""Which process owns a socket, found as ``ss -p`` finds it: by reading the /proc/*/fd links.

A full scan costs about a microsecond per open descriptor on the host, which on a database
server is thousands, so ``Owners`` scans only when a socket inode it has not resolved appears,
and in slices of ``budget`` seconds per call (the next call resumes where this one stopped).
Sockets not found (another user's process without root) map to None and are not searched again.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping

from sgmon.readers.procs import comm

Owner = tuple[int, str]
"""A socket's owning process: its pid and its command name."""


class Owners:
    """Socket inode -> owner (or None), under the /proc tree ``proc``."""

    def __init__(self, proc: str = "/proc", budget: float = 0.003) -> None:
        self.proc = proc
        self.budget = budget
        self._known: dict[int, Owner | None] = {}
        self._wanted: set[int] = set()
        self._scan: Iterator[None] | None = None
        self._settled: set[int] | None = None  # inodes last asked for, all of them resolved

    def resolve(self, inodes: set[int]) -> Mapping[int, Owner | None]:
        """Owners of the given inodes, as far as known now."""
        if inodes == self._settled:  # the usual tick: the same sockets as the last one
            return self._known
        self._known = {i: o for i, o in self._known.items() if i in inodes}
        missing = {i for i in inodes if i and i not in self._known} - self._wanted
        if missing and self._scan is None:
            self._wanted = missing
            self._scan = self._walk()
        self._advance()
        known = self._known
        self._settled = inodes if all(i in known for i in inodes if i) else None
        return known

    def _advance(self) -> None:
        """Run the scan under way for at most ``budget`` seconds; forget it once it is done."""
        if self._scan is None:
            return
        deadline = time.perf_counter() + self.budget
        for _ in self._scan:
            if time.perf_counter() >= deadline:
                return
        self._scan = None

    def _walk(self) -> Iterator[None]:
        """Yields every few descriptors, so one process with thousands of them cannot make a
        call overrun the budget; stops as soon as every wanted inode is found."""
        links = {f"socket:[{ino}]": ino for ino in self._wanted}
        for pid in os.listdir(self.proc):
            if not links:
                break
            if not pid.isdigit():
                continue
            yield from self._process(pid, links)
            yield
        for ino in self._wanted:
            self._known.setdefault(ino, None)
        self._wanted = set()

    def _process(self, pid: str, links: dict[str, int]) -> Iterator[None]:
        """Look through one process's descriptors for the wanted links (taken out of ``links``
        as they are found)."""
        try:
            with os.scandir(os.path.join(self.proc, pid, "fd")) as fds:  # lazily: maybe 100k
                for n, fd in enumerate(fds, 1):
                    with contextlib.suppress(OSError):  # closed since listed
                        ino = links.pop(os.readlink(fd.path), None)
                        if ino is not None:
                            self._known[ino] = (int(pid), self._comm(pid))
                    if not links:
                        return
                    if n % 32 == 0:
                        yield
        except OSError:  # exited, or another user's process without root
            return

    def _comm(self, pid: str) -> str:
        return comm(os.path.join(self.proc, pid), "utf-8") or ""

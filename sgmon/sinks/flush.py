"""When the archive's rows reach the disk (the fsync policy).

Every tick's rows go to the kernel at once (``sgmon.sinks.csvfile``), so a kill -9 loses none;
a power cut loses what the kernel had not written back yet, up to its 30-35 s of dirty pages.
So each file written since the last flush is flushed (``fdatasync``) at most every
``SYNC_EVERY`` seconds, in one batch with the directories whose entries changed (a new file's
name), and each file once more when it is closed (rotation, the end of the run): a power cut
loses at most about the last 5 s.

The flushes run in a thread of their own: a batch takes tens of milliseconds on a quiet disk and
far more on one busy with redo (bench/record_fsync.py), and the recorder's tick, the dashboard
and the exporter fed by the same dispatcher must not wait for it.  The thread never races a
close: a file's descriptor is closed by the thread itself, after its last flush (``retire``).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sgmon.safefs import Dir
from sgmon.sinks.csvfile import AppendFile

SYNC_EVERY = 5.0
"""Seconds between two flushes of a file's rows, at most."""


@dataclass(slots=True)
class _Batch:
    """Files to flush (and close, when ``closing``) and directories to flush."""

    files: list[AppendFile]
    dirs: list[Dir] = field(default_factory=list)
    closing: bool = False


class Flusher:
    """Flushes the open files it was given (``add``) at most every ``every`` seconds (never,
    None: only when closed), each again when ``retire``d, then closes it."""

    def __init__(
        self,
        every: float | None = SYNC_EVERY,
        warn: Callable[[str], None] | None = None,
        background: bool = True,
    ) -> None:
        self.every = every
        self.warn = warn
        self.background = background
        """False: each batch is flushed in the caller's thread (what bench/record_fsync.py
        compares the thread with)."""
        self._files: dict[int, AppendFile] = {}
        self._dirs: list[Dir] = []
        self._next = time.monotonic() + (every or 0.0)
        self._pending = threading.Event()  # a periodic batch not flushed yet: none more queued
        self._queue: queue.SimpleQueue[_Batch | threading.Event | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._said: set[str] = set()

    def add(self, f: AppendFile) -> None:
        """Flush this open file's rows from now on."""
        self._files[id(f)] = f

    def watch(self, d: Dir) -> None:
        """Flush this directory's entries when they change (closed by its owner after
        ``close``)."""
        self._dirs.append(d)

    def tick(self) -> None:
        """Flush what was written since the last flush, when it is due (the writer calls this
        after each frame)."""
        if self.every is None or self._pending.is_set():
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.every
        files = [f for f in self._files.values() if f.unsynced]
        dirs = [d for d in self._dirs if d.changed]
        if files or dirs:
            self._pending.set()
            self._submit(_Batch(files, dirs))

    def retire(self, f: AppendFile) -> None:
        """Flush the file once more and close it: its writer is done with it."""
        self._files.pop(id(f), None)
        self._submit(_Batch([f], closing=True))

    def drain(self) -> None:
        """Return once everything submitted so far is flushed."""
        if self._thread is not None:
            done = threading.Event()
            self._queue.put(done)
            done.wait()

    def close(self) -> None:
        """Retire every file left, flush the directories, and stop the thread."""
        for f in list(self._files.values()):
            self.retire(f)
        dirs = [d for d in self._dirs if d.changed]
        if dirs:
            self._submit(_Batch([], dirs))
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _submit(self, batch: _Batch) -> None:
        if not self.background:
            self._flush(batch)
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sgmon-flush", daemon=True)
            self._thread.start()
        self._queue.put(batch)

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            if isinstance(job, threading.Event):
                job.set()
            else:
                self._flush(job)

    def _flush(self, batch: _Batch) -> None:
        for f in batch.files:
            if f.unsynced:  # cleared before the flush: a row written after it sets it again
                f.unsynced = False
                self._guard(f.path, os.fdatasync, f.fd)
            if batch.closing:
                f.close()
        for d in batch.dirs:
            d.changed = False
            self._guard(d.path, os.fsync, d.fd)
        if not batch.closing:
            self._pending.clear()

    def _guard(self, path: str, flush: Callable[[int], None], fd: int) -> None:
        """Flush one descriptor; a failure is said once per kind (the rows stay written: only
        a power cut before the kernel writes them back would lose them)."""
        try:
            flush(fd)
        except OSError as e:
            what = e.strerror or str(e)
            if self.warn is not None and what not in self._said:
                self._said.add(what)
                self.warn(
                    f"{path}: cannot flush to disk ({what}); rows written since the last flush "
                    "may be lost at a power cut"
                )

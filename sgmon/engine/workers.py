"""The engine's workers: the threads that run batches of collectors, and each collector's state
across ticks (``sgmon.engine`` says why the threads are few and how a hung read is retired)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from sgmon.collector import Collector, IdleMemory, RawRows, Unavailable, derive_moved
from sgmon.model import Rows


@dataclass(slots=True)
class Sample:
    rows: Rows | None  # derived
    duration_ms: float
    error: str | None
    unavailable: bool = False


class Runner:
    """One collector's state across ticks: busy, opened, its last result."""

    def __init__(self, collector: Collector, clock: Callable[[], float] = time.monotonic) -> None:
        self.collector = collector
        self.clock = clock
        """When a sample was read: the time its rates span (see ``Engine``'s ``clock``)."""
        self.busy = False
        self.unavailable: str | None = None
        self.opened = False
        self.result: Sample | None = None
        self.prev: tuple[RawRows, float] | None = None
        """The last raw sample that derived, with its monotonic time: rates span the real time
        between two successful samples, whatever was skipped."""
        self.idle: IdleMemory = {}
        """The figures of the instances whose raw rows the collector kept (``derive_moved``)."""
        self.busy_since = 0.0
        self.done = new_signal()
        """Released when the claimed sample has a result."""
        self.own = Worker(f"sgmon-{collector.name}") if collector.solo else None
        """The worker of a ``solo`` collector; None for those on the shared worker."""

    def claim(self) -> bool:
        """Mark the collector as asked for one sample; False while the last one is running."""
        if self.busy or self.unavailable:
            return False
        self.busy = True
        self.busy_since = time.monotonic()
        self.result = None
        self.done.acquire(blocking=False)  # not signalled until this sample's result
        return True

    def run_once(self) -> None:
        """Open if needed, sample and derive (here, while the raw rows are fresh in the
        cache), keep the result; never raises."""
        t0 = time.perf_counter()
        rows: Rows | None = None
        err: str | None = None
        unavailable = False
        c = self.collector
        try:
            if not self.opened:
                c.open()
                self.opened = True
            raw = c.sample()
            mono = self.clock()
        except Unavailable as e:
            err, unavailable = str(e), True
        except Exception as e:  # a failing source never stops the engine
            err = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        else:
            prev = self.prev
            try:
                dt = mono - prev[1] if prev else 0.0
                rows = derive_moved(c, prev[0] if prev else None, raw, dt, self.idle)
                self.prev = (raw, mono)
            except Exception as e:
                err = f"derive: {e}"
        self.result = Sample(rows, (time.perf_counter() - t0) * 1000, err, unavailable)
        if unavailable:
            self.unavailable = err
        self.busy = False
        wake(self.done)

    def close(self) -> None:
        """Close the collector if it was opened (on its worker's thread)."""
        if self.opened:
            self.opened = False
            with contextlib.suppress(Exception):  # closing is best effort
                self.collector.close()


class Worker:
    """A thread that runs batches of collectors in order: handed to it (``submit``, for ``tick``)
    or as ``run``'s ticker (``target``).  At the end it closes the collectors it was given."""

    def __init__(self, name: str, target: Callable[[Worker], None] | None = None) -> None:
        self.current: Runner | None = None
        self.retired = False
        self.batch: list[Runner] = []
        self.tick: Tick | None = None
        """The tick whose batch runs here (the ticker's), for a watchdog that finishes it."""
        self.lock = threading.Lock()
        """Guards current, retired and batch: who retires the worker knows exactly which of the
        batch it never started, and a retired worker never starts another or emits."""
        self._go = new_signal()
        self.finished = new_signal()
        """Released when the submitted batch has run: the tick waits on this one signal rather
        than on each collector's, so the worker and the tick hand the GIL over once, not once
        per collector."""
        self._closing: list[Runner] | None = None
        self._thread = threading.Thread(
            target=target or Worker._loop, args=(self,), name=name, daemon=True
        )
        self._thread.start()

    def submit(self, batch: list[Runner]) -> None:
        """Run these claimed collectors, in order."""
        self.batch = batch
        self.finished.acquire(blocking=False)  # a late batch's signal is not this one's
        wake(self._go)

    def run_batch(self, batch: list[Runner]) -> bool:
        """Run the claimed collectors in order; False if retired before the last one ended."""
        self.batch = batch
        for r in batch:
            with self.lock:
                if self.retired or self._closing is not None:
                    return False
                self.current = r
            r.run_once()
        with self.lock:
            self.current = None
            return not self.retired

    def retire(self, running: Runner | None = None) -> list[Runner] | None:
        """Stop after the running collector, if one runs (``running``, when given); return the
        claimed ones it never started, or None when it was not inside that collector (the
        batch ended meanwhile) and is not retired."""
        with self.lock:
            current = self.current
            if current is None or (running is not None and current is not running):
                return None
            self.retired = True
            return [r for r in self.batch if r is not current and r.busy and r.result is None]

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            if self._closing is None and not self.retired:
                self.run_batch(self.batch)
            wake(self.finished)
            if self._closing is not None:
                for r in self._closing:
                    r.close()
                return
            if self.retired:
                return

    def alive(self) -> bool:
        """Whether the thread still runs (a retired one ends when its hung read returns)."""
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end."""
        self._thread.join(timeout)

    def close(self, runners: list[Runner], join: float = 1.0) -> None:
        """Close the runners' collectors on this thread, then end it."""
        self._closing = runners
        wake(self._go)
        self._thread.join(join)


def new_signal() -> threading.Lock:
    """A lock used as a signal with one waiter, held while not signalled: its release and
    timed acquire are one C call each, where an Event's run a Condition's Python code."""
    lock = threading.Lock()
    lock.acquire()
    return lock


def wake(signal: threading.Lock) -> None:
    """Signal, unless already signalled and not yet taken."""
    with contextlib.suppress(RuntimeError):  # release of an unlocked lock
        signal.release()


class Tick(NamedTuple):
    """One tick under way: its frame time, its monotonic start, who was asked, the shared batch."""

    time: float
    start: float
    requested: dict[str, bool]
    shared: list[Runner]

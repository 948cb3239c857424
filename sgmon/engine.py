"""The sampling engine: wall-clock aligned ticks, time-bounded collectors, one frame per tick.

Collectors run off the engine's thread, so a hung read never holds up the tick: the /proc and
netlink collectors share one worker thread, run one after the other (a thread wake per collector
and tick cost more than most of them take to read); a collector whose driver is bound to a
thread or may block for long (``solo = True``: a database session) has its own.  At
each tick the engine hands every idle collector to its worker, waits until the tick's deadline,
and builds the frame from those that answered.  A collector still busy is reported ``stale`` and
not asked again until it returns; if it holds the shared worker, that worker is retired (it ends
when the hung read returns) and a fresh one takes the others from the next tick on.  The previous
raw sample of each collector is kept with its monotonic time, so rates are computed over the real
elapsed time between two successful samples, whatever was skipped; the derivation runs on the
worker right after the sample.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sgmon.collector import Collector, Unavailable
from sgmon.model import CollectorResult, Event, Frame, Rows, Schema, Status

MIN_INTERVAL = 0.1
MAX_INTERVAL = 60.0


def check_interval(seconds: float) -> float:
    """Validate an interval; the error says the allowed range."""
    if not (MIN_INTERVAL <= seconds <= MAX_INTERVAL) or math.isnan(seconds):
        raise ValueError(
            f"interval {seconds:g}s is out of range: use {MIN_INTERVAL:g}s to {MAX_INTERVAL:g}s"
        )
    return seconds


def next_boundary(now: float, interval: float) -> float:
    """The next wall-clock multiple of ``interval`` strictly after ``now``."""
    return (math.floor(now / interval + 1e-9) + 1) * interval


@dataclass(slots=True)
class _Sample:
    rows: Rows | None  # derived
    duration_ms: float
    error: str | None
    unavailable: bool = False


class _Runner:
    """One collector's state across ticks: busy, opened, its last result."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.busy = False
        self.unavailable: str | None = None
        self.opened = False
        self.result: _Sample | None = None
        self.prev: tuple[Rows, float] | None = None
        """The last raw sample that derived, with its monotonic time: rates span the real time
        between two successful samples, whatever was skipped."""
        self.busy_since = 0.0
        self.done = _signal()
        """Released when the claimed sample has a result."""
        self.own = _Worker(f"sgmon-{collector.name}") if collector.solo else None
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
            mono = time.monotonic()
        except Unavailable as e:
            err, unavailable = str(e), True
        except Exception as e:  # a failing source never stops the engine
            err = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        else:
            prev = self.prev
            try:
                rows = c.derive(prev[0] if prev else None, raw, mono - prev[1] if prev else 0.0)
                self.prev = (raw, mono)
            except Exception as e:
                err = f"derive: {e}"
        self.result = _Sample(rows, (time.perf_counter() - t0) * 1000, err, unavailable)
        if unavailable:
            self.unavailable = err
        self.busy = False
        _wake(self.done)

    def close(self) -> None:
        """Close the collector if it was opened (on its worker's thread)."""
        if self.opened:
            self.opened = False
            with contextlib.suppress(Exception):  # closing is best effort
                self.collector.close()


class _Worker:
    """A thread that runs batches of collectors in order and, at the end, closes them."""

    def __init__(self, name: str) -> None:
        self.current: _Runner | None = None
        self.retired = False
        self._batch: list[_Runner] = []
        self._go = _signal()
        self.finished = _signal()
        """Released when the submitted batch has run: the tick waits on this one signal rather
        than on each collector's, so the worker and the tick hand the GIL over once, not once
        per collector."""
        self._closing: list[_Runner] | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, batch: list[_Runner]) -> None:
        """Run these claimed collectors, in order."""
        self._batch = batch
        self.finished.acquire(blocking=False)  # a late batch's signal is not this one's
        _wake(self._go)

    def retire(self) -> list[_Runner]:
        """Stop after the running collector; return the claimed ones it never started."""
        self.retired = True
        left = [r for r in self._batch if r is not self.current and r.busy and r.result is None]
        self._batch = []
        _wake(self._go)
        return left

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            for r in list(self._batch):
                if self.retired or self._closing is not None:
                    break
                self.current = r
                r.run_once()
                self.current = None
            _wake(self.finished)
            if self._closing is not None:
                for r in self._closing:
                    r.close()
                return
            if self.retired:
                return

    def alive(self) -> bool:
        """Whether the thread still runs (a retired one ends when its hung read returns)."""
        return self._thread.is_alive()

    def close(self, runners: list[_Runner], join: float = 1.0) -> None:
        """Close the runners' collectors on this thread, then end it."""
        self._closing = runners
        _wake(self._go)
        self._thread.join(join)


def _signal() -> threading.Lock:
    """A lock used as a signal with one waiter, held while not signalled: its release and
    timed acquire are one C call each, where an Event's run a Condition's Python code."""
    lock = threading.Lock()
    lock.acquire()
    return lock


def _wake(signal: threading.Lock) -> None:
    """Signal, unless already signalled and not yet taken."""
    with contextlib.suppress(RuntimeError):  # release of an unlocked lock
        signal.release()


class Engine:
    """Samples a set of collectors for one host and turns each tick into a Frame."""

    def __init__(
        self,
        collectors: Iterable[Collector],
        interval: float = 1.0,
        host: str = "local",
        role: str = "",
    ) -> None:
        self.interval = check_interval(interval)
        self.host = host
        self.role = role
        self._runners = [_Runner(c) for c in collectors]
        self._shared = _Worker("sgmon-collect")
        self._retired: list[_Worker] = []
        self._seq = 0

    @property
    def collectors(self) -> list[Collector]:
        """The collectors, in frame order."""
        return [r.collector for r in self._runners]

    def schema(self) -> Schema:
        """Declared fields of every collector."""
        return {c.name: c.fields for c in self.collectors}

    def set_interval(self, seconds: float) -> None:
        """Change the interval from the next tick on (the dashboard's +/- keys)."""
        self.interval = check_interval(seconds)

    def tick(self, tick_time: float | None = None) -> Frame:
        """Sample every collector once, bounded by the interval, and return the frame."""
        tick_time = time.time() if tick_time is None else tick_time
        start = time.monotonic()
        requested = {r.collector.name: r.claim() for r in self._runners}
        shared = [r for r in self._runners if requested[r.collector.name] and r.own is None]
        for r in self._runners:
            if requested[r.collector.name] and r.own is not None:
                r.own.submit([r])
        if shared:
            self._shared.submit(shared)
            first = min(self._bound(r.collector) for r in shared)  # then each by its own bound
            self._shared.finished.acquire(timeout=max(0.0, start + first - time.monotonic()))
        results: dict[str, CollectorResult] = {}
        events: list[Event] = []
        for r in self._runners:
            c = r.collector
            if r.unavailable and not requested[c.name]:
                results[c.name] = CollectorResult(Status.UNAVAILABLE, error=r.unavailable)
                continue
            bound = self._bound(c)
            answered = requested[c.name] and (
                r.result is not None
                or r.done.acquire(timeout=max(0.0, start + bound - time.monotonic()))
            )
            if not answered:
                if requested[c.name] and r.own is None:
                    self._unstick()
                busy = time.monotonic() - r.busy_since
                results[c.name] = CollectorResult(
                    Status.STALE, duration_ms=busy * 1000, error=f"no answer for {busy:.1f}s"
                )
                continue
            s = r.result
            assert s is not None  # done is set only after the result
            events.extend(c.take_events())
            if s.unavailable:
                results[c.name] = CollectorResult(Status.UNAVAILABLE, error=s.error)
            elif s.error is not None or s.rows is None:
                results[c.name] = CollectorResult(
                    Status.ERROR, duration_ms=s.duration_ms, error=s.error
                )
            else:
                results[c.name] = CollectorResult(
                    Status.OK, rows=s.rows, duration_ms=round(s.duration_ms, 3)
                )
        self._seq += 1
        return Frame(
            host=self.host,
            role=self.role,
            time=tick_time,
            seq=self._seq,
            interval=self.interval,
            collectors=results,
            events=tuple(events),
        )

    def _bound(self, c: Collector) -> float:
        """Seconds after the tick's start that a collector's sample may take."""
        return min(c.timeout, self.interval * 0.9)

    def _unstick(self) -> None:
        """A collector overran its bound: if one holds the shared worker, retire that worker (it
        ends when the read returns) and hand the collectors queued behind it to a fresh one at
        once, so a hung read never costs the others their tick."""
        w = self._shared
        if w.current is not None:
            left = w.retire()
            self._retired = [x for x in self._retired if x.alive()] + [w]
            self._shared = _Worker("sgmon-collect")
            if left:
                self._shared.submit(left)

    def run(
        self,
        emit: Callable[[Frame], None],
        stop: threading.Event,
        duration: float | None = None,
    ) -> None:
        """Tick on wall-clock boundaries until ``stop`` is set or ``duration`` has passed.

        A clock that jumps is followed: a jump forward skips to the next boundary without a burst
        of catch-up ticks, a jump backward re-aligns instead of sleeping for the lost time.  The
        first tick primes the counters and is not emitted (its rates would be unknown).
        """
        end = None if duration is None else time.monotonic() + duration
        self.tick()  # prime
        last = time.time()
        while not stop.is_set():
            target = next_boundary(time.time(), self.interval)
            while not stop.is_set():
                now = time.time()
                if now >= target:
                    break
                if now < last - self.interval:  # clock stepped back
                    target = next_boundary(now, self.interval)
                stop.wait(min(target - now, self.interval))
            if stop.is_set():
                break
            last = target
            frame = self.tick(target)
            emit(frame)
            if end is not None and time.monotonic() >= end - 1e-3:
                break

    def close(self) -> None:
        """Close the collectors, each on the thread that opened it, and end the workers."""
        for r in self._runners:
            if r.own is not None:
                r.own.close([r])
        self._shared.close([r for r in self._runners if r.own is None])
        for w in self._retired:
            w.close([])

"""The sampling engine: wall-clock aligned ticks, time-bounded collectors, one frame per tick.

Collectors run off the caller's thread, so a hung read never holds up the tick: the /proc and
netlink collectors share one thread and run one after the other (a thread wake per collector and
tick cost more than most of them take to read); a collector whose driver is bound to a thread or
may block for long (``solo = True``: a database session) has its own.  A collector still busy
past its bound is reported ``stale`` and not asked again until it returns; if it holds the shared
thread, that thread is retired (it ends when the hung read returns) and a fresh one takes the
others at once.  The previous raw sample of each collector is kept with its monotonic time, so
rates are computed over the real elapsed time between two successful samples, whatever was
skipped; the derivation runs right after the sample, while the raw rows are in the cache.

``run`` ticks on the shared thread itself: it sleeps to the boundary, runs the batch, builds the
frame and emits it, so a tick wakes one thread.  On this 2-vCPU VM every wake-up costs about
0.1 ms of CPU (caches are cold after any sleep), and the hand-overs of a caller thread waking a
worker and waiting for it cost 0.1-0.15 ms per tick (bench/ab_tick.py).  The watchdog that
retires a hung batch is a timerfd that the ticker arms before the batch and disarms after it, two
system calls; its thread only wakes for a batch that overran.  ``tick`` (the primer, one-shot
samples, tests) hands the batch to a worker and waits, as the same watchdog would.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from sgmon.collector import Collector
from sgmon.engine.alarm import Alarm
from sgmon.engine.workers import Runner, Tick, Worker, new_signal, wake
from sgmon.model import CollectorResult, Event, Frame, Schema, Status
from sgmon.units import MAX_INTERVAL, MIN_INTERVAL


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
class _Run:
    """What ``run``'s caller, its ticker and its watchdog share."""

    emit: Callable[[Frame], None]
    end: float | None  # monotonic; None runs until stopped
    wake: threading.Lock  # a _signal: the ticker sleeps on it, ``run`` releases it to quit
    quitting: bool = False
    over: bool = False  # the ticker ended the run: duration reached, or emit raised
    error: Exception | None = None


RUN_POLL = 5.0
"""Seconds between the caller's looks at a run without a duration (it otherwise sleeps on the
caller's stop event): how soon an emit that raised ends ``run``."""


RESUME_GRACE = 0.05
"""Seconds the collectors a retired ticker never started get, when a fresh ticker finishes their
tick after their bound has passed: enough for a /proc read, so one hang does not retire a chain
of tickers."""


class Engine:
    """Samples a set of collectors for one host and turns each tick into a Frame."""

    def __init__(
        self,
        collectors: Iterable[Collector],
        interval: float = 1.0,
        host: str = "local",
        role: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock``: when each sample was read, for the span of its rates; a remote pump's
        host passes the far side's own reading time, which network delays do not move."""
        self.interval = check_interval(interval)
        self.host = host
        self.role = role
        self._runners = [Runner(c, clock) for c in collectors]
        self._shared = Worker("sgmon-collect")
        self._retired: list[Worker] = []
        self._ticker: Worker | None = None
        self._alarm: Alarm | None = None
        self._seq = 0
        self._carried: list[Event] = []
        """The priming tick's events: its frame is not emitted, its events are (a trace read
        ``from_start`` has them all in that tick), with the first frame that is."""
        self.first_after: float | None = None
        """Seconds after the priming sample to take the first frame, for a screen that should
        show rates at once (top and htop take theirs over a fraction of a second); None: at
        the first interval boundary, as a recording wants."""

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
        t = self._start(time.time() if tick_time is None else tick_time)
        if t.shared:
            self._shared.submit(t.shared)
            first = min(self._bound(r.collector) for r in t.shared)  # then each by its own bound
            self._shared.finished.acquire(timeout=max(0.0, t.start + first - time.monotonic()))
        return self._frame(t)

    def _start(self, tick_time: float) -> Tick:
        """Claim every idle collector and hand the solo ones to their threads."""
        start = time.monotonic()
        requested = {r.collector.name: r.claim() for r in self._runners}
        shared = []
        for r in self._runners:
            if requested[r.collector.name]:
                if r.own is None:
                    shared.append(r)
                else:
                    r.own.submit([r])
        return Tick(tick_time, start, requested, shared)

    def _frame(self, t: Tick) -> Frame:
        """The tick's frame: each collector's rows, or why it has none (waiting for each until
        its bound)."""
        results: dict[str, CollectorResult] = {}
        events, self._carried = self._carried, []
        for r in self._runners:
            c = r.collector
            requested = t.requested[c.name]
            if r.unavailable and not requested:
                results[c.name] = CollectorResult(Status.UNAVAILABLE, error=r.unavailable)
                continue
            bound = self._bound(c)
            answered = requested and (
                r.result is not None
                or r.done.acquire(timeout=max(0.0, t.start + bound - time.monotonic()))
            )
            if not answered:
                if requested and r.own is None:
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
            time=t.time,
            seq=self._seq,
            interval=self.interval,
            collectors=results,
            events=tuple(events),
        )

    def _bound(self, c: Collector) -> float:
        """Seconds after the tick's start that a collector's sample may take."""
        return min(c.timeout, self.interval * 0.9)

    def _unstick(self) -> None:
        """A collector overran its bound in ``tick``: if one holds the shared worker, retire that
        worker (it ends when the read returns) and hand the collectors queued behind it to a
        fresh one at once, so a hung read never costs the others their tick."""
        w = self._shared
        left = w.retire()
        if left is not None:
            self._retire(w)
            self._shared = Worker("sgmon-collect")
            if left:
                self._shared.submit(left)

    def _retire(self, w: Worker) -> None:
        self._retired = [x for x in self._retired if x.alive()] + [w]

    def run(
        self,
        emit: Callable[[Frame], None],
        stop: threading.Event,
        duration: float | None = None,
    ) -> None:
        """Tick on wall-clock boundaries until ``stop`` is set or ``duration`` has passed.

        A clock that jumps is followed: a jump forward skips to the next boundary without a burst
        of catch-up ticks, a jump backward re-aligns instead of sleeping for the lost time.  The
        first tick primes the counters and is not emitted (its rates would be unknown); its
        events go out with the first frame that is.  Frames
        are emitted on the ticker's thread, one at a time and in order; an emit that raises
        ends the run and is raised here.
        """
        end = None if duration is None else time.monotonic() + duration
        self._carried = list(self.tick().events)  # prime: its rates are unknown, its events not
        if self._alarm is None:
            self._alarm = Alarm()
        run = _Run(emit, end, new_signal())
        watchdog = threading.Thread(
            target=self._watch, args=(run,), name="sgmon-watchdog", daemon=True
        )
        watchdog.start()
        self._ticker = Worker("sgmon-tick", lambda w: self._tick_loop(w, run))
        try:
            while not run.over and not stop.wait(self._poll(run)):
                pass
        finally:
            self._end(run, watchdog)
        if run.error is not None:
            raise run.error

    def _poll(self, run: _Run) -> float:
        """How long the caller sleeps on its stop event before it looks at the run again."""
        if run.end is None:
            return RUN_POLL
        return min(RUN_POLL, max(0.05, run.end - time.monotonic()))

    def _end(self, run: _Run, watchdog: threading.Thread) -> None:
        """Stop the watchdog, then the ticker it leaves (so none starts after this).  A tick
        under way is finished and emitted, unless a collector holds it past every bound: then
        the ticker is retired and will neither start another collector nor emit."""
        run.quitting = True
        wake(run.wake)
        assert self._alarm is not None
        self._alarm.arm(time.monotonic())  # wakes the watchdog, which sees quitting
        watchdog.join()
        w = self._ticker
        if w is not None:
            w.join(max((self._bound(r.collector) for r in self._runners), default=0.0))
            if w.retire() is not None:
                self._retire(w)
            else:
                w.join()  # it is emitting the tick it collected

    def _tick_loop(self, w: Worker, run: _Run, resume: tuple[Tick, list[Runner]] | None = None):
        """The ticker: sleep to the boundary, run the shared batch here, emit the frame; on
        ``resume``, first finish a tick a retired ticker left."""
        try:
            if resume is not None and not self._finish(w, run, *resume):
                return
            last = time.time()
            if resume is None and self.first_after is not None:
                soon = last + self.first_after
                if next_boundary(soon, self.interval) - soon > self.first_after:
                    if self._sleep_until(run, soon, last) is None:
                        return
                    t = self._start(soon)
                    if not self._finish(w, run, t, t.shared):
                        return
            while not run.quitting:
                target = self._sleep_until(run, next_boundary(time.time(), self.interval), last)
                if target is None:
                    return
                last = target
                t = self._start(target)
                if not self._finish(w, run, t, t.shared):
                    return
                if run.end is not None and time.monotonic() >= run.end - 1e-3:
                    run.over = True
                    return
        except Exception as e:  # emit raised: the run ends and the caller raises it
            run.error, run.over = e, True

    def _sleep_until(self, run: _Run, target: float, last: float) -> float | None:
        """Sleep to the wall-clock time ``target`` and return it (re-aligned to a boundary when
        the clock steps back); None when asked to quit."""
        while True:
            now = time.time()
            if now >= target:
                return target
            if now < last - self.interval:  # clock stepped back
                target = next_boundary(now, self.interval)
            if run.wake.acquire(timeout=min(target - now, self.interval)) or run.quitting:
                return None

    def _finish(self, w: Worker, run: _Run, t: Tick, batch: list[Runner]) -> bool:
        """Run the batch under the watchdog's alarm and emit the tick's frame; False when the
        watchdog retired this ticker (it finishes the tick on a fresh one)."""
        alarm = self._alarm
        assert alarm is not None
        w.tick = t
        if batch:
            first = t.start + min(self._bound(r.collector) for r in batch)
            alarm.arm(max(first, time.monotonic() + RESUME_GRACE))
            if not w.run_batch(batch):
                return False
            alarm.arm(None)
        run.emit(self._frame(t))
        return True

    def _watch(self, run: _Run) -> None:
        """The watchdog: woken by the alarm, it retires a ticker whose collector overran its
        bound and starts a fresh one that finishes the tick without it."""
        alarm = self._alarm
        assert alarm is not None
        while True:
            alarm.wait()
            if run.quitting:
                return
            w = self._ticker
            if w is None:
                continue
            r, t = w.current, w.tick
            if r is None or t is None:
                continue  # the batch ended as the alarm fired
            due = t.start + self._bound(r.collector)
            if time.monotonic() < due:  # a slower collector with a longer bound
                alarm.arm(due)
                continue
            left = w.retire(r)
            if left is None:
                continue  # it returned meanwhile
            self._retire(w)
            self._ticker = Worker("sgmon-tick", partial(self._tick_loop, run=run, resume=(t, left)))

    def close(self) -> None:
        """Close the collectors, each on the thread that opened it, and end the workers."""
        for r in self._runners:
            if r.own is not None:
                r.own.close([r])
        self._shared.close([r for r in self._runners if r.own is None])
        for w in self._retired:
            w.close([])
        if self._alarm is not None:
            self._alarm.close()
            self._alarm = None

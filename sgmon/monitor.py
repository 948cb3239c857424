"""Runs sources, judges their frames once and fans them out to sinks, with a bounded history.

One thread per source (a slow remote host never holds up the local one); frames go through one
queue to one dispatcher thread, so sinks are called in order, one frame at a time, and need no
locks of their own.  A sink that raises is disabled with a one-line message on stderr; the other
sinks and the collection go on.  A sink that cannot go on (``SinkFailed``), or one marked
``essential`` (the recorder's archive: without it a recording records nothing) that raises, ends
the run instead, with one line saying why; ``failed`` holds it for the command's exit code.
"""

from __future__ import annotations

import bisect
import contextlib
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from sgmon.errors import SinkFailed
from sgmon.hosts import HostInfo, Source
from sgmon.judgement import Judge
from sgmon.model import Frame, Schema, Value
from sgmon.verdicts import Judgement

Sink = Callable[[Frame, Judgement], None]
"""Called with each frame and the Judge's verdict on it; a sink reads both and grades nothing."""


def frame_at(frames: Sequence[Frame], time: float) -> Frame | None:
    """The newest of these time-ordered frames at or before ``time``."""
    i = bisect.bisect_right(frames, time + 1e-6, key=lambda f: f.time)
    return frames[i - 1] if i else None


DRAIN_S = 60.0
"""How long a stop waits for the sinks to write what is queued (10,000 frames at most: a few
seconds for hundreds of hosts) before it drops the rest, saying how many."""
PACK_BEHIND = 2
"""Frames of a host newer than the one packed when a frame is added."""


class History:
    """The last ``size`` frames of each host, for the screen, the cursor and the analysis."""

    def __init__(self, size: int = 900) -> None:
        self.size = size
        self._frames: dict[str, deque[Frame]] = {}
        self._lock = threading.Lock()

    def add(self, frame: Frame) -> None:
        """Append one frame (frames of a host arrive in time order), and pack the rows of the
        one ``PACK_BEHIND`` frames older (``Frame.pack``): the newest frames are the ones read
        most, by the analysis and every panel; older ones only by sparklines and the cursor."""
        with self._lock:
            frames = self._frames.setdefault(frame.host, deque(maxlen=self.size))
            frames.append(frame)
            if len(frames) > PACK_BEHIND:
                frames[-1 - PACK_BEHIND].pack()

    def hosts(self) -> list[str]:
        """Hosts seen so far."""
        with self._lock:
            return list(self._frames)

    def frames(self, host: str) -> list[Frame]:
        """A copy of the host's frames, oldest first."""
        with self._lock:
            return list(self._frames.get(host, ()))

    def latest(self, host: str) -> Frame | None:
        """The host's newest frame."""
        with self._lock:
            d = self._frames.get(host)
            return d[-1] if d else None

    def at(self, host: str, time: float) -> Frame | None:
        """The host's newest frame at or before ``time`` (the dashboard's shared cursor)."""
        return frame_at(self.frames(host), time)

    def series(
        self, host: str, collector: str, instance: str, field: str, n: int | None = None
    ) -> list[tuple[float, Value]]:
        """``(time, value)`` of one series over the last ``n`` frames (all when None)."""
        frames = self.frames(host)
        if n is not None:
            frames = frames[-n:]
        return [(f.time, f.value(collector, instance, field)) for f in frames]


class Monitor:
    """Sources in, frames out to sinks and history."""

    def __init__(
        self,
        sources: Iterable[Source],
        sinks: Iterable[Sink] = (),
        history: int = 900,
        judge: Judge | None = None,
    ) -> None:
        self.sources = list(sources)
        self.sinks: list[Sink] = list(sinks)
        self.judge = judge or Judge(schema_of=self.schema, analysis=False)
        """Judges every frame once, before any sink sees it (grades only, unless given one
        that runs the analysis)."""
        self.history = History(history)
        self._queue: queue.Queue[Frame | None] = queue.Queue(maxsize=10_000)
        self._stop = threading.Event()
        self._abandon = threading.Event()
        """Set when the sinks could not take the queue in time at a stop: the dispatcher ends."""
        self._threads: list[threading.Thread] = []
        self._running = 0
        self._lock = threading.Lock()
        self.finished = threading.Event()
        """Set when every source has ended (a recording played out, a duration passed), or an
        essential sink failed."""
        self.failed: str | None = None
        """Why an essential sink ended the run (None while none did)."""

    @property
    def hosts(self) -> list[HostInfo]:
        """Every host of every source."""
        return [h for s in self.sources for h in s.hosts]

    def schema(self, host: str) -> Schema:
        """Declared fields of the host's collectors."""
        for s in self.sources:
            if any(h.name == host for h in s.hosts):
                return s.schema(host)
        raise KeyError(host)

    def start(self) -> None:
        """Start one thread per source and the dispatcher."""
        self._running = len(self.sources)
        if not self.sources:
            self.finished.set()
        d = threading.Thread(target=self._dispatch, name="sgmon-dispatch", daemon=True)
        d.start()
        self._threads.append(d)
        for s in self.sources:
            t = threading.Thread(
                target=self._run_source,
                args=(s,),
                daemon=True,
                name=f"sgmon-src-{s.hosts[0].name if s.hosts else '?'}",
            )
            t.start()
            self._threads.append(t)

    def _run_source(self, source: Source) -> None:
        try:
            source.run(self._queue.put, self._stop)
        except Exception as e:  # one source failing never stops the others
            names = ",".join(h.name for h in source.hosts)
            print(f"sgmon: source {names} stopped: {e}", file=sys.stderr)
        finally:
            with self._lock:
                self._running -= 1
                if self._running <= 0:
                    self._queue.put(None)

    def _dispatch(self) -> None:
        while not self._abandon.is_set():
            frame = self._queue.get()
            if frame is None:
                self.finished.set()
                if self._stop.is_set() or self._running <= 0:
                    return
                continue
            self.history.add(frame)
            judgement = self.judge(frame)
            for sink in list(self.sinks):
                try:
                    sink(frame, judgement)
                except Exception as e:
                    self.sinks.remove(sink)
                    name = getattr(sink, "__name__", type(sink).__name__)
                    if isinstance(e, SinkFailed) or getattr(sink, "essential", False):
                        self._fail(e if isinstance(e, SinkFailed) else f"output {name}: {e}")
                    else:
                        print(f"sgmon: output {name} disabled: {e}", file=sys.stderr)

    def _fail(self, why: object) -> None:
        """An essential sink cannot go on: say so once and end the run."""
        if self.failed is None:
            self.failed = str(why)
            print(f"sgmon: {why}", file=sys.stderr, flush=True)
        self._stop.set()
        self.finished.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every source has ended (or the timeout); True if they ended."""
        return self.finished.wait(timeout)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the sources, drain the queue to the sinks, close the sources.  A source still
        finishing a tick hands its frame over while the queue drains (``DRAIN_S`` for both);
        only then does the dispatcher end, so nothing queued behind its end is lost unsaid.
        The dispatcher has ended when this returns, so the caller may close the sinks: frames
        still queued after ``DRAIN_S`` are dropped, and said.  ``timeout``: the least the
        drain is given."""
        self._stop.set()
        deadline = time.monotonic() + max(timeout, DRAIN_S)
        for t in self._threads[1:]:
            t.join(max(0.0, deadline - time.monotonic()))
        with contextlib.suppress(queue.Full):  # full: the dispatcher is abandoned below
            self._queue.put(None, timeout=max(0.0, deadline - time.monotonic()))
        if self._threads:
            dispatcher = self._threads[0]
            dispatcher.join(max(0.0, deadline - time.monotonic()))
            if dispatcher.is_alive():
                self._abandon.set()
                with contextlib.suppress(queue.Full):  # wakes it if it drained all meanwhile
                    self._queue.put_nowait(None)
                dispatcher.join()  # ends after the frame in hand
                print(
                    f"sgmon: {self._unwritten()} frames not written: the outputs did not "
                    f"keep up within {DRAIN_S:g}s of the stop",
                    file=sys.stderr,
                )
        self._close_sources()

    def _unwritten(self) -> int:
        """The frames left in the queue (taken out: nothing will write them)."""
        left = 0
        with contextlib.suppress(queue.Empty):
            while True:
                left += self._queue.get_nowait() is not None
        return left

    def _close_sources(self) -> None:
        for s in self.sources:
            try:
                s.close()
            except Exception as e:
                print(f"sgmon: closing a source: {e}", file=sys.stderr)

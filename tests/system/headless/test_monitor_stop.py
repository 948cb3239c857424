"""Stopping a Monitor whose sinks cannot keep up: the sinks are closed only once nothing calls
them any more (in-process, with real threads and a sink that takes time)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kits.listsource import ListSource, frame

from sgmon.model import Frame
from sgmon.monitor import Monitor


def test_stop_returns_only_when_no_sink_runs_any_more(monkeypatch, capsys) -> None:
    """300 sources whose frames a slow sink cannot keep up with: the sinks were closed while
    the dispatcher still wrote (a closed directory, "dictionary changed size during iteration"
    in the archive's meta at 200-300 hosts).  Now stop() drains what it can within DRAIN_S,
    drops the rest saying how many, and no sink is called once it returned."""
    import time

    from sgmon import monitor

    monkeypatch.setattr(monitor, "DRAIN_S", 0.5, raising=False)
    sources = [ListSource(f"h{i}", [frame(f"h{i}", t, t) for t in range(1, 4)]) for i in range(300)]
    calls: list[float] = []

    def slow(f: Frame, _) -> None:
        time.sleep(0.002)
        calls.append(time.monotonic())

    mon = Monitor(sources, sinks=[slow])
    mon.start()
    mon.wait(0.2)  # frames queued faster than the sink takes them
    mon.stop(timeout=0.2)
    stopped = time.monotonic()
    seen = len(calls)
    time.sleep(0.1)
    assert len(calls) == seen and all(t <= stopped for t in calls)
    assert 0 < seen < 900
    said = capsys.readouterr().err
    assert "frames not written: the outputs did not keep up within 0.5s of the stop" in said
    assert all(s.closed for s in sources)


class LateSource(ListSource):
    """A source whose last frame, collected before the stop, is emitted ``late`` seconds after
    it: a tick that was under way (its collectors slow on a loaded machine of 300 hosts)."""

    def __init__(self, host: str, frames: list[Frame], late: float) -> None:
        super().__init__(host, frames)
        self.late = late

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        *first, last = self._frames
        for f in first:
            emit(f)
        stop.wait()
        time.sleep(self.late)
        emit(last)


def test_a_frame_a_source_finishes_after_the_stop_is_written(capsys) -> None:
    """A source still finishing a tick when the stop comes (later than the stop's wait for the
    sources) had its frame queued behind the dispatcher's end: lost without a word.  Now the
    sources get the drain time to hand over what they hold, and all of it is written."""
    sources = [LateSource(f"h{i}", [frame(f"h{i}", t, t) for t in (1, 2)], 0.8) for i in range(3)]
    seen: list[tuple[str, float]] = []
    mon = Monitor(sources, sinks=[lambda f, _: seen.append((f.host, f.time))])
    mon.start()
    time.sleep(0.2)
    mon.stop(timeout=0.3)
    assert sorted(seen) == [(f"h{i}", t) for i in range(3) for t in (1, 2)]
    assert "not written" not in capsys.readouterr().err

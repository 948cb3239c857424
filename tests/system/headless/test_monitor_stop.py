"""Stopping a Monitor whose sinks cannot keep up: the sinks are closed only once nothing calls
them any more (in-process, with real threads and a sink that takes time)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sgmon.hosts import HostInfo
from sgmon.model import CollectorResult, Frame, Status
from sgmon.monitor import Monitor


def frame(host: str, t: float, v: float) -> Frame:
    rows = {"all": {"x": v}}
    return Frame(host, t, int(t), 1.0, {"c": CollectorResult(Status.OK, rows)})


class ListSource:
    """A source that plays a fixed list of frames and ends."""

    def __init__(self, host: str, frames: list[Frame]) -> None:
        self.hosts = [HostInfo(host, "")]
        self.interval = 1.0
        self._frames = frames
        self.closed = False

    def schema(self, host: str) -> dict:
        return {}

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        for f in self._frames:
            if stop.is_set():
                return
            emit(f)

    def close(self) -> None:
        self.closed = True


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

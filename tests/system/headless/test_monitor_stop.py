"""Stopping a Monitor whose sinks cannot keep up: the sinks are closed only once nothing calls
them any more (in-process, with real threads and a sink that takes time)."""

from __future__ import annotations

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

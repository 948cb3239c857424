"""The engine: bounded collectors, stale marking, wall-clock ticks, priming, intervals."""

from __future__ import annotations

import time

import pytest
from kits.core_engine import Blocking, Counter, Second

from sgmon.collector import Collector, Unavailable
from sgmon.engine import Engine, check_interval, next_boundary
from sgmon.engine.alarm import Alarm
from sgmon.model import Field, Kind, Rows, Status


class NoKernel(Collector):
    """Cannot run here."""

    name = "nokernel"
    fields = (Field("v", "", Kind.GAUGE, "value"),)

    def open(self) -> None:
        raise Unavailable("needs /proc/nothing (kernel >= 9.9)")

    def sample(self) -> Rows:
        raise AssertionError("never sampled")


class Broken(Collector):
    """Raises every time."""

    name = "broken"
    fields = (Field("v", "", Kind.GAUGE, "value"),)

    def sample(self) -> Rows:
        raise OSError("device went away")


def test_slow_collector_is_stale_others_ok_and_tick_is_bounded(engines) -> None:
    slow, fast = Blocking(), Counter()
    e = engines(slow, fast)
    t0 = time.monotonic()
    frame = e.tick()
    took = time.monotonic() - t0
    assert frame.collectors["blocking"].status is Status.STALE
    assert "no answer" in (frame.collectors["blocking"].error or "")
    assert frame.collectors["blocking"].rows == {}
    assert frame.collectors["counter"].status is Status.OK
    # the tick waited for the slow one's bound (0.2 s), not for the 10 s it would block
    assert took < 5.0


def test_hung_collector_is_not_woken_again_while_busy(engines) -> None:
    slow = Blocking()
    e = engines(slow, Counter())
    for _ in range(3):
        assert e.tick().collectors["blocking"].status is Status.STALE
    assert slow.calls == 1
    slow.release.set()
    deadline = time.monotonic() + 5
    while slow.calls == 1 and time.monotonic() < deadline:
        f = e.tick()
        if f.collectors["blocking"].status is Status.OK:
            break
    # once it returned it is asked again, and answers
    assert slow.calls == 2
    assert f.collectors["blocking"].status is Status.OK
    assert f.value("blocking", "x", "v") == 1


def test_unavailable_in_open_is_reported_with_reason_and_not_retried(engines) -> None:
    e = engines(NoKernel(), Counter(), Broken())
    for _ in range(2):
        f = e.tick()
        res = f.collectors["nokernel"]
        assert res.status is Status.UNAVAILABLE
        assert res.error == "needs /proc/nothing (kernel >= 9.9)"
        assert f.collectors["broken"].status is Status.ERROR
        assert f.collectors["broken"].error == "OSError: device went away"
        assert f.collectors["counter"].status is Status.OK


@pytest.mark.parametrize("bad", [0.05, 0.0, -1.0, 61.0, float("nan"), float("inf")])
def test_interval_out_of_range_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=r"use 0\.1s to 60s"):
        check_interval(bad)
    with pytest.raises(ValueError):
        Engine([], bad)


@pytest.mark.parametrize("ok", [0.1, 1.0, 60.0])
def test_interval_in_range(ok: float) -> None:
    assert check_interval(ok) == ok


def test_next_boundary() -> None:
    assert next_boundary(100.0, 1.0) == 101.0
    assert next_boundary(100.4, 1.0) == 101.0
    assert next_boundary(100.05, 0.1) == pytest.approx(100.1)
    assert next_boundary(119.0, 60.0) == 120.0


def test_a_hung_collector_on_the_shared_worker_costs_the_others_nothing(engines) -> None:
    """Collectors share one worker thread; one that hangs is left behind on it and the ones
    queued after it still answer in the same tick and every tick after, until it returns."""

    first, hung, second = Counter(), Blocking(), Second()
    e = engines(first, hung, second)
    for _ in range(3):
        frame = e.tick()
        assert frame.collectors["blocking"].status is Status.STALE
        assert frame.collectors["counter"].status is Status.OK
        assert frame.collectors["second"].status is Status.OK
    hung.release.set()
    deadline = time.monotonic() + 5
    while e.tick().collectors["blocking"].status is not Status.OK:
        assert time.monotonic() < deadline, "the released collector never came back"


def test_an_alarm_that_cannot_be_armed_says_so() -> None:
    """The watchdog's timer failing to arm is an error, not a run without a watchdog."""
    alarm = Alarm()
    alarm.arm(time.monotonic() + 60)
    alarm.arm(None)
    alarm.close()
    with pytest.raises(OSError, match="timerfd_settime"):
        alarm.arm(time.monotonic() + 60)


class Keeper(Collector):
    """Returns the same row object for an instance whose counter did not move, as disk, netdev
    and procs do; counts its derive() calls."""

    name = "keeper"
    fields = (Field("n", "/s", Kind.RATE, "count"),)

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict] = {}
        self.derived: list[set[str]] = []

    def set(self, **counts: int) -> dict[str, dict]:
        for k, n in counts.items():
            if self.rows.get(k, {}).get("n") != n:
                self.rows[k] = {"n": n}
        return dict(self.rows)

    def derive(self, prev, cur, dt):
        self.derived.append(set(cur))
        return super().derive(prev, cur, dt)


def test_kept_rows_are_derived_once_and_their_figures_copied() -> None:
    """``derive_moved``: an instance whose raw row is the previous sample's object gets its idle
    figures, derived once (the row against itself) and copied after; moved ones derive as ever."""
    from sgmon.collector import derive_moved

    c, idle = Keeper(), {}
    first = c.set(a=10, b=5)
    assert derive_moved(c, None, first, 0.0, idle) == {"a": {"n": None}, "b": {"n": None}}
    second = c.set(a=20, b=5)  # b kept
    out = derive_moved(c, first, second, 2.0, idle)
    assert out == {"a": {"n": 5.0}, "b": {"n": 0.0}} and list(out) == ["a", "b"]
    out["b"]["n"] = -1.0  # a frame's row is the caller's: the memory is not shared with it
    c.derived.clear()
    third = c.set(a=30, b=5)
    assert derive_moved(c, second, third, 1.0, idle) == {"a": {"n": 10.0}, "b": {"n": 0.0}}
    assert c.derived == [{"a"}]  # b's figures were copied, not derived again
    fourth = c.set(a=30, b=9)  # now a is kept, b moves
    assert derive_moved(c, third, fourth, 1.0, idle) == {"a": {"n": 0.0}, "b": {"n": 4.0}}
    assert set(idle) == {"a"}  # b's memory went when b moved
    assert derive_moved(c, fourth, fourth, 0.0, idle) == {"a": {"n": None}, "b": {"n": None}}

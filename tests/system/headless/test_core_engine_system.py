"""The engine: bounded collectors, stale marking, wall-clock ticks, priming, intervals."""

from __future__ import annotations

import threading
import time

import pytest
from kits.core_engine import Blocking, Counter, Second, _run_in_thread

from sgmon.engine import next_boundary
from sgmon.model import Frame, Status


def test_first_tick_primes_rates(engines) -> None:
    c = Counter()
    e = engines(c)
    first = e.tick()
    assert first.value("counter", "x", "n") is None  # no previous sample: unknown, not 0
    assert first.value("counter", "x", "level") == 7
    time.sleep(0.05)
    second = e.tick()
    rate = second.value("counter", "x", "n")
    assert isinstance(rate, float) and rate > 0
    assert second.seq == first.seq + 1


def test_real_os_collectors_make_a_frame_that_round_trips(engines) -> None:
    from collectors.cpu import CpuCollector
    from collectors.disk import DiskCollector
    from collectors.paging import PagingCollector

    e = engines(CpuCollector(), PagingCollector(), DiskCollector(), interval=0.1)
    e.tick()
    time.sleep(0.1)
    frame = e.tick()
    assert {n: r.status for n, r in frame.collectors.items()} == dict.fromkeys(
        ("cpu", "paging", "disk"), Status.OK
    )
    assert Frame.from_json(frame.to_json()) == frame
    declared = {name: {f.name for f in fields} for name, fields in e.schema().items()}
    for name, res in frame.collectors.items():
        for row in res.rows.values():
            assert set(row) <= declared[name], (name, set(row) - declared[name])


def test_run_stops_when_asked(engines) -> None:
    e = engines(Counter(), interval=0.1)
    stop = threading.Event()
    frames: list[Frame] = []

    def emit(f: Frame) -> None:
        frames.append(f)
        if len(frames) == 2:
            stop.set()

    t = _run_in_thread(e, emit, stop)
    t.join(10)
    assert not t.is_alive()
    assert len(frames) == 2


def test_stop_while_a_collector_hangs_returns_and_nothing_is_emitted_after(engines) -> None:
    """A stop must not wait for a hung read, and the retired ticker holding it must not emit
    when the read returns: a recorder has closed its files by then."""
    hung = Blocking(free=1)  # the primer answers
    e = engines(Counter(), hung, interval=0.2)
    stop = threading.Event()
    frames: list[Frame] = []

    def emit(f: Frame) -> None:
        frames.append(f)
        if f.collectors["blocking"].status is Status.STALE:
            stop.set()

    runner = _run_in_thread(e, emit, stop)
    runner.join(10)
    assert not runner.is_alive(), "run() did not return while a collector hung"
    n = len(frames)
    hung.release.set()  # the hung sample returns on the retired ticker
    time.sleep(0.6)
    assert len(frames) == n, "a frame was emitted after run() returned"


def test_run_ticks_on_wall_clock_multiples_and_skips_the_primer(engines) -> None:
    interval = 0.2
    e = engines(Counter(), interval=interval)
    frames: list[Frame] = []
    emitted_at: list[float] = []

    def emit(f: Frame) -> None:
        frames.append(f)
        emitted_at.append(time.time())

    e.run(emit, threading.Event(), duration=1.0)
    assert 3 <= len(frames) <= 7
    for f, at in zip(frames, emitted_at, strict=True):
        k = f.time / interval
        assert abs(k - round(k)) < 1e-6, f"tick at {f.time} is not a multiple of {interval}"
        assert at >= f.time
        assert f.collectors["counter"].status is Status.OK
        assert f.value("counter", "x", "n") is not None  # primed: every emitted frame has rates
    times = [f.time for f in frames]
    assert times == sorted(set(times))


def test_run_keeps_ticking_past_a_hung_collector_and_takes_it_back(engines) -> None:
    """run() collects on its ticker thread: a collector that hangs there is reported stale at
    its bound, the ones queued after it answer in the same frame, the frames go on, and the
    collector is asked again once it returns."""

    hung = Blocking(free=1)  # the primer answers; the ticks after it hang
    e = engines(Counter(), hung, Second(), interval=0.5)
    stop = threading.Event()
    frames: list[Frame] = []

    def emit(f: Frame) -> None:
        frames.append(f)
        if len(frames) == 4:
            hung.release.set()
        if len(frames) >= 4 and f.collectors["blocking"].status is Status.OK:
            stop.set()

    runner = _run_in_thread(e, emit, stop)
    runner.join(15)
    assert not runner.is_alive(), "run() did not end"
    assert len(frames) >= 4
    stale = [f for f in frames[:4] if f.collectors["blocking"].status is Status.STALE]
    assert stale, [f.collectors["blocking"].status for f in frames]
    for f in stale:
        assert f.collectors["counter"].status is Status.OK
        assert f.collectors["second"].status is Status.OK  # queued after the hung one
    assert [f.seq for f in frames] == sorted({f.seq for f in frames})
    assert frames[-1].collectors["blocking"].status is Status.OK
    assert hung.calls <= len(frames) + 1  # not asked again while it hung


def test_an_emit_that_raises_ends_run_with_its_error(engines) -> None:
    """Frames are emitted on the ticker's thread; a sink that fails (a closed pipe) must still
    end run() in the caller, with its error, not leave it waiting."""
    e = engines(Counter(), interval=0.1)
    raised: list[BaseException] = []

    def emit(f: Frame) -> None:
        raise BrokenPipeError("reader went away")

    def run() -> None:
        try:
            e.run(emit, threading.Event())
        except BaseException as err:
            raised.append(err)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(15)
    assert not t.is_alive(), "run() went on after emit raised"
    assert len(raised) == 1 and isinstance(raised[0], BrokenPipeError)
    assert str(raised[0]) == "reader went away"


def test_a_screen_gets_its_first_rates_soon_then_boundaries(engines) -> None:
    """``first_after``: one frame that long after the priming sample (with its rates), then the
    interval's wall-clock boundaries as usual; at a 30 s interval the first boundary is seconds
    away, so the one frame within 5 s can only be the early one.  Here, not in the unit tier: it
    waits on the wall clock (for the boundary to pass, once in fifteen runs, and for the frame)."""
    e = engines(Counter(), interval=30.0)
    e.first_after = 0.2
    if next_boundary(time.time(), 30.0) - time.time() < 2.0:
        time.sleep(2.0)  # a boundary about to come would be the first frame anyway
    stop, frames = threading.Event(), []
    t = _run_in_thread(e, lambda f: (frames.append(f), stop.set()), stop)
    t.join(5)
    assert not t.is_alive() and len(frames) == 1
    first = frames[0]
    assert first.time % 30.0 != 0.0  # off the grid: not the boundary
    assert first.value("counter", "x", "n") == pytest.approx(10 / 0.2, rel=0.3)

"""The engine: bounded collectors, stale marking, wall-clock ticks, priming, intervals."""

from __future__ import annotations

import threading
import time

from kits.core_engine import Blocking, Counter, _run_in_thread

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

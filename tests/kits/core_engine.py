"""What the unit and the system tests of core engine share."""

from __future__ import annotations

import threading

import pytest

from sgmon.collector import Collector
from sgmon.engine import Engine
from sgmon.model import Field, Kind, Rows


class Counter(Collector):
    """A counter that grows by 10 per sample: its rate is known from the second sample on."""

    name = "counter"
    fields = (Field("n", "/s", Kind.RATE, "samples"), Field("level", "", Kind.GAUGE, "level"))

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def sample(self) -> Rows:
        self.n += 10
        return {"x": {"n": self.n, "level": 7}}


class Blocking(Collector):
    """Blocks in sample() until released, after its first ``free`` samples (run()'s primer);
    counts how often it was woken."""

    name = "blocking"
    fields = (Field("v", "", Kind.GAUGE, "value"),)
    timeout = 0.2

    def __init__(self, free: int = 0) -> None:
        super().__init__()
        self.release = threading.Event()
        self.calls = 0
        self.free = free

    def sample(self) -> Rows:
        self.calls += 1
        if self.calls > self.free:
            self.release.wait(10)  # bounded even if the test forgets to release
        return {"x": {"v": 1}}


@pytest.fixture
def engines():
    made: list[tuple[Engine, list[Blocking]]] = []

    def make(*collectors: Collector, interval: float = 1.0) -> Engine:
        e = Engine(collectors, interval)
        made.append((e, [c for c in collectors if isinstance(c, Blocking)]))
        return e

    yield make
    for e, blockers in made:
        for b in blockers:
            b.release.set()
        e.close()


def _run_in_thread(e: Engine, emit, stop: threading.Event) -> threading.Thread:
    t = threading.Thread(target=e.run, args=(emit, stop), daemon=True)
    t.start()
    return t


class Second(Counter):
    """A second counter, queued after the others."""

    name = "second"

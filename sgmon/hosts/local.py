"""The local host: the engine over this machine's collectors."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from sgmon.collector import Collector
from sgmon.engine import Engine
from sgmon.hosts import HostInfo
from sgmon.model import Frame, Schema

FIRST_RATES_S = 0.2
"""The span of a screen's first rates: enough for counters to move, short enough to feel
instant (top, htop and glances show their first figures after a fraction of a second)."""


class LocalSource:
    """Samples this machine with the given collectors on wall-clock ticks."""

    def __init__(
        self,
        collectors: Iterable[Collector],
        interval: float = 1.0,
        name: str = "local",
        role: str = "",
        duration: float | None = None,
    ) -> None:
        self.engine = Engine(collectors, interval, host=name, role=role)
        self.hosts = [HostInfo(name, role)]
        self.duration = duration

    @property
    def interval(self) -> float:
        """Seconds between ticks."""
        return self.engine.interval

    def set_interval(self, seconds: float) -> None:
        """Tick at a new interval from the next tick on (the dashboard's +/- keys)."""
        self.engine.set_interval(seconds)

    def schema(self, host: str) -> Schema:
        """Declared fields of the local collectors."""
        return self.engine.schema()

    def show_soon(self) -> None:
        """For a screen: the first frame 0.2 s after the priming sample, not a second later."""
        self.engine.first_after = FIRST_RATES_S

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Tick until stopped or the duration has passed."""
        self.engine.run(emit, stop, self.duration)

    def close(self) -> None:
        """Stop the collector threads."""
        self.engine.close()

"""The simulated pair as a Source: hosts "primary" and "standby" (and a scenario's further
standbys), ``speed`` times real time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sgmon.engine import check_interval
from sgmon.hosts import HostInfo
from sgmon.model import Frame, Schema
from sgmon.sim import DEFAULT_ONSET, SimPair


class SimSource:
    """Frames of a ``SimPair`` paced on the wall clock (``speed`` > 1 runs faster).

    ``duration`` is in simulated seconds (None: until stopped).  Frames carry simulated time,
    which starts at the wall-clock time the source was made.
    """

    def __init__(
        self,
        scenario: str,
        seed: int = 0,
        interval: float = 1.0,
        speed: float = 1.0,
        duration: float | None = None,
        onset: float = DEFAULT_ONSET,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed {speed:g}: use a positive factor such as 1, 10 or 0.5")
        self.pair = SimPair(scenario, seed=seed, interval=interval, onset=onset)
        self.interval = self.pair.interval
        self.speed = speed
        self.duration = duration
        self._soon = False
        self.hosts = [HostInfo(name, role) for name, role in self.pair.hosts]

    def schema(self, host: str) -> Schema:
        """Declared fields of the simulated host."""
        return self.pair.schema(host)

    def set_interval(self, seconds: float) -> None:
        """Sample the simulation every ``seconds`` of simulated time (the dashboard's +/-)."""
        self.pair.interval = self.interval = check_interval(seconds)

    def show_soon(self) -> None:
        """For a screen: the first frames at once (the pair primes itself, rates included)."""
        self._soon = True

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Emit every host's frame each (scaled) interval until stopped or the duration ends."""
        next_at = time.monotonic() + (0.0 if self._soon else self.interval / self.speed)
        while not stop.is_set():
            if self.duration is not None and self.pair.t >= self.duration - 1e-9:
                return
            if stop.wait(max(0.0, next_at - time.monotonic())):
                return
            pace = self.interval / self.speed
            next_at = max(next_at + pace, time.monotonic() - pace)
            for frame in self.pair.step():
                emit(frame)

    def close(self) -> None:
        """Release the stand-ins."""
        self.pair.close()

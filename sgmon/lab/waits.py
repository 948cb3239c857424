"""The lab's wait events, measured for real and published into the V$ stand-in.

Each lab process times its waits (``log file sync`` in the sessions, ``log file parallel write``
and ``SYNC Remote Write`` in the log writer, ``RFS write`` on the standby) and a publisher thread
accumulates them every ``period`` into the stand-in's cumulative V$SYSTEM_EVENT and histogram
tables, so the real ``oracle_*`` collectors read them with their exact SQL.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from sgmon.sim.standin import StandIn


class WaitRecorder:
    """Thread-safe collection of waits (us) and cumulative statistics, published periodically."""

    def __init__(self, standin: StandIn, stop: threading.Event, period: float = 0.25) -> None:
        self.standin = standin
        self.stop = stop
        self.period = period
        self._lock = threading.Lock()
        self._pending: dict[str, list[float]] = defaultdict(list)
        self._stats: dict[str, float] = defaultdict(float)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, events: tuple[str, ...]) -> None:
        """Publish the events at zero (so they exist from the first tick), then keep publishing."""
        for e in events:
            self.standin.add_waits(e, [])
        self._thread.start()

    def wait(self, event: str, us: float) -> None:
        """Count one wait of ``us`` microseconds."""
        with self._lock:
            self._pending[event].append(us)

    def add(self, stat: str, value: float) -> None:
        """Add to a cumulative V$SYSSTAT statistic."""
        with self._lock:
            self._stats[stat] += value

    def publish(self) -> None:
        """Move what was measured since the last call into the stand-in."""
        with self._lock:
            pending, self._pending = self._pending, defaultdict(list)
            stats = dict(self._stats)
        for event, durations in pending.items():
            self.standin.add_waits(event, durations)
        if stats:
            self.standin.publish_stats(stats)

    def _run(self) -> None:
        while not self.stop.wait(self.period):
            self.publish()
        self.publish()

"""The stand-in's wait events and statistics: V$SYSTEM_EVENT and its histograms, V$SYSSTAT,
V$OSSTAT, cumulative as Oracle's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sgmon import buckets
from sgmon.sim.standin.histograms import Buckets
from sgmon.sim.standin.views import USEC_STATS, Tables


class Waits(Tables):
    """Publishing waits and statistics (``StandIn``'s)."""

    _buckets: dict[str, Buckets]
    """Each event's waits added by ``add_waits`` (cleared by a restart)."""

    def publish_event(
        self,
        name: str,
        waits: int,
        time_us: float,
        micro: Sequence[tuple[int, int]] | None = None,
        milli: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """Set one event's cumulative totals and buckets (bucket bound, cumulative count).

        ``milli`` defaults to ``micro`` regrouped as Oracle names the buckets (1024 us is "1
        millisecond", everything below it falls in the 1 ms bucket; ``sgmon.buckets``).
        """
        if milli is None and micro is not None:
            regroup: dict[int, int] = {}
            for bound, count in micro:
                m = max(1, round(buckets.nominal(bound / 1000.0) or 1))
                regroup[m] = regroup.get(m, 0) + count
            milli = sorted(regroup.items())
        with self._lock:
            self._upsert(
                "v$system_event",
                [
                    {
                        "event": name,
                        "total_waits": waits,
                        "total_timeouts": 0,
                        "time_waited": int(time_us // 10000),
                        "average_wait": round(time_us / 10000 / waits, 2) if waits else 0,
                        "time_waited_micro": int(time_us),
                        "wait_class": "Other",
                    }
                ],
            )
            if milli:
                self._upsert(
                    "v$event_histogram",
                    ({"event": name, "wait_time_milli": b, "wait_count": c} for b, c in milli),
                )
            if micro and self.columns("v$event_histogram_micro"):
                self._upsert(
                    "v$event_histogram_micro",
                    ({"event": name, "wait_time_micro": b, "wait_count": c} for b, c in micro),
                )

    def add_waits(self, name: str, durations_us: Iterable[float]) -> None:
        """Accumulate measured waits (microseconds) into an event and publish its counters."""
        b = self._buckets.setdefault(name, Buckets())
        b.add_all(durations_us)
        self.publish_buckets(name, b)

    def publish_buckets(self, name: str, b: Buckets) -> None:
        """Publish a ``Buckets`` accumulator as the event's cumulative counters."""
        self.publish_event(
            name, b.waits, b.time_us, sorted(b.micro.items()), sorted(b.milli.items())
        )

    def publish_stats(self, stats: Mapping[str, float]) -> None:
        """Set cumulative V$SYSSTAT values; ``(usec)`` names are dropped before 12.1."""
        with self._lock:
            self._upsert(
                "v$sysstat",
                (
                    {"name": n, "value": v}
                    for n, v in stats.items()
                    if self.version >= (12, 1) or n not in USEC_STATS
                ),
            )

    def publish_osstat(self, stats: Mapping[str, float]) -> None:
        """Set V$OSSTAT values (BUSY_TIME, IDLE_TIME ... cumulative centiseconds; LOAD)."""
        with self._lock:
            self._upsert("v$osstat", ({"stat_name": n, "value": v} for n, v in stats.items()))

"""What the exporter adds up between scrapes: a counter per rate or delta series and, per
histogram series, its counts in one fixed bucket set and the time they stand for.

Histograms use one fixed bucket set per metric, so ``histogram_quantile`` over several instances
is exact and no ``le`` series appears the first time a bucket is hit: a histogram kept in whole
seconds (``s``) gets ``SECOND_BOUNDS``, any other Oracle's 2^n us wait bounds.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.utils import floatToGoString

from sgmon import buckets as bucket_scale
from sgmon.model import Field, Kind, Value
from sgmon.rates import bucket_midpoints
from sgmon.sinks.prometheus.naming import HIST_SCALE, counted_factor

Key = tuple[str, str, str, str]
"""A series: host, collector, row (PID taken off), field."""

WAIT_BOUNDS = tuple(2.0**e / 1e6 for e in range(8, 21))
"""Oracle's 2^n us bucket bounds from 256 us to 1.05 s, in seconds: the ``le`` of every wait
histogram (shorter waits are counted in the first, longer ones in ``+Inf``)."""
SECOND_BOUNDS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""``le`` of histograms Oracle keeps in whole seconds (V$REDO_DEST_RESP_HISTOGRAM)."""


def bounds_of(f: Field) -> tuple[float, ...]:
    """The fixed ``le`` bounds (seconds) of a histogram field."""
    return SECOND_BOUNDS if f.unit == "s" else WAIT_BOUNDS


def mean_field(fields: Sequence[Field], hist: Field) -> Field | None:
    """The field holding the exact mean of ``hist``'s values in the interval: the one gauge in
    its unit that is an average per event (``combine`` ``per:``), as V$SYSTEM_EVENT's average
    wait is of the wait histogram; None where there is none, or more than one."""
    means = [
        f
        for f in fields
        if f.kind is Kind.GAUGE and f.unit == hist.unit and f.combine.startswith("per:")
    ]
    return means[0] if len(means) == 1 else None


def _exact(f: Field, bound: float) -> float:
    """A bucket's upper bound in the field's unit: the exact bound of an Oracle ms bucket."""
    if f.unit == "ms":
        return bucket_scale.exact_ms(bucket_scale.exponent(bound))
    return bound


def _slot(bounds: tuple[float, ...], upper: float | None) -> int:
    """The fixed bucket that holds a source bucket ending at ``upper`` (None: open)."""
    if upper is None:
        return len(bounds)
    return next((i for i, b in enumerate(bounds) if upper <= b * (1 + 1e-9)), len(bounds))


def cumulative(bounds: tuple[float, ...], acc: list[float]) -> list[tuple[str, float]]:
    """The ``(le, count)`` samples of fixed buckets' counts, each with those below it."""
    out = []
    running = 0.0
    for b, n in zip((*bounds, float("inf")), acc, strict=True):
        running += n
        out.append(("+Inf" if b == float("inf") else floatToGoString(b), running))
    return out


class Totals:
    """The sums since the exporter started, by series (``Key``)."""

    def __init__(self) -> None:
        self.counters: dict[Key, float] = {}
        self.buckets: dict[Key, list[float]] = {}
        self.sums: dict[Key, float] = {}
        """A histogram's ``_sum``: the time its counts stand for, in seconds."""

    def copy(self) -> Totals:
        """A copy a scrape reads while frames go on adding to this one."""
        new = Totals()
        new.counters = dict(self.counters)
        new.buckets = {k: list(v) for k, v in self.buckets.items()}
        new.sums = dict(self.sums)
        return new

    def add(self, key: Key, f: Field, value: Value, interval: float, mean: Value) -> None:
        """Add one interval's value of a rate, delta or histogram field (``mean``: the value of
        the histogram's ``mean_field`` in the same row, if any).  A series starts at 0 with the
        first row that has its field, even with no value yet (a delta's first interval, a thread
        before its first log switch), so ``increase()`` sees the first increase."""
        if f.kind is Kind.HISTOGRAM:
            self.buckets.setdefault(key, [0.0] * (len(bounds_of(f)) + 1))
            self.sums.setdefault(key, 0.0)
            if isinstance(value, list):
                self._add_histogram(key, f, value, mean)
            return
        increase = 0.0
        if f.kind is Kind.RATE and isinstance(value, int | float):
            increase = value * interval * counted_factor(f)
        elif f.kind is Kind.DELTA and isinstance(value, int | float):
            increase = float(value)
        self.counters[key] = self.counters.get(key, 0.0) + increase

    def _add_histogram(self, key: Key, f: Field, pairs: list, mean: Value) -> None:
        scale = HIST_SCALE.get(f.unit, 1.0)
        bounds = bounds_of(f)
        acc = self.buckets[key]
        total = 0.0
        mid = 0.0
        for (bound, count), m in zip(pairs, bucket_midpoints(pairs), strict=True):
            n = float(count or 0)
            acc[_slot(bounds, None if bound is None else _exact(f, float(bound)) * scale)] += n
            total += n
            mid += n * m * scale
        if isinstance(mean, int | float) and f.unit in HIST_SCALE:
            mid = mean * scale * total  # the interval's exact time waited (V$ waits)
        self.sums[key] += mid

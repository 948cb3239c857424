"""The V$ wait histograms' buckets: durations binned as V$EVENT_HISTOGRAM and
V$EVENT_HISTOGRAM_MICRO count them, cumulatively."""

from __future__ import annotations

import bisect
import functools
import math
import operator
from collections.abc import Callable, Iterable


class Buckets:
    """Cumulative power-of-two histogram of durations, as both V$ histogram views count them.

    ``add`` only keeps a wait; the waits kept are binned when the totals are read, sorted once
    and bisected (the simulation adds thousands a second and reads them once a tick).
    Bad input (a negative, NaN or infinite wait) is refused then, as a ValueError."""

    def __init__(self) -> None:
        self._waits = 0
        self._time_us = 0.0
        self._micro: dict[int, int] = {}
        self._milli: dict[int, int] = {}
        self._kept: list[float] = []
        self.add: Callable[[float], object] = self._kept.append
        """Count one wait of ``us`` microseconds (bucket b holds [b/2, b))."""
        self.add_all: Callable[[Iterable[float]], object] = self._kept.extend
        """Count waits, in order."""

    def _fold(self) -> None:
        """Bin the waits kept since the last read: summed in the order they came (the float
        total of adding them one by one), then sorted, so that a bucket's count is the distance
        between two bisections.  An accumulator is read each tick or given no waits: it keeps
        every wait until then (``sim.counters.Uncounted`` for the waits no one reads)."""
        kept = self._kept
        if not kept:
            return
        total = functools.reduce(operator.add, kept, self._time_us)
        kept.sort()
        if not math.isfinite(total) or kept[0] < 0:
            raise ValueError(f"a wait of {kept[0] if kept[0] < 0 else total} us")
        _bin(self._micro, kept, MICRO_BOUNDS)
        _bin(self._milli, kept, MILLI_BOUNDS)
        self._waits += len(kept)
        self._time_us = total
        kept.clear()  # in place: ``add`` is this list's append

    @property
    def waits(self) -> int:
        self._fold()
        return self._waits

    @property
    def time_us(self) -> float:
        self._fold()
        return self._time_us

    @property
    def micro(self) -> dict[int, int]:
        self._fold()
        return self._micro

    @property
    def milli(self) -> dict[int, int]:
        self._fold()
        return self._milli


MICRO_BOUNDS = [2.0**k for k in range(1024)] + [math.inf]
"""Where each bucket's waits begin, V$EVENT_HISTOGRAM_MICRO: bucket 2**(k+1) at 2**k us (as
``int(us)`` reaches 2**k), for every power of two a float holds; then infinity, reached by none."""
MILLI_BOUNDS = [b * 1000.0 for b in MICRO_BOUNDS if b * 1000.0 < math.inf] + [math.inf]
"""V$EVENT_HISTOGRAM: bucket 2**(k+1) at 2**k ms, where ``int(us / 1000.0)`` reaches 2**k (the
float below 1000 * 2**k us, divided, does not round up to 2**k)."""


def _bin(bins: dict[int, int], waits: list[float], bounds: list[float]) -> None:
    """Add sorted, non-negative waits (us) to their buckets, as ``1 << int(x).bit_length()``
    names them (x: the wait in the view's unit): a wait's bit length is the number of
    ``bounds`` it reaches, and each bucket's waits end where the next bound begins."""
    lo = 0
    while lo < len(waits):
        bits = bisect.bisect_right(bounds, waits[lo])  # the bucket of the least wait left
        hi = bisect.bisect_left(waits, bounds[bits], lo)
        bins[1 << bits] = bins.get(1 << bits, 0) + hi - lo
        lo = hi

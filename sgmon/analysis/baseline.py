"""A robust rolling baseline per series: median and interquartile spread over ~2 minutes.

Why median and IQR (IQR / 1.349 estimates sigma as 1.4826 x MAD does, from the same single
sort): commit latencies are spiky by nature (commit batching, log switches), so a mean and a
standard deviation would be dragged by the very outliers we want to see.  A departure must clear
three bars at once: a robust z-score (``z`` x IQR / 1.349), an absolute floor in the field's
unit (so a flat series with no spread does not alarm on noise), and a ratio to the median (so a
busy series does not alarm on a few percent).  The fit learns only from calm points: a point the
caller judged out of line (``push(..., learn=False)``) is kept for correlation and peaks but
never trains the baseline, so the baseline quoted during an incident, minutes or hours long, is
the one from before it began, and a fault never becomes its own reference.  A level that stays
out of line is taken as the new normal only when the caller says so (``adopt``).  The fit is
refreshed every ``every`` calm points, staggered by ``phase`` across series, which keeps one
tick of 200 series well under a millisecond.  Every
window is sorted, even one of a single repeated value (an error counter at 0): the sort finds
it in order in one pass of float compares, cheaper than the generic compares of counting it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import islice

MIN_POINTS = 8
"""Points needed before the baseline judges anything (8 s at the default interval: a 10 s
`sgmon check` and a lab fault after a short warm-up still get a baseline)."""


class Series:
    """The recent ticks and values of one series and their robust fit."""

    __slots__ = ("_calm", "_every", "_left", "_run", "median", "sigma", "ticks", "values")

    def __init__(self, window: int = 120, every: int = 20, phase: int = 0) -> None:
        self.ticks: deque[int] = deque(maxlen=window)
        self.values: deque[float] = deque(maxlen=window)
        """Every recent point, calm or not: what correlation and peaks read."""
        self._calm: deque[float] | None = None
        """The recent calm points, what the fit is made of; None while every point of
        ``values`` is calm (most series, most of the time: one append a point, not two)."""
        self._run = 0
        """Calm points pushed since the last point out of line."""
        self.median: float | None = None
        self.sigma = 0.0
        self._every = every
        self._left = self._due(phase % every)
        """Pushes to the next refit: a push that leaves some only adds its point."""

    def push(self, tick: int, value: float, learn: bool = True) -> bool:
        """Add this tick's value, and with ``learn`` (a calm value) train the fit with it;
        refit on schedule (or as soon as there are enough points).  True when it refit: the
        median and spread may have moved."""
        self.ticks.append(tick)
        values = self.values
        values.append(value)
        calm = self._calm
        if not learn:
            if calm is None:  # the points before this one, all calm
                self._calm = deque(islice(values, len(values) - 1), maxlen=values.maxlen)
            self._run = 0
            return False
        if calm is not None:
            calm.append(value)
            self._run += 1
            if self._run >= len(values):  # every point in the window is calm again
                self._calm = None
        self._left -= 1
        if self._left:
            return False
        fits = len(self.calm) >= MIN_POINTS
        if fits:
            self._refit()
        self._left = self._due(0)
        return fits

    def adopt(self) -> None:
        """Take the recent points, out of line as they are, as the normal the fit is made of:
        a level that has held long enough to be the new normal, said so by the caller."""
        self._calm, self._run = None, 0
        if len(self.values) >= MIN_POINTS:
            self._refit()
        self._left = self._due(0)

    @property
    def calm(self) -> deque[float]:
        """The recent calm points: what the fit is made of."""
        return self.values if self._calm is None else self._calm

    def _due(self, since: int) -> int:
        """Pushes to the next refit, ``since`` pushes after the last: ``every``, or as soon as
        there are MIN_POINTS while there is no fit yet."""
        due = self._every - since
        if self.median is None:
            due = min(due, max(1, MIN_POINTS - len(self.calm)))
        return due

    def span(self, first: int, last: int) -> list[float | None]:
        """Values for the ticks ``first..last`` (None where the series has no point)."""
        ticks, values = self.ticks, self.values
        if not ticks:
            return [None] * (last - first + 1)
        t0 = ticks[0]
        if ticks[-1] - t0 == len(ticks) - 1:  # no gaps: index arithmetic
            lo, hi = max(first, t0), min(last, ticks[-1])
            if lo > hi:
                return [None] * (last - first + 1)
            return (
                [None] * (lo - first) + list(values)[lo - t0 : hi - t0 + 1] + [None] * (last - hi)
            )
        got = dict(zip(ticks, values, strict=True))
        return [got.get(t) for t in range(first, last + 1)]

    def recent(self, n: int) -> list[float]:
        """The last ``n`` values."""
        last = list(islice(reversed(self.values), n))
        last.reverse()
        return last

    def _refit(self) -> None:
        vals = sorted(self.calm)
        n = len(vals)
        self.median = _median(vals)
        self.sigma = (vals[(3 * n) // 4] - vals[n // 4]) / 1.349

    def departs(self, value: float, floor: float, ratio: float, z: float, up: bool = True) -> bool:
        """Whether ``value`` is a sudden departure from the baseline in the bad direction."""
        med = self.median
        if med is None:
            return False
        if up:
            return value - med >= max(z * self.sigma, floor) and value >= ratio * med
        return med - value >= max(z * self.sigma, floor) and value * ratio <= med


def _median(sorted_vals: Sequence[float]) -> float:
    n = len(sorted_vals)
    mid = n // 2
    return sorted_vals[mid] if n % 2 else (sorted_vals[mid - 1] + sorted_vals[mid]) / 2

"""Cross-host correlation: which outliers on either host line up with the commit-path outlier.

Score: the **best lag-shifted Pearson correlation** between the trigger (the degraded commit-path
series on the primary) and each candidate over the last ``WINDOW`` ticks, trying every lag within
+-(clock skew / interval + 1) ticks so two hosts whose ticks land a little apart still line up.
The sign is flipped for series where lower is worse (%idle), so "worse together" is positive.
Pearson on interval values works for both shapes the seeds show: a step (seed 003: the standby's
queue fills and stays full) and sparse spikes (seed 001: a 200 ms stall each time a segment is
retransmitted), where the spike ticks of both series coincide and everything else is flat.
For point events (log switches) ``overlap`` scores the share of events the trigger answered
with a departure, which already means something after one event.
Ticks are wall-clock tick indices (``round(time / interval)``), shared by both hosts.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from operator import mul

from sgmon.analysis.baseline import Series
from sgmon.grading import RANK
from sgmon.units import fmt_num
from sgmon.verdicts import Outlier, SeriesKey

WINDOW = 40
MIN_PAIRS = 8


@dataclass(frozen=True, slots=True)
class Link:
    """One candidate cause and how well it lines up with the trigger."""

    outlier: Outlier
    r: float
    lag: int  # ticks the candidate is shifted by (positive: it lags the trigger)
    n: int = 0  # ticks the r was computed over (0: no points, e.g. a text state)

    def strength(self, interval: float) -> str:
        """How closely and over how long it moved with the trigger, in words for the evidence
        (``moved together over the last 33 s (correlation 1.00), 1 s earlier``): a correlation
        is only as good as its points, and a shift says the ticks were lined up by moving one."""
        r = f"correlation {self.r:.2f}"
        if not self.n:
            return f"moved together ({r})"
        said = f"moved together over the last {fmt_num(self.n * interval)} s ({r})"
        if self.lag:
            when = "later" if self.lag > 0 else "earlier"
            said += f", {fmt_num(abs(self.lag) * interval)} s {when}"
        return said


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Correlation coefficient, None when either side is flat or there are too few pairs."""
    n = len(xs)
    if n < MIN_PAIRS:
        return None
    sx, sy = sum(xs), sum(ys)
    sxx = sum(map(mul, xs, xs)) - sx * sx / n
    syy = sum(map(mul, ys, ys)) - sy * sy / n
    if sxx <= 1e-9 * (1 + abs(sx)) or syy <= 1e-9 * (1 + abs(sy)):
        return None
    return max(-1.0, min(1.0, (sum(map(mul, xs, ys)) - sx * sy / n) / math.sqrt(sxx * syy)))


def zscores(vals: list[float]) -> list[float] | None:
    """Values standardised over their window (None when flat), so each lag costs one dot product."""
    n = len(vals)
    mean = sum(vals) / n
    var = sum(map(mul, vals, vals)) / n - mean * mean
    if var <= 1e-12 * (1 + mean * mean):
        return None
    sd = math.sqrt(var)
    return [(v - mean) / sd for v in vals]


def best_lag(
    trigger: list[float | None],
    cand: list[float | None],
    max_lag: int,
    zx: list[float] | None = None,
) -> tuple[float, int, int] | None:
    """Highest correlation over lags -max_lag..max_lag, with the lag that gave it and the
    number of ticks it was computed over.

    ``cand`` covers ``max_lag`` more ticks than ``trigger`` on each side.  Without gaps (the
    usual case) both sides are standardised once and each lag is a dot product over the ticks
    they share (each side standardised over its whole window, so close to, not exactly, the
    Pearson of each lag); with gaps each lag is an exact Pearson over the pairs present.
    ``zx``: the trigger's z-scores, when the caller ranks many candidates against one trigger.
    """
    lags = sorted(range(-max_lag, max_lag + 1), key=abs)
    known = cand[max_lag:]  # the candidate has no future ticks yet: trim that edge
    while known and known[-1] is None:
        known.pop()
    head = cand[:max_lag]
    if (
        None not in trigger
        and None not in known
        and None not in head
        and len(known) >= len(trigger)
    ):
        return _standardised(trigger, head + known, max_lag, lags, zx)  # type: ignore[arg-type]
    return _exact(trigger, cand, max_lag, lags)


def _standardised(
    trigger: list[float], cand: list[float], max_lag: int, lags: list[int], zx: list[float] | None
) -> tuple[float, int, int] | None:
    """``best_lag`` without gaps: each side standardised once, each lag a dot product."""
    n = len(trigger)
    zx = zx or zscores(trigger)
    zy = zscores(cand)
    if zx is None or zy is None:
        return None
    best: tuple[float, int, int] | None = None
    for lag in lags:
        ys = zy[max_lag + lag : max_lag + lag + n]
        m = len(ys)
        if m < MIN_PAIRS:
            continue
        r = max(-1.0, min(1.0, sum(map(mul, zx, ys)) / m))
        if best is None or r > best[0] + 1e-9:
            best = (r, lag, m)
    return best


def _exact(
    trigger: list[float | None], cand: list[float | None], max_lag: int, lags: list[int]
) -> tuple[float, int, int] | None:
    """``best_lag`` with gaps: each lag an exact Pearson over the pairs present."""
    n = len(trigger)
    best = None
    for lag in lags:
        window = cand[max_lag + lag : max_lag + lag + n]
        pairs = [
            (x, y) for x, y in zip(trigger, window, strict=False) if x is not None and y is not None
        ]
        r = pearson([p[0] for p in pairs], [p[1] for p in pairs])
        if r is not None and (best is None or r > best[0] + 1e-9):
            best = (r, lag, len(pairs))
    return best


def overlap(
    trigger: Series, times: Iterable[float], interval: float, max_lag: int, ratio: float = 3.0
) -> float | None:
    """Event-overlap score: the share of recent events (log switches) that the trigger answered
    with a departure (``ratio`` x its median) within +-(``max_lag`` + 1) ticks.

    Used for point events, where one switch is one tick and Pearson has nothing to work on.
    """
    med = trigger.median
    if med is None or not trigger.ticks:
        return None
    end = trigger.ticks[-1]
    ticks = [k for t in times if end - WINDOW < (k := round(t / interval)) <= end]
    if not ticks:
        return None
    bar = max(ratio * med, med + 1e-9)
    hits = sum(
        any(v is not None and v >= bar for v in trigger.span(k - max_lag - 1, k + max_lag + 1))
        for k in ticks
    )
    return hits / len(ticks)


def rank(
    trigger: Series,
    candidates: Iterable[tuple[Outlier, Series | None, bool]],
    max_lag: int,
    memory: dict[SeriesKey, tuple[float, int, int]] | None = None,
) -> list[Link]:
    """Candidates ordered by how well they line up with the trigger (best first).

    ``candidates`` are (outlier, its points, higher_is_worse).  A candidate without points
    (a text state such as a destination error) gets r = 0 and sorts after the correlated ones.
    With ``memory`` (kept by the caller for one incident) a candidate keeps the best link it
    reached while it stays an outlier (its r, lag and points): a step whose start has scrolled
    out of the window still explains the level it left behind.
    """
    if not trigger.ticks:
        return []
    end = trigger.ticks[-1]
    first = end - WINDOW + 1
    trig = trigger.span(first, end)
    zx = zscores(trig) if None not in trig else None  # type: ignore[arg-type]  # once per tick
    links: list[Link] = []
    kept: dict[SeriesKey, tuple[float, int, int]] = {}
    for outlier, series, up in candidates:
        got = None
        if series is not None:
            cand = series.span(first - max_lag, end + max_lag)
            if not up:
                cand = [None if v is None else -v for v in cand]
            got = best_lag(trig, cand, max_lag, zx)
        got = got or (0.0, 0, 0)
        if memory is not None:
            got = kept[outlier.key] = max(got, memory.get(outlier.key, got))
        links.append(Link(outlier, *got))
    if memory is not None:
        memory.clear()
        memory.update(kept)
    links.sort(key=lambda lk: (-round(lk.r, 2), -RANK[lk.outlier.severity], lk.outlier.key))
    return links

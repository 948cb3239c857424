"""Put hosts sampled at different steps on one time grid, so the analysis can line them up.

History imported after the fact comes at its source's step: sar every 10 minutes, AWR every 15
or 30, OSWatcher every 30 s, a recording every second.  The analysis counts time in ticks of
one interval shared by every host (``round(time / interval)``), so an archive whose hosts (or
one host's sources) have different steps is first regridded onto the coarsest of them: each
frame goes to the grid interval its own end falls in, ``(k - 1) * step < t <= k * step``, and
the frames of one interval are combined field by field as the field declares
(``Field.combine``) or else as its kind says:

* gauges and rates: the mean weighted by each frame's own interval (a rate over the whole
  interval is what sar or AWR would have printed for it);
* deltas and histogram buckets: the sum (every wait of the interval counted once);
* text: the last value;
* ``max``: the largest (the longest write, the worst lag, the highest rto);
* ``per:F``: the mean weighted by the events of rate field F (await per I/O, avg per wait);
* ``q:Q:H``: recomputed from the combined histogram H (a p99 of the union, never a mean of
  p99s).

Events are kept as they are, on the frame of the interval they fall in.

The rules about steps that the importers and the report share are here too: a series' usual
step (``usual_step``) and when a pause is a gap (``GAP_STEPS``).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence

from sgmon import buckets
from sgmon.model import CollectorResult, Event, Field, Frame, Kind, Schema, Status, Value, number

SAME_STEP = 0.05
"""Steps within this fraction of each other are one step (sar's 600 s comes as 599-601)."""
GAP_STEPS = 1.5
"""A sample that comes more than this many usual steps after the one before follows a gap (the
importers' gap events, the report's breaks in a line).  Halfway between on time (one step) and
one sample missed (two): a late sample's jitter (sar's 599-601 s, OSWatcher's tools starting a
second or two late) is never a gap, and a single missed sample always is, where the times are
stamped finer than half a step (``is_gap``'s ``stamped_to``)."""


def usual_step(times: Iterable[float]) -> float | None:
    """The usual distance between consecutive sample times, None below two: the upper median,
    so it is a step that occurred (steps of 300 and 600 s give 600, never 450)."""
    diffs = [b - a for a, b in itertools.pairwise(sorted(times))]
    return statistics.median_high(diffs) if diffs else None


def is_gap(dt: float, step: float | None, stamped_to: float = 0.0) -> bool:
    """Whether a sample ``dt`` seconds after the one before follows a gap, samples being usually
    ``step`` apart (no step known: never).  Times stamped to whole ``stamped_to`` seconds (sar's,
    OSWatcher's) make ``dt`` read up to that much long, so only a pause longer by more than that
    is sure to be one: a 1 s sar record stamped 2 s after the one before may be 1.01 s late."""
    return step is not None and step > 0 and dt - stamped_to > GAP_STEPS * step


def common_step(frames: Mapping[str, list[Frame]]) -> float:
    """The coarsest step any frame was taken at."""
    return max((f.interval for fs in frames.values() for f in fs), default=1.0)


def needs_regrid(frames: Mapping[str, list[Frame]]) -> bool:
    """Whether the frames' steps differ beyond ``SAME_STEP``, or a host's frames come closer
    together than its step (two sources of one host, each on its own clock marks)."""
    step = common_step(frames)
    for fs in frames.values():
        if any(abs(f.interval - step) > SAME_STEP * step for f in fs):
            return True
        usual = usual_step(f.time for f in fs)
        if usual is not None and usual < (1 - SAME_STEP) * step:
            return True
    return False


def regrid(frames: list[Frame], schema: Schema, step: float) -> list[Frame]:
    """One host's frames (oldest first) combined onto the grid of ``step`` seconds."""
    groups: dict[int, list[Frame]] = {}
    for f in frames:
        groups.setdefault(math.ceil(f.time / step - 1e-9), []).append(f)
    out = []
    for seq, k in enumerate(sorted(groups), 1):
        group = groups[k]
        last = group[-1]
        collectors = {
            name: _combine(
                [f.collectors[name] for f in group if name in f.collectors],
                group,
                schema.get(name, ()),
            )
            for name in dict.fromkeys(n for f in group for n in f.collectors)
        }
        events: tuple[Event, ...] = tuple(e for f in group for e in f.events)
        out.append(Frame(last.host, k * step, seq, step, collectors, events, last.role))
    return out


def _combine(
    results: list[CollectorResult], group: list[Frame], fields: tuple[Field, ...]
) -> CollectorResult:
    ok = [(r, f.interval) for r, f in zip(results, group, strict=False) if r.status is Status.OK]
    if not ok:
        return results[-1]
    rows: dict[str, dict[str, Value]] = {}
    for inst in dict.fromkeys(i for r, _ in ok for i in r.rows):
        rows[inst] = _row([(r.rows[inst], w) for r, w in ok if inst in r.rows], fields)
    return CollectorResult(Status.OK, rows=rows)


def _row(
    parts: list[tuple[dict[str, Value], float]], fields: tuple[Field, ...]
) -> dict[str, Value]:
    """One instance's rows of a group (each with its interval) as one: each field combined as
    it declares, a quantile read from the combined histogram once that is summed."""
    row: dict[str, Value] = {}
    later = []
    for f in fields:
        got = [(part, w) for part, w in parts if part.get(f.name) is not None]
        if not got:
            continue
        if f.combine.startswith("q:"):
            later.append(f)  # from the combined histogram, once it is summed
        elif f.combine.startswith("per:"):
            events = f.combine[4:].split("+")
            row[f.name] = _mean(
                [
                    (part[f.name], w * sum(number(part.get(e)) or 0.0 for e in events))
                    for part, w in got
                ]
            )
        else:
            row[f.name] = _value(f.kind, f.combine, [(part[f.name], w) for part, w in got])
    for f in later:
        _, q, hist_field = f.combine.split(":", 2)
        row[f.name] = _quantile(row.get(hist_field), q, f.unit)
    return row


def _value(kind: Kind, combine: str, values: list[tuple[Value, float]]) -> Value:
    if kind is Kind.TEXT or len(values) == 1:
        return values[-1][0]
    if kind is Kind.HISTOGRAM:
        return _sum_hist(v for v, _ in values)
    nums = [(n, w) for v, w in values if (n := number(v)) is not None]
    if not nums:
        return values[-1][0]
    if combine == "max":
        return max(n for n, _ in nums)
    if kind is Kind.DELTA:
        return sum(n for n, _ in nums)
    return _mean(nums)


def _mean(values: Sequence[tuple[Value, float]]) -> Value:
    """The weighted mean; equal weights where none has a weight (an idle device's await)."""
    nums = [(n, w) for v, w in values if (n := number(v)) is not None]
    if not nums:
        return None
    total = sum(w for _, w in nums)
    if total <= 0:
        return sum(n for n, _ in nums) / len(nums)
    return sum(n * w for n, w in nums) / total


def _quantile(hist: Value, q: str, unit: str) -> Value:
    """A bucket quantile of the combined histogram, named as the collectors name it."""
    if not isinstance(hist, list):
        return None
    if q == "max":
        return buckets.highest(hist)
    if unit == "ms":
        return buckets.percentile(hist, float(q))
    return buckets.percentile_from_buckets(hist, float(q))


def _sum_hist(hists: Iterable[Value]) -> Value:
    total: dict[float | None, float] = {}
    for h in hists:
        if isinstance(h, list):
            for bound, count in h:
                total[bound] = total.get(bound, 0) + (count or 0)
    return [[b, c] for b, c in total.items()]

"""Counter arithmetic: deltas with wrap and reset handling, histogram bucket deltas.

Pure functions, shared by the engine's generic derivation and by collectors that combine several
counters (iostat's await = delta write ticks / delta writes).
"""

from __future__ import annotations

from collections.abc import Sequence

Number = int | float
Buckets = Sequence[Sequence[float | int | None]]  # [[upper_bound, cumulative_count], ...]


def counter_delta(
    prev: Number | None, cur: Number | None, wrap_bits: int | None = None
) -> Number | None:
    """Increase of a cumulative counter, or None when it cannot be known.

    With ``wrap_bits`` a decrease is taken as one wrap at 2**bits (the kernel's 32-bit ms fields
    of /proc/diskstats); without it a decrease means the counter was reset (instance restart,
    interface re-created) and the interval's value is unknown.
    """
    if prev is None or cur is None:
        return None
    if cur >= prev:
        return cur - prev
    if wrap_bits:
        return cur + (1 << wrap_bits) - prev
    return None


def counter_rate(
    prev: Number | None, cur: Number | None, dt: float, wrap_bits: int | None = None
) -> float | None:
    """Per-second increase of a cumulative counter over ``dt`` seconds; None when the increase
    cannot be known (see ``counter_delta``) or no time passed."""
    d = counter_delta(prev, cur, wrap_bits)
    return d / dt if d is not None and dt > 0 else None


def histogram_delta(prev: Buckets | None, cur: Buckets | None) -> list[list[Number | None]] | None:
    """This interval's bucket counts from two cumulative histograms with the same bounds.

    Returns None on the first sample, when the bucket bounds changed, or when any bucket went
    backwards (instance restart): a partial histogram would lie about the tail.
    Buckets present in ``cur`` but not in ``prev`` (a first wait in a new bucket) count from 0.
    """
    if prev is None or cur is None:
        return None
    before = {_key(b[0]): b[1] for b in prev}
    out: list[list[Number | None]] = []
    for bound, count in cur:
        p = before.get(_key(bound), 0)
        if count is None or p is None or count < p:
            return None
        out.append([bound, count - p])
    return out


def _key(bound: float | int | None) -> float:
    return float("inf") if bound is None else float(bound)


def bucket_midpoints(buckets: Buckets) -> list[float]:
    """A value standing for each bucket's waits: 3/4 of its upper bound (the middle of a
    power-of-two bucket), the open last bucket's upper bound taken as twice the one before."""
    out: list[float] = []
    prev = 0.0
    for bound, _count in buckets:
        upper = float(bound) if bound is not None else 2.0 * prev
        out.append(0.75 * upper)
        prev = upper
    return out


def percentile_from_buckets(buckets: Buckets | None, q: float) -> float | None:
    """The upper bound of the bucket holding the q-quantile (0<q<=1) of the counts.

    This is how AWR-style histograms are read: the answer is "p99 is at most 256 ms", never an
    average.  The open last bucket (bound None) yields the previous bound doubled, flagged by the
    caller if it matters.  Returns None when there were no waits.
    """
    if not buckets:
        return None
    total = sum(c for _, c in buckets if c)
    if total <= 0:
        return None
    target = q * total
    seen = 0.0
    last_bound: float | None = None
    for bound, count in buckets:
        seen += count or 0
        if bound is not None:
            last_bound = float(bound)
        if seen >= target - 1e-9 and count:
            return float(bound) if bound is not None else (last_bound or 0.0) * 2
    return last_bound

"""One truth for Oracle's wait-event histogram buckets: their bounds, names and table columns.

Oracle counts waits in power-of-two buckets, each holding the waits shorter than its bound and
not in a smaller bucket (``[b/2, b)``).  V$EVENT_HISTOGRAM (11.2) gives the bound in ms
(WAIT_TIME_MILLI 1, 2, 4 ...); V$EVENT_HISTOGRAM_MICRO (12.1+) in microseconds
(WAIT_TIME_MICRO 1, 2, 4 ... 1024, 2048 ...).  They are the same buckets: Oracle's own
WAIT_TIME_FORMAT names the 1024 us bucket "1 millisecond" and the 262144 us one "256
milliseconds", AWR's "Wait Event Histogram" prints them as ``<1ms`` ... ``<1/4s``, and DBA scripts
built on the micro view (hyee/dbcli ``snap_event.sql``: ``<512us <1ms <2ms``) do the same.  So a
bucket is identified by its exponent ``e`` on the microsecond scale (bound ``2**e`` us) and:

- its **name** is Oracle's: ``<512us`` below a millisecond, ``<1ms``, ``<2ms`` ... ``<256ms`` above
  (``2**(e-10)`` ms).  Percentiles (p50/p90/p99) and the highest bucket hit are reported as that
  name's number, so ``p99 256`` means "99 % of the interval's waits were under 256 ms" whether the
  database is 11.2 or 19c, and it matches the ``<256`` column, the heatmap row and the findings;
- its **exact bound** is ``2**e`` us (the 256 ms bucket really ends at 262.144 ms).  Averages
  derived from buckets, the CSV columns (``hist_le_262144_us``) and Prometheus ``le`` use it,
  because an upper bound must not be lower than the waits it holds; an 11.2 ms bucket folds onto
  the micro bound of the same name.

Sources: Oracle Database Reference, V$EVENT_HISTOGRAM and V$EVENT_HISTOGRAM_MICRO (WAIT_TIME_MILLI,
WAIT_TIME_MICRO, WAIT_TIME_FORMAT); seed 000 Table 5; seed 001's AWR rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from sgmon.rates import Buckets, Number
from sgmon.rates import (  # re-exported: the raw bound for a histogram not in ms (sgmon.regrid)
    percentile_from_buckets as percentile_from_buckets,
)

MS_EXP = 10
"""Exponent of the bucket Oracle names "1 millisecond" (1024 us)."""
COLUMN_EXPS = tuple(range(MS_EXP, MS_EXP + 9))
"""Upper-bound exponents of the "% of waits" columns <1ms .. <256ms; one more column holds the
rest (>= 256 ms).  Everything under a millisecond shares the first column, as in AWR."""


def exponent(bound_ms: float) -> int:
    """The bucket of a bound given in ms, from either view: 1.024 (micro 1024 us) and 1 (milli 1)
    are both 10; 0.512 (micro 512 us) is 9."""
    if bound_ms <= 0:
        return 0
    if bound_ms < 1:
        return round(math.log2(bound_ms * 1000))
    return round(math.log2(bound_ms)) + MS_EXP


def nominal_ms(e: int) -> float:
    """The number in Oracle's name of bucket ``e``, in ms: 0.512 for <512us, 256 for <256ms."""
    return 2.0 ** (e - MS_EXP) if e >= MS_EXP else 2.0**e / 1000


def exact_ms(e: int) -> float:
    """The true upper bound of bucket ``e`` in ms (2**e us)."""
    return 2.0**e / 1000


def name(e: int) -> str:
    """Oracle's name of a bucket: ``<512us``, ``<1ms``, ``<256ms``, ``<1s`` ... ``<16s``."""
    if e < MS_EXP:
        return f"<{2**e}us"
    ms = 2 ** (e - MS_EXP)
    return f"<{ms}ms" if ms < 1024 else f"<{ms // 1024}s"


def span(e: int) -> str:
    """The range a bucket holds, for findings: ``128-256 ms``."""
    lo = nominal_ms(e - 1)
    return f"{_num(lo)}-{_num(nominal_ms(e))} ms"


def span_of(bound_ms: float) -> str:
    """``span`` of the bucket a bound (either view, or a bucket name) belongs to."""
    return span(exponent(bound_ms))


def _num(x: float) -> str:
    return f"{x:g}"


def nominal(bound_ms: float | None) -> float | None:
    """A bound from either view as Oracle names it (1.024 -> 1, 262.144 -> 256)."""
    return None if bound_ms is None else nominal_ms(exponent(bound_ms))


def column(bound_ms: float | None) -> int:
    """The "% of waits" column of a bucket (None: the open last bucket)."""
    if bound_ms is None:
        return len(COLUMN_EXPS)
    e = exponent(bound_ms)
    return next((i for i, c in enumerate(COLUMN_EXPS) if e <= c), len(COLUMN_EXPS))


HEADERS = (
    name(COLUMN_EXPS[0]),
    *(name(e)[:-2] for e in COLUMN_EXPS[1:]),
    f"≥{2 ** (COLUMN_EXPS[-1] - MS_EXP)}",
)
"""Column headers of the "% of waits" table: ``<1ms <2 <4 ... <256 ≥256`` (AWR's spelling)."""


def shares(hist: Iterable[Sequence[Number | None]]) -> list[float] | None:
    """Share of the interval's waits per column (0..1), or None when there were none."""
    counts = [0.0] * (len(COLUMN_EXPS) + 1)
    for bound, count in hist:
        counts[column(bound)] += float(count or 0)
    total = sum(counts)
    return [c / total for c in counts] if total > 0 else None


def percentile(hist: Buckets | None, q: float) -> float | None:
    """The q-quantile (0<q<=1) of an interval's buckets, as the name of the bucket holding it.

    This is how AWR histograms are read: "p99 < 256 ms", never an average.  None when the
    interval had no waits.
    """
    return nominal(percentile_from_buckets(hist, q))


def highest(hist: Buckets | None) -> float | None:
    """The name of the highest bucket hit in the interval (None when none was)."""
    top = None
    for bound, count in hist or ():
        if count:
            top = bound
    return nominal(top)


def quantile_text(value: float) -> str:
    """A percentile or highest-bucket value as a reader should take it: ``<256 ms``."""
    return f"<{_num(value)} ms"


def is_bucket_field(collector: str, field: str) -> bool:
    """Whether a field holds a bucket name (a percentile or the highest bucket) of a wait, or
    of a redo device's I/O latency (biolat)."""
    if collector == "biolat":
        return field in ("p50", "p99", "max")
    return collector == "oracle_waits" and field in ("p50", "p90", "p99", "max_bucket")

"""A wait's measured distribution, as Oracle's power-of-two histogram buckets give it.

Buckets are keyed by their exponent on the microsecond scale (``sgmon.buckets``: bucket ``e``
holds the waits in ``[2**(e-1), 2**e)`` us).  Within a bucket the waits are taken as spread
evenly on a log scale, so a quantile is a continuous number, not a bucket's bound: that is what
lets a prediction and a measurement be compared within 20 % and not only bucket by bucket.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Mapping

from sgmon.buckets import exponent
from sgmon.contract import Histogram


def counts_of(hist: Histogram | None) -> Counter[int]:
    """One interval's histogram as counts per bucket exponent (the open bucket one above the
    last bound)."""
    out: Counter[int] = Counter()
    last = 0
    for bound, count in hist.pairs if hist is not None else ():
        e = exponent(bound) if bound is not None else last + 1
        last = e
        if count > 0:
            out[e] += round(count)
    return out


class Dist:
    """The quantile function of a bucketed distribution (ms)."""

    def __init__(self, counts: Mapping[int, float]) -> None:
        self.exps = sorted(e for e, n in counts.items() if n > 0)
        self.total = float(sum(counts[e] for e in self.exps))
        cum, run = [], 0.0
        for e in self.exps:
            run += counts[e]
            cum.append(run / self.total if self.total else 0.0)
        self._cum = cum
        self.counts = {e: float(counts[e]) for e in self.exps}

    def __bool__(self) -> bool:
        return self.total > 0

    def at(self, u: float) -> float:
        """The ``u`` quantile (0 <= u < 1), log-interpolated within its bucket."""
        i = min(bisect.bisect_right(self._cum, u), len(self.exps) - 1)
        below = self._cum[i - 1] if i else 0.0
        share = (u - below) / max(self._cum[i] - below, 1e-12)
        hi = 2.0 ** self.exps[i] / 1000.0
        return hi * 2.0 ** (min(max(share, 0.0), 1.0) - 1.0)

    def mean(self) -> float:
        """The mean, each bucket at its log-uniform mean (``b / (2 ln 2)``)."""
        return sum(n * 2.0**e / 1000.0 / (2 * math.log(2)) for e, n in self.counts.items()) / (
            self.total or 1.0
        )

    def above(self, e: int) -> float:
        """Waits in bucket ``e`` and above."""
        return sum(n for x, n in self.counts.items() if x >= e)


def bucket_of(ms: float) -> int:
    """The exponent of the bucket holding ``ms``."""
    return max(1, math.floor(math.log2(max(ms, 1e-3) * 1000.0)) + 1)


def binned(samples: Iterable[float]) -> Dist:
    """Samples (ms) counted into Oracle's buckets, as the database would count them."""
    return Dist(Counter(map(bucket_of, samples)))

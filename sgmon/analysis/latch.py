"""One series' state in the outlier tracker: whether (and how badly) it is out of line, with
hysteresis, the band of values that leave it calm, and the words of its reason.

The tracker (``sgmon.analysis.outliers``) decides what a value means against the series' limit
and baseline; a ``Latch`` keeps what it decided across ticks: it opens or rises at once and
lowers or closes only after ``OFF_TICKS`` quieter ticks, so a series that flaps every other tick
stays one steady outlier.
"""

from __future__ import annotations

from math import inf, nextafter

from sgmon import buckets
from sgmon.analysis.baseline import Series
from sgmon.grading import RANK, Limit
from sgmon.units import field_label, fmt_num
from sgmon.verdicts import Outlier, SeriesKey

OFF_TICKS = 5
Why = tuple
"""A reason unworded: ``(function, *arguments)``; ``()`` for none."""
NO_WHY: Why = ()
Plan = tuple[bool, float, float, bool, str, bool, bool]
"""watched, floor, ratio, up, unit, commit path, level (a limit must hold two ticks)."""


class Latch:
    """One series: its baseline, its limit, and whether (and how badly) it is open."""

    __slots__ = (
        "baseline",
        "built",
        "hi",
        "hi_limit",
        "key",
        "limit",
        "lo",
        "lo_limit",
        "ncpu",
        "normal",
        "out",
        "pending",
        "plan",
        "quiet",
        "reason",
        "series",
        "severity",
        "since",
        "streak",
        "tick",
        "value",
        "why",
    )

    def __init__(self, key: SeriesKey, series: Series | None, plan: Plan) -> None:
        self.key = key
        self.series = series
        self.plan = plan
        self.lo, self.hi = inf, -inf  # the calm band: none until judged calm (for ``ncpu``)
        self.limit: Limit | None = None
        self.lo_limit, self.hi_limit = -inf, inf
        """The band the limit leaves calm: ``settle`` reads it every time the median moves."""
        self.ncpu = -1
        self.severity: str | None = None
        self.quiet = 0
        self.why: Why = NO_WHY
        """What the reason says, as the function that words it and its arguments: worded only
        when the outlier is read with another reason than last time (issue 15)."""
        self.reason = ""
        self.built: Why = NO_WHY
        self.out: Outlier | None = None
        """The outlier last handed out, handed out again while nothing in it changed."""
        self.value: float | str | None = None
        """The value last judged in full: an open latch's (a calm band's values are not kept)."""
        self.baseline: float | None = None
        """The median the value was last judged against (a calm band's values are not)."""
        self.tick = 0
        self.pending = 0
        self.streak = 0
        self.since: float | None = None
        """When the series went out of line and stopped training its baseline (None: calm)."""
        self.normal: float | None = None
        """When the level its baseline was adopted from began (None: a learned baseline)."""

    def judge(self, opened: dict[SeriesKey, Latch], sev: str | None, why: Why) -> None:
        """Open or raise at once; lower or close only after ``OFF_TICKS`` quieter ticks."""
        cur = self.severity
        if sev is not None and (cur is None or RANK[sev] >= RANK[cur]):
            self.severity, self.why, self.quiet = sev, why, 0
            opened[self.key] = self
            return
        if cur is None:
            return
        self.quiet += 1
        if self.quiet >= OFF_TICKS:
            if sev is None:
                self.severity = self.normal = None
                opened.pop(self.key, None)
            else:
                self.severity, self.why, self.quiet = sev, why, 0

    def limited(self, lim: Limit | None, ncpu: int) -> None:
        """Take the series' limit for ``ncpu`` CPUs, and the band it leaves calm."""
        self.limit, self.ncpu = lim, ncpu
        self.lo_limit, self.hi_limit = -inf, inf
        if lim is not None:
            bounds = [b for b in (lim.warn, lim.crit) if b is not None]
            if bounds and lim.higher_is_worse:
                self.hi_limit = min(bounds)  # grade() warns from v >= warn
            elif bounds:
                self.lo_limit = max(bounds)

    def settle(self) -> None:
        """After a judgement: the open band ``lo < v < hi`` of values that would leave a calm
        series calm against its limit and its current median, and no band otherwise.  Exact,
        not approximate: each bound is the very float the full judgement compares with, or a
        value at or beyond the median, whose distance to it cannot reach the (positive) floor."""
        if self.severity is not None or self.pending or self.streak:
            self.lo, self.hi = inf, -inf
            return
        lo, hi = self.lo_limit, self.hi_limit
        base = self.series.median if self.series is not None else None
        if base is not None:
            _, _, ratio, up = self.plan[:4]
            if up:  # a departure needs v >= ratio * base and v - base >= floor
                hi = min(hi, max(ratio * base, nextafter(base, inf)))
            else:  # and base - v >= floor
                lo = max(lo, nextafter(base, -inf))
        self.lo, self.hi = lo, hi

    def outlier(self) -> Outlier:
        """The series as an outlier: the last one while it is the same (most open outliers
        are steady), its reason worded only when it changed."""
        why, old, value, sev = self.why, self.out, self.value, self.severity or "info"
        if why != self.built:
            self.reason, self.built = why[0](*why[1:]) if why else "", why
        if (
            old is not None
            and old.severity == sev
            and old.quiet == self.quiet
            and old.reason is self.reason
            and type(old.value) is type(value)
            and old.value == value
            and old.baseline == self.baseline
            and type(old.baseline) is type(self.baseline)
            and old.normal_since == self.normal
        ):
            return old
        self.out = out = Outlier(
            *self.key,
            sev,
            value,
            self.baseline,
            self.reason,
            self.quiet,
            self.plan[4],
            self.normal,
        )
        return out


class RowLatches:
    """One (host, collector, instance) row: its latches by field, and the fields with a plan,
    each with its latch once it has one, in the order of the field names it last came with
    (most fields of a row, a process's figures, are neither watched nor limited: the loop over
    a row skips them at C speed; ``names`` is None until a row comes and again when a latch
    comes or goes: never (), which a row with no field has, and which kept the fields judged
    of the row before it)."""

    __slots__ = ("judged", "latches", "names")

    def __init__(self) -> None:
        self.latches: dict[str, Latch] = {}
        self.names: tuple[str, ...] | None = None
        self.judged: tuple[tuple[str, Plan, Latch | None], ...] = ()


def limit_reason(coll: str, name: str, v: float, unit: str, op: str, bound, source: str) -> str:
    """Why a static limit graded a value: ``p99 in the 128-256 ms bucket, at or past 128-256 ms``
    for a bucket name (``sgmon.buckets``), ``w_await 40 ms >= 20`` for a plain number."""
    if buckets.is_bucket_field(coll, name) and bound is not None:
        here, limit = buckets.span_of(v), buckets.span_of(float(bound))
        return f"{field_label(name)} in the {here} bucket, at or past {limit} ({source})"
    return f"{field_label(name)} {_show(v, unit)} {op} {_show(bound, unit)} ({source})"


def departure_reason(coll: str, name: str, unit: str, v: float, base: float) -> str:
    """Why a departure from the baseline was flagged: ``p99 <256 ms vs baseline <2 ms``."""
    show = _shown(coll, name, unit)
    return f"{field_label(name)} {show(v)} vs baseline {show(base)}: sudden departure"


def _shown(coll: str, name: str, unit: str):
    """How a field's values read in reasons: a bucket name as ``<256 ms``, others with units."""
    if buckets.is_bucket_field(coll, name):
        return buckets.quantile_text
    return lambda v: _show(v, unit)


def _show(v: float, unit: str) -> str:
    """A number with its unit, as the reasons print it (``204 ms``, ``3``, ``100%``)."""
    if unit in ("", "count", "segs"):
        return fmt_num(v)
    return f"{fmt_num(v)}{unit}" if unit == "%" else f"{fmt_num(v)} {unit}"

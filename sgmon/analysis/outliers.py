"""Outliers per series: seed thresholds plus the robust baseline, latched with hysteresis.

A series opens as an outlier on the first tick that breaks a limit or departs from its baseline
(a retransmit or a commit stall lasts one tick), except that an OS level (iostat, mpstat, sar
gauges) must break its limit two ticks running: one busy second of a checkpoint is not
saturation.  It stays open until it has been clear for ``OFF_TICKS`` ticks in a row; its
severity may rise at once but only falls after the same quiet spell.  A series that flaps every
other tick therefore stays one steady outlier instead of flickering.

Most series are calm most of the time, so a calm series keeps the band of values that would
leave it calm (below its limit, short of a departure from its current median); a value inside
the band is only added to the baseline, without judging it again (issue 15: 500 series, five
hosts, under a millisecond a tick).

A series out of line (open, or breaking a limit or its baseline this tick) does not train its
baseline: the baseline an outlier quotes is the one from before its episode began, however long
the episode lasts.  A series out of line for ``NEW_NORMAL_S`` on end has its recent level
adopted as the new normal (``Outlier.normal_since`` says from when), deliberately and late: an
hour of a fault is still a fault, but the comparison has stopped meaning anything.

A CPU is short only of what runs on it: the %idle limit (seed 000: CPUs that run no code) grades
100 - ``busy_pct``, so a host waiting on its disks (%iowait) is not taken for a saturated one, and
the load average, which counts tasks blocked on a disk, breaks its limit only while the run
queue of tasks runnable now breaks its own.

Baseline departures are ``info`` ("unusual"), except on the commit path (log file sync, SYNC
Remote Write, Redo Transport MISC, redo synch time), where a sudden jump is the symptom the
user runs sgmon for and is ``warn``.  ``warn``/``crit`` elsewhere come from the seed thresholds.
"""

from __future__ import annotations

from math import inf

from sgmon.analysis.baseline import Series
from sgmon.analysis.latch import (
    NO_WHY,
    Latch,
    Plan,
    RowLatches,
    Why,
    departure_reason,
    limit_reason,
)
from sgmon.analysis.watch import COMMIT_PATH, CPU_LEVELS, busy_pct, free_pct, plan_of
from sgmon.contract import Row
from sgmon.fields import CPU, ORACLE_WAITS
from sgmon.grading import RANK, WAIT_WARN_MS, Grader, idle_rto, text_grade
from sgmon.model import Frame
from sgmon.verdicts import Outlier, SeriesKey

__all__ = ["OutlierTracker", "busy_pct", "free_pct"]

NEW_NORMAL_S = 3600.0
"""Seconds a series must stay out of line before its level becomes its new normal."""
PRUNE_EVERY = 100  # ticks between sweeps for series that stopped reporting
Z = 5.0
MIN_TAIL = 3
"""Waits a bucket percentile's departure must rest on: with 100 waits an interval, one slow wait
makes the p99, and one slow wait is noise, not a degraded commit path."""
BIG = 8.0
"""A commit-path departure this many times its baseline warns at once (seed 001: a 200 ms RTO
stall against a 2 ms baseline); a smaller one must hold two ticks, so one I/O hiccup on a
healthy pair stays info."""


class OutlierTracker:
    """Per-host series state; ``update(frame)`` returns that host's open outliers."""

    def __init__(self, grader: Grader, window: int = 120) -> None:
        self.grader = grader
        self.window = window
        self._latches: dict[SeriesKey, Latch] = {}
        self._rows: dict[tuple[str, str, str], RowLatches] = {}
        """Each (host, collector, instance) row's latches by field: one lookup a value."""
        self._open: dict[str, dict[SeriesKey, Latch]] = {}
        self._plans: dict[tuple[str, str], dict[str, Plan | None]] = {}
        self._ncpu: dict[str, int] = {}
        """Each host's CPU count at its last frame."""
        self._now = 0.0
        """The time of the frame being judged."""

    def series(self, key: SeriesKey) -> Series | None:
        """The recent points of one watched series (for correlation and rules)."""
        latch = self._latches.get(key)
        return latch.series if latch else None

    def _judged(
        self,
        plans: dict[str, Plan | None],
        host: str,
        collector: str,
        names: tuple[str, ...],
        latches: dict[str, Latch],
    ) -> tuple[tuple[str, Plan, Latch | None], ...]:
        """The fields of a row that have a plan (made on first sight), with it and their latch
        if they have one yet, in order."""
        out = []
        for name in names:
            if name not in plans:
                plans[name] = plan_of(self.grader, host, collector, name)
            if (plan := plans[name]) is not None:
                out.append((name, plan, latches.get(name)))
        return tuple(out)

    def update(self, frame: Frame, tick: int, ncpu: int) -> dict[SeriesKey, Outlier]:
        """Judge every series of one frame and return the host's open outliers."""
        host = frame.host
        self._now = frame.time
        opened = self._open.setdefault(host, {})
        if self._ncpu.setdefault(host, ncpu) != ncpu:
            self._recount(host, ncpu)
        cpu, every_cpu = CPU.name, CPU.Rows.all.fixed
        for coll, res in frame.collectors.items():
            plans = self._plans.setdefault((host, coll), {})
            for inst, row in res.rows.items():
                if coll == cpu and inst != every_cpu:
                    continue  # one busy CPU is normal; the all row says whether all are busy
                at = (host, coll, inst)
                self._fields(at, self._known(at, row, plans).judged, row, tick, ncpu, opened)
        for latch in [x for x in opened.values() if x.tick != tick]:  # gone this tick: quiet
            latch.judge(opened, None, NO_WHY)
        if tick % PRUNE_EVERY == 0:
            self._prune(host, tick, opened)
        return {k: latch.outlier() for k, latch in opened.items()}

    def _known(
        self, at: tuple[str, str, str], row: Row, plans: dict[str, Plan | None]
    ) -> RowLatches:
        """The latches of the row ``at`` (host, collector, instance), its fields with a plan
        matched with them again when the row comes with other fields than last time."""
        known = self._rows.get(at)
        if known is None:
            known = self._rows[at] = RowLatches()
        names = tuple(row)
        if names != known.names:  # the fields that have a plan, in the row's order
            known.names = names
            known.judged = self._judged(plans, at[0], at[1], names, known.latches)
        return known

    def _fields(
        self,
        at: tuple[str, str, str],
        judged: tuple[tuple[str, Plan, Latch | None], ...],
        row: Row,
        tick: int,
        ncpu: int,
        opened: dict[SeriesKey, Latch],
    ) -> None:
        """Judge the fields of one row that have a plan: a calm series' number inside its calm
        band is only added to its baseline (issue 15), any other value is judged in full."""
        for name, plan, latch in judged:
            v = row[name]
            if latch is not None and (type(v) is float or type(v) is int):
                if latch.lo < v < latch.hi:  # calm, stays calm
                    latch.tick = tick
                    ser = latch.series
                    if ser is not None and ser.push(tick, v):
                        latch.settle()  # a new median, a new band
                else:
                    self._number(latch, v, row, tick, ncpu, opened)
            elif v is not None:
                self._unlatched((*at, name), v, plan, row, tick, ncpu, opened)

    def _unlatched(
        self,
        key: SeriesKey,
        v: object,
        plan: Plan,
        row: Row,
        tick: int,
        ncpu: int,
        opened: dict[SeriesKey, Latch],
    ) -> None:
        """A value no calm band holds: a state in text, or the first number of a series."""
        if type(v) is str:
            self._text(key, v, plan, tick, opened)
        elif type(v) is float or type(v) is int:
            ser = Series(self.window, phase=len(self._latches)) if plan[0] else None
            self._number(self._new(key, ser, plan), v, row, tick, ncpu, opened)

    def _recount(self, host: str, ncpu: int) -> None:
        """The host's CPUs changed, and with them the limits that scale with them: every series
        of the host is judged in full next time (a calm band holds for one count only)."""
        self._ncpu[host] = ncpu
        for key, latch in self._latches.items():
            if key[0] == host:
                latch.lo, latch.hi = inf, -inf

    def _text(
        self, key: SeriesKey, v: str, plan: Plan, tick: int, opened: dict[SeriesKey, Latch]
    ) -> None:
        """A state held in text (a destination's status): bad whatever its history."""
        sev, why = text_grade(key[1], key[3], v)
        latch = self._latches.get(key)
        if sev is None and latch is None:
            return
        if latch is None:
            latch = self._new(key, None, plan)
        latch.value, latch.tick = v, tick
        latch.judge(opened, sev, (str, why))
        latch.lo, latch.hi = inf, -inf  # a number after text is judged in full

    def _new(self, key: SeriesKey, series: Series | None, plan: Plan) -> Latch:
        latch = self._latches[key] = Latch(key, series, plan)
        row = self._rows[key[:3]]
        row.latches[key[3]] = latch
        row.names = None  # its fields are matched with their latches again next time
        return latch

    def _number(
        self,
        latch: Latch,
        v: float,
        row: Row,
        tick: int,
        ncpu: int,
        opened: dict[SeriesKey, Latch],
    ) -> None:
        """One number: its limit, then its departure from its own baseline; the worse wins."""
        if latch.ncpu != ncpu:
            latch.limited(self.grader.limit(*latch.key, ncpu), ncpu)
        sev, why = self._beyond_limit(latch, v, row, latch.plan) if latch.limit else (None, NO_WHY)
        ser = latch.series
        if ser is not None:
            sev, why = self._against_baseline(latch, ser, v, row, sev, why)
        latch.value, latch.tick = v, tick
        if sev is not None or latch.severity is not None:
            latch.judge(opened, sev, why)
        if ser is not None:  # only a calm value of a closed latch trains its baseline
            if sev is None and latch.severity is None and not latch.pending and not latch.streak:
                latch.since = None
                ser.push(tick, v)
            else:
                self._out_of_line(latch, ser, tick, v)
        latch.settle()

    def _against_baseline(
        self, latch: Latch, ser: Series, v: float, row: Row, sev: str | None, why: Why
    ) -> tuple[str | None, Why]:
        """The worse of the limit's verdict (``sev``, ``why``) and a departure from the
        series' baseline, which the value must first pass the cheap bars of."""
        base = latch.baseline = ser.median
        _, floor, ratio, up = latch.plan[:4]
        if base is not None and (  # the cheap bars first: most values fail them
            (v >= ratio * base and v - base >= floor)
            if up
            else (v * ratio <= base and base - v >= floor)
        ):
            dsev, dwhy = self._departure(latch, v, base, row, latch.plan)
            if dsev is not None and (sev is None or RANK[dsev] > RANK[sev]):
                return dsev, dwhy
        else:
            latch.streak = 0
        return sev, why

    def _out_of_line(self, latch: Latch, ser: Series, tick: int, v: float) -> None:
        """Add a value out of line to the series without training its baseline; out of line
        for ``NEW_NORMAL_S`` on end, the series' recent level is adopted as its new normal."""
        ser.push(tick, v, learn=False)
        now = self._now
        if latch.since is None:
            latch.since = now
        elif now - latch.since >= NEW_NORMAL_S:
            ser.adopt()
            latch.normal = latch.since if latch.normal is None else latch.normal
            latch.since = None

    def _beyond_limit(self, latch: Latch, v: float, row: Row, plan: Plan) -> tuple[str | None, Why]:
        """warn/crit from the series' static limit; an OS level must break it two ticks running
        (one busy second of a checkpoint is not saturation)."""
        lim = latch.limit
        coll, name = latch.key[1], latch.key[3]
        if lim is None or idle_rto(coll, name, row):
            return None, NO_WHY
        if coll == CPU.name and name in CPU_LEVELS:
            level = self._running(latch, v, row)
            if level is None:
                return None, NO_WHY
            v, name = level
        sev = lim.grade(v)
        if plan[6] and latch.severity is None:
            latch.pending = latch.pending + 1 if sev else 0
            if latch.pending < 2:
                return None, NO_WHY
        if not sev:
            return None, NO_WHY
        bound = lim.crit if sev == "crit" else lim.warn
        op = ">=" if lim.higher_is_worse else "<="
        return sev, (limit_reason, coll, name, v, plan[4], op, bound, lim.source)

    def _running(self, latch: Latch, v: float, row: Row) -> tuple[float, str] | None:
        """What a CPU level's limit grades, and its name in the reason: %idle's limit grades
        the time the CPUs ran no code (100 - ``busy_pct``: idle, iowait and nice); a load
        average counts only while the run queue breaks its own limit (None: not graded)."""
        name = latch.key[3]
        if name == CPU.idle.name:
            free = free_pct(row)
            if free is None or free <= v:
                return v, name
            return free, "idle+iowait+nice"
        runq = CPU.runq_sz.of(row)
        if runq is None:
            return v, name
        lim = self.grader.limit(*CPU.runq_sz.key(latch.key[0], CPU.Rows.all.fixed), latch.ncpu)
        return (v, name) if lim is not None and lim.grade(runq) else None

    @staticmethod
    def _departure(
        latch: Latch, v: float, base: float, row: Row, plan: Plan
    ) -> tuple[str | None, Why]:
        """A sudden departure from the series' own baseline: info, or warn on the commit path
        when it holds two ticks or is BIG at once (and, for a wait, rests on enough waits)."""
        _, floor, ratio, up, unit, commit, _ = plan
        assert latch.series is not None
        if not latch.series.departs(v, floor, ratio, Z, up):
            latch.streak = 0
            return None, NO_WHY
        latch.streak += 1
        _, coll, inst, name = latch.key
        held = (  # the histogram walk last: only a commit-path wait needs it
            commit
            and (coll, inst, name) in COMMIT_PATH
            and (latch.streak >= 2 or (up and v >= BIG * base))
            and (
                coll != ORACLE_WAITS.name
                or (v >= WAIT_WARN_MS and _tail(ORACLE_WAITS.hist.raw(row), v) >= MIN_TAIL)
            )
        )
        return ("warn" if held else "info"), (departure_reason, coll, name, unit, v, base)

    def _prune(self, host: str, tick: int, opened: dict[SeriesKey, Latch]) -> None:
        """Sockets reconnect on new ports: forget the host's series long gone."""
        stale = tick - 2 * self.window
        gone = [
            k
            for k, x in self._latches.items()
            if k[0] == host and x.tick < stale and k not in opened
        ]
        for key in gone:
            del self._latches[key]
            known = self._rows[key[:3]]
            del known.latches[key[3]]
            known.names = None  # its fields are matched with their latches again next time
        for row in [k for k, r in self._rows.items() if k[0] == host and not r.latches]:
            del self._rows[row]  # rows gone, or whose fields have no latch
        self.grader.forget(set(gone))


def _tail(hist: object, value: float) -> float:
    """Waits this interval in the buckets at or above ``value`` (inf when no histogram)."""
    if not isinstance(hist, list):
        return float("inf")
    return sum(c or 0 for b, c in hist if b is None or b >= value * 0.999)

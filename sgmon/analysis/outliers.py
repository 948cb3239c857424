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

from collections.abc import Mapping
from math import inf, nextafter

from sgmon import buckets
from sgmon.analysis.baseline import Series
from sgmon.events import COMMIT_EVENTS
from sgmon.grading import RANK, WAIT_WARN_MS, Grader, Limit, idle_rto, text_grade
from sgmon.model import Frame, Kind, number
from sgmon.units import field_label, fmt_num
from sgmon.verdicts import Outlier, SeriesKey

OFF_TICKS = 5
NEW_NORMAL_S = 3600.0
"""Seconds a series must stay out of line before its level becomes its new normal."""
PRUNE_EVERY = 100  # ticks between sweeps for series that stopped reporting
Z = 5.0
FLOOR = {"ms": 2.0, "%": 10.0, "s": 1.0}  # smallest departure worth a flag, per unit
RATIO = {"ms": 3.0}  # and how many times the median it must reach (default 2)
MIN_TAIL = 3
"""Waits a bucket percentile's departure must rest on: with 100 waits an interval, one slow wait
makes the p99, and one slow wait is noise, not a degraded commit path."""
BIG = 8.0
"""A commit-path departure this many times its baseline warns at once (seed 001: a 200 ms RTO
stall against a 2 ms baseline); a smaller one must hold two ticks, so one I/O hiccup on a
healthy pair stays info."""

COMMIT_PATH: frozenset[tuple[str, str, str]] = frozenset(
    {("oracle_waits", e, f) for e in COMMIT_EVENTS for f in ("p90", "p99", "avg")}
    | {("oracle_redo", "db", "redo_synch_time")}
)

WATCH: dict[str, frozenset[str]] = {
    k: frozenset(v.split())
    for k, v in {
        "cpu": "usr sys iowait idle steal runq_sz load1 blocked",
        "paging": "pgscank pgscand pswpin pswpout majflt memused psi_cpu_some psi_mem_some "
        "psi_mem_full psi_io_some",
        "disk": "r_await w_await aqu_sz util svctm r_s w_s rkb_s wkb_s",
        "netdev": "rx_err tx_err rx_drop tx_drop rx_overrun rx_fifo tx_fifo util rx_kb tx_kb",
        "tcp": "rtt rttvar rto retransmits lost unacked send_q recv_q retrans_segs timeouts "
        "lost_retransmit",
        "oracle_waits": "avg p90 p99 waits",
        "oracle_redo": "redo_size redo_writes redo_write_size redo_write_time redo_synch_time "
        "user_commits redo_size_lwd phys_reads_cache redo_bcast_ack",
        "oracle_dg": "transport_lag apply_lag resp_p99 log_switches",
        "oracle_trace": "slow_writes max_write",
        "procs": "runq",  # what the rules cite: LGWR's and RFS's wait for a CPU
    }.items()
}


class _Latch:
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

    def __init__(self, key: SeriesKey, series: Series | None, plan: _Plan) -> None:
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
        self.why: Why = _NO_WHY
        """What the reason says, as the function that words it and its arguments: worded only
        when the outlier is read with another reason than last time (issue 15)."""
        self.reason = ""
        self.built: Why = _NO_WHY
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

    def judge(self, opened: dict[SeriesKey, _Latch], sev: str | None, why: Why) -> None:
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


class _Row:
    """One (host, collector, instance) row: its latches by field, and the fields with a plan,
    each with its latch once it has one, in the order of the field names it last came with
    (most fields of a row, a process's figures, are neither watched nor limited: the loop over
    a row skips them at C speed; ``names`` is emptied when a latch comes or goes)."""

    __slots__ = ("judged", "latches", "names")

    def __init__(self) -> None:
        self.latches: dict[str, _Latch] = {}
        self.names: tuple[str, ...] = ()
        self.judged: tuple[tuple[str, _Plan, _Latch | None], ...] = ()


Why = tuple
"""A reason unworded: ``(function, *arguments)``; ``()`` for none."""
_NO_WHY: Why = ()
_Plan = tuple[bool, float, float, bool, str, bool, bool]
"""watched, floor, ratio, up, unit, commit path, level (a limit must hold two ticks)."""
LEVELS = frozenset({"cpu", "paging", "disk", "netdev"})
BUSY = ("usr", "sys", "irq", "soft", "steal")
"""What a CPU spends running code that competes with the database's processes: not %iowait
(an idle CPU with I/O outstanding), not %nice (low-priority work that yields to them)."""
CPU_LEVELS = frozenset({"idle", "load1", "load5", "load15"})
"""The cpu fields whose limit grades what is really runnable (``OutlierTracker._running``)."""


def busy_pct(row: Mapping[str, object]) -> float | None:
    """%usr + %sys + %irq + %soft + %steal of a cpu row; of a row that has none of them but
    %idle, what %idle, %iowait and %nice leave (None when it has neither)."""
    parts = [x for f in BUSY if (x := number(row.get(f))) is not None]
    if parts:
        return sum(parts)
    idle = number(row.get("idle"))
    if idle is None:
        return None
    return 100.0 - idle - sum(x for f in ("iowait", "nice") if (x := number(row.get(f))))


def free_pct(row: Mapping[str, object]) -> float | None:
    """What the %idle limit grades: the time the CPUs ran no code, 100 - ``busy_pct`` (idle,
    iowait and nice), never below mpstat's own %idle (guest time and rounding can make the
    busy parts add up past 100 - %idle).  One figure for the cells and the CPU rule."""
    idle, busy = number(row.get("idle")), busy_pct(row)
    if busy is None:
        return idle
    return 100.0 - busy if idle is None else max(idle, 100.0 - busy)


class OutlierTracker:
    """Per-host series state; ``update(frame)`` returns that host's open outliers."""

    def __init__(self, grader: Grader, window: int = 120) -> None:
        self.grader = grader
        self.window = window
        self._latches: dict[SeriesKey, _Latch] = {}
        self._rows: dict[tuple[str, str, str], _Row] = {}
        """Each (host, collector, instance) row's latches by field: one lookup a value."""
        self._open: dict[str, dict[SeriesKey, _Latch]] = {}
        self._plans: dict[tuple[str, str], dict[str, _Plan | None]] = {}
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
        plans: dict[str, _Plan | None],
        host: str,
        collector: str,
        names: tuple[str, ...],
        latches: dict[str, _Latch],
    ) -> tuple[tuple[str, _Plan, _Latch | None], ...]:
        """The fields of a row that have a plan (made on first sight), with it and their latch
        if they have one yet, in order."""
        out = []
        for name in names:
            if name not in plans:
                plans[name] = self._plan(host, collector, name)
            if (plan := plans[name]) is not None:
                out.append((name, plan, latches.get(name)))
        return tuple(out)

    def _plan(self, host: str, collector: str, name: str) -> _Plan | None:
        meta = self.grader.meta(host, collector, name)
        watched = name in WATCH.get(collector, ())
        if not (watched or self.grader.may_limit(host, collector, name)):
            return None
        unit = meta.unit if meta else ""
        up = meta.higher_is_worse if meta else True
        commit = collector in ("oracle_waits", "oracle_redo")
        level = collector in LEVELS and meta is not None and meta.kind is Kind.GAUGE
        return watched, FLOOR.get(unit, 1.0), RATIO.get(unit, 2.0), up, unit, commit, level

    def update(self, frame: Frame, tick: int, ncpu: int) -> dict[SeriesKey, Outlier]:
        """Judge every series of one frame and return the host's open outliers."""
        host = frame.host
        self._now = frame.time
        opened = self._open.setdefault(host, {})
        if self._ncpu.setdefault(host, ncpu) != ncpu:
            self._recount(host, ncpu)
        rows = self._rows
        for coll, res in frame.collectors.items():
            plans = self._plans.setdefault((host, coll), {})
            for inst, row in res.rows.items():
                if coll == "cpu" and inst != "all":
                    continue  # one busy CPU is normal; the all row says whether all are busy
                known = rows.get((host, coll, inst))
                if known is None:
                    known = rows[host, coll, inst] = _Row()
                names = tuple(row)
                if names != known.names:  # the fields that have a plan, in the row's order
                    known.names = names
                    known.judged = self._judged(plans, host, coll, names, known.latches)
                for name, plan, latch in known.judged:
                    v = row[name]
                    if latch is not None and (type(v) is float or type(v) is int):
                        if latch.lo < v < latch.hi:  # calm, stays calm
                            latch.tick = tick
                            ser = latch.series
                            if ser is not None and ser.push(tick, v):
                                latch.settle()  # a new median, a new band
                        else:
                            self._number(latch, v, row, tick, ncpu, opened)
                        continue
                    if v is None:
                        continue
                    key = (host, coll, inst, name)
                    if type(v) is str:
                        self._text(key, v, plan, tick, opened)
                    elif type(v) is float or type(v) is int:
                        ser = Series(self.window, phase=len(self._latches)) if plan[0] else None
                        self._number(self._new(key, ser, plan), v, row, tick, ncpu, opened)
        for latch in [x for x in opened.values() if x.tick != tick]:  # gone this tick: quiet
            latch.judge(opened, None, _NO_WHY)
        if tick % PRUNE_EVERY == 0:
            self._prune(host, tick, opened)
        return {k: self._outlier(latch) for k, latch in opened.items()}

    def _recount(self, host: str, ncpu: int) -> None:
        """The host's CPUs changed, and with them the limits that scale with them: every series
        of the host is judged in full next time (a calm band holds for one count only)."""
        self._ncpu[host] = ncpu
        for key, latch in self._latches.items():
            if key[0] == host:
                latch.lo, latch.hi = inf, -inf

    def _text(
        self, key: SeriesKey, v: str, plan: _Plan, tick: int, opened: dict[SeriesKey, _Latch]
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

    def _new(self, key: SeriesKey, series: Series | None, plan: _Plan) -> _Latch:
        latch = self._latches[key] = _Latch(key, series, plan)
        row = self._rows[key[:3]]
        row.latches[key[3]] = latch
        row.names = ()  # its fields are matched with their latches again next time
        return latch

    def _number(
        self,
        latch: _Latch,
        v: float,
        row: Mapping[str, object],
        tick: int,
        ncpu: int,
        opened: dict[SeriesKey, _Latch],
    ) -> None:
        """One number: its limit, then its departure from its own baseline; the worse wins."""
        plan = latch.plan
        if latch.ncpu != ncpu:
            latch.limited(self.grader.limit(*latch.key, ncpu), ncpu)
        sev, why = self._beyond_limit(latch, v, row, plan) if latch.limit else (None, _NO_WHY)
        ser = latch.series
        if ser is not None:
            base = latch.baseline = ser.median
            _, floor, ratio, up = plan[:4]
            if base is not None and (  # the cheap bars first: most values fail them
                (v >= ratio * base and v - base >= floor)
                if up
                else (v * ratio <= base and base - v >= floor)
            ):
                dsev, dwhy = self._departure(latch, v, base, row, plan)
                if dsev is not None and (sev is None or RANK[dsev] > RANK[sev]):
                    sev, why = dsev, dwhy
            else:
                latch.streak = 0
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

    def _out_of_line(self, latch: _Latch, ser: Series, tick: int, v: float) -> None:
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

    def _beyond_limit(
        self, latch: _Latch, v: float, row: Mapping[str, object], plan: _Plan
    ) -> tuple[str | None, Why]:
        """warn/crit from the series' static limit; an OS level must break it two ticks running
        (one busy second of a checkpoint is not saturation)."""
        lim = latch.limit
        coll, name = latch.key[1], latch.key[3]
        if lim is None or idle_rto(coll, name, row):
            return None, _NO_WHY
        if coll == "cpu" and name in CPU_LEVELS:
            level = self._running(latch, v, row)
            if level is None:
                return None, _NO_WHY
            v, name = level
        sev = lim.grade(v)
        if plan[6] and latch.severity is None:
            latch.pending = latch.pending + 1 if sev else 0
            if latch.pending < 2:
                return None, _NO_WHY
        if not sev:
            return None, _NO_WHY
        bound = lim.crit if sev == "crit" else lim.warn
        op = ">=" if lim.higher_is_worse else "<="
        return sev, (_why, coll, name, v, plan[4], op, bound, lim.source)

    def _running(
        self, latch: _Latch, v: float, row: Mapping[str, object]
    ) -> tuple[float, str] | None:
        """What a CPU level's limit grades, and its name in the reason: %idle's limit grades
        the time the CPUs ran no code (100 - ``busy_pct``: idle, iowait and nice); a load
        average counts only while the run queue breaks its own limit (None: not graded)."""
        name = latch.key[3]
        if name == "idle":
            free = free_pct(row)
            if free is None or free <= v:
                return v, name
            return free, "idle+iowait+nice"
        runq = number(row.get("runq_sz"))
        if runq is None:
            return v, name
        lim = self.grader.limit(latch.key[0], "cpu", "all", "runq_sz", latch.ncpu)
        return (v, name) if lim is not None and lim.grade(runq) else None

    @staticmethod
    def _departure(
        latch: _Latch, v: float, base: float, row: Mapping[str, object], plan: _Plan
    ) -> tuple[str | None, Why]:
        """A sudden departure from the series' own baseline: info, or warn on the commit path
        when it holds two ticks or is BIG at once (and, for a wait, rests on enough waits)."""
        _, floor, ratio, up, unit, commit, _ = plan
        assert latch.series is not None
        if not latch.series.departs(v, floor, ratio, Z, up):
            latch.streak = 0
            return None, _NO_WHY
        latch.streak += 1
        _, coll, inst, name = latch.key
        held = (  # the histogram walk last: only a commit-path wait needs it
            commit
            and (coll, inst, name) in COMMIT_PATH
            and (latch.streak >= 2 or (up and v >= BIG * base))
            and (
                coll != "oracle_waits"
                or (v >= WAIT_WARN_MS and _tail(row.get("hist"), v) >= MIN_TAIL)
            )
        )
        return ("warn" if held else "info"), (_departed, coll, name, unit, v, base)

    def _prune(self, host: str, tick: int, opened: dict[SeriesKey, _Latch]) -> None:
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
            known.names = ()  # its fields are matched with their latches again next time
        for row in [k for k, r in self._rows.items() if k[0] == host and not r.latches]:
            del self._rows[row]  # rows gone, or whose fields have no latch
        self.grader.forget(set(gone))

    @staticmethod
    def _outlier(latch: _Latch) -> Outlier:
        """The latch as an outlier: the last one while it is the same (most open outliers
        are steady), its reason worded only when it changed."""
        why, old, value, sev = latch.why, latch.out, latch.value, latch.severity or "info"
        if why != latch.built:
            latch.reason, latch.built = why[0](*why[1:]) if why else "", why
        if (
            old is not None
            and old.severity == sev
            and old.quiet == latch.quiet
            and old.reason is latch.reason
            and type(old.value) is type(value)
            and old.value == value
            and old.baseline == latch.baseline
            and type(old.baseline) is type(latch.baseline)
            and old.normal_since == latch.normal
        ):
            return old
        latch.out = out = Outlier(
            *latch.key,
            sev,
            value,
            latch.baseline,
            latch.reason,
            latch.quiet,
            latch.plan[4],
            latch.normal,
        )
        return out


def _why(coll: str, name: str, v: float, unit: str, op: str, bound, source: str) -> str:
    """Why a static limit graded a value: ``p99 in the 128-256 ms bucket, at or past 128-256 ms``
    for a bucket name (``sgmon.buckets``), ``w_await 40 ms >= 20`` for a plain number."""
    if buckets.is_bucket_field(coll, name) and bound is not None:
        here, limit = buckets.span_of(v), buckets.span_of(float(bound))
        return f"{field_label(name)} in the {here} bucket, at or past {limit} ({source})"
    return f"{field_label(name)} {_show(v, unit)} {op} {_show(bound, unit)} ({source})"


def _departed(coll: str, name: str, unit: str, v: float, base: float) -> str:
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


def _tail(hist: object, value: float) -> float:
    """Waits this interval in the buckets at or above ``value`` (inf when no histogram)."""
    if not isinstance(hist, list):
        return float("inf")
    return sum(c or 0 for b, c in hist if b is None or b >= value * 0.999)

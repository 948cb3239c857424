"""The analysis every sink shares: outliers, cross-host correlation, commit budget, advice.

Feed it every frame of every host (``Analyzer.feed`` is a sink: ``callable(frame)``) and read
``state()`` whenever you draw.  Per frame it

1. judges the host's series against the seed thresholds and their own robust baseline, with
   hysteresis (outliers.py, baseline.py; the limits are ``sgmon.judgement``'s);
2. splits the primary's average log file sync into local write, remote write (standby I/O and
   network) and LGWR overhead (budget.py);
3. when the commit path is degraded on the primary (the commit symptom itself moved: log file
   sync or redo synch time out of line for more than a blip, ``SYMPTOM``, ``moved``), ranks the
   outliers of both hosts by how well they line up with it (correlate.py);
4. runs the advice rules of the seeds (rules.py) and keeps their findings (findings.py).

Headless and dependency-free: no textual, rich or numpy.  ``feed`` and ``state`` may be called
from different threads."""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass, field, replace

from sgmon import topology
from sgmon.analysis.baseline import Series
from sgmon.analysis.budget import commit_budget, smooth
from sgmon.analysis.context import PEAK_TICKS, TIMED, Chain, Context, HostView, chain_label
from sgmon.analysis.correlate import Link, rank
from sgmon.analysis.explained import Shares
from sgmon.analysis.findings import FindingBook
from sgmon.analysis.liveness import Liveness
from sgmon.analysis.outliers import OutlierTracker
from sgmon.analysis.rules import evaluate, host_claims, persistence
from sgmon.analysis.rules.base import LAG_RISK, HostClaims
from sgmon.analysis.rules.commit import superseded, unclear
from sgmon.analysis.unprotected import Ledger
from sgmon.analysis.watch import SeriesPath
from sgmon.config import Config
from sgmon.events import COMMIT_EVENTS
from sgmon.fields import ORACLE_DG, ORACLE_REDO, ORACLE_WAITS
from sgmon.grading import RANK, Grader, cpu_count
from sgmon.model import Frame, data_guard_role, unheard
from sgmon.verdicts import SYMPTOM_RULE, AnalysisState, Budget, Finding, Outlier, SeriesKey

__all__ = ["Analyzer"]

# The series a chain starts from, most specific first: the remote write explains more than
# log file sync does.
_QUANTILES = (ORACLE_WAITS.p99, ORACLE_WAITS.p90, ORACLE_WAITS.avg)
_SYNCH_TIME = ORACLE_REDO.redo_synch_time.path(ORACLE_REDO.Rows.db.fixed)
TRIGGERS: tuple[SeriesPath, ...] = (
    *(f.path(e) for e in (*COMMIT_EVENTS[1:], COMMIT_EVENTS[0]) for f in _QUANTILES),
    _SYNCH_TIME,
)
SYMPTOM: tuple[SeriesPath, ...] = (
    *(f.path(COMMIT_EVENTS[0]) for f in _QUANTILES),
    _SYNCH_TIME,
)
"""What the sessions themselves wait for: a chain starts only when one of these has moved."""
BLIP_TICKS = 3
"""Ticks of the last ``PEAK_TICKS`` a commit symptom must be out of line in (or two running)
to be more than a blip; at a step of ``BLIP_S`` or more one sample is already more."""
BLIP_S = 2.0
TRIGGER_PATHS = frozenset(TRIGGERS)
BUDGET_SMOOTHING = 5  # intervals the rules average the budget over
STALE_TICKS = 3  # a host this many ticks behind is not waited for
HOLD_S, HOLD_TICKS = 10.0, 3  # a finding closes when not asserted for this long
Candidate = tuple[Outlier, Series | None, bool]
"""An outlier that may explain the chain, its points, and whether higher is worse."""


class Analyzer:
    """Outliers, correlation, budget and findings over the frames of one or two hosts."""

    def __init__(self, config: Config | None = None, grader: Grader | None = None) -> None:
        self.config = config or Config()
        self.grader = grader or Grader(self.config.thresholds)
        """Limits and field declarations: the Judge's, so the analysis and the sinks grade
        alike (without one, the local collector classes' declarations)."""
        self.tracker = OutlierTracker(self.grader)
        self.book = FindingBook(persist=persistence())
        self.liveness = Liveness()
        self.ledger, self.shares = Ledger(), Shares()
        """What incidents left: commits and redo on no standby, and the share of their extra
        commit time their named causes explain (``sgmon.outcomes``)."""
        self.skew = 0.0
        """Estimated clock skew between the hosts, seconds (set it when it is known)."""
        self._views: dict[str, HostView] = {}
        self._budget: dict[str, Budget] = {}
        self._devices = {h.name: h.devices for h in self.config.hosts}
        self._time = 0.0
        self._ticks: dict[str, int] = {}
        self._paths: dict[str, _Path] = {}
        """Per primary instance: its recent budgets and the incident its chain follows."""
        self._opened: deque[Finding] = deque(maxlen=1000)
        self._closed: deque[Finding] = deque(maxlen=1000)
        self._changed: deque[Finding] = deque(maxlen=1000)
        self._lock = threading.Lock()
        self.topology: topology.Topology | None = None
        """The hosts' places at the last evaluation (which standbys are on the commit path)."""

    def __call__(self, frame: Frame) -> None:
        """Sink form of ``feed``."""
        self.feed(frame)

    def feed(self, frame: Frame) -> None:
        """Analyse one host's frame (frames of each host in time order)."""
        with self._lock:
            self._feed(frame)

    def _feed(self, frame: Frame) -> None:
        view = self._seen(frame)
        interval = frame.interval if frame.interval > 0 else 1.0
        self.book.hold, self.book.interval = max(HOLD_S, HOLD_TICKS * interval), interval
        tick = round(frame.time / interval)
        view.outliers = self.tracker.update(frame, tick, view.ncpu)
        _note_switches(view, frame)
        view.timed.extend(e for e in frame.events if e.kind in TIMED)
        self._time = max(self._time, frame.time)
        self._ticks[frame.host] = tick
        if any(tick - STALE_TICKS <= t < tick for h, t in self._ticks.items() if h != frame.host):
            return  # another host has yet to report this tick: judge once, when it has
        self._evaluate(interval)

    def _seen(self, frame: Frame) -> HostView:
        """The frame's host as the analysis knows it, brought up to this frame: its role (and
        when it last changed), when it was last heard, its CPUs."""
        view = self._views.get(frame.host)
        ncpu = cpu_count(frame)
        if view is None:
            view = HostView(frame.host, "", frame, devices=self._devices.get(frame.host, ()))
            self._views[frame.host] = view
        role = data_guard_role(frame, view.role)
        if view.role and role and role != view.role:
            view.role_changed = frame.time
        view.frame, view.role = frame, role
        if not unheard(frame):
            view.heard = frame.time
        view.ncpu = ncpu or view.ncpu
        return view

    def _evaluate(self, interval: float) -> None:
        """The tick's findings, once every host has reported it: the per-host rules once, the
        others once per primary instance (RAC), a silent host's from its liveness."""
        self.topology = topo = topology.build(
            self.config, {h: v.frame for h, v in self._views.items()}
        )
        common = Context(self._time, self._views, self.tracker, self.grader, self.config)
        common.topology, common.interval = topo, interval
        self.ledger.update(self._views, topo)
        common.unprotected = self.ledger.now()
        common.max_lag = math.ceil(abs(self.skew) / interval) + 1
        hosts = host_claims(common)  # once a tick, not once per primary instance
        asserted: dict[str, Finding] = {}
        silent = set()
        for f in self.liveness.findings(self._views, topo, self._time, interval):
            self._budget.pop(f.host, None)  # its last split is not now's
            silent.add(f.host)
            asserted[f.key] = f
        explained = self._instances(common, topo, hosts, silent, asserted)
        self.book.update(self._time, asserted.values())
        for h in topo.standbys:
            if not topo.on_commit_path(h):  # seed 003: only its lag is at risk
                self.book.retract_causes(h, LAG_RISK)
        for name in explained:  # one cause, one finding: "nothing lines up" is no longer true
            self.book.retract(SYMPTOM_RULE, name, superseded)
        self._opened.extend(self.book.opened)
        self._closed.extend(self.book.closed)
        self._changed.extend(self.book.changed)

    def _instances(
        self,
        common: Context,
        topo: topology.Topology,
        hosts: HostClaims,
        silent: set[str],
        asserted: dict[str, Finding],
    ) -> list[str]:
        """Each primary instance's findings into ``asserted`` (a standby's finding, from each
        instance: one, the worst); the instances whose chain a cause explained."""
        explained = []
        for name in topo.primaries or (None,):
            ctx = self._context(common, topo, name, silent)
            found = evaluate(ctx, hosts)
            if ctx.primary is not None:
                b = self._budget.get(ctx.primary.name)
                self.shares.update(ctx.primary.frame, ctx.now, b, ctx.chain is not None, found)
                found = unclear(found, self.shares.unclear(ctx.primary.name, ctx.now))
            for f in found:
                if f.key not in asserted or RANK[f.severity] > RANK[asserted[f.key].severity]:
                    asserted[f.key] = _of_instance(f, ctx) if f.host == name else f
            if ctx.explained:  # and within the hold it still does (``Context.held``)
                self._paths[name or ""].explained_at = ctx.now
                explained += [name] if name is not None else []
        return explained

    def _context(
        self, common: Context, topo: topology.Topology, name: str | None, silent: set[str]
    ) -> Context:
        """What the rules see for one primary instance: the tick's ``common`` context with
        that instance and every other host but the other instances (RAC: each instance's
        commit path is its own), and the instance's budget and chain."""
        hosts, instances = self._views, {}
        if len(topo.primaries) > 1:
            hosts = {n: v for n, v in hosts.items() if n == name or n not in topo.primaries}
            instances = {n: v for n, v in self._views.items() if n in topo.primaries and n != name}
        ctx = Context(common.now, hosts, self.tracker, self.grader, self.config)
        ctx.topology, ctx.primary_name, ctx.instances = topo, name, instances
        ctx.interval, ctx.max_lag = common.interval, common.max_lag
        ctx.unprotected = common.unprotected
        path = self._paths.setdefault(name or "", _Path())
        primary = ctx.primary
        if primary is not None:
            self._split(primary, ctx.standby, topo, path, primary.name in silent)
            if path.recent:
                ctx.budget = smooth(path.recent)
        ctx.chain = self._chain(ctx, path)
        ctx.held = common.now - path.explained_at < self.book.hold
        return ctx

    def _split(
        self,
        primary: HostView,
        standby: HostView | None,
        topo: topology.Topology,
        path: _Path,
        silent: bool,
    ) -> None:
        """The instance's commit budget of its new frame, into its recent ones.  A ``silent``
        instance has none: the split of its last heard seconds is not now's, and once it is
        heard again its budget starts afresh."""
        if silent:
            path.recent.clear()
        elif primary.frame.time != path.budget_time:
            path.budget_time = primary.frame.time
            fast = standby is not None and topo.fast_sync(standby.name)
            b = commit_budget(primary.frame, standby.frame if standby else None, fast)
            if b is None:  # no commits this interval: the last split is not this interval's
                self._budget.pop(primary.name, None)
            else:
                self._budget[primary.name] = b
                path.recent.append(b)

    def _chain(self, ctx: Context, path: _Path) -> Chain | None:
        """The primary instance's degraded commit path and the outliers that line up with it
        (None: its commit time has not moved)."""
        p = ctx.primary
        if p is None:
            return None
        trigger = _trigger(p, path, ctx.interval)
        if trigger is None:
            path.trigger = None
            path.linked.clear()  # the incident is over
            path.ranked = None
            return None
        path.trigger = trigger.key
        series = self.tracker.series(trigger.key)
        if series is None:
            return None
        links = _links(path, trigger, series, self._candidates(ctx, p), ctx.max_lag)
        peak = max(series.recent(PEAK_TICKS), default=None)
        return Chain(trigger, chain_label(trigger, peak, PEAK_TICKS * ctx.interval), links)

    def _candidates(self, ctx: Context, p: HostView) -> list[Candidate]:
        """The outliers that may explain the chain: each on the commit path, but the primary's
        own commit-path series."""
        out = []
        for view in ctx.hosts.values():
            if not ctx.on_commit_path(view.name):
                continue  # seed 003: an ASYNC standby's faults never line up as the cause
            for key, o in view.outliers.items():
                if view is p and key[1:] in TRIGGER_PATHS:
                    continue
                if ctx.off_path(view.name, (key,)):
                    continue  # an ASYNC or archiver socket, a Fast Sync standby's SRL writes
                meta = self.grader.meta(key[0], key[1], key[3])
                out.append((o, self.tracker.series(key), meta.higher_is_worse if meta else True))
        return out

    def state(self) -> AnalysisState:
        """A snapshot: open outliers of every host, ranked findings, the latest budgets."""
        with self._lock:
            outliers: dict[SeriesKey, Outlier] = {}
            for view in self._views.values():
                outliers.update(view.outliers)
            findings, budget = self.book.findings(), dict(self._budget)
            outcomes = self.ledger.now(), self.shares.now()
            return AnalysisState(self._time, outliers, findings, budget, *outcomes)

    def changes(self) -> tuple[list[Finding], list[Finding], list[Finding]]:
        """Findings opened, closed, and changed in severity since the last call (for the
        findings log)."""
        with self._lock:
            opened, closed, changed = list(self._opened), list(self._closed), list(self._changed)
            for d in (self._opened, self._closed, self._changed):
                d.clear()
            return opened, closed, changed


@dataclass(slots=True)
class _Path:
    """One primary instance's commit-path state across evaluations."""

    recent: deque[Budget] = field(default_factory=lambda: deque(maxlen=BUDGET_SMOOTHING))
    budget_time: float = 0.0
    trigger: SeriesKey | None = None
    """The series the chain started from, kept while it stays out of line (a steady title)."""
    linked: dict[SeriesKey, tuple[float, int, int]] = field(default_factory=dict)
    ranked: tuple[tuple, bool, list[Link]] | None = None  # (keys, reused, links)
    moved: deque[bool] = field(default_factory=lambda: deque(maxlen=PEAK_TICKS))
    """Per evaluation, newest last: whether a commit symptom (``SYMPTOM``) was out of line."""
    explained_at: float = -math.inf  # when a cause last explained the chain (``Context.held``)


def moved(recent: deque[bool], interval: float) -> bool:
    """Whether the commit symptom has moved for more than a blip: out of line now, and in
    ``BLIP_TICKS`` of the recent evaluations or the last two (one sample of ``BLIP_S`` or
    more already is: an OSWatcher, sar or AWR sample averages a whole interval)."""
    if not recent or not recent[-1]:
        return False
    n = len(recent)
    return interval >= BLIP_S or sum(recent) >= BLIP_TICKS or (n >= 2 and recent[n - 2])


def _trigger(p: HostView, path: _Path, interval: float) -> Outlier | None:
    """The series the primary instance's chain starts from: the one it started from while that
    stays out of line (a steady title), else the most specific commit-path series out of line,
    once the commit symptom has moved for more than a blip."""
    path.moved.append(
        any(
            (o := p.outliers.get((p.name, *k))) is not None and o.severity != "info" and not o.quiet
            for k in SYMPTOM
        )
    )
    sticky = p.outliers.get(path.trigger) if path.trigger else None
    if sticky and sticky.severity != "info":
        return sticky
    trigger = next(
        (
            o
            for c, i, f in TRIGGERS
            if (o := p.outliers.get((p.name, c, i, f))) and o.severity != "info"
        ),
        None,
    )
    if trigger is not None and path.trigger is None and not moved(path.moved, interval):
        return None  # a blip of the commit time, or a wait that the sessions do not feel
    return trigger


def _links(
    path: _Path, trigger: Outlier, series: Series, candidates: list[Candidate], max_lag: int
) -> list[Link]:
    """The candidates ranked by how well they line up with the trigger; the same incident with
    the same outliers as last tick keeps its ranking one tick (each link already keeps its best
    r) and refreshes the outliers it points at."""
    keys = (trigger.key, tuple(o.key for o, _, _ in candidates))
    prev = path.ranked
    if prev is not None and prev[0] == keys and not prev[1]:
        current = {o.key: o for o, _, _ in candidates}
        links = [Link(current[lk.outlier.key], lk.r, lk.lag, lk.n) for lk in prev[2]]
        path.ranked = (keys, True, links)
    else:
        links = rank(series, candidates, max_lag, path.linked)
        path.ranked = (keys, False, links)
    return links


def _of_instance(f: Finding, ctx: Context) -> Finding:
    """A RAC instance's finding names its instance and thread (each has its own LGWR, NSS
    socket and redo thread)."""
    topo, view = ctx.topology, ctx.primary
    if topo is None or view is None or len(topo.primaries) < 2:
        return f
    named = topology.instance_text(view.frame)
    return replace(f, title=f"{named}: {f.title}") if named else f


def _note_switches(view: HostView, frame: Frame) -> None:
    """Remember log switch times: the events; without events, the thread counts, or a sequence
    that moved (a thread whose first history row appears mid-run has just switched)."""
    times = [e.time for e in frame.events if e.kind == "log_switch"]
    events = bool(times)
    dg = frame.rows(ORACLE_DG.name)
    for inst, row in ORACLE_DG.Rows.thread.of(dg).items():
        seq, n = ORACLE_DG.sequence.of(row), ORACLE_DG.log_switches.of(row)
        last = view.sequences.get(inst)
        if not events:
            if n:
                k = int(n)
            elif seq is not None and last is not None:
                k = max(0, int(seq - last))
            else:
                k = int(seq is not None and last is None and view.dg_seen)
            times += [frame.time] * k
        if seq is not None:
            view.sequences[inst] = seq
    view.dg_seen = view.dg_seen or bool(dg)
    view.switches.extend(sorted(times))

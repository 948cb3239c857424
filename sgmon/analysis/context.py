"""What the rules see at one evaluation: both hosts' latest frames, outliers, budget and chain."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar, cast

from sgmon import buckets
from sgmon.analysis.correlate import Link
from sgmon.analysis.outliers import OutlierTracker
from sgmon.config import Config
from sgmon.events import STANDBY_WRITES
from sgmon.fields import BIOLAT, CPU, DISK, ORACLE_DG, ORACLE_WAITS, TCP
from sgmon.grading import Grader
from sgmon.model import Event, Frame
from sgmon.outcomes import Unprotected
from sgmon.topology import Topology, off_path_sender
from sgmon.units import fmt_num
from sgmon.verdicts import Budget, Outlier, SeriesKey

TIMED = frozenset({"lgwr_slow_write", "remote_write_split"})
"""Traced writes that rules line up with other moments to the millisecond across ticks (a
retransmission and the write it stalled are often read in different ticks)."""

T = TypeVar("T")
WHOLE_ROWS = frozenset({CPU.Rows.all.fixed, ORACLE_DG.Rows.db.fixed, TCP.Rows.host.fixed})
"""The instances that are a collector's whole row (a host's, a database's): evidence names
none of them."""


@dataclass(slots=True)
class HostView:
    """One host as the analysis knows it."""

    name: str
    role: str
    frame: Frame
    ncpu: int = 0
    outliers: dict[SeriesKey, Outlier] = field(default_factory=dict)
    switches: deque[float] = field(default_factory=lambda: deque(maxlen=32))
    timed: deque[Event] = field(default_factory=lambda: deque(maxlen=256))
    """Recent point events of the kinds in TIMED, for lining them up to the millisecond."""
    sequences: dict[str, float] = field(default_factory=dict)
    dg_seen: bool = False
    devices: tuple[str, ...] = ()
    role_changed: float | None = None
    """When the database last reported a new role (a switchover or failover)."""
    heard: float | None = None
    """Time of its last frame with numbers (``sgmon.analysis.liveness``)."""
    looks: dict[Callable, tuple[Frame, object]] = field(default_factory=dict)
    """What rules read from this frame alone, by the function that reads it (``once``)."""

    def flagged(self, collector: str) -> bool:
        """Whether one of the host's outliers from ``collector`` is worse than info: a rule that
        looks up every field of every row of it needs none of the lookups otherwise."""
        return any(k[1] == collector and o.severity != "info" for k, o in self.outliers.items())


@dataclass(frozen=True, slots=True)
class Chain:
    """The degraded commit-path series on the primary and the outliers that line up with it."""

    trigger: Outlier
    label: str  # "SYNC Remote Write p99 212 ms"
    links: list[Link]


@dataclass(slots=True)
class Context:
    """Inputs of one rule evaluation."""

    now: float
    hosts: dict[str, HostView]
    tracker: OutlierTracker
    grader: Grader
    config: Config
    budget: Budget | None = None
    chain: Chain | None = None
    interval: float = 1.0
    max_lag: int = 1
    """Ticks two hosts' series may be apart (clock skew / interval + 1)."""
    explained: bool = False
    """Set by a cause rule whose series line up with the chain."""
    held: bool = False
    """A cause explained the chain within the findings' hold: a bursty cause (a capped volume
    whose slow write lands in the next tick) still explains it between its bursts."""
    topology: Topology | None = None
    """Which standbys are on the commit path (``sgmon.topology``); None: all of them."""
    primary_name: str | None = None
    """The primary instance this evaluation is of, as the topology took it (RAC: one
    evaluation per instance, whose ``hosts`` hold that instance and the standbys only)."""
    instances: dict[str, HostView] = field(default_factory=dict)
    """The other primary instances (RAC), for the rules of waits that cross instances only:
    their commit paths are their own evaluations'."""
    unprotected: list[Unprotected] = field(default_factory=list)
    """Each destination that did not protect during the run (``sgmon.analysis.unprotected``)."""
    _ends: dict[str, str] | None = None
    """DG socket key as its far end reads it (``peer>local``) -> the watched host at that end;
    built on first use, once per evaluation."""

    @property
    def primary(self) -> HostView | None:
        """The primary instance of this evaluation (``sgmon.topology`` decides which host)."""
        return self.hosts.get(self.primary_name) if self.primary_name else None

    @property
    def standby(self) -> HostView | None:
        """The SYNC standby on the commit path, when one is watched (seed 003: an ASYNC one
        never is)."""
        return next(
            (h for h in self.hosts.values() if h.role == "standby" and self.on_commit_path(h.name)),
            None,
        )

    def on_commit_path(self, host: str) -> bool:
        """Whether a fault on ``host`` can slow commits (every host while the destinations are
        not mapped)."""
        return self.topology is None or self.topology.on_commit_path(host)

    def off_path(self, host: str, series: Iterable[SeriesKey] = ()) -> str:
        """Why no commit waits for ``host`` or for one of ``series`` ("" when one may): a
        standby that is no SYNC destination, a Fast Sync standby's SRL writes and disks, or a
        DG socket that ships ASYNC redo or archived logs (by its owner, or by the host at its
        far end).  The chain leaves such series out; rules turn them into lag risks."""
        if not self.on_commit_path(host):
            return (
                f"{host} is not a SYNC destination of the primary: its faults delay its own "
                "redo and apply, not the primary's commits "
                "(Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits)"
            )
        view = self.hosts.get(host)
        sockets = view.frame.rows(TCP.name) if view is not None else {}
        for _, coll, inst, _ in series:
            srl = coll in (DISK.name, BIOLAT.name) or inst in STANDBY_WRITES
            if srl and self.topology is not None and self.topology.fast_sync(host):
                return (
                    f"{host} is a Fast Sync destination (SYNC NOAFFIRM): it acknowledges redo "
                    "on receipt, before its SRL write, so its redo disk is not on the commit "
                    "path (Best Practices for Synchronous Redo Transport)"
                )
            if coll != TCP.name:
                continue
            process = TCP.process.of(sockets.get(inst))
            if off_path_sender(process):
                return (
                    f"{inst} belongs to {process}, which ships ASYNC redo or archived logs "
                    "(TTnn, ARCn): no commit waits for it"
                )
            far = self.far_end(host, inst)
            if far is not None and not self.on_commit_path(far):
                return (
                    f"{inst} ({process or 'its sender'}) ships to {far}, which is not a SYNC "
                    "destination of the primary: no commit waits for it"
                )
        return ""

    def far_end(self, host: str, inst: str) -> str | None:
        """The watched host at the other end of ``host``'s socket ``inst`` (``local>peer``): the
        one holding the same socket the other way round.  11.2's LNSn ship both SYNC and ASYNC
        redo, so only the far end tells which destination a socket serves; no name resolution,
        the two ends' addresses are the kernel's own (None behind NAT, or unwatched)."""
        if self._ends is None:
            self._ends = {
                key: name
                for name, v in self.hosts.items()
                for key in v.frame.rows(TCP.name)
                if ">" in key
            }
        far = self._ends.get(turned(inst))
        return far if far != host else None

    def other(self, host: str) -> str | None:
        """The host at the other end of the Data Guard link: the commit-path standby seen from
        the primary, the primary seen from a standby (else the first other host); None for a
        cascaded standby, whose sender is not watched as such."""
        if self.topology is not None and self.topology.cascaded(host):
            return None
        p, s = self.primary, self.standby
        peer = s if p is not None and host == p.name else p
        if peer is not None and peer.name != host:
            return peer.name
        return next((h for h in self.hosts if h != host), None)

    def route(self, host: str) -> str:
        """``primary -> standby`` seen from ``host``'s side."""
        peer = self.other(host)
        return f"{host} -> {peer}" if peer else host

    def recent(self, key: SeriesKey, n: int = 10) -> list[float]:
        """The last ``n`` values of a watched series."""
        s = self.tracker.series(key)
        return s.recent(n) if s else []

    def link(self, keys: Iterable[SeriesKey]) -> Link | None:
        """The best-correlated chain link among ``keys``."""
        if self.chain is None:
            return None
        wanted = set(keys)
        return next((lk for lk in self.chain.links if lk.outlier.key in wanted), None)

    def outlier(self, key: SeriesKey) -> Outlier | None:
        """The open outlier of a series, if any."""
        view = self.hosts.get(key[0])
        return view.outliers.get(key) if view else None


def once(ctx: Context, view: HostView, look: Callable[[Context, HostView], T]) -> T:
    """``look(ctx, view)``, made once per frame of ``view``: a rule's reading of one host that
    uses what every evaluation of a tick shares (grader, tracker, topology), never the primary
    instance, its budget or its chain, so RAC's evaluations, one per instance, share it."""
    got = view.looks.get(look)
    if got is None or got[0] is not view.frame:
        got = view.looks[look] = (view.frame, look(ctx, view))
    return cast(T, got[1])


def turned(inst: str) -> str:
    """A DG socket's key (``local>peer``) as the host at its other end keys the same socket."""
    local, _, peer = inst.partition(">")
    return f"{peer}>{local}"


PEAK_TICKS = 10
"""A chain's title shows its trigger's highest value over this many ticks (a steady title)."""


def label(o: Outlier, value: float | None) -> str:
    """``SYNC Remote Write p99 212 ms`` / ``redo synch time 12 ms`` for a commit-path series."""
    coll, inst, name = o.collector, o.instance, o.field
    unit = f" {o.unit}" if o.unit else ""
    what = f"{inst} {name}" if coll == ORACLE_WAITS.name else name.replace("_", " ")
    if value is not None and buckets.is_bucket_field(coll, name):
        return f"{what} {buckets.quantile_text(value)}"
    return f"{what} {fmt_num(value)}{unit}"


def chain_label(o: Outlier, peak: float | None, seconds: float) -> str:
    """A chain's title value: its trigger now, or while the highest of the last ``seconds`` is
    above it, that peak said to be one (``log file sync p99 <256 ms (10 s peak)``): a title
    beside a table of the values now must not pass a peak off as now."""
    value = o.value if isinstance(o.value, int | float) else None
    if peak is None or value is None or peak <= value:
        return label(o, value if value is not None else peak)
    return f"{label(o, peak)} ({fmt_num(seconds)} s peak)"


def now(o: Outlier) -> str:
    """An outlier as evidence, at the value it has this tick, so that lines of one finding
    agree with each other (its ``reason`` was written when it opened or last rose)."""
    value = o.value if isinstance(o.value, int | float) else None
    named = o.instance not in WHOLE_ROWS and o.collector != ORACLE_WAITS.name
    where = f"{o.host} {o.instance + ' ' if named else ''}"
    if isinstance(o.value, str):  # a state (a destination's status): the text is the value
        return f"{where}{o.field.replace('_', ' ')} {o.value or '-'}"
    text = f"{where}{label(o, value)}"
    if o.baseline is not None and value is not None:
        _, coll, _, name = o.key
        base = (
            buckets.quantile_text(o.baseline)
            if buckets.is_bucket_field(coll, name)
            else fmt_num(o.baseline)
        )
        if o.normal_since is not None:
            since = datetime.fromtimestamp(o.normal_since, UTC).strftime("%H:%M")
            return f"{text} (baseline {base}, new normal since {since})"
        return f"{text} (baseline {base})"
    return text

"""The verdicts every sink reads: outliers, findings, the commit-time budget, and the
``Judgement`` of one frame that carries them with the grades of its cells.

Plain dataclasses with ``to_dict`` so the dashboard, the status line, the recorder's findings log,
the exporter and ``sgmon check --format json`` all read the same thing.  Severities are those of
``sgmon.grading.SEVERITIES``.  Below the analysis: a sink, a panel or the report reads a verdict
from here without importing the analysis that made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sgmon.grading import Grader, rank, worst
from sgmon.model import Frame
from sgmon.outcomes import Explained, Unprotected
from sgmon.units import fmt_num

SeriesKey = tuple[str, str, str, str]
"""(host, collector, instance, field)."""


@dataclass(frozen=True, slots=True)
class Outlier:
    """One series that is out of line now: above a seed threshold or off its own baseline."""

    host: str
    collector: str
    instance: str
    field: str
    severity: str
    value: float | str | None
    baseline: float | None
    reason: str
    quiet: int = 0
    """Ticks in a row it has been back in line while still open (it closes at ``OFF_TICKS``)."""
    unit: str = ""
    """The field's declared unit, for the evidence text."""
    normal_since: float | None = None
    """When the level that ``baseline`` was adopted from began: the series stayed out of line
    so long that it became its new normal (None: the baseline is from before the episode)."""

    @property
    def key(self) -> SeriesKey:
        """The series this outlier is about."""
        return (self.host, self.collector, self.instance, self.field)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


SOURCES = {
    "000": "Best Practices for Synchronous Redo Transport (Oracle MAA)",
    "MAA": "Best Practices for Synchronous Redo Transport (Oracle MAA)",
    "001": "A story about Data Guard and network latency",
    "002": "How to measure Network Latency for Oracle Data Guard Replication",
    "003": 'Oracle Database Migrated to Cloud Starts Experiencing "log file sync" Waits',
    "004": "Oracle Rdb Hot Standby Performance Test Results",
    "trace": "Oracle's LGWR trace messages",
}
"""A rule's source document by its public title (docs/references.md), for what a reader sees:
``Finding.seed`` keeps the short key that the archive's findings.csv and JSON carry."""


def source_title(seed: str) -> str:
    """The public title of a finding's source document (the key itself when unknown)."""
    return SOURCES.get(seed, seed)


@dataclass(slots=True)
class Finding:
    """A ranked, explained conclusion; ``end`` is None while it is active."""

    key: str
    severity: str
    host: str
    title: str
    evidence: list[str]
    series: list[SeriesKey]
    rule: str
    seed: str
    start: float
    end: float | None = None
    score: float = 0.0
    steps: tuple[tuple[float, str], ...] = ()
    """(time, severity) of its first form and of each change of severity since, in order: an
    escalating finding keeps the start of its first form, and says when it became what."""
    cost_ms: float = 0.0
    """Its impact: the extra commit time it accounts for, in ms summed over the commits of its
    episode (extra ms per commit x commits, each tick it lined up with the commit path); 0 for a
    finding off the commit path, whose impact is its duration and peak."""
    commits: float = 0.0
    """The commits over the ticks its ``cost_ms`` was counted in."""
    peak_at: float | None = None
    """When its worst moment was: the tick its ``peak_title`` comes from."""
    peak_title: str = ""
    """The title of its worst moment, value and device: the episode's title (``episode``);
    ``title`` is the latest assertion's while it is active, what the panes show now, and the
    worst moment's once it is closed."""
    seen: float | None = None
    """When its rule last asserted it (its episode runs from ``start`` to here)."""
    drawn: bool = False
    """Whether it lined up with the commit path's symptom at its last assertion."""
    moment: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """How bad the moment it was asserted at is: (extra commit time that tick, severity rank,
    how far its series are out of line); the episode keeps its worst."""

    @property
    def active(self) -> bool:
        """Still asserted by its rule (within the hold time)."""
        return self.end is None

    @property
    def lasted(self) -> float:
        """Its episode's length so far, in seconds."""
        last = self.end if self.end is not None else self.seen
        return max(0.0, (last if last is not None else self.start) - self.start)

    @property
    def episode(self) -> str:
        """The episode's title: its worst moment's (the latest title before it had one)."""
        return self.peak_title or self.title

    def peaked(self, clock: Callable[[float], str]) -> str:
        """``peak 08:17:02 of 4 min``: when its worst moment (its title's) was, in an episode
        of how long."""
        at = self.peak_at if self.peak_at is not None else self.start
        return f"peak {clock(at)} of {_lasting(self.lasted)}"

    def impact(self) -> str:
        """``impact: 12.4 s of extra commit time (4.13 ms x 3,000 commits)`` on the commit
        path; off it, how long it lasted (its title says its peak and when)."""
        if self.cost_ms > 0 and self.commits > 0:
            return (
                f"impact: {_span(self.cost_ms / 1000.0)} of extra commit time "
                f"({fmt_num(self.cost_ms / self.commits)} ms x {self.commits:,.0f} commits)"
            )
        return f"impact: none on commit time measured; lasted {_lasting(self.lasted)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        d = asdict(self)
        d["series"] = [list(s) for s in self.series]
        d["steps"] = [list(s) for s in self.steps]
        del d["moment"]  # how the episode ranks its own moments, not a verdict
        return d

    def history(self, clock: Callable[[float], str]) -> str:
        """``info 08:33:30, warn 08:33:49, crit 08:33:52``: when it became what ("" when it
        never changed severity)."""
        if len(self.steps) < 2:
            return ""
        return ", ".join(f"{s} {clock(t)}" for t, s in self.steps)


def _span(seconds: float) -> str:
    """``250 ms``, ``12.4 s``, ``4 min``, ``2.5 h``: a duration as a reader says it."""
    if seconds < 1.0:
        return f"{fmt_num(seconds * 1000.0)} ms"
    if seconds < 120.0:
        return f"{fmt_num(seconds)} s"
    if seconds < 7200.0:
        return f"{fmt_num(seconds / 60.0)} min"
    return f"{fmt_num(seconds / 3600.0)} h"


def _lasting(seconds: float) -> str:
    """An episode's length; one seen at a single tick so far is "one tick", not "0 ms"."""
    return _span(seconds) if seconds > 0 else "one tick"


SYMPTOM_RULE = "commit_chain"
"""The generic finding of a degraded commit path that no cause rule explains: the symptom."""


def by_impact(f: Finding) -> tuple[bool, bool, float, float, int, float, str]:
    """The order every reader shows findings in (check, the report's first sentence, the
    dashboard, the status line): warnings and worse before info, a cause before the bare
    symptom (``SYMPTOM_RULE``, whose impact its causes share), then the largest impact (extra
    commit time), then the longer episode, never the latest; then severity and score."""
    return (
        f.severity == "info",
        f.rule == SYMPTOM_RULE,
        -f.cost_ms,
        -f.lasted,
        -rank(f.severity),
        -f.score,
        f.key,
    )


SHARES = "shares of it (the local and remote writes overlap)"
"""What a budget's percentages are: each part's share of log file sync, the parallel local and
remote writes counted both."""
NO_COMMITS = "no commits this interval"
"""What a commit budget says of an interval without log file sync waits."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Where one interval's average commit time went (ms), as MAA Tables 7 to 9 reason.

    The local and remote writes run in parallel (MAA steps 5 to 8), so the write phase is
    ``max(local, remote)``.  Averages alone (the MAA tables) call everything past that LGWR
    overhead; but a commit that arrives while a write is in flight first waits out the rest of
    that write, and one 200 ms stall among hundreds of 1 ms writes makes hundreds of commits wait
    on it while barely moving the write's average.  ``queue_ms`` is that wait, predicted from the
    slower write's histogram (the residual life E[D^2] / 2E[D]), capped at what is left of log
    file sync; ``queue_on`` names the part it queues behind ("network", "standby", "local", or
    "remote write" when the standby's own waits are not in the data to split it).
    ``overhead_ms = lfs_ms - max(local, remote) - queue_ms`` is LGWR's CPU wait, posting and the
    foregrounds' own CPU wait.  ``standby_io_ms + network_ms = remote_write_ms``.  Any part that
    cannot be known this interval is None.
    """

    host: str
    time: float
    lfs_ms: float | None
    local_write_ms: float | None
    remote_write_ms: float | None
    standby_io_ms: float | None
    network_ms: float | None
    overhead_ms: float | None
    queue_ms: float | None = None
    queue_on: str = ""

    def share(self, part: float | None) -> float | None:
        """A part as a fraction of log file sync."""
        if part is None or not self.lfs_ms:
            return None
        return part / self.lfs_ms

    def describe(self) -> str:
        """``log file sync 4.60 ms, shares of it (the local and remote writes overlap): local
        write 0.62 ms (13%), remote write 3.45 ms (75%) [standby I/O 2.89 ms (63%), network
        0.56 ms (12%)], LGWR overhead 1.15 ms (25%)``: the writes run in parallel, so the
        shares do not add up to 100 %, and the text says what they are shares of."""

        def part(name: str, v: float | None) -> str:
            s = self.share(v)
            return f"{name} {fmt_num(v)} ms" + (f" ({s:.0%})" if s is not None else "")

        b = self
        queued = f", {part(f'queued behind {b.queue_on}', b.queue_ms)}" if b.queue_ms else ""
        return (
            f"log file sync {fmt_num(b.lfs_ms)} ms, {SHARES}: "
            f"{part('local write', b.local_write_ms)}, "
            f"{part('remote write', b.remote_write_ms)} [{part('standby I/O', b.standby_io_ms)}, "
            f"{part('network', b.network_ms)}]{queued}, {part('LGWR overhead', b.overhead_ms)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class AnalysisState:
    """A consistent snapshot of the analysis after the last fed frame."""

    time: float
    outliers: dict[SeriesKey, Outlier] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    budget: dict[str, Budget] = field(default_factory=dict)
    unprotected: list[Unprotected] = field(default_factory=list)
    """Each destination that did not protect during the run (``sgmon.outcomes``)."""
    explained: list[Explained] = field(default_factory=list)
    """Each incident's share of extra commit time its named causes explain."""

    def worst(self, active_only: bool = True) -> str | None:
        """Worst finding severity (active ones only by default)."""
        return worst(f.severity for f in self.findings if f.active or not active_only)

    def outcomes(self) -> dict[str, list[dict[str, Any]]]:
        """What the incidents left, as ``check``'s json sections: ``unprotected`` (commits
        and redo on no standby, redo not yet received) and ``explained`` (the share of extra
        commit time the named causes explain)."""
        return {
            "unprotected": [u.to_dict() for u in self.unprotected],
            "explained": [e.to_dict() for e in self.explained],
        }

    def left(self) -> list[str]:
        """The same as text lines: one per destination that did not protect, one per
        incident."""
        return [
            *(f"unprotected {u.host} {u.dest}: {u.text()}" for u in self.unprotected),
            *(f"explained {e.host}: {e.text()}" for e in self.explained),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "time": self.time,
            "outliers": [o.to_dict() for o in self.outliers.values()],
            "findings": [f.to_dict() for f in self.findings],
            "budget": {h: b.to_dict() for h, b in self.budget.items()},
        }


@dataclass(slots=True)
class Judgement:
    """The verdict on one frame that every sink reads: grades of its cells and, where the
    analysis runs, its state (outliers, findings, budget) and the findings that opened and
    closed with this frame."""

    frame: Frame
    grader: Grader
    state: AnalysisState | None = None
    opened: tuple[Finding, ...] = ()
    closed: tuple[Finding, ...] = ()
    changed: tuple[Finding, ...] = ()
    """Findings whose severity changed with this frame (each a row of the findings log)."""
    ncpu: int = 0
    _grades: dict[tuple[str, str, str], str] = field(default_factory=dict, repr=False)

    def grade(self, collector: str, instance: str, name: str) -> str:
        """The grade of one cell now: its static limit's, raised by the analysis while the
        series is out of line this tick.  An outlier still open but quiet now does not raise
        it (``lingers`` says so instead)."""
        key = (collector, instance, name)
        try:
            return self._grades[key]
        except KeyError:
            pass
        frame = self.frame
        row = frame.rows(collector).get(instance, {})
        sev = self.grader.grade(
            frame.host, collector, instance, name, row.get(name), row, self.ncpu
        )
        o = self.outlier(collector, instance, name)
        if o is not None and not o.quiet and rank(o.severity) > rank(sev):
            sev = o.severity
        self._grades[key] = sev
        return sev

    def forget_grades(self) -> None:
        """Drop the grades worked out so far (``grade`` works them out again if asked).

        The dashboard keeps a judgement per frame of its history, and the grades a redraw
        asked for cost 7 kB a frame (the demo), a quarter of what an instant of history holds:
        once a newer frame of the host is in, they are let go.
        """
        self._grades.clear()

    def outlier(self, collector: str, instance: str, name: str) -> Any:
        """The analysis' open outlier of this host's series, if any."""
        if self.state is None:
            return None
        return self.state.outliers.get((self.frame.host, collector, instance, name))

    def lingers(self, collector: str, instance: str, name: str) -> bool:
        """Whether the series has an outlier still open but back in line this tick."""
        o = self.outlier(collector, instance, name)
        return o is not None and o.quiet > 0

    def worst(self, cells: Iterable[tuple[str, str, str]]) -> str:
        """The worst grade of several cells."""
        return worst(self.grade(*c) for c in cells) or "ok"

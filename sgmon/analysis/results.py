"""What the analysis hands to its consumers: outliers, findings, the commit-time budget.

Plain dataclasses with ``to_dict`` so the dashboard, the status line, the recorder's findings log,
the exporter and ``sgmon check --format json`` all read the same thing.  Severities are those of
``sgmon.judgement.SEVERITIES``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sgmon.judgement import worst

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

    @property
    def key(self) -> SeriesKey:
        """The series this outlier is about."""
        return (self.host, self.collector, self.instance, self.field)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


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

    @property
    def active(self) -> bool:
        """Still asserted by its rule (within the hold time)."""
        return self.end is None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        d = asdict(self)
        d["series"] = [list(s) for s in self.series]
        return d


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

    def worst(self, active_only: bool = True) -> str | None:
        """Worst finding severity (active ones only by default)."""
        return worst(f.severity for f in self.findings if f.active or not active_only)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "time": self.time,
            "outliers": [o.to_dict() for o in self.outliers.values()],
            "findings": [f.to_dict() for f in self.findings],
            "budget": {h: b.to_dict() for h, b in self.budget.items()},
        }

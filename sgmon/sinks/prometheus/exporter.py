"""The custom collector `sgmon serve` registers: the sink keeps the newest frame of each host
and adds every frame's rates, deltas and histograms to the totals; a scrape turns them into
families and samples nothing itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily, Metric

from sgmon import __version__
from sgmon.contract import RowKind
from sgmon.model import Field, Frame, Kind, Schema, Status, Value
from sgmon.outcomes import Explained, Unprotected
from sgmon.sinks.prometheus.families import Families
from sgmon.sinks.prometheus.naming import (
    CONTRACT,
    COUNTED,
    DB_LABEL,
    dimension,
    gauge_factor,
    info_family,
    info_label,
    kind_of,
    metric_name,
    row_key,
    row_kinds,
)
from sgmon.sinks.prometheus.totals import Key, Totals, bounds_of, cumulative, mean_field
from sgmon.verdicts import Finding, Judgement

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sgmon.config import Config


@dataclass(frozen=True, slots=True)
class Identity:
    """The identity labels a host's series carry: the configuration's name, and each host's
    DB_UNIQUE_NAME where the config names it (else the one its database reports)."""

    dg_config: str = "sgmon"
    db_unique_names: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, config: Config) -> Identity:
        """From a loaded ``sgmon.config.Config``."""
        return cls(config.name, {h.name: h.db_unique_name for h in config.hosts})


def reported_db_name(frame: Frame) -> str | None:
    """The DB_UNIQUE_NAME the host's database reports: a whole row's field named as the identity
    label is (the database collector's own row)."""
    for c, res in frame.collectors.items():
        for kind in row_kinds(c):
            name = res.rows.get(kind.fixed, {}).get(DB_LABEL) if kind.fixed else None
            if name:
                return str(name)
    return None


def exposed(kind: RowKind, per_cpu: bool) -> bool:
    """Whether a row of ``kind`` is exposed: per-CPU rows only on request (the all-CPU row
    always), so the accumulation and the scrape skip the same rows."""
    return per_cpu or not kind.on_request


class FrameCollector:
    """Keeps the newest frame per host and the accumulated counters; answers scrapes."""

    def __init__(
        self,
        schema_of: Callable[[str], Schema],
        identity: Identity | None = None,
        per_cpu: bool = False,
    ) -> None:
        self.schema_of = schema_of
        self.identity = identity or Identity()
        self.per_cpu = per_cpu
        self._lock = threading.Lock()
        self._latest: dict[str, tuple[Frame, Judgement, float]] = {}
        self._dbname: dict[str, str] = {h: n for h, n in self.identity.db_unique_names.items() if n}
        self._totals = Totals()
        self._judged: dict[str, tuple[int, float]] = {}
        """host -> frames judged, and the seconds judging them took."""

    # --- sink side ------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement, judged_in: float | None = None) -> None:
        """Accumulate one frame (the Monitor's dispatcher thread); ``judged_in``: the seconds
        its judgement took, where the caller measured it (``Judge.seconds``)."""
        schema = self.schema_of(frame.host)
        with self._lock:
            self._latest[frame.host] = (frame, judgement, time.monotonic())
            if judged_in is not None:
                n, total = self._judged.get(frame.host, (0, 0.0))
                self._judged[frame.host] = (n + 1, total + judged_in)
            self._learn_db_name(frame)
            for c, res in frame.collectors.items():
                if res.status is Status.OK:
                    self._accumulate(frame, c, schema.get(c, ()))

    def _learn_db_name(self, frame: Frame) -> None:
        """The name the database reports, where the config names none; kept when the database
        goes away."""
        if self.identity.db_unique_names.get(frame.host):
            return
        name = reported_db_name(frame)
        if name:
            self._dbname[frame.host] = name

    def _accumulate(self, frame: Frame, c: str, fields: Sequence[Field]) -> None:
        """Add a collector's rates, deltas and histograms to the totals (none for a series
        never exposed): each from the first row that has its field, at 0 while it has no value,
        so every counter is there from the first scrape that has its row."""
        counted = [f for f in fields if f.kind is not Kind.GAUGE and metric_name(c, f)]
        means = {f.name: mean_field(fields, f) for f in counted if f.kind is Kind.HISTOGRAM}
        for inst, row in frame.collectors[c].rows.items():
            if not exposed(kind_of(c, inst), self.per_cpu):
                continue
            series = (frame.host, c, row_key(inst))
            for f in counted:
                if f.name not in row:
                    continue
                mean = means.get(f.name)
                self._totals.add(
                    (*series, f.name),
                    f,
                    row.get(f.name),
                    frame.interval,
                    None if mean is None else row.get(mean.name),
                )

    # --- scrape side ----------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        """Families for the newest frame of every host (prometheus_client calls this)."""
        now = time.monotonic()
        with self._lock:
            latest = dict(self._latest)
            totals = self._totals.copy()
            dbname = dict(self._dbname)
            judged = dict(self._judged)
        build = GaugeMetricFamily(
            "sgmon_build_info",
            "sgmon's version and the metric contract it follows (docs/metrics.md)",
            labels=["dg_config", "version", "contract"],
        )
        build.add_metric([self.identity.dg_config, __version__, CONTRACT], 1.0)
        yield build
        scrape = _Scrape(totals, self.per_cpu)
        for host, (frame, judgement, seen) in sorted(latest.items()):
            ident = [self.identity.dg_config, dbname.get(host, ""), host]
            fresh = now - seen <= 3 * frame.interval + 1
            scrape.host(ident, frame, self.schema_of(host), fresh)
            if host in judged:
                scrape.judged(ident, *judged[host])
            if judgement.state is not None:
                for f in judgement.state.findings:
                    if f.active and f.host == host:
                        scrape.finding(ident, f)
                for u in judgement.state.unprotected:
                    if u.host == host:
                        scrape.unprotected(ident, u)
                incidents = [e for e in judgement.state.explained if e.host == host]
                if incidents:
                    scrape.explained(ident, incidents[-1])
        yield from scrape.out.families()


class _Scrape:
    """The families of one scrape, from the hosts' newest frames and a copy of the totals."""

    def __init__(self, totals: Totals, per_cpu: bool) -> None:
        self.out = Families()
        self.totals = totals
        self.per_cpu = per_cpu

    def host(self, ident: list[str], frame: Frame, schema: Schema, fresh: bool) -> None:
        """Whether the host and each collector answered, and the values of those that did."""
        out = self.out
        answers = fresh and any(r.status is Status.OK for r in frame.collectors.values())
        out.gauge(
            "sgmon_host_up",
            "1 while the host answers (a recent frame, a collector in it answered), "
            "0 when it went silent",
        ).add(ident, [], 1.0 if answers else 0.0)
        out.gauge("sgmon_host_info", "the role sgmon sees the host in (primary, standby ...)").add(
            ident, [], 1.0, {"role": frame.role}
        )
        for c, res in frame.collectors.items():
            if res.status is Status.UNAVAILABLE:
                continue  # cannot run on that host (not installed there, no such source): no
                # scrape of it fails, and `sgmon collectors` and the dashboard say why
            ok = fresh and res.status is Status.OK
            out.gauge(
                "sgmon_scrape_collector_success",
                "1 if the collector answered in time in the host's latest tick, else 0",
            ).add(ident, [("collector", c)], 1.0 if ok else 0.0)
            if fresh and res.duration_ms is not None:
                out.gauge(
                    "sgmon_scrape_collector_duration_seconds",
                    "how long the collector took in the host's latest tick (a stale one: how "
                    "long it has been busy)",
                ).add(ident, [("collector", c)], res.duration_ms / 1000.0)
            if ok:
                self._values(ident, frame, c, schema.get(c, ()))

    def judged(self, ident: list[str], frames: int, seconds: float) -> None:
        """The time sgmon's judgement (its analysis, mostly) took over the host's frames."""
        self.out.summary(
            "sgmon_analysis_duration_seconds",
            "time sgmon took to judge each frame of the host (grades and analysis), seconds",
        ).add_summary(ident, [], float(frames), seconds)

    def _values(self, ident: list[str], frame: Frame, c: str, fields: Sequence[Field]) -> None:
        """A collector's exposed rows: a sample per exposed field, its text on ``*_info``."""
        texts = [f for f in fields if f.kind is Kind.TEXT and f.export]
        for inst, row in frame.collectors[c].rows.items():
            kind = kind_of(c, inst)
            if not exposed(kind, self.per_cpu):
                continue
            dim = dimension(kind, inst)
            dims = [dim] if dim else []
            series = (frame.host, c, row_key(inst))
            for f in fields:
                name = metric_name(c, f)
                if name is not None:
                    self._value(ident, dims, name, f, row.get(f.name), (*series, f.name))
            vals = {
                info_label(c, f, dim): str(row.get(f.name) or "") for f in texts if f.name in row
            }
            if any(vals.values()):
                self.out.gauge(
                    info_family(c, kind), f"{c}: its text fields as labels (value 1)"
                ).add(ident, dims, 1.0, vals)

    def _value(
        self, ident: list[str], dims: list[tuple[str, str]], name: str, f: Field, v: Value, key: Key
    ) -> None:
        """One exposed field's sample: a gauge's value in its base unit, a counter's or a
        histogram's total."""
        totals = self.totals
        if f.kind is Kind.GAUGE and isinstance(v, int | float):
            self.out.gauge(name, f.help).add(ident, dims, float(v) * gauge_factor(f))
        elif f.kind in COUNTED and key in totals.counters:
            self.out.counter(name, f"{f.help} (accumulated by sgmon since start)").add(
                ident, dims, totals.counters[key]
            )
        elif f.kind is Kind.HISTOGRAM and key in totals.buckets:
            buckets = cumulative(bounds_of(f), totals.buckets[key])
            self.out.histogram(name, f.help).add_histogram(ident, dims, buckets, totals.sums[key])

    def finding(self, ident: list[str], f: Finding) -> None:
        """An active finding of the analysis, its start time as the value."""
        subject = f.key.split(":", 2)[-1] if f.key.count(":") >= 2 else ""
        self.out.gauge(
            "sgmon_finding",
            "an active finding of sgmon's analysis: the time it started (unix seconds); "
            "rule and severity say what sgmon concluded (docs/findings.md)",
        ).add(ident, [("rule", f.rule), ("severity", f.severity), ("subject", subject)], f.start)

    def unprotected(self, ident: list[str], u: Unprotected) -> None:
        """A destination that did not protect: for a SYNC one the commits, redo and seconds
        on no standby since sgmon started (counters); for an ASYNC one the redo it has not
        received now (a gauge)."""
        dims = [("dest", u.dest), ("target", u.target)]
        if not u.sync:
            self.out.gauge(
                "sgmon_unreceived_redo_bytes",
                "redo an ASYNC destination has not received: its transport lag times the redo "
                "the primary made in that time",
            ).add(ident, dims, u.redo_bytes)
            return
        made = "the primary made while this SYNC destination did not protect"
        for name, what, value in (
            ("commits", f"user commits {made}", u.commits),
            ("redo_bytes", f"bytes of redo {made}", u.redo_bytes),
            ("seconds", "seconds this SYNC destination did not protect", u.seconds),
            ("hung_seconds", "of those seconds, the ones commits hung on a silent standby", u.hung),
        ):
            self.out.counter(
                f"sgmon_unprotected_{name}",
                f"{what} (ERROR, transport stopped, RESYNCHRONIZATION), since sgmon started",
            ).add(ident, dims, value)

    def explained(self, ident: list[str], e: Explained) -> None:
        """The latest incident's share of extra commit time its named causes explain."""
        self.out.gauge(
            "sgmon_incident_explained_ratio",
            "share (0-1) of the latest incident's extra commit time (log file sync above its "
            "calm average) that the causes sgmon named explain; under 0.5 the cause is unclear",
        ).add(ident, [], e.share)

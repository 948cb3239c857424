"""Sink and custom collector that expose the latest frame of each host to Prometheus, under
the metric contract written down in ``docs/metrics.md`` (``CONTRACT``).

``prometheus_client`` is imported only in this module, and only `sgmon serve` imports it.  One
private registry, one custom collector reading the newest frame per host (client_python's
"Custom Collectors"), so a scrape never samples anything itself.

What the contract fixes, and why (a default Prometheus scrape, no ``honor_labels``, keeps it):

- Names are ``sgmon_<collector>_<field>_<base unit>``: seconds, bytes, ratios (0..1) instead of
  ms, kB and %, as the Prometheus naming guide has them.
- Labels: the identity ``dg_config``, ``db_unique_name``, ``host`` on every series, and one
  dimension per collector (``event``, ``device``, ``socket``, ``cpu``, ``process``, ``dest``,
  ``thread``), never ``instance`` or ``job``: Prometheus owns those and renames an exporter's to
  ``exported_instance``.  A whole-host row (``all``, ``db``, ``host``) carries no dimension.
- Text that changes (role, open mode, protection mode, version, destination status ...) only as
  labels of ``*_info`` gauges, joined by PromQL; a data series never changes its labels when a
  standby becomes the primary.  No PID in a label (``RFS[5151]`` is ``process="RFS"``, summed).
- Rate and delta fields become **counters**: the sink adds up each interval's increase since the
  exporter started, so ``rate()`` gives the per-second value back and a missed scrape loses
  nothing.
- Histograms (Oracle's wait-event buckets) use one fixed bucket set per metric: Oracle's own
  2^n us bounds in seconds (256 us to 1.05 s), so ``histogram_quantile`` over several instances
  is exact and no ``le`` series appears the first time a bucket is hit.
- Per-CPU rows only when asked (``per_cpu``); the all-CPU row by default.
- ``sgmon_finding`` carries each active finding of the analysis, its start time as the value.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from sgmon import __version__
from sgmon import buckets as bucket_scale
from sgmon.model import Field, Frame, Kind, Schema, Status
from sgmon.rates import bucket_midpoints
from sgmon.verdicts import Finding, Judgement

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sgmon.config import Config

CONTRACT = "1"
"""The version of the metric contract in docs/metrics.md; raised when a name, a label or a
unit changes, and exported as ``sgmon_build_info{contract=...}``."""

IDENTITY = ("dg_config", "db_unique_name", "host")
"""Labels on every series: which Data Guard configuration, which database, which machine."""

DIMENSION: dict[str, str] = {
    "cpu": "cpu",
    "disk": "device",
    "netdev": "device",
    "tcp": "socket",
    "procs": "process",
    "oracle_waits": "event",
    "oracle_trace": "process",
}
"""The label a collector's rows are keyed by; a third-party collector's rows get ``item``."""

ROW_PREFIX = {"dest_": "dest", "thread_": "thread"}
"""oracle_dg keys its rows ``dest_2`` and ``thread_1``: label ``dest="2"``, ``thread="1"``."""

WHOLE_ROWS = frozenset({"all", "db", "host"})
"""Rows that stand for the whole host or database: no dimension label."""

SKIPPED: frozenset[tuple[str, str]] = frozenset(
    {
        ("tcp", "pid"),
        ("procs", "pid"),  # a PID is no metric, and changes with every restart
        ("procs", "state"),  # sampled once a tick: an info series per flip
        ("procs", "wchan"),
        ("procs", "vcsw"),  # the budget: nvcsw (preempted) is the one a starved CPU shows
        ("procs", "read_kb"),  # io_delay says whether a process waits on its disk
        ("procs", "write_kb"),
        ("cpu", "guest"),  # a database host runs no guests
        ("cpu", "gnice"),
        ("disk", "rrqm_s"),  # merges: the request sizes say the same for redo
        ("disk", "wrqm_s"),
        ("oracle_waits", "waits"),  # the histogram's _count
        ("oracle_waits", "time_waited"),  # the histogram's _sum
        ("oracle_waits", "avg"),  # rate(_sum) / rate(_count) of the histogram
        ("oracle_waits", "p50"),  # histogram_quantile over the buckets, exact
        ("oracle_waits", "p90"),
        ("oracle_waits", "p99"),
        ("oracle_waits", "max_bucket"),
        ("oracle_dg", "resp_p99"),
        ("oracle_dg", "lag_datum"),  # a time that moves every second: datum_age_seconds
        ("oracle_dg", "db_unique_name"),  # an identity label already
    }
)
"""Fields the exposition leaves out: derivable from another metric, or churn as a label."""

INFO_LABEL = {
    "role": "oracle_db_role",
    "open_mode": "oracle_db_open_mode",
    "version": "oracle_db_version",
    "instance_name": "oracledb_instance_name",
}
"""oracle_dg's text fields named after the OpenTelemetry oracledbreceiver's resource attributes
(``oracle.db.role`` -> ``oracle_db_role`` as Prometheus translates OTel names)."""

_GAUGE_UNIT: dict[str, tuple[str, float]] = {
    "%": ("ratio", 0.01),
    "ms": ("seconds", 1e-3),
    "us": ("seconds", 1e-6),
    "s": ("seconds", 1.0),
    "B": ("bytes", 1.0),
    "kB": ("bytes", 1024.0),
    "B/s": ("bytes_per_second", 1.0),
    "kB/s": ("bytes_per_second", 1024.0),
    "/s": ("per_second", 1.0),
    "pages/s": ("pages_per_second", 1.0),
    "Mbit/s": ("bits_per_second", 1e6),
}
"""A gauge's unit -> its base-unit suffix and the factor to it."""

_COUNTED_UNIT: dict[str, tuple[str, float]] = {
    "/s": ("", 1.0),
    "B/s": ("bytes", 1.0),
    "kB/s": ("bytes", 1024.0),
    "ms/s": ("seconds", 1e-3),
    "%": ("seconds", 0.01),  # % of one CPU, per second of the interval: CPU seconds
    "pages/s": ("pages", 1.0),
}
"""A rate's unit -> the suffix and factor of what it counts (``_total`` follows)."""

_HIST_SCALE = {"ms": 1e-3, "us": 1e-6, "s": 1.0}
WAIT_BOUNDS = tuple(2.0**e / 1e6 for e in range(8, 21))
"""Oracle's 2^n us bucket bounds from 256 us to 1.05 s, in seconds: the ``le`` of every wait
histogram (shorter waits are counted in the first, longer ones in ``+Inf``)."""
SECOND_BOUNDS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""``le`` of histograms Oracle keeps in whole seconds (V$REDO_DEST_RESP_HISTOGRAM)."""

_PID = re.compile(r"\[\d+\]$")


def metric_stem(collector: str, f: Field) -> str:
    """``sgmon_<collector>_<field>`` with the unit spelled in the field name taken off (``r_s``,
    ``rx_kb``, ``hist``), as the base-unit suffix will say it."""
    name = f.name
    if f.unit.endswith("/s") and name.endswith("_s"):
        name = name[:-2]
    if f.unit.startswith("kB") and name.endswith("kb"):
        name = name[:-2].rstrip("_")
    if f.kind is Kind.HISTOGRAM and name.endswith("hist"):
        name = name[:-4].rstrip("_")
    return re.sub(r"[^a-zA-Z0-9_]", "_", "_".join(p for p in ("sgmon", collector, name) if p))


def _suffixed(stem: str, suffix: str) -> str:
    if not suffix or stem.endswith("_" + suffix) or (suffix == "bytes" and "bytes" in stem):
        return stem
    return f"{stem}_{suffix}"


@functools.cache  # asked for every cell of every frame
def metric_name(collector: str, f: Field) -> str | None:
    """The exposed name of a field under the contract (None: not exposed).  Counters and
    histograms are named without ``_total`` / ``_bucket``, as their families are."""
    if (collector, f.name) in SKIPPED or f.kind is Kind.TEXT:
        return None
    stem = metric_stem(collector, f)
    if f.kind is Kind.GAUGE:
        suffix, _ = _GAUGE_UNIT.get(f.unit, ("", 1.0))
        return _suffixed(stem, suffix)
    if f.kind in (Kind.RATE, Kind.DELTA):
        suffix, _ = _COUNTED_UNIT.get(f.unit, ("", 1.0)) if f.kind is Kind.RATE else ("", 1.0)
        return _suffixed(stem, suffix)
    return _suffixed(stem, "seconds" if f.unit in _HIST_SCALE else "")


def dimension(collector: str, row: str) -> tuple[str, str] | None:
    """The dimension label and value of a row (None for a whole-host row)."""
    if row in WHOLE_ROWS:
        return None
    for prefix, label in ROW_PREFIX.items():
        if collector == "oracle_dg" and row.startswith(prefix):
            return label, row[len(prefix) :]
    return DIMENSION.get(collector, "item"), _PID.sub("", row)


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


_Key = tuple[str, str, str, str]  # host, collector, row (PID taken off), field


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
        self._counters: dict[_Key, float] = {}
        self._hist: dict[_Key, list[float]] = {}
        self._hsum: dict[_Key, float] = {}

    # --- sink side ------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Accumulate one frame (the Monitor's dispatcher thread)."""
        schema = self.schema_of(frame.host)
        with self._lock:
            self._latest[frame.host] = (frame, judgement, time.monotonic())
            dg = frame.collectors.get("oracle_dg")
            name = dg.rows.get("db", {}).get("db_unique_name") if dg else None
            if name and not self.identity.db_unique_names.get(frame.host):
                self._dbname[frame.host] = str(name)  # kept when the database goes away
            for c, res in frame.collectors.items():
                if res.status is not Status.OK:
                    continue
                fields = schema.get(c, ())
                for inst, row in res.rows.items():
                    if not self._exported(c, inst):
                        continue  # no counter kept for a series never exposed
                    row_key = _PID.sub("", inst)
                    for f in fields:
                        v = row.get(f.name)
                        if v is None or isinstance(v, str) or metric_name(c, f) is None:
                            continue
                        key = (frame.host, c, row_key, f.name)
                        if f.kind is Kind.RATE and isinstance(v, int | float):
                            factor = _COUNTED_UNIT.get(f.unit, ("", 1.0))[1]
                            self._counters[key] = (
                                self._counters.get(key, 0.0) + v * frame.interval * factor
                            )
                        elif f.kind is Kind.DELTA and isinstance(v, int | float):
                            self._counters[key] = self._counters.get(key, 0.0) + v
                        elif f.kind is Kind.HISTOGRAM and isinstance(v, list):
                            self._add_histogram(key, f, v, row.get("avg"))

    def _exported(self, collector: str, row: str) -> bool:
        """Whether a row's series are exposed: per-CPU rows only on request (the all-CPU row
        always), so the accumulation and the scrape skip the same rows."""
        return self.per_cpu or collector != "cpu" or row == "all"

    def _add_histogram(self, key: _Key, f: Field, pairs: list, avg: object) -> None:
        scale = _HIST_SCALE.get(f.unit, 1.0)
        bounds = bounds_of(f)
        acc = self._hist.setdefault(key, [0.0] * (len(bounds) + 1))
        total = 0.0
        mid = 0.0
        for (bound, count), m in zip(pairs, bucket_midpoints(pairs), strict=True):
            n = float(count or 0)
            acc[_slot(bounds, None if bound is None else _exact(f, float(bound)) * scale)] += n
            total += n
            mid += n * m * scale
        if isinstance(avg, int | float) and f.unit in _HIST_SCALE:
            mid = avg * scale * total  # the interval's exact time waited (V$ waits)
        self._hsum[key] = self._hsum.get(key, 0.0) + mid

    # --- scrape side ----------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        """Families for the newest frame of every host (prometheus_client calls this)."""
        now = time.monotonic()
        with self._lock:
            latest = dict(self._latest)
            counters = dict(self._counters)
            hist = {k: list(v) for k, v in self._hist.items()}
            hsum = dict(self._hsum)
            dbname = dict(self._dbname)
        build = GaugeMetricFamily(
            "sgmon_build_info",
            "sgmon's version and the metric contract it follows (docs/metrics.md)",
            labels=["dg_config", "version", "contract"],
        )
        build.add_metric([self.identity.dg_config, __version__, CONTRACT], 1.0)
        yield build
        out = _Families()
        for host, (frame, judgement, seen) in sorted(latest.items()):
            ident = [self.identity.dg_config, dbname.get(host, ""), host]
            fresh = now - seen <= 3 * frame.interval + 1
            answers = fresh and any(r.status is Status.OK for r in frame.collectors.values())
            out.gauge(
                "sgmon_host_up",
                "1 while the host answers (a recent frame, a collector in it answered), "
                "0 when it went silent",
            ).add(ident, [], 1.0 if answers else 0.0)
            out.gauge(
                "sgmon_host_info", "the role sgmon sees the host in (primary, standby ...)"
            ).add(ident, [], 1.0, {"role": frame.role})
            schema = self.schema_of(host)
            for c, res in frame.collectors.items():
                ok = fresh and res.status is Status.OK
                out.gauge(
                    "sgmon_collector_success",
                    "1 if the collector answered in time in the host's latest tick, else 0",
                ).add(ident, [("collector", c)], 1.0 if ok else 0.0)
                if ok:
                    self._values(out, ident, frame, c, schema.get(c, ()), counters, hist, hsum)
            if judgement.state is not None:
                for f in judgement.state.findings:
                    if f.active and f.host == host:
                        _finding(out, ident, f)
        yield from out.families()

    def _values(self, out, ident, frame: Frame, c: str, fields, counters, hist, hsum) -> None:
        texts = [f for f in fields if f.kind is Kind.TEXT and (c, f.name) not in SKIPPED]
        for inst, row in frame.collectors[c].rows.items():
            if not self._exported(c, inst):
                continue
            dim = dimension(c, inst)
            dims = [dim] if dim else []
            row_key = _PID.sub("", inst)
            for f in fields:
                name = metric_name(c, f)
                if name is None:
                    continue
                key = (frame.host, c, row_key, f.name)
                v = row.get(f.name)
                if f.kind is Kind.GAUGE and isinstance(v, int | float):
                    factor = _GAUGE_UNIT.get(f.unit, ("", 1.0))[1]
                    out.gauge(name, _help(f)).add(ident, dims, float(v) * factor)
                elif f.kind in (Kind.RATE, Kind.DELTA) and key in counters:
                    out.counter(name, _help(f, " (accumulated by sgmon since start)")).add(
                        ident, dims, counters[key]
                    )
                elif f.kind is Kind.HISTOGRAM and key in hist:
                    fam = out.histogram(name, _help(f))
                    fam.add_histogram(ident, dims, _cumulative(bounds_of(f), hist[key]), hsum[key])
            vals = {
                info_label(c, f.name, dim): str(row.get(f.name) or "")
                for f in texts
                if f.name in row
            }
            if any(vals.values()):
                info = f"sgmon_{c}_{dim[0]}_info" if dim and c == "oracle_dg" else f"sgmon_{c}_info"
                out.gauge(info, f"{c}: its text fields as labels (value 1)").add(
                    ident, dims, 1.0, vals
                )


RESERVED = frozenset({*IDENTITY, "instance", "job", "le", "__name__"})


def info_label(collector: str, field_name: str, dim: tuple[str, str] | None) -> str:
    """The label a text field becomes on ``*_info``: its OpenTelemetry name where there is
    one, and never a label Prometheus, the identity or the row's dimension already holds (a
    third-party collector's ``host`` field is ``<collector>_host``)."""
    name = INFO_LABEL.get(field_name) or re.sub(r"[^a-zA-Z0-9_]", "_", field_name)
    if name in RESERVED or (dim and name == dim[0]) or name.startswith("__"):
        return f"{collector}_{name.lstrip('_')}"
    return name


def _finding(out: _Families, ident: list[str], f: Finding) -> None:
    subject = f.key.split(":", 2)[-1] if f.key.count(":") >= 2 else ""
    out.gauge(
        "sgmon_finding",
        "an active finding of sgmon's analysis: the time it started (unix seconds); "
        "rule and severity say what sgmon concluded (docs/findings.md)",
    ).add(ident, [("rule", f.rule), ("severity", f.severity), ("subject", subject)], f.start)


def bounds_of(f: Field) -> tuple[float, ...]:
    """The fixed ``le`` bounds (seconds) of a histogram field."""
    return SECOND_BOUNDS if f.unit == "s" else WAIT_BOUNDS


def _exact(f: Field, bound: float) -> float:
    """A bucket's upper bound in the field's unit: the exact bound of an Oracle ms bucket."""
    if f.unit == "ms":
        return bucket_scale.exact_ms(bucket_scale.exponent(bound))
    return bound


def _slot(bounds: tuple[float, ...], upper: float | None) -> int:
    """The fixed bucket that holds a source bucket ending at ``upper`` (None: open)."""
    if upper is None:
        return len(bounds)
    return next((i for i, b in enumerate(bounds) if upper <= b * (1 + 1e-9)), len(bounds))


def _cumulative(bounds: tuple[float, ...], acc: list[float]) -> list[tuple[str, float]]:
    out = []
    running = 0.0
    for b, n in zip((*bounds, float("inf")), acc, strict=True):
        running += n
        out.append(("+Inf" if b == float("inf") else floatToGoString(b), running))
    return out


def _help(f: Field, extra: str = "") -> str:
    return f"{f.help}{extra}"


class _Family:
    """One family whose samples may carry different dimension labels (``dest`` or ``thread``
    rows of the same collector), with any repeat of a label set dropped."""

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self._seen: set[tuple] = set()

    def _new(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        extra: Mapping[str, str] | None = None,
    ) -> dict[str, str] | None:
        """The sample's labels, or None when this label set was added already."""
        labels = dict(zip(IDENTITY, ident, strict=True))
        labels.update(dims)
        labels.update(extra or {})
        sig = tuple(sorted(labels.items()))
        if sig in self._seen:
            return None
        self._seen.add(sig)
        return labels

    def add(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        value: float,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        labels = self._new(ident, dims, extra)
        if labels is None:
            return
        suffix = "_total" if self.metric.type == "counter" else ""
        self.metric.add_sample(self.metric.name + suffix, labels, value)

    def add_histogram(
        self,
        ident: list[str],
        dims: Iterable[tuple[str, str]],
        buckets: list[tuple[str, float]],
        sum_value: float,
    ) -> None:
        labels = self._new(ident, dims)
        if labels is None:
            return
        name = self.metric.name
        for le, n in buckets:
            self.metric.add_sample(name + "_bucket", {**labels, "le": le}, n)
        self.metric.add_sample(name + "_count", labels, buckets[-1][1])
        self.metric.add_sample(name + "_sum", labels, sum_value)


class _Families:
    """The families of one scrape, in order of first use."""

    def __init__(self) -> None:
        self._by_name: dict[str, _Family] = {}

    def _get(self, name: str, make: Callable[[], Metric]) -> _Family:
        fam = self._by_name.get(name)
        if fam is None:
            fam = self._by_name[name] = _Family(make())
        return fam

    def gauge(self, name: str, doc: str) -> _Family:
        """A gauge family."""
        return self._get(name, lambda: GaugeMetricFamily(name, doc))

    def counter(self, name: str, doc: str) -> _Family:
        """A counter family (samples named ``<name>_total``)."""
        return self._get(name, lambda: CounterMetricFamily(name, doc))

    def histogram(self, name: str, doc: str) -> _Family:
        """A histogram family."""
        return self._get(name, lambda: HistogramMetricFamily(name, doc))

    def families(self) -> Iterator[Metric]:
        """Every family with at least one sample."""
        return (f.metric for f in self._by_name.values() if f.metric.samples)

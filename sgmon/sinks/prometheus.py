"""Sink and custom collector that expose the latest frame of each host to Prometheus.

``prometheus_client`` is imported only in this module, and only `sgmon serve` imports it.  One
private registry, one custom collector reading the newest frame per host (client_python's
"Custom Collectors"), so a scrape never samples anything itself.

Names are ``sgmon_<collector>_<column>`` (``Field.column``: the field with its unit), HELP is the
field's meaning, labels are ``host``, ``role``, ``instance``.

- Gauges are gauges.
- Rate and delta fields become **counters**: sgmon keeps no raw kernel or V$ counter in its frames
  (they are derived per interval at the source, across resets and wraps), so the sink adds up
  each interval's increase (``rate x interval`` or the delta) since the exporter started:
  ``sgmon_cpu_cswch_total``, ``sgmon_netdev_rx_kb_total``.  ``rate()`` in PromQL then gives the
  per-second value back, and a missed scrape loses nothing, which an exported per-second gauge
  would.  The unit in the name is the counted unit (``/s`` dropped: ``ms/s`` -> ``_ms``).
- Histogram fields (Oracle's wait-event buckets) are real Prometheus histograms: each interval's
  bucket counts are accumulated, ``le`` in seconds at the bucket's exact bound on the micro scale
  (``sgmon.buckets``: Oracle's "<256ms" bucket ends at 262.144 ms, so ``le="0.262144"``, and an
  11.2 milli bucket folds onto the same ``le``, so a mixed fleet aggregates), cumulative over
  buckets, ``+Inf`` holding everything.  ``_sum`` uses the collector's ``avg`` field times the
  interval's count where there is one (exact for V$ waits), otherwise each bucket's midpoint
  (Oracle buckets are ``[b/2, b)``).
- Text fields go into one ``sgmon_<collector>_info`` gauge (value 1) as labels.
- ``sgmon_collector_success`` and ``sgmon_collector_duration_seconds`` per host and collector;
  a collector that is stale, failing, or whose host sent nothing for 3 intervals reports
  success 0 and no values, rather than old numbers.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from sgmon import buckets as bucket_scale
from sgmon.grading import rank
from sgmon.model import Field, Frame, Kind, Schema, Status, column_name
from sgmon.rates import bucket_midpoints
from sgmon.verdicts import Judgement

_SCALE_TO_SECONDS = {"ms": 1e-3, "us": 1e-6, "s": 1.0}


def metric_name(collector: str, column: str) -> str:
    """``sgmon_<collector>_<column>`` with anything Prometheus rejects replaced by ``_``."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", f"sgmon_{collector}_{column}")


def counter_column(f: Field) -> str:
    """The counted quantity's column: the field with its unit minus the ``/s``."""
    unit = f.unit[:-2] if f.unit.endswith("/s") else f.unit
    return column_name(f.name, unit)


class FrameCollector:
    """Keeps the newest frame per host and the accumulated counters; answers scrapes."""

    def __init__(self, schema_of: Callable[[str], Schema]) -> None:
        self.schema_of = schema_of
        self._lock = threading.Lock()
        self._latest: dict[str, tuple[Frame, Judgement, float]] = {}
        self._counters: dict[tuple[str, str, str, str], float] = {}
        self._hist: dict[tuple[str, str, str, str], dict[float, float]] = {}
        self._hsum: dict[tuple[str, str, str, str], float] = {}

    # --- sink side ------------------------------------------------------------------------

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Accumulate one frame (the Monitor's dispatcher thread)."""
        schema = self.schema_of(frame.host)
        with self._lock:
            self._latest[frame.host] = (frame, judgement, time.monotonic())
            for c, res in frame.collectors.items():
                if res.status is not Status.OK:
                    continue
                fields = schema.get(c, ())
                for inst, row in res.rows.items():
                    for f in fields:
                        v = row.get(f.name)
                        if v is None or isinstance(v, str):
                            continue
                        key = (frame.host, c, inst, f.name)
                        if f.kind is Kind.RATE and isinstance(v, int | float):
                            self._counters[key] = self._counters.get(key, 0.0) + v * frame.interval
                        elif f.kind is Kind.DELTA and isinstance(v, int | float):
                            self._counters[key] = self._counters.get(key, 0.0) + v
                        elif f.kind is Kind.HISTOGRAM and isinstance(v, list):
                            self._add_histogram(key, f, v, row.get("avg"))

    def _add_histogram(self, key, f: Field, buckets: list, avg) -> None:
        scale = _SCALE_TO_SECONDS.get(f.unit, 1.0)
        acc = self._hist.setdefault(key, {})
        total = 0.0
        mid = 0.0
        for (bound, count), m in zip(buckets, bucket_midpoints(buckets), strict=True):
            b = float("inf") if bound is None else _le(f, float(bound)) * scale
            acc[b] = acc.get(b, 0.0) + (count or 0)
            total += count or 0
            mid += (count or 0) * m * scale
        if isinstance(avg, int | float) and f.unit in _SCALE_TO_SECONDS:
            mid = avg * scale * total
        self._hsum[key] = self._hsum.get(key, 0.0) + mid

    # --- scrape side ----------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        """Families for the newest frame of every host (prometheus_client calls this)."""
        now = time.monotonic()
        with self._lock:
            latest = dict(self._latest)
            counters = dict(self._counters)
            hist = {k: dict(v) for k, v in self._hist.items()}
            hsum = dict(self._hsum)
        success = GaugeMetricFamily(
            "sgmon_collector_success",
            "1 if the collector answered in time in the host's latest tick, else 0",
            labels=["host", "role", "collector"],
        )
        duration = GaugeMetricFamily(
            "sgmon_collector_duration_seconds",
            "time the collector took in the host's latest tick",
            labels=["host", "role", "collector"],
        )
        grades = GaugeMetricFamily(
            "sgmon_grade",
            "the grade sgmon gives the value now, as the dashboard and status line colour it: "
            "0 ok, 1 info, 2 warn, 3 crit (fields that have a limit)",
            labels=["host", "role", "collector", "instance", "field"],
        )
        families: dict[str, Metric] = {}
        for host, (frame, judgement, seen) in sorted(latest.items()):
            fresh = now - seen <= 3 * frame.interval + 1
            schema = self.schema_of(host)
            for c, res in frame.collectors.items():
                ok = fresh and res.status is Status.OK
                success.add_metric([host, frame.role, c], 1.0 if ok else 0.0)
                if res.duration_ms is not None and fresh:
                    duration.add_metric([host, frame.role, c], res.duration_ms / 1000)
                if ok:
                    self._values(families, frame, c, schema.get(c, ()), counters, hist, hsum)
                    _grades(grades, judgement, c, schema.get(c, ()))
        yield success
        yield duration
        yield grades
        yield from families.values()

    def _values(self, families, frame: Frame, c: str, fields, counters, hist, hsum) -> None:
        labels = ["host", "role", "instance"]
        texts = [f for f in fields if f.kind is Kind.TEXT]
        for inst, row in frame.collectors[c].rows.items():
            base = [frame.host, frame.role, inst]
            for f in fields:
                key = (frame.host, c, inst, f.name)
                v = row.get(f.name)
                if f.kind is Kind.GAUGE and isinstance(v, int | float):
                    fam = families.setdefault(
                        metric_name(c, f.column),
                        GaugeMetricFamily(metric_name(c, f.column), _help(f), labels=labels),
                    )
                    fam.add_metric(base, float(v))
                elif f.kind in (Kind.RATE, Kind.DELTA) and key in counters:
                    name = metric_name(c, counter_column(f))
                    fam = families.setdefault(
                        name,
                        CounterMetricFamily(
                            name, _help(f, " (accumulated by sgmon since start)"), labels=labels
                        ),
                    )
                    fam.add_metric(base, counters[key])
                elif f.kind is Kind.HISTOGRAM and key in hist:
                    secs = "seconds" if f.unit in _SCALE_TO_SECONDS else f.unit
                    name = metric_name(c, column_name(f.name, secs) if secs else f.name)
                    fam = families.setdefault(
                        name, HistogramMetricFamily(name, _help(f), labels=labels)
                    )
                    fam.add_metric(base, _cumulative(hist[key]), hsum.get(key, 0.0))
            if texts:
                vals = {f.name: str(row.get(f.name) or "") for f in texts}
                if any(vals.values()):
                    name = metric_name(c, "info")
                    fam = families.setdefault(
                        name,
                        GaugeMetricFamily(
                            name, f"{c} text fields as labels", labels=[*labels, *vals]
                        ),
                    )
                    fam.add_metric([*base, *vals.values()], 1.0)


def _grades(family: GaugeMetricFamily, judgement: Judgement, c: str, fields) -> None:
    """The Judge's grade of every cell of a collector that has a limit."""
    frame, grader = judgement.frame, judgement.grader
    limited = [f.name for f in fields if grader.may_limit(frame.host, c, f.name)]
    for inst, row in frame.collectors[c].rows.items():
        for name in limited:
            if name in row:
                sev = judgement.grade(c, inst, name)
                family.add_metric([frame.host, frame.role, c, inst, name], float(rank(sev)))


def _le(f: Field, bound: float) -> float:
    """A bucket's ``le`` in the field's unit: the exact bound of an Oracle ms bucket."""
    if f.unit == "ms":
        return bucket_scale.exact_ms(bucket_scale.exponent(bound))
    return bound


def _help(f: Field, extra: str = "") -> str:
    unit = f" [{f.unit}]" if f.unit else ""
    return f"{f.help}{unit}{extra}"


def _cumulative(acc: dict[float, float]) -> list[tuple[str, float]]:
    out = []
    running = 0.0
    for b in sorted(acc):
        running += acc[b]
        if b != float("inf"):
            out.append((floatToGoString(b), running))
    out.append(("+Inf", running))
    return out


class Exporter:
    """The HTTP endpoint: a private registry holding one FrameCollector."""

    def __init__(self, schema_of: Callable[[str], Schema], addr: str, port: int) -> None:
        from prometheus_client import CollectorRegistry, start_http_server

        self.collector = FrameCollector(schema_of)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)  # type: ignore[arg-type]
        self.server, self.thread = start_http_server(port, addr=addr, registry=self.registry)

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Sink: hand the frame and its verdict to the collector."""
        self.collector(frame, judgement)

    def close(self) -> None:
        """Stop listening."""
        self.server.shutdown()
        self.server.server_close()

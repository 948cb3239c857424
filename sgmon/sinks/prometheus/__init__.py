"""Sink and custom collector that expose the latest frame of each host to Prometheus, under
the metric contract written down in ``docs/metrics.md`` (``CONTRACT``).

``prometheus_client`` is imported only in this package, and only `sgmon serve` imports it.  One
private registry, one custom collector reading the newest frame per host (client_python's
"Custom Collectors"), so a scrape never samples anything itself: ``naming`` says what a field
and a row are called once exposed, ``totals`` what the sink adds up between scrapes,
``families`` how a scrape's samples are grouped, ``exporter`` the collector itself.

What the contract fixes, and why (a default Prometheus scrape, no ``honor_labels``, keeps it):

- Names are ``sgmon_<collector>_<field>_<base unit>``: seconds, bytes, ratios (0..1) instead of
  ms, kB and %, as the Prometheus naming guide has them.
- Labels: the identity ``dg_config``, ``db_unique_name``, ``host`` on every series, and one
  dimension per kind of row, as its collector declares it (``event``, ``device``, ``socket``,
  ``cpu``, ``process``, ``dest``, ``thread``; ``item`` for a third-party collector's), never
  ``instance`` or ``job``: Prometheus owns those and renames an exporter's to
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

from sgmon.sinks.prometheus.exporter import FrameCollector, Identity
from sgmon.sinks.prometheus.naming import CONTRACT, metric_name

__all__ = ["CONTRACT", "FrameCollector", "Identity", "metric_name"]

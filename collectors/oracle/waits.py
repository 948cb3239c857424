"""`oracle_waits`: wait events of the commit path, with this interval's latency histogram.

Instances: exact Oracle event names (``log file sync``, ``log file parallel write``,
``SYNC Remote Write``, ``Redo Transport MISC``, ``RFS write`` ...; the list is
``queries.EVENTS_12C``/``EVENTS_11G`` plus every ``RFS%`` event plus the config's ``events``).
Counts and times come from V$SYSTEM_EVENT (``time_waited_micro``, never the centisecond columns);
the histogram is the delta of the cumulative V$EVENT_HISTOGRAM_MICRO buckets (12.1+) or
V$EVENT_HISTOGRAM (11.2), with bounds converted to ms (1024 us -> 1.024).  A bucket bound b
holds waits in [b/2, b).
Percentiles are read from the interval's buckets (seed 000, Table 5: averages lie) and given as
the name Oracle gives their bucket (``sgmon.buckets``), so p99 = 256 means "99% of this
interval's waits took less than 256 ms" on 11.2's milli view and 12.1+'s micro view alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from collectors.oracle.base import OracleCollector
from sgmon import buckets
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.oracle import queries
from sgmon.oracle.session import Session
from sgmon.rates import counter_delta, histogram_delta

G, R, H = Kind.GAUGE, Kind.RATE, Kind.HISTOGRAM

FIELDS = (
    Field("waits", "/s", R, "waits per second (V$SYSTEM_EVENT.TOTAL_WAITS)", export=False),
    Field("time_waited", "ms/s", R, "milliseconds waited per second, all sessions", export=False),
    Field(
        "avg",
        "ms",
        G,
        "average wait of the interval (skewed by commit batching)",
        combine="per:waits",
        export=False,
    ),
    Field("hist", "ms", H, "waits of the interval per bucket [[upper_ms, count]]; [b/2, b)"),
    Field(
        "p50",
        "ms",
        G,
        "median wait: under this bucket bound (Oracle's name: 256 = <256ms)",
        combine="q:0.5:hist",
        export=False,
    ),
    Field(
        "p90",
        "ms",
        G,
        "90th percentile wait: under this bucket bound (Oracle's name)",
        combine="q:0.9:hist",
        export=False,
    ),
    Field(
        "p99",
        "ms",
        G,
        "99th percentile wait: under this bucket bound (Oracle's name)",
        combine="q:0.99:hist",
        export=False,
    ),
    Field(
        "max_bucket",
        "ms",
        G,
        "the highest bucket hit in the interval (Oracle's name)",
        combine="q:max:hist",
        export=False,
    ),
)


class OracleWaitsCollector(OracleCollector):
    """Commit-path wait events and their interval histograms (V$SYSTEM_EVENT, V$EVENT_HISTOGRAM)."""

    name = "oracle_waits"
    rows = (RowKind("event", label="event"),)
    description = "Oracle wait events of the SYNC commit path, with interval histograms"
    fields = FIELDS

    def read(self, s: Session) -> Rows:
        """Cumulative totals and buckets per event."""
        hist = s.query("histogram")
        unit_ms = queries.histogram_unit_us(s.text("histogram") or "") / 1000.0
        return raw_rows(s.query("system_event") or (), hist, unit_ms)

    def compute(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Rates, the interval histogram and its percentiles."""
        out: Rows = {}
        for event, raw in cur.items():
            before = (prev or {}).get(event) or {}
            dw = counter_delta(before.get("waits"), raw.get("waits"))  # type: ignore[arg-type]
            dtm = counter_delta(before.get("time_waited"), raw.get("time_waited"))  # type: ignore[arg-type]
            hist = histogram_delta(before.get("hist"), raw.get("hist"))  # type: ignore[arg-type]
            row: dict[str, Value] = {
                "waits": dw / dt if dw is not None and dt > 0 else None,
                "time_waited": round(dtm / dt, 3) if dtm is not None and dt > 0 else None,
                "avg": round(dtm / dw, 4) if dw and dtm is not None else None,
                "hist": hist,
            }
            row.update(percentiles(hist))
            out[event] = row
        return out


def raw_rows(events: Iterable[Sequence], hist: Iterable[Sequence] | None, unit_ms: float) -> Rows:
    """Cumulative rows per event from (event, total_waits, time_waited_micro) rows and
    (event, bucket bound, count) rows whose bound is in ``unit_ms``; None ``hist``: not read.
    Shared with the AWR importer, whose DBA_HIST views hold the same columns."""
    rows: Rows = {}
    for event, waits, micro in events:
        rows[event] = {"waits": waits, "time_waited": round((micro or 0) / 1000.0, 3), "hist": None}
    if hist is not None:
        for row in rows.values():  # read, but no bucket hit yet: an empty histogram
            row["hist"] = []
        for event, bound, count in hist:
            row = rows.setdefault(event, {"waits": None, "time_waited": None, "hist": None})
            kept = row["hist"] if isinstance(row["hist"], list) else []
            kept.append([round(bound * unit_ms, 6), count])
            row["hist"] = kept
    return rows


def percentiles(hist: list[list] | None) -> dict[str, Value]:
    """p50/p90/p99 and the highest bucket hit, from interval buckets (None when no waits)."""
    return {
        "p50": buckets.percentile(hist, 0.50),
        "p90": buckets.percentile(hist, 0.90),
        "p99": buckets.percentile(hist, 0.99),
        "max_bucket": buckets.highest(hist),
    }

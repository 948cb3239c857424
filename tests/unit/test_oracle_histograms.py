"""Bucket deltas and percentiles against the histograms printed in seed 000 and seed 001.

The figures are typed in from the seeds; each test feeds them as cumulative V$ buckets (a
baseline plus the period), through the stand-in and the real collector where the view is the
source, and checks what a DBA reads off the table.
"""

from __future__ import annotations

from collectors.oracle.waits import OracleWaitsCollector
from sgmon.oracle.session import Session
from sgmon.rates import histogram_delta, percentile_from_buckets
from sgmon.sim.standin import StandIn

# seed 000, Table 5: V$EVENT_HISTOGRAM for 'log file sync' over one period
TABLE5 = [(1, 17610), (2, 43670), (4, 8394), (8, 4072), (16, 4344), (32, 2109), (64, 460), (128, 6)]
TABLE5_PCT = [21.83, 54.14, 10.41, 5.05, 5.39, 2.61, 0.57, 0.01]
BASELINE = [(1, 900_000), (2, 1_200_000), (4, 300_000), (8, 90_000), (16, 40_000), (32, 9_000)]


def _cumulative(base: list[tuple[int, int]], period: list[tuple[int, int]]) -> list[list]:
    total = dict(base)
    for b, c in period:
        total[b] = total.get(b, 0) + c
    return [[b, total[b]] for b in sorted(total)]


def test_table5_percent_column_matches_the_counts():
    total = sum(c for _, c in TABLE5)
    for (_, count), pct in zip(TABLE5, TABLE5_PCT, strict=True):
        assert round(100 * count / total, 2) == pct


def test_table5_interval_histogram_and_percentiles():
    prev = [[b, c] for b, c in BASELINE]
    hist = histogram_delta(prev, _cumulative(BASELINE, TABLE5))
    assert hist == [[b, c] for b, c in TABLE5]
    # "92% of the log file sync wait times are less than 8ms ... vast majority less than 4ms"
    assert percentile_from_buckets(hist, 0.50) == 2
    assert percentile_from_buckets(hist, 0.86) == 4
    assert percentile_from_buckets(hist, 0.90) == 8
    assert percentile_from_buckets(hist, 0.99) == 32
    assert percentile_from_buckets(hist, 1.0) == 128


def test_table5_through_the_collector():
    """The same period published as cumulative V$EVENT_HISTOGRAM rows of an 11.2 stand-in."""
    db = StandIn(version="11.2.0.4.0")
    c = OracleWaitsCollector({"session": Session(connect=db.connect)})
    c.open()
    waits0 = sum(n for _, n in BASELINE)
    db.publish_event("log file sync", waits0, waits0 * 1500.0, milli=BASELINE)
    first = c.sample()
    period = sum(n for _, n in TABLE5)
    db.publish_event(
        "log file sync",
        waits0 + period,
        waits0 * 1500.0 + period * 3100.0,
        milli=_cumulative(BASELINE, TABLE5),
    )
    row = c.derive(first, c.sample(), 30.0)["log file sync"]
    assert row["hist"] == [[float(b), n] for b, n in TABLE5]
    assert (row["p50"], row["p90"], row["p99"], row["max_bucket"]) == (2, 8, 32, 128)
    assert row["waits"] == period / 30.0
    assert row["avg"] == 3.1  # the average the table warns about: it says nothing of the tail


# seed 001: AWR "% of waits" rows over a 30 s snapshot
SEED001_LFS = (15404, {32: 94.8, 64: 0.7, 128: 0.5, 256: 3.7, 512: 0.2, 1024: 0.2})
SEED001_SRW = (6335, {32: 99.1, 64: 0.0, 128: 0.0, 256: 0.8, 512: 0.0, 1024: 0.0})


def _from_pct(total: int, pct: dict[int, float]) -> list[list]:
    return [[b, round(total * p / 100)] for b, p in pct.items()]


def test_seed001_log_file_sync_outliers_in_the_256ms_bucket():
    total, pct = SEED001_LFS
    hist = histogram_delta([[32, 0]], _from_pct(total, pct))
    assert hist is not None
    assert dict(hist)[256] == 570  # "15404/100*3.7 = 570"
    assert percentile_from_buckets(hist, 0.95) == 64
    assert percentile_from_buckets(hist, 0.99) == 256
    assert percentile_from_buckets(hist, 0.50) == 32


def test_seed001_sync_remote_write_tail_hidden_from_p99_but_not_from_max_bucket():
    from collectors.oracle.waits import percentiles

    total, pct = SEED001_SRW
    hist = histogram_delta([[32, 0]], _from_pct(total, pct))
    p = percentiles(hist)
    assert p["p99"] == 32  # 99.1% under 32 ms ...
    assert p["max_bucket"] == 256  # ... and the 200 ms RTO stalls still show


def test_a_restart_gives_no_interval_histogram():
    assert histogram_delta([[1, 10], [2, 5]], [[1, 3], [2, 5]]) is None
    assert percentile_from_buckets(None, 0.99) is None

"""Counter arithmetic: wrap, reset, histogram deltas and bucket percentiles."""

from __future__ import annotations

import pytest

from sgmon.collector import derive_by_kind
from sgmon.model import Field, Kind
from sgmon.rates import (
    bucket_midpoints,
    counter_delta,
    counter_rate,
    histogram_delta,
    percentile_from_buckets,
)


def test_counter_delta_plain_and_unknown() -> None:
    assert counter_delta(100, 250) == 150
    assert counter_delta(None, 5) is None
    assert counter_delta(5, None) is None


def test_counter_wraps_at_2_pow_32() -> None:
    before = 2**32 - 10
    assert counter_delta(before, 5, wrap_bits=32) == 15
    assert counter_delta(7, 7, wrap_bits=32) == 0


def test_counter_reset_without_wrap_is_unknown() -> None:
    assert counter_delta(1_000_000, 12) is None


def test_counter_rate_per_second_unknown_without_time_or_after_a_reset() -> None:
    assert counter_rate(100, 250, 2.0) == 75.0
    assert counter_rate(2**32 - 10, 5, 0.5, wrap_bits=32) == 30.0
    assert counter_rate(100, 250, 0.0) is None
    assert counter_rate(1_000, 12, 1.0) is None and counter_rate(None, 5, 1.0) is None


def test_derive_by_kind_rates_deltas_resets_and_new_instances() -> None:
    fields = (
        Field("ms", "ms/s", Kind.RATE, "wrapping ms counter"),
        Field("pkts", "/s", Kind.RATE, "packets"),
        Field("changes", "count", Kind.DELTA, "carrier changes"),
        Field("speed", "Mbit/s", Kind.GAUGE, "speed"),
        Field("state", "", Kind.TEXT, "state"),
    )
    prev = {"a": {"ms": 2**32 - 100, "pkts": 1000, "changes": 3, "speed": 10, "state": "up"}}
    cur = {
        "a": {"ms": 100, "pkts": 1500, "changes": 4, "speed": 1000, "state": "up"},
        "b": {"ms": 1, "pkts": 1, "changes": 2, "speed": 10, "state": "down"},
    }
    out = derive_by_kind(fields, prev, cur, 2.0, {"ms": 32})
    assert out["a"] == {"ms": 100.0, "pkts": 250.0, "changes": 1, "speed": 1000, "state": "up"}
    # an instance that was not there before (new or re-created): no rate this interval
    assert out["b"] == {"ms": None, "pkts": None, "changes": None, "speed": 10, "state": "down"}
    # the interface came back with restarted counters: unknown, never a negative or huge rate
    again = derive_by_kind(fields, cur, {"b": {"ms": 0, "pkts": 0, "changes": 0}}, 1.0, {"ms": 32})
    assert again["b"]["pkts"] is None and again["b"]["changes"] is None
    assert again["b"]["ms"] == 2**32 - 1  # a declared 32-bit field is read as one wrap


def test_histogram_delta() -> None:
    before = [[1, 10], [2, 5], [4, 0], [None, 1]]
    after = [[1, 12], [2, 5], [4, 3], [None, 1]]
    assert histogram_delta(before, after) == [[1, 2], [2, 0], [4, 3], [None, 0]]
    assert histogram_delta(None, after) is None
    # a bucket seen for the first time counts from zero
    assert histogram_delta([[1, 10]], [[1, 10], [8, 2]]) == [[1, 0], [8, 2]]
    # an instance restart (a bucket went backwards): unknown, not a partial histogram
    assert histogram_delta(after, before) is None


@pytest.mark.parametrize(
    ("q", "bound"),
    [(0.5, 2.0), (0.9, 4.0), (0.99, 4.0), (1.0, 4.0), (0.01, 2.0)],
)
def test_percentile_from_buckets(q: float, bound: float) -> None:
    buckets = [[1, 0], [2, 50], [4, 50], [8, 0]]
    assert percentile_from_buckets(buckets, q) == bound


def test_percentile_tail_in_open_bucket_and_empty() -> None:
    # AWR style: 99 fast waits and one in the open last bucket above 256 ms
    buckets = [[1, 99], [256, 0], [None, 1]]
    assert percentile_from_buckets(buckets, 0.5) == 1.0
    assert percentile_from_buckets(buckets, 0.999) == 512.0
    assert percentile_from_buckets([[1, 0], [2, 0]], 0.99) is None
    assert percentile_from_buckets(None, 0.5) is None


def test_sparse_rows_keep_only_their_own_fields() -> None:
    fields = (
        Field("rtt", "ms", Kind.GAUGE, "a socket's"),
        Field("retransmits", "count", Kind.DELTA, "a socket's"),
        Field("timeouts", "/s", Kind.RATE, "the host's"),
    )
    prev = {"sock": {"rtt": 1.0, "retransmits": 5}, "host": {"timeouts": 10}}
    cur = {"sock": {"rtt": 2.0, "retransmits": 7}, "host": {"timeouts": 16}}
    out = derive_by_kind(fields, prev, cur, 2.0, sparse=True)
    assert out == {"sock": {"rtt": 2.0, "retransmits": 2}, "host": {"timeouts": 3.0}}
    dense = derive_by_kind(fields, prev, cur, 2.0)
    assert dense["host"] == {"rtt": None, "retransmits": None, "timeouts": 3.0}
    assert list(dense["sock"]) == ["rtt", "retransmits", "timeouts"]  # declared order


def test_bucket_midpoints_stand_in_the_middle_of_power_of_two_buckets() -> None:
    # a wait in (1, 2] ms is 1.5 ms on average if spread evenly; the open bucket after 256 ms
    # is taken as (256, 512]
    assert bucket_midpoints([[2, 5], [256, 1], [None, 1]]) == [1.5, 192.0, 384.0]

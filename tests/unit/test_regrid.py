"""Hosts sampled at different steps on one grid: the combination rules, and the analysis on an
archive whose hosts come at OSWatcher's 30 s and a coarser 60 s, as imports do."""

from __future__ import annotations

import pytest

from sgmon.model import CollectorResult, Field, Frame, Kind, Status
from sgmon.regrid import GAP_STEPS, common_step, is_gap, needs_regrid, regrid, usual_step

FIELDS = (
    Field("util", "%", Kind.GAUGE, ""),
    Field("w_s", "/s", Kind.RATE, ""),
    Field("waits", "count", Kind.DELTA, ""),
    Field("hist", "ms", Kind.HISTOGRAM, ""),
    Field("state", "", Kind.TEXT, ""),
)


def frame(t: float, interval: float, i: int, host: str = "h") -> Frame:
    row = {
        "util": float(i),
        "w_s": 10.0 * i,
        "waits": i,
        "hist": [[1.024, i], [2.048, 1], [None, 0]],
        "state": f"s{i}",
    }
    return Frame(host, t, i, interval, {"disk": CollectorResult(Status.OK, rows={"sdb": row})})


def test_frames_of_one_interval_combine_as_their_kind_says() -> None:
    """Ten 1 s frames onto a 10 s grid: means for gauges and rates, sums for deltas and
    buckets, the last text; the grid interval holds the frames whose end falls in it."""
    frames = [frame(100.0 + i, 1.0, i) for i in range(1, 21)]  # ends 101 .. 120
    out = regrid(frames, {"disk": FIELDS}, 10.0)
    assert [(f.time, f.interval) for f in out] == [(110.0, 10.0), (120.0, 10.0)]
    first = out[0].rows("disk")["sdb"]
    assert first["util"] == pytest.approx(sum(range(1, 11)) / 10)
    assert first["w_s"] == pytest.approx(10.0 * sum(range(1, 11)) / 10)
    assert first["waits"] == sum(range(1, 11))
    assert first["hist"] == [[1.024, sum(range(1, 11))], [2.048, 10], [None, 0]]
    assert first["state"] == "s10"
    assert out[1].rows("disk")["sdb"]["waits"] == sum(range(11, 21))


def test_only_mixed_steps_are_regridded() -> None:
    same = {"a": [frame(t, 1.0, 1, "a") for t in (1, 2, 3)], "b": [frame(2, 1.0, 1, "b")]}
    assert not needs_regrid(same)
    mixed = {"a": same["a"], "b": [frame(30.0, 30.0, 1, "b")]}
    assert needs_regrid(mixed) and common_step(mixed) == 30.0
    # one host with two sources on their own marks: sar's 600 s and an AWR at 1800 s
    one = {"a": [frame(600.0 * k, 600.0, k, "a") for k in range(1, 4)] + [frame(1700, 1800, 9)]}
    assert needs_regrid({"a": sorted(one["a"], key=lambda f: f.time)})


def test_usual_step_is_one_that_occurred_and_one_missed_sample_is_a_gap() -> None:
    """The upper median of the distances (300 and 600 s give 600, never 450), in any order; a
    pause is a gap past ``GAP_STEPS`` usual steps: a missed sample always, a late one never."""
    assert usual_step([900.0, 0.0, 300.0]) == 600.0
    assert usual_step([5.0]) is None
    assert is_gap(2 * 600.0, 600.0) and not is_gap(601.0, 600.0)
    assert not is_gap(GAP_STEPS * 600.0, 600.0) and not is_gap(1e9, None)


def test_a_pause_as_long_as_whole_second_stamps_can_make_it_is_no_gap() -> None:
    """sar and OSWatcher stamp to the second: records 1 s apart stamped 2 s apart may be 1.01 s
    apart, so at a 1 s step only 3 s is sure to be a gap; at sar's 600 s it changes nothing."""
    assert is_gap(2.0, 1.0) and not is_gap(2.0, 1.0, stamped_to=1.0)
    assert is_gap(3.0, 1.0, stamped_to=1.0)
    assert is_gap(1200.0, 600.0, stamped_to=1.0) and not is_gap(901.0, 600.0, stamped_to=1.0)

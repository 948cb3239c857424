"""The frame contract: what one sink writes, another reads back unchanged."""

from __future__ import annotations

import json

import pytest

from sgmon.model import (
    FRAME_VERSION,
    CollectorResult,
    Event,
    Field,
    Frame,
    Kind,
    Status,
    column_name,
    schema_from_dict,
    schema_to_dict,
)


def _frame() -> Frame:
    return Frame(
        host="prim1",
        role="primary",
        time=1763712000.0,
        seq=42,
        interval=1.0,
        collectors={
            "disk": CollectorResult(
                Status.OK,
                rows={"vda": {"w_s": 12.5, "w_await": 1.3, "r_await": None, "util": 100.0}},
                duration_ms=0.21,
            ),
            "oracle_waits": CollectorResult(
                Status.OK,
                rows={"log file sync": {"waits": 3.0, "hist": [[1, 2], [2, 0], [None, 1]]}},
            ),
            "tcp": CollectorResult(Status.STALE, duration_ms=2000.0, error="no answer for 2.0s"),
            "oracle_dg": CollectorResult(Status.UNAVAILABLE, error="no database configured"),
        },
        events=(Event(1763711999.5, "oracle_dg", "log_switch", "thread_1", "seq 812", 812.0),),
    )


def test_frame_json_round_trip_is_exact() -> None:
    f = _frame()
    line = f.to_json()
    assert "\n" not in line
    back = Frame.from_json(line)
    assert back == f
    assert back.to_dict() == json.loads(line)
    assert back.value("disk", "vda", "w_await") == 1.3
    assert back.value("disk", "vda", "r_await") is None
    assert back.rows("tcp") == {} and back.collectors["tcp"].status is Status.STALE
    assert back.value("nosuch", "x", "y") is None


def test_frame_of_another_version_is_refused() -> None:
    d = _frame().to_dict()
    d["v"] = FRAME_VERSION + 1
    with pytest.raises(ValueError, match="format version"):
        Frame.from_dict(d)


def test_nan_never_reaches_the_wire() -> None:
    f = Frame("h", 0.0, 1, 1.0, {"c": CollectorResult(Status.OK, rows={"i": {"x": float("nan")}})})
    with pytest.raises(ValueError):
        f.to_json()


def test_field_and_schema_round_trip() -> None:
    fields = (
        Field("w_await", "ms", Kind.GAUGE, "write await", warn=10, crit=50),
        Field("idle", "%", Kind.GAUGE, "idle", warn=5, higher_is_worse=False),
        Field("hist", "ms", Kind.HISTOGRAM, "buckets"),
    )
    schema = {"disk": fields}
    assert schema_from_dict(json.loads(json.dumps(schema_to_dict(schema)))) == schema


@pytest.mark.parametrize(
    ("name", "unit", "column"),
    [
        ("w_await", "ms", "w_await_ms"),
        ("util", "%", "util_pct"),
        ("w_s", "/s", "w_s"),
        ("wkb_s", "kB/s", "wkb_s"),
        ("rto_ms", "ms", "rto_ms"),
        ("aqu_sz", "", "aqu_sz"),
        ("log_switches", "count", "log_switches"),
        ("pgscank", "/s", "pgscank_per_s"),
    ],
)
def test_column_names_carry_the_unit_once(name: str, unit: str, column: str) -> None:
    assert column_name(name, unit) == column

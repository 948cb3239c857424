"""What an installed agent's far side may send, message by message: headers, frames, pongs and
lines of every wrong shape (wrong types, NaN and infinities where numbers go, huge numbers,
escape sequences and passwords in names and texts, lists for tables, a 100,000-deep nesting,
bytes that are not UTF-8).  Each is handed to the real session code of an agent host (after a
good header, then followed by a good frame) in this process, and must: raise nothing, hand the
sinks only frames of this host whose figures are numbers, text or unknown (no NaN, no
infinity, no table where a value goes), let the good frame after it through, and say what it
said in lines with no raw control character and no password."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest
from inproc import CONTROL, bound

from sgmon.config import HostConfig
from sgmon.errors import one_line
from sgmon.hosts.remote import RemoteSource
from sgmon.model import Frame

pytestmark = pytest.mark.timeout(60)

SECRET = "tiger9Zq"
SCHEMA = {"cpu": [{"name": "usr", "unit": "%", "kind": "gauge"}]}
HEADER = {"sgmon_agent": 1, "hosts": [{"name": "far"}], "interval": 1.0, "schemas": {"far": SCHEMA}}


def _frame(n: float, /, **change: Any) -> dict[str, Any]:
    f: dict[str, Any] = {
        "v": 1,
        "host": "far",
        "time": time.time(),
        "seq": n,
        "interval": 1.0,
        "collectors": {"cpu": {"status": "ok", "rows": {"all": {"usr": 1.5}}}},
    }
    f.update(change)
    return f


def _event(**change: Any) -> dict[str, Any]:
    """A well-formed agent event (a note now) with ``change`` made to it."""
    return {"time": time.time(), "collector": "cpu", "kind": "note", "instance": "", "text": "x",
            **change}  # fmt: skip


def _rows(**row: Any) -> dict[str, Any]:
    return {"cpu": {"status": "ok", "rows": {"all": row}}}


ESC = "\x1b]0;owned\x07\x1b[2J\x9b31m"
# case -> the line the far side sends (bytes, or a message to write as JSON)
CASES: dict[str, Any] = {
    "not-json": b"{not json",
    "not-utf8": b'{"v": 1, "host": "\xff\xfe"}',
    "json-list": [],
    "json-string": "frame",
    "json-null": None,
    "json-number": 1e308,
    "nested-100000": b"[" * 100_000 + b"]" * 100_000,
    "nested-dict-100000": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "version-2": _frame(2, v=2),
    "version-string": _frame(2, v="1"),
    "no-time": {k: v for k, v in _frame(2).items() if k != "time"},
    "time-text": _frame(2, time="now"),
    "time-bool": _frame(2, time=True),
    "time-list": _frame(2, time=[1]),
    "time-huge-int": _frame(2, time=10**400),
    "seq-text": _frame(2, seq="2"),
    "seq-nan": _frame(2, seq=float("nan")),
    "seq-inf": _frame(2, seq=float("inf")),
    "seq-huge": _frame(2, seq=10**300),
    "seq-negative": _frame(-5),
    "seq-float": _frame(2.5),
    "interval-zero": _frame(2, interval=0),
    "interval-nan": _frame(2, interval=float("nan")),
    "interval-text": _frame(2, interval="1s"),
    "interval-huge": _frame(2, interval=1e300),
    "host-other": _frame(2, host="other"),
    "host-list": _frame(2, host=["far"]),
    "host-escape": _frame(2, host="far" + ESC),
    "role-escape": _frame(2, role=ESC + "primary"),
    "role-list": _frame(2, role=["primary"]),
    "collectors-list": _frame(2, collectors=["cpu"]),
    "collectors-text": _frame(2, collectors="cpu"),
    "collector-not-table": _frame(2, collectors={"cpu": 5}),
    "status-bogus": _frame(2, collectors={"cpu": {"status": "bogus", "rows": {}}}),
    "status-missing": _frame(2, collectors={"cpu": {"rows": {}}}),
    "rows-list": _frame(2, collectors={"cpu": {"status": "ok", "rows": [1, 2]}}),
    "rows-text": _frame(2, collectors={"cpu": {"status": "ok", "rows": "all"}}),
    "row-list": _frame(2, collectors={"cpu": {"status": "ok", "rows": {"all": [1.5]}}}),
    "row-number": _frame(2, collectors={"cpu": {"status": "ok", "rows": {"all": 7}}}),
    "value-nan": _frame(2, collectors=_rows(usr=float("nan"))),
    "value-inf": _frame(2, collectors=_rows(usr=float("inf"))),
    "value-minus-inf": _frame(2, collectors=_rows(usr=float("-inf"))),
    "value-table": _frame(2, collectors=_rows(usr={"a": 1})),
    "value-bool": _frame(2, collectors=_rows(usr=True)),
    "value-huge-int": _frame(2, collectors=_rows(usr=10**400)),
    "value-histogram-nan": _frame(2, collectors=_rows(usr=[[1, float("nan")], [2, 3]])),
    "value-histogram-deep": _frame(2, collectors=_rows(usr=[[[[[1]]]]])),
    "value-text-escape": _frame(2, collectors=_rows(usr=ESC)),
    "field-escape": _frame(2, collectors=_rows(**{"usr" + ESC: 1.0})),
    "instance-escape": _frame(
        2, collectors={"cpu": {"status": "ok", "rows": {"all" + ESC: {"usr": 1.0}}}}
    ),
    "collector-unknown": _frame(2, collectors={"nope": {"status": "ok", "rows": {}}}),
    "ten-thousand-instances": _frame(
        2,
        collectors={
            "cpu": {"status": "ok", "rows": {f"c{i}": {"usr": 1.0} for i in range(10_000)}}
        },
    ),
    "error-escape-password": _frame(
        2,
        collectors={
            "cpu": {"status": "error", "error": f"ORA-1017 scott/{SECRET}@h {ESC}", "rows": {}}
        },
    ),
    "error-number": _frame(2, collectors={"cpu": {"status": "error", "error": 5, "rows": {}}}),
    "duration-text": _frame(
        2, collectors={"cpu": {"status": "ok", "rows": {}, "duration_ms": "slow"}}
    ),
    "events-text": _frame(2, events="boom"),
    "events-list-of-numbers": _frame(2, events=[1, 2]),
    "event-missing-fields": _frame(2, events=[{"time": 1.0}]),
    "event-extra-field": _frame(2, events=[_event(value=None, evil=1)]),
    "event-nan-time": _frame(2, events=[_event(time=float("nan"))]),
    "event-inf-value": _frame(2, events=[_event(value=float("inf"))]),
    "event-text-escape-password": _frame(
        2, events=[_event(text=f"{ESC} connect scott/{SECRET}@prod")]
    ),
    "event-text-number": _frame(2, events=[_event(text=5)]),
    "header-again-escape": {**HEADER, "hostname": "far" + ESC},
    "header-hosts-text": {**HEADER, "hosts": "far"},
    "header-hosts-numbers": {**HEADER, "hosts": [1, 2]},
    "header-schemas-list": {**HEADER, "schemas": ["cpu"]},
    "header-field-bogus-kind": {
        **HEADER,
        "schemas": {"far": {"cpu": [{"name": "usr", "unit": "%", "kind": "bogus"}]}},
    },
    "header-hosts-missing": {k: v for k, v in HEADER.items() if k != "hosts"},
    "header-hosts-empty": {**HEADER, "hosts": []},
    "header-host-name-number": {**HEADER, "hosts": [{"name": 5}]},
    "header-field-not-list": {**HEADER, "schemas": {"far": {"cpu": "usr"}}},
    "header-interval-nan": {**HEADER, "interval": float("nan")},
    "header-interval-zero": {**HEADER, "interval": 0},
    "header-interval-text": {**HEADER, "interval": "1s"},
    "pong-text": {"pong": "x", "time": time.time()},
    "pong-nan": {"pong": float("nan"), "time": time.time()},
    "pong-future": {"pong": time.time() + 1e9, "time": time.time()},
    "pong-time-list": {"pong": time.time(), "time": [1]},
}


def _line(msg: Any) -> bytes:
    return msg if isinstance(msg, bytes) else json.dumps(msg).encode() + b"\n"


def _number_or_text(v: Any) -> bool:
    if v is None or isinstance(v, str):
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, int | float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_number_or_text(x) for x in v)
    return False


def _sound_frame(f: Frame) -> None:
    assert f.host == "far" and math.isfinite(f.time) and math.isfinite(f.interval), f
    for name, r in f.collectors.items():
        assert isinstance(r.rows, dict), (name, r.rows)
        for inst, row in r.rows.items():
            assert isinstance(row, dict), (name, inst, row)
            assert all(map(_number_or_text, row.values())), (name, inst, row)
    for e in f.events:
        assert math.isfinite(e.time) and (e.value is None or math.isfinite(e.value)), e


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_far_message_of_each_wrong_shape(case: str) -> None:
    said: list[str] = []
    src = RemoteSource(
        HostConfig("far", "standby", ssh="far", sgmon_path="sgmon"), warn=said.append
    )
    got: list[Frame] = []
    with bound(20):
        for msg in (HEADER, _frame(1), CASES[case], _frame(3)):
            src._handle(b"L", _line(msg), None, got.append)  # type: ignore[arg-type]
        src.notes.flush()
    for f in got:
        _sound_frame(f)
    seqs = [f.seq for f in got]
    if case.startswith("header-") and case != "header-again-escape":
        assert seqs == [1], seqs  # an agent restarted with a header unread: none of its frames
        (note,) = [line for line in said if "header from the agent" in line]
        assert note.startswith("far: a header from the agent that sgmon cannot read dropped (")
        assert "frames are not read until one it can read comes" in note, note
    else:
        assert seqs[:1] == [1] and seqs[-1] == 3, seqs  # the good frame after it goes through
    for line in said:
        shown = f"sgmon: {one_line(line)}"
        assert not CONTROL & set(shown), shown
        assert SECRET not in shown and len(shown) < 1000, shown


def test_a_bad_header_in_mid_stream_is_one_note_and_its_count() -> None:
    """An agent that starts again mid-stream with a header sgmon cannot read, five times: its
    frames stop (none is placed by a header that was not read), one note says so and why,
    its repeats are counted, and a good header brings the frames back."""
    said: list[str] = []
    src = RemoteSource(
        HostConfig("far", "standby", ssh="far", sgmon_path="sgmon"), warn=said.append
    )
    got: list[Frame] = []
    bad = {**HEADER, "interval": "1s"}
    with bound(20):
        for msg in (HEADER, _frame(1), *[bad] * 5, _frame(2), HEADER, _frame(3)):
            src._handle(b"L", _line(msg), None, got.append)  # type: ignore[arg-type]
        src.notes.flush()
    assert [f.seq for f in got] == [1, 3], got
    first, count = said
    assert first.startswith("far: a header from the agent that sgmon cannot read dropped"), said
    assert "(its interval is not a number of seconds" in first, first
    assert count.endswith("cannot read dropped (repeated 4 times)"), said

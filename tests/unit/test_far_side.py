"""What the far side of an ssh host sends is untrusted input (``sgmon.hosts.farside``): its
strings are escaped and cut, its notes counted, its lines and queues bounded, its ticks paced,
its stream found after a login banner and refused beyond a sane message size; and the sinks
drop a tick or a finding stamped with no date instead of ending the recording (defence in depth
behind the clock check at the boundary).  The same cases with real processes as the far side
are tests/system/hostile/test_hostile_far_host.py."""

from __future__ import annotations

import io
import math
import struct
import time
from pathlib import Path

import pytest

from sgmon.grading import Grader
from sgmon.hosts.farside import (
    DISTINCT,
    Inbox,
    Notes,
    Pace,
    bounded_lines,
    far_text,
    plausible,
    stamp,
)
from sgmon.hosts.remote import BANNER_MOST, MESSAGE_MOST, Corrupt, _messages, _start
from sgmon.model import CollectorResult, Field, Frame, Kind, Status
from sgmon.remote.mirror import Tick
from sgmon.remote.pump import EXTRA, HEAD, MAGIC, RETRANS
from sgmon.sinks.csvarchive import ArchiveWriter
from sgmon.sinks.findings import FindingsLog
from sgmon.sinks.flush import Flusher
from sgmon.verdicts import Finding, Judgement

SCHEMA = {"x": (Field("v", "", Kind.GAUGE, "v"),)}


def _message(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack(">I", len(payload)) + payload


# --- strings, notes, lines ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"\x1b[2J\x1b[31mred", b"\x1b]0;owned\x07title", "\u009b31m".encode(), "\u202eevil".encode()],
    ids=["csi", "osc", "c1", "bidi"],
)
def test_far_text_never_carries_a_control_character(raw: bytes) -> None:
    text = far_text(raw)
    assert text.isprintable(), text
    assert "\\x1b" in text or "\\x9b" in text or "\\u202e" in text


def test_far_text_is_cut_and_redacted() -> None:
    assert far_text(b"a" * 10_000) == "a" * 300 + "…"
    assert "tiger" not in far_text(b"ORA-01017 connecting as scott/tiger@prod")


def test_a_date_or_the_number_it_is() -> None:
    assert stamp(253402300799.0) == "9999-12-31 23:59:59 UTC"
    assert stamp(math.nan) == "nan" and stamp(1e300) == "1e+300"
    now = time.time()
    assert plausible(now + 3600, now) and not plausible(now + 2 * 86400, now)
    assert not any(plausible(t, now) for t in (math.nan, math.inf, -math.inf, -1.0, 1e300))


def test_twenty_thousand_distinct_lines_are_a_few() -> None:
    said: list[str] = []
    notes = Notes(said.append, every=3600)
    for i in range(20_000):
        notes.say(f"error {i}")
    notes.flush()
    assert len(said) == DISTINCT + 1
    assert said[-1] == f"{20_000 - DISTINCT:,} more distinct line(s) from the far side not shown"


def test_a_repeated_line_is_said_once_with_its_count() -> None:
    said: list[str] = []
    notes = Notes(said.append, every=3600)
    for i in range(2032):
        notes.say(f"tick {i} refused", key="ticks refused")
    notes.flush()
    assert said == ["tick 0 refused", "ticks refused (repeated 2,031 times)"]


def test_an_endless_line_is_cut_and_what_follows_read(tmp_path: Path) -> None:
    p = tmp_path / "stream"
    p.write_bytes(b"x" * (5 << 20) + b"\nnext\n")
    got: list[bytes | None] = []
    with p.open("rb") as fh:
        long = bounded_lines(fh, 4096, got.append)
    assert long == 1
    assert got == [b"x" * 4096, b"next\n", None]


def test_the_inbox_keeps_nothing_once_closed() -> None:
    box = Inbox(most=10)
    box.put((b"T", b"y" * 20))  # one message over the bound still passes an empty queue
    assert box.get(timeout=0) == (b"T", b"y" * 20)
    with pytest.raises(TimeoutError):
        box.get(timeout=0)
    box.close()
    box.put((b"T", b"z"))  # the session is gone: not kept, and no wait
    with pytest.raises(TimeoutError):
        box.get(timeout=0)


def test_a_flood_of_ticks_is_read_once_an_interval() -> None:
    pace = Pace(1.0)
    now = float(int(time.time()))  # on a boundary
    read = [pace.take(now + i / 5000) for i in range(5000)]  # 5,000 ticks in one second
    assert sum(read) <= 2  # one per slot of the axis
    skewed = Pace(1.0)  # a far clock 0.7 s ahead, measured between two honest ticks
    assert skewed.take(now) and skewed.take(now + 1 - 0.7, offset=0.7)
    liar = Pace(1.0)  # a far side stamping each tick a second later than the last
    assert sum(liar.take(now + i) for i in range(1000)) <= Pace.BURST + 1


# --- the pump's stream ----------------------------------------------------------------------


def test_a_banner_is_skipped_up_to_the_pump() -> None:
    banner = b"Welcome to prod\nAuthorized use only\n"
    stream = io.BytesIO(banner + MAGIC + _message(b"H", b"{}"))
    assert _start(stream) == banner
    got: list[tuple[bytes, bytes] | None] = []
    _messages(stream, got.append)
    assert got == [(b"H", b"{}")]


def test_no_pump_after_the_banner_bound_is_corrupt() -> None:
    with pytest.raises(Corrupt, match="without sgmon's program starting"):
        _start(io.BytesIO(b"motd line\n" * (BANNER_MOST // 8)))


def test_a_length_over_the_bound_is_never_allocated() -> None:
    stream = io.BytesIO(_message(b"H", b"{}") + b"T" + struct.pack(">I", MESSAGE_MOST + 1))
    got: list[tuple[bytes, bytes] | None] = []
    with pytest.raises(Corrupt, match="stream is corrupt"):
        _messages(stream, got.append)
    assert got == [(b"H", b"{}")]


def test_a_tick_head_is_read_before_its_files() -> None:
    body = HEAD.pack(math.nan, 12.0, 3, RETRANS | EXTRA, 0)
    tick = Tick.of(body)
    assert math.isnan(tick.time) and tick.seq == 3 and tick.carries_news()
    assert not Tick.of(HEAD.pack(1.0, 1.0, 1, 0, 0)).carries_news()
    with pytest.raises(ValueError, match="corrupt tick"):
        Tick.of(body[:5])


# --- the sinks ------------------------------------------------------------------------------


def _frame(host: str, t: float) -> Frame:
    return Frame(host, t, 1, 1.0, {"x": CollectorResult(Status.OK, rows={"a": {"v": 1}})})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1e300, 253402300799.0, -5.0])
def test_the_archive_drops_a_tick_with_no_date(tmp_path: Path, bad: float) -> None:
    said: list[str] = []
    w = ArchiveWriter(tmp_path, lambda h: SCHEMA, 1.0, warn=said.append, flusher=Flusher(None))
    now = time.time()
    for t in (now, now + 1):
        w(_frame("far", bad))
        w(_frame("here", t))
    w.close()
    assert len([s for s in said if "far" in s]) == 1, said
    assert "is not a time a recording holds" in said[0]
    rows = "".join(p.read_text() for p in (tmp_path / "here").glob("x_*.csv"))
    assert rows.count("\n") == 3  # the header and both ticks
    assert not list(tmp_path.glob("far/x_*.csv"))


def test_the_findings_log_drops_a_finding_with_no_date(tmp_path: Path, capsys) -> None:
    log = FindingsLog(tmp_path)
    now = time.time()

    def finding(host: str, start: float) -> Finding:
        return Finding("k", "warn", host, "title", [], [], "rule", "", start)

    frame = _frame("here", now)
    log(frame, Judgement(frame, Grader(), opened=(finding("far", math.nan), finding("here", now))))
    log(frame, Judgement(frame, Grader(), opened=(finding("far", math.inf),)))
    log.close()
    err = capsys.readouterr().err
    assert err.count("a finding stamped with no date") == 1, err
    rows = (tmp_path / "here" / "findings.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].split(",")[1:3] == ["here", "open"]

"""Trace files as a hostile host serves them: a 2 GB file renamed under the reader, a file cut
and rewritten within one tick, lines written with the file's creation, a FIFO, a symlink loop, a
pid that is not the process the file names, and ``from_start`` under a running engine.  Each case
has a timeout; none may raise out of the reader, hang, or lose a line it could have read."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.oracle.trace import OracleTraceCollector, TraceParser
from sgmon.engine import Engine
from sgmon.model import Frame
from sgmon.oracle.tracefiles import MAX_READ, REST_MAX, Follower
from sgmon.oracle.tracetime import host_zone

pytestmark = pytest.mark.timeout(60)

WARN = "*** 2015-03-10 14:09:08.402\nWarning: log write elapsed time {ms}ms, size 1KB\n"


def _warn(path: Path, ms: int) -> None:
    with path.open("a") as f:
        f.write(WARN.format(ms=ms))


def _opened(trc: Path, exists: bool) -> OracleTraceCollector:
    """A collector following ``trc``, opened while the file is there (empty) or not yet."""
    if exists:
        trc.write_text("")
    c = OracleTraceCollector({"lgwr": str(trc), "timezone": "UTC"})
    c.open()
    return c


def _slow(c: OracleTraceCollector) -> list[float]:
    return [e.value for e in c.take_events() if e.kind == "lgwr_slow_write"]  # type: ignore[misc]


def test_a_2gb_trace_renamed_while_read_costs_megabytes_and_the_new_file_is_followed(tmp_path):
    big = tmp_path / "PROD_lgwr_7.trc"
    with big.open("wb") as f:
        f.write(WARN.format(ms=601).encode())
        f.truncate(2 << 30)  # sparse: 2 GB of NULs that cost no disk
    follower = Follower(str(big), from_start=True)
    assert any("601" in line for line in follower.lines())
    big.rename(tmp_path / "PROD_lgwr_7.trc.old")  # renamed away while 2 GB are still unread
    big.write_text(WARN.format(ms=702))
    tracemalloc.start()
    seen: list[str] = []
    slowest = 0.0
    try:
        for _ in range(REST_MAX // MAX_READ + 3):
            t0 = time.perf_counter()
            seen += follower.lines()
            slowest = max(slowest, time.perf_counter() - t0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        follower.close()
    assert peak < 16 * MAX_READ, f"{peak / 1e6:.0f} MB held to follow a renamed 2 GB file"
    assert slowest < 1.0, f"one read took {slowest:.1f}s"
    assert any("702" in line for line in seen), "the new file was never followed"
    assert follower.dropped > (1 << 30), "the bytes left unread were not counted"


def test_the_collector_says_what_a_rename_left_unread(tmp_path):
    big = tmp_path / "PROD_lgwr_8.trc"
    big.write_text("")
    c = OracleTraceCollector({"lgwr": str(big), "timezone": "UTC"})
    c.open()
    with big.open("ab") as f:
        f.truncate(REST_MAX * 2)
    big.rename(tmp_path / "PROD_lgwr_8.trc.1")
    _warn(big, 777)
    for _ in range(REST_MAX // MAX_READ + 2):
        c.sample()
    events = c.take_events()
    assert [e.value for e in events if e.kind == "lgwr_slow_write"] == [777]
    notes = [e.text for e in events if e.kind == "note"]
    assert len(notes) == 1 and "left unread" in notes[0]


def test_lines_written_after_a_cut_in_place_within_one_tick_are_read(tmp_path):
    trc = tmp_path / "PROD_lgwr_9.trc"
    c = _opened(trc, exists=True)
    _warn(trc, 501)
    _warn(trc, 502)
    c.sample()
    with trc.open("w") as f:  # cut to nothing, then more written than there was: one tick
        for ms in (503, 504, 505):
            f.write(WARN.format(ms=ms))
    c.sample()
    assert _slow(c) == [501, 502, 503, 504, 505]


def test_lines_written_with_the_files_creation_are_read(tmp_path):
    trc = tmp_path / "PROD_lgwr_10.trc"
    c = _opened(trc, exists=False)
    c.sample()
    with trc.open("w") as f:  # the file is born with its first lines
        f.write(WARN.format(ms=511) + WARN.format(ms=512))
    c.sample()
    assert _slow(c) == [511, 512]


def _sample_in_thread(c: OracleTraceCollector, seconds: float = 5.0) -> BaseException | None:
    """Open and sample three times on a thread; fail the test if that hangs."""
    out: list[BaseException | None] = [None]

    def go() -> None:
        try:
            c.open()
            for _ in range(3):
                try:
                    c.sample()
                except OSError as e:
                    out[0] = e
        except BaseException as e:  # reported to the test
            out[0] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the trace reader hung"
    return out[0]


def test_a_fifo_is_one_note_and_never_hangs(tmp_path):
    fifo = tmp_path / "PROD_lgwr_11.trc"
    os.mkfifo(fifo)
    c = OracleTraceCollector({"lgwr": str(fifo), "timezone": "UTC"})
    try:
        err = _sample_in_thread(c)
    finally:  # unblock a reader stuck in open() (the old behaviour) so the thread can end
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(err, OSError) and "FIFO" in str(err)
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert notes == [f"cannot read {fifo}: is a FIFO, not a regular file"]


def test_a_symlink_loop_is_one_note_and_no_healthy_zero(tmp_path):
    loop = tmp_path / "PROD_lgwr_12.trc"
    loop.symlink_to(loop)
    c = OracleTraceCollector({"lgwr": str(loop), "timezone": "UTC"})
    err = _sample_in_thread(c)
    assert isinstance(err, OSError), "a loop read as a healthy trace (slow_writes 0)"
    notes = [e.text for e in c.take_events() if e.kind == "note"]
    assert len(notes) == 1 and "symbolic links" in notes[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway")
def test_an_unreadable_file_is_one_note_and_no_healthy_zero(tmp_path):
    trc = tmp_path / "PROD_lgwr_13.trc"
    trc.write_text(WARN.format(ms=600))
    trc.chmod(0)
    c = OracleTraceCollector({"lgwr": str(trc), "timezone": "UTC"})
    assert isinstance(_sample_in_thread(c), OSError)
    assert len([e for e in c.take_events() if e.kind == "note"]) == 1


def test_a_pid_that_is_not_the_named_process_lends_no_zone(tmp_path, monkeypatch):
    """A trace copied from another host names a pid that here runs something else, with its own
    TZ: the host's zone is used, and a note says so."""
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    proc = subprocess.Popen([shutil.which("sleep") or "sleep", "60"], env={"TZ": "Asia/Kolkata"})
    try:
        deadline = time.monotonic() + 5
        while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "sleep":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        trc = tmp_path / f"oravm1_lgwr_{proc.pid}.trc"
        trc.write_text(WARN.format(ms=700))
        c = OracleTraceCollector({"lgwr": str(trc), "from_start": True})
        c.open()
        c.sample()
        events = c.take_events()
    finally:
        proc.kill()
        proc.wait()
        monkeypatch.undo()
        time.tzset()
    import datetime as _dt

    want = _dt.datetime(2015, 3, 10, 14, 9, 8, 402000, tzinfo=host_zone()).timestamp()
    slow = [e for e in events if e.kind == "lgwr_slow_write"]
    assert slow[0].time == pytest.approx(want)
    notes = [e.text for e in events if e.kind == "note"]
    assert len(notes) == 1 and "this host's zone" in notes[0] and "timezone" in notes[0]


def test_from_start_events_reach_the_recorded_frames(tmp_path):
    """``from_start`` reads the whole file in the engine's priming tick, which is not emitted:
    its events go out with the first frame that is, and its counts are that frame's (the
    priming tick is the counters' base; before, every frame said 0 slow writes)."""
    trc = tmp_path / "PROD_lgwr_14.trc"
    trc.write_text(WARN.format(ms=801) + WARN.format(ms=802))
    c = OracleTraceCollector({"lgwr": str(trc), "from_start": True, "timezone": "UTC"})
    engine = Engine([c], interval=0.2)
    frames: list[Frame] = []
    try:
        engine.run(frames.append, threading.Event(), duration=0.7)
    finally:
        engine.close()
    got = [e.value for f in frames for e in f.events if e.kind == "lgwr_slow_write"]
    assert got == [801, 802]
    rows = [f.rows("oracle_trace")["lgwr"] for f in frames]
    assert (rows[0]["slow_writes"], rows[0]["max_write"]) == (2, 802)
    assert [r["slow_writes"] for r in rows[1:]] == [0] * (len(rows) - 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=30))
def test_the_parser_takes_any_lines(lines):
    parser = TraceParser(__import__("collections").OrderedDict(), host_zone(), "assumed")
    parser.feed(lines)
    parser.feed(["*** 9999-12-31T23:59:59.999999+00:00", "*** 0001-01-01T00:00:00+14:00"])
    parser.feed(["*** 2015-13-45 99:99:99.000", "Client received SQLNET call msgid=1"])


def test_a_number_of_5000_digits_costs_its_line_only():
    parser = TraceParser(__import__("collections").OrderedDict(), host_zone())
    huge = "9" * 5000
    parser.feed(
        [
            f"Warning: log write elapsed time {huge}ms, size 1KB",
            f"Client received SQLNET call msgid={huge} thrd={huge}",
            "Warning: log write elapsed time 512ms, size 1KB",
        ]
    )
    assert [ln.value for ln in parser.found] == [512]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=8))
def test_the_follower_returns_every_complete_line_of_any_appends(tmp_path_factory, chunks):
    path = tmp_path_factory.mktemp("f") / "PROD_lgwr_1.trc"
    path.write_bytes(b"")
    f = Follower(str(path))
    got: list[str] = []
    try:
        for chunk in chunks:
            with path.open("ab") as fh:
                fh.write(chunk)
            got += f.lines()
    finally:
        f.close()
    whole = b"".join(chunks)
    want = [x.decode("utf-8", "replace").rstrip("\r") for x in whole.split(b"\n")[:-1]]
    assert got == want


def _giant_line(trc: Path) -> None:
    with trc.open("ab") as f:
        chunk = b"x" * (1 << 20)
        for _ in range(50):  # a 50 MB line
            f.write(chunk)
        f.write(b"\n")


def _sparse_hole(trc: Path) -> None:
    with trc.open("ab") as f:
        f.truncate(f.seek(0, os.SEEK_END) + (64 << 20))  # 64 MB of NULs, no disk spent
        f.seek(0, os.SEEK_END)
        f.write(b"\n")


def _flood(trc: Path) -> None:
    with trc.open("ab") as f:
        line = b"*** 2015-03-10 14:09:08.402\nkcrfw_redo_gen: noise of a busy process\n"
        f.write(line * (12 * (1 << 20) // len(line)))  # 12 MB at once: far ahead


@pytest.mark.parametrize("shape", [_giant_line, _sparse_hole, _flood], ids=lambda f: f.__name__)
def test_a_slow_write_after_junk_is_read_in_the_next_tick(tmp_path: Path, shape) -> None:
    """A 50 MB single line, a 64 MB sparse hole or a 12 MB flood used to hide the slow write
    logged after it for as many ticks as megabytes (the reader takes one a tick), or for ever
    under a steady flood.  Now the junk is skipped with one note and the write read at once."""
    trc = tmp_path / "PROD_lgwr_1234.trc"
    c = _opened(trc, exists=True)
    try:
        c.sample()
        shape(trc)
        _warn(trc, 777)
        tracemalloc.start()
        c.sample()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        events = c.take_events()
    finally:
        c.close()
    slow = [e.value for e in events if e.kind == "lgwr_slow_write"]
    notes = [e.text for e in events if e.kind == "note"]
    assert slow == [777], (slow, notes)
    assert len(notes) == 1 and "bytes skipped" in notes[0], notes
    assert peak < 8 * MAX_READ, peak  # megabytes, never the junk

"""The recorder under inputs and file systems that turn against it: a trace stamped in year 9999
or 0001, the archive directory deleted or replaced under a running ``record``, a disk full from
the start, and one full-disk episode.  Each case: no traceback, no hang, one clear ``sgmon:``
line, and every row that could be written is on disk, readable, with its meta.json."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import nslab
import pytest
from kits.waiting import wait_for

from collectors.oracle.trace import OracleTraceCollector
from sgmon.hosts import HostInfo
from sgmon.hosts.local import LocalSource
from sgmon.hosts.replay import ReplaySource
from sgmon.model import CollectorResult, Event, Field, Frame, Kind, Status
from sgmon.monitor import Monitor
from sgmon.sinks.csvarchive import ArchiveWriter

pytestmark = pytest.mark.timeout(90)

SGMON = [sys.executable, "-m", "sgmon"]
WARN = "*** {stamp}\nWarning: log write elapsed time {ms}ms, size 1KB\n"


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:59.999999+00:00", "0001-01-01T00:00:00+14:00"])
def test_one_impossible_trace_stamp_does_not_disable_the_archive(tmp_path, stamp, capfd):
    trc = tmp_path / "PROD_lgwr_4242.trc"
    trc.write_text("")
    trace = OracleTraceCollector({"lgwr": str(trc), "timezone": "UTC"})
    src = LocalSource([trace], 0.2, name="prim", role="primary", duration=2.0)
    writer = ArchiveWriter(tmp_path / "arch", src.schema, 0.2)
    mon = Monitor([src], sinks=[writer], history=2)

    def write_later() -> None:
        time.sleep(0.5)
        with trc.open("a") as f:
            f.write(WARN.format(stamp=stamp, ms=901))
        time.sleep(0.5)
        with trc.open("a") as f:
            f.write(WARN.format(stamp="2015-03-10 14:09:08.402", ms=902))

    writer_thread = threading.Thread(target=write_later)
    mon.start()
    writer_thread.start()
    try:
        assert mon.wait(20), "the recording did not end"
    finally:
        writer_thread.join()
        mon.stop()
        src.close()
        writer.close()
    err = capfd.readouterr().err
    assert "disabled" not in err and mon.failed is None, err
    notes = [line for line in err.splitlines() if "cannot be stored" in line]
    assert len(notes) == 1 and "prim oracle_trace" in notes[0], err
    replay = ReplaySource(tmp_path / "arch", speed=0)
    frames = replay.frames("prim")
    events = [e.value for f in frames for e in f.events if e.kind == "lgwr_slow_write"]
    assert events == [902], "the archive stopped after the impossible stamp"
    assert frames[-1].time > time.time() - 3  # it went on recording to the end


class Explodes:
    """A sink marked essential whose write raises something that is not an I/O error."""

    essential = True

    def __call__(self, frame: Frame, judgement: object) -> None:
        raise RuntimeError("the sink's own fault")


class Count:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, frame: Frame, judgement: object) -> None:
        self.n += 1


class Steady:
    """A source of one frame per 20 ms until stopped."""

    def __init__(self) -> None:
        self.hosts = [HostInfo("h", "")]

    def schema(self, host: str) -> dict:
        return {"x": (Field("v", "", Kind.GAUGE, "v"),)}

    def run(self, emit, stop) -> None:  # type: ignore[no-untyped-def]
        seq = 0
        while not stop.wait(0.02):
            seq += 1
            rows = {"x": CollectorResult(Status.OK, rows={"a": {"v": seq}})}
            emit(Frame("h", time.time(), seq, 0.02, rows, ()))

    def close(self) -> None:
        pass


def test_an_essential_sink_that_fails_ends_the_run_and_says_so(capfd):
    count = Count()
    mon = Monitor([Steady()], sinks=[Explodes(), count], history=2)
    mon.start()
    try:
        assert mon.wait(5), "the run went on without its essential output"
    finally:
        mon.stop()
    assert mon.failed is not None and "the sink's own fault" in mon.failed
    err = capfd.readouterr().err.splitlines()
    assert err == ["sgmon: output Explodes: the sink's own fault"]


def _record(arch: Path, tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    return subprocess.Popen(
        [*SGMON, "record", "--dir", str(arch), "--interval", "0.2", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_an_archive_directory_gone_under_record_ends_it_at_once(tmp_path, how):
    arch = tmp_path / "arch"
    p = _record(arch, tmp_path, "--duration", "60")
    try:
        assert wait_for(lambda: any(arch.glob("*/cpu_*.csv"))), "nothing recorded"
        gone = time.monotonic()
        if how == "deleted":
            shutil.rmtree(arch)
        else:
            arch.rename(tmp_path / "moved")
            arch.mkdir()
        code = p.wait(15)
        took = time.monotonic() - gone
        err = p.stderr.read() if p.stderr else ""
    finally:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
    assert code == 1, err
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if "deleted or replaced" in line]
    assert len(said) == 1 and said[0].startswith("sgmon: "), err
    assert took < 5, f"noticed after {took:.1f}s"


@contextlib.contextmanager
def small_fs(tmp_path: Path, size: str = "400k") -> Iterator[Path]:
    """A tmpfs of ``size`` of our own, unmounted at the end."""
    nslab.require_root("mount", "umount")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path) -> Path:
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):
        for _ in range(2000):
            os.write(fd, b"\0" * 4096)
    os.close(fd)
    return filler


def test_meta_json_is_on_disk_before_the_first_row_after_a_full_start(tmp_path):
    with small_fs(tmp_path) as mnt:
        arch = mnt / "arch"
        arch.mkdir()
        filler = _fill(mnt)
        src = LocalSource([], 0.2, name="h")
        said: list[str] = []
        w = ArchiveWriter(arch, Steady().schema, 0.2, warn=said.append)
        assert not (arch / "meta.json").exists()
        rows = {"x": CollectorResult(Status.OK, rows={"a": {"v": 1}})}
        for i in range(3):
            w(Frame("h", 1e9 + i, i, 0.2, rows, ()))
        filler.unlink()
        for i in range(3, 6):
            w(Frame("h", 1e9 + i, i, 0.2, rows, ()))
            if any(p.stat().st_size for p in arch.rglob("x_*.csv")):
                assert (arch / "meta.json").exists(), "rows on disk, but no meta.json"
        src.close()
        # a kill -9 here: no close(); the archive must read back as it is
        replay = ReplaySource(arch, speed=0)
        assert len(replay.frames("h")) == 3
        assert len(said) == 2, said  # paused once, resumed once


def test_one_full_disk_episode_is_two_messages(tmp_path):
    with small_fs(tmp_path) as mnt:
        arch = mnt / "arch"
        p = _record(arch, tmp_path, "--duration", "60", "--simulate", "rto-stall")
        lines: list[str] = []

        def read() -> None:
            assert p.stderr is not None
            for line in iter(p.stderr.readline, ""):
                lines.append(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            assert wait_for(lambda: any(x.startswith("sgmon: recording ") for x in lines))
            filler = _fill(mnt)
            assert wait_for(lambda: any("paused" in x for x in lines))
            time.sleep(3)  # a full disk for 15 ticks
            filler.unlink()
            assert wait_for(lambda: any("writing again" in x for x in lines))
            time.sleep(1)
            p.send_signal(signal.SIGTERM)
            assert p.wait(15) == 0
            reader.join(5)
        finally:
            with contextlib.suppress(ProcessLookupError):
                p.kill()
        start_stop = ("sgmon: recording ", "sgmon: stopped;")
        episode = [x for x in lines if not x.startswith(start_stop)]
        assert len(episode) == 2, "".join(lines)


def test_hostile_text_from_a_source_is_recorded_and_read_back(tmp_path):
    """An instance name with a newline, a CR and a NUL, and text with a lone surrogate: the
    row is written on one line and read back, not lost as a malformed row."""
    fields = (Field("v", "", Kind.GAUGE, "v"), Field("t", "", Kind.TEXT, "t"))
    w = ArchiveWriter(tmp_path / "arch", lambda h: {"x": fields}, 1.0)
    odd = "sd\nb\r\x00"
    for i in range(3):
        rows = {"x": CollectorResult(Status.OK, rows={odd: {"v": i, "t": "a\udcffb\r\nc"}})}
        ev = (Event(1e9 + i, "x", "note", odd, "bad\x00text\r", 1.0),)
        w(Frame("h", 1e9 + i, i, 1.0, rows, ev))
    w.close()
    src = ReplaySource(tmp_path / "arch", speed=0)
    frames = src.frames("h")
    assert src.problems() == []
    assert [f.value("x", "sd b ", "v") for f in frames] == [0, 1, 2]
    assert [e.text for f in frames for e in f.events] == ["badtext"] * 3

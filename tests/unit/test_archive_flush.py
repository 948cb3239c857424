"""The recorder's fsync policy (``sgmon.sinks.flush``) and the directory descriptor it writes
through (``sgmon.safefs``): rows reach the disk at most every 5 s, on rotation and on close, in a
thread of their own; a name is opened only when it is what sgmon writes there."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from sgmon.model import CollectorResult, Field, Frame, Kind, Status
from sgmon.safefs import Dir, Refused, private_dir, unexpected
from sgmon.sinks.csvarchive import ArchiveWriter
from sgmon.sinks.csvfile import AppendFile
from sgmon.sinks.flush import SYNC_EVERY, Flusher

SCHEMA = {"x": (Field("v", "", Kind.GAUGE, "v"),)}


@pytest.fixture
def flushed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every fdatasync and fsync, by the inode it flushed (and which thread did)."""
    calls: list[tuple[str, int]] = []
    real_data, real_sync = os.fdatasync, os.fsync

    def data(fd: int) -> None:
        calls.append((threading.current_thread().name, os.fstat(fd).st_ino))
        real_data(fd)

    def sync(fd: int) -> None:
        calls.append((threading.current_thread().name, os.fstat(fd).st_ino))
        real_sync(fd)

    monkeypatch.setattr(os, "fdatasync", data)
    monkeypatch.setattr(os, "fsync", sync)
    return calls


def _frame(t: float, v: int = 1) -> Frame:
    return Frame("h", t, int(t), 1.0, {"x": CollectorResult(Status.OK, rows={"a": {"v": v}})})


def test_the_policy_is_five_seconds() -> None:
    assert SYNC_EVERY == 5.0


class Clock:
    """``time`` as the flusher reads it, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_a_batch_at_most_every_period_in_its_own_thread(
    tmp_path: Path, flushed, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr("sgmon.sinks.flush.time", clock)
    with Dir.at(str(tmp_path)) as d:
        fl = Flusher()
        fl.watch(d)
        f = AppendFile(d, "t", ["a"], print)
        fl.add(f)
        f.write([["1"]])
        clock.now += SYNC_EVERY - 0.1
        fl.tick()
        fl.drain()
        assert flushed == []  # not due yet
        clock.now += 0.1
        fl.tick()
        fl.drain()
        ino = os.fstat(f.fd).st_ino
        assert flushed == [("sgmon-flush", ino), ("sgmon-flush", os.fstat(d.fd).st_ino)]
        n = len(flushed)
        clock.now += SYNC_EVERY
        fl.tick()  # nothing written since: nothing flushed
        fl.drain()
        assert len(flushed) == n
        f.write([["2"]])
        fl.close()  # the last rows are flushed when the file is closed
        assert flushed[n:] == [("sgmon-flush", ino)]  # the directory has no new name since
        assert f.fd == -1


def test_without_a_period_only_closing_flushes(tmp_path: Path, flushed) -> None:
    with Dir.at(str(tmp_path)) as d:
        fl = Flusher(every=None, background=False)
        f = AppendFile(d, "t", ["a"], print)
        fl.add(f)
        f.write([["1"]])
        fl.tick()
        assert flushed == []
        fl.retire(f)
        assert [t for t, _ in flushed] == [threading.current_thread().name] and f.fd == -1


def test_the_writer_flushes_on_rotation_and_close(tmp_path: Path, flushed) -> None:
    w = ArchiveWriter(tmp_path, lambda h: SCHEMA, 1.0, rotate=60, flusher=Flusher(every=None))
    start = (time.time() // 60) * 60 - 600
    for t in (start + 58, start + 59):
        w(_frame(t))
    first = (tmp_path / "h").glob("x_*.csv")
    (old,) = [p.stat().st_ino for p in first]
    w(_frame(start + 60))  # rotation: the closed file is flushed
    w.dirs.flusher.drain()
    assert old in {ino for _, ino in flushed}
    w.close()
    inodes = {p.stat().st_ino for p in (tmp_path / "h").glob("x_*.csv")}
    assert inodes <= {ino for _, ino in flushed}


def test_a_failed_flush_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", fails)
    said: list[str] = []
    with Dir.at(str(tmp_path)) as d:
        fl = Flusher(every=0.0, warn=said.append, background=False)
        files = [AppendFile(d, name, ["a"], print) for name in ("t", "u")]
        for f in files:
            fl.add(f)
            f.write([["1"]])
        fl.tick()
        fl.close()
    assert len(said) == 1 and "cannot flush to disk (Input/output error)" in said[0], said


def test_kinds_that_are_not_what_sgmon_writes(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    os.link(tmp_path / "f", tmp_path / "g")
    os.mkfifo(tmp_path / "p")
    (tmp_path / "l").symlink_to("f")
    (tmp_path / "d").mkdir()
    with Dir.at(str(tmp_path)) as d:
        found = {n: unexpected(os.stat(n, dir_fd=d.fd, follow_symlinks=False)) for n in "fgpld"}
        assert found == {
            "f": "a hard link (one of 2 names of a file)",
            "g": "a hard link (one of 2 names of a file)",
            "p": "a FIFO",
            "l": "a symlink",
            "d": "a directory",
        }
        assert d.read("f", 10) == b"x"  # only read: another name does no harm
        with pytest.raises(Refused, match="is a symlink"):
            d.read("l", 10)
        with pytest.raises(Refused, match="is a FIFO"):
            d.open_append("p")
        with pytest.raises(Refused, match="is a symlink"):
            d.sub("l")


def test_temporary_names_are_unpredictable_and_exclusive(tmp_path: Path) -> None:
    with Dir.at(str(tmp_path)) as d:
        names = set()
        for _ in range(3):
            name, fd = d.temp("meta.json")
            os.close(fd)
            names.add(name)
        assert len(names) == 3
        assert all(n.startswith(".meta.json.") and n.endswith(".tmp") for n in names)
        (tmp_path / "target").write_text("old")
        (tmp_path / "meta.json").symlink_to(tmp_path / "target")
        d.write_replace("meta.json", b"new", sync=True)  # the symlink replaced, not followed
        assert (tmp_path / "target").read_text() == "old"
        assert stat.S_ISREG((tmp_path / "meta.json").lstat().st_mode)


def test_a_private_directory_is_made_0700(tmp_path: Path) -> None:
    with private_dir(str(tmp_path / "a" / "run"), create=True) as d:
        assert stat.S_IMODE(os.fstat(d.fd).st_mode) == 0o700
    with pytest.raises(FileNotFoundError):
        private_dir(str(tmp_path / "none"))

"""`sgmon record` and replay: the archive layout, its durability, and the round trip."""

from __future__ import annotations

import csv
import gzip
import json
import os
import threading
import time
from collections.abc import Callable

import pytest
from kits.record import WaitsLike, _local, _record, _tables

from sgmon import registry
from sgmon.archive import ARCHIVE_FORMAT, header
from sgmon.engine import Engine, next_boundary
from sgmon.hosts.replay import ReplaySource
from sgmon.model import Frame, Schema
from sgmon.sinks.csvarchive import ArchiveWriter


class Wall:
    """A wall clock the test moves: one test's recordings follow each other on it as they would
    on the real clock (each starts after the last ended), without waiting for it.  It starts
    at the real time, or a minute before it when the hour ends within that minute: the test's
    rows all fall in one hour's files, as its assertions take them to."""

    def __init__(self) -> None:
        now = time.time()
        self.now = now - 60 if now % 3600 > 3600 - 60 else now


class Ticked:
    """``_local``'s host and collectors, their engine ticked at the interval's boundaries of a
    ``Wall``: the frames ``LocalSource.run`` emits over ``duration``, without the wall clock
    (the unit tier runs no engine on it; tests/system/headless records with the real one).
    The engine reads its samples' times from the same clock, so rates span the interval as
    they do live."""

    def __init__(self, wall: Wall, duration: float = 1.0) -> None:
        local = _local(duration=duration)
        local.close()  # its collectors are not opened yet: they are reused by the engine here
        e = local.engine
        self.engine = Engine(
            e.collectors, e.interval, host=e.host, role=e.role, clock=lambda: wall.now
        )
        self.interval = e.interval
        self.ticks = round(duration / e.interval)
        self.wall = wall

    def schema(self, host: str) -> Schema:
        """Declared fields of the collectors."""
        return self.engine.schema()

    def run(self, emit: Callable[[Frame], None], stop: threading.Event) -> None:
        """Prime, then emit a frame per interval boundary until the duration has passed."""
        primer = self.engine.tick(self.wall.now)  # its rates are unknown: run emits none of it
        assert not primer.events  # (run would carry them into the first frame: none here)
        for _ in range(self.ticks):
            self.wall.now = next_boundary(self.wall.now, self.interval)
            emit(self.engine.tick(self.wall.now))

    def close(self) -> None:
        """Stop the collector thread."""
        self.engine.close()


@pytest.fixture
def wall() -> Wall:
    """The test's own wall clock."""
    return Wall()


def test_layout_header_and_round_trip(tmp_path, wall):
    a, b = tmp_path / "a", tmp_path / "b"
    w = _record(Ticked(wall), a)
    assert w.rows_written > 0
    meta = json.loads((a / "meta.json").read_text())
    assert meta["format"] == ARCHIVE_FORMAT and meta["interval"] == 0.2
    spec = meta["hosts"]["hostA"]["collectors"]
    assert spec["disk"]["columns"] == header(registry.load("disk").fields)
    assert {f["name"]: f["unit"] for f in spec["waitslike"]["fields"]}["avg"] == "ms"
    files = sorted(p.name for p in (a / "hostA").iterdir())
    assert any(f.startswith("disk_") and f.endswith(".csv") for f in files)
    with open(next((a / "hostA").glob("waitslike_*.csv"))) as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:6] == ["time", "host", "instance", "waits_per_s", "avg_ms", "hist_le_1_us"]
    assert "hist_le_1024_us" in rows[0] and "hist_le_inf" in rows[0] and rows[0][-1] == "note"
    assert all(len(r) == len(rows[0]) for r in rows)
    assert rows[1][0].endswith("+00:00") and rows[1][2] == "log file sync"
    # the failing collector is an event, the others went on
    events = (a / "hostA" / "events.csv").read_text()
    assert "broken,collector_error" in events and "source went away" in events

    src = ReplaySource(a, speed=0)
    assert src.skipped == 0
    frames = src.frames("hostA")
    assert len(frames) == len(rows) - 1
    hist = frames[-1].value("waitslike", "log file sync", "hist")
    got = [
        b for b, n in hist if n and b is not None
    ]  # 1, 2, 4, 256 ms land in 1024, 2048, 4096, 262144 us
    assert sorted(got)[:3] == pytest.approx([1.024, 2.048, 4.096]) and hist[-1][0] is None
    assert frames[-1].collectors["broken"].status.value == "error"
    _record(src, b)
    assert _tables(a) == _tables(b)


def test_pandas_and_duckdb_open_it_without_options(tmp_path, wall):
    pd = pytest.importorskip("pandas")
    duckdb = pytest.importorskip("duckdb")
    _record(Ticked(wall), tmp_path)
    for p in (tmp_path / "hostA").glob("*_*.csv"):
        with open(p) as fh:
            head = next(csv.reader(fh))
            n = sum(1 for _ in fh)
        df = pd.read_csv(p)
        assert list(df.columns) == head and len(df) == n
        rel = duckdb.read_csv(str(p))
        assert rel.columns == head and rel.aggregate("count(*)").fetchall()[0][0] == n
        if "time" in head:
            assert str(rel.types[0]).startswith("TIMESTAMP")  # ISO 8601 with offset, understood
    df = pd.read_csv(next((tmp_path / "hostA").glob("disk_*.csv")))
    assert df["w_await_ms"].dtype.kind == "f"


def test_torn_row_is_skipped_and_cut_before_appending(tmp_path, wall):
    _record(Ticked(wall, 0.6), tmp_path)
    p = next((tmp_path / "hostA").glob("disk_*.csv"))
    good = p.read_bytes()
    with open(p, "ab") as fh:  # what a kill -9 in the middle of write() leaves
        fh.write(b"2026-11-21T14:00:00.000+00:00,hostA,vda,1.5,2")
    src = ReplaySource(tmp_path, speed=0)
    src.frames("hostA")
    assert src.skipped == 1
    _record(Ticked(wall, 0.6), tmp_path)
    text = p.read_text()
    assert text.startswith(good.decode()) and len(text) > len(good)
    src = ReplaySource(tmp_path, speed=0)
    src.frames("hostA")
    assert src.skipped == 0


def test_other_header_or_format_gets_new_files_and_clock_jump(tmp_path, wall):
    _record(Ticked(wall, 0.4), tmp_path)
    p = next((tmp_path / "hostA").glob("cpu_*.csv"))
    p.write_text(p.read_text().replace("usr_pct", "usr_old", 1))
    meta = json.loads((tmp_path / "meta.json").read_text())
    meta["format"] = 0
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    _record(Ticked(wall, 0.4), tmp_path)
    assert (tmp_path / "meta.v0.json").exists()
    second = p.with_name(p.stem + "-2.csv")
    assert second.exists() and "usr_pct" in second.read_text().splitlines()[0]
    assert "usr_old" in p.read_text().splitlines()[0]
    # a clock stepped back an hour: rows go to that hour's file, headers never mix
    eng = Engine([WaitsLike()], 1.0, host="hostA", role="primary")
    w = ArchiveWriter(tmp_path, lambda h: eng.schema(), 1.0)
    now = wall.now
    for t in (now, now + 1, now - 3600, now - 3599, now + 2):
        w(eng.tick(t))
    w.close()
    eng.close()
    files = list((tmp_path / "hostA").glob("waitslike_*.csv"))
    assert len(files) == 2
    for f in files:
        lines = f.read_text().splitlines()
        assert lines[0].startswith("time,host,instance,waits_per_s")
        assert not any(line.startswith("time,") for line in lines[1:])


def test_keep_deletes_whole_files_and_compress_is_read_back(tmp_path, wall):
    _record(Ticked(wall, 0.4), tmp_path)
    old = tmp_path / "hostA" / "cpu_20200101_00.csv"
    old.write_text((next((tmp_path / "hostA").glob("cpu_*.csv"))).read_text())
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    (tmp_path / "lost+found").mkdir()  # an archive on a volume of its own
    stray = tmp_path / "lost+found" / old.name
    stray.write_text("recovered by fsck")
    os.utime(stray, (time.time() - 7200, time.time() - 7200))
    (tmp_path / "exports").mkdir()  # a directory someone else put there
    theirs = tmp_path / "exports" / old.name
    theirs.write_text("a copy to keep")
    os.utime(theirs, (time.time() - 7200, time.time() - 7200))
    _record(Ticked(wall, 0.4), tmp_path, keep=3600, compress=True)
    assert not old.exists()
    assert stray.read_text() == "recovered by fsck"  # not ours: never housekept
    assert theirs.read_text() == "a copy to keep"  # not a host of meta.json: never housekept
    gz = list((tmp_path / "hostA").glob("*.csv.gz"))
    assert gz and not list((tmp_path / "hostA").glob("disk_*.csv"))
    with gzip.open(gz[0], "rt") as fh:
        assert fh.readline().startswith("time,host,instance")
    src = ReplaySource(tmp_path, speed=0)
    assert len(src.frames("hostA")) >= 2 and src.skipped == 0


def test_rotation_closes_and_compresses_the_previous_file(tmp_path):
    eng = Engine([WaitsLike()], 1.0, host="hostA", role="primary")
    w = ArchiveWriter(tmp_path, lambda h: eng.schema(), 1.0, rotate=60, compress=True)
    start = (time.time() // 60) * 60 - 600
    for t in (start + 58, start + 59, start + 60, start + 61):
        w(eng.tick(t))
    names = sorted(p.name for p in (tmp_path / "hostA").glob("waitslike_*"))
    w.close()
    eng.close()
    assert len(names) == 2 and names[0].endswith(".csv.gz") and names[1].endswith(".csv")
    src = ReplaySource(tmp_path, speed=0)
    assert [f.time for f in src.frames("hostA")] == [start + 58, start + 59, start + 60, start + 61]


def test_simulated_pair_round_trip_with_database_tables_and_events(tmp_path):
    from sgmon.hosts.sim import SimSource

    a, b = tmp_path / "a", tmp_path / "b"
    sim = SimSource("log-switch-storm", onset=2.0)
    w = ArchiveWriter(a, sim.schema, sim.interval)
    for _ in range(12):
        for frame in sim.pair.step():
            w(frame)
    w.close()
    sim.close()
    assert list((a / "primary").glob("oracle_waits_*.csv"))
    assert "log_switch" in (a / "primary" / "events.csv").read_text()
    _record(ReplaySource(a, speed=0), b)
    assert _tables(a) == _tables(b)


def test_no_field_shadows_a_fixed_csv_column() -> None:
    """A field named like a row key column (``instance``) made replay read the wrong column."""
    from sgmon.archive import FIXED_COLUMNS
    from sgmon.registry import load, names

    clash = [(n, f.name) for n in names() for f in load(n).fields if f.name in FIXED_COLUMNS]
    assert not clash, clash

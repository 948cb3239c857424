"""Every reading has a total time bound (one ``Deadline``, ``--time-limit`` for an import): an
OSWatcher archive of many hours, the replay of an archive, AWR history, each read past a small
bound.  Each must end with one ``sgmon:`` line that says what was read and what was not, keep
what it read, and lose nothing that was written before."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import run, sound, tree
from kits.import_awrtext import LNS

from sgmon.errors import Unreachable
from sgmon.hosts.replay import ReplaySource
from sgmon.importers.awr import Window, import_awr
from sgmon.oracle.session import Session
from sgmon.readers.deadline import Deadline
from sgmon.sim.awr import Awr
from sgmon.sim.standin import StandIn

pytestmark = pytest.mark.timeout(120)

VMSTAT = (
    "zzz ***Mon Nov 24 {h:02d}:{m:02d}:{s:02d} UTC 2025\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
    " 1  0      0 812344  10240 904800    0    0     2    40  120  300  3  1 95  1  0\n"
    " 1  0      0 812344  10240 904800    0    0     2    40  120  300  {us}  1 90  1  0\n"
)


def _osw(root: Path, hour: int, samples: int) -> Path:
    """An OSWatcher archive of one vmstat file: ``samples`` snapshots a second apart."""
    d = root / "oswvmstat"
    d.mkdir(parents=True)
    text = "Linux OSWbb v8.4.0\n" + "".join(
        VMSTAT.format(h=hour + i // 3600, m=i // 60 % 60, s=i % 60, us=i % 9)
        for i in range(samples)
    )
    (d / f"db1_vmstat_25.11.24.{hour:02d}00.dat").write_text(text)
    return root


def _rows(archive: Path) -> int:
    return sum(len(p.read_text().splitlines()) - 1 for p in archive.glob("db1/cpu_*.csv"))


def test_an_import_past_its_time_limit_keeps_what_it_read(capfd, tmp_path):
    """A first import is written whole; a second one, of 3 hours a second apart, stopped at
    0.3 s: one line says up to when, the summary counts what is in the archive, and the first
    import's rows are all there."""
    out = tmp_path / "out"
    first = run(capfd, "import", "osw", str(_osw(tmp_path / "a", 6, 60)), "--dir", str(out))
    sound(first)
    assert first.rc == 0 and not first.notes(), first.err
    before = _rows(out)
    big = _osw(tmp_path / "b", 8, 3 * 3600)
    r = run(capfd, "import", "osw", str(big), "--dir", str(out), "--time-limit", "0.3", seconds=60)
    sound(r)
    assert r.rc == 0, r.err
    (said,) = r.notes()
    assert said.startswith("sgmon: stopped after 0.3 s, the time bound of one reading: "), said
    assert "not read: those from then on" in said, said
    samples = int(r.out.split("db1 (")[1].split()[0]) if "db1 (" in r.out else 0
    assert _rows(out) == before + samples and samples < 3 * 3600 - 1, (r.out, before)


@pytest.mark.parametrize("limit", ["0", "-1", "nan", "inf", "soon"])
def test_a_time_limit_that_is_no_time_is_refused(capfd, tmp_path, limit):
    r = run(capfd, "import", "osw", str(tmp_path), "--dir", str(tmp_path / "o"), "--time-limit",
            limit)  # fmt: skip
    sound(r)
    assert r.rc == 2 and "is not a number of seconds above 0" in r.err, r.err
    assert not (tmp_path / "o").exists()


def test_a_replay_past_its_time_bound_says_so_once(capfd, tmp_path):
    """The replay reader stopped before its first table: one line naming what was read (none
    of the host's tables) and what was not, no frame made up, the archive untouched; with the
    default bound the same archive is read whole."""
    out = tmp_path / "out"
    sound(run(capfd, "import", "osw", str(_osw(tmp_path / "a", 6, 120)), "--dir", str(out)))
    before = tree(out)
    stopped = ReplaySource(out, speed=0, deadline=Deadline(0))
    assert stopped.frames("db1") == []
    (said,) = stopped.problems()
    assert said.startswith("sgmon: stopped after 0 s, the time bound of one reading: 0 of "), said
    assert "table(s) of db1 read; not read: " in said and "db1/cpu_" in said, said
    whole = ReplaySource(out, speed=0)
    assert len(whole.frames("db1")) >= 118 and whole.problems() == []
    assert tree(out) == before


def test_awr_history_past_its_time_bound_is_one_line():
    """AWR's statements are read one after another; past the bound, the import stops before
    the next with one line (a delta needs every statement's rows: nothing is imported)."""
    t0 = 1_790_000_000.0
    db = StandIn(version="19.21.0.0.0", startup=t0 - 86400)
    awr = Awr(db)
    for i in range(1, 4):
        db.publish_event("log file sync", 100 * i, 60_000.0 * i, milli=[(1, 100 * i)])
        awr.snapshot(t0 + 900 * i)
    session = Session(connect=db.connect)
    try:
        assert import_awr(session, Window(t0, t0 + 3600)).counts  # the bound is what stops it
        with pytest.raises(Unreachable) as e:
            import_awr(session, Window(t0, t0 + 3600), Deadline(0))
    finally:
        session.close()
    said = str(e.value)
    assert said.startswith("stopped after 0 s, the time bound of one reading: 3 snapshot(s)")
    assert "and 0 of " in said and "nothing imported" in said, said


@pytest.mark.parametrize("kind", ["awr-report", "sar"])
def test_a_file_importer_past_its_time_limit_names_the_first_file_not_read(capfd, tmp_path, kind):
    """Reports and sar files are read one after another: past the bound before the first,
    nothing is imported (exit 2, as for no readable file) and one line names it."""
    files = [tmp_path / f"in{i}" for i in range(3)]
    for f in files:
        f.write_bytes(LNS.read_bytes())
    out = tmp_path / "out"
    r = run(capfd, "import", kind, *map(str, files), "--dir", str(out), "--time-limit", "1e-9")
    sound(r)
    assert r.rc == 2 and not out.exists(), r.err
    (said,) = r.notes()
    assert said.startswith("sgmon: stopped after 1e-09 s, the time bound of one reading: "), said
    assert f"0 of 3 file(s) read; not read: {files[0]} and after" in said, said

"""What every importer shares (``sgmon.importers.frames``, ``sgmon.regrid``'s step rules): frames
numbered as the live engine numbers its ticks, and one rule for what is a gap.

The OSWatcher archive here is written by hand (vmstat blocks only), so these run without root.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from paths import DATA

from sgmon.engine import Engine
from sgmon.importers import awrtext, osw
from sgmon.importers.frames import Builder

AWR = DATA / "awr"
VMSTAT = """\
zzz ***Tue Nov 24 11:{mm:02d}:{ss:02d} UTC 2026
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 1  0      0 900000  10000 500000    0    0     4    12  150  300  2  1 97  0  0
 2  0      0 900000  10000 500000    0    0     8    16  160  310  3  1 96  0  0
"""


def _live_seqs(n: int) -> list[int]:
    """The sequence numbers of the live engine's first ``n`` ticks."""
    engine = Engine([], interval=1.0, host="h")
    try:
        return [engine.tick(1000.0 + k).seq for k in range(n)]
    finally:
        engine.close()


def _osw(tmp_path: Path, seconds: list[int]) -> Path:
    """An OSWatcher archive of one host whose vmstat snapshots are ``seconds`` after 11:00."""
    d = tmp_path / "archive" / "oswvmstat"
    d.mkdir(parents=True)
    blocks = "".join(VMSTAT.format(mm=s // 60, ss=s % 60) for s in seconds)
    (d / "h1_vmstat_26.11.24.1100.dat").write_text("Linux OSWbb v8.4.0\n" + blocks)
    return d.parent


def _read_osw(archive: Path) -> osw.Imported:
    return osw.read(argparse.Namespace(archive=archive, host=None, role="", tz=None))


def test_every_importer_numbers_frames_as_the_live_engine_does(tmp_path: Path) -> None:
    b = Builder(1.0)
    for k in range(3):
        b.sample("h", "", 1000.0 + k, 1.0, {})
    report = awrtext.read(
        argparse.Namespace(
            files=[AWR / "awrrpt_11204_lns.txt", AWR / "awrrpt_seed001.txt"],
            host="prim1",
            role="primary",
            tz=None,
        )
    )
    oswatcher = _read_osw(_osw(tmp_path, [0, 30, 60]))
    for imp in (b.imp, report, oswatcher):
        (frames,) = imp.frames.values()
        assert [f.seq for f in frames] == _live_seqs(len(frames)), imp.frames


def test_one_missed_oswatcher_snapshot_is_a_gap_and_a_late_one_is_not(tmp_path: Path) -> None:
    """As for sar: a snapshot that comes one whole step late (one missed) follows a gap; one a
    few seconds late (the tools started late) does not."""
    imp = _read_osw(_osw(tmp_path / "missed", [0, 30, 60, 90, 150, 180]))
    (frames,) = imp.frames.values()
    assert imp.interval == 30.0
    gaps = [(f.time - frames[0].time, e.text) for f in frames for e in f.events]
    assert gaps == [(150.0, "no OSWatcher snapshot for 60 s")], gaps
    late = _read_osw(_osw(tmp_path / "late", [0, 30, 60, 90, 131, 150]))
    assert not [e for f in late.frames["h1"] for e in f.events]


def test_vmstat_finds_its_column_names_past_junk_and_only_on_one_line() -> None:
    """The column-name line is looked for before any line is split: found after junk (with tabs
    as separators), not made of an ``r`` line and a ``b`` line, and a table without one has no
    rows."""
    from sgmon.importers.osw.reports import vmstat

    rows = " 1  0      0 900000  10000 500000    0    0     4    12  150  300  2  1 97  0  0"
    head = "r\tb   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st"
    found = vmstat(["x"] * 1000 + [head, rows, rows.replace(" 1 ", " 3 ", 1)])
    assert [b.rows["cpu"]["all"]["runq_sz"] for b in found] == [3.0]  # the last line
    assert found[0].rows["paging"]["all"]["pgpgout"] == 12.0
    split = ["r", "b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st"]
    assert vmstat([*split, rows, rows]) == []
    assert vmstat(["x"] * 1000) == []

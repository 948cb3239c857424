"""`sgmon import awr-report`: AWR text reports' wait-event histograms into the archive.

The fixtures in tests/data/awr/ are laid out as awrrpt.sql's TEXT output (their header comments
say where the layout comes from); awrrpt_seed001.txt holds seed 001's own rows.  Expected values
are the reports' numbers: Total Waits x % of the row, never the importer's output read back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kits.import_awrtext import LNS, SEED001

from sgmon.hosts.replay import ReplaySource


def test_cli_writes_an_archive_that_replays_and_bad_files_are_one_line(tmp_path: Path):
    out = tmp_path / "arch"
    run = [sys.executable, "-m", "sgmon", "import", "awr-report"]
    r = subprocess.run(
        [*run, str(LNS), str(SEED001), "--host", "prim1", "--dir", str(out), "--tz", "+02:00"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    frames = ReplaySource(out).frames("prim1")
    assert len(frames) == 2 and frames[0].time < frames[1].time  # 2019 report, then 2023
    got = frames[1].collectors["oracle_waits"].rows["log file sync"]
    assert got["p99"] == 512.0
    bad = tmp_path / "not-a-report.txt"
    bad.write_text("hello\n")
    r = subprocess.run(
        [*run, str(bad), "--dir", str(tmp_path / "x")], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"sgmon: {bad}: no Begin Snap")
    assert not (tmp_path / "x").exists()  # nothing written for a file that is not a report


def test_cli_header_without_rows_exits_non_zero_with_one_line(tmp_path: Path):
    """Before: 'imported 0 rows' and exit 0 for a report with no row to import."""
    text = SEED001.read_text()
    empty = tmp_path / "awrrpt_empty.txt"
    empty.write_text(text[: text.index("log file sync   ")])
    out = tmp_path / "x"
    r = subprocess.run(
        [sys.executable, "-m", "sgmon", "import", "awr-report", str(empty), "--dir", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "no wait event section of the commit path" in r.stderr
    assert not out.exists()

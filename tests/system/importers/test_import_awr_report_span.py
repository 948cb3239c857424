"""An AWR text report covers its interval: ``check --from`` says how long that was, and that a
finding rests on coarse samples; a UTC offset west of Greenwich is given as ``--tz -02:00``.

The report is seed 001's fixture (tests/data/awr/awrrpt_seed001.txt, a 12.1 layout with the
``SYNC Remote Write`` and ``Redo Transport MISC`` background rows) with its End Snap moved to
six minutes after the Begin Snap.
"""

from __future__ import annotations

from pathlib import Path

from importlab import rows, sgmon
from paths import DATA

SEED001 = DATA / "awr" / "awrrpt_seed001.txt"


def _six_minutes(tmp_path: Path) -> Path:
    text = SEED001.read_text().replace("813 14-Mar-19 09:30:30", "813 14-Mar-19 09:36:00")
    path = tmp_path / "awrrpt_6min.txt"
    path.write_text(text)
    return path


def test_west_offset_with_a_space(tmp_path: Path) -> None:
    out = tmp_path / "arch"
    r = sgmon(
        "import", "awr-report", str(_six_minutes(tmp_path)), "--dir", str(out), "--tz", "-02:00"
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # the offset was taken: no "taken as UTC" note
    (lfs,) = [d for d in rows(out, "node1", "oracle_waits") if d["instance"] == "log file sync"]
    assert lfs["time"] == "2019-03-14T11:36:00.000+00:00"  # 09:36 at UTC-2


def test_check_says_the_reports_span_and_resolution(tmp_path: Path) -> None:
    out = tmp_path / "arch"
    r = sgmon("import", "awr-report", str(_six_minutes(tmp_path)), "--dir", str(out), "--tz=+00:00")
    assert r.returncode == 0, r.stderr
    check = sgmon("check", "--from", str(out))
    head = check.stdout.splitlines()[0]
    assert head.startswith("sgmon check: node1 over 360 s:"), head
    assert "log file sync" in check.stdout
    assert "resolution: 6-minute samples" in check.stdout, check.stdout

"""A FIFO where sgmon expects a file: ``sgmon status`` finding one among the state files and
``sgmon import osw`` finding one among the archive's files must neither hang (nothing ever
writes to it) nor traceback; the regular files beside it are read as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)


def _sgmon(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args],
        capture_output=True,
        text=True,
        timeout=20,  # a hang fails here, not at the suite's timeout
        env={**os.environ, **(env or {})},
    )


def test_status_passes_over_a_fifo_among_the_state_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    os.mkfifo(run / "state-4242.txt")
    r = _sgmon("status", "--format", "plain", env={"SGMON_RUNTIME_DIR": str(run)})
    assert "Traceback" not in r.stderr
    assert r.returncode in (0, 3), r.stderr


def test_import_osw_says_a_fifo_is_no_file_and_imports_the_rest(tmp_path: Path) -> None:
    from oswlab import OLD_IOSTAT

    archive = tmp_path / "archive"
    (archive / "oswiostat").mkdir(parents=True)
    (archive / "oswiostat" / "db1_iostat_26.11.24.1100.dat").write_text(OLD_IOSTAT)
    os.mkfifo(archive / "oswiostat" / "db1_iostat_26.11.24.1200.dat")
    out = tmp_path / "arch"
    r = _sgmon("import", "osw", str(archive), "--dir", str(out))
    assert "Traceback" not in r.stderr
    assert "FIFO" in r.stderr and r.stderr.startswith("sgmon: "), r.stderr
    assert list((out / "db1").glob("disk_*.csv")), "the regular file beside it was not imported"


def test_status_passes_over_a_2gb_state_file_in_bounded_memory(tmp_path, monkeypatch) -> None:
    from test_hostile_archives import _rss_of

    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    with open(run / "state-4243.txt", "wb") as f:
        f.truncate(2 << 30)  # sparse
    monkeypatch.setenv("SGMON_RUNTIME_DIR", str(run))
    peak, err = _rss_of("status", "--format", "plain")
    assert "Traceback" not in err
    assert peak < 200_000, f"{peak // 1000} MB to pass over one state file"

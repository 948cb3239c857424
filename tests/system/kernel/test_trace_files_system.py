"""The trace reader on real public traces (tests/data/traces/README.md): 11.2 and 12.2+ stamps
in the instance's zone, the LGnn lines that explain log file sync, pid-named files that a new
process replaces, recreated and segmented files, an unreadable file, and msgids per thread."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from kits.trace_files import V11, _epoch, _read_whole


def _until_exec(pid: int, program: bytes, timeout: float = 5.0) -> None:
    """Wait until ``pid`` runs ``program``: before its exec, /proc/PID/environ is still the
    forking test's own (a loaded machine read it there, and got no TZ)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            if fh.read().startswith(program):
                return
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never ran {program!r}")


def test_11g_stamps_take_the_traced_process_tz(tmp_path, other_tz):
    """The instance was started with TZ=America/Chicago: its processes carry it, sgmon does not."""
    lgwr = tmp_path / "ora_lgwr_oravm1"  # what LGWR calls itself (its comm)
    lgwr.symlink_to(shutil.which("sleep") or "/bin/sleep")
    proc = subprocess.Popen([str(lgwr), "60"], env={"TZ": "America/Chicago"})
    try:
        _until_exec(proc.pid, str(lgwr).encode())
        trc = tmp_path / f"oravm1_lgwr_{proc.pid}.trc"
        trc.write_text(V11.read_text())
        _, events = _read_whole(trc)
    finally:
        proc.kill()
        proc.wait()
    assert events[1].time == pytest.approx(_epoch("2015-03-10 14:09:08.402", "America/Chicago"))

"""`sgmon lab` as a DBA runs it: a scheduled incident, a recording, and a clean exit or Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nslab
import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]
UP = re.compile(r"netns (\S+), log (\S+)\).*netns (\S+), log (\S+)\)")
HOST = re.compile(r"netns (\S+), log (\S+)\)")


def _backing(device: str) -> str:
    """The file behind a loop device, through the loop device under it ("" once detached)."""
    p = Path("/sys/block") / Path(device).name / "loop" / "backing_file"
    backing = p.read_text().strip() if p.exists() else ""
    return _backing(backing) if backing.startswith("/dev/loop") else backing


def _gone(namespaces: tuple[str, ...], files: list[str]) -> None:
    """Assert the lab's namespaces are removed and its loop devices detached and deleted."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in namespaces)
    assert files and all(f and not Path(f).exists() for f in files)


def test_scheduled_incident_is_shown_recorded_and_removed(tmp_path):
    nslab.require_lab()
    out = subprocess.run(
        [sys.executable, "-m", "sgmon", "lab", "--duration", "12s", "--scenario",
         "standby-iops-cap", "--onset", "4s", "--record", str(tmp_path / "rec")],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    m = UP.search(lines[0])
    assert m, lines[0]
    ticks = [line for line in lines if " P lfs " in line]
    assert any("[healthy]" in t for t in ticks) and any("[iops]" in t for t in ticks)
    assert "finding(s):" in out.stdout
    for host in ("primary", "standby"):
        assert list((tmp_path / "rec" / host).glob("oracle_waits_*.csv"))
        assert list((tmp_path / "rec" / host).glob("disk_*.csv"))
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert m[1] not in listed and m[3] not in listed


@pytest.mark.parametrize(
    ("fault", "hosts"),
    [("loss@2s", 2), ("iops_async@2s", 3)],  # the ASYNC standby's fault brings its namespace
)
def test_ctrl_c_removes_the_lab(fault, hosts):
    nslab.require_lab()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "lab", "--duration", "60s", "--fault", fault],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        made = HOST.findall(first)
        assert len(made) == hosts, first
        files = [_backing(dev) for _, dev in made]
        time.sleep(5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 130
    assert "interrupted" in err
    _gone(tuple(ns for ns, _ in made), files)

"""`sgmon record` and replay: the archive layout, its durability, and the round trip."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import subprocess
import sys
import time

import nslab
from kits.record import _local, _record, _tables

from sgmon.hosts.replay import ReplaySource
from sgmon.readers.tracefs import TRACEFS, remove_stale

SGMON = [sys.executable, "-m", "sgmon"]


def _cli(*args: str, timeout: float = 30, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*SGMON, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_bad_directories_and_corrupt_meta_are_one_line(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    r = _cli("record", "--dir", str(foreign), "--duration", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not an sgmon archive" in r.stderr
    r = _cli("record", "--dir", "/etc/passwd/x", "--duration", "1")
    assert r.returncode == 2 and r.stderr.startswith("sgmon: cannot create")
    arch = tmp_path / "arch"
    _record(_local(duration=0.4), arch)
    (arch / "meta.json").write_text('{"format": 1, "hosts": ')
    before = _tables(arch)
    r = _cli("record", "--dir", str(arch), "--duration", "1")  # never written over
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "corrupt" in r.stderr
    r = _cli("replay", str(arch), "--summary")  # what the CSV files hold is still read
    assert r.returncode == 0 and "== hostA (no role, " in r.stdout, r.stdout
    first = r.stderr.splitlines()[0]
    assert "corrupt" in first and "read from their CSV files" in first, r.stderr
    assert _tables(arch) == before
    r = _cli("replay", str(tmp_path / "nothing"))
    assert r.returncode == 2 and r.stderr.startswith("sgmon: ")


def test_sigterm_closes_cleanly_and_replay_summary(tmp_path):
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    arch = tmp_path / "arch"
    p = subprocess.Popen(
        [*SGMON, "record", "--dir", str(arch), "--interval", "0.2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 15
        while not list((tmp_path / "run").glob("state-*.txt")) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.6)
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            p.kill()
    assert "rows written" in p.stderr.read()
    assert not list((tmp_path / "run").glob("state-*.txt"))  # withdrawn on a clean stop
    for f in arch.rglob("*.csv"):
        assert f.read_bytes().endswith(b"\n")
    r = _cli("replay", str(arch), "--summary")
    assert r.returncode == 0 and "findings" in r.stdout and len(r.stdout.splitlines()) <= 24
    r = _cli("replay", str(arch), "--fields")
    assert r.returncode == 0 and "cpu" in r.stdout and "min" in r.stdout
    first = ReplaySource(arch, speed=0)
    host = first.hosts[0].name
    t = first.frames(host)[-1].time
    from sgmon.archive import fmt_time

    r = _cli("replay", str(arch), "--at", fmt_time(t))
    assert r.returncode == 0 and f"== {host}" in r.stdout and "disk" in r.stdout


def test_full_disk_pauses_and_resumes_without_damage(tmp_path):
    nslab.require_root("mount")
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mnt)], check=True)
    p = None
    try:
        arch = mnt / "arch"
        env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
        log = tmp_path / "stderr.txt"
        with open(log, "w") as err:
            p = subprocess.Popen(
                [*SGMON, "record", "--dir", str(arch), "--interval", "0.2", "--duration", "60"],
                stderr=err,
                env=env,
            )

        def wait_for(text: str) -> None:
            deadline = time.monotonic() + 20
            while text not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert text in log.read_text()

        wait_for("recording ")
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):
            for _ in range(1000):  # 4 MB at most into a 400 kB file system
                os.write(fd, b"\0" * 4096)
        os.close(fd)
        wait_for("No space left on device; recording paused")
        filler.unlink()
        wait_for("writing again")
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
        src = ReplaySource(arch, speed=0)
        frames = src.frames(src.hosts[0].name)
        assert src.skipped == 0 and frames
        assert "gap" in next(arch.glob("*/events.csv")).read_text()
        for f in arch.rglob("*.csv"):
            assert f.read_bytes().endswith(b"\n")
    finally:
        if p is not None and p.poll() is None:
            p.kill()
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_kill_9_loses_at_most_the_row_being_written(tmp_path):
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    arch = tmp_path / "arch"
    cmd = [*SGMON, "record", "--dir", str(arch), "--interval", "0.1", "--quiet"]
    try:
        for _ in range(2):  # killed, then restarted into the same files
            p = subprocess.Popen(cmd, env=env)
            try:
                deadline = time.monotonic() + 20
                while len(list(arch.glob("*/cpu_*.csv"))) < 1 and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(0.7)
            finally:
                p.kill()
                p.wait(10)
    finally:  # as root the recorder's retrans collector made a trace instance the kill left
        remove_stale(TRACEFS)
    src = ReplaySource(arch, speed=0)
    frames = src.frames(src.hosts[0].name)
    assert len(frames) >= 8 and src.skipped <= len(list(arch.rglob("*.csv")))
    for f in arch.rglob("*_*.csv"):
        complete = f.read_text().split("\n")[:-1]  # a torn last line has no newline
        rows = list(csv.reader(complete))
        assert all(len(r) == len(rows[0]) for r in rows)  # no glued or shifted rows


def test_recorder_logs_findings_as_they_open(tmp_path):
    """The recorder runs the analysis: an incident in the recording is in findings.csv too."""
    arch = tmp_path / "arch"
    r = _cli(
        "record",
        "--dir",
        str(arch),
        "--simulate",
        "rto-stall",
        "--speed",
        "50",
        "--duration",
        "120s",
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    with open(arch / "primary" / "findings.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    opened = [row for row in rows if row["event"] == "open"]
    assert opened, rows
    assert any(row["rule"] == "rto_stall" for row in opened), [r["rule"] for r in opened]

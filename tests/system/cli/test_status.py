"""`sgmon status`: the line tmux shows, from the state a running recorder publishes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from sgmon.grading import Grader
from sgmon.hosts.sim import SimSource
from sgmon.judgement import Judge
from sgmon.sinks.statefile import StatePublisher
from sgmon.status import TMUX_COLOUR

FORBIDDEN = (
    "textual", "rich", "psutil", "pyroute2", "oracledb", "prometheus_client", "argparse", "json",
)  # fmt: skip


def _status(run_dir, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(run_dir))
    return subprocess.run(
        [sys.executable, "-m", "sgmon", "status", *args],
        capture_output=True, text=True, timeout=30, env=env,
    )  # fmt: skip


def test_status_imports_nothing_heavy(tmp_path):
    code = (
        "import sys\n"
        "from sgmon.cli import main\n"
        "main(['status'])\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print('FORBIDDEN', bad)\n"
    )
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "FORBIDDEN []" in r.stdout, r.stdout + r.stderr


def test_missing_and_garbage_state_give_a_dim_notice(tmp_path):
    r = _status(tmp_path / "nothing", "--format", "tmux")
    assert r.returncode == 0 and r.stdout.startswith(
        f"{TMUX_COLOUR['stale']}sgmon: no sgmon running"
    )
    (tmp_path / "state-1.txt").write_text("{not a state")
    (tmp_path / f"state-{os.getpid()}.txt").write_text("sgmon-state 2 x y\nprimary\n")
    r = _status(tmp_path)
    assert r.returncode == 0 and r.stdout == "sgmon: no sgmon running\n" and r.stderr == ""


def test_line_from_the_simulated_pair_and_staleness(tmp_path):
    src = SimSource("rto-stall", onset=3.0)
    pub = StatePublisher(tmp_path)
    judge = Judge(schema_of=src.schema, live=False)
    for _ in range(15):  # past the onset of the 200 ms RTO retransmissions
        for frame in src.pair.step():
            pub(frame, judge(frame))
    src.close()
    plain = _status(tmp_path).stdout.strip()
    assert plain.startswith("P lfs ") and " | S " in plain, plain
    assert "rto 2" in plain and "aqu " in plain
    tmux = _status(tmp_path, "--format", "tmux").stdout
    assert (
        f"{TMUX_COLOUR['warn']}rto" in tmux or f"{TMUX_COLOUR['crit']}rto" in tmux
    )  # rto 200+ is a warning
    only = _status(tmp_path, "--host", "standby").stdout
    assert only.startswith("S ") and "|" not in only
    state = json.loads(_status(tmp_path, "--format", "json").stdout)
    assert set(state["hosts"]) == {"primary", "standby"}
    # the publisher stops publishing: stale after three intervals
    path = tmp_path / f"state-{os.getpid()}.txt"
    for h in pub._hosts.values():
        h["written"] -= 60
    pub.publish()
    assert "stale" in _status(tmp_path).stdout
    pub.close()
    assert not path.exists()


def test_grade_follows_the_declared_thresholds_and_the_config():
    grader = Grader()
    assert [grader.grade("h", "disk", "sda", "aqu_sz", v) for v in (0.2, 1, 9)] == [
        "ok",
        "warn",
        "crit",
    ]
    assert grader.grade("h", "cpu", "all", "idle", 99.0) == "ok"
    assert grader.grade("h", "cpu", "all", "idle", 0.5) == "crit"  # lower is worse
    assert grader.grade("h", "nosuch", "x", "y", 5) == "ok"
    assert grader.grade("h", "disk", "sda", "aqu_sz", None) == "ok"
    # the config's [thresholds] move the status line's grade as they move the dashboard's
    raised = Grader({"disk.aqu_sz": {"warn": 5}})
    assert raised.grade("h", "disk", "sda", "aqu_sz", 3) == "ok"
    assert raised.grade("h", "disk", "sda", "aqu_sz", 6) == "warn"


def test_status_reads_a_running_recorder(tmp_path):
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path / "run"))
    p = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "record", "--dir", str(tmp_path / "a"),
         "--interval", "0.2", "--quiet"],
        env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        line = ""
        while time.monotonic() < deadline:
            line = _status(tmp_path / "run").stdout
            if "no sgmon running" not in line:
                break
            time.sleep(0.2)
        assert "no sgmon running" not in line and "stale" not in line
    finally:
        p.terminate()
        p.wait(10)
    assert "no sgmon running" in _status(tmp_path / "run").stdout


def test_a_dead_publishers_state_is_ignored_even_when_its_pid_is_reused(tmp_path):
    """A state file names its publisher by pid and start time: a pid the kernel has since given
    to another process (here: this test's own) is not a running sgmon."""
    from sgmon.readers.procfile import start_time
    from sgmon.status import state_text

    hosts = {
        "primary": {
            "role": "primary", "tag": "P", "time": time.time(), "written": time.time(),
            "interval": 1.0, "failing": [], "items": [("lfs", "1.1/2ms", "ok")],
        }
    }  # fmt: skip
    me = os.getpid()
    dead = tmp_path / f"state-{me}.txt"
    dead.write_text(state_text(me, "1", hosts))  # not our start time: another process's file
    assert _status(tmp_path).stdout == "sgmon: no sgmon running\n"
    assert not dead.exists()  # removed by the reader: a crash leaves nothing to misread
    (tmp_path / f"state-{me}.txt").write_text(state_text(me, start_time(me) or "?", hosts))
    assert _status(tmp_path).stdout == "P lfs 1.1/2ms\n"


def test_status_options_take_the_short_way_and_bad_ones_the_usual_errors(tmp_path):
    """``--format``/``--host`` skip argparse; anything else still gets argparse's help/error."""
    assert _status(tmp_path / "none", "--format=tmux", "--host", "x").stdout.startswith("#[fg")
    r = _status(tmp_path, "--format", "html")
    assert r.returncode == 2 and "invalid choice: 'html'" in r.stderr
    r = _status(tmp_path, "--help")
    assert r.returncode == 0 and "--format" in r.stdout


def test_rac_instances_are_told_apart(tmp_path):
    """Two primary instances would both read "P": each is named, the one standby stays "S"."""
    src = SimSource("rac-rto-stall", onset=3.0)
    pub = StatePublisher(tmp_path)
    judge = Judge(schema_of=src.schema, live=False)
    for _ in range(5):
        for frame in src.pair.step():
            pub(frame, judge(frame))
    src.close()
    parts = [p.split(" ", 1)[0] for p in _status(tmp_path).stdout.strip().split(" | ")]
    pub.close()
    assert parts == ["P:node1", "P:node2", "S"], parts

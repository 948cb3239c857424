"""`sgmon record` that never reached a host says so and exits 3, keeping what it recorded of
the hosts it did reach (the README: exit 3, a source could not be reached)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SGMON = [sys.executable, "-m", "sgmon"]
CONFIG = """
name = "PROD"
[[host]]
name = "here"
role = "primary"
[[host]]
name = "stby1"
role = "standby"
ssh = "oracle@127.0.0.1"
ssh_options = ["-p", "1", "-o", "ConnectTimeout=2"]
"""


def test_record_exits_3_naming_the_host_it_never_reached(tmp_path: Path) -> None:
    (tmp_path / "sgmon.toml").write_text(CONFIG)
    r = subprocess.run(
        [*SGMON, "record", "--dir", "arch", "--duration", "4s"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 3, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("sgmon: never reached stby1:"), r.stderr
    assert "here" not in last
    assert "Traceback" not in r.stderr
    assert list((tmp_path / "arch" / "here").glob("cpu_*.csv")), "the reached host's rows stay"


def test_record_of_reached_hosts_exits_0(tmp_path: Path) -> None:
    r = subprocess.run(
        [*SGMON, "record", "--simulate", "healthy", "--speed", "10", "--duration", "3s"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "never reached" not in r.stderr

"""Headless commands must start fast: they never import Textual or rich (DESIGN, issue 2).

Each check runs the real entry point in a fresh interpreter and inspects sys.modules, the way
harlequin guards its headless path.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = [
    "record", "status", "agent", "serve", "check", "collectors", "top", "probe", "import", "report"
]  # fmt: skip
PROBE = """
import sys
from sgmon.cli import main
try:
    main([{cmd!r}, "--help"])
except SystemExit:
    pass
bad = [m for m in ("textual", "rich") if m in sys.modules]
print("IMPORTED:" + ",".join(bad))
"""


@pytest.mark.parametrize("cmd", HEADLESS)
def test_headless_command_imports_no_textual(cmd: str) -> None:
    r = subprocess.run(
        [sys.executable, "-c", PROBE.format(cmd=cmd)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    marker = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED:")]
    assert marker == ["IMPORTED:"], f"{cmd} imported {marker}"


def test_collectors_import_without_drivers() -> None:
    """Importing a collector module must not import its driver (pyroute2, oracledb)."""
    code = (
        "import sys, importlib\n"
        "from sgmon import registry\n"
        "for name in registry.names():\n"
        "    registry.load(name)\n"
        "mods = ('pyroute2', 'oracledb', 'textual', 'rich')\n"
        "print(','.join(m for m in mods if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


RUNNING = """
import sys
from sgmon.cli import main
main({argv!r})
bad = [m for m in ("textual", "rich", "oracledb", "sgmon.analysis") if m in sys.modules]
print("IMPORTED:" + ",".join(bad), file=sys.stderr)
"""


@pytest.mark.parametrize("cmd", ["agent", "serve"])
def test_agent_and_exporter_grade_without_the_analysis(cmd: str, unused_port: int) -> None:
    """They grade for the status line and the exporter's sgmon_grade; the analysis, its ~130 ms
    of imports and its per-tick cost belong where the hosts meet (the dashboard, record)."""
    argv = [cmd, "--simulate", "healthy", "--duration", "2s"]
    if cmd == "serve":
        argv += ["--listen", f"127.0.0.1:{unused_port}"]
    r = subprocess.run(
        [sys.executable, "-c", RUNNING.format(argv=argv)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "IMPORTED:\n" in r.stderr, r.stderr


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

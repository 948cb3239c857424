"""Headless commands must start fast: they never import Textual or rich (DESIGN, issue 2).

Each check runs the real entry point in a fresh interpreter and inspects sys.modules, the way
harlequin guards its headless path.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = ["record", "status", "agent", "serve", "check", "collectors", "top", "probe"]
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

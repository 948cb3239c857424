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
    """The agent grades for the status line; the analysis, its ~130 ms of imports and its
    per-tick cost belong where the hosts meet (the dashboard, record, and serve, whose
    sgmon_finding is what a fleet alerts on).  Neither imports the TUI or the database driver
    for a simulation."""
    argv = [cmd, "--simulate", "healthy", "--duration", "2s"]
    if cmd == "serve":
        argv += ["--listen", f"127.0.0.1:{unused_port}"]
    r = subprocess.run(
        [sys.executable, "-c", RUNNING.format(argv=argv)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    analysis = "sgmon.analysis" if cmd == "serve" else ""
    assert f"IMPORTED:{analysis}\n" in r.stderr, r.stderr


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PLUGIN_CPU = """
from collectors.cpu import CpuCollector
from sgmon.model import Field, Kind


class PluginCpu(CpuCollector):
    fields = (Field("steal_pct", "%", Kind.GAUGE, "a field no built-in has"),)
"""
SIM_SCHEMA = """
import sys
from sgmon import registry
from sgmon.sim import SimPair

pair = SimPair("healthy", seed=1, start=1.8e9)
cpu = [f.name for f in pair.schema("primary")["cpu"]]
scanned = "importlib.metadata" in sys.modules
print("SIM:", cpu == [f.name for f in registry.builtin("cpu").fields])
print("LOAD:", registry.load("cpu").__module__)
print("BUILTIN:", registry.builtin("cpu").__module__)
print("SCANNED:", scanned, "importlib.metadata" in sys.modules)
pair.close()
"""


def test_a_plugin_replaces_a_builtin_for_load_not_for_the_simulation(tmp_path) -> None:
    """A distribution's entry point named like a built-in replaces it for ``load`` (real
    collection); the simulation writes the built-in's rows, so it describes them with the
    built-in's fields, and builds them without scanning the installed distributions (the
    demo's start)."""
    (tmp_path / "plugcpu.py").write_text(PLUGIN_CPU)
    info = tmp_path / "plugcpu-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugcpu\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[sgmon.collectors]\ncpu = plugcpu:PluginCpu\n")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", SIM_SCHEMA], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    assert lines["SIM"] == "True" and lines["BUILTIN"] == "collectors.cpu", lines
    assert lines["LOAD"] == "plugcpu", lines
    assert lines["SCANNED"] == "False True", lines  # load() scanned them; the schema did not

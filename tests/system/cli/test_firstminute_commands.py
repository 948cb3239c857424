"""The first minute at the command line: what `serve` says when it stops, and what `--help` says
about `--duration` with `--speed`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SGMON = [sys.executable, "-m", "sgmon"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_says_when_it_stops(tmp_path: Path) -> None:
    """Like `record`, `serve` prints a start line and a stop line on stderr."""
    listen = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp_path))
    r = subprocess.run(
        [*SGMON, "serve", "--listen", listen, "--simulate", "healthy", "--speed", "20",
         "--duration", "10s"],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines == [
        f"sgmon: serving metrics on http://{listen}/metrics",
        f"sgmon: stopped serving on http://{listen}/metrics",
    ]


@pytest.mark.parametrize("command", ["record", "serve", "agent"])
def test_help_says_duration_counts_simulated_time(command: str) -> None:
    r = subprocess.run([*SGMON, command, "--help"], capture_output=True, text=True, timeout=30)
    text = " ".join(r.stdout.split())
    assert "with --simulate, simulated time" in text and "--speed 10" in text

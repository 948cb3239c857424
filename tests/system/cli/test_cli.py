"""The command surface: every command exists, errors are one `sgmon:` line with the right code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sgmon.cli import COMMANDS


def sgmon(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=timeout
    )


def test_help_lists_every_command() -> None:
    r = sgmon("--help")
    assert r.returncode == 0
    for name in COMMANDS:
        assert f"  {name} " in r.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_has_help(name: str) -> None:
    r = sgmon(name, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: sgmon {name}")


def test_unknown_command_is_one_line_exit_2() -> None:
    r = sgmon("frobnicate")
    assert r.returncode == 2
    assert r.stderr.startswith("sgmon: unknown command 'frobnicate'")
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_interval_is_one_line_exit_2() -> None:
    r = sgmon("top", "--interval", "0.01", "--count", "1")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sgmon:") and "0.1s" in lines[0]


def test_bad_config_is_one_line_exit_2(tmp_path) -> None:
    bad = tmp_path / "sgmon.toml"
    bad.write_text("interval = [\n")
    r = sgmon("record", "--config", str(bad), "--dir", str(tmp_path / "out"), "--duration", "1s")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sgmon:") and "TOML" in lines[0]

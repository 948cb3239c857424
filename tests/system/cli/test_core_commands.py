"""`sgmon top` and `sgmon collectors` on this machine."""

from __future__ import annotations

import re
import subprocess
import sys
import threading

import pytest

from sgmon.collector import Collector, ConfigError, Unavailable
from sgmon.commands import collectors as collectors_cmd
from sgmon.config import Config
from sgmon.model import Rows


def sgmon(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=timeout
    )


def test_top_prints_blocks_then_stops() -> None:
    r = sgmon("top", "--count", "2", "--interval", "0.2s", "--collectors", "cpu,paging,disk")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("--- ") == 2
    assert re.findall(r"  tick (\d+)  ", r.stdout) == ["1", "2"]  # the priming sample is not one
    for heading in ("CPU", "%usr", "PAGING", "pgscank/s", "DISK", "w_await"):
        assert heading in r.stdout
    assert "NET" not in r.stdout  # only the chosen collectors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--collectors", "cpu,nosuch"), "unknown collector nosuch"),
        (("--interval", "0.01"), "out of range"),
        (("--interval", "soon"), "bad duration"),
    ],
)
def test_top_bad_input_is_one_line(args: tuple[str, ...], message: str) -> None:
    r = sgmon("top", "--count", "1", *args)
    assert r.returncode == 2
    assert r.stderr.startswith("sgmon: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_collectors_lists_each_with_its_status_and_fields() -> None:
    r = sgmon("collectors", "--fields")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in ("cpu", "paging", "disk"):
        assert any(line.split()[:2] == [name, "ok"] for line in lines), name
    assert any(line.split()[:3] == ["w_await", "ms", "gauge"] for line in lines)


class Hangs(Collector):
    name = "hangs"
    release = threading.Event()

    def open(self) -> None:
        self.release.wait(10)

    def sample(self) -> Rows:
        return {}


class Refuses(Collector):
    name = "refuses"

    def open(self) -> None:
        raise Unavailable("needs CAP_NET_ADMIN")

    def sample(self) -> Rows:
        return {}


class BadOptions(Collector):
    name = "badopts"

    def __init__(self, options=None) -> None:
        raise ConfigError("collectors.badopts.ports: 'x' is not a port number")

    def sample(self) -> Rows:
        return {}


def test_collectors_survive_hanging_refusing_and_broken_plugins(monkeypatch) -> None:
    monkeypatch.setattr(collectors_cmd, "OPEN_TIMEOUT", 0.2)
    try:
        assert collectors_cmd._try_open(Hangs()) == ("error", "open() did not return within 0.2s")
    finally:
        Hangs.release.set()
    assert collectors_cmd._try_open(Refuses()) == ("unavailable", "needs CAP_NET_ADMIN")
    targets = {"badopts": "x:BadOptions", "gone": "no.such.module:Collector"}
    monkeypatch.setattr(
        collectors_cmd.registry, "load", lambda n: BadOptions if n == "badopts" else __import__(n)
    )
    bad = collectors_cmd.check("badopts", targets["badopts"], Config())
    assert bad.status == "error" and "is not a port number" in bad.reason
    gone = collectors_cmd.check("gone", targets["gone"], Config())
    assert gone.status == "error" and gone.reason.startswith("cannot import")

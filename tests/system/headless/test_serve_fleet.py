"""`sgmon serve` holds a fleet's scrapes: a real listen backlog (``ss`` shows it), a bounded pool
of workers however many clients connect (``/proc`` counts the threads), and every one of a burst
of concurrent scrapes answered while 200 other clients hold connections open and say nothing."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO


def _load_bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("serve_load", ROOT / "bench" / "serve_load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


@pytest.fixture
def served() -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    with bench.serving(duration=120) as running:
        yield running


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


def _settled(pid: int, limit: float = 15.0) -> int:
    """The process's thread count once it stopped changing for 2 s: the simulated source
    starts its threads a few seconds after the first scrape is answered."""
    deadline = time.monotonic() + limit
    last, since = _threads(pid), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < 2.0:
        time.sleep(0.2)
        now = _threads(pid)
        if now != last:
            last, since = now, time.monotonic()
    return last


def test_backlog_and_bounded_workers(served: tuple[int, subprocess.Popen[bytes]]) -> None:
    port, proc = served
    ss = subprocess.run(
        ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, timeout=10
    ).stdout.split()
    assert int(ss[2]) >= 1024, ss  # a listening socket's Send-Q is its backlog
    before = _settled(proc.pid)
    idle = []
    for _ in range(200):  # clients that connect and say nothing
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        idle.append(s)
    time.sleep(0.5)
    assert _threads(proc.pid) <= before + 2  # not a thread per connection
    t0 = time.monotonic()  # the silent clients hold no worker: scrapes go on beside them
    result = bench.load(port, requests=1000, clients=100, timeout=10.0)
    assert result["ok"] == 1000, result
    assert time.monotonic() - t0 < 30
    for s in idle:
        s.close()

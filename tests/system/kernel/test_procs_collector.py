"""The procs collector on real processes named as an instance's are: discovery by name, the
kernel's run-queue delay measured where two busy processes share one CPU, restarts, RFS by its
Data Guard socket.  Every process the test starts is bounded in time and killed at the end."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from collectors.procs import ProcsCollector
from sgmon.readers.procs import Names

PROG = (
    "import sys, time\n"
    "open('/proc/self/comm', 'w').write(sys.argv[1])\n"
    "end = time.monotonic() + float(sys.argv[3])\n"
    "while time.monotonic() < end:\n"
    "    if sys.argv[2] == 'sleep':\n"
    "        time.sleep(0.05)\n"
)


@pytest.fixture
def spawn() -> Iterator:
    started: list[subprocess.Popen] = []

    def start(name: str, mode: str = "sleep", seconds: float = 20, cpu: int | None = None):
        argv = [sys.executable, "-c", PROG, name, mode, str(seconds)]
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu), *argv]
        p = subprocess.Popen(argv)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
        p.wait()


def _named(c: ProcsCollector, names: set[str], timeout: float = 5.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        c._walked = float("-inf")  # walk now: the test's processes were just started
        rows = c.sample()
        if names <= rows.keys() or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def test_background_processes_are_found_by_name_and_measured(spawn) -> None:
    """Two busy processes pinned to one CPU each get half of it and wait the other half: the
    one named LGWR shows at most ~50 % CPU and the rest of each second as run-queue delay (it
    is runnable throughout: running plus waiting is the whole second, however many other
    processes share CPU 0 on a loaded machine); a sleeper shows neither."""
    spawn("ora_lgwr_TST", "busy", 10, cpu=0)
    spawn("hog", "busy", 10, cpu=0)
    spawn("ora_nss2_TST")
    spawn("ora_lgwr_OTHER")  # another instance's: left out by sid
    c = ProcsCollector({"sid": "TST"})
    c.open()
    try:
        prev = _named(c, {"LGWR", "NSS2"})
        t0 = time.monotonic()
        time.sleep(2.0)
        rows = c.derive(prev, c.sample(), time.monotonic() - t0)
    finally:
        c.close()
    assert set(rows) == {"LGWR", "NSS2"}
    lgwr, nss = rows["LGWR"], rows["NSS2"]
    assert lgwr["cpu"] * 10 + lgwr["runq"] == pytest.approx(1000, rel=0.1)
    assert lgwr["cpu"] < 65 and lgwr["runq"] > 350
    assert lgwr["nvcsw"] > 10  # preempted by the hog, again and again
    assert nss["runq"] < 50 and nss["state"] == "S" and nss["vcsw"] > 5  # it sleeps 20x/s


def test_a_restarted_process_is_followed_with_an_event(spawn) -> None:
    first = spawn("ora_ckpt_TST")
    c = ProcsCollector({"sid": "TST"})
    c.open()
    try:
        assert _named(c, {"CKPT"})["CKPT"]["pid"] == first.pid
        first.kill()
        first.wait()
        second = spawn("ora_ckpt_TST")
        time.sleep(0.3)
        rows = c.sample()  # the old one is gone: a walk at once finds its successor
        events = c.take_events()
    finally:
        c.close()
    assert rows["CKPT"]["pid"] == second.pid
    assert [(e.kind, e.instance) for e in events] == [("restart", "CKPT")]
    assert f"{first.pid} -> {second.pid}" in events[0].text


def test_rfs_is_the_server_process_holding_a_data_guard_socket(spawn) -> None:
    """On a standby, RFS is an ``oracle<SID> (LOCAL=NO)`` server process whose established
    socket has the Data Guard port as its local port (the listener handed it the primary's
    connection); another server process is not RFS, nor is any on a primary (its server
    processes on the listener port serve clients)."""
    server = (
        "import socket, sys, time\n"
        "open('/proc/self/comm', 'w').write('oracleTST')\n"
        "srv = socket.socket()\n"
        "srv.bind(('127.0.0.1', 0))\n"
        "srv.listen()\n"
        "print(srv.getsockname()[1], flush=True)\n"
        "conn, _ = srv.accept()\n"
        "time.sleep(20)\n"
    )
    rfs = subprocess.Popen([sys.executable, "-c", server], stdout=subprocess.PIPE, text=True)
    idle = spawn("oracleTST")
    try:
        port = int(rfs.stdout.readline())
        with socket.create_connection(("127.0.0.1", port)):  # the primary's NSS connecting
            standby = ProcsCollector({"role": "standby", "ports": [port]})
            primary = ProcsCollector({"role": "primary", "ports": [port]})
            standby.open()
            primary.open()
            try:
                rows = _named(standby, {f"RFS[{rfs.pid}]"})
                other = _named(primary, set(), timeout=0)
            finally:
                standby.close()
                primary.close()
    finally:
        rfs.kill()
        rfs.wait()
    assert f"RFS[{rfs.pid}]" in rows and f"RFS[{idle.pid}]" not in rows
    assert not any(k.startswith("RFS") for k in other)


def test_threaded_execution_follows_the_background_thread_alone(spawn) -> None:
    """With threaded_execution=TRUE the background processes are threads of ``ora_uNNN_<SID>``
    processes; LGWR is followed as its own thread (its tid), not summed with its neighbours."""
    threaded = (
        "import os, threading, time\n"
        "open('/proc/self/comm', 'w').write('ora_u001_TST')\n"
        "def lgwr():\n"
        "    open(f'/proc/self/task/{threading.get_native_id()}/comm', 'w').write('ora_lgwr_TST')\n"
        "    end = time.monotonic() + 20\n"
        "    while time.monotonic() < end:\n"
        "        pass\n"
        "t = threading.Thread(target=lgwr, daemon=True)\n"
        "t.start()\n"
        "print(t.native_id, flush=True)\n"
        "time.sleep(20)\n"
    )
    proc = subprocess.Popen(
        ["taskset", "-c", "0", sys.executable, "-c", threaded], stdout=subprocess.PIPE, text=True
    )
    spawn("hog", "busy", 10, cpu=0)
    c = ProcsCollector({"sid": "TST"})
    c.open()
    try:
        tid = int(proc.stdout.readline())
        prev = _named(c, {"LGWR"})
        t0 = time.monotonic()
        time.sleep(2.0)
        rows = c.derive(prev, c.sample(), time.monotonic() - t0)
    finally:
        c.close()
        proc.kill()
        proc.wait()
    assert rows["LGWR"]["pid"] == tid != proc.pid
    lgwr = rows["LGWR"]  # runnable throughout, sharing CPU 0 with the hog (and whatever else)
    assert lgwr["cpu"] * 10 + lgwr["runq"] == pytest.approx(1000, rel=0.1)
    assert lgwr["cpu"] < 65 and lgwr["runq"] > 350


RENAMED = """
import sys
def named(name):
    with open("/proc/self/comm", "w") as fh:
        fh.write(name)
named("sgmon_before")
print("ready", flush=True)
sys.stdin.readline()
named("sgmon_after")
print("renamed", flush=True)
sys.stdin.readline()
"""


def test_a_new_process_is_read_at_once_and_a_renamed_one_within_fresh_walks() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", RENAMED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "ready\n"
        path = f"/proc/{child.pid}"
        names = Names(fresh=3)
        names.begin()
        assert names.of(path) == "sgmon_before"  # not seen before: read
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "renamed\n"
        names.begin()
        assert names.of(path) == "sgmon_before"  # the last walk's name
        assert names.of("/proc/self") is not None  # a pid the last walk did not see: read
        names.begin()
        assert names.of(path) == "sgmon_after"  # every third walk reads them all
    finally:
        child.kill()
        child.wait()

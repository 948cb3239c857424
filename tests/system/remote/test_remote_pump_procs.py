"""The procs collector on a host reached over ssh with nothing installed: the pump finds the
commit path's processes by name and ships their small /proc files, which the same collector
reads from the mirror.  The far side is this machine, through a stand-in for ssh (nslab.FAR_SSH:
a bare environment, with a CPython 3.6 where SGMON_TEST_PYTHON3_DIR names one).  The retrans
collector on a pumped host: tests/system/kernel/test_retrans.py."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from nslab import FAR_PYTHON, FAR_SSH, run_source

from sgmon.config import Config, HostConfig
from sgmon.fields import PROCS
from sgmon.hosts.build import sources_from_config
from sgmon.hosts.remote import PumpSource

ORACLE = """
import os, sys, threading, time
def named(name):
    with open("/proc/thread-self/comm", "w") as fh:
        fh.write(name)
def work():
    while True:
        end = time.monotonic() + 0.02
        while time.monotonic() < end:
            pass
        time.sleep(0.08)
if sys.argv[2] == "rfs":
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    print(srv.getsockname()[1], flush=True)
    conn, _ = srv.accept()
    named(sys.argv[1])
    work()
elif sys.argv[2] == "thread":
    def nss():
        named(sys.argv[1])
        work()
    threading.Thread(target=nss, daemon=True).start()
    named("ora_u005_TEST")
    time.sleep(60)
else:
    named(sys.argv[1])
    work()
"""
"""A stand-in for an Oracle background process: its name as Oracle sets it, a little CPU every
tenth of a second; with ``thread``, a threaded_execution process whose thread bears the name;
with ``rfs``, a server process that accepts one connection on the port it prints."""


def _oracle(name: str, how: str = "process") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", ORACLE, name, how], stdout=subprocess.PIPE, text=True
    )


def test_a_pumped_hosts_commit_path_processes_are_read_by_the_procs_collector() -> None:
    """LGWR and a threaded NSS are followed by name on the far side, and RFS, a server
    process, by the Data Guard socket it holds: their run-queue delay, CPU and state arrive
    each tick; LGWR killed, its row goes at the next tick."""
    lgwr = _oracle("ora_lgwr_TEST")
    threaded = _oracle("ora_nss2_TEST", "thread")
    rfs = _oracle("oracleTEST (LOCAL=NO)", "rfs")
    primary_end = None
    try:
        assert rfs.stdout is not None
        port = int(rfs.stdout.readline())
        primary_end = socket.create_connection(("127.0.0.1", port))
        named = {
            lgwr.pid: "ora_lgwr_TEST",
            threaded.pid: "ora_u005_TEST",
            rfs.pid: "oracleTEST (LOC",
        }
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(  # named before the pump's first walk
            Path(f"/proc/{pid}/comm").read_text().strip() != name for pid, name in named.items()
        ):
            time.sleep(0.05)
        tasks = Path(f"/proc/{threaded.pid}/task")
        nss_tid = next(
            int(t.name) for t in tasks.iterdir() if (t / "comm").read_text() == "ora_nss2_TEST\n"
        )
        host = HostConfig(name="far", role="standby", ssh="far", ssh_command=FAR_SSH)
        procs = {"procs": {"sid": "test"}}  # not another instance's on this machine
        config = Config(hosts=(host,), ports=(port,), collectors=procs)
        [src] = sources_from_config(config, interval=0.5)
        assert isinstance(src, PumpSource)
        half = time.monotonic() + 2.5

        def kill_lgwr_half_way() -> None:
            if time.monotonic() > half and lgwr.poll() is None:
                lgwr.kill()
                lgwr.wait()

        frames = run_source(src, 5.0, kill_lgwr_half_way)
    finally:
        if primary_end is not None:
            primary_end.close()
        for p in (lgwr, threaded, rfs):
            p.kill()
            p.wait()
    assert src.last_error is None
    if FAR_PYTHON:
        assert src.python and src.python.startswith("3.6"), src.python
    status = [f.collectors["procs"] for f in frames]
    assert all(s.status.value == "ok" for s in status), [s.error for s in status]
    with_lgwr = [f for f in frames if "LGWR" in f.rows("procs")]
    assert with_lgwr, [f.rows("procs") for f in frames]
    rows = [f.rows("procs")["LGWR"] for f in with_lgwr]
    assert {PROCS.pid.of(r) for r in rows} == {lgwr.pid}
    assert max(PROCS.cpu.of(r) or 0 for r in rows) > 5  # 20 ms of every 100: about 20 %
    assert all(PROCS.runq.of(r) is not None and PROCS.state.of(r) for r in rows[1:])
    nss = [f.rows("procs")["NSS2"] for f in frames if "NSS2" in f.rows("procs")]
    followed = [sorted(f.rows("procs")) for f in frames]
    assert nss and {PROCS.pid.of(r) for r in nss} == {nss_tid}, followed
    assert max(PROCS.cpu.of(r) or 0 for r in nss) > 5
    assert "LGWR" not in frames[-1].rows("procs")  # killed half way: gone
    assert "NSS2" in frames[-1].rows("procs")
    receiver = [f.rows("procs").get(f"RFS[{rfs.pid}]") for f in frames]
    found = next((i for i, r in enumerate(receiver) if r), None)  # by a walk: a tick or a few
    assert found is not None and all(receiver[found:]), [f.rows("procs").keys() for f in frames]
    assert max(PROCS.cpu.of(r) or 0 for r in receiver if r) > 5

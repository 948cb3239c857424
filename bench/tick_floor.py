"""Where a tick's CPU goes: the floor under the OS collector set, at 5 Hz after real sleeps.

Four loops, each in this one process, against bench/overhead.py's socket farm (2,000 loopback
sockets, 50 of them on the Data Guard port), each tick after a sleep as at 1 Hz (on this VM a
tick after any sleep of 10 ms or more runs from cold caches; see bench/ab_tick.py):

* wake: sleep and wake, nothing else;
* system calls: the tick's reads and netlink requests as the collectors make them (the same
  /proc files through the same open descriptors, the link dump, the 50 socket lookups), their
  replies received and dropped: no parsing, no derivation, no frame;
* collectors inline: every collector's sample and derive and the frame, on one thread;
* engine: the same set through ``Engine.run``, as sgmon runs it.

The gap between the second and the third is the Python a tick runs; what the second costs no
Python code can remove.

    /work/venv/bin/python bench/tick_floor.py [--ticks 80] [--rounds 3]
"""

from __future__ import annotations

import argparse
import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path

from overhead import in_turns

from collectors import netlink as nl
from collectors.inet_diag import InetDiag
from collectors.procfile import ProcFile
from collectors.rtnl import Rtnl
from sgmon.config import Config
from sgmon.engine import Engine, next_boundary
from sgmon.hosts.build import make_collectors

FILES = (
    "/proc/stat",
    "/proc/loadavg",
    "/proc/vmstat",
    "/proc/meminfo",
    "/proc/pressure/cpu",
    "/proc/pressure/memory",
    "/proc/pressure/io",
    "/proc/diskstats",
    "/proc/net/snmp",
)


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _loop(work: Callable[[], object], ticks: int, interval: float) -> float:
    """ms of CPU per tick of ``work`` run on wall-clock boundaries, after a warm-up."""
    for _ in range(5):
        work()
    before = 0.0
    for i in range(ticks + 1):
        now = time.time()
        time.sleep(next_boundary(now, interval) - now)
        work()
        if i == 0:
            before = _cpu()
    return (_cpu() - before) / ticks * 1000


def _syscalls(port: int) -> Callable[[], None]:
    files = [ProcFile(p) for p in FILES if Path(p).exists()]
    rtnl, diag = Rtnl(), InetDiag()
    known = diag.query([port])
    batches = diag._lookups(known)

    def tick() -> None:
        for f in files:
            f.read()
        rtnl._nl.send(rtnl._req)
        for mtype, *_ in rtnl._nl.messages():
            if mtype in (nl.NLMSG_DONE, nl.NLMSG_ERROR):
                break
        for batch, first in zip(batches, range(0, len(known), 64), strict=True):
            diag._nl.send(batch)
            want = min(64, len(known) - first)
            for got, _msg in enumerate(diag._nl.messages(), 1):
                if got >= want:
                    break

    return tick


def _inline(port: int) -> Callable[[], None]:
    engine = Engine(make_collectors(Config(ports=(port,)), None), 1.0)

    def tick() -> None:
        t = engine._start(time.time())
        for r in t.shared:
            r.run_once()
        engine._frame(t)

    return tick


def _engine(port: int, ticks: int, interval: float) -> float:
    engine = Engine(make_collectors(Config(ports=(port,)), None), interval)
    stop, marks = threading.Event(), []

    def emit(_frame: object) -> None:
        marks.append(_cpu())
        if len(marks) > ticks + 5:
            stop.set()

    try:
        engine.run(emit, stop)
    finally:
        engine.close()
    return (marks[-1] - marks[4]) / ticks * 1000


def main() -> int:
    """Start the farm, run the loops in turns, print the medians."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ticks", type=int, default=80, help="measured ticks per loop (default 80)")
    p.add_argument("--rounds", type=int, default=3, help="turns of the four loops (default 3)")
    p.add_argument("--interval", type=float, default=0.2, help="seconds per tick (default 0.2)")
    p.add_argument("--dg-port", type=int, default=1521, help="the Data Guard port (default 1521)")
    a = p.parse_args()
    loops = {
        "wake": lambda: _loop(lambda: None, a.ticks, a.interval),
        "system calls": lambda: _loop(_syscalls(a.dg_port), a.ticks, a.interval),
        "collectors inline": lambda: _loop(_inline(a.dg_port), a.ticks, a.interval),
        "engine": lambda: _engine(a.dg_port, a.ticks, a.interval),
    }
    return in_turns("tick_floor", loops, a.rounds, a.dg_port)


if __name__ == "__main__":
    raise SystemExit(main())

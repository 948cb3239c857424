"""Where a tick's CPU goes: the floor under the OS collector set, at 5 Hz after real sleeps.

Five loops, each in this one process, against bench/overhead.py's socket farm (2,000 loopback
sockets, 50 of them on the Data Guard port), each tick after a sleep as at 1 Hz (on this VM a
tick after any sleep of 10 ms or more runs from cold caches; see bench/ab_tick.py):

* wake: sleep and wake, nothing else;
* system calls: the tick's reads and netlink requests as the collectors make them (the same
  /proc files through the same open descriptors, the link dump, the 50 socket lookups), their
  replies received and dropped: no parsing, no derivation, no frame;
* collectors inline: every collector's sample and derive and the frame, on one thread;
* engine: the same set through ``Engine.run``, as sgmon runs it;
* engine, bare sockets: the same, but the tcp collector sends its lookups and receives the
  replies without decoding them or building socket rows: the least a compiled decoder and row
  builder could leave of the engine row.

The gap between the second and the third is the Python a tick runs; what the second costs no
Python code can remove.

    /work/venv/bin/python bench/tick_floor.py [--ticks 80] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from overhead import farm_options, in_turns

from collectors.tcp import TcpCollector
from sgmon.config import Config
from sgmon.engine import Engine, next_boundary
from sgmon.hosts.build import make_collectors
from sgmon.readers import netlink as nl
from sgmon.readers.inet_diag import _LOOKUP_BATCH as BATCH
from sgmon.readers.inet_diag import DiagSock, InetDiag
from sgmon.readers.procfile import ProcFile
from sgmon.readers.rtnl import Rtnl

WARM = 5
"""Ticks before the measured ones: opening, the first dump."""
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


Loop = tuple[Callable[[], object], Callable[[], object]]
"""A tick's work, and what releases what it holds."""


def _loop(make: Callable[[], Loop], ticks: int, interval: float) -> float:
    """ms of CPU per tick of the work run on wall-clock boundaries, after a warm-up."""
    work, close = make()
    try:
        for _ in range(WARM):
            work()
        before = 0.0
        for i in range(ticks + 1):
            now = time.time()
            time.sleep(next_boundary(now, interval) - now)
            work()
            if i == 0:
                before = _cpu()
        return (_cpu() - before) / ticks * 1000
    finally:
        close()


def _wake() -> Loop:
    return (lambda: None), (lambda: None)


def _syscalls(port: int) -> Loop:
    files = [ProcFile(p) for p in FILES if Path(p).exists()]
    rtnl, diag = Rtnl(), InetDiag()
    known = diag.query([port])

    def tick() -> None:
        for f in files:
            f.read()
        rtnl._nl.send(rtnl._req)
        for mtype, *_ in rtnl._nl.messages():
            if mtype in (nl.NLMSG_DONE, nl.NLMSG_ERROR):
                break
        _receive(diag, known)

    def close() -> None:
        for f in files:
            f.close()
        rtnl.close()
        diag.close()

    return tick, close


def _receive(diag: InetDiag, known: Sequence[DiagSock]) -> None:
    """Send the lookups of the known sockets, receive the replies and drop them."""
    for batch, first in zip(diag._lookups(known), range(0, len(known), BATCH), strict=True):
        diag._nl.send(batch)
        want = min(BATCH, len(known) - first)
        for got, _msg in enumerate(diag._nl.messages(), 1):
            if got >= want:
                break


@contextlib.contextmanager
def _bare_sockets() -> Iterator[None]:
    """TcpCollector with the per-socket Python taken out (see the module docstring): the host
    row and the dumps stay as they are."""
    sample = TcpCollector.sample

    def bare(self: TcpCollector) -> dict:
        if not self._known or self._diag is None:
            return sample(self)  # the dump that finds the sockets
        host = self._host.read(time.monotonic())
        _receive(self._diag, self._known)
        return {"host": host}

    TcpCollector.sample = bare  # type: ignore[method-assign]
    try:
        yield
    finally:
        TcpCollector.sample = sample  # type: ignore[method-assign]


def _inline(port: int) -> Loop:
    engine = Engine(make_collectors(Config(ports=(port,)), None), 1.0)

    def tick() -> None:
        t = engine._start(time.time())
        for r in t.shared:
            r.run_once()
        engine._frame(t)

    return tick, engine.close


def _engine(port: int, ticks: int, interval: float) -> float:
    engine = Engine(make_collectors(Config(ports=(port,)), None), interval)
    stop, marks = threading.Event(), []

    def emit(_frame: object) -> None:
        marks.append(_cpu())
        if len(marks) >= WARM + ticks:
            stop.set()

    try:
        engine.run(emit, stop)
    finally:
        engine.close()
    return (marks[WARM + ticks - 1] - marks[WARM - 1]) / ticks * 1000


def _bare_engine(port: int, ticks: int, interval: float) -> float:
    with _bare_sockets():
        return _engine(port, ticks, interval)


def main() -> int:
    """Start the farm, run the loops in turns, print the medians."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ticks", type=int, default=80, help="measured ticks per loop (default 80)")
    p.add_argument("--rounds", type=int, default=3, help="turns of the five loops (default 3)")
    p.add_argument("--interval", type=float, default=0.2, help="seconds per tick (default 0.2)")
    farm_options(p)
    a = p.parse_args()
    port = a.dg_port
    loops = {
        "wake": lambda: _loop(_wake, a.ticks, a.interval),
        "system calls": lambda: _loop(lambda: _syscalls(port), a.ticks, a.interval),
        "collectors inline": lambda: _loop(lambda: _inline(port), a.ticks, a.interval),
        "engine": lambda: _engine(port, a.ticks, a.interval),
        "engine, bare sockets": lambda: _bare_engine(port, a.ticks, a.interval),
    }
    return in_turns("tick_floor", loops, a.rounds, port, a.dg_connections, a.disks, a.interfaces)


if __name__ == "__main__":
    raise SystemExit(main())

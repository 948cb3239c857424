"""What the recorder's fsync policy costs (``sgmon.sinks.flush``): CPU per tick and the wall time
of a tick, for the simulated pair's frames written by the recorder's own ``ArchiveWriter``:

- ``none``: no flush until a file is closed (the recorder before the policy);
- ``thread``: the policy, every table written since the last flush flushed at most every 5 s,
  by the flusher's own thread;
- ``inline``: the same flushes done on the tick path, what the thread keeps off it.

Time is scaled down ten-fold so a round takes seconds: a tick every 0.1 s and a flush every
0.5 s, the same 5 ticks of rows per batch as 5 s at 1 Hz.  CPU is the process' getrusage (the
flusher's thread included) over the ticks; wall is the two hosts' writer calls of a tick (the
dispatcher's time for it).  ``fsync time/tick`` is the time spent inside fdatasync and fsync,
in whichever thread; a file's last flush when it is closed is the close's, left out.  The first
ticks are left out (``WARM``).  The variants take turns in each round (the machine is shared);
the table gives the median of the rounds' figures.  The archives go to ``--dir`` (a real disk:
tmpfs has nothing to flush).

On a regular install (``pip install .`` into a virtualenv of its own, not ``-e``):

    VENV/bin/python bench/record_fsync.py [--rounds 5] [--ticks 200] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.hosts.sim import SimSource
from sgmon.model import Frame
from sgmon.sinks.csvarchive import ArchiveWriter
from sgmon.sinks.flush import Flusher

TICK = 0.1
EVERY = 0.5
WARM = 5
"""Ticks left out at the start: the first learns the hosts (meta.json written, and flushed)."""
VARIANTS: dict[str, Callable[[], Flusher]] = {
    "none": lambda: Flusher(every=None),
    "thread": lambda: Flusher(every=EVERY),
    "inline": lambda: Flusher(every=EVERY, background=False),
}


class Timed:
    """fdatasync and fsync, timed (from any thread)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._real = {"fdatasync": os.fdatasync, "fsync": os.fsync}
        for name, real in self._real.items():
            setattr(os, name, self._wrap(real))

    def _wrap(self, real: Callable[[int], None]) -> Callable[[int], None]:
        def timed(fd: int) -> None:
            t = time.perf_counter()
            try:
                real(fd)
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += 1

        return timed


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _round(variant: str, ticks: list[list[Frame]], schema, base: Path, timed: Timed) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"sgmon-fsync-{variant}-", dir=base))
    try:
        writer = ArchiveWriter(root / "arch", schema, 1.0, flusher=VARIANTS[variant]())
        walls: list[float] = []
        due = time.monotonic()
        for i, frames in enumerate(ticks):
            if i == WARM:
                synced, calls, c0 = timed.seconds, timed.calls, _cpu()
            due += TICK
            time.sleep(max(0.0, due - time.monotonic()))
            t = time.perf_counter()
            for frame in frames:
                writer(frame)
            walls.append(time.perf_counter() - t)
        writer.dirs.flusher.drain()
        cpu, sync, calls = _cpu() - c0, timed.seconds - synced, timed.calls - calls
        writer.close()  # its flushes are the close's, not the ticks'

        walls = walls[WARM:]
        n = len(walls)
        walls.sort()
        return {
            "wall": statistics.median(walls) * 1e3,
            "p99": walls[int(0.99 * (n - 1))] * 1e3,
            "max": walls[-1] * 1e3,
            "cpu": cpu / n * 1e3,
            "sync": sync / n * 1e3,
            "calls": calls / n,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the archives go")
    args = ap.parse_args()
    sim = SimSource("healthy")
    try:
        frames = [list(sim.pair.step()) for _ in range(args.ticks)]
        timed = Timed()
        results: dict[str, list[dict]] = {v: [] for v in VARIANTS}
        for _ in range(args.rounds):
            for variant in VARIANTS:
                results[variant].append(_round(variant, frames, sim.schema, Path(args.dir), timed))
    finally:
        sim.close()
    print(
        f"{args.rounds} rounds of {args.ticks} ticks of the simulated pair (2 hosts), a tick "
        f"every {TICK:g} s, flush every {EVERY:g} s; medians of the rounds"
    )
    print()
    print("| variant | wall/tick median ms | wall/tick p99 ms | wall/tick max ms "
          "| CPU/tick ms | fsync time/tick ms | fsyncs/tick |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for variant, rounds in results.items():
        m = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        print(f"| {variant} | {m['wall']:.3f} | {m['p99']:.2f} | {m['max']:.2f} "
              f"| {m['cpu']:.3f} | {m['sync']:.3f} | {m['calls']:.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

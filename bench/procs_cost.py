"""What following the commit path's processes costs, beside the kernel's floor and pidstat.

Starts 30 processes named as an instance's background processes are (``ora_lgwr_BENCH``,
``ora_lg00_BENCH`` ... ``ora_pr01_BENCH``), 5 waking every 10 ms and 25 every 3 s (``BUSY``),
lets the collector find them, then for ``--ticks`` seconds at 1 Hz times, in each second:

* one ``ProcsCollector.sample`` (thread CPU);
* half a second later, the bare system calls that sample made, with no Python work on their
  results: one pread of each process's schedstat, and of stat, status and io for those it read
  in full.  Both run cold, as at the dashboard's pace: the kernel builds each file anew and the
  caches have moved on;

while ``pidstat -u -d -w -p PIDS 1`` (sysstat: CPU, I/O and context switches of the same
processes, what a DBA would run) reports on the same window (its CPU from wait4's rusage,
start-up included).  Apart, one walk of /proc (what discovery costs every 15 s).

Issue 17 asked for <= 0.2 ms per tick with 30.  The cold floor alone is about that (see
bench/README.md), so the target is relative: sample() <= 2x the floor and <= 0.5x pidstat in the
same run.

    python bench/procs_cost.py [--ticks 30] [--every 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collectors.procs import ProcsCollector

BUSY = ("lgwr", "lg00", "lg01", "nss2", "dbw0")
"""Processes that wake every 10 ms, as LGWR and NSS do under a commit load; the others wake
every 3 s, as an instance's idle background processes time out."""
NAMES = [
    *BUSY, *(f"lg{i:02d}" for i in range(2, 8)), "nss3", "tt00", "tt01", "ckpt", "mrp0",
    *(f"arc{i}" for i in range(4)), *(f"dbw{i}" for i in range(1, 8)), "pr00", "pr01", "pr02",
]  # fmt: skip
SLEEPER = (
    "import sys, time\n"
    "open('/proc/self/comm', 'w').write(sys.argv[1])\n"
    "end = time.monotonic() + 300\n"
    "while time.monotonic() < end:\n"
    "    time.sleep(float(sys.argv[2]))\n"
)


def bare(c: ProcsCollector, full: set[str]) -> None:
    """The system calls of one sample, results dropped: the floor under any reader of them.
    ``full``: the processes the last sample read in full (they ran)."""
    for inst, p in c._followed.items():
        for sched, _ in p.tasks.values():
            sched.raw()
        if inst in full:
            p.stat.raw()
            for _, status in p.tasks.values():
                status.raw()
            if p.io is not None:
                p.io.raw()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=30, help="1 s ticks timed")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between ticks (1 Hz)")
    args = ap.parse_args()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SLEEPER, f"ora_{n}_BENCH", "0.01" if n in BUSY else "3"]
        )
        for n in NAMES[:30]
    ]
    try:
        time.sleep(1.0)
        c = ProcsCollector({"sid": "BENCH"})
        c.open()
        for _ in range(3):
            last = c.sample()
        pids = ",".join(str(p.pid) for p in procs)
        pidstat = subprocess.Popen(
            ["pidstat", "-u", "-d", "-w", "-p", pids, str(int(args.every) or 1), str(args.ticks)],
            stdout=subprocess.DEVNULL,
        )
        per, floor, reads = [], [], []
        for _ in range(args.ticks):
            time.sleep(args.every / 2)
            t0 = time.thread_time()
            rows = c.sample()
            per.append((time.thread_time() - t0) * 1000)
            full = {k for k, r in rows.items() if r is not last.get(k)}
            reads.append(len(full))
            last = rows
            time.sleep(args.every / 2)
            t0 = time.thread_time()
            bare(c, full)
            floor.append((time.thread_time() - t0) * 1000)
        _, _, usage = os.wait4(pidstat.pid, 0)
        peer = (usage.ru_utime + usage.ru_stime) * 1000 / args.ticks
        t0 = time.thread_time()
        c._walk(time.monotonic())
        walk = (time.thread_time() - t0) * 1000
        c.close()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    med, low = statistics.median(per), statistics.median(floor)
    print(f"followed {len(rows)} processes, {args.ticks} ticks 1 s apart, cold:")
    print(f"  sample()            median {med:.3f} ms, min {min(per):.3f}, max {max(per):.3f}")
    print(
        f"  bare reads (floor)  median {low:.3f} ms, min {min(floor):.3f}, max {max(floor):.3f}"
        f"  ({statistics.median(reads):g} processes read in full per tick)"
    )
    print(f"  pidstat -u -d -w    {peer:.3f} ms per interval (start-up included)")
    print(
        f"  sample / floor {med / low:.2f} (target <= 2), sample / pidstat {med / peer:.2f} "
        f"(target <= 0.5), sample / issue 17's 0.2 ms {med / 0.2:.2f}"
    )
    print(f"one walk of /proc (discovery, every 15 s): {walk:.2f} ms = {walk / 15:.3f} ms/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

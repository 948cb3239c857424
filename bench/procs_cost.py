"""What following the commit path's processes costs: CPU of ``ProcsCollector.sample`` per tick.

Starts 30 processes named as an instance's background processes are (``ora_lgwr_BENCH``,
``ora_lg00_BENCH`` ... ``ora_pr01_BENCH``), 5 waking every 10 ms and 25 every 3 s (``BUSY``),
lets the collector find them,
then times ``--ticks`` samples (thread CPU, after 3 warm-up samples) and, apart, one walk of
/proc (what discovery costs every 15 s).  Issue 17's target: <= 0.2 ms per tick with 30.

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


def file_costs(pid: int, n: int = 2000) -> dict[str, float]:
    """Microseconds the kernel takes to produce each /proc file a full read takes, by pread on
    an open descriptor (as the collector reads them)."""
    out = {}
    for name in ("stat", "schedstat", "status", "io"):
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
        try:
            t0 = time.perf_counter()
            for _ in range(n):
                os.pread(fd, 4096, 0)
            out[name] = (time.perf_counter() - t0) / n * 1e6
        finally:
            os.close(fd)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=30)
    ap.add_argument("--every", type=float, default=1.0, help="seconds between samples (1 Hz)")
    args = ap.parse_args()
    from collectors.procs import ProcsCollector

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
            rows = c.sample()
        per, full = [], []
        last = rows
        for _ in range(args.ticks):
            time.sleep(args.every)  # at the dashboard's pace the 3 s sleepers wake between ticks
            t0 = time.thread_time()
            rows = c.sample()
            per.append((time.thread_time() - t0) * 1000)
            full.append(sum(1 for k, r in rows.items() if r is not last.get(k)))
            last = rows
        floor = file_costs(procs[0].pid)
        t0 = time.thread_time()
        c._walk(time.monotonic())
        walk = (time.thread_time() - t0) * 1000
        c.close()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    med = statistics.median(per)
    print(f"followed {len(rows)} processes; sample() CPU per tick over {args.ticks} ticks:")
    print(f"  median {med:.3f} ms, min {min(per):.3f}, max {max(per):.3f} (target <= 0.2 ms)")
    print(f"  ratio to target: {med / 0.2:.2f}")
    print(f"one walk of /proc (discovery, every 15 s): {walk:.2f} ms = {walk / 15:.3f} ms/s")
    active = statistics.median(full)
    kernel = sum(floor.values())
    print(
        f"processes read in full per tick (they ran since the last): median {active:g}; "
        "the kernel's own cost of one full read, pread of each file:"
    )
    print("  " + ", ".join(f"{name} {us:.1f} us" for name, us in floor.items()))
    print(
        f"  floor for {active:g} full reads: {active * kernel / 1000:.3f} ms per tick "
        f"before any Python ({active * kernel / 1000 / 0.2:.2f}x the 0.2 ms target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

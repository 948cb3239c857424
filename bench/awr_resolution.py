"""What `sgmon check` finds from AWR alone at AWR's resolution (issue 16, the seed 003 chain).

Runs the simulated pair under a scenario (default ``standby-iops-cap``, seed 003) for ``--hours``
of simulated time at 60 s steps, with an AWR snapshot of both stand-ins every ``--every``
minutes (default 15, AWR's usual), the fault starting after ``--onset`` minutes; imports both
stand-ins' AWR with `sgmon import awr`'s code into a fresh archive and prints what
`sgmon check --from` says about it.  The simulator computes every commit: about 1 s of CPU per
simulated minute here, so the default 2 hours take 2-3 minutes.

Usage: python bench/awr_resolution.py [--hours 2] [--every 15] [--onset 30] [--scenario S]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sgmon.importers.awr import Window, import_awr
from sgmon.importers.write import write
from sgmon.oracle.session import Session
from sgmon.sim import SimPair
from sgmon.sim.awr import run_with_awr


def main() -> None:
    """Simulate, snapshot, import, check; print the check report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--every", type=int, default=15, help="minutes between AWR snapshots")
    ap.add_argument("--onset", type=float, default=30.0, help="minutes before the fault")
    ap.add_argument("--scenario", default="standby-iops-cap")
    a = ap.parse_args()
    start = 1_790_000_000.0
    pair = SimPair(a.scenario, seed=3, interval=60.0, start=start, onset=a.onset * 60)
    t0 = time.perf_counter()
    out = Path(tempfile.mkdtemp(prefix="sgmon-awr-"))
    try:
        run_with_awr(pair, steps=round(a.hours * 60), every=a.every, tz_offset=3600)
        for host, db in pair.dbs.items():
            imp = import_awr(
                Session(connect=db.connect), Window(start, pair.now(), host=host, role=host)
            )
            write(out, imp)
    finally:
        pair.close()
    print(f"{a.scenario}: {a.hours:g} h simulated, AWR every {a.every} min, fault after "
          f"{a.onset:g} min; {time.perf_counter() - t0:.0f} s; archive {out}")  # fmt: skip
    r = subprocess.run([sys.executable, "-m", "sgmon", "check", "--from", str(out)], check=False)
    print(f"check exit status {r.returncode}")


if __name__ == "__main__":
    main()

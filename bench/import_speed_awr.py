"""How long `sgmon import awr` takes for one day of 15-minute AWR snapshots (issue 16: <= 2 s).

Builds a stand-in 19c database whose Workload Repository (``sgmon.sim.awr``) holds 97 snapshots
15 minutes apart (96 intervals, one day) of 22 commit-path wait events with ~12 histogram
buckets each, the 14 redo statistics and the V$OSSTAT CPU times, plus 6 other days around it
(AWR's default 8-day retention, so the window has to be picked out).  Then times the importer's
whole path: connect, the statements, the deltas through the live collectors' computation, and
writing the archive through the recorder's writer.  Prints the time, the ratio to the 2 s
target and the statements issued.

Usage: python bench/import_speed_awr.py [--runs 5] [--no-append]
Appends the result to bench/README.md under "## AWR import (issue 16)".
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

from readme import append_section

from sgmon.importers.awr import Window, import_awr
from sgmon.importers.write import write
from sgmon.oracle.queries import EVENTS_12C, SYSSTATS
from sgmon.oracle.session import Session
from sgmon.sim.awr import Awr
from sgmon.sim.standin import StandIn

HEADING = "## AWR import (issue 16)"
STEP = 900.0
DAYS = 8
TARGET_S = 2.0


def build(start: float) -> StandIn:
    """A stand-in with DAYS days of 15-minute snapshots ending at ``start + DAYS days``."""
    rng = random.Random(16)
    db = StandIn(version="19.21.0.0.0", startup=start - 86400)
    awr = Awr(db, tz_offset=3600)
    waits = {e: {1 << b: 0 for b in range(12)} for e in EVENTS_12C}
    stats = dict.fromkeys(SYSSTATS, 0.0)
    os_ = dict.fromkeys(("USER_TIME", "SYS_TIME", "IDLE_TIME", "IOWAIT_TIME", "BUSY_TIME"), 0.0)
    for k in range(DAYS * 96 + 1):
        for name, hist in waits.items():
            for b in hist:
                hist[b] += rng.randrange(0, 4000 >> min(b.bit_length(), 10))
            n = sum(hist.values())
            db.publish_event(name, n, n * 700.0, milli=sorted(hist.items()))
        for s in stats:
            stats[s] += rng.randrange(1000, 100000)
        db.publish_stats(stats)
        for s in os_:
            os_[s] += rng.randrange(1000, 50000)
        db.publish_osstat({**os_, "LOAD": 2.5})
        awr.snapshot(start + k * STEP)
    return db


def main() -> None:
    """Build once, import the middle day ``--runs`` times, report the median."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-append", action="store_true")
    a = ap.parse_args()
    start = 1_790_000_000.0
    db = build(start)
    day = (start + 3 * 86400, start + 4 * 86400)
    times, rows, statements = [], 0, 0
    for _ in range(a.runs):
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            session = Session(connect=db.connect)
            imp = import_awr(session, Window(day[0], day[1], host="prim1", role="primary"))
            rows = write(Path(out), imp)
            times.append(time.perf_counter() - t0)
            statements = session.statements
            frames = len(imp.frames["prim1"])
            session.close()
    med = statistics.median(times)
    line = (
        f"one day of 15-minute AWR ({frames} intervals, {len(EVENTS_12C)} events with 12 "
        f"histogram buckets, {len(SYSSTATS)} statistics, V$OSSTAT) out of {DAYS} days held: "
        f"median {med:.3f} s over {a.runs} runs (min {min(times):.3f} s), "
        f"{med / TARGET_S:.2f} of the 2 s target; {statements} statements; {rows} rows written"
    )
    print(line)
    if not a.no_append:
        now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        block = (
            f"### {now}, {platform.node() or 'host'}, python {platform.python_version()}\n\n"
            f"`python bench/import_speed_awr.py --runs {a.runs}`: connect, statements against "
            "the SQLite stand-in's DBA_HIST tables, deltas and percentiles through the live "
            "collectors' code, and the archive written through the recorder's writer.\n\n"
            f"{line}.\n"
        )
        append_section(HEADING, block)


if __name__ == "__main__":
    main()

"""CPU per tick of the whole OS collector set for two or more checkouts, run in turns.

To tell a change's effect from the machine's drift: each checkout's collector set runs on the
engine in a child process for ``--ticks`` ticks, the checkouts taking turns for ``--rounds``
rounds, all against one socket farm (bench/overhead.py's: 2,000 loopback sockets, 50 of them
on the Data Guard port).  The figure is the child's getrusage CPU per tick after a warm-up.
At 5 Hz the cost per tick is what it is at 1 Hz on this machine (a tick after any sleep of
10 ms or more runs from cold caches), in a fifth of the time.

    /work/venv/bin/python bench/ab_tick.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3]
    git worktree add /tmp/base <rev>   # an older checkout to compare with
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from pathlib import Path

from overhead import farm_options, in_turns

CHILD = r"""
import resource, sys, threading
sys.path.insert(0, sys.argv[1])
from sgmon.config import Config
from sgmon.hosts.build import make_collectors
from sgmon.hosts.local import LocalSource
ticks, interval, warm = int(sys.argv[2]), float(sys.argv[3]), 5
source = LocalSource(make_collectors(Config(ports=(int(sys.argv[4]),)), None), interval)
stop, marks = threading.Event(), []
def emit(frame):
    ru = resource.getrusage(resource.RUSAGE_SELF)
    marks.append(ru.ru_utime + ru.ru_stime)
    if len(marks) >= ticks + warm:
        stop.set()
source.run(emit, stop)
source.close()
print((marks[-1] - marks[warm - 1]) / ticks * 1000)
"""


def main() -> int:
    """Run the turns and print each checkout's median and runs."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkouts", nargs="+", type=Path, help="repository roots to compare")
    p.add_argument("--rounds", type=int, default=3, help="turns per checkout (default 3)")
    p.add_argument("--ticks", type=int, default=80, help="measured ticks per turn (default 80)")
    p.add_argument("--interval", type=float, default=0.2, help="seconds per tick (default 0.2)")
    farm_options(p)
    a = p.parse_args()
    missing = [c for c in a.checkouts if not (c / "sgmon" / "engine.py").exists()]
    if missing:
        print(f"ab_tick: not an sgmon checkout: {missing[0]}", file=sys.stderr)
        return 2

    def child(checkout: Path) -> float:
        args = (str(checkout.resolve()), str(a.ticks), str(a.interval), str(a.dg_port))
        out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"{checkout}: {out.stderr.strip()}")
        return float(out.stdout)

    contenders = {str(c): functools.partial(child, c) for c in a.checkouts}
    return in_turns(
        "ab_tick", contenders, a.rounds, a.dg_port, a.dg_connections, a.disks, a.interfaces
    )


if __name__ == "__main__":
    raise SystemExit(main())

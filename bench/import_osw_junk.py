"""CPU time of `sgmon import osw` on a file of 4 MB of blank or junk lines, per line.

A damaged or hostile OSWatcher archive may hold a file of nothing but line ends (a disk filled
with zeros then newlines, a copy gone wrong) or lines no report parser reads; before the fast
path each cost about 2.5 µs, 4 MB of blank lines 5-10 s.  Each shape is one ``.dat`` file of
``--mb`` MB beside a good vmstat file, imported by a child process (``python -m sgmon import
osw``) whose user + system CPU time is read from ``os.wait4``'s rusage (the wall time on a
shared machine says less), best of ``--runs``.  Target: about a second for 4 MB.

    .venv/bin/python bench/import_osw_junk.py [--mb 4] [--runs 3] [--pythonpath DIR]

``--pythonpath`` runs another tree's sgmon (e.g. an export of an older commit) for comparison.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_S = 1.0
GOOD = (
    b"Linux OSWbb v8.4.0\nzzz ***Mon Nov 24 10:00:01 UTC 2025\n"
    b"procs -----------memory---------- ---swap-- -----io---- --system-- -----cpu-----\n"
    b" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
    b" 1  0      0 100000   1000  50000    0    0     1     2  100  200  1  1 98  0  0\n"
    b" 2  0      0 100000   1000  50000    0    0     1     2  100  200  5  3 92  0  0\n"
)
SHAPES = {
    "blank (LF)": b"\n",
    "blank (CRLF)": b"\r\n",
    "spaces only": b"   \n",
    "junk": b"x\n",
    "junk words": b"no report here at all\n",
}


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one child run (in /: ``-m`` puts the working directory
    first on the path, before ``--pythonpath``)."""
    p = subprocess.Popen(
        argv, env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Print each shape's CPU time, per line, and the target's."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=4, help="size of the bad file (4)")
    ap.add_argument("--runs", type=int, default=3, help="runs per shape; the best is kept (3)")
    ap.add_argument("--pythonpath", help="a tree whose sgmon to run instead of this one's")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    with tempfile.TemporaryDirectory() as tmp:
        base = [sys.executable, "-m", "sgmon", "import", "osw"]
        empty = Path(tmp, "empty", "oswvmstat")
        empty.mkdir(parents=True)
        (empty / "db1_vmstat_25.11.24.1000.dat").write_bytes(GOOD)
        floor = min(
            cpu_seconds([*base, str(empty.parent), "--dir", f"{tmp}/o{i}"], env)
            for i in range(args.runs)
        )
        print(f"the good file alone (python's start, imports, writing): {floor:.2f} s")
        for n, (name, line) in enumerate(SHAPES.items()):
            osw = Path(tmp, f"osw{n}", "oswvmstat")
            osw.mkdir(parents=True)
            (osw / "db1_vmstat_25.11.24.1000.dat").write_bytes(GOOD)
            lines = (args.mb << 20) // len(line)
            (osw / "db1_vmstat_25.11.24.1100.dat").write_bytes(line * lines)
            best = min(
                cpu_seconds([*base, str(osw.parent), "--dir", f"{tmp}/out{n}.{i}"], env)
                for i in range(args.runs)
            )
            per = (best - floor) / lines * 1e6
            ok = "met" if best <= TARGET_S else "missed"
            print(
                f"{name:14} {args.mb} MB, {lines:>9,} lines: {best:6.2f} s CPU, "
                f"{per:5.2f} µs a line over the good file alone; target <= {TARGET_S:g} s: {ok}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What `sgmon record` costs: CPU share of one core at 1 s with the full OS collector set, and
the archive's size in MB per host per hour, plain and gzip-compressed (as --compress leaves it).

CPU is read from /proc/PID/stat between two points after start-up (imports and the first
samples excluded), so it is the steady-state cost.  Sizes are measured on this host's archive and
on the simulated pair's (which adds the oracle_* tables: wait events with their histograms).

    /work/venv/bin/python bench/record_cost.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sgmon.safefs import Dir
from sgmon.sinks.csvfile import gzip_file

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _sizes(host_dir: Path, hours: float) -> tuple[float, float]:
    plain = sum(p.stat().st_size for p in host_dir.glob("*.csv"))
    work = Path(tempfile.mkdtemp(prefix="sgmon-gz-"))
    try:
        with Dir.at(str(work)) as at:
            for p in host_dir.glob("*.csv"):
                gzip_file(at, Path(shutil.copy(p, work)).name)
        packed = sum(p.stat().st_size for p in work.glob("*.gz"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return plain / 1e6 / hours, packed / 1e6 / hours


def _record(args: list[str], tmp: Path, seconds: float, warmup: float = 5.0) -> float:
    env = dict(os.environ, SGMON_RUNTIME_DIR=str(tmp / "run"))
    sgmon = shutil.which("sgmon", path=str(Path(sys.executable).parent)) or "sgmon"
    p = subprocess.Popen([sgmon, "record", "--quiet", *args], env=env)
    try:
        time.sleep(warmup)
        c0, t0 = _cpu_seconds(p.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = _cpu_seconds(p.pid), time.monotonic()
    finally:
        p.terminate()
        p.wait(15)
    return 100 * (c1 - c0) / (t1 - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sgmon-bench-"))
    try:
        arch = tmp / "local"
        cpu = _record(["--dir", str(arch), "--interval", "1"], tmp, args.seconds)
        (host,) = [d for d in arch.iterdir() if d.is_dir()]
        ticks = len((next(host.glob("cpu_*.csv"))).read_text().splitlines()) - 1
        plain, packed = _sizes(host, ticks / 3600)
        print(f"record, 1 s, OS collectors ({host.name}): {cpu:.2f} % of one core "
              f"over {args.seconds:g} s (target <= 1 %)")  # fmt: skip
        print(f"  archive: {plain:.2f} MB/host/hour plain, {packed:.2f} compressed")
        sim = tmp / "sim"
        _record(["--dir", str(sim), "--simulate", "healthy", "--speed", "10"], tmp, args.seconds)
        for h in sorted(d for d in sim.iterdir() if d.is_dir()):
            lines = (next(h.glob("cpu_*.csv"))).read_text().splitlines()
            plain, packed = _sizes(h, (len(lines) - 1) / 3600)
            print(f"  simulated {h.name} with oracle_* tables: {plain:.2f} MB/host/hour plain, "
                  f"{packed:.2f} compressed")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

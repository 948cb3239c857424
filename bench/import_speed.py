"""Time of `sgmon import sar` for one host-day of sar data, against `sadf -j` alone.

A day of sa1's default 10-minute samples is 144 records.  sadc cannot be told another time, so
the day is made of 144 real one-second samples (``sadc -S XALL 1 145``, ~2.5 min, done once and
kept under ~/.cache/sgmon-bench/): the records hold the same counters and items as ten-minute
ones, only their interval differs, and the import's work is per record and item.  ``--file``
reads a real saDD instead.  The import is timed whole (sadf -j, mapping, archive writing),
best of ``--runs``, each into a fresh directory; the ratio is import / sadf -j alone on the same
file with the same activities.  Target (issue 16): a host-day in <= 2 s.

    .venv/bin/python bench/import_speed.py [--file /var/log/sa/sa24] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sgmon.importers import sar
from sgmon.importers.write import write

SADC = "/usr/lib/sysstat/sadc"
TARGET_S = 2.0


def day_file(samples: int) -> Path:
    """The cached file of ``samples`` one-second records, made by sadc when missing."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sgmon-bench"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"sa-xall-{samples}"
    if not path.exists():
        print(f"making {path}: sadc -S XALL 1 {samples + 1} (once, {samples + 1} s)", flush=True)
        part = path.with_suffix(".part")
        part.unlink(missing_ok=True)
        subprocess.run([SADC, "-S", "XALL", "1", str(samples + 1), str(part)], check=True)
        part.rename(path)
    return path


def best(fn: Callable[[], None], runs: int) -> float:
    """The shortest wall time of ``runs`` calls."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    """Print the import's time, sadf's, their ratio and the target's."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--file", type=Path, help="a real saDD file (default: the made host-day)")
    p.add_argument("--samples", type=int, default=144, help="records of the made day (144)")
    p.add_argument("--runs", type=int, default=5, help="timed runs, best kept (default 5)")
    a = p.parse_args()
    path = a.file or day_file(a.samples)
    cmd = ["sadf", "-j", str(path), "--", *sar.SAR_OPTIONS]

    def sadf_only() -> None:
        subprocess.run(cmd, capture_output=True, check=True)

    rows = 0

    def import_all() -> None:
        nonlocal rows
        with tempfile.TemporaryDirectory(prefix="sgmon-bench-") as tmp:
            args = argparse.Namespace(files=[path], host="bench", role="standby", devices=None)
            rows = write(Path(tmp) / "arch", sar.read(args))

    t_sadf = best(sadf_only, a.runs)
    t_imp = best(import_all, a.runs)
    imp = sar.read(argparse.Namespace(files=[path], host="bench", role="", devices=None))
    frames = imp.frames["bench"]
    items = {c: len(frames[-1].rows(c)) for c in frames[-1].collectors}
    print(f"file: {path} ({path.stat().st_size / 1e6:.1f} MB), {len(frames)} records, {items}")
    print(f"sadf -j alone:      {t_sadf:.3f} s")
    print(f"sgmon import sar:   {t_imp:.3f} s  ({rows} rows written)")
    print(f"import / sadf -j:   {t_imp / t_sadf:.2f}")
    print(f"import / 2 s target: {t_imp / TARGET_S:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

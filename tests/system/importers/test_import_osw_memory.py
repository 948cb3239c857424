"""`sgmon import osw` writes as it reads: the memory an import holds does not grow with the
archive (issue "Findings to trust on real recordings": about 57 MB per hour-file before,
~2.7 GB for OSWatcher's default 48 hours).  bench/import_memory.py measures the peak RSS of
the command on 1, 8 and 48 hours; this test holds the shape on a small archive.

The excerpt: OSWatcher's classic oswiostat block (``zzz ***<date>`` then ``iostat -xkt 1 3``'s
last third: its stamp line and the ``Device`` table of sysstat >= 12), as in
test_import_osw_layouts.py.
"""

from __future__ import annotations

import argparse
import gzip
import tracemalloc
from pathlib import Path

from sgmon.importers import osw
from sgmon.importers.write import write

HEAD = (
    "Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await"
    " w_await aqu-sz rareq-sz wareq-sz  svctm  %util"
)
T0 = 1795518000  # Mon Nov 24 11:00:00 UTC 2026


def _archive(root: Path, hours: int) -> Path:
    d = root / "archive" / "oswiostat"
    d.mkdir(parents=True)
    for h in range(hours):
        parts = []
        for k in range(120):
            n = h * 120 + k
            t = T0 + n * 30
            hms = f"{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}"
            rows = "".join(
                f"sd{chr(97 + i)}  {n % 90:6.2f} {n % 600 + i:7.2f} {n % 700:8.2f} {n % 900:8.2f}"
                "     0.00     0.00   0.00   0.00    1.00    2.00   0.30     8.00     8.00"
                f"   0.50  {n % 100:5.2f}\n"
                for i in range(8)
            )
            parts.append(f"zzz ***Mon Nov 24 {hms} UTC 2026\n11/24/26 {hms}\n{HEAD}\n{rows}\n")
        name = f"db1_iostat_26.11.24.{11 + h:02d}00.dat.gz"
        (d / name).write_bytes(gzip.compress("".join(parts).encode(), 1))
    return root


def _peak(tmp: Path, hours: int) -> tuple[int, int, int]:
    """Traced peak bytes of reading and writing ``hours``; the frames held; the samples."""
    tmp.mkdir(exist_ok=True)
    root = _archive(tmp / f"osw{hours}", hours)
    tracemalloc.start()
    try:
        imp = osw.stream(argparse.Namespace(archive=root, host=None, role="", tz=None))
        write(tmp / f"arch{hours}", imp)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, sum(len(fs) for fs in imp.frames.values()), imp.counts["db1"]


def test_memory_held_does_not_grow_with_the_archive(tmp_path: Path) -> None:
    """One hour and three (after a first import that loads what every import loads): the
    same peak within a margin (before: every frame and every report of the archive held at
    once, three times the memory)."""
    _peak(tmp_path / "warm", 1)
    one, held1, n1 = _peak(tmp_path, 1)
    three, held3, n3 = _peak(tmp_path, 3)
    assert (n1, n3) == (120, 360) and held1 == held3 == 0
    assert three < one * 1.5, (one, three)

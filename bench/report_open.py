"""How fast the HTML report of one hour of 1 s data opens in Chromium (issue 16: <= 2 s).

1. Writes an archive of ``--seconds`` simulated seconds of both hosts (the simulated pair's
   frames through the recorder's own ``ArchiveWriter``, as fast as the simulation goes; `sgmon
   record --simulate` paces on the wall clock and cannot go much faster than real time x 100
   here).
2. Runs the real ``sgmon report`` on it and prints its time and the file's size.
3. Opens the file ``--rounds`` times in headless Chromium (tests/headless_chromium.py: no
   network, fresh profile, software rendering) with ``--dump-dom`` and reads
   ``<html data-drawn>``: the page's own ``performance.now()`` when the last of its charts has
   drawn, i.e. milliseconds from the start of navigation (reading the file, parsing the HTML,
   the data's JSON and uPlot, building and drawing every chart).  Also prints the wall-clock
   time of each Chromium run next to that of an empty page, whose difference is the report's
   share of it (the rest is the browser starting and exiting).

    .venv/bin/python bench/report_open.py                  # one hour, 5 rounds, ~60 s
    .venv/bin/python bench/report_open.py --archive /tmp/hour   # again: ~25 s
    .venv/bin/python bench/report_open.py --seconds 600    # a dry run
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import headless_chromium as chromium

from sgmon.sim import SimPair
from sgmon.sinks.csvarchive import ArchiveWriter

TARGET_MS = 2000.0


def write_archive(root: Path, scenario: str, seconds: int) -> float:
    """The simulated pair's frames for ``seconds`` of simulated time, in the archive layout."""
    t0 = time.monotonic()
    pair = SimPair(scenario, seed=1, interval=1.0, onset=60.0)
    writer = ArchiveWriter(root, pair.schema, 1.0, warn=print)
    try:
        while pair.t < seconds - 1e-9:
            for frame in pair.step():
                writer(frame)
    finally:
        writer.close()
        pair.close()
    return time.monotonic() - t0


def zoom_link(page: Path) -> str:
    """The address fragment of the page's middle 10 minutes."""
    from datetime import UTC, datetime

    text = page.read_text()
    t0 = float(re.search(r'"t0":([\d.]+)', text)[1])
    last = float(re.search(r'"x":\[[^\]]*?([\d.]+)\]', text)[1])
    mid = t0 + last / 2

    def stamp(t: float) -> str:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    return f"from={stamp(mid - 300)}&to={stamp(mid + 300)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=3600, help="simulated seconds at 1 s ticks")
    ap.add_argument("--scenario", default="standby-iops-cap")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--archive", type=Path, help="keep the archive here and reuse it when it exists"
    )
    args = ap.parse_args()
    if chromium.CHROMIUM is None:
        print("bench: needs Debian's chromium package", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sgmon-bench-report-") as tmp:
        archive, page, blank = Path(tmp, "rec"), Path(tmp, "incident.html"), Path(tmp, "b.html")
        archive = args.archive or archive
        reused = (archive / "meta.json").exists()
        made = 0.0 if reused else write_archive(archive, args.scenario, args.seconds)
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "sgmon", "report", str(archive), "-o", str(page)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        built = time.monotonic() - t0
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        blank.write_text("<!DOCTYPE html><title>blank</title><p>blank</p>")
        drawn, walls, empties, points, zooms = [], [], [], set(), []
        link = zoom_link(page)
        for _ in range(args.rounds):
            empties.append(chromium.run(blank, "--dump-dom").seconds)
            run = chromium.run(page, "--dump-dom")
            m = re.search(r'data-drawn="([\d.]+)"', run.stdout[:2000])
            if m is None or run.console():
                print("bench: the report did not draw:", run.console(), file=sys.stderr)
                return 1
            drawn.append(float(m[1]))
            walls.append(run.seconds)
            points |= set(re.findall(r'data-points="(\d+)"', run.stdout))
            zoomed = re.search(
                r'data-zoomed="([\d.]+)"',
                chromium.run(page, "--dump-dom", fragment=link).stdout[:2000],
            )
            if zoomed is None:
                print("bench: the linked zoom did not redraw every chart", file=sys.stderr)
                return 1
            zooms.append(float(zoomed[1]))
        charts = len(re.findall(r'<div class="chart"', run.stdout))
        size = page.stat().st_size
    med = statistics.median(drawn)
    what = f"{archive} (reused)" if reused else f"{made:.1f} s to write"
    print(f"archive: {args.seconds} s of 1 s ticks, 2 hosts, {args.scenario}: {what}")
    print(f"sgmon report: {built:.2f} s wall; file {size / 1e6:.2f} MB ({size} bytes)")
    print(f"charts: {charts}, points per chart: {', '.join(sorted(points))}")
    print(
        f"navigation -> all charts drawn (performance.now), {args.rounds} rounds: "
        f"median {med:.0f} ms, min {min(drawn):.0f}, max {max(drawn):.0f}; "
        f"median / {TARGET_MS:.0f} ms target = {med / TARGET_MS:.2f}"
    )
    print(
        f"zoom to the middle 10 minutes (a #from=..&to=.. link applied after the first draw) -> "
        f"every chart redrawn: median {statistics.median(zooms):.0f} ms, min {min(zooms):.0f}, "
        f"max {max(zooms):.0f}"
    )
    print(
        f"chromium --dump-dom wall clock: report median {statistics.median(walls):.2f} s, "
        f"empty page {statistics.median(empties):.2f} s "
        f"(difference {statistics.median(walls) - statistics.median(empties):.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

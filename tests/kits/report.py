"""What the unit and the system tests of report share."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import headless_chromium as chromium
import pytest

from sgmon.archive import parse_time

"""The collector whose samples each chart draws (``heat-<event>``: oracle_waits' histograms)."""


CHART_COLLECTOR = {
    "waits-avg": "oracle_waits",
    "waits-p99": "oracle_waits",
    "budget": "oracle_waits",
    "await": "disk",
    "aqu": "disk",
    "util": "disk",
    "rtt": "tcp",
    "retrans": "tcp",
    "cpu": "cpu",
    "runq": "cpu",
    "procs-runq": "procs",
    "procs-io": "procs",
}


def collector_of(chart_id: str) -> tuple[str, str]:
    """(host, collector) of a chart from its id."""
    host, kind = chart_id.split("-", 1)
    return host, "oracle_waits" if kind.startswith("heat-") else CHART_COLLECTOR[kind]


def sgmon(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "sgmon", *args], capture_output=True, text=True, timeout=timeout
    )


def samples(archive: Path, host: str, collector: str, lo: float, hi: float) -> int:
    """Distinct tick times of one host's collector in [lo, hi], read from its CSV files."""
    times = set()
    for path in sorted((archive / host).glob(f"{collector}_*.csv")):
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                t = parse_time(row["time"])
                if lo - 1e-6 <= t <= hi + 1e-6:
                    times.add(t)
    return len(times)


def span(archive: Path) -> tuple[float, float]:
    """First and last tick of the archive (the cpu table has a row every tick)."""
    times = [
        parse_time(row["time"])
        for path in archive.glob("*/cpu_*.csv")
        for row in csv.DictReader(path.open(newline=""))
    ]
    return min(times), max(times)


def charts(dom: str) -> dict[str, int]:
    """Chart id -> the points uPlot holds, as the page wrote them into the DOM."""
    tags = re.findall(r'<div class="chart" id="([^"]+)" data-points="(\d+)"', dom)
    return {cid: int(n) for cid, n in tags}


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 simulated seconds of seed 001's RTO stalls, recorded by `sgmon record`."""
    rec = tmp_path_factory.mktemp("report") / "rec"
    r = sgmon(
        "record", "--simulate", "rto-stall", "--seed", "3", "--speed", "1000",
        "--duration", "100s", "--dir", str(rec), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return rec


@pytest.fixture(scope="module")
def report(archive: Path) -> Path:
    out = archive.parent / "incident.html"
    r = sgmon("report", str(archive), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith(f"{out}: ")
    return out


@pytest.fixture(scope="module")
def opened(report: Path) -> chromium.Run:
    """The report's DOM after Chromium ran its scripts."""
    return chromium.run(report, "--dump-dom", "--virtual-time-budget=10000")

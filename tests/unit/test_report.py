"""`sgmon report`: a real recording made into the HTML report and opened in real headless
Chromium with no network: it draws with no console error, each chart holds the archive's
samples (counted from the CSV files themselves), it names the finding `check --from` names, and
its screenshot shows the charts."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import headless_chromium as chromium
from kits.report import charts, collector_of, samples, span
from paths import REPO

from sgmon.archive import parse_time
from sgmon.model import CollectorResult, Frame, Status


def test_each_chart_holds_the_recorded_samples(archive: Path, opened: chromium.Run) -> None:
    lo, hi = span(archive)
    drawn = charts(opened.stdout)
    assert len(drawn) >= 16
    for cid, points in drawn.items():
        host, collector = collector_of(cid)
        want = samples(archive, host, collector, lo, hi)
        assert want > 90 and points == want, (cid, points, want)


def test_axis_joins_other_steps_and_breaks_at_gaps() -> None:
    """sar's 10 minutes and AWR's 15 on one host: both lines joined across each other's ticks;
    a recorder outage is a break, with a tick of its own on the axis."""
    from sgmon.regrid import usual_step
    from sgmon.report.series import Axis

    sar = {*range(0, 5400, 600), *range(9000, 10800, 600)}  # 0 .. 4800, outage, 9000 ..
    awr = set(range(0, 5400, 900))  # 0 .. 4500
    frames = [
        Frame("h", float(t), 0, 300.0, {
            c: CollectorResult(Status.OK, {"all": {"v": float(t)}})
            for c, ticks in (("cpu", sar), ("oracle_waits", awr)) if t in ticks
        })
        for t in sorted(sar | awr)
    ]  # fmt: skip
    axis = Axis([frames])
    # the host ticks every 300 or 600 s, usually (the median) 600: one tick placed at 4800 + 600
    assert usual_step(sar | awr) == 600
    assert sorted(set(axis.times) - sar - awr) == [5400.0]

    def get(collector: str):
        return lambda f: f.value(collector, "all", "v")

    cpu_values, cpu_gaps = axis.column(frames, get("cpu"))
    assert sum(v is not None for v in cpu_values) == len(sar)
    assert [axis.times[i] for i in cpu_gaps] == [5400.0]
    awr_values, awr_gaps = axis.column(frames, get("oracle_waits"))
    assert sum(v is not None for v in awr_values) == len(awr) and awr_gaps == []
    assert awr_values[axis.index[600.0]] is None  # a sar tick: joined over, not a gap


def test_heatmap_cells_are_the_recorded_histograms(archive: Path, report: Path) -> None:
    """The log file sync heatmap at a stall: the interval's buckets, as recorded in the CSV,
    in AWR's "% of waits" columns, with the 128-256 ms tail seed 001 is about."""
    from sgmon import buckets

    rows = [
        row
        for path in sorted((archive / "primary").glob("oracle_waits_*.csv"))
        for row in csv.DictReader(path.open(newline=""))
        if row["instance"] == "log file sync"
    ]
    stall = max(rows, key=lambda r: float(r["hist_le_262144_us"] or 0))
    assert float(stall["hist_le_262144_us"]) > 0
    hist = [
        (None if c == "hist_le_inf" else int(c[8:-3]) / 1000, float(v or 0))
        for c, v in stall.items()
        if c.startswith("hist_le_")
    ]
    want = [round(100 * x) for x in buckets.shares(hist)]
    data = json.loads(re.search(r'id="sgmon-data">(.*?)</script>', report.read_text(), re.S)[1])
    heat = next(
        c
        for s in data["sections"]
        for c in s["charts"]["primary"]
        if c["id"] == "primary-heat-log-file-sync"
    )
    i = data["x"].index(round(parse_time(stall["time"]) - data["t0"], 3))
    assert heat["heat"][i] == want
    assert heat["rows"][buckets.column(256.0)] == "<256" and want[buckets.column(256.0)] > 0


def test_package_data_ships_every_page_asset() -> None:
    """`pip install .` must carry what the page inlines (uPlot, its CSS and licence, the page's
    script and style): every non-Python file of sgmon/report matches a package-data pattern."""
    import fnmatch
    import tomllib

    root = REPO
    conf = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = conf["tool"]["setuptools"]["package-data"]["sgmon.report"]
    pkg = root / "sgmon" / "report"
    assets = [
        p.relative_to(pkg).as_posix()
        for p in pkg.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    ]
    assert {"vendor/uPlot.iife.min.js", "vendor/uPlot.min.css", "report.js"} <= set(assets)
    assert [a for a in assets if not any(fnmatch.fnmatch(a, pat) for pat in patterns)] == []

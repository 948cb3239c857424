"""What one analysis tick costs: CPU of ``Analyzer.feed`` for every host's frame of one tick.

Frames are made first by the simulated pair (their cost is not counted), then fed to a fresh
Analyzer: 150 ticks to warm the baselines, then ``--ticks`` measured ticks, ``--repeat`` times.
CPU is ``time.process_time`` around the two ``feed`` calls of each tick; ``state()``, which the
dashboard takes once per frame, is timed apart.  Cases:

* healthy: ~200 watched series over the two hosts, no commit-path outlier (the usual tick);
* standby-iops-cap: the commit path degraded, so the cross-host correlation runs every tick;
* healthy x3 disks: 20 more devices per host (copies of the real ones), ~560 series, to show
  how the cost scales with series;
* cascade-iops-cap: four hosts (primary, SYNC, ASYNC and cascaded standby; issue 15), degraded,
  with the topology rebuilt every tick;
* rac-rto-stall + 2 standbys: the target shape, 2 primary instances and 3 standbys: the RAC
  scenario's three hosts, degraded on node 1, plus cascade-iops-cap's ASYNC and cascaded
  standbys (off the commit path) in the same ticks; each instance is evaluated apart;
* the same shape with 1 to 5 more standbys (async-iops-cap's ASYNC standby, each from its own
  seed and under its own name), up to 10 hosts: the growth per host is the least-squares slope
  of CPU ms/tick over the host count, 5 to 10.

The targets: <= 1 ms CPU per tick for two hosts with 200 series; <= 1.5 ms for 2 primary
instances and 3 standbys, growing linearly by <= 0.35 ms per host added up to 10 hosts.  The
last lines say whether each is met.  The statements each simulated database runs per tick
(``Session.statements``, the stand-in's count of what python-oracledb would send) are printed
per host beside them: a RAC instance costs what a single instance does.

Usage: python bench/analysis_cost.py [--ticks 300] [--repeat 3] [--no-append]
Appends the results to bench/README.md under "## Analysis (issue 5)".
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import platform
import statistics
import time
from dataclasses import replace
from pathlib import Path

from readme import append_section

from sgmon.analysis import Analyzer
from sgmon.model import CollectorResult, Frame
from sgmon.sim import SimPair

HEADING = "## Analysis (issue 5)"
WARM = 150
TARGET_MS = 1.0
FIVE_HOSTS_MS = 1.5
"""2 primary instances and 3 standbys."""
PER_HOST_MS = 0.35
"""Growth for each host added, up to ``MOST_HOSTS``."""
MOST_HOSTS = 10


def frames(
    scenario: str, ticks: int, extra_disks: int = 0, seed: int = 1
) -> list[tuple[Frame, ...]]:
    """The pair's frames, onset at the end of the warm-up; optionally with cloned disks."""
    pair = SimPair(scenario, seed=seed, start=1_800_000_000.0, onset=WARM)
    out = []
    try:
        for _ in range(WARM + ticks):
            tick = pair.step()
            if extra_disks:
                tick = tuple(_more_disks(f, extra_disks) for f in tick)
            out.append(tick)
    finally:
        pair.close()
    return out


def five_hosts(ticks: int) -> list[tuple[Frame, ...]]:
    """rac-rto-stall's node1, node2 and standby with cascade-iops-cap's standby_a and
    standby_c, tick by tick (one time axis: the same start)."""
    rac = frames("rac-rto-stall", ticks)
    more = frames("cascade-iops-cap", ticks)
    return [a + tuple(f for f in b if f.host in ("standby_a", "standby_c"))
            for a, b in zip(rac, more, strict=True)]  # fmt: skip


def more_hosts(five: list[tuple[Frame, ...]], extra: int, ticks: int) -> list[tuple[Frame, ...]]:
    """``five`` with ``extra`` more ASYNC standbys, each async-iops-cap's standby_a from its own
    seed, named standby_e1, standby_e2, ..."""
    out = five
    for k in range(1, extra + 1):
        name = f"standby_e{k}"
        more = [
            tuple(replace(f, host=name) for f in tick if f.host == "standby_a")
            for tick in frames("async-iops-cap", ticks, seed=1 + k)
        ]
        out = [a + b for a, b in zip(out, more, strict=True)]
    return out


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs``."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def statements(scenario: str, ticks: int = 20) -> dict[str, float]:
    """Statements per tick each simulated database's session ran, after 3 ticks of start-up."""
    pair = SimPair(scenario, seed=1, start=1_800_000_000.0)
    try:
        for _ in range(3):
            pair.step()
        before = {h: s.statements for h, s in pair.sessions.items()}
        for _ in range(ticks):
            pair.step()
        return {h: (s.statements - before[h]) / ticks for h, s in pair.sessions.items()}
    finally:
        pair.close()


def _more_disks(f: Frame, n: int) -> Frame:
    disk = f.collectors["disk"]
    rows = dict(disk.rows)
    first = next(iter(disk.rows.values()))
    for i in range(n):
        rows[f"dm-{i}"] = dict(first)
    return replace(f, collectors={**f.collectors, "disk": CollectorResult(disk.status, rows)})


def measure(pairs: list[tuple[Frame, ...]], repeat: int) -> tuple[list[float], float, int]:
    """Per repetition, mean CPU ms per tick of every host's feed; the mean CPU ms of one
    ``state()`` (the dashboard takes one per frame); and the watched series."""
    results = []
    states = []
    series = 0
    for _ in range(repeat):
        gc.collect()  # the frames just built leave garbage that would land on the first case
        a = Analyzer()
        for tick in pairs[:WARM]:
            for f in tick:
                a.feed(f)
        cpu = st = 0.0
        for tick in pairs[WARM:]:
            t0 = time.process_time()
            for f in tick:
                a.feed(f)
            t1 = time.process_time()
            a.state()
            st += time.process_time() - t1
            cpu += t1 - t0
        results.append(cpu / (len(pairs) - WARM) * 1000)
        states.append(st / (len(pairs) - WARM) * 1000)
        series = sum(1 for k in a.tracker._latches.values() if k.series is not None)
    return results, statistics.median(states), series


def targets(by_hosts: dict[int, float]) -> list[str]:
    """The two target lines from CPU ms/tick by host count (5 to ``MOST_HOSTS``), each saying
    whether it is met."""
    five_ms = by_hosts[5]
    growth = slope([float(n) for n in by_hosts], list(by_hosts.values()))
    return [
        (
            f"- 2 primary instances + 3 standbys: {five_ms:.3f} ms/tick, target <= "
            f"{FIVE_HOSTS_MS} ms: {'met' if five_ms <= FIVE_HOSTS_MS else 'NOT met'}"
        ),
        (
            f"- growth from 5 to {max(by_hosts)} hosts: {growth:.3f} ms per added host (least "
            f"squares), target <= {PER_HOST_MS} ms: {'met' if growth <= PER_HOST_MS else 'NOT met'}"
        ),
    ]


def main() -> int:
    """Run the cases, print a table, append it to the README."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    five = five_hosts(args.ticks)
    cases = [
        ("healthy", frames("healthy", args.ticks)),
        ("standby-iops-cap (correlating)", frames("standby-iops-cap", args.ticks)),
        ("healthy x3 disks", frames("healthy", args.ticks, extra_disks=20)),
        ("cascade-iops-cap, 4 hosts (correlating)", frames("cascade-iops-cap", args.ticks)),
        ("RAC: 2 instances + 3 standbys (correlating)", five),
        *(
            (f"RAC + {n - 5} more standbys, {n} hosts", more_hosts(five, n - 5, args.ticks))
            for n in range(6, MOST_HOSTS + 1)
        ),
    ]
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = Path("/proc/loadavg").read_text().split()[0]
    lines = [
        f"### {stamp}, {platform.node()}, python {platform.python_version()}, load {load}",
        "",
        (
            f"`python bench/analysis_cost.py --ticks {args.ticks} --repeat {args.repeat}`: CPU "
            "(time.process_time) of `Analyzer.feed` for every host's frame of one tick, after "
            f"{WARM} warm-up ticks; median and best of {args.repeat} runs."
        ),
        "",
        "| case | watched series | CPU ms/tick median | best | median / 1 ms target | state() ms |",
        "|---|---|---|---|---|---|",
    ]
    by_hosts: dict[int, float] = {}
    for name, pairs in cases:
        ms, state_ms, series = measure(pairs, args.repeat)
        med = statistics.median(ms)
        lines.append(
            f"| {name} | {series} | {med:.3f} | {min(ms):.3f} | {med / TARGET_MS:.2f} "
            f"| {state_ms:.3f} |"
        )
        if name.startswith("RAC"):
            by_hosts[len(pairs[0])] = med
    lines += ["", *targets(by_hosts)]
    lines += ["", "Statements per tick per database (`Session.statements`, 20 ticks):", ""]
    for scenario in ("healthy", "rac-rto-stall", "cascade-iops-cap"):
        per = statements(scenario)
        lines.append(f"- {scenario}: " + ", ".join(f"{h} {n:g}" for h, n in per.items()))
    text = "\n".join(lines)
    print(text)
    if not args.no_append:
        append_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

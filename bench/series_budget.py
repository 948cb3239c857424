"""How many series `sgmon serve` exposes for a simulated pair, against the contract's budget.

docs/metrics.md promises at most ``BUDGET`` series per primary/standby pair with the default
options (the all-CPU row only).  This runs each scenario's simulated pair through the judgement
and the exporter's collector in process (no HTTP: the count is what a scrape returns), for
``--seconds`` simulated seconds with the fault from ``--onset``, and prints per scenario the
series while healthy (the last tick before the onset), the most at any tick after it (findings
and the incident's own rows add a few), and the same with ``--per-cpu``.  It exits 1 when a
two-host scenario's default exposition goes over the budget before its onset (the steady
state the budget is for; after a switchover each database keeps reporting the wait events of
its former role, which V$SYSTEM_EVENT holds since the instance started).

Usage: python bench/series_budget.py [--seconds 90] [--onset 30] [SCENARIO ...] [--no-append]
Appends the table to bench/README.md under "## Prometheus series budget".
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import sys

from readme import append_section

from sgmon.judgement import Judge
from sgmon.sim import SCENARIOS, SimPair
from sgmon.sinks.prometheus import FrameCollector

BUDGET = 540


def series(collector: FrameCollector) -> int:
    """The samples one scrape returns: one per series."""
    return sum(len(m.samples) for m in collector.collect())


def measure(scenario: str, seconds: float, onset: float, per_cpu: bool) -> tuple[int, int, int]:
    """(hosts, series at the last healthy tick, most series at a tick after the onset)."""
    pair = SimPair(scenario, onset=onset)
    try:
        judge = Judge(schema_of=pair.schema)
        col = FrameCollector(pair.schema, per_cpu=per_cpu)
        healthy = peak = 0
        while pair.t < seconds:
            before = pair.t < onset
            for frame in pair.step():
                col(frame, judge(frame), judge.seconds)
            n = series(col)
            if before:
                healthy = n
            else:
                peak = max(peak, n)
        return len(pair.hosts), healthy, peak
    finally:
        pair.close()


def main() -> int:
    """Measure, print, append to bench/README.md; exit 1 over budget."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--onset", type=float, default=30.0)
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    rows = []
    over = []
    for sc in args.scenarios:
        hosts, healthy, peak = measure(sc, args.seconds, args.onset, per_cpu=False)
        _, cpu_healthy, _ = measure(sc, min(args.seconds, args.onset + 1), args.onset, True)
        rows.append(f"| {sc} | {hosts} | {healthy} | {peak} | {cpu_healthy} |")
        if hosts == 2 and healthy > BUDGET:
            over.append(sc)
        print(rows[-1], flush=True)
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = "\n".join(
        [
            f"### {when}, {platform.node()}, python {platform.python_version()}",
            "",
            (
                f"`python bench/series_budget.py --seconds {args.seconds:g} --onset "
                f"{args.onset:g}`: series one scrape of `sgmon serve --simulate S` returns "
                f"(contract budget: {BUDGET} for a two-host pair, default options)."
            ),
            "",
            "| scenario | hosts | healthy | most after onset | healthy with --per-cpu |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Over budget while healthy: {', '.join(over) or 'none'}.",
        ]
    )
    print(block)
    if not args.no_append:
        append_section("## Prometheus series budget", block)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

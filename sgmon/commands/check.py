"""`sgmon check`: sample for a while (or read a recording), run the analysis, print a report.

The exit code is the worst finding severity of the run, for cron and CI: 0 nothing above info,
1 a warning, 2 a critical finding.  2 is also what every sgmon command returns on a usage or
config error (the stderr line starting ``sgmon:`` tells the two apart), and 3 means a source
could not be reached.  ``--simulate`` runs the simulated pair in simulated time, as fast as the
machine goes, so ``sgmon check --simulate rto-stall --seconds 90`` takes a few seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sgmon.cli import Unreachable, UsageError
from sgmon.headless import add_sim_options, sim_onset
from sgmon.judgement import Judge, Judgement, judge_for
from sgmon.units import fmt_num, fmt_step, parse_duration

if TYPE_CHECKING:
    from sgmon.analysis import AnalysisState
    from sgmon.analysis.results import Outlier
    from sgmon.config import Config
    from sgmon.model import Frame

EXIT = {None: 0, "info": 0, "warn": 1, "crit": 2}
EPILOG = """exit status: 0 no finding above info, 1 worst finding is a warning, 2 worst finding is
critical (2 is also a usage or config error; stderr says which), 3 a source could not be reached.
Findings that opened and closed during the run count."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the frames come from, for how long, and the report format."""
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--config", metavar="F", help="sgmon.toml to use (thresholds, hosts)")
    src = parser.add_mutually_exclusive_group()
    src.add_argument(
        "--seconds",
        metavar="N",
        help="sample the configured hosts this long (default 10s; with --simulate the onset "
        "plus 60s of simulated time)",
    )
    src.add_argument("--from", dest="source_dir", metavar="DIR", help="analyse a recording")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="report format")
    parser.add_argument(
        "--simulate", metavar="SCENARIO", help="the simulated pair, in simulated time"
    )
    add_sim_options(parser, speed=False)


def run(args: argparse.Namespace) -> int:
    """Collect, analyse, report; the exit code is the worst severity seen."""
    from sgmon.config import load_config

    if args.simulate and args.source_dir:
        raise UsageError("--simulate and --from both name where frames come from: use one")
    try:
        seconds = parse_duration(args.seconds) if args.seconds else None
    except ValueError as e:
        raise UsageError(f"--seconds: {e}") from None
    if seconds is not None and seconds <= 0:
        raise UsageError(f"--seconds {args.seconds}: use a positive duration such as 10s or 2m")
    config = load_config(args.config)
    if args.simulate:
        onset = sim_onset(args)
        judge, hosts, span = _simulate(
            args.simulate, args.seed, seconds or onset + 60.0, config, onset
        )
        if span <= onset and args.simulate != "healthy":
            print(
                f"sgmon: the run ended at {fmt_num(span)} s, before {args.simulate}'s fault "
                f"starts at --onset {fmt_num(onset)} s: only the healthy baseline was seen; "
                "give more --seconds or an earlier --onset",
                file=sys.stderr,
            )
    elif args.source_dir:
        judge, hosts, span = _replay(config, args.source_dir)
    else:
        judge, hosts, span = _live(config, seconds or 10.0)
    if judge.analyzer is None:
        raise UsageError(f"no findings: {judge.note}")
    state = judge.analyzer.state()
    worst = state.worst(active_only=False)
    code = EXIT[worst]
    topo = judge.analyzer.topology
    if args.format == "json":
        out = state.to_dict()
        out.update(hosts=hosts, seconds=span, worst=worst, exit=code)
        out.update(topology=topo.lines() if topo is not None else [])
        print(json.dumps(out, indent=1, default=str))
    else:
        print(report(state, hosts, span, topo.summary() if topo is not None else ""))
    return code


def _simulate(
    scenario: str, seed: int, seconds: float, config: Config, onset: float
) -> tuple[Judge, list[str], float]:
    from sgmon.sim import SCENARIOS, SimPair

    if scenario not in SCENARIOS:
        raise UsageError(f"--simulate {scenario!r}: use one of {', '.join(SCENARIOS)}")
    pair = SimPair(scenario, seed=seed, interval=config.interval, onset=onset)
    judge = Judge(config, pair.schema, live=False)  # simulated time runs as fast as it goes
    try:
        while pair.t < seconds - 1e-9:
            for frame in pair.step():
                judge(frame)
    finally:
        pair.close()
    return judge, [name for name, _ in pair.hosts], pair.t


def _replay(config: Config, directory: str) -> tuple[Judge, list[str], float]:
    from sgmon.archive import ArchiveError
    from sgmon.hosts.replay import ReplaySource

    try:
        source = ReplaySource(directory, speed=0)
    except ArchiveError as e:
        raise UsageError(str(e)) from None
    times: list[float] = []

    judge = judge_for(config, [source])

    def feed(frame: Frame) -> None:
        times.append(frame.time)
        judge(frame)

    try:
        source.run(feed, threading.Event())
    finally:
        source.close()
    if not times:
        raise UsageError(f"{directory}: the recording holds no frames")
    if source.regridded is not None:
        print(
            f"sgmon: the hosts were sampled at different steps; judged on the coarsest, "
            f"{fmt_step(source.regridded)} samples",
            file=sys.stderr,
        )
    return judge, [h.name for h in source.hosts], max(times) - min(times)


def _live(config: Config, seconds: float) -> tuple[Judge, list[str], float]:
    from sgmon.headless import run_until_stopped
    from sgmon.hosts.build import sources_from_config

    sources = sources_from_config(config, duration=seconds)
    hosts = [h.name for s in sources for h in s.hosts]
    seen: set[str] = set()

    def feed(frame: Frame, _: Judgement) -> None:
        seen.add(frame.host)

    judge = judge_for(config, sources)
    run_until_stopped(sources, [feed], judge, seconds)
    if not seen:
        raise Unreachable(f"no frames from {', '.join(hosts)} in {seconds:g}s; check the hosts")
    missing = [h for h in hosts if h not in seen]
    if missing:
        print(f"sgmon: no frames from {', '.join(missing)}; judged without it", file=sys.stderr)
    return judge, hosts, seconds


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def _outlier_now(o: Outlier) -> str:
    """An open outlier at its value now; one back in line says so beside why it opened."""
    from sgmon.analysis.context import now

    if o.quiet:
        return f"{now(o)}: back in line {o.quiet} tick(s), opened as {o.reason}"
    return f"{now(o)}: {o.reason}"


def report(state: AnalysisState, hosts: list[str], seconds: float, topology: str = "") -> str:
    """The text report: findings (worst first) with evidence, the topology's summary (when
    known), the commit budget, outliers."""
    from sgmon.analysis.budget import describe

    worst = state.worst(active_only=False)
    lines = [
        f"sgmon check: {', '.join(hosts)} over {fmt_num(seconds)} s: "
        f"{len(state.findings)} finding(s), worst {worst or 'none'}"
    ]
    for f in state.findings:
        when = f"since {_clock(f.start)}" if f.end is None else f"{_clock(f.start)}-{_clock(f.end)}"
        lines.append(f"{f.severity.upper():<4} {f.host}: {f.title}")
        lines.append(f"     {f.rule}, seed {f.seed}, {when}{'' if f.active else ' (closed)'}")
        lines += [f"     - {e}" for e in f.evidence]
    if topology:
        lines.append(f"topology: {topology}")
    for host, b in state.budget.items():
        lines.append(f"commit budget {host} (last interval): {describe(b)}")
    bad = [o for o in state.outliers.values() if o.severity != "info"]
    if bad:
        lines.append(f"outliers now: {len(bad)} above info")
        bad.sort(key=lambda o: (o.severity != "crit", o.host, o.collector, o.instance))
        lines += [f"  {o.severity:<4} {_outlier_now(o)}" for o in bad[:12]]
    return "\n".join(lines)

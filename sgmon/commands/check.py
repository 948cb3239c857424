"""`sgmon check`: sample for a while (or read a recording), run the analysis, print a report.

The exit code is the worst finding severity of the run, for cron and CI: 0 nothing above info,
1 a warning, 2 a critical finding.  2 is also what every sgmon command returns on a usage or
config error (the stderr line starting ``sgmon:`` tells the two apart), and 3 means a source
could not be reached.  ``--simulate`` runs the simulated pair in simulated time, as fast as the
machine goes, so ``sgmon check --simulate rto-stall --seconds 90`` takes a few seconds.

``--symmetry`` compares the primary with each SYNC standby instead (``sgmon.symmetry``): the same
frames (live, a recording, the simulation), then each database read once; exit 0 when every
item is symmetric, 1 when one differs or is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeAlias

from sgmon.errors import Unreachable, UsageError
from sgmon.fields import ORACLE_TRACE
from sgmon.headless import add_sim_options, sim_onset
from sgmon.judgement import Judge, judge_for
from sgmon.model import Status
from sgmon.units import fmt_num, fmt_step, parse_duration
from sgmon.verdicts import NO_COMMITS, Judgement, source_title

if TYPE_CHECKING:
    from sgmon.analysis import Analyzer
    from sgmon.analysis.whatif import Window
    from sgmon.config import Config
    from sgmon.model import Frame
    from sgmon.sim import SimPair
    from sgmon.verdicts import AnalysisState, Finding, Outlier

EXIT = {None: 0, "info": 0, "warn": 1, "crit": 2}
Keep: TypeAlias = "Callable[[Frame], object]"  # a sink that keeps the run's frames
EPILOG = """exit status: 0 no finding above info, 1 worst finding is a warning, 2 worst finding is
critical (2 is also a usage or config error; stderr says which), 3 a source could not be reached.
Findings that opened and closed during the run count.

--symmetry: the primary beside each SYNC standby, read only: standby redo logs per thread (online
groups + 1 on both sides, the online log size, one member each: Oracle's "Best Practices for
Synchronous Redo Transport"), the online logs, DB_LOST_WRITE_PROTECT ("Oracle Database
Migrated to Cloud Starts Experiencing 'log file sync' Waits"), the DG socket's buffers and the
kernel's tcp_wmem/tcp_rmem maxima against 3 x BDP (the Best Practices paper), the routes'
rto_min ("A story about Data Guard and network latency") and the redo devices' write latency
(the Best Practices paper, Tables 8-9). The OS items come from the last 10 frames of each host
(--seconds, --from or --simulate as above), the database items from one read of each database:
the simulated pair's, else each local host's [host.db] (a host reached over ssh is not read from
here). Each line: item, both values, verdict (ok, differs, missing, or unknown when a side could
not be read: the line says why), source, rule. Exit status 0 when nothing differs or is missing,
1 when something does (unknown lines do not count), 2 a usage error or no primary and SYNC
standby to compare, 3 a source could not be reached."""


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
    parser.add_argument(
        "--symmetry",
        action="store_true",
        help="compare the primary with each SYNC standby instead of reporting findings "
        "(see below); exit 1 when something differs or is missing",
    )
    add_sim_options(parser, speed=False)


def run(args: argparse.Namespace) -> int:
    """Collect, analyse, report; the exit code is the worst severity seen."""
    from sgmon.analysis.whatif import Window
    from sgmon.config import load_config

    if args.simulate and args.source_dir:
        raise UsageError("--simulate and --from both name where frames come from: use one")
    seconds = _seconds(args.seconds)
    config = load_config(args.config)
    if args.symmetry:
        return _symmetry(args, config, seconds)
    databases = Databases(config)  # a live run's: a simulation's and a recording's are there
    window = Window()  # the commit path's waits: what a change would buy
    judge, hosts, span = _judged(args, config, seconds, window.tee(databases))
    if judge.analyzer is None:
        raise UsageError(f"no findings: {judge.note}")
    code = _print_findings(judge.analyzer, hosts, span, args.format, window)
    if databases.unreached() and not args.simulate and not args.source_dir:
        for line in databases.unreached():
            print(f"sgmon: {line}", file=sys.stderr)
        return 3  # the findings above were judged without that database
    return code


def _seconds(given: str | None) -> float | None:
    """``--seconds`` as a positive number of seconds; None when not given."""
    try:
        seconds = parse_duration(given) if given else None
    except ValueError as e:
        raise UsageError(f"--seconds: {e}") from None
    if seconds is not None and seconds <= 0:
        raise UsageError(f"--seconds {given}: use a positive duration such as 10s or 2m")
    return seconds


def _judged(
    args: argparse.Namespace, config: Config, seconds: float | None, keep: Keep
) -> tuple[Judge, list[str], float]:
    """The run's frames through the judge and to ``keep``: the simulated pair's, a recording's
    or the configured hosts'; the judge, the hosts and the span."""
    if args.simulate:
        onset = sim_onset(args)
        judged = _simulate(args.simulate, args.seed, seconds or onset + 60.0, config, onset, keep)
        _before_onset(args.simulate, judged[2], onset)
        return judged
    if args.source_dir:
        return _replay(config, args.source_dir, keep)
    return _live(config, seconds or 10.0, keep)


def _print_findings(analyzer: Analyzer, hosts: list[str], span: float, fmt: str, w: Window) -> int:
    """Print the findings and what a change would buy (``w``) as text or JSON; the exit code."""
    state = w.quoted(analyzer.state(), analyzer.topology)  # advice quotes what a change buys
    worst = state.worst(active_only=False)
    code = EXIT[worst]
    topo = analyzer.topology
    if fmt == "json":
        out = state.to_dict()
        out.update(hosts=hosts, seconds=span, worst=worst, exit=code)
        out.update(topology=topo.lines() if topo is not None else [], **state.outcomes())
        out.update(what_if=w.json(state, topo))
        print(json.dumps(out, indent=1, default=str))
    else:
        summary, primaries = (topo.summary(), tuple(topo.primaries)) if topo else ("", ())
        tail = [*state.left(), *w.lines(state, topo, _clock)]  # left, explained, what it buys
        print("\n".join([report(state, hosts, span, summary, primaries), *tail]))
    return code


class Databases:
    """Whether each configured database answered at least once during a live run, and the last
    reason it did not: a check that never reached one exits 3 rather than report a healthy run."""

    def __init__(self, config: Config) -> None:
        self.wanted = {h.name for h in config.hosts if h.db is not None}
        self.reached: set[str] = set()
        self.why: dict[str, str] = {}

    def __call__(self, frame: Frame) -> None:
        """Note a frame's database collectors."""
        if frame.host not in self.wanted or frame.host in self.reached:
            return
        for name, result in frame.collectors.items():
            if not name.startswith("oracle_") or name == ORACLE_TRACE.name:
                continue
            if result.status is Status.OK:
                self.reached.add(frame.host)
                return
            if result.error:
                self.why[frame.host] = result.error.splitlines()[0]

    def unreached(self) -> list[str]:
        """One line per database that never answered."""
        return [
            f"{host}: database not reached during the check: {self.why.get(host, 'no answer')}"
            for host in sorted(self.wanted - self.reached)
        ]


def _symmetry(args: argparse.Namespace, config: Config, seconds: float | None) -> int:
    """The primary beside each SYNC standby: the OS items from the last frames of the run, the
    database items read once (through the simulated pair's sessions, or the config's)."""
    from sgmon import symmetry

    recent = symmetry.Recent()
    try:
        if args.simulate:
            onset = sim_onset(args)
            with _pair(args.simulate, args.seed, config, onset) as pair:
                span = _drive(pair, seconds or onset + 60.0, recent.add)
                _before_onset(args.simulate, span, onset)
                result = symmetry.compare(
                    config,
                    recent,
                    lambda hosts: {h: symmetry.read_db(pair.sessions[h]) for h in hosts},
                )
        else:
            if args.source_dir:
                _, _, span = _replay(config, args.source_dir, recent.add, analysis=False)
            else:
                _, _, span = _live(config, seconds or 10.0, recent.add, analysis=False)
            result = symmetry.compare(
                config, recent, lambda hosts: symmetry.read_configured(config, hosts)
            )
    except symmetry.NoPair as e:
        raise UsageError(str(e)) from None
    window = max(len(f) for f in recent.frames.values())
    if args.format == "json":
        out = result.to_dict()
        out.update(hosts=list(recent.frames), seconds=span, window=window)
        print(json.dumps(out, indent=1, default=str))
    else:
        print(symmetry.report(result, span, window))
    return result.exit_code


def _before_onset(scenario: str, span: float, onset: float) -> None:
    """One stderr line when a simulated run ended before its scenario's fault began."""
    if span <= onset and scenario != "healthy":
        print(
            f"sgmon: the run ended at {fmt_num(span)} s, before {scenario}'s fault "
            f"starts at --onset {fmt_num(onset)} s: only the healthy baseline was seen; "
            "give more --seconds or an earlier --onset",
            file=sys.stderr,
        )


@contextmanager
def _pair(scenario: str, seed: int, config: Config, onset: float) -> Iterator[SimPair]:
    """The simulated pair of a scenario, closed (its stand-ins dropped) on the way out."""
    from sgmon.sim import SCENARIOS, SimPair

    if scenario not in SCENARIOS:
        raise UsageError(f"--simulate {scenario!r}: use one of {', '.join(SCENARIOS)}")
    pair = SimPair(scenario, seed=seed, interval=config.interval, onset=onset)
    try:
        yield pair
    finally:
        pair.close()


def _drive(pair: SimPair, seconds: float, *feeds: Callable[[Frame], object]) -> float:
    """Step the pair to ``seconds`` of simulated time, each frame to each feed; the time."""
    while pair.t < seconds - 1e-9:
        for frame in pair.step():
            for feed in feeds:
                feed(frame)
    return pair.t


def _simulate(
    scenario: str, seed: int, seconds: float, config: Config, onset: float, keep: Keep
) -> tuple[Judge, list[str], float]:
    with _pair(scenario, seed, config, onset) as pair:
        judge = Judge(config, pair.schema, live=False)  # simulated time runs as fast as it goes
        span = _drive(pair, seconds, judge, keep)
        return judge, [name for name, _ in pair.hosts], span


def _replay(
    config: Config,
    directory: str,
    keep: Callable[[Frame], object] | None = None,
    analysis: bool = True,
) -> tuple[Judge, list[str], float]:
    """Play a recording through the judge (and to ``keep``); the hosts and the span."""
    from sgmon.errors import ArchiveError
    from sgmon.hosts.replay import ReplaySource

    try:
        source = ReplaySource(directory, speed=0)
    except ArchiveError as e:
        raise UsageError(str(e)) from None
    times: list[float] = []
    starts: list[float] = []  # a frame covers the interval before its time: an AWR report's 6 min

    judge = judge_for(config, [source], analysis=analysis)

    def feed(frame: Frame) -> None:
        times.append(frame.time)
        starts.append(frame.time - frame.interval)
        judge(frame)
        if keep is not None:
            keep(frame)

    try:
        source.run(feed, threading.Event())
    finally:
        source.close()
    for line in source.problems():  # what was read around, and where
        print(line, file=sys.stderr)
    if not times:
        raise UsageError(f"{directory}: the recording holds no frames")
    if source.regridded is not None:
        print(
            f"sgmon: the hosts were sampled at different steps; judged on the coarsest, "
            f"{fmt_step(source.regridded)} samples",
            file=sys.stderr,
        )
    return judge, [h.name for h in source.hosts], max(times) - min(starts)


def _live(
    config: Config,
    seconds: float,
    keep: Callable[[Frame], object] | None = None,
    analysis: bool = True,
) -> tuple[Judge, list[str], float]:
    """Sample the configured hosts for ``seconds`` through the judge (and to ``keep``)."""
    from sgmon.headless import run_until_stopped
    from sgmon.hosts.build import sources_from_config

    sources = sources_from_config(config, duration=seconds)
    hosts = [h.name for s in sources for h in s.hosts]
    seen: set[str] = set()

    def feed(frame: Frame, _: Judgement) -> None:
        seen.add(frame.host)
        if keep is not None:
            keep(frame)

    judge = judge_for(config, sources, analysis=analysis)
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


def _finding_lines(f: Finding) -> list[str]:
    """One finding: its episode's title (its worst moment's) beside the peak's time and the
    episode's length, its rule, when
    it held and became what, its impact, its evidence."""
    when = f"since {_clock(f.start)}" if f.end is None else f"{_clock(f.start)}-{_clock(f.end)}"
    closed = "" if f.active else " (closed)"
    became = f"; {steps}" if (steps := f.history(_clock)) else ""
    return [
        f"{f.severity.upper():<4} {f.host}: {f.episode} ({f.peaked(_clock)})",
        f"     {f.rule} ({source_title(f.seed)}), {when}{closed}{became}",
        f"     {f.impact()}",
        *(f"     - {e}" for e in f.evidence),
    ]


def report(
    state: AnalysisState,
    hosts: list[str],
    seconds: float,
    topology: str = "",
    primaries: tuple[str, ...] = (),
) -> str:
    """The text report: findings (largest impact first) with their impact and evidence, the
    topology's summary (when known), the commit budget of each primary (``primaries``, else
    those with one), outliers."""
    primaries = primaries or tuple(state.budget)

    worst = state.worst(active_only=False)
    top = next((f for f in state.findings if f.severity != "info"), None)
    lead = f"; first {top.host} {top.rule}, {top.impact()}" if top is not None else ""
    lines = [
        (
            f"sgmon check: {', '.join(hosts)} over {fmt_num(seconds)} s: "
            f"{len(state.findings)} finding(s), worst {worst or 'none'}{lead}"
        )
    ]
    for f in state.findings:  # largest impact first (``by_impact``)
        lines += _finding_lines(f)
    if topology:
        lines.append(f"topology: {topology}")
    for host in primaries:
        b = state.budget.get(host)
        lines.append(f"commit budget {host} (last interval): {b.describe() if b else NO_COMMITS}")
    bad = [o for o in state.outliers.values() if o.severity != "info"]
    if bad:
        lines.append(f"outliers now: {len(bad)} above info")
        bad.sort(key=lambda o: (o.severity != "crit", o.host, o.collector, o.instance))
        lines += [f"  {o.severity:<4} {_outlier_now(o)}" for o in bad[:12]]
    return "\n".join(lines)

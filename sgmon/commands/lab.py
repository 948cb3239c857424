"""`sgmon lab`: reproduce the seed incidents on real kernels, and watch sgmon diagnose them.

Builds a SYNC Data Guard pair between two network namespaces (``sgmon.lab``), with
``--async-standby`` a third one holding an ASYNC standby, injects the faults on a schedule
(``--fault``/``--scenario``) or when their name is typed, and prints one line per tick with the
hosts' key figures and the analysis's top finding.  Needs root.  Everything it makes is removed
on exit, on failure and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sgmon.errors import UsageError
from sgmon.units import parse_duration

if TYPE_CHECKING:
    from sgmon.lab.run import LabOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Duration, schedule, workload size, recording."""
    parser.add_argument("--duration", default="2m", help="how long the lab runs (default 2m)")
    parser.add_argument("--interval", default="1s", help="seconds between ticks")
    parser.add_argument("--scenario", help="a named incident (see --list)")
    parser.add_argument("--onset", default="20s", help="when the scenario's fault starts")
    parser.add_argument(
        "--fault", action="append", default=[], help="NAME@START[-END], e.g. loss@20s-60s"
    )
    parser.add_argument("--sessions", type=int, default=4, help="committing sessions")
    from sgmon.lab.run import LabOptions

    parser.add_argument(
        "--iops",
        type=int,
        default=LabOptions.iops,
        help="the write IOPS cap of the iops faults, e.g. your standby volume's "
        f"(default {LabOptions.iops})",
    )
    parser.add_argument(
        "--loss-rate",
        type=float,
        default=LabOptions.loss_permille / 10,
        metavar="PCT",
        help="%% of the packets toward the standby the loss fault drops (0.1 to 100, "
        f"default {LabOptions.loss_permille / 10:g})",
    )
    parser.add_argument(
        "--async-standby",
        action="store_true",
        help="a third namespace: a standby shipped to ASYNC (implied by its faults)",
    )
    parser.add_argument("--record", metavar="DIR", help="also write the CSV archive there")
    parser.add_argument("--list", action="store_true", help="list faults and scenarios")


def run(args: argparse.Namespace) -> int:
    """Run the lab for --duration, printing a line per tick."""
    from sgmon.lab import schedule
    from sgmon.lab.faults import ASYNC_FAULTS, FAULTS

    if args.list:
        print("faults (type a name and Enter to switch it while the lab runs):")
        for name, text in FAULTS.items():
            print(f"  {name:<10} {text}")
        print("scenarios (--scenario NAME, fault from --onset):")
        for name, plan in schedule.SCENARIOS.items():
            print(f"  {name:<20} {plan.format(onset='T', fix='2T', end='T+10') or '(none)'}")
        return 0
    try:
        duration = parse_duration(args.duration)
        interval = parse_duration(args.interval)
        steps = [s for text in args.fault for s in schedule.parse(text)]
        if args.scenario:
            steps += schedule.scenario(args.scenario, parse_duration(args.onset))
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not 10 <= duration <= 3600:
        raise UsageError("--duration must be between 10s and 1h")
    if args.sessions < 1:
        raise UsageError("--sessions must be at least 1")
    if args.iops < 1:
        raise UsageError("--iops must be at least 1 (write I/Os per second)")
    if not 0.1 <= args.loss_rate <= 100:
        raise UsageError("--loss-rate must be a percentage from 0.1 to 100")
    async_standby = args.async_standby or any(s.name in ASYNC_FAULTS for s in steps)
    return _run(args, duration, interval, steps, async_standby)


def _run(
    args: argparse.Namespace, duration: float, interval: float, steps: list, async_standby: bool
) -> int:
    from sgmon.judgement import judge_for
    from sgmon.lab import schedule
    from sgmon.lab.kernel import LabUnavailable
    from sgmon.lab.run import ASYNC_HOST, Lab, LabFailed
    from sgmon.lab.status import line
    from sgmon.model import Frame
    from sgmon.monitor import Monitor

    # Ctrl-C and SIGTERM clean up alike, even when started in the background (SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    opts = options(args, duration, interval, async_standby)
    try:
        lab = Lab(opts).__enter__()
    except LabUnavailable as e:
        raise UsageError(f"the lab cannot run here: {e}") from None
    try:
        source = lab.source(interval)
        sinks: list = []
        if args.record:
            from sgmon.sinks.csvarchive import ArchiveWriter

            sinks.append(ArchiveWriter(Path(args.record), source.schema, interval))
        latest: dict[str, Frame] = {}

        def show(frame, judgement) -> None:
            latest[frame.host] = frame
            if frame.host == "primary":
                active = [n for n, f in lab.faults.items() if f.active]
                state = judgement.state
                text = line(frame, latest.get("standby"), state, active, latest.get(ASYNC_HOST))
                print(text, flush=True)

        sinks.append(show)
        judge = judge_for(lab.config(), [source])
        monitor = Monitor([source], sinks, judge=judge)
        if sys.stdin.isatty():
            threading.Thread(target=_keys, args=(lab,), daemon=True).start()
        up = (
            f"lab up: primary {lab.pair.a_ip} (netns {lab.pair.a}, log {lab.primary_log.device}),"
            f" standby {lab.pair.b_ip}:{opts.port} (netns {lab.pair.b}, log "
            f"{lab.standby_log.device})"
        )
        if lab.async_link is not None and lab.async_log is not None:
            up += (
                f", ASYNC standby {lab.async_link.b_ip}:{opts.port} (netns {lab.async_link.b},"
                f" log {lab.async_log.device})"
            )
        print(f"{up}; Ctrl-C ends it", flush=True)
        if lab.cpu_note:
            print(f"sgmon: {lab.cpu_note}", file=sys.stderr, flush=True)
        monitor.start()
        t0 = time.monotonic()
        while (elapsed := time.monotonic() - t0) < duration:
            for name, on in schedule.due(steps, elapsed).items():
                lab.fault(name, on)
            lab.check()
            time.sleep(0.2)
        monitor.stop()
    except KeyboardInterrupt:
        print("sgmon: lab interrupted; cleaning up", file=sys.stderr)
        return 130
    except LabFailed as e:
        print(f"sgmon: {e}; its error is above; the lab was removed", file=sys.stderr)
        return 1
    finally:
        lab.__exit__(None, None, None)
    _summary(judge)
    return 0


def options(
    args: argparse.Namespace, duration: float, interval: float, async_standby: bool
) -> LabOptions:
    """The lab's options from the command line: the run, the workload, the faults' strength."""
    from sgmon.lab.run import LabOptions

    return LabOptions(
        duration=duration + 15,
        interval=interval,
        sessions=args.sessions,
        iops=args.iops,
        loss_permille=round(args.loss_rate * 10),
        async_standby=async_standby,
    )


def _keys(lab) -> None:
    """Toggle a fault when its name is typed."""
    for text in sys.stdin:
        name = text.strip()
        if name in lab.faults:
            lab.fault(name, not lab.faults[name].active)
        elif name:
            print(f"sgmon: faults: {', '.join(lab.faults)}", file=sys.stderr)


def _summary(judge) -> None:
    findings = judge.analyzer.state().findings if judge.analyzer is not None else []
    print(f"{len(findings)} finding(s):")
    for f in findings:
        print(f"  {f.severity:<4} {f.host:<8} {f.title}")

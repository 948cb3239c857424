"""What the headless commands (record, agent, serve) share: host options and a clean stop.

Each of them reads hosts the same way (``--config``, or ``--simulate`` for the simulated pair)
and runs a Monitor until a duration passes, the sources end, or SIGTERM/SIGINT arrives; the
signal only sets an event, so sinks close their files in the normal path.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import NamedTuple

from sgmon.config import Config, load_config
from sgmon.engine import check_interval
from sgmon.errors import UsageError
from sgmon.hosts import Source
from sgmon.judgement import Judge
from sgmon.units import parse_duration


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--interval``, ``--duration`` and the ``--simulate`` family."""
    parser.add_argument("--config", metavar="F", help="sgmon.toml to use")
    parser.add_argument("--interval", metavar="S", help="seconds between ticks (1s, 500ms)")
    parser.add_argument(
        "--duration",
        metavar="D",
        help="stop after this long (10m, 2h); with --simulate, simulated time: at --speed 10, "
        "--duration 60s ends after 6 s",
    )
    parser.add_argument(
        "--simulate", metavar="SCENARIO", help="the simulated pair instead of the hosts"
    )
    add_sim_options(parser)


def add_sim_options(parser: argparse.ArgumentParser, speed: bool = True) -> None:
    """``--seed``, ``--onset`` and ``--speed`` of the simulated pair: one definition for demo,
    record, agent, serve and check (check runs simulated time as fast as it goes: no speed)."""
    from sgmon.sim.scenarios import DEFAULT_ONSET

    parser.add_argument("--seed", type=int, default=0, help="simulation seed (same seed, same run)")
    parser.add_argument(
        "--onset",
        metavar="S",
        default=f"{DEFAULT_ONSET:g}s",
        help="simulated time before the scenario's fault starts; the analysis learns the healthy "
        f"baseline first (default {DEFAULT_ONSET:g}s)",
    )
    if speed:
        parser.add_argument(
            "--speed",
            type=float,
            default=1.0,
            metavar="X",
            help="simulated seconds per real second",
        )


def sim_onset(args: argparse.Namespace) -> float:
    """``--onset`` in seconds, or one line on stderr and exit 2."""
    onset = _duration(args.onset, "--onset")
    if onset is None or onset < 0:
        raise UsageError(f"--onset {args.onset}: use a duration such as 30s or 2m")
    return onset


def _duration(text: str | None, what: str) -> float | None:
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError as e:
        raise UsageError(f"{what}: {e}") from None


class Loaded(NamedTuple):
    """What a headless command runs: the config, its sources, the interval in force, and how
    long to run in wall-clock seconds (None for a simulation: it stops itself after --duration
    simulated seconds, however fast the machine runs it)."""

    config: Config
    sources: list[Source]
    interval: float
    wall_duration: float | None


def load_sources(args: argparse.Namespace, local_only: bool = False, role: str = "") -> Loaded:
    """The config, its sources, the interval and the run time; one-line errors on bad input.

    ``local_only`` drops the ssh hosts: an agent never reaches further (no ssh chains).
    ``role`` is given to the local hosts whose config names none (an agent's, from the
    consumer's config).
    """
    config = load_config(args.config)
    if local_only:
        config = dataclasses.replace(config, hosts=tuple(h for h in config.hosts if not h.ssh))
    interval = checked_interval(args.interval, config.interval)
    duration = _duration(args.duration, "--duration")
    if args.simulate:
        _check_scenario(args.simulate)
    from sgmon.hosts.build import sources_from_config

    sources = sources_from_config(
        config,
        simulate=args.simulate,
        seed=args.seed,
        speed=args.speed,
        duration=duration,
        interval=interval,
        role=role,
        onset=sim_onset(args) if args.simulate else None,
    )
    if not args.simulate and (pace := pace_warning(config, interval)) is not None:
        print(f"sgmon: {pace}", file=sys.stderr)
    # a simulation ends by itself after --duration simulated seconds; a wall-clock cap of
    # duration / speed cut the run short whenever the machine could not keep up with --speed
    wall = None if args.simulate else duration
    return Loaded(config, sources, interval, wall)


PUMPED_PER_SECOND = 150
"""Hosts reached without sgmon installed that one sgmon keeps every tick of, per second of its
interval: their collectors run here, on the files the pump ships, about 3.6 ms of this
process's CPU a host a tick, and its Python code runs on one core at a time (bench/README.md,
"Many remote hosts").  A host with sgmon installed (the agent) costs about half of that."""


def pace_warning(config: Config, interval: float) -> str | None:
    """One line when the hosts without sgmon installed are more than this machine keeps every
    tick of at ``interval`` (``PUMPED_PER_SECOND``), None otherwise."""
    pumped = sum(1 for h in config.hosts if h.ssh and not h.sgmon_path)
    if pumped <= PUMPED_PER_SECOND * interval:
        return None
    slower = math.ceil(pumped / PUMPED_PER_SECOND)
    return (
        f"{pumped} hosts without sgmon installed at a {interval:g}s tick: their collectors run "
        f"on this machine, which keeps every tick of about {PUMPED_PER_SECOND} such hosts a "
        f"second; some ticks will be missing. Set sgmon_path on hosts with sgmon installed, or "
        f"use --interval {slower}s"
    )


def checked_interval(text: str | None, default: float) -> float:
    """``--interval`` as every command takes it (0.1 s to 60 s), the config's when not given;
    ``0`` is refused, not taken for "not given"."""
    interval = _duration(text, "--interval")
    if interval is None:
        interval = default
    try:
        return check_interval(interval)
    except ValueError as e:
        raise UsageError(f"--interval {text or interval}: {e}") from None


def _check_scenario(name: str) -> None:
    try:
        from sgmon.sim import SCENARIOS
    except ImportError:
        raise UsageError("--simulate: the simulated pair is not installed") from None
    if name not in SCENARIOS:
        raise UsageError(f"--simulate {name!r}: use one of {', '.join(SCENARIOS)}")


STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1)
"""The signals that end a headless run cleanly (SIGQUIT's default would dump core and lose
the row being written; SIGUSR1's would end it without a word)."""


def run_until_stopped(
    sources: Iterable[Source],
    sinks: list[Callable],
    judge: Judge,
    duration: float | None = None,
    stop: threading.Event | None = None,
):
    """Run a Monitor, judging each frame with ``judge`` for the sinks, until the duration, the
    end of the sources, or a signal.

    Returns the stopped Monitor.  SIGTERM, SIGINT, SIGQUIT and SIGUSR1 end it cleanly (every
    tick on disk); SIGHUP, which a recorder started in an ssh session gets at logout, is
    ignored: the recording goes on.
    """
    from sgmon.monitor import Monitor

    stop = stop or threading.Event()
    mon = Monitor(sources, sinks=sinks, history=2, judge=judge)
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in STOPPING}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        mon.start()

        def finish() -> None:
            mon.wait()
            stop.set()

        watcher = threading.Thread(target=finish, daemon=True)
        watcher.start()
        stop.wait(duration + 5 if duration is not None else None)
    finally:
        mon.stop()
        for s, h in previous.items():
            signal.signal(s, h)
        for sink in sinks:
            close = getattr(sink, "close", None)
            if close is not None:
                close()
    return mon


def instant(option: str, text: str, first: float) -> float:
    """A time typed on the command line (UTC clock, ISO, or an offset from the first tick);
    a bad one is the usage error of ``option`` (replay --from/--at, report --from/--to)."""
    from sgmon.units import parse_instant

    try:
        return parse_instant(text, first)
    except ValueError as e:
        raise UsageError(f"{option} {e}") from None

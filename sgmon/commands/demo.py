"""`sgmon demo`: the dashboard on the simulated primary/standby pair, no database needed.

The default scenario is ``rto-stall`` (seed 001: 200 ms TCP retransmission timeouts on the redo
transport socket), because it lights up every part of the screen: the DG socket's rto and
retransmits, the SYNC Remote Write and log file sync tails in the histogram and the heatmap, the
budget's network leg, and the finding that names the fix.
"""

from __future__ import annotations

import argparse

from sgmon.headless import add_sim_options, checked_interval, sim_onset

DEFAULT_SCENARIO = "rto-stall"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Scenario, seed, speed, and --list."""
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, metavar="NAME", help="what goes wrong (see --list)"
    )
    add_sim_options(parser)
    parser.add_argument("--interval", metavar="S", default="1s", help="simulated sample interval")
    parser.add_argument("--list", action="store_true", help="name the scenarios and exit")


def run(args: argparse.Namespace) -> int:
    """List the scenarios, or open the dashboard on the chosen one."""
    from sgmon.errors import UsageError
    from sgmon.sim import SCENARIOS

    if args.list:
        width = max(map(len, SCENARIOS))
        for name, text in SCENARIOS.items():
            mark = " (default)" if name == DEFAULT_SCENARIO else ""
            print(f"{name:<{width}}  {text}{mark}")
        return 0
    if args.scenario not in SCENARIOS:
        raise UsageError(f"unknown scenario {args.scenario!r}; try: {', '.join(SCENARIOS)}")
    if not args.speed > 0:
        raise UsageError(f"--speed {args.speed:g}: use a positive number such as 1, 5 or 0.5")
    from sgmon.config import Config
    from sgmon.hosts.sim import SimSource

    interval = checked_interval(args.interval, 1.0)
    onset = sim_onset(args)
    config = Config(name=f"demo {args.scenario}", interval=interval)
    source = SimSource(
        args.scenario, seed=args.seed, interval=interval, speed=args.speed, onset=onset
    )
    from sgmon.tui.live import run_dashboard

    return run_dashboard([source], config, title=config.name)

"""`sgmon [--config F]`: the dashboard for the configured hosts (this machine without a config)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--config and --interval."""
    parser.add_argument("--config", metavar="F", help="sgmon.toml to use (default: searched)")
    parser.add_argument("--interval", metavar="S", help="seconds between samples (e.g. 1s, 500ms)")


def run(args: argparse.Namespace) -> int:
    """Build the sources from the config and open the dashboard."""
    from sgmon.config import load_config
    from sgmon.engine import check_interval
    from sgmon.hosts.build import sources_from_config
    from sgmon.units import parse_duration

    config = load_config(args.config)
    interval = check_interval(parse_duration(args.interval)) if args.interval else None
    sources = sources_from_config(config, interval=interval)
    from sgmon.tui.live import run_dashboard

    return run_dashboard(sources, config, title=config.name)

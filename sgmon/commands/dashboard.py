"""`sgmon [--config F]`: the dashboard for the configured hosts (this machine without a config)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--config and --interval."""
    parser.add_argument("--config", metavar="F", help="sgmon.toml to use (default: searched)")
    parser.add_argument("--interval", metavar="S", help="seconds between samples (e.g. 1s, 500ms)")


def missing_config_notice() -> str:
    """What the dashboard says when it found no config: where it looked and what to add, so a
    newcomer does not take this machine alone for the Data Guard view."""
    from sgmon.config import search_paths

    looked = ", ".join(str(p) for p in search_paths())
    return (
        f"No sgmon.toml (looked in {looked} and $SGMON_CONFIG): watching this machine alone. "
        'Add the primary and the standby as [[host]] entries (name, role = "primary" / '
        '"standby", ssh = "user@host" for the standby, [host.db] for the database), then '
        'run `sgmon config --check`. The README\'s "Watch your own primary and standby" has '
        "an example."
    )


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

    notice = missing_config_notice() if config.path is None else ""
    return run_dashboard(sources, config, title=config.name, notice=notice)

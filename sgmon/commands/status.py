"""`sgmon status`: one line for tmux from the state a running sgmon publishes (``sgmon.status``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Output format and host filter."""
    parser.add_argument("--format", choices=("plain", "tmux", "json"), default="plain")
    parser.add_argument("--host", metavar="NAME", help="only this host")
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="the configuration of this name (sgmon.toml's name), when several sgmon are running",
    )


def run(args: argparse.Namespace) -> int:
    """Print the line (always exit 0: tmux shows whatever is printed)."""
    from sgmon.status import main

    return main(args.format, args.host, args.name)

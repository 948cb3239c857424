"""`sgmon lab`: not built yet."""

from __future__ import annotations

import argparse

from sgmon.cli import not_built


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options until the command is built."""
    parser.add_argument("rest", nargs="*", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Say plainly that the command does not exist yet."""
    return not_built("lab", "the probe and lab issue")

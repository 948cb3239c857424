"""`sgmon config --check`: validate the config and show where each value came from."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--check and --config."""
    parser.add_argument("--check", action="store_true", help="validate (the default action)")
    parser.add_argument("--config", metavar="F", help="sgmon.toml to check")


def run(args: argparse.Namespace) -> int:
    """Print each value with its origin, then each problem on one line; exit 2 on problems."""
    from sgmon.config import check_config, search_paths

    checked = check_config(args.config)
    if checked.path is not None:
        print(f"config file: {checked.path}")
    elif not checked.problems:
        print("config file: none (looked in " + ", ".join(map(str, search_paths())) + ")")
    width = max((len(k) for k, _, _ in checked.values), default=0)
    for key, value, origin in checked.values:
        shown = value if isinstance(value, str) else json.dumps(value)
        print(f"  {key:<{width}} = {shown}    ({origin})")
    for p in checked.problems:
        print(f"sgmon: {p}", file=sys.stderr)
    if checked.problems:
        return 2
    print("ok")
    return 0

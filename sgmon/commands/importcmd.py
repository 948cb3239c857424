"""`sgmon import KIND ... --dir DIR`: history already on the hosts into an sgmon archive.

KIND is one of ``sgmon.importers.SOURCES``; only that importer's module is imported.  The
result is the recorder's archive, so ``sgmon replay DIR``, ``sgmon check --from DIR`` and
``sgmon report DIR`` read it as they read a recording.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib import import_module
from pathlib import Path

from sgmon.errors import UsageError
from sgmon.importers import SOURCES
from sgmon.readers.deadline import READ_SECONDS, Deadline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One sub-parser per source kind, each with the source's own options."""
    sub = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, module in SOURCES.items():
        mod = import_module(f"sgmon.importers.{module}")
        p = sub.add_parser(kind, help=mod.HELP, description=mod.HELP)
        p.add_argument("--dir", required=True, type=Path, help="archive directory to write")
        p.add_argument(
            "--time-limit",
            type=_seconds,
            default=READ_SECONDS,
            metavar="SECONDS",
            help=f"stop reading after this long, keeping what was read ({READ_SECONDS:g})",
        )
        mod.add_arguments(p)


def _seconds(text: str) -> float:
    """A positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def run(args: argparse.Namespace) -> int:
    """Read the source, write the archive, print one summary line."""
    from sgmon.errors import ArchiveError
    from sgmon.importers.write import write

    if args.kind not in SOURCES:
        raise UsageError(f"unknown import kind {args.kind!r}; kinds: {', '.join(SOURCES)}")
    mod = import_module(f"sgmon.importers.{SOURCES[args.kind]}")
    args.deadline = Deadline(args.time_limit)
    imp = mod.stream(args) if hasattr(mod, "stream") else mod.read(args)  # written as read
    try:
        rows = write(args.dir, imp, deadline=args.deadline)
    except ArchiveError as e:  # a foreign or unwritable --dir: that one line, as record says
        raise UsageError(str(e)) from None
    for note in imp.notes:
        print(f"sgmon: {note}", file=sys.stderr)
    hosts = ", ".join(f"{h} ({n} samples)" for h, n in imp.counts.items())
    print(f"imported {rows} rows into {args.dir}: {hosts}")
    return 0

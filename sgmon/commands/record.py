"""`sgmon record`: the headless CSV archive (layout: ``sgmon.archive``) for nohup, cron, systemd."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sgmon.errors import UsageError
from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup
from sgmon.model import Frame, unheard
from sgmon.units import parse_duration


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Archive options plus the shared host options."""
    parser.add_argument("--dir", default="sgmon-archive", help="archive directory")
    parser.add_argument("--rotate", default="1h", help="start new files every (1h, 6h, 1d)")
    parser.add_argument("--keep", help="delete whole files older than this (48h, 7d)")
    parser.add_argument("--compress", action="store_true", help="gzip each file once closed")
    parser.add_argument("--quiet", action="store_true", help="no start/stop lines on stderr")
    add_source_arguments(parser)


def listing(names: list[str], shown: int = 8) -> str:
    """Host names for one line: the first ``shown``, then how many more (a fleet has 300)."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


class Reached:
    """A sink that notes the hosts that sent a frame of their own (not a stale stand-in): a
    recording that never heard from a host must not end as if it had."""

    def __init__(self) -> None:
        self.hosts: set[str] = set()

    def __call__(self, frame: Frame, judgement: object = None) -> None:
        if frame.host not in self.hosts and not unheard(frame):
            self.hosts.add(frame.host)


def run(args: argparse.Namespace) -> int:
    """Record until --duration, SIGTERM or SIGINT; every tick is on disk when it returns.
    Exit 1 when the archive could not go on (its directory deleted under the recorder), 3 when
    a host was never reached (what was recorded of the others stays)."""
    from sgmon.errors import ArchiveError
    from sgmon.judgement import judge_for
    from sgmon.sinks.csvarchive import ArchiveWriter
    from sgmon.sinks.findings import FindingsLog
    from sgmon.sinks.statefile import StatePublisher

    try:
        rotate = parse_duration(args.rotate)
        keep = parse_duration(args.keep) if args.keep else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not 60 <= rotate <= 366 * 86400:
        raise UsageError(f"--rotate {args.rotate}: use 1m to 366d (1h is the usual)")
    if keep is not None and not rotate <= keep < float("inf"):
        raise UsageError(
            f"--keep {args.keep}: keep at least one rotation (--rotate {args.rotate}); "
            "retention deletes whole files older than this"
        )
    config, sources, interval, duration = load_sources(args)
    schema_of = schema_lookup(sources)
    try:
        writer = ArchiveWriter(
            Path(args.dir), schema_of, interval, rotate=rotate, keep=keep, compress=args.compress
        )
    except ArchiveError as e:
        for s in sources:
            s.close()
        raise UsageError(str(e)) from None
    # the report's title: the configuration's name, as the demo names a simulation
    if config.path is not None:
        writer.meta["name"] = config.name
    if args.simulate:
        writer.meta.setdefault("name", f"demo {args.simulate}")
        writer.meta["simulated"] = f"{args.simulate} at {args.speed:g}x speed"
    hosts = listing([h.name for s in sources for h in s.hosts])
    if not args.quiet:
        print(f"sgmon: recording {hosts} every {interval:g}s into {args.dir}", file=sys.stderr)
    reached = Reached()
    mon = run_until_stopped(
        sources,
        [reached, writer, FindingsLog(args.dir), StatePublisher(name=config.name)],
        judge_for(config, sources),
        duration,
    )
    if not args.quiet:
        print(f"sgmon: stopped; {writer.rows_written} rows written", file=sys.stderr)
    if mon.failed:
        return 1
    never = [h.name for s in sources for h in s.hosts if h.name not in reached.hosts]
    if never:
        them = "it" if len(never) == 1 else "them"
        print(
            f"sgmon: never reached {listing(never)}: nothing of {them} was recorded "
            "(the lines above say why)",
            file=sys.stderr,
        )
        return 3
    return 0

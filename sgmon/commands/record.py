"""`sgmon record`: the headless CSV archive (layout: ``sgmon.archive``) for nohup, cron, systemd."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sgmon.errors import UsageError
from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup
from sgmon.model import Frame, unheard
from sgmon.units import parse_duration

if TYPE_CHECKING:
    from sgmon.config import Config
    from sgmon.hosts import Source
    from sgmon.sinks.csvarchive import ArchiveWriter


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


def retention(args: argparse.Namespace) -> tuple[float, float | None]:
    """``--rotate`` and ``--keep`` in seconds; UsageError for a rotation outside 1m-366d or a
    retention shorter than one rotation (it would delete the file being written)."""
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
    return rotate, keep


def run(args: argparse.Namespace) -> int:
    """Record until --duration, SIGTERM or SIGINT; every tick is on disk when it returns.
    Exit 1 when the archive could not go on (its directory deleted under the recorder), 3 when
    a host was never reached, or its directory in the archive was refused (not one sgmon made:
    a symlink, a file); what was recorded of the others stays."""
    from sgmon.judgement import judge_for
    from sgmon.sinks.findings import FindingsLog
    from sgmon.sinks.statefile import StatePublisher

    rotate, keep = retention(args)
    config, sources, interval, duration = load_sources(args)
    writer = _writer(args, config, sources, interval, rotate, keep)
    hosts = listing([h.name for s in sources for h in s.hosts])
    if not args.quiet:
        print(f"sgmon: recording {hosts} every {interval:g}s into {args.dir}", file=sys.stderr)
    reached = Reached()
    mon = run_until_stopped(
        sources,
        [reached, writer, FindingsLog(writer.dirs), StatePublisher(name=config.name)],
        judge_for(config, sources),
        duration,
    )
    if not args.quiet:
        print(f"sgmon: stopped; {writer.rows_written} rows written", file=sys.stderr)
    if mon.failed:
        return 1
    never = [h.name for s in sources for h in s.hosts if h.name not in reached.hosts]
    silent = _say_unrecorded(sources, never)
    if never:
        them = "it" if len(never) == 1 else "them"
        print(
            f"sgmon: never reached {listing(never)}: nothing of {them} was recorded "
            "(the lines above say why)",
            file=sys.stderr,
        )
    return 3 if never or silent or writer.dirs.refused_hosts else 0  # refused: said when met


def _say_unrecorded(sources: list[Source], never: list[str]) -> int:
    """For each host of ``never`` that did answer, why nothing of it was recorded (every tick
    refused for its clock: an ssh host's ``unrecorded``), one line each; those are taken out
    of ``never``, and counted."""
    said = 0
    for s in sources:
        why = getattr(s, "unrecorded", lambda: None)()
        for h in s.hosts if why else ():
            if h.name in never:
                never.remove(h.name)
                said += 1
                print(f"sgmon: nothing of {h.name} was recorded: {why}", file=sys.stderr)
    return said


def _writer(
    args: argparse.Namespace,
    config: Config,
    sources: list[Source],
    interval: float,
    rotate: float,
    keep: float | None,
) -> ArchiveWriter:
    """The archive's sink, its meta.json named for the report (the configuration's name, as the
    demo names a simulation); UsageError, the sources closed, when ``--dir`` cannot be one."""
    from sgmon.errors import ArchiveError
    from sgmon.sinks.csvarchive import ArchiveWriter

    try:
        writer = ArchiveWriter(
            Path(args.dir),
            schema_lookup(sources),
            interval,
            rotate=rotate,
            keep=keep,
            compress=args.compress,
            hosts={h.name: h.role for s in sources for h in s.hosts},
        )
    except ArchiveError as e:
        for s in sources:
            s.close()
        raise UsageError(str(e)) from None
    if config.path is not None:
        writer.meta["name"] = config.name
    if args.simulate:
        writer.meta.setdefault("name", f"demo {args.simulate}")
        writer.meta["simulated"] = f"{args.simulate} at {args.speed:g}x speed"
    return writer

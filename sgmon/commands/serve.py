"""`sgmon serve`: the frames as a Prometheus/OpenMetrics endpoint (``sgmon.sinks.prometheus``)."""

from __future__ import annotations

import argparse
import sys

from sgmon.errors import UsageError
from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Listen address plus the shared host options."""
    parser.add_argument(
        "--listen", default="127.0.0.1:9464", metavar="ADDR:PORT", help="where to listen"
    )
    parser.add_argument(
        "--per-cpu",
        action="store_true",
        help="export every CPU's row too (by default the all-CPU row only: 9 series a CPU)",
    )
    add_source_arguments(parser)


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:9464``, ``[::1]:9464``, ``:9464`` (all addresses) -> (addr, port)."""
    addr, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: use ADDR:PORT, e.g. 127.0.0.1:9464")
    addr = addr.strip("[]") or "0.0.0.0"
    return addr, int(port)


def run(args: argparse.Namespace) -> int:
    """Serve until --duration, SIGTERM or SIGINT."""
    from sgmon.judgement import judge_for
    from sgmon.sinks.prometheus import Exporter, Identity
    from sgmon.sinks.statefile import StatePublisher

    addr, port = parse_listen(args.listen)
    config, sources, _, duration = load_sources(args)
    schema_of = schema_lookup(sources)
    try:
        exporter = Exporter(schema_of, addr, port, Identity.of(config), args.per_cpu)
    except OSError as e:
        for s in sources:
            s.close()
        raise UsageError(
            f"--listen {args.listen}: {e.strerror or e}; choose another port with --listen"
        ) from None
    print(f"sgmon: serving metrics on http://{args.listen}/metrics", file=sys.stderr, flush=True)
    judge = judge_for(config, sources)  # fleets alert on sgmon_finding, the analysis' verdict
    run_until_stopped(sources, [exporter, StatePublisher(name=config.name)], judge, duration)
    print(f"sgmon: stopped serving on http://{args.listen}/metrics", file=sys.stderr, flush=True)
    return 0

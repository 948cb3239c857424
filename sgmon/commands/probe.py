"""`sgmon probe server|client`: measure a Data Guard link like oratcptest (seed 002).

The server runs on the standby host; the client on the primary asks it for a transport mode and
prints throughput, latency percentiles, the server's disk-write time, the kernel's view of the
probe's own socket, the bandwidth-delay product and each mode's predicted extra commit time.
"""

from __future__ import annotations

import argparse
import errno
import sys
import time
from pathlib import Path

from sgmon.errors import Unreachable, UsageError
from sgmon.units import parse_duration, parse_size

DEFAULT_PORT = 1521


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """server and client sub-commands with oratcptest's options."""
    sub = parser.add_subparsers(dest="side", required=True, metavar="server|client")
    srv = sub.add_parser("server", help="receive, optionally write+sync, acknowledge")
    srv.add_argument("--listen", default=f"0.0.0.0:{DEFAULT_PORT}", help="ADDR:PORT to listen on")
    srv.add_argument("--write", type=Path, help="file to write and sync each message to (SYNC)")
    srv.add_argument("--duration", help="stop after this long (default: until Ctrl-C)")
    cli = sub.add_parser("client", help="send messages and time the acknowledgements")
    cli.add_argument("target", metavar="HOST:PORT", help="where `sgmon probe server` listens")
    cli.add_argument("--mode", choices=("async", "fastsync", "sync", "apply"), default="sync")
    cli.add_argument("--length", default="8k", help="message payload (default 8k)")
    cli.add_argument("--duration", help="test duration (required), e.g. 30s")
    cli.add_argument("--interval", default="5s", help="statistics interval (default 5s)")
    cli.add_argument("--connections", type=int, default=1, help="parallel connections")
    cli.add_argument("--rate", type=float, default=0.0, help="cap in Mbytes/s over all connections")
    cli.add_argument("--sndbuf", default="0", help="socket send buffer, e.g. 4M")
    cli.add_argument("--rcvbuf", default="0", help="socket receive buffer (set on both sides)")
    cli.add_argument("--format", choices=("text", "csv", "json"), default="text")


def _addr(text: str, default_host: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"bad address {text!r}: use HOST:PORT, e.g. {default_host}:1521")
    return host.strip("[]") or default_host, int(port)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the server or the client."""
    return _server(args) if args.side == "server" else _client(args)


def _server(args: argparse.Namespace) -> int:
    from sgmon.probe.server import ProbeServer

    host, port = _addr(args.listen, "0.0.0.0")
    duration = parse_duration(args.duration) if args.duration else None
    if args.write and not args.write.parent.is_dir():
        raise UsageError(f"--write {args.write}: directory does not exist")
    try:
        server = ProbeServer(host, port, args.write, log=_log)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} is in use on {host}: pick another with --listen") from e
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
    where = f", writing to {args.write}" if args.write else " (no --write: async/fastsync only)"
    _log(f"sgmon probe server listening on {server.address[0]}:{server.address[1]}{where}")
    try:
        server.serve(duration)
    except KeyboardInterrupt:
        server.stop.set()
    return 0


def _log(text: str) -> None:
    print(f"({time.strftime('%H:%M:%S')}) {text}", flush=True)


def _client(args: argparse.Namespace) -> int:
    from sgmon.probe.client import ClientOptions, Probe, ProbeRefused
    from sgmon.probe.report import Reporter, summary

    if not args.duration:
        raise UsageError(
            "probe client needs --duration (e.g. --duration 30s): it never runs unbounded"
        )
    host, port = _addr(args.target, "127.0.0.1")
    opts = ClientOptions(
        host=host,
        port=port,
        mode=args.mode,
        length=parse_size(args.length),
        duration=parse_duration(args.duration),
        interval=parse_duration(args.interval),
        connections=args.connections,
        rate=args.rate * 1024 * 1024,
        sndbuf=parse_size(args.sndbuf),
        rcvbuf=parse_size(args.rcvbuf),
    )
    if opts.duration <= 0 or opts.interval <= 0 or opts.length <= 0 or opts.connections < 1:
        raise UsageError("--duration, --interval, --length and --connections must be positive")
    if opts.length > 64 * 1024 * 1024:
        raise UsageError("--length is at most 64M")
    probe = Probe(opts)
    reporter = Reporter(args.format, opts)
    try:
        probe.connect()
    except ProbeRefused as e:
        raise UsageError(f"the probe server refused the test: {e}") from e
    except OSError as e:
        raise Unreachable(
            f"cannot reach a probe server at {host}:{port} ({e.strerror or e}): "
            "start `sgmon probe server` there first"
        ) from e
    reporter.header()
    reporter.ready()
    t0 = time.monotonic()
    try:
        total = probe.run(reporter.interval)
    except KeyboardInterrupt:
        probe.stop.set()
        return 130
    seconds = time.monotonic() - t0
    reporter.finish(summary(opts, total, reporter.rows, seconds, probe.server_bytes, probe.sndbuf))
    if probe.gone:
        print(
            f"sgmon: the probe server went away after {seconds:.1f} s ({probe.gone}); "
            "the figures above cover the time before",
            file=sys.stderr,
        )
        return 3
    return 0

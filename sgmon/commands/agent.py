"""`sgmon agent`: frames as NDJSON on stdout, what ``ssh host sgmon agent`` runs on a remote host.

Stream: one header line ``{"sgmon_agent": 1, "sgmon": ..., "frame_version": ..., "hostname": ...,
"clock": <epoch s>, "interval": ..., "hosts": [{"name", "role"}], "schemas": {host: ...}}``, then
one ``Frame.to_json()`` line per host per tick.  A line ``ping <t>`` on stdin is answered with
``{"pong": <t>, "time": <agent clock>}`` so the consumer can estimate the clock offset (see
``sgmon.hosts.remote``).  The agent stops when its stdout closes (the ssh session ended) and
exits 0 quietly.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time

from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The shared host options, and the role the consumer has for this host."""
    add_source_arguments(parser)
    parser.add_argument(
        "--role",
        choices=("primary", "standby"),
        help="this host's role where its own config names none (picks its DG sockets); "
        "the dashboard passes the role it has for the host",
    )


class _Out:
    """Whole lines to stdout under one lock; a closed pipe stops the agent."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.lock = threading.Lock()
        self.fd = sys.stdout.fileno()

    def line(self, text: str) -> None:
        data = (text + "\n").encode()
        with self.lock:
            try:
                while data:
                    data = data[os.write(self.fd, data) :]
            except OSError:  # EPIPE: nobody reads any more
                self.stop.set()

    def __call__(self, frame, _judgement) -> None:
        self.line(frame.to_json())


def _answer_pings(out: _Out) -> None:
    for raw in sys.stdin:
        if raw.startswith("ping "):
            try:
                t0 = float(raw.split()[1])
            except (IndexError, ValueError):
                continue
            out.line(json.dumps({"pong": t0, "time": time.time()}))


def run(args: argparse.Namespace) -> int:
    """Stream until stdout closes, the duration passes, or SIGTERM/SIGINT."""
    from sgmon import __version__
    from sgmon.judgement import judge_for
    from sgmon.model import FRAME_VERSION, schema_to_dict
    from sgmon.sinks.statefile import StatePublisher

    config, sources, interval, duration = load_sources(args, local_only=True, role=args.role or "")
    schema_of = schema_lookup(sources)
    hosts = [h for s in sources for h in s.hosts]
    stop = threading.Event()
    out = _Out(stop)
    out.line(
        json.dumps(
            {
                "sgmon_agent": 1,
                "sgmon": __version__,
                "frame_version": FRAME_VERSION,
                "hostname": socket.gethostname(),
                "clock": time.time(),
                "interval": interval,
                "hosts": [{"name": h.name, "role": h.role} for h in hosts],
                "schemas": {h.name: schema_to_dict(schema_of(h.name)) for h in hosts},
            },
            separators=(",", ":"),
        )
    )
    threading.Thread(target=_answer_pings, args=(out,), daemon=True).start()
    # the agent grades for the host's own status line; the analysis runs where the hosts meet
    judge = judge_for(config, sources, analysis=False)
    run_until_stopped(sources, [out, StatePublisher(name=config.name)], judge, duration, stop)
    if stop.is_set():  # stdout may be gone: keep the interpreter's final flush quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0

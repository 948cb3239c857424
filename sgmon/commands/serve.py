"""`sgmon serve`: the frames as a Prometheus/OpenMetrics endpoint (``sgmon.sinks.prometheus``)."""

from __future__ import annotations

import argparse
import http.server
import queue
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from sgmon.errors import UsageError
from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup

if TYPE_CHECKING:
    from sgmon.model import Frame, Schema
    from sgmon.sinks.prometheus import Identity
    from sgmon.verdicts import Judgement


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
    from sgmon.sinks.prometheus import Identity
    from sgmon.sinks.statefile import StatePublisher

    addr, port = parse_listen(args.listen)
    config, sources, interval, duration = load_sources(args)
    schema_of = schema_lookup(sources)
    try:
        server = ScrapeServer(
            schema_of, addr, port, Identity.of(config), args.per_cpu, max_age=min(interval, 1.0)
        )
    except OSError as e:
        for s in sources:
            s.close()
        raise UsageError(
            f"--listen {args.listen}: {e.strerror or e}; choose another port with --listen"
        ) from None
    print(f"sgmon: serving metrics on http://{args.listen}/metrics", file=sys.stderr, flush=True)
    judge = judge_for(config, sources)  # fleets alert on sgmon_finding, the analysis' verdict
    run_until_stopped(sources, [server, StatePublisher(name=config.name)], judge, duration)
    print(f"sgmon: stopped serving on http://{args.listen}/metrics", file=sys.stderr, flush=True)
    return 0


class ScrapeServer:
    """Sink and HTTP endpoint for a fleet's scrapes.

    A listen backlog of ``BACKLOG`` holds a burst of connections in the kernel (the standard
    library's servers listen with 5, and a sixth client at once waited for a retransmitted SYN).
    One thread accepts and watches the open connections; a connection goes to one of ``WORKERS``
    threads only once its request has arrived, so a thousand scrapers never become a thousand
    threads and clients that connect and say nothing hold no worker: they are closed after
    ``TIMEOUT`` seconds, and beyond ``MAX_OPEN`` waiting connections the newest is closed at once.
    The exposition changes once per tick: it is rendered once per tick and format (text,
    OpenMetrics, gzip or not) and the bytes go to every scrape until the next frame or
    ``max_age``, whichever comes first.
    """

    BACKLOG = 1024
    WORKERS = 8
    TIMEOUT = 5.0
    MAX_OPEN = 1024

    def __init__(
        self,
        schema_of: Callable[[str], Schema],
        addr: str,
        port: int,
        identity: Identity | None = None,
        per_cpu: bool = False,
        max_age: float = 1.0,
    ) -> None:
        from prometheus_client import CollectorRegistry

        from sgmon.sinks.prometheus import FrameCollector

        self.collector = FrameCollector(schema_of, identity, per_cpu)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)  # type: ignore[arg-type]
        self.max_age = max_age
        self._cache: dict[tuple[str, bool], tuple[float, str, bytes]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready: queue.Queue[socket.socket] = queue.Queue()
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.sock = socket.create_server((addr, port), family=family, backlog=self.BACKLOG)
        self.sock.setblocking(False)
        self.address = self.sock.getsockname()[:2]
        self.threads = [threading.Thread(target=self._watch, name="scrape-accept", daemon=True)]
        self.threads += [
            threading.Thread(target=self._work, name=f"scrape-{i}", daemon=True)
            for i in range(self.WORKERS)
        ]
        for t in self.threads:
            t.start()

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Sink: hand the frame and its verdict to the collector; the next scrape renders."""
        self.collector(frame, judgement)
        with self._lock:
            self._cache.clear()

    def render(self, accept: str, gzip_ok: bool) -> tuple[str, bytes]:
        """The exposition for a scrape's Accept header: content type and body, rendered at most
        once per tick and format."""
        import gzip

        from prometheus_client.exposition import choose_encoder

        encoder, content_type = choose_encoder(accept)
        key = (content_type, gzip_ok)
        with self._lock:  # one rendering at a time: the others then take its bytes
            hit = self._cache.get(key)
            if hit is not None and time.monotonic() - hit[0] < self.max_age:
                return hit[1], hit[2]
            body = encoder(self.registry)
            if gzip_ok:
                body = gzip.compress(body, compresslevel=1)
            self._cache[key] = (time.monotonic(), content_type, body)
            return content_type, body

    def _watch(self) -> None:
        """Accept, wait for each connection's request, hand it to a worker; close the silent."""
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        opened: dict[socket.socket, float] = {}
        while not self._stop.is_set():
            now = time.monotonic()
            for key, _ in sel.select(timeout=0.25):
                if key.fileobj is self.sock:
                    try:
                        conn, _peer = self.sock.accept()
                    except OSError:  # gone before accepted, or out of descriptors a moment
                        continue
                    if len(opened) >= self.MAX_OPEN:
                        conn.close()
                        continue
                    sel.register(conn, selectors.EVENT_READ)
                    opened[conn] = now
                else:
                    conn = cast(socket.socket, key.fileobj)
                    sel.unregister(conn)
                    del opened[conn]
                    self._ready.put(conn)
            for conn in [c for c, t in opened.items() if now - t > self.TIMEOUT]:
                sel.unregister(conn)
                del opened[conn]
                conn.close()
        for conn in opened:
            conn.close()
        sel.close()

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                conn = self._ready.get(timeout=0.25)
            except queue.Empty:
                continue
            conn.settimeout(self.TIMEOUT)  # a request sent a byte at a time ends here
            try:
                _Handler(conn, conn.getpeername(), self)  # type: ignore[arg-type]  # reads .render
            except OSError:
                pass  # the client went away or timed out: its problem, not the exporter's
            finally:
                conn.close()

    def close(self) -> None:
        """Stop accepting; the workers finish the scrape in hand."""
        self._stop.set()
        for t in self.threads:
            t.join(self.TIMEOUT + 1)
        self.sock.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    """One scrape, HTTP/1.0, closed after the answer: the exposition at any path but the
    browser's /favicon.ico, as prometheus_client's own server answered, so a scrape job's
    ``metrics_path`` keeps working."""

    server: ScrapeServer  # type: ignore[assignment]
    timeout = ScrapeServer.TIMEOUT

    def do_GET(self) -> None:
        """The exposition (404 for /favicon.ico)."""
        if self.path.split("?", 1)[0] == "/favicon.ico":
            self.send_error(404, "sgmon serves /metrics")
            return
        gzip_ok = "gzip" in self.headers.get("Accept-Encoding", "")
        content_type, body = self.server.render(self.headers.get("Accept", ""), gzip_ok)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if gzip_ok:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: a scrape every few seconds is not news."""

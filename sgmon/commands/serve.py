"""`sgmon serve`: the frames as a Prometheus/OpenMetrics endpoint (``sgmon.sinks.prometheus``)."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sgmon.errors import UsageError
from sgmon.headless import (
    add_source_arguments,
    load_sources,
    run_until_stopped,
)
from sgmon.hosts import schema_lookup

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from sgmon.judgement import Judge
    from sgmon.model import Frame, Schema
    from sgmon.sinks.prometheus import Identity
    from sgmon.verdicts import Judgement
    from sgmon.webconfig import WebConfig


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
    parser.add_argument(
        "--web.config.file",
        dest="web_config_file",
        metavar="F",
        help="TLS and basic authentication, in the exporter-toolkit format every Prometheus "
        "exporter reads (only its owner may read it); use it to listen beyond loopback",
    )
    add_source_arguments(parser)


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:9464``, ``[::1]:9464``, ``:9464`` (all addresses) -> (addr, port)."""
    addr, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: use ADDR:PORT, e.g. 127.0.0.1:9464")
    addr = addr.strip("[]") or "0.0.0.0"
    return addr, int(port)


def _loopback(addr: str) -> bool:
    """Whether ``addr`` listens on this machine only."""
    import ipaddress

    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:  # a host name: localhost is loopback, any other may not be
        return addr == "localhost"


def run(args: argparse.Namespace) -> int:
    """Serve until --duration, SIGTERM or SIGINT."""
    from sgmon.judgement import judge_for
    from sgmon.sinks.prometheus import Identity
    from sgmon.sinks.statefile import StatePublisher

    addr, port = parse_listen(args.listen)
    web = None
    if args.web_config_file:
        from sgmon.webconfig import WebConfig

        web = WebConfig.read(args.web_config_file)
    elif not _loopback(addr):
        print(
            f"sgmon: --listen {args.listen} without --web.config.file: anyone who reaches the "
            "port reads the metrics, unencrypted (docs/metrics.md, TLS and authentication)",
            file=sys.stderr,
        )
    config, sources, interval, duration = load_sources(args)
    judge = judge_for(config, sources)  # fleets alert on sgmon_finding, the analysis' verdict
    try:
        server = ScrapeServer(
            schema_lookup(sources),
            addr,
            port,
            Identity.of(config),
            args.per_cpu,
            max_age=interval + 1.0,
            web=web,
            judge=judge,
            hosts=[h.name for s in sources for h in s.hosts],
        )
    except OSError as e:
        for s in sources:
            s.close()
        raise UsageError(
            f"--listen {args.listen}: {e.strerror or e}; choose another port with --listen"
        ) from None
    scheme = "https" if web is not None and web.tls is not None else "http"
    print(
        f"sgmon: serving metrics on {scheme}://{args.listen}/metrics", file=sys.stderr, flush=True
    )
    run_until_stopped(sources, [server, StatePublisher(name=config.name)], judge, duration)
    print(
        f"sgmon: stopped serving on {scheme}://{args.listen}/metrics", file=sys.stderr, flush=True
    )
    return 0


Encoder = Callable[["CollectorRegistry"], bytes]
"""prometheus_client's exposition of a registry in one format."""


@dataclass(slots=True)
class _Rendering:
    """One format's exposition: its bytes, when they were rendered, and when a scrape last
    asked for them."""

    encoder: Encoder
    content_type: str
    gzip: bool
    body: bytes
    rendered: float
    asked: float = 0.0


class ScrapeServer:
    """Sink and HTTP endpoint for a fleet's scrapes (the connections: ``sgmon.httpd``).

    The exposition changes once per tick, so it is rendered at most once per tick and format
    (text, OpenMetrics, gzip or not), and every scrape until the next takes its bytes.  A format
    scraped since its last rendering is rendered again as soon as every host's frame of the
    tick is in, so under a fleet's scrapes no scrape waits for a rendering; one nobody asked
    for is dropped instead, and rendered by the next scrape that asks (a Prometheus scraping
    every 15 s costs one rendering per scrape, a serve nobody scrapes none).  Bytes older than
    ``max_age`` (the hosts went silent: no tick completes) are rendered again when asked, so
    ``sgmon_host_up`` falls to 0.
    """

    def __init__(
        self,
        schema_of: Callable[[str], Schema],
        addr: str,
        port: int,
        identity: Identity | None = None,
        per_cpu: bool = False,
        max_age: float = 2.0,
        web: WebConfig | None = None,
        judge: Judge | None = None,
        hosts: Iterable[str] = (),
    ) -> None:
        from prometheus_client import CollectorRegistry, ProcessCollector

        from sgmon.httpd import Server
        from sgmon.sinks.prometheus import FrameCollector

        self.collector = FrameCollector(schema_of, identity, per_cpu)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)  # type: ignore[arg-type]
        ProcessCollector(registry=self.registry)  # process_*: the serve's own CPU and memory
        self.judge = judge
        """Whose ``seconds`` is the time the frame handed to the sink took to judge."""
        self.max_age = max_age
        self._hosts = set(hosts)
        self._waiting = set(self._hosts)
        """Hosts whose frame of the current tick has not arrived yet."""
        self._cache: dict[tuple[str, bool], _Rendering] = {}
        self._lock = threading.Lock()
        self.http = Server(addr, port, self.render, web)
        self.address = self.http.address

    def __call__(self, frame: Frame, judgement: Judgement) -> None:
        """Sink: hand the frame, its verdict and the time it took to the collector; once the
        tick's frames are all in, render what the scrapes ask for."""
        self.collector(frame, judgement, None if self.judge is None else self.judge.seconds)
        self._hosts.add(frame.host)
        self._waiting.discard(frame.host)
        if not self._waiting:
            self._waiting = set(self._hosts)
            self._refresh()

    def _refresh(self) -> None:
        """A tick is in: render again each format scraped since its last rendering; drop the
        others (the next scrape that asks renders them)."""
        with self._lock:
            for key, old in list(self._cache.items()):
                if old.asked > old.rendered:
                    self._cache[key] = self._render(old.encoder, old.content_type, old.gzip)
                else:
                    del self._cache[key]

    def _render(self, encoder: Encoder, content_type: str, gzip_ok: bool) -> _Rendering:
        import gzip

        body = encoder(self.registry)
        if gzip_ok:
            body = gzip.compress(body, compresslevel=1)
        return _Rendering(encoder, content_type, gzip_ok, body, time.monotonic())

    def render(self, accept: str, gzip_ok: bool) -> tuple[str, bytes]:
        """The exposition for a scrape's Accept header: content type and body, rendered at most
        once per tick and format."""
        from prometheus_client.exposition import choose_encoder

        asked = time.monotonic()
        encoder, content_type = choose_encoder(accept)
        key = (content_type, gzip_ok)
        hit = self._cache.get(key)
        if hit is None or asked - hit.rendered >= self.max_age:
            with self._lock:  # one rendering at a time: the others then take its bytes
                hit = self._cache.get(key)
                if hit is None or time.monotonic() - hit.rendered >= self.max_age:
                    hit = self._cache[key] = self._render(encoder, content_type, gzip_ok)
        hit.asked = asked
        return hit.content_type, hit.body

    def close(self) -> None:
        """Stop accepting; the workers finish the scrape in hand."""
        self.http.close()

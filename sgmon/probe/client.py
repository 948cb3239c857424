"""The probe's client side: ship messages like a log writer and time the acknowledgements.

Each connection runs on its own thread; the main thread wakes every interval, swaps the
per-interval tallies and reads the kernel's TCP_INFO of the probe's own sockets, so the report
shows what the application saw next to what TCP saw on the same connection.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from sgmon.probe import tcpinfo
from sgmon.probe.protocol import (
    ACK,
    DATA,
    FIN,
    MSG,
    STATS,
    STATS_KIND,
    Hello,
    ProtocolError,
    read_line,
    recv_exact,
)


class ProbeRefused(Exception):
    """The server answered the hello with an error (e.g. sync mode without --write)."""


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """What ``sgmon probe client`` was asked to do."""

    host: str
    port: int
    mode: str
    length: int
    duration: float
    interval: float
    connections: int = 1
    rate: float = 0.0  # bytes/s over all connections; 0 = as fast as acks allow
    sndbuf: int = 0
    rcvbuf: int = 0


@dataclass
class Tally:
    """What the connections did in one interval (or the whole run)."""

    messages: int = 0
    nbytes: int = 0
    latencies: array = field(default_factory=lambda: array("d"))  # ms
    write_ms: float = 0.0
    apply_ms: float = 0.0

    def merge(self, other: Tally) -> None:
        """Add another interval's tally (for the summary)."""
        self.messages += other.messages
        self.nbytes += other.nbytes
        self.latencies.extend(other.latencies)
        self.write_ms += other.write_ms
        self.apply_ms += other.apply_ms


@dataclass
class Sample:
    """One interval as the reporter prints it."""

    start: float  # wall-clock
    end: float
    tally: Tally
    tcp: dict[str, float] | None  # TCP_INFO of the first connection
    retransmits: int  # summed over all connections, in the interval


class Probe:
    """Run one probe test against a server and hand each interval to ``on_interval``."""

    def __init__(self, opts: ClientOptions) -> None:
        self.opts = opts
        self.socks: list[socket.socket] = []
        self.stop = threading.Event()
        self.gone: str | None = None  # why the peer vanished, if it did
        self.server_bytes = 0  # what the server counted (async throughput)
        self.sndbuf = 0
        self._lock = threading.Lock()
        self._tally = Tally()
        self._retrans_seen: list[int] = []

    def connect(self) -> None:
        """Open and handshake every connection; raise OSError / ProbeRefused with the reason."""
        o = self.opts
        hello = Hello(o.mode, o.length, o.sndbuf, o.rcvbuf)
        for _ in range(o.connections):
            s = socket.create_connection((o.host, o.port), timeout=5)
            self.socks.append(s)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if o.sndbuf:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, o.sndbuf)
            if o.rcvbuf:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, o.rcvbuf)
            s.sendall(hello.encode())
            reply = read_line(s)
            if not reply.get("ok"):
                raise ProbeRefused(str(reply.get("error") or "refused by the server"))
            s.settimeout(0.5)
            self._retrans_seen.append(0)
        self.sndbuf = self.socks[0].getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)

    def run(self, on_interval: Callable[[Sample], None]) -> Tally:
        """Send for ``duration`` (or until the peer vanishes); return the whole run's tally."""
        o = self.opts
        workers = [
            threading.Thread(target=self._worker, args=(s,), daemon=True) for s in self.socks
        ]
        total = Tally()
        t_start = time.time()
        deadline = time.monotonic() + o.duration
        for w in workers:
            w.start()
        mark = t_start
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            self.stop.wait(max(0.0, min(o.interval - (time.time() - mark), left)))
            if time.monotonic() >= deadline:
                self.stop.set()
            now = time.time()
            with self._lock:
                tally, self._tally = self._tally, Tally()
            total.merge(tally)
            if now - mark > 0.05 or tally.messages:
                on_interval(Sample(mark, now, tally, tcpinfo.read(self.socks[0]), self._retrans()))
            mark = now
        for w in workers:
            w.join(timeout=5)
        for s in self.socks:
            s.close()
        return total

    def _retrans(self) -> int:
        """Retransmitted segments on all the probe's sockets since the last call."""
        n = 0
        for i, s in enumerate(self.socks):
            info = tcpinfo.read(s)
            if info is None:
                continue
            cur = int(info["total_retrans"])
            n += cur - self._retrans_seen[i]
            self._retrans_seen[i] = cur
        return n

    def _worker(self, sock: socket.socket) -> None:
        o = self.opts
        payload = os.urandom(o.length)
        per_conn_rate = o.rate / o.connections if o.rate else 0.0
        seq = 0
        sent = 0
        t0 = time.monotonic()
        acked = o.mode != "async"
        try:
            while not self.stop.is_set():
                seq += 1
                t_send = time.perf_counter()
                sock.sendall(MSG.pack(DATA, seq, o.length) + payload)
                sent += o.length + MSG.size
                if acked:
                    _, _, w, a = ACK.unpack(recv_exact(sock, ACK.size, stop=self.stop))
                    lat = (time.perf_counter() - t_send) * 1000.0
                with self._lock:
                    t = self._tally
                    t.messages += 1
                    t.nbytes += o.length + MSG.size
                    if acked:
                        t.latencies.append(lat)
                        t.write_ms += w
                        t.apply_ms += a
                if per_conn_rate:
                    ahead = t0 + sent / per_conn_rate - time.monotonic()
                    if ahead > 0:
                        self.stop.wait(ahead)
            self._finish(sock)
        except (ProtocolError, OSError) as e:
            if not self.stop.is_set():
                self.gone = str(e) or type(e).__name__
                self.stop.set()

    def _finish(self, sock: socket.socket) -> None:
        """Tell the server we are done and read what it received (async throughput)."""
        sock.settimeout(5)
        sock.sendall(MSG.pack(FIN, 0, 0))
        while True:  # acks still in flight precede the stats
            head = recv_exact(sock, 1)
            if head[0] == STATS_KIND:
                rest = recv_exact(sock, STATS.size - 1)
                _, _, nbytes = STATS.unpack(bytes(head) + bytes(rest))
                with self._lock:
                    self.server_bytes += nbytes
                return
            recv_exact(sock, ACK.size - 1)

"""The HTTP side of `sgmon serve`: scrapes from a network sgmon does not own.

A scrape endpoint on a database team's network meets slow clients, idle ones, scanners and, in
a fleet, hundreds of honest scrapers at once.  So:

- **One thread watches every open connection**, reads each request itself, without
  blocking, until its headers are complete, and answers it itself: the exposition is rendered
  once a tick, so an answer is bytes already made, sent without blocking as the client takes
  them (no hand-off between threads per scrape).  Only a request whose password needs a bcrypt
  check (tens of milliseconds; once per user and password for a while) goes to a worker.  A
  client that sends a byte every few seconds (slow loris) or nothing at all holds no thread,
  and is closed when its **whole request** is not in within ``REQUEST_DEADLINE`` seconds of
  its connection, however it trickles; one that reads its answer too slowly, when the answer
  has not left within ``SEND_DEADLINE``.  Headers over ``MAX_HEADER`` bytes are refused (431).
- **A connection cap**: beyond ``MAX_OPEN`` waiting connections the **oldest** is dropped, so
  a flood of idle connections cannot lock out the scraper that connects next.
- **TLS and basic authentication** as the exporter-toolkit file configures them
  (``sgmon.webconfig``).
"""

from __future__ import annotations

import queue
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sgmon.webconfig import Authenticator, WebConfig

REQUEST_DEADLINE = 5.0
"""Seconds from a connection's accept to its whole request (headers) having arrived."""
SEND_DEADLINE = 10.0
"""Seconds an answer may take to leave (a client that reads slowly)."""
MAX_HEADER = 8192
MAX_OPEN = 1024
BACKLOG = 1024
WORKERS = 2

Render = Callable[[str, bool], tuple[str, bytes]]
"""(Accept header, gzip accepted) -> (content type, body)."""


@dataclass(slots=True)
class _Conn:
    """A connection whose request is being read."""

    sock: socket.socket
    opened: float
    data: bytearray = field(default_factory=bytearray)
    handshaken: bool = True


@dataclass(slots=True)
class _Out:
    """A connection whose answer is being sent."""

    sock: socket.socket
    started: float
    answer: memoryview


@dataclass(frozen=True, slots=True)
class Request:
    """A request whose headers have all arrived."""

    method: str
    path: str
    headers: dict[str, str]


def parse_request(head: bytes) -> Request | None:
    """The request line and headers (``head`` ends at the blank line); None when malformed."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # latin-1 decodes any byte; kept for the type checker
        return None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return None
        headers[name.lower()] = value.strip()
    return Request(parts[0], parts[1], headers)


class Server:
    """The scrape endpoint: ``render`` gives each scrape its body (see the module docstring)."""

    def __init__(self, addr: str, port: int, render: Render, web: WebConfig | None = None) -> None:
        self.render = render
        self.web = web or WebConfig()
        self.auth = Authenticator(self.web.users)
        self._stop = threading.Event()
        self._ready: queue.Queue[tuple[socket.socket, Request | int]] = queue.Queue()
        """A whole request, or the error status its connection gets (400, 431)."""
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.sock = socket.create_server((addr, port), family=family, backlog=BACKLOG)
        self.sock.setblocking(False)
        self.address = self.sock.getsockname()[:2]
        self.dropped = 0
        """Connections closed before their request was whole (deadline, cap, malformed)."""
        self._out: dict[socket.socket, _Out] = {}
        """The connections whose answers are being sent (the watching thread's alone)."""
        self.threads = [threading.Thread(target=self._watch, name="scrape-accept", daemon=True)]
        self.threads += [
            threading.Thread(target=self._work, name=f"scrape-{i}", daemon=True)
            for i in range(WORKERS)
        ]
        for t in self.threads:
            t.start()

    def _watch(self) -> None:
        """Accept, read each request whole, answer it (or hand it to a worker); drop the late
        and the oldest."""
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        opened: dict[socket.socket, _Conn] = {}  # in accept order: the first is the oldest
        while not self._stop.is_set():
            for key, _ in sel.select(timeout=0.25):
                if key.fileobj is self.sock:
                    self._accept(sel, opened)
                elif key.fileobj in self._out:
                    self._write(sel, self._out[key.fileobj])  # type: ignore[index]
                else:
                    self._read(sel, opened, opened[key.fileobj])  # type: ignore[index]
            now = time.monotonic()
            for c in [c for c in opened.values() if now - c.opened > REQUEST_DEADLINE]:
                self._drop(sel, opened, c)
            for o in [o for o in self._out.values() if now - o.started > SEND_DEADLINE]:
                self._sent(sel, o)
        for c in list(opened.values()):
            self._drop(sel, opened, c)
        for o in list(self._out.values()):
            self._sent(sel, o)
        sel.close()

    def _accept(self, sel: selectors.BaseSelector, opened: dict[socket.socket, _Conn]) -> None:
        for _ in range(64):  # a burst, without starving the open connections
            try:
                sock, _peer = self.sock.accept()
            except OSError:  # none left, gone before accepted, or out of descriptors a moment
                return
            sock.setblocking(False)
            if len(opened) >= MAX_OPEN:
                self._drop(sel, opened, next(iter(opened.values())))
            conn = _Conn(sock, time.monotonic())
            if self.web.tls is not None:
                try:
                    conn.sock = self.web.tls.wrap_socket(
                        sock, server_side=True, do_handshake_on_connect=False
                    )
                except (OSError, ssl.SSLError):
                    sock.close()
                    continue
                conn.handshaken = False
            sel.register(conn.sock, selectors.EVENT_READ)
            opened[conn.sock] = conn

    def _read(
        self, sel: selectors.BaseSelector, opened: dict[socket.socket, _Conn], c: _Conn
    ) -> None:
        """Whatever arrived on one connection: more of a TLS handshake or of its request."""
        try:
            if not c.handshaken:
                c.sock.do_handshake()  # type: ignore[attr-defined]
                c.handshaken = True
                return
            chunk = c.sock.recv(4096)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except (OSError, ssl.SSLError):
            self._drop(sel, opened, c)
            return
        if not chunk:
            self._drop(sel, opened, c)
            return
        c.data += chunk
        end = c.data.find(b"\r\n\r\n")
        if end < 0 and len(c.data) <= MAX_HEADER:
            return
        sel.unregister(c.sock)
        del opened[c.sock]
        request = parse_request(bytes(c.data[:end])) or 400 if 0 <= end <= MAX_HEADER else 431
        answer = self._answer(request, None)
        if answer is None:  # a password to check with bcrypt: a worker's
            self._ready.put((c.sock, request))
            return
        out = self._out[c.sock] = _Out(c.sock, time.monotonic(), memoryview(answer))
        sel.register(c.sock, selectors.EVENT_WRITE)
        self._write(sel, out)

    def _write(self, sel: selectors.BaseSelector, o: _Out) -> None:
        """Send what the client takes of its answer now; close it once all is gone."""
        try:
            while o.answer:
                o.answer = o.answer[o.sock.send(o.answer) :]
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except (OSError, ssl.SSLError):
            pass  # the client went away: its problem, not ours
        self._sent(sel, o)

    def _sent(self, sel: selectors.BaseSelector, o: _Out) -> None:
        """An answer sent, or its client gone or too slow: the connection closes."""
        sel.unregister(o.sock)
        del self._out[o.sock]
        o.sock.close()

    def _drop(
        self, sel: selectors.BaseSelector, opened: dict[socket.socket, _Conn], c: _Conn
    ) -> None:
        sel.unregister(c.sock)
        del opened[c.sock]
        self.dropped += 1
        c.sock.close()

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                sock, request = self._ready.get(timeout=0.25)
            except queue.Empty:
                continue
            try:
                sock.setblocking(True)
                sock.settimeout(SEND_DEADLINE)
                allowed = isinstance(request, Request) and self.auth.allows(
                    request.headers.get("authorization", "")
                )
                sock.sendall(self._answer(request, allowed) or b"")
            except (OSError, ssl.SSLError):
                pass  # the client went away or read too slowly: its problem, not ours
            finally:
                sock.close()

    def _answer(self, request: Request | int, allowed: bool | None) -> bytes | None:
        """One whole answer, after which the connection closes (HTTP/1.0 style, as
        prometheus_client's); None when the password needs a bcrypt check (``allowed``: its
        outcome, None when not made yet)."""
        if isinstance(request, int):
            return _response(request, "text/plain", _REASON[request].lower().encode() + b"\n")
        if request.method not in ("GET", "HEAD"):
            return _response(405, "text/plain", b"GET only\n", {"Allow": "GET, HEAD"})
        if allowed is None:
            allowed = self.auth.known(request.headers.get("authorization", ""))
            if allowed is None:
                return None
        if not allowed:
            challenge = {"WWW-Authenticate": 'Basic realm="sgmon"'}
            return _response(401, "text/plain", b"unauthorized\n", challenge)
        if request.path.split("?", 1)[0] == "/favicon.ico":
            return _response(404, "text/plain", b"sgmon serves /metrics\n")
        gzip_ok = "gzip" in request.headers.get("accept-encoding", "")
        content_type, body = self.render(request.headers.get("accept", ""), gzip_ok)
        extra = {"Content-Encoding": "gzip"} if gzip_ok else {}
        sent = body if request.method == "GET" else b""
        return _response(200, content_type, sent, extra, length=len(body))

    def close(self) -> None:
        """Stop accepting; the workers finish the answer in hand."""
        self._stop.set()
        for t in self.threads:
            t.join(SEND_DEADLINE + 1)
        self.sock.close()


_REASON = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
}


def _response(
    code: int,
    content_type: str,
    body: bytes,
    extra: dict[str, str] | None = None,
    length: int | None = None,
) -> bytes:
    size = len(body) if length is None else length
    head = [
        f"HTTP/1.1 {code} {_REASON[code]}",
        f"Content-Type: {content_type}",
        f"Content-Length: {size}",
        "Connection: close",
    ]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body

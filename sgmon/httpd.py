"""The HTTP side of `sgmon serve`: scrapes from a network sgmon does not own.

A scrape endpoint on a database team's network meets slow clients, idle ones, scanners and, in
a fleet, hundreds of honest scrapers at once.  So:

- **One thread watches every open connection** and reads each request itself, without
  blocking, until its headers are complete; only a whole request goes to one of the workers.
  A client that sends a byte every few seconds (slow loris) or nothing at all holds no worker,
  and is closed when its **whole request** is not in within ``REQUEST_DEADLINE`` seconds of
  its connection, however it trickles.  Headers over ``MAX_HEADER`` bytes are refused (431).
- **A connection cap**: beyond ``MAX_OPEN`` waiting connections the **oldest** is dropped, so
  a flood of idle connections cannot lock out the scraper that connects next.
- **The exporter-toolkit web configuration** (``--web.config.file``, the format every
  Prometheus exporter reads): ``tls_server_config`` (``cert_file``, ``key_file``, optionally
  ``client_ca_file`` and ``client_auth_type``, ``min_version``) and ``basic_auth_users`` (user:
  bcrypt hash).  The file is refused when group or others may read it (it may name a key), and
  each problem is one line.  A checked password is remembered (its SHA-256, for
  ``AUTH_CACHE_S``), as exporter-toolkit does: bcrypt costs tens of milliseconds a check by
  design, and a fleet scrapes every few seconds.
"""

from __future__ import annotations

import base64
import hashlib
import queue
import selectors
import socket
import ssl
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgmon.errors import UsageError

REQUEST_DEADLINE = 5.0
"""Seconds from a connection's accept to its whole request (headers) having arrived."""
SEND_DEADLINE = 10.0
"""Seconds an answer may take to leave (a client that reads slowly)."""
MAX_HEADER = 8192
MAX_OPEN = 1024
BACKLOG = 1024
WORKERS = 8
AUTH_CACHE_S = 60.0

Render = Callable[[str, bool], tuple[str, bytes]]
"""(Accept header, gzip accepted) -> (content type, body)."""


@dataclass(frozen=True, slots=True)
class WebConfig:
    """What ``--web.config.file`` asks for: TLS, and the users allowed in."""

    tls: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    """user -> bcrypt hash; empty: no authentication."""

    @classmethod
    def read(cls, path: str) -> WebConfig:
        """The file parsed and checked, or UsageError with one line naming the key."""
        where = f"--web.config.file {path}"
        data = _load(Path(path), where)
        unknown = set(data) - {"tls_server_config", "basic_auth_users", "http_server_config"}
        if unknown:
            raise UsageError(f"{where}: {sorted(unknown)[0]}: unknown key")
        tls_raw = data.get("tls_server_config")
        tls = _tls(tls_raw, Path(path).parent, where) if tls_raw else None
        users_raw = data.get("basic_auth_users") or {}
        if not isinstance(users_raw, dict):
            raise UsageError(f"{where}: basic_auth_users: a table of user: bcrypt hash")
        users: dict[str, bytes] = {}
        for user, hashed in users_raw.items():
            if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
                raise UsageError(
                    f"{where}: basic_auth_users.{user}: not a bcrypt hash (htpasswd -nBC 10 "
                    '"" | tr -d ":\\n", or python -c "import bcrypt; ...")'
                )
            users[str(user)] = hashed.encode()
        return cls(tls, users)


def _load(path: Path, where: str) -> dict[str, Any]:
    """The YAML file as a mapping, refused when others than its owner may read it."""
    import yaml

    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{where}: not a regular file")
        if st.st_mode & 0o077:
            raise UsageError(
                f"{where}: group or others may read it (mode {stat.S_IMODE(st.st_mode):o}); "
                f"chmod 600 {path}"
            )
        text = path.read_text()
    except OSError as e:
        raise UsageError(f"{where}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise UsageError(f"{where}: {line}not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: not a YAML mapping of tls_server_config, basic_auth_users")
    return data


_TLS_KEYS = {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version"}
_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}


def _tls(raw: object, base: Path, where: str) -> ssl.SSLContext:
    """The server's TLS context from ``tls_server_config`` (paths relative to the file)."""
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: tls_server_config: a table with cert_file and key_file")
    unknown = set(raw) - _TLS_KEYS
    if unknown:
        raise UsageError(f"{where}: tls_server_config.{sorted(unknown)[0]}: unknown key")
    for key in ("cert_file", "key_file"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise UsageError(f"{where}: tls_server_config.{key}: missing")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    version = raw.get("min_version", "TLS12")
    if version not in _VERSIONS:
        raise UsageError(f"{where}: tls_server_config.min_version: use TLS12 or TLS13")
    ctx.minimum_version = _VERSIONS[version]
    try:
        ctx.load_cert_chain(base / raw["cert_file"], base / raw["key_file"])
    except (OSError, ssl.SSLError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(
            f"{where}: tls_server_config: cannot load the certificate: {why}"
        ) from None
    auth = raw.get("client_auth_type", "NoClientCert")
    if auth not in ("NoClientCert", "RequireAndVerifyClientCert"):
        raise UsageError(
            f"{where}: tls_server_config.client_auth_type: use NoClientCert or "
            "RequireAndVerifyClientCert"
        )
    if auth == "RequireAndVerifyClientCert":
        ca = raw.get("client_ca_file")
        if not isinstance(ca, str):
            raise UsageError(f"{where}: tls_server_config.client_ca_file: missing")
        try:
            ctx.load_verify_locations(base / ca)
        except (OSError, ssl.SSLError) as e:
            raise UsageError(f"{where}: tls_server_config.client_ca_file: {e}") from None
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


class Authenticator:
    """Basic authentication against bcrypt hashes, each good password remembered for a while
    (by its SHA-256: the password itself is never kept)."""

    def __init__(self, users: dict[str, bytes]) -> None:
        self.users = users
        self._good: dict[tuple[str, bytes], float] = {}
        self._lock = threading.Lock()

    def allows(self, header: str) -> bool:
        """Whether an Authorization header names a user and its password."""
        if not self.users:
            return True
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, sep, password = base64.b64decode(token, validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        if not sep or hashed is None:
            return False
        key = (user, hashlib.sha256(password.encode()).digest())
        now = time.monotonic()
        with self._lock:
            if now - self._good.get(key, -AUTH_CACHE_S) < AUTH_CACHE_S:
                return True
        import bcrypt

        if not bcrypt.checkpw(password.encode(), hashed):
            return False
        with self._lock:
            self._good = {k: t for k, t in self._good.items() if now - t < AUTH_CACHE_S}
            self._good[key] = now
        return True


@dataclass(slots=True)
class _Conn:
    """A connection whose request is being read."""

    sock: socket.socket
    opened: float
    data: bytearray = field(default_factory=bytearray)
    handshaken: bool = True


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
        self.threads = [threading.Thread(target=self._watch, name="scrape-accept", daemon=True)]
        self.threads += [
            threading.Thread(target=self._work, name=f"scrape-{i}", daemon=True)
            for i in range(WORKERS)
        ]
        for t in self.threads:
            t.start()

    def _watch(self) -> None:
        """Accept, read each request whole, hand it to a worker; drop the late and the oldest."""
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ)
        opened: dict[socket.socket, _Conn] = {}  # in accept order: the first is the oldest
        while not self._stop.is_set():
            for key, _ in sel.select(timeout=0.25):
                if key.fileobj is self.sock:
                    self._accept(sel, opened)
                else:
                    self._read(sel, opened, opened[key.fileobj])  # type: ignore[index]
            now = time.monotonic()
            for c in [c for c in opened.values() if now - c.opened > REQUEST_DEADLINE]:
                self._drop(sel, opened, c)
        for c in list(opened.values()):
            self._drop(sel, opened, c)
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
        if not 0 <= end <= MAX_HEADER:
            self._ready.put((c.sock, 431))
            return
        self._ready.put((c.sock, parse_request(bytes(c.data[:end])) or 400))

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
                self._answer(sock, request)
            except (OSError, ssl.SSLError):
                pass  # the client went away or read too slowly: its problem, not ours
            finally:
                sock.close()

    def _answer(self, sock: socket.socket, request: Request | int) -> None:
        """One answer, then the connection closes (HTTP/1.0 style, as prometheus_client's)."""
        if isinstance(request, int):
            _send(sock, request, "text/plain", _REASON[request].lower().encode() + b"\n")
            return
        if request.method not in ("GET", "HEAD"):
            _send(sock, 405, "text/plain", b"GET only\n", {"Allow": "GET, HEAD"})
            return
        if not self.auth.allows(request.headers.get("authorization", "")):
            challenge = {"WWW-Authenticate": 'Basic realm="sgmon"'}
            _send(sock, 401, "text/plain", b"unauthorized\n", challenge)
            return
        if request.path.split("?", 1)[0] == "/favicon.ico":
            _send(sock, 404, "text/plain", b"sgmon serves /metrics\n")
            return
        gzip_ok = "gzip" in request.headers.get("accept-encoding", "")
        content_type, body = self.render(request.headers.get("accept", ""), gzip_ok)
        extra = {"Content-Encoding": "gzip"} if gzip_ok else {}
        sent = body if request.method == "GET" else b""
        _send(sock, 200, content_type, sent, extra, length=len(body))

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


def _send(
    sock: socket.socket,
    code: int,
    content_type: str,
    body: bytes,
    extra: dict[str, str] | None = None,
    length: int | None = None,
) -> None:
    size = len(body) if length is None else length
    head = [
        f"HTTP/1.1 {code} {_REASON[code]}",
        f"Content-Type: {content_type}",
        f"Content-Length: {size}",
        "Connection: close",
    ]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

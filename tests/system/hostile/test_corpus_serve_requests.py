"""``sgmon serve`` meets requests of every wrong shape on one real listening socket: methods it
does not serve, paths that climb or carry escapes and NULs, a request line of a megabyte,
headers past the limit, thousands of headers, smuggling pairs of Content-Length and
Transfer-Encoding, HTTP/0.9 and HTTP/2 prefaces, a TLS hello, binary bytes, a request that
trickles and one that stops half-way.  Each case: the server answers with a status of its own
(or closes) within its deadline, never echoes a raw control character, and answers the next
good scrape within a second; it still runs at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from inproc import CONTROL
from kits.prom import free_port, stop

pytestmark = pytest.mark.timeout(60)

GOOD = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """One ``serve`` of the simulated pair for every case."""
    p = free_port()
    env = {**os.environ, "SGMON_RUNTIME_DIR": str(tmp_path_factory.mktemp("run"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "serve", "--simulate", "healthy", "--listen",
         f"127.0.0.1:{p}", "--duration", "10m"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    end = time.monotonic() + 30
    while time.monotonic() < end and not _scrape_ok(p):
        time.sleep(0.2)
    try:
        yield p
    finally:
        stop([proc])
        err = proc.stderr.read() if proc.stderr else ""
        assert "Traceback" not in err, err


def _exchange(port: int, chunks: list[bytes], pause: float = 0.0, wait: float = 8.0) -> bytes:
    """Send ``chunks`` (``pause`` s apart), then read until the server closes or ``wait``."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        try:
            for c in chunks:
                s.sendall(c)
                time.sleep(pause)
        except OSError:
            pass  # the server closed first: what it said is what counts
        got = b""
        end = time.monotonic() + wait
        try:
            while time.monotonic() < end:
                part = s.recv(65536)
                if not part:
                    break
                got += part
        except (TimeoutError, ConnectionResetError):
            pass
        return got


def _scrape_ok(port: int) -> bool:
    try:
        t0 = time.monotonic()
        got = _exchange(port, [GOOD], wait=1.0)
        return got.startswith(b"HTTP/1.") and b" 200 " in got[:20] and time.monotonic() - t0 < 1
    except OSError:
        return False


# case -> (what is sent, in chunks, the pause between them)
CASES: dict[str, tuple[list[bytes], float]] = {
    "delete": ([b"DELETE /metrics HTTP/1.1\r\n\r\n"], 0),
    "put-with-body": ([b"PUT /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"], 0),
    "post": ([b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"], 0),
    "connect": ([b"CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n"], 0),
    "trace": ([b"TRACE / HTTP/1.1\r\n\r\n"], 0),
    "options-star": ([b"OPTIONS * HTTP/1.1\r\n\r\n"], 0),
    "lowercase-get": ([b"get /metrics HTTP/1.1\r\n\r\n"], 0),
    "method-escape": ([b"G\x1b[2JET /metrics HTTP/1.1\r\n\r\n"], 0),
    "method-4k": ([b"X" * 4000 + b" / HTTP/1.1\r\n\r\n"], 0),
    "path-climbs": ([b"GET /../../../etc/passwd HTTP/1.1\r\n\r\n"], 0),
    "path-nul": ([b"GET /metrics\x00.txt HTTP/1.1\r\n\r\n"], 0),
    "path-escape": ([b"GET /\x1b]0;owned\x07 HTTP/1.1\r\n\r\n"], 0),
    "path-c1": ([b"GET /\xc2\x9b31m HTTP/1.1\r\n\r\n"], 0),
    "path-absolute-url": ([b"GET http://evil.example/metrics HTTP/1.1\r\n\r\n"], 0),
    "request-line-1mb": ([b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\n\r\n"], 0),
    "header-100kb": ([b"GET /metrics HTTP/1.1\r\nX-A: " + b"b" * 100_000 + b"\r\n\r\n"], 0),
    "headers-10000": ([b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 10_000 + b"\r\n"], 0),
    "header-no-colon": ([b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n"], 0),
    "header-escape": ([b"GET /metrics HTTP/1.1\r\nX-Evil: \x1b[2J\x07\r\n\r\n"], 0),
    "header-folded": ([b"GET /metrics HTTP/1.1\r\nX-A: a\r\n  folded\r\n\r\n"], 0),
    "cl-and-te": (
        [
            b"GET /metrics HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"0\r\n\r\nGET /x HTTP/1.1\r\n\r\n",  # smuggled behind the first
        ],
        0,
    ),
    "two-content-lengths": (
        [b"GET /metrics HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 9\r\n\r\n"],
        0,
    ),
    "content-length-negative": ([b"GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n\r\n"], 0),
    "content-length-huge": (
        [b"GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"],
        0,
    ),
    "bad-basic-auth": ([b"GET /metrics HTTP/1.1\r\nAuthorization: Basic !!!\r\n\r\n"], 0),
    "http-0.9": ([b"GET /metrics\r\n\r\n"], 0),
    "http-9.9": ([b"GET /metrics HTTP/9.9\r\n\r\n"], 0),
    "http2-preface": ([b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"], 0),
    "tls-hello": ([bytes.fromhex("160301002e0100002a0303") + os.urandom(32) + b"\r\n\r\n"], 0),
    "binary": ([os.urandom(4096) + b"\r\n\r\n"], 0),
    "lf-only": ([b"GET /metrics HTTP/1.1\nHost: x\n\n"], 0),
    "half-then-close": ([b"GET /metr"], 0),
    "trickle-whole": ([bytes([b]) for b in GOOD], 0.02),
    "trickle-past-deadline": ([b"G", b"E", b"T", b" ", b"/", b"m", b"e", b"t"], 0.9),
    "nothing": ([], 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_request_of_each_wrong_shape(port: int, case: str) -> None:
    chunks, pause = CASES[case]
    got = _exchange(port, chunks, pause)
    head = got.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    if got:
        assert head.startswith("HTTP/1."), head[:200]
        assert int(head.split()[1]) in (200, 400, 401, 404, 405, 431), head
        assert not (CONTROL - {"\r"}) & set(got.decode("latin-1")), got[:300]
    t0 = time.monotonic()
    assert _scrape_ok(port), "the next good scrape was not answered within a second"
    assert time.monotonic() - t0 < 1.5

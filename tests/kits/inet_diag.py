"""What the unit and the system tests of inet diag share."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

P1, P2, P3, P6 = 46130, 46131, 46132, 46133


ADDR = "127.46.1.1"


def _listener(port: int, family: int = socket.AF_INET, host: str = ADDR) -> socket.socket:
    s = socket.socket(family)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(8)
    return s


@pytest.fixture(scope="module")
def sockets() -> Iterator[dict[int, list[socket.socket]]]:
    """Two connections each on P1, P2 (the "DG ports") and P3 (unrelated), v4; one on a
    IPv6 listener on the v4-mapped address reached over IPv4 (v4-mapped on the server side)."""
    held: dict[int, list[socket.socket]] = {}
    for port in (P1, P2, P3):
        srv = _listener(port)
        held[port] = [srv]
        for _ in range(2):
            held[port].append(socket.create_connection((ADDR, port)))
            held[port].append(srv.accept()[0])
    srv6 = _listener(P6, socket.AF_INET6, f"::ffff:{ADDR}")
    held[P6] = [srv6, socket.create_connection((ADDR, P6)), srv6.accept()[0]]
    held[P1][1].sendall(b"x" * 50000)
    held[P1][2].recv(1 << 20)
    try:
        yield held
    finally:
        for group in held.values():
            for s in group:
                s.close()

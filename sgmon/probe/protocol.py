"""The probe's wire format: one JSON hello each way, then fixed binary headers.

Binary frames keep the per-message cost negligible next to the payload, so what the probe
measures is the link and the server's disk, not its own encoding.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from dataclasses import asdict, dataclass

MODES = ("async", "fastsync", "sync", "apply")
"""ASYNC, SYNC NOAFFIRM, SYNC AFFIRM, and Rdb's "commit" level (a second, dependent write)."""

MSG = struct.Struct("!BQI")
"""A data message: kind, sequence number, payload length (the payload follows)."""
ACK = struct.Struct("!BQff")
"""An acknowledgement: kind, sequence number, server write ms, server apply ms."""
STATS = struct.Struct("!BQQ")
"""The server's answer to FIN: kind, messages received, bytes received."""

DATA, FIN, ACK_KIND, STATS_KIND = 1, 2, 3, 4
MAX_HELLO = 4096


class ProtocolError(Exception):
    """The peer sent something that is not the probe protocol, or vanished."""


@dataclass(frozen=True, slots=True)
class Hello:
    """What the client asks for; the server answers with ``{"ok": bool, "error": str}``."""

    mode: str
    length: int
    sndbuf: int = 0
    rcvbuf: int = 0

    def encode(self) -> bytes:
        """One JSON line."""
        return json.dumps(asdict(self)).encode() + b"\n"


def read_line(sock: socket.socket) -> dict:
    """Read one JSON line (the hello or its answer) byte-bounded by MAX_HELLO."""
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ProtocolError("peer closed the connection during the handshake")
        buf += chunk
        if len(buf) > MAX_HELLO:
            raise ProtocolError("handshake too long: the peer is not an sgmon probe")
    try:
        return json.loads(buf)
    except ValueError as e:
        raise ProtocolError("the peer is not an sgmon probe") from e


def answer(error: str) -> bytes:
    """The server's reply to a hello: ok, or why not (one line the client prints)."""
    return json.dumps({"ok": not error, "error": error}).encode() + b"\n"


def recv_exact(
    sock: socket.socket,
    n: int,
    into: memoryview | None = None,
    stop: threading.Event | None = None,
) -> memoryview:
    """Read exactly n bytes; EOF before that means the peer vanished.

    A socket timeout only gives ``stop`` a chance to end the wait; bytes already read are kept.
    """
    view = into[:n] if into is not None else memoryview(bytearray(n))
    got = 0
    while got < n:
        try:
            k = sock.recv_into(view[got:], n - got)
        except TimeoutError:
            if stop is not None and stop.is_set():
                raise ProtocolError("stopping") from None
            continue
        if k == 0:
            raise ProtocolError("peer closed the connection")
        got += k
    return view

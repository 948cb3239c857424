"""The kernel's view of the probe's own socket: getsockopt(TCP_INFO), the figures ss -ti shows.

Only the fields the probe reports are decoded (layout of ``struct tcp_info`` in
include/uapi/linux/tcp.h; shorter structs from older kernels are zero-padded).
"""

from __future__ import annotations

import socket
import struct

_FIELDS = {  # name: (offset, struct format)
    "state": (0, "B"),
    "rto": (8, "I"),
    "mss": (16, "I"),
    "rtt": (68, "I"),
    "rttvar": (72, "I"),
    "cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "min_rtt": (148, "I"),
    "delivery_rate": (160, "Q"),
}
_US = ("rto", "rtt", "rttvar", "min_rtt")
SIZE = 168


def read(sock: socket.socket) -> dict[str, float] | None:
    """rto, rtt, rttvar, min_rtt (ms), cwnd, mss, total_retrans, delivery_rate (B/s).

    None once the socket is gone.
    """
    try:
        blob = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, SIZE)
    except OSError:
        return None
    blob = blob.ljust(SIZE, b"\0")
    out: dict[str, float] = {}
    for name, (offset, fmt) in _FIELDS.items():
        (v,) = struct.unpack_from("=" + fmt, blob, offset)
        out[name] = v / 1000.0 if name in _US else v
    return out

"""The kernel's view of the probe's own socket: getsockopt(TCP_INFO), the figures ss -ti shows.

Decoded by the tcp collector's own ``decode_tcp_info``, so the probe and the monitor read the
same struct the same way.
"""

from __future__ import annotations

import socket

from sgmon.readers.inet_diag import TCP_INFO_LEN, decode_tcp_info


def read(sock: socket.socket) -> dict[str, float] | None:
    """rto, rtt, rttvar (ms), cwnd (segments) and total_retrans of a socket.

    None once the socket is gone.
    """
    try:
        t = decode_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))
    except OSError:
        return None
    return {
        "rto": t.rto / 1000.0,
        "rtt": t.rtt / 1000.0,
        "rttvar": t.rttvar / 1000.0,
        "cwnd": t.snd_cwnd,
        "total_retrans": t.total_retrans,
    }

"""The kernel's per-socket TCP figures, decoded: ``struct tcp_info`` (what ``ss -i`` prints,
from inet_diag's INET_DIAG_INFO or ``getsockopt(TCP_INFO)``), the socket memory of
INET_DIAG_SKMEMINFO (``ss -m``), and the TCP state names.

Layouts are from include/uapi/linux/tcp.h and sock_diag.h.  A kernel older than the ``struct
tcp_info`` decoded here sends a shorter blob; the fields it lacks read as 0.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from sgmon.readers.netlink import lean_struct

TCP_STATES = (
    "",
    "ESTAB",
    "SYN-SENT",
    "SYN-RECV",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "TIME-WAIT",
    "UNCONN",
    "CLOSE-WAIT",
    "LAST-ACK",
    "LISTEN",
    "CLOSING",
    "NEW-SYN-RECV",
)
"""ss's names, indexed by the kernel's TCP state number."""


class TcpInfo(NamedTuple):
    """The struct tcp_info fields sgmon shows; times in us, counts in segments, rates in B/s."""

    state: int
    ca_state: int
    retransmits: int  # consecutive RTO retransmits in progress
    backoff: int
    rto: int
    ato: int
    snd_mss: int
    unacked: int
    sacked: int
    lost: int
    retrans: int  # retransmitted segments in flight now
    last_data_sent: int  # ms ago
    last_data_recv: int  # ms ago
    last_ack_recv: int  # ms ago
    pmtu: int
    rtt: int
    rttvar: int
    snd_ssthresh: int
    snd_cwnd: int
    total_retrans: int
    pacing_rate: int
    bytes_acked: int
    bytes_received: int
    notsent_bytes: int
    min_rtt: int
    delivery_rate: int
    bytes_sent: int
    bytes_retrans: int
    total_rto: int  # RTO expiries over the socket's life (kernel >= 6.7, else 0)
    total_rto_recoveries: int
    total_rto_time: int  # ms spent in RTO recovery


TCPI_LAYOUT = (
    (0, "B"),
    (1, "B"),
    (2, "B"),
    (4, "B"),
    (8, "I"),
    (12, "I"),
    (16, "I"),
    (24, "I"),
    (28, "I"),
    (32, "I"),
    (36, "I"),
    (44, "I"),
    (52, "I"),
    (56, "I"),
    (60, "I"),
    (68, "I"),
    (72, "I"),
    (76, "I"),
    (80, "I"),
    (100, "I"),
    (104, "Q"),
    (120, "Q"),
    (128, "Q"),
    (144, "I"),
    (148, "I"),
    (160, "Q"),
    (200, "Q"),
    (208, "Q"),
    (240, "H"),
    (242, "H"),
    (244, "I"),
)
"""(offset, format) of each TcpInfo field in struct tcp_info, in the same order."""
TCPI = lean_struct(TCPI_LAYOUT)
"""One unpack of every TcpInfo field from a whole struct tcp_info."""
TCP_INFO_LEN = TCPI.size
"""Bytes to ask ``getsockopt(IPPROTO_TCP, TCP_INFO, ...)`` for."""
_ZEROS = bytes(TCP_INFO_LEN)


def decode_tcp_info(blob: bytes | memoryview) -> TcpInfo:
    """Decode a struct tcp_info from inet_diag or ``getsockopt(IPPROTO_TCP, TCP_INFO, 248)``."""
    if len(blob) < TCP_INFO_LEN:
        blob = bytes(blob) + _ZEROS[len(blob) :]
    return TcpInfo._make(TCPI.unpack_from(blob))


class SkMem(NamedTuple):
    """INET_DIAG_SKMEMINFO (ss -m skmem:(r,rb,t,tb,f,w,o,bl,d)), bytes except drops."""

    rmem_alloc: int
    rcvbuf: int
    wmem_alloc: int
    sndbuf: int
    fwd_alloc: int
    wmem_queued: int
    optmem: int
    backlog: int
    drops: int


SKMEM = struct.Struct("=9I")
"""The SkMem fields, as INET_DIAG_SKMEMINFO lays them out."""

"""`tcp`: the Data Guard TCP sockets as ss -tinmp shows them, and host-wide TCP loss counters.

Instances: one per socket, ``LADDR:LPORT>PADDR:PPORT``; plus ``host`` for the host-wide counters
of /proc/net/snmp and /proc/net/netstat.  Sockets are selected in the kernel by an inet_diag
bytecode filter on the Data Guard ports (local or remote) so unrelated client connections on the
listener port never reach Python.
"""

from __future__ import annotations

from sgmon.collector import Collector
from sgmon.model import Field, Kind

G, R, D, T = Kind.GAUGE, Kind.RATE, Kind.DELTA, Kind.TEXT

FIELDS = (
    Field("state", "", T, "TCP state (ESTAB, ...)"),
    Field("local", "", T, "local address:port"),
    Field("peer", "", T, "peer address:port"),
    Field("rto", "ms", G, "retransmission timeout (ss rto)", warn=200),
    Field("rtt", "ms", G, "smoothed round-trip time (ss rtt)", warn=5, crit=20),
    Field("rttvar", "ms", G, "round-trip time variation (ss rtt .../var)"),
    Field("cwnd", "segs", G, "congestion window (ss cwnd)"),
    Field("ssthresh", "segs", G, "slow-start threshold (ss ssthresh)"),
    Field("unacked", "segs", G, "segments sent, not yet acknowledged (ss unacked)"),
    Field("lost", "segs", G, "segments considered lost (ss lost)"),
    Field("retrans", "segs", G, "retransmitted segments in flight now (ss retrans a/.)"),
    Field(
        "retransmits", "count", D, "segments retransmitted in the interval (ss retrans ./b)", warn=1
    ),
    Field("bytes_acked", "B/s", R, "bytes acknowledged per second (ss bytes_acked)"),
    Field("bytes_received", "B/s", R, "bytes received per second (ss bytes_received)"),
    Field("send_q", "B", G, "bytes not yet acknowledged by the peer (ss Send-Q)"),
    Field("recv_q", "B", G, "bytes not yet read by the process (ss Recv-Q)"),
    Field("sndbuf", "B", G, "socket send buffer limit (ss skmem tb)"),
    Field("rcvbuf", "B", G, "socket receive buffer limit (ss skmem rb)"),
    Field("delivery_rate", "B/s", G, "recent delivery rate (ss delivery_rate / 8)"),
    Field("pid", "", G, "owning process id, where visible (ss -p)"),
    Field("process", "", T, "owning process name, where visible (ss -p)"),
    Field("rto_min", "ms", G, "rto_min on the route toward the peer, if set (ip route)"),
    Field("retrans_segs", "/s", R, "host-wide segments retransmitted per second (RetransSegs)"),
    Field("timeouts", "/s", R, "host-wide RTO expiries per second (TCPTimeouts)", warn=1),
    Field("lost_retransmit", "/s", R, "host-wide retransmits lost again (TCPLostRetransmit)"),
)


class TcpCollector(Collector):
    """ss -tinmp figures for the Data Guard sockets, from inet_diag netlink."""

    name = "tcp"
    description = "Data Guard TCP sockets: rto, rtt, retransmits, buffers (ss -tinmp)"
    fields = FIELDS

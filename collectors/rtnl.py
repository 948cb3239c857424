"""A small stdlib-only rtnetlink (NETLINK_ROUTE) client: the link dump of ``ip -s link`` and the
route lookup of ``ip route get``, for the netdev and tcp collectors.

Why not pyroute2: its 0.9 API turns an asyncio loop and builds an object per attribute.  Measured
here: a link dump cost 2.3-2.8 ms CPU with pyroute2 against 0.2 ms walking the same dump's
attributes and unpacking only the ones shown; a route lookup cost 0.4 ms warm and about 2 ms at
1 Hz (cold caches), against tens of microseconds as one request and one reply.

Layouts are from include/uapi/linux/rtnetlink.h and if_link.h.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

from collectors import netlink as nl

_RTM_NEWLINK, _RTM_GETLINK, _RTM_NEWROUTE, _RTM_GETROUTE = 16, 18, 24, 26
_RTA_DST, _RTA_METRICS = 1, 8
RTAX_RTO_MIN = 13
"""The route metric ``ip route ... rto_min`` sets, in ms."""
_IFLA_IFNAME, _IFLA_OPERSTATE, _IFLA_STATS64, _IFLA_CARRIER_CHANGES = 3, 16, 23, 35
_OPERSTATES = ("unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up")
_IFINFO = struct.Struct("=BxHiII")
_RTMSG = struct.Struct("=BBBBBBBBI")
# struct rtnl_link_stats64: the first 16 u64 counters, in kernel order
_STATS64 = struct.Struct("=16Q")
(
    RX_PACKETS,
    TX_PACKETS,
    RX_BYTES,
    TX_BYTES,
    RX_ERRORS,
    TX_ERRORS,
    RX_DROPPED,
    TX_DROPPED,
    MULTICAST,
    COLLISIONS,
    RX_LENGTH,
    RX_OVER,
    RX_CRC,
    RX_FRAME,
    RX_FIFO,
    RX_MISSED,
) = range(16)
_TX_FIFO_OFFSET = 18 * 8  # tx_fifo_errors is the 19th counter
TX_FIFO = 16  # index appended after the first 16


class Link:
    """One interface of an RTM_GETLINK dump."""

    __slots__ = ("carrier_changes", "index", "name", "operstate", "stats")

    def __init__(self, index: int) -> None:
        self.index = index
        self.name = ""
        self.operstate: str | None = None
        self.carrier_changes: int | None = None
        self.stats: tuple[int, ...] | None = None


class Rtnl:
    """A NETLINK_ROUTE socket: link dumps and route lookups; use from one thread at a time."""

    def __init__(self) -> None:
        self._nl = nl.NetlinkSocket(socket.NETLINK_ROUTE)
        body = _IFINFO.pack(socket.AF_UNSPEC, 0, 0, 0, 0)
        flags = nl.NLM_F_REQUEST | nl.NLM_F_DUMP
        self._req = nl.NLH.pack(nl.NLH.size + len(body), _RTM_GETLINK, flags, 1, 0) + body
        self._seq = 1

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self._nl.close()

    def links(self) -> Iterator[Link]:
        """Every interface of this network namespace."""
        self._nl.send(self._req)
        for mtype, _seq, start, end in self._nl.messages():
            if mtype == nl.NLMSG_DONE:
                return
            if mtype == nl.NLMSG_ERROR and (err := self._nl.error(start, "RTM_GETLINK")):
                raise err
            if mtype == _RTM_NEWLINK:
                yield _link(self._nl.buf, start, end)

    def route_metric(self, dst: str, metric: int) -> int | None:
        """A metric of the route the kernel picks toward address ``dst`` (``ip route get``), or
        None when the route does not set it; OSError when there is no route."""
        fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
        addr = socket.inet_pton(fam, dst)
        self._seq += 1
        body = _RTMSG.pack(fam, 8 * len(addr), 0, 0, 0, 0, 0, 0, 0)
        body += nl.RTA.pack(nl.RTA.size + len(addr), _RTA_DST) + addr
        self._nl.send(
            nl.NLH.pack(nl.NLH.size + len(body), _RTM_GETROUTE, nl.NLM_F_REQUEST, self._seq, 0)
            + body
        )
        for mtype, seq, start, end in self._nl.messages():
            if seq != self._seq:
                continue  # a late reply to an earlier request
            if mtype == nl.NLMSG_ERROR:
                raise self._nl.error(start, f"RTM_GETROUTE {dst}") or OSError(f"no route to {dst}")
            if mtype == _RTM_NEWROUTE:
                return _route_metric(self._nl.buf, start + _RTMSG.size, end, metric)


def _link(buf: bytearray, start: int, end: int) -> Link:
    link = Link(_IFINFO.unpack_from(buf, start)[2])
    for atype, data, stop in nl.attributes(buf, start + _IFINFO.size, end):
        if atype == _IFLA_IFNAME:
            link.name = bytes(buf[data:stop]).split(b"\0", 1)[0].decode()
        elif atype == _IFLA_OPERSTATE:
            state = buf[data]
            link.operstate = _OPERSTATES[state] if state < len(_OPERSTATES) else str(state)
        elif atype == _IFLA_CARRIER_CHANGES:
            link.carrier_changes = struct.unpack_from("=I", buf, data)[0]
        elif atype == _IFLA_STATS64 and stop - data >= _TX_FIFO_OFFSET + 8:
            tx_fifo = struct.unpack_from("=Q", buf, data + _TX_FIFO_OFFSET)[0]
            link.stats = (*_STATS64.unpack_from(buf, data), tx_fifo)
    return link


def _route_metric(buf: bytearray, pos: int, end: int, metric: int) -> int | None:
    for atype, start, stop in nl.attributes(buf, pos, end):
        if atype == _RTA_METRICS:
            for mtype, mstart, mstop in nl.attributes(buf, start, stop):
                if mtype == metric and mstop - mstart >= 4:
                    return struct.unpack_from("=I", buf, mstart)[0]
    return None

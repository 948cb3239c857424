"""The netlink plumbing shared by the sock_diag client (inet_diag.py) and the rtnetlink client
(rtnl.py): a bound socket with one receive buffer, the walk over the messages of each datagram,
the walk over a message's attributes, and the one-unpack readers of messages whose layout is
known.  Stdlib only.

Layouts from include/uapi/linux/netlink.h (nlmsghdr, nlmsgerr) and rtnetlink.h (rtattr).
"""

from __future__ import annotations

import operator
import os
import socket
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

NLH = struct.Struct("=IHHII")
"""struct nlmsghdr: length, type, flags, sequence, port id."""
RTA = struct.Struct("=HH")
"""struct rtattr (nlattr has the same layout): length, type."""
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
_ERRNO = struct.Struct("=i")
_HEAD = struct.Struct("=IH2xI4x")  # the nlmsghdr fields messages() needs: length, type, sequence


class NetlinkSocket:
    """A bound netlink socket of one protocol; use from one thread at a time."""

    def __init__(self, protocol: int) -> None:
        self._sock = socket.socket(
            socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, protocol
        )
        self._sock.bind((0, 0))
        self.buf = bytearray(65536)
        """Where the messages ``messages()`` yields are: valid until the next one is asked for."""

    def send(self, data: bytes) -> None:
        """Send one or more requests."""
        self._sock.send(data)

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self._sock.close()

    def messages(self) -> Iterator[tuple[int, int, int, int]]:
        """(type, sequence, payload start, message end) in ``buf`` of every message received,
        datagram after datagram, for as long as the caller asks (it stops at its last reply).
        A malformed header raises OSError rather than waiting for a message that never comes."""
        buf, size, head, recv = self.buf, NLH.size, _HEAD.unpack_from, self._sock.recv_into
        while True:
            n = recv(buf)
            off = 0
            while off + size <= n:
                mlen, mtype, seq = head(buf, off)
                if mlen < size:
                    raise OSError(f"netlink: malformed message header (length {mlen})")
                yield mtype, seq, off + size, off + mlen
                off += (mlen + 3) & ~3

    def error(self, start: int, what: str) -> OSError | None:
        """The error an NLMSG_ERROR payload at ``start`` reports, or None for an acknowledgement."""
        err = -_ERRNO.unpack_from(self.buf, start)[0]
        return OSError(err, f"{what}: {os.strerror(err)}") if err else None


def attributes(buf: bytearray | memoryview, pos: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(type, data start, data end) of each attribute in buf[pos:end]."""
    while pos + 4 <= end:
        alen, atype = RTA.unpack_from(buf, pos)
        if alen < 4:
            return
        yield atype, pos + 4, pos + alen
        pos += (alen + 3) & ~3


def lean_struct(layout: Sequence[tuple[int, str]]) -> struct.Struct:
    """One unpacker of the (offset, format code) fields, in increasing offset order, that skips
    every byte between them (pad bytes cost nothing to decode)."""
    fmt, pos = "=", 0
    for off, code in layout:
        fmt += f"{off - pos}x" if off > pos else ""
        fmt += code
        pos = off + struct.calcsize("=" + code)
    return struct.Struct(fmt)


Layout = tuple[struct.Struct, Callable[[tuple[Any, ...]], tuple[Any, ...]]]
"""An unpacker and the getter that puts what it read in the caller's order:
``getter(unpacker.unpack_from(buf, start))``."""


def layout(fields: Sequence[tuple[int, str]]) -> Layout:
    """Read these (offset, format code) fields, given in any order and at least two, with one
    unpack: where a message's attributes lie, learned from one message, read every later
    message of the same shape without walking its attributes."""
    order = sorted(fields)
    return lean_struct(order), operator.itemgetter(*(order.index(f) for f in fields))

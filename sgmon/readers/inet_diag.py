"""A small stdlib-only inet_diag (sock_diag) netlink client for the Data Guard sockets.

Why raw netlink and a lean decode instead of pyroute2's DiagSocket (measured on this 6.18
kernel, shared/reference/linux-and-libraries.md section 1.2, and again in bench/tcp_cost.py):

* pyroute2 decodes a socket's tcp_info at ~130 us (an asyncio loop turn and NLA objects per
  message); one precompiled ``struct.Struct`` over only the fields we show costs ~6 us.
* pyroute2 cannot send an INET_DIAG_REQ_BYTECODE filter: one request matches one exact local
  *or* remote port.  With the bytecode program ``ss`` emits (S_EQ/D_EQ per port, OR-chained,
  optionally AND-ed with peer address conditions) the kernel walks its socket tables (~0.12 us
  per socket) and only the matching sockets are copied to user space, so thousands of unrelated
  client connections never reach Python.

Layouts are from include/uapi/linux/inet_diag.h and sock_diag.h; the tcp_info decoding is
tcp_info.py's, the bytecode filter diag_filter.py's.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from sgmon.readers.diag_filter import bytecode
from sgmon.readers.netlink import (
    NLH,
    NLM_F_DUMP,
    NLM_F_REQUEST,
    NLMSG_DONE,
    NLMSG_ERROR,
    RTA,
    Layout,
    NetlinkSocket,
    attributes,
    layout,
)
from sgmon.readers.tcp_info import (
    SKMEM,
    TCP_INFO_LEN,
    TCPI,
    TCPI_LAYOUT,
    SkMem,
    TcpInfo,
    decode_tcp_info,
)

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
TCPDIAG_GETSOCK = 18
"""inet_diag's first request type: a dump of both address families in ONE walk of the kernel's
TCP socket hash (SOCK_DIAG_BY_FAMILY walks it once per family); its replies carry this type."""

# Request attribute and reply attribute types (inet_diag.h).
INET_DIAG_REQ_BYTECODE = 1
INET_DIAG_INFO = 2
INET_DIAG_SKMEMINFO = 7
EXT_INFO = 1 << (INET_DIAG_INFO - 1)
EXT_SKMEMINFO = 1 << (INET_DIAG_SKMEMINFO - 1)

FAMILIES = (socket.AF_INET, socket.AF_INET6)
CONNECTED = sum(1 << s for s in (1, 2, 4, 5, 8, 9, 11))
"""ss's default state set: everything but LISTEN, CLOSE, TIME-WAIT and SYN-RECV."""

_REQ = struct.Struct("=BBBBI48x")  # inet_diag_req_v2 with an all-zero sockid
_REQ_ANY = struct.Struct("=BBBB48xII")  # inet_diag_req: family, lengths, ext, sockid, states
_REQ_ONE = struct.Struct("=BBBBI48s")  # inet_diag_req_v2 naming one socket
_PORTS = struct.Struct("!HH")  # idiag_sport, idiag_dport (network order)
# struct inet_diag_msg: family, state, (timer, retrans), sockid, expires, rqueue, wqueue, uid, inode
_MSG = struct.Struct("=BB2x48sIIIII")
_LOOKUP_BATCH = 64  # requests per send: their replies fit the default socket receive buffer


_SHOWN = (
    "rto", "rtt", "rttvar", "snd_cwnd", "snd_ssthresh", "unacked", "lost", "retrans",
    "total_retrans", "bytes_acked", "bytes_received", "delivery_rate",
)  # fmt: skip
"""The tcp_info fields the tcp collector shows."""
FIGURES = (
    "info_type", "skmem_type", "state", "rqueue", "wqueue", "inode", *_SHOWN, "rcvbuf", "sndbuf",
)  # fmt: skip
"""What ``lookup`` returns per socket, in this order: a plain tuple, the fields tcp shows (units
as in TcpInfo and SkMem; None without tcp_info), after the two attribute types the fast path
checks on every reply."""
Figures = tuple[Any, ...]
"""A socket's FIGURES."""
_HEAD_AT = ((1, "B"), (56, "I"), (60, "I"), (68, "I"))  # state, rqueue, wqueue, inode
_INFO_AT = tuple(dict(zip(TcpInfo._fields, TCPI_LAYOUT, strict=True))[name] for name in _SHOWN)
_SKMEM_AT = ((4, "I"), (12, "I"))  # rcvbuf, sndbuf
_INFO_NEEDED = max(off + struct.calcsize(code) for off, code in _INFO_AT)
"""tcp_info bytes the figures need (up to delivery_rate, Linux 4.9); a shorter blob is walked."""


class DiagSock(NamedTuple):
    """One socket of a dump; addresses as text (IPv4-mapped IPv6 shown as IPv4)."""

    family: int
    state: int
    src: str
    sport: int
    dst: str
    dport: int
    rqueue: int
    wqueue: int
    uid: int
    inode: int
    info: TcpInfo | None
    skmem: SkMem | None
    sockid: bytes  # raw inet_diag_sockid (ports, addresses, ifindex, cookie) for lookup()


def figures(s: DiagSock) -> Figures:
    """A dumped socket's FIGURES, as ``lookup`` returns them."""
    ti, mem = s.info, s.skmem
    shown = tuple(getattr(ti, n) for n in _SHOWN) if ti else (None,) * len(_SHOWN)
    rcvbuf, sndbuf = (mem.rcvbuf, mem.sndbuf) if mem else (None, None)
    return (
        INET_DIAG_INFO,
        INET_DIAG_SKMEMINFO,
        s.state,
        s.rqueue,
        s.wqueue,
        s.inode,
        *shown,
        rcvbuf,
        sndbuf,
    )


@lru_cache(maxsize=16)
def _request(
    family: int,
    states: int,
    ext: int,
    ports: tuple[int, ...],
    peers: tuple[str, ...],
    direction: str,
) -> bytes:
    """One dump request, built once per distinct query: SOCK_DIAG_BY_FAMILY for one family,
    or, for AF_UNSPEC, the older TCPDIAG_GETSOCK, which takes both families in one walk of the
    kernel's socket hash (the walk of its empty buckets is most of a dump's cost, whatever the
    filter: bench/README.md, "what a filtered dump costs")."""
    prog = bytecode(ports, peers, direction)
    attr = RTA.pack(RTA.size + len(prog), INET_DIAG_REQ_BYTECODE) + prog
    if family == socket.AF_UNSPEC:
        mtype, body = TCPDIAG_GETSOCK, _REQ_ANY.pack(family, 0, 0, ext, states, 0)
    else:
        mtype, body = SOCK_DIAG_BY_FAMILY, _REQ.pack(family, socket.IPPROTO_TCP, ext, 0, states)
    hdr = NLH.pack(NLH.size + len(body) + len(attr), mtype, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    return hdr + body + attr


@lru_cache(maxsize=4096)
def _addr(family: int, raw: bytes) -> str:
    """Text form of a raw address, remembered (a dump finds the same few peers again)."""
    if family == socket.AF_INET:
        return socket.inet_ntop(socket.AF_INET, raw[:4])
    if raw[:12] == b"\0" * 10 + b"\xff\xff":
        return socket.inet_ntop(socket.AF_INET, raw[12:16])
    return socket.inet_ntop(socket.AF_INET6, raw)


class InetDiag:
    """A sock_diag netlink socket; use from one thread at a time."""

    def __init__(self) -> None:
        self._nl = NetlinkSocket(NETLINK_SOCK_DIAG)
        self._requests: tuple[tuple[bytes, ...], list[bytes]] | None = None
        self._layouts: dict[int, Layout] = {}
        """Reply length -> the unpacker of the figures in such a reply, and the getter that puts
        them in FIGURES order (see ``_learn``)."""

    def close(self) -> None:
        """Close the netlink socket (idempotent)."""
        self._nl.close()

    def __enter__(self) -> InetDiag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(
        self,
        ports: Iterable[int],
        peers: Iterable[str] = (),
        states: int = CONNECTED,
        families: Iterable[int] = FAMILIES,
        ext: int = EXT_INFO | EXT_SKMEMINFO,
        direction: str = "both",
    ) -> list[DiagSock]:
        """TCP sockets whose local or remote port (or, by ``direction``, only one of them) is in
        ``ports`` (and, if given, whose peer address is in ``peers``), filtered in the kernel,
        in the given states and families."""
        key_ports, key_peers = tuple(ports), tuple(peers)
        out: list[DiagSock] = []
        wanted = tuple(families)
        for fam in (socket.AF_UNSPEC,) if set(wanted) == set(FAMILIES) else wanted:
            self._nl.send(_request(fam, states, ext, key_ports, key_peers, direction))
            self._read_dump(out)
        return out

    def lookup(self, socks: Sequence[DiagSock]) -> list[Figures | None]:
        """Fresh FIGURES of sockets found by an earlier ``query``, by exact lookup in the
        kernel's hash (no walk of the socket tables); None for one that is gone (the cookie
        makes sure a new socket reusing the same addresses and ports is not taken for it).
        Tuples, not DiagSocks: a monitor re-reads the same sockets every tick, and one unpack
        into a tuple is what such a read costs least."""
        out: list[Figures | None] = [None] * len(socks)
        for i, request in enumerate(self._lookups(socks)):
            self._nl.send(request)
            self._read_replies(out, min(_LOOKUP_BATCH, len(socks) - i * _LOOKUP_BATCH))
        return out

    def _lookups(self, socks: Sequence[DiagSock]) -> list[bytes]:
        """The lookup requests for these sockets, in batches; built again only when the set
        changes (the same sockets are looked up tick after tick)."""
        ids = tuple(s.sockid for s in socks)
        ext = EXT_INFO | EXT_SKMEMINFO
        if self._requests is None or self._requests[0] != ids:
            batches = []
            for first in range(0, len(socks), _LOOKUP_BATCH):
                msgs = []
                for seq, s in enumerate(socks[first : first + _LOOKUP_BATCH], first + 1):
                    body = _REQ_ONE.pack(s.family, socket.IPPROTO_TCP, ext, 0, 0, s.sockid)
                    head = NLH.pack(NLH.size + len(body), SOCK_DIAG_BY_FAMILY, 1, seq, 0)
                    msgs.append(head + body)
                batches.append(b"".join(msgs))
            self._requests = (ids, batches)
        return self._requests[1]

    def _read_replies(self, out: list[Figures | None], expected: int) -> None:
        """One reply per request: a socket's figures (stored at seq - 1) or an error (gone)."""
        view, got, layouts = memoryview(self._nl.buf), 0, self._layouts
        for mtype, seq, start, end in self._nl.messages():
            if mtype == SOCK_DIAG_BY_FAMILY:
                at = layouts.get(end - start)
                fig = at[1](at[0].unpack_from(view, start)) if at is not None else None
                if fig is None or fig[0] != INET_DIAG_INFO or fig[1] != INET_DIAG_SKMEMINFO:
                    fig = self._learn(view, start, end)
                out[seq - 1] = fig
            got += mtype in (SOCK_DIAG_BY_FAMILY, NLMSG_ERROR)
            if got >= expected:
                return

    def _learn(self, view: memoryview, start: int, end: int) -> Figures:
        """A reply of a length not seen yet (or laid out otherwise): walk its attributes and
        learn where the figures are, so later replies of that length are read with one unpack
        (a kernel lays out every reply to the same request alike)."""
        attrs = _attributes(view, start + _MSG.size, end)
        info, skmem = attrs.get(INET_DIAG_INFO), attrs.get(INET_DIAG_SKMEMINFO)
        if info is None or skmem is None or info[1] < _INFO_NEEDED or skmem[1] < SKMEM.size:
            return figures(_parse(view, start, end, attrs))
        i, m = info[0] - start, skmem[0] - start
        wanted = [
            (i - 2, "H"),  # the attribute types, checked on every reply
            (m - 2, "H"),
            *_HEAD_AT,
            *((i + off, code) for off, code in _INFO_AT),
            *((m + off, code) for off, code in _SKMEM_AT),
        ]
        unpacker, getter = self._layouts[end - start] = layout(wanted)
        return getter(unpacker.unpack_from(view, start))

    def _read_dump(self, out: list[DiagSock]) -> None:
        view = memoryview(self._nl.buf)
        for mtype, _seq, start, end in self._nl.messages():
            if mtype == NLMSG_DONE:
                return
            if mtype == NLMSG_ERROR:
                if err := self._nl.error(start, "inet_diag"):
                    raise err
                return
            if mtype in (SOCK_DIAG_BY_FAMILY, TCPDIAG_GETSOCK):
                out.append(_parse(view, start, end))


def _attributes(view: memoryview, pos: int, end: int) -> dict[int, tuple[int, int]]:
    """Type -> (data offset, data length) of each attribute in view[pos:end]."""
    return {atype: (start, stop - start) for atype, start, stop in attributes(view, pos, end)}


def _parse(
    view: memoryview, start: int, end: int, attrs: dict[int, tuple[int, int]] | None = None
) -> DiagSock:
    """One SOCK_DIAG_BY_FAMILY message (``attrs``: its attributes, if already located)."""
    family, state, sockid, _exp, rq, wq, uid, inode = _MSG.unpack_from(view, start)
    if attrs is None:
        attrs = _attributes(view, start + _MSG.size, end)
    info = skmem = None
    if (at := attrs.get(INET_DIAG_INFO)) is not None:
        pos, size = at
        if size >= TCP_INFO_LEN:
            info = TcpInfo._make(TCPI.unpack_from(view, pos))
        else:
            info = decode_tcp_info(view[pos : pos + size])
    if (at := attrs.get(INET_DIAG_SKMEMINFO)) is not None and at[1] >= SKMEM.size:
        skmem = SkMem._make(SKMEM.unpack_from(view, at[0]))
    sport, dport = _PORTS.unpack_from(sockid)
    return DiagSock(
        family,
        state,
        _addr(family, sockid[4:20]),
        sport,
        _addr(family, sockid[20:36]),
        dport,
        rq,
        wq,
        uid,
        inode,
        info,
        skmem,
        sockid,
    )


SOCK_DIAG_DUMP = "sock_diag"
"""Under a collector's ``root``: the replies of another host's kernel to ``dump_request``s, as
a remote pump ships them (sgmon/remote/mirror.py)."""


def dump_request(
    family: int, ports: Sequence[int], peers: Sequence[str] = (), direction: str = "both"
) -> bytes:
    """The dump request for the sockets on ``ports`` (the end ``direction`` names) [to
    ``peers``], in the connected states, with tcp_info and the buffer sizes: what ``query``
    sends (a remote pump sends the same for both families at once: Selection.requests)."""
    return _request(
        family, CONNECTED, EXT_INFO | EXT_SKMEMINFO, tuple(ports), tuple(peers), direction
    )


class Selection(NamedTuple):
    """Which sockets are the Data Guard ones, and how often a dump looks for new ones: the
    tcp collector's, which a remote pump is given to find them on its host."""

    ports: tuple[int, ...]
    peers: tuple[str, ...]
    direction: str
    """Whose port is tested (DIRECTIONS)."""
    rediscover: float
    """Seconds between dumps while the known sockets stay (0: a dump every tick)."""

    def requests(self) -> list[bytes]:
        """The pump's dump request: both address families in one walk (TCPDIAG_GETSOCK)."""
        return [dump_request(socket.AF_UNSPEC, self.ports, self.peers, self.direction)]


def parse_dump(data: bytes) -> list[DiagSock]:
    """The sockets in a stream of sock_diag replies (several dumps back to back)."""
    view, out, pos = memoryview(data), [], 0
    while pos + NLH.size <= len(data):
        length, mtype, _flags, _seq, _pid = NLH.unpack_from(data, pos)
        if length < NLH.size or pos + length > len(data):
            break  # a truncated message: what came before it stands
        if mtype in (SOCK_DIAG_BY_FAMILY, TCPDIAG_GETSOCK):
            out.append(_parse(view, pos + NLH.size, pos + length))
        pos += (length + 3) & ~3
    return out


class DumpedDiag:
    """``InetDiag``'s ``query`` and ``lookup`` over a file of shipped replies (see
    SOCK_DIAG_DUMP): each reads the file as it is now and filters the direction here, as the
    request asked for either end."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _read(self) -> list[DiagSock]:
        try:
            with open(self.path, "rb") as fh:
                return parse_dump(fh.read())
        except OSError:
            return []

    def query(
        self, ports: Iterable[int], peers: Iterable[str] = (), direction: str = "both"
    ) -> list[DiagSock]:
        """The shipped sockets whose end named by ``direction`` is on one of ``ports``
        (the peers were filtered by the remote kernel)."""
        wanted = set(ports)
        return [
            s
            for s in self._read()
            if (direction != "out" and s.sport in wanted)
            or (direction != "in" and s.dport in wanted)
        ]

    def lookup(self, socks: Sequence[DiagSock]) -> list[Figures | None]:
        """The FIGURES of the sockets still in the file, None for one that is gone."""
        now = {s.sockid: s for s in self._read()}
        return [figures(now[s.sockid]) if s.sockid in now else None for s in socks]

    def close(self) -> None:
        """Nothing to release (``InetDiag``'s surface)."""

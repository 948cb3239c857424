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

Layouts are from include/uapi/linux/inet_diag.h, sock_diag.h and tcp.h.  A kernel older than the
``struct tcp_info`` we decode sends a shorter blob; the fields it lacks read as 0.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

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
    lean_struct,
)

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20

# Request attribute and reply attribute types (inet_diag.h).
INET_DIAG_REQ_BYTECODE = 1
INET_DIAG_INFO = 2
INET_DIAG_SKMEMINFO = 7
EXT_INFO = 1 << (INET_DIAG_INFO - 1)
EXT_SKMEMINFO = 1 << (INET_DIAG_SKMEMINFO - 1)

# Bytecode ops (enum inet_diag_bc_op).
_BC_JMP, _BC_S_COND, _BC_D_COND, _BC_S_EQ, _BC_D_EQ = 1, 7, 8, 11, 12

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

CONNECTED = sum(1 << s for s in (1, 2, 4, 5, 8, 9, 11))
"""ss's default state set: everything but LISTEN, CLOSE, TIME-WAIT and SYN-RECV."""

_REQ = struct.Struct("=BBBBI48x")  # inet_diag_req_v2 with an all-zero sockid
_REQ_ONE = struct.Struct("=BBBBI48s")  # inet_diag_req_v2 naming one socket
_OP = struct.Struct("=BBH")  # inet_diag_bc_op
_PORTS = struct.Struct("!HH")  # idiag_sport, idiag_dport (network order)
# struct inet_diag_msg: family, state, (timer, retrans), sockid, expires, rqueue, wqueue, uid, inode
_MSG = struct.Struct("=BB2x48sIIIII")
_LOOKUP_BATCH = 64  # requests per send: their replies fit the default socket receive buffer


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


# (offset, format) of each TcpInfo field in struct tcp_info, in the same order.
_TCPI_LAYOUT = (
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


_TCPI = lean_struct(_TCPI_LAYOUT)
TCP_INFO_LEN = _TCPI.size
"""Bytes to ask ``getsockopt(IPPROTO_TCP, TCP_INFO, ...)`` for."""
_ZEROS = bytes(TCP_INFO_LEN)


def decode_tcp_info(blob: bytes | memoryview) -> TcpInfo:
    """Decode a struct tcp_info from inet_diag or ``getsockopt(IPPROTO_TCP, TCP_INFO, 248)``."""
    if len(blob) < TCP_INFO_LEN:
        blob = bytes(blob) + _ZEROS[len(blob) :]
    return TcpInfo._make(_TCPI.unpack_from(blob))


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


_SKMEM = struct.Struct("=9I")

_SHOWN = (
    "rto",
    "rtt",
    "rttvar",
    "snd_cwnd",
    "snd_ssthresh",
    "unacked",
    "lost",
    "retrans",
    "total_retrans",
    "bytes_acked",
    "bytes_received",
    "delivery_rate",
)
"""The tcp_info fields the tcp collector shows."""
FIGURES = (
    "info_type",
    "skmem_type",
    "state",
    "rqueue",
    "wqueue",
    "inode",
    *_SHOWN,
    "rcvbuf",
    "sndbuf",
)
"""What ``lookup`` returns per socket, in this order: a plain tuple, the fields tcp shows (units
as in TcpInfo and SkMem; None without tcp_info), after the two attribute types the fast path
checks on every reply."""
_HEAD_AT = ((1, "B"), (56, "I"), (60, "I"), (68, "I"))  # state, rqueue, wqueue, inode
_INFO_AT = tuple(dict(zip(TcpInfo._fields, _TCPI_LAYOUT, strict=True))[name] for name in _SHOWN)
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


def figures(s: DiagSock) -> tuple:
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


DIRECTIONS = {"both": (_BC_S_EQ, _BC_D_EQ), "in": (_BC_S_EQ,), "out": (_BC_D_EQ,)}
"""Which end's port a filter tests: the local one (``in``: connections this host accepted on
the port), the remote one (``out``: connections it opened to the port), or either."""


def _port_match(ports: Sequence[int], direction: str = "both") -> bytes:
    """``sport = :P or dport = :P or ...``, compiled as ss does: each test jumps 8 ahead on
    true and 12 (past its operand) on false; a JMP after each true test skips to the end."""
    if not ports:
        raise ValueError("at least one port is needed")
    ops = DIRECTIONS[direction]
    return _or([_OP.pack(op, 8, 12) + _OP.pack(0, 0, p) for p in ports for op in ops])


def _or(tests: list[bytes]) -> bytes:
    """OR-chain tests whose true branch falls through and false branch jumps past the end."""
    code = tests[-1]
    for t in reversed(tests[:-1]):
        code = t + _OP.pack(_BC_JMP, 4, len(code) + 4) + code
    return code


def _peer_match(peers: Sequence[str]) -> bytes:
    """``dst = ADDR[/LEN] or ...`` as D_COND tests (any port)."""
    tests = []
    for peer in peers:
        net = ipaddress.ip_network(peer, strict=False)
        fam = socket.AF_INET if net.version == 4 else socket.AF_INET6
        cond = struct.pack("=BBxxi", fam, net.prefixlen, -1) + net.network_address.packed
        tests.append(_OP.pack(_BC_D_COND, 4 + len(cond), 4 + len(cond) + 4) + cond)
    return _or(tests)


def _and(first: bytes, second: bytes) -> bytes:
    """``first and second``: first's reject jumps (to its end + 4) are moved past ``second``."""
    out = bytearray(first)
    pos = 0
    while pos < len(first):
        code, yes, no = _OP.unpack_from(first, pos)
        if pos + yes == len(first) + 4:
            yes += len(second)
        if pos + no == len(first) + 4:
            no += len(second)
        _OP.pack_into(out, pos, code, yes, no)
        pos += _op_len(first, pos)
    return bytes(out) + second


def _op_len(code: bytes, pos: int) -> int:
    """Length of the op at ``pos`` including its operand."""
    op = code[pos]
    if op in (_BC_S_EQ, _BC_D_EQ):
        return 8
    if op in (_BC_S_COND, _BC_D_COND):
        return _OP.unpack_from(code, pos)[1]  # true branch = next op
    return 4


def bytecode(ports: Sequence[int], peers: Sequence[str] = (), direction: str = "both") -> bytes:
    """The INET_DIAG_REQ_BYTECODE program: local or remote port (see DIRECTIONS) in ``ports``
    [and peer in ``peers``, addresses or CIDR networks].  Raises ValueError on a bad address."""
    code = _port_match(ports, direction)
    return _and(code, _peer_match(peers)) if peers else code


@lru_cache(maxsize=16)
def _request(
    family: int,
    states: int,
    ext: int,
    ports: tuple[int, ...],
    peers: tuple[str, ...],
    direction: str,
) -> bytes:
    """One SOCK_DIAG_BY_FAMILY dump request, built once per distinct query."""
    prog = bytecode(ports, peers, direction)
    attr = RTA.pack(RTA.size + len(prog), INET_DIAG_REQ_BYTECODE) + prog
    body = _REQ.pack(family, socket.IPPROTO_TCP, ext, 0, states) + attr
    hdr = NLH.pack(NLH.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
    return hdr + body


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
        families: Iterable[int] = (socket.AF_INET, socket.AF_INET6),
        ext: int = EXT_INFO | EXT_SKMEMINFO,
        direction: str = "both",
    ) -> list[DiagSock]:
        """TCP sockets whose local or remote port (or, by ``direction``, only one of them) is in
        ``ports`` (and, if given, whose peer address is in ``peers``), filtered in the kernel,
        in the given states and families."""
        key_ports, key_peers = tuple(ports), tuple(peers)
        out: list[DiagSock] = []
        for fam in families:
            self._nl.send(_request(fam, states, ext, key_ports, key_peers, direction))
            self._read_dump(out)
        return out

    def lookup(self, socks: Sequence[DiagSock]) -> list[tuple | None]:
        """Fresh FIGURES of sockets found by an earlier ``query``, by exact lookup in the
        kernel's hash (no walk of the socket tables); None for one that is gone (the cookie
        makes sure a new socket reusing the same addresses and ports is not taken for it).
        Tuples, not DiagSocks: a monitor re-reads the same sockets every tick, and one unpack
        into a tuple is what such a read costs least."""
        out: list[tuple | None] = [None] * len(socks)
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

    def _read_replies(self, out: list[tuple | None], expected: int) -> None:
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

    def _learn(self, view: memoryview, start: int, end: int) -> tuple:
        """A reply of a length not seen yet (or laid out otherwise): walk its attributes and
        learn where the figures are, so later replies of that length are read with one unpack
        (a kernel lays out every reply to the same request alike)."""
        attrs = _attributes(view, start + _MSG.size, end)
        info, skmem = attrs.get(INET_DIAG_INFO), attrs.get(INET_DIAG_SKMEMINFO)
        if info is None or skmem is None or info[1] < _INFO_NEEDED or skmem[1] < _SKMEM.size:
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
            if mtype == SOCK_DIAG_BY_FAMILY:
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
            info = TcpInfo._make(_TCPI.unpack_from(view, pos))
        else:
            info = decode_tcp_info(view[pos : pos + size])
    if (at := attrs.get(INET_DIAG_SKMEMINFO)) is not None and at[1] >= _SKMEM.size:
        skmem = SkMem._make(_SKMEM.unpack_from(view, at[0]))
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


def dump_request(family: int, ports: Sequence[int], peers: Sequence[str] = ()) -> bytes:
    """The dump request for the sockets on ``ports`` (either end) [to ``peers``], in the
    connected states, with tcp_info and the buffer sizes: what a remote pump sends there."""
    return _request(family, CONNECTED, EXT_INFO | EXT_SKMEMINFO, tuple(ports), tuple(peers), "both")


def parse_dump(data: bytes) -> list[DiagSock]:
    """The sockets in a stream of sock_diag replies (several dumps back to back)."""
    view, out, pos = memoryview(data), [], 0
    while pos + NLH.size <= len(data):
        length, mtype, _flags, _seq, _pid = NLH.unpack_from(data, pos)
        if length < NLH.size or pos + length > len(data):
            break  # a truncated message: what came before it stands
        if mtype == SOCK_DIAG_BY_FAMILY:
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

    def lookup(self, socks: Sequence[DiagSock]) -> list[tuple | None]:
        """The FIGURES of the sockets still in the file, None for one that is gone."""
        now = {s.sockid: s for s in self._read()}
        return [figures(now[s.sockid]) if s.sockid in now else None for s in socks]

    def close(self) -> None:
        """Nothing to release (``InetDiag``'s surface)."""

"""The raw inet_diag client on real loopback sockets: bytecode filter against ss, decode against
pyroute2's full decode and getsockopt(TCP_INFO).  Ports 46130-46139 on a loopback address of
our own (127.46.1.1): the ports are inside the ephemeral range, so on 127.0.0.1 any client on the
host may hold them.  No root needed."""

from __future__ import annotations

import socket
import struct
from operator import itemgetter

import pytest
from kits.inet_diag import ADDR, P1, P6, _listener

from sgmon.readers.diag_filter import bytecode
from sgmon.readers.inet_diag import CONNECTED, FIGURES, InetDiag, figures
from sgmon.readers.tcp_info import TCP_INFO_LEN, TCP_STATES, decode_tcp_info


def test_state_mask_and_peer_conditions(sockets) -> None:
    with InetDiag() as diag:
        listening = diag.query([P1], states=CONNECTED | 1 << 10)
        assert len(listening) == 5 and sum(TCP_STATES[s.state] == "LISTEN" for s in listening) == 1
        # clients connect from 127.0.0.1, so the peer is ADDR for the client ends only
        clients = {c.getsockname()[1] for c in sockets[P1][1::2]}
        assert {s.sport for s in diag.query([P1], peers=[ADDR])} == clients
        assert len(diag.query([P1], peers=["127.0.0.0/8"])) == 4
        assert diag.query([P1], peers=["10.0.0.0/8", "192.0.2.7"]) == []
        # an IPv4 peer condition also matches the v4-mapped peers of a dual-stack socket
        mapped = diag.query([P6], peers=["127.0.0.0/8"])
        assert {s.family for s in mapped} == {socket.AF_INET, socket.AF_INET6}
        assert len(mapped) == 2
        [server_end] = diag.query([P6], peers=["127.0.0.1"])
        assert server_end.family == socket.AF_INET6 and server_end.src == ADDR
        assert server_end.dst == "127.0.0.1"  # shown unmapped


def test_bytecode_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        bytecode([1521], ["not-an-address"])
    with pytest.raises(ValueError):
        bytecode([])


def test_lean_decode_equals_pyroute2_full_decode(sockets) -> None:
    pytest.importorskip("pyroute2")
    from pyroute2 import DiagSocket

    with InetDiag() as diag:
        lean = {(s.sport, s.dport): s.info for s in diag.query([P1])}
    with DiagSocket() as ds:
        ds.bind()
        full = {
            (m["idiag_sport"], m["idiag_dport"]): m.get_attr("INET_DIAG_INFO")
            for m in ds.get_sock_stats(
                family=socket.AF_INET, states=CONNECTED, extensions=2, sport=P1
            )
        }
    for key, ti in full.items():
        mine = lean[key]
        for name in (
            "rto",
            "ato",
            "snd_mss",
            "unacked",
            "lost",
            "retrans",
            "rtt",
            "rttvar",
            "snd_ssthresh",
            "snd_cwnd",
            "total_retrans",
            "bytes_acked",
            "bytes_received",
            "delivery_rate",
            "bytes_sent",
            "min_rtt",
        ):
            assert getattr(mine, name) == ti[f"tcpi_{name}"], name
    assert any(info.bytes_acked > 50000 for info in lean.values())


def test_decode_getsockopt_blob(sockets) -> None:
    s = sockets[P1][1]
    ti = decode_tcp_info(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))
    assert TCP_STATES[ti.state] == "ESTAB"
    assert ti.bytes_acked >= 50000 and ti.rto >= 200_000 and ti.snd_mss > 0
    old_kernel = decode_tcp_info(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104))
    assert old_kernel.rto == ti.rto and old_kernel.bytes_acked == 0 and old_kernel.total_rto == 0


def test_lookup_rereads_known_sockets_v4_and_v6_and_none_once_gone(sockets) -> None:
    extra = _listener(46134)
    client = socket.create_connection((ADDR, 46134))
    server = extra.accept()[0]
    with InetDiag() as diag:
        known = diag.query([P1, P6, 46134])
        assert {s.family for s in known} == {socket.AF_INET, socket.AF_INET6}
        sockets[P1][1].sendall(b"y" * 1000)
        sockets[P1][2].recv(4096)
        fresh = [dict(zip(FIGURES, f, strict=True)) for f in diag.lookup(known) if f]
        assert [f["inode"] for f in fresh] == [s.inode for s in known]
        acked = sum(f["bytes_acked"] for f in fresh)
        assert acked == sum(s.info.bytes_acked for s in known if s.info) + 1000
        server.close()  # passive side first: it is gone at once after the close handshake
        client.close()
        extra.close()
        gone = [46134 in (s.sport, s.dport) for s in known]
        after = diag.lookup(known)
    assert all(a is not None for a, g in zip(after, gone, strict=True) if not g)
    assert all(
        a is None or TCP_STATES[a[2]] != "ESTAB" for a, g in zip(after, gone, strict=True) if g
    )


def _stable(fig: tuple) -> tuple:
    """What two reads of an idle socket agree on."""
    f = dict(zip(FIGURES, fig, strict=True))
    return tuple(f[n] for n in ("inode", "state", "rqueue", "wqueue", "rto", "snd_cwnd",
                                "bytes_acked", "rcvbuf", "sndbuf"))  # fmt: skip


def test_a_repeated_lookup_reads_what_a_dump_reads(sockets) -> None:
    with InetDiag() as diag:
        known = diag.query([P1, P6])
        diag.lookup(known)  # each new reply layout is walked attribute by attribute, and learned
        fast = diag.lookup(known)  # then read at the learned offsets
        dump = diag.query([P1, P6])
        assert diag._layouts
        # a learned layout whose attribute types do not check out is walked and learned again
        diag._layouts = dict.fromkeys(diag._layouts, (struct.Struct("=HH"), itemgetter(0, 1)))
        again = diag.lookup(known)
        assert all(unpacker.size > 4 for unpacker, _ in diag._layouts.values())
    assert all(fast) and all(again)
    assert sorted(map(_stable, fast)) == sorted(map(_stable, map(figures, dump)))
    assert sorted(map(_stable, again)) == sorted(map(_stable, fast))


def test_one_walk_for_both_families_finds_what_two_walks_find(sockets) -> None:
    """Both families are asked in one TCPDIAG_GETSOCK walk: the same sockets as one
    SOCK_DIAG_BY_FAMILY dump per family."""
    with InetDiag() as diag:
        for port in (P1, P6):
            apart = diag.query([port], families=[socket.AF_INET]) + diag.query(
                [port], families=[socket.AF_INET6]
            )
            both = diag.query([port])
            key = itemgetter(0, 3, 5)  # family, sport, dport
            assert sorted(map(key, both)) == sorted(map(key, apart)) and both

"""The tcp collector on loopback: options, socket tracking between dumps, owners, host row.
Port 46150 on a loopback address of our own (127.46.1.2), as the port is inside the ephemeral
range; no root needed (owners of other users' sockets would need it)."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator

import pytest

from collectors.tcp import SETTINGS_REFRESH, TcpCollector
from sgmon.collector import ConfigError

PORT = 46150


def _pair(srv: socket.socket) -> tuple[socket.socket, socket.socket]:
    c = socket.create_connection(srv.getsockname())
    return c, srv.accept()[0]


def _keys(c: socket.socket) -> set[str]:
    (la, lp), (pa, pp) = c.getsockname(), c.getpeername()
    return {f"{la}:{lp}>{pa}:{pp}", f"{pa}:{pp}>{la}:{lp}"}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.46.1.2", PORT))
    srv.listen(8)
    yield srv
    srv.close()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"ports": ["abc"]}, "'abc' is not a port number"),
        ({"ports": [70000]}, "out of range"),
        ({"ports": [True]}, "not a port number"),
        ({"ports": []}, "empty"),
        ({"peers": ["db-standby"]}, "not an IP address"),
        ({"rediscover": -1}, "seconds"),
        ({"direction": "upstream"}, 'use "auto", "out", "in" or "both"'),
        ({"direction": ["in"]}, "tcp direction"),
    ],
)
def test_bad_options_are_one_line_config_errors(options: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as err:
        TcpCollector(options)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("options", "ends"),
    [
        ({"role": "primary"}, "connected"),  # the primary connects to the standby's listener
        ({"role": "standby"}, "accepted"),  # the standby's listener accepted the connection
        ({"role": ""}, "both"),
        ({"role": "primary", "peers": ["127.0.0.0/8"]}, "both"),  # peers keep clients out
        ({"role": "primary", "direction": "both"}, "both"),
        ({"role": "standby", "direction": "out"}, "connected"),
    ],
)
def test_the_role_picks_which_end_is_a_dg_socket(listener, options: dict, ends: str) -> None:
    """On a primary the listener port's accepted connections are the database's clients, not
    Data Guard: ``auto`` takes the end the role makes the DG one, unless peers are set."""
    coll = TcpCollector({"ports": [PORT], **options})
    coll.open()
    client, accepted = _pair(listener)
    try:
        (la, lp), (pa, pp) = client.getsockname(), client.getpeername()
        out_end = {f"{la}:{lp}>{pa}:{pp}"}  # the end that connected: remote port PORT
        in_end = {f"{pa}:{pp}>{la}:{lp}"}  # the listener's end: local port PORT
        want = {"connected": out_end, "accepted": in_end}.get(ends, out_end | in_end)
        assert set(coll.sample()) - {"host"} == want
    finally:
        client.close()
        accepted.close()
        coll.close()


def test_after_a_switchover_the_direction_follows_the_database(listener) -> None:
    """Configured primary, but V$DATABASE (through oracle_dg, ``sgmon.readers.roles``) says
    standby: the next tick takes the inbound end, with an event that says why."""
    from sgmon.readers import roles

    host = f"switched-{os.getpid()}"
    coll = TcpCollector({"ports": [PORT], "role": "primary", "host": host})
    coll.open()
    client, accepted = _pair(listener)
    try:
        (la, lp), (pa, pp) = client.getsockname(), client.getpeername()
        assert set(coll.sample()) - {"host"} == {f"{la}:{lp}>{pa}:{pp}"}  # outbound: primary
        roles.observe(host, "standby")
        assert set(coll.sample()) - {"host"} == {f"{pa}:{pp}>{la}:{lp}"}  # inbound: standby
        events = coll.take_events()
        assert [e.kind for e in events] == ["role"]
        assert "the database is standby (config: primary)" in events[0].text
        assert not coll.take_events() and set(coll.sample()) - {"host"} == {f"{pa}:{pp}>{la}:{lp}"}
    finally:
        client.close()
        accepted.close()
        coll.close()


def test_known_sockets_are_looked_up_and_a_vanished_one_forces_a_dump(listener) -> None:
    coll = TcpCollector({"ports": [PORT], "rediscover": 3600})
    coll.open()
    try:
        a = _pair(listener)
        first = coll.sample()
        assert set(first) == _keys(a[0]) | {"host"}
        b = _pair(listener)
        # between dumps only the known sockets are read (exact lookups, no table walk)
        assert set(coll.sample()) == _keys(a[0]) | {"host"}
        keys_b = _keys(b[0])
        for s in a:
            s.close()  # client end -> TIME-WAIT: left the connected states
        assert set(coll.sample()) == keys_b | {"host"}
        for s in b:
            s.close()
    finally:
        coll.close()


def test_rediscovery_dumps_only_after_the_host_opened_a_connection(listener) -> None:
    coll = TcpCollector({"ports": [PORT], "rediscover": 10})
    coll.open()
    dumps = []
    query = coll._diag.query
    coll._diag.query = lambda *a, **k: dumps.append(1) or query(*a, **k)

    def found(figures: list[tuple]) -> set[str]:
        assert len(figures) == len(coll._labels)
        return {key for _, _, key, _ in coll._labels}

    try:
        assert not coll._sockets(0.0, 4) and len(dumps) == 1  # none yet: the first tick dumps
        assert not coll._sockets(1.0, 4) and len(dumps) == 1  # none, and no connection since
        a = _pair(listener)
        assert _keys(a[0]) <= found(coll._sockets(2.0, 5)) and len(dumps) == 2
        coll._sockets(20.0, 5)  # rediscovery due, but no connection opened since: lookups
        assert len(dumps) == 2
        b = _pair(listener)
        assert _keys(b[0]) <= found(coll._sockets(21.0, 6)) and len(dumps) == 3
        rows = coll.sample()  # the real counters, read from /proc/net/snmp
        assert rows["host"]["active_opens"] > 0 and rows["host"]["passive_opens"] > 0
        for s in (*a, *b):
            s.close()
    finally:
        coll.close()


def test_with_no_dg_socket_the_dumps_space_out_while_clients_keep_connecting() -> None:
    """A primary whose standby is away while its clients log on every second: the dumps that
    find no DG socket come at 1, 2, 4, 8 s apart, then every ``rediscover`` seconds (each walks
    the kernel's whole socket hash), never once a tick."""
    coll = TcpCollector({"ports": [PORT + 7], "rediscover": 10})  # no socket on that port
    coll.open()
    dumps: list[float] = []
    query = coll._diag.query
    try:
        for t in range(61):
            coll._diag.query = lambda *a, t=t, **k: dumps.append(t) or query(*a, **k)
            assert coll._sockets(float(t), 100 + t) == []  # a connection opened every second
    finally:
        coll.close()
    assert dumps == [0, 1, 3, 7, 15, 25, 35, 45, 55], dumps


def test_rows_owner_units_and_host_counters(listener) -> None:
    coll = TcpCollector({"ports": [PORT], "rediscover": 0})
    coll.open()
    client, server = _pair(listener)
    (la, lp), (pa, pp) = client.getsockname(), client.getpeername()
    key = f"{la}:{lp}>{pa}:{pp}"
    try:
        # the owner scan runs in ~3 ms slices per sample: a few samples resolve it
        for _ in range(500):
            prev = coll.sample()
            if coll.derive(None, prev, 0.0)[key]["pid"] is not None:
                break
        client.sendall(b"x" * 100_000)
        got = 0
        while got < 100_000:
            got += len(server.recv(1 << 20))
        cur = coll.sample()
        rows = coll.derive(prev, cur, 2.0)
        new = coll.derive(None, cur, 2.0)[key]  # a socket not in the last sample
    finally:
        coll.close()
        client.close()
        server.close()
    row = rows[key]
    with open("/proc/self/comm") as f:
        assert row["pid"] == os.getpid() and row["process"] == f.read().strip()
    assert row["bytes_acked"] == pytest.approx(100_000 / 2.0)
    assert new["bytes_acked"] is None and new["retransmits"] is None and new["rto"] == row["rto"]
    assert row["retransmits"] == 0 and row["state"] == "ESTAB"
    assert 200 <= row["rto"] < 1000 and 0 < row["rtt"] < 100  # ms, not us
    assert row["rto_min"] is None  # loopback route has none
    assert set(rows["host"]) == {
        "active_opens",
        "passive_opens",
        "retrans_segs",
        "timeouts",
        "lost_retransmit",
        "rmem_max",
        "wmem_max",
        "tcp_rmem_max",
        "tcp_wmem_max",
    }
    assert all(v is not None and v >= 0 for v in rows["host"].values())


def test_needs_no_pyroute2_and_reads_no_rto_min_on_loopback(listener, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyroute2", None)  # import would raise ImportError
    coll = TcpCollector({"ports": [PORT]})
    coll.open()
    client, server = _pair(listener)
    try:
        rows = coll.derive(None, coll.sample(), 0.0)
    finally:
        coll.close()
        client.close()
        server.close()
    socks = [r for k, r in rows.items() if k != "host"]
    assert len(socks) == 2 and all(r["rto_min"] is None and r["rto"] >= 200 for r in socks)


def test_host_row_carries_the_socket_buffer_caps() -> None:
    """The 3 x BDP advice compares socket buffers with net.core.{r,w}mem_max and the maxima of
    net.ipv4.tcp_{r,w}mem (seed 000): the last of that file's three numbers."""
    c = TcpCollector({"ports": [46199]})
    c.open()
    try:
        host = c.derive(None, c.sample(), 0.0)["host"]
    finally:
        c.close()
    for name in ("rmem_max", "wmem_max"):
        with open(f"/proc/sys/net/core/{name}") as f:
            assert host[name] == int(f.read())
    for name in ("tcp_rmem", "tcp_wmem"):
        with open(f"/proc/sys/net/ipv4/{name}") as f:
            low, default, high = map(int, f.read().split())
        assert host[f"{name}_max"] == high >= default >= low


def _with_retrans(snmp: str, add: int) -> str:
    """/proc/net/snmp's text with RetransSegs moved by ``add``."""
    lines = snmp.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("Tcp:"))
    names, values = lines[at].split(), lines[at + 1].split()
    col = names.index("RetransSegs")
    values[col] = str(int(values[col]) + add)
    lines[at + 1] = " ".join(values)
    return "\n".join(lines)


def test_netstat_is_read_when_retransmissions_moved_and_every_refresh() -> None:
    """/proc/net/netstat's TCPTimeouts and TCPLostRetransmit only move with RetransSegs: the
    costlier file is read again when that moved, and every SETTINGS_REFRESH seconds anyway."""
    c = TcpCollector({"ports": [46199]})
    c.open()
    snmp, netstat = c._host._counters["/proc/net/snmp"], c._host._counters["/proc/net/netstat"]
    text = snmp.read()
    served, reads = [text], []
    real = netstat.read
    snmp.read = lambda: served[0]  # type: ignore[method-assign]
    netstat.read = lambda: reads.append(1) or real()  # type: ignore[method-assign]
    try:
        first = c._host.read(100.0)
        c._host.read(101.0)
        assert len(reads) == 1
        served[0] = _with_retrans(text, 1)
        c._host.read(102.0)
        assert len(reads) == 2
        again = c._host.read(103.0)
        assert len(reads) == 2 and again["timeouts"] >= first["timeouts"]
        assert again["retrans_segs"] == first["retrans_segs"] + 1
        c._host.read(102.0 + SETTINGS_REFRESH)
        assert len(reads) == 3
    finally:
        c.close()

"""What a pump is asked for comes from the collectors: the files from their ``remote_files``, the
Data Guard sockets from the tcp collector's own selection (its ports, peers, direction and
``rediscover`` on that host), and the pump dumps again as that collector would."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import struct

import pytest

from collectors.procs import ProcsCollector
from collectors.retrans import RetransCollector
from collectors.tcp import TcpCollector, idle_wait
from sgmon.config import Config, HostConfig
from sgmon.hosts.build import pumped_processes, pumped_sockets, pumped_trace, shipped
from sgmon.readers.inet_diag import Selection, dump_request
from sgmon.remote.mirror import Shipped, aim, request
from sgmon.remote.pump import STATE, Sockets

HOST = HostConfig(name="far", role="primary", ssh="far")
[DUMP] = Selection((1521,), (), "both", 10.0).requests()


def _spec(data: bytes) -> dict:
    """The request line after the program."""
    size, _, rest = data.partition(b"\n")
    return json.loads(rest[int(size) :])


def test_the_files_are_the_collectors_declarations() -> None:
    s = shipped()
    assert s.tick == (
        "/proc/stat",
        "/proc/loadavg",
        "/proc/vmstat",
        "/proc/meminfo",
        "/proc/pressure/cpu",
        "/proc/pressure/memory",
        "/proc/pressure/io",
        "/proc/diskstats",
        "/proc/net/dev",
        "/proc/net/snmp",
    )
    assert s.retrans == ("/proc/net/netstat",)
    assert set(s.slow) == {
        "/proc/sys/net/core/rmem_max",
        "/proc/sys/net/core/wmem_max",
        "/proc/sys/net/ipv4/tcp_rmem",
        "/proc/sys/net/ipv4/tcp_wmem",
        "/sys/class/block/*/partition",
        "/sys/class/net/*/speed",
        "/proc/self/schedstat",
        "/proc/sys/kernel/task_delayacct",
        *RetransCollector.remote_files,  # the tracepoints' layouts
    }
    assert s.is_slow("/sys/class/net/eth0/speed") and not s.is_slow("/etc/passwd")
    spec = _spec(request(1.0, s))
    assert spec["files"] == list(s.tick) and spec["keep"] == s.lines and "diag" not in spec
    assert "procs" not in spec and "trace" not in spec


def test_the_processes_a_pump_follows_are_the_procs_collectors() -> None:
    """The pump matches their names with its own ``re`` (the flags inside the pattern): the
    names procs takes locally, and only those; off a primary, the server processes holding an
    established socket on a DG port, by the lines of /proc/net/tcp it keeps."""
    config = Config(hosts=(HOST,), ports=(1522,))
    spec = pumped_processes(config, HOST)
    assert spec is not None and "holders" not in spec  # a primary's: no RFS
    assert _spec(request(1.0, shipped(), processes=spec))["procs"] == spec
    names, threaded = re.compile(spec["names"].encode()), re.compile(spec["threaded"].encode())
    procs = ProcsCollector()
    for comm in ("ora_lgwr_PROD", "ora_nss2_PROD", "ora_lns1_orcl", "ORA_RFS_STBY"):
        assert names.match(comm.encode()) and procs._background(comm)
    for comm in ("ora_pmon_PROD", "oraclePROD (LOCAL=NO)", "bash"):
        assert not names.match(comm.encode()) and not procs._background(comm)
    assert threaded.match(b"ora_u005_PROD") and not threaded.match(b"ora_lgwr_PROD")
    standby = HostConfig(name="stby", role="standby", ssh="stby")
    spec = pumped_processes(Config(hosts=(standby,), ports=(1522,)), standby)
    assert spec is not None and re.match(spec["holders"], "oracleSTBY (LOC")
    line = b"\n   3: 0100000A:05F2 0200000A:A1B2 01 00000000:00000000 00:0 0 54321"
    connections = re.compile(spec["connections"].encode())
    assert connections.findall(line) == [line]  # established, local port 1522 (05F2)
    assert not connections.findall(line.replace(b" 01 ", b" 0A "))  # listening
    assert not connections.findall(line.replace(b":05F2", b":05F1"))  # another port


def test_the_tracepoints_a_pump_records_are_the_retrans_collectors() -> None:
    """Its ports and direction on that host; none where it is switched off."""
    config = Config(hosts=(HOST,), ports=(1522,), collectors={"retrans": {"buffer_kb": 64}})
    trace = pumped_trace(config, HOST)
    local = RetransCollector({"ports": [1522], "role": "primary", "buffer_kb": 64})
    assert trace == local.remote_trace() and trace["buffer_kb"] == 64
    assert "dport == 1522" in trace["events"]["tcp/tcp_retransmit_skb"][0]
    assert _spec(request(1.0, shipped(), trace=trace))["trace"] == trace
    off = Config(hosts=(HOST,), collectors={"retrans": {"enabled": False}})
    assert pumped_trace(off, HOST) is None


def test_a_file_declared_twice_ships_once_at_its_first_cadence() -> None:
    s = Shipped.declared([{"/a": "tick", "/b": "slow"}, {"/a": "slow", "/c": "sometimes"}], {})
    assert (s.tick, s.retrans, s.slow) == (("/a",), (), ("/b",))


@pytest.mark.parametrize(
    ("table", "direction"),
    [
        ({}, "out"),  # auto: the role's end (a primary's connections to the standby)
        ({"direction": "out"}, "out"),
        ({"direction": "in", "rediscover": 0}, "in"),
        ({"ports": [1522, 1523], "peers": ["10.0.0.2"]}, "both"),  # not [dataguard]'s
    ],
)
def test_the_sockets_are_the_tcp_collectors_own(table: dict, direction: str) -> None:
    config = Config(hosts=(HOST,), ports=(1521,), collectors={"tcp": table} if table else {})
    selection = pumped_sockets(config, HOST)
    assert selection is not None
    tcp = TcpCollector({"ports": [1521], "role": "primary", **table})
    assert selection.ports == tcp.ports and selection.peers == tcp.peers
    assert selection.direction == direction and selection.rediscover == tcp.rediscover
    spec = _spec(request(1.0, Shipped(), selection))
    [sent] = [bytes.fromhex(r) for r in spec["diag"]]
    local = dump_request(socket.AF_INET, tcp.ports, tcp.peers, direction)
    assert struct.unpack_from("=H", sent, 4) == (18,)  # TCPDIAG_GETSOCK: both families at once
    assert sent[16 + 60 :] == local[16 + 56 :]  # after the two request structs: the same filter
    assert spec["rediscover"] == tcp.rediscover
    opens = {"out": [0], "in": [1], "both": [0, 1]}  # ActiveOpens, PassiveOpens
    assert spec["prompt"] == opens[direction]


def test_no_sockets_where_tcp_is_off() -> None:
    config = Config(hosts=(HOST,), collectors={"tcp": {"enabled": False}})
    assert pumped_sockets(config, HOST) is None


class _Kernel:
    """A sock_diag socket answering a dump with ``n`` established sockets, and each lookup."""

    def __init__(self, n: int) -> None:
        self.sent: list[bytes] = []
        self.replies: list[bytes] = []
        self.n = n

    def send(self, data: bytes) -> None:
        self.sent.append(data)
        if struct.unpack_from("=H", data, 6)[0] & 0x300:  # NLM_F_DUMP: the sockets, then DONE
            msgs = [_reply(i, 18) for i in range(self.n)]  # a dump's: TCPDIAG_GETSOCK
            self.replies.append(b"".join([*msgs, struct.pack("=IHHII", 20, 3, 2, 1, 0), b"\0" * 4]))
        else:
            self.replies += [_reply(i) for i in range(len(data) // 72)]

    def recv(self, size: int) -> bytes:
        return self.replies.pop(0)


def _reply(i: int, kind: int = 20) -> bytes:
    """A SOCK_DIAG_BY_FAMILY reply (or ``kind``) for an established socket: its header and
    inet_diag_msg."""
    body = struct.pack("=BB2x", socket.AF_INET, 1) + struct.pack("!HH", 1521, 40000 + i)
    body += b"\0" * (72 - len(body))
    return struct.pack("=IHHII", 16 + len(body), kind, 2, 1, 0) + body


@pytest.mark.parametrize(("rediscover", "dumps"), [(10.0, 1), (0.0, 4)])
def test_the_pump_dumps_again_as_the_tcp_collector_would(rediscover: float, dumps: int) -> None:
    """Known sockets are looked up until ``rediscover`` seconds passed and a connection was
    opened; with 0, a dump every tick."""
    kernel = _Kernel(2)
    sockets = Sockets(kernel, {"diag": [DUMP.hex()], "rediscover": rediscover})
    for tick in range(4):
        sockets.read(float(tick), (b"5", b"6"))
    dumped = [d for d in kernel.sent if struct.unpack_from("=H", d, 6)[0] & 0x300]
    assert len(dumped) == dumps and len(kernel.sent) == 4


def test_with_no_dg_socket_the_pump_spaces_its_dumps_as_the_tcp_collector_does() -> None:
    """No DG socket, a client connection every second: the pump dumps on the tcp collector's
    schedule (1, 2, 4, 8 s apart, then every ``rediscover``), never once a tick."""
    kernel = _Kernel(0)
    sockets = Sockets(kernel, {"diag": [DUMP.hex()], "rediscover": 10.0})
    dumps, wait, due, empty = [], [], 0.0, 0
    for tick in range(61):
        before = len(kernel.sent)
        assert sockets.read(float(tick), (b"5", str(tick).encode())) in (b"", kernel_done())
        if len(kernel.sent) > before:
            dumps.append(tick)
        if tick >= due:  # the collector's own schedule, from its own function
            wait.append(tick)
            empty += 1
            due = tick + idle_wait(empty, 10.0)
    assert dumps == wait and len(dumps) < 10, dumps


def kernel_done() -> bytes:
    """A dump's reply with no socket: the DONE message alone."""
    return struct.pack("=IHHII", 20, 3, 2, 1, 0) + b"\0" * 4


def test_more_than_64_dg_sockets_are_shipped_every_tick_even_when_quiet() -> None:
    """Past 64 known sockets the pump dumps every tick rather than look each up; a tick in which
    no connection opened still ships them (it used to ship none)."""
    kernel = _Kernel(70)
    sockets = Sockets(kernel, {"diag": [DUMP.hex()], "rediscover": 10.0})
    shipped = [len(sockets.read(float(tick), (b"5", b"6"))) for tick in range(4)]
    assert all(n >= 70 * 88 for n in shipped), shipped


def test_a_primarys_client_logons_never_walk_the_socket_hash() -> None:
    """A primary (its Data Guard sockets are connections it opens) with none, a client logon
    every second: no dump after the first; the first connection it opens after them is looked
    for at the next tick.  After a switchover (the consumer's ``sockets`` line) the other end's
    request is dumped at the next tick, and its accepted connections count."""
    kernel = _Kernel(0)
    primary = Selection((1521,), (), "out", 10.0)
    sockets = Sockets(kernel, aim(primary))
    dumps = []
    for tick in range(150):
        before = len(kernel.sent)
        sockets.read(float(tick), (b"5", str(tick).encode()))
        dumps += [tick] if len(kernel.sent) > before else []
    assert dumps == [0]
    sockets.read(150.0, (b"6", b"150"))
    assert len(kernel.sent) == 2 and kernel.sent[-1] == primary.requests()[0]
    standby = Selection((1521,), (), "in", 10.0)
    STATE["sockets"] = aim(standby)
    sockets.read(151.0, (b"6", b"150"))
    assert len(kernel.sent) == 3 and kernel.sent[-1] == standby.requests()[0]
    sockets.read(170.0, (b"6", b"171"))  # accepted: a standby's RFS could be among them
    assert len(kernel.sent) == 4


def test_after_a_switchover_the_pump_is_sent_the_other_ends_search() -> None:
    """A host configured as a primary whose database reports standby: the tcp collector here
    takes the accepted end, and the pump is sent that end's search once (a line on its stdin),
    which Sockets takes as it takes the first request."""
    from types import SimpleNamespace

    from sgmon.hosts.remote import PumpSource
    from sgmon.readers import roles

    host = HostConfig(name=f"switched-pump-{os.getpid()}", role="primary", ssh="far")
    tcp = TcpCollector({"ports": [1521], "role": "primary", "host": host.name})
    config = Config(hosts=(host,), ports=(1521,))
    source = PumpSource(host, lambda root: [tcp], pumped_sockets(config, host), Shipped())
    source._tcp = tcp
    proc = SimpleNamespace(stdin=io.BytesIO())
    source._aim(proc)  # type: ignore[arg-type]
    assert proc.stdin.getvalue() == b""  # nothing changed: nothing sent
    roles.observe(host.name, "standby")
    tcp._follow_role()
    source._aim(proc)  # type: ignore[arg-type]
    source._aim(proc)  # type: ignore[arg-type]
    word, sent = proc.stdin.getvalue().decode().split()
    assert word == "sockets" and json.loads(sent) == aim(Selection((1521,), (), "in", 10.0))
    kernel = _Kernel(0)
    Sockets(kernel, json.loads(sent)).read(0.0, None)
    assert kernel.sent == Selection((1521,), (), "in", 10.0).requests()

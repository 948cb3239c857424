"""tcp against `ss -tin` on a TCP stream on port 1521 between two namespaces with 0.5 % loss.

The collector runs inside the sender's namespace in a child process (see NsCollector
in tests/system/kernel/test_netdev_accuracy.py for why a process and not setns in a thread).
The stream is
8 KiB messages each answered by a 1-byte ack (the shape of SYNC redo transport); nftables drops
0.5 % of the packets arriving at the receiver on port 1521.  Both tools are read while the
connection is idle (every message acknowledged), so their figures describe the same state.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from nslab import NsPair, hold_loopback, ns_pair, require_root
from test_netdev_accuracy import ns_collector

pytestmark = pytest.mark.root

DG_PORT = 1521
SERVER_TTL = "60"  # seconds: every helper process ends by itself even if the test hangs

SERVER = r"""
import selectors, socket, sys, time
end = time.monotonic() + float(sys.argv[2])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(sys.argv[1])))
srv.listen(64)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ)
pending = {}
print("listening", flush=True)
while time.monotonic() < end:
    for key, _ in sel.select(0.5):
        if key.fileobj is srv:
            c, _ = srv.accept()
            c.setblocking(False)
            sel.register(c, selectors.EVENT_READ)
            pending[c] = 0
            continue
        c = key.fileobj
        data = c.recv(1 << 16)
        if not data:
            sel.unregister(c)
            c.close()
            continue
        pending[c] += len(data)
        while pending[c] >= 8192:
            pending[c] -= 8192
            c.send(b"k")
"""

CLIENT = r"""
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
print(s.getsockname()[1], flush=True)
msg = b"m" * 8192
for line in sys.stdin:
    count, limit = int(line.split()[0]), float(line.split()[1])
    end, sent = time.monotonic() + limit, 0
    while sent < count and time.monotonic() < end:
        s.sendall(msg)
        if not s.recv(1):
            break
        sent += 1
    print(sent, flush=True)
"""


class Client:
    """A message/ack sender in namespace ``a`` connected to the server in ``b``."""

    def __init__(self, pair: NsPair) -> None:
        self.proc = pair.popen(
            "a",
            sys.executable,
            "-c",
            CLIENT,
            pair.b_ip,
            str(DG_PORT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def burst(self, count: int, limit: float = 15.0) -> int:
        """Send ``count`` messages (bounded by ``limit`` seconds); returns how many were acked."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{count} {limit}\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(5)


@contextmanager
def dg_link(loss_permille: int) -> Iterator[NsPair]:
    """Namespaces with a port-1521 server in ``b`` and ``loss_permille`` loss arriving at it."""
    with ns_pair("tc") as pair:
        for side in ("a", "b"):
            pair.run(side, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
        server = pair.popen(
            "b",
            sys.executable,
            "-c",
            SERVER,
            str(DG_PORT),
            SERVER_TTL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None and server.stdout.readline().strip() == "listening"
        if loss_permille:
            pair.add_loss("b", loss_permille, DG_PORT)
        try:
            yield pair
        finally:
            server.kill()
            server.wait(5)


_INFO = re.compile(r"\b(rto|rtt|cwnd|retrans|bytes_acked|unacked|lost):([\d./]+)")


def ss_sockets(pair: NsPair, side: str = "a") -> dict[str, dict[str, float]]:
    """`ss -tin` for the DG port, keyed like the collector's instances."""
    out = pair.run(side, "ss", "-tinH", f"( sport = :{DG_PORT} or dport = :{DG_PORT} )")
    found: dict[str, dict[str, float]] = {}
    key = ""
    for line in out.splitlines():
        if not line.startswith(("\t", " ")):
            cols = line.split()
            key = f"{cols[3]}>{cols[4]}"
            found[key] = {"retrans": 0, "total_retrans": 0}
            continue
        for name, value in _INFO.findall(line):
            if name == "rtt":
                found[key]["rtt"], found[key]["rttvar"] = map(float, value.split("/"))
            elif name == "retrans":
                now, total = value.split("/")
                found[key]["retrans"], found[key]["total_retrans"] = int(now), int(total)
            else:
                found[key][name] = float(value)
    return found


def test_rto_rtt_retrans_agree_with_ss_under_loss() -> None:
    require_root("ip", "nft", "ss")
    with dg_link(loss_permille=5) as pair:
        client = Client(pair)
        key = f"{pair.a_ip}:{client.port}>{pair.b_ip}:{DG_PORT}"
        with ns_collector(pair, "a", "tcp", {"ports": [DG_PORT]}) as coll:
            for _ in range(100):  # the /proc/*/fd owner scan runs in ~3 ms slices per tick
                if coll.tick()["rows"][key]["pid"] is not None:
                    break
            before = ss_sockets(pair)[key]
            t0 = coll.tick()
            acked = client.burst(3000)
            time.sleep(0.2)
            t1 = coll.tick()
            after = ss_sockets(pair)[key]
        client.close()
    assert acked == 3000
    assert set(t1["rows"]) == {key, "host"}, "only the DG socket, plus the host row"
    row, dt = t1["rows"][key], t1["dt"]
    assert t0["rows"][key]["state"] == row["state"] == "ESTAB"
    assert row["local"] == f"{pair.a_ip}:{client.port}" and row["peer"] == f"{pair.b_ip}:1521"
    # Loss really happened, and the RTO is the default 200 ms floor plus rtt terms.
    assert after["total_retrans"] > before["total_retrans"]
    assert row["rto"] >= 200
    # Tolerances: ss prints tcpi_rto/1000 and tcpi_rtt/1000 with %g; both tools read an idle
    # socket, so rto is equal to 0.5 ms and rtt/rttvar to 1 us (one ACK landing between the two
    # reads could move rtt; none is expected while idle).
    assert row["rto"] == pytest.approx(after["rto"], abs=0.5)
    assert row["rtt"] == pytest.approx(after["rtt"], abs=0.001)
    assert row["rttvar"] == pytest.approx(after["rttvar"], abs=0.001)
    assert row["cwnd"] == after["cwnd"]
    # Retransmits in the interval = the increase of ss's retrans:./total, exactly.
    assert row["retransmits"] == after["total_retrans"] - before["total_retrans"]
    assert row["retrans"] == after["retrans"]
    # bytes_acked/s over the collector's interval, back to bytes: equal to 1 byte.
    acked_bytes = after["bytes_acked"] - before["bytes_acked"]
    assert row["bytes_acked"] * dt == pytest.approx(acked_bytes, abs=1)
    assert acked_bytes == 3000 * 8192
    assert row["sndbuf"] > 0 and row["rcvbuf"] > 0
    assert row["rto_min"] is None  # no rto_min on the route yet
    host = t1["rows"]["host"]
    assert host["retrans_segs"] * dt >= row["retransmits"] - 1e-6  # host-wide includes ours
    assert row["pid"] is not None and row["process"].startswith("python")


def test_rto_min_route_brings_rto_to_10ms_range() -> None:
    """`ip route change ... rto_min 10ms` on the sender: the kernel applies it to a connection
    that already exists at its next RTT sample (the route change invalidates the socket's cached
    route; tcp_rto_min() reads the locked RTAX_RTO_MIN of the new one), and to new connections."""
    require_root("ip", "nft", "ss")
    with dg_link(loss_permille=5) as pair:
        old = Client(pair)
        old.burst(200)
        pair.set_rto_min("a", 10)
        old_key = f"{pair.a_ip}:{old.port}>{pair.b_ip}:{DG_PORT}"
        with ns_collector(pair, "a", "tcp", {"ports": [DG_PORT], "rediscover": 0}) as coll:
            stale = coll.tick()["rows"][old_key]
            old.burst(300)
            new = Client(pair)
            new.burst(300)
            time.sleep(0.2)
            rows = coll.tick()["rows"]
            seen = ss_sockets(pair)
        old.close()
        new.close()
    new_key = f"{pair.a_ip}:{new.port}>{pair.b_ip}:{DG_PORT}"
    assert stale["rto"] >= 200, "no RTT sample since the route change: still the old floor"
    for key in (old_key, new_key):
        # "~10 ms range": 10 ms floor + srtt, rounded up to jiffies (4 ms at HZ=250): 10-30 ms.
        assert 10 <= rows[key]["rto"] <= 30, rows[key]
        assert rows[key]["rto"] == pytest.approx(seen[key]["rto"], abs=0.5)
        assert rows[key]["rto_min"] == 10


def test_kernel_filter_returns_only_dg_sockets_among_2000_unrelated() -> None:
    require_root("ip", "nft", "ss")
    with dg_link(loss_permille=0) as pair:
        clients = [Client(pair) for _ in range(3)]
        hold = hold_loopback(1000, 46120, float(SERVER_TTL), ns=pair.a)
        try:
            total = len(pair.run("a", "ss", "-tnH", "state", "established").splitlines())
            expected = set(ss_sockets(pair))
            with ns_collector(pair, "a", "tcp", {"ports": [DG_PORT]}) as coll:
                rows = coll.tick()["rows"]
            count = pair.run(
                "a",
                sys.executable,
                "-c",
                "from sgmon.readers.inet_diag import InetDiag;"
                " print(len(InetDiag().query([1521])))",
            )
        finally:
            hold.kill()
            hold.wait(5)
            for c in clients:
                c.close()
    assert total >= 2003
    assert len(expected) == 3
    assert set(rows) - {"host"} == expected
    # InetDiag does no filtering in Python: what it returns is what the kernel sent.
    assert int(count) == 3

"""netdev against `ip -s link` on a veth between two network namespaces, drops provoked.

The collector runs INSIDE namespace ``a`` in a child process (``ip netns exec NS python``),
not via setns() in a thread: ``ip netns exec`` also remounts /sys for the namespace, so
/sys/class/net/IF/speed and carrier_changes are the namespace's, and /proc/net/* follows the
process's namespace; a thread that setns()'d would still read the host's /sys and /proc/self/net.
``NsCollector`` is shared with tests/system/kernel/test_tcp_accuracy.py.

Drops that really count as interface drops (an nftables drop does not):
* rx_dropped: Ethernet frames with an unassigned EtherType (0x88b5, "local experimental") sent
  from ``b`` over AF_PACKET reach ``va`` and no protocol handler takes them, so the core counts
  them in rx_dropped (net/core/dev.c __netif_receive_skb_core).
* tx_dropped: with the peer ``vb`` down, frames sent on ``va`` are dropped by veth_xmit and
  counted in va's tx_dropped (and vb's rx_dropped).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
from nslab import NsPair, ns_pair, require_root

from collectors.netdev import NetdevCollector
from sgmon.collector import ConfigError

pytestmark = pytest.mark.root

RUNNER = """
import json, sys, time
from sgmon import registry
c = registry.load(sys.argv[1])(json.loads(sys.argv[2]))
c.open()
prev = t_prev = None
for _ in sys.stdin:
    cur = c.sample()
    t = time.monotonic()
    dt = t - t_prev if t_prev is not None else 0.0
    print(json.dumps({"dt": dt, "rows": c.derive(prev, cur, dt)}), flush=True)
    prev, t_prev = cur, t
c.close()
"""


class NsCollector:
    """One collector sampled on demand in a child process inside a namespace."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def tick(self, timeout: float = 20.0) -> dict[str, Any]:
        """Sample once; returns {"dt": seconds since the previous sample, "rows": frame rows}."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"collector in namespace gave no sample: {self.proc.stderr}")
        return json.loads(line)


@contextmanager
def ns_collector(
    pair: NsPair, side: str, name: str, options: Mapping[str, Any]
) -> Iterator[NsCollector]:
    """Run collector ``name`` with ``options`` inside namespace ``side`` until the block ends."""
    proc = pair.popen(
        side,
        sys.executable,
        "-c",
        RUNNER,
        name,
        json.dumps(options),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield NsCollector(proc)
    finally:
        proc.kill()
        proc.wait(5)


SEND_FRAMES = """
import socket, sys
ifname, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
frame = b"\\xff" * 6 + b"\\x02\\x00\\x00\\x00\\x00\\x01" + b"\\x88\\xb5" + b"x" * size
failed = 0
for _ in range(count):
    try:
        s.send(frame)
    except OSError:
        failed += 1
print(failed)
"""

SEND_UDP = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[2])):
    s.sendto(b"u" * 1000, (sys.argv[1], 46150))
"""


def _ip_stats(pair: NsPair, side: str, ifname: str) -> dict[str, int]:
    link = json.loads(pair.run(side, "ip", "-s", "-j", "link", "show", "dev", ifname))[0]
    st = link["stats64"]
    carrier = pair.run(side, "cat", f"/sys/class/net/{ifname}/carrier_changes")
    return {
        "rx_bytes": st["rx"]["bytes"],
        "tx_bytes": st["tx"]["bytes"],
        "rx_packets": st["rx"]["packets"],
        "tx_packets": st["tx"]["packets"],
        "rx_dropped": st["rx"]["dropped"],
        "tx_dropped": st["tx"]["dropped"],
        "carrier_changes": int(carrier),
    }


def _quiet_ipv6(pair: NsPair) -> None:
    """No router solicitations or DAD in the measured interval: only our traffic moves."""
    for side in ("a", "b"):
        pair.run(side, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")


def test_netdev_matches_ip_s_link_with_drops() -> None:
    require_root("ip")
    with ns_pair("nd") as pair:
        _quiet_ipv6(pair)
        pair.run("a", sys.executable, "-c", SEND_UDP, pair.b_ip, "1")  # ARP resolved before t0
        time.sleep(0.2)
        with ns_collector(pair, "a", "netdev", {"include": [pair.a_if]}) as coll:
            coll.tick()
            before = _ip_stats(pair, "a", pair.a_if)
            t0 = coll.tick()
            # bounded traffic: 3000 UDP datagrams a->b, 400 unknown-EtherType frames b->a,
            # then 250 frames a->b while vb is down
            pair.run("a", sys.executable, "-c", SEND_UDP, pair.b_ip, "3000")
            pair.run("b", sys.executable, "-c", SEND_FRAMES, pair.b_if, "400", "200")
            pair.run("b", "ip", "link", "set", pair.b_if, "down")
            pair.run("a", sys.executable, "-c", SEND_FRAMES, pair.a_if, "250", "100")
            pair.run("b", "ip", "link", "set", pair.b_if, "up")
            time.sleep(0.3)  # let the last ICMP replies land
            t1 = coll.tick()
            after = _ip_stats(pair, "a", pair.a_if)
    assert "lo" not in t1["rows"], "lo is excluded by default"
    row, dt = t1["rows"][pair.a_if], t1["dt"]
    assert t0["rows"][pair.a_if]["rx_kb"] is not None
    delta = {k: after[k] - before[k] for k in before}
    # The provoked drops happened and are what ip shows (our traffic is the only traffic).
    assert delta["rx_dropped"] >= 400
    assert delta["tx_dropped"] >= 250
    # Tolerance: exact up to float rounding of rate * dt; ip is read just before the collector
    # at t0 and just after it at t1, with IPv6 off and no traffic of ours in flight, so nothing
    # can fall between the two tools' reads.
    assert row["rx_kb"] * 1024 * dt == pytest.approx(delta["rx_bytes"], abs=0.01)
    assert row["tx_kb"] * 1024 * dt == pytest.approx(delta["tx_bytes"], abs=0.01)
    assert row["rx_pkt"] * dt == pytest.approx(delta["rx_packets"], abs=0.01)
    assert row["tx_pkt"] * dt == pytest.approx(delta["tx_packets"], abs=0.01)
    assert row["rx_drop"] * dt == pytest.approx(delta["rx_dropped"], abs=0.01)
    assert row["tx_drop"] * dt == pytest.approx(delta["tx_dropped"], abs=0.01)
    assert row["carrier_changes"] == delta["carrier_changes"] >= 2  # down and up again
    assert row["operstate"] == "up"
    assert row["speed"] == 10000  # veth reports 10 Gbit/s
    assert row["util"] == pytest.approx(
        max(row["rx_kb"], row["tx_kb"]) * 8192 / 10_000e6 * 100, rel=1e-9
    )


def test_recreated_interface_gives_no_rate_for_one_tick() -> None:
    require_root("ip")
    with ns_pair("nd") as pair:
        add = ("ip", "link", "add", "sgx0", "type", "veth", "peer", "name", "sgx1")
        with ns_collector(pair, "a", "netdev", {"include": ["sgx*"]}) as coll:
            pair.run("a", *add)
            coll.tick()
            assert coll.tick()["rows"]["sgx0"]["rx_pkt"] == 0
            pair.run("a", "ip", "link", "del", "sgx0")
            pair.run("a", *add)  # same name, new ifindex, counters from 0
            gap = coll.tick()["rows"]["sgx0"]
            again = coll.tick()["rows"]["sgx0"]
    assert gap["rx_pkt"] is None and gap["tx_kb"] is None
    assert again["rx_pkt"] == 0


def test_unknown_interface_in_include_is_one_line_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        NetdevCollector({"include": ["sgmon-no-such0"]})
    msg = str(err.value)
    assert "\n" not in msg and "sgmon-no-such0" in msg and "existing:" in msg and "lo" in msg


def test_needs_no_pyroute2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyroute2", None)  # import would raise ImportError
    coll = NetdevCollector({"include": ["lo"]})
    coll.open()
    try:
        rows = coll.sample()
    finally:
        coll.close()
    assert rows["lo"]["rx_pkt"] >= 0 and rows["lo"]["operstate"] in ("unknown", "up")

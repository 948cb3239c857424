"""`netdev`: per interface, the counters of ip -s link and sar -n DEV / EDEV, as rates.

Instances: interface names (``lo`` excluded unless asked for), filtered by ``include``/``exclude``
globs.  Read over netlink (RTM_GETLINK, IFLA_STATS64) with pyroute2, imported when the
collector opens; an interface that is re-created (counters restart) gives no rate for one tick.
"""

from __future__ import annotations

from sgmon.collector import Collector
from sgmon.model import Field, Kind

G, R, D = Kind.GAUGE, Kind.RATE, Kind.DELTA

FIELDS = (
    Field("rx_kb", "kB/s", R, "kB received per second (sar -n DEV rxkB/s)"),
    Field("tx_kb", "kB/s", R, "kB transmitted per second (sar -n DEV txkB/s)"),
    Field("rx_pkt", "/s", R, "packets received per second (sar -n DEV rxpck/s)"),
    Field("tx_pkt", "/s", R, "packets transmitted per second (sar -n DEV txpck/s)"),
    Field("rx_err", "/s", R, "receive errors per second (ip -s link RX errors)", warn=0.001),
    Field("tx_err", "/s", R, "transmit errors per second (ip -s link TX errors)", warn=0.001),
    Field(
        "rx_drop",
        "/s",
        R,
        "received packets dropped per second (ip -s link RX dropped)",
        warn=0.001,
    ),
    Field(
        "tx_drop",
        "/s",
        R,
        "transmit packets dropped per second (ip -s link TX dropped)",
        warn=0.001,
    ),
    Field("rx_overrun", "/s", R, "receive overruns per second (ip -s -s link overrun)", warn=0.001),
    Field("rx_fifo", "/s", R, "receive FIFO errors per second (sar -n EDEV rxfifo/s)", warn=0.001),
    Field("tx_fifo", "/s", R, "transmit FIFO errors per second (sar -n EDEV txfifo/s)", warn=0.001),
    Field("carrier_changes", "count", D, "link up/down transitions in the interval", warn=1),
    Field("speed", "Mbit/s", G, "link speed, where the driver reports one"),
    Field(
        "util",
        "%",
        G,
        "busier direction as a share of link speed (sar -n DEV %ifutil)",
        warn=70,
        crit=90,
    ),
    Field("operstate", "", Kind.TEXT, "operational state (up, down, ...)"),
)


class NetdevCollector(Collector):
    """ip -s link figures from netlink."""

    name = "netdev"
    description = "interface throughput, errors, drops, overruns (ip -s link, sar -n DEV/EDEV)"
    fields = FIELDS

"""`netdev`: per interface, the counters of ip -s link and sar -n DEV / EDEV, as rates.

Instances: interface names (``lo`` excluded unless asked for), filtered by ``include``/``exclude``
globs.  Read over netlink (RTM_GETLINK, IFLA_STATS64) with pyroute2, imported when the
collector opens; an interface that is re-created (counters restart) gives no rate for one tick.

Options: ``include`` (globs; default every interface), ``exclude`` (globs; default ``["lo"]``).
An interface named literally in ``include`` is shown even if ``exclude`` matches it, and one
that does not exist is a configuration error.  Units as sar -n DEV: kB = 1024 bytes.  ``speed``
comes from /sys/class/net/IF/speed (None where the driver reports none, e.g. when down), and
``util`` is the busier direction's bit rate as a share of it (sar's %ifutil for full duplex).
"""

from __future__ import annotations

import contextlib
import fnmatch
import socket
from collections.abc import Mapping
from typing import Any

from sgmon.collector import Collector, ConfigError, Unavailable, derive_by_kind
from sgmon.model import Field, Kind, Rows, Value

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

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.include = _globs(self.options.get("include", []), "include")
        self.exclude = _globs(self.options.get("exclude", ["lo"]), "exclude")
        literal = [p for p in self.include if not _is_glob(p)]
        if literal:
            present = [name for _, name in socket.if_nameindex()]
            unknown = [p for p in literal if p not in present]
            if unknown:
                raise ConfigError(
                    f"netdev include: no interface {', '.join(unknown)} on this host; "
                    f"existing: {', '.join(sorted(present))}"
                )
        self._literal = set(literal)
        self._ipr: Any = None

    def open(self) -> None:
        """Import pyroute2 and open the rtnetlink socket (on the collector's own thread)."""
        try:
            from pyroute2 import IPRoute
        except ImportError:
            raise Unavailable("pyroute2 is not installed: pip install pyroute2") from None
        self._ipr = IPRoute()

    def wanted(self, name: str) -> bool:
        """Whether the include/exclude options select this interface."""
        if name in self._literal:
            return True
        if self.include and not any(fnmatch.fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, p) for p in self.exclude)

    def sample(self) -> Rows:
        """One RTM_GETLINK dump: raw cumulative counters per selected interface."""
        assert self._ipr is not None, "open() first"
        rows: Rows = {}
        for link in self._ipr.get_links():
            name = link.get_attr("IFLA_IFNAME")
            st = link.get_attr("IFLA_STATS64")
            if not name or st is None or not self.wanted(name):
                continue
            rows[name] = {
                "ifindex": link["index"],
                "rx_kb": st["rx_bytes"] / 1024,
                "tx_kb": st["tx_bytes"] / 1024,
                "rx_pkt": st["rx_packets"],
                "tx_pkt": st["tx_packets"],
                "rx_err": st["rx_errors"],
                "tx_err": st["tx_errors"],
                "rx_drop": st["rx_dropped"],
                "tx_drop": st["tx_dropped"],
                "rx_overrun": st["rx_over_errors"],
                "rx_fifo": st["rx_fifo_errors"],
                "tx_fifo": st["tx_fifo_errors"],
                "carrier_changes": link.get_attr("IFLA_CARRIER_CHANGES"),
                "speed": _speed(name),
                "operstate": str(link.get_attr("IFLA_OPERSTATE") or "").lower() or None,
            }
        return rows

    def derive(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        """Rates by kind, none for an interface whose ifindex changed (re-created), and util."""
        if prev:
            prev = {
                name: row
                for name, row in prev.items()
                if name in cur and row.get("ifindex") == cur[name].get("ifindex")
            }
        out = derive_by_kind(self.fields, prev, cur, dt, self.wrap_bits)
        for row in out.values():
            row["util"] = _util(row)
        return out

    def close(self) -> None:
        """Close the rtnetlink socket (idempotent)."""
        if self._ipr is not None:
            self._ipr.close()
            self._ipr = None


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _globs(value: Any, option: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(p, str) for p in items):
        raise ConfigError(f'netdev {option}: use a list of interface names or globs, e.g. ["eth*"]')
    return tuple(items)


def _speed(name: str) -> int | None:
    """Link speed in Mbit/s from sysfs; None when unknown (-1, down, virtual without one)."""
    with contextlib.suppress(OSError, ValueError), open(f"/sys/class/net/{name}/speed") as f:
        mbit = int(f.read())
        return mbit if mbit > 0 else None
    return None


def _util(row: Mapping[str, Value]) -> float | None:
    """sar %ifutil (full duplex): the busier direction's bit rate over the link speed."""
    speed, rx, tx = row.get("speed"), row.get("rx_kb"), row.get("tx_kb")
    if not isinstance(speed, int | float) or speed <= 0 or rx is None or tx is None:
        return None
    return max(float(rx), float(tx)) * 1024 * 8 / (speed * 1e6) * 100  # type: ignore[arg-type]

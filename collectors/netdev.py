"""`netdev`: per interface, the counters of ip -s link and sar -n DEV / EDEV, as rates.

Instances: interface names (``lo`` excluded unless asked for), filtered by ``include``/``exclude``
globs.  Read over netlink (one RTM_GETLINK dump: IFLA_STATS64, IFLA_OPERSTATE,
IFLA_CARRIER_CHANGES); an interface that is re-created (new ifindex, or counters that went back)
gives no rate for one tick.

The dump is read by sgmon/readers/rtnl.py (stdlib only; why not pyroute2 is measured there).

Under the ``root`` option (another host's proc/ and sys/, see sgmon/collector.py) netlink would
answer for this machine, not that directory, so the counters come from ROOT/proc/net/dev instead,
as sar reads them: rx_drop there includes rx_missed, and rx_overrun, carrier_changes and
operstate are not in it (None).  In a container with the host's /proc mounted, that file shows the
network namespace of the container (so run it with the host's network), as node_exporter's does.
"""

from __future__ import annotations

import contextlib
import fnmatch
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from sgmon.collector import Collector, ConfigError, RawRows, Unavailable, derive_by_kind
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.readers.procfile import ProcFile
from sgmon.readers.rtnl import (
    COLLISIONS,
    MULTICAST,
    RX_BYTES,
    RX_DROPPED,
    RX_ERRORS,
    RX_FIFO,
    RX_OVER,
    RX_PACKETS,
    TX_BYTES,
    TX_DROPPED,
    TX_ERRORS,
    TX_FIFO,
    TX_PACKETS,
    Link,
    Rtnl,
)

G, R, D = Kind.GAUGE, Kind.RATE, Kind.DELTA
SPEED_REFRESH = 30.0
"""Seconds a link's sysfs speed is kept without a carrier or state change."""

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
    rows = (RowKind("interface", label="device"),)
    description = "interface throughput, errors, drops, overruns (ip -s link, sar -n DEV/EDEV)"
    option_rules: ClassVar[Mapping[str, Rule]] = {"include": rules.texts, "exclude": rules.texts}
    fields = FIELDS
    remote_files: ClassVar[Mapping[str, str]] = {
        "/proc/net/dev": "tick",  # under a root: no rtnetlink
        "/sys/class/net/*/speed": "slow",
    }

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.include = _globs(self.options.get("include", []), "include")
        self.exclude = _globs(self.options.get("exclude", ["lo"]), "exclude")
        self._net = self.path("/sys/class/net")
        self._dev_path = self.path("/proc/net/dev")
        literal = [p for p in self.include if not _is_glob(p)]
        if literal:
            present = self._present()
            unknown = [p for p in literal if p not in present]
            if unknown:
                raise ConfigError(
                    f"netdev include: no interface {', '.join(unknown)} on this host; "
                    f"existing: {', '.join(sorted(present))}"
                )
        self._literal = set(literal)
        self._rtnl: Rtnl | None = None
        self._dev: ProcFile | None = None  # ROOT/proc/net/dev, under a root
        self._speeds: dict[str, tuple[tuple, float, int | None]] = {}
        self._selected: dict[str, bool] = {}
        """wanted() by interface name: the globs are matched once per name, not per tick."""
        self._rows: dict[str, tuple[Link, dict[str, Value] | None, float]] = {}
        """name -> the Link of the last sample, its raw row (None: not selected) and when its
        speed was read: a Link that comes back as the same object (its message did not
        change) keeps its row object, which the engine reads as "nothing moved" (derive_moved)."""

    def _present(self) -> list[str]:
        """The interfaces there are: this machine's, or those of the root's /proc/net/dev."""
        if self.root == "/":
            return [name for _, name in socket.if_nameindex()]
        try:
            with open(self._dev_path) as f:
                return [link.name for link in parse_net_dev(f.read())]
        except OSError:
            return []  # open() says why

    def open(self) -> None:
        """Open the rtnetlink socket (in the namespace of the collector's own thread), or under
        a root its /proc/net/dev."""
        if self.root != "/":
            try:
                self._dev = ProcFile(self._dev_path)
            except OSError as e:
                raise Unavailable(f"cannot read {self._dev_path}: {e.strerror}") from None
            return
        try:
            self._rtnl = Rtnl()
        except (OSError, AttributeError) as e:  # AttributeError: no AF_NETLINK (not Linux)
            raise Unavailable(f"no rtnetlink here ({e}); needs Linux") from None

    def wanted(self, name: str) -> bool:
        """Whether the include/exclude options select this interface (remembered by name)."""
        verdict = self._selected.get(name)
        if verdict is None:
            if len(self._selected) >= 4096:  # interfaces come and go (containers)
                self._selected.clear()
            verdict = self._selected[name] = self._select(name)
        return verdict

    def _select(self, name: str) -> bool:
        """wanted() worked out: the literal names, then the include and exclude globs."""
        if name in self._literal:
            return True
        if self.include and not any(fnmatch.fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(name, p) for p in self.exclude)

    def sample(self) -> Rows:
        """One RTM_GETLINK dump (or /proc/net/dev read): raw cumulative counters per selected
        interface."""
        links: Iterable[Link]
        if self._dev is not None:
            links = parse_net_dev(self._dev.read())
        else:
            assert self._rtnl is not None, "open() first"
            links = self._rtnl.links()
        rows: Rows = {}
        kept, seen = self._rows, {}
        now = time.monotonic()
        for link in links:
            hit = kept.get(link.name)
            if hit is None or hit[0] is not link or now - hit[2] >= SPEED_REFRESH:
                row = self._row(link) if link.stats is not None and self.wanted(link.name) else None
                hit = (link, row, self._speeds[link.name][1] if row is not None else now)
            seen[link.name] = hit
            if hit[1] is not None:
                rows[link.name] = hit[1]
        self._rows = seen
        for name in self._speeds.keys() - rows.keys():
            del self._speeds[name]
        return rows

    def _row(self, link: Link) -> dict[str, Value]:
        """The raw row of a selected interface."""
        st = link.stats
        assert st is not None
        return {
            "ifindex": link.ifindex,
            "rx_kb": st[RX_BYTES] / 1024,  # type: ignore[operator]
            "tx_kb": st[TX_BYTES] / 1024,  # type: ignore[operator]
            "rx_pkt": st[RX_PACKETS],
            "tx_pkt": st[TX_PACKETS],
            "rx_err": st[RX_ERRORS],
            "tx_err": st[TX_ERRORS],
            "rx_drop": st[RX_DROPPED],
            "tx_drop": st[TX_DROPPED],
            "rx_overrun": st[RX_OVER],
            "rx_fifo": st[RX_FIFO],
            "tx_fifo": st[TX_FIFO],
            "carrier_changes": link.carrier_changes,
            "speed": self._speed(link),
            "operstate": link.operstate,
        }

    def _speed(self, link: Link) -> int | None:
        """The link's speed from sysfs, read again at a carrier or state change (when a link
        renegotiates) and every SPEED_REFRESH seconds (a bond gaining a slave): an open, read
        and close per interface and tick cost more than decoding the whole netlink dump."""
        key = (link.ifindex, link.carrier_changes, link.operstate)
        now = time.monotonic()
        hit = self._speeds.get(link.name)
        if hit is None or hit[0] != key or now - hit[1] >= SPEED_REFRESH:
            hit = self._speeds[link.name] = (key, now, _speed(self._net, link.name))
        return hit[2]

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
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
        """Close the rtnetlink socket or /proc/net/dev (idempotent)."""
        if self._rtnl is not None:
            self._rtnl.close()
            self._rtnl = None
        if self._dev is not None:
            self._dev.close()
            self._dev = None


def _is_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _globs(value: Any, option: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(p, str) for p in items):
        raise ConfigError(f'netdev {option}: use a list of interface names or globs, e.g. ["eth*"]')
    return tuple(items)


# /proc/net/dev's 16 columns -> where rtnl_link_stats64 has them (net/core/net-procfs.c prints
# rx_dropped + rx_missed_errors as drop, and sums of the other error kinds as frame and carrier)
_NET_DEV = (
    RX_BYTES, RX_PACKETS, RX_ERRORS, RX_DROPPED, RX_FIFO, None, None, MULTICAST,
    TX_BYTES, TX_PACKETS, TX_ERRORS, TX_DROPPED, TX_FIFO, COLLISIONS, None, None,
)  # fmt: skip


def parse_net_dev(text: str) -> list[Link]:
    """/proc/net/dev -> a Link per interface, its counters where RTM_GETLINK has them and None
    for those the file does not show (no ifindex, operstate or carrier changes either)."""
    links = []
    for line in text.splitlines()[2:]:  # two header lines
        name, _, rest = line.partition(":")
        stats: list[int | None] = [None] * (TX_FIFO + 1)
        for at, value in zip(_NET_DEV, rest.split(), strict=False):
            if at is not None:
                stats[at] = int(value)
        links.append(Link(0, name.strip(), None, None, tuple(stats)))
    return links


def _speed(net: str, name: str) -> int | None:
    """Link speed in Mbit/s from sysfs (``net``: its class/net directory); None when unknown (-1,
    down, virtual without one)."""
    with contextlib.suppress(OSError, ValueError), open(f"{net}/{name}/speed") as f:
        mbit = int(f.read())
        return mbit if mbit > 0 else None
    return None


def _util(row: Mapping[str, Value]) -> float | None:
    """sar %ifutil (full duplex): the busier direction's bit rate over the link speed."""
    speed, rx, tx = row.get("speed"), row.get("rx_kb"), row.get("tx_kb")
    if not isinstance(speed, int | float) or speed <= 0 or rx is None or tx is None:
        return None
    return max(float(rx), float(tx)) * 1024 * 8 / (speed * 1e6) * 100  # type: ignore[arg-type]

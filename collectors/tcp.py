"""`tcp`: the Data Guard TCP sockets as ss -tinmp shows them, and host-wide TCP loss counters.

Instances: one per socket, ``LADDR:LPORT>PADDR:PPORT`` (IPv6 addresses in brackets, IPv4-mapped
peers shown as IPv4); plus ``host`` for the host-wide counters of /proc/net/snmp and
/proc/net/netstat (collectors/tcp_host.py).  Sockets are selected in the kernel by an inet_diag
bytecode filter on the Data Guard ports (local or remote) and, when ``peers`` is given, on the
peer address, so unrelated client connections on the listener port never reach Python (see
sgmon/readers/inet_diag.py for why raw netlink and a lean tcp_info decode instead of pyroute2's
DiagSocket).

Between two such dumps the sockets already found are re-read by exact lookup in the kernel's
socket hash, which costs the same with 200 or 20,000 unrelated sockets (a dump walks them all:
~0.2 us each per address family, measured in bench/tcp_cost.py).  A socket that is gone or left
the connected states triggers a dump at once, so a reconnect shows on the next tick; a brand-new
extra connection shows within ``rediscover`` seconds (default 10), and the dump that finds it is
skipped while the host has opened no TCP connection at all since the last one (ActiveOpens +
PassiveOpens of /proc/net/snmp, read each tick anyway).  While no DG socket exists, a tick
dumps only when the host has opened or accepted a connection since the last dump (a new socket
always comes with one, counted before it can be seen), and the dumps that find none space out,
1, 2, 4, 8 seconds up to ``rediscover``: the first DG connection after a start shows within a
second or two, and a primary whose standby is away while its clients log on every second walks
its sockets once every ``rediscover`` seconds, not every tick (a dump walks the kernel's whole
socket hash, ~3.7 ms on a 262,144-bucket table whatever the count).

Which end's port counts (``direction``): a primary's Data Guard sockets are the connections it
opened to the standby's listener (remote port in ``ports``), while its own listener port carries
every client connection of the database; a standby's are the connections its listener accepted
(local port).  ``auto`` (the default) takes "out" on a primary, "in" on a standby, and "both"
where the role is unknown or ``peers`` is set (the peer filter then keeps the clients out, and a
gap fetch the other way shows too).  The role is the host's database's own (V$DATABASE, as the
oracle_dg collector last read it, ``sgmon.readers.roles``) where it has one, else the configured
one: after a switchover the direction follows at the next tick, with a ``role`` event saying so.
A cascading standby or a far sync instance (which also sends redo on) needs ``direction =
"both"``.

Options: ``ports`` (list of port numbers, default [1521]), ``peers`` (addresses or CIDR networks,
default all), ``direction`` (auto, out, in, both; see above), ``rediscover`` (seconds between
full dumps, see above; 0 = every tick).  Units follow ss: rto/rtt/rttvar in ms (tcp_info carries
us), delivery_rate in B/s (ss prints bit/s), ``retransmits`` = increase of tcpi_total_retrans over
the interval.

``rto_min`` is read from the route toward each peer (``ip route get``'s RTAX_RTO_MIN, ms, over
rtnetlink, see sgmon/readers/rtnl.py), cached per peer for ``SETTINGS_REFRESH`` seconds.
``pid`` and ``process`` come from a /proc/*/fd scan (what ss -p does, sgmon/readers/owners.py),
run only when a socket we have not resolved appears, in small time slices; None when not
visible.

Under the ``root`` option (a directory holding another host's proc/, see sgmon/collector.py) the
host row is read from that tree; the sockets come from netlink, which answers for this
machine's network namespace, not for a directory, so they are read only where the tree holds
that host's own sock_diag replies (``SOCK_DIAG_DUMP``, shipped by a remote pump that finds them
by this collector's own selection, ``remote_selection``, with the routes toward their peers), and
else left out with an event saying so once.  Their owners are not read under a root.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from collectors import tcp_host
from collectors.dgsockets import BY_ROLE, dg_selection, endpoint, seconds
from collectors.tcp_host import SETTINGS_REFRESH
from sgmon.collector import Collector, RawRows, Unavailable, derive_by_kind
from sgmon.config import rules
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Event, Field, Kind, Rows, Value
from sgmon.rates import counter_delta, counter_rate
from sgmon.readers import roles
from sgmon.readers.inet_diag import (
    CONNECTED,
    FIGURES,
    SOCK_DIAG_DUMP,
    DiagSock,
    DumpedDiag,
    Figures,
    InetDiag,
    Selection,
    figures,
)
from sgmon.readers.owners import Owners
from sgmon.readers.rtnl import ROUTES_DUMP, RTAX_RTO_MIN, DumpedRoutes, Rtnl
from sgmon.readers.tcp_info import TCP_STATES

G, R, D, T = Kind.GAUGE, Kind.RATE, Kind.DELTA, Kind.TEXT

ROUTE_LOOKUPS_PER_TICK = 4
"""Cap on route look-ups per sample, so many peers never make one tick slow."""
_INODE, _TOTAL_RETRANS, _BYTES_ACKED, _BYTES_RECEIVED = (
    FIGURES.index(name) for name in ("inode", "total_retrans", "bytes_acked", "bytes_received")
)

FIELDS = (
    Field("state", "", T, "TCP state (ESTAB, ...)"),
    Field("local", "", T, "local address:port"),
    Field("peer", "", T, "peer address:port"),
    Field("rto", "ms", G, "retransmission timeout (ss rto)", warn=200, combine="max"),
    Field("rtt", "ms", G, "smoothed round-trip time (ss rtt)", warn=5, crit=20),
    Field("rttvar", "ms", G, "round-trip time variation (ss rtt .../var)"),
    Field("cwnd", "segs", G, "congestion window (ss cwnd)"),
    Field("ssthresh", "segs", G, "slow-start threshold (ss ssthresh)"),
    Field("unacked", "segs", G, "segments sent, not yet acknowledged (ss unacked)"),
    Field("lost", "segs", G, "segments considered lost (ss lost)"),
    Field("retrans", "segs", G, "retransmitted segments in flight now (ss retrans a/.)"),
    Field(
        "retransmits", "count", D, "segments retransmitted in the interval (ss retrans ./b)", warn=1
    ),
    Field("bytes_acked", "B/s", R, "bytes acknowledged per second (ss bytes_acked)"),
    Field("bytes_received", "B/s", R, "bytes received per second (ss bytes_received)"),
    Field("send_q", "B", G, "bytes not yet acknowledged by the peer (ss Send-Q)"),
    Field("recv_q", "B", G, "bytes not yet read by the process (ss Recv-Q)"),
    Field("sndbuf", "B", G, "socket send buffer limit (ss skmem tb)"),
    Field("rcvbuf", "B", G, "socket receive buffer limit (ss skmem rb)"),
    Field("delivery_rate", "B/s", G, "recent delivery rate (ss delivery_rate / 8)"),
    Field("pid", "", G, "owning process id, where visible (ss -p)", export=False),
    Field("process", "", T, "owning process name, where visible (ss -p)"),
    Field("rto_min", "ms", G, "rto_min on the route toward the peer, if set (ip route)"),
    Field("active_opens", "/s", R, "host-wide connections opened per second (sar -n TCP active/s)"),
    Field(
        "passive_opens", "/s", R, "host-wide connections accepted per second (sar -n TCP passive/s)"
    ),
    Field("retrans_segs", "/s", R, "host-wide segments retransmitted per second (RetransSegs)"),
    Field("timeouts", "/s", R, "host-wide RTO expiries per second (TCPTimeouts)", warn=1),
    Field("lost_retransmit", "/s", R, "host-wide retransmits lost again (TCPLostRetransmit)"),
    Field("rmem_max", "B", G, "largest receive buffer a socket may ask for (net.core.rmem_max)"),
    Field("wmem_max", "B", G, "largest send buffer a socket may ask for (net.core.wmem_max)"),
    Field("tcp_rmem_max", "B", G, "largest receive buffer autotuning grows to (tcp_rmem max)"),
    Field("tcp_wmem_max", "B", G, "largest send buffer autotuning grows to (tcp_wmem max)"),
)


def idle_wait(empty: int, rediscover: float) -> float:
    """Seconds until the next dump after ``empty`` dumps in a row found no DG socket (0: one
    found): 1, 2, 4, 8 ... up to ``rediscover``; ``rediscover`` itself once one is known."""
    return rediscover if not empty else min(rediscover, float(1 << min(empty - 1, 16)))


def _opens(host: Mapping[str, Value]) -> int | None:
    """Connections the host has opened and accepted so far, or None when not readable."""
    active, passive = host.get("active_opens"), host.get("passive_opens")
    return active + passive if isinstance(active, int) and isinstance(passive, int) else None


class TcpCollector(Collector):
    """ss -tinmp figures for the Data Guard sockets, from inet_diag netlink."""

    name = "tcp"
    rows = (RowKind("host", fixed="host"), RowKind("socket", label="socket"))
    description = "Data Guard TCP sockets: rto, rtt, retransmits, buffers (ss -tinmp)"
    option_rules: ClassVar[Mapping[str, Rule]] = {
        "ports": rules.ports,
        "peers": rules.peers,
        "direction": rules.one_of("auto", "out", "in", "both"),
        "rediscover": rules.seconds_in(0.0, 3600.0),
    }
    fields = FIELDS
    remote_files: ClassVar[Mapping[str, str]] = tcp_host.FILES

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.ports, self.peers, self.direction = dg_selection(self.options)
        self._auto = self.options.get("direction", "auto") == "auto" and not self.peers
        self._role = str(self.options.get("role") or "")
        """The role the direction follows: the config's, then the database's (``roles``)."""
        self.rediscover = seconds(self.options.get("rediscover", 10.0), "rediscover")
        self._known: list[DiagSock] = []
        self._labels: list[tuple[str, str, str, str]] = []  # the known sockets' _names
        self._inodes: set[int] = set()  # of the known sockets, for the owners
        self._peers: set[str] = set()  # their peer addresses, for the routes
        self._next_dump = 0.0
        self._opens_at_dump: int | None = None
        self._empty_dumps = 0  # dumps in a row that found no DG socket: they space out
        self._names: dict[bytes, tuple[str, str, str, str]] = {}
        """sockid -> local, peer, row key, peer address: built once per socket, not per tick."""
        self._diag: InetDiag | DumpedDiag | None = None
        self._rtnl: Rtnl | DumpedRoutes | None = None
        self._host = tcp_host.HostCounters()
        self._owners = Owners(self.path("/proc"))
        """The sockets' owning processes, read on this machine only (``root`` /): a tree under
        another root holds no /proc/*/fd of the host whose sockets it ships."""
        self._routes: dict[str, tuple[float | None, float]] = {}

    def open(self) -> None:
        """Open the sock_diag and rtnetlink sockets and the /proc counters; under a ``root``,
        the counters alone (Unavailable when its /proc/net/snmp cannot be read)."""
        live = self.root == "/"
        if live:
            try:
                self._diag = InetDiag()
            except (OSError, AttributeError) as e:  # AttributeError: no AF_NETLINK (not Linux)
                raise Unavailable(
                    f"no sock_diag netlink here ({e}); needs Linux inet_diag"
                ) from None
        counters = self._host.open(self.path)
        if not live:
            if not counters:
                self.close()
                snmp = self.path(tcp_host.SNMP[0])
                raise Unavailable(f"cannot read {snmp}: no host TCP counters there")
            dump = self.path(SOCK_DIAG_DUMP)
            if os.path.exists(dump):  # a pump's: the sockets, and the routes to their peers
                self._diag, self._rtnl = DumpedDiag(dump), DumpedRoutes(self.path(ROUTES_DUMP))
                return
            self.emit_event(
                Event(
                    time.time(),
                    self.name,
                    "root",
                    "host",
                    f"root = {self.root}: host TCP counters only; the sockets come from netlink, "
                    "which reads this machine's network namespace, not a directory",
                )
            )
            return
        try:
            self._rtnl = Rtnl()
        except OSError:
            self._rtnl = None  # rto_min stays None; the rest does not need the route

    def sample(self) -> RawRows:
        """The DG sockets (kernel-filtered dump or exact lookups), plus the host row.  A
        socket's raw row is (FIGURES, label, owner, rto_min): ``derive`` builds its frame row
        once, with the interval's counters, rather than a dict here and a copy there."""
        now = time.monotonic()
        host = self._host.read(now)
        if self._diag is None:  # under a root without its sockets: the host row alone
            return {"host": host} if host else {}
        self._follow_role()
        found = self._sockets(now, _opens(host))
        owners = self._owners.resolve(self._inodes) if self.root == "/" else {}
        rto_min = self._route_minima(now)
        rows: dict[str, Any] = {
            label[2]: (fig, label, owners.get(fig[_INODE]), rto_min.get(label[3]))
            for label, fig in zip(self._labels, found, strict=True)
        }
        if host:
            rows["host"] = host
        return rows

    def derive(self, prev: RawRows | None, cur: RawRows, dt: float) -> Rows:
        """Frame rows: a socket's tcp_info in ss units, its retransmits and bytes over the
        interval (None for a socket new since the last sample); the host row by kind."""
        out: Rows = {}
        before = prev or {}
        for key, raw in cur.items():
            if key == "host":
                host = {"host": before["host"]} if "host" in before else None
                out[key] = derive_by_kind(self.fields, host, {"host": raw}, dt, sparse=True)["host"]
                continue
            fig, (local, peer, _, _), owner, rto_min = raw
            (_, _, state, rq, wq, _, rto, rtt, rttvar, cwnd, ssthresh, unacked, lost, retrans,
             total_retrans, acked, received, rate, rcvbuf, sndbuf) = fig  # fmt: skip
            last = before.get(key)
            retransmits = acked_s = received_s = None
            if last is not None:  # as derive_by_kind: a delta, and two rates over dt
                was = last[0]
                retransmits = counter_delta(was[_TOTAL_RETRANS], total_retrans)
                acked_s = counter_rate(was[_BYTES_ACKED], acked, dt)
                received_s = counter_rate(was[_BYTES_RECEIVED], received, dt)
            out[key] = {
                "state": TCP_STATES[state] if state < len(TCP_STATES) else str(state),
                "local": local,
                "peer": peer,
                "rto": None if rto is None else rto / 1000,
                "rtt": None if rtt is None else rtt / 1000,
                "rttvar": None if rttvar is None else rttvar / 1000,
                "cwnd": cwnd,
                "ssthresh": ssthresh if ssthresh is None or ssthresh < 0xFFFF else None,
                "unacked": unacked,
                "lost": lost,
                "retrans": retrans,
                "retransmits": retransmits,
                "bytes_acked": acked_s,
                "bytes_received": received_s,
                "send_q": wq,
                "recv_q": rq,
                "sndbuf": sndbuf,
                "rcvbuf": rcvbuf,
                "delivery_rate": rate,
                "pid": owner[0] if owner else None,
                "process": owner[1] if owner else None,
                "rto_min": rto_min,
            }
        return out

    def _follow_role(self) -> None:
        """``auto``: after a switchover, take the other end as the database's role now says,
        without a restart, and say so (an event) when it differs from the config."""
        if not self._auto:
            return
        role = roles.of(str(self.options.get("host") or ""))
        if role is None or role == self._role:
            return
        configured = str(self.options.get("role") or "none")
        self._role, self.direction = role, BY_ROLE.get(role, "both")
        self._known, self._next_dump, self._opens_at_dump = [], 0.0, None  # dump again now
        self._empty_dumps = 0
        self.emit_event(
            Event(
                time.time(),
                self.name,
                "role",
                "host",
                f"the database is {role} (config: {configured}): DG sockets now taken "
                f"{'outbound' if self.direction == 'out' else 'inbound'}",
            )
        )

    def _sockets(self, now: float, opens: int | None) -> list[Figures]:
        """The DG sockets' FIGURES: exact lookups of the known ones, or a kernel-filtered dump
        when one of them is gone, or when the host has opened a connection since the last dump
        (``opens``; None when unknown) and the next dump is due (see the module)."""
        assert self._diag is not None
        opened = not self.rediscover or opens is None or opens != self._opens_at_dump
        if not self._known and not (opened and now >= self._next_dump):
            return []  # none before, and no connection since that could be one, or not yet due
        if self._known and not (opened and now >= self._next_dump):
            fresh = self._diag.lookup(self._known)
            if all(f is not None and CONNECTED >> f[2] & 1 for f in fresh):
                return fresh  # type: ignore[return-value]
        return self._dump(now, opens)

    def _dump(self, now: float, opens: int | None) -> list[Figures]:
        """Find the DG sockets anew (the kernel filters them), and what follows from them: their
        names, inodes and peers."""
        assert self._diag is not None
        self._known = self._diag.query(self.ports, self.peers, direction=self.direction)
        names = self._names
        self._names = {}
        for s in self._known:
            named = names.get(s.sockid)
            if named is None:
                local, peer = endpoint(s.src, s.sport), endpoint(s.dst, s.dport)
                named = (local, peer, f"{local}>{peer}", s.dst)
            self._names[s.sockid] = named
        self._labels = [self._names[s.sockid] for s in self._known]
        self._inodes = {s.inode for s in self._known}
        self._peers = {s.dst for s in self._known}
        for gone in self._routes.keys() - self._peers:  # the peers change only here
            del self._routes[gone]
        self._empty_dumps = 0 if self._known else self._empty_dumps + 1
        self._next_dump = now + idle_wait(self._empty_dumps, self.rediscover)
        self._opens_at_dump = opens
        return [figures(s) for s in self._known]

    def remote_selection(self) -> Selection:
        """The sockets a remote pump finds for this collector on its host: these ports, peers,
        direction (``auto``: the role's now; the pump source sends the other end's after a
        switchover) and ``rediscover``."""
        return Selection(self.ports, self.peers, self.direction, self.rediscover)

    def _route_minima(self, now: float) -> dict[str, float | None]:
        """Peer -> the route's rto_min toward it (ms), each cached for SETTINGS_REFRESH
        seconds; at most ROUTE_LOOKUPS_PER_TICK look-ups per tick."""
        budget = ROUTE_LOOKUPS_PER_TICK
        for peer in self._peers:
            hit = self._routes.get(peer)
            if self._rtnl is None or (hit and now - hit[1] < SETTINGS_REFRESH) or budget <= 0:
                continue
            try:
                value = self._rtnl.route_metric(peer, RTAX_RTO_MIN)
            except OSError:  # no route (unreachable peer): nothing to show, not an error
                value = None
            self._routes[peer] = (value, now)
            budget -= 1
        return {peer: hit[0] for peer, hit in self._routes.items()}

    def close(self) -> None:
        """Release the netlink sockets and /proc descriptors (idempotent)."""
        if self._diag is not None:
            self._diag.close()
            self._diag = None
        if self._rtnl is not None:
            self._rtnl.close()
            self._rtnl = None
        self._host.close()

"""The Data Guard link: retransmission stalls and loss (seed 001), NIC saturation, round-trip
latency and socket buffers against the bandwidth-delay product (seed 000 "Network")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from sgmon.analysis.budget import mean
from sgmon.analysis.context import Context, HostView, once
from sgmon.analysis.rules.base import (
    ADVICE,
    CAUSE,
    LOSSY,
    RECENT,
    Claim,
    host_rule,
    rule,
)
from sgmon.analysis.rules.retransmits import last_retransmit
from sgmon.analysis.rules.silent import silent
from sgmon.contract import Num, Row
from sgmon.fields import NETDEV, PROCS, TCP
from sgmon.grading import Limit
from sgmon.model import number
from sgmon.symmetry.hosts import interface_up
from sgmon.units import bdp_bytes, fmt_num, mbit_bytes, plural
from sgmon.verdicts import SeriesKey


class _Loss(NamedTuple):
    """A host's worst-retransmitting DG socket as its frame and series show it: the same for
    every primary instance (``retransmitting``)."""

    n: float
    inst: str
    rto: float
    stall: float
    """The rto from which a loss stalls the write (the socket's warn level)."""
    peer: str
    keys: list[SeriesKey]
    said: list[str]
    """The evidence before the socket's last retransmission (which each evaluation lines up
    with the traced writes of its own hosts)."""
    sender: list[str]
    """And after it: the sender seen waiting (``_sender_waiting``)."""


def retransmitting(ctx: Context, view: HostView) -> _Loss | None:
    """The host's DG socket with the most segments retransmitted in the last ``RECENT`` ticks,
    with what its frame alone says of it; None without one or without an rto."""
    h = view.name
    worst = _most_retransmitted(ctx, view)
    if worst is None:
        return None
    n, inst, row = worst
    rto = _base_rto(ctx.recent(TCP.rto.key(h, inst), RECENT), TCP.rto.of(row))
    if rto is None:
        return None
    lim = ctx.grader.limit(*TCP.rto.key(h, inst))
    stall = lim.warn if lim and lim.warn else 200.0
    peer = (TCP.peer.of(row) or "PEER").rsplit(":", 1)[0]
    keys = [f.key(h, inst) for f in (TCP.retransmits, TCP.rto, TCP.lost, TCP.retrans)]
    keys += [f.key(h, TCP.Rows.host.fixed) for f in (TCP.timeouts, TCP.retrans_segs)]
    said = _loss_said(view, inst, n, rto, row)
    return _Loss(n, inst, rto, stall, peer, keys, said, _sender_waiting(ctx, h, inst, row))


BACKED_OFF = 1.5
"""An rto this many times its lowest in the last ticks is backed off after an expiry (Linux
doubles it at each one): not the rto a stall waits out first."""


def _base_rto(recent: list[float], now: float | None) -> float | None:
    """The rto the finding cites: the socket's now, as its pane shows it (it moves with the
    round trip's variance, 206 then 207 ms), unless it is backed off after an expiry; then its
    lowest of the last ticks, the rto each new loss waits out first."""
    if now is None:
        return min(recent, default=None)
    lowest = min(recent, default=now)
    return lowest if now >= BACKED_OFF * lowest else now


def _most_retransmitted(ctx: Context, view: HostView) -> tuple[float, str, Row] | None:
    """(segments, socket, row) of the host's DG socket with the most segments retransmitted in
    the last ``RECENT`` ticks; None when none retransmitted any."""
    worst: tuple[float, str, Row] | None = None
    for inst, row in TCP.Rows.socket.of(view.frame.rows(TCP.name)).items():
        if silent(row):  # no ack at all: standby_silent's, not a loss
            continue
        n = sum(ctx.recent(TCP.retransmits.key(view.name, inst), RECENT))
        if n > 0 and (worst is None or n > worst[0]):
            worst = (n, inst, row)
    return worst


def _loss_said(view: HostView, inst: str, n: float, rto: float, row: Row) -> list[str]:
    """What the frame says of the loss: the socket's retransmissions, its rto and its route's
    rto_min, and the host's RTO expiries."""
    rto_min = TCP.rto_min.of(row)
    said = [
        f"{inst}: {plural(n, 'segment')} retransmitted in the last {RECENT} ticks, "
        f"rto {fmt_num(rto)} ms, route rto_min "
        + (f"{fmt_num(rto_min)} ms" if rto_min is not None else "unset (kernel 200 ms)"),
    ]
    to = TCP.timeouts.at(view.frame, TCP.Rows.host.fixed)
    if to:
        said.append(f"host-wide RTO expiries {fmt_num(to)}/s (TCPTimeouts)")
    return said


def _route_everywhere(ctx: Context, host: str) -> str:
    """Where the rto_min route must be set: on every host that ships this redo (each RAC
    instance has its own NSS socket), and kept across reboots, as the seed's author did."""
    rac = sorted({host, *ctx.instances}) if host == ctx.primary_name and ctx.instances else []
    where = f"on every instance's host ({', '.join(rac)})" if rac else f"on {host}"
    return (
        f"set the route {where} and make it survive a reboot (a oneshot systemd unit, as in "
        '"A story about Data Guard and network latency"); a route the next boot forgets brings '
        "the stalls back"
    )


@rule("rto_stall", seed="001", weight=CAUSE)
def rto_stall(ctx: Context) -> Iterable[Claim]:
    """Seed 001: segments retransmitted on a DG socket wait out a 200 ms RTO each time."""
    for h, view in ctx.hosts.items():
        loss = once(ctx, view, retransmitting)
        if loss is None:
            continue
        n, inst, rto, stall, peer, keys, said, sender = loss
        ev = [*said]  # the look is shared by every instance's evaluation: extended on a copy
        kind = last_retransmit(ctx, view.frame, inst, rto, ev)
        ev += sender
        if rto >= stall:
            ev.append(
                f"each lost segment stalls the SYNC write ~{fmt_num(rto)} ms (A story about Data "
                "Guard and network latency)"
                + (f", here by {kind.said}" if kind is not None else "")
                + f"; fix: ip route change {peer} dev <if> ... rto_min 10ms (dial in for your "
                "network)"
                + (
                    ": rto_min shortens the tail-loss probe and the RTO alike"
                    if kind is not None
                    else ""
                )
            )
            ev.append(_route_everywhere(ctx, h))
            yield Claim(  # one per host, whichever DG socket is worst now
                host=h,
                subject="dg",
                severity="warn",
                cause=f"DG socket retransmits, rto {fmt_num(rto)} ms",
                where=ctx.route(h),
                conclusion="each lost segment stalls commits for the retransmission timeout: "
                "lower the route's rto_min",
                evidence=ev,
                series=list(keys),
            )
        else:
            ev.append(
                f"rto already below {fmt_num(stall)} ms, so each loss costs ~rto; "
                "the loss itself is on the network path (A story about Data Guard and network "
                "latency)"
            )
            yield Claim(  # one per host, whichever DG socket is worst now
                host=h,
                subject="dg",
                severity="warn" if n >= LOSSY else "info",
                cause=f"DG socket retransmits, rto {fmt_num(rto)} ms",
                where=ctx.route(h),
                conclusion="packet loss on the DG link, stalls bounded by the low rto_min",
                evidence=ev,
                series=list(keys),
                rule="dg_loss",
            )


def _sender_waiting(ctx: Context, h: str, inst: str, row: Row) -> list[str]:
    """Seed 001's picture from the primary's side: NSS (LNS on 11.2) asleep on its socket while
    segments of the redo it sent are unacknowledged, i.e. the write waits on the wire, not on
    the standby.  The state is sampled once per tick, so a 200 ms stall is caught at about one
    tick in five per loss a second; the count over the last ticks says how often."""
    pid = TCP.pid.of(row)
    owner = next(
        (
            (name, prow)
            for name, prow in ctx.hosts[h].frame.rows(PROCS.name).items()
            if name.startswith(("NSS", "LNS")) and PROCS.pid.of(prow) == pid
        ),
        None,
    )
    if owner is None:
        return []
    name, prow = owner
    seen = sum(1 for u in ctx.recent(TCP.unacked.key(h, inst), RECENT) if u)
    if not seen:
        return []
    out = [
        (
            f"{name}'s socket had segments unacknowledged at {seen} of the last {RECENT} samples: "
            "the redo was on the wire, not yet at the standby (A story about Data Guard and "
            "network latency)"
        )
    ]
    unacked = TCP.unacked.of(row)
    if unacked and PROCS.state.of(prow) == "S":
        out.append(
            f"now {name} (pid {fmt_num(pid)}) sleeps on its socket with {fmt_num(unacked)} "
            "segment(s) unacknowledged: the sender waits for the ack (A story about Data Guard and "
            "network latency: NSS2 in "
            "'Redo Transport MISC' while RFS waits in 'SQL*Net message from client')"
        )
    return out


SATURATED = (
    NETDEV.rx_drop,
    NETDEV.tx_drop,
    NETDEV.rx_overrun,
    NETDEV.rx_fifo,
    NETDEV.tx_fifo,
    NETDEV.rx_err,
    NETDEV.tx_err,
    NETDEV.util,
)
"""An interface's counts that show it saturated (seed 000), and its utilisation."""


@host_rule("nic", seed="000", weight=CAUSE)
def nic(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: drops and overruns on an interface show saturation."""
    h = view.name
    if not view.flagged(NETDEV.name):
        return
    for iface in view.frame.rows(NETDEV.name):
        hits = [
            o for f in SATURATED if (o := ctx.outlier(f.key(h, iface))) and o.severity != "info"
        ]
        if not hits:
            continue
        what = ", ".join(f"{o.field} {fmt_num(number(o.value))}" for o in hits)
        ev = [f"{iface}: {o.reason}" for o in hits]
        ev.append(
            "Best Practices for Synchronous Redo Transport: dropped and overrun counts indicate "
            "interface saturation; the "
            "NIC must carry the peak redo rate plus other traffic"
        )
        yield Claim(
            host=h,
            subject=iface,
            severity="warn",
            cause=f"{h} {iface} {what}",
            where=h,
            conclusion="NIC saturation",
            evidence=ev,
            series=[o.key for o in hits],
        )


@host_rule("network_latency", seed="000", weight=CAUSE)
def network_latency(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000 "Network": SYNC does best below 5 ms round trip; every commit pays the RTT."""
    h = view.name
    worst: tuple[float, str, Limit, str] | None = None
    for inst, _ in TCP.Rows.socket.of(view.frame.rows(TCP.name)).items():
        rtt = mean(ctx.recent(TCP.rtt.key(h, inst), RECENT))
        lim = ctx.grader.limit(*TCP.rtt.key(h, inst))
        if rtt is None or lim is None or (sev := lim.grade(rtt)) is None:
            continue
        if worst is None or rtt > worst[0]:
            worst = (rtt, inst, lim, sev)
    if worst is None:
        return
    rtt, inst, lim, sev = worst
    ev = [
        f"{inst}: smoothed RTT {fmt_num(rtt)} ms over the last {RECENT} ticks ({lim.source})",
        (
            "Best Practices for Synchronous Redo Transport: SYNC works best below 5 ms round trip; "
            "measure the link with "
            "`sgmon probe` (oratcptest-like, latency measurement article); consider Fast Sync or "
            "Far Sync"
        ),
    ]
    keys = [f.key(h, inst) for f in (TCP.rtt, TCP.rttvar)]
    yield Claim(
        host=h,
        subject="dg",
        severity=sev,
        cause=f"DG round trip {fmt_num(rtt)} ms",
        where=None,
        conclusion="network latency above the SYNC comfort zone",
        evidence=ev,
        series=keys,
    )


class _Buffers(NamedTuple):
    """What a host's DG socket buffers are held against: the buffer its sockets fill (a
    standby receives, a primary sends), the sysctl that caps it and its value, and the speed
    of its fastest link."""

    side: Num
    sysctl: Num
    cap: float | None
    mbit: float


def _buffers(view: HostView) -> _Buffers | None:
    """The host's ``_Buffers``; None when no interface that is up has a known speed."""
    speeds = [
        s
        for r in view.frame.rows(NETDEV.name).values()
        if (s := NETDEV.speed.of(r)) and interface_up(r)
    ]
    if not speeds:
        return None
    standby = view.role == "standby"
    side, sysctl = (TCP.rcvbuf, TCP.rmem_max) if standby else (TCP.sndbuf, TCP.wmem_max)
    return _Buffers(side, sysctl, sysctl.at(view.frame, TCP.Rows.host.fixed), max(speeds))


@host_rule("socket_buffers", seed="000", weight=ADVICE)
def socket_buffers(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: socket buffers of at least 3 x BDP, from the measured RTT and link speed."""
    b = _buffers(view)
    if b is None:
        return
    for inst, row in TCP.Rows.socket.of(view.frame.rows(TCP.name)).items():
        if (claim := _short_buffer(ctx, view.name, inst, row, b)) is not None:
            yield claim


def _short_buffer(ctx: Context, h: str, inst: str, row: Row, b: _Buffers) -> Claim | None:
    """The claim on socket ``inst`` of ``h`` when its buffer is below 3 x BDP of the link at
    its round trip; None when it is not, or either is unknown."""
    rtt = mean(ctx.recent(TCP.rtt.key(h, inst), 60)) or TCP.rtt.of(row)
    buf = b.side.of(row)
    if not rtt or not buf:
        return None
    bdp = bdp_bytes(mbit_bytes(b.mbit), rtt)
    if buf >= 3 * bdp:
        return None
    side, sysctl = b.side.name, b.sysctl.name
    ev = [
        (
            f"{inst}: {side} {fmt_num(buf)} B < 3 x BDP = 3 x {fmt_num(b.mbit)} Mbit/s x "
            f"{fmt_num(rtt)} ms = {fmt_num(3 * bdp)} B (Best Practices for Synchronous Redo "
            "Transport)"
        ),
        f"net.core.{sysctl} "
        + (
            f"{fmt_num(b.cap)} B"
            if b.cap
            else "not in the frame: check it is above RECV_BUF_SIZE/SEND_BUF_SIZE"
        ),
        (f"fix: SEND_BUF_SIZE/RECV_BUF_SIZE in sqlnet.ora at 3 x BDP, net.core.{sysctl} above it"),
    ]
    send_q = TCP.send_q.of(row) or 0.0
    base = "warn" if b.side is TCP.sndbuf and send_q >= 0.5 * buf else "info"
    return Claim(
        host=h,
        subject=inst,
        severity=base,
        cause=f"{side} {fmt_num(buf)} B below 3 x BDP {fmt_num(3 * bdp)} B",
        where=None,
        conclusion="socket buffers too small for the link",
        evidence=ev,
        series=[f.key(h, inst) for f in (TCP.send_q, TCP.rtt, TCP.unacked)],
    )

"""The Data Guard link: retransmission stalls and loss (seed 001), NIC saturation, round-trip
latency and socket buffers against the bandwidth-delay product (seed 000 "Network")."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from sgmon.analysis.context import Context, HostView, once
from sgmon.analysis.rules.base import (
    ADVICE,
    CAUSE,
    LOSSY,
    RECENT,
    Claim,
    host_rule,
    mean,
    rule,
)
from sgmon.analysis.rules.silent import silent
from sgmon.grading import Limit
from sgmon.model import Frame, Status, Value, number
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
    worst: tuple[float, str, dict] | None = None
    for inst, row in view.frame.rows("tcp").items():
        if inst == "host" or silent(row):  # no ack at all: standby_silent's, not a loss
            continue
        n = sum(ctx.recent((h, "tcp", inst, "retransmits"), RECENT))
        if n > 0 and (worst is None or n > worst[0]):
            worst = (n, inst, row)
    if worst is None:
        return None
    n, inst, row = worst
    rtos = [*ctx.recent((h, "tcp", inst, "rto"), RECENT), number(row.get("rto"))]
    rto = min((r for r in rtos if r is not None), default=None)
    if rto is None:
        return None
    lim = ctx.grader.limit(h, "tcp", inst, "rto")
    stall = lim.warn if lim and lim.warn else 200.0
    rto_min = number(row.get("rto_min"))
    peer = str(row.get("peer") or "PEER").rsplit(":", 1)[0]
    keys: list[SeriesKey] = [(h, "tcp", inst, f) for f in ("retransmits", "rto", "lost", "retrans")]
    keys += [(h, "tcp", "host", f) for f in ("timeouts", "retrans_segs")]
    said = [
        f"{inst}: {plural(n, 'segment')} retransmitted in the last {RECENT} ticks, "
        f"rto {fmt_num(rto)} ms, route rto_min "
        + (f"{fmt_num(rto_min)} ms" if rto_min is not None else "unset (kernel 200 ms)"),
    ]
    to = number(view.frame.value("tcp", "host", "timeouts"))
    if to:
        said.append(f"host-wide RTO expiries {fmt_num(to)}/s (TCPTimeouts)")
    return _Loss(n, inst, rto, stall, peer, keys, said, _sender_waiting(ctx, h, inst, row))


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
        kind = _last_retransmit(ctx, view.frame, inst, rto, ev)
        ev += sender
        if rto >= stall:
            ev.append(
                f"each lost segment stalls the SYNC write ~{fmt_num(rto)} ms (retransmission case)"
                + (f", here by {KIND_NAMES[kind]}" if kind else "")
                + f"; fix: ip route change {peer} dev <if> ... rto_min 10ms (dial in for your "
                "network)"
                + (": rto_min shortens the tail-loss probe and the RTO alike" if kind else "")
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
                "the loss itself is on the network path (retransmission case)"
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


KIND_NAMES = {
    "tlp": "a tail-loss probe, not an RTO",
    "rto": "RTO expiries",
    "fast": "fast retransmits",
}
"""What the retrans collector's ``last_kind`` names, in the advice."""
KIND_WHY = {
    "tlp": "a tail-loss probe: the congestion state never entered Loss; with one write in "
    "flight the probe waits 2 x RTT + rto_min",
    "rto": "an RTO expiry: the congestion state entered Loss",
    "fast": "a fast retransmit (SACK recovery): no timer waited",
}


def _clock(t: float) -> str:
    """``10:31:02.417``: local time to the millisecond."""
    ms = round(t * 1000)
    return time.strftime("%H:%M:%S", time.localtime(ms // 1000)) + f".{ms % 1000:03d}"


WRITES = {"lgwr_slow_write": "LGWR write", "remote_write_split": "remote write"}
"""Trace events of a write that a retransmission can stall (collectors/oracle/trace.py)."""
SLACK = 0.05
"""Seconds a write's traced window is widened by: the LGWR warning's time is the ``***`` stamp
before it, not the write's own end."""


def _stalled_write(ctx: Context, at: float) -> str:
    """``, LGWR write 206 ms 10:31:02.417-10:31:02.623``: the traced write, on either host,
    whose time span holds the retransmission at ``at`` (the nearest), or ""."""
    best: tuple[float, str] | None = None
    for view in ctx.hosts.values():
        for e in view.timed:
            if e.kind not in WRITES or e.value is None:
                continue
            ms = e.value / 1000
            start, end = (
                (e.time, e.time + ms) if e.kind == "remote_write_split" else (e.time - ms, e.time)
            )
            if start - SLACK <= at <= end + SLACK:
                gap = abs(at - (start + end) / 2)
                if best is None or gap < best[0]:
                    text = f", {WRITES[e.kind]} {fmt_num(e.value)} ms {_clock(start)}-{_clock(end)}"
                    best = (gap, text)
    return best[1] if best else ""


def _last_retransmit(
    ctx: Context, frame: Frame, inst: str, rto: float, ev: list[str]
) -> str | None:
    """Cite the socket's last retransmission event (the retrans collector's row for it) with
    the traced write it stalled, and return its kind; without events, say which source the
    counts come from."""
    res = frame.collectors.get("retrans")
    row: Mapping[str, Value] = frame.rows("retrans").get(inst, {})
    at, kind = number(row.get("last_at")), row.get("last_kind")
    if at is not None and isinstance(kind, str) and kind in KIND_WHY:
        counts = ", ".join(
            f"{fmt_num(n)} {k}" for k in ("tlp", "rto", "fast") if (n := number(row.get(k)))
        )
        ev.append(
            f"retransmit at {_clock(at)}, RTO {fmt_num(rto)} ms{_stalled_write(ctx, at)}: "
            f"{KIND_WHY[kind]}" + (f" (this tick: {counts})" if counts else "")
        )
        return kind
    if res is not None and res.status is not Status.OK:  # configured, but cannot run here
        why = f": {res.error.split(';')[0]}" if res.error else ""
        ev.append(f"source: the tcp counters (no retransmission events{why})")
    return None


def _sender_waiting(ctx: Context, h: str, inst: str, row: Mapping[str, Value]) -> list[str]:
    """Seed 001's picture from the primary's side: NSS (LNS on 11.2) asleep on its socket while
    segments of the redo it sent are unacknowledged, i.e. the write waits on the wire, not on
    the standby.  The state is sampled once per tick, so a 200 ms stall is caught at about one
    tick in five per loss a second; the count over the last ticks says how often."""
    pid = number(row.get("pid"))
    owner = next(
        (
            (name, prow)
            for name, prow in ctx.hosts[h].frame.rows("procs").items()
            if name.startswith(("NSS", "LNS")) and number(prow.get("pid")) == pid
        ),
        None,
    )
    if owner is None:
        return []
    name, prow = owner
    seen = sum(1 for u in ctx.recent((h, "tcp", inst, "unacked"), RECENT) if u)
    if not seen:
        return []
    out = [
        (
            f"{name}'s socket had segments unacknowledged at {seen} of the last {RECENT} samples: "
            "the redo was on the wire, not yet at the standby (retransmission case)"
        )
    ]
    unacked = number(row.get("unacked"))
    if unacked and prow.get("state") == "S":
        out.append(
            f"now {name} (pid {fmt_num(pid)}) sleeps on its socket with {fmt_num(unacked)} "
            "segment(s) unacknowledged: the sender waits for the ack (retransmission case: NSS2 in "
            "'Redo Transport MISC' while RFS waits in 'SQL*Net message from client')"
        )
    return out


@host_rule("nic", seed="000", weight=CAUSE)
def nic(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: drops and overruns on an interface show saturation."""
    bad = ("rx_drop", "tx_drop", "rx_overrun", "rx_fifo", "tx_fifo", "rx_err", "tx_err", "util")
    h = view.name
    if not view.flagged("netdev"):
        return
    for iface in view.frame.rows("netdev"):
        hits = [
            o for f in bad if (o := ctx.outlier((h, "netdev", iface, f))) and o.severity != "info"
        ]
        if not hits:
            continue
        what = ", ".join(f"{o.field} {fmt_num(number(o.value))}" for o in hits)
        ev = [f"{iface}: {o.reason}" for o in hits]
        ev.append(
            "MAA SYNC paper: dropped and overrun counts indicate interface saturation; the "
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
    for inst in view.frame.rows("tcp"):
        if inst == "host":
            continue
        rtt = mean(ctx.recent((h, "tcp", inst, "rtt"), RECENT))
        lim = ctx.grader.limit(h, "tcp", inst, "rtt")
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
            "MAA SYNC paper: SYNC works best below 5 ms round trip; measure the link with "
            "`sgmon probe` (oratcptest-like, latency measurement article); consider Fast Sync or "
            "Far Sync"
        ),
    ]
    keys = [(h, "tcp", inst, f) for f in ("rtt", "rttvar")]
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


@host_rule("socket_buffers", seed="000", weight=ADVICE)
def socket_buffers(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: socket buffers of at least 3 x BDP, from the measured RTT and link speed."""
    h = view.name
    speeds = [
        s
        for r in view.frame.rows("netdev").values()
        if (s := number(r.get("speed"))) and str(r.get("operstate", "up")).lower() == "up"
    ]
    if not speeds:
        return
    mbit = max(speeds)
    hostrow = view.frame.rows("tcp").get("host", {})
    for inst, row in view.frame.rows("tcp").items():
        if inst == "host":
            continue
        rtt = mean(ctx.recent((h, "tcp", inst, "rtt"), 60)) or number(row.get("rtt"))
        side, sysctl = ("rcvbuf", "rmem_max") if view.role == "standby" else ("sndbuf", "wmem_max")
        buf = number(row.get(side))
        if not rtt or not buf:
            continue
        bdp = bdp_bytes(mbit_bytes(mbit), rtt)
        if buf >= 3 * bdp:
            continue
        cap = number(hostrow.get(sysctl))
        ev = [
            (
                f"{inst}: {side} {fmt_num(buf)} B < 3 x BDP = 3 x {fmt_num(mbit)} Mbit/s x "
                f"{fmt_num(rtt)} ms = {fmt_num(3 * bdp)} B (MAA SYNC paper)"
            ),
            f"net.core.{sysctl} "
            + (
                f"{fmt_num(cap)} B"
                if cap
                else "not in the frame: check it is above RECV_BUF_SIZE/SEND_BUF_SIZE"
            ),
            (
                "fix: SEND_BUF_SIZE/RECV_BUF_SIZE in sqlnet.ora at 3 x BDP, "
                f"net.core.{sysctl} above it"
            ),
        ]
        send_q = number(row.get("send_q")) or 0.0
        base = "warn" if side == "sndbuf" and send_q >= 0.5 * buf else "info"
        keys = [(h, "tcp", inst, f) for f in ("send_q", "rtt", "unacked")]
        yield Claim(
            host=h,
            subject=inst,
            severity=base,
            cause=f"{side} {fmt_num(buf)} B below 3 x BDP {fmt_num(3 * bdp)} B",
            where=None,
            conclusion="socket buffers too small for the link",
            evidence=ev,
            series=keys,
        )

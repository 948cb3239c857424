"""The OS items of ``sgmon check --symmetry``, from each host's recent frames: the DG socket's
buffers against 3 x BDP and the kernel's autotuning maxima (seed 000), the route's rto_min at
both ends of the socket (seed 001), and the redo device's write latency (seed 000 Tables 8 and
9, seed 003)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sgmon import topology
from sgmon.config import Config
from sgmon.contract import Num, Row
from sgmon.events import LOCAL_WRITE, RFS_WRITE
from sgmon.fields import DISK, NETDEV, ORACLE_WAITS, TCP
from sgmon.model import Frame
from sgmon.symmetry.line import Line, ok, size_text
from sgmon.units import bdp_bytes, fmt_num, mbit_bytes

SLOWER = 2.0
"""A redo device this many times slower than the other side's differs (seed 000: Table 8's
2.89 ms RFS I/O beside 0.62 ms local writes was "an immediate red flag" on equal hardware,
Table 9's 0.89 ms after the fix was in line) ..."""
SLOWER_MS = 0.5
"""... and by at least this much, so two sub-millisecond devices never differ by noise."""
MATCH = (0.5, 4.0)
"""Disk writes per redo write that still name a disk the redo device: a write split in two, a
group of up to four members."""
CARRIES = 0.9
"""An interface carries the DG socket when it moved at least this share of the socket's bytes."""
DEFAULT_RTO_MIN = "default (200 ms)"
NO_SOCKET = "no DG socket in its frames"
HOST = TCP.Rows.host.fixed
"""The tcp collector's whole-host row (the kernel's settings), which is no socket."""
MAXIMA = ((TCP.tcp_wmem_max, "net.ipv4.tcp_wmem max"), (TCP.tcp_rmem_max, "net.ipv4.tcp_rmem max"))
"""The kernel's autotuning maxima, each with the sysctl its line names."""


@dataclass(frozen=True, slots=True)
class _End:
    """One end of the DG socket over a host's recent frames."""

    frames: Sequence[Frame]
    inst: str | None  # the socket's row, None when not seen

    def row(self) -> Row | None:
        """The socket's row in the latest frame (None when it is not seen)."""
        return self.frames[-1].rows(TCP.name).get(self.inst) if self.inst else None

    def mean(self, field: Num, inst: str) -> float | None:
        """``field`` of ``inst`` averaged over the frames that have it."""
        vals = [v for f in self.frames if (v := field.at(f, inst)) is not None]
        return sum(vals) / len(vals) if vals else None


def os_lines(
    config: Config, ends: tuple[Sequence[Frame], Sequence[Frame]], alone: bool
) -> tuple[tuple[str | None, str | None], list[Line]]:
    """The socket, kernel, route and redo device items of a primary and a standby from their
    recent frames; ``alone``: the only SYNC standby (then the primary's one commit-path socket
    is its own even when the standby's frames show none)."""
    inst = dg_sockets(ends[0][-1], ends[1][-1], alone)
    p, s = _End(ends[0], inst[0]), _End(ends[1], inst[1])
    rtt = p.mean(TCP.rtt, inst[0]) if inst[0] else None
    links = [_link(p, TCP.bytes_acked, NETDEV.tx_kb), _link(s, TCP.bytes_received, NETDEV.rx_kb)]
    speeds = [sp for _, sp in links if sp]
    need = 3 * bdp_bytes(mbit_bytes(min(speeds)), rtt) if speeds and rtt else None
    if need:
        basis = f">= 3 x BDP = 3 x {_speed(min(speeds))} x {fmt_num(rtt)} ms = {size_text(need)}"
    else:
        basis = "3 x BDP unknown: " + ("no RTT, no DG socket" if not rtt else "link speed unknown")
    lines = [
        _threshold(
            "socket buffers (sndbuf, rcvbuf)",
            [TCP.sndbuf.of(p.row()), TCP.rcvbuf.of(s.row())],
            [NO_SOCKET, NO_SOCKET],
            need,
            f"{basis} (links: {links[0][0]}; {links[1][0]})",
        )
    ]
    floor = "3 x BDP" if need else "equal, 3 x BDP unknown"
    for field, item in MAXIMA:
        vals = [field.at(e.frames[-1], HOST) for e in (p, s)]
        lines.append(
            _threshold(
                item,
                vals,
                ["not in the frames"] * 2,
                need,
                f"autotuning's ceiling, >= {floor}",
                alike=True,
            )
        )
    lines.append(_rto_min(p, s))
    lines.append(_redo_device(config, p, s))
    return inst, lines


def dg_sockets(pf: Frame, sf: Frame, alone: bool) -> tuple[str | None, str | None]:
    """The two ends of the DG socket: the primary's commit-path socket whose mirror (local
    and peer swapped) the standby has; else the one toward an address the standby listens on;
    else, for the only SYNC standby, the primary's one commit-path socket."""
    mine = sorted(
        i
        for i, r in pf.rows(TCP.name).items()
        if i != HOST and not topology.off_path_sender(TCP.process.of(r))
    )
    theirs = sorted(i for i in sf.rows(TCP.name) if i != HOST)
    found = _mirrored(mine, theirs) or _toward_listener(mine, theirs)
    if found is not None:
        return found
    if not alone:
        return None, None
    return (
        mine[0] if len(mine) == 1 else None,
        theirs[0] if len(theirs) == 1 else None,
    )


def _mirrored(mine: list[str], theirs: list[str]) -> tuple[str, str] | None:
    """The first of the primary's sockets (``local>peer``) the standby holds the other way
    round, and that mirror."""
    for i in mine:
        local, _, peer = i.partition(">")
        if f"{peer}>{local}" in theirs:
            return i, f"{peer}>{local}"
    return None


def _toward_listener(mine: list[str], theirs: list[str]) -> tuple[str, str | None] | None:
    """The first of the primary's sockets toward an address the standby listens on, and the
    standby's socket back to the primary's address, if it has one."""
    listening = {_host(t.partition(">")[0]) for t in theirs}
    for i in mine:
        local, _, peer = i.partition(">")
        if _host(peer) in listening:
            back = [t for t in theirs if _host(t.partition(">")[2]) == _host(local)]
            return i, back[0] if back else None
    return None


def _host(endpoint: str) -> str:
    """``10.0.1.2:1521`` -> ``10.0.1.2``; ``[fe80::1]:1521`` -> ``fe80::1``."""
    return endpoint.rsplit(":", 1)[0].strip("[]")


def _link(end: _End, moved: Num, counter: Num) -> tuple[str, float | None]:
    """The interface that carries the socket and its speed (Mbit/s): of the interfaces up
    with a known speed, those that moved at least ``CARRIES`` of the socket's bytes; their
    speed when they agree, else unknown."""
    netdev = end.frames[-1].rows(NETDEV.name)
    up = {i: sp for i, r in netdev.items() if (sp := NETDEV.speed.of(r)) and interface_up(r)}
    if not up:
        return "no interface reports a speed", None
    rate = end.mean(moved, end.inst) if end.inst else None
    carrying = [
        i for i in up if not rate or (end.mean(counter, i) or 0) * 1024 >= CARRIES * rate
    ] or list(up)
    speeds = {up[i] for i in carrying}
    named = "/".join(sorted(carrying))
    if len(speeds) == 1:
        return f"{named} {_speed(speeds.pop())}", up[carrying[0]]
    return f"one of {named}, speeds differ", None


def interface_up(row: Row) -> bool:
    """Whether an interface is up: a row without its state counts as up, one whose state is
    unknown (None: /proc/net/dev shows none) does not."""
    return str(NETDEV.operstate.raw(row, "up")).lower() == "up"


def _speed(mbit: float) -> str:
    return f"{mbit / 1000:g} Gbit/s" if mbit >= 1000 else f"{mbit:g} Mbit/s"


def _threshold(
    item: str,
    vals: list[float | None],
    absent: list[str],
    need: float | None,
    rule: str,
    alike: bool = False,
) -> Line:
    """Both sides at or above a floor (``need``); without one, equal when ``alike`` (the same
    setting on both hosts), else unknown."""
    shown = [size_text(v) if v is not None else a for v, a in zip(vals, absent, strict=True)]
    a, b = vals
    if a is None or b is None or (need is None and not alike):
        verdict = "unknown"
    else:
        verdict = ok(min(a, b) >= need if need is not None else a == b)
    return Line(item, shown[0], shown[1], verdict, "000", rule)


def _rto_min(p: _End, s: _End) -> Line:
    vals: list[str | None] = []
    for end in (p, s):
        if end.inst is None:
            vals.append(None)
            continue
        v = TCP.rto_min.of(end.row())
        vals.append(f"{fmt_num(v)} ms" if v is not None else DEFAULT_RTO_MIN)
    verdict = "unknown" if None in vals else ok(vals[0] == vals[1])
    return Line(
        "route rto_min",
        vals[0] or NO_SOCKET,
        vals[1] or NO_SOCKET,
        verdict,
        "001",
        "equal on both ends: a lost segment waits the RTO, 200 ms at least by default",
    )


def _redo_device(config: Config, p: _End, s: _End) -> Line:
    found = [_device(config, p, LOCAL_WRITE), _device(config, s, RFS_WRITE)]
    shown = [f"{d} {fmt_num(ms)} ms at {fmt_num(w)} w/s" if ms is not None else d
             for d, ms, w in found]  # fmt: skip
    a, b = found[0][1], found[1][1]
    if a is None or b is None:
        verdict = "unknown"
    else:
        lo, hi = sorted((a, b))
        verdict = ok(not (hi > SLOWER * lo and hi - lo >= SLOWER_MS))
    return Line(
        "redo device w_await",
        shown[0],
        shown[1],
        verdict,
        "000/003",
        f"within {SLOWER:g}x (Table 8: 2.89 ms beside 0.62 ms on equal hardware); the config's "
        "devices, else the disk whose writes match the redo writes",
    )


Device = tuple[str, float | None, float | None]
"""A redo device as its line shows it: its name (and how it was found), its write-weighted
w_await and its writes per second."""


def _device(config: Config, end: _End, event: str) -> Device:
    """The host's redo device and its write-weighted w_await and writes per second: the
    config's ``devices`` (the slowest of them); else the disk whose writes per second come
    closest to the database's redo writes (``event``'s waits: LGWR's on the primary, RFS's on
    the standby), within ``MATCH``; else the disk with the most writes."""
    frame = end.frames[-1]
    disks = frame.rows(DISK.name)
    if not disks:
        return "no disk rows in its frames", None, None
    host = next((h for h in config.hosts if h.name == frame.host), None)
    named = [d for d in (host.devices if host else ()) if d in disks]
    writes = {d: end.mean(DISK.w_s, d) or 0.0 for d in (named or disks)}
    awaits = {d: _weighted(end, d) for d in writes}
    if named:
        return _slowest(named, awaits, writes)
    dev = _redo_disk(writes, end.mean(ORACLE_WAITS.waits, event))
    if dev:
        return f"{dev} (redo writes)", awaits[dev], writes[dev]
    dev = max(writes, key=lambda d: writes[d])
    return f"{dev} (busiest)", awaits[dev], writes[dev]


def _slowest(
    named: Sequence[str], awaits: Mapping[str, float | None], writes: Mapping[str, float]
) -> Device:
    """Of the config's devices, the one with the highest w_await (the first when none has
    one)."""
    known = [d for d in named if awaits[d] is not None]
    dev = max(known, key=lambda d: awaits[d] or 0.0) if known else named[0]
    return dev, awaits[dev], writes[dev]


def _redo_disk(writes: Mapping[str, float], redo: float | None) -> str:
    """The disk whose writes per second come closest to the redo writes' (``redo``), when
    within ``MATCH`` of them; else empty."""
    near = {d: abs(math.log(w / redo)) for d, w in writes.items() if redo and w > 0}
    dev = min(near, key=lambda d: near[d]) if near else ""
    if dev and MATCH[0] <= writes[dev] / (redo or 1.0) <= MATCH[1]:
        return dev
    return ""


def _weighted(end: _End, dev: str) -> float | None:
    """w_await over the window, each tick weighted by its writes."""
    pairs = [
        (a, DISK.w_s.at(f, dev) or 0.0)
        for f in end.frames
        if (a := DISK.w_await.at(f, dev)) is not None
    ]
    total = sum(w for _, w in pairs)
    if not pairs:
        return None
    if total <= 0:
        return sum(a for a, _ in pairs) / len(pairs)
    return sum(a * w for a, w in pairs) / total

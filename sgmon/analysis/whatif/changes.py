"""Each change as the commit path it makes: which measured part it replaces, what it assumes,
and where it does not hold.  A change that cannot be predicted from what was measured gives no
path and says why."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from sgmon.analysis.whatif.chain import Path
from sgmon.analysis.whatif.measure import LINUX_RTO_MIN, Measured, Wait
from sgmon.units import fmt_num

Made = tuple[str, str, Path | None, str]
"""(name, assumptions, the changed path or None, where it does not hold)."""
NO_REMOTE = "no remote write was measured: no SYNC destination shipped"


def noaffirm(m: Measured, path: Path, _value: float | None) -> Made:
    """SYNC NOAFFIRM (Fast Sync): the acknowledgement on receipt, no SRL write in the commit."""
    name = "Fast Sync (SYNC NOAFFIRM)"
    if path.remote is None:
        return name, NO_REMOTE, None, ""
    if m.fast_sync:
        return name, "the destination is already NOAFFIRM", None, ""
    if m.before_12c:
        return name, "Fast Sync needs 12.1 or later; this primary is 11.2", None, ""
    if m.parts["rfs"].n <= 0:
        return name, "the standby's SRL writes (RFS write) were not measured", None, ""
    return (
        name,
        (
            "the standby acknowledges on receipt: its SRL write leaves the commit, the network "
            "and retransmissions stay as measured"
        ),
        replace(path, remote=replace(path.remote, ack=None)),
        (
            "a commit is then in the standby's memory, not yet on its disk: lost only if both "
            "sites fail together"
        ),
    )


def async_(m: Measured, path: Path, _value: float | None) -> Made:
    """ASYNC: no remote write on the commit path."""
    name = "ASYNC"
    if path.remote is None:
        return name, NO_REMOTE, None, ""
    ahead = m.parts["remote"].avg or 0.0
    behind = m.commits * ahead / 1000.0
    return (
        name,
        "commits wait for the local redo write only",
        replace(path, remote=None),
        (
            f"exposure: each commit returns about {fmt_num(ahead)} ms before a standby has its "
            f"redo (about {fmt_num(behind)} commits on no standby at any moment at "
            f"{fmt_num(m.commits)}/s), and every commit made while the standby is slow or away "
            "is on no standby: a failover loses them"
        ),
    )


def rto_min(m: Measured, path: Path, value: float | None) -> Made:
    """The route's rto_min lowered: each retransmission timeout shorter."""
    ms = 10.0 if value is None else value
    name = f"rto_min {ms:g} ms"
    now = m.rto_min or LINUX_RTO_MIN
    if path.remote is None:
        return name, NO_REMOTE, None, ""
    if m.rto is None:
        return name, "the DG socket's RTO was not measured", None, ""
    if now <= ms:
        return name, f"rto_min is already {now:g} ms", None, ""
    r = path.remote
    floor = math.ceil(ms / m.rto_tick) * m.rto_tick  # the kernel rounds it up to its tick
    penalty = max(floor, r.penalty - now + floor)
    said = (
        f"the retransmission timeouts stay as frequent a redo write ({r.loss:.2%} of them; "
        f"more writes a second bring more) and each waits {penalty:.3g} ms instead of "
        f"{r.penalty:.3g} ms"
        if r.loss
        else "no retransmission timeout was measured: nothing to shorten"
    )
    return name, said, replace(path, remote=replace(r, penalty=penalty)), ""


def _level(now: Wait, calm: Wait, value: float | None) -> tuple[Wait, float, str] | None:
    """The part's calm (or measured) waits, the factor that brings them to ``value`` (median,
    ms) or to their own average, and how the level was chosen."""
    src = calm if calm.n > 0 else now
    d, avg = src.dist(), src.avg
    if d is None or avg is None:
        return None
    if value is None:
        return src, avg / max(d.mean(), 1e-9), f"its calm level (median {d.at(0.5):.3g} ms)"
    return src, value / max(d.at(0.5), 1e-9), f"a median of {value:g} ms, its spread as calm"


SLOWED = 2.0  # the SRL write's average over its calm one that makes the redo writes grow


def _calm_transfer(m: Measured, base: float) -> float | None:
    """The remote write's part beyond the SRL write at its calm level, with the round trip's
    rise since (None: no calm level, or not below ``base``, the window's).  A slow SRL write
    makes each redo write carry many commits' redo, whose transfer and handling grow with it
    (the lab: 0.45 against 0.21 ms a write); with the SRL write calm again the writes are small
    again.  Only the calm intervals measure it well: under a slow SRL write it is a small
    difference of two large averages.  None too where the SRL write is not ``SLOWED`` (another
    cause: its writes are as large with the SRL write calm)."""
    remote, rfs, now = m.calm["remote"].avg, m.calm["rfs"].avg, m.parts["rfs"].avg
    if remote is None or rfs is None or now is None or now < SLOWED * rfs:
        return None
    rise = max(0.0, m.rtt - m.calm_rtt) if m.rtt is not None and m.calm_rtt is not None else 0.0
    calm = max(0.0, remote - rfs) + rise
    return calm if calm < base else None


def standby_write(m: Measured, path: Path, value: float | None) -> Made:
    """The standby's SRL writes at a given median (None: their calm level; the cap removed).
    At the calm level or faster, the transfer is at its calm level too (``_calm_transfer``)."""
    name = "standby redo write " + ("at its calm level" if value is None else f"at {value:g} ms")
    if path.remote is None:
        return name, NO_REMOTE, None, ""
    lv = _level(m.parts["rfs"], m.calm["rfs"], value)
    if m.fast_sync or lv is None or path.remote.ack is None:
        why = "Fast Sync: the SRL write is not in the commit" if m.fast_sync else ""
        return name, why or "the standby's SRL writes were not measured", None, ""
    src, scale, how = lv
    remote = replace(path.remote, ack=src.dist(), ack_scale=scale)
    said = f"every SRL write at {how}"
    calm = m.calm["rfs"].dist()
    faster = value is None or (calm is not None and value <= calm.at(0.5))
    rest = _calm_transfer(m, remote.base) if faster else None
    if rest is not None:
        said += (
            f", and the rest of each remote write (network, transfer) at its calm "
            f"{rest:.3g} ms instead of {remote.base:.3g}: each write carries less redo again"
        )
        calm_lfs = m.calm.get("lfs", Wait()).avg
        if calm_lfs is not None:
            said += f"; about log file sync in the calm seconds before (avg {calm_lfs:.3g} ms)"
        remote = replace(remote, base=rest)
    return name, said, replace(path, remote=remote), ""


def primary_write(m: Measured, path: Path, value: float | None) -> Made:
    """The primary's redo writes at a given median (None: their calm level)."""
    name = "primary redo write " + ("at its calm level" if value is None else f"at {value:g} ms")
    lv = _level(m.parts["local"], m.calm["local"], value)
    if lv is None:
        return name, "the local redo writes were not measured", None, ""
    src, scale, how = lv
    local = src.dist()
    assert local is not None
    return name, f"every redo write at {how}", replace(path, local=local, local_scale=scale), ""


def round_trip(m: Measured, path: Path, value: float | None) -> Made:
    """The network round trip at a given value (None: its calm level)."""
    ms = m.calm_rtt if value is None else value
    name = "round trip " + ("at its calm level" if value is None else f"{value:g} ms")
    if path.remote is None:
        return name, NO_REMOTE, None, ""
    now = m.rtt if m.rtt is not None else path.remote.base
    if ms is None:
        return name, "no calm round trip was measured", None, ""
    r = path.remote
    delta = ms - now
    remote = replace(r, base=max(0.0, r.base + delta), penalty=max(0.0, r.penalty + delta))
    src = "the DG socket's" if m.rtt is not None else "taken as the remote write's network part"
    return (
        name,
        (
            f"the round trip goes from {now:.3g} ms ({src}) to {ms:.3g} ms, each remote write "
            "and retransmission by as much; the link's bandwidth as measured"
        ),
        replace(path, remote=remote),
        "",
    )


CHANGES: dict[str, Callable[[Measured, Path, float | None], Made]] = {
    "noaffirm": noaffirm,
    "async": async_,
    "rto_min": rto_min,
    "standby_write": standby_write,
    "primary_write": primary_write,
    "round_trip": round_trip,
}

"""A DG socket's retransmissions as the retrans collector's kernel events show them: what
repaired each (a tail-loss probe, an RTO, a fast retransmit), at which millisecond, and which
traced write (an LGWR write, a remote write) it stalled.  ``rto_stall`` cites them; without the
events (no tracefs, no root) it says the counts are the tcp collector's."""

from __future__ import annotations

import time
from typing import NamedTuple

from sgmon.analysis.context import Context
from sgmon.contract import Num
from sgmon.fields import RETRANS
from sgmon.model import Frame, Status
from sgmon.units import fmt_num


class Kind(NamedTuple):
    """A kind of retransmission as the retrans collector tells them apart: the field that
    counts them, whose name is what its ``last_kind`` says, then how the advice names them and
    what one means."""

    field: Num
    said: str
    why: str


KINDS = {
    k.field.name: k
    for k in (
        Kind(
            RETRANS.tlp,
            "a tail-loss probe, not an RTO",
            "a tail-loss probe: the congestion state never entered Loss; with one write in "
            "flight the probe waits 2 x RTT + rto_min",
        ),
        Kind(RETRANS.rto, "RTO expiries", "an RTO expiry: the congestion state entered Loss"),
        Kind(
            RETRANS.fast,
            "fast retransmits",
            "a fast retransmit (SACK recovery): no timer waited",
        ),
    )
}
"""The kinds of retransmission by what the retrans collector's ``last_kind`` says."""


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


def last_retransmit(
    ctx: Context, frame: Frame, inst: str, rto: float, ev: list[str]
) -> Kind | None:
    """Cite the socket's last retransmission event (the retrans collector's row for it) with
    the traced write it stalled, and return its kind; without events, say which source the
    counts come from."""
    res = frame.collectors.get(RETRANS.name)
    row = frame.rows(RETRANS.name).get(inst)
    at, kind = RETRANS.last_at.of(row), KINDS.get(RETRANS.last_kind.of(row) or "")
    if at is not None and kind is not None:
        counts = ", ".join(
            f"{fmt_num(n)} {k.field.name}" for k in KINDS.values() if (n := k.field.of(row))
        )
        ev.append(
            f"retransmit at {_clock(at)}, RTO {fmt_num(rto)} ms{_stalled_write(ctx, at)}: "
            f"{kind.why}" + (f" (this tick: {counts})" if counts else "")
        )
        return kind
    if res is not None and res.status is not Status.OK:  # configured, but cannot run here
        why = f": {res.error.split(';')[0]}" if res.error else ""
        ev.append(f"source: the tcp counters (no retransmission events{why})")
    return None

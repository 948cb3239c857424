"""RAC's own step in the commit (seed 000 commit steps 4 and 9): broadcast on commit.

LGWR of a RAC instance sends each commit's SCN to the other instances (step 4) and, after its
own write, waits for their acknowledgement (step 9) before it posts the foregrounds.  When
another instance's LMS is starved of CPU, or the interconnect is slow, the acks come late and
log file sync rises while the local and remote writes stay fast.  V$SYSSTAT's 'redo write
broadcast ack time' measures that wait beyond the write (``oracle_redo`` ``redo_bcast_ack``,
per redo write), so it is a cause of its own, not LGWR overhead of unknown origin.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.rules.base import CAUSE, Claim, rule
from sgmon.model import number
from sgmon.units import fmt_num

SHARE_MIN = 0.3
"""The share of log file sync the late acks must take to be a cause (as R_MIN for a link)."""


@rule("rac_broadcast", seed="000", weight=CAUSE)
def rac_broadcast(ctx: Context) -> Iterable[Claim]:
    """Late SCN acks from the other instances hold this instance's commits."""
    p, b, topo = ctx.primary, ctx.budget, ctx.topology
    if p is None or b is None or not b.lfs_ms:
        return
    ack = number(p.frame.value("oracle_redo", "db", "redo_bcast_ack"))
    grade = ctx.grader.grade(p.name, "oracle_redo", "db", "redo_bcast_ack", ack)
    if ack is None or grade == "ok" or ack < SHARE_MIN * b.lfs_ms:
        return
    others = [h for h in (topo.primaries if topo is not None else ()) if h != p.name]
    traced = number(p.frame.value("oracle_trace", "lgwr", "broadcast_waits"))
    longest = number(p.frame.value("oracle_trace", "lgwr", "max_broadcast"))
    seen = (
        [f"LGWR trace: {fmt_num(traced)} 'log write broadcast wait time' warning(s), longest "
         f"{fmt_num(longest)} ms"]
        if traced
        else []
    )  # fmt: skip
    where = " and ".join(others) or "the other instances"
    yield Claim(
        host=p.name,
        subject="broadcast",
        severity=grade,
        cause=f"redo write broadcast ack {fmt_num(ack)} ms per write",
        where=p.name,
        conclusion=f"LGWR waits for {where} to acknowledge its commit SCN: check their LMS "
        "CPU and the interconnect",
        evidence=[
            f"'redo write broadcast ack time' {fmt_num(ack)} ms per redo write beyond the write "
            f"itself, of log file sync {fmt_num(b.lfs_ms)} ms (seed 000 commit steps 4 and 9)",
            f"the writes stay fast: local {fmt_num(b.local_write_ms)} ms, remote "
            f"{fmt_num(b.remote_write_ms)} ms",
            *seen,
        ],
        series=[(p.name, "oracle_redo", "db", "redo_bcast_ack")],
    )

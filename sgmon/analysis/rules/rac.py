"""RAC's own waits in the commit path: broadcast on commit, and another instance's log flush.

Broadcast on commit (seed 000 commit steps 4 and 9):

LGWR of a RAC instance sends each commit's SCN to the other instances (step 4) and, after its
own write, waits for their acknowledgement (step 9) before it posts the foregrounds.  When
another instance's LMS is starved of CPU, or the interconnect is slow, the acks come late and
log file sync rises while the local and remote writes stay fast.  V$SYSSTAT's 'redo write
broadcast ack time' measures that wait beyond the write (``oracle_redo`` ``redo_bcast_ack``,
per redo write), so it is a cause of its own, not LGWR overhead of unknown origin.

Another instance's log flush (seed 001's AWR): before an instance's LMS ships a block whose redo
is not yet on disk it asks its own LGWR to flush and waits on 'gcs log flush sync' (Oracle's
"analogous to log file sync"; 90 % under 2 ms when healthy).  The sessions of the instance that
asked for the block wait meanwhile on the gc busy events, so a slow LGWR on node 2 costs node 1's
sessions time that node 1's own commit path does not show: its log file sync stays fast.  The
event is the LMS's, read on the instance that ships the block; its cause is that instance's
redo write, the local 'log file parallel write' or, with a SYNC standby, its remote write.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.budget import remote_write
from sgmon.analysis.context import Context, HostView
from sgmon.analysis.rules.base import (
    CAUSE,
    LGWR_TRACE,
    Claim,
    busiest_disk,
    remote_event,
    rule,
)
from sgmon.events import GC_BUSY, GCS_LOG_FLUSH, LOCAL_WRITE, LOG_FILE_SYNC
from sgmon.fields import ORACLE_REDO, ORACLE_TRACE, ORACLE_WAITS
from sgmon.units import fmt_num

SHARE_MIN = 0.3
"""The share of log file sync the late acks must take to be a cause (as R_MIN for a link)."""


@rule("rac_broadcast", seed="000", weight=CAUSE)
def rac_broadcast(ctx: Context) -> Iterable[Claim]:
    """Late SCN acks from the other instances hold this instance's commits."""
    p, b, topo = ctx.primary, ctx.budget, ctx.topology
    if p is None or b is None or not b.lfs_ms:
        return
    ack_key = ORACLE_REDO.redo_bcast_ack.key(p.name, ORACLE_REDO.Rows.db.fixed)
    ack = ORACLE_REDO.redo_bcast_ack.at(p.frame, ORACLE_REDO.Rows.db.fixed)
    grade = ctx.grader.grade(*ack_key, ack)
    if ack is None or grade == "ok" or ack < SHARE_MIN * b.lfs_ms:
        return
    others = [h for h in (topo.primaries if topo is not None else ()) if h != p.name]
    traced = ORACLE_TRACE.broadcast_waits.at(p.frame, LGWR_TRACE)
    longest = ORACLE_TRACE.max_broadcast.at(p.frame, LGWR_TRACE)
    seen = (
        [(f"LGWR trace: {fmt_num(traced)} 'log write broadcast wait time' warning(s), longest "
         f"{fmt_num(longest)} ms")]
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
            (
                f"'redo write broadcast ack time' {fmt_num(ack)} ms per redo write beyond the "
                "write "
                f"itself, of log file sync {fmt_num(b.lfs_ms)} ms "
                "(Best Practices for Synchronous Redo Transport, commit steps 4 and 9)"
            ),
            (
                f"the writes stay fast: local {fmt_num(b.local_write_ms)} ms, remote "
                f"{fmt_num(b.remote_write_ms)} ms"
            ),
            *seen,
        ],
        series=[ack_key],
    )


@rule("rac_log_flush", seed="001", weight=CAUSE)
def rac_log_flush(ctx: Context) -> Iterable[Claim]:
    """This instance's sessions wait for blocks another instance ships only once its slow LGWR
    has flushed their redo."""
    p = ctx.primary
    if p is None:
        return
    waited, waits = gc_busy(p)
    for o in ctx.instances.values():
        flush = ORACLE_WAITS.avg.at(o.frame, GCS_LOG_FLUSH)
        grade = ctx.grader.grade(*ORACLE_WAITS.avg.key(o.name, GCS_LOG_FLUSH), flush)
        if flush is None or grade == "ok" or not waits or waited / waits < SHARE_MIN * flush:
            continue  # a flush no block of ours waited for is that instance's own business
        shipped = ORACLE_WAITS.waits.at(o.frame, GCS_LOG_FLUSH)
        local = ORACLE_WAITS.avg.at(o.frame, LOCAL_WRITE)
        remote = remote_write(o.frame)
        if remote is not None and remote > (local or 0.0):
            key = remote_event(o.frame)
            leg = f"its {key} {fmt_num(remote)} ms"
            check = f"{o.name}'s SYNC standby and link (its own findings)"
        else:
            leg = f"its {LOCAL_WRITE} {fmt_num(local)} ms"
            dev, aqu, util = busiest_disk(o)
            check = f"{o.name}'s redo device" + (
                f" ({dev}: aqu-sz {fmt_num(aqu)}, %util {fmt_num(util)})" if dev else ""
            )
            key = LOCAL_WRITE
        own = ORACLE_WAITS.avg.at(p.frame, LOG_FILE_SYNC)
        yield Claim(
            host=p.name,
            subject=f"log_flush:{o.name}",
            severity=grade,
            cause=f"{GCS_LOG_FLUSH} {fmt_num(flush)} ms on {o.name}",
            where=f"{o.name}'s LGWR",
            conclusion=f"{p.name}'s sessions wait for blocks {o.name} ships only after {leg}: "
            f"check {check}",
            evidence=[
                (
                    f"'{GCS_LOG_FLUSH}' on {o.name}: its LMS waits {fmt_num(flush)} ms on average "
                    f"for its LGWR before shipping a block ({fmt_num(shipped)} flushes/s; healthy: "
                    "90 % under 2 ms)"
                ),
                (
                    f"{o.name}'s redo write: {LOCAL_WRITE} {fmt_num(local)} ms, remote write "
                    f"{fmt_num(remote)} ms"
                ),
                (
                    f"{p.name}'s sessions wait on the gc busy events {fmt_num(waited / waits)} ms "
                    f"on average ({fmt_num(waits)}/s), while its own log file sync is "
                    f"{fmt_num(own)} ms: the time is lost before the commit, not in it"
                ),
            ],
            series=[ORACLE_WAITS.avg.key(o.name, e) for e in (GCS_LOG_FLUSH, key)],
            explains=False,  # never part of this instance's log file sync
        )


def gc_busy(view: HostView) -> tuple[float, float]:
    """(ms waited per second, waits per second) of an instance's sessions on the gc busy
    events: blocks another instance held."""
    rows = view.frame.rows(ORACLE_WAITS.name)
    waited = sum(ORACLE_WAITS.time_waited.of(rows.get(e)) or 0.0 for e in GC_BUSY)
    waits = sum(ORACLE_WAITS.waits.of(rows.get(e)) or 0.0 for e in GC_BUSY)
    return waited, waits

"""Adaptive log file sync: when LGWR switches the foregrounds to polling, log file sync measures
their poll sleeps, and its whole distribution moves with no change on the redo path.

The switch shows in the LGWR/LGnn trace (``Log file sync switching to polling`` / ``... to
post/wait``, e.g. the 12.2 LG00 trace of jkstill/lgwr-trace-parse), which the ``oracle_trace``
collector turns into its ``polling`` field, and without a trace in V$SYSSTAT's ``redo synch
polls`` (``oracle_redo``), which count only while commits poll.  While it is on and log file sync is
degraded but the transport's own waits are not, SYNC transport is not the cause: this rule says
so and keeps the generic commit chain from naming whatever happens to line up.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.findings import AT_ONCE
from sgmon.analysis.rules.base import CAUSE, LGWR_TRACE, Claim, rule
from sgmon.events import COMMIT_EVENTS, LOCAL_WRITE
from sgmon.fields import ORACLE_REDO, ORACLE_TRACE, ORACLE_WAITS
from sgmon.units import fmt_num


@rule("adaptive_sync", seed="trace", weight=CAUSE, persist=AT_ONCE)
def adaptive_sync(ctx: Context) -> Iterable[Claim]:
    """log file sync degraded while polling, with the transport waits in line."""

    p, c = ctx.primary, ctx.chain
    if p is None or c is None or c.trigger.instance != COMMIT_EVENTS[0]:
        return
    traced = ORACLE_TRACE.polling.at(p.frame, LGWR_TRACE) == 1.0
    polls = ORACLE_REDO.redo_synch_polls.at(p.frame, ORACLE_REDO.Rows.db.fixed)
    counted = polls is not None and polls > 0
    if not (traced or counted):
        return
    remote = [
        o
        for e in COMMIT_EVENTS[1:]
        for f in (ORACLE_WAITS.avg, ORACLE_WAITS.p90, ORACLE_WAITS.p99)
        if (o := ctx.outlier(f.key(p.name, e)))
    ]
    if remote:
        return  # the transport is slow as well: the transport rules speak
    lfpw = ORACLE_WAITS.avg.at(p.frame, LOCAL_WRITE)
    ev = [
        c.trigger.reason,
        "LGWR trace: Log file sync switching to polling (adaptive log file sync)"
        if traced
        else f"V$SYSSTAT redo synch polls {fmt_num(polls)}/s: commits poll for LGWR",
        "SYNC Remote Write and the other transport waits are in line with their baseline",
    ]
    if lfpw is not None:
        ev.append(f"log file parallel write avg {fmt_num(lfpw)} ms")
    ev.append(
        "polling foregrounds sleep between checks, so log file sync includes the poll interval; "
        "it ends when the trace says 'switching to post/wait'"
    )
    ctx.explained = True
    yield Claim(
        host=p.name,
        subject="lgwr",
        severity="info",
        cause="log file sync in polling mode",
        where=p.name,
        conclusion="adaptive log file sync polls: not SYNC transport",
        evidence=ev,
        series=[c.trigger.key, ORACLE_TRACE.polling.key(p.name, LGWR_TRACE)],
        explains=False,
    )

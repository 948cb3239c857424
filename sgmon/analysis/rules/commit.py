"""Advice on the commit path itself (Fast Sync), and the generic chain shown when no cause rule
explains a degraded commit path."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from sgmon.analysis.context import Context, HostView, once
from sgmon.analysis.correlate import Link
from sgmon.analysis.findings import ADVICE_HOLD
from sgmon.analysis.rules.base import (
    ADVICE,
    GENERIC,
    R_MIN,
    Claim,
    describe,
    remote_write_event,
    resolution,
    rule,
    tick_cost,
)
from sgmon.analysis.rules.transport import retransmitting
from sgmon.events import COMMIT_EVENTS, SYNC_REMOTE_WRITE
from sgmon.fields import ORACLE_DG, ORACLE_WAITS
from sgmon.grading import RANK
from sgmon.outcomes import Explained, pct
from sgmon.topology import ships_sync
from sgmon.units import fmt_num
from sgmon.verdicts import SYMPTOM_RULE, Budget, Finding


@rule("fast_sync", seed="000", weight=ADVICE, persist=ADVICE_HOLD)
def fast_sync(ctx: Context) -> Iterable[Claim]:
    """Seed 000: when standby I/O dominates the remote write, SYNC NOAFFIRM removes it."""
    p, b = ctx.primary, ctx.budget
    if p is None or b is None:
        return
    share = _standby_io_share(ctx, p, b)
    affirm = _affirmed(p) if share is not None else []
    if share is None or not affirm:
        return
    remote = remote_write_event(ctx)
    fast = remote == SYNC_REMOTE_WRITE  # 11.2 (LNS wait on SENDREQ) has no Fast Sync
    remote_hurts = ctx.chain is not None and ctx.chain.trigger.instance in COMMIT_EVENTS[1:]
    yield Claim(
        host=p.name,
        subject="affirm",
        severity="warn" if remote_hurts else "info",
        cause=f"{remote} {fmt_num(b.remote_write_ms)} ms, standby I/O "
        f"{fmt_num(b.standby_io_ms)} ms ({share:.0%}) of it",
        where=p.name,
        conclusion="consider Fast Sync (SYNC NOAFFIRM)"
        if fast
        else "standby I/O dominates; Fast Sync needs 12.1",
        evidence=[f"budget: {b.describe()}", f"{', '.join(affirm)}: SYNC AFFIRM", _why(fast)],
        series=[f.key(p.name, remote) for f in (ORACLE_WAITS.avg, ORACLE_WAITS.p99)],
    )


def _standby_io_share(ctx: Context, p: HostView, b: Budget) -> float | None:
    """The standby I/O's share of the remote write when it dominates a remote write that
    weighs in log file sync; None when it does not, or the link's stalls are the incident
    (Fast Sync would not shorten them)."""
    if not b.remote_write_ms or b.standby_io_ms is None or not b.lfs_ms:
        return None
    if once(ctx, p, retransmitting) is not None:
        return None
    share = b.standby_io_ms / b.remote_write_ms
    if share < 0.5 or b.remote_write_ms < 0.3 * b.lfs_ms:
        return None
    return share


def _affirmed(p: HostView) -> list[str]:
    """The primary's destinations that ship SYNC AFFIRM now."""
    dests = ORACLE_DG.Rows.dest.of(p.frame.rows(ORACLE_DG.name))
    return [
        i
        for i, r in dests.items()
        if (ORACLE_DG.affirm.of(r) or "").upper() == "YES" and ships_sync(r)
    ]


def _why(fast: bool) -> str:
    """What Fast Sync would change, or on 11.2 (no Fast Sync) what must change instead."""
    if fast:
        return (
            "Best Practices for Synchronous Redo Transport: Fast Sync acknowledges on receipt in "
            "standby memory, removing "
            "standby I/O from the commit; a tiny exposure remains if both sites fail within "
            "milliseconds"
        )
    return (
        "on 11.2 Fast Sync (SYNC NOAFFIRM) is no option: the standby's storage as a "
        "whole must keep up with the primary's (\"Oracle Database Migrated to Cloud Starts "
        "Experiencing 'log file sync' Waits\")"
    )


NOTHING = "nothing on either host lines up"
"""What the generic finding says while no cause explains the commit path."""
LATER = "until its cause lined up"
"""What it says once a cause explained it and it closed (``superseded``)."""


def commit_chain(ctx: Context, drawn: Iterable[Finding] = ()) -> Iterable[Finding]:
    """The commit path is degraded and no cause rule explains it: show what lines up
    (``drawn``: the findings of the tick already drawn as the chain's, advice that lines up
    without explaining it)."""
    c, p = ctx.chain, ctx.primary
    if c is None or p is None:
        return
    top: list[Link] = [lk for lk in c.links if lk.r >= R_MIN][:3]
    ev = [c.trigger.reason]
    if ctx.budget is not None:
        ev.append(f"budget: {ctx.budget.describe()}")
    ev += [f"lines up: {describe(lk.outlier)}, {lk.strength(ctx.interval)}" for lk in top]
    ev += resolution(ctx)
    rules = sorted({f.rule for f in drawn})
    if top:
        title = f"{c.label} <- {describe(top[0].outlier)}: commit path degraded"
    elif rules:
        title = f"{c.label}: commit path degraded, only {', '.join(rules)} lines up"
    else:
        title = f"{c.label}: commit path degraded, {NOTHING}"
    cost, commits = tick_cost(ctx)
    severity = c.trigger.severity
    yield Finding(
        f"commit_chain:{p.name}:commit",
        severity,
        p.name,
        title,
        ev,
        [c.trigger.key, *(lk.outlier.key for lk in top)],
        SYMPTOM_RULE,
        "000",
        ctx.now,
        None,
        RANK[severity] * 10 + GENERIC,
        cost_ms=cost,
        commits=commits,
        drawn=True,
        moment=(cost, float(RANK[severity]), 1.0),
    )


def superseded(f: Finding) -> Finding:
    """The generic finding as it is remembered once a cause explained the commit path: an info
    row of the history, saying what it was before, not that nothing lines up or that its cause
    is unclear (the cause's finding carries the incident)."""
    title, peak = (
        t.replace(NOTHING, LATER).split(f", {UNCLEAR}")[0] for t in (f.title, f.peak_title)
    )
    return replace(f, severity="info", title=title, peak_title=peak)


UNCLEAR = "cause unclear"


def unclear(found: list[Finding], e: Explained | None) -> list[Finding]:
    """``found`` with the generic finding saying "cause unclear", and what was not measured,
    while the causes named for its incident explain under half of its extra commit time (``e``,
    None when they explain more): a DBA reading only the finding must not take what lines up
    for the cause."""
    if e is None:
        return found
    said = f", {UNCLEAR} ({pct(e.share)} of the extra commit time explained)"
    return [
        replace(f, title=f.title + said, evidence=[*f.evidence, e.text()])
        if f.rule == SYMPTOM_RULE
        else f
        for f in found
    ]

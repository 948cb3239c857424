"""Commits on no standby: while a SYNC destination does not protect, what a failover would lose.

The Data Guard state rule says that a destination is in error; this one says what that costs
as it goes on, in the figures a manager asks for after the incident: the commits and the redo
the primary made meanwhile (``sgmon.analysis.unprotected``), none of them on the standby; behind
a far sync that forwards to no standby, and through the seconds a silent standby held the
commits, until NET_TIMEOUT or a reset ended the wait, too.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.rules.base import ADVICE, Claim, rule
from sgmon.fields import ORACLE_DG, ORACLE_REDO
from sgmon.outcomes import RULE, Unprotected
from sgmon.units import fmt_num, fmt_utc


@rule(RULE, seed="MAA", weight=ADVICE)
def unprotected(ctx: Context) -> Iterable[Claim]:
    """Each SYNC destination of the primary instance that is not protecting now: crit while no
    other SYNC destination holds the commits, warn while another does."""
    p = ctx.primary
    if p is None:
        return
    for u in ctx.unprotected:
        if u.host != p.name or not u.sync or not u.active:
            continue
        gone = "on no standby" if u.alone else f"not on {u.target}"
        back = "the far sync's onward destination" if u.relay else u.target
        yield Claim(
            host=p.name,
            subject=u.dest,
            severity="crit" if u.alone else "warn",
            cause=u.text(),
            where=p.name,
            conclusion=f"a failover now loses them: bring {back} back to receiving",
            evidence=[
                (
                    f"{u.dest} ({u.target}) has not protected since {_since(u.since)}: the "
                    f"primary counted {u.commits:,.0f} user commits and "
                    f"{u.redo_bytes:,.0f} bytes of redo size meanwhile, {gone}"
                ),
                *_why(u),
                (
                    "the standby fetches the missing redo through gap resolution once it "
                    "receives again; until then only the primary holds those commits"
                ),
            ],
            series=[
                ORACLE_DG.status.key(p.name, u.dest),
                ORACLE_REDO.user_commits.key(p.name, ORACLE_REDO.Rows.db.fixed),
            ],
            explains=False,
        )


def _why(u: Unprotected) -> list[str]:
    """What the count holds beyond a destination in error: a far sync that forwards to no
    standby, the seconds commits hung waiting on a silent standby."""
    out = []
    if u.relay:
        out.append(
            f"{u.target} acknowledged the commits but forwards them nowhere ({u.relay}): a far "
            "sync instance keeps redo in standby redo logs only, and no failover can open it"
        )
    if u.hung:
        until = (
            f"until its connection was reset ({u.cut_by}), before the destination's NET_TIMEOUT"
            if u.cut_by
            else "for the destination's whole NET_TIMEOUT before marking it failed"
        )
        out.append(
            f"for {fmt_num(u.hung)} s of it no commit completed: LGWR waited on the silent "
            f"standby {until}"
        )
    return out


def _since(t: float | None) -> str:
    return f"{fmt_utc(t)} UTC" if t is not None else "the start of the run"

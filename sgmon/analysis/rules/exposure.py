"""Commits on no standby: while a SYNC destination does not protect, what a failover would lose.

The Data Guard state rule says that a destination is in error; this one says what that costs
as it goes on, in the figures a manager asks for after the incident: the commits and the redo
the primary made meanwhile (``sgmon.analysis.unprotected``), none of them on the standby.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon.analysis.context import Context
from sgmon.analysis.rules.base import ADVICE, Claim, rule
from sgmon.fields import ORACLE_DG, ORACLE_REDO
from sgmon.outcomes import RULE
from sgmon.units import fmt_utc


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
        yield Claim(
            host=p.name,
            subject=u.dest,
            severity="crit" if u.alone else "warn",
            cause=u.text(),
            where=p.name,
            conclusion=f"a failover now loses them: bring {u.target} back to receiving",
            evidence=[
                (
                    f"{u.dest} ({u.target}) has not protected since {_since(u.since)}: the "
                    f"primary counted {u.commits:,.0f} user commits and "
                    f"{u.redo_bytes:,.0f} bytes of redo size meanwhile, {gone}"
                ),
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


def _since(t: float | None) -> str:
    return f"{fmt_utc(t)} UTC" if t is not None else "the start of the run"

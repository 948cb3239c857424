"""A SYNC standby that acknowledges nothing: commits hang until NET_TIMEOUT.

When the Data Guard link drops every packet without a reset (a firewall, a dead switch port,
a standby host that froze), LGWR's remote write waits for an acknowledgement that never comes,
for up to the destination's NET_TIMEOUT (30 s by default, seed 000's "Signal commit success ...
after NET_TIMEOUT threshold period expires"), and no commit on the primary completes meanwhile.
The database views are silent through it: V$SYSTEM_EVENT counts a wait when it ends, so log
file sync shows no waits at all until the hang is over, and then 30 s ones.  The socket is not
silent: the sender's segments stay unacknowledged, nothing is acknowledged for whole seconds,
and the kernel doubles the RTO at each expiry.  That, with the commits stopping, is the finding
while it happens; a lossy link still gets acknowledgements between its retransmissions and is
``rto_stall``'s.
"""

from __future__ import annotations

from collections.abc import Iterable

from sgmon import buckets
from sgmon.analysis.context import Context, HostView, turned
from sgmon.analysis.findings import AT_ONCE
from sgmon.analysis.rules.base import CAUSE, RECENT, Claim, remote_write_event, rule
from sgmon.contract import Row
from sgmon.events import LOG_FILE_SYNC
from sgmon.fields import ORACLE_DG, ORACLE_REDO, ORACLE_WAITS, TCP
from sgmon.units import fmt_num, plural

WAITED = 0.9 * 1000
"""A remote write (ms) that reached 90 % of NET_TIMEOUT (s) waited it out (a bucket's bound)."""


def silent(row: Row) -> bool:
    """Whether a socket had data outstanding and got no byte acknowledged for a whole tick."""
    return bool(TCP.unacked.of(row)) and TCP.bytes_acked.of(row) == 0


@rule("standby_silent", seed="000", weight=CAUSE, persist=AT_ONCE)
def standby_silent(ctx: Context) -> Iterable[Claim]:
    """The primary's SYNC socket gets no acknowledgement: its commits wait out NET_TIMEOUT."""
    p = ctx.primary
    if p is None:
        return
    yield from _hang_over(ctx)
    for inst, row in TCP.Rows.socket.of(p.frame.rows(TCP.name)).items():
        if not silent(row):
            continue
        if ctx.off_path(p.name, [TCP.unacked.key(p.name, inst)]):
            continue  # an ASYNC sender waits alone: lag_risk material, no commit hangs
        far = ctx.far_end(p.name, inst)
        ev = [
            (
                f"{inst}: {plural(TCP.unacked.of(row), 'segment')} unacknowledged and no "
                "byte "
                f"acknowledged this tick; rto {fmt_num(TCP.rto.of(row))} ms, doubled at "
                "each "
                "expiry: the peer answers nothing (a lossy link still acknowledges between "
                "retransmissions); once packets pass again TCP resends only when this RTO next "
                "expires, so commits can stay hung up to that long after the link is back"
            ),
            *_commits_stopped(ctx, p),
            *_far_side(ctx, far, inst),
        ]
        timeout = _net_timeout(ctx, far)
        wait = f"NET_TIMEOUT {fmt_num(timeout)} s" if timeout else "NET_TIMEOUT"
        yield Claim(
            host=p.name,
            subject="silent",
            severity="crit",
            cause=f"{far or 'the SYNC standby'} acknowledges nothing",
            where=None,
            conclusion=f"commits hang: LGWR waits for the standby up to {wait}, then drops the "
            "destination and commits go on unprotected; check the standby host and the DG link "
            "(packets vanish: no reset, no ICMP)",
            evidence=ev,
            series=[f.key(p.name, inst) for f in (TCP.unacked, TCP.rto)]
            + [ORACLE_REDO.user_commits.key(p.name, ORACLE_REDO.Rows.db.fixed)],
            explains=False,
            bonus=1.0,  # the commits hang: above the lags and errors that follow from it
        )


def _commits_stopped(ctx: Context, p: HostView) -> list[str]:
    """The primary's commits against their usual rate, and why log file sync does not show
    the hung ones yet."""
    db = ORACLE_REDO.Rows.db.fixed
    series = ctx.tracker.series(ORACLE_REDO.user_commits.key(p.name, db))
    now = ORACLE_REDO.user_commits.at(p.frame, db)
    if now is None or series is None or series.median is None:
        return []
    return [
        (
            f"user commits {fmt_num(now)}/s, against a usual {fmt_num(series.median)}/s; "
            "V$SYSTEM_EVENT counts a log file sync when it ends, so the hung ones show "
            "only once NET_TIMEOUT is over"
        )
    ]


def _far_side(ctx: Context, far: str | None, inst: str) -> list[str]:
    """What the watched host at the socket's far end saw: the bytes its end received, and
    how old its transport lag's datum is."""
    back = ctx.hosts.get(far) if far is not None else None
    if back is None:
        return []
    out = []
    got = TCP.bytes_received.at(back.frame, turned(inst))
    if got is not None:
        out.append(f"{far}: the same socket received {fmt_num(got)} B/s")
    age = ORACLE_DG.datum_age.at(back.frame, ORACLE_DG.Rows.db.fixed)
    if age:
        out.append(f"{far}: its transport lag's datum is {fmt_num(age)} s old")
    return out


def _hang_over(ctx: Context) -> Iterable[Claim]:
    """While the hung commits' waits are out of line after they end: a remote write that waited
    out its destination's NET_TIMEOUT, and the destination dropped.  Those waits are this
    finding's, not a slow commit path's (the generic chain would line them up with whatever
    moved)."""
    p, topo = ctx.primary, ctx.topology
    if p is None or topo is None:
        return
    event = remote_write_event(ctx)
    key = ORACLE_WAITS.p99.key(p.name, event)
    if ctx.outlier(key) is None:  # over: the remote write is back in line, or gone quiet
        return
    longest = max(ctx.recent(key, RECENT), default=None)
    for d in topo.dests:
        timeout = ORACLE_DG.net_timeout.at(p.frame, d.inst)
        status = ORACLE_DG.status.at(p.frame, d.inst) or ""
        if not d.commit_path or not timeout or longest is None or longest < WAITED * timeout:
            continue
        if status.upper() not in ("ERROR", "DISABLED"):
            continue
        error = ORACLE_DG.error.at(p.frame, d.inst) or status
        ctx.explained = True
        lfs = ORACLE_WAITS.avg.at(p.frame, LOG_FILE_SYNC)
        yield Claim(
            host=p.name,
            subject="silent",
            severity="crit",
            cause=f"{d.target} acknowledged nothing for NET_TIMEOUT {fmt_num(timeout)} s",
            where=None,
            conclusion=f"the hung commits end now; {d.inst} is dropped and commits go on "
            "unprotected: check the standby host and the DG link",
            evidence=[
                (
                    f"{event} p99 {buckets.quantile_text(longest)}: the remote write waited out "
                    f"{d.inst}'s NET_TIMEOUT {fmt_num(timeout)} s"
                ),
                (
                    f"log file sync avg {fmt_num(lfs)} ms now: the commits that waited behind it "
                    "are counted as their waits end"
                ),
                f"{d.inst}: {error}",
            ],
            series=[key, ORACLE_DG.status.key(p.name, d.inst)],
            explains=False,
            bonus=1.0,
        )


def _net_timeout(ctx: Context, far: str | None) -> float | None:
    """The NET_TIMEOUT of the primary's destination that ships to ``far``."""
    topo, p = ctx.topology, ctx.primary
    if topo is None or p is None:
        return None
    for d in topo.dests:
        if d.commit_path and (far is None or far in d.hosts):
            return ORACLE_DG.net_timeout.at(p.frame, d.inst)
    return None

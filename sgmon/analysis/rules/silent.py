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

from collections.abc import Iterable, Mapping

from sgmon import buckets
from sgmon.analysis.context import Context, turned
from sgmon.analysis.rules.base import CAUSE, RECENT, Claim, remote_write_event, rule
from sgmon.model import Value, number
from sgmon.units import fmt_num, plural

WAITED = 0.9 * 1000
"""A remote write (ms) that reached 90 % of NET_TIMEOUT (s) waited it out (a bucket's bound)."""


def silent(row: Mapping[str, Value]) -> bool:
    """Whether a socket had data outstanding and got no byte acknowledged for a whole tick."""
    return bool(number(row.get("unacked"))) and number(row.get("bytes_acked")) == 0


@rule("standby_silent", seed="000", weight=CAUSE)
def standby_silent(ctx: Context) -> Iterable[Claim]:
    """The primary's SYNC socket gets no acknowledgement: its commits wait out NET_TIMEOUT."""
    p = ctx.primary
    if p is None:
        return
    yield from _hang_over(ctx)
    for inst, row in p.frame.rows("tcp").items():
        if inst == "host" or not silent(row):
            continue
        if ctx.off_path(p.name, [(p.name, "tcp", inst, "unacked")]):
            continue  # an ASYNC sender waits alone: lag_risk material, no commit hangs
        far = ctx.far_end(p.name, inst)
        ev = [
            (
                f"{inst}: {plural(number(row.get('unacked')), 'segment')} unacknowledged and no "
                "byte "
                f"acknowledged this tick; rto {fmt_num(number(row.get('rto')))} ms, doubled at "
                "each "
                "expiry: the peer answers nothing (a lossy link still acknowledges between "
                "retransmissions); once packets pass again TCP resends only when this RTO next "
                "expires, so commits can stay hung up to that long after the link is back"
            )
        ]
        series = ctx.tracker.series((p.name, "oracle_redo", "db", "user_commits"))
        now = number(p.frame.value("oracle_redo", "db", "user_commits"))
        if now is not None and series is not None and series.median is not None:
            ev.append(
                f"user commits {fmt_num(now)}/s, against a usual {fmt_num(series.median)}/s; "
                "V$SYSTEM_EVENT counts a log file sync when it ends, so the hung ones show "
                "only once NET_TIMEOUT is over"
            )
        timeout = _net_timeout(ctx, far)
        if far is not None:
            back = ctx.hosts.get(far)
            mirror = back.frame.rows("tcp").get(turned(inst), {}) if back is not None else {}
            got = number(mirror.get("bytes_received"))
            if got is not None:
                ev.append(f"{far}: the same socket received {fmt_num(got)} B/s")
            age = number(back.frame.value("oracle_dg", "db", "datum_age")) if back else None
            if age:
                ev.append(f"{far}: its transport lag's datum is {fmt_num(age)} s old")
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
            series=[(p.name, "tcp", inst, f) for f in ("unacked", "rto")]
            + [(p.name, "oracle_redo", "db", "user_commits")],
            explains=False,
            bonus=1.0,  # the commits hang: above the lags and errors that follow from it
        )


def _hang_over(ctx: Context) -> Iterable[Claim]:
    """While the hung commits' waits are out of line after they end: a remote write that waited
    out its destination's NET_TIMEOUT, and the destination dropped.  Those waits are this
    finding's, not a slow commit path's (the generic chain would line them up with whatever
    moved)."""
    p, topo = ctx.primary, ctx.topology
    if p is None or topo is None:
        return
    event = remote_write_event(ctx)
    key = (p.name, "oracle_waits", event, "p99")
    if ctx.outlier(key) is None:  # over: the remote write is back in line, or gone quiet
        return
    longest = max(ctx.recent(key, RECENT), default=None)
    for d in topo.dests:
        timeout = number(p.frame.value("oracle_dg", d.inst, "net_timeout"))
        status = str(p.frame.value("oracle_dg", d.inst, "status") or "")
        if not d.commit_path or not timeout or longest is None or longest < WAITED * timeout:
            continue
        if status.upper() not in ("ERROR", "DISABLED"):
            continue
        error = p.frame.value("oracle_dg", d.inst, "error") or status
        ctx.explained = True
        lfs = number(p.frame.value("oracle_waits", "log file sync", "avg"))
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
            series=[
                (p.name, "oracle_waits", event, "p99"),
                (p.name, "oracle_dg", d.inst, "status"),
            ],
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
            return number(p.frame.value("oracle_dg", d.inst, "net_timeout"))
    return None

"""The redo logs and the destination: switches too frequent for Table 2's sizing (seed 000), and
the Data Guard states of MAA (a failed destination, a gap, an unknown or growing lag)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from sgmon import buckets
from sgmon.analysis.budget import STANDBY_IO as STANDBY_EVENTS
from sgmon.analysis.budget import mean
from sgmon.analysis.context import Context, HostView
from sgmon.analysis.correlate import overlap
from sgmon.analysis.findings import AT_ONCE
from sgmon.analysis.rules.base import (
    CAUSE,
    GUIDE_S,
    RECENT,
    SETTLE_S,
    SPIKE_S,
    STORM_S,
    TABLE2,
    Claim,
    busiest_disk,
    host_rule,
    rule,
)
from sgmon.contract import Row
from sgmon.fields import ORACLE_DG, ORACLE_REDO, ORACLE_WAITS
from sgmon.model import number
from sgmon.oracle.queries import RATE_S
from sgmon.topology import is_sync, thread_lags
from sgmon.units import fmt_num
from sgmon.verdicts import Outlier, SeriesKey

DB = ORACLE_DG.Rows.db.fixed
"""The database's own ``oracle_dg`` row: a standby's state, not a destination's."""
REDO = ORACLE_REDO.Rows.db.fixed
"""The database's ``oracle_redo`` row (its redo rate)."""
SPIKE = (
    "each switch updates SRL headers, checkpoints and archives on the standby "
    "and spikes remote write times (Best Practices for Synchronous Redo Transport, Figure 3)"
)


@rule("log_switches", seed="000", weight=CAUSE, persist=AT_ONCE)
def log_switches(ctx: Context) -> Iterable[Claim]:
    """Seed 000 Table 2: logs sized for >= 20 min at peak redo; each switch spikes remote writes.

    One switch that the commit path answered with a spike is already a finding (seed 000,
    Figure 3); the interval, and so the sizing advice, needs a second one.
    """
    for h, view in ctx.hosts.items():
        if view.role != "primary" and ctx.primary is not None:
            continue
        t = view.switches
        if not t:
            continue
        every = max(t[-1] - t[-2], ctx.now - t[-1]) if len(t) > 1 else None
        hit = _answered(ctx, t)
        threads = ORACLE_DG.Rows.thread.of(view.frame.rows(ORACLE_DG.name))
        keys = [ORACLE_DG.log_switches.key(h, i) for i in threads]
        if every is not None and every < GUIDE_S:
            if claim := _too_often(ctx, h, every, keys, hit):
                yield claim
            continue
        # one switch, answered: its spike lasts seconds (Figure 3), so only samples that
        # short can show it; in sar's or AWR's averages every switch "lines up" with
        # whatever else raised that interval
        seen = ctx.interval <= SPIKE_S and ctx.now - t[-1] <= RECENT * ctx.interval
        if hit and seen:
            yield Claim(
                host=h,
                subject="redo",
                severity="info",
                cause=f"log switch {fmt_num(ctx.now - t[-1])} s ago",
                where=h,
                conclusion="a log switch spiked the remote write",
                evidence=[SPIKE],
                series=keys,
                overlap=hit,
            )


def _answered(ctx: Context, t: Sequence[float]) -> float | None:
    """The share of the switches ``t`` the chain's trigger answered with a spike (None without
    a chain, or when it has no points)."""
    if ctx.chain is None:
        return None
    trig = ctx.tracker.series(ctx.chain.trigger.key)
    return overlap(trig, t, ctx.interval, ctx.max_lag) if trig else None


def _too_often(
    ctx: Context, h: str, every: float, keys: list[SeriesKey], hit: float | None
) -> Claim | None:
    """Switches ``every`` seconds on ``h``, more often than Table 2's sizing: logs too small
    for the redo rate when it is known (None when logs of Table 2's size switch this often at
    this rate, but not in a storm)."""
    t = ctx.hosts[h].switches
    rate = mean(ctx.recent(ORACLE_REDO.redo_size.key(h, REDO), 60))
    ev = [f"{len(t)} log switches remembered, last two {fmt_num(t[-1] - t[-2])} s apart"]
    tail = "switches more often than the redo log sizing guidance"
    if rate:
        gb = next(size for top, size in TABLE2 if rate <= top)
        want = f"{gb} GB"
        if rate * every >= gb * 2**30 and every > STORM_S:
            return None  # logs of Table 2's size at this rate: the switches are fine
        ev.append(
            f"redo {fmt_num(rate / 1e6)} MB/s x {fmt_num(every)} s = logs of about "
            f"{fmt_num(rate * every / 1e6)} MB; Table 2 of Best Practices for Synchronous Redo "
            f"Transport sizes them {want} "
            f"(or peak MB/min x 20 min)"
        )
        tail = f"redo logs too small for this redo rate: size them {want} or more"
    ev.append(SPIKE)
    ev += standby_after_switches(ctx)
    return Claim(
        host=h,
        subject="redo",
        severity="warn" if every <= STORM_S else "info",
        cause=f"log switches every {fmt_num(every)} s",
        where=h,
        conclusion=tail,
        evidence=ev,
        series=keys,
        overlap=hit,
    )


def standby_after_switches(ctx: Context) -> list[str]:
    """The standby's side of a switch storm, now: the RFS writes and the busiest device (the
    checkpoint each switch forces), as evidence of the one cause rather than a second one."""
    out = []
    for view in ctx.hosts.values():
        if view.role != "standby":
            continue
        parts = []
        for event in STANDBY_EVENTS:
            p99 = ORACLE_WAITS.p99.at(view.frame, event)
            if p99 is not None:
                parts.append(f"{event} p99 {buckets.quantile_text(p99)}")
                break
        dev, aqu, util = busiest_disk(view)
        if dev and aqu >= 1:
            parts.append(f"{dev} aqu-sz {fmt_num(aqu)}, %util {fmt_num(util)}")
        if parts:
            out.append(
                f"{view.name} now: {'; '.join(parts)} (switch checkpoints, Best Practices for "
                "Synchronous Redo Transport)"
            )
    return out


DG_STATES = (
    ORACLE_DG.status,
    ORACLE_DG.error,
    ORACLE_DG.gap_status,
    ORACLE_DG.transport_lag,
    ORACLE_DG.lag_unknown,
    ORACLE_DG.datum_age,
    ORACLE_DG.apply_state,
    ORACLE_DG.archive_gap,
)
"""oracle_dg fields whose outliers are Data Guard state findings."""


def _dg_reason(o: Outlier) -> str:
    """A state outlier in words: an unknown lag says what DGMGRL says."""
    if o.field == ORACLE_DG.lag_unknown.name:
        return "transport lag unknown (V$DATAGUARD_STATS has no value; DGMGRL: '(unknown)')"
    if o.field == ORACLE_DG.datum_age.name:
        return f"lag datum {fmt_num(number(o.value))} s old: nothing received since (DATUM_TIME)"
    return o.reason


SHORT = 0.9
"""A thread arriving at less than this share of what its instance generates is named as falling
behind: sampling the two hosts a fraction of a second apart moves the share by far less over
``RATE_S``, and a thread's blocks carry somewhat more than 'redo size' (headers, wastage)."""


def thread_rates(ctx: Context, view: HostView) -> dict[str, tuple[float, float]]:
    """Each thread a standby receives straight from the primary: (bytes/s received over
    ``RATE_S``, bytes/s its primary instance generated over the same span).  A cascaded standby
    (or one behind a far sync) is left out: it may receive a log at a time, when its feeder has
    archived it (11.2), so its rate says nothing of its feeder's link."""
    topo = ctx.topology
    if topo is None or topo.cascaded(view.name):
        return {}
    n = max(1, round(RATE_S / ctx.interval))
    out = {}
    for thread, row in ORACLE_DG.Rows.thread.idents(view.frame.rows(ORACLE_DG.name)):
        got = ORACLE_DG.recv_rate.of(row)
        owner = topo.owners.get(thread)
        if got is None or owner is None:
            continue
        made = mean(ctx.recent(ORACLE_REDO.redo_size.key(owner, REDO), n))
        if made:
            out[thread] = (got, made)
    return out


def _mbs(rate: float) -> str:
    return f"{fmt_num(rate / 1e6)} MB/s"


def _behind(ctx: Context, view: HostView, thread: str) -> str:
    """``, 2 logs behind`` when the standby receives an older log of the thread than the one
    its instance writes (the primary's V$LOG_HISTORY sequence + 1); else empty."""
    owner = ctx.topology.owners.get(thread) if ctx.topology is not None else None
    pview = ctx.hosts.get(owner) if owner else None
    inst = ORACLE_DG.Rows.thread.instance(thread)
    done = ORACLE_DG.sequence.at(pview.frame, inst) if pview else None
    at = ORACLE_DG.recv_seq.at(view.frame, inst)
    logs = done + 1 - at if done is not None and at is not None else 0
    return f", {fmt_num(logs)} log(s) behind" if logs >= 1 else ""


@host_rule("dg_state", seed="MAA", weight=CAUSE, persist=AT_ONCE)
def dg_state(ctx: Context, view: HostView) -> Iterable[Claim]:
    """MAA and the DG reference: a failed SYNC destination, a gap, lag above 1 s / 10 s."""
    h = view.name
    if not view.flagged(ORACLE_DG.name):
        return
    for inst, row in view.frame.rows(ORACLE_DG.name).items():
        hits = [o for f in DG_STATES if (o := ctx.outlier(f.key(h, inst))) and o.severity != "info"]
        if hits:
            yield _dg_claim(ctx, view, inst, row, hits)


def _dg_claim(ctx: Context, view: HostView, inst: str, row: Row, hits: list[Outlier]) -> Claim:
    """The finding of one ``oracle_dg`` row's state outliers (``hits``): the database's own
    (which thread, and whether a role change explains it) or a destination's."""
    sync = is_sync(ORACLE_DG.transmit_mode.of(row) or "SYNC")
    crit = any(o.severity == "crit" for o in hits) and (sync or inst == DB)
    sev = "crit" if crit else "warn"  # an ASYNC destination is a lag risk: warn at most
    what = "; ".join(_dg_reason(o) for o in hits)
    concl = _dg_conclusion(inst, sync, {o.field for o in hits})
    evidence = [_dg_reason(o) for o in hits]
    if inst == DB:
        which, said = _which_thread(ctx, view)
        what += which
        evidence += said
        since = ctx.now - view.role_changed if view.role_changed is not None else None
        if since is not None and since < SETTLE_S:
            sev, concl = "info", f"{concl}, {fmt_num(since)} s after a role change: settling"
            evidence.append(
                f"the database became {view.role} {fmt_num(since)} s ago (a switchover or "
                f"failover): apply and transport restart within its steps; a fault only if "
                f"it lasts past {fmt_num(SETTLE_S)} s"
            )
    return Claim(
        host=view.name,
        subject=inst,
        severity=sev,
        cause=f"{ORACLE_DG.target.of(row) or inst}: {what}",
        where=view.name,
        conclusion=concl,
        evidence=evidence,
        series=[o.key for o in hits],
    )


def _dg_conclusion(inst: str, sync: bool, fields: set[str]) -> str:
    """What a row's state outliers mean: a destination's for the commits (SYNC) or the lag
    (ASYNC); the database's, whether redo arrives and is applied."""
    if inst != DB:
        if sync:
            return "SYNC destination not protecting commits"
        return "ASYNC destination behind: lag risk, not on the commit path"
    if fields & {ORACLE_DG.lag_unknown.name, ORACLE_DG.datum_age.name}:
        return "the standby receives no redo"
    if fields == {ORACLE_DG.apply_state.name}:
        return "redo apply is not running"
    return "standby is behind"


ThreadName = Callable[[object], str]


def _which_thread(ctx: Context, view: HostView) -> tuple[str, list[str]]:
    """Which RAC thread (and so which primary instance) a standby's lag is, as words for the
    title and lines of evidence; nothing when the threads do not tell."""
    name = ctx.topology.thread_name if ctx.topology is not None else "thread {}".format
    split = thread_lags(view.frame)
    if split:
        return _stood_still(split, name)
    return _arrives_short(ctx, view, name)


def _stood_still(split: dict[str, float], name: ThreadName) -> tuple[str, list[str]]:
    """The thread whose reception has stood still longest."""
    late = max(split, key=lambda t: split[t])
    per = ", ".join(f"{name(t)} {fmt_num(v)} s" for t, v in split.items())
    said = (
        "per thread (how long each RAC thread's reception has stood still, at most the "
        f"transport lag): {per}"
    )
    return f"; {name(late)} {fmt_num(split[late])} s behind", [said]


def _arrives_short(ctx: Context, view: HostView, name: ThreadName) -> tuple[str, list[str]]:
    """A thread that still arrives, only slower than its instance writes it (one that receives
    nothing stands still, which the stood-still lag and the state say)."""
    rates = thread_rates(ctx, view)
    short = {t: (g, m) for t, (g, m) in rates.items() if 0 < g < m * SHORT}
    if not short:
        return "", []
    worst = min(short, key=lambda t: short[t][0] / short[t][1])
    got, made = short[worst]
    per = ", ".join(
        f"{name(t)} {fmt_num(g / 1e6)} of {_mbs(m)}{_behind(ctx, view, t)}"
        for t, (g, m) in rates.items()
    )
    said = (
        f"per thread, redo received over the last {fmt_num(RATE_S)} s (RFS BLOCK# x 512 B) "
        f"against its instance's 'redo size' rate: {per}; {name(worst)} falls "
        f"{fmt_num((made - got) / made * 60)} s further behind every minute, though it never "
        "stops"
    )
    short_by = f"{_mbs(made - got)} short of the {_mbs(made)}"
    return f"; {name(worst)} arrives {short_by} its instance generates", [said]

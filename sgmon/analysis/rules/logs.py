"""The redo logs and the destination: switches too frequent for Table 2's sizing (seed 000), and
the Data Guard states of MAA (a failed destination, a gap, an unknown or growing lag)."""

from __future__ import annotations

from collections.abc import Iterable

from sgmon import buckets
from sgmon.analysis.budget import STANDBY_IO as STANDBY_EVENTS
from sgmon.analysis.context import Context, HostView
from sgmon.analysis.correlate import overlap
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
    mean,
    rule,
)
from sgmon.model import number
from sgmon.oracle.queries import RATE_S
from sgmon.topology import is_sync, thread_lags
from sgmon.units import fmt_num
from sgmon.verdicts import Outlier


@rule("log_switches", seed="000", weight=CAUSE)
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
        hit = None
        if ctx.chain is not None:
            trig = ctx.tracker.series(ctx.chain.trigger.key)
            hit = overlap(trig, t, ctx.interval, ctx.max_lag) if trig else None
        keys = [
            (h, "oracle_dg", i, "log_switches")
            for i in view.frame.rows("oracle_dg")
            if i.startswith("thread_")
        ]
        spike = (
            "each switch updates SRL headers, checkpoints and archives on the standby "
            "and spikes remote write times (MAA SYNC paper, Figure 3)"
        )
        if every is None or every >= GUIDE_S:
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
                    evidence=[spike],
                    series=keys,
                    overlap=hit,
                )
            continue
        base = "warn" if every <= STORM_S else "info"
        rate = mean(ctx.recent((h, "oracle_redo", "db", "redo_size"), 60))
        ev = [f"{len(t)} log switches remembered, last two {fmt_num(t[-1] - t[-2])} s apart"]
        tail = "switches more often than the redo log sizing guidance"
        if rate:
            gb = next(size for top, size in TABLE2 if rate <= top)
            want = f"{gb} GB"
            if rate * every >= gb * 2**30 and every > STORM_S:
                continue  # logs of Table 2's size at this rate: the switches are fine
            ev.append(
                f"redo {fmt_num(rate / 1e6)} MB/s x {fmt_num(every)} s = logs of about "
                f"{fmt_num(rate * every / 1e6)} MB; the MAA SYNC paper's Table 2 sizes them {want} "
                f"(or peak MB/min x 20 min)"
            )
            tail = f"redo logs too small for this redo rate: size them {want} or more"
        ev.append(spike)
        ev += standby_after_switches(ctx)
        yield Claim(
            host=h,
            subject="redo",
            severity=base,
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
            p99 = number(view.frame.value("oracle_waits", event, "p99"))
            if p99 is not None:
                parts.append(f"{event} p99 {buckets.quantile_text(p99)}")
                break
        dev, aqu, util = busiest_disk(view)
        if dev and aqu >= 1:
            parts.append(f"{dev} aqu-sz {fmt_num(aqu)}, %util {fmt_num(util)}")
        if parts:
            out.append(f"{view.name} now: {'; '.join(parts)} (switch checkpoints, MAA SYNC paper)")
    return out


DG_STATES = (
    "status",
    "error",
    "gap_status",
    "transport_lag",
    "lag_unknown",
    "datum_age",
    "apply_state",
    "archive_gap",
)
"""oracle_dg fields whose outliers are Data Guard state findings."""


def _dg_reason(o: Outlier) -> str:
    """A state outlier in words: an unknown lag says what DGMGRL says."""
    if o.field == "lag_unknown":
        return "transport lag unknown (V$DATAGUARD_STATS has no value; DGMGRL: '(unknown)')"
    if o.field == "datum_age":
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
    for inst, row in view.frame.rows("oracle_dg").items():
        got = number(row.get("recv_rate")) if inst.startswith("thread_") else None
        owner = topo.owners.get(inst.removeprefix("thread_"))
        if got is None or owner is None:
            continue
        made = mean(ctx.recent((owner, "oracle_redo", "db", "redo_size"), n))
        if made:
            out[inst.removeprefix("thread_")] = (got, made)
    return out


def _mbs(rate: float) -> str:
    return f"{fmt_num(rate / 1e6)} MB/s"


def _behind(ctx: Context, view: HostView, thread: str) -> str:
    """``, 2 logs behind`` when the standby receives an older log of the thread than the one
    its instance writes (the primary's V$LOG_HISTORY sequence + 1); else empty."""
    owner = ctx.topology.owners.get(thread) if ctx.topology is not None else None
    pview = ctx.hosts.get(owner) if owner else None
    inst = f"thread_{thread}"
    done = number(pview.frame.value("oracle_dg", inst, "sequence")) if pview else None
    at = number(view.frame.value("oracle_dg", inst, "recv_seq"))
    logs = done + 1 - at if done is not None and at is not None else 0
    return f", {fmt_num(logs)} log(s) behind" if logs >= 1 else ""


@host_rule("dg_state", seed="MAA", weight=CAUSE)
def dg_state(ctx: Context, view: HostView) -> Iterable[Claim]:
    """MAA and the DG reference: a failed SYNC destination, a gap, lag above 1 s / 10 s."""
    h = view.name
    if not view.flagged("oracle_dg"):
        return
    for inst, row in view.frame.rows("oracle_dg").items():
        hits = [
            o
            for f in DG_STATES
            if (o := ctx.outlier((h, "oracle_dg", inst, f))) and o.severity != "info"
        ]
        if not hits:
            continue
        sync = is_sync(row.get("transmit_mode") or "SYNC")
        crit = any(o.severity == "crit" for o in hits) and (sync or inst == "db")
        sev = "crit" if crit else "warn"  # an ASYNC destination is a lag risk: warn at most
        what = "; ".join(_dg_reason(o) for o in hits)
        target = row.get("target") or inst
        fields = {o.field for o in hits}
        concl = (
            "SYNC destination not protecting commits"
            if inst != "db" and sync
            else "ASYNC destination behind: lag risk, not on the commit path"
            if inst != "db"
            else "the standby receives no redo"
            if fields & {"lag_unknown", "datum_age"}
            else "redo apply is not running"
            if fields == {"apply_state"}
            else "standby is behind"
        )
        evidence = [_dg_reason(o) for o in hits]
        split = thread_lags(view.frame) if inst == "db" else {}
        name = ctx.topology.thread_name if ctx.topology is not None else "thread {}".format
        if split:  # which RAC thread (and so which primary instance) the lag is
            late = max(split, key=lambda t: split[t])
            what += f"; {name(late)} {fmt_num(split[late])} s behind"
            evidence.append(
                "per thread (how long each RAC thread's reception has stood still, at most "
                "the transport lag): "
                + ", ".join(f"{name(t)} {fmt_num(v)} s" for t, v in split.items())
            )
        elif inst == "db" and (rates := thread_rates(ctx, view)):
            # a thread that still arrives, only slower than its instance writes it (one that
            # receives nothing stands still, which the stood-still lag and the state say)
            short = {t: (g, m) for t, (g, m) in rates.items() if 0 < g < m * SHORT}
            if short:
                worst = min(short, key=lambda t: short[t][0] / short[t][1])
                got, made = short[worst]
                what += (
                    f"; {name(worst)} arrives {_mbs(made - got)} short of the {_mbs(made)} "
                    "its instance generates"
                )
                evidence.append(
                    f"per thread, redo received over the last {fmt_num(RATE_S)} s (RFS BLOCK# "
                    "x 512 B) against its instance's 'redo size' rate: "
                    + ", ".join(
                        f"{name(t)} {fmt_num(g / 1e6)} of {_mbs(m)}{_behind(ctx, view, t)}"
                        for t, (g, m) in rates.items()
                    )
                    + f"; {name(worst)} falls {fmt_num((made - got) / made * 60)} s further "
                    "behind every minute, though it never stops"
                )
        since = ctx.now - view.role_changed if view.role_changed is not None else None
        if inst == "db" and since is not None and since < SETTLE_S:
            sev, concl = "info", f"{concl}, {fmt_num(since)} s after a role change: settling"
            evidence.append(
                f"the database became {view.role} {fmt_num(since)} s ago (a switchover or "
                f"failover): apply and transport restart within its steps; a fault only if "
                f"it lasts past {fmt_num(SETTLE_S)} s"
            )
        yield Claim(
            host=h,
            subject=inst,
            severity=sev,
            cause=f"{target}: {what}",
            where=h,
            conclusion=concl,
            evidence=evidence,
            series=[o.key for o in hits],
        )

"""Advice rules: each names its seed, the evidence it saw, and what to do.

Cause rules (a specific mechanism that the seeds describe) outrank advice rules (a setting worth
changing), which outrank the generic commit-path chain; the chain is only reported when no cause
rule explains a degraded commit path.  When the commit path is degraded on the primary, a cause
whose series line up with it (r >= ``R_MIN``, see correlate.py) names the chain,
``<commit-path series> <- <cause> (<where>, r=..): <conclusion>``, and takes the symptom's
severity (a p99 in the 128-256 ms stalls of seed 001 is ``crit``).

Rule parameters that are not per-field thresholds live here as constants, with their source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from sgmon import buckets
from sgmon.analysis.adaptive_sync import adaptive_sync
from sgmon.analysis.budget import STANDBY_IO as STANDBY_EVENTS
from sgmon.analysis.budget import describe as describe_budget
from sgmon.analysis.context import PEAK_TICKS, Context, HostView, now
from sgmon.analysis.correlate import Link, overlap
from sgmon.analysis.logspace import log_space
from sgmon.analysis.results import Finding, Outlier, SeriesKey
from sgmon.events import COMMIT_EVENTS, SYNC_REMOTE_WRITE
from sgmon.judgement import RANK, Limit, worst
from sgmon.model import number
from sgmon.units import fmt_num

CAUSE, ADVICE, GENERIC = 3.0, 1.0, 0.5  # score weights: a mechanism beats a setting beats "slow"
INFERRED = 2.0  # a cause read from the database alone, without the OS evidence the seed saw
R_MIN = 0.3  # correlation that counts as "lines up"
RECENT = 10  # ticks a one-tick event (a retransmit) keeps counting
LOSSY = 3  # retransmits within RECENT ticks that make steady loss, not the odd one (seed 001)
DEEP_QUEUE = 4.0  # seed 003: avgqu-sz 30-87 while capped; MAA: > 1 is saturation
QUEUED_IDLE = 20.0  # %idle below which a run queue over 2x cores counts as CPU starvation
AWAIT_RATIO = 5.0  # seed 003: await 57-134 ms vs svctm 0.9-1.5 ms
STORM_S, GUIDE_S = 60.0, 1200.0  # a storm; seed 000: logs sized for >= 20 min at peak
TABLE2 = ((5e6, 4), (25e6, 16), (50e6, 32), (float("inf"), 64))  # redo B/s up to -> log GB

Rule = Callable[[Context], Iterable[Finding]]


def _mean(vals: Iterable[float | None]) -> float | None:
    xs = [v for v in vals if v is not None]
    return sum(xs) / len(xs) if xs else None


def describe(o: Outlier) -> str:
    """``standby disk sdb w_await 40 ms`` for a chain link."""
    unit = f" {o.unit}" if o.unit and not isinstance(o.value, str) else ""
    if isinstance(o.value, int | float) and buckets.is_bucket_field(o.collector, o.field):
        return f"{o.host} {o.collector} {o.instance} {o.field} {buckets.quantile_text(o.value)}"
    value = o.value if isinstance(o.value, str) else fmt_num(o.value)
    return f"{o.host} {o.collector} {o.instance} {o.field} {value}{unit}"


def make(
    ctx: Context,
    rule: str,
    seed: str,
    host: str,
    subject: str,
    base: str,
    cause: str,
    where: str,
    conclusion: str,
    evidence: list[str],
    series: list[SeriesKey],
    weight: float,
    overlap: float | None = None,
    explains: bool = True,
    bonus: float = 0.0,
) -> Finding:
    """A finding whose severity and title take the commit-path chain into account.

    The cause lines up with the chain by its best Pearson link (``r=``) or, for point events,
    by the event-overlap score (``overlap=``), whichever is higher; ``explains`` False keeps it
    off a chain it cannot explain whatever the correlation (the budget says so), and ``bonus``
    (0-1, budget evidence) ranks it among equals.
    """
    link = ctx.link(series) if explains else None
    score, strength = (link.r, link.strength()) if link else (None, "")
    if overlap is not None and (score is None or overlap > score):
        score, strength = overlap, f"overlap={overlap:.2f}"
    severity, title = base, f"{cause} ({where}): {conclusion}"
    if ctx.chain is not None and score is not None and score >= R_MIN:
        # only a cause that lines up is drawn as the symptom's cause ("<-"), and it is as
        # severe as the symptom it explains; "r=0.00" under an arrow would contradict itself
        title = f"{ctx.chain.label} <- {cause} ({where}, {strength}): {conclusion}"
        severity = worst((base, ctx.chain.trigger.severity)) or base
        evidence = [*evidence, f"lines up with {ctx.chain.label}: {chain_peak(ctx)}"]
        ctx.explained = ctx.explained or weight >= INFERRED
    rank = RANK[severity] * 10 + weight + (score or 0.0) + bonus
    key = f"{rule}:{host}:{subject}"
    return Finding(key, severity, host, title, evidence, series, rule, seed, ctx.now, None, rank)


def chain_peak(ctx: Context) -> str:
    """What the chain's title value is: the trigger's highest of the last ticks, beside its
    value now and baseline (one instant, so the lines of a finding agree)."""
    assert ctx.chain is not None
    return f"the highest of the last {PEAK_TICKS} ticks; now {now(ctx.chain.trigger)}"


def rto_stall(ctx: Context) -> Iterable[Finding]:
    """Seed 001: segments retransmitted on a DG socket wait out a 200 ms RTO each time."""
    for h, view in ctx.hosts.items():
        worst: tuple[float, str, dict] | None = None
        for inst, row in view.frame.rows("tcp").items():
            if inst == "host":
                continue
            n = sum(ctx.recent((h, "tcp", inst, "retransmits"), RECENT))
            if n > 0 and (worst is None or n > worst[0]):
                worst = (n, inst, row)
        if worst is None:
            continue
        n, inst, row = worst
        rtos = [*ctx.recent((h, "tcp", inst, "rto"), RECENT), number(row.get("rto"))]
        rto = min((r for r in rtos if r is not None), default=None)
        if rto is None:
            continue
        lim = ctx.grader.limit(h, "tcp", inst, "rto")
        stall = lim.warn if lim and lim.warn else 200.0
        rto_min = number(row.get("rto_min"))
        peer = str(row.get("peer") or "PEER").rsplit(":", 1)[0]
        keys = [(h, "tcp", inst, f) for f in ("retransmits", "rto", "lost", "retrans")]
        keys += [(h, "tcp", "host", f) for f in ("timeouts", "retrans_segs")]
        ev = [
            f"{inst}: {fmt_num(n)} segments retransmitted in the last {RECENT} ticks, "
            f"rto {fmt_num(rto)} ms, route rto_min "
            + (f"{fmt_num(rto_min)} ms" if rto_min is not None else "unset (kernel 200 ms)"),
        ]
        to = number(view.frame.value("tcp", "host", "timeouts"))
        if to:
            ev.append(f"host-wide RTO expiries {fmt_num(to)}/s (TCPTimeouts)")
        if rto >= stall:
            ev.append(
                f"each lost segment stalls the SYNC write ~{fmt_num(rto)} ms (seed 001); fix: "
                f"ip route change {peer} dev <if> ... rto_min 10ms (dial in for your network)"
            )
            yield make(
                ctx,
                "rto_stall",
                "001",
                h,
                "dg",  # one per host, whichever DG socket is worst now
                "warn",
                f"DG socket retransmits, rto {fmt_num(rto)} ms",
                ctx.route(h),
                "TCP retransmission stalls, see rto_min",
                ev,
                keys,
                CAUSE,
            )
        else:
            ev.append(
                f"rto already below {fmt_num(stall)} ms, so each loss costs ~rto; "
                "the loss itself is on the network path (seed 001)"
            )
            yield make(
                ctx,
                "dg_loss",
                "001",
                h,
                "dg",  # one per host, whichever DG socket is worst now
                "warn" if n >= LOSSY else "info",
                f"DG socket retransmits, rto {fmt_num(rto)} ms",
                ctx.route(h),
                "packet loss on the DG link, stalls bounded by the low rto_min",
                ev,
                keys,
                CAUSE,
            )


STANDBY_IO_SUBJECT = "io"
"""One finding per standby for its I/O, whether inferred below iostat's view or seen saturated:
the same cause, so an onset first inferred becomes the seen diagnosis, not a second finding."""


def standby_io(ctx: Context) -> Iterable[Finding]:
    """Seed 003: await far above svctm with a deep queue on the standby's redo device."""
    for h, view in ctx.hosts.items():
        if view.role != "standby":
            continue
        disks = view.frame.rows("disk")
        names = [d for d in view.devices if d in disks] or list(disks)
        best: tuple[float, str, float, float | None, float | None] | None = None
        for dev in names:
            row = disks[dev]
            aqu = number(row.get("aqu_sz"))
            aw = max(
                (
                    a
                    for a in (number(row.get("w_await")), number(row.get("r_await")))
                    if a is not None
                ),
                default=None,
            )
            if aqu is None or aw is None or aqu < DEEP_QUEUE:
                continue
            svctm = number(row.get("svctm"))
            lim = ctx.grader.limit(view.name, "disk", dev, "w_await")
            if (svctm and aw < AWAIT_RATIO * svctm) or aw < (lim.warn if lim and lim.warn else 10):
                continue
            if best is None or aqu > best[0]:
                best = (aqu, dev, aw, svctm, number(row.get("util")))
        if best is None:
            yield from _standby_io_unseen(ctx, view)
            continue
        aqu, dev, aw, svctm, util = best
        ev = [
            f"{dev}: await {fmt_num(aw)} ms vs svctm {fmt_num(svctm)} ms, aqu-sz {fmt_num(aqu)}, "
            f"%util {fmt_num(util)}: requests wait in the queue, the volume is capped (seed 003)"
        ]
        for event in STANDBY_EVENTS:
            avg = number(view.frame.value("oracle_waits", event, "avg"))
            p99 = number(view.frame.value("oracle_waits", event, "p99"))
            if avg is not None:
                tail = f", p99 {buckets.quantile_text(p99)}" if p99 is not None else ""
                ev.append(f"standby {event} avg {fmt_num(avg)} ms{tail}")
        p = ctx.primary
        if p is not None and ctx.outlier((p.name, "oracle_redo", "db", "redo_size_lwd")):
            ev.append(
                "primary 'redo size for lost write detection' is up: DB_LOST_WRITE_PROTECT "
                "makes the standby read what the primary read (seed 003)"
            )
        ev.append(
            "fix: give the standby redo/SRL volume the primary's IOPS (seed 003); "
            "Fast Sync (SYNC NOAFFIRM) keeps standby I/O out of commits (seed 000)"
        )
        keys = [(h, "disk", dev, f) for f in ("w_await", "r_await", "aqu_sz", "util")]
        keys += [(h, "oracle_waits", e, f) for e in STANDBY_EVENTS for f in ("avg", "p99")]
        yield make(
            ctx,
            "standby_io",
            "003",
            h,
            STANDBY_IO_SUBJECT,
            "warn",
            f"{h} disk {dev} await {fmt_num(aw)} ms vs svctm {fmt_num(svctm)} ms, "
            f"queue {fmt_num(aqu)}",
            h,
            "standby I/O saturated, see seed 003",
            ev,
            keys,
            CAUSE,
        )


def _standby_io_unseen(ctx: Context, view: HostView) -> Iterable[Finding]:
    """Seed 003 without iostat's queue: the SRL writes are slow and carry the remote write, but
    the devices look idle, because the cap sits above them (a cgroup blkio throttle holds bios
    before they become requests; a hypervisor or volume IOPS limit)."""
    b, h = ctx.budget, view.name
    if ctx.chain is None or b is None or not b.remote_write_ms or b.standby_io_ms is None:
        return
    if switching(ctx) or busiest_disk(view)[1] >= DEEP_QUEUE:
        # a switch storm explains the standby's slow writes (log_switches says so, one cause
        # one finding), and a deep queue on any standby device is in iostat's view, not below
        return
    if b.standby_io_ms < 0.5 * b.remote_write_ms:
        return
    keys = [(h, "oracle_waits", e, f) for e in STANDBY_EVENTS for f in ("avg", "p99")]
    hits = [o for k in keys if (o := ctx.outlier(k)) and not o.quiet]  # out of line this tick
    if not hits:
        return
    ev = [now(o) for o in hits]
    ev.append(f"budget: {describe_budget(b)}")
    ev.append(
        "iostat shows no deep queue on the standby's devices: the I/O is held above them "
        "(cgroup blkio throttle, hypervisor or volume IOPS cap); check the SRL volume's "
        "limits (seed 003)"
    )
    yield make(
        ctx,
        "standby_io",
        "003",
        h,
        STANDBY_IO_SUBJECT,
        "warn",
        f"{h} {hits[0].instance} {hits[0].field} {fmt_num(number(hits[0].value))} ms",
        h,
        "standby I/O slow below iostat's view, see seed 003",
        ev,
        keys,
        INFERRED,
    )


def switching(ctx: Context) -> bool:
    """Whether a log switch explains a remote-write spike now: one in the last ``RECENT`` ticks
    (seed 000, Figure 3), or switches more often than Table 2's sizing allows."""
    p = ctx.primary
    t: Sequence[float] = p.switches if p is not None else ()
    if t and ctx.now - t[-1] <= RECENT * ctx.interval:
        return True
    return len(t) > 1 and max(t[-1] - t[-2], ctx.now - t[-1]) < GUIDE_S


def busiest_disk(view: HostView) -> tuple[str, float, float | None]:
    """(device, aqu-sz, %util) of the host's device with the deepest queue now."""
    best: tuple[str, float, float | None] = ("", 0.0, None)
    for dev, row in view.frame.rows("disk").items():
        aqu = number(row.get("aqu_sz"))
        if aqu is not None and aqu > best[1]:
            best = (dev, aqu, number(row.get("util")))
    return best


def log_switches(ctx: Context) -> Iterable[Finding]:
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
            "and spikes remote write times (seed 000, Figure 3)"
        )
        if every is None or every >= GUIDE_S:
            if hit and ctx.now - t[-1] <= RECENT * ctx.interval:  # one switch, answered
                yield make(
                    ctx,
                    "log_switches",
                    "000",
                    h,
                    "redo",
                    "info",
                    f"log switch {fmt_num(ctx.now - t[-1])} s ago",
                    h,
                    "a log switch spiked the remote write",
                    [spike],
                    keys,
                    CAUSE,
                    hit,
                )
            continue
        base = "warn" if every <= STORM_S else "info"
        rate = _mean(ctx.recent((h, "oracle_redo", "db", "redo_size"), 60))
        ev = [f"{len(t)} log switches remembered, last two {fmt_num(t[-1] - t[-2])} s apart"]
        tail = "switches more often than the redo log sizing guidance"
        if rate:
            gb = next(size for top, size in TABLE2 if rate <= top)
            want = f"{gb} GB"
            if rate * every >= gb * 2**30 and every > STORM_S:
                continue  # logs of Table 2's size at this rate: the switches are fine
            ev.append(
                f"redo {fmt_num(rate / 1e6)} MB/s x {fmt_num(every)} s = logs of about "
                f"{fmt_num(rate * every / 1e6)} MB; Table 2 wants {want} "
                f"(or peak MB/min x 20 min)"
            )
            tail = f"redo logs too small, Table 2 wants {want}"
        ev.append(spike)
        ev += standby_after_switches(ctx)
        yield make(
            ctx,
            "log_switches",
            "000",
            h,
            "redo",
            base,
            f"log switches every {fmt_num(every)} s",
            h,
            tail,
            ev,
            keys,
            CAUSE,
            hit,
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
            out.append(f"{view.name} now: {'; '.join(parts)} (switch checkpoints, seed 000)")
    return out


def cpu_starvation(ctx: Context) -> Iterable[Finding]:
    """Seed 000, commit steps 2 and 12: LGWR (and RFS) need CPU to write and to post."""
    for h, view in ctx.hosts.items():
        row = view.frame.rows("cpu").get("all", {})
        idle, runq = number(row.get("idle")), number(row.get("runq_sz"))
        idle_lim = ctx.grader.limit(h, "cpu", "all", "idle", view.ncpu)
        runq_lim = ctx.grader.limit(h, "cpu", "all", "runq_sz", view.ncpu)
        busy = idle is not None and idle_lim is not None and idle_lim.grade(idle) is not None
        queued = runq is not None and runq_lim is not None and runq_lim.grade(runq) is not None
        if not (busy or (queued and idle is not None and idle < QUEUED_IDLE)):
            continue  # a long run queue on CPUs that still idle is a sampling blip, not starvation
        has_db = bool(view.frame.rows("oracle_waits"))
        who = ("RFS" if view.role == "standby" else "LGWR") if has_db else "the database"
        ev = [
            f"CPU %idle {fmt_num(idle)}, runq-sz {fmt_num(runq)}, load1 "
            f"{fmt_num(number(row.get('load1')))} on {view.ncpu} CPUs (seed 000: %idle near 0, "
            "runq or load above 2x cores)"
        ]
        b = ctx.budget
        lgwr = b.share(b.overhead_ms) if b is not None else None
        remote = b.share(b.remote_write_ms) if b is not None else None
        if who == "LGWR" and lgwr is not None and b is not None:
            ev.append(
                f"{fmt_num(b.overhead_ms)} ms of log file sync {fmt_num(b.lfs_ms)} ms is "
                "outside the local and remote writes: LGWR waiting for CPU and posting"
            )
        workers = number(view.frame.value("oracle_waits", "LGWR any worker group", "time_waited"))
        if who == "LGWR" and workers:
            ev.append(
                f"LGWR any worker group {fmt_num(workers)} ms/s: LGWR waits for its LGnn "
                "workers, which wait in the run queue once woken"
            )
        # Where the time goes says which host's CPU the commits wait for: LGWR's overhead on
        # the primary, the remote write on the standby (two hosts may share one busy kernel).
        explains = who != "RFS" or remote is None or remote >= 0.5
        bonus = (lgwr or 0.0) if who == "LGWR" else 0.0
        ev.append(
            f"fix: find what takes the CPU; keep {who} runnable (priority, fewer "
            "foregrounds, more cores)"
        )
        keys = [(h, "cpu", "all", f) for f in ("idle", "runq_sz", "load1", "usr", "sys")]
        cause = f"CPU %idle {fmt_num(idle)}, runq {fmt_num(runq)} on {view.ncpu} CPUs"
        yield make(
            ctx,
            "cpu_starvation",
            "000",
            h,
            "cpu",
            "warn",
            cause,
            h,
            f"{who} CPU starvation" if has_db else "CPU saturated (seed 000)",
            ev,
            keys,
            CAUSE,
            explains=explains,
            bonus=bonus,
        )


def memory(ctx: Context) -> Iterable[Finding]:
    """Seed 000: %memused near 100 with scans over 200 pages/s, or any swapping."""
    for h, view in ctx.hosts.items():
        row = view.frame.rows("paging").get("all", {})
        used = number(row.get("memused"))
        scan = sum(v for v in (number(row.get("pgscank")), number(row.get("pgscand"))) if v)
        swap = sum(v for v in (number(row.get("pswpin")), number(row.get("pswpout"))) if v)
        lim = ctx.grader.limit(h, "paging", "all", "memused")
        near_full = used is not None and lim is not None and lim.grade(used) is not None
        if not ((near_full and scan >= 200) or swap >= 1):
            continue
        ev = [
            f"%memused {fmt_num(used)}, scan {fmt_num(scan)} pages/s, swapping "
            f"{fmt_num(swap)} pages/s (seed 000: memused near 100 with scans over 200/s is a "
            "shortage; swapping deteriorates performance dramatically)"
        ]
        keys = [
            (h, "paging", "all", f)
            for f in ("pgscank", "pgscand", "pswpin", "pswpout", "memused", "majflt")
        ]
        yield make(
            ctx,
            "memory",
            "000",
            h,
            "memory",
            "warn",
            f"memory {fmt_num(used)}% used, scan {fmt_num(scan)}/s, swap {fmt_num(swap)}/s",
            h,
            "memory shortage",
            ev,
            keys,
            CAUSE,
        )


def nic(ctx: Context) -> Iterable[Finding]:
    """Seed 000: drops and overruns on an interface show saturation."""
    bad = ("rx_drop", "tx_drop", "rx_overrun", "rx_fifo", "tx_fifo", "rx_err", "tx_err", "util")
    for h, view in ctx.hosts.items():
        for iface in view.frame.rows("netdev"):
            hits = [
                o
                for f in bad
                if (o := ctx.outlier((h, "netdev", iface, f))) and o.severity != "info"
            ]
            if not hits:
                continue
            what = ", ".join(f"{o.field} {fmt_num(number(o.value))}" for o in hits)
            ev = [f"{iface}: {o.reason}" for o in hits]
            ev.append(
                "seed 000: dropped and overrun counts indicate interface saturation; the "
                "NIC must carry the peak redo rate plus other traffic"
            )
            yield make(
                ctx,
                "nic",
                "000",
                h,
                iface,
                "warn",
                f"{h} {iface} {what}",
                h,
                "NIC saturation",
                ev,
                [o.key for o in hits],
                CAUSE,
            )


def network_latency(ctx: Context) -> Iterable[Finding]:
    """Seed 000 "Network": SYNC does best below 5 ms round trip; every commit pays the RTT."""
    for h, view in ctx.hosts.items():
        worst: tuple[float, str, Limit, str] | None = None
        for inst in view.frame.rows("tcp"):
            if inst == "host":
                continue
            rtt = _mean(ctx.recent((h, "tcp", inst, "rtt"), RECENT))
            lim = ctx.grader.limit(h, "tcp", inst, "rtt")
            if rtt is None or lim is None or (sev := lim.grade(rtt)) is None:
                continue
            if worst is None or rtt > worst[0]:
                worst = (rtt, inst, lim, sev)
        if worst is None:
            continue
        rtt, inst, lim, sev = worst
        ev = [
            f"{inst}: smoothed RTT {fmt_num(rtt)} ms over the last {RECENT} ticks ({lim.source})",
            "seed 000: SYNC works best below 5 ms round trip; measure the link with "
            "`sgmon probe` (oratcptest-like, seed 002); consider Fast Sync or Far Sync",
        ]
        keys = [(h, "tcp", inst, f) for f in ("rtt", "rttvar")]
        yield make(
            ctx,
            "network_latency",
            "000",
            h,
            "dg",
            sev,
            f"DG round trip {fmt_num(rtt)} ms",
            ctx.route(h),
            "network latency above the SYNC comfort zone",
            ev,
            keys,
            CAUSE,
        )


def socket_buffers(ctx: Context) -> Iterable[Finding]:
    """Seed 000: socket buffers of at least 3 x BDP, from the measured RTT and link speed."""
    for h, view in ctx.hosts.items():
        speeds = [
            s
            for r in view.frame.rows("netdev").values()
            if (s := number(r.get("speed"))) and str(r.get("operstate", "up")).lower() == "up"
        ]
        if not speeds:
            continue
        mbit = max(speeds)
        hostrow = view.frame.rows("tcp").get("host", {})
        for inst, row in view.frame.rows("tcp").items():
            if inst == "host":
                continue
            rtt = _mean(ctx.recent((h, "tcp", inst, "rtt"), 60)) or number(row.get("rtt"))
            side, sysctl = (
                ("rcvbuf", "rmem_max") if view.role == "standby" else ("sndbuf", "wmem_max")
            )
            buf = number(row.get(side))
            if not rtt or not buf:
                continue
            bdp = mbit * 1e6 / 8 * rtt / 1000
            if buf >= 3 * bdp:
                continue
            cap = number(hostrow.get(sysctl))
            ev = [
                f"{inst}: {side} {fmt_num(buf)} B < 3 x BDP = 3 x {fmt_num(mbit)} Mbit/s x "
                f"{fmt_num(rtt)} ms = {fmt_num(3 * bdp)} B (seed 000)",
                f"net.core.{sysctl} "
                + (
                    f"{fmt_num(cap)} B"
                    if cap
                    else "not in the frame: check it is above RECV_BUF_SIZE/SEND_BUF_SIZE"
                ),
                "fix: SEND_BUF_SIZE/RECV_BUF_SIZE in sqlnet.ora at 3 x BDP, "
                f"net.core.{sysctl} above it",
            ]
            send_q = number(row.get("send_q")) or 0.0
            base = "warn" if side == "sndbuf" and send_q >= 0.5 * buf else "info"
            keys = [(h, "tcp", inst, f) for f in ("send_q", "rtt", "unacked")]
            yield make(
                ctx,
                "socket_buffers",
                "000",
                h,
                inst,
                base,
                f"{side} {fmt_num(buf)} B below 3 x BDP {fmt_num(3 * bdp)} B",
                ctx.route(h),
                "socket buffers too small for the link",
                ev,
                keys,
                ADVICE,
            )


def fast_sync(ctx: Context) -> Iterable[Finding]:
    """Seed 000: when standby I/O dominates the remote write, SYNC NOAFFIRM removes it."""
    p, b = ctx.primary, ctx.budget
    if p is None or b is None or not b.remote_write_ms or b.standby_io_ms is None or not b.lfs_ms:
        return
    share = b.standby_io_ms / b.remote_write_ms
    if share < 0.5 or b.remote_write_ms < 0.3 * b.lfs_ms:
        return
    affirm = [
        i
        for i, r in p.frame.rows("oracle_dg").items()
        if i.startswith("dest_")
        and str(r.get("affirm", "")).upper() == "YES"
        and str(r.get("transmit_mode", "")).upper().startswith("SYNC")
    ]
    if not affirm:
        return
    ev = [
        f"budget: {describe_budget(b)}",
        f"{', '.join(affirm)}: SYNC AFFIRM",
        "seed 000: Fast Sync acknowledges on receipt in standby memory, removing standby I/O "
        "from the commit; a tiny exposure remains if both sites fail within milliseconds",
    ]
    keys = [(p.name, "oracle_waits", SYNC_REMOTE_WRITE, f) for f in ("avg", "p99")]
    remote_hurts = ctx.chain is not None and ctx.chain.trigger.instance in COMMIT_EVENTS[1:]
    base = "warn" if remote_hurts else "info"
    yield make(
        ctx,
        "fast_sync",
        "000",
        p.name,
        "affirm",
        base,
        f"SYNC Remote Write {fmt_num(b.remote_write_ms)} ms, standby I/O "
        f"{fmt_num(b.standby_io_ms)} ms ({share:.0%}) of it",
        p.name,
        "consider Fast Sync (SYNC NOAFFIRM)",
        ev,
        keys,
        ADVICE,
    )


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


def dg_state(ctx: Context) -> Iterable[Finding]:
    """MAA and the DG reference: a failed SYNC destination, a gap, lag above 1 s / 10 s."""
    for h, view in ctx.hosts.items():
        for inst, row in view.frame.rows("oracle_dg").items():
            hits = [
                o
                for f in DG_STATES
                if (o := ctx.outlier((h, "oracle_dg", inst, f))) and o.severity != "info"
            ]
            if not hits:
                continue
            sev = "crit" if any(o.severity == "crit" for o in hits) else "warn"
            what = "; ".join(_dg_reason(o) for o in hits)
            target = row.get("target") or inst
            fields = {o.field for o in hits}
            concl = (
                "SYNC destination not protecting commits"
                if inst != "db"
                else "the standby receives no redo"
                if fields & {"lag_unknown", "datum_age"}
                else "redo apply is not running"
                if fields == {"apply_state"}
                else "standby is behind"
            )
            yield make(
                ctx,
                "dg_state",
                "MAA",
                h,
                inst,
                sev,
                f"{target}: {what}",
                h,
                concl,
                [_dg_reason(o) for o in hits],
                [o.key for o in hits],
                CAUSE,
            )


def commit_chain(ctx: Context) -> Iterable[Finding]:
    """The commit path is degraded and no cause rule explains it: show what lines up."""
    c, p = ctx.chain, ctx.primary
    if c is None or p is None:
        return
    top: list[Link] = [lk for lk in c.links if lk.r >= R_MIN][:3]
    ev = [c.trigger.reason]
    if ctx.budget is not None:
        ev.append(f"budget: {describe_budget(ctx.budget)}")
    ev += [f"lines up: {describe(lk.outlier)} ({lk.strength()})" for lk in top]
    if top:
        title = f"{c.label} <- {describe(top[0].outlier)} (r={top[0].r:.2f}): commit path degraded"
    else:
        title = f"{c.label}: commit path degraded, nothing on either host lines up"
    yield Finding(
        f"commit_chain:{p.name}:commit",
        c.trigger.severity,
        p.name,
        title,
        ev,
        [c.trigger.key, *(lk.outlier.key for lk in top)],
        "commit_chain",
        "000",
        ctx.now,
        None,
        RANK[c.trigger.severity] * 10 + GENERIC,
    )


CAUSES: tuple[Rule, ...] = (
    adaptive_sync,
    rto_stall,
    standby_io,
    log_switches,
    cpu_starvation,
    memory,
    nic,
    network_latency,
    dg_state,
    log_space,
)
ADVICE_RULES: tuple[Rule, ...] = (socket_buffers, fast_sync)


def evaluate(ctx: Context) -> list[Finding]:
    """All rules; the generic chain only when no cause explains a degraded commit path."""
    out = [f for rule in (*CAUSES, *ADVICE_RULES) for f in rule(ctx)]
    if not ctx.explained:
        out += list(commit_chain(ctx))
    return out

"""The standby's I/O: await far above svctm with a deep queue on the redo device (seed 003), or
RFS writes slow where iostat cannot see it."""

from __future__ import annotations

from collections.abc import Iterable

from sgmon import buckets
from sgmon.analysis.budget import STANDBY_IO as STANDBY_EVENTS
from sgmon.analysis.context import Context, HostView, now, once
from sgmon.analysis.correlate import pearson
from sgmon.analysis.rules.base import (
    AWAIT_RATIO,
    CAUSE,
    DEEP_QUEUE,
    INFERRED,
    R_MIN,
    Claim,
    busiest_disk,
    remote_write_event,
    rule,
    switching,
)
from sgmon.contract import Row
from sgmon.events import SYNC_REMOTE_WRITE
from sgmon.fields import BIOLAT, DISK, ORACLE_REDO, ORACLE_WAITS, PROCS
from sgmon.model import Frame, number
from sgmon.units import fmt_num
from sgmon.verdicts import Budget, SeriesKey

LWD_WINDOW = 120
"""Ticks over which the primary's lost-write-detection redo is compared with the standby's
trouble (seed 003 saw them move together over days of 15-minute snapshots)."""
STANDBY_IO_SUBJECT = "io"
"""One finding per standby for its I/O, whether inferred below iostat's view or seen saturated:
the same cause, so an onset first inferred becomes the seen diagnosis, not a second finding."""
Saturated = tuple[str, str, tuple[str, ...], tuple[SeriesKey, ...]]
"""A capped standby device as its frame shows it: the device, the cause, the evidence and the
series it rests on."""
Capped = tuple[float, str, float, float | None, float | None]
"""A capped device: its queue (aqu-sz), name, await, svctm and %util."""
DEVICE = (DISK.w_await, DISK.r_await, DISK.aqu_sz, DISK.util)
"""A capped device's series, as the finding cites them."""
TAIL = (BIOLAT.p99, BIOLAT.max)
"""The device's latency tail (biolatency), when it is read."""
WAITS = (ORACLE_WAITS.avg, ORACLE_WAITS.p99)
"""The standby's SRL write waits' series (``STANDBY_EVENTS``)."""
DB = ORACLE_REDO.Rows.db.fixed


@rule("standby_io", seed="003", weight=CAUSE)
def standby_io(ctx: Context) -> Iterable[Claim]:
    """Seed 003: await far above svctm with a deep queue on the standby's redo device."""
    for h, view in ctx.hosts.items():
        if view.role != "standby":
            continue
        seen = once(ctx, view, _saturated)
        if seen is None:
            yield from _standby_io_unseen(ctx, view)
            continue
        dev, cause, said, keys = seen
        lost_writes = lost_write_reads(ctx, DISK.w_await.key(h, dev), f"the standby's {dev} await")
        far = ctx.topology is not None and h in ctx.topology.far_sync
        kind = "far sync" if far else "standby"  # a far sync's SRL writes are the commit's too
        ev = [*said, *lost_writes, _storage_fix(ctx, h, far, bool(lost_writes))]
        yield Claim(
            host=h,
            subject=STANDBY_IO_SUBJECT,
            severity="warn",
            cause=cause,
            where=h,
            conclusion=f"{kind} I/O saturated: its volume is capped",
            evidence=ev,
            series=list(keys),
        )


MIGRATED = "\"Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits\""
"""The public account of a standby volume's IOPS cap slowing the primary's commits."""


def _storage_fix(ctx: Context, host: str, far: bool, lost_writes: bool) -> str:
    """What to do about a capped standby: its storage as a whole (recovery's data-file reads
    fill the same cap as the SRL writes), DB_LOST_WRITE_PROTECT=NONE on it meanwhile when the
    primary's lost-write redo is in the evidence, and Fast Sync only where it can help: on the
    commit path, from 12.1 on, not already there."""
    if far:  # a far sync has SRLs and no datafiles to read
        fix = "fix: give the far sync's redo/SRL volume the IOPS of the primary's redo volume"
    else:
        fix = (
            "fix: give the standby's storage as a whole (datafiles as well as the SRLs) the "
            "primary's IOPS and throughput: recovery's reads fill the same cap as the SRL writes"
        )
    if lost_writes and not far:
        fix += "; meanwhile DB_LOST_WRITE_PROTECT=NONE on this standby stops the extra reads"
    fix += f" ({MIGRATED})"
    if not ctx.on_commit_path(host):
        return fix  # no commit waits for it: Fast Sync is beside the point
    if ctx.topology is not None and ctx.topology.fast_sync(host):
        return (
            fix + "; Fast Sync already keeps these writes out of commits, they still hold "
            "back the standby's own writes and apply"
        )
    if remote_write_event(ctx) == SYNC_REMOTE_WRITE:
        return fix + "; Fast Sync (SYNC NOAFFIRM) keeps standby I/O out of commits meanwhile"
    return fix + "; 11.2 has no Fast Sync to keep standby I/O out of commits"


def _saturated(ctx: Context, view: HostView) -> Saturated | None:
    """The standby's most queued device that is capped, with what its frame alone says of it:
    the same for every primary instance (RAC), so ``standby_io`` makes it ``once``."""
    capped = _capped(ctx, view)
    if capped is None:
        return None
    h, frame = view.name, view.frame
    aqu, dev, aw, svctm, util = capped
    tail = _latency_tail(frame, dev)
    ev = [
        (
            f"{dev}: await {fmt_num(aw)} ms vs svctm {fmt_num(svctm)} ms, aqu-sz {fmt_num(aqu)}, "
            f"%util {fmt_num(util)}: requests wait in the queue, the volume is capped "
            "(Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits)"
        ),
        *tail,
        *_srl_waits(frame),
        *_rfs_in_d(frame),
    ]
    keys = [f.key(h, dev) for f in DEVICE]
    keys += [f.key(h, dev) for f in TAIL if tail]
    keys += [f.key(h, e) for e in STANDBY_EVENTS for f in WAITS]
    cause = f"{h} disk {dev} await {fmt_num(aw)} ms vs svctm {fmt_num(svctm)} ms, "
    cause += f"queue {fmt_num(aqu)}"
    return dev, cause, tuple(ev), tuple(keys)


def _capped(ctx: Context, view: HostView) -> Capped | None:
    """Of the standby's redo devices (the config's, else all), the most queued one whose
    requests wait in its queue rather than on the device (``_queued``)."""
    disks = view.frame.rows(DISK.name)
    names = [d for d in view.devices if d in disks] or list(disks)
    best: Capped | None = None
    for dev in names:
        row = disks[dev]
        aqu, aw = DISK.aqu_sz.of(row), _await(row)
        if aqu is None or aw is None or aqu < DEEP_QUEUE:
            continue
        svctm = DISK.svctm.of(row)
        if not _queued(ctx, view.name, dev, aw, svctm):
            continue
        if best is None or aqu > best[0]:
            best = (aqu, dev, aw, svctm, DISK.util.of(row))
    return best


def _await(row: Row) -> float | None:
    """The device's worse await, of its writes and its reads (None when neither is known)."""
    return max(
        (a for a in (DISK.w_await.of(row), DISK.r_await.of(row)) if a is not None), default=None
    )


def _queued(ctx: Context, host: str, dev: str, aw: float, svctm: float | None) -> bool:
    """Seed 003's sign of a cap: an await ``AWAIT_RATIO`` times the service time or more, and
    past the device's w_await warning (10 ms without one)."""
    lim = ctx.grader.limit(*DISK.w_await.key(host, dev))
    if svctm and aw < AWAIT_RATIO * svctm:
        return False
    return aw >= (lim.warn if lim and lim.warn else 10)


def _latency_tail(frame: Frame, dev: str) -> list[str]:
    """The device's latency tail from biolatency, when it is read: what await averages away."""
    lat_p99 = BIOLAT.p99.at(frame, dev)
    if lat_p99 is None:
        return []
    top = BIOLAT.max.at(frame, dev)
    most = f", max {buckets.quantile_text(top)}" if top is not None else ""
    return [
        (
            f"{dev}: I/O latency p99 {buckets.quantile_text(lat_p99)}{most} over "
            f"{fmt_num(BIOLAT.ios.at(frame, dev))} I/Os (biolatency): "
            "the tail each synced redo write can hit, which await averages away"
        )
    ]


def _srl_waits(frame: Frame) -> list[str]:
    """The standby's SRL write waits now (``STANDBY_EVENTS``), as evidence."""
    out = []
    for event in STANDBY_EVENTS:
        avg, p99 = ORACLE_WAITS.avg.at(frame, event), ORACLE_WAITS.p99.at(frame, event)
        if avg is not None:
            tail = f", p99 {buckets.quantile_text(p99)}" if p99 is not None else ""
            out.append(f"standby {event} avg {fmt_num(avg)} ms{tail}")
    return out


def _rfs_in_d(frame: Frame) -> list[str]:
    """The receiving processes (RFS) waiting on the device: the cap seen from the process."""
    out = []
    for name, prow in frame.rows(PROCS.name).items():
        if name.startswith("RFS") and PROCS.state.of(prow) == "D":
            io = PROCS.io_delay.of(prow)
            said = f", waiting for I/O {fmt_num(io)} ms/s" if io is not None else ""
            out.append(
                f"{name} in D ({PROCS.wchan.of(prow) or '?'}){said}: the receiving process "
                "itself waits on the device (Oracle Database Migrated to Cloud Starts Experiencing "
                "'log file sync' Waits, seen from the process)"
            )
    return out


def _standby_io_unseen(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 003 without iostat's queue: the SRL writes are slow and carry the remote write, but
    the devices look idle, because the cap sits above them (a cgroup blkio throttle holds bios
    before they become requests; a hypervisor or volume IOPS limit)."""
    b, h = _carried(ctx, view), view.name
    if b is None:
        return
    keys = [f.key(h, e) for e in STANDBY_EVENTS for f in WAITS]
    hits = [o for k in keys if (o := ctx.outlier(k)) and not o.quiet]  # out of line this tick
    if not hits:
        return
    ev = [now(o) for o in hits]
    ev.append(f"budget: {b.describe()}")
    seen = bool(view.frame.rows(DISK.name))
    if seen:
        ev.append(
            "iostat shows no deep queue on the standby's devices: the I/O is held above them "
            "(cgroup blkio throttle, hypervisor or volume IOPS cap); check the SRL volume's "
            "limits (Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' Waits)"
        )
    else:
        ev.append(
            "no disk figures from the standby (an AWR import has none): add its sar or "
            "OSWatcher history to see whether its redo device queues (Oracle Database Migrated to "
            "Cloud Starts Experiencing 'log file sync' Waits)"
        )
    ev += lost_write_reads(ctx, hits[0].key, f"the standby's {hits[0].instance}")
    yield Claim(
        host=h,
        subject=STANDBY_IO_SUBJECT,
        severity="warn",
        cause=f"{h} {hits[0].instance} {hits[0].field} {fmt_num(number(hits[0].value))} ms",
        where=h,
        conclusion="standby I/O slow below iostat's view"
        if seen
        else "standby I/O slow (its devices are not in this data)",
        evidence=ev,
        series=keys,
        weight=INFERRED,
    )


def _carried(ctx: Context, view: HostView) -> Budget | None:
    """The budget, when the standby's SRL writes carry half the remote write or more with no
    deep queue on any of its devices (that is in iostat's view) and no log switch storm (which
    explains them: log_switches says so, one cause one finding); else None."""
    b = ctx.budget
    if ctx.chain is None or b is None or not b.remote_write_ms or b.standby_io_ms is None:
        return None
    if switching(ctx) or busiest_disk(view)[1] >= DEEP_QUEUE:
        return None
    return None if b.standby_io_ms < 0.5 * b.remote_write_ms else b


def lost_write_reads(ctx: Context, follower: SeriesKey, what: str) -> list[str]:
    """Seed 003's second clue: with DB_LOST_WRITE_PROTECT every buffer-cache read on the
    primary logs redo for lost write detection, and the standby reads and checks those blocks
    on its own volume.  The primary logs that redo in proportion to its cache reads whenever
    the parameter is on, so it is evidence only when it is out of line, or when the standby's
    trouble (``follower``: the capped device's await, the RFS writes) moves with it."""
    p = ctx.primary
    if p is None:
        return []
    lwd_key = ORACLE_REDO.redo_size_lwd.key(p.name, DB)
    lwd = ORACLE_REDO.redo_size_lwd.at(p.frame, DB)
    if not lwd:
        return []
    xs, ys = ctx.recent(lwd_key, LWD_WINDOW), ctx.recent(follower, LWD_WINDOW)
    n = min(len(xs), len(ys))
    r = pearson(xs[len(xs) - n :], ys[len(ys) - n :])
    if ctx.outlier(lwd_key) is None and (r is None or r < R_MIN):
        return []
    reads = ORACLE_REDO.phys_reads_cache.at(p.frame, DB)
    said = f" (physical reads cache {fmt_num(reads)}/s)" if reads is not None else ""
    moves = (
        f"; {what} moved with it over the last {fmt_num(n * ctx.interval)} s (correlation {r:.2f})"
        if r is not None and r >= R_MIN
        else ""
    )
    return [
        (
            f"primary redo size for lost write detection {fmt_num(lwd / 1e3)} kB/s{said}{moves}: "
            "DB_LOST_WRITE_PROTECT makes the standby read and check what the primary read, on "
            "its own volume (Oracle Database Migrated to Cloud Starts Experiencing 'log file sync' "
            "Waits)"
        )
    ]

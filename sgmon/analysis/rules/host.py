"""The hosts' own resources on the commit path: CPU for LGWR and RFS (seed 000, commit steps 2
and 12) and memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from sgmon.analysis.context import Context, HostView, once
from sgmon.analysis.outliers import busy_pct, free_pct
from sgmon.analysis.rules.base import (
    CAUSE,
    OVERHEAD_MIN,
    QUEUED_IDLE,
    Claim,
    host_rule,
    rule,
)
from sgmon.contract import Row
from sgmon.fields import CPU, ORACLE_WAITS, PAGING, PROCS
from sgmon.units import fmt_num

SUBJECT = "cpu"
"""What ``cpu_starvation``'s claims are about (in their finding's key): a busy host's claim and
a starved one's are one finding, whichever holds."""
LGWR_WORKERS = "LGWR any worker group"
"""The wait event of LGWR waiting for its LGnn workers (12c)."""


class _Cpu(NamedTuple):
    """What a host's frame alone says of its CPU: the same for every primary instance."""

    row: Row
    busy: float | None
    """%usr + %sys + %irq + %soft + %steal: the CPUs running code (``busy_pct``)."""
    runq: float | None
    saturated: bool
    followed: bool
    waits: list[tuple[float, str, str]]
    """(run-queue delay ms/s, name, grade) of the host's commit-path processes past their
    warn level, worst first (``_cpu``)."""


def _cpu(ctx: Context, view: HostView) -> _Cpu:
    """The host's CPU as its frame shows it, and its commit-path processes kept waiting for a
    CPU (the procs collector's schedstat): LGWR and its LGnn workers and NSS/LNS on a primary,
    RFS on a standby.  Seed 000: a delay past its warn level is evidence while the commit path
    is degraded, which each instance's evaluation knows; past crit it is starvation whatever
    the commit path shows.

    Saturated means running code, never waiting for a disk: seed 000's %idle is the time the
    CPUs ran no code, so the %idle limit grades 100 - busy, where mpstat's %idle leaves out
    %iowait (idle CPUs with I/O outstanding: a capped disk drives it to 90 and %idle to 0) and
    niced work yields to the database's processes.  A run queue counts only with the CPUs
    busy as well (runq-sz is tasks runnable now; the load average also counts tasks blocked
    on a disk, so it is evidence, never the verdict)."""
    h = view.name
    whole = CPU.Rows.all.fixed
    row = view.frame.rows(CPU.name).get(whole, {})
    busy, runq, idle = busy_pct(row), CPU.runq_sz.of(row), free_pct(row)
    full = ctx.grader.grade(*CPU.idle.key(h, whole), idle, ncpu=view.ncpu) != "ok"
    queued = ctx.grader.grade(*CPU.runq_sz.key(h, whole), runq, ncpu=view.ncpu) != "ok"
    saturated = full or (queued and idle is not None and idle < QUEUED_IDLE)
    procs = view.frame.rows(PROCS.name)
    names = ("RFS",) if view.role == "standby" else ("LGWR", "LG", "NSS", "LNS")
    waits = []
    for inst, prow in procs.items():
        if not inst.startswith(names):
            continue
        delay = PROCS.runq.of(prow)
        sev = ctx.grader.grade(*PROCS.runq.key(h, inst), delay)
        if delay is not None and sev in ("warn", "crit"):
            waits.append((delay, inst, sev))
    return _Cpu(row, busy, runq, saturated, bool(procs), sorted(waits, reverse=True))


@rule("cpu_starvation", seed="000", weight=CAUSE)
def cpu_starvation(ctx: Context) -> Iterable[Claim]:
    """Seed 000, commit steps 2 and 12: LGWR (and RFS) need CPU to write and to post.

    Where the procs collector follows the processes, their own run-queue delay decides: CPUs
    busy with LGWR never kept waiting is a busy host, not a starved commit path, and LGWR kept
    waiting on a host with idle CPUs (affinity, a cgroup's quota) is starvation all the same.
    A host waiting on its disks (%iowait) is no CPU shortage (``_cpu``): the disk rules say so.
    """
    for h, view in ctx.hosts.items():
        cpu = once(ctx, view, _cpu)
        kept = [w for w in cpu.waits if w[2] == "crit" or ctx.chain is not None]
        if not (kept or cpu.saturated):
            continue  # a long run queue on CPUs that still idle is a sampling blip, not starvation
        if cpu.followed and not kept:
            yield _busy(h, view, cpu)
        else:
            yield _starved(ctx, h, view, cpu, kept)


def _who(view: HostView, cpu: _Cpu) -> tuple[bool, str]:
    """Whether the database is seen on the host (its waits or its processes), and whose CPU
    the commits wait for there: RFS on a standby, LGWR on a primary."""
    has_db = bool(view.frame.rows(ORACLE_WAITS.name)) or cpu.followed
    who = ("RFS" if view.role == "standby" else "LGWR") if has_db else "the database"
    return has_db, who


def _load(view: HostView, cpu: _Cpu) -> str:
    """The host's CPU figures, the evidence every claim of the rule starts from."""
    return (
        f"CPU busy {fmt_num(cpu.busy)}% (usr+sys+irq+soft+steal), %iowait "
        f"{fmt_num(CPU.iowait.of(cpu.row))}, runq-sz {fmt_num(cpu.runq)}, load1 "
        f"{fmt_num(CPU.load1.of(cpu.row))} on {view.ncpu} CPUs (Best Practices for Synchronous "
        "Redo Transport: CPUs "
        "running code nearly all the time, tasks queued for them beyond 2x cores)"
    )


def _busy_cause(view: HostView, cpu: _Cpu) -> str:
    """The cause of a claim on busy CPUs that no process is known to wait for."""
    return f"CPU busy {fmt_num(cpu.busy)}%, runq {fmt_num(cpu.runq)} on {view.ncpu} CPUs"


def _busy(h: str, view: HostView, cpu: _Cpu) -> Claim:
    """Busy CPUs on a host whose commit-path processes none of them keeps waiting: a busy
    host, not a starved commit path."""
    _, who = _who(view, cpu)
    return Claim(
        host=h,
        subject=SUBJECT,
        severity="info",
        cause=_busy_cause(view, cpu),
        where=h,
        conclusion=f"busy, but {who} is not kept waiting for a CPU",
        evidence=[_load(view, cpu), f"{who}'s run-queue delay is below its limit (schedstat)"],
        series=[CPU.idle.key(h, CPU.Rows.all.fixed)],
        explains=False,
    )


def _starved(
    ctx: Context, h: str, view: HostView, cpu: _Cpu, kept: list[tuple[float, str, str]]
) -> Claim:
    """The commit path kept waiting for a CPU (``kept``: its processes past their limits) or
    the host's CPUs saturated."""
    has_db, who = _who(view, cpu)
    ev = [_load(view, cpu)]
    if kept:
        ev.insert(
            0,
            "runnable but not running (schedstat run_delay): "
            + ", ".join(f"{name} {fmt_num(ms)} ms/s" for ms, name, _ in kept[:4])
            + " (Best Practices for Synchronous Redo Transport, commit step 2, measured)",
        )
    if who == "LGWR":
        ev += _lgwr_waits(ctx, view)
    explains, bonus = _explains(ctx, who)
    starved = cpu.saturated or explains or any(sev == "crit" for _, _, sev in kept)
    ev.append(
        f"fix: find what takes the CPU; keep {who} runnable (priority, fewer "
        "foregrounds, more cores)"
    )
    keys = [PROCS.runq.key(h, name) for _, name, _ in kept]
    keys += [
        f.key(h, CPU.Rows.all.fixed) for f in (CPU.idle, CPU.runq_sz, CPU.load1, CPU.usr, CPU.sys)
    ]
    if kept:
        cause = f"{kept[0][1]} waits for a CPU {fmt_num(kept[0][0])} ms/s"
    else:
        cause = _busy_cause(view, cpu)
    return Claim(
        host=h,
        subject=SUBJECT,
        severity="warn" if starved else "info",
        cause=cause,
        where=h,
        conclusion=f"{who} CPU starvation" if has_db else "CPU saturated",
        evidence=ev,
        series=keys,
        explains=explains,
        bonus=bonus,
    )


def _lgwr_waits(ctx: Context, view: HostView) -> list[str]:
    """Where LGWR's wait for a CPU shows in the primary's own figures: its overhead in the
    budget, and its wait for its workers, which wait in the run queue too."""
    out = []
    b = ctx.budget
    if b is not None and b.share(b.overhead_ms) is not None:
        out.append(
            f"{fmt_num(b.overhead_ms)} ms of log file sync {fmt_num(b.lfs_ms)} ms is "
            "outside the local and remote writes: LGWR waiting for CPU and posting"
        )
    workers = ORACLE_WAITS.time_waited.at(view.frame, LGWR_WORKERS)
    if workers:
        out.append(
            f"LGWR any worker group {fmt_num(workers)} ms/s: LGWR waits for its LGnn "
            "workers, which wait in the run queue once woken"
        )
    return out


def _explains(ctx: Context, who: str) -> tuple[bool, float]:
    """Whether the host's CPU can explain the commits' time, and the bonus that ranks it.

    Where the time goes says which host's CPU the commits wait for: LGWR's overhead on the
    primary, the remote write on the standby (two hosts may share one busy kernel).  LGWR's
    CPU wait is in its overhead: none there, and it cannot be the cause."""
    b = ctx.budget
    if who == "RFS":
        remote = b.share(b.remote_write_ms) if b is not None else None
        return remote is None or remote >= 0.5, 0.0
    lgwr = b.share(b.overhead_ms) if b is not None else None
    return lgwr is None or lgwr >= OVERHEAD_MIN, (lgwr or 0.0) if who == "LGWR" else 0.0


@host_rule("memory", seed="000", weight=CAUSE)
def memory(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: %memused near 100 with scans over 200 pages/s, or any swapping."""
    h = view.name
    whole = PAGING.Rows.all.fixed
    row = view.frame.rows(PAGING.name).get(whole)
    used = PAGING.memused.of(row)
    scan = sum(v for v in (PAGING.pgscank.of(row), PAGING.pgscand.of(row)) if v)
    swap = sum(v for v in (PAGING.pswpin.of(row), PAGING.pswpout.of(row)) if v)
    near_full = ctx.grader.grade(*PAGING.memused.key(h, whole), used) != "ok"
    if not ((near_full and scan >= 200) or swap >= 1):
        return
    ev = [
        (
            f"%memused {fmt_num(used)}, scan {fmt_num(scan)} pages/s, swapping "
            f"{fmt_num(swap)} pages/s (Best Practices for Synchronous Redo Transport: memused near "
            "100 with scans over 200/s is a "
            "shortage; swapping deteriorates performance dramatically)"
        )
    ]
    keys = [
        f.key(h, whole)
        for f in (
            PAGING.pgscank,
            PAGING.pgscand,
            PAGING.pswpin,
            PAGING.pswpout,
            PAGING.memused,
            PAGING.majflt,
        )
    ]
    yield Claim(
        host=h,
        subject="memory",
        severity="warn",
        cause=f"memory {fmt_num(used)}% used, scan {fmt_num(scan)}/s, swap {fmt_num(swap)}/s",
        where=h,
        conclusion="memory shortage",
        evidence=ev,
        series=keys,
    )

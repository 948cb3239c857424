"""The hosts' own resources on the commit path: CPU for LGWR and RFS (seed 000, commit steps 2
and 12) and memory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
from sgmon.model import Value, number
from sgmon.units import fmt_num


class _Cpu(NamedTuple):
    """What a host's frame alone says of its CPU: the same for every primary instance."""

    row: Mapping[str, Value]
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
    row = view.frame.rows("cpu").get("all", {})
    busy, runq, idle = busy_pct(row), number(row.get("runq_sz")), free_pct(row)
    full = ctx.grader.grade(h, "cpu", "all", "idle", idle, ncpu=view.ncpu) != "ok"
    queued = ctx.grader.grade(h, "cpu", "all", "runq_sz", runq, ncpu=view.ncpu) != "ok"
    saturated = full or (queued and idle is not None and idle < QUEUED_IDLE)
    procs = view.frame.rows("procs")
    names = ("RFS",) if view.role == "standby" else ("LGWR", "LG", "NSS", "LNS")
    waits = []
    for inst, prow in procs.items():
        if not inst.startswith(names):
            continue
        delay = number(prow.get("runq"))
        sev = ctx.grader.grade(h, "procs", inst, "runq", delay)
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
        row, busy, runq, saturated, followed, waits = once(ctx, view, _cpu)
        kept = [w for w in waits if w[2] == "crit" or ctx.chain is not None]
        if not (kept or saturated):
            continue  # a long run queue on CPUs that still idle is a sampling blip, not starvation
        has_db = bool(view.frame.rows("oracle_waits")) or followed
        who = ("RFS" if view.role == "standby" else "LGWR") if has_db else "the database"
        ev = [
            (
                f"CPU busy {fmt_num(busy)}% (usr+sys+irq+soft+steal), %iowait "
                f"{fmt_num(number(row.get('iowait')))}, runq-sz {fmt_num(runq)}, load1 "
                f"{fmt_num(number(row.get('load1')))} on {view.ncpu} CPUs (MAA SYNC paper: CPUs "
                "running code nearly all the time, tasks queued for them beyond 2x cores)"
            )
        ]
        if followed and not kept:
            yield Claim(
                host=h,
                subject="cpu",
                severity="info",
                cause=f"CPU busy {fmt_num(busy)}%, runq {fmt_num(runq)} on {view.ncpu} CPUs",
                where=h,
                conclusion=f"busy, but {who} is not kept waiting for a CPU",
                evidence=[*ev, f"{who}'s run-queue delay is below its limit (schedstat)"],
                series=[(h, "cpu", "all", "idle")],
                explains=False,
            )
            continue
        if kept:
            ev.insert(
                0,
                "runnable but not running (schedstat run_delay): "
                + ", ".join(f"{name} {fmt_num(ms)} ms/s" for ms, name, _ in kept[:4])
                + " (MAA SYNC paper commit step 2, measured)",
            )
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
        if who == "RFS":
            explains = remote is None or remote >= 0.5
        else:  # LGWR's CPU wait is in its overhead: none there, and it cannot be the cause
            explains = lgwr is None or lgwr >= OVERHEAD_MIN
        bonus = (lgwr or 0.0) if who == "LGWR" else 0.0
        starved = saturated or explains or any(sev == "crit" for _, _, sev in kept)
        ev.append(
            f"fix: find what takes the CPU; keep {who} runnable (priority, fewer "
            "foregrounds, more cores)"
        )
        keys = [(h, "procs", name, "runq") for _, name, _ in kept]
        keys += [(h, "cpu", "all", f) for f in ("idle", "runq_sz", "load1", "usr", "sys")]
        if kept:
            cause = f"{kept[0][1]} waits for a CPU {fmt_num(kept[0][0])} ms/s"
        else:
            cause = f"CPU busy {fmt_num(busy)}%, runq {fmt_num(runq)} on {view.ncpu} CPUs"
        yield Claim(
            host=h,
            subject="cpu",
            severity="warn" if starved else "info",
            cause=cause,
            where=h,
            conclusion=f"{who} CPU starvation" if has_db else "CPU saturated",
            evidence=ev,
            series=keys,
            explains=explains,
            bonus=bonus,
        )


@host_rule("memory", seed="000", weight=CAUSE)
def memory(ctx: Context, view: HostView) -> Iterable[Claim]:
    """Seed 000: %memused near 100 with scans over 200 pages/s, or any swapping."""
    h = view.name
    row = view.frame.rows("paging").get("all", {})
    used = number(row.get("memused"))
    scan = sum(v for v in (number(row.get("pgscank")), number(row.get("pgscand"))) if v)
    swap = sum(v for v in (number(row.get("pswpin")), number(row.get("pswpout"))) if v)
    near_full = ctx.grader.grade(h, "paging", "all", "memused", used) != "ok"
    if not ((near_full and scan >= 200) or swap >= 1):
        return
    ev = [
        (
            f"%memused {fmt_num(used)}, scan {fmt_num(scan)} pages/s, swapping "
            f"{fmt_num(swap)} pages/s (MAA SYNC paper: memused near 100 with scans over 200/s is a "
            "shortage; swapping deteriorates performance dramatically)"
        )
    ]
    keys = [
        (h, "paging", "all", f)
        for f in ("pgscank", "pgscand", "pswpin", "pswpout", "memused", "majflt")
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

"""Which series the outlier tracker judges, and how: the fields it keeps with a baseline, the
smallest departure worth a flag per unit, the commit path (where a departure warns), the OS
levels (whose limit must hold two ticks), and what a CPU level grades.

A CPU is short only of what runs on it: the %idle limit (seed 000: CPUs that run no code) grades
100 - ``busy_pct``, so a host waiting on its disks (%iowait) is not taken for a saturated one.
"""

from __future__ import annotations

from sgmon.analysis.latch import Plan
from sgmon.contract import Ref, Row
from sgmon.events import COMMIT_EVENTS
from sgmon.fields import (
    CPU,
    DISK,
    NETDEV,
    ORACLE_DG,
    ORACLE_REDO,
    ORACLE_TRACE,
    ORACLE_WAITS,
    PAGING,
    PROCS,
    TCP,
)
from sgmon.grading import Grader
from sgmon.model import Kind

FLOOR = {"ms": 2.0, "%": 10.0, "s": 1.0}  # smallest departure worth a flag, per unit
RATIO = {"ms": 3.0}  # and how many times the median it must reach (default 2)
SeriesPath = tuple[str, str, str]
"""A series of any host: ``(collector, instance, field)``, its key without the host."""


COMMIT_PATH: frozenset[SeriesPath] = frozenset(
    {
        f.path(e)
        for e in COMMIT_EVENTS
        for f in (ORACLE_WAITS.p90, ORACLE_WAITS.p99, ORACLE_WAITS.avg)
    }
    | {ORACLE_REDO.redo_synch_time.path(ORACLE_REDO.Rows.db.fixed)}
)

WATCHED: tuple[Ref, ...] = (
    *(CPU.usr, CPU.sys, CPU.iowait, CPU.idle, CPU.steal, CPU.runq_sz, CPU.load1, CPU.blocked),
    *(PAGING.pgscank, PAGING.pgscand, PAGING.pswpin, PAGING.pswpout, PAGING.majflt),
    *(PAGING.memused, PAGING.psi_cpu_some, PAGING.psi_mem_some, PAGING.psi_mem_full),
    PAGING.psi_io_some,
    *(DISK.r_await, DISK.w_await, DISK.aqu_sz, DISK.util, DISK.svctm),
    *(DISK.r_s, DISK.w_s, DISK.rkb_s, DISK.wkb_s),
    *(NETDEV.rx_err, NETDEV.tx_err, NETDEV.rx_drop, NETDEV.tx_drop, NETDEV.rx_overrun),
    *(NETDEV.rx_fifo, NETDEV.tx_fifo, NETDEV.util, NETDEV.rx_kb, NETDEV.tx_kb),
    *(TCP.rtt, TCP.rttvar, TCP.rto, TCP.retransmits, TCP.lost, TCP.unacked, TCP.send_q),
    *(TCP.recv_q, TCP.retrans_segs, TCP.timeouts, TCP.lost_retransmit),
    *(ORACLE_WAITS.avg, ORACLE_WAITS.p90, ORACLE_WAITS.p99, ORACLE_WAITS.waits),
    *(ORACLE_REDO.redo_size, ORACLE_REDO.redo_writes, ORACLE_REDO.redo_write_size),
    *(ORACLE_REDO.redo_write_time, ORACLE_REDO.redo_synch_time, ORACLE_REDO.user_commits),
    *(ORACLE_REDO.redo_size_lwd, ORACLE_REDO.phys_reads_cache, ORACLE_REDO.redo_bcast_ack),
    *(ORACLE_DG.transport_lag, ORACLE_DG.apply_lag, ORACLE_DG.resp_p99, ORACLE_DG.log_switches),
    *(ORACLE_TRACE.slow_writes, ORACLE_TRACE.max_write),
    PROCS.runq,  # what the rules cite: LGWR's and RFS's wait for a CPU
)
"""The series kept with a baseline (a departure from it is an outlier, and the chain correlates
them), whether or not they have a limit."""
WATCH: dict[str, frozenset[str]] = {
    c: frozenset(r.name for r in WATCHED if r.collector == c)
    for c in dict.fromkeys(r.collector for r in WATCHED)
}
"""``WATCHED``'s field names by collector, as a row's fields are looked up."""
LEVELS = frozenset({CPU.name, PAGING.name, DISK.name, NETDEV.name})
BUSY = (CPU.usr, CPU.sys, CPU.irq, CPU.soft, CPU.steal)
"""What a CPU spends running code that competes with the database's processes: not %iowait
(an idle CPU with I/O outstanding), not %nice (low-priority work that yields to them)."""
CPU_LEVELS = frozenset(r.name for r in (CPU.idle, CPU.load1, CPU.load5, CPU.load15))
"""The cpu fields whose limit grades what is really runnable (``OutlierTracker._running``)."""


def busy_pct(row: Row) -> float | None:
    """%usr + %sys + %irq + %soft + %steal of a cpu row; of a row that has none of them but
    %idle, what %idle, %iowait and %nice leave (None when it has neither)."""
    parts = [x for f in BUSY if (x := f.of(row)) is not None]
    if parts:
        return sum(parts)
    idle = CPU.idle.of(row)
    if idle is None:
        return None
    return 100.0 - idle - sum(x for f in (CPU.iowait, CPU.nice) if (x := f.of(row)))


def free_pct(row: Row) -> float | None:
    """What the %idle limit grades: the time the CPUs ran no code, 100 - ``busy_pct`` (idle,
    iowait and nice), never below mpstat's own %idle (guest time and rounding can make the
    busy parts add up past 100 - %idle).  One figure for the cells and the CPU rule."""
    idle, busy = CPU.idle.of(row), busy_pct(row)
    if busy is None:
        return idle
    return 100.0 - busy if idle is None else max(idle, 100.0 - busy)


def plan_of(grader: Grader, host: str, collector: str, name: str) -> Plan | None:
    """How the tracker judges a field of ``host``'s ``collector`` (None: not at all, neither
    watched nor limited)."""
    meta = grader.meta(host, collector, name)
    watched = name in WATCH.get(collector, ())
    if not (watched or grader.may_limit(host, collector, name)):
        return None
    unit = meta.unit if meta else ""
    up = meta.higher_is_worse if meta else True
    commit = collector in (ORACLE_WAITS.name, ORACLE_REDO.name)
    level = collector in LEVELS and meta is not None and meta.kind is Kind.GAUGE
    return watched, FLOOR.get(unit, 1.0), RATIO.get(unit, 2.0), up, unit, commit, level

"""`cpu`: per-CPU and all-CPU utilisation as mpstat -P ALL shows it, plus sar -q run queue.

Instances: ``all`` and ``cpu0``, ``cpu1``...  The host-wide fields (load, runq, context switches,
interrupts) are on the ``all`` row only.  Percentages are computed from /proc/stat tick deltas
divided by the real tick total of the interval (psutil's per-CPU percentages under-read at
sub-second intervals: psutil bug #1586).
"""

from __future__ import annotations

from sgmon.collector import Collector
from sgmon.model import Field, Kind

G, R = Kind.GAUGE, Kind.RATE

FIELDS = (
    Field("usr", "%", G, "time in user mode, less guest (mpstat %usr)"),
    Field("nice", "%", G, "time in user mode at low priority (mpstat %nice)"),
    Field("sys", "%", G, "time in kernel mode, less irq/softirq (mpstat %sys)", warn=30, crit=50),
    Field("iowait", "%", G, "idle with outstanding disk I/O (mpstat %iowait)"),
    Field("irq", "%", G, "servicing hardware interrupts (mpstat %irq)"),
    Field("soft", "%", G, "servicing softirqs (mpstat %soft)"),
    Field("steal", "%", G, "involuntary wait for the hypervisor (mpstat %steal)", warn=10),
    Field("guest", "%", G, "running a virtual CPU (mpstat %guest)"),
    Field("gnice", "%", G, "running a niced guest (mpstat %gnice)"),
    Field(
        "idle",
        "%",
        G,
        "idle without outstanding I/O (mpstat %idle)",
        warn=5,
        crit=1,
        higher_is_worse=False,
    ),
    Field("load1", "", G, "1-minute load average (sar -q ldavg-1)"),
    Field("load5", "", G, "5-minute load average (sar -q ldavg-5)"),
    Field("load15", "", G, "15-minute load average (sar -q ldavg-15)"),
    Field("runq_sz", "", G, "runnable tasks waiting for a CPU, excluding sgmon (sar -q runq-sz)"),
    Field("plist_sz", "", G, "tasks in the task list (sar -q plist-sz)"),
    Field("blocked", "", G, "tasks blocked on I/O (sar -q blocked)"),
    Field("cswch", "/s", R, "context switches per second (sar -w cswch/s)"),
    Field("intr", "/s", R, "interrupts per second (sar -I SUM)"),
)


class CpuCollector(Collector):
    """mpstat/sar -q figures from /proc/stat and /proc/loadavg."""

    name = "cpu"
    description = "CPU utilisation per CPU (mpstat -P ALL) and run queue (sar -q)"
    fields = FIELDS

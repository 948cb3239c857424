"""`paging`: memory pressure as sar -B and sar -W show it, plus PSI.

One instance, ``all``.  Read from /proc/vmstat, /proc/meminfo and /proc/pressure/*.
"""

from __future__ import annotations

from sgmon.collector import Collector
from sgmon.model import Field, Kind

G, R = Kind.GAUGE, Kind.RATE

FIELDS = (
    Field("pgpgin", "kB/s", R, "kB paged in from disk per second (sar -B pgpgin/s)"),
    Field("pgpgout", "kB/s", R, "kB paged out to disk per second (sar -B pgpgout/s)"),
    Field("fault", "/s", R, "page faults, minor and major, per second (sar -B fault/s)"),
    Field("majflt", "/s", R, "major faults needing I/O per second (sar -B majflt/s)"),
    Field("pgfree", "/s", R, "pages freed per second (sar -B pgfree/s)"),
    Field("pgscank", "/s", R, "pages scanned by kswapd per second (sar -B pgscank/s)", warn=200),
    Field(
        "pgscand", "/s", R, "pages scanned in direct reclaim per second (sar -B pgscand/s)", warn=1
    ),
    Field("pgsteal", "/s", R, "pages reclaimed per second (sar -B pgsteal/s)"),
    Field("pswpin", "/s", R, "pages swapped in per second (sar -W pswpin/s)", warn=1),
    Field("pswpout", "/s", R, "pages swapped out per second (sar -W pswpout/s)", warn=1),
    Field(
        "memused",
        "%",
        G,
        "memory used, (total - available) / total (sar -r %memused)",
        warn=95,
        crit=99,
    ),
    Field("swpused", "%", G, "swap used (sar -S %swpused); empty when there is no swap"),
    Field("psi_cpu_some", "%", G, "share of time some task waited for CPU, avg10 (PSI)"),
    Field("psi_mem_some", "%", G, "share of time some task stalled on memory, avg10 (PSI)"),
    Field("psi_mem_full", "%", G, "share of time all tasks stalled on memory, avg10 (PSI)", warn=5),
    Field("psi_io_some", "%", G, "share of time some task stalled on I/O, avg10 (PSI)"),
    Field("psi_io_full", "%", G, "share of time all tasks stalled on I/O, avg10 (PSI)"),
)


class PagingCollector(Collector):
    """sar -B / -W / -r figures from /proc/vmstat and /proc/meminfo, and PSI."""

    name = "paging"
    description = "paging and swapping (sar -B, sar -W), memory used, PSI"
    fields = FIELDS

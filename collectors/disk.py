"""`disk`: per block device, the extended statistics of iostat -x.

Instances: device names (whole disks, dm, md, and loop devices with I/O; partitions only when
``partitions = true``), filtered by ``include``/``exclude`` globs.  Read from /proc/diskstats,
whose ms fields are 32-bit and wrap (deltas are taken mod 2**32).  ``svctm`` is computed as
sysstat did before 12.1.2 (%util / IOPS), because DBAs read "await >> svctm" as queueing.
"""

from __future__ import annotations

from sgmon.collector import Collector
from sgmon.model import Field, Kind

G = Kind.GAUGE

FIELDS = (
    Field("r_s", "/s", G, "reads completed per second (iostat r/s)"),
    Field("w_s", "/s", G, "writes completed per second (iostat w/s)"),
    Field("rkb_s", "kB/s", G, "kB read per second (iostat rkB/s)"),
    Field("wkb_s", "kB/s", G, "kB written per second (iostat wkB/s)"),
    Field("rrqm_s", "/s", G, "read requests merged per second (iostat rrqm/s)"),
    Field("wrqm_s", "/s", G, "write requests merged per second (iostat wrqm/s)"),
    Field(
        "r_await", "ms", G, "average read time incl. queueing (iostat r_await)", warn=20, crit=100
    ),
    Field(
        "w_await", "ms", G, "average write time incl. queueing (iostat w_await)", warn=10, crit=50
    ),
    Field("aqu_sz", "", G, "average request queue length (iostat aqu-sz)", warn=1, crit=8),
    Field("rareq_sz", "kB", G, "average read size (iostat rareq-sz)"),
    Field("wareq_sz", "kB", G, "average write size (iostat wareq-sz)"),
    Field("util", "%", G, "time the device had I/O in flight (iostat %util)", warn=90, crit=99),
    Field("svctm", "ms", G, "average service time, %util / IOPS (iostat svctm before 12.1.2)"),
)


class DiskCollector(Collector):
    """iostat -x figures from /proc/diskstats."""

    name = "disk"
    description = "block device latency, queue and utilisation (iostat -x)"
    fields = FIELDS

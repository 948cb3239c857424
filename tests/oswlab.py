"""An OSWatcher archive made by the real tools, the way oswbb's scripts run them on Linux.

OSWatcher.sh starts, every snapshot, one sub-script per tool in the background; each appends a
``zzz ***$(date)`` line and the tool's output to ``archive/osw<tool>/<host>_<tool>_<hour>.dat``:
iosub.sh keeps the last third of ``iostat -xk 1 3`` (its last report), vmstat 1 3 and
mpstat -P ALL 1 2 are kept whole, oswnet.sh runs ``netstat -a -i -n`` then ``netstat -s``,
xtop.sh keeps the second half of ``top -b -n2 -d1`` (first 50 lines), psmemsub.sh writes ps's
header then its rows sorted by %MEM.  Each file starts with the ``Linux OSWbb <version>`` line.
The loop here is bounded: ``snapshots`` rounds, ``step`` seconds apart.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

TOOLS = ("iostat", "vmstat", "mpstat", "netstat", "top", "ps")
PS = "user,pid,ppid,pri,pcpu,pmem,vsize,rssize,wchan,s,start,cputime,command"

SCRIPT = r"""
set -u
dir=$1 host=$2 n=$3 step=$4 hour=$5 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f() { echo "$dir/osw$1/${host}_$1_$hour.dat"; }
for t in iostat vmstat mpstat netstat top ps; do
  mkdir -p "$dir/osw$t"
  [ -s "$(f $t)" ] || echo "Linux OSWbb v8.4.0" > "$(f $t)"
done
for i in $(seq "$n"); do
  ( echo "zzz ***$(date)" >> "$(f iostat)"; iostat -xk 1 3 > "$tmp/io"
    c=$(wc -l < "$tmp/io"); tail -$((c / 3)) "$tmp/io" >> "$(f iostat)" ) &
  ( echo "zzz ***$(date)" >> "$(f vmstat)"; vmstat 1 3 >> "$(f vmstat)" ) &
  ( echo "zzz ***$(date)" >> "$(f mpstat)"; mpstat -P ALL 1 2 >> "$(f mpstat)" ) &
  ( echo "zzz ***$(date)" >> "$(f netstat)"; netstat -a -i -n >> "$(f netstat)"
    netstat -s >> "$(f netstat)" ) &
  ( echo "zzz ***$(date)" >> "$(f top)"; top -b -n2 -d1 > "$tmp/top"
    c=$(wc -l < "$tmp/top"); tail -$((c - c / 2 - 1)) "$tmp/top" | head -50 >> "$(f top)" ) &
  ( echo "" >> "$(f ps)"; echo "zzz ***$(date)" >> "$(f ps)"
    ps -aeo PSCOLS | head -1 >> "$(f ps)"; ps -aeo PSCOLS | sort -nr -k 6 >> "$(f ps)" ) &
  wait
  [ "$i" -lt "$n" ] && sleep "$step"
done
exit 0
""".replace("PSCOLS", PS)


def collect(
    archive: Path, host: str, snapshots: int = 3, step: float = 2.0, netns: str | None = None
) -> list[Path]:
    """Run ``snapshots`` OSWatcher snapshots into ``archive`` (inside network namespace
    ``netns``, whose interfaces and TCP counters netstat then shows); return the files."""
    hour = time.strftime("%y.%m.%d.%H00")
    inside = ["ip", "netns", "exec", netns] if netns else []
    argv = [str(archive), host, str(snapshots), str(step), hour]
    subprocess.run(
        [*inside, "bash", "-c", SCRIPT, "oswlab", *argv],
        check=True,
        timeout=snapshots * (step + 10) + 10,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C", "TERM": "dumb"},
    )
    return sorted(archive.glob("osw*/*.dat"))


OLD_IOSTAT = """Linux OSWbb v7.3.3
zzz ***Mon Nov 24 11:00:05 UTC 2026
avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           2.01    0.00    1.51   12.06    0.00   84.42

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await  svctm  %util
sdb               0.00     0.00    0.00  650.00     0.00  5200.00    16.00    80.12  123.40   1.53  99.60
sda               0.00     1.00    2.00    3.00    16.00    24.00    16.00     0.01    1.20   0.80   0.40

zzz ***Mon Nov 24 11:00:35 UTC 2026
avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           1.00    0.00    1.00    0.50    0.00   97.50

Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz rareq-sz wareq-sz  svctm  %util
sdb             0.00  640.00      0.00   5120.00     0.00     0.00   0.00   0.00    0.00  110.20  75.30     0.00     8.00   1.50  99.00
"""  # noqa: E501
"""Two iostat column sets, written out by hand after sysstat 9.0's (CentOS 6: avgqu-sz, one
await, svctm) and 11.x's (aqu-sz, r_await/w_await, svctm) ``iostat -xk`` headers: no old
sysstat is installed here to print them."""

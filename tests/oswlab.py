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

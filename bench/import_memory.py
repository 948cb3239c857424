"""Peak memory of `sgmon import osw` for 1, 8 and 48 hours of an OSWatcher archive.

The archive is made in a temporary directory (deleted afterwards): OSWatcher's classic layout,
one snapshot every 30 s of the six tools sgmon reads, each hour one gzip'd file per tool as
OSWatcher leaves a closed hour: ``iostat -xk 1 3``'s last third over ``--disks`` devices,
``vmstat 1 3``, ``mpstat -P ALL 1 2`` over ``--cpus`` CPUs, ``netstat -a -i -n`` and
``netstat -s``, ``top -b`` cut to 50 lines, ``ps -aeo ...`` of ``--procs`` processes.  The
figures move from snapshot to snapshot so that no two rows are alike.  Each import runs as a
child process (``python -m sgmon import osw``) whose peak RSS is read from ``os.wait4``'s
rusage.  Target (issue "Findings to trust on real recordings"): at most 150 MB whatever the
archive's size.

    .venv/bin/python bench/import_memory.py [--hours 1 8 48] [--pythonpath DIR]

``--pythonpath`` runs another tree's sgmon (e.g. an export of an older commit) for comparison.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

TARGET_MB = 150.0
HOST = "db1"
START = datetime(2026, 11, 22, 0, 0, 0, tzinfo=UTC)
STEP_S = 30
IOSTAT_HEAD = (
    "Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await"
    " w_await aqu-sz rareq-sz wareq-sz  svctm  %util"
)
MPSTAT_HEAD = "CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"


def _clock(t: datetime) -> str:
    return t.strftime("%H:%M:%S")


def iostat(t: datetime, n: int, disks: int) -> str:
    rows = "".join(
        f"sd{chr(97 + d % 26)}{d // 26 or ''}  {n % 97 + d:7.2f} {n % 640 + d:7.2f}"
        f" {n % 5000:9.2f} {n % 7000 + d:9.2f}     0.00     0.00   0.00   0.00"
        f" {1 + n % 9:7.2f} {1 + n % 13:7.2f} {n % 7 / 3:6.2f}     8.00     8.00   0.50"
        f" {n % 100:6.2f}\n"
        for d in range(disks)
    )
    return f"{t.strftime('%m/%d/%y %H:%M:%S')}\n{IOSTAT_HEAD}\n{rows}\n"


def vmstat(n: int) -> str:
    head = (
        "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
    )
    return head + "".join(
        f"{1 + (n + i) % 9:2d}  0      0 {900000 + n:7d}  20000 300000    0    0"
        f"  {n % 900:4d}  {n % 700:4d} {1000 + n % 99:4d} {2000 + n % 77:4d}  2  1 96  1  0\n"
        for i in range(3)
    )


def mpstat(t: datetime, n: int, cpus: int) -> str:
    day = t.strftime("%m/%d/%y")
    out = f"Linux 5.15.0-208.159.3.el8uek.x86_64 ({HOST}) \t{day} \t_x86_64_\t({cpus} CPU)\n"
    for k in range(2):
        head, at = _clock(t + timedelta(seconds=k)), _clock(t + timedelta(seconds=k + 1))
        out += f"\n{head}     {MPSTAT_HEAD}\n"
        for c in ["all", *map(str, range(cpus))]:
            usr = (n + k + len(c)) % 50
            out += (
                f"{at}     {c:>3}   {usr:5.2f}    0.00    2.00    1.00    0.00    0.50"
                f"    0.00    0.00    0.00   {96.5 - usr:5.2f}\n"
            )
    return out + "\n"


def netstat(n: int) -> str:
    return (
        "Kernel Interface table\n"
        "Iface      MTU    RX-OK RX-ERR RX-DRP RX-OVR    TX-OK TX-ERR TX-DRP TX-OVR Flg\n"
        f"eth0      1500 {1000000 + n * 900:8d}      0      0 0      {900000 + n * 800:8d}"
        "      0      0      0 BMRU\n"
        f"lo       65536 {5000 + n * 10:8d}      0      0 0      {5000 + n * 10:8d}"
        "      0      0      0 LRU\n"
        "Ip:\n    123456 total packets received\n"
        f"Tcp:\n    {1000 + n} active connections openings\n"
        f"    {2000 + n} passive connection openings\n"
        f"    {3000 + n * 3} segments retransmited\n"
        f"TcpExt:\n    {n // 10} other TCP timeouts\n    TCPLostRetransmit: {n // 20}\n"
    )


def top(t: datetime, n: int) -> str:
    procs = "".join(
        f"{10000 + i:5d} oracle    20   0 {10 + i % 9}.2g 1.1g 1.0g S {i % 7:4.1f}  1.2"
        f"  12:34.56 ora_p{i:03d}_db1\n"
        for i in range(42)
    )
    return (
        f"top - {_clock(t)} up 12 days,  3:14,  2 users,  load average: "
        f"{n % 9 + 0.5:.2f}, {n % 7 + 0.25:.2f}, {n % 5 + 0.75:.2f}\n"
        f"Tasks: {500 + n % 20} total,   {1 + n % 5} running, 499 sleeping,   0 stopped,"
        "   0 zombie\n"
        f"%Cpu(s):  {n % 40:.1f} us,  1.0 sy,  0.0 ni, {95 - n % 40:.1f} id,  0.1 wa,  0.0 hi,"
        "  0.0 si,  0.0 st\n"
        "MiB Mem :  96456.2 total,  10005.8 free,  40738.2 used,  45677.2 buff/cache\n"
        f"MiB Swap:   8192.0 total,   {8192 - n % 100:.1f} free,   {n % 100:.1f} used."
        "  23367.3 avail Mem\n\n"
        "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n" + procs
    )


def ps(n: int, procs: int) -> str:
    lines = ["USER       PID  PPID PRI %CPU %MEM    VSZ   RSS WCHAN  S  STARTED     TIME COMMAND"]
    names = ["ora_lgwr_db1", "ora_lg00_db1", "ora_lg01_db1", "ora_nsa2_db1", "ora_tt00_db1"]
    for i in range(procs):
        cmd = names[i] if i < len(names) else f"oracledb1 (LOCAL=NO) {i}"
        state = "D" if (n + i) % 11 == 0 else "S"
        lines.append(
            f"oracle   {4000 + i:5d}     1  19  0.1  1.2 10700000 1100000 -      {state}"
            f"  11:48:05 00:00:{i % 60:02d} {cmd}"
        )
    return "\n".join(lines) + "\n"


def make_archive(root: Path, hours: int, disks: int, cpus: int, procs: int) -> int:
    """``hours`` of OSWatcher files under ``root/archive``; returns their size in bytes."""
    size = 0
    per_hour = 3600 // STEP_S
    for h in range(hours):
        hour = START + timedelta(hours=h)
        texts: dict[str, list[str]] = {t: [] for t in TOOLS}
        for k in range(per_hour):
            t = hour + timedelta(seconds=k * STEP_S)
            n = h * per_hour + k
            zzz = f"zzz ***{t.strftime('%a %b %d %H:%M:%S')} UTC {t.year}\n"
            body = {
                "iostat": iostat(t + timedelta(seconds=2), n, disks),
                "vmstat": vmstat(n),
                "mpstat": mpstat(t, n, cpus),
                "netstat": netstat(n),
                "top": top(t + timedelta(seconds=1), n),
                "ps": ps(n, procs),
            }
            for tool, text in body.items():
                texts[tool].append(zzz + text)
        for tool, parts in texts.items():
            d = root / "archive" / f"osw{tool}"
            d.mkdir(parents=True, exist_ok=True)
            name = f"{HOST}_{tool}_{hour.strftime('%y.%m.%d.%H')}00.dat.gz"
            data = gzip.compress(f"Linux OSWbb v8.1.2 {HOST}\n{''.join(parts)}".encode(), 1)
            (d / name).write_bytes(data)
            size += len(data)
    return size


TOOLS = ("iostat", "vmstat", "mpstat", "netstat", "top", "ps")


def peak_rss(root: Path, out: Path, pythonpath: str | None) -> tuple[float, float, str]:
    """Run the import as a child; its peak RSS (MB), wall time (s) and summary line."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "sgmon", "import", "osw", str(root), "--dir", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
        cwd=out.parent,  # not a source tree: ``-m`` puts the working directory first on the path
    )
    assert child.stdout is not None
    summary = child.stdout.read().strip()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if child.returncode != 0:
        raise SystemExit(f"sgmon import osw exited {child.returncode}")
    return usage.ru_maxrss / 1024, wall, summary


def main() -> int:
    """Print one table line per archive size."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hours", type=int, nargs="+", default=[1, 8, 48])
    p.add_argument("--disks", type=int, default=96, help="iostat devices (96)")
    p.add_argument("--cpus", type=int, default=64, help="mpstat CPUs (64)")
    p.add_argument("--procs", type=int, default=1200, help="ps lines (1200)")
    p.add_argument("--pythonpath", help="run the sgmon found here instead")
    a = p.parse_args()
    print("| hours | files (gzip'd) | samples | peak RSS | wall | target |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for hours in a.hours:
        with tempfile.TemporaryDirectory(prefix="sgmon-bench-osw-") as tmp:
            root = Path(tmp) / "osw"
            size = make_archive(root, hours, a.disks, a.cpus, a.procs)
            rss, wall, summary = peak_rss(root, Path(tmp) / "arch", a.pythonpath)
        samples = summary.rsplit("(", 1)[-1].split()[0] if "(" in summary else "?"
        worst = max(worst, rss)
        print(
            f"| {hours} | {hours * len(TOOLS)}, {size / 1e6:.1f} MB | {samples} "
            f"| {rss:.0f} MB | {wall:.1f} s | <= {TARGET_MB:.0f} MB |",
            flush=True,
        )
    return 0 if worst <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())

"""What the redo devices' latency histogram costs: the biolat collector at 1,000 and 5,000 IOPS,
and a flat-out synced writer's throughput with and without it.

A loop device over a file in /dev/shm (no disk under it, so the writer, not a disk, sets the
pace) is written with 4 KiB O_DIRECT|O_DSYNC writes by one writer process:

* **paced**: the writer holds each of ``--rates`` (default 1,000 and 5,000 writes/s) for
  ``--seconds``, once without and once with the collector ticking at 1 Hz.  Printed: the rate
  achieved (the writer's own count), the requests biolatency counted, sgmon's CPU in
  ``sample()`` and ``derive()`` (process_time of this single-threaded bench), the biolatency
  child's (``/proc/PID/schedstat`` in ns; its ``stat`` utime+stime, in 10 ms ticks, beside),
  and the writer's own CPU per write without and with: the BPF program runs in the I/O path
  and is charged to the task that issues or completes the request, not to the child.
* **throughput**: the same writer flat out for ``--ab-seconds``, alternately without and with
  the collector (A B A B), writes/s from its own count.

Each synced write is two write requests and two flushes at the loop device (it has a volatile
write cache and no FUA), so biolatency counts about three requests per write.

    python bench/biolat_cost.py [--rates 1000 5000] [--seconds 5] [--ab-seconds 4]

Needs root and libbpf-tools (biolatency); ~50 s with the defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collectors.biolat import BiolatCollector
from sgmon.readers.procfile import stat_fields

CLK_TCK = os.sysconf("SC_CLK_TCK")
WRITER = r"""
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
rate, seconds = float(sys.argv[2]), float(sys.argv[3])
buf, blocks, n = mmap.mmap(-1, 4096), 8192, 0
start = time.monotonic()
while (now := time.monotonic()) - start < seconds:
    due = int((now - start) * rate) if rate else n + 256
    while n < due:
        os.pwritev(fd, [buf], (n % blocks) * 4096)
        n += 1
    if rate:
        time.sleep(0.001)
cpu = os.times()
print(n, time.monotonic() - start, cpu.user + cpu.system)
"""
"""Synced 4 KiB writes over the device's first 32 MiB at ``rate`` per second (0: flat out) for
``seconds``; prints the writes done, the seconds taken and its own CPU seconds."""


def write(dev: str, rate: float, seconds: float) -> subprocess.Popen:
    """Start the writer."""
    cmd = [sys.executable, "-c", WRITER, dev, str(rate), str(seconds)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def finished(writer: subprocess.Popen) -> tuple[float, float]:
    """Wait for the writer: its writes per second, and its CPU in us per write."""
    out, _ = writer.communicate(timeout=120)
    n, took, cpu = out.split()
    return int(n) / float(took), float(cpu) * 1e6 / int(n)


@contextlib.contextmanager
def shm_loop(size_mb: int = 64) -> Iterator[str]:
    """A loop device over a file in /dev/shm; detached and removed on exit."""
    d = Path(tempfile.mkdtemp(prefix="sgmon-biolat-", dir="/dev/shm"))
    img, dev = d / "disk.img", ""
    try:
        with open(img, "wb") as f:
            f.truncate(size_mb << 20)
        dev = subprocess.run(
            ["losetup", "-f", "--show", str(img)], capture_output=True, text=True, check=True
        ).stdout.strip()
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        img.unlink(missing_ok=True)
        d.rmdir()


def child_cpu(pid: int) -> tuple[float, float]:
    """A process's CPU in ms: schedstat's ns, and stat's utime+stime in clock ticks."""
    ns = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    f = stat_fields(Path(f"/proc/{pid}/stat").read_text())
    return ns / 1e6, (int(f[11]) + int(f[12])) * 1000 / CLK_TCK


def paced(dev: str, rate: int, seconds: float) -> dict[str, float]:
    """One paced window with the collector ticking at 1 Hz."""
    name = Path(dev).name
    c = BiolatCollector({"devices": [name]})
    c.open()
    try:
        prev = c.sample()
        time.sleep(1.5)  # the child's BPF load and first report are not the steady cost
        prev = c.sample()
        (child,) = [ch.proc.pid for ch in c._children.values()]
        writer = write(dev, rate, seconds)
        try:
            c0, t0, own, ios = child_cpu(child), time.monotonic(), 0.0, 0
            for i in range(1, int(seconds) + 1):
                time.sleep(max(0.0, t0 + i - time.monotonic()))
                p0 = time.process_time()
                cur = c.sample()
                row = c.derive(prev, cur, 1.0)[name]
                own += time.process_time() - p0
                prev, ios = cur, ios + (row["ios"] or 0)
            wall = time.monotonic() - t0
            c1 = child_cpu(child)
            achieved, per_write = finished(writer)
        finally:
            writer.kill()
            writer.wait()
    finally:
        c.close()
    return {
        "iops": achieved,
        "counted": ios / wall,
        "own_ms_s": own * 1000 / wall,
        "child_ms_s": (c1[0] - c0[0]) / wall,
        "child_stat_ms_s": (c1[1] - c0[1]) / wall,
        "writer_us": per_write,
    }


def flat_out(dev: str, seconds: float, collector: bool) -> float:
    """Writes/s of the writer flat out for ``seconds``, with or without the collector."""
    c = BiolatCollector({"devices": [Path(dev).name]}) if collector else None
    try:
        if c is not None:
            c.open()
            c.sample()
            time.sleep(1.5)
        rate, _ = finished(write(dev, 0, seconds))
        if c is not None:
            c.sample()  # it was still reporting
        return rate
    finally:
        if c is not None:
            c.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--ab-seconds", type=float, default=4)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("sgmon: the bench needs root (loop devices, biolatency's BPF program)")
    with shm_loop() as dev:
        print(f"loop device {dev} over /dev/shm, 4 KiB O_DIRECT|O_DSYNC writes")
        for rate in args.rates:
            alone, base_us = finished(write(dev, rate, args.seconds))
            r = paced(dev, rate, args.seconds)
            total = r["own_ms_s"] + r["child_ms_s"]
            print(
                f"target {rate} writes/s: achieved {alone:.0f} without, {r['iops']:.0f} with; "
                f"biolatency counted {r['counted']:.0f} requests/s\n"
                f"  CPU: sgmon {r['own_ms_s']:.3f} ms/s + biolatency {r['child_ms_s']:.3f} ms/s "
                f"(stat {r['child_stat_ms_s']:.1f}) = {total / 10:.4f} % of one CPU\n"
                f"  writer CPU per write: {base_us:.1f} us without, {r['writer_us']:.1f} us with "
                f"(ratio {r['writer_us'] / base_us:.3f})"
            )
        runs: dict[bool, list[float]] = {False: [], True: []}
        for with_it in (False, True, False, True):
            runs[with_it].append(flat_out(dev, args.ab_seconds, with_it))
        off, on = statistics.mean(runs[False]), statistics.mean(runs[True])
        print(f"flat out, writes/s without: {' '.join(f'{x:.0f}' for x in runs[False])}")
        print(f"flat out, writes/s with:    {' '.join(f'{x:.0f}' for x in runs[True])}")
        print(f"throughput with / without the collector: {on / off:.3f}")
        print(f"time added per write: {(1 / on - 1 / off) * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

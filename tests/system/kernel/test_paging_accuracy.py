"""The paging collector against `sar -B -W -r` and /proc/vmstat, under load the test makes.

A bounded load process takes minor faults (touching fresh anonymous memory), frees pages,
major-faults a file mapping whose page cache it dropped (pgpgin) and writes with fsync (pgpgout).
sar and the collector are read over the same 2 s; /proc/vmstat is read by the test around the
collector's own two samples, so those deltas must agree almost exactly.

%memused is compared with what sysstat 12.7.8 and later print (CHANGES of 12.7.8: "sar/sadf: Now
compute used memory as total memory - available memory"; pr_stats.c print_ram_memory_stats:
SP_VALUE(availablekb, tlmkb, tlmkb)), computed from the kbavail the installed sar read in the
same sample and MemTotal: the installed sar (12.6.1 on Debian 12) prints the older (total - free
- buffers - cached - slab) / total in its own %memused column.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
from sidebyside import close_to, parse_sar_average, side_by_side

from collectors.paging import PagingCollector
from sgmon.collector import Collector
from sgmon.model import Rows

pytestmark = pytest.mark.slow
SECONDS = 2

LOAD = """
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    m = mmap.mmap(-1, 16 << 20)
    for i in range(0, 16 << 20, 4096):
        m[i] = 1
    m.close()
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    f = mmap.mmap(fd, 8 << 20, prot=mmap.PROT_READ)
    sum(f[i] for i in range(0, 8 << 20, 4096))
    f.close()
    os.pwrite(fd, os.urandom(1 << 16), 0)
    os.fsync(fd)
    time.sleep(0.01)
"""

# our field -> (sar column, relative tolerance, absolute tolerance per second)
SAR = {
    "pgpgin": ("pgpgin/s", 0.15, 200.0),
    "pgpgout": ("pgpgout/s", 0.15, 200.0),
    "fault": ("fault/s", 0.10, 500.0),
    "majflt": ("majflt/s", 0.15, 20.0),
    "pgfree": ("pgfree/s", 0.10, 500.0),
    "pgscank": ("pgscank/s", 0.10, 10.0),
    "pgscand": ("pgscand/s", 0.10, 10.0),
    "pswpin": ("pswpin/s", 0.10, 5.0),
    "pswpout": ("pswpout/s", 0.10, 5.0),
}
MEMUSED_ABS = 0.5  # percentage points: the load maps and frees 16 MB between the two reads
# sysstat 12.6 sums every pgsteal_* line (double counting); >= 12.7.9 sums anon + file as we do
VMSTAT = {
    "pgpgin": ("pgpgin",),
    "pgpgout": ("pgpgout",),
    "fault": ("pgfault",),
    "majflt": ("pgmajfault",),
    "pgfree": ("pgfree",),
    "pgscank": ("pgscan_kswapd",),
    "pgscand": ("pgscan_direct",),
    "pgsteal": ("pgsteal_anon", "pgsteal_file"),
    "pswpin": ("pswpin",),
    "pswpout": ("pswpout",),
}


def sysstat_12_7_8_memused(sar: dict[str, float | str]) -> float:
    """sar's %memused as sysstat 12.7.8 prints it: (tlmkb - availablekb) / tlmkb * 100, from the
    kbavail of the installed sar's sample (every sar since 11.7.4 prints kbavail) and MemTotal
    (tlmkb, which does not change while the machine runs)."""
    with open("/proc/meminfo") as f:
        total = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
    avail = sar["kbavail"]
    assert isinstance(avail, float)
    return 100.0 * (total - avail) / total


def read_vmstat() -> dict[str, int]:
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


class Bracketed(Collector):
    """Reads /proc/vmstat just before each of the wrapped collector's samples."""

    def __init__(self, inner: Collector) -> None:
        super().__init__()
        self.inner = inner
        self.vmstat: list[dict[str, int]] = []
        self.dt = 0.0

    def open(self) -> None:
        self.inner.open()

    def sample(self) -> Rows:
        self.vmstat.append(read_vmstat())
        return self.inner.sample()

    def derive(self, prev: Rows | None, cur: Rows, dt: float) -> Rows:
        self.dt = dt
        return self.inner.derive(prev, cur, dt)

    def close(self) -> None:
        self.inner.close()


@contextlib.contextmanager
def paging_load(seconds: float):
    """The load process, killed on exit whatever happens."""
    with tempfile.NamedTemporaryFile(dir="/var/tmp", prefix="sgmon-pg-") as f:
        f.truncate(8 << 20)
        p = subprocess.Popen([sys.executable, "-c", LOAD, f.name, str(seconds)])
        try:
            yield p
        finally:
            p.kill()
            p.wait()


def test_paging_matches_sar_and_vmstat() -> None:
    if shutil.which("sar") is None:
        pytest.skip("needs sar (Debian package sysstat)")
    env = {**os.environ, "LC_ALL": "C"}
    with paging_load(SECONDS + 8) as load:
        time.sleep(1.0)
        assert load.poll() is None, "the load process died"
        bracket = Bracketed(PagingCollector())
        cmd = ["env", f"LC_ALL={env['LC_ALL']}", "sar", "-B", "-W", "-r", str(SECONDS), "1"]
        rows, out = side_by_side(bracket, cmd, SECONDS)
    ours = rows["all"]
    sar = parse_sar_average(out)
    print(f"sgmon: {ours}\nsar: {sar}")  # shown with pytest -s
    assert sar["fault/s"] > 1000 and sar["pgpgin/s"] > 100, "the load did not page"
    for name, (col, rel, abs_) in SAR.items():
        assert close_to(ours[name], sar[col], rel, abs_), (name, ours[name], sar[col])  # type: ignore[arg-type]
    want = sysstat_12_7_8_memused(sar)
    assert ours["memused"] == pytest.approx(want, abs=MEMUSED_ABS), (ours["memused"], want)
    # the same counters read by the test around our samples: only the reads' own gap differs
    before, after = bracket.vmstat
    for name, keys in VMSTAT.items():
        delta = sum(after.get(k, 0) - before.get(k, 0) for k in keys)
        got = ours[name]
        assert isinstance(got, float)
        assert abs(got * bracket.dt - delta) <= max(0.02 * delta, 64), (name, got, delta)


def test_swap_and_psi_are_none_when_absent_never_zero() -> None:
    with open("/proc/meminfo") as f:
        swap = next(int(line.split()[1]) for line in f if line.startswith("SwapTotal:"))
    c = PagingCollector()
    c.open()
    try:
        row = c.sample()["all"]
    finally:
        c.close()
    assert (row["swpused"] is None) == (swap == 0)
    has_psi = os.path.exists("/proc/pressure/io")
    for name in ("psi_cpu_some", "psi_mem_some", "psi_mem_full", "psi_io_some", "psi_io_full"):
        assert (row[name] is None) == (not has_psi), name
    if has_psi:
        with open("/proc/pressure/io") as f:
            some = float(f.readline().split()[1].partition("=")[2])
        assert row["psi_io_some"] == pytest.approx(some, abs=5.0)

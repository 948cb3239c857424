"""The cpu collector against `mpstat -P ALL` and `sar -q -w -I SUM` over the same interval.

A bounded busy loop pinned to CPU 0 makes one CPU's %usr large and the other's small, so a
per-CPU mix-up or a wrong tick total shows.  Tolerances: 1 s is 100 ticks per CPU at USER_HZ 100,
and the two windows differ by the tool's start-up (a few ms), so a few points per CPU.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys

import pytest
from sidebyside import close_to, parse_sar_average, side_by_side, sysstat_json

from collectors.cpu import CpuCollector

pytestmark = pytest.mark.slow

PCT = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle")
SPIN = """
import os, sys, time
os.sched_setaffinity(0, {0})
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
"""


@contextlib.contextmanager
def busy_cpu0(seconds: float):
    """One process spinning on CPU 0 for at most ``seconds``; killed on exit."""
    p = subprocess.Popen([sys.executable, "-c", SPIN, str(seconds)])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"needs {tool} (Debian package sysstat)")


def test_cpu_percentages_match_mpstat() -> None:
    _need("mpstat")
    with busy_cpu0(8) as spin:
        cmd = ["mpstat", "-P", "ALL", "-o", "JSON", "1", "1"]
        for _ in range(20):  # let the spinner start and settle on CPU 0
            if spin.poll() is not None or os.sched_getaffinity(spin.pid) == {0}:
                break
            os.sched_yield()
        rows, out = side_by_side(CpuCollector(), cmd, 1.0)
    theirs = {
        ("all" if c["cpu"] == "all" else f"cpu{c['cpu']}"): c for c in sysstat_json(out)["cpu-load"]
    }
    print(f"sgmon: {rows}\nmpstat: {theirs}")  # shown with pytest -s
    assert theirs["cpu0"]["usr"] > 50, "the busy loop did not load CPU 0"
    assert set(theirs) == {k for k in rows if k == "all" or k.startswith("cpu")}
    for cpu, m in theirs.items():
        tol = 3.0 if cpu == "all" else 5.0
        for f in PCT:
            assert close_to(rows[cpu][f], m[f], 0.0, tol), (cpu, f, rows[cpu][f], m[f])  # type: ignore[arg-type]
        assert sum(rows[cpu][f] for f in PCT) == pytest.approx(100.0)  # type: ignore[misc]


def test_run_queue_and_rates_match_sar() -> None:
    _need("sar")
    with busy_cpu0(8):
        cmd = ["env", "LC_ALL=C", "sar", "-q", "-w", "-I", "SUM", "1", "1"]
        rows, out = side_by_side(CpuCollector(), cmd, 1.0)
    ours, sar = rows["all"], parse_sar_average(out)
    print(f"sgmon: {ours}\nsar: {sar}")  # shown with pytest -s
    # rates over the same second
    assert close_to(ours["cswch"], sar["cswch/s"], 0.15, 300), (ours["cswch"], sar["cswch/s"])  # type: ignore[arg-type]
    assert close_to(ours["intr"], sar["all"], 0.15, 300), (ours["intr"], sar["all"])  # type: ignore[arg-type]
    # gauges: sar reads them at the end of its second, we a few ms later (loadavg moves per 5 s)
    assert close_to(ours["load1"], sar["ldavg-1"], 0.0, 0.3)  # type: ignore[arg-type]
    assert close_to(ours["load15"], sar["ldavg-15"], 0.0, 0.1)  # type: ignore[arg-type]
    assert close_to(ours["plist_sz"], sar["plist-sz"], 0.0, 60)  # type: ignore[arg-type]
    assert close_to(ours["runq_sz"], sar["runq-sz"], 0.0, 4)  # type: ignore[arg-type]
    assert close_to(ours["blocked"], sar["blocked"], 0.0, 4)  # type: ignore[arg-type]

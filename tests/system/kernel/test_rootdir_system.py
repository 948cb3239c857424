"""The /proc and /sys collectors under the ``root`` option, checked against awk reading the same
files: a tree captured from this host, and this host's live files copied twice.

The stored trees from other hosts (sysstat's test suite, pcp, node-exporter) are read in process
by tests/unit/test_rootdir.py, whose docstring says where each comes from.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from kits.rootdir import _interval, _replace_with
from paths import ROOTS

from collectors.cpu import CpuCollector
from collectors.disk import DiskCollector
from collectors.paging import PagingCollector


def _awk(program: str, path: Path) -> list[str]:
    """awk's output on a file, split: the independent reading the collectors are checked by."""
    out = subprocess.run(["awk", program, str(path)], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_this_hosts_stored_tree_reads_as_awk_reads_it(tmp_path: Path) -> None:
    """The build machine's files, captured once (README.txt): the raw sample of each collector
    equals awk's reading of the same files."""
    root = ROOTS / "thishost"
    cpu = CpuCollector({"root": str(root)})
    cpu.open()
    raw = cpu.sample()
    cpu.close()
    ticks = _awk("/^cpu /{for (i = 2; i <= 11; i++) print $i}", root / "proc/stat")
    assert raw["all"]["ticks"] == [int(t) for t in ticks]
    assert len(raw) - 1 == int(_awk("/^cpu[0-9]/{n++} END{print n}", root / "proc/stat")[0])
    assert raw["all"]["cswch"] == int(_awk("/^ctxt/{print $2}", root / "proc/stat")[0])
    assert raw["all"]["plist_sz"] == int(
        _awk('{split($4, a, "/"); print a[2]}', root / "proc/loadavg")[0]
    )

    disk = DiskCollector({"root": str(root)})
    disk.open()
    devices = disk.sample()
    disk.close()
    parts = {p.parent.name for p in (root / "sys/class/block").glob("*/partition")}
    active = _awk("$4 + $8 + $15 + $19 > 0 {print $3}", root / "proc/diskstats")
    assert set(devices) == set(active) - parts
    for name, row in devices.items():
        line = _awk(f'$3 == "{name}" {{print $4, $8, $13, $14}}', root / "proc/diskstats")
        assert [row["rd_ios"], row["wr_ios"], row["io_ticks"], row["rq_ticks"]] == [
            int(v) for v in line
        ]

    paging = PagingCollector({"root": str(root)})
    paging.open()
    mem = paging.sample()["all"]
    paging.close()
    total, avail = _awk(  # sysstat 12.7.8's %memused: (total - available) / total
        "/^MemTotal:/{t = $2} /^MemAvailable:/{a = $2} END{print t, a}", root / "proc/meminfo"
    )
    assert mem["memused"] == pytest.approx(100 * (int(total) - int(avail)) / int(total))
    assert mem["pgpgin"] == int(_awk("/^pgpgin /{print $2}", root / "proc/vmstat")[0])
    io = _awk('{sub("avg10=", "", $2); print $2}', root / "proc/pressure/io")
    assert (mem["psi_io_some"], mem["psi_io_full"]) == (float(io[0]), float(io[1]))


def test_live_files_copied_twice_give_awks_rates(tmp_path: Path) -> None:
    """This machine's /proc files copied at two instants into a tree: the collectors' rates
    under that root equal awk's deltas of the same copies over the same interval."""
    files = ("stat", "loadavg", "diskstats", "vmstat", "meminfo")
    copies = [tmp_path / "t0", tmp_path / "t1"]
    for n, copy in enumerate(copies):
        (copy / "proc").mkdir(parents=True)
        for f in files:
            shutil.copyfile(f"/proc/{f}", copy / "proc" / f)
        if not n:
            time.sleep(0.2)
    dt = 0.25  # any interval: the same one divides both sides
    root = tmp_path / "root"
    shutil.copytree(copies[0], root)

    def then(root: Path) -> None:
        _replace_with(root, copies[1])

    cpu = _interval(CpuCollector, {}, root, then, dt)["all"]
    ctxt = [int(_awk("/^ctxt/{print $2}", c / "proc/stat")[0]) for c in copies]
    assert cpu["cswch"] == pytest.approx((ctxt[1] - ctxt[0]) / dt)
    ticks = [
        [int(t) for t in _awk("/^cpu /{print $2, $3, $4, $5, $6, $7, $8, $9}", c / "proc/stat")]
        for c in copies
    ]
    delta = [b - a for a, b in zip(*ticks, strict=True)]
    if sum(delta):
        assert cpu["idle"] == pytest.approx(100 * delta[3] / sum(delta))

    shutil.rmtree(root)
    shutil.copytree(copies[0], root)
    paging = _interval(PagingCollector, {}, root, then, dt)["all"]
    faults = [int(_awk("/^pgfault /{print $2}", c / "proc/vmstat")[0]) for c in copies]
    assert paging["fault"] == pytest.approx((faults[1] - faults[0]) / dt)

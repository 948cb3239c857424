"""The /proc and /sys collectors under the ``root`` option, on stored trees from real hosts.

Each tree under tests/fixtures/roots/ says where it comes from in its README.txt.  A collector is
opened on a copy of a tree, sampled, the tree's files are rewritten in place with the second
snapshot (the collector keeps its files open and re-reads them, as it does /proc), sampled again,
and the derived figures are compared with what sysstat prints or with hand-computed values:

- sysstat-root1 -> sysstat-root2: two snapshots from sysstat's own test suite, and the figures
  sysstat's tests expect from ``iostat -x 1 2``, ``mpstat -A 1 4`` and ``sar -A 1 2`` on exactly
  these trees (tests/expected.iostat-x, expected.mpstat-A, expected.sar-A), interval = the
  /proc/uptime delta, 31.17 s, as iostat and sar take it.
- pcp-hpbl920 (480 CPUs, 83 block devices), pcp-reclaim (kswapd and direct reclaim, swap written)
  and node-exporter (1 GB of swap in use, TCP retransmission counters): one snapshot each; the
  second is made by adding known deltas (documented in each test), and the figures must equal
  sysstat's formulas applied to those deltas by hand.
- thishost: captured from the build machine; checked against awk reading the same files.  A
  second test copies this machine's live files twice and checks the rates the same way.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from kits.rootdir import _interval, _replace_with
from paths import ROOTS

from collectors.cpu import CpuCollector, parse_stat
from collectors.disk import DiskCollector
from collectors.netdev import NetdevCollector
from collectors.paging import PagingCollector
from collectors.tcp import TcpCollector
from sgmon.collector import ConfigError, Unavailable

TWO = 0.005  # sysstat prints two decimals: a figure equals its printout within half a unit


def _copy(tmp_path: Path, name: str) -> Path:
    """A writable copy of a stored tree."""
    root = tmp_path / name
    shutil.copytree(ROOTS / name, root)
    return root


def _edit(root: Path, rel: str, change: Callable[[str], str]) -> None:
    """Rewrite one file of the tree in place with ``change`` applied to its text."""
    path = root / rel
    path.write_text(change(path.read_text()))


def _uptime(root: Path) -> float:
    return float((root / "proc/uptime").read_text().split()[0])


def _near(row: Mapping[str, Any], expected: Mapping[str, float | None]) -> None:
    """Each expected figure, as sysstat prints it (two decimals), or None."""
    for name, value in expected.items():
        if value is None:
            assert row[name] is None, name
        else:
            assert row[name] == pytest.approx(value, abs=TWO), name


SYSSTAT_DT = 7223.72 - 7192.55  # the /proc/uptime delta between root1 and root2


@pytest.fixture
def sysstat(tmp_path: Path) -> tuple[Path, Callable[[Path], None]]:
    """root1 as the live tree, and the step that turns it into root2."""
    assert _uptime(ROOTS / "sysstat-root2") - _uptime(ROOTS / "sysstat-root1") == pytest.approx(
        SYSSTAT_DT
    )
    return _copy(tmp_path, "sysstat-root1"), lambda root: _replace_with(
        root, ROOTS / "sysstat-root2"
    )


def test_disk_equals_iostat_x_on_sysstats_trees(sysstat: tuple) -> None:
    """The second report of sysstat's tests/expected.iostat-x (``iostat -x 1 2`` from root1 to
    root2).  iostat: r/s = S_VALUE(rd_ios) (common.h: delta / itv), r_await = delta rd_ticks /
    delta rd_ios, rareq-sz = delta rd_sect / 2 / delta rd_ios, aqu-sz = S_VALUE(rq_ticks) / 1000,
    %util = S_VALUE(tot_ticks) / 10 (rd_stats.c compute_ext_disk_stats).  iostat prints 0.00
    for an average over no requests, where we say None.  The partitions sda1..sda12 are left
    out by their /sys/class/block/*/partition files, as iostat leaves them out without -p."""
    root, step = sysstat
    rows = _interval(DiskCollector, {}, root, step, SYSSTAT_DT)
    assert set(rows) == {"sda", "sdb", "sdq", "sdr", "sds"}  # the devices iostat -x lists
    for idle in ("sda", "sdb"):
        _near(rows[idle], {"r_s": 0, "w_s": 0, "aqu_sz": 0, "util": 0, "r_await": None})
    # fmt: off
    _near(rows["sdq"], {"r_s": 6.42, "rkb_s": 7.86, "rrqm_s": 3.21, "r_await": 9.50,
                        "rareq_sz": 1.23, "w_s": 0, "wkb_s": 0, "w_await": None,
                        "aqu_sz": 0.01, "util": 0.96})
    _near(rows["sdr"], {"r_s": 3.21, "rkb_s": 4.81, "rrqm_s": 3.21, "r_await": 3.00,
                        "rareq_sz": 1.50, "w_s": 1.60, "wkb_s": 16.04, "wrqm_s": 3.21,
                        "w_await": 40.00, "wareq_sz": 10.00, "aqu_sz": 0.06, "util": 6.42})
    _near(rows["sds"], {"r_s": 3.21, "rkb_s": 16.04, "rrqm_s": 3.21, "r_await": 7.00,
                        "rareq_sz": 5.00, "w_s": 3.21, "wkb_s": 3.21, "wrqm_s": 3.21,
                        "w_await": 10.00, "wareq_sz": 1.00, "aqu_sz": 0.04, "util": 0.32})
    # fmt: on
    # svctm (sysstat < 12.1.2): %util / IOPS incl. discards; sdq did 200 reads + 100 discards
    # in 300 ms of busy time
    assert rows["sdq"]["svctm"] == pytest.approx(300 / 300)


MPSTAT_A = {  # tests/expected.mpstat-A, first interval: %usr %nice %sys %iowait %irq %soft %idle
    "all": (2.15, 12.50, 1.84, 0.12, 0.34, 0.19, 82.88),
    "cpu0": (2.71, 0.03, 2.16, 0.00, 0.32, 0.64, 94.14),
    "cpu1": (2.85, 0.00, 4.28, 0.00, 0.68, 0.19, 91.99),
    "cpu2": (2.25, 0.03, 1.51, 0.68, 0.23, 0.13, 95.18),
    "cpu3": (0.00, 99.55, 0.06, 0.00, 0.32, 0.06, 0.00),
    "cpu4": (2.41, 0.00, 1.61, 0.03, 0.26, 0.19, 95.50),
    "cpu5": (1.65, 0.00, 2.33, 0.00, 0.36, 0.10, 95.57),
    "cpu6": (2.41, 0.00, 2.03, 0.16, 0.48, 0.10, 94.82),
    "cpu7": (2.89, 0.00, 0.74, 0.06, 0.06, 0.06, 96.18),
}


def test_cpu_equals_mpstat_and_sar_on_sysstats_trees(sysstat: tuple) -> None:
    """tests/expected.mpstat-A (``mpstat -A 1 4``) and expected.sar-A (``sar -u ALL -w -I ALL
    -q ALL``): each CPU's tick deltas over its own tick total (mpstat.c, rd_stats.c
    get_per_cpu_interval), cswch/s = S_VALUE(context_switch), intr/s = S_VALUE of the intr
    line's total (mpstat -I SUM's 35525.06; sar -I SUM, 31915.30 here, sums /proc/interrupts'
    lines instead: rd_stats.c read_stat_irq).  cpu8 went offline between the trees (it has no
    row, as mpstat shows none).
    runq-sz: sar takes /proc/loadavg's running count less itself (3 here), we take /proc/stat's
    procs_running less ourselves (1 here): the same kernel count on a live host, but sysstat
    edited its trees so that they differ.  Likewise for ``all``: as a CPU went offline, mpstat
    sums the online CPUs (pr_stats.c get_global_cpu_statistics), while we take the kernel's cpu
    line, which on a live kernel is that sum; the edited line is 2 softirq ticks short of it, so
    our %soft and %idle are its 44 and 20590 of 24841 ticks (0.18, 82.89; mpstat 0.19, 82.88)."""
    root, step = sysstat
    rows = _interval(CpuCollector, {}, root, step, SYSSTAT_DT)
    assert set(rows) == set(MPSTAT_A)
    for cpu, figures in MPSTAT_A.items():
        names = ("usr", "nice", "sys", "iowait", "irq", "soft", "idle")
        expected = dict(zip(names, figures, strict=True))
        if cpu == "all":
            expected.update(soft=100 * 44 / 24841, idle=100 * 20590 / 24841)
        _near(rows[cpu], expected)
        _near(rows[cpu], {"steal": 0, "guest": 0, "gnice": 0})
    _near(
        rows["all"],
        {
            "cswch": 68409.30,
            "intr": 35525.06,
            "load1": 3.16,
            "load5": 3.24,
            "load15": 3.43,
            "plist_sz": 956,
            "blocked": 0,
        },
    )
    assert rows["all"]["runq_sz"] == 1


def test_paging_equals_sar_on_sysstats_trees(sysstat: tuple) -> None:
    """expected.sar-A: sar -B (pgsteal/s 0.55 from pgsteal_anon + pgsteal_file, all else 0.00),
    sar -W 0.00, sar -S %swpused 0.00.  %memused 46.11 is sysstat 12.7.8's (total -
    MemAvailable) / total, as its tests/expected.sar-A at tag v12.7.8 prints it on these trees
    (Debian's 12.6.1 prints 39.04: it leaves Cached out of the used memory).  PSI: the trees'
    avg10."""
    root, step = sysstat
    row = _interval(PagingCollector, {}, root, step, SYSSTAT_DT)["all"]
    _near(
        row,
        {
            "pgpgin": 0,
            "pgpgout": 0,
            "fault": 0,
            "majflt": 0,
            "pgfree": 0,
            "pgscank": 0,
            "pgscand": 0,
            "pgsteal": 0.55,
            "pswpin": 0,
            "pswpout": 0,
            "swpused": 0,
            "memused": 46.11,
        },
    )
    assert (row["psi_cpu_some"], row["psi_io_some"], row["psi_io_full"]) == (0.0, 3.19, 3.19)
    assert (row["psi_mem_some"], row["psi_mem_full"]) == (3.12, 0.0)


def test_netdev_reads_the_roots_proc_net_dev_as_sar_does(sysstat: tuple) -> None:
    """Under a root, netdev reads ROOT/proc/net/dev (netlink would answer for this machine).
    expected.sar-A, sar -n DEV and EDEV: rxpck/s = S_VALUE(rx_packets), rxkB/s =
    S_VALUE(rx_bytes) / 1024, rxdrop/s from the file's drop column; %ifutil from
    ROOT/sys/class/net/IFACE/speed (1000 on enp6s0, idle: 0.00; none on wlp5s0: sar prints 0.00,
    we None).  The file has no overrun, carrier or state columns: None."""
    root, step = sysstat
    rows = _interval(NetdevCollector, {}, root, step, SYSSTAT_DT)
    assert set(rows) == {"virbr0-nic", "enp6s0", "virbr0", "virbr0-1", "wlp5s0"}  # lo excluded
    _near(
        rows["wlp5s0"],
        {
            "rx_pkt": 16.04,
            "tx_pkt": 32.08,
            "rx_kb": 0.31,
            "tx_kb": 0.09,
            "rx_drop": 3.21,
            "rx_err": 0,
            "tx_err": 0,
            "tx_drop": 0,
            "rx_fifo": 0,
            "tx_fifo": 0,
            "speed": None,
            "util": None,
        },
    )
    _near(rows["virbr0-1"], {"rx_pkt": 22.46, "tx_pkt": 0, "rx_kb": 0.09, "tx_kb": 0.13})
    _near(rows["virbr0"], {"rx_pkt": 3.21, "rx_kb": 0.03})
    _near(rows["enp6s0"], {"rx_pkt": 0, "speed": 1000, "util": 0})
    for row in rows.values():
        assert row["rx_overrun"] is None and row["carrier_changes"] is None
        assert row["operstate"] is None


def test_netdev_include_is_checked_against_the_roots_interfaces(tmp_path: Path) -> None:
    root = _copy(tmp_path, "sysstat-root1")
    assert NetdevCollector({"root": str(root), "include": ["wlp5s0"]}).include == ("wlp5s0",)
    with pytest.raises(
        ConfigError, match=r"no interface eth0 on this host; existing: enp6s0, lo\b"
    ):
        NetdevCollector({"root": str(root), "include": ["eth0"]})


def test_tcp_host_counters_come_from_the_root_and_sockets_are_not_read(sysstat: tuple) -> None:
    """expected.sar-A, sar -n TCP/ETCP: active/s, passive/s and retrseg/s 0.00.  root2 has no
    /proc/net/netstat, so timeouts and lost_retransmit are absent from the host row; no
    socket rows, and one event saying why."""
    root, step = sysstat
    c = TcpCollector({"root": str(root)})
    c.open()
    (event,) = c.take_events()
    assert event.kind == "root" and "host TCP counters only" in event.text
    first = c.sample()
    step(root)
    rows = c.derive(first, c.sample(), SYSSTAT_DT)
    c.close()
    assert list(rows) == ["host"]
    assert rows["host"] == {"active_opens": 0.0, "passive_opens": 0.0, "retrans_segs": 0.0}


def _cpu_deltas(n: int) -> list[int]:
    """Ticks added to cpuN (user nice system idle iowait irq softirq steal): 100 in all, one
    second at USER_HZ 100, so each percentage is the tick count itself."""
    user, system, iowait, irq, soft, steal = n % 50, 10, n % 7, 1, 2, n % 3
    return [
        user,
        0,
        system,
        100 - user - system - iowait - irq - soft - steal,
        iowait,
        irq,
        soft,
        steal,
    ]


def _bump_stat(text: str) -> str:
    """/proc/stat with _cpu_deltas added to every cpuN line and their sum to the cpu line."""
    lines = text.split("\n")
    total = [0] * 8
    for i, line in enumerate(lines):
        m = re.match(r"cpu(\d+) ", line)
        if m:
            d = _cpu_deltas(int(m[1]))
            total = [a + b for a, b in zip(total, d, strict=True)]
            lines[i] = _add(line, d)
    at = next(i for i, line in enumerate(lines) if line.startswith("cpu "))
    lines[at] = _add(lines[at], total)
    return "\n".join(lines)


def _add(line: str, deltas: list[int]) -> str:
    """A counter line with ``deltas`` added to its first columns."""
    key, *values = line.split()
    return " ".join(
        [key, *(str(int(v) + (deltas[i] if i < len(deltas) else 0)) for i, v in enumerate(values))]
    )


def test_480_cpus_of_an_hp_bl920(tmp_path: Path) -> None:
    """An HP BL920 Gen8 with 480 CPUs (a 3.x kernel: nine columns, no guest_nice).  One second
    of _cpu_deltas on every CPU: mpstat's %usr = delta (user - guest) / delta total, so cpuN's
    %usr is N % 50, %sys 10, %iowait N % 7, %steal N % 3; ``all`` is their mean."""
    root = _copy(tmp_path, "pcp-hpbl920")
    before = parse_stat((root / "proc/stat").read_text())
    _edit(root, "proc/stat", _bump_stat)
    after = parse_stat((root / "proc/stat").read_text())
    rows = CpuCollector().derive(before, after, 1.0)  # no /proc/loadavg in this tree
    assert len(rows) == 481
    for n in range(480):
        row = rows[f"cpu{n}"]
        _near(
            row,
            {
                "usr": n % 50,
                "nice": 0,
                "sys": 10,
                "iowait": n % 7,
                "irq": 1,
                "soft": 2,
                "steal": n % 3,
                "guest": 0,
                "gnice": 0,
            },
        )
        assert sum(
            v
            for k, v in row.items()
            if k in ("usr", "sys", "idle", "iowait", "irq", "soft", "steal", "nice")
        ) == pytest.approx(100)
    mean = sum(n % 50 for n in range(480)) / 480
    _near(rows["all"], {"usr": mean, "sys": 10, "steal": sum(n % 3 for n in range(480)) / 480})


def _bump_disk(i: int, columns: list[str]) -> list[str]:
    """Deltas for the i-th device with I/O: 10 + i reads of 4 kB taking 2 ms each, 5 writes of
    8 kB taking i % 10 + 1 ms each, 250 ms busy, queue time the sum of the I/O times."""
    reads, wait = 10 + i, i % 10 + 1
    d = {
        0: reads,
        2: 8 * reads,
        3: 2 * reads,
        4: 5,
        6: 16 * 5,
        7: 5 * wait,
        9: 250,
        10: 2 * reads + 5 * wait,
    }
    return [str(int(v) + d.get(k, 0)) for k, v in enumerate(columns)]


def test_83_block_devices_of_an_hp_bl920(tmp_path: Path) -> None:
    """The same BL920's 107 /proc/diskstats lines: 83 sd and dm devices with I/O, 24 idle ram
    and loop devices (left out, as iostat leaves them out).  One second of _bump_disk on each
    device with I/O; iostat's formulas (see the sysstat test above) give r/s = 10 + i,
    rareq-sz = 4, r_await = 2, w/s = 5, wareq-sz = 8, w_await = i % 10 + 1, %util = 25,
    aqu-sz = (2 (10 + i) + 5 (i % 10 + 1)) / 1000, svctm = 250 / (15 + i)."""
    root = _copy(tmp_path, "pcp-hpbl920")
    busy = []

    def step(root: Path) -> None:
        lines = []
        for line in (root / "proc/diskstats").read_text().splitlines():
            major, minor, name, *columns = line.split()
            if not name.startswith(("ram", "loop")):
                columns = _bump_disk(len(busy), columns)
                busy.append(name)
            lines.append(" ".join([major, minor, name, *columns]))
        (root / "proc/diskstats").write_text("\n".join(lines) + "\n")

    rows = _interval(DiskCollector, {}, root, step, 1.0)
    assert len(busy) == 83 and list(rows) == busy
    for i, name in enumerate(busy):
        wait = i % 10 + 1
        _near(
            rows[name],
            {
                "r_s": 10 + i,
                "rkb_s": 4 * (10 + i),
                "rareq_sz": 4,
                "r_await": 2,
                "w_s": 5,
                "wkb_s": 40,
                "wareq_sz": 8,
                "w_await": wait,
                "util": 25,
                "aqu_sz": (2 * (10 + i) + 5 * wait) / 1000,
                "svctm": 250 / (15 + i),
            },
        )


def _bump_keyed(deltas: Mapping[str, int], sep: str = " ") -> Callable[[str], str]:
    """A change adding ``deltas`` to the KEY<sep>value lines of a file like /proc/vmstat."""

    def change(text: str) -> str:
        out = []
        for line in text.splitlines():
            key, _, value = line.partition(sep)
            out.append(f"{key}{sep}{int(value) + deltas[key]}" if key in deltas else line)
        return "\n".join(out) + "\n"

    return change


def _bump_table(prefix: str, deltas: Mapping[str, int]) -> Callable[[str], str]:
    """A change adding ``deltas`` to named counters of a "Prefix: names" / "Prefix: values"
    file (/proc/net/snmp, /proc/net/netstat)."""

    def change(text: str) -> str:
        lines = text.split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(prefix + " "))
        names, values = lines[at].split(), lines[at + 1].split()
        lines[at + 1] = " ".join(
            str(int(v) + deltas.get(n, 0)) if i else v
            for i, (n, v) in enumerate(zip(names, values, strict=True))
        )
        return "\n".join(lines)

    return change


RECLAIM = {
    "pgpgin": 8000,
    "pgpgout": 16000,
    "pgfault": 100000,
    "pgmajfault": 40,
    "pgfree": 9000,
    "pgscan_kswapd": 5000,
    "pgscan_direct": 250,
    "pgsteal_kswapd": 4000,
    "pgsteal_direct": 200,
    "pswpin": 30,
    "pswpout": 120,
}


def test_reclaim_and_swapping_as_sar_B_and_W(tmp_path: Path) -> None:
    """A 16 GB host in reclaim (kernel 4.8 to 5.7: node-wide pgscan_kswapd, pgsteal not yet
    split by anon/file), 768 kB of swap in use.  Two seconds of RECLAIM: sar -B pgscank/s =
    S_VALUE(pgscan_kswapd) (pr_stats.c print_paging_stats), so each rate is its delta / 2;
    pgsteal/s sums pgsteal_kswapd and pgsteal_direct here (sysstat <= 12.7.8 did; newer sar
    reads only pgsteal_anon/file and prints 0.00 on this kernel)."""
    root = _copy(tmp_path, "pcp-reclaim")
    row = _interval(
        PagingCollector, {}, root, lambda r: _edit(r, "proc/vmstat", _bump_keyed(RECLAIM)), 2.0
    )["all"]
    _near(
        row,
        {
            "pgpgin": 4000,
            "pgpgout": 8000,
            "fault": 50000,
            "majflt": 20,
            "pgfree": 4500,
            "pgscank": 2500,
            "pgscand": 125,
            "pgsteal": 2100,
            "pswpin": 15,
            "pswpout": 60,
        },
    )
    total = 16050940
    assert row["memused"] == pytest.approx(100 * (total - 10749228) / total)  # MemAvailable
    assert row["swpused"] == pytest.approx(100 * (8093692 - 8092924) / 8093692)
    assert row["psi_mem_some"] is None  # no /proc/pressure in this tree (kernel < 4.20)


def test_swap_in_use_and_tcp_retransmissions(tmp_path: Path) -> None:
    """node_exporter's fixture host: 1 GB of its 4 GB swap in use (sar -S %swpused = (SwapTotal
    - SwapFree) / SwapTotal = 24.77), PSI io some 0.18; a kernel before 4.8 counts pgscan per
    zone (pgscan_kswapd_normal ...), which sar 12.x does not read and neither do we (None).
    Two seconds of TCP trouble: ActiveOpens +4, RetransSegs +6, TCPTimeouts +2,
    TCPLostRetransmit +1 -> active/s 2, retrseg/s 3 (sar -n TCP/ETCP), timeouts/s 1, 0.5.
    Its meminfo has no MemAvailable (kernel before 3.14): %memused is sysstat 12.7.7's (total
    - free - buffers - cached - slab) / total = 65.87, not 12.7.8's (total - free) / total =
    93.97, which counts the page cache as used."""
    root = _copy(tmp_path, "node-exporter")
    row = _interval(PagingCollector, {}, root, lambda r: None, 2.0)["all"]
    total = 3742148
    assert row["memused"] == pytest.approx(100 * (total - 225472 - 22040 - 930888 - 98932) / total)
    _near(
        row,
        {
            "swpused": 24.77,
            "pswpin": 0,
            "pswpout": 0,
            "pgscank": None,
            "pgscand": None,
            "psi_io_some": 0.18,
            "psi_io_full": 0.18,
            "psi_cpu_some": 0.0,
        },
    )

    def trouble(root: Path) -> None:
        _edit(root, "proc/net/snmp", _bump_table("Tcp:", {"ActiveOpens": 4, "RetransSegs": 6}))
        _edit(
            root,
            "proc/net/netstat",
            _bump_table("TcpExt:", {"TCPTimeouts": 2, "TCPLostRetransmit": 1}),
        )

    host = _interval(TcpCollector, {}, root, trouble, 2.0)["host"]
    assert host == {
        "active_opens": 2.0,
        "passive_opens": 0.0,
        "retrans_segs": 3.0,
        "timeouts": 1.0,
        "lost_retransmit": 0.5,
    }


def test_a_root_that_is_not_a_directory_is_a_one_line_config_error(tmp_path: Path) -> None:
    for cls in (CpuCollector, DiskCollector, PagingCollector, NetdevCollector, TcpCollector):
        with pytest.raises(ConfigError) as e:
            cls({"root": str(tmp_path / "nowhere")})
        assert str(e.value).startswith(f"collectors.{cls.name}.root: ")
        assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=r"collectors\.cpu\.root: 7 is not a directory"):
        CpuCollector({"root": 7})


def test_a_file_missing_under_the_root_is_unavailable_naming_it(tmp_path: Path) -> None:
    """pcp-reclaim has no loadavg, diskstats, net/dev or net/snmp: each collector that needs
    one says which, in one line, rather than reading this machine's."""
    root = _copy(tmp_path, "pcp-reclaim")
    for cls, missing in (
        (CpuCollector, "proc/loadavg"),
        (DiskCollector, "proc/diskstats"),
        (NetdevCollector, "proc/net/dev"),
        (TcpCollector, "proc/net/snmp"),
    ):
        c = cls({"root": str(root)})
        with pytest.raises(Unavailable, match=re.escape(f"cannot read {root}/{missing}")):
            c.open()
        c.close()


def test_root_slash_is_this_machine(tmp_path: Path) -> None:
    """The default and an explicit "/" (or "//host/..") read the same paths as before."""
    assert CpuCollector().path("/proc/stat") == "/proc/stat"
    assert CpuCollector({"root": "/"}).root == "/"
    assert CpuCollector({"root": f"{tmp_path}/"}).path("/proc/stat") == f"{tmp_path}/proc/stat"


def test_a_hosts_root_reaches_each_of_its_collectors(sysstat: tuple, tmp_path: Path) -> None:
    """``root`` in a ``[[host]]`` entry applies to all its collectors; a collector's own table
    still wins."""
    from sgmon.config import load_config
    from sgmon.hosts.build import host_options

    root, _ = sysstat
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(f'[[host]]\nname = "p"\nroot = "{root}"\n[collectors.disk]\nroot = "/"\n')
    config = load_config(str(cfg))
    host = config.hosts[0]
    assert CpuCollector(host_options(config, "cpu", host)).root == str(root)
    assert host_options(config, "disk", host)["root"] == "/"

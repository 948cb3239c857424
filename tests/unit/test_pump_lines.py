"""A pumped host's /proc/stat, /proc/vmstat, /proc/meminfo and its followed processes' status
files carry only the lines the collectors read (Collector.lines, the procs collector's
``status``): the collectors' figures from those lines are the figures from the whole file, on
this machine's files and on the shapes of other kernels and larger hosts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.cpu import parse_stat
from collectors.paging import parse_meminfo, parse_vmstat
from collectors.procs import ProcsCollector
from sgmon.hosts.build import lines_read
from sgmon.readers.procs import switches
from sgmon.remote.pump import kept

OLD_VMSTAT = (
    "nr_free_pages 1\npgpgin 10\npgpgout 20\npswpin 3\npswpout 4\npgfault 99\n"
    "pgmajfault 7\npgfree 5\npgsteal_kswapd 11\npgsteal_direct 12\npgscan_kswapd 13\n"
    "pgscan_direct 14\n"
)
"""A 4.x kernel's /proc/vmstat: pgsteal split by kswapd/direct, not anon/file."""
BIG_STAT = (
    "cpu  1 2 3 4 5 6 7 8 0 0\n"
    + "".join(f"cpu{i} 1 2 3 4 5 6 7 8 0 0\n" for i in range(96))
    + "intr 123456789 " + " ".join(str(i) for i in range(4000)) + "\n"
    + "ctxt 555\nbtime 1700000000\nprocesses 99\nprocs_running 4\nprocs_blocked 2\n"
    + "softirq 1 2 3 4 5 6 7 8 9 10 11\n"
)  # fmt: skip
"""96 CPUs, 4,000 interrupt lines (a large database host)."""
NO_SWAP_MEMINFO = (
    "MemTotal:  1000 kB\nMemFree:  100 kB\nMemAvailable:  500 kB\nActive:  300 kB\n"
    "SwapTotal:  0 kB\nSwapFree:  0 kB\nHugePages_Total:  0\n"
)


def _files() -> list[tuple[str, bytes]]:
    here = [(p, Path(p).read_bytes()) for p in ("/proc/stat", "/proc/vmstat", "/proc/meminfo")]
    made = {"/proc/vmstat": OLD_VMSTAT, "/proc/stat": BIG_STAT, "/proc/meminfo": NO_SWAP_MEMINFO}
    return here + [(p, t.encode()) for p, t in made.items()]


PARSE = {"/proc/stat": parse_stat, "/proc/vmstat": parse_vmstat, "/proc/meminfo": parse_meminfo}


@pytest.mark.parametrize(("path", "data"), _files(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_kept_lines_give_the_whole_files_figures(path: str, data: bytes) -> None:
    lines = re.compile(lines_read()[path].encode())
    shipped = kept(lines, data)
    assert PARSE[path](shipped.decode()) == PARSE[path](data.decode())
    assert len(shipped) < len(data)


def test_meminfo_ships_memavailable_for_memused() -> None:
    """%memused is (total - MemAvailable) / total: a pumped host must ship that line."""
    shipped = kept(re.compile(lines_read()["/proc/meminfo"].encode()), NO_SWAP_MEMINFO.encode())
    assert b"\nMemAvailable:  500 kB" in b"\n" + shipped
    assert parse_meminfo(shipped.decode())["memused"] == 50.0


def test_a_large_hosts_stat_ships_a_fraction_of_its_interrupt_line() -> None:
    shipped = kept(re.compile(lines_read()["/proc/stat"].encode()), BIG_STAT.encode())
    assert b"\nintr 123456789\n" in shipped + b"\n" and len(shipped) < len(BIG_STAT) // 4


QUIET_STATUS = (
    "Name:\tora_nss2_TEST\nState:\tS (sleeping)\nThreads:\t1\n"
    "voluntary_ctxt_switches:\t52\nnonvoluntary_ctxt_switches:\t3\n"
)
"""A thread seldom preempted: its last kept line holds a single digit."""


@pytest.mark.parametrize(
    "status",
    [Path("/proc/self/status").read_bytes(), QUIET_STATUS.encode()],
    ids=["this-process", "quiet-thread"],
)
def test_a_status_files_kept_lines_give_its_context_switches(status: bytes) -> None:
    """The pump keeps the two lines, the last one without its newline: a reader that took the
    value up to the next newline lost its last digit (3 read as nothing, 52 as 5)."""
    lines = re.compile(ProcsCollector().remote_processes()["status"].encode())
    shipped = kept(lines, status)
    assert shipped.count(b"\n") == 2 and not shipped.endswith(b"\n")
    whole = switches(status.decode())
    assert switches(shipped.decode()) == whole
    assert whole != (0, 0)

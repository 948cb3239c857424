"""The paging collector's parsers: which vmstat line makes which field; None for the absent."""

from __future__ import annotations

import pytest

from collectors.paging import parse_meminfo, parse_pressure, parse_vmstat
from sgmon.readers.procfile import KeyedLines

VMSTAT = """pgpgin 100
pgpgout 200
pgfault 3000
pgmajfault 4
pgfree 5000
pgscan_kswapd 60
pgscan_direct 7
pgsteal_kswapd 50
pgsteal_direct 5
pgsteal_khugepaged 0
pgsteal_anon 20
pgsteal_file 35
pswpin 8
pswpout 9
"""


def test_vmstat_fields_and_pgsteal_counted_once() -> None:
    got = parse_vmstat(VMSTAT)
    assert got == {
        "pgpgin": 100,
        "pgpgout": 200,
        "fault": 3000,
        "majflt": 4,
        "pgfree": 5000,
        "pgscank": 60,
        "pgscand": 7,
        "pgsteal": 55,  # anon + file, not also kswapd + direct (sysstat < 12.7.9 double-counted)
        "pswpin": 8,
        "pswpout": 9,
    }


def test_old_kernel_pgsteal_and_missing_counters() -> None:
    old = "pgsteal_kswapd 50\npgsteal_direct 5\npgfault 1\n"
    got = parse_vmstat(old)
    assert got["pgsteal"] == 55
    assert got["pswpin"] is None and got["pgscank"] is None  # absent, never a fake 0


def test_meminfo_as_sar_and_no_swap() -> None:
    text = (
        "MemTotal: 1000 kB\nMemFree: 100 kB\nMemAvailable: 400 kB\nBuffers: 50 kB\n"
        "Cached: 250 kB\nSlab: 100 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
    )
    got = parse_meminfo(text)
    assert got["memused"] == 60.0  # sysstat 12.7.8: (1000 - 400) / 1000; 12.6.1 said 50
    assert got["swpused"] is None
    with_swap = text.replace("SwapTotal: 0", "SwapTotal: 400").replace(
        "SwapFree: 0", "SwapFree: 300"
    )
    assert parse_meminfo(with_swap)["swpused"] == 25.0


SGA_HOST = (
    "MemTotal: 32000000 kB\nMemFree: 2000000 kB\nMemAvailable: 6400000 kB\n"
    "Buffers: 100000 kB\nCached: 20000000 kB\nSwapCached: 0 kB\nShmem: 16000000 kB\n"
    "Slab: 500000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\nHugePages_Total: 0\n"
)
"""32 GB with a 16 GB SGA in shared memory and no HugePages: the SGA is in Cached (and Shmem),
but not in MemAvailable, as the kernel cannot drop it.  The same host as the sar import's test
of the SGA case, so that the live and the imported %memused can be compared."""


def test_an_sga_without_hugepages_is_used_memory_live_as_imported() -> None:
    """sysstat 12.6.1's formula said 29.38 % (the SGA free); 12.7.8's says 80 %, and the sar
    import of the same host says 80.0 (tests/unit/test_import_sar_layouts.py)."""
    assert parse_meminfo(SGA_HOST)["memused"] == 80.0


def test_a_kernel_without_memavailable_keeps_the_cache_out_of_the_used() -> None:
    """Before 3.14 there is no MemAvailable: free, buffers, cached and slab count as unused
    (sysstat 12.7.7's figure, 29.38 here), not 12.7.8's MemFree alone (93.75: the page cache
    counted as used, every database host near full)."""
    old = "".join(line + "\n" for line in SGA_HOST.splitlines() if "MemAvailable" not in line)
    assert parse_meminfo(old)["memused"] == pytest.approx(100 * 9_400_000 / 32_000_000)


def test_pressure() -> None:
    text = (
        "some avg10=1.50 avg60=0.20 avg300=0.00 total=12345\n"
        "full avg10=0.25 avg60=0.00 avg300=0.00 total=123\n"
    )
    assert parse_pressure(text) == {"some": 1.5, "full": 0.25}


def test_keyed_lines_find_keys_wherever_they_move() -> None:
    """The search starts near the key's last place; a key that moved far, or away and back,
    is still found, and a key that only ends another key's name is not taken for it."""
    lines = KeyedLines(("a", "b", "Cached"), ":")
    first = "a: 1\nSwapCached: 7\nb: 2\nCached: 3\n"
    assert lines.values(first) == {"a": " 1", "b": " 2", "Cached": " 3"}
    moved = "x: 0\n" * 500 + "Cached: 4\n" + "y: 0\n" * 500 + "b: 5"
    assert lines.values(moved) == {"b": " 5", "Cached": " 4"}
    assert lines.values(first) == {"a": " 1", "b": " 2", "Cached": " 3"}

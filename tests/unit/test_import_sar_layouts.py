"""sadf -j records of the sysstat versions whose names or formulas moved, read as sar reads them.

The records follow the layout of ``sadf -j`` as sysstat 12.6.1 prints it (``sadf -j FILE -- -r
ALL -n ETCP`` on a file sadc wrote on the test machine: ``memory`` with memfree, avail, memused,
memused-percent, buffers, cached, ..., slab; ``network.net-etcp`` with atmptf, estres, retrans,
isegerr, orsts) with ``retrans`` under the name sysstat 12.7.6 and later give it, ``retrseg``
(issue "Findings to trust on real recordings"); the figures are written for these tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sgmon.importers.sar.records import host_sections

ETCP_OLD = {"atmptf": 0.00, "estres": 0.50, "retrans": 7.00, "isegerr": 0.00, "orsts": 1.00}
ETCP_NEW = {"atmptf": 0.00, "estres": 0.50, "retrseg": 12.00, "isegerr": 0.00, "orsts": 1.00}


def _doc(memory: dict[str, Any] | None = None, etcp: dict[str, Any] | None = None) -> object:
    stat: dict[str, Any] = {
        "timestamp": {"date": "2026-11-24", "time": "11:10:01", "utc": 1, "interval": 600}
    }
    if memory is not None:
        stat["memory"] = memory
    if etcp is not None:
        stat["network"] = {"net-etcp": etcp}
    host = {"nodename": "db1", "sysname": "Linux", "statistics": [stat], "restarts": []}
    return {"sysstat": {"sysdata-version": 15.2, "hosts": [host]}}


def _row(doc: object, collector: str, inst: str) -> dict[str, Any]:
    notes: list[str] = []
    hosts = host_sections(Path("sa24"), doc, {}, notes)
    assert hosts is not None and not notes, notes
    return hosts[0].records[0].rows[collector][inst]


def test_retrseg_of_sysstat_12_7_6_is_read_as_retrans() -> None:
    """Before: only ``retrans`` was read, so 12.7.6's files imported no retransmissions."""
    assert _row(_doc(etcp=ETCP_NEW), "tcp", "host")["retrans_segs"] == 12.0
    assert _row(_doc(etcp=ETCP_OLD), "tcp", "host")["retrans_segs"] == 7.0


MEM_1261 = {  # as sadf 12.6.1 printed it on the test machine (kB): memused leaves out
    # free, buffers, cached and slab; memused-percent is memused / total
    "memfree": 19199376, "avail": 23655340, "memused": 646472, "memused-percent": 2.62,
    "buffers": 436616, "cached": 3761272, "commit": 1531032, "commit-percent": 6.20,
    "active": 1938492, "inactive": 2706024, "dirty": 12508, "anonpg": 463620,
    "slab": 639916, "kstack": 3808, "pgtbl": 5352, "vmused": 16556,
}  # fmt: skip
TOTAL_1261 = 24683652


def test_memused_is_total_minus_available_as_sysstat_12_7_8() -> None:
    row = _row(_doc(memory=MEM_1261), "paging", "all")
    assert row["memused"] == round(100 * (TOTAL_1261 - 23655340) / TOTAL_1261, 2)  # 4.17


def test_sga_in_shared_memory_without_hugepages_is_used_not_free() -> None:
    """32 GB, a 16 GB SGA in shared memory (counted in Cached, not in MemAvailable): sysstat
    12.6's %memused says 29 %, MemAvailable says 80 % is taken.  The old import kept 29."""
    total, free, buffers, cached, slab, avail = (
        32_000_000, 2_000_000, 100_000, 20_000_000, 500_000, 6_400_000,
    )  # fmt: skip
    used = total - free - buffers - cached - slab
    mem = {
        **MEM_1261,
        **{"memfree": free, "avail": avail, "memused": used, "buffers": buffers},
        **{"cached": cached, "slab": slab, "memused-percent": round(100 * used / total, 2)},
    }
    assert mem["memused-percent"] == 29.38
    assert _row(_doc(memory=mem), "paging", "all")["memused"] == 80.0


def test_memused_of_a_sadf_that_already_subtracts_available_is_kept() -> None:
    used = TOTAL_1261 - 23655340
    mem = {**MEM_1261, "memused": used, "memused-percent": round(100 * used / TOTAL_1261, 2)}
    assert _row(_doc(memory=mem), "paging", "all")["memused"] == mem["memused-percent"]


def test_memused_without_available_is_sadf_s_figure() -> None:
    mem = {k: v for k, v in MEM_1261.items() if k != "avail"}
    assert _row(_doc(memory=mem), "paging", "all")["memused"] == 2.62


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_a_devices_table_that_is_no_file_is_one_line(kind: str, tmp_path: Path) -> None:
    """``--devices`` on a FIFO waited for a writer forever; on /dev/zero it ran out of memory."""
    import os

    from sgmon.errors import UsageError
    from sgmon.importers.sar import records

    path = tmp_path / "diskstats"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path = Path("/dev/zero")
    else:
        with open(path, "wb") as f:
            f.truncate(records.DEVICES_MAX + 1)  # sparse: no disk spent
    with pytest.raises(UsageError) as e:
        records.device_table(path)
    said = str(e.value)
    assert said.startswith(f"--devices {path}: ") and "\n" not in said, said
    assert ("FIFO" in said) if kind == "fifo" else ("device" in said or "larger than" in said)

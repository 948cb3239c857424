"""`paging`: memory pressure as sar -B and sar -W show it, plus PSI.

One instance, ``all``.  Read from /proc/vmstat, /proc/meminfo and /proc/pressure/* (under the
``root`` option), kept open.
pgsteal is pgsteal_anon + pgsteal_file as sysstat >= 12.7.9 sums it (older sysstat, e.g. Debian
12's 12.6.1, also added pgsteal_kswapd/direct and so double-counted).  %memused is sysstat
12.7.8's, (total - MemAvailable) / total ("sar/sadf: Now compute used memory as total memory -
available memory"): before, sar left Cached out of the used memory, so an SGA in shared memory
without HugePages (in Cached, yet not available) read as free.  Without swap %swpused is None;
without PSI (kernel < 4.20 or psi=0) the psi_* fields are None.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from sgmon.collector import Collector, Unavailable
from sgmon.config.rules import Rule
from sgmon.contract import RowKind
from sgmon.model import Field, Kind, Rows, Value
from sgmon.readers.procfile import KeyedLines, ProcFile, keyed_pattern

G, R = Kind.GAUGE, Kind.RATE

FIELDS = (
    Field("pgpgin", "kB/s", R, "kB paged in from disk per second (sar -B pgpgin/s)"),
    Field("pgpgout", "kB/s", R, "kB paged out to disk per second (sar -B pgpgout/s)"),
    Field("fault", "/s", R, "page faults, minor and major, per second (sar -B fault/s)"),
    Field("majflt", "/s", R, "major faults needing I/O per second (sar -B majflt/s)"),
    Field("pgfree", "/s", R, "pages freed per second (sar -B pgfree/s)"),
    Field("pgscank", "/s", R, "pages scanned by kswapd per second (sar -B pgscank/s)", warn=200),
    Field(
        "pgscand", "/s", R, "pages scanned in direct reclaim per second (sar -B pgscand/s)", warn=1
    ),
    Field("pgsteal", "/s", R, "pages reclaimed per second (sar -B pgsteal/s)"),
    Field("pswpin", "/s", R, "pages swapped in per second (sar -W pswpin/s)", warn=1),
    Field("pswpout", "/s", R, "pages swapped out per second (sar -W pswpout/s)", warn=1),
    Field(
        "memused",
        "%",
        G,
        "memory used, (total - available) / total (sar -r %memused, sysstat 12.7.8 and later)",
        warn=95,
        crit=99,
    ),
    Field("swpused", "%", G, "swap used (sar -S %swpused); empty when there is no swap"),
    Field("psi_cpu_some", "%", G, "share of time some task waited for CPU, avg10 (PSI)"),
    Field("psi_mem_some", "%", G, "share of time some task stalled on memory, avg10 (PSI)"),
    Field("psi_mem_full", "%", G, "share of time all tasks stalled on memory, avg10 (PSI)", warn=5),
    Field("psi_io_some", "%", G, "share of time some task stalled on I/O, avg10 (PSI)"),
    Field("psi_io_full", "%", G, "share of time all tasks stalled on I/O, avg10 (PSI)"),
)


# field -> /proc/vmstat keys summed (the first list that the kernel has wins for pgsteal)
_VMSTAT: dict[str, tuple[str, ...]] = {
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
_PGSTEAL_OLD = ("pgsteal_kswapd", "pgsteal_direct")  # kernels before 5.x have no anon/file split
_VMSTAT_KEYS = tuple(dict.fromkeys(k for keys in (*_VMSTAT.values(), _PGSTEAL_OLD) for k in keys))
_MEMINFO_KEYS = (
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "Slab",
    "SwapTotal",
    "SwapFree",
)
_UNUSED_BEFORE_3_14 = ("MemFree", "Buffers", "Cached", "Slab")
"""What sysstat 11.7.4 to 12.7.7 count as unused, kept for kernels without MemAvailable (before
3.14): sysstat 12.7.8 takes MemFree alone there ("sar: Set availablekb to frmkb by default"),
which counts the whole page cache as used and would put every such database host near 100 %."""
_PSI = {
    "cpu": ("psi_cpu_some",),
    "memory": ("psi_mem_some", "psi_mem_full"),
    "io": ("psi_io_some", "psi_io_full"),
}


def parse_vmstat(text: str, lines: KeyedLines | None = None) -> dict[str, Value]:
    """/proc/vmstat -> the cumulative counters of sar -B / -W, by our field names (``lines``:
    the reader that remembers where the keys were, kept by the caller between reads)."""
    lines = lines or KeyedLines(_VMSTAT_KEYS, " ")
    raw = {key: int(val) for key, val in lines.values(text).items()}
    out: dict[str, Value] = {}
    for name, keys in _VMSTAT.items():
        if name == "pgsteal" and "pgsteal_anon" not in raw:
            keys = _PGSTEAL_OLD
        vals = [raw[k] for k in keys if k in raw]
        out[name] = sum(vals) if vals else None
    return out


def parse_meminfo(text: str, lines: KeyedLines | None = None) -> dict[str, Value]:
    """/proc/meminfo -> %memused as sysstat 12.7.8's sar -r and %swpused as sar -S (None
    without swap)."""
    lines = lines or KeyedLines(_MEMINFO_KEYS, ":")
    kb = {key: int(rest.split()[0]) for key, rest in lines.values(text).items()}
    total = kb.get("MemTotal", 0)
    avail = kb.get("MemAvailable")
    unused = avail if avail is not None else sum(kb.get(k, 0) for k in _UNUSED_BEFORE_3_14)
    swap = kb.get("SwapTotal", 0)
    return {
        "memused": 100.0 * max(0, total - unused) / total if total else None,
        "swpused": 100.0 * (swap - kb.get("SwapFree", 0)) / swap if swap else None,
    }


def parse_pressure(text: str) -> dict[str, float]:
    """One /proc/pressure file -> {"some": avg10, "full": avg10} (percent)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        for item in rest.split():
            if item.startswith("avg10="):
                out[kind] = float(item[6:])
    return out


class PagingCollector(Collector):
    """sar -B / -W / -r figures from /proc/vmstat and /proc/meminfo, and PSI."""

    name = "paging"
    rows = (RowKind("all", fixed="all"),)
    description = "paging and swapping (sar -B, sar -W), memory used, PSI"
    option_rules: ClassVar[Mapping[str, Rule]] = {}
    fields = FIELDS
    lines: ClassVar[Mapping[str, str]] = {
        "/proc/vmstat": keyed_pattern(_VMSTAT_KEYS, " "),
        "/proc/meminfo": keyed_pattern(_MEMINFO_KEYS, ":"),
    }
    remote_files: ClassVar[Mapping[str, str]] = {
        "/proc/vmstat": "tick",
        "/proc/meminfo": "tick",
        **{f"/proc/pressure/{res}": "tick" for res in _PSI},
    }

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        super().__init__(options)
        self._vmstat: ProcFile | None = None
        self._meminfo: ProcFile | None = None
        self._psi: dict[str, ProcFile] = {}
        self._vmstat_lines = KeyedLines(_VMSTAT_KEYS, " ")
        self._meminfo_lines = KeyedLines(_MEMINFO_KEYS, ":")

    def open(self) -> None:
        """Keep the files open; PSI files that cannot be read are left out (fields None)."""
        try:
            self._vmstat = ProcFile(self.path("/proc/vmstat"))
            self._meminfo = ProcFile(self.path("/proc/meminfo"))
        except OSError as e:
            self.close()
            raise Unavailable(f"cannot read {e.filename}: {e.strerror}") from None
        for res in _PSI:
            path = self.path(os.path.join("/proc/pressure", res))
            try:
                f = ProcFile(path)
                f.read()  # with psi=0 on the kernel command line the open works, the read fails
            except OSError:
                continue
            self._psi[res] = f

    def sample(self) -> Rows:
        """One read of each file."""
        assert self._vmstat is not None and self._meminfo is not None
        row = parse_vmstat(self._vmstat.read(), self._vmstat_lines)
        row.update(parse_meminfo(self._meminfo.read(), self._meminfo_lines))
        for res, names in _PSI.items():
            f = self._psi.get(res)
            avg = parse_pressure(f.read()) if f is not None else {}
            for name in names:
                row[name] = avg.get(name.rpartition("_")[2])
        return {"all": row}

    def close(self) -> None:
        """Close the files."""
        for f in (self._vmstat, self._meminfo, *self._psi.values()):
            if f is not None:
                f.close()
        self._vmstat = self._meminfo = None
        self._psi = {}

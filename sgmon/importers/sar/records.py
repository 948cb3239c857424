"""sadf's records on the live collectors' fields and units (see the package docstring): each
host section of a file, each record's rows, a record or a figure of an unexpected shape
skipped and counted."""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgmon.errors import UsageError
from sgmon.importers.sar.sadf import SHAPE_ERRORS
from sgmon.model import Rows, Value, number
from sgmon.readers.regular import read_regular

# (section, sadf key, collector, field)
CPU = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle")
QUEUE = {
    "runq-sz": "runq_sz",
    "plist-sz": "plist_sz",
    "ldavg-1": "load1",
    "ldavg-5": "load5",
    "ldavg-15": "load15",
    "blocked": "blocked",
}
PAGING = ("pgpgin", "pgpgout", "fault", "majflt", "pgfree", "pgscank", "pgscand", "pgsteal")
PSI = {
    ("psi-cpu", "some_avg10"): "psi_cpu_some",
    ("psi-mem", "some_avg10"): "psi_mem_some",
    ("psi-mem", "full_avg10"): "psi_mem_full",
    ("psi-io", "some_avg10"): "psi_io_some",
    ("psi-io", "full_avg10"): "psi_io_full",
}
NET_DEV = {
    "rxkB": "rx_kb",
    "txkB": "tx_kb",
    "rxpck": "rx_pkt",
    "txpck": "tx_pkt",
    "ifutil-percent": "util",
}
NET_EDEV = {
    "rxerr": "rx_err",
    "txerr": "tx_err",
    "rxdrop": "rx_drop",
    "txdrop": "tx_drop",
    "rxfifo": "rx_fifo",
    "txfifo": "tx_fifo",
}
TCP = {("net-tcp", "active"): "active_opens", ("net-tcp", "passive"): "passive_opens"}
ETCP = {("net-etcp", "retrans"): "retrans_segs"}
RETRSEG = ("net-etcp", "retrseg")
"""sysstat 12.7.6 renamed sar -n ETCP's retrans/s to retrseg/s, and sadf -j's key with it: the
same counter (TCP RetransSegs), read under either name."""
MEM_USED_BY = ("memfree", "buffers", "cached", "slab")
"""What sysstat 11.7.4 to 12.7.7 leave out of kbmemused (with kbmemused, the whole memory)."""


@dataclass
class Record:
    """One sadf record, read: its time, its interval (None: not stated), its rows."""

    t: float
    interval: float | None
    rows: dict[str, Rows]


@dataclass
class Host:
    """One host section of a file: its nodename, records and restart times."""

    nodename: str
    records: list[Record]
    restarts: list[float]


def host_sections(
    path: Path, doc: object, names: dict[str, str], notes: list[str]
) -> list[Host] | None:
    """The file's host sections, each record read into rows; None (and a note) when the JSON is
    not sadf's shape at all.  A record that cannot be read is skipped and a figure that is no
    number is left empty, each counted in one note for the file."""
    raw = _sections(path, doc, notes)
    if raw is None:
        return None
    out: list[Host] = []
    bad: list[str] = []
    odd = 0
    for h, stats in raw:
        records = _records(stats, names, bad)
        odd += sum(_numbers_only(r.rows) for r in records)
        nodename = h.get("nodename")
        out.append(Host(nodename if isinstance(nodename, str) else "", records, _restarts(h, bad)))
    if bad:
        notes.append(
            f"{path}: {len(bad)} sadf record(s) of an unexpected shape skipped, first "
            f"{bad[0]}; the others kept"
        )
    if odd:
        notes.append(f"{path}: {odd} figure(s) that are no number left empty")
    if not any(h.records for h in out):
        notes.append(f"{path}: no readable sadf record")
        return None
    return out


def _sections(
    path: Path, doc: object, notes: list[str]
) -> list[tuple[dict[str, Any], list[Any]]] | None:
    """The host sections of sadf's JSON with their records; None (and a note) when it is not
    sysstat's layout."""
    try:
        sections = doc["sysstat"]["hosts"]  # type: ignore[index]
        if not isinstance(sections, list) or not all(isinstance(h, dict) for h in sections):
            raise TypeError("hosts is not a list of objects")
        raw = [(h, h.get("statistics", [])) for h in sections]
        if not all(isinstance(st, list) for _, st in raw):
            raise TypeError("statistics is not a list")
    except SHAPE_ERRORS as e:
        notes.append(f"{path}: sadf -j output is not sysstat's JSON layout ({_why(e)}); skipped")
        return None
    return raw


def _records(stats: list[Any], names: dict[str, str], bad: list[str]) -> list[Record]:
    """A host section's records read; one of an unexpected shape goes to ``bad``."""
    records = []
    for n, s in enumerate(stats, 1):
        try:
            ts = s["timestamp"]
            interval = float(ts["interval"]) if ts.get("interval") else None
            rows = _rows(s, names)
            records.append(Record(_when(ts), interval, rows))
        except SHAPE_ERRORS as e:
            bad.append(f"record {n} ({_why(e)})")
    return records


def _restarts(h: dict[str, Any], bad: list[str]) -> list[float]:
    """A host section's restart times, in order; one of an unexpected shape goes to ``bad``."""
    restarts = []
    for r in h.get("restarts", []) if isinstance(h.get("restarts"), list) else []:
        try:
            restarts.append(_when(r["boot"]))
        except SHAPE_ERRORS as e:
            bad.append(f"a restart ({_why(e)})")
    return sorted(restarts)


def _why(e: BaseException) -> str:
    """A short reason from a shape error: the missing key, or the error's own words."""
    return f"no {e.args[0]!r}" if isinstance(e, KeyError) and e.args else str(e) or type(e).__name__


def _numbers_only(rows: dict[str, Rows]) -> int:
    """Empty every figure that is no number (sadf prints numbers; a damaged output may not);
    return how many were emptied."""
    n = 0
    for inst_rows in rows.values():
        for row in inst_rows.values():
            for k, v in row.items():
                if v is not None and number(v) is None:
                    row[k] = None
                    n += 1
    return n


DEV_MN = re.compile(r"^dev(\d+)-(\d+)$")
"""sadf's name for a device it cannot name: devMAJOR-MINOR."""


DEVICES_MAX = 16 << 20
"""The largest --devices table read: /proc/diskstats of a host with 10,000 devices is ~1.5 MB."""


def device_table(path: Path) -> dict[str, str]:
    """``devM-N`` -> kernel name, from a copy of the host's /proc/diskstats (``M N name ...``)
    or ``lsblk -rno MAJ:MIN,KNAME`` (``M:N name``)."""
    try:  # a FIFO is refused, not waited on; /dev/zero is no table (a host's is a few kB)
        text = read_regular(path, DEVICES_MAX).decode("utf-8", "replace")
    except OSError as e:
        raise UsageError(f"--devices {path}: {e.strerror}") from None
    table: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and ":" in parts[0]:  # lsblk: MAJ:MIN NAME
            parts = [*parts[0].split(":", 1), *parts[1:]]
        if len(parts) >= 3 and parts[0].isdigit() and parts[1].isdigit():
            table[f"dev{parts[0]}-{parts[1]}"] = parts[2]
    if not table:
        raise UsageError(
            f"--devices {path}: no 'MAJOR MINOR NAME' lines; give a copy of /proc/diskstats "
            "or the output of lsblk -rno MAJ:MIN,KNAME"
        )
    return table


def _when(ts: dict[str, Any]) -> float:
    """A sadf timestamp (UTC unless sadf was told -t) as epoch seconds."""
    st = time.strptime(f"{ts['date']} {ts['time']}", "%Y-%m-%d %H:%M:%S")
    return float(calendar.timegm(st) if ts.get("utc", 1) else time.mktime(st))


def _rows(s: dict[str, Any], names: dict[str, str]) -> dict[str, Rows]:
    """One sadf record -> rows of the live collectors (``names``: devM-N -> kernel name)."""
    out: dict[str, Rows] = {}
    cpu = _cpu(s)
    if any(cpu.values()):  # a row with any figure, zeros included
        out["cpu"] = cpu
    paging = _paging(s)
    if paging:
        out["paging"] = {"all": paging}
    disks = {names.get(d["disk-device"], d["disk-device"]): _disk(d) for d in s.get("disk", [])}
    if disks:
        out["disk"] = disks
    net = s.get("network", {})
    ifaces: Rows = {}
    for sect, fields in (("net-dev", NET_DEV), ("net-edev", NET_EDEV)):
        for d in net.get(sect, []):
            ifaces.setdefault(d["iface"], {}).update({f: d[k] for k, f in fields.items() if k in d})
    if ifaces:
        out["netdev"] = ifaces
    tcp = {f: net[sect][k] for (sect, k), f in (TCP | ETCP).items() if k in net.get(sect, {})}
    sect, k = RETRSEG
    if k in net.get(sect, {}):
        tcp[ETCP[(sect, "retrans")]] = net[sect][k]
    if tcp:
        out["tcp"] = {"host": tcp}
    return out


def _cpu(s: dict[str, Any]) -> Rows:
    """sar -u ALL -P ALL's rows, with -q, -w and -I SUM on the ``all`` row."""
    cpu: Rows = {}
    for c in s.get("cpu-load", []):
        inst = "all" if c["cpu"] == "all" else f"cpu{c['cpu']}"
        cpu[inst] = {f: c[f] for f in CPU if f in c}
    allrow = cpu.setdefault("all", {})
    q = s.get("queue", {})
    allrow.update({f: q[k] for k, f in QUEUE.items() if k in q})
    if "cswch" in s.get("process-and-context-switch", {}):
        allrow["cswch"] = s["process-and-context-switch"]["cswch"]
    for i in s.get("interrupts", []):
        if i.get("intr") == "sum":
            allrow["intr"] = i.get("all")
    return cpu


def _paging(s: dict[str, Any]) -> dict[str, Value]:
    row: dict[str, Value] = {}
    pg = s.get("paging", {})
    row.update({f: pg[f] for f in PAGING if f in pg})
    row.update({f: v for f, v in s.get("swap-pages", {}).items() if f in ("pswpin", "pswpout")})
    mem = s.get("memory", {})
    if "memused-percent" in mem:
        row["memused"] = _memused(mem)
    if "swpused-percent" in mem:
        has_swap = (mem.get("swpfree") or 0) + (mem.get("swpused") or 0) > 0
        row["swpused"] = mem["swpused-percent"] if has_swap else None
    psi = s.get("psi", {})
    row.update({f: psi[sect][k] for (sect, k), f in PSI.items() if k in psi.get(sect, {})})
    return row


def _memused(mem: dict[str, Any]) -> Value:
    """%memused as sysstat 12.7.8 computes it, (total - available) / total, whatever the
    sadf here computed: sysstat before 11.7.4 subtracts free memory only, 11.7.4 to 12.7.7
    free, buffers, cached and slab, so an SGA in shared memory without HugePages (counted in
    Cached) read as free.  sadf -j gives no total: it is the sum whose kbmemused matches
    sadf's own percentage best; sadf's figure stays where MemAvailable is missing."""
    pct, used, avail = (number(mem.get(k)) for k in ("memused-percent", "memused", "avail"))
    if not pct or used is None or not avail:
        return mem["memused-percent"]
    shown = used * 100.0 / pct  # the total, to sadf's two decimals
    rest = [number(mem.get(k)) for k in MEM_USED_BY]
    sums = [used + avail, used + (rest[0] or 0.0)]
    if all(r is not None for r in rest):
        sums.append(used + sum(r for r in rest if r is not None))
    total = min(sums, key=lambda t: abs(t - shown))
    return round(max(0.0, 100.0 * (total - avail) / total), 2)


def _disk(d: dict[str, Any]) -> dict[str, Value]:
    """sar -d's figures of one device in iostat -x's fields (see the module docstring)."""
    tps = number(d.get("tps")) or 0.0
    rkb, wkb, dkb = (number(d.get(k)) or 0.0 for k in ("rkB", "wkB", "dkB"))
    util = number(d.get("util-percent"))
    row: dict[str, Value] = {
        "rkb_s": rkb,
        "wkb_s": wkb,
        "aqu_sz": d.get("aqu-sz"),
        "util": util,
    }
    if tps <= 0:
        row.update(r_s=0.0, w_s=0.0)
        return row
    await_ = d.get("await")
    row["r_await"] = await_ if rkb > 0 else None
    row["w_await"] = await_ if wkb > 0 else None
    row["svctm"] = util * 10.0 / tps if util is not None else None
    size = d.get("areq-sz")
    if rkb > 0 and not wkb and not dkb:
        row.update(r_s=tps, w_s=0.0, rareq_sz=size)
    elif wkb > 0 and not rkb and not dkb:
        row.update(r_s=0.0, w_s=tps, wareq_sz=size)
    return row

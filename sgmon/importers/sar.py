"""`sgmon import sar FILE...`: sysstat daily data files (/var/log/sa/saDD), read by the real sadf.

Each file is read through ``sadf -j`` of the sysstat installed here, which computes sar's own
figures from the file's counters; a file written by another sysstat version (sadf says "Current
sysstat version cannot read the format of this file") is first converted with ``sadf -c`` into a
temporary file.  The figures land in the live collectors' fields and units:

- cpu: sar -u ALL -P ALL (``all``, ``cpuN``), -q ALL (run queue, load), -w (cswch), -I SUM;
- paging: sar -B, -W, -r (%memused), -S (%swpused), PSI avg10 (sysstat >= 12.5.1 files);
- disk: sar -d.  sar keeps one request count and one await per device, not iostat's read/write
  split, so the split is made only where the interval shows it: r/s and rareq-sz when the device
  only read (w/s and wareq-sz when it only wrote), and the one await stands for r_await where the
  device read and for w_await where it wrote.  svctm is %util / tps, the formula of sysstat before
  12.1.2 and of the live collector;
- netdev: sar -n DEV, EDEV; tcp: sar -n TCP, ETCP on the ``host`` row.

A figure with no live field is listed under ``(not imported)`` in meta.json with the reason.
Device names: the file keeps major:minor, and sadf names them through this machine's
/sys/dev/block.  For a file written on another host (its nodename is not this one's) that could
name a dynamic-major device (device-mapper, virtio, nvme) after this host's device of the same
number, so sadf reads it again in a mount namespace where /sys/dev/block is empty (root): it then
names the fixed majors (sd*, loop*...) and calls the rest devM-N, which ``--devices`` (a copy of
that host's /proc/diskstats) turns into the kernel names the live disk collector uses.
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sgmon.errors import UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import NOT_IMPORTED, Builder, add_host_options
from sgmon.model import Event, Rows, Value, number
from sgmon.regrid import is_gap

HELP = "sysstat data files (/var/log/sa/saDD) read through sadf -j"

SAR_OPTIONS = [
    "-u", "ALL", "-P", "ALL", "-q", "ALL", "-w", "-I", "SUM", "-B", "-W", "-r", "-S", "-d",
    "-n", "DEV,EDEV,TCP,ETCP",
]  # fmt: skip
"""The activities read (a file that lacks one simply has no such section)."""

OTHER_VERSION = "cannot read the format of this file"
TRUNCATED = "End of system activity file unexpected"
SADF_TIMEOUT = 120.0

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

PROVENANCE: dict[str, dict[str, str]] = {
    "cpu": {
        **{f: f"sadf -j: cpu-load.{f}" for f in CPU},
        **{f: f"sadf -j: queue.{k}" for k, f in QUEUE.items()},
        "cswch": "sadf -j: process-and-context-switch.cswch",
        "intr": "sadf -j: interrupts[sum].all",
    },
    "paging": {
        **{f: f"sadf -j: paging.{f}" for f in PAGING},
        "pgsteal": "sadf -j: paging.pgsteal (sadc < 12.7.9 can count it twice on kernels that "
        "have pgsteal_anon/file: sysstat issue 415)",
        "pswpin": "sadf -j: swap-pages.pswpin",
        "pswpout": "sadf -j: swap-pages.pswpout",
        "memused": "sadf -j: memory.memused-percent",
        "swpused": "sadf -j: memory.swpused-percent (empty without swap)",
        **{f: f"sadf -j: psi.{s}.{k}" for (s, k), f in PSI.items()},
    },
    "disk": {
        "rkb_s": "sadf -j: disk.rkB",
        "wkb_s": "sadf -j: disk.wkB",
        "aqu_sz": "sadf -j: disk.aqu-sz",
        "util": "sadf -j: disk.util-percent",
        "r_await": "sadf -j: disk.await, reads and writes together, where the device read",
        "w_await": "sadf -j: disk.await, reads and writes together, where the device wrote",
        "r_s": "sadf -j: disk.tps where the device only read in the interval",
        "w_s": "sadf -j: disk.tps where the device only wrote in the interval",
        "rareq_sz": "sadf -j: disk.areq-sz where the device only read in the interval",
        "wareq_sz": "sadf -j: disk.areq-sz where the device only wrote in the interval",
        "svctm": "computed: disk.util-percent * 10 / disk.tps (sysstat < 12.1.2's svctm)",
        "rrqm_s": "not imported: sar keeps no merge counts",
        "wrqm_s": "not imported: sar keeps no merge counts",
    },
    "netdev": {
        **{f: f"sadf -j: net-dev.{k}" for k, f in NET_DEV.items()},
        **{f: f"sadf -j: net-edev.{k}" for k, f in NET_EDEV.items()},
        "rx_overrun": "not imported: sar keeps no overrun count",
        "carrier_changes": "not imported: sar keeps carrier errors (txcarr), not changes",
    },
    "tcp": {
        **{f: f"sadf -j: {s}.{k} (host row)" for (s, k), f in (TCP | ETCP).items()},
        "timeouts": "not imported: sar keeps no TCPTimeouts",
        "lost_retransmit": "not imported: sar keeps no TCPLostRetransmit",
    },
    NOT_IMPORTED: {
        "process-and-context-switch.proc": "no live field (task creations per second)",
        "paging.vmeff-percent": "no live field",
        "disk.dkB": "no live field (discards)",
        "net-dev.rxcmp/txcmp/rxmcst": "no live field",
        "net-edev.coll/txcarr/rxfram": "no live field",
        "net-tcp.iseg/oseg": "no live field (segments per second)",
        "net-etcp.atmptf/estres/isegerr/orsts": "no live field",
        "per-socket tcp (ss)": "sar keeps host-wide TCP counters only",
    },
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """FILE..., --host, --role, --devices."""
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="saDD files")
    add_host_options(parser, "the nodename in the file")
    parser.add_argument(
        "--devices",
        type=Path,
        metavar="FILE",
        help="a copy of the host's /proc/diskstats (or lsblk -rno MAJ:MIN,KNAME): names the "
        "devices sadf knows only by number",
    )


def read(args: argparse.Namespace) -> Imported:
    """Run sadf on each file and map its records; a file that cannot be read is one note, a
    record or a figure of an unexpected shape is counted in one note per file."""
    names = _device_table(args.devices) if args.devices else {}
    files: list[tuple[Path, list[Host], bool]] = []
    notes: list[str] = []
    for path in args.files:
        got = _sadf_json(path, notes)
        if got is None:
            continue
        hosts = _hosts(path, got[0], names, notes)
        if hosts:
            files.append((path, hosts, got[1]))
    if not files:
        raise UsageError("; ".join(notes) or "no sar file given")
    every = (r for _, hosts, _ in files for h in hosts for r in h.records)
    b = Builder(_step(every) or 600.0)
    b.imp.notes.extend(notes)
    for path, hosts, truncated in files:
        for h in hosts:
            host = args.host or h.nodename or path.name
            _host(b, path, host, args.role, h, truncated)
            b.source(host, PROVENANCE)
            unnamed = {d for r in h.records for d in r.rows.get("disk", {}) if DEV_MN.match(d)}
            if unnamed:
                b.note(
                    f"{path}: {len(unnamed)} device(s) known only by number "
                    f"({_some(sorted(unnamed))}): --devices FILE, a copy of "
                    f"{h.nodename or 'the host'}'s /proc/diskstats, names them"
                )
    return b.imp


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


SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)
"""What reading a record of an unexpected shape raises (a text where sadf prints a number, a
list where it prints an object, a key missing)."""


def _hosts(path: Path, doc: object, names: dict[str, str], notes: list[str]) -> list[Host] | None:
    """The file's host sections, each record read into rows; None (and a note) when the JSON is
    not sadf's shape at all.  A record that cannot be read is skipped and a figure that is no
    number is left empty, each counted in one note for the file."""
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
    out: list[Host] = []
    bad: list[str] = []
    odd = 0
    for h, stats in raw:
        records = []
        for n, s in enumerate(stats, 1):
            try:
                ts = s["timestamp"]
                interval = float(ts["interval"]) if ts.get("interval") else None
                rows = _rows(s, names)
                record = Record(_when(ts), interval, rows)
            except SHAPE_ERRORS as e:
                bad.append(f"record {n} ({_why(e)})")
                continue
            odd += _numbers_only(record.rows)
            records.append(record)
        restarts = []
        for r in h.get("restarts", []) if isinstance(h.get("restarts"), list) else []:
            try:
                restarts.append(_when(r["boot"]))
            except SHAPE_ERRORS as e:
                bad.append(f"a restart ({_why(e)})")
        nodename = h.get("nodename")
        out.append(Host(nodename if isinstance(nodename, str) else "", records, sorted(restarts)))
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


def _device_table(path: Path) -> dict[str, str]:
    """``devM-N`` -> kernel name, from a copy of the host's /proc/diskstats (``M N name ...``)
    or ``lsblk -rno MAJ:MIN,KNAME`` (``M:N name``)."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
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


HIDE_SYSFS = 'mount -t tmpfs sgmon /sys/dev/block && exec sadf "$@"'
"""Run sadf where /sys/dev/block is empty, so that it names devices from the numbers alone
(sysstat.ioconf's fixed majors: sd*, loop*...) and devM-N otherwise, never after this host's
device that happens to have the same major:minor."""


def _sadf_json(path: Path, notes: list[str]) -> tuple[dict[str, Any], bool] | None:
    """The file's records as sadf -j prints them, converting another version's file first, and
    whether sadf met the file's end inside a record; None (and a note) when nothing in it is
    readable.  A file written on another host is read again with this host's devices hidden
    (see HIDE_SYSFS)."""
    if not path.is_file():
        notes.append(f"{path}: no such file")
        return None
    with tempfile.TemporaryDirectory(prefix="sgmon-sadf-") as tmp:
        src = path
        out, err, rc = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS])
        if rc != 0 and OTHER_VERSION in err:
            version = next((ln for ln in err.splitlines() if "sysstat version" in ln), "").strip()
            src = Path(tmp) / path.name
            with open(src, "wb") as f:
                c = subprocess.run(
                    ["sadf", "-c", str(path)],
                    stdout=f,
                    stderr=subprocess.PIPE,
                    env=_C_LOCALE,
                    timeout=SADF_TIMEOUT,
                    check=False,
                )
            if c.returncode != 0:
                why = _last_line(c.stderr.decode(errors="replace")) or f"exit {c.returncode}"
                notes.append(f"{path}: {version or 'another sysstat version'}; sadf -c: {why}")
                return None
            notes.append(f"{path}: {version}, converted with sadf -c to this sysstat's format")
            out, err, rc = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS])
        try:  # what sadf printed is kept whatever its exit status (a cut file ends early)
            doc: Any = json.loads(out)
        except ValueError as e:
            doc = _salvage(out)
            if doc is None:
                why = _last_line(err) or (f"JSON cut short ({e})" if out.strip() else "no JSON")
                notes.append(f"{path}: sadf: {why}")
                return None
            kept = len(doc["sysstat"]["hosts"][0]["statistics"])
            notes.append(f"{path}: sadf -j output cut short ({e}); the {kept} whole records kept")
            return doc, False
        try:
            hosts = doc["sysstat"]["hosts"]
            foreign = {h.get("nodename") for h in hosts} - {os.uname().nodename, None}
        except SHAPE_ERRORS:
            return doc, TRUNCATED in err  # _hosts says what is wrong with it
        if foreign:
            hidden = _run_sadf(["-j", str(src), "--", *SAR_OPTIONS], hide_sysfs=True)
            try:
                doc = json.loads(hidden[0])
            except ValueError:
                notes.append(
                    f"{path}: written on {', '.join(sorted(foreign))}: sadf names its devices "
                    "after this host's of the same major:minor (hiding them needs root), "
                    "check device-mapper and virtio names with sar -d there"
                )
    return doc, TRUNCATED in err


STATISTICS = '"statistics": ['


def _salvage(out: str) -> dict[str, Any] | None:
    """The whole records of a ``sadf -j`` output cut short (sadf killed, a disk full): the host
    header before ``"statistics": [`` and every record that decodes after it; None when not
    even the header is there."""
    at = out.find(STATISTICS)
    if at < 0:
        return None
    try:
        doc = json.loads(out[:at] + '"statistics": []}]}}')
        host = doc["sysstat"]["hosts"][0]
    except (ValueError, *SHAPE_ERRORS):
        return None
    decoder, i = json.JSONDecoder(), at + len(STATISTICS)
    while True:
        while i < len(out) and out[i] in " \t\r\n,":
            i += 1
        try:
            record, i = decoder.raw_decode(out, i)
        except ValueError:
            return doc
        host["statistics"].append(record)


_C_LOCALE = {**os.environ, "LC_ALL": "C"}


def _run_sadf(argv: list[str], hide_sysfs: bool = False) -> tuple[str, str, int]:
    cmd = ["sadf", *argv]
    if hide_sysfs:
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDE_SYSFS, "sh"]
        cmd += argv
    try:
        p = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            env=_C_LOCALE,
            timeout=SADF_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        if hide_sysfs:
            return "", "unshare not found", 127
        raise UsageError("sadf not found: install sysstat (it reads the sa files)") from None
    return p.stdout, p.stderr, p.returncode


def _some(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _step(records: Iterable[Record]) -> float | None:
    """The records' usual interval, None when none gives one: the upper median, as
    ``regrid.usual_step`` takes it (a step that occurred)."""
    steps = [r.interval for r in records if r.interval and r.interval > 0]
    return statistics.median_high(steps) if steps else None


def _when(ts: dict[str, Any]) -> float:
    """A sadf timestamp (UTC unless sadf was told -t) as epoch seconds."""
    st = time.strptime(f"{ts['date']} {ts['time']}", "%Y-%m-%d %H:%M:%S")
    return float(calendar.timegm(st) if ts.get("utc", 1) else time.mktime(st))


def _host(b: Builder, path: Path, host: str, role: str, h: Host, truncated: bool) -> None:
    """One host section of one file: a frame per record, restarts and gaps as events."""
    step = _step(h.records)
    prev: float | None = None
    for n, rec in enumerate(h.records, 1):
        t = rec.t
        dt = rec.interval or step or 0.0
        # A restart stamped in the second of the record before it came after that record (sadc
        # writes it later; the first record after a restart is an interval on): [prev, t).
        events = [
            Event(r, "sar", "restart", "", "LINUX RESTART: counters restart from 0")
            for r in h.restarts
            if (prev is None or r >= prev) and r < t
        ]
        restarted = bool(events)  # a restart in between already says why records stopped
        if prev is not None and is_gap(t - prev, step) and not restarted:
            events.append(
                Event(prev, "sar", "gap", "", f"no sar record for {t - prev:.0f} s in {path.name}")
            )
        if truncated and n == len(h.records):
            events.append(Event(t, "sar", "gap", "", f"{path.name} ends early: {TRUNCATED}"))
        b.sample(host, role, t, dt, rec.rows, events)
        prev = t
    if truncated:
        last = time.strftime("%H:%M:%S", time.gmtime(prev)) if prev else "its header"
        b.note(f"{path}: truncated after {last} UTC ({TRUNCATED}); {len(h.records)} records kept")


def _rows(s: dict[str, Any], names: dict[str, str]) -> dict[str, Rows]:
    """One sadf record -> rows of the live collectors (``names``: devM-N -> kernel name)."""
    out: dict[str, Rows] = {}
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
    for sect, names in (("net-dev", NET_DEV), ("net-edev", NET_EDEV)):
        for d in net.get(sect, []):
            ifaces.setdefault(d["iface"], {}).update({f: d[k] for k, f in names.items() if k in d})
    if ifaces:
        out["netdev"] = ifaces
    tcp = {f: net[sect][k] for (sect, k), f in (TCP | ETCP).items() if k in net.get(sect, {})}
    if tcp:
        out["tcp"] = {"host": tcp}
    return out


def _paging(s: dict[str, Any]) -> dict[str, Value]:
    row: dict[str, Value] = {}
    pg = s.get("paging", {})
    row.update({f: pg[f] for f in PAGING if f in pg})
    row.update({f: v for f, v in s.get("swap-pages", {}).items() if f in ("pswpin", "pswpout")})
    mem = s.get("memory", {})
    if "memused-percent" in mem:
        row["memused"] = mem["memused-percent"]
    if "swpused-percent" in mem:
        has_swap = (mem.get("swpfree") or 0) + (mem.get("swpused") or 0) > 0
        row["swpused"] = mem["swpused-percent"] if has_swap else None
    psi = s.get("psi", {})
    row.update({f: psi[sect][k] for (sect, k), f in PSI.items() if k in psi.get(sect, {})})
    return row


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

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
    """Run sadf on each file and map its records; a file that cannot be read is one note."""
    names = _device_table(args.devices) if args.devices else {}
    docs: list[tuple[Path, dict[str, Any], bool]] = []
    notes: list[str] = []
    for path in args.files:
        got = _sadf_json(path, notes)
        if got is not None:
            docs.append((path, *got))
    if not docs:
        raise UsageError("; ".join(notes) or "no sar file given")
    every = (
        s for _, doc, _ in docs for h in doc["sysstat"]["hosts"] for s in h.get("statistics", [])
    )
    b = Builder(_step(every) or 600.0)
    b.imp.notes.extend(notes)
    for path, doc, truncated in docs:
        for h in doc["sysstat"]["hosts"]:
            host = args.host or h.get("nodename") or path.name
            for s in h.get("statistics", []):
                for d in s.get("disk", []):
                    d["disk-device"] = names.get(d["disk-device"], d["disk-device"])
            _host(b, path, host, args.role, h, truncated)
            b.source(host, PROVENANCE)
            unnamed = {d["disk-device"] for s in h.get("statistics", []) for d in s.get("disk", [])}
            unnamed = {n for n in unnamed if DEV_MN.match(n)}
            if unnamed:
                b.note(
                    f"{path}: {len(unnamed)} device(s) known only by number "
                    f"({_some(sorted(unnamed))}): --devices FILE, a copy of "
                    f"{h.get('nodename') or 'the host'}'s /proc/diskstats, names them"
                )
    return b.imp


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
            doc: dict[str, Any] = json.loads(out)
            hosts = doc["sysstat"]["hosts"]
        except (ValueError, KeyError, TypeError):
            notes.append(f"{path}: sadf: {_last_line(err) or f'exit {rc}, no JSON'}")
            return None
        foreign = {h.get("nodename") for h in hosts} - {os.uname().nodename, None}
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


def _step(stats: Iterable[dict[str, Any]]) -> float | None:
    """The records' usual interval, None when none gives one: the upper median, as
    ``regrid.usual_step`` takes it (a step that occurred)."""
    steps = [i for s in stats if (i := float(s["timestamp"].get("interval") or 0)) > 0]
    return statistics.median_high(steps) if steps else None


def _when(ts: dict[str, Any]) -> float:
    """A sadf timestamp (UTC unless sadf was told -t) as epoch seconds."""
    st = time.strptime(f"{ts['date']} {ts['time']}", "%Y-%m-%d %H:%M:%S")
    return float(calendar.timegm(st) if ts.get("utc", 1) else time.mktime(st))


def _host(b: Builder, path: Path, host: str, role: str, h: dict[str, Any], truncated: bool) -> None:
    """One host section of one file: a frame per record, restarts and gaps as events."""
    stats = h.get("statistics", [])
    restarts = sorted(_when(r["boot"]) for r in h.get("restarts", []) if "boot" in r)
    step = _step(stats)
    prev: float | None = None
    for n, s in enumerate(stats, 1):
        t = _when(s["timestamp"])
        dt = float(s["timestamp"].get("interval") or step or 0.0)
        # A restart stamped in the second of the record before it came after that record (sadc
        # writes it later; the first record after a restart is an interval on): [prev, t).
        events = [
            Event(r, "sar", "restart", "", "LINUX RESTART: counters restart from 0")
            for r in restarts
            if (prev is None or r >= prev) and r < t
        ]
        restarted = bool(events)  # a restart in between already says why records stopped
        if prev is not None and is_gap(t - prev, step) and not restarted:
            events.append(
                Event(prev, "sar", "gap", "", f"no sar record for {t - prev:.0f} s in {path.name}")
            )
        if truncated and n == len(stats):
            events.append(Event(t, "sar", "gap", "", f"{path.name} ends early: {TRUNCATED}"))
        b.sample(host, role, t, dt, _rows(s), events)
        prev = t
    if truncated:
        last = time.strftime("%H:%M:%S", time.gmtime(prev)) if prev else "its header"
        b.note(f"{path}: truncated after {last} UTC ({TRUNCATED}); {len(stats)} records kept")


def _rows(s: dict[str, Any]) -> dict[str, Rows]:
    """One sadf record -> rows of the live collectors."""
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
    disks = {d["disk-device"]: _disk(d) for d in s.get("disk", [])}
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

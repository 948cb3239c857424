"""`sgmon import sar FILE...`: sysstat daily data files (/var/log/sa/saDD), read by the real sadf.

Each file is read through ``sadf -j`` of the sysstat installed here, which computes sar's own
figures from the file's counters; a file written by another sysstat version (sadf says "Current
sysstat version cannot read the format of this file") is first converted with ``sadf -c`` into a
temporary file.  The figures land in the live collectors' fields and units:

- cpu: sar -u ALL -P ALL (``all``, ``cpuN``), -q ALL (run queue, load), -w (cswch), -I SUM;
- paging: sar -B, -W, -r ALL (%memused as sysstat 12.7.8 computes it: total - available), -S
  (%swpused), PSI avg10 (sysstat >= 12.5.1 files);
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
import statistics
import time
from collections.abc import Iterable
from pathlib import Path

from sgmon.errors import UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import NOT_IMPORTED, Builder, add_host_options
from sgmon.importers.sar.records import (
    CPU,
    DEV_MN,
    ETCP,
    NET_DEV,
    NET_EDEV,
    PAGING,
    PSI,
    QUEUE,
    TCP,
    Host,
    Record,
    device_table,
    host_sections,
)
from sgmon.importers.sar.sadf import SAR_OPTIONS as SAR_OPTIONS  # where callers find it
from sgmon.importers.sar.sadf import TRUNCATED, sadf_json
from sgmon.model import Event
from sgmon.readers.deadline import Deadline, files_within
from sgmon.regrid import is_gap

HELP = "sysstat data files (/var/log/sa/saDD) read through sadf -j"

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
        "memused": "computed: (total - memory.avail) / total, sysstat 12.7.8's %memused "
        "(total: memory.memused plus what sadf's version left out of it)",
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
        "retrans_segs": "sadf -j: net-etcp.retrans, or net-etcp.retrseg (sysstat >= 12.7.6)",
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
    names = device_table(args.devices) if args.devices else {}
    notes: list[str] = []
    files = _files(args.files, names, notes, getattr(args, "deadline", None))
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
            _unnamed(b, path, h)
    return b.imp


def _files(
    paths: list[Path], names: dict[str, str], notes: list[str], deadline: Deadline | None
) -> list[tuple[Path, list[Host], bool]]:
    """Each readable file's host sections, and whether sadf met its end inside a record;
    the files until ``deadline``."""
    files: list[tuple[Path, list[Host], bool]] = []
    for path in files_within(deadline, paths, notes):
        got = sadf_json(path, notes)
        if got is None:
            continue
        found = host_sections(path, got[0], names, notes)
        if found:
            files.append((path, found, got[1]))
    return files


def _unnamed(b: Builder, path: Path, h: Host) -> None:
    """A note of the devices of ``h`` that sadf could name only by number."""
    unnamed = {d for r in h.records for d in r.rows.get("disk", {}) if DEV_MN.match(d)}
    if unnamed:
        b.note(
            f"{path}: {len(unnamed)} device(s) known only by number "
            f"({_some(sorted(unnamed))}): --devices FILE, a copy of "
            f"{h.nodename or 'the host'}'s /proc/diskstats, names them"
        )


def _some(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "")


def _step(records: Iterable[Record]) -> float | None:
    """The records' usual interval, None when none gives one: the upper median, as
    ``regrid.usual_step`` takes it (a step that occurred)."""
    steps = [r.interval for r in records if r.interval and r.interval > 0]
    return statistics.median_high(steps) if steps else None


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
        if prev is not None and is_gap(t - prev, step, stamped_to=1.0) and not restarted:
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

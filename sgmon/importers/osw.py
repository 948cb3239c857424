"""`sgmon import osw DIR`: an OSWatcher (oswbb) archive, on the live collectors' fields.

OSWatcher runs each tool every snapshot (30 s by default) and appends its output, after a
``zzz ***<date>`` line, to ``<tool dir>/<host>_<tool>_<yy.mm.dd.hh00>.dat`` (gzip'd or bzip2'd
once the hour is over).  Every report is imported at its own time, in each layout OSWatcher
has written:

- classic (oswbb 4 to 8, and the AHF-bundled releases, whose files start with a line of advice
  and ``Linux OSWbb v22.1.0AHF <host>``): one ``zzz`` per snapshot, one report per tool after it;
- ``iostat -t``: the report carries its own stamp (sysstat 7's ``Time: 11:01:52``, later ones'
  locale date and time, or ``S_TIME_FORMAT=ISO``'s), which is its time;
- Exadata storage cells: one ``zzz ***<date> Sample interval: 5 secconds`` line, then the whole
  hour of one ``iostat -t -x 5 720`` run, each report headed ``Time: HH:MM:SS``; the run's first
  report (averages since boot, after the iostat banner) is skipped with a note.  A report's time
  of day is read after the ``zzz`` line's, so a run that passes midnight goes on into the next
  day.  A block whose reports span at most 5 s (``iostat -xk 1 3``'s last third, ``mpstat -P ALL
  1 2``) and states no sample interval stands for one snapshot: its last report is taken.

The Linux commands and what is taken from each report:

- oswiostat, ``iostat -xk 1 3`` of which OSWatcher keeps the last third (the last 1 s report):
  disk, columns found by their header names, so sysstat < 9.1's ``avgqu-sz``/``await``/``svctm``
  (and ``rsec/s`` without ``-k``) and today's ``aqu-sz``/``r_await``/``w_await`` both read; an
  old single ``await`` stands for r_await where the device read and w_await where it wrote, as
  the sar importer does;
- oswvmstat, ``vmstat 1 3``: the last line (the last second): run queue ``r``, ``b``, ``in``,
  ``cs`` on cpu ``all``; ``bi``/``bo`` (kB/s, the kernel's pgpgin/pgpgout) and ``si``/``so``
  (kB/s, read as 4 kB pages) on paging;
- oswmpstat, ``mpstat -P ALL 1 2``: the last 1 s report, per CPU;
- oswnetstat, ``netstat -a -i -n`` and ``netstat -s`` (or, in the AHF releases, ``ip -s link``
  and nstat, whose counters are not read: see PROVENANCE): cumulative counters, so rates over
  the time between two blocks (the whole snapshot step, unlike the 1 s figures above);
- oswtop, ``top -b``: the load averages, ``%Cpu(s)`` (where mpstat gave no figure), ``Tasks``
  and the swap line; oswps, ``ps -aeo ...``: pid, state and wchan of the
  commit-path background processes (``ora_lgwr_SID``...) under the procs collector's names.

A snapshot's blocks of all tools (started together, stamped within a second or two) make one
frame.  The ``zzz`` dates carry a zone abbreviation, which does not name a zone: UTC/GMT are
read as such, others in this machine's zone unless ``--tz`` names the host's.  A block that
does not parse is one note per file; a file cut in the middle of its last block (a torn line,
a truncated gzip stream) loses that block only, with one note.
"""

from __future__ import annotations

import argparse
import bz2
import calendar
import itertools
import re
import statistics
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from collectors.procs import BACKGROUND
from sgmon.errors import UsageError
from sgmon.importers import Imported
from sgmon.importers.frames import NOT_IMPORTED, Builder, add_host_options
from sgmon.model import Event, Rows, Value
from sgmon.rates import counter_rate
from sgmon.readers.regular import read_regular
from sgmon.regrid import is_gap

HELP = "OSWatcher archives (oswiostat, oswvmstat, oswmpstat, oswnetstat, oswtop, oswps)"

ZZZ = re.compile(r"^zzz ?\**(.*)$")
DATE = re.compile(r"\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}:\d\d:\d\d)\s+(?:(\S+)\s+)?(\d{4})")
INTERVAL = re.compile(r"Sample interval:\s*(\d+(?:\.\d+)?)\s*sec", re.I)
"""An Exadata cell's ``zzz`` line names the step of the run that follows (sic ``secconds``)."""
SUBSTAMP = re.compile(
    r"^(?:Time: |\d\d/\d\d/\d{2,4} |\d{4}-\d\d-\d\dT)"
    r"(\d\d):(\d\d):(\d\d)(?:[+-]\d{4}|Z)?(?:\s+([AP]M))?$"
)
"""``iostat -t``'s report stamp: sysstat < 8's ``Time: 11:01:52``, later ones' locale date and
time (``02/29/12 11:01:52``, ``02/29/2012 11:01:52 AM``), or ``S_TIME_FORMAT=ISO``'s."""
BANNER = re.compile(r"^\w+ \S+ \([^)]*\)\s")
"""The first line of a sysstat tool's run (``Linux 2.6.18-194.el5 (cel01) 02/29/12``): the
report after it holds the averages since boot."""
CLOCK = re.compile(r"^(\d\d):(\d\d):(\d\d)(?:\s+([AP]M))?\s")
"""An mpstat report header's time of day (``11:01:57 AM  CPU  %usr ...``)."""
TOP_HEAD = re.compile(r"^top - (\d\d):(\d\d):(\d\d) ")
LOAD = re.compile(r"load average: ([\d.,]+),? ([\d.,]+),? ([\d.,]+)")
TOP_PCT = re.compile(r"([\d.]+)\s*%?\s*(us|sy|ni|id|wa|hi|si|st)\b")
TOP_COUNT = re.compile(r"([\d.]+)[kmgt]?\s+(total|running|used)\b")
TOP_CPU = {
    "us": "usr",
    "sy": "sys",
    "ni": "nice",
    "id": "idle",
    "wa": "iowait",
    "hi": "irq",
    "si": "soft",
    "st": "steal",
}
"""top's ``%Cpu(s)`` shares -> cpu fields (taken where mpstat gave none)."""
FILE = re.compile(r"^(?P<host>.+)_(?P<tool>[a-z]+)_\d\d\.\d\d\.\d\d\.\d{4}\.dat(\.gz|\.bz2)?$")
SAME_SNAPSHOT = 5.0
"""Blocks of different tools stamped within this many seconds belong to one snapshot (a tool's
second block starts the next one)."""
PAGE_KB = 4.0
"""vmstat's si/so are kB/s; the live pswpin/pswpout are pages/s (4 kB pages on x86_64/x86)."""

IOSTAT = {
    "r/s": "r_s",
    "w/s": "w_s",
    "rkB/s": "rkb_s",
    "wkB/s": "wkb_s",
    "rrqm/s": "rrqm_s",
    "wrqm/s": "wrqm_s",
    "r_await": "r_await",
    "w_await": "w_await",
    "aqu-sz": "aqu_sz",
    "avgqu-sz": "aqu_sz",
    "rareq-sz": "rareq_sz",
    "wareq-sz": "wareq_sz",
    "%util": "util",
    "svctm": "svctm",
}
MPSTAT = {
    "%usr": "usr",
    "%user": "usr",
    "%nice": "nice",
    "%sys": "sys",
    "%system": "sys",
    "%iowait": "iowait",
    "%irq": "irq",
    "%soft": "soft",
    "%steal": "steal",
    "%guest": "guest",
    "%gnice": "gnice",
    "%idle": "idle",
}
VMSTAT_CPU = {"r": "runq_sz", "b": "blocked", "in": "intr", "cs": "cswch"}
NETSTAT_I = {
    "RX-OK": "rx_pkt",
    "TX-OK": "tx_pkt",
    "RX-ERR": "rx_err",
    "TX-ERR": "tx_err",
    "RX-DRP": "rx_drop",
    "TX-DRP": "tx_drop",
    "RX-OVR": "rx_fifo",
    "TX-OVR": "tx_fifo",
}
IP_LINK = re.compile(r"^\d+:\s+([^:@\s]+)(?:@\S+)?:\s+<")
"""An ``ip -s link`` interface line: ``3: eth0: <BROADCAST,...> mtu 1500 ...`` (``veth0@if2``)."""
IP_S = {
    ("RX:", "bytes"): "rx_kb",
    ("RX:", "packets"): "rx_pkt",
    ("RX:", "errors"): "rx_err",
    ("RX:", "dropped"): "rx_drop",
    ("RX:", "overrun"): "rx_overrun",
    ("TX:", "bytes"): "tx_kb",
    ("TX:", "packets"): "tx_pkt",
    ("TX:", "errors"): "tx_err",
    ("TX:", "dropped"): "tx_drop",
}
"""``ip -s link``'s RX:/TX: columns (by header name: iproute2 prints ``overrun`` or, since
5.x, ``missed`` there) -> netdev fields; bytes are stored as kB, as the live collector's."""
NETSTAT_S = (  # (section, line pattern) -> tcp host field; old and new netstat wordings
    ("Tcp:", re.compile(r"^(\d+) active connection"), "active_opens"),
    ("Tcp:", re.compile(r"^(\d+) passive connection"), "passive_opens"),
    ("Tcp:", re.compile(r"^(\d+) segments retransmit"), "retrans_segs"),
    ("TcpExt:", re.compile(r"^(?:TCPTimeouts: (\d+)|(\d+) other TCP timeouts)"), "timeouts"),
    ("TcpExt:", re.compile(r"^TCPLostRetransmit: (\d+)"), "lost_retransmit"),
)

PROVENANCE: dict[str, dict[str, str]] = {
    "disk": {
        **{f: f"oswiostat: iostat -xk {k}, last 1 s report" for k, f in IOSTAT.items()},
        "r_await": "oswiostat: iostat r_await, or the old await where the device read",
        "w_await": "oswiostat: iostat w_await, or the old await where the device wrote",
    },
    "cpu": {
        **{f: f"oswmpstat: mpstat -P ALL {k}, last 1 s report" for k, f in MPSTAT.items()},
        **{f: f"oswvmstat: vmstat {k}, last line (1 s)" for k, f in VMSTAT_CPU.items()},
        "load1": "oswtop: top load average (1 min)",
        "load5": "oswtop: top load average (5 min)",
        "load15": "oswtop: top load average (15 min)",
        "plist_sz": "oswtop: top Tasks total (processes; sar -q counts threads)",
        **{f: f"oswtop: top %Cpu(s) {k} where oswmpstat has none" for k, f in TOP_CPU.items()},
        "runq_sz": "oswvmstat: vmstat r, last line (1 s); where none, oswtop: top Tasks running",
    },
    "paging": {
        "pgpgin": "oswvmstat: vmstat bi (kB/s), last line",
        "pgpgout": "oswvmstat: vmstat bo (kB/s), last line",
        "pswpin": f"oswvmstat: vmstat si (kB/s) / {PAGE_KB:g} kB pages",
        "pswpout": f"oswvmstat: vmstat so (kB/s) / {PAGE_KB:g} kB pages",
        "swpused": "oswtop: top Swap used / total",
    },
    "netdev": {
        **{f: f"oswnetstat: netstat -i {k}, rate between snapshots" for k, f in NETSTAT_I.items()},
        **{
            f: f"oswnetstat: ip -s link {d} {k} (AHF releases), rate between snapshots"
            for (d, k), f in IP_S.items()
        },
        "rx_kb": "oswnetstat: ip -s link RX bytes / 1024 where collected (netstat -i has none)",
        "tx_kb": "oswnetstat: ip -s link TX bytes / 1024 where collected (netstat -i has none)",
    },
    "tcp": {f: f"oswnetstat: netstat -s {s}, rate between snapshots" for s, _, f in NETSTAT_S},
    "procs": {
        "pid": "oswps: ps PID",
        "state": "oswps: ps S",
        "wchan": "oswps: ps WCHAN (cut to 6 characters by ps)",
        "cpu": "not imported: ps %CPU is the lifetime average",
    },
    NOT_IMPORTED: {
        "iostat avg-cpu": "mpstat's per-CPU figures are taken instead",
        "vmstat us/sy/id/wa/st, memory": "mpstat's figures are taken; no live memory-kB field",
        "top process list": "no live field (the procs collector follows Oracle processes)",
        "oswmeminfo, oswslabinfo, oswprvtnet": "not read",
        "oswnetstat nstat (#kernel)": "not read: its counters are absolute with -a, else since "
        "nstat's last run, and the output does not say which",
    },
}


@dataclass
class Block:
    """One report of a tool: its time, tool, and the collector rows parsed from it.

    A ``zzz`` block holds one report (the classic layout) or a whole run of them (Exadata
    cells: one ``zzz`` then an hour of ``iostat -t -x 5 720``); each report's own time comes
    from its sub-stamp (``tod``, seconds after midnight of the wall clock the ``zzz`` line is
    in) or, for a tool that prints none, its place in the run (``offset`` seconds after the
    ``zzz`` line)."""

    t: float
    tool: str
    rows: dict[str, Rows] = field(default_factory=dict)
    counters: dict[str, dict[str, float]] = field(default_factory=dict)
    """netstat's cumulative counters (instance -> field -> count), turned into rates later."""
    tod: float | None = None
    offset: float = 0.0
    since_boot: bool = False
    """The first report of a run whose tool's banner is in the block: averages since boot."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """DIR, --host, --role, --tz."""
    parser.add_argument("archive", type=Path, metavar="DIR", help="OSWatcher archive directory")
    add_host_options(parser, "from the file names")
    parser.add_argument(
        "--tz",
        help="the host's time zone, e.g. Europe/Berlin (default: UTC/GMT stamps as such, "
        "other zone names in this machine's zone)",
    )


def read(args: argparse.Namespace) -> Imported:
    """Parse every tool's files, group the blocks into snapshots, one frame each."""
    root = _root(args.archive)
    zone = _zone(args.tz)
    notes: list[str] = []
    abbrs: set[str] = set()
    by_host: dict[str, list[Block]] = {}
    booted: list[Path] = []
    unread: dict[str, int] = {}
    for path in sorted(root.glob("osw*/*")):
        m = FILE.match(path.name)
        parse = PARSERS.get(m.group("tool")) if m else None
        if m is None or parse is None:
            if path.is_file():
                unread[path.parent.name] = unread.get(path.parent.name, 0) + 1
            continue
        host = m.group("host")
        by_host.setdefault(host, []).extend(_blocks(path, parse, zone, abbrs, notes, booted))
    if not by_host:
        raise UsageError(f"{root}: no OSWatcher files (osw*/<host>_<tool>_<yy.mm.dd.hhmm>.dat)")
    if unread:
        said = ", ".join(f"{d} ({n} file(s))" for d, n in sorted(unread.items()))
        notes.append(f"{root}: not read: {said}; no live field takes their figures")
    if args.host and len(by_host) > 1:
        raise UsageError(f"{root} holds several hosts ({', '.join(by_host)}); leave out --host")
    if booted:
        notes.append(
            f"{booted[0]}{f' and {len(booted) - 1} more file(s)' if len(booted) > 1 else ''}: "
            "the first report of each continuous run skipped (averages since boot, not over "
            "the interval)"
        )
    local = set(time.tzname)
    odd = abbrs - {"UTC", "GMT", "Z"} - local
    if odd and zone is None:
        notes.append(
            f"{root}: dates in {', '.join(sorted(odd))} read in this machine's zone "
            f"({'/'.join(sorted(local))}); give --tz ZONE if the host's differs"
        )
    snapshots = {h: _snapshots(blocks, notes, h) for h, blocks in by_host.items()}
    steps = [
        later - t
        for groups in snapshots.values()
        for t, later in itertools.pairwise(g[0] for g in groups)
    ]
    b = Builder(statistics.median_high(steps) if steps else 30.0)  # as regrid.usual_step
    b.imp.notes.extend(notes)
    for host, groups in snapshots.items():
        name = args.host or host
        prev: float | None = None
        for t, blocks in groups:
            rows: dict[str, Rows] = {}
            for blk in sorted(blocks, key=lambda k: k.tool != "top"):  # top only fills gaps
                for collector, inst_rows in blk.rows.items():
                    for inst, row in inst_rows.items():
                        mine = rows.setdefault(collector, {}).setdefault(inst, {})
                        mine.update(
                            {k: v for k, v in row.items() if v is not None or k not in mine}
                        )
            dt = t - prev if prev is not None else b.imp.interval
            events = []
            if prev is not None and is_gap(dt, b.imp.interval):
                text = f"no OSWatcher snapshot for {dt:.0f} s"
                events.append(Event(prev, "osw", "gap", "", text))
            b.sample(name, args.role, t, dt, rows, events)
            prev = t
        b.source(name, PROVENANCE)
    return b.imp


def _root(path: Path) -> Path:
    """The directory holding the osw* folders: DIR itself, or DIR/archive (the oswbb home)."""
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    if not any(path.glob("osw*/")) and (path / "archive").is_dir():
        return path / "archive"
    return path


def _zone(name: str | None) -> ZoneInfo | None:
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--tz {name}: unknown time zone; use e.g. UTC or Europe/Berlin") from None


def _text(path: Path, notes: list[str]) -> str:
    """The file's text; a compressed stream cut short gives what it held, with a note."""
    try:
        raw = read_regular(path)  # a FIFO among the files is refused, not waited on
    except OSError as e:
        notes.append(f"{path}: unreadable ({e.strerror})")
        return ""
    if path.suffix not in (".gz", ".bz2"):
        return raw.decode("utf-8", "replace")
    data, whole = bytearray(), False
    try:
        while raw:  # a file may hold several streams (gzip members, bzip2 streams)
            d = zlib.decompressobj(wbits=31) if path.suffix == ".gz" else bz2.BZ2Decompressor()
            data += d.decompress(raw)
            whole, raw = d.eof, d.unused_data
            if not whole:
                break
    except (zlib.error, OSError, ValueError) as e:
        notes.append(f"{path}: not a readable {path.suffix[1:]} file ({e})")
        return ""
    text = data.decode("utf-8", "replace")
    if whole:
        return text
    notes.append(f"{path}: compressed stream cut short; its last report dropped, the rest kept")
    return text[: text.rfind("\n") + 1]  # whole lines: the last report goes in _blocks


def _blocks(
    path: Path,
    parse: Callable[[list[str], float | None], list[Block]],
    zone: ZoneInfo | None,
    abbrs: set[str],
    notes: list[str],
    booted: list[Path],
) -> Iterator[Block]:
    """The file's reports, each at its own time.  A file cut short (a torn last line, a cut
    compressed stream) loses the last report of its last block, which the cut may have gone
    through (a classic block holds one report; an Exadata cell's, an hour of them), with one
    note; other unparsable blocks are counted in one note, and a file whose continuous run
    began with a since-boot report (skipped) goes to ``booted``."""
    before = len(notes)
    text = _text(path, notes)
    cut = len(notes) > before
    torn = bool(text) and not text.endswith("\n") and not cut
    chunks = _split(text)
    bad: list[str] = []
    boot = 0
    for i, (stamp, lines) in enumerate(chunks):
        last = i == len(chunks) - 1
        when = _when(stamp, zone, abbrs)
        step = _sample_interval(stamp)
        reports = parse(lines[:-1] if last and torn else lines, step) if when is not None else []
        if last and (torn or cut):
            reports = reports[:-1]
            if torn:
                what = "its last report dropped" if reports else "dropped"
                notes.append(f"{path}: last block ({stamp}) cut mid-line; {what}, the rest kept")
            if not reports:
                break
        if when is None or not reports:
            if last and not cut:
                notes.append(f"{path}: last block ({stamp}) incomplete; dropped, the rest kept")
            else:
                bad.append(stamp)
            continue
        t0, tod0 = when
        kept = [r for r in reports if not r.since_boot] or reports[-1:]
        at = [_at(r, t0, tod0) for r in kept]
        if len(kept) > 1 and step is None and max(at) - min(at) <= SAME_SNAPSHOT:
            kept, at = kept[-1:], at[-1:]  # `tool 1 3`: the last 1 s report stands for the snapshot
        boot += sum(r.since_boot for r in reports) if not kept[0].since_boot else 0
        for r, t in zip(kept, at, strict=True):
            r.t = t
            yield r
    if bad:
        notes.append(f"{path}: {len(bad)} block(s) not readable, first at {bad[0]!r}; skipped")
    if boot:
        booted.append(path)


def _at(r: Block, t0: float, tod0: float) -> float:
    """A report's epoch time: its sub-stamp's time of day after the ``zzz`` line's (a run
    that passes midnight goes on into the next day), else its place in the run."""
    if r.tod is None:
        return t0 + r.offset
    return t0 + (r.tod - tod0) % 86400


def _split(text: str) -> list[tuple[str, list[str]]]:
    """``zzz`` blocks: (the date text, the lines up to the next one)."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = ZZZ.match(line)
        if m:
            out.append((m.group(1).strip(), []))
        elif out:
            out[-1][1].append(line)
    return out


def _when(stamp: str, zone: ZoneInfo | None, abbrs: set[str]) -> tuple[float, float] | None:
    """``Mon Nov 24 11:00:05 UTC 2026`` -> (epoch seconds, seconds after midnight on the
    host's clock); see the module docstring on zones."""
    m = DATE.search(stamp)
    if not m:
        return None
    mon, day, hms, abbr, year = m.groups()
    try:
        st = time.strptime(f"{year} {mon} {day} {hms}", "%Y %b %d %H:%M:%S")
    except ValueError:
        return None
    if abbr:
        abbrs.add(abbr)
    tod = st.tm_hour * 3600.0 + st.tm_min * 60 + st.tm_sec
    if zone is not None:
        return datetime(*st[:6], tzinfo=zone).timestamp(), tod
    if abbr in ("UTC", "GMT", "Z"):
        return float(calendar.timegm(st)), tod
    return time.mktime(st), tod


def _sample_interval(stamp: str) -> float | None:
    """The step a continuous run's ``zzz`` line states (``Sample interval: 5 secconds``)."""
    m = INTERVAL.search(stamp)
    return float(m.group(1)) if m else None


def _tod(line: str) -> float | None:
    """A report's sub-stamp (``Time: 11:01:52``, ``02/29/12 11:01:52 AM``,
    ``2012-02-29T11:01:52-0500``) -> seconds after midnight; None for other lines."""
    m = SUBSTAMP.match(line.strip())
    return _clock(*m.groups()) if m else None


def _clock(h: str, mi: str, sec: str, ampm: str | None) -> float:
    hour = int(h) % 12 + (12 if ampm == "PM" else 0) if ampm else int(h)
    return hour * 3600.0 + int(mi) * 60 + int(sec)


def _num(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def _iostat(lines: list[str], step: float | None = None) -> list[Block]:
    """Every ``Device`` table of the block (iostat -x, any sysstat version), each at its
    sub-stamp's time (``iostat -t``) or its place in the run; a report cut short ends the
    block there."""
    out: list[Block] = []
    tod: float | None = None
    banner = False
    cols: list[str] = []
    disks: Rows = {}

    def close() -> None:
        if disks:
            r = Block(0.0, "iostat", {"disk": dict(disks)}, tod=tod)
            r.since_boot = banner and not out
            r.offset = (step or 0.0) * len(out)
            out.append(r)
        disks.clear()

    for ln in lines:
        parts = ln.split()
        if BANNER.match(ln):
            close()
            banner, cols = True, []
        elif (stamp := _tod(ln)) is not None:
            close()
            tod, cols = stamp, []
        elif ln.startswith("Device"):
            close()
            cols = [c.rstrip(":") for c in parts]
        elif not parts:
            close()
            cols = []
        elif cols:
            if len(parts) != len(cols):
                disks.clear()  # a row cut short: the report is lost
                break
            disks[parts[0]] = _disk(dict(zip(cols, parts, strict=True)))
    close()
    return out


def _disk(d: dict[str, str]) -> dict[str, Value]:
    """One ``iostat -x`` device row by its column names, on the disk collector's fields."""
    row: dict[str, Value] = {f: _num(d[k]) for k, f in IOSTAT.items() if k in d}
    if "rkB/s" not in d and "rsec/s" in d:  # iostat -x without -k
        row["rkb_s"] = (_num(d["rsec/s"]) or 0.0) / 2
        row["wkb_s"] = (_num(d.get("wsec/s", "")) or 0.0) / 2
    reads, writes = row.get("r_s") or 0.0, row.get("w_s") or 0.0
    if "await" in d and "r_await" not in d:
        row["r_await"] = row["w_await"] = _num(d["await"])
    for f, n in (("r_await", reads), ("rareq_sz", reads), ("w_await", writes)):
        if not n:
            row[f] = None  # an average over no requests, as the live collector has it
    if not writes:
        row["wareq_sz"] = None
    if not reads and not writes:
        row["svctm"] = None
    return row


def _vmstat(lines: list[str], step: float | None = None) -> list[Block]:
    """``vmstat 1 3``'s last line (the last second), by the column names; in a continuous
    run (``Sample interval`` on the ``zzz`` line) every line but the first (since boot), each
    at its place in the run."""
    cols: list[str] = []
    data: list[list[str]] = []
    for ln in lines:
        parts = ln.split()
        if parts[:2] == ["r", "b"]:
            cols = parts
        elif cols and parts and all(_num(p) is not None for p in parts):
            if len(parts) != len(cols):
                break  # a line cut short
            data.append(parts)
    if not data:
        return []
    out: list[Block] = []
    for i, values in enumerate(data if step else data[-1:]):
        d = {k: _num(v) for k, v in zip(cols, values, strict=True)}
        cpu: dict[str, Value] = {f: d[k] for k, f in VMSTAT_CPU.items() if k in d}
        paging: dict[str, Value] = {"pgpgin": d.get("bi"), "pgpgout": d.get("bo")}
        for k, f in (("si", "pswpin"), ("so", "pswpout")):
            v = d.get(k)
            paging[f] = v / PAGE_KB if v is not None else None
        blk = Block(0.0, "vmstat", {"cpu": {"all": cpu}, "paging": {"all": paging}})
        blk.offset, blk.since_boot = (step or 0.0) * i, bool(step) and i == 0
        out.append(blk)
    return out


def _mpstat(lines: list[str], step: float | None = None) -> list[Block]:
    """Every interval report of ``mpstat -P ALL`` (not its Average lines), each at the time
    its header line carries; a report cut short ends the block there."""
    out: list[Block] = []
    cols: list[str] = []
    cpus: Rows = {}
    tod: float | None = None

    def close() -> None:
        if "all" in cpus:
            out.append(Block(0.0, "mpstat", {"cpu": dict(cpus)}, tod=tod))
        cpus.clear()

    for ln in lines:
        parts = ln.split()
        if "CPU" in parts and not ln.startswith("Average"):
            close()
            cols = parts
            m = CLOCK.match(ln)
            tod = _clock(*m.groups()) if m else None
        elif not parts or parts[0].startswith("Average"):
            close()
            cols = []
        elif cols:
            if len(parts) != len(cols):
                cpus.clear()
                break
            d = dict(zip(cols, parts, strict=True))
            inst = "all" if d["CPU"] == "all" else f"cpu{d['CPU']}"
            cpus[inst] = {f: _num(d[k]) for k, f in MPSTAT.items() if k in d}
    close()
    return out


def _ip_link(lines: list[str]) -> dict[str, dict[str, float]]:
    """``ip -s link``'s counters per interface (OSWatcher's AHF releases collect it)."""
    out: dict[str, dict[str, float]] = {}
    name, cols = "", [""]
    for ln in lines:
        m = IP_LINK.match(ln)
        parts = ln.split()
        if m:
            name = m.group(1)
            out[name] = {}
        elif name and parts[:1] in (["RX:"], ["TX:"]):
            cols = parts
        elif name and cols[0] and parts and all(p.isdigit() for p in parts):
            for k, v in zip(cols[1:], parts, strict=False):
                field = IP_S.get((cols[0], k))
                if field:
                    out[name][field] = float(v) / 1024 if field.endswith("_kb") else float(v)
            cols = [""]
        else:
            cols = [""]
    return out


def _netstat(lines: list[str], step: float | None = None) -> list[Block]:
    """netstat -i's table (or ip -s link's) and netstat -s's TCP counters, cumulative (rates
    come later).  A block needs one of the interface tables or netstat -s to be read."""
    counters: dict[str, dict[str, float]] = _ip_link(lines)
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Iface")]
    if heads:
        cols = lines[heads[0]].split()
        for ln in lines[heads[0] + 1 :]:
            parts = ln.split()
            if not parts or parts[0].endswith(":"):
                break
            d = dict(zip(cols, parts, strict=False))
            counters[parts[0]] = {
                f: v for k, f in NETSTAT_I.items() if (v := _num(d.get(k, ""))) is not None
            }
    section, tcp = "", {}
    for ln in lines:
        if ln and not ln[0].isspace():
            section = ln.strip()
            continue
        for sect, pattern, name in NETSTAT_S:
            m = pattern.match(ln.strip()) if sect == section else None
            if m:
                tcp[name] = float(next(g for g in m.groups() if g is not None))
    if tcp:
        counters["host"] = tcp
    if not counters or (tcp and "active_opens" not in tcp):
        return []  # nothing readable, or netstat -s cut short
    return [Block(0.0, "netstat", counters=counters)]


def _top(lines: list[str], step: float | None = None) -> list[Block]:
    """top's summary: the load averages, ``%Cpu(s)`` (``Cpu(s)`` before procps-ng), ``Tasks``
    and the swap line, each ``top -`` header a report at its own time.  xtop.sh keeps the
    second half of two top samples by line count, which misses the second header when the
    first sample was longer: a block with a process list and no header holds nothing to
    take, and is no error."""
    out: list[Block] = []
    for ln in lines:
        head = TOP_HEAD.match(ln)
        if head:
            out.append(
                Block(0.0, "top", {"cpu": {"all": {}}}, tod=_clock(head[1], head[2], head[3], None))
            )
        elif not out and "load average:" in ln:  # top without its "top -" prefix
            out.append(Block(0.0, "top", {"cpu": {"all": {}}}))
        if not out:
            continue
        cpu, paging = out[-1].rows["cpu"]["all"], out[-1].rows.setdefault("paging", {})
        if m := LOAD.search(ln):
            load = [_num(x.rstrip(",")) for x in m.groups()]
            cpu.update(zip(("load1", "load5", "load15"), load, strict=True))
        elif ln.startswith(("%Cpu(s):", "Cpu(s):")):
            cpu.update({TOP_CPU[k]: _num(v) for v, k in TOP_PCT.findall(ln)})
        elif ln.startswith("Tasks:"):
            n = {k: _num(v) for v, k in TOP_COUNT.findall(ln)}
            cpu.update({"plist_sz": n.get("total"), "runq_sz": n.get("running")})
        elif "Swap:" in ln.split()[:2]:
            n = {k: _num(v) for v, k in TOP_COUNT.findall(ln)}
            total, used = n.get("total"), n.get("used")
            swp = 100.0 * used / total if total and used is not None else None
            paging["all"] = {"swpused": swp}
    out = [b for b in out if b.rows["cpu"]["all"]]
    if out or any(ln.split()[:2] == ["PID", "USER"] for ln in lines):
        return out or [Block(0.0, "top")]
    return []


TIME = re.compile(r"^(\d+-)?\d+:\d\d:\d\d$")


def _ps(lines: list[str], step: float | None = None) -> list[Block]:
    """The commit-path background processes of ``ps -aeo user,pid,...,wchan,s,start,time,cmd``,
    named as the procs collector names them (PNAME, or PNAME SID with several instances)."""
    heads = [i for i, ln in enumerate(lines) if ln.split()[:2] == ["USER", "PID"]]
    if not heads:
        return []
    cols = lines[heads[0]].split()
    if "WCHAN" not in cols or "S" not in cols:
        return []
    wchan_at, s_at = cols.index("WCHAN"), cols.index("S")
    found: dict[tuple[str, str], dict[str, Value]] = {}
    for ln in lines[heads[0] + 1 :]:
        parts = ln.split()
        if len(parts) <= s_at + 2:
            continue
        # START is one token (11:48:05, 2025) or two (Nov 20); TIME follows it, then the command
        rest = parts[s_at + 1 :]
        at = next((i for i in (1, 2) if i < len(rest) and TIME.match(rest[i])), None)
        if at is None or at + 1 >= len(rest):
            continue
        m = BACKGROUND.match(rest[at + 1])
        if m is None:
            continue
        wchan = parts[wchan_at]
        found[(m.group(1).upper(), m.group(2).upper())] = {
            "pid": int(parts[1]),
            "state": parts[s_at],
            "wchan": None if wchan == "-" else wchan,
        }
    sids = {sid for _, sid in found}
    rows: Rows = {(p if len(sids) <= 1 else f"{p} {sid}"): r for (p, sid), r in found.items()}
    return [Block(0.0, "ps", {"procs": rows} if rows else {})]


PARSERS: dict[str, Callable[[list[str], float | None], list[Block]]] = {
    "iostat": _iostat,
    "vmstat": _vmstat,
    "mpstat": _mpstat,
    "netstat": _netstat,
    "top": _top,
    "ps": _ps,
}
"""File-name tool -> block parser."""


def _snapshots(blocks: list[Block], notes: list[str], host: str) -> list[tuple[float, list[Block]]]:
    """Reports grouped into snapshots by time; netstat's counters turned into rates between
    consecutive netstat blocks (a counter that went back, or a first block, gives none).
    Reports of different tools within half the usual step (at most 5 s) are one snapshot."""
    blocks.sort(key=lambda b: b.t)
    prev: Block | None = None
    for blk in blocks:
        if blk.tool != "netstat":
            continue
        if prev is not None and blk.t > prev.t:
            dt = blk.t - prev.t
            for inst, cur in blk.counters.items():
                before = prev.counters.get(inst, {})
                rates: dict[str, Value] = {
                    f: counter_rate(before[f], v, dt) for f, v in cur.items() if f in before
                }
                blk.rows.setdefault("tcp" if inst == "host" else "netdev", {})[inst] = rates
        prev = blk
    if sum(b.tool == "netstat" for b in blocks) == 1:
        notes.append(
            f"{host}: one oswnetstat snapshot: its counters are totals since boot and a rate "
            "needs two, so no interface or TCP rows"
        )
    by_tool: dict[str, list[float]] = {}
    for blk in blocks:
        by_tool.setdefault(blk.tool, []).append(blk.t)
    gaps = [b - a for ts in by_tool.values() for a, b in itertools.pairwise(ts) if b > a]
    near = min(SAME_SNAPSHOT, statistics.median(gaps) / 2) if gaps else SAME_SNAPSHOT
    groups: list[tuple[float, list[Block]]] = []
    for blk in blocks:
        if (
            groups
            and blk.t - groups[-1][0] <= near
            and all(b.tool != blk.tool for b in groups[-1][1])
        ):
            groups[-1][1].append(blk)
        else:
            groups.append((blk.t, [blk]))
    return groups
